--TEST--
TwoLevel: while a clean by tag of one process of a node is between its first fast clean and its slow clean (stopped there, test hook TAGCACHE_TEST_CRASH=twolevel_clean_fast), another process of the node reads an id whose copy the clean removed as a miss with no slow read (a provisional tombstone; before, the read asked the slow level, which still held the entry), ids the clean does not concern stay fast hits, and the tombstone is kept once the clean is done; a cleaner killed there leaves no miss behind (the read asks the slow level again); over Redis and File
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (!function_exists('posix_kill')) die('skip needs posix_kill() to continue a stopped process');
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('inflight')['port']);
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl025-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl025:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
];

/** A load on a node: fast, known (a tombstone), slow or miss (asked the slow level), and the value. */
function read_kind(array $node, string $id): string
{
    $s0 = tl_node($node, 'stats');
    $v = tl_node($node, 'load', $id);
    $s1 = tl_node($node, 'stats');
    $kind = $s1['fast_hits'] > $s0['fast_hits'] ? 'fast' : ($s1['known_absent'] > $s0['known_absent'] ? 'known'
        : ($s1['slow_hits'] > $s0['slow_hits'] ? 'slow' : 'miss'));
    return $kind . ':' . var_export($v, true);
}

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    // a long bound: no sync of the node between the saves and the reads
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 30,
        'fast_backend_options' => tl_fast_options("tl025-$engine-" . getmypid())];
    $b = tl_node_start($opts);
    tl_node($b, 'clean', 'all');
    $direct = 'TagCache\\' . $engine;
    $plain = new $direct($slow);   // the slow level itself

    // the cleaner stopped inside its clean
    $a = tl_node_start($opts, ['TAGCACHE_TEST_CRASH' => 'twolevel_clean_fast', 'TAGCACHE_TEST_CRASH_MODE' => 'stop']);
    // the first sync of a node is a gap (a new epoch for it): it empties the fast level
    tl_same(true, tl_node($b, 'load', 'nothing-here') === false && tl_node($a, 'load', 'nothing-here') === false,
        'A and B have synced once');
    tl_same(true, tl_node($b, 'save', 'vx', 'x', ['t']) && tl_node($b, 'save', 'vy', 'y', ['other']), 'B saved x (t) and y');
    tl_same(["fast:'vx'", "fast:'vy'"], [read_kind($b, 'x'), read_kind($b, 'y')], 'B reads both from the fast level');
    tl_node_send($a, 'clean', 'matchingTag', ['t']);
    tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($a)), 'A stopped after its first fast clean');
    tl_same('vx', $plain->load('x'), 'the slow level still holds x');
    tl_same('known:false', read_kind($b, 'x'), 'B: x is a miss with no slow read while the clean runs');
    tl_same("fast:'vy'", read_kind($b, 'y'), 'B: y, which the clean does not concern, is a fast hit');
    posix_kill(tl_node_pid($a), SIGCONT);
    $stopped = [];
    tl_same(true, tl_node_recv($a, 'clean'), "A's clean returns after SIGCONT");
    tl_same(false, $plain->load('x'), 'the slow level holds no x');
    tl_same('known:false', read_kind($b, 'x'), 'B: x is known absent after the clean (kept tombstone)');
    tl_node_stop($a);

    // the cleaner killed at the same point: its provisional tombstone costs no miss
    $a = tl_node_start($opts, ['TAGCACHE_TEST_CRASH' => 'twolevel_clean_fast']);
    tl_same(true, tl_node($b, 'save', 'vz', 'z', ['t']), 'B saved z (t)');
    tl_same("fast:'vz'", read_kind($b, 'z'), 'B reads z from the fast level');
    tl_node_send($a, 'clean', 'matchingTag', ['t']);
    tl_same(true, tl_node_killed_by($a, SIGKILL), 'A killed after its first fast clean');
    tl_same('vz', $plain->load('z'), 'the slow level still holds z');
    tl_same("slow:'vz'", read_kind($b, 'z'), 'B: z is read from the slow level (the cleaner is gone)');
    tl_same("fast:'vz'", read_kind($b, 'z'), 'B: and filled again');
    tl_node_stop($b);
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
ok: B saved x (t) and y
ok: B reads both from the fast level
ok: A stopped after its first fast clean
ok: the slow level still holds x
ok: B: x is a miss with no slow read while the clean runs
ok: B: y, which the clean does not concern, is a fast hit
ok: A's clean returns after SIGCONT
ok: the slow level holds no x
ok: B: x is known absent after the clean (kept tombstone)
ok: B saved z (t)
ok: B reads z from the fast level
ok: A killed after its first fast clean
ok: the slow level still holds z
ok: B: z is read from the slow level (the cleaner is gone)
ok: B: and filled again
# File
ok: A and B have synced once
ok: B saved x (t) and y
ok: B reads both from the fast level
ok: A stopped after its first fast clean
ok: the slow level still holds x
ok: B: x is a miss with no slow read while the clean runs
ok: B: y, which the clean does not concern, is a fast hit
ok: A's clean returns after SIGCONT
ok: the slow level holds no x
ok: B: x is known absent after the clean (kept tombstone)
ok: B saved z (t)
ok: B reads z from the fast level
ok: A killed after its first fast clean
ok: the slow level still holds z
ok: B: z is read from the slow level (the cleaner is gone)
ok: B: and filled again
done
