--TEST--
File: 4 processes reading, saving and cleaning one store at once (the benchmark's mix, with rotation, compaction and index growth under way): no save fails, and an id no other process touches always reads back what its owner wrote
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('pcntl_fork')) die('skip pcntl needed to fork the workers');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$dir = tc_make_tmpdir('f121');
// 4M: logs are sealed past 512 KB, so rotation and compaction run during
// the test; the index starts small and grows (a rebuild) as tags arrive.
// The live data (under 1.5 MB) stays well below max_size: nothing is evicted.
$opts = ['cache_dir' => "$dir/store", 'max_size' => '4M', 'lock_timeout' => 30];
const WORKERS = 4;
const OPS = 4000;
const OWN = 40;      // ids each worker alone writes: "own<w>_<i>", tags own<w> and MAGE
const SHARED = 1500; // ids every worker writes and cleans: "sh<i>", tags t<k>
const TAGS = 600;

$workers = tc_fork_workers(WORKERS, static function (int $w) use ($opts) {
    $c = new TagCache\File($opts);
    $r = ['saves' => 0, 'save_failed' => [], 'readback' => [], 'own_lost' => [], 'bad' => [], 'cleans' => 0,
          'clean_failed' => 0, 'reads' => 0];
    $own = [];  // id => the value this worker last saved
    for ($op = 0; $op < OPS; $op++) {
        $x = mt_rand(0, 99);
        if ($x < 12) {
            // an own id: save it, then read it back as write_control does
            $id = "own{$w}_" . mt_rand(0, OWN - 1);
            $v = tc_mkval($id, $w, $op, tc_randlen(3000));
            if (!$c->save($v, $id, ["own$w", 'MAGE'], null)) {
                $r['save_failed'][] = "$op $id";
                continue;
            }
            $r['saves']++;
            $own[$id] = $v;
            if (($l = $c->load($id)) !== $v) {
                $r['readback'][] = "$op $id: " . (is_string($l) ? json_encode(tc_checkval($l, $id)) : 'miss');
            }
        } elseif ($x < 30) {
            $id = 'sh' . mt_rand(0, SHARED - 1);
            $tags = ['MAGE'];
            for ($k = mt_rand(0, 8); $k > 0; $k--) {
                $tags[] = 't' . mt_rand(0, TAGS - 1);
            }
            if (!$c->save(tc_mkval($id, $w, $op, tc_randlen(2000)), $id, array_values(array_unique($tags)), null)) {
                $r['save_failed'][] = "$op $id";
            } else {
                $r['saves']++;
            }
        } elseif ($x < 33) {
            if ($c->clean('matchingAnyTag', ['t' . mt_rand(0, TAGS - 1)])) {
                $r['cleans']++;
            } else {
                $r['clean_failed']++;
            }
        } else {
            // a read: an own id of this worker must be there once saved;
            // anything else, when there, is one whole value
            if ($own && mt_rand(0, 3) === 0) {
                $id = array_rand($own);
                if (($l = $c->load($id)) !== $own[$id]) {
                    $r['own_lost'][] = "$op $id: " . (is_string($l) ? json_encode(tc_checkval($l, $id)) : 'miss');
                }
            } else {
                $id = mt_rand(0, 1) ? 'sh' . mt_rand(0, SHARED - 1) : 'own' . mt_rand(0, WORKERS - 1) . '_' . mt_rand(0, OWN - 1);
                $l = $c->load($id);
                if ($l !== false && !is_array($chk = tc_checkval($l, $id))) {
                    $r['bad'][] = "$op $id: $chk";
                }
            }
            $r['reads']++;
        }
    }
    $r['own'] = array_map('sha1', $own);
    return $r;
}, 240, $dir);

$ok = true;
$bad = [];
$own = [];
foreach ($workers as $i => $w) {
    $res = $w['result'];
    if (!tc_worker_ok($w) || $res['save_failed'] || $res['readback'] || $res['own_lost'] || $res['bad']
        || $res['clean_failed']) {
        $ok = false;
        $bad[] = tc_describe_worker($i, ['result' => array_map(
            fn($v) => is_array($v) ? array_slice($v, 0, 5) : $v, is_array($res) ? $res : [])] + $w);
    } else {
        $own += $res['own'];
    }
}
tc_check('4 workers ran; no save or clean failed; every own id read back what its owner wrote', $ok, $bad);

$c = new TagCache\File($opts);
$lost = [];
foreach ($own as $id => $sha) {
    if (!is_string($l = $c->load($id)) || sha1($l) !== $sha) {
        $lost[] = $id;
    }
}
tc_check('afterwards every own id holds its owner\'s last value', $ok && $own && !$lost, array_slice($lost, 0, 5));
tc_check('verify() is empty', $c->verify() === [], $c->verify());
$st = $c->stats();
tc_check('no lock was lost or recovered, nothing evicted', $st['lock_recoveries'] === 0 && $st['evictions'] === 0, $st);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f121');
?>
--EXPECT--
4 workers ran; no save or clean failed; every own id read back what its owner wrote: ok
afterwards every own id holds its owner's last value: ok
verify() is empty: ok
no lock was lost or recovered, nothing evicted: ok
