--TEST--
TwoLevel over Redis: a clean whose slow clean is sent before its fast step (the step overlaps the round trip) and whose process is SIGKILLed in between (test hook TAGCACHE_TEST_CRASH=twolevel_clean_sent) leaves its node's copies for at most the bound: the node applies its own record again, since the clean's mark never became done; a clean that finished is still skipped as the node's own
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('cleansent')['port']);
$slow = ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl029:' . getmypid() . ':'];
$bound = 0.5;
$opts = ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => $bound,
    'fast_backend_options' => tl_fast_options('tl029-' . getmypid())];
$plain = new TagCache\Redis($slow);   // the slow level itself

$b = tl_node_start($opts);
tl_node($b, 'clean', 'all');
$a = tl_node_start($opts, ['TAGCACHE_TEST_CRASH' => 'twolevel_clean_sent']);
tl_same(true, tl_node($b, 'load', 'nothing-here') === false && tl_node($a, 'load', 'nothing-here') === false,
    'A and B (one node) have synced once');
tl_same(true, tl_node($b, 'save', 'vx', 'x', ['t']) && tl_node($b, 'save', 'vy', 'y', ['other']), 'B saved x (t) and y');
tl_same(['vx', 'vy'], [tl_node($b, 'load', 'x'), tl_node($b, 'load', 'y')], 'B reads both');
$s0 = tl_node($b, 'stats');
tl_same(true, $s0['fast_hits'] >= 2, 'from the fast level');

tl_node_send($a, 'clean', 'matchingTag', ['t']);
tl_same(true, tl_node_killed_by($a, SIGKILL), 'A killed after sending its slow clean, before its fast step');
tl_same(false, $plain->load('x'), 'the slow level holds no x');
// x's copy is still in the node's fast level (nothing removed it); within
// the bound it may be served, after it never: the record is applied
$t = tl_wait(fn() => tl_node($b, 'load', 'x') === false, 10 * $bound + 5);
tl_same(true, $t !== null, 'B stops serving x (its copy goes when the node applies the record again)');
tl_same('vy', tl_node($b, 'load', 'y'), 'y, which the clean does not concern, stays');
tl_node_stop($a);

// a clean that completes: its record is the node's own and skipped
tl_same(true, tl_node($b, 'save', 'vw', 'w', ['u']), 'B saved w (u)');
$c = tl_node_start($opts);
tl_same(true, tl_node($c, 'clean', 'matchingTag', ['u']), 'C (the same node) cleans u');
tl_same(false, tl_node($b, 'load', 'w'), 'B misses w at once (the clean removed the copy)');
$s1 = tl_node($b, 'stats');
$t = tl_wait(function () use ($b, $s1) {
    tl_node($b, 'load', 'y');
    return tl_node($b, 'stats')['own_skipped'] > $s1['own_skipped'];
}, 10 * $bound + 5);
tl_same(true, $t !== null, "the node skips C's record as its own");
tl_node_stop($c);
tl_node_stop($b);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: A and B (one node) have synced once
ok: B saved x (t) and y
ok: B reads both
ok: from the fast level
ok: A killed after sending its slow clean, before its fast step
ok: the slow level holds no x
ok: B stops serving x (its copy goes when the node applies the record again)
ok: y, which the clean does not concern, stays
ok: B saved w (u)
ok: C (the same node) cleans u
ok: B misses w at once (the clean removed the copy)
ok: the node skips C's record as its own
done
