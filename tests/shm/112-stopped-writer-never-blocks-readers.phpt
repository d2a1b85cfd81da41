--TEST--
Shm: a writer stopped (SIGSTOP) inside its publish window never makes a reader wait: loads answer at once, then all is consistent after SIGCONT (issue 11 item 5)
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
tc_remove_segments('112');
// lock_timeout 60 s: a reader that waits for the write lock cannot answer
// within the bounded wait below (30 s), so it fails instead of passing slowly.
$opts = ['segment' => tc_seg('112'), 'size' => '2M', 'lock_timeout' => 60];
$P = ['opts' => $opts, 'old' => 'old value ' . bin2hex(random_bytes(8)),
      'new' => 'new value ' . bin2hex(random_bytes(8)), 'other' => 'other ' . bin2hex(random_bytes(8))];
$c = new TagCache\Shm($opts);
tc_check('setup', $c->save($P['old'], 'X', ['A'], null) && $c->save($P['other'], 'Y', ['B'], null));
unset($c);

// The writer stops itself at the crash point inside the odd-sequence window.
$w = tc_spawn_php('
    $c = new TagCache\Shm($P["opts"]);
    $s = $c->save($P["new"], "X", ["N"], null);
    tc_result(["save" => $s]);
', $P, ['TAGCACHE_TEST_CRASH' => 'save_publishing', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
        'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'writer');
$stopped = tc_wait_stopped($w['pid'], 60);
tc_check('writer stopped inside its publish window', $stopped, tc_proc_state($w['pid']));

// Another process reads while the writer is stopped holding the lock.
$r = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    $out = [];
    foreach (["X" => [$P["old"], $P["new"]], "Y" => [$P["other"]]] as $id => $ok) {
        for ($i = 0; $i < 3; $i++) {
            $l = $c->load($id);
            $out[] = $l === false ? "miss" : (in_array($l, $ok, true) ? "ok" : "OTHER");
            $t = $c->test($id);
            $out[] = $t === false ? "miss" : (is_int($t) ? "ok" : "OTHER");
        }
    }
    tc_result($out);
', $P, [], 30);
tc_check('reader answered without waiting for the stopped writer', tc_ok($r), tc_describe($r));
tc_check('reader saw a value of its own or a miss, never another', tc_ok($r) && !in_array('OTHER', $r['result'], true), $r['result']);
tc_check('writer still stopped while the reader ran', tc_proc_state($w['pid']) === 'T' || tc_proc_state($w['pid']) === 't', tc_proc_state($w['pid']));

// SIGCONT: the writer finishes its save; then everything is consistent.
tc_kill($w['pid'], SIGCONT);
$w = tc_wait($w, 60);
tc_check('writer finished its save after SIGCONT', tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    tc_result(["x" => $c->load("X") === $P["new"], "y" => $c->load("Y") === $P["other"],
               "n" => $c->getIdsMatchingTags(["N"]), "a" => $c->getIdsMatchingTags(["A"]),
               "verify" => $c->verify()]);
', $P, [], 30);
tc_check('after SIGCONT: new value, old one gone from its tag, verify() empty',
    tc_ok($h) && $h['result'] === ['x' => true, 'y' => true, 'n' => ['X'], 'a' => [], 'verify' => []], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('112');
?>
--EXPECT--
setup: ok
writer stopped inside its publish window: ok
reader answered without waiting for the stopped writer: ok
reader saw a value of its own or a miss, never another: ok
writer still stopped while the reader ran: ok
writer finished its save after SIGCONT: ok
after SIGCONT: new value, old one gone from its tag, verify() empty: ok
