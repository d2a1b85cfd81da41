--TEST--
TwoLevel: a process of a node is killed with SIGKILL inside its save of an id, after its slow write and its own-save mark but before its fast write (test hook TAGCACHE_TEST_CRASH=twolevel_save_marked), over Redis, File and Memcached: once the bound has passed, no process of that node serves the superseded fast copy, whether it came from the node's own save or from a fill
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (($r = tcm_skip_reason(!getenv('TAGCACHE_MEMCACHED_PORT'))) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('ownkill')['port']);
$env = getenv('TAGCACHE_MEMCACHED_PORT');
$mc = is_string($env) && preg_match('/^\d+$/D', $env) && tcm_ping((int) $env) ? (int) $env : tcm_start('ownkill')['port'];
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl015-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl015:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
    'Memcached' => ['servers' => [['127.0.0.1', $mc]], 'prefix' => 'tl015' . getmypid()],
];
$bound = 0.3;
$crash = ['TAGCACHE_TEST_CRASH' => 'twolevel_save_marked'];

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
    $mk = fn(string $n) => ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound,
        'fast_backend_options' => tl_fast_options("tl015-$engine-$n-" . getmypid())];
    $optsA = $mk('a');
    $a1 = tl_node_start($optsA);
    $b = tl_node_start($mk('b'));
    tl_node($a1, 'clean', 'all');
    // the first sync of a node is a gap (a new epoch for it): it empties the fast level
    tl_same(false, tl_node($a1, 'load', 'nothing-here'), 'A1 has synced once');
    $direct = 'TagCache\\' . $engine;
    $plain = new $direct($slow);   // the slow level itself

    // x: node A's copy is A1's own save; y: node A's copy is a fill of B's save
    tl_same(true, tl_node($a1, 'save', 'x1', 'x', ['t']), 'A1 saves x');
    tl_same(true, tl_node($b, 'save', 'y1', 'y', ['t']), 'B saves y');
    // those records applied on node A first (one batch with the later ones
    // would decide them together: a different path)
    tl_same(true, synced_once($a1), 'A1 synced after both saves');
    tl_same('not fast:\'y1\'', load_kind($a1, 'y'), 'A1 reads y from the slow level (a fill)');
    tl_same('fast:\'x1\'', load_kind($a1, 'x'), 'A1 reads x from its fast level');
    tl_same('fast:\'y1\'', load_kind($a1, 'y'), 'A1 reads y from its fast level');

    foreach (['x' => 'x2', 'y' => 'y2'] as $id => $v) {
        // another process of node A (same fast segment) dies inside its save
        $a2 = tl_node_start($optsA, $crash);
        tl_node_send($a2, 'save', $v, $id, ['t']);
        tl_same(['died' => true], tl_node_recv_within($a2, 10), "A2 dies inside its save of $id");
        tl_same(true, tl_node_killed_by($a2, 9), 'by SIGKILL');
        proc_close($a2['proc']);
        tl_same($v, $plain->load($id), "its slow write of $id landed");
    }

    tl_same(true, tl_wait(fn() => tl_node($a1, 'stats')['last_sync_age_ms'] >= $bound * 1000, 10) !== null,
        'node A\'s last sync is older than the bound');
    tl_same('x2', tl_node($a1, 'load', 'x'), 'A1 does not serve its own superseded copy of x');
    tl_same('y2', tl_node($a1, 'load', 'y'), 'nor its superseded fill of y');
    $a3 = tl_node_start($optsA);
    tl_same('x2', tl_node($a3, 'load', 'x'), 'a new process of node A reads the new x');
    tl_same('y2', tl_node($a3, 'load', 'y'), 'and the new y');
    tl_same(true, tl_wait(fn() => load_kind($a1, 'x') === 'fast:\'x2\'', 10) !== null, 'node A fills x again');
    tl_same('y2', tl_node($b, 'load', 'y'), 'node B reads the new y');
    foreach ([$a1, $a3, $b] as $n) {
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
ok: A1 has synced once
ok: A1 saves x
ok: B saves y
ok: A1 synced after both saves
ok: A1 reads y from the slow level (a fill)
ok: A1 reads x from its fast level
ok: A1 reads y from its fast level
ok: A2 dies inside its save of x
ok: by SIGKILL
ok: its slow write of x landed
ok: A2 dies inside its save of y
ok: by SIGKILL
ok: its slow write of y landed
ok: node A's last sync is older than the bound
ok: A1 does not serve its own superseded copy of x
ok: nor its superseded fill of y
ok: a new process of node A reads the new x
ok: and the new y
ok: node A fills x again
ok: node B reads the new y
# File
ok: A1 has synced once
ok: A1 saves x
ok: B saves y
ok: A1 synced after both saves
ok: A1 reads y from the slow level (a fill)
ok: A1 reads x from its fast level
ok: A1 reads y from its fast level
ok: A2 dies inside its save of x
ok: by SIGKILL
ok: its slow write of x landed
ok: A2 dies inside its save of y
ok: by SIGKILL
ok: its slow write of y landed
ok: node A's last sync is older than the bound
ok: A1 does not serve its own superseded copy of x
ok: nor its superseded fill of y
ok: a new process of node A reads the new x
ok: and the new y
ok: node A fills x again
ok: node B reads the new y
# Memcached
ok: A1 has synced once
ok: A1 saves x
ok: B saves y
ok: A1 synced after both saves
ok: A1 reads y from the slow level (a fill)
ok: A1 reads x from its fast level
ok: A1 reads y from its fast level
ok: A2 dies inside its save of x
ok: by SIGKILL
ok: its slow write of x landed
ok: A2 dies inside its save of y
ok: by SIGKILL
ok: its slow write of y landed
ok: node A's last sync is older than the bound
ok: A1 does not serve its own superseded copy of x
ok: nor its superseded fill of y
ok: a new process of node A reads the new x
ok: and the new y
ok: node A fills x again
ok: node B reads the new y
done
