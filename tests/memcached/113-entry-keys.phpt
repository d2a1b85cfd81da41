--TEST--
Entry keys are the prefix and 11 characters of the id's hash whatever the id (layout 3 and 4: every load reads its key back, and libmemcached parses it a byte at a time); a clean log of layout 2 or 3 (one whose readers held no lease) is not ours
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';
$srv = tcm_start("ekeys");
$p = $srv["port"];
$b = new TagCache\Memcached(["timeout" => 10, "read_timeout" => 30, "servers" => "127.0.0.1:$p", "prefix" => "ek:"]);
$ids = ["a", "abc_0123456789ABCDEF0123456789ABCDEF", str_repeat("L", 240), "x y\r\nz", "a_b.c{d}-e"];
$ok = true;
foreach ($ids as $n => $id) {
    $ok = $ok && $b->save("v$n", $id, ["T1", "T$n"]);
}
tcr_check($ok, "saves");

/* every key the server holds, from its LRU crawler */
function server_keys(int $port): array
{
    preg_match_all('/^key=(\S+)/m', (string)tcm_cmd($port, "lru_crawler metadump all"), $m);
    return array_map('urldecode', $m[1]);
}
$keys = server_keys($p);
$entries = array_values(array_filter($keys, static fn ($k) => $k !== "ek:c" && !str_starts_with($k, "ek:t:")));
tcr_same(count($ids), count($entries), "one entry key per id (besides the log and the tag versions)", json_encode($keys));
tcr_same(count($ids), count(preg_grep('/^ek:[A-Za-z0-9_-]{11}$/', $entries)), "each is the prefix and 11 characters of [A-Za-z0-9_-]", json_encode($entries));
$seen = false;
foreach ($entries as $k) {
    foreach ($ids as $id) {
        $seen = $seen || (strlen($id) >= 5 && str_contains($k, $id));
    }
}
tcr_same(false, $seen, "no key holds an id (of 5 bytes or more)");
$ok = true;
foreach ($ids as $n => $id) {
    $ok = $ok && $b->load($id) === "v$n";
}
tcr_check($ok, "every id loads");

/* the log, rewritten with the version byte of layout 2, then 3: not ours, every entry a miss */
$reply = (string)tcm_cmd($p, "get ek:c");
tcr_check(preg_match('/^VALUE ek:c 0 (\d+)\r\n/', $reply, $m) === 1, "the log is there");
$log = substr($reply, strlen($m[0]), (int)$m[1]);
tcr_same("C", $log[0], "the log's magic");
foreach (["\x02" => 2, "\x03" => 3] as $byte => $layout) {
    $log[1] = $byte;
    tcr_same("STORED\r\n", tcm_cmd($p, "set ek:c 0 0 " . strlen($log) . "\r\n" . $log), "the log rewritten as layout $layout");
    // an instance of a view of its own (its timeout): it holds no lease on the log
    // (a process sees a log written by other means than a clean once its lease ran out: test 105)
    $fresh = ["servers" => "127.0.0.1:$p", "prefix" => "ek:", "timeout" => $layout];
    tcr_same(false, (new TagCache\Memcached($fresh))->load("a"), "an entry under a log of layout $layout is a miss");
    tcr_same(true, $b->save("again", "a", ["T1"]), "a save makes a log of layout 4 again");
    tcr_same("again", (new TagCache\Memcached($fresh))->load("a"), "and the entry loads");
}
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: saves
ok: one entry key per id (besides the log and the tag versions)
ok: each is the prefix and 11 characters of [A-Za-z0-9_-]
ok: no key holds an id (of 5 bytes or more)
ok: every id loads
ok: the log is there
ok: the log's magic
ok: the log rewritten as layout 2
ok: an entry under a log of layout 2 is a miss
ok: a save makes a log of layout 4 again
ok: and the entry loads
ok: the log rewritten as layout 3
ok: an entry under a log of layout 3 is a miss
ok: a save makes a log of layout 4 again
ok: and the entry loads
