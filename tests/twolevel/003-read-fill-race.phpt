--TEST--
TwoLevel over Redis: the read-fill race: a clean applied on the node between a slow read and its fill drops the fill (test hook TAGCACHE_TEST_TWOLEVEL_PAUSE), with the tags from the slow read itself (load_tags) and from a second read (metadata, test hook TAGCACHE_TEST_TWOLEVEL_FILL)
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

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('race')['port']);
$bound = 0.2;
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl003:' . getmypid() . ':'];
$fastB = tl_fast_options('tl003-b-' . getmypid());
$mk = fn(array $fast) => ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => $bound,
    'fast_backend_options' => $fast];
$pause = sys_get_temp_dir() . '/tl003-pause-' . getmypid();
@unlink("$pause.ready");
@unlink("$pause.go");

// the fill's tags from the slow read itself (Redis's load_tags), then from
// a second read, metadata() (test hook TAGCACHE_TEST_TWOLEVEL_FILL)
foreach (['load_tags' => [], 'metadata' => ['TAGCACHE_TEST_TWOLEVEL_FILL' => 'metadata']] as $how => $env) {
    echo "-- fill's tags by $how\n";
    $a = tl_node_start($mk(tl_fast_options("tl003-a-$how-" . getmypid())));
    $p = tl_node_start($mk($fastB), ['TAGCACHE_TEST_TWOLEVEL_PAUSE' => $pause] + $env);   // node B, a process that pauses
    $q = tl_node_start($mk($fastB));                                                      // node B, another process
    tl_node($a, 'clean', 'all');
    tl_same(true, tl_node($a, 'save', 'old', 'x', ['t']), 'A saves x');
    tl_node($q, 'load', 'nothing');   // B synced once

    tl_node_send($p, 'load', 'x');
    tl_same(true, tl_wait(fn() => file_exists("$pause.ready"), 10) !== null, 'B (process P) read x from Redis and waits before its fill');
    tl_same(true, tl_node($a, 'clean', 'matchingTag', ['t']), 'A cleans tag t');
    $t = microtime(true) + $bound;
    while (microtime(true) < $t) {
        usleep(20000);
    }
    tl_same(false, tl_node($q, 'load', 'x'), 'B (process Q) syncs and misses x');
    file_put_contents("$pause.go", "");   // not touch(): P unlinks it as soon as it sees it, which can fall between touch's create and its utime
    tl_same('old', tl_node_recv($p, 'load'), 'P returns what it read before the clean');
    tl_same(false, tl_node($q, 'load', 'x'), 'Q still misses x: the fill was dropped');
    tl_same(false, tl_node($p, 'load', 'x'), 'P misses x');
    $st = tl_node($p, 'stats');
    tl_same(1, $st['fills_skipped'] + $st['fills_undone'], 'P counted one dropped fill');
    tl_same(0, $st['fills'], 'and no installed fill');
    tl_same($how === 'metadata' ? 1 : 0, $st['fill_reads'], "P's slow read needed " . ($how === 'metadata' ? 'one more read (metadata)' : 'no second read') . ' for the tags');
    @unlink("$pause.ready");
    foreach ([$a, $p, $q] as $n) {
        tl_node_stop($n);
    }
    $fastB = tl_fast_options('tl003-b2-' . getmypid());
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
-- fill's tags by load_tags
ok: A saves x
ok: B (process P) read x from Redis and waits before its fill
ok: A cleans tag t
ok: B (process Q) syncs and misses x
ok: P returns what it read before the clean
ok: Q still misses x: the fill was dropped
ok: P misses x
ok: P counted one dropped fill
ok: and no installed fill
ok: P's slow read needed no second read for the tags
-- fill's tags by metadata
ok: A saves x
ok: B (process P) read x from Redis and waits before its fill
ok: A cleans tag t
ok: B (process Q) syncs and misses x
ok: P returns what it read before the clean
ok: Q still misses x: the fill was dropped
ok: P misses x
ok: P counted one dropped fill
ok: and no installed fill
ok: P's slow read needed one more read (metadata) for the tags
done
