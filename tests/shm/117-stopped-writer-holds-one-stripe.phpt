--TEST--
Shm: a writer stopped (SIGSTOP) inside its publish window holds up only the readers of its key's stripe of buckets: the other keys are hits, not misses (issue 15 item 2)
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
tc_remove_segments('117');
// 1,024 stripes (a table of 1,024 buckets or more): of 60 other keys, the
// chance that three or more share the stopped key's stripe is about 3e-5.
$opts = ['segment' => tc_seg('117'), 'size' => '4M', 'max_entries' => 2048, 'lock_timeout' => 60];
$P = ['opts' => $opts, 'new' => 'new value ' . bin2hex(random_bytes(8))];
$c = new TagCache\Shm($opts);
$ok = $c->save('old', 'X', ['A'], null);
for ($i = 0; $i < 60; $i++) {
    $ok = $ok && $c->save("value $i", "K$i", ['B'], null);
}
tc_check('setup', $ok);
unset($c);

// The writer stops itself at the crash point inside its stripe's window.
$w = tc_spawn_php('
    $c = new TagCache\Shm($P["opts"]);
    $s = $c->save($P["new"], "X", ["N"], null);
    tc_result(["save" => $s]);
', $P, ['TAGCACHE_TEST_CRASH' => 'save_publishing', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
        'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'writer');
$stopped = tc_wait_stopped($w['pid'], 60);
tc_check('writer stopped inside its publish window', $stopped, tc_proc_state($w['pid']));

$r = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    $hits = $wrong = 0;
    for ($i = 0; $i < 60; $i++) {
        $l = $c->load("K$i");
        if ($l === "value $i") {
            $hits++;
        } elseif ($l !== false) {
            $wrong++;
        }
    }
    tc_result(["hits" => $hits, "wrong" => $wrong]);
', $P, [], 30);
tc_check('reader answered', tc_ok($r), tc_describe($r));
tc_check('the other keys were hits (at most 2 of 60 share the stripe)',
    tc_ok($r) && $r['result']['hits'] >= 58 && $r['result']['wrong'] === 0, $r['result'] ?? null);
tc_check('writer still stopped while the reader ran', tc_proc_state($w['pid']) === 'T' || tc_proc_state($w['pid']) === 't', tc_proc_state($w['pid']));

tc_kill($w['pid'], SIGCONT);
$w = tc_wait($w, 60);
tc_check('writer finished its save after SIGCONT', tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    tc_result(["x" => $c->load("X") === $P["new"], "n" => $c->getIdsMatchingTags(["N"]),
               "b" => count($c->getIdsMatchingTags(["B"])), "verify" => $c->verify()]);
', $P, [], 30);
tc_check('after SIGCONT: new value, every key there, verify() empty',
    tc_ok($h) && $h['result'] === ['x' => true, 'n' => ['X'], 'b' => 60, 'verify' => []], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('117');
?>
--EXPECT--
setup: ok
writer stopped inside its publish window: ok
reader answered: ok
the other keys were hits (at most 2 of 60 share the stripe): ok
writer still stopped while the reader ran: ok
writer finished its save after SIGCONT: ok
after SIGCONT: new value, every key there, verify() empty: ok
