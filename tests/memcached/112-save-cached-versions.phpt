--TEST--
A save takes the tag versions this process has cached when the clean log says they are current (one key read: the log), and reads again those a clean named since: another process then reads the entry
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
if (!function_exists("pcntl_fork")) die("skip pcntl is not loaded (Debian: php8.2-cli ships it)");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';
$srv = tcm_start("savecache");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "sc:"];

function cmd_get(int $port): int
{
    preg_match('/STAT cmd_get (\d+)/', (string)tcm_cmd($port, "stats"), $m);
    return (int)$m[1];
}

/* $f in a forked child (its own process: nothing cached): its result */
function in_child(callable $f): string
{
    $file = tcr_dir() . '/child-result';
    @unlink($file);
    $pid = pcntl_fork();
    if ($pid === 0) {
        file_put_contents($file, var_export($f(), true));
        exit(0);
    }
    pcntl_waitpid($pid, $st);
    return (string)@file_get_contents($file);
}

$tags = ["MAGE", "T1", "T2", "T3", "T4", "T5", "T6", "T7"];
$b = new TagCache\Memcached($opts);
tcr_same(true, $b->save("va", "a", $tags), "the first save (the log and the versions are made)");
$g0 = cmd_get($srv["port"]);
tcr_same(true, $b->save("va", "a", $tags), "the second (the log is there: the versions it reads are cached)");
tcr_same(9, cmd_get($srv["port"]) - $g0, "it read the log and the 8 versions");

$g0 = cmd_get($srv["port"]);
tcr_same(true, $b->save("vb", "b", $tags), "a save of another id with the same tags");
tcr_same(1, cmd_get($srv["port"]) - $g0, "it read one key: the log (its 8 versions are cached)");

echo "# another process cleans T3\n";
tcr_same("true", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->clean("matchingAnyTag", ["T3"])),
    "the clean");
$g0 = cmd_get($srv["port"]);
tcr_same(true, $b->save("vc", "c", $tags), "a save with T3 after the clean");
tcr_same(2, cmd_get($srv["port"]) - $g0, "it read the log, which names T3, then T3's new version");
tcr_same(false, $b->load("b"), "b (saved before the clean) is a miss here");
tcr_same("'vc'", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->load("c")),
    "another process reads c: its record holds T3's new version");
tcr_same("false", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->load("b")),
    "and b is a miss there too");

echo "# clean('all') in another process: a new epoch, every cached version forgotten\n";
tcr_same("true", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->clean("all")),
    "clean('all')");
$g0 = cmd_get($srv["port"]);
tcr_same(true, $b->save("vd", "d", $tags), "a save after it");
tcr_same(9, cmd_get($srv["port"]) - $g0, "it read the log, then the 8 versions");
tcr_same("'vd'", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->load("d")),
    "another process reads d");

echo "# hint_memory 0: nothing cached, every save reads its versions\n";
$off = new TagCache\Memcached($opts + ["hint_memory" => 0]);
$g0 = cmd_get($srv["port"]);
tcr_same(true, $off->save("ve", "e", $tags), "a save without the cache");
tcr_same(9, cmd_get($srv["port"]) - $g0, "it read the log and the 8 versions");
tcr_same("'ve'", in_child(static fn () => (new TagCache\Memcached($GLOBALS["opts"]))->load("e")), "another process reads e");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: the first save (the log and the versions are made)
ok: the second (the log is there: the versions it reads are cached)
ok: it read the log and the 8 versions
ok: a save of another id with the same tags
ok: it read one key: the log (its 8 versions are cached)
# another process cleans T3
ok: the clean
ok: a save with T3 after the clean
ok: it read the log, which names T3, then T3's new version
ok: b (saved before the clean) is a miss here
ok: another process reads c: its record holds T3's new version
ok: and b is a miss there too
# clean('all') in another process: a new epoch, every cached version forgotten
ok: clean('all')
ok: a save after it
ok: it read the log, then the 8 versions
ok: another process reads d
# hint_memory 0: nothing cached, every save reads its versions
ok: a save without the cache
ok: it read the log and the 8 versions
ok: another process reads e