--TEST--
Shm: php-fpm workers and the CLI share a segment both ways; entries survive a php-fpm restart
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!is_executable('/usr/sbin/php-fpm8.2')) die('skip php-fpm8.2 not installed (package php8.2-fpm)');
if (!is_executable('/usr/bin/cgi-fcgi')) die('skip cgi-fcgi not installed (package libfcgi-bin)');
if (!is_executable('/usr/bin/setsid')) die('skip setsid not installed (util-linux), needed to kill php-fpm as a group');
if (!function_exists('posix_geteuid')) die('skip posix extension needed');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('101');
$dir = tc_make_tmpdir('101');
$seg = tc_seg('101');
$sock = "$dir/fpm.sock";
$script = "$dir/t.php";
$fpmLog = "$dir/fpm.log";
$fpmOut = "$dir/fpm.out";

file_put_contents($script, '<?php
header("Content-Type: text/plain");
$q = $_GET;
try {
    $c = new TagCache\Shm(["segment" => $q["seg"], "size" => "2M"]);
    switch ($q["op"]) {
        case "save":   $r = $c->save($q["v"], $q["id"], [$q["tag"]], null); break;
        case "load":   $r = $c->load($q["id"]); break;
        case "tagged": $r = $c->getIdsMatchingTags([$q["tag"]]); sort($r); break;
        case "verify": $r = $c->verify(); break;
        default:       $r = "bad op";
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
error_log = $fpmLog
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

function fok($r): bool
{
    return is_array($r) && ($r['ok'] ?? null) === true && ($r['sapi'] ?? null) === 'fpm-fcgi';
}

$vCli = 'cli-' . bin2hex(random_bytes(12));
$vFpm = 'fpm-' . bin2hex(random_bytes(12));
$base = ['seg' => $seg];

try {
    $fpm = fpm_start($dir, $sock);
    tc_check('php-fpm started', true);

    // CLI -> fpm.
    $c = new TagCache\Shm(['segment' => $seg, 'size' => '2M']);
    tc_check('CLI save', $c->save($vCli, 'from_cli', ['tcli'], null));
    $ok = true;
    $pids = [];
    $bad = [];
    for ($i = 0; $i < 6; $i++) {
        $r = fcgi($sock, $script, $base + ['op' => 'load', 'id' => 'from_cli']);
        if (!fok($r) || $r['r'] !== $vCli) {
            $ok = false;
            $bad[] = $r;
        } else {
            $pids[$r['pid']] = true;
        }
    }
    tc_check('fpm workers load what the CLI saved', $ok, $bad);
    $r = fcgi($sock, $script, $base + ['op' => 'tagged', 'tag' => 'tcli']);
    tc_check('fpm sees the CLI tag', fok($r) && $r['r'] === ['from_cli'], $r);

    // fpm -> CLI.
    $r = fcgi($sock, $script, $base + ['op' => 'save', 'id' => 'from_fpm', 'v' => $vFpm, 'tag' => 'tfpm']);
    tc_check('fpm save', fok($r) && $r['r'] === true, $r);
    tc_check('CLI loads what fpm saved', $c->load('from_fpm') === $vFpm && $c->getIdsMatchingTags(['tfpm']) === ['from_fpm']);
    $h = tc_run_php('
        $c = new TagCache\Shm(["segment" => $P["seg"], "size" => "2M"]);
        tc_result(["v" => $c->load("from_fpm")]);
    ', ['seg' => $seg]);
    tc_check('another CLI process loads what fpm saved', tc_ok($h) && $h['result']['v'] === $vFpm, tc_describe($h));
    unset($c); // nothing of ours stays attached across the restart

    // Stop php-fpm completely (master and workers), then start it again.
    tc_check('php-fpm stopped (master and workers gone)', fpm_stop($fpm));
    tc_check('segment file kept', is_file(tc_seg_path($seg)));
    $fpm = fpm_start($dir, $sock);
    $ok = true;
    $bad = [];
    for ($i = 0; $i < 4; $i++) {
        $r1 = fcgi($sock, $script, $base + ['op' => 'load', 'id' => 'from_cli']);
        $r2 = fcgi($sock, $script, $base + ['op' => 'load', 'id' => 'from_fpm']);
        if (!fok($r1) || $r1['r'] !== $vCli || !fok($r2) || $r2['r'] !== $vFpm) {
            $ok = false;
            $bad[] = [$r1, $r2];
        }
    }
    tc_check('entries survive the php-fpm restart (seen by fpm)', $ok, $bad);
    $r = fcgi($sock, $script, $base + ['op' => 'verify']);
    tc_check('fpm verify() is empty', fok($r) && $r['r'] === [], $r);
    tc_check('php-fpm stopped again', fpm_stop($fpm));

    $c = new TagCache\Shm(['segment' => $seg, 'size' => '2M']);
    tc_check('entries survive the php-fpm restart (seen by CLI)', $c->load('from_cli') === $vCli && $c->load('from_fpm') === $vFpm);
} catch (Throwable $e) {
    echo 'ERROR: ', get_class($e), ': ', $e->getMessage(), "\n";
    if ($fpm !== null) {
        fpm_kill($fpm);
        $fpm = null;
    }
}
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
// Kill whatever is left of the php-fpm of finished runs: its process group (it ran under
// setsid) and any process whose command line names that run's config file.
tc_clean_tmpdirs('101', static function (string $dir) {
    $pgid = (int) @file_get_contents("$dir/fpm.pgid");
    if ($pgid > 1) {
        $cmd = (string) @file_get_contents("/proc/$pgid/cmdline");
        if ($cmd === '' || strpos($cmd, 'php-fpm') !== false) {
            tc_kill(-$pgid, 9);
        }
    }
    foreach (glob('/proc/[0-9]*/cmdline') ?: [] as $f) {
        $cmd = (string) @file_get_contents($f);
        if ($cmd !== '' && strpos($cmd, "$dir/fpm.conf") !== false) {
            tc_kill((int) basename(dirname($f)), 9);
        }
    }
});
tc_remove_segments('101');
?>
--EXPECT--
php-fpm started: ok
CLI save: ok
fpm workers load what the CLI saved: ok
fpm sees the CLI tag: ok
fpm save: ok
CLI loads what fpm saved: ok
another CLI process loads what fpm saved: ok
php-fpm stopped (master and workers gone): ok
segment file kept: ok
entries survive the php-fpm restart (seen by fpm): ok
fpm verify() is empty: ok
php-fpm stopped again: ok
entries survive the php-fpm restart (seen by CLI): ok
