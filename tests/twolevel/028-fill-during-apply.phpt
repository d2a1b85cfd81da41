--TEST--
TwoLevel over Redis: a fill whose slow read came before another node's clean of the id's tag, checked while a sync of its node has applied that clean's record and not yet the rest of its batch (test hooks TAGCACHE_TEST_TWOLEVEL_PAUSE, TAGCACHE_TEST_CRASH=twolevel_apply in stop mode): the generation is odd during the apply (only there since the journal read moved out of it), so the fill is dropped and the node serves no copy
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (!function_exists('posix_kill')) die('skip needs posix_kill() to stop and continue a process');
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('applyfill')['port']);
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl028:' . getmypid() . ':'];
$mk = fn(string $seg) => ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => 0.2,
    'fast_backend_options' => tl_fast_options($seg)];
$optsB = $mk('tl028-b-' . getmypid());
$pause = sys_get_temp_dir() . '/tl028-pause-' . getmypid();
@unlink("$pause.ready");
@unlink("$pause.go");
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});

$a = tl_node_start($mk('tl028-a-' . getmypid()));                         // node A
$f = tl_node_start($optsB, ['TAGCACHE_TEST_TWOLEVEL_PAUSE' => $pause]);     // node B: a process whose fill waits
$q = tl_node_start($optsB);                                                 // node B: another process
tl_node($a, 'clean', 'all');
tl_same(true, tl_node($a, 'save', 'old', 'x', ['t']), 'A saves x');
tl_same(false, tl_node($q, 'load', 'nothing-here'), 'B synced (its first sync, a gap)');
tl_same(false, tl_node($f, 'load', 'nothing-here'), 'F is current too');

tl_node_send($f, 'load', 'x');
tl_same(true, tl_wait(fn() => file_exists("$pause.ready"), 10) !== null, 'F read x from Redis and waits before its fill');
tl_same([true, true], [tl_node($a, 'clean', 'matchingTag', ['t']), tl_node($a, 'save', 'zz', 'z', ['u'])],
    "A cleans x's tag, then saves z: B's next batch is those two records");
// S syncs node B and stops in its second record (z): the clean is applied
// (it found no copy of x; a clean, unlike a record of the id, leaves the
// fill's word in x's mark, so only the generation can tell the fill)
$s = tl_node_start($optsB, ['TAGCACHE_TEST_CRASH' => 'twolevel_apply', 'TAGCACHE_TEST_CRASH_AFTER' => '2',
    'TAGCACHE_TEST_CRASH_MODE' => 'stop']);
$in = tl_wait(function () use ($s) {
    tl_node_send($s, 'load', 'nothing-here');
    return tl_node_recv_within($s, 0.5) === ['hung' => true];
}, 10) !== null;
tl_same(true, $in && tl_wait_stopped($stopped[] = tl_node_pid($s)), 'S stopped inside its sync, after applying the clean');
file_put_contents("$pause.go", "");   // not touch(): F unlinks it as soon as it sees it
tl_same('old', tl_node_recv($f, 'load'), 'F returns what it read');
posix_kill(tl_node_pid($s), SIGCONT);
$stopped = [];
tl_same(false, tl_node_recv($s, 'load'), 'S finishes its sync after SIGCONT');
$st = tl_node($f, 'stats');
tl_same([1, 0], [$st['fills_skipped'] + $st['fills_undone'], $st['fills']], 'F dropped its fill');
tl_same([false, false, false], [tl_node($q, 'load', 'x'), tl_node($f, 'load', 'x'), tl_node($s, 'load', 'x')],
    'node B serves no copy of x');
@unlink("$pause.ready");
foreach ([$a, $f, $q, $s] as $n) {
    tl_node_stop($n);
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: A saves x
ok: B synced (its first sync, a gap)
ok: F is current too
ok: F read x from Redis and waits before its fill
ok: A cleans x's tag, then saves z: B's next batch is those two records
ok: S stopped inside its sync, after applying the clean
ok: F returns what it read
ok: S finishes its sync after SIGCONT
ok: F dropped its fill
ok: node B serves no copy of x
done
