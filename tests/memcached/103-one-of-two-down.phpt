--TEST--
two servers (ketama): one down affects only its keys; version keys live beside each entry
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
$s1 = tcm_start("one");
$s2 = tcm_start("two");
$b = new TagCache\Memcached(["timeout" => 10, "read_timeout" => 30, "servers" => [["host" => "127.0.0.1", "port" => $s1["port"], "weight" => 1],
    ["127.0.0.1", $s2["port"], 1]], "retry_interval" => 5]);
for ($i = 0; $i < 60; $i++) {
    $b->save("v$i", "id$i", ["MAGE", "T" . ($i % 3)]);
}
// which server holds what: ask each one for the keys it has
$on1 = [];
for ($i = 0; $i < 60; $i++) {
    if (tcm_holds($s1["port"], "id$i")) {
        $on1[] = $i;
    }
}
tcr_check(count($on1) > 0 && count($on1) < 60, "the ids are spread over both servers");
tcr_stop($s1);
$ok = true;
for ($i = 0; $i < 60; $i++) {
    $want = in_array($i, $on1, true) ? false : "v$i";
    $ok = $ok && $b->load("id$i") === $want;
}
tcr_check($ok, "with one server down, exactly its ids miss; the others load, tags checked");
tcr_same(false, $b->clean("matchingAnyTag", ["T0"]), "a tag clean that cannot reach every server is false");
$left = 0;
for ($i = 0; $i < 60; $i += 3) {
    $left += $b->load("id$i") !== false ? 1 : 0;
}
tcr_same(0, $left, "but it invalidated T0 on the live server");
tcr_same("v1", in_array(1, $on1, true) ? "v1" : $b->load("id1"), "T1 entries on the live server are untouched");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: the ids are spread over both servers
ok: with one server down, exactly its ids miss; the others load, tags checked
ok: a tag clean that cannot reach every server is false
ok: but it invalidated T0 on the live server
ok: T1 entries on the live server are untouched
