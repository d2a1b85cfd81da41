--TEST--
Redis Cluster of 3 masters on loopback: entries spread over the nodes, tag modes across shards, a slot moved mid-run (ASK, MOVED)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';
$nodes = [];
foreach (['n1', 'n2', 'n3'] as $n) {
    $dir = tcr_dir();
    $nodes[$n] = tcr_start($n, ['--cluster-enabled' => 'yes', '--cluster-config-file' => "$dir/$n-nodes.conf",
        '--cluster-node-timeout' => '5000']);
}
$ports = array_map(fn($s) => $s['port'], array_values($nodes));
// three equal slot ranges, then introduce the nodes to each other
$ranges = [[0, 5460], [5461, 10922], [10923, 16383]];
foreach ($ports as $i => $p) {
    tcr_cmd($p, 'CLUSTER', 'ADDSLOTS', ...array_map('strval', range($ranges[$i][0], $ranges[$i][1])));
    tcr_cmd($p, 'CLUSTER', 'SET-CONFIG-EPOCH', (string) ($i + 1));   // no epoch collision to resolve
}
tcr_cmd($ports[0], 'CLUSTER', 'MEET', '127.0.0.1', (string) $ports[1]);
tcr_cmd($ports[0], 'CLUSTER', 'MEET', '127.0.0.1', (string) $ports[2]);
$ok = false;
for ($i = 0; $i < 300 && !$ok; $i++) {
    $ok = true;
    foreach ($ports as $p) {
        $ok = $ok && str_contains((string) tcr_cmd($p, 'CLUSTER', 'INFO'), 'cluster_state:ok')
            && count(explode("\n", trim((string) tcr_cmd($p, 'CLUSTER', 'NODES')))) === 3;
    }
    if (!$ok) {
        usleep(50000);
    }
}
tcr_check($ok, 'a 3-master cluster is up');

$opts = ['server' => "127.0.0.1:{$ports[0]},127.0.0.1:{$ports[1]}", 'cluster' => '1', 'prefix' => 'cl:',
    'on_error' => 'exception'];
$b = new TagCache\Redis($opts);
$expect = [];
for ($i = 0; $i < 400; $i++) {
    $tags = ['all', 't' . ($i % 10), 'u' . ($i % 3)];
    $b->save("value $i", "id$i", $tags);
    $expect["id$i"] = $tags;
}
$perNode = array_map(fn($p) => (int) tcr_cmd($p, 'DBSIZE'), $ports);
tcr_check(min($perNode) > 50, 'the keys are spread over the 3 masters', json_encode($perNode));
tcr_same(16, $b->stats()['shards'], 'a cluster gets 16 shards by default');

function ids_with(array $expect, callable $pred): array
{
    $out = [];
    foreach ($expect as $id => $tags) {
        if ($pred($tags)) {
            $out[] = $id;
        }
    }
    sort($out);
    return $out;
}
function sorted(array $a): array
{
    sort($a);
    return $a;
}
tcr_same(ids_with($expect, fn($t) => true), sorted($b->getIds()), 'getIds() gathers every shard');
tcr_same(sorted(array_merge(['all', 'u0', 'u1', 'u2'], array_map(fn($k) => "t$k", range(0, 9)))), sorted($b->getTags()),
    'getTags() gathers every shard, without duplicates');
tcr_same(ids_with($expect, fn($t) => in_array('t3', $t) && in_array('u1', $t)), sorted($b->getIdsMatchingTags(['t3', 'u1'])),
    'getIdsMatchingTags([t3, u1])');
tcr_same(ids_with($expect, fn($t) => in_array('t3', $t) || in_array('t4', $t)), sorted($b->getIdsMatchingAnyTags(['t3', 't4'])),
    'getIdsMatchingAnyTags([t3, t4])');
tcr_same(ids_with($expect, fn($t) => !in_array('u0', $t) && !in_array('t1', $t)), sorted($b->getIdsNotMatchingTags(['u0', 't1'])),
    'getIdsNotMatchingTags([u0, t1])');

tcr_same(true, $b->clean('matchingAnyTag', ['t0']), "clean('matchingAnyTag', [t0]) on every shard");
$expect = array_filter($expect, fn($t) => !in_array('t0', $t));
tcr_same(true, $b->clean('matchingTag', ['t1', 'u1']), "clean('matchingTag', [t1, u1])");
$expect = array_filter($expect, fn($t) => !(in_array('t1', $t) && in_array('u1', $t)));
tcr_same(ids_with($expect, fn($t) => true), sorted($b->getIds()), 'the cleans removed exactly their entries');
$bad = 0;
foreach ($expect as $id => $t) {
    $bad += $b->load($id) === 'value ' . substr($id, 2) ? 0 : 1;
}
tcr_same(0, $bad, 'every other entry loads');
tcr_same([], $b->verify(), 'verify() on every master: no entry without its links');

// Move the slot that holds shard keys of some ids to another master, the
// way redis-cli --cluster reshard does, while $b keeps its slot map.
$key = null;
foreach ($ports as $p) {
    $r = tcr_cmd($p, 'SCAN', '0', 'MATCH', 'cl:{*}e:*', 'COUNT', '1000');
    if (!empty($r[1])) {
        $key = $r[1][0];
        $src = $p;
        break;
    }
}
$slot = (int) tcr_cmd($src, 'CLUSTER', 'KEYSLOT', $key);
$dst = $ports[(array_search($src, $ports) + 1) % 3];
$srcId = tcr_cmd($src, 'CLUSTER', 'MYID');
$dstId = tcr_cmd($dst, 'CLUSTER', 'MYID');
preg_match('/\{([^}]*)\}/', $key, $m);
$hashtag = $m[1];
$inSlot = [];
foreach (array_keys($expect) as $id) {
    if ((int) tcr_cmd($src, 'CLUSTER', 'KEYSLOT', "cl:{{$hashtag}}e:$id") === $slot) {
        $inSlot[] = $id;
    }
}
tcr_check(count($inSlot) > 3, 'some entries live in the slot being moved', (string) count($inSlot));
tcr_cmd($dst, 'CLUSTER', 'SETSLOT', (string) $slot, 'IMPORTING', $srcId);
tcr_cmd($src, 'CLUSTER', 'SETSLOT', (string) $slot, 'MIGRATING', $dstId);
// migrate half the entry keys: the others are still on the source
$half = array_slice($inSlot, 0, intdiv(count($inSlot), 2));
foreach ($half as $id) {
    tcr_cmd($src, 'MIGRATE', '127.0.0.1', (string) $dst, "cl:{{$hashtag}}e:$id", '0', '5000');
}
$good = 0;
foreach ($inSlot as $id) {
    $good += $b->load($id) === 'value ' . substr($id, 2) ? 1 : 0;
}
tcr_same(count($inSlot), $good, 'during the migration every entry loads (ASK followed for the moved ones)');
// finish: move every key left, then give the slot to the destination
for ($k = 0; $k < 100; $k++) {
    $keys = tcr_cmd($src, 'CLUSTER', 'GETKEYSINSLOT', (string) $slot, '100');
    if (!$keys) {
        break;
    }
    tcr_cmd($src, 'MIGRATE', '127.0.0.1', (string) $dst, '', '0', '5000', 'KEYS', ...$keys);
}
$redirects0 = $b->stats()['redirects'];
foreach ($ports as $p) {
    tcr_cmd($p, 'CLUSTER', 'SETSLOT', (string) $slot, 'NODE', $dstId);
}
$good = 0;
foreach ($inSlot as $id) {
    $good += $b->load($id) === 'value ' . substr($id, 2) ? 1 : 0;
}
tcr_same(count($inSlot), $good, 'after the move every entry of the slot loads (MOVED followed)');
tcr_check($b->stats()['redirects'] > $redirects0, 'the stale slot map was corrected by redirects');
tcr_same(true, $b->save('new value', $inSlot[0], ['all', 'moved']), 'a save into the moved slot works');
tcr_same([$inSlot[0]], $b->getIdsMatchingTags(['moved']), 'and is found by its tag');
tcr_same(true, $b->clean('matchingAnyTag', ['all']), "clean('matchingAnyTag', [all]) after the move");
tcr_same([], $b->getIds(), 'nothing left');
tcr_same([], $b->verify(), 'verify() after the move');
$b2 = new TagCache\Redis($opts);   // a new object in this process starts from the cached map
tcr_same(true, $b2->save('x', 'fresh'), 'a new object works');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: a 3-master cluster is up
ok: the keys are spread over the 3 masters
ok: a cluster gets 16 shards by default
ok: getIds() gathers every shard
ok: getTags() gathers every shard, without duplicates
ok: getIdsMatchingTags([t3, u1])
ok: getIdsMatchingAnyTags([t3, t4])
ok: getIdsNotMatchingTags([u0, t1])
ok: clean('matchingAnyTag', [t0]) on every shard
ok: clean('matchingTag', [t1, u1])
ok: the cleans removed exactly their entries
ok: every other entry loads
ok: verify() on every master: no entry without its links
ok: some entries live in the slot being moved
ok: during the migration every entry loads (ASK followed for the moved ones)
ok: after the move every entry of the slot loads (MOVED followed)
ok: the stale slot map was corrected by redirects
ok: a save into the moved slot works
ok: and is found by its tag
ok: clean('matchingAnyTag', [all]) after the move
ok: nothing left
ok: verify() after the move
ok: a new object works
done
