--TEST--
TwoLevel over Redis: the read-fill race within one node: a clean, a remove or a save by another process of the same node between a slow read and its fill leaves no superseded copy, also after the node replayed those (its own) records (test hook TAGCACHE_TEST_TWOLEVEL_PAUSE)
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

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('ownrace')['port']);
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl010:' . getmypid() . ':'];
$opts = ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => 0.05,
    'fast_backend_options' => tl_fast_options('tl010-' . getmypid())];
$pause = sys_get_temp_dir() . '/tl010-pause-' . getmypid();
@unlink("$pause.ready");
@unlink("$pause.go");

$p = tl_node_start($opts, ['TAGCACHE_TEST_TWOLEVEL_PAUSE' => $pause]);   // pauses its fills
$q = tl_node_start($opts);                                               // same node, another process
$c = tl_node_start(['fast_backend_options' => tl_fast_options('tl010-c-' . getmypid())] + $opts);   // another node
tl_node($q, 'clean', 'all');

/** Q ran a sync that began after now (bounded). */
function q_synced(array $q): bool
{
    $n0 = tl_node($q, 'stats')['node_syncs'];
    return tl_wait(function () use ($q, $n0) {
        tl_node($q, 'load', 'nothing-here');
        return tl_node($q, 'stats')['node_syncs'] > $n0;
    }, 10) !== null;
}

$cases = [
    'clean' => fn() => tl_node($q, 'clean', 'matchingTag', ['t']),
    'remove' => fn() => tl_node($q, 'remove', 'x'),
    'save' => fn() => tl_node($q, 'save', 'new', 'x', ['t']),
];
foreach ($cases as $what => $write) {
    echo "# $what\n";
    // x saved by another node: P's load is a slow read and then a fill
    tl_same(true, tl_node($c, 'save', 'old', 'x', ['t']), 'node C saves x');
    tl_same(true, q_synced($q), 'node B synced');

    tl_node_send($p, 'load', 'x');
    tl_same(true, tl_wait(fn() => file_exists("$pause.ready"), 10) !== null, 'P read x from the slow level and waits before its fill');
    tl_same(true, $write(), "Q ({$what}) x on the same node");
    file_put_contents("$pause.go", "");   // not touch(): P unlinks it as soon as it sees it, which can fall between touch's create and its utime
    tl_same('old', tl_node_recv($p, 'load'), 'P returns what it read before');
    @unlink("$pause.ready");
    tl_same(true, q_synced($q), 'the node replayed its own records');
    $want = $what === 'save' ? 'new' : false;
    tl_same($want, tl_node($q, 'load', 'x'), 'Q reads what the slow level holds');
    tl_same($want, tl_node($p, 'load', 'x'), 'P reads what the slow level holds');
}
foreach ([$p, $q, $c] as $n) {
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
# clean
ok: node C saves x
ok: node B synced
ok: P read x from the slow level and waits before its fill
ok: Q (clean) x on the same node
ok: P returns what it read before
ok: the node replayed its own records
ok: Q reads what the slow level holds
ok: P reads what the slow level holds
# remove
ok: node C saves x
ok: node B synced
ok: P read x from the slow level and waits before its fill
ok: Q (remove) x on the same node
ok: P returns what it read before
ok: the node replayed its own records
ok: Q reads what the slow level holds
ok: P reads what the slow level holds
# save
ok: node C saves x
ok: node B synced
ok: P read x from the slow level and waits before its fill
ok: Q (save) x on the same node
ok: P returns what it read before
ok: the node replayed its own records
ok: Q reads what the slow level holds
ok: P reads what the slow level holds
done
