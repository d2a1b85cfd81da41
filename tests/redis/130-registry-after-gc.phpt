--TEST--
clean('old') that gives an index key a TTL again (its forever entry was cleaned) lowers the tag registry's deadline with it, so later saves push the key's TTL: no entry outlives its id index or its tag key
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

$srv = tcr_start('reggc');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'on_error' => 'exception']);

// a forever entry makes the id index and tag T persistent, and the registry
// records "never" as their deadline
$b->save('forever', 'f', ['T', 'F'], null);
// a short one keeps both keys alive with a finite TTL once the forever one is gone
$b->save('short', 's', ['T'], 100);
tcr_same(-1, tcr_cmd($port, 'TTL', 'tc:{0}i'), 'the id index has no TTL while it holds a forever entry');

// a clean drops the forever entry without settling the index key's TTL;
// clean('old') then gives the persistent keys a TTL from their newest member
$b->clean('matchingTag', ['F']);
$b->clean('old');
$ttl = tcr_cmd($port, 'TTL', 'tc:{0}i');
tcr_check($ttl > 0 && $ttl < 1000, 'clean(old) gave the id index a finite TTL again', "TTL $ttl");

// a later, longer save must push the TTL of the keys that index it
$b->save('long', 'l', ['T'], 3600);
$ttlI = tcr_cmd($port, 'TTL', 'tc:{0}i');
$ttlT = tcr_cmd($port, 'TTL', 'tc:{0}t:T');
$ttlE = tcr_cmd($port, 'TTL', 'tc:{0}e:l');
tcr_check($ttlI >= $ttlE, 'the id index lives at least as long as the new entry', "index $ttlI, entry $ttlE");
tcr_check($ttlT >= $ttlE, 'tag T lives at least as long as the new entry', "tag $ttlT, entry $ttlE");
tcr_same([], $b->verify(), 'verify() finds nothing');
tcr_same(['l', 's'], (function ($a) { sort($a); return $a; })($b->getIdsMatchingTags(['T'])), 'both live entries are listed under T');

// the same through touch(): a forever entry saved again with a lifetime
// leaves its keys persistent (and "never" in the registry); touch() of
// another entry gives them a TTL again, and must lower the deadline too
$b->clean('all');
$b->save('f1', 'f', ['U'], null);
$b->save('f2', 'f', ['U'], 100);
$b->save('g', 'g', ['U'], 200);
tcr_same(-1, tcr_cmd($port, 'TTL', 'tc:{0}t:U'), 'tag U is still persistent after its forever entry got a lifetime');
tcr_same(true, $b->touch('g', 10), 'touch() of another entry');
$b->save('h', 'h', ['U'], 3600);
$ttlI = tcr_cmd($port, 'TTL', 'tc:{0}i');
$ttlU = tcr_cmd($port, 'TTL', 'tc:{0}t:U');
$ttlE = tcr_cmd($port, 'TTL', 'tc:{0}e:h');
tcr_check($ttlI == -1 || $ttlI >= $ttlE, 'after touch(): the id index lives at least as long as a later entry', "index $ttlI, entry $ttlE");
tcr_check($ttlU == -1 || $ttlU >= $ttlE, 'after touch(): tag U lives at least as long as a later entry', "tag $ttlU, entry $ttlE");
tcr_same([], $b->verify(), 'verify() finds nothing after touch()');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: the id index has no TTL while it holds a forever entry
ok: clean(old) gave the id index a finite TTL again
ok: the id index lives at least as long as the new entry
ok: tag T lives at least as long as the new entry
ok: verify() finds nothing
ok: both live entries are listed under T
ok: tag U is still persistent after its forever entry got a lifetime
ok: touch() of another entry
ok: after touch(): the id index lives at least as long as a later entry
ok: after touch(): tag U lives at least as long as a later entry
ok: verify() finds nothing after touch()
done
