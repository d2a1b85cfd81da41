--TEST--
Shm: 32 processes (8 under memcheck: they run natively, only this one under it) start at once on a missing segment; all succeed and share one segment
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
tc_remove_segments('110');
$dir = tc_make_tmpdir('110');
define('N', tc_fanout(32, 8));
$seg = tc_seg('110');
$go = "$dir/go";

// Each child waits for the go file, then opens the (missing) segment, saves its own id
// and reads it back. Starting them first and releasing them together makes the opens race.
$code = '
    touch($P["ready"]);
    $deadline = microtime(true) + 30;
    while (!file_exists($P["go"]) && microtime(true) < $deadline) {
        usleep(500);
    }
    $r = ["i" => $P["i"], "go" => file_exists($P["go"])];
    try {
        $c = new TagCache\Shm(["segment" => $P["seg"], "size" => "4M"]);
        $v = "value of process " . $P["i"] . " " . getmypid();
        $r["save"] = $c->save($v, "p" . $P["i"], ["all"], null);
        $r["load"] = $c->load("p" . $P["i"]) === $v;
        $r["v"] = $v;
    } catch (Throwable $e) {
        $r["error"] = get_class($e) . ": " . $e->getMessage();
    }
    tc_result($r);
';
$hs = [];
for ($i = 0; $i < N; $i++) {
    $hs[] = tc_spawn_php($code, ['i' => $i, 'seg' => $seg, 'go' => $go, 'ready' => "$dir/ready.$i"], [], "process $i");
}
// Release them together once all are up (bounded wait; late ones still race the others).
$deadline = microtime(true) + 30;
while (count(glob("$dir/ready.*")) < N && microtime(true) < $deadline) {
    usleep(2000);
}
tc_check('segment missing before the start', !file_exists(tc_seg_path($seg)));
touch($go);
$hs = tc_wait_all($hs, 60);

$bad = [];
$values = [];
foreach ($hs as $h) {
    $r = $h['result'];
    if (!tc_ok($h) || !$r['go'] || ($r['save'] ?? null) !== true || ($r['load'] ?? null) !== true) {
        $bad[] = tc_describe($h);
    } else {
        $values['p' . $r['i']] = $r['v'];
    }
}
tc_check('all ' . N . ' processes opened, saved and read back', $bad === [], implode("\n    ", $bad));

$c = new TagCache\Shm(['segment' => $seg, 'size' => '4M']);
$ids = $c->getIds();
sort($ids);
$expect = [];
for ($i = 0; $i < N; $i++) {
    $expect[] = "p$i";
}
sort($expect);
tc_check('one segment: all ' . N . ' ids present', $ids === $expect, array_values(array_diff($expect, $ids)));
$ok = true;
foreach ($values as $id => $v) {
    $ok = $ok && $c->load($id) === $v;
}
$tagged = $c->getIdsMatchingTags(['all']);
sort($tagged);
tc_check('all ' . N . ' values and tag links intact', $ok && count($values) === N && $tagged === $expect);
tc_check('verify() is empty', ($v = $c->verify()) === [], $v);
tc_check('stats count ' . N . ' entries', $c->stats()['entries'] === N, $c->stats());
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('110');
tc_remove_segments('110');
?>
--EXPECTF--
segment missing before the start: ok
all %d processes opened, saved and read back: ok
one segment: all %d ids present: ok
all %d values and tag links intact: ok
verify() is empty: ok
stats count %d entries: ok
