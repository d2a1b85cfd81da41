--TEST--
the clean log: cleans by other processes, concurrent (append) or more than the log holds, or clean('all'), make every entry of their tags a miss in a process that caches the tags' versions
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
$srv = tcm_start("cleanlog");
$opts = ["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "prefix" => "cl:"];
$b = new TagCache\Memcached($opts);
const TAGS = 100;

function cmd_get(int $port): int
{
    preg_match('/STAT cmd_get (\d+)/', (string)tcm_cmd($port, "stats"), $m);
    return (int)$m[1];
}

// entry i has the tags T<i> and ALL: cleaning T<i> removes entry i only
function fill(TagCache\Memcached $b): bool
{
    for ($i = 0; $i < TAGS; $i++) {
        if (!$b->save("v$i", "id$i", ["T$i", "ALL"])) {
            return false;
        }
    }
    return true;
}

/** ids that hit with the wrong value, ids that hit though expected to miss */
function check(TagCache\Memcached $b, array $cleaned): array
{
    $wrong = [];
    for ($i = 0; $i < TAGS; $i++) {
        $got = $b->load("id$i");
        $want = isset($cleaned[$i]) ? false : "v$i";
        if ($got !== $want) {
            $wrong[] = $i;
        }
    }
    return $wrong;
}

/** Children that each clean their tags once $go exists; waits for them all. */
function clean_in_children(array $opts, array $perChild, string $go): bool
{
    $pids = [];
    foreach ($perChild as $tags) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $c = new TagCache\Memcached($opts);
            $deadline = microtime(true) + 30;
            while (!file_exists($go) && microtime(true) < $deadline) {
                usleep(1000);
            }
            $ok = true;
            foreach ($tags as $t) {
                $ok = $c->clean("matchingAnyTag", [$t]) && $ok;
            }
            exit($ok ? 0 : 1);
        }
        $pids[] = $pid;
    }
    touch($go);
    $ok = true;
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $st);
        $ok = $ok && pcntl_wifexited($st) && pcntl_wexitstatus($st) === 0;
    }
    unlink($go);
    return $ok;
}

$go = tcr_dir() . "/go";
@mkdir(tcr_dir(), 0700, true);

echo "# warm: every version cached, two keys a load (one within the lease)\n";
tcr_same(true, fill($b), "saved " . TAGS . " entries");
tcr_same([], check($b, []), "all load");
$g0 = cmd_get($srv["port"]);
$l0 = $b->stats()["lease_loads"];
tcr_same([], check($b, []), "all load again");
tcr_same(2 * TAGS, cmd_get($srv["port"]) - $g0 + $b->stats()["lease_loads"] - $l0,
         "two keys a load (one, the entry, within the lease on the log last read)");

echo "# 8 processes clean 5 tags each at once: no clean lost from the log\n";
$per = [];
$cleaned = [];
for ($c = 0; $c < 8; $c++) {
    for ($k = 0; $k < 5; $k++) {
        $per[$c][] = "T" . ($c * 5 + $k);
        $cleaned[$c * 5 + $k] = true;
    }
}
tcr_same(true, clean_in_children($opts, $per, $go), "40 cleans by 8 children");
tcr_same([], check($b, $cleaned), "the 40 cleaned ids miss, the others hit");

echo "# more cleans than the log holds (a gap)\n";
tcr_same(true, fill($b), "saved again");
tcr_same([], check($b, []), "all load");
$per = [[]];
$cleaned = [];
for ($i = 0; $i < 60; $i++) {
    $per[0][] = "T" . (99 - $i);
    $cleaned[99 - $i] = true;
}
tcr_same(true, clean_in_children($opts, $per, $go), "60 cleans by a child");
tcr_same([], check($b, $cleaned), "the 60 cleaned ids miss, the others hit");
foreach (array_keys($cleaned) as $i) {
    $b->save("v$i", "id$i", ["T$i", "ALL"]);   // as the application does after a miss
}
$s0 = $b->stats()["second_reads"];
$g0 = cmd_get($srv["port"]);
$l0 = $b->stats()["lease_loads"];
tcr_same([], check($b, []), "saved again, all load");
tcr_same([$s0, 2 * TAGS], [$b->stats()["second_reads"], cmd_get($srv["port"]) - $g0 + $b->stats()["lease_loads"] - $l0],
         "in one read of two keys each: the versions read after the gap are cached");

echo "# one clean of many tags at once, more than the log holds\n";
tcr_same(true, fill($b), "saved again");
tcr_same([], check($b, []), "all load");
$pid = pcntl_fork();
if ($pid === 0) {
    $tags = [];
    for ($i = 0; $i < 50; $i++) {
        $tags[] = "T$i";
    }
    exit((new TagCache\Memcached($opts))->clean("matchingAnyTag", $tags) ? 0 : 1);
}
pcntl_waitpid($pid, $st);
tcr_same(0, pcntl_wexitstatus($st), "a child cleaned 50 tags in one call");
tcr_same([], check($b, array_fill(0, 50, true)), "the 50 ids miss, the others hit");

echo "# clean('all') in another process\n";
tcr_same(true, fill($b), "saved again");
tcr_same([], check($b, []), "all load");
$pid = pcntl_fork();
if ($pid === 0) {
    exit((new TagCache\Memcached($opts))->clean("all") ? 0 : 1);
}
pcntl_waitpid($pid, $st);
tcr_same(0, pcntl_wexitstatus($st), "a child cleaned all");
tcr_same([], check($b, array_fill(0, TAGS, true)), "every id misses");
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# warm: every version cached, two keys a load (one within the lease)
ok: saved 100 entries
ok: all load
ok: all load again
ok: two keys a load (one, the entry, within the lease on the log last read)
# 8 processes clean 5 tags each at once: no clean lost from the log
ok: 40 cleans by 8 children
ok: the 40 cleaned ids miss, the others hit
# more cleans than the log holds (a gap)
ok: saved again
ok: all load
ok: 60 cleans by a child
ok: the 60 cleaned ids miss, the others hit
ok: saved again, all load
ok: in one read of two keys each: the versions read after the gap are cached
# one clean of many tags at once, more than the log holds
ok: saved again
ok: all load
ok: a child cleaned 50 tags in one call
ok: the 50 ids miss, the others hit
# clean('all') in another process
ok: saved again
ok: all load
ok: a child cleaned all
ok: every id misses
