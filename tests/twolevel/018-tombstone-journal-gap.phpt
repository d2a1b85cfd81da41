--TEST--
TwoLevel tombstones: node A removes or cleans an id it saved (a tombstone); node B saves the id and writes more records than the journal keeps, so A's next sync finds a gap: the gap empties A's tombstones with its fast level, and A reads B's value (B's record, trimmed, never reached A), over Redis and File
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

foreach (tomb_slows('tl018') as $engine => $slow) {
    echo "# $engine\n";
    $seg = "tl018-$engine-" . getmypid();
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 0.3, 'journal_size' => 16];
    $a = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-a")] + $opts);
    $b = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-b")] + $opts);
    $a->clean('all');
    tomb_synced($a);
    foreach (['clean' => fn($x) => $a->clean('matchingTag', ['t']), 'remove' => fn($x) => $a->remove($x)] as $how => $drop) {
        $x = "x_" . substr(md5($how), 0, 8);
        tl_same(true, $a->save("a-$how", $x, ['t']), "A saves x ($how)");
        tl_same(true, tomb_synced($a), 'A synced after its save');
        tl_same("fast:'a-$how'", tomb_kind($a, $x), 'A reads x from its fast level');
        tl_same(true, $drop($x), 'A drops x');
        tl_same("known:false", tomb_kind($a, $x), 'A misses x without a slow read (a tombstone)');
        $g0 = $a->stats()['node_gaps'];
        tl_same(true, $b->save("b-$how", $x, ['u']), 'B saves x');
        $ok = true;
        for ($i = 0; $i < 40; $i++) {
            $ok = $b->save("f$i", "filler$i") && $ok;
        }
        tl_same(true, $ok, 'B writes 40 more records (the journal keeps 16)');
        tl_same(true, tl_wait(function () use ($a, $g0) {
            $a->load('nothing-here');
            return $a->stats()['node_gaps'] > $g0;
        }, 10) !== null, 'A\'s sync found the gap');
        tl_same("slow:'b-$how'", tomb_kind($a, $x), 'A reads B\'s x from the slow level');
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
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: B saves x
ok: B writes 40 more records (the journal keeps 16)
ok: A's sync found the gap
ok: A reads B's x from the slow level
ok: B removes x
ok: A saves x (remove)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: B saves x
ok: B writes 40 more records (the journal keeps 16)
ok: A's sync found the gap
ok: A reads B's x from the slow level
ok: B removes x
# File
ok: A saves x (clean)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: B saves x
ok: B writes 40 more records (the journal keeps 16)
ok: A's sync found the gap
ok: A reads B's x from the slow level
ok: B removes x
ok: A saves x (remove)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: B saves x
ok: B writes 40 more records (the journal keeps 16)
ok: A's sync found the gap
ok: A reads B's x from the slow level
ok: B removes x
done
