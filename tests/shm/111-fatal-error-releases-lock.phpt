--TEST--
Shm: a fatal error inside a locked section does not leave the lock held (shutdown functions and later processes go on)
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
tc_remove_segments('111');
$seg = tc_seg('111');
// lock_timeout above the child's 30 s harness bound: a save that waited for
// the lock would not return in time, and the child's result would be missing
// (no wall-clock threshold in the test)
$opts = ['segment' => $seg, 'size' => '2M', 'lock_timeout' => 60];
$c = new TagCache\Shm($opts);
$c->clean('all');
$c->save('before', 'k0', ['t'], null);

// The child dies of a PHP fatal error (a longjmp out of the engine) while it
// holds the write lock, at each crash point in turn. Its shutdown function
// runs in the same process after the bailout: its save must not wait for a
// lock that this very process still holds.
foreach (['save_locked', 'save_unpublished', 'save_publishing', 'clean_tag'] as $point) {
    $h = tc_run_php('
        $c = new TagCache\Shm($P["opts"]);
        register_shutdown_function(function () use ($c) {
            $ok = $c->save("after", "k_shutdown", ["t"], null);
            tc_result(["save" => $ok, "load" => $c->load("k_shutdown"), "verify" => $c->verify()]);
        });
        if ($P["point"] === "clean_tag") {
            $c->clean("matchingAnyTag", ["t"]);
        } else {
            $c->save("new", "k0", ["t", "u"], null);
        }
        echo "not reached\n";
    ', ['opts' => $opts, 'point' => $point], ['TAGCACHE_TEST_CRASH' => $point, 'TAGCACHE_TEST_CRASH_MODE' => 'fatal'], 30);
    $r = $h['result'];
    tc_check("$point: fatal error reported", strpos($h['out'], "fatal error at crash point $point") !== false
        && strpos($h['out'], 'not reached') === false, tc_describe($h));
    tc_check("$point: shutdown function saves without waiting for the lock", is_array($r) && $r['save'] === true
        && $r['load'] === 'after', tc_describe($h));
    tc_check("$point: structure consistent after the repair", is_array($r) && $r['verify'] === [], $r);
    $k0 = $c->load('k0');
    tc_check("$point: k0 is the old value, the new one or a miss", in_array($k0, ['before', 'new', false], true), $k0);
    tc_check("$point: another process saves and loads", $c->save('x', 'kx', ['t'], null) && $c->load('kx') === 'x');
    tc_check("$point: verify() in this process", ($v = $c->verify()) === [], $v);
    $c->save('before', 'k0', ['t'], null);
}
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('111');
?>
--EXPECT--
save_locked: fatal error reported: ok
save_locked: shutdown function saves without waiting for the lock: ok
save_locked: structure consistent after the repair: ok
save_locked: k0 is the old value, the new one or a miss: ok
save_locked: another process saves and loads: ok
save_locked: verify() in this process: ok
save_unpublished: fatal error reported: ok
save_unpublished: shutdown function saves without waiting for the lock: ok
save_unpublished: structure consistent after the repair: ok
save_unpublished: k0 is the old value, the new one or a miss: ok
save_unpublished: another process saves and loads: ok
save_unpublished: verify() in this process: ok
save_publishing: fatal error reported: ok
save_publishing: shutdown function saves without waiting for the lock: ok
save_publishing: structure consistent after the repair: ok
save_publishing: k0 is the old value, the new one or a miss: ok
save_publishing: another process saves and loads: ok
save_publishing: verify() in this process: ok
clean_tag: fatal error reported: ok
clean_tag: shutdown function saves without waiting for the lock: ok
clean_tag: structure consistent after the repair: ok
clean_tag: k0 is the old value, the new one or a miss: ok
clean_tag: another process saves and loads: ok
clean_tag: verify() in this process: ok
