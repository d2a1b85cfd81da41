--TEST--
Versioned links (layout 3): a link counts only while its version is the id's version in the id index; tag changes, cleans, removes and re-saves are listed exactly; expired entries are neither listed nor kept by clean('old'), which sweeps stale links; forever entries live in keys without a TTL
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

$srv = tcr_start('links');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port]);

/** The ids a tag key links (valid or not): members are version (8 bytes) . id; '' is the anchor. */
function linked(int $port, string $key): array
{
    $ids = [];
    foreach (tcr_cmd($port, 'SMEMBERS', $key) as $m) {
        if (strlen($m) > 8) {
            $ids[] = substr($m, 8);
        }
    }
    sort($ids);
    return $ids;
}
function sorted(array $a): array
{
    sort($a);
    return $a;
}

echo "# the same tags: the same links\n";
$b->save('v1', 'a', ['T1', 'T2'], 3600);
$m1 = tcr_cmd($port, 'SMEMBERS', 'tc:{0}s:T1');
$b->save('v2', 'a', ['T1', 'T2'], 3600);
tcr_same(sorted($m1), sorted(tcr_cmd($port, 'SMEMBERS', 'tc:{0}s:T1')), 'a save with the same tags adds no link');
tcr_same('v2', $b->load('a'), 'the new value is read');
tcr_same(['a'], $b->getIdsMatchingTags(['T1', 'T2']), 'listed under both tags');

echo "# other tags: the former links no longer count\n";
$b->save('v3', 'a', ['T1', 'T3'], 3600);
tcr_same(['a'], linked($port, 'tc:{0}s:T2'), 'its link in T2 is left behind (stale)');
tcr_same([], $b->getIdsMatchingTags(['T2']), 'not listed under the tag it lost');
tcr_same([], $b->getIdsMatchingAnyTags(['T2']), 'nor by any tag');
tcr_same(['T1', 'T3'], sorted($b->getTags()), 'getTags() lists the tags with a valid link only');
tcr_same(['a'], $b->getIdsMatchingTags(['T3']), 'listed under the new tag');
$b->clean('matchingAnyTag', ['T2']);
tcr_same('v3', $b->load('a'), 'a clean by the lost tag leaves it alone');
$b->save('v4', 'a', ['T1', 'T2'], 3600);
tcr_same(['a'], $b->getIdsMatchingTags(['T2']), 'saved again with T2: listed under it again');
tcr_same([], $b->getIdsMatchingTags(['T3']), 'and no longer under T3');
$b->clean('matchingAnyTag', ['T2']);
tcr_same(false, $b->load('a'), 'a clean by T2 reaches it');

echo "# cleaned, then saved again with fewer tags\n";
$b->save('c1', 'c', ['T4', 'T5'], 3600);
$b->clean('matchingAnyTag', ['T4']);
tcr_same(false, $b->load('c'), 'cleaned by T4');
tcr_same(['c'], linked($port, 'tc:{0}s:T5'), 'its link in T5 is left behind (stale)');
$b->save('c2', 'c', ['T4'], 3600);
tcr_same([], $b->getIdsMatchingTags(['T5']), 'the stale link does not list it under T5');
tcr_same(['c'], $b->getIdsNotMatchingTags(['T5']), 'it carries none of T5');
$b->clean('matchingAnyTag', ['T5']);
tcr_same('c2', $b->load('c'), 'and a clean by T5 leaves it alone');
$b->clean('notMatchingTag', ['T5']);
tcr_same(false, $b->load('c'), 'clean(notMatchingTag, T5) removes it');

echo "# remove\n";
$b->save('r', 'r', ['T6', 'T7'], 3600);
tcr_same(true, $b->remove('r'), 'remove()');
tcr_same([], linked($port, 'tc:{0}s:T6'), 'its links go with it');

echo "# a clean keeps the tag key's TTL\n";
$b->save('k', 'k', ['T8'], 3600);
$ttl = tcr_cmd($port, 'TTL', 'tc:{0}s:T8');
tcr_check($ttl >= 3600, 'the tag key has a TTL covering the entry', (string) $ttl);
$b->clean('matchingAnyTag', ['T8']);
$t2 = tcr_cmd($port, 'TTL', 'tc:{0}s:T8');
tcr_check($t2 > 0 && $t2 <= $ttl, 'after the clean the key is empty but keeps its TTL', "$ttl -> $t2");
tcr_same([], linked($port, 'tc:{0}s:T8'), 'no link is left');
tcr_same(true, $b->save('k2', 'k2', ['T8'], 7200), 'a save into it');
tcr_check(tcr_cmd($port, 'TTL', 'tc:{0}s:T8') >= 7200, 'raises its TTL', (string) tcr_cmd($port, 'TTL', 'tc:{0}s:T8'));
tcr_same([], $b->verify(), 'verify(): every entry with its links');

echo "# forever entries\n";
$b->save('f', 'f', ['T9'], null);
tcr_same(-1, tcr_cmd($port, 'TTL', 'tc:{0}f:T9'), 'a forever entry\'s tag key has no TTL');
tcr_same(-1, tcr_cmd($port, 'TTL', 'tc:{0}J'), 'nor its id index');
tcr_same(['f'], $b->getIdsMatchingTags(['T9']), 'listed under its tag');
$b->save('f2', 'f', ['T9'], 3600);
tcr_same(null, tcr_cmd($port, 'HGET', 'tc:{0}J', 'f'), 'saved with a lifetime: out of the forever index');
tcr_same(['f'], $b->getIdsMatchingTags(['T9']), 'listed once, under its tag');
$b->save('f3', 'f', ['T9'], null);
tcr_same(['f'], $b->getIds() === [] ? [] : array_values(array_intersect(['f'], $b->getIds())), 'forever again: listed');
$b->clean('matchingAnyTag', ['T9']);
tcr_same(false, $b->load('f'), 'a clean by tag removes it');
tcr_same(0, tcr_cmd($port, 'EXISTS', 'tc:{0}f:T9'), 'and its forever tag key');
$b->save('g', 'g', ['T10', 'T11'], null);
$b->clean('matchingAnyTag', ['T10']);
tcr_same(0, tcr_cmd($port, 'EXISTS', 'tc:{0}f:T11'), 'a dropped forever entry leaves no link in its other tags');

echo "# expired\n";
$b->save('d', 'd', ['T12'], 3600);
// expired by hand (waiting for an expiry takes seconds): the record's and the index's expire
$now = time();
tcr_cmd($port, 'SETRANGE', 'tc:{0}e:d', '26', pack('e', (float) ($now - 5)));
$iv = tcr_cmd($port, 'HGET', 'tc:{0}I', 'd');
tcr_cmd($port, 'HSET', 'tc:{0}I', 'd', substr($iv, 0, 8) . pack('e', (float) ($now - 5)));
tcr_same(false, $b->test('d'), 'test(d) is false');
tcr_same('d', $b->load('d', true), 'load(d, true) still reads it');
tcr_check(!in_array('d', $b->getIds(), true), 'getIds() does not list it');
tcr_same([], $b->getIdsMatchingTags(['T12']), 'getIdsMatchingTags() does not list it');
tcr_check(in_array('k2', $b->getIds(), true), 'getIds() lists the live ones');
$b->save('s', 's', ['T13', 'T14'], 3600);
$b->save('s', 's', ['T13'], 3600);
tcr_same(['s'], linked($port, 'tc:{0}s:T14'), 'a stale link in T14');
tcr_cmd($port, 'PERSIST', 'tc:{0}s:T13');
$b->clean('old');
tcr_same(null, tcr_cmd($port, 'HGET', 'tc:{0}I', 'd'), "clean('old') drops it from the id index");
tcr_same(false, $b->load('d', true), 'and its record');
tcr_same([], linked($port, 'tc:{0}s:T14'), "clean('old') sweeps stale links");
tcr_check(tcr_cmd($port, 'TTL', 'tc:{0}s:T13') >= 3600, "and gives a tag key without a TTL one that covers its entries",
    (string) tcr_cmd($port, 'TTL', 'tc:{0}s:T13'));
tcr_same('k2', $b->load('k2'), 'the live entries stay');
tcr_same([], $b->verify(), 'verify() finds nothing wrong');

echo "# clean('all')\n";
tcr_same(true, $b->clean('all'), "clean('all')");
$left = tcr_cmd($port, 'KEYS', 'tc:*');
sort($left);
tcr_check($left !== [] && preg_grep('/^tc:\{0\}(I|G|s:.*)$/', $left, PREG_GREP_INVERT) === [],
    'no entry, forever key or working set is left: only keys of finite entries', json_encode($left));
$kept = true;
foreach ($left as $k) {
    $kept = $kept && tcr_cmd($port, 'TTL', $k) > 0
        && ($k === 'tc:{0}G' || (substr($k, -1) === 'I' ? tcr_cmd($port, 'HKEYS', $k) : tcr_cmd($port, 'SMEMBERS', $k)) === ['']);
}
tcr_check($kept, 'the tag keys and I emptied to their anchor, each with its TTL (a process may trust it)');

echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# the same tags: the same links
ok: a save with the same tags adds no link
ok: the new value is read
ok: listed under both tags
# other tags: the former links no longer count
ok: its link in T2 is left behind (stale)
ok: not listed under the tag it lost
ok: nor by any tag
ok: getTags() lists the tags with a valid link only
ok: listed under the new tag
ok: a clean by the lost tag leaves it alone
ok: saved again with T2: listed under it again
ok: and no longer under T3
ok: a clean by T2 reaches it
# cleaned, then saved again with fewer tags
ok: cleaned by T4
ok: its link in T5 is left behind (stale)
ok: the stale link does not list it under T5
ok: it carries none of T5
ok: and a clean by T5 leaves it alone
ok: clean(notMatchingTag, T5) removes it
# remove
ok: remove()
ok: its links go with it
# a clean keeps the tag key's TTL
ok: the tag key has a TTL covering the entry
ok: after the clean the key is empty but keeps its TTL
ok: no link is left
ok: a save into it
ok: raises its TTL
ok: verify(): every entry with its links
# forever entries
ok: a forever entry's tag key has no TTL
ok: nor its id index
ok: listed under its tag
ok: saved with a lifetime: out of the forever index
ok: listed once, under its tag
ok: forever again: listed
ok: a clean by tag removes it
ok: and its forever tag key
ok: a dropped forever entry leaves no link in its other tags
# expired
ok: test(d) is false
ok: load(d, true) still reads it
ok: getIds() does not list it
ok: getIdsMatchingTags() does not list it
ok: getIds() lists the live ones
ok: a stale link in T14
ok: clean('old') drops it from the id index
ok: and its record
ok: clean('old') sweeps stale links
ok: and gives a tag key without a TTL one that covers its entries
ok: the live entries stay
ok: verify() finds nothing wrong
# clean('all')
ok: clean('all')
ok: no entry, forever key or working set is left: only keys of finite entries
ok: the tag keys and I emptied to their anchor, each with its TTL (a process may trust it)
done