--TEST--
File: a writer stopped (SIGSTOP) inside its publish window never makes a reader wait: loads and tests of every key answer (a value of its own or a miss), a damaged record too; after SIGCONT all is consistent (issue 11 item 4)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('posix_kill')) die('skip posix_kill() is needed to send SIGCONT');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$base = tc_make_tmpdir('f116');
// lock_timeout 60 s: a reader that waits for the write lock cannot answer
// within the bounded wait below (30 s), so it fails instead of passing slowly.
$opts = ['cache_dir' => "$base/store", 'max_size' => '8M', 'lock_timeout' => 60];
$P = ['opts' => $opts, 'old' => tc_mkval('X', 1, 1, 2000), 'new' => tc_mkval('X', 2, 2, 2000),
      'ys' => [], 'z' => tc_mkval('Z', 1, 1, 2000)];
for ($i = 0; $i < 20; $i++) {
    $P['ys']["y$i"] = tc_mkval("y$i", 1, $i, 100 + 50 * $i);
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = $c->save($P["old"], "X", ["A"], false) && $c->save($P["z"], "Z", ["Z"], false);
    foreach ($P["ys"] as $id => $v) {
        $ok = $c->save($v, $id, ["B"], false) && $ok;
    }
    tc_result($ok);
', $P);
$logs = tcf_logs($opts['cache_dir']);
$zoff = $logs ? tcf_find_record(end($logs), 'Z', $P['z']) : null;
tc_check('setup', tc_ok($h) && $h['result'] === true && $zoff !== null, [tc_describe($h), $zoff]);
// Z's record damaged: its load needs a repair, which takes the lock
if ($zoff !== null) {
    tcf_flip(end($logs), $zoff + 48 + 1 + 2 + 1 + 500);
}

// The writer stops itself at the crash point inside the odd-sequence window.
$w = tcf_spawn_php('
    $c = new TagCache\File($P["opts"]);
    $s = $c->save($P["new"], "X", ["N"], false);
    tc_result(["save" => $s]);
', $P, ['TAGCACHE_TEST_CRASH' => 'file_save_publishing', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
        'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'writer');
tc_check('writer stopped inside its publish window', tcf_wait_stopped($w['pid'], 60), tcf_proc_state($w['pid']));

// Another process reads while the writer is stopped, holding the lock.
$r = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $out = [];
    foreach (["X" => [$P["old"], $P["new"]], "Z" => [$P["z"]]] + array_map(fn($v) => [$v], $P["ys"]) as $id => $ok) {
        for ($i = 0; $i < 2; $i++) {
            $l = $c->load($id);
            $out[] = $l === false ? "miss" : (in_array($l, $ok, true) ? "ok" : "OTHER $id");
            $t = $c->test($id);
            $out[] = $t === false ? "miss" : (is_int($t) ? "ok" : "OTHER $id");
        }
    }
    tc_result($out);
', $P, [], 30);
tc_check('reader answered every load without waiting for the stopped writer', tc_ok($r), tc_describe($r));
tc_check('reader saw a value of its own or a miss, never another', tc_ok($r) && !preg_grep('/^OTHER/', $r['result']), $r['result'] ?? null);
tc_check('writer still stopped while the reader ran', in_array(tcf_proc_state($w['pid']), ['T', 't'], true), tcf_proc_state($w['pid']));

// SIGCONT: the writer finishes its save; then everything is consistent.
tc_kill($w['pid'], SIGCONT);
$w = tc_wait($w, 60);
tc_check('writer finished its save after SIGCONT', tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ys = 0;
    foreach ($P["ys"] as $id => $v) {
        $ys += $c->load($id) === $v;
    }
    tc_result(["x" => $c->load("X") === $P["new"], "ys" => $ys, "z" => $c->load("Z"),
               "n" => $c->getIdsMatchingTags(["N"]), "a" => $c->getIdsMatchingTags(["A"]),
               "verify" => $c->verify()]);
', $P, [], 30);
tc_check('after SIGCONT: new value, damaged Z a miss, others intact, verify() empty',
    tc_ok($h) && $h['result'] === ['x' => true, 'ys' => 20, 'z' => false, 'n' => ['X'], 'a' => [], 'verify' => []], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f116');
?>
--EXPECT--
setup: ok
writer stopped inside its publish window: ok
reader answered every load without waiting for the stopped writer: ok
reader saw a value of its own or a miss, never another: ok
writer still stopped while the reader ran: ok
writer finished its save after SIGCONT: ok
after SIGCONT: new value, damaged Z a miss, others intact, verify() empty: ok
