--TEST--
File: 63 saves killed before publishing (each one an index rebuild) and one normal save: every entry is still there, no log holding live entries is ever unlinked (issue 11 item 1)
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
$base = tc_make_tmpdir('f113');
$opts = ['cache_dir' => "$base/store", 'max_size' => '8M', 'lock_timeout' => 10];
$P = ['opts' => $opts, 'vals' => []];
for ($i = 0; $i < 100; $i++) {
    $P['vals']["e$i"] = tc_mkval("e$i", 1, $i, 200 + 13 * $i);
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    foreach ($P["vals"] as $id => $v) {
        $ok = $c->save($v, $id, ["t" . (strlen($id) % 3)], false) && $ok;
    }
    tc_result($ok);
', $P);
tc_check('setup: 100 entries saved', tc_ok($h) && $h['result'] === true, tc_describe($h));

// Each child dies (SIGKILL) in save() after its record is written and before
// it is published, holding the lock with the index half-changed: the next
// writer rebuilds the index from the logs.
$killed = 0;
for ($k = 0; $k < 63; $k++) {
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $c->save("crash", "crash" . $P["k"], ["tc"], false);
        tc_result("survived");
    ', $P + ['k' => $k], ['TAGCACHE_TEST_CRASH' => 'file_save_unpublished']);
    $killed += $h['signal'] === 9;
}
tc_check('63 saves killed before publishing', $killed === 63, $killed);

$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["save" => $c->save("last", "last", ["tl"], false), "missing" => [], "wrong" => []];
    foreach ($P["vals"] as $id => $v) {
        $l = $c->load($id);
        if ($l === false) {
            $r["missing"][] = $id;
        } elseif ($l !== $v) {
            $r["wrong"][] = $id;
        }
    }
    $st = $c->stats();
    $r["rebuilds"] = $st["rebuilds"];
    $r["logs"] = $st["logs"];
    $r["evictions"] = $st["evictions"];
    $r["verify"] = $c->verify();
    $r["tagged"] = count($c->getIdsMatchingTags(["t0"])) + count($c->getIdsMatchingTags(["t1"]))
        + count($c->getIdsMatchingTags(["t2"]));
    tc_result($r);
', $P, [], 60);
$r = $h['result'];
tc_check('the normal save works', tc_ok($h) && $r['save'] === true, tc_describe($h));
tc_check('the index was rebuilt after every killed save', tc_ok($h) && $r['rebuilds'] >= 63, $r['rebuilds'] ?? null);
tc_check('all 100 entries load with their values', tc_ok($h) && $r['missing'] === [] && $r['wrong'] === [],
    [count($r['missing'] ?? []), $r['wrong'] ?? null]);
tc_check('all 100 are listed under their tags, nothing evicted', tc_ok($h) && $r['tagged'] === 100 && $r['evictions'] === 0, $r);
tc_check('verify() finds nothing wrong', tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);
tc_check('the rebuilds did not pile up logs', tc_ok($h) && $r['logs'] <= 4, $r['logs'] ?? null);
clearstatcache();
tc_check('log files on disk: as many as the index lists', tc_ok($h) && count(tcf_logs($opts['cache_dir'])) === $r['logs'],
    [count(tcf_logs($opts['cache_dir'])), $r['logs'] ?? null]);

// 70 times: the index deleted, then a save killed in the middle of its
// write (a torn record at the end of the newest log). With no index to
// prove that nothing past the valid records was published, each rebuild
// starts a new log: more logs than the log table holds (64), so the oldest
// are merged, never dropped.
$opts = ['cache_dir' => "$base/torn", 'max_size' => '8M', 'lock_timeout' => 10];
$P['opts'] = $opts;
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    foreach ($P["vals"] as $id => $v) {
        $ok = $c->save($v, $id, ["t" . (strlen($id) % 3)], false) && $ok;
    }
    tc_result($ok);
', $P);
tc_check('torn: setup', tc_ok($h) && $h['result'] === true, tc_describe($h));
$killed = 0;
for ($k = 0; $k < 70; $k++) {
    @unlink("$opts[cache_dir]/tagcache.idx");
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $c->save(str_repeat("t", 500), "torn" . $P["k"], ["tt"], false);
        tc_result("survived");
    ', $P + ['k' => $k], ['TAGCACHE_TEST_CRASH' => 'file_write_torn']);
    $killed += $h['signal'] === 9;
}
clearstatcache();
$before = count(tcf_logs($opts['cache_dir']));
// One more rebuild, killed inside its merge: after the merged log was
// renamed over the newest of the logs it merges, before the older ones
// were unlinked. What is left replays to the same index.
@unlink("$opts[cache_dir]/tagcache.idx");
$hm = tcf_run_php('new TagCache\File($P["opts"]); tc_result("survived");', $P, ['TAGCACHE_TEST_CRASH' => 'file_merge']);
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["missing" => 0, "wrong" => 0];
    foreach ($P["vals"] as $id => $v) {
        $l = $c->load($id);
        $r["missing"] += $l === false;
        $r["wrong"] += $l !== false && $l !== $v;
    }
    $r["save"] = $c->save("last", "last", ["tl"], false) && $c->load("last") === "last";
    $r["logs"] = $c->stats()["logs"];
    $r["verify"] = $c->verify();
    tc_result($r);
', $P, [], 60);
$r = $h['result'];
clearstatcache();
tc_check('torn: 70 saves killed mid-write, each after the index was deleted', $killed === 70, $killed);
// 71 logs were started; the table holds 64: without merging, some were dropped
tc_check('torn: no more logs on disk than the log table holds', $before <= 63, $before);
tc_check('torn: a rebuild killed in the middle of a merge', $hm['signal'] === 9, tc_describe($hm));
tc_check('torn: all 100 entries load with their values, saves work', tc_ok($h) && $r['missing'] === 0 && $r['wrong'] === 0 && $r['save'] === true, tc_describe($h));
tc_check('torn: the logs were merged to fit the table, verify() empty', tc_ok($h) && $r['logs'] <= 63 && $r['verify'] === []
    && count(tcf_logs($opts['cache_dir'])) === $r['logs'], [$r['logs'] ?? null, $r['verify'] ?? null]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f113');
?>
--EXPECT--
setup: 100 entries saved: ok
63 saves killed before publishing: ok
the normal save works: ok
the index was rebuilt after every killed save: ok
all 100 entries load with their values: ok
all 100 are listed under their tags, nothing evicted: ok
verify() finds nothing wrong: ok
the rebuilds did not pile up logs: ok
log files on disk: as many as the index lists: ok
torn: setup: ok
torn: 70 saves killed mid-write, each after the index was deleted: ok
torn: no more logs on disk than the log table holds: ok
torn: a rebuild killed in the middle of a merge: ok
torn: all 100 entries load with their values, saves work: ok
torn: the logs were merged to fit the table, verify() empty: ok
