--TEST--
Listings over several pages (2000 ids a page) with dead ids left in the id index by one-call cleans among them: getIds() and the tag listings return exactly the live ids, none twice, none missed
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

$srv = tcr_start('pages');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port]);

// 5,000 ids in 100 small tags (C0..C99, 50 ids each, cleaned in one call
// each) and two big ones: ALL on every id, ODD on every other one.
$live = [];
$failed = 0;
for ($i = 0; $i < 5000; $i++) {
    $id = sprintf('id%05d', $i);
    $tags = ['ALL', 'C' . ($i % 100)];
    if ($i % 2) {
        $tags[] = 'ODD';
    }
    $failed += $b->save("v$i", $id, $tags, 3600) ? 0 : 1;
    $live[$id] = true;
}
// one-call cleans of 34 of the small tags: 1,700 dead ids spread over
// every page of the index
for ($c = 0; $c < 100; $c += 3) {
    $failed += $b->clean('matchingAnyTag', ["C$c"]) ? 0 : 1;
    for ($i = $c; $i < 5000; $i += 100) {
        unset($live[sprintf('id%05d', $i)]);
    }
}
tcr_same(0, $failed, '5,000 saves and 34 cleans succeeded');
$dead = 0;
for ($i = 0; $i < 5000; $i++) {
    $id = sprintf('id%05d', $i);
    if (!isset($live[$id]) && tcr_cmd($port, 'ZSCORE', 'tc:{0}i', $id) !== null) {
        $dead++;
    }
}
tcr_same(5000 - count($live), $dead, 'every cleaned id is a dead id in the index');

function sorted(array $a): array
{
    sort($a);
    return $a;
}
$want = sorted(array_keys($live));
$odd = sorted(array_values(array_filter($want, static fn ($id) => ((int) substr($id, 2)) % 2 === 1)));
$ids = $b->getIds();
tcr_same(count($ids), count(array_unique($ids)), 'getIds(): no id twice');
tcr_same($want, sorted($ids), 'getIds(): exactly the live ids, over three pages');
tcr_same($want, sorted($b->getIdsMatchingTags(['ALL'])), 'getIdsMatchingTags([ALL]): the same');
tcr_same($odd, sorted($b->getIdsMatchingTags(['ALL', 'ODD'])), 'getIdsMatchingTags([ALL, ODD]): the live odd ones');
tcr_same($odd, sorted($b->getIdsMatchingAnyTags(['ODD', 'C0'])), 'getIdsMatchingAnyTags([ODD, C0]): the live odd ones (C0 was cleaned)');
tcr_same(sorted(array_values(array_diff($want, $odd))), sorted($b->getIdsNotMatchingTags(['ODD'])), 'getIdsNotMatchingTags([ODD]): the live even ones');
$tags = $b->getTags();
tcr_check(!in_array('C0', $tags, true) && in_array('C1', $tags, true) && in_array('ALL', $tags, true), 'getTags(): the cleaned tags are gone, the others listed');
tcr_same([], $b->verify(), 'verify(): nothing wrong');

// a save brings a dead id back, with only the tags it has now
$b->save('back', 'id00000', ['NEW'], 3600);
tcr_same(['id00000'], $b->getIdsMatchingTags(['NEW']), 'a dead id saved again is listed under its new tag');
tcr_check(!in_array('id00000', $b->getIdsMatchingTags(['ALL']), true), 'and not under the tags its old links name');
tcr_check(in_array('id00000', $b->getIds(), true), 'getIds() lists it again');
$b->clean('matchingAnyTag', ['ALL']);
tcr_same('back', $b->load('id00000'), 'a clean by an old tag leaves it alone');
tcr_same(['id00000'], $b->getIds(), 'and removed every other entry');

echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: 5,000 saves and 34 cleans succeeded
ok: every cleaned id is a dead id in the index
ok: getIds(): no id twice
ok: getIds(): exactly the live ids, over three pages
ok: getIdsMatchingTags([ALL]): the same
ok: getIdsMatchingTags([ALL, ODD]): the live odd ones
ok: getIdsMatchingAnyTags([ODD, C0]): the live odd ones (C0 was cleaned)
ok: getIdsNotMatchingTags([ODD]): the live even ones
ok: getTags(): the cleaned tags are gone, the others listed
ok: verify(): nothing wrong
ok: a dead id saved again is listed under its new tag
ok: and not under the tags its old links name
ok: getIds() lists it again
ok: a clean by an old tag leaves it alone
ok: and removed every other entry
done
