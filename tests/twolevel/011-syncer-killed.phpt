--TEST--
TwoLevel: the process that replays the journal on a node is killed with SIGKILL in the middle of its sync (test hook TAGCACHE_TEST_CRASH=twolevel_apply), over Redis, File and Memcached: the other processes of the node serve no stale copy beyond the bound, nothing hangs, and the node recovers (it syncs and fills again)
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

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('killed')['port']);
$env = getenv('TAGCACHE_MEMCACHED_PORT');
$mc = is_string($env) && preg_match('/^\d+$/D', $env) && tcm_ping((int) $env) ? (int) $env : tcm_start('killed')['port'];
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl011-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl011:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
    'Memcached' => ['servers' => [['127.0.0.1', $mc]], 'prefix' => 'tl011' . getmypid()],
];
$bound = 0.3;

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    $mk = fn(string $n) => ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound,
        'fast_backend_options' => tl_fast_options("tl011-$engine-$n-" . getmypid())];
    $a = tl_node_start($mk('a'));
    $optsB = $mk('b');
    $b2 = tl_node_start($optsB);
    tl_node($a, 'clean', 'all');
    tl_same(true, tl_node($a, 'save', 'v1', 'x', ['t']), 'A saves x');
    tl_same('v1', tl_node($b2, 'load', 'x'), 'B2 reads x');
    $h0 = tl_node($b2, 'stats')['fast_hits'];
    tl_same('v1', tl_node($b2, 'load', 'x'), 'B2 reads x again');
    tl_same(true, tl_node($b2, 'stats')['fast_hits'] > $h0, 'from the fast level of node B');

    // B1, another process of node B, dies while it applies the second of two records
    $b1 = tl_node_start($optsB, ['TAGCACHE_TEST_CRASH' => 'twolevel_apply', 'TAGCACHE_TEST_CRASH_AFTER' => '2']);
    // records: y (applied), then x (B1 dies before it)
    tl_same(true, tl_node($a, 'save', 'w', 'y'), 'A saves y');
    tl_same(true, tl_node($a, 'save', 'v2', 'x', ['t']), 'A overwrites x');
    tl_same(true, tl_wait(fn() => tl_node($b2, 'stats')['last_sync_age_ms'] >= $bound * 1000, 10) !== null,
        'node B\'s last sync is older than the bound');
    tl_node_send($b1, 'load', 'x');
    tl_same(['died' => true], tl_node_recv_within($b1, 10), 'B1 syncs and dies in the middle of it');
    tl_same(true, tl_node_killed_by($b1, 9), 'B1 was killed by SIGKILL');
    proc_close($b1['proc']);

    tl_node_send($b2, 'load', 'x');
    tl_same(['r' => 'v2'], tl_node_recv_within($b2, 10), 'B2 reads the new x at once (no stale copy, no hang)');
    tl_same(0, tl_node($b2, 'stats')['sync_failing'], 'B2 synced');
    $h0 = tl_node($b2, 'stats')['fast_hits'];
    tl_same(true, tl_wait(fn() => tl_node($b2, 'load', 'x') === 'v2' && tl_node($b2, 'stats')['fast_hits'] > $h0, 10) !== null,
        'node B recovers: x is a fast hit again');
    $b3 = tl_node_start($optsB);
    tl_same('v2', tl_node($b3, 'load', 'x'), 'a new process of node B reads the new x');
    tl_same('w', tl_node($b3, 'load', 'y'), 'and y');
    tl_same(true, tl_node($a, 'clean', 'matchingTag', ['t']), 'A cleans tag t');
    tl_same(true, tl_wait(fn() => tl_node($b3, 'load', 'x') === false && tl_node($b2, 'load', 'x') === false, 10) !== null,
        'node B applies later records too');
    foreach ([$a, $b2, $b3] as $n) {
        tl_node_stop($n);
    }
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
ok: A saves x
ok: B2 reads x
ok: B2 reads x again
ok: from the fast level of node B
ok: A saves y
ok: A overwrites x
ok: node B's last sync is older than the bound
ok: B1 syncs and dies in the middle of it
ok: B1 was killed by SIGKILL
ok: B2 reads the new x at once (no stale copy, no hang)
ok: B2 synced
ok: node B recovers: x is a fast hit again
ok: a new process of node B reads the new x
ok: and y
ok: A cleans tag t
ok: node B applies later records too
# File
ok: A saves x
ok: B2 reads x
ok: B2 reads x again
ok: from the fast level of node B
ok: A saves y
ok: A overwrites x
ok: node B's last sync is older than the bound
ok: B1 syncs and dies in the middle of it
ok: B1 was killed by SIGKILL
ok: B2 reads the new x at once (no stale copy, no hang)
ok: B2 synced
ok: node B recovers: x is a fast hit again
ok: a new process of node B reads the new x
ok: and y
ok: A cleans tag t
ok: node B applies later records too
# Memcached
ok: A saves x
ok: B2 reads x
ok: B2 reads x again
ok: from the fast level of node B
ok: A saves y
ok: A overwrites x
ok: node B's last sync is older than the bound
ok: B1 syncs and dies in the middle of it
ok: B1 was killed by SIGKILL
ok: B2 reads the new x at once (no stale copy, no hang)
ok: B2 synced
ok: node B recovers: x is a fast hit again
ok: a new process of node B reads the new x
ok: and y
ok: A cleans tag t
ok: node B applies later records too
done
