--TEST--
Index key TTLs (layout 3): a save sends no EXPIRE for a key this process already gave a TTL far enough, and still never leaves a key expiring before an entry: another process that remade the keys (deleted by hand with DEL, then a short-lived save; clean('all') keeps them, tests/redis/142) is seen by the id index's token, and the keys get their TTL at once
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

$srv = tcr_start('ttls');
$port = $srv['port'];
$a = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'kt:']);
function calls(int $port, string $cmd): int
{
    $info = tcr_cmd($port, 'INFO', 'commandstats');
    return preg_match('/^cmdstat_' . $cmd . ':calls=(\d+)/m', $info, $m) ? (int) $m[1] : 0;
}

tcr_same(true, $a->save('1', 'a1', ['X', 'Y'], 3600), 'a save');
$e = calls($port, 'expire');
tcr_check($e >= 8, 'the first save gives its 4 keys a TTL (EXPIRE NX, EXPIRE GT)', (string) $e);
tcr_same(true, $a->save('2', 'a2', ['X', 'Y'], 3600), 'a second save');
tcr_same($e, calls($port, 'expire'), 'sends no EXPIRE: this process gave the keys their TTL');
tcr_same(true, $a->save('3', 'a3', ['X'], 86400), 'a save of a longer lifetime');
tcr_check(calls($port, 'expire') > $e, 'raises the TTLs');
tcr_check(tcr_cmd($port, 'TTL', 'kt:{0}s:X') >= 86400, 'of its keys', (string) tcr_cmd($port, 'TTL', 'kt:{0}s:X'));

// another process remakes the keys with a short TTL: they were deleted by hand
// (clean('all') keeps them and their TTLs: tests/redis/142)
$child = tcr_spawn('$b = new TagCache\Redis(["server" => "127.0.0.1", "port" => ' . $port . ', "prefix" => "kt:"]);
foreach (tcr_cmd(' . $port . ', "KEYS", "kt:*") as $k) tcr_cmd(' . $port . ', "DEL", $k);
$ok = $b->save("b", "b1", ["X", "Y"], 10);
tcr_result([$ok, tcr_cmd(' . $port . ', "TTL", "kt:{0}s:X")]);');
$r = tcr_parse_result(tcr_wait($child)['out']);
tcr_check(is_array($r) && $r[0] === true && $r[1] > 0 && $r[1] < 100, 'another process: the keys deleted by hand (DEL), then a save of lifetime 10 made the tag key again, TTL ' . (is_array($r) ? '< 100 s' : '?'), json_encode($r));

tcr_same(true, $a->save('4', 'a4', ['X', 'Y'], 3600), 'this process saves again (its table says the keys have their TTL)');
foreach (['kt:{0}s:X', 'kt:{0}s:Y', 'kt:{0}I', 'kt:{0}G'] as $k) {
    tcr_check(tcr_cmd($port, 'TTL', $k) >= 3600, "$k: TTL covers the entry (the remade id index was seen)", (string) tcr_cmd($port, 'TTL', $k));
}
tcr_same([], $a->verify(), 'verify(): no key expires before an entry');
tcr_same(['a4', 'b1'], (function ($l) { sort($l); return $l; })($a->getIdsMatchingTags(['X', 'Y'])), 'both listed');
tcr_same(true, $a->save('5', 'a5', ['X', 'Y'], 3600), 'and the next save');
$e = calls($port, 'expire');
tcr_same(true, $a->save('6', 'a6', ['X', 'Y'], 3600), 'and the one after');
tcr_same($e, calls($port, 'expire'), 'send no EXPIRE again');

echo "# a server that may evict keys: the table is not trusted\n";
tcr_cmd($port, 'CONFIG', 'SET', 'maxmemory', '100mb');
tcr_cmd($port, 'CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
$v = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'kt:', 'persistent' => 0]);
$v->save('v', 'v1', ['X'], 3600);
$e = calls($port, 'expire');
$v->save('v', 'v2', ['X'], 3600);
tcr_check(calls($port, 'expire') > $e, 'every save sends its EXPIREs');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: a save
ok: the first save gives its 4 keys a TTL (EXPIRE NX, EXPIRE GT)
ok: a second save
ok: sends no EXPIRE: this process gave the keys their TTL
ok: a save of a longer lifetime
ok: raises the TTLs
ok: of its keys
ok: another process: the keys deleted by hand (DEL), then a save of lifetime 10 made the tag key again, TTL < 100 s
ok: this process saves again (its table says the keys have their TTL)
ok: kt:{0}s:X: TTL covers the entry (the remade id index was seen)
ok: kt:{0}s:Y: TTL covers the entry (the remade id index was seen)
ok: kt:{0}I: TTL covers the entry (the remade id index was seen)
ok: kt:{0}G: TTL covers the entry (the remade id index was seen)
ok: verify(): no key expires before an entry
ok: both listed
ok: and the next save
ok: and the one after
ok: send no EXPIRE again
# a server that may evict keys: the table is not trusted
ok: every save sends its EXPIREs
done