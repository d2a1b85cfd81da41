--TEST--
The tag hint keeps an image of the record's tags (names and versions): a warm load of a record with those tags takes one pass, and it is still right when another process cleans a tag, re-saves the entry with the same tags and new versions, in another order, or with other tags; tags of over 255 bytes are hinted too
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
$srv = tcm_start("himage");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "hi:"];
$b = new TagCache\Memcached($opts);

function in_child(array $opts, callable $f): int
{
    $pid = pcntl_fork();
    if ($pid === 0) {
        exit($f(new TagCache\Memcached($opts)) ? 0 : 1);
    }
    pcntl_waitpid($pid, $st);
    return pcntl_wifexited($st) ? pcntl_wexitstatus($st) : -1;
}

function cmd_get(int $port): int
{
    preg_match('/STAT cmd_get (\d+)/', (string)tcm_cmd($port, "stats"), $m);
    return (int)$m[1];
}

/** load($id), and the second reads and keys asked for on the way; a load within the lease on the
 * clean log last read asks for the entry without the log: counted as the
 * same load outside it asks (one key more, the log) */
function load_counted(TagCache\Memcached $b, int $port, string $id): array
{
    $s0 = $b->stats()["second_reads"];
    $g0 = cmd_get($port);
    $l0 = $b->stats()["lease_loads"];
    $v = $b->load($id);
    return [$v, $b->stats()["second_reads"] - $s0, cmd_get($port) - $g0 + $b->stats()["lease_loads"] - $l0];
}

/** load($id) and its second reads (a miss asks again for the cleaned tags' versions with the entry) */
function load_second(TagCache\Memcached $b, string $id): array
{
    $s0 = $b->stats()["second_reads"];
    $v = $b->load($id);
    return [$v, $b->stats()["second_reads"] - $s0];
}
$p = $srv["port"];

echo "# saved here: the hint's image is the record's tags\n";
tcr_same(true, $b->save("v0", "w", ["A", "B", "C"]), "save w (A, B, C): the first save makes the clean log");
tcr_same("v0", $b->load("w"), "load(w) reads the versions (the save found no log)");
tcr_same(true, $b->save("v1", "x", ["A", "B", "C"]), "save x (A, B, C)");
tcr_same(["v1", 0, 2], load_counted($b, $p, "x"), "load(x): one read of two keys");
tcr_same(["v1", 0, 2], load_counted($b, $p, "x"), "and again");

echo "# another process cleans one of its tags\n";
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", ["B"])), "a child cleaned B");
tcr_same([false, 0], load_second($b, "x"), "load(x) is a miss, from the log read with it");
tcr_same([false, 0], load_second($b, "x"), "and stays one");
tcr_same(true, $b->save("v2", "x", ["A", "B", "C"]), "saved again here");
tcr_same(["v2", 0, 2], load_counted($b, $p, "x"), "load(x) hits");

echo "# another process saves it with the same tags and versions\n";
tcr_same(0, in_child($opts, static fn ($c) => $c->save("v3", "x", ["A", "B", "C"])), "a child saved x (A, B, C)");
tcr_same(["v3", 0, 2], load_counted($b, $p, "x"), "load(x) reads the child's value in one read");

echo "# another process cleans a tag and saves it again: the image's version is old\n";
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", ["C"]) && $c->save("v4", "x", ["A", "B", "C"])),
         "a child cleaned C and saved x (A, B, C)");
tcr_same(["v4", 1, 3], load_counted($b, $p, "x"), "load(x) hits, after a second read for C's new version");
tcr_same(["v4", 0, 2], load_counted($b, $p, "x"), "then one read: the image took the new version");
tcr_same(true, $b->save("w", "y", ["C"]), "another entry of C, saved here");
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", ["C"])), "a child cleaned C again");
tcr_same([false, 0], load_second($b, "x"), "load(x) is a miss");
tcr_same([false, 0], load_second($b, "y"), "load(y) is a miss");

echo "# the same tags in another order, or other tags\n";
tcr_same(0, in_child($opts, static fn ($c) => $c->save("v5", "x", ["C", "B", "A"])), "a child saved x (C, B, A)");
tcr_same("v5", $b->load("x"), "load(x)");
tcr_same(["v5", 0, 2], load_counted($b, $p, "x"), "then one read");
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", ["A"])), "a child cleaned A");
tcr_same([false, 0], load_second($b, "x"), "load(x) is a miss");
tcr_same(0, in_child($opts, static fn ($c) => $c->save("v6", "x", ["D"])), "a child saved x (D)");
tcr_same("v6", $b->load("x"), "load(x)");
tcr_same(["v6", 0, 2], load_counted($b, $p, "x"), "then one read");
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", ["D"])), "a child cleaned D");
tcr_same([false, 0], load_second($b, "x"), "load(x) is a miss");
tcr_same(0, in_child($opts, static fn ($c) => $c->save("v7", "x", [])), "a child saved x with no tags");
tcr_same("v7", $b->load("x"), "load(x)");
tcr_same(["v7", 0, 2], load_counted($b, $p, "x"), "then one read");
tcr_same(0, in_child($opts, static fn ($c) => $c->clean("all")), "a child cleaned all");
tcr_same([false, 0], load_second($b, "x"), "load(x) is a miss");

echo "# a long tag, and versions forgotten (more cleans than the log holds): the hint asks for them\n";
$long = str_repeat("L", 300);
tcr_same(true, $b->save("z", "z", [$long, "E"]), "save z (a tag of 300 bytes, E)");
tcr_same(["z", 0, 2], load_counted($b, $p, "z"), "load(z)");
// One clean in 8 trims the log, at random, and any clean of 8 tags or
// more does: the last clean, of 8 tags, makes the gap certain (the log
// then keeps the last 32 of the 68 hashes appended since this process
// read it), where 60 single cleans left it to chance (about 1 run in 40
// had no trim late enough, and load(z) found no gap).
tcr_same(0, in_child($opts, static function ($c) {
    for ($i = 0; $i < 60; $i++) {
        if (!$c->clean("matchingAnyTag", ["OTHER$i"])) {
            return false;
        }
    }
    return $c->clean("matchingAnyTag", ["OTHER60", "OTHER61", "OTHER62", "OTHER63", "OTHER64", "OTHER65", "OTHER66", "OTHER67"]);
}), "a child cleaned 60 other tags, then 8 in one clean (which trims the log)");
tcr_same(true, $b->save("q", "q", ["F"]), "save q (F): its read of the log finds the gap, every cached version is forgotten");
tcr_same(["z", 0, 4], load_counted($b, $p, "z"), "load(z): one read of the entry, the log and both tags' versions, from the hint");
tcr_same(["z", 0, 2], load_counted($b, $p, "z"), "then of two keys");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# saved here: the hint's image is the record's tags
ok: save w (A, B, C): the first save makes the clean log
ok: load(w) reads the versions (the save found no log)
ok: save x (A, B, C)
ok: load(x): one read of two keys
ok: and again
# another process cleans one of its tags
ok: a child cleaned B
ok: load(x) is a miss, from the log read with it
ok: and stays one
ok: saved again here
ok: load(x) hits
# another process saves it with the same tags and versions
ok: a child saved x (A, B, C)
ok: load(x) reads the child's value in one read
# another process cleans a tag and saves it again: the image's version is old
ok: a child cleaned C and saved x (A, B, C)
ok: load(x) hits, after a second read for C's new version
ok: then one read: the image took the new version
ok: another entry of C, saved here
ok: a child cleaned C again
ok: load(x) is a miss
ok: load(y) is a miss
# the same tags in another order, or other tags
ok: a child saved x (C, B, A)
ok: load(x)
ok: then one read
ok: a child cleaned A
ok: load(x) is a miss
ok: a child saved x (D)
ok: load(x)
ok: then one read
ok: a child cleaned D
ok: load(x) is a miss
ok: a child saved x with no tags
ok: load(x)
ok: then one read
ok: a child cleaned all
ok: load(x) is a miss
# a long tag, and versions forgotten (more cleans than the log holds): the hint asks for them
ok: save z (a tag of 300 bytes, E)
ok: load(z)
ok: a child cleaned 60 other tags, then 8 in one clean (which trims the log)
ok: save q (F): its read of the log finds the gap, every cached version is forgotten
ok: load(z): one read of the entry, the log and both tags' versions, from the hint
ok: then of two keys
