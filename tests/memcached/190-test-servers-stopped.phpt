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
    // the servers go within a bound (the watchdog polls every 0.2 s)
    $gone = false;
    for ($i = 0; $i < 500 && !$gone; $i++) {
        $gone = !tcr_pid_alive($got['pids'][0]) && !tcr_pid_alive($got['pids'][1]);
        if (!$gone) {
            usleep(20000);
        }
    }
    tcr_check($gone, "$how: redis-server and memcached are gone after it",
        'still running: ' . implode(' ', array_filter($got['pids'], 'tcr_pid_alive')));
    tcr_check(!tcr_ping($got['ports'][0]) && !tcm_ping($got['ports'][1]), "$how: nothing answers on their ports");
    tcr_rmtree($got['dir']);   // what a killed child could not remove
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: a normal end: the child started both servers
ok: a normal end: redis-server and memcached are gone after it
ok: a normal end: nothing answers on their ports
ok: an uncaught exception: the child started both servers
ok: an uncaught exception: redis-server and memcached are gone after it
ok: an uncaught exception: nothing answers on their ports
ok: a fatal error: the child started both servers
ok: a fatal error: redis-server and memcached are gone after it
ok: a fatal error: nothing answers on their ports
ok: SIGKILL: the child started both servers
ok: SIGKILL: redis-server and memcached are gone after it
ok: SIGKILL: nothing answers on their ports
done
