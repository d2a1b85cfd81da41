--TEST--
an evicted version or clean log: never a wrong answer; read anew where not cached, and a clean still invalidates
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
$opts = ["timeout" => 10, "read_timeout" => 30, "servers" => "127.0.0.1:$p", "prefix" => "ev:"];
$b = new TagCache\Memcached($opts);
// hint_memory 0: no hints and no cached versions, every version read
$nc = new TagCache\Memcached($opts + ["hint_memory" => 0]);
$b->save("a", "A", ["T1", "T2"]);
$b->save("b", "B", ["T2"]);
$b->save("c", "C");
tcr_same(["a", "b", "c"], [$b->load("A"), $b->load("B"), $b->load("C")], "all three load");
tcr_same("DELETED\r\n", tcm_cmd($p, "delete ev:t:T1"), "the version key of T1 is gone (as an eviction would do)");
tcr_same(false, $nc->load("A"), "A (tagged T1) is a miss where versions are read, not cached");
tcr_same(false, $nc->getMetadatas("A"), "getMetadatas(A) is false there");
tcr_same("a", $b->load("A"), "where T1's version is cached, A loads: no clean of T1 since");
tcr_same("b", $nc->load("B"), "B (not tagged T1) still loads");
$nc->save("a2", "A", ["T1"]);
tcr_same("a2", $nc->load("A"), "a new save of A with T1 loads (T1 has a new version)");
tcr_same("a2", $b->load("A"), "and where the old version was cached: it differs, so it is read again");
tcr_same(true, $nc->clean("matchingAnyTag", ["T1"]), "clean(T1)");
tcr_same([false, false], [$b->load("A"), $nc->load("A")], "A is a miss everywhere");
$b->save("a3", "A", ["T1"]);
/* A write of the log that is not a clean (an eviction, a flush, another
 * program) does not wait out the readers' leases on the log: a process sees
 * it once the lease it took at its last read of the log ran out (1 ms). */
function until_miss(TagCache\Memcached $b, string $id): bool
{
    $end = microtime(true) + 10;
    while ($b->load($id) !== false) {
        if (microtime(true) > $end) {
            return false;
        }
    }
    return true;
}
tcr_same("DELETED\r\n", tcm_cmd($p, "delete ev:c"), "the clean log (the namespace's epoch) is gone");
tcr_same(true, until_miss($b, "C"), "C is a miss once this process's lease on the log ran out");
tcr_same([false, false, false], [$b->load("A"), $b->load("B"), $b->load("C")], "every entry of the namespace is a miss");
tcr_same([false, false], [$nc->load("A"), $nc->load("B")], "for every instance");
$b->save("c2", "C");
tcr_same("c2", $b->load("C"), "saves work again");
tcr_same("c2", $nc->load("C"), "for every instance");
tcr_same("STORED\r\n", tcm_cmd($p, "set ev:c 0 0 5\r\nhello"), "another program wrote the log's key");
tcr_same(true, until_miss($b, "C"), "C is a miss once the lease ran out");
tcr_same(false, $b->load("C"), "a log that is not ours: a miss");
$b->save("c3", "C", ["T2"]);
tcr_same("c3", $b->load("C"), "a save makes a new log");
tcr_same(true, $b->clean("matchingAnyTag", ["T2"]), "clean(T2)");
tcr_same(false, $b->load("C"), "which cleans invalidate");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: all three load
ok: the version key of T1 is gone (as an eviction would do)
ok: A (tagged T1) is a miss where versions are read, not cached
ok: getMetadatas(A) is false there
ok: where T1's version is cached, A loads: no clean of T1 since
ok: B (not tagged T1) still loads
ok: a new save of A with T1 loads (T1 has a new version)
ok: and where the old version was cached: it differs, so it is read again
ok: clean(T1)
ok: A is a miss everywhere
ok: the clean log (the namespace's epoch) is gone
ok: C is a miss once this process's lease on the log ran out
ok: every entry of the namespace is a miss
ok: for every instance
ok: saves work again
ok: for every instance
ok: another program wrote the log's key
ok: C is a miss once the lease ran out
ok: a log that is not ours: a miss
ok: a save makes a new log
ok: clean(T2)
ok: which cleans invalidate
