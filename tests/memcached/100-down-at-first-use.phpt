--TEST--
memcached down at first use: a miss (on_error=miss) or a ConnectionException naming host:port, never a hang
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
$port = tcr_free_port();   // nothing listens there
$miss = new TagCache\Memcached(["servers" => "127.0.0.1:$port", "timeout" => 0.5]);
tcr_same(false, $miss->load("a"), "load() is a miss");
tcr_same(false, $miss->test("a"), "test() is false");
tcr_same(false, $miss->save("x", "a", ["t"]), "save() is false");
tcr_same(false, $miss->remove("a"), "remove() is false");
tcr_same(false, $miss->clean("matchingAnyTag", ["t"]), "clean() is false");
tcr_check($miss->stats()["errors"] > 0, "the failures are counted");
$ex = new TagCache\Memcached(["servers" => "127.0.0.1:$port", "timeout" => 0.5, "on_error" => "exception"]);
foreach (["load", "save", "clean"] as $op) {
    try {
        $op === "load" ? $ex->load("a") : ($op === "save" ? $ex->save("x", "a") : $ex->clean("all"));
        tcr_check(false, "$op throws");
    } catch (TagCache\ConnectionException $e) {
        tcr_check(str_contains($e->getMessage(), "127.0.0.1:$port"), "$op: ConnectionException names host:port", $e->getMessage());
    }
}
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: load() is a miss
ok: test() is false
ok: save() is false
ok: remove() is false
ok: clean() is false
ok: the failures are counted
ok: load: ConnectionException names host:port
ok: save: ConnectionException names host:port
ok: clean: ConnectionException names host:port
