--TEST--
TwoLevel tombstones: node A removes or cleans an id it saved (a tombstone), then another process of node A (same fast segment) saves the id: A reads that value at once and after its syncs replayed both processes' records, also when the fast level cannot hold the value (a slow read then), over Redis and File
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
$big = str_repeat('B', 1536 * 1024);   // more than the 1 MB fast level holds
foreach (tomb_slows('tl017') as $engine => $slow) {
    echo "# $engine\n";
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound,
        'fast_backend_options' => tl_fast_options("tl017-$engine-" . getmypid(), '1M')];
    $a = new TagCache\TwoLevel($opts);
    $p = tl_node_start($opts);   // another process of the same node
    $a->clean('all');
    tomb_synced($a);
    $cases = [
        'clean' => fn($x) => $a->clean('matchingAnyTag', ['t']),
        'remove' => fn($x) => $a->remove($x),
        'clean, past the bound' => fn($x) => $a->clean('matchingAnyTag', ['t']),
    ];
    foreach ($cases as $how => $drop) {
        foreach (['small' => "p-$how", 'big' => $big] as $size => $value) {
            $x = "x_" . substr(md5("$how $size"), 0, 8);
            tl_same(true, $a->save("a-$how", $x, ['t']), "A saves x ($how, $size)");
            tl_same(true, tomb_synced($a), 'A synced after its save');
            tl_same("fast:'a-$how'", tomb_kind($a, $x), 'A reads x from its fast level');
            tl_same(true, $drop($x), 'A drops x');
            $t = microtime(true);
            tl_same("known:false", tomb_kind($a, $x), 'A misses x without a slow read (a tombstone)');
            if (str_contains($how, 'past')) {
                tl_same(true, tomb_past_bound($a, $t, $bound), 'A synced past the bound');
                tl_same(false, $a->load($x), 'A still misses x');
            }
            tl_same(true, tl_node($p, 'save', $value, $x, ['u']), "the other process saves x ($size)");
            tl_same(true, $a->load($x) === $value, 'A reads it at once');
            $t = microtime(true);
            tl_same(true, tomb_past_bound($a, $t, $bound), 'A synced past the bound');
            tl_same(true, $a->load($x) === $value, 'A still reads it');
            tl_same(true, tl_node($p, 'load', $x) === $value, 'the other process reads it');
            tl_same(true, tl_node($p, 'remove', $x), 'the other process removes x');
            tl_same(false, $a->load($x), 'A misses x');
        }
    }
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
# Redis
ok: A saves x (clean, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (remove, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (remove, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, past the bound, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound
ok: A still misses x
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, past the bound, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound
ok: A still misses x
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
# File
ok: A saves x (clean, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (remove, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (remove, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, past the bound, small)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound
ok: A still misses x
ok: the other process saves x (small)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
ok: A saves x (clean, past the bound, big)
ok: A synced after its save
ok: A reads x from its fast level
ok: A drops x
ok: A misses x without a slow read (a tombstone)
ok: A synced past the bound
ok: A still misses x
ok: the other process saves x (big)
ok: A reads it at once
ok: A synced past the bound
ok: A still reads it
ok: the other process reads it
ok: the other process removes x
ok: A misses x
done
