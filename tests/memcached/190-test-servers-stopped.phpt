--TEST--
Servers a test starts (redis-server, memcached, one name for both) are stopped when the test process ends, whatever way: a normal end, an uncaught exception, a fatal error, SIGKILL (as run-tests' timeout does)
--SKIPIF--
<?php
require __DIR__ . '/../redis/redis.inc';
foreach (['redis-server', 'memcached', 'bash'] as $b) {
    if (tcr_bin($b) === null) {
        die("skip $b not found in PATH");
    }
}
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';

// Each child starts a redis-server and a memcached of the same name (as
// tests/zend/zend.inc does), reports their pids and ports, then ends.
$ends = [
    'a normal end' => '',
    'an uncaught exception' => 'throw new RuntimeException("the test failed");',
    'a fatal error' => 'tcr_no_such_function();',
    'SIGKILL' => 'function_exists("posix_kill") ? posix_kill(getmypid(), 9) : exec("kill -9 " . getmypid());',
];
foreach ($ends as $how => $end) {
    $child = tcr_spawn('require ' . var_export(__DIR__ . '/memcached.inc', true) . ';
$r = tcr_start("x");
$m = tcm_start("x");
tcr_result(["pids" => [tcr_server_pid($r), tcr_server_pid($m)], "ports" => [$r["port"], $m["port"]], "dir" => tcr_dir()]);
' . $end);
    $res = tcr_wait($child, 60);
    $got = tcr_parse_result($res['out']);
    if (!tcr_check(is_array($got) && count(array_filter($got['pids'])) === 2, "$how: the child started both servers",
        $res['out'] . $res['err'])) {
        continue;
    }
    // the servers go within a bound (the watchdog polls every 0.2 s; 30 s
    // for a machine that runs the valgrind pass beside it)
    $gone = false;
    for ($i = 0; $i < 1500 && !$gone; $i++) {
        $gone = !tcr_pid_alive($got['pids'][0]) && !tcr_pid_alive($got['pids'][1]);
        if (!$gone) {
            usleep(20000);
        }
    }
    tcr_check($gone, "$how: redis-server and memcached are gone after it",
        'still running: ' . implode(' ', array_filter($got['pids'], 'tcr_pid_alive')));
    // a port is free again once its server is gone, and the suite runs tests
    // side by side: another test's server may take it at once. What must not
    // answer there is the process the child started.
    $at = [tc190_redis_pid($got['ports'][0]), tc190_memcached_pid($got['ports'][1])];
    tcr_check($at[0] !== $got['pids'][0] && $at[1] !== $got['pids'][1],
        "$how: nothing answers on their ports, or another process",
        'answering: redis pid ' . var_export($at[0], true) . ', memcached pid ' . var_export($at[1], true));
    tcr_rmtree($got['dir']);   // what a killed child could not remove
}
echo "done\n";

/** The pid of the redis-server answering on $port, or null when none answers. */
function tc190_redis_pid(int $port): ?int
{
    try {
        $info = tcr_cmd($port, 'INFO', 'server');
    } catch (Throwable $e) {
        return null;
    }
    // a server with requirepass answers NOAUTH: some process, not ours (ours had none)
    return is_string($info) && preg_match('/^process_id:(\d+)/m', $info, $m) ? (int) $m[1] : -1;
}

/** The pid of the memcached answering on $port, or null when none answers. */
function tc190_memcached_pid(int $port): ?int
{
    $st = tcm_cmd($port, 'stats');
    if ($st === null || $st === '') {
        return null;
    }
    return preg_match('/^STAT pid (\d+)/m', $st, $m) ? (int) $m[1] : -1;
}
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: a normal end: the child started both servers
ok: a normal end: redis-server and memcached are gone after it
ok: a normal end: nothing answers on their ports, or another process
ok: an uncaught exception: the child started both servers
ok: an uncaught exception: redis-server and memcached are gone after it
ok: an uncaught exception: nothing answers on their ports, or another process
ok: a fatal error: the child started both servers
ok: a fatal error: redis-server and memcached are gone after it
ok: a fatal error: nothing answers on their ports, or another process
ok: SIGKILL: the child started both servers
ok: SIGKILL: redis-server and memcached are gone after it
ok: SIGKILL: nothing answers on their ports, or another process
done
