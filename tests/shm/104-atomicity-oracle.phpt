--TEST--
Shm: atomicity oracle, forked writers and readers; every read is a miss or exactly a value a writer wrote
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
tc_remove_segments('104');
$dir = tc_make_tmpdir('104');
$opts = ['segment' => tc_seg('104'), 'size' => '8M'];
$ids = ['o0', 'o1', 'o2', 'o3', 'o4', 'o5'];
const WRITERS = 4;
const READERS = 4;
const SECONDS = 3.0;
const MAX_LEN = 262144;

$shared = new TagCache\Shm($opts); // inherited by the odd-numbered workers, others open their own
$shared->clean('all');
// Each worker runs for SECONDS from its own start, and at least MIN_OPS
// operations however slow the machine (forking 8 workers under valgrind
// on a loaded machine can take longer than SECONDS: a deadline set before
// the forks left late workers no time at all).
const MIN_OPS = 400;

$res = tc_fork_workers(WRITERS + READERS, function (int $w) use ($opts, $ids, $shared) {
    $end = microtime(true) + SECONDS;
    $c = $w % 2 ? $shared : new TagCache\Shm($opts);
    $r = ['saves' => 0, 'save_failed' => 0, 'reads' => 0, 'hits' => 0, 'bad' => [], 'backwards' => 0, 'sizes' => [0, 0]];
    $lastSeen = []; // "id/writer" => last seq seen: a writer's values of one id never go back in time
    $see = function (string $id, $v) use (&$r, &$lastSeen) {
        $r['reads']++;
        if ($v === false) {
            return;
        }
        $chk = tc_checkval($v, $id);
        if (is_string($chk)) {
            if (count($r['bad']) < 5) {
                $r['bad'][] = $chk;
            } else {
                $r['bad'][5] = 'more...';
            }
            return;
        }
        $r['hits']++;
        $k = $id . '/' . $chk['writer'];
        if (isset($lastSeen[$k]) && $chk['seq'] < $lastSeen[$k]) {
            $r['backwards']++;
        }
        $lastSeen[$k] = max($lastSeen[$k] ?? 0, $chk['seq']);
    };
    $seq = 0;
    for ($n = 0; $n < 200000 && ($n < MIN_OPS || microtime(true) < $end); $n++) {
        if ($w < WRITERS) {
            $id = $ids[mt_rand(0, count($ids) - 1)];
            // Sizes 1 B .. 256 KB, log-uniform, with the two extremes forced now and then.
            $len = $n % 50 === 0 ? MAX_LEN : ($n % 50 === 1 ? 1 : tc_randlen(MAX_LEN));
            $r['sizes'][$len >= 65536 ? 1 : 0]++;
            if ($c->save(tc_mkval($id, $w, ++$seq, $len), $id, ['oracle'], null)) {
                $r['saves']++;
            } else {
                $r['save_failed']++;
            }
            if ($n % 4 === 0) {
                $see($id, $c->load($id));
            }
        } elseif ($n % 10 === 0) {
            foreach ($c->loadMany($ids) as $id => $v) {
                $see((string) $id, $v);
            }
        } else {
            $id = $ids[mt_rand(0, count($ids) - 1)];
            $see($id, $c->load($id));
        }
    }
    return $r;
}, SECONDS + 120, $dir);

$ok = true;
$tot = ['saves' => 0, 'save_failed' => 0, 'reads' => 0, 'hits' => 0, 'bad' => 0, 'backwards' => 0, 'big' => 0];
foreach ($res as $i => $w) {
    if (!tc_worker_ok($w)) {
        $ok = false;
        echo '    ', tc_describe_worker($i, $w), "\n";
        continue;
    }
    $r = $w['result'];
    foreach (['saves', 'save_failed', 'reads', 'hits', 'backwards'] as $k) {
        $tot[$k] += $r[$k];
    }
    $tot['bad'] += count($r['bad']);
    $tot['big'] += $r['sizes'][1];
    if ($r['bad']) {
        echo "    worker $i read bad values: ", json_encode($r['bad']), "\n";
    }
}
tc_check('all workers exited normally', $ok);
tc_check('no torn or foreign value read', $ok && $tot['bad'] === 0, $tot);
tc_check('no value older than one already seen from the same writer', $ok && $tot['backwards'] === 0, $tot);
tc_check('every save succeeded', $ok && $tot['save_failed'] === 0 && $tot['saves'] > 0 && $tot['big'] > 0, $tot);
tc_check('reads hit', $ok && $tot['hits'] > 0, $tot);

// At rest: every id holds a complete value (or nothing), and the segment is consistent.
$bad = [];
foreach ($ids as $id) {
    $v = $shared->load($id);
    if ($v !== false && is_string($chk = tc_checkval($v, $id))) {
        $bad[$id] = $chk;
    }
}
tc_check('final values intact', $bad === [], $bad);
tc_check('verify() is empty', ($v = $shared->verify()) === [], $v);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('104');
tc_remove_segments('104');
?>
--EXPECT--
all workers exited normally: ok
no torn or foreign value read: ok
no value older than one already seen from the same writer: ok
every save succeeded: ok
reads hit: ok
final values intact: ok
verify() is empty: ok
