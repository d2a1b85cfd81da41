--TEST--
File: a one-tag clean selects its entries and builds their tombstones before taking the write lock; writes made between that selection and the lock (the cleaner stopped there by the test hook) still leave exactly the right entries removed, in the index and after a rebuild from the logs: removals and slot reuse, records moved by compaction (selection kept, members checked again), a new member, a dropped and recreated tag, a compacted member array, a replaced index (selection made again)
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
$tmp = tc_make_tmpdir('f125');
$dir = "$tmp/store";
$opts = ['cache_dir' => $dir, 'max_size' => '8M', 'lock_timeout' => 60];
$P = ['opts' => $opts];

function ids(TagCache\File $c): array
{
    $a = $c->getIds();
    sort($a);
    return $a;
}

// One round: the entries, then a child that cleans $tag and stops (SIGSTOP,
// TAGCACHE_TEST_CRASH_MODE=stop) after its selection, before the lock; the
// parent's writes $between (which may return the stats to count from, when
// it replaced the index); SIGCONT; then what is left must be $want, and the
// same after the index is rebuilt from the logs (the tombstones name the
// right ids).
function round_(string $name, string $dir, array $P, array $setup, string $tag, callable $between,
                array $want, string $counter, int $parentCleans = 0): void
{
    $c = new TagCache\File($P['opts']);
    $c->clean('all');
    $ok = true;
    foreach ($setup as $id => $tags) {
        $ok = $ok && $c->save("v $id", $id, $tags, null);
    }
    tc_check("$name: setup", $ok);
    $st0 = $c->stats();
    $w = tcf_spawn_php('
        $c = new TagCache\File($P["opts"]);
        tc_result(["clean" => $c->clean("matchingAnyTag", [$P["tag"]])]);
    ', $P + ['tag' => $tag], ['TAGCACHE_TEST_CRASH' => 'file_clean_preselected', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
                              'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'cleaner');
    $stopped = tcf_wait_stopped($w['pid'], 60);
    tc_check("$name: cleaner stopped between its selection and the lock", $stopped, tcf_proc_state($w['pid']));
    $c2 = $between($c);
    if ($c2 !== null) {
        [$c, $st0] = $c2;
    }
    tc_kill($w['pid'], SIGCONT);
    $w = tc_wait($w, 60);
    tc_check("$name: clean returned true", tc_ok($w) && $w['result']['clean'] === true, tc_describe($w));
    $got = ids($c);
    sort($want);
    tc_check("$name: exactly the right entries left", $got === $want, ['got' => $got, 'want' => $want]);
    $st = $c->stats();
    $d = ['cleans_preselected' => $st['cleans_preselected'] - $st0['cleans_preselected'],
          'cleans_reselected' => $st['cleans_reselected'] - $st0['cleans_reselected']];
    // the parent's own one-tag cleans (kept: nothing else writes meanwhile)
    $d['cleans_preselected'] -= $parentCleans;
    tc_check("$name: the selection was $counter", $d[$counter] === 1 && array_sum($d) === 1, $d);
    tc_check("$name: verify() empty", ($v = $c->verify()) === [], $v);
    // the index rebuilt from the logs: the same entries (no removed entry
    // comes back, no tombstone hit another id)
    unset($c);
    @unlink("$dir/tagcache.idx");
    $r = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $a = $c->getIds();
        sort($a);
        $vals = [];
        foreach ($a as $id) {
            $vals[] = $c->load($id) !== false;
        }
        tc_result(["ids" => $a, "loads" => !in_array(false, $vals, true)]);
    ', $P);
    tc_check("$name: the same after a rebuild from the logs", tc_ok($r) && $r['result']['ids'] === $want
        && $r['result']['loads'], tc_describe($r));
}

$base = ['A1' => ['T', 'X'], 'A2' => ['X', 'T'], 'A3' => ['T'], 'A4' => ['Y', 'T', 'X'], 'A5' => ['T'],
         'A6' => ['T', 'Y'], 'B1' => ['X'], 'B2' => ['Y'], 'B3' => []];

// 1. Removals only (no member added): the selection is kept, and each
// selected member checked again under the lock. A1 removed and its slot
// taken by N1 (without T), A2 saved again without T (same slot, no link to
// T): neither may go; A3 removed by the parent too.
round_('kept', $dir, $P, $base, 'T', function (TagCache\File $c) {
    $c->remove('A1');
    $c->save('n', 'N1', ['X'], null);
    $c->save('v A2 again', 'A2', ['X'], null);
    $c->remove('A3');
    return null;
}, ['A2', 'N1', 'B1', 'B2', 'B3'], 'cleans_preselected');

// 2. The records moved (clean('old') compacts every log once enough of it
// is dead: B3 overwritten many times): the selection is kept, and the
// tombstones of the moved entries are built again from where they are now.
round_('records moved', $dir, $P, $base, 'T', function (TagCache\File $c) {
    $big = str_repeat('b', 4000);
    for ($i = 0; $i < 200; $i++) {
        $c->save($big . $i, 'B3', [], null);
    }
    $before = $c->stats()['compactions'];
    $c->clean('old');
    tc_check('records moved: clean(old) compacted', $c->stats()['compactions'] > $before);
    return null;
}, ['B1', 'B2', 'B3'], 'cleans_preselected');

// 3. A new member (a save that links T, and one that saves an old member
// again with T): the selection is made again under the lock, and takes
// both.
round_('new member', $dir, $P, $base, 'T', function (TagCache\File $c) {
    $c->save('c', 'C7', ['Y', 'T'], null);
    $c->save('v A1 again', 'A1', ['T'], null);
    return null;
}, ['B1', 'B2', 'B3'], 'cleans_reselected');

// 4. The tag cleaned by the parent, then a new entry carries it again: a new
// record (perhaps at the same place): the selection is made again.
round_('tag recreated', $dir, $P, $base, 'T', function (TagCache\File $c) {
    $c->clean('matchingAnyTag', ['T']);
    $c->save('d', 'D1', ['T', 'X'], null);
    return null;
}, ['B1', 'B2', 'B3'], 'cleans_reselected', 1);

// 5. A compaction of T's member array (saves again of its members, until
// the full array is at most half live): members move, the selection is
// made again.
$many = [];
for ($i = 0; $i < 16; $i++) {
    $many["M$i"] = ['T'];
}
$many['B1'] = ['X'];
round_('array compacted', $dir, $P, $many, 'T', function (TagCache\File $c) {
    for ($r = 0; $r < 3; $r++) {
        for ($i = 0; $i < 16; $i++) {
            $c->save("again $r", "M$i", ['T'], null);
        }
    }
    return null;
}, ['B1'], 'cleans_reselected');

// 6. The index replaced (clean('all') makes a new one), then the same
// entries saved again in another order and E1 with T: the selection was
// made in the old index, and is made again in the new one.
round_('index replaced', $dir, $P, $base, 'T', function (TagCache\File $c) use ($base, $P) {
    $c->clean('all');
    foreach (array_reverse($base, true) as $id => $tags) {
        $c->save("v $id", $id, $tags, null);
    }
    $c->save('e', 'E1', ['T'], null);
    return [$c, $c->stats()];
}, ['B1', 'B2', 'B3'], 'cleans_reselected');

// 7. A cleaner killed (SIGKILL) between its selection and the lock: it held
// nothing and changed nothing; the store is as it was, and the next clean
// of the tag takes its entries.
$c = new TagCache\File($opts);
$c->clean('all');
foreach ($base as $id => $tags) {
    $c->save("v $id", $id, $tags, null);
}
$k = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $c->clean("matchingAnyTag", ["T"]);
    tc_result("not killed");
', $P, ['TAGCACHE_TEST_CRASH' => 'file_clean_preselected', 'TAGCACHE_TEST_CRASH_AFTER' => '1'], 60);
tc_check('killed: the cleaner died by SIGKILL at the point', ($k['signal'] ?? null) === SIGKILL, tc_describe($k));
tc_check('killed: nothing changed', ids($c) === array_keys($base) && $c->verify() === [], ids($c));
tc_check('killed: the next clean takes the entries', $c->clean('matchingAnyTag', ['T'])
    && ids($c) === ['B1', 'B2', 'B3'], ids($c));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f125');
?>
--EXPECT--
kept: setup: ok
kept: cleaner stopped between its selection and the lock: ok
kept: clean returned true: ok
kept: exactly the right entries left: ok
kept: the selection was cleans_preselected: ok
kept: verify() empty: ok
kept: the same after a rebuild from the logs: ok
records moved: setup: ok
records moved: cleaner stopped between its selection and the lock: ok
records moved: clean(old) compacted: ok
records moved: clean returned true: ok
records moved: exactly the right entries left: ok
records moved: the selection was cleans_preselected: ok
records moved: verify() empty: ok
records moved: the same after a rebuild from the logs: ok
new member: setup: ok
new member: cleaner stopped between its selection and the lock: ok
new member: clean returned true: ok
new member: exactly the right entries left: ok
new member: the selection was cleans_reselected: ok
new member: verify() empty: ok
new member: the same after a rebuild from the logs: ok
tag recreated: setup: ok
tag recreated: cleaner stopped between its selection and the lock: ok
tag recreated: clean returned true: ok
tag recreated: exactly the right entries left: ok
tag recreated: the selection was cleans_reselected: ok
tag recreated: verify() empty: ok
tag recreated: the same after a rebuild from the logs: ok
array compacted: setup: ok
array compacted: cleaner stopped between its selection and the lock: ok
array compacted: clean returned true: ok
array compacted: exactly the right entries left: ok
array compacted: the selection was cleans_reselected: ok
array compacted: verify() empty: ok
array compacted: the same after a rebuild from the logs: ok
index replaced: setup: ok
index replaced: cleaner stopped between its selection and the lock: ok
index replaced: clean returned true: ok
index replaced: exactly the right entries left: ok
index replaced: the selection was cleans_reselected: ok
index replaced: verify() empty: ok
index replaced: the same after a rebuild from the logs: ok
killed: the cleaner died by SIGKILL at the point: ok
killed: nothing changed: ok
killed: the next clean takes the entries: ok
