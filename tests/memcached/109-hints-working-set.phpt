--TEST--
Tag hints are sized by memory (hint_memory, default 8M): a working set of 20,000 tagged ids (10,000 under memcheck: still past the old fixed 8,192, and 8 times 256K) saved by another process is read in one round trip each after one warm-up pass, cleans still invalidate, and a small hint_memory evicts without a wrong answer; a warm load asks for two keys, or for the entry alone within the lease on the clean log (300 ms here: TAGCACHE_TEST_MEMCACHED_LEASE_MS)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
if (!function_exists("pcntl_fork")) die("skip pcntl is not loaded (Debian: php8.2-cli ships it)");
?>
--ENV--
TAGCACHE_TEST_MEMCACHED_LEASE_MS=300
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';
require_once __DIR__ . '/../shm/util.inc';   // tc_fanout()
$srv = tcm_start("hintset");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "w:"];
define('N', tc_fanout(20000, 10000));

function tags_of(int $i): array
{
    // 0..8 tags of a few hundred, as a shop's records have; MAGE on all
    $t = ["MAGE"];
    for ($k = 0; $k < $i % 9; $k++) {
        $t[] = sprintf("TAG_%04d", ($i * 7 + $k * 131) % 500);
    }
    return $t;
}

function in_child(callable $f): int
{
    $pid = pcntl_fork();
    if ($pid === 0) {
        exit($f() ? 0 : 1);
    }
    pcntl_waitpid($pid, $st);
    return pcntl_wifexited($st) ? pcntl_wexitstatus($st) : -1;
}

tcr_same(0, in_child(static function () use ($opts) {
    $b = new TagCache\Memcached($opts);
    for ($i = 0; $i < N; $i++) {
        if (!$b->save("v$i", "id$i", tags_of($i))) {
            return false;
        }
    }
    return true;
}), "a child saved " . N . " tagged ids");

function pass(TagCache\Memcached $b, ?callable $expect = null): array
{
    $s0 = $b->stats()["second_reads"];
    $bad = 0;
    for ($i = 0; $i < N; $i++) {
        $want = $expect ? $expect($i) : "v$i";
        if ($b->load("id$i") !== $want) {
            $bad++;
        }
    }
    return [$bad, $b->stats()["second_reads"] - $s0];
}

$tagged = N;   // MAGE is on every one

echo "# first, in this fresh process, a small hint_memory: evictions, second reads, the right answers\n";
$small = new TagCache\Memcached($opts + ["hint_memory" => "256K"]);
[$bad, $second] = pass($small);
tcr_same(0, $bad, "every id read back");
tcr_same(true, $second > 0 && $second < $tagged / 4, "second reads, far fewer than the ids: a tag's version once read serves its other entries");
[$bad, $second2] = pass($small);
tcr_same(0, $bad, "every id read back again");
$s = $small->stats();
tcr_same(true, $s["hint_evictions"] > 0, "256K cannot hold them: it evicts");
tcr_same(true, $second2 <= $second, "the second pass has no more second reads than the first");
tcr_same(true, $s["hint_bytes"] <= 256 * 1024, "within 256K");

$b = new TagCache\Memcached($opts);
tcr_same("8M", ini_get("tagcache.memcached.hint_memory"), "the default hint_memory");

echo "# warm-up: unknown to this process, so a second read for each tagged id\n";
[$bad, $second] = pass($b);
tcr_same(0, $bad, "every id read back");
tcr_same(true, $second > 0 && $second <= $tagged, "a second read for the ids with tags not hinted yet, once");

$ev0 = $b->stats()["hint_evictions"];
function cmd_get(int $port): int
{
    preg_match('/STAT cmd_get (\d+)/', (string)tcm_cmd($port, "stats"), $m);
    return (int)$m[1];
}

echo "# the working set again: one round trip each\n";
$g0 = cmd_get($srv["port"]);
$l0 = $b->stats()["lease_loads"];
[$bad, $second] = pass($b);
$keys = cmd_get($srv["port"]) - $g0;
$leased = $b->stats()["lease_loads"] - $l0;
tcr_same(0, $bad, "every id read back");
tcr_same(0, $second, "no second read");
tcr_same(2 * N - $leased, $keys, "two keys a load, the entry and the clean log (the tag versions are cached), but one, the entry, within the lease on the log last read");
tcr_check($leased > N / 2, "most loads within the lease (one read of the log in 300 ms)", "$leased of " . N);
$s = $b->stats();
tcr_same($ev0, $s["hint_evictions"], "nothing evicted since the warm-up");
tcr_same(true, $s["hint_entries"] >= $tagged, "the table holds the working set");
tcr_same(true, $s["hint_bytes"] <= 8 * 1024 * 1024, "within 8M");

echo "# another process cleans a tag: found in the same one read\n";
tcr_same(0, in_child(static function () use ($opts) {
    return (new TagCache\Memcached($opts))->clean("matchingAnyTag", ["TAG_0007"]);
}), "a child cleaned TAG_0007");
[$bad, $second] = pass($b, static fn (int $i) => in_array("TAG_0007", tags_of($i), true) ? false : "v$i");
tcr_same(0, $bad, "ids with TAG_0007 miss, the others hit");
tcr_same(0, $second, "still no second read");

echo "# hint_memory 0: no hints, a second read each time, the same answers\n";
$off = new TagCache\Memcached($opts + ["hint_memory" => 0]);
$s0 = $off->stats()["second_reads"];
tcr_same("v2", $off->load("id2"), "load(id2)");
tcr_same("v2", $off->load("id2"), "load(id2) again");
tcr_same($s0 + 2, $off->stats()["second_reads"], "two second reads");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECTF--
ok: a child saved %d tagged ids
# first, in this fresh process, a small hint_memory: evictions, second reads, the right answers
ok: every id read back
ok: second reads, far fewer than the ids: a tag's version once read serves its other entries
ok: every id read back again
ok: 256K cannot hold them: it evicts
ok: the second pass has no more second reads than the first
ok: within 256K
ok: the default hint_memory
# warm-up: unknown to this process, so a second read for each tagged id
ok: every id read back
ok: a second read for the ids with tags not hinted yet, once
# the working set again: one round trip each
ok: every id read back
ok: no second read
ok: two keys a load, the entry and the clean log (the tag versions are cached), but one, the entry, within the lease on the log last read
ok: most loads within the lease (one read of the log in 300 ms)
ok: nothing evicted since the warm-up
ok: the table holds the working set
ok: within 8M
# another process cleans a tag: found in the same one read
ok: a child cleaned TAG_0007
ok: ids with TAG_0007 miss, the others hit
ok: still no second read
# hint_memory 0: no hints, a second read each time, the same answers
ok: load(id2)
ok: load(id2) again
ok: two second reads
