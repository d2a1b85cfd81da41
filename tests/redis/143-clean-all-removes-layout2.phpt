--TEST--
clean('all') also removes the keys layout 2 left under its prefix (id index i, registry T, tag keys t:<tag>, records of format 2, forever ones without TTL included), in SCAN steps; other prefixes' keys and layout-3 keys of the prefix are left alone
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

$srv = tcr_start('l2');
$port = $srv['port'];

// layout 2 keys written by hand: a format-2 record is a string whose first byte is 2
$rec2 = "\x02\x00" . str_repeat("\x00", 40) . 'value';
$mk = 'local n = tonumber(ARGV[2])
for i = 1, n do redis.call("SET", ARGV[1] .. "{0}e:id" .. i, ARGV[3]) end
redis.call("ZADD", ARGV[1] .. "{0}i", 9999999999, "id1", 9999999999, "id2")
redis.call("ZADD", ARGV[1] .. "{0}T", 0, "A", 0, "B")
for i = 1, n do redis.call("ZADD", ARGV[1] .. "{0}t:tag" .. i, 1, "id1") end
return n';
tcr_same(1500, tcr_cmd($port, 'EVAL', $mk, '0', 'l2:', '1500', $rec2), 'layout 2 under prefix l2: (1500 records without TTL, i, T, 1500 tag keys)');
tcr_same(20, tcr_cmd($port, 'EVAL', $mk, '0', 'other:', '20', $rec2), 'and under prefix other:');
tcr_same(20, tcr_cmd($port, 'EVAL', $mk, '0', 'l2x:', '20', $rec2), 'and under prefix l2x:');
tcr_cmd($port, 'SET', 'l2:plain', 'x');

$c = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'l2:']);
tcr_same(false, $c->load('id1'), 'a layout-2 record reads as a miss');
tcr_same(true, $c->save('v', 'new', ['A'], 3600), 'a layout-3 save under l2:');
tcr_same(true, $c->save('w', 'forever', ['B'], null), 'and a forever one');
tcr_same(true, $c->clean('all'), "clean('all')");
$left = tcr_cmd($port, 'KEYS', 'l2:*');
sort($left);
tcr_same([], array_values(preg_grep('/^l2:\{0\}(e:.*|i|T|t:.*|J|F|f:.*)$/', $left)), 'no layout-2 key, entry or forever key is left under l2:');
tcr_check(in_array('l2:plain', $left, true) && preg_grep('/^l2:\{0\}(I|G|s:.*)$/', $left, PREG_GREP_INVERT) === ['l2:plain'],
    'what is left: the keys of finite entries (kept with their TTL) and a key not of the layout', json_encode($left));
foreach (['other:', 'l2x:'] as $p) {
    tcr_same(20 + 20 + 2, count(tcr_cmd($port, 'KEYS', $p . '*')), "$p: untouched");
}
tcr_same($rec2, tcr_cmd($port, 'GET', 'other:{0}e:id1'), 'its record too');
// layout 2's i and T went last: with none left, a later clean('all') scans nothing
$scans = static function () use ($port): int {
    return preg_match('/^cmdstat_scan:calls=(\d+)/m', (string) tcr_cmd($port, 'INFO', 'commandstats'), $m) ? (int) $m[1] : 0;
};
tcr_check($scans() > 0, 'the purge scanned');
$before = $scans();
tcr_same(true, $c->clean('all'), "clean('all') again");
tcr_same($before, $scans(), 'it finds no layout-2 id index or registry, and sends no SCAN');
tcr_cmd($port, 'ZADD', 'l2:{0}T', '0', 'C');
tcr_cmd($port, 'SET', 'l2:{0}e:late', $rec2);
tcr_same(true, $c->clean('all'), "clean('all') with a layout-2 registry back");
tcr_same([null, 0], [tcr_cmd($port, 'GET', 'l2:{0}e:late'), tcr_cmd($port, 'EXISTS', 'l2:{0}T')], 'scans and removes again');
tcr_same(true, $c->save('v2', 'new', ['A'], 3600), 'saves go on');
tcr_same('v2', $c->load('new'), 'and load');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: layout 2 under prefix l2: (1500 records without TTL, i, T, 1500 tag keys)
ok: and under prefix other:
ok: and under prefix l2x:
ok: a layout-2 record reads as a miss
ok: a layout-3 save under l2:
ok: and a forever one
ok: clean('all')
ok: no layout-2 key, entry or forever key is left under l2:
ok: what is left: the keys of finite entries (kept with their TTL) and a key not of the layout
ok: other:: untouched
ok: l2x:: untouched
ok: its record too
ok: the purge scanned
ok: clean('all') again
ok: it finds no layout-2 id index or registry, and sends no SCAN
ok: clean('all') with a layout-2 registry back
ok: scans and removes again
ok: saves go on
ok: and load
done
