--TEST--
File: a writer SIGKILLed mid-write (torn record, written but unpublished, publishing, holding the lock, compacting, cleaning) leaves old values, new values or misses, a consistent index and no stray bytes
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$base = tc_make_tmpdir('f102');

// Checker, in a fresh process after each crash: X must be exactly its old
// value, its new value or a miss, with the tags of that value; the ys are
// their values or misses; the index checks clean; the log files hold no byte
// the index does not account for; later saves work.
const CHECK_SAVE = '
    $c = new TagCache\File($P["opts"]);
    $r = ["problems" => []];
    // a lock-free read before anyone took the lock: the old index
    $l = $c->load("X");
    if ($l !== false && $l !== $P["old"] && $l !== $P["new"]) {
        $r["problems"][] = "load(X) before recovery returned something else: " . json_encode(tc_checkval($l, "X"));
    }
    // verify() takes the lock: the dead writer is noticed and repaired here
    $r["verify"] = $c->verify();
    $l = $c->load("X");
    $what = $l === false ? "miss" : ($l === $P["old"] ? "old" : ($l === $P["new"] ? "new" : "OTHER"));
    if ($what === "OTHER") {
        $r["problems"][] = "load(X) returned something else: " . json_encode(tc_checkval($l, "X"));
    }
    $m = $c->getMetadatas("X");
    $inA = in_array("X", $c->getIdsMatchingTags(["A"]), true);
    $inB = in_array("X", $c->getIdsMatchingTags(["B"]), true);
    $tags = $m === false ? null : $m["tags"];
    $expect = ["miss" => [null, false, false], "old" => [["A"], true, false], "new" => [["B"], false, true]][$what] ?? null;
    if ($expect !== null && [$tags, $inA, $inB] !== $expect) {
        $r["problems"][] = "X is $what but tags/listings disagree: " . json_encode([$tags, $inA, $inB]);
    }
    foreach ($P["ys"] as $id => $v) {
        $l = $c->load($id);
        if ($l !== $v) {
            $r["problems"][] = "$id: not its value";
        }
    }
    $r["what"] = $what;
    $st = $c->stats();
    $sum = 0;
    clearstatcache();
    foreach (tcf_logs($P["opts"]["cache_dir"]) as $f) {
        $sum += filesize($f);
    }
    $r["stray"] = $sum - $st["log_bytes"];
    $r["tmp"] = array_values(array_filter(tcf_ls($P["opts"]["cache_dir"]), fn($e) => str_ends_with($e, ".tmp")));
    $r["recovered"] = $st["lock_recoveries"] + $st["rebuilds"];
    $r["save"] = $c->save("final", "X", ["C"], null) && $c->save("zz", "Z", ["C"], null);
    $ids = $c->getIdsMatchingTags(["C"]);
    sort($ids);
    $r["later"] = $r["save"] && $c->load("X") === "final" && $c->load("Z") === "zz" && $ids === ["X", "Z"]
        && $c->getIdsMatchingTags(["A"]) === [] && $c->getIdsMatchingTags(["B"]) === [];
    $r["verify2"] = $c->verify();
    tc_result($r);
';

$points = ['file_write_torn', 'file_save_unpublished', 'file_save_publishing', 'file_save_locked'];
foreach ($points as $point) {
    foreach (['grow' => [5000, 70000], 'same' => [5000, 5000]] as $variant => [$lenOld, $lenNew]) {
        $name = "$point/$variant";
        $opts = ['cache_dir' => "$base/$point-$variant", 'max_size' => '8M', 'lock_timeout' => 3];
        $P = ['opts' => $opts, 'old' => tc_mkval('X', 1, 1, $lenOld), 'new' => tc_mkval('X', 2, 2, $lenNew), 'ys' => []];
        for ($i = 0; $i < 10; $i++) {
            $P['ys']["y$i"] = tc_mkval("y$i", 1, $i, 100 + 300 * $i);
        }
        $h = tcf_run_php('
            $c = new TagCache\File($P["opts"]);
            $c->save($P["old"], "X", ["A"], null);
            foreach ($P["ys"] as $id => $v) {
                $c->save($v, $id, ["ty"], null);
            }
            tc_result($c->load("X") === $P["old"] && count($c->getIds()) === 11);
        ', $P);
        $setup = tc_ok($h) && $h['result'] === true;

        $h = tcf_run_php('
            $c = new TagCache\File($P["opts"]);
            echo "saving\n";
            $s = $c->save($P["new"], "X", ["B"], null);
            tc_result(["survived" => true, "save" => $s]);
        ', $P, ['TAGCACHE_TEST_CRASH' => $point, 'TAGCACHE_TEST_CRASH_AFTER' => '1']);
        tc_check("$name: child killed by SIGKILL in save()", $setup && $h['signal'] === 9 && strpos($h['out'], 'saving') !== false, tc_describe($h));

        $h = tcf_run_php(CHECK_SAVE, $P, [], 30);
        $r = $h['result'];
        tc_check("$name: checker ran", tc_ok($h), tc_describe($h));
        tc_check("$name: old value, new value or miss, tags agree", tc_ok($h) && $r['problems'] === [], $r['problems'] ?? null);
        tc_check("$name: verify() empty, no stray bytes or temporary files", tc_ok($h) && $r['verify'] === [] && $r['stray'] === 0 && $r['tmp'] === [], $r);
        tc_check("$name: later saves and loads work", tc_ok($h) && $r['later'] === true && $r['verify2'] === [], $r);
        if ($point !== 'file_save_locked' && $point !== 'file_write_torn') {
            // a torn write or an empty critical section may legitimately need no repair
            tc_check("$name: the dead writer was noticed", tc_ok($h) && $r['recovered'] > 1, $r['recovered'] ?? null);
        }
    }
}

// The torn write: the old value stays, and the next writer cuts the torn
// half-record off (the file is no longer than what the index accounts for).
$name = 'file_write_torn/what';
$opts = ['cache_dir' => "$base/torn-what", 'max_size' => '8M', 'lock_timeout' => 3];
$P = ['opts' => $opts, 'old' => tc_mkval('X', 1, 1, 3000), 'new' => tc_mkval('X', 2, 2, 9000)];
$h = tcf_run_php('$c = new TagCache\File($P["opts"]); tc_result($c->save($P["old"], "X", ["A"], null));', $P);
$h2 = tcf_run_php('$c = new TagCache\File($P["opts"]); $c->save($P["new"], "X", ["B"], null); tc_result("survived");',
    $P, ['TAGCACHE_TEST_CRASH' => 'file_write_torn']);
$logs = tcf_logs($opts['cache_dir']);
$torn = $logs ? filesize(end($logs)) : 0;
$h3 = tcf_run_php('$c = new TagCache\File($P["opts"]); tc_result(["v" => $c->load("X") === $P["old"], "verify" => $c->verify()]);', $P);
clearstatcache();
$logs = tcf_logs($opts['cache_dir']);
$sizes = array_map('filesize', $logs);
tc_check("$name: the torn save died with half a record on disk", tc_ok($h) && $h2['signal'] === 9 && $torn > 3000 + 4500, [$torn, tc_describe($h2)]);
tc_check("$name: the old value is read after it", tc_ok($h3) && $h3['result']['v'] === true && $h3['result']['verify'] === [], tc_describe($h3));

// compaction killed after it appended the copies, before it pointed the index at them
$name = 'file_compact';
$opts = ['cache_dir' => "$base/compact", 'max_size' => '2M', 'lock_timeout' => 3];
$valsFile = "$base/compact-vals";
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $vals = [];
    // cold entries, written once: compaction has to copy them forward
    for ($i = 0; $i < 30; $i++) {
        $vals["c$i"] = tc_mkval("c$i", 1, $i, 1000 + $i * 100);
        $c->save($vals["c$i"], "c$i", ["cold"], null);
    }
    for ($i = 0; $i < 400; $i++) {
        $id = "k" . ($i % 20);
        $vals[$id] = tc_mkval($id, 1, $i, 2000 + ($i * 37) % 9000);
        $c->save($vals[$id], $id, ["t" . ($i % 3)], null);
    }
    file_put_contents($P["file"], serialize($vals));
    tc_result(["copied" => $c->stats()["copied"]]);
', ['opts' => $opts, 'file' => $valsFile]);
$h2 = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    echo "saving\n";
    for ($i = 0; $i < 2000; $i++) {
        $c->save(tc_mkval("n" . ($i % 20), 3, $i, 3000), "n" . ($i % 20), ["tn"], null);
    }
    tc_result("survived");
', ['opts' => $opts], ['TAGCACHE_TEST_CRASH' => 'file_compact']);
tc_check("$name: setup compacted, child killed by SIGKILL in a compaction step",
    tc_ok($h) && $h['result']['copied'] > 0 && $h2['signal'] === 9 && strpos($h2['out'], 'saving') !== false,
    [tc_describe($h), tc_describe($h2)]);
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["problems" => [], "missing" => 0];
    foreach (unserialize(file_get_contents($P["file"])) as $id => $v) {
        $l = $c->load($id);
        if ($l !== false && $l !== $v) {
            $r["problems"][] = "$id: neither its value nor a miss";
        }
        $r["missing"] += $l === false;
    }
    foreach ($c->getIds() as $id) {
        $l = $c->load($id);
        if ($l === false || !is_array(tc_checkval($l, $id))) {
            $r["problems"][] = "$id listed but not a whole value of its own";
        }
    }
    $r["verify"] = $c->verify();
    $r["later"] = $c->save("v", "later", ["tl"]) && $c->load("later") === "v";
    tc_result($r);
', ['opts' => $opts, 'file' => $valsFile]);
$r = $h['result'];
tc_check("$name: every value whole (none lost), verify() empty, later saves work",
    tc_ok($h) && $r['problems'] === [] && $r['missing'] === 0 && $r['verify'] === [] && $r['later'] === true, tc_describe($h));

// clean() by tag killed after it removed the first entry
$name = 'file_clean_tag';
$opts = ['cache_dir' => "$base/clean", 'max_size' => '8M', 'lock_timeout' => 3];
$P = ['opts' => $opts, 'cs' => [], 'zs' => []];
for ($i = 0; $i < 12; $i++) {
    $P['cs']["c$i"] = tc_mkval("c$i", 1, $i, 200 + 500 * $i);
}
for ($i = 0; $i < 5; $i++) {
    $P['zs']["z$i"] = tc_mkval("z$i", 1, $i, 1000);
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $i = 0;
    foreach ($P["cs"] as $id => $v) {
        $c->save($v, $id, $i++ % 2 ? ["T"] : ["T", "U"], null);
    }
    foreach ($P["zs"] as $id => $v) {
        $c->save($v, $id, ["other"], null);
    }
    tc_result(count($c->getIdsMatchingTags(["T"])) === 12);
', $P);
$h2 = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    echo "cleaning\n";
    $s = $c->clean("matchingTag", ["T"]);
    tc_result(["survived" => true, "clean" => $s]);
', $P, ['TAGCACHE_TEST_CRASH' => 'file_clean_tag', 'TAGCACHE_TEST_CRASH_AFTER' => '1']);
tc_check("$name: child killed by SIGKILL in clean()", tc_ok($h) && $h['result'] === true && $h2['signal'] === 9
    && strpos($h2['out'], 'cleaning') !== false, tc_describe($h2));
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["problems" => []];
    foreach ($P["cs"] + $P["zs"] as $id => $v) {
        $l = $c->load($id);
        if ($l !== false && $l !== $v) {
            $r["problems"][] = "$id: neither its value nor a miss";
        }
        if (($l === false) !== ($c->getMetadatas($id) === false)) {
            $r["problems"][] = "$id: load and getMetadatas disagree";
        }
    }
    foreach ($P["zs"] as $id => $v) {
        if ($c->load($id) !== $v) {
            $r["problems"][] = "$id (not tagged T) lost";
        }
    }
    foreach (["T", "U", "other"] as $t) {
        foreach ($c->getIdsMatchingTags([$t]) as $id) {
            if ($c->load($id) === false) {
                $r["problems"][] = "$id listed under tag $t but missing";
            }
        }
    }
    $r["verify"] = $c->verify();
    $r["clean"] = $c->clean("matchingTag", ["T"]);
    $left = [];
    foreach ($P["cs"] as $id => $v) {
        if ($c->load($id) !== false) {
            $left[] = $id;
        }
    }
    $r["left"] = $left;
    $r["listed"] = array_merge($c->getIdsMatchingTags(["T"]), $c->getIdsMatchingTags(["U"]));
    $r["verify2"] = $c->verify();
    tc_result($r);
', $P, [], 30);
$r = $h['result'];
tc_check("$name: entries are intact or gone, listings agree", tc_ok($h) && $r['problems'] === [], tc_describe($h));
tc_check("$name: verify() empty after the crash", tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);
tc_check("$name: clean() again removes every tagged entry", tc_ok($h) && $r['clean'] === true && $r['left'] === []
    && $r['listed'] === [] && $r['verify2'] === [], $r);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f102');
?>
--EXPECT--
file_write_torn/grow: child killed by SIGKILL in save(): ok
file_write_torn/grow: checker ran: ok
file_write_torn/grow: old value, new value or miss, tags agree: ok
file_write_torn/grow: verify() empty, no stray bytes or temporary files: ok
file_write_torn/grow: later saves and loads work: ok
file_write_torn/same: child killed by SIGKILL in save(): ok
file_write_torn/same: checker ran: ok
file_write_torn/same: old value, new value or miss, tags agree: ok
file_write_torn/same: verify() empty, no stray bytes or temporary files: ok
file_write_torn/same: later saves and loads work: ok
file_save_unpublished/grow: child killed by SIGKILL in save(): ok
file_save_unpublished/grow: checker ran: ok
file_save_unpublished/grow: old value, new value or miss, tags agree: ok
file_save_unpublished/grow: verify() empty, no stray bytes or temporary files: ok
file_save_unpublished/grow: later saves and loads work: ok
file_save_unpublished/grow: the dead writer was noticed: ok
file_save_unpublished/same: child killed by SIGKILL in save(): ok
file_save_unpublished/same: checker ran: ok
file_save_unpublished/same: old value, new value or miss, tags agree: ok
file_save_unpublished/same: verify() empty, no stray bytes or temporary files: ok
file_save_unpublished/same: later saves and loads work: ok
file_save_unpublished/same: the dead writer was noticed: ok
file_save_publishing/grow: child killed by SIGKILL in save(): ok
file_save_publishing/grow: checker ran: ok
file_save_publishing/grow: old value, new value or miss, tags agree: ok
file_save_publishing/grow: verify() empty, no stray bytes or temporary files: ok
file_save_publishing/grow: later saves and loads work: ok
file_save_publishing/grow: the dead writer was noticed: ok
file_save_publishing/same: child killed by SIGKILL in save(): ok
file_save_publishing/same: checker ran: ok
file_save_publishing/same: old value, new value or miss, tags agree: ok
file_save_publishing/same: verify() empty, no stray bytes or temporary files: ok
file_save_publishing/same: later saves and loads work: ok
file_save_publishing/same: the dead writer was noticed: ok
file_save_locked/grow: child killed by SIGKILL in save(): ok
file_save_locked/grow: checker ran: ok
file_save_locked/grow: old value, new value or miss, tags agree: ok
file_save_locked/grow: verify() empty, no stray bytes or temporary files: ok
file_save_locked/grow: later saves and loads work: ok
file_save_locked/same: child killed by SIGKILL in save(): ok
file_save_locked/same: checker ran: ok
file_save_locked/same: old value, new value or miss, tags agree: ok
file_save_locked/same: verify() empty, no stray bytes or temporary files: ok
file_save_locked/same: later saves and loads work: ok
file_write_torn/what: the torn save died with half a record on disk: ok
file_write_torn/what: the old value is read after it: ok
file_compact: setup compacted, child killed by SIGKILL in a compaction step: ok
file_compact: every value whole (none lost), verify() empty, later saves work: ok
file_clean_tag: child killed by SIGKILL in clean(): ok
file_clean_tag: entries are intact or gone, listings agree: ok
file_clean_tag: verify() empty after the crash: ok
file_clean_tag: clean() again removes every tagged entry: ok
