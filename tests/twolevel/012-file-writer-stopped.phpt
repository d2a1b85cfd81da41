--TEST--
TwoLevel over File, the slow level stopped longer than the bound: a writer stopped (SIGSTOP) while it holds the invalidation journal's lock, then one stopped while it holds the File store's lock: no stale read beyond the bound, no hang (every call answers within its lock bound), recovery after SIGCONT
--EXTENSIONS--
tagcache
posix
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
if (!function_exists('proc_open')) die('skip proc_open is disabled');
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl012-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$bound = 0.3;
$mk = fn(string $n) => ['slow_backend' => 'File', 'slow_backend_options' => ['cache_dir' => $dir, 'lock_timeout' => 0.5],
    'max_staleness' => $bound, 'fast_backend_options' => tl_fast_options("tl012-$n-" . getmypid())];
$a = tl_node_start($mk('a'));
$b = tl_node_start($mk('b'));
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});

/** B's answer to one load, which must come within 10 s. */
function b_load(array $b, string $id): array
{
    tl_node_send($b, 'load', $id);
    return tl_node_recv_within($b, 10);
}

function warm_b(array $b, string $id, string $want): void
{
    tl_same($want, tl_node($b, 'load', $id), "B reads $id");
    $h0 = tl_node($b, 'stats')['fast_hits'];
    tl_same(true, tl_wait(fn() => tl_node($b, 'load', $id) === $want && tl_node($b, 'stats')['fast_hits'] > $h0, 10) !== null,
        "B serves $id from its fast level");
}

echo "# a writer stopped holding the journal\n";
tl_node($a, 'clean', 'all');
tl_same(true, tl_node($a, 'save', 'v1', 'x'), 'A saves x');
warm_b($b, 'x', 'v1');
$w = tl_node_start($mk('w'), ['TAGCACHE_TEST_CRASH' => 'file_journal_locked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop']);
tl_node_send($w, 'save', 'v2', 'x');
tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($w)), 'W wrote x=v2 to the File store and stopped holding the journal lock');
$t = microtime(true);
tl_same(true, tl_wait(fn() => microtime(true) - $t > $bound, 10) !== null, 'the bound passed');
tl_same(['r' => 'v2'], b_load($b, 'x'), 'B cannot sync: it answers from the File store, not its old copy, and does not hang');
tl_same(1, tl_node($b, 'stats')['sync_failing'], 'B reports its sync failing');
tl_same(['r' => 'v2'], b_load($b, 'x'), 'and again');
tl_node_send($a, 'save', 'z1', 'z');
tl_same(['r' => false], tl_node_recv_within($a, 10), 'a save on A waits at most lock_timeout for the journal and fails');
posix_kill(tl_node_pid($w), SIGCONT);
tl_same(['r' => true], tl_node_recv_within($w, 10), 'W continued: its save returns true');
tl_same(true, tl_wait(fn() => tl_node($b, 'load', 'x') === 'v2' && tl_node($b, 'stats')['sync_failing'] === 0, 10) !== null,
    'B syncs again');
warm_b($b, 'x', 'v2');
tl_node_stop($w);

echo "# a writer stopped holding the File store's lock\n";
$w = tl_node_start($mk('w2'), ['TAGCACHE_TEST_CRASH' => 'file_save_locked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop']);
tl_node_send($w, 'save', 'v3', 'x');
tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($w)), 'W2 stopped inside its File save, holding the store lock');
$t = microtime(true);
tl_same(true, tl_wait(fn() => microtime(true) - $t > $bound, 10) !== null, 'the bound passed');
$r = b_load($b, 'x');
tl_same(true, $r === ['r' => 'v2'], 'B reads x (the save has not returned: the old value is still current) and does not hang');
$r = b_load($b, 'never-saved');
tl_same(true, $r === ['r' => false], 'a slow read on B answers (a miss) and does not hang');
tl_node_send($a, 'save', 'z2', 'z');
tl_same(['r' => false], tl_node_recv_within($a, 10), 'a save on A waits at most lock_timeout for the store lock and fails');
posix_kill(tl_node_pid($w), SIGCONT);
tl_same(['r' => true], tl_node_recv_within($w, 10), 'W2 continued: its save returns true');
tl_same(true, tl_wait(fn() => tl_node($b, 'load', 'x') === 'v3', 10) !== null, 'B sees x=v3');
$t = microtime(true);
tl_same(true, tl_wait(fn() => microtime(true) - $t > $bound, 10) !== null, 'the bound passed');
tl_same('v3', tl_node($b, 'load', 'x'), 'B reads x=v3 after the bound');
warm_b($b, 'x', 'v3');
tl_same(true, tl_node($a, 'save', 'z3', 'z'), 'A saves again');
tl_same(true, tl_wait(fn() => tl_node($b, 'load', 'z') === 'z3', 10) !== null, 'B reads it');
foreach ([$w, $a, $b] as $n) {
    tl_node_stop($n);
}
$stopped = [];
echo "done\n";
?>
--EXPECT--
# a writer stopped holding the journal
ok: A saves x
ok: B reads x
ok: B serves x from its fast level
ok: W wrote x=v2 to the File store and stopped holding the journal lock
ok: the bound passed
ok: B cannot sync: it answers from the File store, not its old copy, and does not hang
ok: B reports its sync failing
ok: and again
ok: a save on A waits at most lock_timeout for the journal and fails
ok: W continued: its save returns true
ok: B syncs again
ok: B reads x
ok: B serves x from its fast level
# a writer stopped holding the File store's lock
ok: W2 stopped inside its File save, holding the store lock
ok: the bound passed
ok: B reads x (the save has not returned: the old value is still current) and does not hang
ok: a slow read on B answers (a miss) and does not hang
ok: a save on A waits at most lock_timeout for the store lock and fails
ok: W2 continued: its save returns true
ok: B sees x=v3
ok: the bound passed
ok: B reads x=v3 after the bound
ok: B reads x
ok: B serves x from its fast level
ok: A saves again
ok: B reads it
done
