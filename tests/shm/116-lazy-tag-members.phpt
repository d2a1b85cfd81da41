--TEST--
Shm: tag members removed lazily stay exact (every listing and clean mode against a model, re-saves that change tags) and bounded (a tag's array shrinks with its live members, re-saves do not grow it)
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
tc_remove_segments('116');
$opts = ['segment' => tc_seg('116'), 'size' => 16 << 20, 'max_entries' => 8192];
$c = new TagCache\Shm($opts);
$c->clean('all');

// ---- exactness: random saves (tags changing), removes and cleans of every
// mode against a model; every listing compared, and verify() clean.
mt_srand(116);
$model = [];  // id => tags
$tagPool = [];
for ($i = 0; $i < 12; $i++) {
    $tagPool[] = "t$i";
}
function pick(array $pool, int $n): array
{
    $t = [];
    while (count($t) < $n) {
        $x = $pool[mt_rand(0, count($pool) - 1)];
        if (!in_array($x, $t, true)) {
            $t[] = $x;
        }
    }
    return $t;
}
function sorted(array $a): array
{
    sort($a, SORT_STRING);
    return array_values($a);
}
function expect(string $what, array $got, array $want, int &$bad): void
{
    if (sorted($got) !== sorted($want)) {
        if ($bad++ < 5) {
            printf("%s: got %d ids, want %d\n", $what, count($got), count($want));
        }
    }
}
function listings(TagCache\Shm $c, array $model, array $tagPool, int &$bad): void
{
    expect('getIds', $c->getIds(), array_keys($model), $bad);
    $used = [];
    foreach ($model as $t) {
        foreach ($t as $x) {
            $used[$x] = true;
        }
    }
    expect('getTags', $c->getTags(), array_keys($used), $bad);
    $sets = [];
    foreach ($tagPool as $x) {
        $sets[] = [$x];
    }
    for ($i = 0; $i < 6; $i++) {
        $sets[] = pick($tagPool, 2);
    }
    foreach ($sets as $tags) {
        $all = $any = $none = [];
        foreach ($model as $id => $t) {
            $n = count(array_intersect($tags, $t));
            if ($n === count($tags)) {
                $all[] = $id;
            }
            if ($n > 0) {
                $any[] = $id;
            } else {
                $none[] = $id;
            }
        }
        $k = implode(',', $tags);
        expect("matching $k", $c->getIdsMatchingTags($tags), $all, $bad);
        expect("matchingAny $k", $c->getIdsMatchingAnyTags($tags), $any, $bad);
        expect("notMatching $k", $c->getIdsNotMatchingTags($tags), $none, $bad);
    }
}

$bad = 0;
for ($op = 1; $op <= 6000; $op++) {
    $r = mt_rand(0, 999);
    $id = 'id' . mt_rand(0, 299);
    if ($r < 700) {
        $t = pick($tagPool, mt_rand(0, 4));
        if (!$c->save("v$op", $id, $t)) {
            echo "save $op failed\n";
        }
        $model[$id] = $t;
    } elseif ($r < 850) {
        $c->remove($id);
        unset($model[$id]);
    } else {
        $modes = ['matchingTag', 'notMatchingTag', 'matchingAnyTag'];
        $mode = $modes[mt_rand(0, 2)];
        $tags = pick($tagPool, mt_rand(1, 2));
        $c->clean($mode, $tags);
        foreach ($model as $k => $t) {
            $n = count(array_intersect($tags, $t));
            if (($mode === 'matchingTag' && $n === count($tags))
                || ($mode === 'notMatchingTag' && $n === 0)
                || ($mode === 'matchingAnyTag' && $n > 0)) {
                unset($model[$k]);
            }
        }
    }
    if ($op % 500 === 0) {
        listings($c, $model, $tagPool, $bad);
        $v = $c->verify();
        if ($v) {
            echo "verify at $op: ", implode('; ', array_slice($v, 0, 3)), "\n";
            $bad++;
        }
    }
}
// every value is the last one saved
foreach ($model as $id => $t) {
    if ($c->load($id) === false) {
        echo "$id lost\n";
        $bad++;
    }
}
echo "exact: ", $bad ? "$bad differences" : "ok", "\n";

// ---- bounded: one entry keeps tag "hot" alive while 40 others carrying it
// are saved again 20,000 times: the members they leave behind are reclaimed.
$c->clean('all');
$c->save('anchor', 'anchor', ['hot']);
for ($i = 0; $i < 40; $i++) {
    $c->save(str_repeat('x', 100), "r$i", ['hot', 'r']);
}
$b0 = $c->stats()['bytes_used'];
$max = $b0;
for ($round = 0; $round < 500; $round++) {
    for ($i = 0; $i < 40; $i++) {
        $c->save(str_repeat('x', 100), "r$i", ['hot', 'r']);
    }
    $max = max($max, $c->stats()['bytes_used']);
}
// two member arrays of 64 members are 256 B each; allow them to double once
printf("re-saves: grew by at most 2 KiB: %s\n", $max - $b0 <= 2048 ? 'yes' : 'no, by ' . ($max - $b0));

// A tag of 4,096 members down to 8: its array shrinks (compared with the
// same 8 entries saved into an empty store).
$c->clean('all');
for ($i = 0; $i < 8; $i++) {
    $c->save('v', "k$i", ['big']);
}
$small = $c->stats()['bytes_used'];
$c->clean('all');
for ($i = 0; $i < 4096; $i++) {
    $c->save('v', "k$i", ['big']);
}
for ($i = 8; $i < 4096; $i++) {
    $c->remove("k$i");
}
$after = $c->stats()['bytes_used'];
// (a member is 6 bytes: its slot and its link index, layout 4; the array
// stops shrinking at 256 members, 1.5 KiB)
printf("shrunk: within 1.5 KiB of a fresh tag of 8: %s\n", $after - $small <= 1536 ? 'yes' : 'no, ' . ($after - $small) . ' B more');
echo "listing: ", implode(',', sorted($c->getIdsMatchingTags(['big']))), "\n";
echo "verify: ", json_encode($c->verify()), "\n";
$c->clean('all');
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('116');
?>
--EXPECT--
exact: ok
re-saves: grew by at most 2 KiB: yes
shrunk: within 1.5 KiB of a fresh tag of 8: yes
listing: k0,k1,k2,k3,k4,k5,k6,k7
verify: []
