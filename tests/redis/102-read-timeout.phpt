--TEST--
A Redis that stops answering (SIGSTOP, then SIGCONT): the read timeout fires, the connection is replaced, no late reply is taken for the next call
--EXTENSIONS--
tagcache
pcntl
posix
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

$srv = tcr_start('slow');
$port = $srv['port'];
$pid = tcr_server_pid($srv);

// The server is stopped for as long as the call takes, whatever the load
// of the machine: it cannot answer before the client gives up, and it
// answers the request it was sent after it is continued (a late reply on
// the dropped connection). A sleep inside the server (DEBUG SLEEP) could
// end before a slow client even sent its call.
function stop_server(int $pid): void
{
    posix_kill($pid, SIGSTOP);
    tcr_check(tcr_wait_stopped($pid), 'the server is stopped');
}

function cont_server(int $pid, int $port): bool
{
    posix_kill($pid, SIGCONT);
    $t = microtime(true) + 30;
    while (!tcr_ping($port)) {
        if (microtime(true) > $t) {
            return false;
        }
        usleep(10000);
    }
    return true;
}

foreach (['exception', 'miss'] as $mode) {
    echo "# on_error=$mode\n";
    $b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => "slow-$mode:",
        'read_timeout' => 0.3, 'timeout' => 1, 'on_error' => $mode, 'persistent' => "p-$mode",
        'retry_interval' => 0]);
    $b->save('value A', 'A', ['t']);
    $b->save('value B', 'B', ['t']);
    tcr_same('value A', $b->load('A'), 'load(A) before');

    stop_server($pid);
    $got = null;
    try {
        $got = $b->load('A');
    } catch (TagCache\ConnectionException $e) {
        $got = $e->getMessage();
    }
    if ($mode === 'exception') {
        tcr_check(is_string($got) && str_contains($got, 'read timeout') && str_contains($got, "127.0.0.1:$port"),
            'load() while the server is stopped throws: read timeout, naming the server', var_export($got, true));
    } else {
        tcr_same(false, $got, 'load() while the server is stopped is a miss');
    }
    tcr_same(true, cont_server($pid, $port), 'the server answers again once continued');

    // The GET A sent before the timeout was answered after it: that late
    // reply must not be taken as the answer to load(B).
    tcr_same('value B', $b->load('B'), 'load(B) after the timeout returns B, on a new connection');
    tcr_same('value A', $b->load('A'), 'load(A) works again');
    tcr_same(true, $b->save('value C', 'C', ['t']), 'save() works again');
    tcr_same(['A', 'B', 'C'], (function ($l) { sort($l); return $l; })($b->getIdsMatchingTags(['t'])), 'tag listing works again');

    // A save that times out: false (or an exception), and the entry is
    // either fully there with its tag or not at all.
    stop_server($pid);
    try {
        $r = $b->save('value D', 'D', ['t', 'u']);
        tcr_check($mode === 'miss' && $r === false, 'save() while the server is stopped returns false');
    } catch (TagCache\ConnectionException $e) {
        tcr_check($mode === 'exception' && str_contains($e->getMessage(), 'read timeout'), 'save() while the server is stopped throws: read timeout', $e->getMessage());
    }
    cont_server($pid, $port);
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
ok: the server is stopped
ok: load() while the server is stopped throws: read timeout, naming the server
ok: the server answers again once continued
ok: load(B) after the timeout returns B, on a new connection
ok: load(A) works again
ok: save() works again
ok: tag listing works again
ok: the server is stopped
ok: save() while the server is stopped throws: read timeout
ok: verify(): no entry without its tag links
# on_error=miss
ok: load(A) before
ok: the server is stopped
ok: load() while the server is stopped is a miss
ok: the server answers again once continued
ok: load(B) after the timeout returns B, on a new connection
ok: load(A) works again
ok: save() works again
ok: tag listing works again
ok: the server is stopped
ok: save() while the server is stopped returns false
ok: verify(): no entry without its tag links
done
