--TEST--
TwoLevel over Redis: a fill whose slow read came before another process's save of the id on the same node, killed right after its fast write (test hooks TAGCACHE_TEST_TWOLEVEL_PAUSE, TAGCACHE_TEST_CRASH=twolevel_fill_written): its older copy never lands over the save's, and the node serves the saved value, also after it replayed its own record
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

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('fillkill')['port']);
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl026:' . getmypid() . ':'];
$opts = ['slow_backend' => 'Redis', 'slow_backend_options' => $slow, 'max_staleness' => 0.05,
    'fast_backend_options' => tl_fast_options('tl026-' . getmypid())];
$pause = sys_get_temp_dir() . '/tl026-pause-' . getmypid();
@unlink("$pause.ready");
@unlink("$pause.go");

// P pauses between its slow read and its fill, and dies right after the fill's fast write
$p = tl_node_start($opts, ['TAGCACHE_TEST_TWOLEVEL_PAUSE' => $pause, 'TAGCACHE_TEST_CRASH' => 'twolevel_fill_written']);
$q = tl_node_start($opts);                                                                // same node, another process
$c = tl_node_start(['fast_backend_options' => tl_fast_options('tl026-c-' . getmypid())] + $opts);   // another node
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

/** A load on a node, and whether it was a fast hit. */
function load_kind(array $node, string $id): string
{
    $h0 = tl_node($node, 'stats')['fast_hits'];
    $v = tl_node($node, 'load', $id);
    return (tl_node($node, 'stats')['fast_hits'] > $h0 ? 'fast:' : 'not fast:') . var_export($v, true);
}

// x saved by another node: P's load is a slow read and then a fill
tl_same(true, tl_node($c, 'save', 'old', 'x', ['t']), 'node C saves x');
tl_same(true, q_synced($q), 'node B synced');

tl_node_send($p, 'load', 'x');
tl_same(true, tl_wait(fn() => file_exists("$pause.ready"), 10) !== null, 'P read x from the slow level and waits before its fill');
tl_same(true, tl_node($q, 'save', 'new', 'x', ['t']), 'Q saves x on the same node');
tl_same('fast:\'new\'', load_kind($q, 'x'), "Q reads its own save's copy");
file_put_contents("$pause.go", "");   // not touch(): P unlinks it as soon as it sees it
$r = tl_node_recv_within($p, 10);
@unlink("$pause.ready");
// P reaches the crash point only if its fill wrote a copy: before the
// fill's word, it wrote 'old' over Q's copy there and died with Q's final
// mark vouching for it (the replay of Q's record then kept it)
tl_same(['r' => 'old'], $r, 'P returns what it read: its fill did not land, so it did not die');
tl_same('new', tl_node($q, 'load', 'x'), 'Q reads the saved value');
tl_same(true, q_synced($q), 'the node replayed its own records');
tl_same('new', tl_node($q, 'load', 'x'), 'Q still reads the saved value');
$q2 = tl_node_start($opts);
tl_same('new', tl_node($q2, 'load', 'x'), 'a new process of the node reads it');
tl_same('new', tl_node($c, 'load', 'x'), 'node C reads it');
foreach ([$q, $q2, $c] as $n) {
    tl_node_stop($n);
}
if (!isset($r['died'])) {
    $st = tl_node($p, 'stats');
    tl_same([1, 0], [$st['fills_skipped'], $st['fills']], 'P counted its fill as skipped');
    tl_node_stop($p);
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: node C saves x
ok: node B synced
ok: P read x from the slow level and waits before its fill
ok: Q saves x on the same node
ok: Q reads its own save's copy
ok: P returns what it read: its fill did not land, so it did not die
ok: Q reads the saved value
ok: the node replayed its own records
ok: Q still reads the saved value
ok: a new process of the node reads it
ok: node C reads it
ok: P counted its fill as skipped
done
