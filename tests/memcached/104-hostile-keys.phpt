--TEST--
ids and tags with spaces, CR/LF, control bytes or over 250 bytes never reach the protocol
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
$srv = tcm_start("keys");
$p = $srv["port"];
tcm_cmd($p, "set canary 0 0 2\r\nok");
$b = new TagCache\Memcached(["timeout" => 10, "read_timeout" => 30, "servers" => "127.0.0.1:$p", "on_error" => "exception"]);
$hostile = ["a b", "x\r\nflush_all", "x\r\ndelete canary", "nul\0byte", "tab\there", "\x7f\x01", str_repeat("L", 300),
    str_repeat("é", 200), "get canary", "{}()/\\@:"];
foreach ($hostile as $n => $id) {
    tcr_same(true, $b->save("data $n", $id, ["tag\r\nflush_all", "t $n"]), "save with hostile id #$n");
}
foreach ($hostile as $n => $id) {
    tcr_same("data $n", $b->load($id), "load with hostile id #$n");
}
tcr_same("VALUE canary 0 2\r\nok\r\nEND\r\n", tcm_cmd($p, "get canary"), "the canary key is untouched: nothing was injected");
// an id of 32 hex digits cannot be confused with a hashed one
tcr_same(false, $b->load(str_repeat("0", 32)), "a plain id is not a hashed key");
tcr_same(true, $b->clean("matchingAnyTag", ["tag\r\nflush_all"]), "clean by a hostile tag");
tcr_same(false, $b->load("a b"), "it invalidated the entries");
$stats = tcm_cmd($p, "stats");
tcr_check(preg_match("/STAT cmd_flush 0\r\n/", $stats) === 1, "flush_all never ran");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: save with hostile id #0
ok: save with hostile id #1
ok: save with hostile id #2
ok: save with hostile id #3
ok: save with hostile id #4
ok: save with hostile id #5
ok: save with hostile id #6
ok: save with hostile id #7
ok: save with hostile id #8
ok: save with hostile id #9
ok: load with hostile id #0
ok: load with hostile id #1
ok: load with hostile id #2
ok: load with hostile id #3
ok: load with hostile id #4
ok: load with hostile id #5
ok: load with hostile id #6
ok: load with hostile id #7
ok: load with hostile id #8
ok: load with hostile id #9
ok: the canary key is untouched: nothing was injected
ok: a plain id is not a hashed key
ok: clean by a hostile tag
ok: it invalidated the entries
ok: flush_all never ran
