--TEST--
File: a save looks its tags up before taking the write lock; a tag dropped meanwhile (and its record taken by another tag), or dropped and made again, or a replaced index, between that lookup and the lock (the saver stopped there by the test hook) still links the entry to the right tags
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
$tmp = tc_make_tmpdir('f126');
$opts = ['cache_dir' => "$tmp/store", 'max_size' => '8M', 'lock_timeout' => 60];
$P = ['opts' => $opts];

function tagged(TagCache\File $c, array $tags): array
{
    $r = [];
    foreach ($tags as $t) {
        $a = $c->getIdsMatchingTags([$t]);
        sort($a);
        $r[$t] = $a;
    }
    return $r;
}

// One round: the store as $setup makes it; a child saves S with $tags and
// stops after looking them up, before the lock; the parent's writes
// $between; SIGCONT; then each tag of $want must list exactly its ids.
function round_(string $name, array $P, callable $setup, array $tags, callable $between, array $want): void
{
    $c = new TagCache\File($P['opts']);
    $c->clean('all');
    tc_check("$name: setup", $setup($c));
    $w = tcf_spawn_php('
        $c = new TagCache\File($P["opts"]);
        tc_result(["save" => $c->save("s", "S", $P["tags"], null)]);
    ', $P + ['tags' => $tags], ['TAGCACHE_TEST_CRASH' => 'file_save_looked_up', 'TAGCACHE_TEST_CRASH_AFTER' => '1',
                                'TAGCACHE_TEST_CRASH_MODE' => 'stop'], 'saver');
    $stopped = tcf_wait_stopped($w['pid'], 60);
    tc_check("$name: saver stopped between its lookup and the lock", $stopped, tcf_proc_state($w['pid']));
    $between($c);
    tc_kill($w['pid'], SIGCONT);
    $w = tc_wait($w, 60);
    tc_check("$name: save returned true", tc_ok($w) && $w['result']['save'] === true, tc_describe($w));
    $c = new TagCache\File($P['opts']);
    $got = tagged($c, array_keys($want));
    tc_check("$name: every tag lists exactly its entries", $got === $want, ['got' => $got, 'want' => $want]);
    tc_check("$name: verify() empty", ($v = $c->verify()) === [], $v);
}

// 1. Tag T dropped (its only entry removed), then a new tag U takes its
// record (the free list gives the last freed record first): S must carry
// T (a new record), not U.
round_('record taken by another tag', $P, function (TagCache\File $c): bool {
    return $c->save('a', 'A', ['T'], null) && $c->save('b', 'B', ['X'], null);
}, ['T', 'X'], function (TagCache\File $c): void {
    $c->remove('A');
    $c->save('u', 'U1', ['U'], null);
}, ['T' => ['S'], 'U' => ['U1'], 'X' => ['B', 'S']]);

// 2. Tag T dropped and made again by another entry: S joins the new T.
round_('tag made again', $P, function (TagCache\File $c): bool {
    return $c->save('a', 'A', ['T'], null);
}, ['T'], function (TagCache\File $c): void {
    $c->clean('matchingAnyTag', ['T']);
    $c->save('d', 'D', ['T'], null);
}, ['T' => ['D', 'S']]);

// 3. The index replaced (clean('all')), and other tags made first, so that
// T's old record number names another tag in the new index.
round_('index replaced', $P, function (TagCache\File $c): bool {
    return $c->save('a', 'A', ['T'], null);
}, ['T'], function (TagCache\File $c): void {
    $c->clean('all');
    $c->save('v', 'V', ['V1', 'V2'], null);
}, ['T' => ['S'], 'V1' => ['V'], 'V2' => ['V']]);

// 4. Nothing changed: the lookup is used as it is.
round_('unchanged', $P, function (TagCache\File $c): bool {
    return $c->save('a', 'A', ['T', 'X'], null);
}, ['X', 'T'], function (TagCache\File $c): void {
}, ['T' => ['A', 'S'], 'X' => ['A', 'S']]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f126');
?>
--EXPECT--
record taken by another tag: setup: ok
record taken by another tag: saver stopped between its lookup and the lock: ok
record taken by another tag: save returned true: ok
record taken by another tag: every tag lists exactly its entries: ok
record taken by another tag: verify() empty: ok
tag made again: setup: ok
tag made again: saver stopped between its lookup and the lock: ok
tag made again: save returned true: ok
tag made again: every tag lists exactly its entries: ok
tag made again: verify() empty: ok
index replaced: setup: ok
index replaced: saver stopped between its lookup and the lock: ok
index replaced: save returned true: ok
index replaced: every tag lists exactly its entries: ok
index replaced: verify() empty: ok
unchanged: setup: ok
unchanged: saver stopped between its lookup and the lock: ok
unchanged: save returned true: ok
unchanged: every tag lists exactly its entries: ok
unchanged: verify() empty: ok
