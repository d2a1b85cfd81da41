--TEST--
TwoLevel tombstones: the tombstone of a node's own remove or clean of an id whose copy came from this node's own save (of this process or another of the node) outlives max_staleness and the replay of that save's record, so the node's later misses of the id still need no slow read, over Redis and File
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
foreach (tomb_slows('tl019') as $engine => $slow) {
    echo "# $engine\n";
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound,
        'fast_backend_options' => tl_fast_options("tl019-$engine-" . getmypid())];
    $a = new TagCache\TwoLevel($opts);
    $p = tl_node_start($opts);   // another process of the same node
    $a->clean('all');
    tomb_synced($a);
    $cases = [
        'A saves, A cleans' => [fn($x) => $a->save('v', $x, ['t']), fn($x) => $a->clean('matchingAnyTag', ['t'])],
        'A saves, A removes' => [fn($x) => $a->save('v', $x, ['t']), fn($x) => $a->remove($x)],
        'the other process saves, A cleans' => [fn($x) => tl_node($p, 'save', 'v', $x, ['t']), fn($x) => $a->clean('matchingTag', ['t'])],
    ];
    foreach ($cases as $how => [$save, $drop]) {
        echo "# $engine: $how\n";
        $kept = fn() => $a->stats()['tombstones_kept'] + $a->stats()['superseded'];
        // The case needs the save's record replayed after the tombstone is
        // made: a sync of the node (any of its processes, on a read once the
        // last sync is half the bound old) between the save and the drop
        // replays it before, and then nothing is left for the tombstone to
        // outlive. Each try starts right after a sync; one that saw a sync
        // in between is done again with another id (at most 10 tries).
        for ($try = 1, $clean = false; $try <= 10 && !$clean; $try++) {
            $x = "x_" . substr(md5($how), 0, 8) . "_$try";
            tomb_synced($a);
            $n0 = $a->stats()['node_syncs'];
            $k0 = $kept();
            $saved = $save($x);
            $read = tomb_kind($a, $x);
            $dropped = $drop($x);
            $clean = $a->stats()['node_syncs'] === $n0;
        }
        tl_same(true, $saved, 'x saved');
        tl_same("fast:'v'", $read, 'A reads x from its fast level');
        tl_same(true, $dropped, 'x dropped');
        tl_same(true, $clean, 'no sync of the node between the save and the drop (in one of 10 tries)');
        $t = microtime(true);
        tl_same("known:false", tomb_kind($a, $x), 'A misses x without a slow read');
        tl_same(true, tomb_past_bound($a, $t, $bound), 'A synced past the bound');
        tl_same("known:false", tomb_kind($a, $x), 'A still misses x without a slow read');
        // a remove's record (Redis: appended with the write) supersedes the save's in one sync
        tl_same(true, $kept() > $k0, 'the save\'s record left the tombstone (stats: kept, or superseded by the remove\'s)');
        tl_same(true, tl_node($p, 'save', 'w', $x), 'the other process saves x');
        tl_same("fast:'w'", tomb_kind($a, $x), 'A reads it');
        tl_same(true, $a->remove($x), 'A removes x');
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
# Redis: A saves, A cleans
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
# Redis: A saves, A removes
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
# Redis: the other process saves, A cleans
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
# File
# File: A saves, A cleans
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
# File: A saves, A removes
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
# File: the other process saves, A cleans
ok: x saved
ok: A reads x from its fast level
ok: x dropped
ok: no sync of the node between the save and the drop (in one of 10 tries)
ok: A misses x without a slow read
ok: A synced past the bound
ok: A still misses x without a slow read
ok: the save's record left the tombstone (stats: kept, or superseded by the remove's)
ok: the other process saves x
ok: A reads it
ok: A removes x
done
