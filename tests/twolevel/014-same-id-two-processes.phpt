--TEST--
TwoLevel: two processes of one node that save the same id before the node's next sync (refills after a clean) keep the fast copy of the later save: the earlier save's record is decided by the later one (stat superseded), not applied on its own, over Redis; the later save wins whichever process made it, and another node's later save still replaces the copy
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

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('same')['port']);
$seg = 'tl014-' . getmypid();
$opts = ['slow_backend' => 'Redis', 'max_staleness' => 0.05,
    'slow_backend_options' => ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl014:' . getmypid() . ':'],
    'fast_backend_options' => tl_fast_options($seg)];

/** Loads of another id until this object ran a sync that began after now (bounded). */
function synced_once(TagCache\TwoLevel $b): bool
{
    $n0 = $b->stats()['node_syncs'];
    return tl_wait(function () use ($b, $n0) {
        $b->load('nothing-here');
        return $b->stats()['node_syncs'] > $n0;
    }, 10) !== null;
}

function hit_kind(TagCache\TwoLevel $b, string $id): string
{
    $s0 = $b->stats();
    $v = $b->load($id);
    $s1 = $b->stats();
    $kind = $s1['fast_hits'] > $s0['fast_hits'] ? 'fast' : ($s1['slow_hits'] > $s0['slow_hits'] ? 'slow' : 'miss');
    return $kind . ':' . var_export($v, true);
}

$a = new TagCache\TwoLevel($opts);
$a->clean('all');
tl_same(true, synced_once($a), 'A synced after the clean');
// another process of the same node (same fast segment): a mark of another pid
$p = tl_node_start(['fast_backend_options' => ['segment' => $seg, 'dir' => '/dev/shm', 'size' => '4M']] + $opts);

tl_same(true, tl_node($p, 'save', 'v1', 'x', ['t']), 'P (same node) saves x');
tl_same(true, $a->save('v2', 'x', ['t']), 'A saves x after it');
$s0 = $a->stats()['superseded'];
tl_same(true, synced_once($a), 'A synced: both records in one batch');
tl_same("fast:'v2'", hit_kind($a, 'x'), 'x is a fast hit of the later save');
tl_same(true, $a->stats()['superseded'] > $s0, 'stats() counts the record decided by a later one');
tl_same('v2', tl_node($p, 'load', 'x'), 'P reads the later value');

tl_same(true, $a->save('v3', 'y'), 'A saves y');
tl_same(true, tl_node($p, 'save', 'v4', 'y'), 'P saves y after it');
tl_same(true, synced_once($a), 'A synced');
tl_same("fast:'v4'", hit_kind($a, 'y'), 'y is a fast hit of P\'s later save');

$b = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-b")] + $opts);
tl_same(true, $a->save('v5', 'z') && tl_node($p, 'save', 'v6', 'z'), 'A, then P save z');
tl_same(true, $b->save('v7', 'z'), 'another node saves z after them');
tl_same(true, synced_once($a), 'A synced');
tl_same("slow:'v7'", hit_kind($a, 'z'), 'A reads the other node\'s z, not its own copy');
tl_node_stop($p);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: A synced after the clean
ok: P (same node) saves x
ok: A saves x after it
ok: A synced: both records in one batch
ok: x is a fast hit of the later save
ok: stats() counts the record decided by a later one
ok: P reads the later value
ok: A saves y
ok: P saves y after it
ok: A synced
ok: y is a fast hit of P's later save
ok: A, then P save z
ok: another node saves z after them
ok: A synced
ok: A reads the other node's z, not its own copy
done
