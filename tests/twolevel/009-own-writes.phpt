--TEST--
TwoLevel: a node's own save, remove and clean are not applied to its fast level a second time when the node replays the journal (the fresh copy of its own save stays a fast hit), over Redis and File; two objects of one node that save the same id keep no superseded copy; another node still sees every write; a node's own remove and clean leave tombstones (a miss without a slow read) that a later save on any node ends
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('own')['port']);
$dir = rtrim(sys_get_temp_dir(), '/') . '/tagcache-tl009-' . getmypid();
tcr_rmtree($dir);
register_shutdown_function(fn() => tcr_rmtree($dir));
$slows = [
    'Redis' => ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl009:' . getmypid() . ':'],
    'File' => ['cache_dir' => $dir, 'max_size' => '4M'],
];

/** Loads of another id until this object ran a sync that began after now (bounded). */
function synced_once(TagCache\TwoLevel $b): bool
{
    $n0 = $b->stats()['node_syncs'];
    return tl_wait(function () use ($b, $n0) {
        $b->load('nothing-here');
        return $b->stats()['node_syncs'] > $n0;
    }, 10) !== null;
}

/** The fast and slow hits one load() adds. */
function hit_kind(TagCache\TwoLevel $b, string $id): string
{
    $s0 = $b->stats();
    $v = $b->load($id);
    $s1 = $b->stats();
    $kind = $s1['fast_hits'] > $s0['fast_hits'] ? 'fast' : ($s1['slow_hits'] > $s0['slow_hits'] ? 'slow' : 'miss');
    return $kind . ':' . var_export($v, true);
}

foreach ($slows as $engine => $slow) {
    echo "# $engine\n";
    $seg = "tl009-$engine-" . getmypid();
    $opts = ['slow_backend' => $engine, 'slow_backend_options' => $slow, 'max_staleness' => 0.05,
        'fast_backend_options' => tl_fast_options($seg)];
    $a = new TagCache\TwoLevel($opts);
    $a->clean('all');
    tl_same(true, synced_once($a), 'a sync after the clean');

    tl_same(true, $a->save('v1', 'x', ['t']), 'A saves x');
    tl_same(true, synced_once($a), 'A synced after its save');
    tl_same("fast:'v1'", hit_kind($a, 'x'), 'x is still a fast hit after A replayed its own save');

    tl_same(true, $a->clean('matchingTag', ['t']), 'A cleans tag t');
    tl_same(true, $a->save('v2', 'y', ['t']), 'A saves y with tag t after the clean');
    $a->save('v0', 'z');
    tl_same(true, $a->remove('z'), 'A removes z');
    tl_same(true, $a->save('v3', 'z', ['u']), 'A saves z after the remove');
    tl_same(true, synced_once($a), 'A synced after the clean, the remove and the saves');
    tl_same("fast:'v2'", hit_kind($a, 'y'), 'y is a fast hit: A\'s own clean was not applied again');
    tl_same("fast:'v3'", hit_kind($a, 'z'), 'z is a fast hit: A\'s own remove was not applied again');
    tl_same("miss:false", hit_kind($a, 'x'), 'x, cleaned by tag, is gone');
    tl_same(true, $a->stats()['own_skipped'] >= 4, 'stats() counts the skipped own records');

    echo "# $engine: tombstones\n";
    $l = new TagCache\TwoLevel(['max_staleness' => 4, 'fast_backend_options' => tl_fast_options("$seg-l")] + $opts);
    $l->load('nothing-here');   // its first sync (an empty node) is done
    tl_same(true, $l->save('k1', 'k', ['q']) && $l->save('m1', 'm'), 'L saves k (tag q) and m');
    tl_same("fast:'k1'", hit_kind($l, 'k'), 'L reads k from its fast level');
    tl_same(true, $l->clean('matchingAnyTag', ['q']) && $l->remove('m'), 'L cleans tag q and removes m');
    $k0 = $l->stats()['known_absent'];
    tl_same("miss:false", hit_kind($l, 'k'), 'L misses k');
    tl_same("miss:false", hit_kind($l, 'm'), 'L misses m');
    tl_same($k0 + 2, $l->stats()['known_absent'], 'without asking the slow level (tombstones of its own clean and remove)');
    tl_same(true, $l->save('k2', 'k'), 'L saves k again');
    tl_same("fast:'k2'", hit_kind($l, 'k'), 'L reads the new k');
    $o = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-o")] + $opts);
    tl_same(true, $o->save('m2', 'm'), 'another node saves m');
    // L's next sync replays that record well within the tombstone's 4 s: it must end the tombstone
    tl_same(true, synced_once($l), 'L synced');
    tl_same("slow:'m2'", hit_kind($l, 'm'), 'L reads the other node\'s m');

    echo "# $engine: two objects of one node\n";
    $a2 = new TagCache\TwoLevel($opts);   // same fast segment: the same node
    tl_same(true, $a->save('old', 'w'), 'A saves w');
    tl_same(true, $a2->save('new', 'w'), 'A2 (same node) saves w');
    tl_same(true, synced_once($a), 'A synced');
    tl_same('new', $a->load('w'), 'A reads the newer value of w');
    tl_same('new', $a2->load('w'), 'A2 reads the newer value of w');

    echo "# $engine: another node\n";
    $b = new TagCache\TwoLevel(['fast_backend_options' => tl_fast_options("$seg-b")] + $opts);
    tl_same('v2', $b->load('y'), 'B reads y');
    tl_same('v2', $b->load('y'), 'B reads y again (fast)');
    tl_same(true, $a->save('v2b', 'y', ['t']), 'A overwrites y');
    tl_same(true, tl_wait(fn() => $b->load('y') === 'v2b', 10) !== null, 'B sees the overwrite');
    tl_same(true, $a->clean('matchingTag', ['t']), 'A cleans tag t');
    tl_same(true, tl_wait(fn() => $b->load('y') === false, 10) !== null, 'B sees the clean');
    tl_same(false, $a->load('y'), 'A misses y');
    tl_same(true, $b->save('v5', 'y', ['t']), 'B saves y again');
    tl_same(true, tl_wait(fn() => $a->load('y') === 'v5', 10) !== null, 'A reads B\'s y (its tombstone for y went with B\'s record)');
    tl_same(true, $a->remove('y'), 'A removes y');
    tl_same(false, $a->load('y'), 'A misses y');
    tl_same(true, $a->save('v6', 'y'), 'A saves y');
    tl_same('v6', $a->load('y'), 'A reads its new y at once');
    tl_same(true, tl_wait(fn() => $b->load('y') === 'v6', 10) !== null, 'B reads it too');
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
ok: a sync after the clean
ok: A saves x
ok: A synced after its save
ok: x is still a fast hit after A replayed its own save
ok: A cleans tag t
ok: A saves y with tag t after the clean
ok: A removes z
ok: A saves z after the remove
ok: A synced after the clean, the remove and the saves
ok: y is a fast hit: A's own clean was not applied again
ok: z is a fast hit: A's own remove was not applied again
ok: x, cleaned by tag, is gone
ok: stats() counts the skipped own records
# Redis: tombstones
ok: L saves k (tag q) and m
ok: L reads k from its fast level
ok: L cleans tag q and removes m
ok: L misses k
ok: L misses m
ok: without asking the slow level (tombstones of its own clean and remove)
ok: L saves k again
ok: L reads the new k
ok: another node saves m
ok: L synced
ok: L reads the other node's m
# Redis: two objects of one node
ok: A saves w
ok: A2 (same node) saves w
ok: A synced
ok: A reads the newer value of w
ok: A2 reads the newer value of w
# Redis: another node
ok: B reads y
ok: B reads y again (fast)
ok: A overwrites y
ok: B sees the overwrite
ok: A cleans tag t
ok: B sees the clean
ok: A misses y
ok: B saves y again
ok: A reads B's y (its tombstone for y went with B's record)
ok: A removes y
ok: A misses y
ok: A saves y
ok: A reads its new y at once
ok: B reads it too
# File
ok: a sync after the clean
ok: A saves x
ok: A synced after its save
ok: x is still a fast hit after A replayed its own save
ok: A cleans tag t
ok: A saves y with tag t after the clean
ok: A removes z
ok: A saves z after the remove
ok: A synced after the clean, the remove and the saves
ok: y is a fast hit: A's own clean was not applied again
ok: z is a fast hit: A's own remove was not applied again
ok: x, cleaned by tag, is gone
ok: stats() counts the skipped own records
# File: tombstones
ok: L saves k (tag q) and m
ok: L reads k from its fast level
ok: L cleans tag q and removes m
ok: L misses k
ok: L misses m
ok: without asking the slow level (tombstones of its own clean and remove)
ok: L saves k again
ok: L reads the new k
ok: another node saves m
ok: L synced
ok: L reads the other node's m
# File: two objects of one node
ok: A saves w
ok: A2 (same node) saves w
ok: A synced
ok: A reads the newer value of w
ok: A2 reads the newer value of w
# File: another node
ok: B reads y
ok: B reads y again (fast)
ok: A overwrites y
ok: B sees the overwrite
ok: A cleans tag t
ok: B sees the clean
ok: A misses y
ok: B saves y again
ok: A reads B's y (its tombstone for y went with B's record)
ok: A removes y
ok: A misses y
ok: A saves y
ok: A reads its new y at once
ok: B reads it too
done
