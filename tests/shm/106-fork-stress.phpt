--TEST--
Shm: fork stress, 4 processes of random save/load/remove/clean-by-tag on a small segment, then a consistent structure
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('pcntl_fork')) die('skip pcntl_fork() not available');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('106');
$dir = tc_make_tmpdir('106');
const WORKERS = 4;
const SECONDS = 4.0;
const NIDS = 64;
const NTAGS = 8;
$opts = ['segment' => tc_seg('106'), 'size' => '1M'];

$parent = new TagCache\Shm($opts);
$parent->clean('all');
// each worker runs SECONDS from its own start and at least MIN_OPS
// operations (as in tests/shm/104: a deadline set before the forks can pass
// before a late worker starts, on a loaded machine under valgrind)
const MIN_OPS = 400;

$res = tc_fork_workers(WORKERS, function (int $w) use ($opts, $parent) {
    $end = microtime(true) + SECONDS;
    // Worker 0 keeps the object it inherited through fork(); the others open their own.
    $c = $w === 0 ? $parent : new TagCache\Shm($opts);
    $r = ['ops' => 0, 'save' => 0, 'save_failed' => 0, 'load' => 0, 'hit' => 0, 'remove' => 0, 'clean' => 0,
          'clean_failed' => 0, 'list' => 0, 'bad' => []];
    $seq = 0;
    for ($n = 0; $n < 500000 && ($n < MIN_OPS || microtime(true) < $end); $n++) {
        $id = 'k' . mt_rand(0, NIDS - 1);
        $op = mt_rand(0, 99);
        if ($op < 40) {
            $r['load']++;
            $v = $c->load($id);
            if ($v !== false) {
                $chk = tc_checkval($v, $id);
                if (is_string($chk)) {
                    $r['bad'][] = "load $id: $chk";
                } else {
                    $r['hit']++;
                }
            }
        } elseif ($op < 72) {
            $tags = [];
            foreach ((array) array_rand(range(0, NTAGS - 1), mt_rand(1, 3)) as $t) {
                $tags[] = "t$t";
            }
            sort($tags);
            // The value names its tags: at rest, tags and listings can be checked against it.
            $v = tc_mkval($id, $w, ++$seq, tc_randlen(24576), implode(',', $tags));
            if ($c->save($v, $id, $tags, null)) {
                $r['save']++;
            } else {
                $r['save_failed']++;
            }
        } elseif ($op < 82) {
            $c->remove($id);
            $r['remove']++;
        } elseif ($op < 90) {
            $ok = $c->clean('matchingTag', ['t' . mt_rand(0, NTAGS - 1)]);
            $r['clean']++;
            $r['clean_failed'] += $ok ? 0 : 1;
        } elseif ($op < 93) {
            $ok = $c->clean('matchingAnyTag', ['t' . mt_rand(0, NTAGS - 1), 't' . mt_rand(0, NTAGS - 1)]);
            $r['clean']++;
            $r['clean_failed'] += $ok ? 0 : 1;
        } elseif ($op < 96) {
            $r['list']++;
            foreach ($c->getIdsMatchingTags(['t' . mt_rand(0, NTAGS - 1)]) as $lid) {
                if (!preg_match('/^k\d+$/', $lid)) {
                    $r['bad'][] = "listed id " . bin2hex($lid);
                }
            }
        } elseif ($op < 98) {
            $r['list']++;
            $m = $c->getMetadatas($id);
            if ($m !== false && (!is_array($m['tags']) || !is_int($m['mtime']) || !is_int($m['expire']))) {
                $r['bad'][] = "metadatas $id: " . json_encode($m);
            }
        } else {
            $r['list']++;
            foreach ($c->loadMany(['k1', 'k2', 'k3', $id]) as $lid => $v) {
                if (is_string($chk = tc_checkval($v, (string) $lid))) {
                    $r['bad'][] = "loadMany $lid: $chk";
                }
            }
        }
        $r['ops']++;
        if (count($r['bad']) > 10) {
            break;
        }
    }
    return $r;
}, SECONDS + 120, $dir);

$ok = true;
$tot = [];
foreach ($res as $i => $w) {
    if (!tc_worker_ok($w)) {
        $ok = false;
        echo '    ', tc_describe_worker($i, $w), "\n";
        continue;
    }
    foreach ($w['result'] as $k => $v) {
        $tot[$k] = ($tot[$k] ?? 0) + (is_array($v) ? count($v) : $v);
    }
    if ($w['result']['bad']) {
        echo "    worker $i: ", json_encode(array_slice($w['result']['bad'], 0, 5)), "\n";
    }
}
tc_check('all workers exited normally', $ok);
tc_check('no torn value and no garbage listed', $ok && $tot['bad'] === 0, $tot);
tc_check('saves and cleans never failed', $ok && $tot['save_failed'] === 0 && $tot['clean_failed'] === 0 && $tot['save'] > 0, $tot);

// At rest: the whole segment checks out, and values, tags and listings agree.
tc_check('verify() is empty', ($v = $parent->verify()) === [], $v);
$c = new TagCache\Shm($opts);
$ids = $c->getIds();
sort($ids);
$problems = [];
$byTag = [];
foreach ($ids as $id) {
    $v = $c->load($id);
    $chk = tc_checkval($v, $id);
    if (is_string($chk)) {
        $problems[] = "$id: $chk";
        continue;
    }
    $tags = explode(',', $chk['extra']);
    $m = $c->getMetadatas($id);
    $mt = $m === false ? null : $m['tags'];
    if (is_array($mt)) {
        sort($mt);
    }
    if ($mt !== $tags) {
        $problems[] = "$id: value says tags " . json_encode($tags) . ', metadatas say ' . json_encode($mt);
    }
    foreach ($tags as $t) {
        $byTag[$t][] = $id;
    }
}
for ($t = 0; $t < NTAGS; $t++) {
    $m = $c->getIdsMatchingTags(["t$t"]);
    sort($m);
    if ($m !== ($byTag["t$t"] ?? [])) {
        $problems[] = "t$t lists " . json_encode($m) . ', values say ' . json_encode($byTag["t$t"] ?? []);
    }
}
$tags = $c->getTags();
sort($tags);
$expTags = array_keys($byTag);
sort($expTags);
if ($tags !== $expTags) {
    $problems[] = 'getTags() ' . json_encode($tags) . ' but entries carry ' . json_encode($expTags);
}
tc_check('values, metadatas and tag listings agree', $problems === [], array_slice($problems, 0, 10));

$st = $c->stats();
$sane = true;
foreach (['hits', 'misses', 'writes', 'evictions', 'expirations', 'entries', 'tags', 'bytes_used', 'bytes_free', 'size', 'max_entries', 'lock_recoveries'] as $k) {
    $sane = $sane && isset($st[$k]) && is_int($st[$k]) && $st[$k] >= 0;
}
tc_check('stats consistent', $sane && $st['entries'] === count($ids) && $st['tags'] === count($tags)
    && $st['size'] === 1048576 && $st['bytes_used'] + $st['bytes_free'] <= $st['size'] && $st['bytes_used'] > 0
    && $st['entries'] <= $st['max_entries'] && $st['lock_recoveries'] === 0 && $st['writes'] >= $tot['save'], $st);

// And it still works.
tc_check('later operations work', $c->save('after', 'after', ['t0'], null) && $c->load('after') === 'after'
    && in_array('after', $c->getIdsMatchingTags(['t0']), true) && $c->clean('matchingTag', ['t0']) && $c->load('after') === false
    && $c->verify() === []);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('106');
tc_remove_segments('106');
?>
--EXPECT--
all workers exited normally: ok
no torn value and no garbage listed: ok
saves and cleans never failed: ok
verify() is empty: ok
values, metadatas and tag listings agree: ok
stats consistent: ok
later operations work: ok
