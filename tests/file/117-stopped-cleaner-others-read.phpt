--TEST--
File: a clean stopped (SIGSTOP) inside its batch window holds up no reader of the other keys: every key it does not remove loads its value at once, not a miss (readers check the sequence of their own bucket stripe, not one for the whole index; issue 15 item 2)
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
$base = tc_make_tmpdir('f117');
$opts = ['cache_dir' => "$base/store", 'max_size' => '8M', 'lock_timeout' => 60];
$P = ['opts' => $opts, 'as' => [], 'bs' => []];
for ($i = 0; $i < 40; $i++) {
    $P['as']["a$i"] = tc_mkval("a$i", 1, $i, 100 + 10 * $i);
    $P['bs']["b$i"] = tc_mkval("b$i", 1, $i, 100 + 10 * $i);
}
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $ok = true;
    foreach ($P["as"] as $id => $v) {
        $ok = $c->save($v, $id, ["A"], false) && $ok;
    }
    foreach ($P["bs"] as $id => $v) {
        $ok = $c->save($v, $id, ["B"], false) && $ok;
    }
    tc_result($ok);
', $P);
tc_check('setup', tc_ok($h) && $h['result'] === true, tc_describe($h));

// The cleaner stops itself after its first removal, inside the window of
// its first batch (the index's write sequence is odd, the lock held).
$w = tcf_spawn_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["clean" => $c->clean("matchingAnyTag", ["A"])]);
', $P, ['TAGCACHE_TEST_CRASH' => 'file_clean_tag', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
        'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'cleaner');
tc_check('cleaner stopped inside its batch window', tcf_wait_stopped($w['pid'], 60), tcf_proc_state($w['pid']));

$r = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $b = ["hit" => 0, "miss" => 0, "other" => 0];
    foreach ($P["bs"] as $id => $v) {
        $l = $c->load($id);
        $b[$l === false ? "miss" : ($l === $v ? "hit" : "other")]++;
    }
    $a = ["hit" => 0, "miss" => 0, "other" => 0];
    foreach ($P["as"] as $id => $v) {
        $l = $c->load($id);
        $a[$l === false ? "miss" : ($l === $v ? "hit" : "other")]++;
    }
    tc_result(["b" => $b, "a" => $a]);
', $P, [], 30);
tc_check('reader answered while the cleaner was stopped', tc_ok($r), tc_describe($r));
// Before issue 15 every load here was a miss: one sequence for the whole
// index, odd for as long as the cleaner stayed stopped.
tc_check('every key the clean does not touch is a hit', tc_ok($r) && $r['result']['b'] === ['hit' => 40, 'miss' => 0, 'other' => 0], $r['result'] ?? null);
tc_check('a key of the tag being cleaned: its own value or a miss, never another',
    tc_ok($r) && $r['result']['a']['other'] === 0 && $r['result']['a']['hit'] + $r['result']['a']['miss'] === 40, $r['result'] ?? null);
tc_check('cleaner still stopped while the reader ran', in_array(tcf_proc_state($w['pid']), ['T', 't'], true), tcf_proc_state($w['pid']));

tc_kill($w['pid'], SIGCONT);
$w = tc_wait($w, 60);
tc_check('cleaner finished after SIGCONT', tc_ok($w) && $w['result']['clean'] === true, tc_describe($w));
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $a = $b = 0;
    foreach ($P["as"] as $id => $v) {
        $a += $c->load($id) !== false;
    }
    foreach ($P["bs"] as $id => $v) {
        $b += $c->load($id) === $v;
    }
    tc_result(["a" => $a, "b" => $b, "verify" => $c->verify()]);
', $P, [], 30);
tc_check('after SIGCONT: tag A gone, tag B intact, verify() empty',
    tc_ok($h) && $h['result'] === ['a' => 0, 'b' => 40, 'verify' => []], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f117');
?>
--EXPECT--
setup: ok
cleaner stopped inside its batch window: ok
reader answered while the cleaner was stopped: ok
every key the clean does not touch is a hit: ok
a key of the tag being cleaned: its own value or a miss, never another: ok
cleaner still stopped while the reader ran: ok
cleaner finished after SIGCONT: ok
after SIGCONT: tag A gone, tag B intact, verify() empty: ok
