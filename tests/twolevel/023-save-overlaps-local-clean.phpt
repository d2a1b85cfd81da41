--TEST--
TwoLevel: a save of one process of a node overlaps a remove or clean of another process of the node (A1 stopped with SIGSTOP between its slow write and its fast write, test hook TAGCACHE_TEST_CRASH=twolevel_save_marked), over Redis and File: the save keeps its fast copy when the remove or clean cannot concern its id or tags (the node's notes of its removes and cleans; before, any remove or clean in between dropped the copy, a slow read later), and drops it when it may (its tag, any of its tags, notMatchingTag, all, the id itself)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
if (!function_exists('posix_kill')) die('skip needs posix_kill() to stop and continue a process');
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$redis = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('overlap')['port']);
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl023-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$stopped = [];
register_shutdown_function(function () use (&$stopped) {
    foreach ($stopped as $pid) {
        posix_kill($pid, SIGCONT);
    }
});
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $redis, 'prefix' => 'tl023:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
];
$stop = ['TAGCACHE_TEST_CRASH' => 'twolevel_save_marked', 'TAGCACHE_TEST_CRASH_MODE' => 'stop'];
// what A2 does while A1 is stopped inside its save of x (tags t, u), and
// whether x's entry survives it in the slow level
$cases = [
    ['a clean by another tag', ['clean', 'matchingTag', ['other']], true],
    ['a clean by all of the tags and another', ['clean', 'matchingTag', ['t', 'other']], true],
    ['a clean by any of another tag', ['clean', 'matchingAnyTag', ['other', 'more']], true],
    ['a remove of another id', ['remove', 'w'], true],
    ['a clean by its tag', ['clean', 'matchingTag', ['t']], false],
    ['a clean by any of its tags', ['clean', 'matchingAnyTag', ['other', 'u']], false],
    ['a clean of the entries without another tag', ['clean', 'notMatchingTag', ['other']], false],
    ['a remove of the id', ['remove', 'x'], false],
    ['a clean of everything', ['clean', 'all'], false]
];

/** A load on a node, and whether it was a fast hit. */
function load_kind(array $node, string $id): string
{
    $h0 = tl_node($node, 'stats')['fast_hits'];
    $v = tl_node($node, 'load', $id);
    return (tl_node($node, 'stats')['fast_hits'] > $h0 ? 'fast:' : 'not fast:') . var_export($v, true);
}

/** Loads of another id on a node until it ran a sync that began after now (bounded). */
function synced_once(array $node): bool
{
    $n0 = tl_node($node, 'stats')['node_syncs'];
    return tl_wait(function () use ($node, $n0) {
        tl_node($node, 'load', 'nothing-here');
        return tl_node($node, 'stats')['node_syncs'] > $n0;
    }, 10) !== null;
}

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    $optsA = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 0.3,
        'fast_backend_options' => tl_fast_options("tl023-$engine-" . getmypid())];
    $a2 = tl_node_start($optsA);
    tl_node($a2, 'clean', 'all');
    $a1 = tl_node_start($optsA, $stop);
    // the first sync of a node is a gap (a new epoch for it): it empties the fast level
    tl_same(true, tl_node($a2, 'load', 'nothing-here') === false && tl_node($a1, 'load', 'nothing-here') === false,
        'A1 and A2 have synced once');
    $direct = 'TagCache\\' . $engine;
    $plain = new $direct($slow);   // the slow level itself
    foreach ($cases as $i => [$name, $op, $kept]) {
        // an id of its own per case: over File a replay of another
        // process's earlier save record of the id would remove the copy
        // (records appended after their write decide nothing for a later one)
        $v = "v$i";
        $x = "x$i";
        $op = array_map(fn($a) => $a === 'x' ? $x : $a, $op);
        tl_node($a2, 'save', 'w0', 'w', ['other']);
        tl_node($a2, 'remove', $x);   // no copy of x for A2's op to find in the fast level
        tl_node_send($a1, 'save', $v, $x, ['t', 'u']);
        tl_same(true, tl_wait_stopped($stopped[] = tl_node_pid($a1)) && $plain->load($x) === $v,
            "$name: A1 stopped after its slow write of x");
        tl_same(true, tl_node($a2, ...$op) !== null && ($plain->load($x) === $v) === $kept, "$name: A2 ran it");
        posix_kill(tl_node_pid($a1), SIGCONT);
        $stopped = [];
        tl_same(true, tl_node_recv($a1, 'save'), "$name: A1's save returns after SIGCONT");
        if ($kept) {
            tl_same("fast:'$v'", load_kind($a2, $x), "$name: node A keeps A1's copy (a fast hit)");
        } else {
            tl_same([false, false], [tl_node($a2, 'load', $x), tl_node($a1, 'load', $x)],
                "$name: node A serves no copy of x, as the slow level holds none");
            tl_same(true, synced_once($a2) && tl_node($a2, 'load', $x) === false, "$name: and not after a sync either");
        }
        tl_node_stop($a1);
        $a1 = tl_node_start($optsA, $stop);   // the stop hook fires once a process
    }
    foreach ([$a1, $a2] as $n) {
        tl_node_stop($n);
    }
    $plain = null;
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
# Redis
ok: A1 and A2 have synced once
ok: a clean by another tag: A1 stopped after its slow write of x
ok: a clean by another tag: A2 ran it
ok: a clean by another tag: A1's save returns after SIGCONT
ok: a clean by another tag: node A keeps A1's copy (a fast hit)
ok: a clean by all of the tags and another: A1 stopped after its slow write of x
ok: a clean by all of the tags and another: A2 ran it
ok: a clean by all of the tags and another: A1's save returns after SIGCONT
ok: a clean by all of the tags and another: node A keeps A1's copy (a fast hit)
ok: a clean by any of another tag: A1 stopped after its slow write of x
ok: a clean by any of another tag: A2 ran it
ok: a clean by any of another tag: A1's save returns after SIGCONT
ok: a clean by any of another tag: node A keeps A1's copy (a fast hit)
ok: a remove of another id: A1 stopped after its slow write of x
ok: a remove of another id: A2 ran it
ok: a remove of another id: A1's save returns after SIGCONT
ok: a remove of another id: node A keeps A1's copy (a fast hit)
ok: a clean by its tag: A1 stopped after its slow write of x
ok: a clean by its tag: A2 ran it
ok: a clean by its tag: A1's save returns after SIGCONT
ok: a clean by its tag: node A serves no copy of x, as the slow level holds none
ok: a clean by its tag: and not after a sync either
ok: a clean by any of its tags: A1 stopped after its slow write of x
ok: a clean by any of its tags: A2 ran it
ok: a clean by any of its tags: A1's save returns after SIGCONT
ok: a clean by any of its tags: node A serves no copy of x, as the slow level holds none
ok: a clean by any of its tags: and not after a sync either
ok: a clean of the entries without another tag: A1 stopped after its slow write of x
ok: a clean of the entries without another tag: A2 ran it
ok: a clean of the entries without another tag: A1's save returns after SIGCONT
ok: a clean of the entries without another tag: node A serves no copy of x, as the slow level holds none
ok: a clean of the entries without another tag: and not after a sync either
ok: a remove of the id: A1 stopped after its slow write of x
ok: a remove of the id: A2 ran it
ok: a remove of the id: A1's save returns after SIGCONT
ok: a remove of the id: node A serves no copy of x, as the slow level holds none
ok: a remove of the id: and not after a sync either
ok: a clean of everything: A1 stopped after its slow write of x
ok: a clean of everything: A2 ran it
ok: a clean of everything: A1's save returns after SIGCONT
ok: a clean of everything: node A serves no copy of x, as the slow level holds none
ok: a clean of everything: and not after a sync either
# File
ok: A1 and A2 have synced once
ok: a clean by another tag: A1 stopped after its slow write of x
ok: a clean by another tag: A2 ran it
ok: a clean by another tag: A1's save returns after SIGCONT
ok: a clean by another tag: node A keeps A1's copy (a fast hit)
ok: a clean by all of the tags and another: A1 stopped after its slow write of x
ok: a clean by all of the tags and another: A2 ran it
ok: a clean by all of the tags and another: A1's save returns after SIGCONT
ok: a clean by all of the tags and another: node A keeps A1's copy (a fast hit)
ok: a clean by any of another tag: A1 stopped after its slow write of x
ok: a clean by any of another tag: A2 ran it
ok: a clean by any of another tag: A1's save returns after SIGCONT
ok: a clean by any of another tag: node A keeps A1's copy (a fast hit)
ok: a remove of another id: A1 stopped after its slow write of x
ok: a remove of another id: A2 ran it
ok: a remove of another id: A1's save returns after SIGCONT
ok: a remove of another id: node A keeps A1's copy (a fast hit)
ok: a clean by its tag: A1 stopped after its slow write of x
ok: a clean by its tag: A2 ran it
ok: a clean by its tag: A1's save returns after SIGCONT
ok: a clean by its tag: node A serves no copy of x, as the slow level holds none
ok: a clean by its tag: and not after a sync either
ok: a clean by any of its tags: A1 stopped after its slow write of x
ok: a clean by any of its tags: A2 ran it
ok: a clean by any of its tags: A1's save returns after SIGCONT
ok: a clean by any of its tags: node A serves no copy of x, as the slow level holds none
ok: a clean by any of its tags: and not after a sync either
ok: a clean of the entries without another tag: A1 stopped after its slow write of x
ok: a clean of the entries without another tag: A2 ran it
ok: a clean of the entries without another tag: A1's save returns after SIGCONT
ok: a clean of the entries without another tag: node A serves no copy of x, as the slow level holds none
ok: a clean of the entries without another tag: and not after a sync either
ok: a remove of the id: A1 stopped after its slow write of x
ok: a remove of the id: A2 ran it
ok: a remove of the id: A1's save returns after SIGCONT
ok: a remove of the id: node A serves no copy of x, as the slow level holds none
ok: a remove of the id: and not after a sync either
ok: a clean of everything: A1 stopped after its slow write of x
ok: a clean of everything: A2 ran it
ok: a clean of everything: A1's save returns after SIGCONT
ok: a clean of everything: node A serves no copy of x, as the slow level holds none
ok: a clean of everything: and not after a sync either
done
