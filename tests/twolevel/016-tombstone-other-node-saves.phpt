--TEST--
TwoLevel tombstones: node A removes or cleans an id it saved (a tombstone, no slow read for its misses), replays its own records past the bound; then node B saves the id: A reads B's value once the bound has passed (the tombstone never hides another node's save), over Redis and File
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
require __DIR__ . '/tombstones.inc';

$bound = 0.3;
foreach (tomb_slows('tl016') as $engine => $slow) {
    echo "# $engine\n";
    $seg = "tl016-$engine-" . getmypid();
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound];
    $a = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-a")] + $opts);
    $b = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-b")] + $opts);
    $a->clean('all');
    tomb_synced($a);   // its first sync (an empty node) is done
    foreach (['clean' => fn($x) => $a->clean('matchingTag', ['t']), 'remove' => fn($x) => $a->remove($x)] as $how => $drop) {
        $x = "x_" . substr(md5($how), 0, 8);
        tl_same(true, $a->save("a-$how", $x, ['t']), "A saves x ($how)");
        tl_same(true, tomb_synced($a), 'A synced after its save');
        tl_same("fast:'a-$how'", tomb_kind($a, $x), 'A reads x from its fast level');
        tl_same(true, $drop($x), "A drops x ($how)");
        $t = microtime(true);
        tl_same("known:false", tomb_kind($a, $x), 'A misses x without a slow read (a tombstone)');
        tl_same(true, tomb_past_bound($a, $t, $bound), 'A synced past the bound (its own records replayed)');
        tl_same(false, $a->load($x), 'A still misses x');
        tl_same(true, $b->save("b-$how", $x, ['u']), 'B saves x');
        $t = microtime(true);
        tl_same(true, tomb_past_bound($a, $t, $bound), 'the bound passed for A');
        tl_same("b-$how", $a->load($x), 'A reads B\'s x');
        tl_same(true, $b->remove($x), 'B removes x');
    }
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
ok: A saves x (clean)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x (clean)
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound (its own records replayed)
ok: A still misses x
ok: B saves x
ok: the bound passed for A
ok: A reads B's x
ok: B removes x
ok: A saves x (remove)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x (remove)
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound (its own records replayed)
ok: A still misses x
ok: B saves x
ok: the bound passed for A
ok: A reads B's x
ok: B removes x
# File
ok: A saves x (clean)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x (clean)
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound (its own records replayed)
ok: A still misses x
ok: B saves x
ok: the bound passed for A
ok: A reads B's x
ok: B removes x
ok: A saves x (remove)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x (remove)
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound (its own records replayed)
ok: A still misses x
ok: B saves x
ok: the bound passed for A
ok: A reads B's x
ok: B removes x
done
