--TEST--
File: tag membership against a model through thousands of random saves, overwrites with other tags, removals and cleans (one tag, several, matching all): listings exact, verify() clean and no rebuild (members are removed lazily, arrays compacted)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$base = tc_make_tmpdir('f122');
$c = new TagCache\File(['cache_dir' => "$base/store", 'max_size' => '64M']);
mt_srand(122);
$tags = ['a', 'b', 'c', 'd', 'e', 'f'];
$model = [];   // id => tags
$bad = [];
$listings = 0;
$rebuilds = $c->stats()['rebuilds'];
$check = static function (string $when) use ($c, &$model, $tags, &$bad, &$listings): void {
    foreach ($tags as $t) {
        $want = [];
        foreach ($model as $id => $tg) {
            if (in_array($t, $tg, true)) {
                $want[] = (string)$id;
            }
        }
        $got = $c->getIdsMatchingTags([$t]);
        sort($want);
        sort($got);
        $listings++;
        if ($got !== $want && count($bad) < 5) {
            $bad[] = "$when: tag $t: " . count($got) . ' listed, ' . count($want) . ' expected';
        }
    }
    $v = $c->verify();
    if ($v !== [] && count($bad) < 5) {
        $bad[] = "$when: verify: " . json_encode(array_slice($v, 0, 3));
    }
};
for ($round = 0; $round < 6; $round++) {
    // fill: 400 ids, 1 to 4 random tags each ("a" on most, so its array is big)
    for ($i = 0; $i < 400; $i++) {
        $tg = mt_rand(0, 9) ? ['a'] : [];
        foreach ($tags as $t) {
            if ($t !== 'a' && mt_rand(0, 2) === 0) {
                $tg[] = $t;
            }
        }
        $id = "id" . mt_rand(0, 599);
        $c->save("v$i", $id, $tg);
        $model[$id] = $tg;
    }
    $check("round $round, after saves");
    // remove most of them: arrays left mostly with members that no longer hold
    foreach (array_keys($model) as $id) {
        if (mt_rand(0, 9) < 8) {
            $c->remove((string)$id);
            unset($model[$id]);
        }
    }
    $check("round $round, after removals");
    // cleans: one tag, two tags (any), two tags (all)
    foreach ([['matchingAnyTag', 1], ['matchingAnyTag', 2], ['matchingTag', 2]] as [$mode, $k]) {
        $picked = (array)array_rand(array_flip(array_slice($tags, 1)), $k);
        $c->clean($mode, $picked);
        foreach ($model as $id => $tg) {
            $hit = array_intersect($picked, $tg);
            if ($mode === 'matchingAnyTag' ? $hit !== [] : count($hit) === count($picked)) {
                unset($model[$id]);
            }
        }
        $check("round $round, after $mode " . implode(',', $picked));
    }
    // overwrites of the ids left with other tags: their old members stop holding
    foreach (array_keys($model) as $id) {
        $tg = [$tags[mt_rand(0, 5)]];
        $c->save("w", (string)$id, $tg);
        $model[$id] = $tg;
    }
    $check("round $round, after overwrites");
}
tc_check("every listing exact and verify() clean ($listings listings)", $bad === [], $bad);
tc_check('no rebuild: the index never found itself inconsistent', $c->stats()['rebuilds'] === $rebuilds,
    $c->stats()['rebuilds'] - $rebuilds);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f122');
?>
--EXPECT--
every listing exact and verify() clean (216 listings): ok
no rebuild: the index never found itself inconsistent: ok
