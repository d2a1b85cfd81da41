--TEST--
Shm: a writer SIGKILLed mid-save or mid-clean leaves old or new values only, with matching tags, and a consistent segment
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
tc_remove_segments('103');

// Checker run in a fresh process after each crash: what it reads must be an exact
// old or new value; the tags of an entry must be those of the value it holds.
const CHECK_SAVE = '
    $c = new TagCache\Shm($P["opts"]);
    $r = ["problems" => []];
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
        if ($l !== false && $l !== $v) {
            $r["problems"][] = "$id: neither its value nor a miss";
        }
    }
    foreach ($c->getIdsMatchingTags(["ty"]) as $id) {
        if ($c->load($id) === false) {
            $r["problems"][] = "$id listed under tag ty but missing";
        }
    }
    $r["what"] = $what;
    $r["verify"] = $c->verify();
    $r["save"] = $c->save("final", "X", ["C"], null) && $c->save("zz", "Z", ["C"], null);
    $ids = $c->getIdsMatchingTags(["C"]);
    sort($ids);
    $r["later"] = $r["save"] && $c->load("X") === "final" && $c->load("Z") === "zz" && $ids === ["X", "Z"]
        && $c->getIdsMatchingTags(["A"]) === [] && $c->getIdsMatchingTags(["B"]) === [];
    $r["verify2"] = $c->verify();
    tc_result($r);
';

foreach (['save_unpublished', 'save_publishing'] as $point) {
    foreach (['grow' => [5000, 70000], 'same' => [5000, 5000]] as $variant => [$lenOld, $lenNew]) {
        $name = "$point/$variant";
        $opts = ['segment' => tc_seg('103', "_{$point}_$variant"), 'size' => '2M', 'lock_timeout' => 3];
        $P = ['opts' => $opts, 'old' => tc_mkval('X', 1, 1, $lenOld), 'new' => tc_mkval('X', 2, 2, $lenNew), 'ys' => []];
        $c = new TagCache\Shm($opts);
        $c->save($P['old'], 'X', ['A'], null);
        for ($i = 0; $i < 10; $i++) {
            $P['ys']["y$i"] = tc_mkval("y$i", 1, $i, 100 + 300 * $i);
            $c->save($P['ys']["y$i"], "y$i", ['ty'], null);
        }
        $setup = $c->load('X') === $P['old'] && count($c->getIds()) === 11;
        unset($c);

        $h = tc_run_php('
            $c = new TagCache\Shm($P["opts"]);
            echo "saving\n";
            $s = $c->save($P["new"], "X", ["B"], null);
            tc_result(["survived" => true, "save" => $s]);
        ', $P, ['TAGCACHE_TEST_CRASH' => $point, 'TAGCACHE_TEST_CRASH_AFTER' => '1']);
        tc_check("$name: child killed by SIGKILL in save()", $setup && $h['signal'] === 9 && strpos($h['out'], 'saving') !== false, tc_describe($h));

        $h = tc_run_php(CHECK_SAVE, $P, [], 30);
        $r = $h['result'];
        tc_check("$name: checker ran", tc_ok($h), tc_describe($h));
        tc_check("$name: old value, new value or miss, tags agree", tc_ok($h) && $r['problems'] === [], $r['problems'] ?? null);
        tc_check("$name: verify() empty after the crash", tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);
        tc_check("$name: later saves and loads work", tc_ok($h) && $r['later'] === true && $r['verify2'] === [], $r);
    }
}

// clean() by tag killed after it unlinked the first entry.
$name = 'clean_tag';
$opts = ['segment' => tc_seg('103', '_clean_tag'), 'size' => '2M', 'lock_timeout' => 3];
$P = ['opts' => $opts, 'cs' => [], 'zs' => []];
$c = new TagCache\Shm($opts);
for ($i = 0; $i < 12; $i++) {
    $P['cs']["c$i"] = tc_mkval("c$i", 1, $i, 200 + 500 * $i);
    $c->save($P['cs']["c$i"], "c$i", $i % 2 ? ['T'] : ['T', 'U'], null);
}
for ($i = 0; $i < 5; $i++) {
    $P['zs']["z$i"] = tc_mkval("z$i", 1, $i, 1000);
    $c->save($P['zs']["z$i"], "z$i", ['other'], null);
}
$setup = count($c->getIdsMatchingTags(['T'])) === 12;
unset($c);
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    echo "cleaning\n";
    $s = $c->clean("matchingTag", ["T"]);
    tc_result(["survived" => true, "clean" => $s]);
', $P, ['TAGCACHE_TEST_CRASH' => 'clean_tag', 'TAGCACHE_TEST_CRASH_AFTER' => '1']);
tc_check("$name: child killed by SIGKILL in clean()", $setup && $h['signal'] === 9 && strpos($h['out'], 'cleaning') !== false, tc_describe($h));

$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    $r = ["problems" => []];
    foreach ($P["cs"] + $P["zs"] as $id => $v) {
        $l = $c->load($id);
        if ($l !== false && $l !== $v) {
            $r["problems"][] = "$id: neither its value nor a miss: " . json_encode(tc_checkval($l, $id));
        }
        $m = $c->getMetadatas($id);
        if (($l === false) !== ($m === false)) {
            $r["problems"][] = "$id: load and getMetadatas disagree";
        }
    }
    foreach (["T", "U", "other"] as $t) {
        foreach ($c->getIdsMatchingTags([$t]) as $id) {
            if ($c->load($id) === false) {
                $r["problems"][] = "$id listed under tag $t but missing";
            }
        }
    }
    foreach ($c->getIds() as $id) {
        if (!isset($P["cs"][$id]) && !isset($P["zs"][$id])) {
            $r["problems"][] = "unknown id $id";
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
    $r["save"] = $c->save("n", "n1", ["T"], null);
    $r["later"] = $r["save"] && $c->load("n1") === "n" && $c->getIdsMatchingTags(["T"]) === ["n1"];
    $r["verify2"] = $c->verify();
    tc_result($r);
', $P, [], 30);
$r = $h['result'];
tc_check("$name: checker ran", tc_ok($h), tc_describe($h));
tc_check("$name: entries are intact or gone, listings agree", tc_ok($h) && $r['problems'] === [], $r['problems'] ?? null);
tc_check("$name: verify() empty after the crash", tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);
tc_check("$name: clean() again removes every tagged entry", tc_ok($h) && $r['clean'] === true && $r['left'] === [] && $r['listed'] === [], $r);
tc_check("$name: later saves work", tc_ok($h) && $r['later'] === true && $r['verify2'] === [], $r);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('103');
?>
--EXPECT--
save_unpublished/grow: child killed by SIGKILL in save(): ok
save_unpublished/grow: checker ran: ok
save_unpublished/grow: old value, new value or miss, tags agree: ok
save_unpublished/grow: verify() empty after the crash: ok
save_unpublished/grow: later saves and loads work: ok
save_unpublished/same: child killed by SIGKILL in save(): ok
save_unpublished/same: checker ran: ok
save_unpublished/same: old value, new value or miss, tags agree: ok
save_unpublished/same: verify() empty after the crash: ok
save_unpublished/same: later saves and loads work: ok
save_publishing/grow: child killed by SIGKILL in save(): ok
save_publishing/grow: checker ran: ok
save_publishing/grow: old value, new value or miss, tags agree: ok
save_publishing/grow: verify() empty after the crash: ok
save_publishing/grow: later saves and loads work: ok
save_publishing/same: child killed by SIGKILL in save(): ok
save_publishing/same: checker ran: ok
save_publishing/same: old value, new value or miss, tags agree: ok
save_publishing/same: verify() empty after the crash: ok
save_publishing/same: later saves and loads work: ok
clean_tag: child killed by SIGKILL in clean(): ok
clean_tag: checker ran: ok
clean_tag: entries are intact or gone, listings agree: ok
clean_tag: verify() empty after the crash: ok
clean_tag: clean() again removes every tagged entry: ok
clean_tag: later saves work: ok
