--TEST--
Shm: a save looks its tag records up before taking the write lock; tag records created, dropped (and their block reused by another tag) or the whole index reset between that lookup and the lock (the saver stopped there by the test hook) make it look them up again under the lock, so its entry is linked to the right records, never a duplicate or a freed one; writes that create or drop no tag record leave the lookup in use
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
tc_remove_segments('119');
$opts = ['segment' => tc_seg('119'), 'size' => '4M', 'max_entries' => 2048, 'lock_timeout' => 60];
$P = ['opts' => $opts];
$c = new TagCache\Shm($opts);

function members(TagCache\Shm $c, string $tag): array
{
    $a = $c->getIdsMatchingTags([$tag]);
    sort($a);
    return $a;
}

// One round: the entries, then a child that saves S with $tags and stops
// (SIGSTOP, TAGCACHE_TEST_CRASH_MODE=stop) after its tag lookup, before the
// lock; the parent's writes $between; SIGCONT; then each tag's members must
// be $want, and the child's lookup $counter.
function round_(string $name, TagCache\Shm $c, array $P, array $setup, array $tags, callable $between,
                array $want, string $counter): void
{
    $c->clean('all');
    $ok = true;
    foreach ($setup as $id => $t) {
        $ok = $ok && $c->save("v $id", $id, $t, null);
    }
    tc_check("$name: setup", $ok);
    $w = tc_spawn_php('
        $c = new TagCache\Shm($P["opts"]);
        $r = $c->save("v S", "S", $P["tags"], null);
        $st = $c->stats();
        tc_result(["save" => $r, "kept" => $st["saves_tags_preselected"], "redone" => $st["saves_tags_reselected"]]);
    ', $P + ['tags' => $tags], ['TAGCACHE_TEST_CRASH' => 'save_preselected', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
                               'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'saver');
    $stopped = tc_wait_stopped($w['pid'], 60);
    tc_check("$name: saver stopped between its tag lookup and the lock", $stopped, tc_proc_state($w['pid']));
    $st0 = $c->stats();
    $between($c);
    $st1 = $c->stats();
    tc_kill($w['pid'], SIGCONT);
    $w = tc_wait($w, 60);
    tc_check("$name: save returned true", tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
    $got = [];
    foreach (array_keys($want) as $tag) {
        $got[$tag] = members($c, $tag);
    }
    foreach ($want as $tag => $ids) {
        sort($ids);
        $want[$tag] = $ids;
    }
    tc_check("$name: each tag lists exactly its entries", $got === $want, ['got' => $got, 'want' => $want]);
    $tl = $c->getTags();
    tc_check("$name: no tag listed twice", count($tl) === count(array_unique($tl)), $tl);
    // the saver's own save: the stats after it, less the parent's before
    // and between (a clean('all') in $between resets nothing: counters stay)
    if (tc_ok($w)) {
        $d = ['saves_tags_preselected' => $w['result']['kept'] - $st1['saves_tags_preselected'],
              'saves_tags_reselected' => $w['result']['redone'] - $st1['saves_tags_reselected']];
        tc_check("$name: the lookup was $counter", $d[$counter] === 1 && array_sum($d) === 1, $d);
    }
    tc_check("$name: verify() empty", ($v = $c->verify()) === [], $v);
}

$base = ['A1' => ['T', 'X'], 'A2' => ['X'], 'A3' => ['T', 'Y']];

// 1. Writes that create or drop no tag record (an overwrite with the same
// tags, a removal that leaves each tag an entry, a save with known tags):
// the lookup is used.
round_('kept', $c, $P, $base, ['T', 'X', 'NEW'], function (TagCache\Shm $c): void {
    $c->save('again', 'A1', ['T', 'X'], null);
    $c->remove('A2');
    $c->save('b', 'B1', ['X'], null);
}, ['T' => ['A1', 'A3', 'S'], 'X' => ['A1', 'B1', 'S'], 'NEW' => ['S'], 'Y' => ['A3']], 'saves_tags_preselected');

// 2. A tag the saver found none of is created meanwhile: looked up again,
// its entry joins that record (not a second record of the same name).
round_('created', $c, $P, $base, ['T', 'NEW'], function (TagCache\Shm $c): void {
    $c->save('p', 'P1', ['NEW'], null);
}, ['T' => ['A1', 'A3', 'S'], 'NEW' => ['P1', 'S']], 'saves_tags_reselected');

// 3. A tag the saver found is dropped (its entries cleaned) and its block
// taken by a new tag of a name of the same length: looked up again, its
// entry makes a new record of its own tag, not a member of the other.
round_('dropped', $c, $P, $base, ['T', 'X'], function (TagCache\Shm $c): void {
    $c->clean('matchingAnyTag', ['T']);
    $c->save('q', 'Q1', ['Z'], null);
}, ['T' => ['S'], 'Z' => ['Q1'], 'X' => ['A2', 'S']], 'saves_tags_reselected');

// 4. The whole index reset (clean('all')) and the tags made again: looked
// up again.
round_('reset', $c, $P, $base, ['T', 'X'], function (TagCache\Shm $c): void {
    $c->clean('all');
    $c->save('r', 'R1', ['X', 'T'], null);
}, ['T' => ['R1', 'S'], 'X' => ['R1', 'S']], 'saves_tags_reselected');
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('119');
?>
--EXPECT--
kept: setup: ok
kept: saver stopped between its tag lookup and the lock: ok
kept: save returned true: ok
kept: each tag lists exactly its entries: ok
kept: no tag listed twice: ok
kept: the lookup was saves_tags_preselected: ok
kept: verify() empty: ok
created: setup: ok
created: saver stopped between its tag lookup and the lock: ok
created: save returned true: ok
created: each tag lists exactly its entries: ok
created: no tag listed twice: ok
created: the lookup was saves_tags_reselected: ok
created: verify() empty: ok
dropped: setup: ok
dropped: saver stopped between its tag lookup and the lock: ok
dropped: save returned true: ok
dropped: each tag lists exactly its entries: ok
dropped: no tag listed twice: ok
dropped: the lookup was saves_tags_reselected: ok
dropped: verify() empty: ok
reset: setup: ok
reset: saver stopped between its tag lookup and the lock: ok
reset: save returned true: ok
reset: each tag lists exactly its entries: ok
reset: no tag listed twice: ok
reset: the lookup was saves_tags_reselected: ok
reset: verify() empty: ok
