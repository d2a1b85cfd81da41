--TEST--
Shm: a process SIGKILLed while it holds the write lock does not block the others (robust lock recovery)
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
tc_remove_segments('102');
$seg = tc_seg('102');
$opts = ['segment' => $seg, 'size' => '2M', 'lock_timeout' => 3];
$P = ['opts' => $opts];

$old = [];
$c = new TagCache\Shm($opts);
for ($i = 0; $i < 5; $i++) {
    $old["old$i"] = "old value $i " . bin2hex(random_bytes(8));
    $c->save($old["old$i"], "old$i", ['told'], null);
}
$P['old'] = $old;
tc_check('setup', count($c->getIds()) === 5 && $c->stats()['lock_recoveries'] === 0, $c->stats());
unset($c);

// Round 1: the child dies inside save(), right after taking the write lock.
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    echo "about-to-save\n";
    $r = $c->save("NEW VALUE", "old0", ["tnew"], null);
    tc_result(["survived" => true, "save" => $r]);
', $P, ['TAGCACHE_TEST_CRASH' => 'save_locked', 'TAGCACHE_TEST_CRASH_AFTER' => '1']);
tc_check('child killed by SIGKILL inside save()', $h['signal'] === 9 && strpos($h['out'], 'about-to-save') !== false && $h['result'] === null, tc_describe($h));

// A reader right away, while the dead process still "owns" the lock: no hang, no new value.
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    $r = [];
    foreach ($P["old"] as $id => $v) {
        $l = $c->load($id);
        $r[$id] = $l === false ? "miss" : ($l === $v ? "old" : "OTHER:" . bin2hex(substr($l, 0, 40)));
    }
    tc_result($r);
', $P, [], 30);
$bad = [];
foreach ((array) $h['result'] as $id => $what) {
    if ($what !== 'old' && $what !== 'miss') {
        $bad[$id] = $what;
    }
}
tc_check('reader after the crash returns (old value or miss)', tc_ok($h) && count($h['result']) === 5 && !$bad, tc_describe($h));

// Three writers at once: they must all get the lock (recovered) well before lock_timeout runs out.
$hs = [];
for ($i = 0; $i < 3; $i++) {
    $hs[] = tc_spawn_php('
        $c = new TagCache\Shm($P["opts"]);
        $v = "rec value " . $P["i"];
        $s = $c->save($v, "rec" . $P["i"], ["trec"], null);
        $s2 = $c->save($v . " again", "rec" . $P["i"], ["trec"], null);
        tc_result([
            "save" => $s && $s2,
            "load" => $c->load("rec" . $P["i"]) === $v . " again",
            "lock_recoveries" => $c->stats()["lock_recoveries"],
        ]);
    ', $P + ['i' => $i], [], "writer $i");
}
$hs = tc_wait_all($hs, 40);
$ok = true;
$why = [];
foreach ($hs as $h) {
    if (!tc_ok($h) || $h['result']['save'] !== true || $h['result']['load'] !== true) {
        $ok = false;
        $why[] = tc_describe($h);
    }
}
tc_check('writers after the crash save and load', $ok, implode("\n    ", $why));

$c = new TagCache\Shm($opts);
$st = $c->stats();
tc_check('stats lock_recoveries >= 1', $st['lock_recoveries'] >= 1, $st);
tc_check('verify() is empty', ($v = $c->verify()) === [], $v);
$ok = true;
foreach ($old as $id => $v) {
    $l = $c->load($id);
    $ok = $ok && ($l === false || $l === $v);
}
tc_check('old entries: old value or miss, never the killed save', $ok);
$ids = $c->getIdsMatchingTags(['trec']);
sort($ids);
tc_check('entries of the writers present', $ids === ['rec0', 'rec1', 'rec2'], $ids);
unset($c);

// Round 2: TAGCACHE_TEST_CRASH_AFTER=3, the child dies in its third save.
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    for ($i = 1; $i <= 3; $i++) {
        $s = $c->save("second round $i", "r2_$i", [], null);
        echo "save$i:", json_encode($s), "\n";
    }
    tc_result(["survived" => true]);
', $P, ['TAGCACHE_TEST_CRASH' => 'save_locked', 'TAGCACHE_TEST_CRASH_AFTER' => '3']);
tc_check('second child killed in its third save', $h['signal'] === 9 && strpos($h['out'], "save1:true\nsave2:true\n") !== false && strpos($h['out'], 'save3') === false, tc_describe($h));
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    $s = $c->save("after round 2", "after2", [], null);
    $r3 = $c->load("r2_3");
    tc_result(["save" => $s, "load" => $c->load("after2"), "r2_3" => $r3, "verify" => $c->verify(),
               "lock_recoveries" => $c->stats()["lock_recoveries"]]);
', $P, [], 30);
$r = $h['result'];
tc_check('writer after the second crash', tc_ok($h) && $r['save'] === true && $r['load'] === 'after round 2' && $r['r2_3'] === false && $r['verify'] === [] && $r['lock_recoveries'] >= 1, tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('102');
?>
--EXPECT--
setup: ok
child killed by SIGKILL inside save(): ok
reader after the crash returns (old value or miss): ok
writers after the crash save and load: ok
stats lock_recoveries >= 1: ok
verify() is empty: ok
old entries: old value or miss, never the killed save: ok
entries of the writers present: ok
second child killed in its third save: ok
writer after the second crash: ok
