--TEST--
File: a clean of one tag whose index record is damaged (a live count one too low, TAGCACHE_TEST_FILE_DAMAGE=tag_live) rebuilds the index from the logs and still cleans: every entry of the tag gone, the others intact, verify() empty (issue 15)
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
$base = tc_make_tmpdir('f124');
$opts = ['cache_dir' => "$base/store", 'max_size' => '8M'];
$P = ['opts' => $opts];
for ($i = 0; $i < 6; $i++) {
    $P['a']["a$i"] = tc_mkval("a$i", 1, $i, 100 + 40 * $i);
}
$P['b'] = tc_mkval('b', 1, 9, 200);
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = $c->save($P["b"], "b", ["B"], false);
    foreach ($P["a"] as $id => $v) {
        $ok = $c->save($v, $id, ["A", $id === "a0" ? "B" : "C"], false) && $ok;
    }
    tc_result(["ok" => $ok, "rebuilds" => $c->stats()["rebuilds"]]);
', $P);
tc_check('setup', tc_ok($h) && $h['result']['ok'] === true, tc_describe($h));
$before = $h['result']['rebuilds'] ?? null;

$r = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["clean" => $c->clean("matchingAnyTag", ["A"]), "rebuilds" => $c->stats()["rebuilds"],
               "a" => $c->getIdsMatchingAnyTags(["A"]), "ids" => $c->getIds(), "b" => $c->load("b") === $P["b"],
               "tags" => $c->getTags(), "verify" => $c->verify()]);
', $P, ['TAGCACHE_TEST_FILE_DAMAGE' => 'tag_live'], 30);
$res = $r['result'] ?? [];
tc_check('the clean succeeded', tc_ok($r) && ($res['clean'] ?? null) === true, tc_describe($r));
tc_check('the damage was found: the index was rebuilt', $before !== null && ($res['rebuilds'] ?? 0) > $before,
    [$before, $res['rebuilds'] ?? null]);
tc_check('every entry of A gone, b intact', ($res['a'] ?? null) === [] && ($res['ids'] ?? null) === ['b']
    && ($res['b'] ?? null) === true, $res);
tc_check('tags and verify()', ($res['tags'] ?? null) === ['B'] && ($res['verify'] ?? null) === [], $res);

// and another process, from the logs alone (the tombstones), agrees
$r = tcf_run_php('
    unlink($P["opts"]["cache_dir"] . "/tagcache.idx");
    $c = new TagCache\File($P["opts"]);
    tc_result(["ids" => $c->getIds(), "verify" => $c->verify()]);
', $P, [], 30);
tc_check('after a rebuild from the logs: only b', tc_ok($r) && $r['result'] === ['ids' => ['b'], 'verify' => []], tc_describe($r));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f124');
?>
--EXPECT--
setup: ok
the clean succeeded: ok
the damage was found: the index was rebuilt: ok
every entry of A gone, b intact: ok
tags and verify(): ok
after a rebuild from the logs: only b: ok
