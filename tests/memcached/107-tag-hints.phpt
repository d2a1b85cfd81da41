--TEST--
Tag hints: a load asks for the entry and its tags' versions in one round trip when the process knows its tags; a wrong or missing hint costs a second read, never a wrong answer
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
$srv = tcm_start("hints");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "h:"];
$b = new TagCache\Memcached($opts);

function in_child(callable $f): int
{
    $pid = pcntl_fork();
    if ($pid === 0) {
        exit($f() ? 0 : 1);
    }
    pcntl_waitpid($pid, $st);
    return pcntl_wifexited($st) ? pcntl_wexitstatus($st) : -1;
}

echo "# the process saved it: one read\n";
$b->save("v1", "x", ["A", "B"]);
$reads = $b->stats()["second_reads"];
tcr_same("v1", $b->load("x"), "load(x)");
tcr_same($reads, $b->stats()["second_reads"], "no second read: the hint named A and B");

echo "# another process changed its tags: the hint is wrong\n";
tcr_same(0, in_child(static function () use ($opts) {
    return (new TagCache\Memcached($opts))->save("v2", "x", ["C"]);
}), "a child saved x with the tag C only");
tcr_same("v2", $b->load("x"), "load(x) reads the child's value");
tcr_same($reads + 1, $b->stats()["second_reads"], "after a second read for the tag it really has");
tcr_same(true, $b->clean("matchingAnyTag", ["A"]), "clean(A)");
tcr_same("v2", $b->load("x"), "x no longer has A: it stays");
tcr_same($reads + 1, $b->stats()["second_reads"], "and the hint now names C: one read");

echo "# another process cleaned its tag: the version read with the entry says so\n";
tcr_same(0, in_child(static function () use ($opts) {
    return (new TagCache\Memcached($opts))->clean("matchingAnyTag", ["C"]);
}), "a child cleaned C");
tcr_same(false, $b->load("x"), "load(x) is a miss");
tcr_same($reads + 1, $b->stats()["second_reads"], "found in the one read");

echo "# unknown to this process: a second read\n";
tcr_same(0, in_child(static function () use ($opts) {
    return (new TagCache\Memcached($opts))->save("v3", "y", ["D", "E"]);
}), "a child saved y with D and E");
tcr_same("v3", $b->load("y"), "load(y)");
tcr_same($reads + 2, $b->stats()["second_reads"], "a second read, once");
tcr_same("v3", $b->load("y"), "load(y) again");
tcr_same($reads + 2, $b->stats()["second_reads"], "then one read");
tcr_same(0, in_child(static function () use ($opts) {
    return (new TagCache\Memcached($opts))->clean("matchingAnyTag", ["E"]);
}), "a child cleaned E");
tcr_same(false, $b->load("y"), "load(y) is a miss");

echo "# no tags: one read, no hint needed\n";
$b->save("plain", "z", []);
tcr_same("plain", $b->load("z"), "load(z)");
tcr_same($reads + 2, $b->stats()["second_reads"], "no second read");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# the process saved it: one read
ok: load(x)
ok: no second read: the hint named A and B
# another process changed its tags: the hint is wrong
ok: a child saved x with the tag C only
ok: load(x) reads the child's value
ok: after a second read for the tag it really has
ok: clean(A)
ok: x no longer has A: it stays
ok: and the hint now names C: one read
# another process cleaned its tag: the version read with the entry says so
ok: a child cleaned C
ok: load(x) is a miss
ok: found in the one read
# unknown to this process: a second read
ok: a child saved y with D and E
ok: load(y)
ok: a second read, once
ok: load(y) again
ok: then one read
ok: a child cleaned E
ok: load(y) is a miss
# no tags: one read, no hint needed
ok: load(z)
ok: no second read
