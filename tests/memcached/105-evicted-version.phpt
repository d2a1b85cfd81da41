--TEST--
an evicted tag or namespace version means invalidated, never valid
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
$srv = tcm_start("evict");
$p = $srv["port"];
$b = new TagCache\Memcached(["timeout" => 10, "read_timeout" => 30, "servers" => "127.0.0.1:$p", "prefix" => "ev:"]);
$b->save("a", "A", ["T1", "T2"]);
$b->save("b", "B", ["T2"]);
$b->save("c", "C");
tcr_same(["a", "b", "c"], [$b->load("A"), $b->load("B"), $b->load("C")], "all three load");
tcr_same("DELETED\r\n", tcm_cmd($p, "delete ev:t:T1"), "the version key of T1 is gone (as an eviction would do)");
tcr_same(false, $b->load("A"), "A (tagged T1) is a miss");
tcr_same(false, $b->getMetadatas("A"), "getMetadatas(A) is false");
tcr_same("b", $b->load("B"), "B (not tagged T1) still loads");
$b->save("a2", "A", ["T1"]);
tcr_same("a2", $b->load("A"), "a new save of A with T1 loads (T1 has a new version)");
tcr_same("DELETED\r\n", tcm_cmd($p, "delete ev:n"), "the namespace version is gone");
tcr_same([false, false, false], [$b->load("A"), $b->load("B"), $b->load("C")], "every entry of the namespace is a miss");
$b->save("c2", "C");
tcr_same("c2", $b->load("C"), "saves work again");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: all three load
ok: the version key of T1 is gone (as an eviction would do)
ok: A (tagged T1) is a miss
ok: getMetadatas(A) is false
ok: B (not tagged T1) still loads
ok: a new save of A with T1 loads (T1 has a new version)
ok: the namespace version is gone
ok: every entry of the namespace is a miss
ok: saves work again
