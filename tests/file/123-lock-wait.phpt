--TEST--
File: a locker that meets a held write lock (its holder stopped with SIGSTOP) waits for it: with a short lock_timeout the clean fails with the lock's error and removes nothing; a waiting clean gets the lock once the holder goes on, after the holder's save (issue 15)
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
$base = tc_make_tmpdir('f123');
$opts = ['cache_dir' => "$base/store", 'max_size' => '8M', 'lock_timeout' => 60];
$P = ['opts' => $opts, 'short' => ['lock_timeout' => 0.05] + $opts,
      'x' => tc_mkval('X', 1, 1, 300), 'y' => tc_mkval('Y', 1, 2, 300), 'z' => tc_mkval('Z', 1, 3, 300),
      'w' => tc_mkval('W', 1, 4, 300)];
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result($c->save($P["x"], "X", ["A"], false) && $c->save($P["y"], "Y", ["A", "C"], false)
              && $c->save($P["z"], "Z", ["B"], false));
', $P);
tc_check('setup', tc_ok($h) && $h['result'] === true, tc_describe($h));

// The writer stops itself just after it took the write lock.
$w = tcf_spawn_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["save" => $c->save($P["w"], "W", ["A"], false)]);
', $P, ['TAGCACHE_TEST_CRASH' => 'file_save_locked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'writer');
tc_check('writer stopped holding the lock', tcf_wait_stopped($w['pid'], 60), tcf_proc_state($w['pid']));

// A clean with a short lock_timeout: the wait times out.
$s = tcf_run_php('
    $c = new TagCache\File($P["short"]);
    $msg = "";
    set_error_handler(function ($no, $str) use (&$msg) { $msg .= $str; return true; });
    try {
        $r = $c->clean("matchingAnyTag", ["A"]);
    } catch (Throwable $e) {
        $r = "exception";
        $msg .= $e->getMessage();
    }
    tc_result(["r" => $r, "lock" => str_contains($msg, "write lock not acquired")]);
', $P, [], 30);
tc_check('short lock_timeout: the clean fails with the lock error', tc_ok($s) && $s['result']['r'] !== true
    && $s['result']['lock'] === true, tc_describe($s));
$r = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result([$c->load("X") === $P["x"], $c->load("Y") === $P["y"], $c->load("Z") === $P["z"]]);
', $P, [], 30);
tc_check('nothing was removed by the failed clean (lock-free loads)', tc_ok($r) && $r['result'] === [true, true, true], tc_describe($r));

// A clean that waits: it gets the lock after the writer's save.
$l = tcf_spawn_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["clean" => $c->clean("matchingAnyTag", ["A"])]);
', $P, [], 'cleaner');
tc_check('writer still stopped', in_array(tcf_proc_state($w['pid']), ['T', 't'], true), tcf_proc_state($w['pid']));
tc_kill($w['pid'], SIGCONT);
$w = tc_wait($w, 60);
$l = tc_wait($l, 60);
tc_check('writer finished its save after SIGCONT', tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
tc_check('waiting clean succeeded', tc_ok($l) && $l['result']['clean'] === true, tc_describe($l));
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    tc_result(["a" => $c->getIdsMatchingAnyTags(["A"]), "ids" => $c->getIds(), "z" => $c->load("Z") === $P["z"],
               "tags" => $c->getTags(), "verify" => $c->verify()]);
', $P, [], 30);
tc_check('the clean came after the save: no entry of A left, Z intact, verify() empty',
    tc_ok($h) && $h['result'] === ['a' => [], 'ids' => ['Z'], 'z' => true, 'tags' => ['B'], 'verify' => []],
    tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f123');
?>
--EXPECT--
setup: ok
writer stopped holding the lock: ok
short lock_timeout: the clean fails with the lock error: ok
nothing was removed by the failed clean (lock-free loads): ok
writer still stopped: ok
writer finished its save after SIGCONT: ok
waiting clean succeeded: ok
the clean came after the save: no entry of A left, Z intact, verify() empty: ok
