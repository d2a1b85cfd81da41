--TEST--
The lease on the clean log (300 ms here: TAGCACHE_TEST_MEMCACHED_LEASE_MS): process A loads an entry in a loop, within its lease (the entry key alone); process B cleans the entry's tag (then, in a second round, everything) and tells A when clean() returned; A's first load after that is a miss, because a clean returns only once every reader's lease taken before it ran out
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
$srv = tcm_start("lease");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "le:"];

/* One byte from $s, waiting at most 60 s; "" when none came. */
function recv_byte($s): string
{
    $r = [$s];
    $w = $e = null;
    if (stream_select($r, $w, $e, 60) !== 1) {
        return "";
    }
    return (string)fread($s, 1);
}

/*
 * A (a child) loads x until it has loaded it within its lease (the entry
 * key alone) and says "w"; it goes on loading x (its lease stays fresh,
 * renewed each time it runs out) until B says "c" (clean() has returned),
 * then loads x once and reports what that load returned. B (this process)
 * cleans between "w" and "c". While B's clean waits out the leases, A's
 * lease runs out and A may well see the miss before "c": that is allowed
 * (the clean has been applied), a hit after "c" is not. Without the
 * clean's wait, A's load after "c" is within the lease it took before
 * the clean, and hits.
 */
function round_trip(array $opts, callable $clean): array
{
    [$b_end, $a_end] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
    $pid = pcntl_fork();
    if ($pid === 0) {
        fclose($b_end);
        $a = new TagCache\Memcached($opts);
        $out = "A timed out";
        $warm = false;
        $end = microtime(true) + 60;
        stream_set_blocking($a_end, false);
        while (microtime(true) < $end) {
            if (fread($a_end, 1) === "c") {
                $out = var_export($a->load("x"), true);
                break;
            }
            $v = $a->load("x");
            if ($v !== "v" && ($v !== false || !$warm)) {
                $out = "before the clean: " . var_export($v, true);
                break;
            }
            if (!$warm && $a->stats()["lease_loads"] > 0) {
                $warm = true;
                fwrite($a_end, "w");
            }
        }
        stream_set_blocking($a_end, true);
        fwrite($a_end, $out . "\n");
        exit(0);
    }
    fclose($a_end);
    $warm = recv_byte($b_end) === "w";
    $cleaned = $warm && $clean();
    fwrite($b_end, "c");
    $reply = "";
    while (($c = recv_byte($b_end)) !== "" && $c !== "\n") {
        $reply .= $c;
    }
    pcntl_waitpid($pid, $st);
    return [$warm, $cleaned, $reply];
}

$b = new TagCache\Memcached($opts);

echo "# clean(matchingAnyTag, [T])\n";
tcr_same(true, $b->save("v", "x", ["T", "U"]), "save x (T, U)");
tcr_same([true, true, "false"], round_trip($opts, static fn () => $b->clean("matchingAnyTag", ["T"])),
         "A was within its lease, B cleaned T, A's first load after clean() returned is a miss");

echo "# clean(all)\n";
tcr_same(true, $b->save("v", "x", ["T"]), "save x (T) again");
tcr_same([true, true, "false"], round_trip($opts, static fn () => $b->clean("all")),
         "A was within its lease, B cleaned all, A's first load after clean() returned is a miss");

echo "# B's own load after its clean\n";
tcr_same(true, $b->save("v", "y", ["T"]), "save y (T)");
tcr_same("v", $b->load("y"), "load y");
$l0 = $b->stats()["lease_loads"];
tcr_same("v", $b->load("y"), "load y again");
tcr_same(1, $b->stats()["lease_loads"] - $l0, "within B's lease: the entry alone");
tcr_same(true, $b->clean("matchingAnyTag", ["U"]), "B cleans U (not y's tag)");
$l0 = $b->stats()["lease_loads"];
tcr_same("v", $b->load("y"), "y still loads");
tcr_same(0, $b->stats()["lease_loads"] - $l0, "with the log read (the clean waited out the lease, and dropped it)");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# clean(matchingAnyTag, [T])
ok: save x (T, U)
ok: A was within its lease, B cleaned T, A's first load after clean() returned is a miss
# clean(all)
ok: save x (T) again
ok: A was within its lease, B cleaned all, A's first load after clean() returned is a miss
# B's own load after its clean
ok: save y (T)
ok: load y
ok: load y again
ok: within B's lease: the entry alone
ok: B cleans U (not y's tag)
ok: y still loads
ok: with the log read (the clean waited out the lease, and dropped it)
