--TEST--
memcached restarted mid-run: misses during the outage, then the same object reconnects by itself
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
$srv = tcm_start("restart");
$b = new TagCache\Memcached(["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "retry_interval" => 0.2]);
tcr_same(true, $b->save("v1", "a", ["t"]), "save before the outage");
tcr_same("v1", $b->load("a"), "load before the outage");
tcr_stop($srv);
tcr_same(false, $b->load("a"), "load during the outage is a miss");
tcr_same(false, $b->save("v2", "a"), "save during the outage is false");
tcm_start("restart", $srv["port"]);
$ok = false;
for ($i = 0; $i < 100 && !$ok; $i++) {   // the failed server is retried after retry_interval
    $ok = $b->save("v3", "a", ["t"]);
    if (!$ok) {
        usleep(50000);
    }
}
tcr_check($ok, "save works again after the restart, on the same object");
tcr_same("v3", $b->load("a"), "load after the restart");
tcr_same(true, $b->clean("matchingAnyTag", ["t"]), "clean after the restart");
tcr_same(false, $b->load("a"), "the clean took effect");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: save before the outage
ok: load before the outage
ok: load during the outage is a miss
ok: save during the outage is false
ok: save works again after the restart, on the same object
ok: load after the restart
ok: clean after the restart
ok: the clean took effect
