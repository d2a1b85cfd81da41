--TEST--
Expiry buckets: a save with the same tags inside its bucket keeps its score and writes no link; tag changes, cleans and touch() in between are seen; a dead id (left in the id index by a clean) is never listed; an entry expired inside its bucket is neither listed nor kept by clean('old')
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

$srv = tcr_start('buckets');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port]);
const S = 65536;

function zscore(int $port, string $key, string $member): ?float
{
    $s = tcr_cmd($port, 'ZSCORE', $key, $member);
    return $s === null ? null : (float) $s;
}
function calls(int $port, string $cmd): int
{
    $info = tcr_cmd($port, 'INFO', 'commandstats');
    return preg_match('/^cmdstat_' . $cmd . ':calls=(\d+)/m', $info, $m) ? (int) $m[1] : 0;
}
function record_score(int $port, string $id): float
{
    return unpack('e', tcr_cmd($port, 'GETRANGE', "tc:{0}e:$id", '2', '9'))[1];
}

echo "# the same tags inside the bucket: no link is written\n";
// no lifetime: the bucket cannot change between the two saves, however slow the run
$b->save('v1', 'a', ['T1', 'T2'], null);
$s1 = zscore($port, 'tc:{0}i', 'a');
tcr_same($s1, zscore($port, 'tc:{0}t:T1', 'a'), 'the link carries the score of the id index');
$zadd = calls($port, 'zadd');
$b->save('v2', 'a', ['T1', 'T2'], null);
tcr_same($zadd, calls($port, 'zadd'), 'a second save with the same tags writes no sorted set');
tcr_same($s1, zscore($port, 'tc:{0}i', 'a'), 'the id keeps its score');
tcr_same($s1, record_score($port, 'a'), 'and the record carries that score');
tcr_same('v2', $b->load('a'), 'the new value is read');
$b->save('v', 'm', ['T1'], 3600);
$m = $b->getMetadatas('m');
tcr_check($m['expire'] >= time() + 3598 && $m['expire'] <= time() + 3600, 'the expire is the exact one, not the bucket', json_encode($m));
tcr_same(['a'], $b->getIdsMatchingTags(['T1', 'T2']), 'listed under both tags');
$b->save('v3', 'a', ['T2', 'T1'], 3600);
tcr_check(calls($port, 'zadd') > $zadd, 'the same tags in another order take the full save');
tcr_same(['a'], $b->getIdsMatchingTags(['T1', 'T2']), 'still listed under both tags');

echo "# other tags: the full save\n";
$b->save('v4', 'a', ['T1', 'T3'], 3600);
tcr_same([], $b->getIdsMatchingTags(['T2']), 'not listed under the tag it lost');
tcr_same(['a'], $b->getIdsMatchingTags(['T3']), 'listed under the new tag');
$b->clean('matchingAnyTag', ['T3']);
tcr_same(false, $b->load('a'), 'a clean by the new tag reaches it');

echo "# cleaned, then saved again with fewer tags\n";
$b->save('c1', 'c', ['T4', 'T5'], 3600);
$b->clean('matchingAnyTag', ['T4']);
tcr_same(false, $b->load('c'), 'cleaned by T4');
tcr_check(zscore($port, 'tc:{0}t:T5', 'c') !== null, 'its link in T5 is left behind');
tcr_check(zscore($port, 'tc:{0}i', 'c') !== null, 'and the one-call clean left it in the id index: a dead id');
tcr_same([], $b->getIdsMatchingTags(['T5']), 'a dead id is not listed under its other tags');
tcr_same([], $b->getIdsMatchingAnyTags(['T5', 'T4']), 'nor by getIdsMatchingAnyTags()');
tcr_check(!in_array('c', $b->getIds(), true), 'nor by getIds()');
tcr_check(!in_array('c', $b->getIdsNotMatchingTags(['T1']), true), 'nor by getIdsNotMatchingTags()');
tcr_check(!in_array('T5', $b->getTags(), true), 'and its other tag is not listed by getTags()');
tcr_same([], $b->verify(), 'verify() finds nothing wrong with a dead id');
$b->save('f1', 'f', ['T7', 'T8'], null);
$b->clean('matchingAnyTag', ['T7']);
tcr_same(null, zscore($port, 'tc:{0}i', 'f'), 'a forever entry the one-call clean dropped leaves the id index');
tcr_same(null, zscore($port, 'tc:{0}t:T8', 'f'), 'and its other links go with it');
$b->save('g', 'g1', ['T9', 'T11'], 3600);
$b->save('g', 'g2', ['T10', 'T11'], 3600);
$b->clean('matchingAnyTag', ['T9', 'T10']);
tcr_check(zscore($port, 'tc:{0}i', 'g1') !== null && zscore($port, 'tc:{0}i', 'g2') !== null, 'a clean by two tags done in one call leaves dead ids too');
tcr_same([], $b->getIdsMatchingTags(['T11']), 'which are not listed either');
$small = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'remove_chunk_size' => 2]);
foreach (['h1', 'h2', 'h3'] as $h) {
    $b->save('h', $h, ['T12', 'T13'], 3600);
}
$small->clean('matchingAnyTag', ['T12']);
tcr_same([null, null, null], [zscore($port, 'tc:{0}i', 'h1'), zscore($port, 'tc:{0}i', 'h2'), zscore($port, 'tc:{0}i', 'h3')], 'a clean of several calls removes its ids from the id index');
tcr_same([false, false, false], [$b->load('h1'), $b->load('h2'), $b->load('h3')], 'and their records');
tcr_same([], $b->getIdsMatchingAnyTags(['T12', 'T13']), 'none is listed');
$b->save('c2', 'c', ['T4'], 3600);
tcr_same([], $b->getIdsMatchingTags(['T5']), 'the stale link does not list it under T5');
$b->clean('matchingAnyTag', ['T5']);
tcr_same('c2', $b->load('c'), 'and a clean by T5 leaves it alone');

echo "# the bucket\n";
$t = time();
$b->save('x', 'long', [], 100);
$bk = intdiv((int) zscore($port, 'tc:{0}i', 'long'), S);
$x = $b->getMetadatas('long')['expire'];
tcr_check($bk >= $x && $bk < $x + 6, 'lifetime 100: the score is the expire rounded up to 6 s', "bucket $bk expire $x");
$b->save('x', 'short', [], 1);
tcr_same($b->getMetadatas('short')['expire'], intdiv((int) zscore($port, 'tc:{0}i', 'short'), S), 'lifetime 1: the score is the expire');
$b->save('x', 'never', [], null);
tcr_same(9999999999, intdiv((int) zscore($port, 'tc:{0}i', 'never'), S), 'no lifetime: the score says never');
tcr_check($b->touch('long', 1000), 'touch(long, 1000)');
$x2 = $b->getMetadatas('long')['expire'];
tcr_same($x + 1000, $x2, 'touch() adds to the exact expire');
$bk2 = intdiv((int) zscore($port, 'tc:{0}i', 'long'), S);
tcr_check($bk2 >= $x2 && $bk2 < $x2 + 61, 'and the score follows it', "bucket $bk2 expire $x2");
tcr_same([], $b->verify(), 'verify(): every entry with its links');

echo "# expired inside its bucket\n";
// An entry whose expire has passed while its bucket has not (made here by
// hand: waiting for one takes a minute).
$b->save('d', 'd', ['T6'], 3600);
$now = time();
$v = (int) zscore($port, 'tc:{0}i', 'd') % S;
$score = sprintf('%.0f', ($now + 30) * S + $v);
tcr_cmd($port, 'ZADD', 'tc:{0}i', 'XX', $score, 'd');
tcr_cmd($port, 'ZADD', 'tc:{0}t:T6', 'XX', $score, 'd');
tcr_cmd($port, 'SETRANGE', 'tc:{0}e:d', '2', pack('e', (float) $score));
tcr_cmd($port, 'SETRANGE', 'tc:{0}e:d', '26', pack('e', (float) ($now - 5)));
tcr_same(false, $b->test('d'), 'test(d) is false');
tcr_same('d', $b->load('d', true), 'load(d, true) still reads it');
tcr_check(!in_array('d', $b->getIds(), true), 'getIds() does not list it');
tcr_same([], $b->getIdsMatchingTags(['T6']), 'getIdsMatchingTags() does not list it');
tcr_same([], $b->getIdsMatchingAnyTags(['T6']), 'getIdsMatchingAnyTags() does not list it');
tcr_check(in_array('long', $b->getIds(), true), 'getIds() lists the live ones');
$b->clean('old');
tcr_same(null, zscore($port, 'tc:{0}i', 'd'), "clean('old') drops it from the id index");
tcr_same(false, $b->load('d', true), 'and its record');
tcr_same('x', $b->load('long'), 'the live entries stay');
tcr_same([], $b->verify(), 'verify() finds nothing wrong');

echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# the same tags inside the bucket: no link is written
ok: the link carries the score of the id index
ok: a second save with the same tags writes no sorted set
ok: the id keeps its score
ok: and the record carries that score
ok: the new value is read
ok: the expire is the exact one, not the bucket
ok: listed under both tags
ok: the same tags in another order take the full save
ok: still listed under both tags
# other tags: the full save
ok: not listed under the tag it lost
ok: listed under the new tag
ok: a clean by the new tag reaches it
# cleaned, then saved again with fewer tags
ok: cleaned by T4
ok: its link in T5 is left behind
ok: and the one-call clean left it in the id index: a dead id
ok: a dead id is not listed under its other tags
ok: nor by getIdsMatchingAnyTags()
ok: nor by getIds()
ok: nor by getIdsNotMatchingTags()
ok: and its other tag is not listed by getTags()
ok: verify() finds nothing wrong with a dead id
ok: a forever entry the one-call clean dropped leaves the id index
ok: and its other links go with it
ok: a clean by two tags done in one call leaves dead ids too
ok: which are not listed either
ok: a clean of several calls removes its ids from the id index
ok: and their records
ok: none is listed
ok: the stale link does not list it under T5
ok: and a clean by T5 leaves it alone
# the bucket
ok: lifetime 100: the score is the expire rounded up to 6 s
ok: lifetime 1: the score is the expire
ok: no lifetime: the score says never
ok: touch(long, 1000)
ok: touch() adds to the exact expire
ok: and the score follows it
ok: verify(): every entry with its links
# expired inside its bucket
ok: test(d) is false
ok: load(d, true) still reads it
ok: getIds() does not list it
ok: getIdsMatchingTags() does not list it
ok: getIdsMatchingAnyTags() does not list it
ok: getIds() lists the live ones
ok: clean('old') drops it from the id index
ok: and its record
ok: the live entries stay
ok: verify() finds nothing wrong
done
