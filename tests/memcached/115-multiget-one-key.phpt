--TEST--
A multi-get's keys go to libmemcached as one, joined by spaces, when they fit in a key (text protocol): loads, second reads and saves are right on both sides of 250 bytes (tag keys of 249, 250 and 251 bytes joined, prefixes of 118 and 119 bytes), the server still counts each key, a clean still invalidates, and the binary protocol, whose keys are packets of their own, gives the same answers
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
$srv = tcm_start("mgjoin");
$port = $srv["port"];

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

/** [load($id), keys the server was asked for, second reads] */
function load_counted(TagCache\Memcached $b, int $port, string $id): array
{
    $s0 = $b->stats()["second_reads"];
    $g0 = cmd_get($port);
    $v = $b->load($id);
    return [$v, cmd_get($port) - $g0, $b->stats()["second_reads"] - $s0];
}

/** A tag name of $len bytes of [A-Za-z0-9_] (used as is in its key: "<prefix>t:<name>"), told apart by $tag. */
function tag_of(string $tag, int $len): string
{
    return str_pad($tag . "_", $len, "x");
}

foreach (["text" => false, "binary" => true] as $proto => $binary) {
    // a prefix of 2 bytes for each protocol, so that the keys have the lengths below
    $opts = ["read_timeout" => 30, "servers" => "127.0.0.1:$port", "prefix" => $binary ? "b:" : "j:",
        "binary_protocol" => $binary];
    echo "# $proto protocol: a second read of two tag keys of 249, 250 and 251 bytes joined\n";
    // "<p>t:<a>" and "<p>t:<b>", 4 + la and 4 + lb bytes, joined by a space: 9 + la + lb
    foreach ([249 => [120, 120], 250 => [120, 121], 251 => [121, 121]] as $joined => [$la, $lb]) {
        $ta = tag_of("A$joined", $la);
        $tb = tag_of("B$joined", $lb);
        $id = "id-$proto-$joined";
        tcr_same(0, in_child($opts, static fn ($c) => $c->save("v1", $id, [$ta, $tb])), "$joined: a child saved $id");
        $b = new TagCache\Memcached($opts);
        [$v, $keys, $second] = load_counted($b, $port, $id);
        tcr_same("v1", $v, "$joined: loaded in this process, which knew neither its tags nor their versions");
        tcr_same([4, 1], [$keys, $second], "$joined: 4 keys (the entry, the log, then both tags in a second read)");
        [$v, $keys, $second] = load_counted($b, $port, $id);
        tcr_same(["v1", 2, 0], [$v, $keys, $second], "$joined: again, 2 keys (the versions cached)");
        tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", [$tb])), "$joined: a child cleaned the second tag");
        [$v, $keys] = load_counted($b, $port, $id);
        tcr_same([false, 2], [$v, $keys], "$joined: a miss, with the log read with the entry");
        tcr_same(0, in_child($opts, static fn ($c) => $c->save("v2", $id, [$ta, $tb])), "$joined: a child saved it again");
        [$v, $keys, $second] = load_counted($b, $port, $id);
        tcr_same(["v2", 3, 0], [$v, $keys, $second], "$joined: the new value, the cleaned tag's new version asked for with the entry and the log");
        // a save in this process: the log and the versions it has cached
        tcr_same(true, $b->save("v3", $id, [$ta, $tb, tag_of("C$joined", 100)]), "$joined: saved here with a third tag");
        tcr_same(0, in_child($opts, static fn ($c) => $c->load($id) === "v3"), "$joined: a child reads it back");
        tcr_same(0, in_child($opts, static fn ($c) => $c->clean("matchingAnyTag", [tag_of("C$joined", 100)])), "$joined: a child cleaned the third tag");
        tcr_same(false, $b->load($id), "$joined: a miss here");
    }

    echo "# $proto protocol: a load's entry and log keys of 249 and 251 bytes joined (prefixes of 118 and 119 bytes)\n";
    // the entry key is the prefix and 11 characters, the log's the prefix and "c": 2 * plen + 13 joined
    foreach ([118 => 249, 119 => 251] as $plen => $joined) {
        $po = ["prefix" => str_pad($binary ? "b" : "j", $plen - 1, "p") . ":"] + $opts;
        $b = new TagCache\Memcached($po);
        tcr_same(true, $b->save("w1", "x", ["T1", "T2"]), "$joined: saved");
        tcr_same("w1", $b->load("x"), "$joined: loaded");
        [$v, $keys, $second] = load_counted($b, $port, "x");
        tcr_same(["w1", 2, 0], [$v, $keys, $second], "$joined: loaded again, 2 keys");
        tcr_same(0, in_child($po, static fn ($c) => $c->load("x") === "w1"), "$joined: a child reads it");
        tcr_same(true, $b->clean("matchingAnyTag", ["T2"]), "$joined: cleaned by a tag");
        tcr_same(false, $b->load("x"), "$joined: a miss");
        tcr_same(0, in_child($po, static fn ($c) => $c->load("x") === false), "$joined: in a child too");
        tcr_same(true, $b->save("w2", "x", ["T1", "T2"]) && $b->load("x") === "w2", "$joined: saved and loaded again");
    }
}
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# text protocol: a second read of two tag keys of 249, 250 and 251 bytes joined
ok: 249: a child saved id-text-249
ok: 249: loaded in this process, which knew neither its tags nor their versions
ok: 249: 4 keys (the entry, the log, then both tags in a second read)
ok: 249: again, 2 keys (the versions cached)
ok: 249: a child cleaned the second tag
ok: 249: a miss, with the log read with the entry
ok: 249: a child saved it again
ok: 249: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 249: saved here with a third tag
ok: 249: a child reads it back
ok: 249: a child cleaned the third tag
ok: 249: a miss here
ok: 250: a child saved id-text-250
ok: 250: loaded in this process, which knew neither its tags nor their versions
ok: 250: 4 keys (the entry, the log, then both tags in a second read)
ok: 250: again, 2 keys (the versions cached)
ok: 250: a child cleaned the second tag
ok: 250: a miss, with the log read with the entry
ok: 250: a child saved it again
ok: 250: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 250: saved here with a third tag
ok: 250: a child reads it back
ok: 250: a child cleaned the third tag
ok: 250: a miss here
ok: 251: a child saved id-text-251
ok: 251: loaded in this process, which knew neither its tags nor their versions
ok: 251: 4 keys (the entry, the log, then both tags in a second read)
ok: 251: again, 2 keys (the versions cached)
ok: 251: a child cleaned the second tag
ok: 251: a miss, with the log read with the entry
ok: 251: a child saved it again
ok: 251: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 251: saved here with a third tag
ok: 251: a child reads it back
ok: 251: a child cleaned the third tag
ok: 251: a miss here
# text protocol: a load's entry and log keys of 249 and 251 bytes joined (prefixes of 118 and 119 bytes)
ok: 249: saved
ok: 249: loaded
ok: 249: loaded again, 2 keys
ok: 249: a child reads it
ok: 249: cleaned by a tag
ok: 249: a miss
ok: 249: in a child too
ok: 249: saved and loaded again
ok: 251: saved
ok: 251: loaded
ok: 251: loaded again, 2 keys
ok: 251: a child reads it
ok: 251: cleaned by a tag
ok: 251: a miss
ok: 251: in a child too
ok: 251: saved and loaded again
# binary protocol: a second read of two tag keys of 249, 250 and 251 bytes joined
ok: 249: a child saved id-binary-249
ok: 249: loaded in this process, which knew neither its tags nor their versions
ok: 249: 4 keys (the entry, the log, then both tags in a second read)
ok: 249: again, 2 keys (the versions cached)
ok: 249: a child cleaned the second tag
ok: 249: a miss, with the log read with the entry
ok: 249: a child saved it again
ok: 249: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 249: saved here with a third tag
ok: 249: a child reads it back
ok: 249: a child cleaned the third tag
ok: 249: a miss here
ok: 250: a child saved id-binary-250
ok: 250: loaded in this process, which knew neither its tags nor their versions
ok: 250: 4 keys (the entry, the log, then both tags in a second read)
ok: 250: again, 2 keys (the versions cached)
ok: 250: a child cleaned the second tag
ok: 250: a miss, with the log read with the entry
ok: 250: a child saved it again
ok: 250: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 250: saved here with a third tag
ok: 250: a child reads it back
ok: 250: a child cleaned the third tag
ok: 250: a miss here
ok: 251: a child saved id-binary-251
ok: 251: loaded in this process, which knew neither its tags nor their versions
ok: 251: 4 keys (the entry, the log, then both tags in a second read)
ok: 251: again, 2 keys (the versions cached)
ok: 251: a child cleaned the second tag
ok: 251: a miss, with the log read with the entry
ok: 251: a child saved it again
ok: 251: the new value, the cleaned tag's new version asked for with the entry and the log
ok: 251: saved here with a third tag
ok: 251: a child reads it back
ok: 251: a child cleaned the third tag
ok: 251: a miss here
# binary protocol: a load's entry and log keys of 249 and 251 bytes joined (prefixes of 118 and 119 bytes)
ok: 249: saved
ok: 249: loaded
ok: 249: loaded again, 2 keys
ok: 249: a child reads it
ok: 249: cleaned by a tag
ok: 249: a miss
ok: 249: in a child too
ok: 249: saved and loaded again
ok: 251: saved
ok: 251: loaded
ok: 251: loaded again, 2 keys
ok: 251: a child reads it
ok: 251: cleaned by a tag
ok: 251: a miss
ok: 251: in a child too
ok: 251: saved and loaded again
