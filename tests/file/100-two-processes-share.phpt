--TEST--
File: separate processes share one directory both ways; another directory or prefix is isolated; no file per entry
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
$base = tc_make_tmpdir('f100');
$a = ['cache_dir' => "$base/a"];

$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    for ($i = 0; $i < 2000; $i++) {
        $ok = $ok && $c->save("value $i", "k$i", ["all", "t" . ($i % 10)], null);
    }
    tc_result($ok);
', ['opts' => $a]);
tc_check('process 1 saves 2000 entries', tc_ok($h) && $h['result'] === true, tc_describe($h));

$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    for ($i = 0; $i < 2000; $i++) {
        $ok = $ok && $c->load("k$i") === "value $i";
    }
    $t3 = $c->getIdsMatchingTags(["t3"]);
    $r = ["loads" => $ok, "t3" => count($t3), "all" => count($c->getIds())];
    $r["clean"] = $c->clean("matchingAnyTag", ["t3"]);
    $r["save"] = $c->save("from 2", "p2", ["p2"], null);
    tc_result($r);
', ['opts' => $a]);
tc_check('process 2 reads them all, with their tags', tc_ok($h) && $h['result']['loads'] === true && $h['result']['t3'] === 200
    && $h['result']['all'] === 2000, tc_describe($h));

$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["p2" => $c->load("p2"), "t3" => $c->getIdsMatchingTags(["t3"]), "k3" => $c->load("k3"), "k4" => $c->load("k4"),
        "n" => count($c->getIds()), "verify" => $c->verify()]);
', ['opts' => $a]);
tc_check('process 3 sees what process 2 saved and cleaned', tc_ok($h) && $h['result'] === ['p2' => 'from 2', 't3' => [],
    'k3' => false, 'k4' => 'value 4', 'n' => 1801, 'verify' => []], tc_describe($h));

$files = tcf_ls("$base/a");
tc_check('2000 entries, no file per entry: an index and a few logs', count($files) <= 4 && tcf_only_store_files("$base/a"), $files);

$h = tcf_run_php('
    $b = new TagCache\File(["cache_dir" => $P["b"]]);
    $p = new TagCache\File(["cache_dir" => $P["a"], "file_name_prefix" => "other"]);
    tc_result([$b->load("k4"), $b->getIds(), $p->load("k4"), $p->getIds(), $p->save("x", "k4") && $p->load("k4") === "x"]);
', ['a' => "$base/a", 'b' => "$base/b"]);
tc_check('another directory, or another prefix in the same directory, is another store', tc_ok($h)
    && $h['result'] === [false, [], false, [], true], tc_describe($h));
$c = new TagCache\File($a);
tc_check('... and the first store is unchanged by it', $c->load('k4') === 'value 4');
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f100');
?>
--EXPECT--
process 1 saves 2000 entries: ok
process 2 reads them all, with their tags: ok
process 3 sees what process 2 saved and cleaned: ok
2000 entries, no file per entry: an index and a few logs: ok
another directory, or another prefix in the same directory, is another store: ok
... and the first store is unchanged by it: ok
