--TEST--
maxmemory with volatile-lru and allkeys-lru: evictions never leave an entry that a clean by tag cannot reach; OOM is a clean failure
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

function value_of(string $id): string
{
    return $id . ':' . str_repeat(md5($id), 64);   // about 2 KB, self-describing
}

foreach (['volatile-lru', 'allkeys-lru'] as $policy) {
    echo "# $policy\n";
    $srv = tcr_start("mm-$policy", ['--maxmemory' => '3mb', '--maxmemory-policy' => $policy]);
    $port = $srv['port'];
    $b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'mm:']);
    $tagsOf = [];
    $saved = 0;
    for ($i = 0; $i < 3000; $i++) {
        $id = "e$i";
        $tagsOf[$id] = ['ALL', 'a' . ($i % 50), 'b' . ($i % 7)];
        $saved += $b->save(value_of($id), $id, $tagsOf[$id], 3600) ? 1 : 0;
    }
    preg_match('/evicted_keys:(\d+)/', tcr_cmd($port, 'INFO', 'stats'), $m);
    tcr_check((int) $m[1] > 0, 'Redis evicted keys (6 MB of entries into 3 MB)', 'evicted_keys ' . $m[1]);
    tcr_check($saved > 2500, 'saves keep working while Redis evicts', "$saved of 3000");
    $pct = $b->getFillingPercentage();
    tcr_check($pct >= 50 && $pct <= 100, 'getFillingPercentage() reports a full store', (string) $pct);

    // Eviction took some tag keys; take a few more ourselves to be sure.
    foreach (['a3', 'a17', 'b2'] as $t) {
        tcr_cmd($port, 'DEL', "mm:{0}t:$t");
    }
    $wrong = $served = $orphanServed = 0;
    foreach ($tagsOf as $id => $tags) {
        $v = $b->load($id);
        if ($v === false) {
            continue;
        }
        $served++;
        $wrong += $v === value_of($id) ? 0 : 1;
        foreach (['a3', 'a17', 'b2'] as $t) {
            $orphanServed += in_array($t, $tags, true) ? 1 : 0;
        }
    }
    tcr_same(0, $wrong, 'every load is a miss or exactly the value saved');
    // which old entries survive depends on what Redis evicted; fresh ones are served
    $fresh = 0;
    for ($i = 0; $i < 20; $i++) {
        $b->save(value_of("n$i"), "n$i", ['fresh', "f$i"], 3600);
        $fresh += $b->load("n$i") === value_of("n$i") ? 1 : 0;
        $tagsOf["n$i"] = ['fresh', "f$i"];
    }
    tcr_same(20, $fresh, 'entries saved into the full store are served');
    tcr_same(0, $orphanServed, 'an entry whose tag key is gone is never served (it could not be cleaned by that tag)');

    // Invalidate everything by tag: nothing may be served afterwards.
    $all = [];
    for ($k = 0; $k < 50; $k++) {
        $all[] = "a$k";
    }
    $b->clean('matchingAnyTag', array_merge($all, ['ALL', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'fresh']));
    $still = 0;
    foreach ($tagsOf as $id => $tags) {
        $still += $b->load($id) !== false ? 1 : 0;
    }
    tcr_same(0, $still, 'after cleaning every tag no entry is served');

    // With checking turned off the same damage is visible: that is what
    // verify_tags protects against (this proves the check above can fail).
    $unchecked = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'mm2:', 'verify_tags' => 0]);
    $checked = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'mm2:']);
    $unchecked->save('x', 'lost', ['gone', 'kept'], 3600);
    tcr_cmd($port, 'DEL', 'mm2:{0}t:gone');
    tcr_same('x', $unchecked->load('lost'), 'verify_tags=0: an entry whose tag key was evicted is still served');
    tcr_same(false, $checked->load('lost'), 'verify_tags=auto (the server may evict): the same entry is a miss');
    tcr_same(false, $unchecked->load('lost'), 'and the checked load removed it');
    tcr_same([], $checked->getIdsMatchingTags(['kept']), 'with its remaining links');
    tcr_cmd($port, 'FLUSHALL');

    if ($policy === 'volatile-lru') {
        // Entries without expiry cannot be evicted under volatile-*: once
        // memory is full a save fails cleanly.
        $e = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'oom:', 'on_error' => 'exception']);
        $m = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'oom:']);
        $failed = null;
        for ($i = 0; $i < 5000 && $failed === null; $i++) {
            try {
                $e->save(value_of("f$i"), "f$i", ['forever'], null);
            } catch (TagCache\ConnectionException $x) {
                $failed = $x->getMessage();
            }
        }
        tcr_check($failed !== null && str_contains($failed, 'OOM') && str_contains($failed, "127.0.0.1:$port"),
            'forever entries fill the memory: save() throws with the server\'s OOM error, naming it', (string) $failed);
        // Redis's used_memory moves a little (client buffers): right after
        // one refusal the next save may still fit. Keep saving, bounded,
        // until the store refuses: with on_error=miss that is a false, not
        // an exception.
        $refused = false;
        for ($i = 0; $i < 500 && !$refused; $i++) {
            $refused = $m->save(value_of("g$i"), "g$i", ['forever'], null) === false;
        }
        tcr_same(true, $refused, 'on_error=miss: save() returns false');
        tcr_same(value_of('f0'), $m->load('f0'), 'entries saved before are intact');
        tcr_same([], $m->verify(), 'verify(): no entry without its links after the failed saves');
        preg_match('/used_memory:(\d+)/', tcr_cmd($port, 'INFO', 'memory'), $mem);
        tcr_check((int) $mem[1] < 4 << 20, 'the refused saves did not push Redis past maxmemory', $mem[1] . ' bytes used');
        tcr_same(true, $e->clean('matchingAnyTag', ['forever']), 'a clean by tag works while Redis is out of memory');
        tcr_same([], $m->getIds(), 'and removed everything it should');
        tcr_same(true, $e->save('x', 'after', ['forever'], null), 'saves work again once memory is free');
    }
    tcr_stop($srv);
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# volatile-lru
ok: Redis evicted keys (6 MB of entries into 3 MB)
ok: saves keep working while Redis evicts
ok: getFillingPercentage() reports a full store
ok: every load is a miss or exactly the value saved
ok: entries saved into the full store are served
ok: an entry whose tag key is gone is never served (it could not be cleaned by that tag)
ok: after cleaning every tag no entry is served
ok: verify_tags=0: an entry whose tag key was evicted is still served
ok: verify_tags=auto (the server may evict): the same entry is a miss
ok: and the checked load removed it
ok: with its remaining links
ok: forever entries fill the memory: save() throws with the server's OOM error, naming it
ok: on_error=miss: save() returns false
ok: entries saved before are intact
ok: verify(): no entry without its links after the failed saves
ok: the refused saves did not push Redis past maxmemory
ok: a clean by tag works while Redis is out of memory
ok: and removed everything it should
ok: saves work again once memory is free
# allkeys-lru
ok: Redis evicted keys (6 MB of entries into 3 MB)
ok: saves keep working while Redis evicts
ok: getFillingPercentage() reports a full store
ok: every load is a miss or exactly the value saved
ok: entries saved into the full store are served
ok: an entry whose tag key is gone is never served (it could not be cleaned by that tag)
ok: after cleaning every tag no entry is served
ok: verify_tags=0: an entry whose tag key was evicted is still served
ok: verify_tags=auto (the server may evict): the same entry is a miss
ok: and the checked load removed it
ok: with its remaining links
done
