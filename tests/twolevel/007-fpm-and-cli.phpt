--TEST--
TwoLevel over Redis: a real php-fpm pool is one node, the CLI another: a save on one is read on the other, a clean by tag on either is never served by the other once max_staleness passed
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/../shm/util.inc';
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (!is_executable('/usr/sbin/php-fpm8.2')) die('skip php-fpm8.2 not installed (package php8.2-fpm)');
if (!is_executable('/usr/bin/cgi-fcgi')) die('skip cgi-fcgi not installed (package libfcgi-bin)');
if (!is_executable('/usr/bin/setsid')) die('skip setsid not installed (util-linux), needed to kill php-fpm as a group');
if (!function_exists('posix_geteuid')) die('skip posix extension needed');
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/../shm/util.inc';
require __DIR__ . '/twolevel.inc';
$dir = tc_make_tmpdir('tl007');
$sock = "$dir/fpm.sock";
$script = "$dir/t.php";
$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('fpm')['port']);
$bound = 0.3;
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl007:' . getmypid() . ':'];
$fastF = tl_fast_options('tl007-fpm-' . getmypid());
$opts = fn(array $fast) => ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => $bound,
    'fast_backend_options' => $fast];
file_put_contents("$dir/opts.json", json_encode($opts($fastF)));
file_put_contents($script, '<?php
header("Content-Type: text/plain");
$q = $_GET;
try {
    $c = new TagCache\\TwoLevel(json_decode(file_get_contents(__DIR__ . "/opts.json"), true));
    switch ($q["op"]) {
        case "save":  $r = $c->save($q["v"], $q["id"], [$q["tag"]]); break;
        case "load":  $r = $c->load($q["id"]); break;
        case "clean": $r = $c->clean("matchingTag", [$q["tag"]]); break;
        case "stats": $r = $c->stats(); break;
        default:      $r = "bad op";
    }
    echo json_encode(["ok" => true, "r" => $r, "pid" => getmypid(), "sapi" => PHP_SAPI]);
} catch (Throwable $e) {
    echo json_encode(["ok" => false, "e" => get_class($e) . ": " . $e->getMessage()]);
}
');
$user = posix_getpwuid(posix_geteuid())['name'] ?? 'root';
$group = posix_getgrgid(posix_getegid())['name'] ?? 'root';
file_put_contents("$dir/fpm.conf", "[global]
pid = $dir/fpm.pid
error_log = $dir/fpm.log
daemonize = no
log_level = notice

[tctest]
listen = $sock
listen.mode = 0600
pm = static
pm.max_children = 2
request_terminate_timeout = 20
catch_workers_output = yes
" . (posix_geteuid() === 0 ? '' : "user = $user\ngroup = $group\n"));

$fpm = null; // ['proc' => resource, 'pid' => int]

function fpm_start(string $dir, string $sock): array
{
    @unlink($sock);
    $cmd = ['/usr/bin/setsid', '/usr/sbin/php-fpm8.2', '-n', '-d', 'extension=' . tc_module(),
            '-d', 'display_errors=1', '-y', "$dir/fpm.conf", '-F', '-R'];
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/fpm.out", 'a'],
                          2 => ['file', "$dir/fpm.out", 'a']], $pipes, $dir, tc_env());
    if (!is_resource($p)) {
        throw new RuntimeException('cannot start php-fpm');
    }
    $pid = proc_get_status($p)['pid'];
    // setsid exec()s in place (we are not a group leader): pid == pgid of the fpm group.
    file_put_contents("$dir/fpm.pgid", (string) $pid);
    $deadline = microtime(true) + 15;
    while (microtime(true) < $deadline) {
        $st = proc_get_status($p);
        if (!$st['running']) {
            throw new RuntimeException("php-fpm exited at start (exit {$st['exitcode']}): "
                . @file_get_contents("$dir/fpm.out") . @file_get_contents("$dir/fpm.log"));
        }
        // the socket file appears at bind(), before listen(): ready only
        // once a connection is accepted (a request sent earlier is refused)
        if (file_exists($sock) && ($probe = @stream_socket_client("unix://$sock", $en, $es, 1)) !== false) {
            fclose($probe);
            return ['proc' => $p, 'pid' => $pid];
        }
        usleep(20000);
    }
    fpm_kill(['proc' => $p, 'pid' => $pid]);
    throw new RuntimeException('php-fpm did not create its socket within 15 s: ' . @file_get_contents("$dir/fpm.log"));
}

function fpm_group_alive(int $pgid): bool
{
    return function_exists('posix_kill') ? @posix_kill(-$pgid, 0) : false;
}

/** Graceful stop (SIGTERM to the master); returns true when the whole group is gone. */
function fpm_stop(?array &$fpm): bool
{
    if ($fpm === null) {
        return true;
    }
    tc_kill($fpm['pid'], 15);
    $deadline = microtime(true) + 15;
    $gone = false;
    while (microtime(true) < $deadline) {
        $st = proc_get_status($fpm['proc']);
        if (!$st['running'] && !fpm_group_alive($fpm['pid'])) {
            $gone = true;
            break;
        }
        usleep(20000);
    }
    if (!$gone) {
        fpm_kill($fpm);
    } else {
        proc_close($fpm['proc']);
    }
    $fpm = null;
    return $gone;
}

function fpm_kill(array $fpm): void
{
    tc_kill(-$fpm['pid'], 9);
    tc_kill($fpm['pid'], 9);
    if (is_resource($fpm['proc'])) {
        proc_terminate($fpm['proc'], 9);
        proc_close($fpm['proc']);
    }
}

tc_on_exit(static function () use (&$fpm) {
    if ($fpm !== null) {
        fpm_kill($fpm);
    }
});

/** One FastCGI request through cgi-fcgi; returns the decoded JSON body, or a string saying what went wrong. */
function fcgi(string $sock, string $script, array $query)
{
    $qs = http_build_query($query);
    $env = [
        'SCRIPT_FILENAME' => $script, 'SCRIPT_NAME' => '/t.php', 'REQUEST_URI' => '/t.php?' . $qs,
        'DOCUMENT_ROOT' => dirname($script), 'REQUEST_METHOD' => 'GET', 'QUERY_STRING' => $qs,
        'GATEWAY_INTERFACE' => 'CGI/1.1', 'SERVER_PROTOCOL' => 'HTTP/1.1', 'SERVER_NAME' => 'localhost',
        'SERVER_PORT' => '80', 'REMOTE_ADDR' => '127.0.0.1', 'CONTENT_LENGTH' => '0',
    ];
    $h = tc_wait(tc_spawn(['/usr/bin/cgi-fcgi', '-bind', '-connect', $sock], $env, null, 'cgi-fcgi'), 20);
    if ($h['timed_out'] || $h['exit'] !== 0) {
        return 'cgi-fcgi failed: ' . tc_describe($h);
    }
    $p = strpos($h['out'], "\r\n\r\n");
    $body = $p === false ? $h['out'] : substr($h['out'], $p + 4);
    $j = json_decode($body, true);
    return is_array($j) ? $j : 'bad response: ' . $h['out'] . $h['err'];
}


function fr(string $sock, string $script, array $q)
{
    $r = fcgi($sock, $script, $q);
    return is_array($r) && ($r['ok'] ?? null) === true && ($r['sapi'] ?? null) === 'fpm-fcgi' ? $r['r'] : ['bad' => $r];
}

function later(float $since, float $bound): void
{
    while (microtime(true) < $since + $bound) {
        usleep((int) (($since + $bound - microtime(true)) * 1e6) + 1000);
    }
}

try {
    $fpm = fpm_start($dir, $sock);
    $cli = new TagCache\TwoLevel($opts(tl_fast_options('tl007-cli-' . getmypid())));
    $cli->clean('all');
    tl_same(true, $cli->save('from-cli', 'x', ['t']), 'CLI saves x');
    tl_same('from-cli', fr($sock, $script, ['op' => 'load', 'id' => 'x']), 'fpm reads x');
    $hits = 0;
    for ($i = 0; $i < 6; $i++) {
        fr($sock, $script, ['op' => 'load', 'id' => 'x']);
    }
    $st = fr($sock, $script, ['op' => 'stats']);
    tl_same(true, is_array($st) && $st['fast.hits'] >= 1, 'fpm workers served x from their shared fast level');
    tl_same(true, $cli->clean('matchingTag', ['t']), 'CLI cleans tag t');
    later(microtime(true), $bound);
    $ok = true;
    for ($i = 0; $i < 6; $i++) {
        $ok = $ok && fr($sock, $script, ['op' => 'load', 'id' => 'x']) === false;
    }
    tl_same(true, $ok, 'after the bound no fpm worker serves x');
    tl_same(true, fr($sock, $script, ['op' => 'save', 'id' => 'y', 'v' => 'from-fpm', 'tag' => 'u']), 'fpm saves y');
    tl_same('from-fpm', $cli->load('y'), 'CLI reads y');
    tl_same('from-fpm', $cli->load('y'), 'CLI reads y again');
    tl_same(true, fr($sock, $script, ['op' => 'clean', 'tag' => 'u']), 'fpm cleans tag u');
    later(microtime(true), $bound);
    tl_same(false, $cli->load('y'), 'after the bound the CLI misses y');
    tl_same(true, fpm_stop($fpm), 'php-fpm stopped');
} finally {
    if ($fpm !== null) {
        fpm_kill($fpm);
    }
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: CLI saves x
ok: fpm reads x
ok: fpm workers served x from their shared fast level
ok: CLI cleans tag t
ok: after the bound no fpm worker serves x
ok: fpm saves y
ok: CLI reads y
ok: CLI reads y again
ok: fpm cleans tag u
ok: after the bound the CLI misses y
ok: php-fpm stopped
done
