--TEST--
values over memcached's item size: a clean failure, never a truncated entry; compression
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
$srv = tcm_start("large");
// a generous read timeout: valgrind on a busy machine must not turn a load into a miss
$b = new TagCache\Memcached(["servers" => "127.0.0.1:" . $srv["port"], "read_timeout" => 30]);
$ok = random_bytes(900 * 1024);
tcr_same(true, $b->save($ok, "big"), "900 KB of random bytes fit");
tcr_same(true, $b->load("big") === $ok, "and load back whole");
$warn = null;
set_error_handler(function ($no, $msg) use (&$warn) { $warn = $msg; return true; });
tcr_same(false, $b->save(random_bytes(2 * 1024 * 1024), "big"), "2 MB of random bytes: save() is false");
restore_error_handler();
tcr_check(str_contains((string) $warn, "max_item_size"), "with a warning that says why", (string) $warn);
tcr_same(false, $b->load("big"), "the old value is gone too (no stale entry after a failed save)");
// the server itself refuses (max_item_size above its -I 1m)
$c = new TagCache\Memcached(["servers" => "127.0.0.1:" . $srv["port"], "read_timeout" => 30, "max_item_size" => "4M"]);
$c->save("small", "big2");
set_error_handler(function ($no, $msg) use (&$warn) { $warn = $msg; return true; });
tcr_same(false, $c->save(random_bytes(2 * 1024 * 1024), "big2"), "a value the server refuses: save() is false");
restore_error_handler();
tcr_same(false, $c->load("big2"), "nothing truncated was stored, and the old value is gone");
$z = new TagCache\Memcached(["servers" => "127.0.0.1:" . $srv["port"], "read_timeout" => 30, "compress_data" => 1]);
$text = str_repeat("compressible text ", 200000);
tcr_same(true, $z->save($text, "text"), "3.6 MB of text with compress_data=1: saved");
tcr_same(true, $z->load("text") === $text, "and loads back identical");
$got = $b->load("text");
tcr_same(true, $got === $text, "an object without compression reads it too");
if ($got !== $text) { var_dump(strlen((string) $got), $b->stats()); }
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: 900 KB of random bytes fit
ok: and load back whole
ok: 2 MB of random bytes: save() is false
ok: with a warning that says why
ok: the old value is gone too (no stale entry after a failed save)
ok: a value the server refuses: save() is false
ok: nothing truncated was stored, and the old value is gone
ok: 3.6 MB of text with compress_data=1: saved
ok: and loads back identical
ok: an object without compression reads it too
