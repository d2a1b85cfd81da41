--TEST--
File: saves with thousands of short tags (up to the 4,096 limit) succeed, again and again, and every other entry stays; a save that cannot fit fails cleanly without rebuilding (issue 11 item 3)
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
$base = tc_make_tmpdir('f115');
$opts = ['cache_dir' => "$base/store", 'max_size' => '64M', 'lock_timeout' => 10];
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["others" => true, "saves" => [], "errors" => []];
    for ($i = 0; $i < 50; $i++) {
        $r["others"] = $c->save("other$i", "other$i", ["o"], false) && $r["others"];
    }
    // the limit: 4,096 tags
    $tags = [];
    for ($j = 0; $j < 4096; $j++) {
        $tags[] = "a$j";
    }
    try {
        $r["max"] = $c->save("max", "max", $tags, false);
    } catch (Throwable $e) {
        $r["max"] = $e->getMessage();
    }
    $m = $c->getMetadatas("max");
    $r["max_tags"] = $m === false ? null : count($m["tags"]);
    $r["max_listed"] = $c->getIdsMatchingTags(["a4095"]) === ["max"] && $c->getIdsMatchingTags(["a0", "a2048"]) === ["max"];
    // six more saves of 4,096 new short tags each
    for ($k = 0; $k < 6; $k++) {
        $tags = [];
        for ($j = 0; $j < 4096; $j++) {
            $tags[] = "k{$k}_$j";
        }
        try {
            $r["saves"][] = $c->save("many$k", "many$k", $tags, false);
        } catch (Throwable $e) {
            $r["saves"][] = false;
            $r["errors"][] = $e->getMessage();
        }
    }
    $lost = [];
    for ($i = 0; $i < 50; $i++) {
        if ($c->load("other$i") !== "other$i") {
            $lost[] = "other$i";
        }
    }
    for ($k = 0; $k < 6; $k++) {
        if ($c->load("many$k") !== "many$k" || $c->getIdsMatchingTags(["k{$k}_4095"]) !== ["many$k"]) {
            $lost[] = "many$k";
        }
    }
    $r["lost"] = $lost;
    $r["o"] = count($c->getIdsMatchingTags(["o"]));
    $st = $c->stats();
    $r["logs"] = $st["logs"];
    $r["rebuilds"] = $st["rebuilds"];
    $r["verify"] = $c->verify();
    tc_result($r);
', ['opts' => $opts], [], 120);
$r = $h['result'];
tc_check('setup: 50 other entries', tc_ok($h) && $r['others'] === true, tc_describe($h));
tc_check('a save with 4,096 tags succeeds, carries and is listed under all of them', tc_ok($h) && $r['max'] === true && $r['max_tags'] === 4096 && $r['max_listed'] === true, [$r['max'] ?? null, $r['max_tags'] ?? null]);
tc_check('six more saves of 4,096 short tags each succeed', tc_ok($h) && $r['saves'] === array_fill(0, 6, true), [$r['saves'] ?? null, $r['errors'] ?? null]);
tc_check('every entry is still there, listed under its tags', tc_ok($h) && $r['lost'] === [] && $r['o'] === 50, $r['lost'] ?? null);
tc_check('the index grew in a few rebuilds, without piling up logs', tc_ok($h) && $r['rebuilds'] <= 12 && $r['logs'] <= 3, [$r['rebuilds'] ?? null, $r['logs'] ?? null]);
tc_check('verify() finds nothing wrong', tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);

// A save that cannot fit (4,096 tags of 1,000 bytes: a 4 MB record, more
// than half of max_size) fails with an error, no rebuild, nothing else lost.
$opts = ['cache_dir' => "$base/small", 'max_size' => '4M', 'lock_timeout' => 10];
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    for ($i = 0; $i < 50; $i++) {
        $ok = $c->save("other$i", "other$i", ["o"], false) && $ok;
    }
    $before = $c->stats()["rebuilds"];
    $tags = [];
    for ($j = 0; $j < 4096; $j++) {
        $tags[] = sprintf("%04d", $j) . str_repeat("t", 996);
    }
    $err = "";
    try {
        $s = $c->save("huge", "huge", $tags, false);
    } catch (Throwable $e) {
        $s = false;
        $err = $e->getMessage();
    }
    $kept = 0;
    for ($i = 0; $i < 50; $i++) {
        $kept += $c->load("other$i") === "other$i";
    }
    tc_result(["ok" => $ok, "save" => $s, "err" => $err, "kept" => $kept, "huge" => $c->load("huge"),
        "rebuilds" => $c->stats()["rebuilds"] - $before, "verify" => $c->verify()]);
', ['opts' => $opts], [], 60);
$r = $h['result'];
tc_check('a save that cannot fit fails, every other entry intact, no rebuild', tc_ok($h) && $r['ok'] === true && $r['save'] === false
    && $r['kept'] === 50 && $r['huge'] === false && $r['rebuilds'] === 0 && $r['verify'] === [], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f115');
?>
--EXPECT--
setup: 50 other entries: ok
a save with 4,096 tags succeeds, carries and is listed under all of them: ok
six more saves of 4,096 short tags each succeed: ok
every entry is still there, listed under its tags: ok
the index grew in a few rebuilds, without piling up logs: ok
verify() finds nothing wrong: ok
a save that cannot fit fails, every other entry intact, no rebuild: ok
