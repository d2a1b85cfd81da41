--TEST--
TwoLevel over Redis and File: a fill makes its word final (its own, or the one of another process it found in the id's mark), so the replay of an earlier save record of that process leaves the copy (a fast hit, no slow read), and a record of another process of the node, written after the fill, still removes it (test hooks TAGCACHE_TEST_CRASH=twolevel_save_marked in stop mode, twolevel_save_slow)
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

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('fillfinal')['port']);
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl027-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl027:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
];
$stop = ['TAGCACHE_TEST_CRASH' => 'twolevel_save_marked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop'];
// more tags than a note of a local clean holds: noted as a clean of
// everything, so a save that overlaps it drops its copy (none of them is x's)
$seven = ['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7'];

/** A load on a node, and whether it was a fast hit. */
function load_kind(array $node, string $id): string
{
    $h0 = tl_node($node, 'stats')['fast_hits'];
    $v = tl_node($node, 'load', $id);
    return (tl_node($node, 'stats')['fast_hits'] > $h0 ? 'fast:' : 'not fast:') . var_export($v, true);
}

/** Loads of another id on a node until it ran a sync that began after now (bounded). */
function synced_once(array $node): bool
{
    $n0 = tl_node($node, 'stats')['node_syncs'];
    return tl_wait(function () use ($node, $n0) {
        tl_node($node, 'load', 'nothing-here');
        return tl_node($node, 'stats')['node_syncs'] > $n0;
    }, 10) !== null;
}

/** Process $a saves $v as $x and stops after its slow write; $b cleans seven other tags meanwhile: $a's save drops its copy. */
function dropped_save(array $a, array $b, string $x, string $v, $plain, array $seven, array &$stopped): void
{
    tl_node_send($a, 'save', $v, $x, ['t']);
    tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($a)) && $plain->load($x) === $v, "$x: the saver stopped after its slow write");
    tl_same(true, tl_node($b, 'clean', 'matchingAnyTag', $seven), "$x: another process of the node cleans seven other tags");
    posix_kill(tl_node_pid($a), SIGCONT);
    $stopped = [];
    tl_same(true, tl_node_recv($a, 'save'), "$x: the save returns after SIGCONT");
}

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 0.3,
        'fast_backend_options' => tl_fast_options("tl027-$engine-" . getmypid())];
    $b = tl_node_start($opts);
    tl_node($b, 'clean', 'all');
    $a = tl_node_start($opts, $stop);
    tl_same(true, tl_node($b, 'load', 'nothing-here') === false && tl_node($a, 'load', 'nothing-here') === false,
        'A and B have synced once');
    $direct = 'TagCache\\' . $engine;
    $plain = new $direct($slow);   // the slow level itself

    // 1. A's own dropped save, then A's own fill
    dropped_save($a, $b, 'x', 'v1', $plain, $seven, $stopped);
    tl_same("not fast:'v1'", load_kind($a, 'x'), 'x: A reads it from the slow level (and fills the copy)');
    tl_same(true, synced_once($b), 'x: the node replayed its records (A\'s save of x among them)');
    tl_same("fast:'v1'", load_kind($a, 'x'), 'x: the replay of its own earlier save left the fill\'s copy');
    tl_same("fast:'v1'", load_kind($b, 'x'), 'x: B reads the copy too');
    // another process of the node saves x after that fill and is killed
    // after its slow write (its record appended), before it touched the mark
    $c = tl_node_start($opts, ['TAGCACHE_TEST_CRASH' => 'twolevel_save_slow']);
    tl_node_send($c, 'save', 'v3', 'x', ['t']);
    tl_same(['died' => true], tl_node_recv_within($c, 10), 'x: C dies inside its save');
    tl_same(true, tl_node_killed_by($c, 9) && $plain->load('x') === 'v3', 'x: by SIGKILL, after its slow write');
    tl_same(true, synced_once($b), 'x: the node replayed C\'s record');
    tl_same(['v3', 'v3'], [tl_node($a, 'load', 'x'), tl_node($b, 'load', 'x')], 'x: the fill\'s final word kept nothing past it');

    // 2. A's dropped save, then B's fill: it takes over A's word
    tl_node_stop($a);
    $a = tl_node_start($opts, $stop);   // the stop hook fires once a process
    tl_node($a, 'load', 'nothing-here');
    dropped_save($a, $b, 'y', 'v4', $plain, $seven, $stopped);
    tl_same("not fast:'v4'", load_kind($b, 'y'), 'y: B reads it from the slow level (and fills the copy)');
    tl_same(true, synced_once($b), 'y: the node replayed A\'s save of y');
    tl_same(["fast:'v4'", "fast:'v4'"], [load_kind($b, 'y'), load_kind($a, 'y')], 'y: the replay of A\'s save left B\'s copy');
    $c = tl_node_start($opts, ['TAGCACHE_TEST_CRASH' => 'twolevel_save_slow']);
    tl_node_send($c, 'save', 'v5', 'y', ['t']);
    tl_same(true, tl_node_recv_within($c, 10) === ['died' => true] && $plain->load('y') === 'v5', 'y: C dies after its slow write');
    tl_same(true, synced_once($b), 'y: the node replayed C\'s record');
    tl_same(['v5', 'v5'], [tl_node($a, 'load', 'y'), tl_node($b, 'load', 'y')], 'y: A\'s word in B\'s mark kept nothing past it');
    foreach ([$a, $b] as $n) {
        tl_node_stop($n);
    }
    $plain = null;
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
# Redis
ok: A and B have synced once
ok: x: the saver stopped after its slow write
ok: x: another process of the node cleans seven other tags
ok: x: the save returns after SIGCONT
ok: x: A reads it from the slow level (and fills the copy)
ok: x: the node replayed its records (A's save of x among them)
ok: x: the replay of its own earlier save left the fill's copy
ok: x: B reads the copy too
ok: x: C dies inside its save
ok: x: by SIGKILL, after its slow write
ok: x: the node replayed C's record
ok: x: the fill's final word kept nothing past it
ok: y: the saver stopped after its slow write
ok: y: another process of the node cleans seven other tags
ok: y: the save returns after SIGCONT
ok: y: B reads it from the slow level (and fills the copy)
ok: y: the node replayed A's save of y
ok: y: the replay of A's save left B's copy
ok: y: C dies after its slow write
ok: y: the node replayed C's record
ok: y: A's word in B's mark kept nothing past it
# File
ok: A and B have synced once
ok: x: the saver stopped after its slow write
ok: x: another process of the node cleans seven other tags
ok: x: the save returns after SIGCONT
ok: x: A reads it from the slow level (and fills the copy)
ok: x: the node replayed its records (A's save of x among them)
ok: x: the replay of its own earlier save left the fill's copy
ok: x: B reads the copy too
ok: x: C dies inside its save
ok: x: by SIGKILL, after its slow write
ok: x: the node replayed C's record
ok: x: the fill's final word kept nothing past it
ok: y: the saver stopped after its slow write
ok: y: another process of the node cleans seven other tags
ok: y: the save returns after SIGCONT
ok: y: B reads it from the slow level (and fills the copy)
ok: y: the node replayed A's save of y
ok: y: the replay of A's save left B's copy
ok: y: C dies after its slow write
ok: y: the node replayed C's record
ok: y: A's word in B's mark kept nothing past it
done
