--TEST--
Shm: full segment evicts expired entries first, then least recently used, with their tag links; never wipes; oversized save changes nothing
--EXTENSIONS--
tagcache
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('105');
const FILL = 400;       // 400 x 8 KB = 3.2 MB through a 1 MB segment
const FILL_LEN = 8192;

$c = new TagCache\Shm(['segment' => tc_seg('105'), 'size' => '1M']);
$c->clean('all');

// Expired entries: saved already expired (negative lifetime) or forced with ___expire().
$expired = [];
for ($i = 0; $i < 10; $i++) {
    $expired["E$i"] = tc_mkval("E$i", 0, $i, 2048);
    $c->save($expired["E$i"], "E$i", ['texp'], -1);
}
for ($i = 0; $i < 5; $i++) {
    $expired["X$i"] = tc_mkval("X$i", 0, $i, 2048);
    $c->save($expired["X$i"], "X$i", ['texp', 'tx'], null);
    $c->___expire("X$i");
}
$ok = true;
foreach ($expired as $id => $v) {
    $ok = $ok && $c->load($id) === false && $c->load($id, true) === $v;
}
tc_check('expired entries: load() misses, load($id, true) still reads them', $ok && $c->getIds() === []);

// Hot entries, read after every save below.
$hot = [];
for ($i = 0; $i < 10; $i++) {
    $hot["H$i"] = tc_mkval("H$i", 0, $i, 2048);
    $c->save($hot["H$i"], "H$i", ['thot'], null);
}
$stats0 = $c->stats();

$fill = [];
$saveFailed = [];
$violation = null;     // a live entry went while an expired one was still stored
$hotLost = null;       // first step where a hot entry was gone or wrong
$recentLost = null;    // first step where one of the 3 newest entries was gone
$firstLiveEviction = null;
for ($i = 0; $i < FILL; $i++) {
    $fill["F$i"] = tc_mkval("F$i", 0, $i, FILL_LEN);
    if (!$c->save($fill["F$i"], "F$i", ['tfill', "f$i"], null)) {
        $saveFailed[] = $i;
    }
    foreach ($hot as $id => $v) {
        if ($c->load($id) !== $v && $hotLost === null) {
            $hotLost = "step $i: $id";
        }
    }
    $present = array_flip($c->getIds());
    $liveMissing = [];
    foreach (array_keys($hot + $fill) as $id) {
        if (!isset($present[$id])) {
            $liveMissing[] = $id;
        }
    }
    $expiredLeft = [];
    foreach ($expired as $id => $v) {
        if ($c->load($id, true) !== false) {
            $expiredLeft[] = $id;
        }
    }
    if ($liveMissing && $firstLiveEviction === null) {
        $firstLiveEviction = $i;
    }
    if ($liveMissing && $expiredLeft && $violation === null) {
        $violation = "step $i: live " . implode(',', array_slice($liveMissing, 0, 5)) . ' evicted while expired '
            . implode(',', $expiredLeft) . ' still stored';
    }
    for ($j = max(0, $i - 2); $j <= $i; $j++) {
        if (!isset($present["F$j"]) && $recentLost === null) {
            $recentLost = "step $i: F$j";
        }
    }
}
$st = $c->stats();
tc_check('every entry that fits was saved', $saveFailed === [], $saveFailed);
tc_check('the segment did overflow', $firstLiveEviction !== null && $c->load('F0') === false, $st);
tc_check('no live entry evicted while an expired one was stored', $violation === null, $violation);
$left = [];
foreach ($expired as $id => $v) {
    if ($c->load($id, true) !== false) {
        $left[] = $id;
    }
}
tc_check('all expired entries are gone', $left === [], $left);
tc_check('stats count expirations and evictions', $st['expirations'] - $stats0['expirations'] >= count($expired) && $st['evictions'] - $stats0['evictions'] >= 1, [$stats0, $st]);
tc_check('recently read entries survived every step', $hotLost === null, $hotLost);
tc_check('the newest entries survived every step (no wipe)', $recentLost === null, $recentLost);
$ok = true;
for ($i = FILL - 10; $i < FILL; $i++) {
    $ok = $ok && $c->load("F$i") === $fill["F$i"];
}
tc_check('the 10 newest entries are intact', $ok);

// Tag links went with the entries.
$ids = $c->getIds();
$present = array_flip($ids);
$problems = [];
foreach ($c->getTags() as $t) {
    $m = $c->getIdsMatchingTags([$t]);
    if ($m === []) {
        $problems[] = "tag $t listed by getTags() but has no entry";
    }
    foreach ($m as $id) {
        if (!isset($present[$id]) || $c->load($id) === false) {
            $problems[] = "tag $t lists missing id $id";
        }
    }
}
foreach ($c->getIdsMatchingTags(['tfill']) as $id) {
    if (!isset($present[$id])) {
        $problems[] = "tfill lists missing id $id";
    }
}
foreach ($ids as $id) {
    if ($id[0] === 'F' && $c->getIdsMatchingTags(['f' . substr($id, 1)]) !== [$id]) {
        $problems[] = "$id lost its tag link";
    }
}
if ($c->getIdsMatchingAnyTags(['texp', 'tx', 'f0']) !== []) {
    $problems[] = 'tags of evicted entries still match';
}
if (array_intersect(['texp', 'tx', 'f0', 'f1'], $c->getTags())) {
    $problems[] = 'getTags() still lists tags of evicted entries: ' . json_encode(array_values(array_intersect(['texp', 'tx', 'f0', 'f1'], $c->getTags())));
}
tc_check('tag links follow their entries', $problems === [], array_slice($problems, 0, 10));
tc_check('verify() is empty', ($v = $c->verify()) === [], $v);

// An entry that cannot fit: false, and nothing changes (no eviction to make room for it).
function snapshot(TagCache\Shm $c): array
{
    $ids = $c->getIds();
    sort($ids);
    return $ids;
}
$warnings = [];
set_error_handler(function ($no, $str) use (&$warnings) {
    $warnings[] = $str;
    return true;
});
$before = snapshot($c);
$h0 = $c->load('H0');
$s1 = $c->save(str_repeat('x', 1048576 + 1), 'huge', ['thuge'], null);
$s2 = $c->save(str_repeat('y', 1048576 + 1), 'H0', ['thuge'], null);
$after1 = snapshot($c);
$s3 = $c->save(str_repeat('z', 1048576 - 1), 'huge2', ['thuge'], null);
$after2 = snapshot($c);
restore_error_handler();
tc_check('entry larger than the segment: save() false, same ids', $s1 === false && $s2 === false && $after1 === $before
    && $c->load('huge') === false && $c->load('H0') === $h0 && $c->getIdsMatchingTags(['thuge']) === [],
    ['s1' => $s1, 's2' => $s2, 'lost' => array_values(array_diff($before, $after1))]);
tc_check('entry of segment size minus 1 byte: save() false, same ids', $s3 === false && $after2 === $before && $c->load('huge2') === false,
    ['s3' => $s3, 'lost' => array_values(array_diff($before, $after2))]);
tc_check('verify() still empty', ($v = $c->verify()) === [], $v);
$st = $c->stats();
tc_check('stats consistent', $st['entries'] === count($before) && $st['size'] === 1048576
    && $st['bytes_used'] + $st['bytes_free'] <= $st['size'] && $c->getFillingPercentage() >= 0 && $c->getFillingPercentage() <= 100, $st);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('105');
?>
--EXPECT--
expired entries: load() misses, load($id, true) still reads them: ok
every entry that fits was saved: ok
the segment did overflow: ok
no live entry evicted while an expired one was stored: ok
all expired entries are gone: ok
stats count expirations and evictions: ok
recently read entries survived every step: ok
the newest entries survived every step (no wipe): ok
the 10 newest entries are intact: ok
tag links follow their entries: ok
verify() is empty: ok
entry larger than the segment: save() false, same ids: ok
entry of segment size minus 1 byte: save() false, same ids: ok
verify() still empty: ok
stats consistent: ok
