--TEST--
Slow Redis (DEBUG SLEEP): the read timeout fires, the connection is replaced, no late reply is taken for the next call
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

// Redis 7 refuses DEBUG unless enable-debug-command says otherwise.
$ver = shell_exec(escapeshellarg(tcr_bin('redis-server')) . ' --version');
$args = preg_match('/v=(\d+)\./', (string) $ver, $m) && (int) $m[1] >= 7 ? ['--enable-debug-command' => 'yes'] : [];
$srv = tcr_start('slow', $args);
$port = $srv['port'];

/** Makes the server sleep $secs without waiting for it; returns the socket to read "+OK" from later. */
function sleep_server(int $port, float $secs)
{
    $fp = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 2);
    fwrite($fp, tcr_resp_encode(['DEBUG', 'SLEEP', (string) $secs]));
    usleep(50000);   // let the server start sleeping
    return $fp;
}

function wait_awake($fp): string
{
    stream_set_timeout($fp, 10);
    $r = tcr_resp_read($fp);
    fclose($fp);
    return is_string($r) ? $r : json_encode($r);
}

foreach (['exception', 'miss'] as $mode) {
    echo "# on_error=$mode\n";
    $b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => "slow-$mode:",
        'read_timeout' => 0.3, 'timeout' => 1, 'on_error' => $mode, 'persistent' => "p-$mode",
        'retry_interval' => 0]);
    $b->save('value A', 'A', ['t']);
    $b->save('value B', 'B', ['t']);
    tcr_same('value A', $b->load('A'), 'load(A) before');

    $fp = sleep_server($port, 1.5);
    $t0 = microtime(true);
    $got = null;
    try {
        $got = $b->load('A');
    } catch (TagCache\ConnectionException $e) {
        $got = $e->getMessage();
    }
    $dt = microtime(true) - $t0;
    if ($mode === 'exception') {
        tcr_check(is_string($got) && str_contains($got, 'read timeout') && str_contains($got, "127.0.0.1:$port"),
            'load() during DEBUG SLEEP throws: read timeout, naming the server', var_export($got, true));
    } else {
        tcr_same(false, $got, 'load() during DEBUG SLEEP is a miss');
    }
    // the read timeout is 0.3 s; 1 s of slack (the sleep itself lasts 1.5 s)
    tcr_check($dt < 1.3, 'it returned after the read timeout, before the server woke up', sprintf('%.2f s', $dt));
    tcr_same('+OK', '+' . wait_awake($fp), 'the server woke up');

    // The GET A sent before the timeout was answered after it: that late
    // reply must not be taken as the answer to load(B).
    tcr_same('value B', $b->load('B'), 'load(B) after the timeout returns B, on a new connection');
    tcr_same('value A', $b->load('A'), 'load(A) works again');
    tcr_same(true, $b->save('value C', 'C', ['t']), 'save() works again');
    tcr_same(['A', 'B', 'C'], (function ($l) { sort($l); return $l; })($b->getIdsMatchingTags(['t'])), 'tag listing works again');

    // A save that times out: false (or an exception), and the entry is
    // either fully there with its tag or not at all.
    $fp = sleep_server($port, 0.6);
    try {
        $r = $b->save('value D', 'D', ['t', 'u']);
        tcr_check($mode === 'miss' && $r === false, 'save() during DEBUG SLEEP returns false');
    } catch (TagCache\ConnectionException $e) {
        tcr_check($mode === 'exception' && str_contains($e->getMessage(), 'read timeout'), 'save() during DEBUG SLEEP throws: read timeout', $e->getMessage());
    }
    wait_awake($fp);
    tcr_same([], $b->verify(), 'verify(): no entry without its tag links');
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# on_error=exception
ok: load(A) before
ok: load() during DEBUG SLEEP throws: read timeout, naming the server
ok: it returned after the read timeout, before the server woke up
ok: the server woke up
ok: load(B) after the timeout returns B, on a new connection
ok: load(A) works again
ok: save() works again
ok: tag listing works again
ok: save() during DEBUG SLEEP throws: read timeout
ok: verify(): no entry without its tag links
# on_error=miss
ok: load(A) before
ok: load() during DEBUG SLEEP is a miss
ok: it returned after the read timeout, before the server woke up
ok: the server woke up
ok: load(B) after the timeout returns B, on a new connection
ok: load(A) works again
ok: save() works again
ok: tag listing works again
ok: save() during DEBUG SLEEP returns false
ok: verify(): no entry without its tag links
done
