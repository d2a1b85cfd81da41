--TEST--
Shm: a one-tag clean selects its entries before taking the write lock; writes made between that selection and the lock (the cleaner stopped there by the test hook) still leave exactly the right entries removed: removals and slot reuse (selection kept, members checked again), a new member or a dropped and recreated tag (selection made again)
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
tc_remove_segments('118');
$opts = ['segment' => tc_seg('118'), 'size' => '4M', 'max_entries' => 2048, 'lock_timeout' => 60];
$P = ['opts' => $opts];
$c = new TagCache\Shm($opts);

function ids(TagCache\Shm $c): array
{
    $a = $c->getIds();
    sort($a);
    return $a;
}

// One round: the entries, then a child that cleans $tag and stops (SIGSTOP,
// TAGCACHE_TEST_CRASH_MODE=stop) after its selection, before the lock; the
// parent's writes $between; SIGCONT; then what is left must be $want.
function round_(string $name, TagCache\Shm $c, array $P, array $setup, string $tag, callable $between,
                array $want, string $counter, int $parentCleans = 0): void
{
    $c->clean('all');
    $ok = true;
    foreach ($setup as $id => $tags) {
        $ok = $ok && $c->save("v $id", $id, $tags, null);
    }
    tc_check("$name: setup", $ok);
    $st0 = $c->stats();
    $w = tc_spawn_php('
        $c = new TagCache\Shm($P["opts"]);
        tc_result(["clean" => $c->clean("matchingAnyTag", [$P["tag"]])]);
    ', $P + ['tag' => $tag], ['TAGCACHE_TEST_CRASH' => 'clean_preselected', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
                              'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'cleaner');
    $stopped = tc_wait_stopped($w['pid'], 60);
    tc_check("$name: cleaner stopped between its selection and the lock", $stopped, tc_proc_state($w['pid']));
    $between($c);
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
}

$base = ['A1' => ['T', 'X'], 'A2' => ['X', 'T'], 'A3' => ['T'], 'A4' => ['Y', 'T', 'X'], 'A5' => ['T'],
         'A6' => ['T', 'Y'], 'B1' => ['X'], 'B2' => ['Y'], 'B3' => []];

// 1. Removals only (no member added): the selection is kept, and each
// selected member checked again under the lock. A1 removed and its slot
// taken by N1 (without T), A2 saved again without T (same slot, no link to
// T): neither may go; A3 removed by the parent too.
round_('kept', $c, $P, $base, 'T', function (TagCache\Shm $c): void {
    $c->remove('A1');
    $c->save('n', 'N1', ['X'], null);
    $c->save('v A2 again', 'A2', ['X'], null);
    $c->remove('A3');
}, ['A2', 'N1', 'B1', 'B2', 'B3'], 'cleans_preselected');

// 2. A new member (a save that links T, and one that saves an old member
// again with T): the selection is made again under the lock, and takes
// both.
round_('new member', $c, $P, $base, 'T', function (TagCache\Shm $c): void {
    $c->save('c', 'C7', ['Y', 'T'], null);
    $c->save('v A1 again', 'A1', ['T'], null);
}, ['B1', 'B2', 'B3'], 'cleans_reselected');

// 3. The tag cleaned by the parent, then a new entry carries it again: a new
// record (perhaps at the same place): the selection is made again.
round_('tag recreated', $c, $P, $base, 'T', function (TagCache\Shm $c): void {
    $c->clean('matchingAnyTag', ['T']);
    $c->save('d', 'D1', ['T', 'X'], null);
}, ['B1', 'B2', 'B3'], 'cleans_reselected', 1);

// 4. A compaction of T's member array (saves again of its members, with
// their tags changed each time so that they are linked anew, until the
// full array is at most half live): members move, the selection is made
// again.
$many = [];
for ($i = 0; $i < 16; $i++) {
    $many["M$i"] = ['T'];
}
$many['B1'] = ['X'];
round_('compacted', $c, $P, $many, 'T', function (TagCache\Shm $c): void {
    for ($r = 0; $r < 3; $r++) {
        for ($i = 0; $i < 16; $i++) {
            $c->save("again $r", "M$i", $r % 2 ? ['T'] : ['T', 'W'], null);
        }
    }
}, ['B1'], 'cleans_reselected');

// 5. Members saved again with the same tags in the same order: the new
// entries take the old ones' links over (same positions, same link
// indexes, no stamp): the selection is kept, and removes them.
round_('same tags again', $c, $P, $base, 'T', function (TagCache\Shm $c): void {
    $c->save('v A1 again', 'A1', ['T', 'X'], null);
    $c->save('v A4 again', 'A4', ['Y', 'T', 'X'], null);
}, ['B1', 'B2', 'B3'], 'cleans_preselected');

// 6. Saved again with the same tags in another order, or with other tags of
// the same count and length: linked anew (the selection is made again), and
// each entry is a member of exactly its new tags.
round_('other order', $c, $P, $base, 'T', function (TagCache\Shm $c): void {
    $c->save('v A1 again', 'A1', ['X', 'T'], null);
    $c->save('v B1 again', 'B1', ['Y'], null);
    $x = $c->getIdsMatchingTags(['X']);
    $y = $c->getIdsMatchingTags(['Y']);
    sort($x);
    sort($y);
    tc_check('other order: X and Y list their entries', $x === ['A1', 'A2', 'A4'] && $y === ['A4', 'A6', 'B1', 'B2'],
             ['X' => $x, 'Y' => $y]);
}, ['B1', 'B2', 'B3'], 'cleans_reselected');
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('118');
?>
--EXPECT--
kept: setup: ok
kept: cleaner stopped between its selection and the lock: ok
kept: clean returned true: ok
kept: exactly the right entries left: ok
kept: the selection was cleans_preselected: ok
kept: verify() empty: ok
new member: setup: ok
new member: cleaner stopped between its selection and the lock: ok
new member: clean returned true: ok
new member: exactly the right entries left: ok
new member: the selection was cleans_reselected: ok
new member: verify() empty: ok
tag recreated: setup: ok
tag recreated: cleaner stopped between its selection and the lock: ok
tag recreated: clean returned true: ok
tag recreated: exactly the right entries left: ok
tag recreated: the selection was cleans_reselected: ok
tag recreated: verify() empty: ok
compacted: setup: ok
compacted: cleaner stopped between its selection and the lock: ok
compacted: clean returned true: ok
compacted: exactly the right entries left: ok
compacted: the selection was cleans_reselected: ok
compacted: verify() empty: ok
same tags again: setup: ok
same tags again: cleaner stopped between its selection and the lock: ok
same tags again: clean returned true: ok
same tags again: exactly the right entries left: ok
same tags again: the selection was cleans_preselected: ok
same tags again: verify() empty: ok
other order: setup: ok
other order: cleaner stopped between its selection and the lock: ok
other order: X and Y list their entries: ok
other order: clean returned true: ok
other order: exactly the right entries left: ok
other order: the selection was cleans_reselected: ok
other order: verify() empty: ok
