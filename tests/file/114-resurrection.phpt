--TEST--
File: nothing removed comes back: a damaged newest record of an id is its deletion for a rebuild (not its older record), and a log whose header is damaged never makes older records valid again (issue 11 item 2)
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
$base = tc_make_tmpdir('f114');

// Every access happens in a child; the test process damages the files in between.

// 1. OLD with tag T, NEW with tag U for the same id, clean T; one byte of
// NEW's value flipped; 2,000 other ids saved (the index grows: rebuilds).
$opts = ['cache_dir' => "$base/value", 'max_size' => '32M'];
$P = ['opts' => $opts, 'old' => tc_mkval('X', 1, 1, 3000), 'new' => tc_mkval('X', 2, 2, 3000)];
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result($c->save($P["old"], "X", ["T"], false) && $c->save($P["new"], "X", ["U"], false)
        && $c->clean("matchingTag", ["T"]) && $c->load("X") === $P["new"]);
', $P);
$logs = tcf_logs($opts['cache_dir']);
$off = $logs ? tcf_find_record(end($logs), 'X', $P['new']) : null;
tc_check('value: setup', tc_ok($h) && $h['result'] === true && $off !== null, [tc_describe($h), $off]);
if ($off !== null) {
    tcf_flip(end($logs), $off + 48 + 1 + 2 + 1 + 100);  // key "X", one tag "U": inside the value
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    for ($i = 0; $i < 2000; $i++) {
        $ok = $c->save("v$i", "other$i", ["o" . ($i % 7)], false) && $ok;
    }
    $l = $c->load("X");
    $st = $c->stats();
    tc_result(["saved" => $ok, "x" => $l === false ? "miss" : ($l === $P["old"] ? "OLD" : ($l === $P["new"] ? "new" : "other")),
        "T" => $c->getIdsMatchingTags(["T"]), "U" => $c->getIdsMatchingTags(["U"]), "rebuilds" => $st["rebuilds"],
        "o" => $c->load("other1999") === "v1999", "verify" => $c->verify()]);
', $P, [], 120);
$r = $h['result'];
tc_check('value: the 2,000 saves worked and the index was rebuilt', tc_ok($h) && $r['saved'] === true && $r['rebuilds'] >= 2 && $r['o'] === true, tc_describe($h));
tc_check('value: X is a miss, never OLD', tc_ok($h) && $r['x'] === 'miss', $r['x'] ?? null);
tc_check('value: X is listed under no tag, verify() empty', tc_ok($h) && $r['T'] === [] && $r['U'] === [] && $r['verify'] === [], $r);
@unlink("$opts[cache_dir]/tagcache.idx");
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["x" => $c->load("X") === false, "T" => $c->getIdsMatchingTags(["T"]), "verify" => $c->verify()]);
', $P);
tc_check('value: a rebuild from the logs alone (index deleted) agrees', tc_ok($h) && $h['result'] === ['x' => true, 'T' => [], 'verify' => []], tc_describe($h));

// 1b. The same with the byte flipped in NEW's key: the rebuild deletes the
// damaged key, and (the old index still pointing at NEW) the id too.
$opts = ['cache_dir' => "$base/key", 'max_size' => '32M'];
$P = ['opts' => $opts, 'old' => tc_mkval('KEYX', 1, 1, 3000), 'new' => tc_mkval('KEYX', 2, 2, 3000)];
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result($c->save($P["old"], "KEYX", ["T"], false) && $c->save($P["new"], "KEYX", ["U"], false)
        && $c->load("KEYX") === $P["new"]);
', $P);
$live = tcf_live_record($opts['cache_dir'], 'KEYX', $P['new']);
tc_check('key: setup', tc_ok($h) && $h['result'] === true && $live !== null, tc_describe($h));
if ($live !== null) {
    tcf_flip($live[0], $live[1] + 48 + 2);  // the key's third byte
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    for ($i = 0; $i < 2000; $i++) {
        $ok = $c->save("v$i", "other$i", ["o" . ($i % 7)], false) && $ok;
    }
    $l = $c->load("KEYX");
    tc_result(["saved" => $ok, "x" => $l === false ? "miss" : ($l === $P["old"] ? "OLD" : "other"),
        "T" => $c->getIdsMatchingTags(["T"]), "rebuilds" => $c->stats()["rebuilds"], "verify" => $c->verify()]);
', $P, [], 120);
$r = $h['result'];
tc_check('key: the index was rebuilt; the id is a miss, never OLD, under no tag', tc_ok($h) && $r['saved'] === true && $r['rebuilds'] >= 2
    && $r['x'] === 'miss' && $r['T'] === [] && $r['verify'] === [], tc_describe($h));

// 2. The tombstone of a clean lives in a later log than the record it
// removes; one bit of that later log's header is flipped; the index is
// deleted, so the next process rebuilds it from the logs.
foreach (['salt' => 24, 'base' => 16, 'number' => 12, 'check' => 40] as $field => $at) {
    $dir = "$base/header-$field";
    $opts = ['cache_dir' => $dir, 'max_size' => '1M'];
    $P = ['opts' => $opts];
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $ok = $c->save("removed", "X", ["T"], false);
        // past a log (256 KB at this max_size): the next records go to a new log
        for ($i = 0; $i < 30; $i++) {
            $ok = $c->save(str_repeat(chr(97 + $i % 26), 10000), "fill$i", ["F"], false) && $ok;
        }
        for ($i = 0; $i < 5; $i++) {
            $ok = $c->save("live$i", "live$i", ["L"], false) && $ok;
        }
        $ok = $c->clean("matchingTag", ["T"]) && $ok;
        tc_result(["ok" => $ok && $c->load("X") === false, "logs" => $c->stats()["logs"]]);
    ', $P);
    $logs = tcf_logs($dir);
    $two = count($logs) >= 2;
    $last = $two ? end($logs) : null;
    // the tombstone of X is in the last log, the record of X in the first
    $tomb = false;
    if ($two) {
        $b = file_get_contents($last);
        foreach (tcf_records($last) as $o => [$type, $klen]) {
            $tomb = $tomb || ($type === 2 && substr($b, $o + 48, $klen) === 'X');
        }
    }
    tc_check("header $field: setup (X's tombstone in a later log than X)", tc_ok($h) && $h['result']['ok'] === true && $two && $tomb
        && tcf_find_record($logs[0], 'X', 'removed') !== null, [tc_describe($h), $logs, $tomb]);
    if ($two) {
        $f = fopen($last, 'r+b');
        fseek($f, $at);
        $c = fread($f, 1);
        fseek($f, $at);
        fwrite($f, chr(ord($c) ^ 0x10));  // one bit
        fclose($f);
    }
    @unlink("$dir/tagcache.idx");
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $live = 0;
        for ($i = 0; $i < 5; $i++) {
            $live += $c->load("live$i") === "live$i";
        }
        tc_result(["x" => $c->load("X"), "T" => $c->getIdsMatchingTags(["T"]), "ids" => in_array("X", $c->getIds(), true),
            "live" => $live, "verify" => $c->verify(), "later" => $c->save("later", "later", [], false) && $c->load("later") === "later"]);
    ', $P);
    $r = $h['result'];
    tc_check("header $field: the removed entry stays removed (a miss, under no tag)", tc_ok($h) && $r['x'] === false && $r['T'] === [] && $r['ids'] === false, tc_describe($h));
    tc_check("header $field: the live entries of the damaged log are kept, verify() empty, saves work", tc_ok($h) && $r['live'] === 5 && $r['verify'] === [] && $r['later'] === true, $r);
}
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f114');
?>
--EXPECT--
value: setup: ok
value: the 2,000 saves worked and the index was rebuilt: ok
value: X is a miss, never OLD: ok
value: X is listed under no tag, verify() empty: ok
value: a rebuild from the logs alone (index deleted) agrees: ok
key: setup: ok
key: the index was rebuilt; the id is a miss, never OLD, under no tag: ok
header salt: setup (X's tombstone in a later log than X): ok
header salt: the removed entry stays removed (a miss, under no tag): ok
header salt: the live entries of the damaged log are kept, verify() empty, saves work: ok
header base: setup (X's tombstone in a later log than X): ok
header base: the removed entry stays removed (a miss, under no tag): ok
header base: the live entries of the damaged log are kept, verify() empty, saves work: ok
header number: setup (X's tombstone in a later log than X): ok
header number: the removed entry stays removed (a miss, under no tag): ok
header number: the live entries of the damaged log are kept, verify() empty, saves work: ok
header check: setup (X's tombstone in a later log than X): ok
header check: the removed entry stays removed (a miss, under no tag): ok
header check: the live entries of the damaged log are kept, verify() empty, saves work: ok
