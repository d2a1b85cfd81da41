--TEST--
Shm: two unrelated php processes share a named segment; another name is isolated
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
tc_remove_segments('100');
$A = tc_seg('100', 'a');
$B = tc_seg('100', 'b');
// Fresh random values: a segment left over from an earlier run cannot make this pass.
$v1 = "one\0" . bin2hex(random_bytes(16)) . "\xff";
$v2 = 'two-' . bin2hex(random_bytes(16));
$vb = 'bee-' . bin2hex(random_bytes(16));
$P = ['A' => $A, 'B' => $B, 'v1' => $v1, 'v2' => $v2, 'vb' => $vb];

// Process 1 writes into A and exits before process 2 starts.
$h = tc_run_php('
    $c = new TagCache\Shm(["segment" => $P["A"], "size" => "2M"]);
    tc_result([
        "save" => $c->save($P["v1"], "k1", ["t1"], null),
        "pid" => getmypid(),
    ]);
', $P);
tc_check('writer process', tc_ok($h) && $h['result']['save'] === true, tc_describe($h));
$pid1 = $h['result']['pid'] ?? null;

// Process 2 (a new php, not a fork) reads A, checks B is empty, writes to both.
$h = tc_run_php('
    $a = new TagCache\Shm(["segment" => $P["A"], "size" => "2M"]);
    $b = new TagCache\Shm(["segment" => $P["B"], "size" => "2M"]);
    $r = [
        "pid" => getmypid(),
        "load" => bin2hex((string) $a->load("k1")),
        "hit" => $a->load("k1") !== false,
        "tagged" => $a->getIdsMatchingTags(["t1"]),
        "meta_tags" => ($a->getMetadatas("k1") ?: ["tags" => null])["tags"],
        "b_load" => $b->load("k1"),
        "b_ids" => $b->getIds(),
        "b_tagged" => $b->getIdsMatchingTags(["t1"]),
    ];
    $r["save_a"] = $a->save($P["v2"], "k2", ["t2"], null);
    $r["save_b"] = $b->save($P["vb"], "kb", ["t1"], null);
    tc_result($r);
', $P);
$r = $h['result'];
tc_check('reader process', tc_ok($h), tc_describe($h));
tc_check('separate processes', $r !== null && $pid1 !== null && $r['pid'] !== $pid1 && $r['pid'] !== getmypid());
tc_check('value written by process 1 read by process 2', $r !== null && $r['hit'] === true && $r['load'] === bin2hex($v1), $r);
tc_check('tags written by process 1 seen by process 2', $r !== null && $r['tagged'] === ['k1'] && $r['meta_tags'] === ['t1'], $r);
tc_check('other segment name is empty', $r !== null && $r['b_load'] === false && $r['b_ids'] === [] && $r['b_tagged'] === [], $r);
tc_check('process 2 saves', $r !== null && $r['save_a'] === true && $r['save_b'] === true, $r);

// This process (a third, unrelated one) sees both segments, each with its own entries.
$a = new TagCache\Shm(['segment' => $A, 'size' => '2M']);
$b = new TagCache\Shm(['segment' => $B, 'size' => '2M']);
$ida = $a->getIds();
sort($ida);
$idb = $b->getIds();
sort($idb);
tc_check('A holds k1 and k2', $ida === ['k1', 'k2'] && $a->load('k1') === $v1 && $a->load('k2') === $v2, $ida);
tc_check('B holds only kb', $idb === ['kb'] && $b->load('kb') === $vb && $b->load('k1') === false && $b->load('k2') === false, $idb);
tc_check('A does not see B', $a->load('kb') === false && $a->getIdsMatchingTags(['t1']) === ['k1'], $a->getIdsMatchingTags(['t1']));
tc_check('both files exist', is_file(tc_seg_path($A)) && is_file(tc_seg_path($B)));

// Removal in one process is seen by a fresh one.
$a->remove('k1');
unset($a, $b);
$h = tc_run_php('
    $a = new TagCache\Shm(["segment" => $P["A"], "size" => "2M"]);
    tc_result(["k1" => $a->load("k1"), "k2" => $a->load("k2") === $P["v2"], "v" => $a->verify()]);
', $P);
tc_check('removal seen by a third process', tc_ok($h) && $h['result']['k1'] === false && $h['result']['k2'] === true && $h['result']['v'] === [], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('100');
?>
--EXPECT--
writer process: ok
reader process: ok
separate processes: ok
value written by process 1 read by process 2: ok
tags written by process 1 seen by process 2: ok
other segment name is empty: ok
process 2 saves: ok
A holds k1 and k2: ok
B holds only kb: ok
A does not see B: ok
both files exist: ok
removal seen by a third process: ok
