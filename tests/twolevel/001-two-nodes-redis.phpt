--TEST--
TwoLevel over Redis, two nodes (two php processes, two fast segments): save on A is read on B; a clean by tag, a remove and an overwrite on A are never served by B once max_staleness passed
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('twonodes')['port']);
$bound = 0.3;
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl001:' . getmypid() . ':'];
$mk = fn(string $n) => ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => $bound,
    'fast_backend_options' => tl_fast_options("tl001-$n-" . getmypid())];
$a = tl_node_start($mk('a'));
$b = tl_node_start($mk('b'));
tl_node($a, 'clean', 'all');

/** B reads $id once the bound passed since $since: the first read after it. */
function after_bound($b, string $id, float $since, float $bound)
{
    while (microtime(true) < $since + $bound) {
        usleep((int) (($since + $bound - microtime(true)) * 1e6) + 1000);
    }
    return tl_node($b, 'load', $id);
}

/** Makes B hold $id in its fast level: read it twice, the second a fast hit. */
function warm($b, string $id, string $want): void
{
    $h0 = tl_node($b, 'stats')['fast_hits'];
    tl_same($want, tl_node($b, 'load', $id), "B reads $id from the slow level");
    tl_same($want, tl_node($b, 'load', $id), "B reads $id again");
    tl_same(true, tl_node($b, 'stats')['fast_hits'] > $h0, "B served $id from its fast level");
}

$lags = [];
tl_same(false, tl_node($b, 'load', 'x'), 'B: x is not there yet');
tl_same(true, tl_node($a, 'save', 'v1', 'x', ['t1', 't2']), 'A saves x with tags t1, t2');
warm($b, 'x', 'v1');

// clean by tag on A
tl_same(true, tl_node($a, 'clean', 'matchingAnyTag', ['t2']), 'A cleans tag t2');
$t = microtime(true);
$lags[] = tl_wait(fn() => tl_node($b, 'load', 'x') === false, 10);
tl_same(false, after_bound($b, 'x', $t, $bound), 'B misses x after the bound (clean by tag)');

// remove on A
tl_node($a, 'save', 'v2', 'x', ['t1']);
warm($b, 'x', 'v2');
tl_same(true, tl_node($a, 'remove', 'x'), 'A removes x');
$t = microtime(true);
$lags[] = tl_wait(fn() => tl_node($b, 'load', 'x') === false, 10);
tl_same(false, after_bound($b, 'x', $t, $bound), 'B misses x after the bound (remove)');

// overwrite on A
tl_node($a, 'save', 'v3', 'x', ['t1']);
warm($b, 'x', 'v3');
tl_same(true, tl_node($a, 'save', 'v4', 'x', ['t3']), 'A overwrites x');
$t = microtime(true);
$lags[] = tl_wait(fn() => tl_node($b, 'load', 'x') === 'v4', 10);
tl_same('v4', after_bound($b, 'x', $t, $bound), 'B reads the new x after the bound (overwrite)');

// clean all on A
warm($b, 'x', 'v4');
tl_same(true, tl_node($a, 'clean', 'all'), 'A cleans all');
$t = microtime(true);
$lags[] = tl_wait(fn() => tl_node($b, 'load', 'x') === false, 10);
tl_same(false, after_bound($b, 'x', $t, $bound), 'B misses x after the bound (clean all)');

// a tag clean on B reaches A's copy that A saved itself
tl_node($a, 'save', 'v5', 'y', ['t9']);
tl_same('v5', tl_node($a, 'load', 'y'), 'A reads y');
tl_same(true, tl_node($b, 'clean', 'matchingTag', ['t9']), 'B cleans tag t9');
$t = microtime(true);
tl_same(false, after_bound($a, 'y', $t, $bound), 'A misses y after the bound');

$st = tl_node($b, 'stats');
tl_same(true, $st['invalidations'] > 0 && $st['node_syncs'] > 0, 'B counted syncs and invalidations');
tl_same(0, $st['stale_served'], 'B served nothing stale');
tl_same(true, !in_array(null, $lags, true), 'every change reached B (lags measured)');
tl_node($a, 'clean', 'all');
tl_node_stop($a);
tl_node_stop($b);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: B: x is not there yet
ok: A saves x with tags t1, t2
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A cleans tag t2
ok: B misses x after the bound (clean by tag)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A removes x
ok: B misses x after the bound (remove)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A overwrites x
ok: B reads the new x after the bound (overwrite)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A cleans all
ok: B misses x after the bound (clean all)
ok: A reads y
ok: B cleans tag t9
ok: A misses y after the bound
ok: B counted syncs and invalidations
ok: B served nothing stale
ok: every change reached B (lags measured)
done
