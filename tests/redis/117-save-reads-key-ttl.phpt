--TEST--
A save pushes an index key's TTL by the key's own TTL, not by the registry's deadline: a deadline that claims more than the key's TTL covers (another client's clock, a script run late) cannot leave the id index or a tag key expiring before an entry
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

$srv = tcr_start('keyttl');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'kt:', 'on_error' => 'exception']);

tcr_check($b->save('v', 'first', ['A'], 600), 'a first entry of tag A (lifetime 600 s)');
tcr_same([], $b->verify(), 'verify() finds nothing');

// What a client whose scripts ran late (or whose clock is ahead) leaves: the
// registry's deadlines of the id index ('') and of tag A claim a day more
// than the keys' TTLs cover.
$far = (string) ((time() + 86400) * 65536);
tcr_same(0, tcr_cmd($port, 'ZADD', 'kt:{0}T', $far, '', $far, 'A'), 'registry deadlines of the index and of A moved a day ahead');
$ttl = tcr_cmd($port, 'TTL', 'kt:{0}t:A');
tcr_check($ttl > 600 && $ttl < 1000, 'tag A\'s key expires in about 600 s plus grace', (string) $ttl);

// A save of an entry that lives an hour: the index key and A's key must now
// live at least as long as it.
tcr_check($b->save('v', 'second', ['A'], 3600), 'a second entry of A (lifetime 3600 s)');
tcr_check(tcr_cmd($port, 'TTL', 'kt:{0}t:A') >= 3600, "tag A's key covers the second entry", (string) tcr_cmd($port, 'TTL', 'kt:{0}t:A'));
tcr_check(tcr_cmd($port, 'TTL', 'kt:{0}i') >= 3600, 'the id index covers the second entry', (string) tcr_cmd($port, 'TTL', 'kt:{0}i'));
tcr_same([], $b->verify(), 'verify() finds no index key expiring before an entry');
tcr_same(['second'], array_values(array_diff($b->getIdsMatchingTags(['A']), ['first'])), 'the second entry is listed under A');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: a first entry of tag A (lifetime 600 s)
ok: verify() finds nothing
ok: registry deadlines of the index and of A moved a day ahead
ok: tag A's key expires in about 600 s plus grace
ok: a second entry of A (lifetime 3600 s)
ok: tag A's key covers the second entry
ok: the id index covers the second entry
ok: verify() finds no index key expiring before an entry
ok: the second entry is listed under A
done
