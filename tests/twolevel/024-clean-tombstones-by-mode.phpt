--TEST--
TwoLevel tombstones of a clean by tag: exactly the ids the node's fast level held under the clean's tags are known absent afterwards (no slow read), in every tag mode that makes them (matchingTag and matchingAnyTag, one tag and several); ids the clean did not concern stay fast hits, ids the fast level did not hold ask the slow level, and notMatchingTag makes none; over Redis and File
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

// The fast level's ids under the clean's tags come from the same locked step
// as the fast clean (tc_shm_clean_ids): one tag (selected before the lock),
// several tags (selected under it), matchingTag and matchingAnyTag.
$bound = 4;
// [mode, tags, ids whose copies the clean removes]
$cases = [
    'matchingTag, one tag' => ['matchingTag', ['t'], ['a', 'c', 'd']],
    'matchingAnyTag, one tag' => ['matchingAnyTag', ['t'], ['a', 'c', 'd']],
    'matchingTag, two tags' => ['matchingTag', ['t', 'u'], ['c']],
    'matchingAnyTag, two tags' => ['matchingAnyTag', ['t', 'u'], ['a', 'b', 'c', 'd']],
    'notMatchingTag' => ['notMatchingTag', ['t'], []],
];
// the entries: id => tags; 'n' is in the slow level only (written past TwoLevel)
$entries = ['a' => ['t', 'x'], 'b' => ['u'], 'c' => ['t', 'u'], 'd' => ['t'], 'e' => ['x'], 'n' => ['t']];
foreach (tomb_slows('tl024') as $engine => $slow) {
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => $bound,
        'fast_backend_options' => tl_fast_options("tl024-$engine-" . getmypid())];
    $a = new TagCache\TwoLevel($opts);
    $direct = $engine === 'Redis' ? new TagCache\Redis($slow) : new TagCache\File($slow);
    $a->clean('all');
    tomb_synced($a);
    foreach ($cases as $how => [$mode, $tags, $removed]) {
        echo "# $engine: $how\n";
        // A sync of the node between the saves and the reads replays the
        // saves' records before or after the tombstones, which may end them
        // (a timed tombstone): a try that saw one is done again with other ids.
        for ($try = 1, $clean = false; $try <= 10 && !$clean; $try++) {
            $id = fn($k) => "{$k}_" . substr(md5($how), 0, 6) . "_$try";
            $n0 = $a->stats()['node_syncs'];
            $saved = true;
            foreach ($entries as $k => $t) {
                $saved = ($k === 'n' ? $direct->save("v$k", $id($k), $t) : $a->save("v$k", $id($k), $t)) && $saved;
            }
            $before = [];
            foreach ($entries as $k => $t) {
                $before[$k] = $k === 'n' ? null : tomb_kind($a, $id($k));
            }
            $s0 = $a->stats();
            $cleaned = $a->clean($mode, $tags);
            $after = [];
            foreach ($entries as $k => $t) {
                $after[$k] = tomb_kind($a, $id($k));
            }
            $s1 = $a->stats();
            $clean = $s1['node_syncs'] === $n0;
        }
        tl_same(true, $saved, 'saved');
        tl_same(true, $cleaned, 'cleaned');
        tl_same(true, $clean, 'no sync of the node between the saves and the reads (in one of 10 tries)');
        foreach ($entries as $k => $t) {
            if ($k !== 'n') {
                tl_same("fast:'v$k'", $before[$k], "$k read from the fast level before the clean");
            }
            $hit = !array_intersect($t, $tags) === ($mode !== 'notMatchingTag');
            if ($mode === 'matchingTag') {
                $hit = count(array_intersect($t, $tags)) < count($tags);
            }
            if ($k === 'n') {
                $want = $hit ? "slow:'vn'" : 'miss:false';   // not in the fast level: no tombstone
            } elseif (in_array($k, $removed, true)) {
                $want = 'known:false';
            } elseif ($hit) {
                $want = "fast:'v$k'";
            } else {
                $want = 'miss:false';   // notMatchingTag: removed, no tombstone
            }
            tl_same($want, $after[$k], "$k after the clean");
        }
        tl_same(count($removed), $s1['known_absent'] - $s0['known_absent'], 'stats: known_absent, one per tombstone read');
        tl_same(0, $s1['slow_hits'] - $s0['slow_hits'] - ($after['n'] === "slow:'vn'" ? 1 : 0), 'stats: no other slow hit');
        $a->clean('all');
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
# Redis: matchingTag, one tag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# Redis: matchingAnyTag, one tag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# Redis: matchingTag, two tags
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# Redis: matchingAnyTag, two tags
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# Redis: notMatchingTag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# File: matchingTag, one tag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# File: matchingAnyTag, one tag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# File: matchingTag, two tags
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# File: matchingAnyTag, two tags
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
# File: notMatchingTag
ok: saved
ok: cleaned
ok: no sync of the node between the saves and the reads (in one of 10 tries)
ok: a read from the fast level before the clean
ok: a after the clean
ok: b read from the fast level before the clean
ok: b after the clean
ok: c read from the fast level before the clean
ok: c after the clean
ok: d read from the fast level before the clean
ok: d after the clean
ok: e read from the fast level before the clean
ok: e after the clean
ok: n after the clean
ok: stats: known_absent, one per tombstone read
ok: stats: no other slow hit
done
