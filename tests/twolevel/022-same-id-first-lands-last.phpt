--TEST--
TwoLevel: two processes of one node save one id at once, and the fast write of the save that came first in the slow level lands last (A1 stopped with SIGSTOP after its slow write and its pending own-save mark, test hook TAGCACHE_TEST_CRASH=twolevel_save_marked, while A2 saves the id; SIGCONT after A2's save returned), over Redis, File and Memcached: once the node synced after both, it serves the slow level's value, not A1's older copy (over Redis a mark that vouched for A2's save kept A1's copy for good)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (($r = tcm_skip_reason(!getenv('TAGCACHE_MEMCACHED_PORT'))) !== null) die("skip $r");
if (!function_exists('posix_kill')) die('skip needs posix_kill() to stop and continue a process');
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('lastlands')['port']);
$env = getenv('TAGCACHE_MEMCACHED_PORT');
$mc = is_string($env) && preg_match('/^\d+$/D', $env) && tcm_ping((int) $env) ? (int) $env : tcm_start('lastlands')['port'];
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl022-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl022:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
    'Memcached' => ['servers' => [['127.0.0.1', $mc]], 'prefix' => 'tl022' . getmypid()],
];
$stop = ['TAGCACHE_TEST_CRASH' => 'twolevel_save_marked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop',
    'TAGCACHE_TEST_CRASH_AFTER' => '1'];

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

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    $mk = fn(string $n) => ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 0.3,
        'fast_backend_options' => tl_fast_options("tl022-$engine-$n-" . getmypid())];
    $optsA = $mk('a');
    $a2 = tl_node_start($optsA);
    $a1 = tl_node_start($optsA, $stop);
    $b = tl_node_start($mk('b'));
    tl_node($a2, 'clean', 'all');
    // the first sync of a node is a gap (a new epoch for it): it empties the fast level
    tl_same(true, tl_node($a2, 'load', 'nothing-here') === false && tl_node($a1, 'load', 'nothing-here') === false
        && tl_node($b, 'load', 'nothing-here') === false, 'A1 and A2 have synced once');
    $direct = 'TagCache\\' . $engine;
    $plain = new $direct($slow);   // the slow level itself
    tl_same(true, tl_node($a2, 'save', 'v0', 'x', ['t']) && load_kind($a2, 'x') === "fast:'v0'",
        'A2 saves x (v0) and reads it from its fast level');

    tl_node_send($a1, 'save', 'v1', 'x', ['t']);
    tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($a1)) && $plain->load('x') === 'v1',
        'A1 wrote x=v1 to the slow level and stopped before its fast write');
    tl_same(true, tl_node($a2, 'save', 'v2', 'x', ['t']), 'A2 saves x=v2 meanwhile (the slow level\'s last write)');
    tl_same('v2', $plain->load('x'), 'the slow level holds v2');
    posix_kill(tl_node_pid($a1), SIGCONT);
    $stopped = [];
    tl_same(true, tl_node_recv($a1, 'save'), 'A1\'s save returns after SIGCONT');
    tl_same(true, synced_once($a2), 'node A synced after both saves');
    tl_same('v2', tl_node($a2, 'load', 'x'), 'A2 reads v2, the slow level\'s value, not A1\'s older copy');
    tl_same('v2', tl_node($a1, 'load', 'x'), 'A1 reads v2 too');
    $a3 = tl_node_start($optsA);
    tl_same('v2', tl_node($a3, 'load', 'x'), 'a new process of node A reads v2');
    tl_same('v2', tl_node($b, 'load', 'x'), 'node B reads v2');
    tl_same(true, tl_wait(fn() => load_kind($a2, 'x') === "fast:'v2'", 10) !== null,
        'node A fills x again and serves it from its fast level');
    foreach ([$a1, $a2, $a3, $b] as $n) {
        tl_node_stop($n);
    }
    $plain = null;
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';
tcr_clean();
tcm_clean();
?>
--EXPECT--
# Redis
ok: A1 and A2 have synced once
ok: A2 saves x (v0) and reads it from its fast level
ok: A1 wrote x=v1 to the slow level and stopped before its fast write
ok: A2 saves x=v2 meanwhile (the slow level's last write)
ok: the slow level holds v2
ok: A1's save returns after SIGCONT
ok: node A synced after both saves
ok: A2 reads v2, the slow level's value, not A1's older copy
ok: A1 reads v2 too
ok: a new process of node A reads v2
ok: node B reads v2
ok: node A fills x again and serves it from its fast level
# File
ok: A1 and A2 have synced once
ok: A2 saves x (v0) and reads it from its fast level
ok: A1 wrote x=v1 to the slow level and stopped before its fast write
ok: A2 saves x=v2 meanwhile (the slow level's last write)
ok: the slow level holds v2
ok: A1's save returns after SIGCONT
ok: node A synced after both saves
ok: A2 reads v2, the slow level's value, not A1's older copy
ok: A1 reads v2 too
ok: a new process of node A reads v2
ok: node B reads v2
ok: node A fills x again and serves it from its fast level
# Memcached
ok: A1 and A2 have synced once
ok: A2 saves x (v0) and reads it from its fast level
ok: A1 wrote x=v1 to the slow level and stopped before its fast write
ok: A2 saves x=v2 meanwhile (the slow level's last write)
ok: the slow level holds v2
ok: A1's save returns after SIGCONT
ok: node A synced after both saves
ok: A2 reads v2, the slow level's value, not A1's older copy
ok: A1 reads v2 too
ok: a new process of node A reads v2
ok: node B reads v2
ok: node A fills x again and serves it from its fast level
done
