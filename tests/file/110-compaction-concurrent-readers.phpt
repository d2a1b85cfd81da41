--TEST--
File: compaction runs while other processes read: every read is a whole value of its id or a miss; the logs stay bounded; clean('old') compacts to about the live size
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('pcntl_fork')) die('skip pcntl needed to fork the readers');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$dir = tc_make_tmpdir('f110');
$opts = ['cache_dir' => "$dir/store", 'max_size' => '2M', 'lock_timeout' => 20];
$c = new TagCache\File($opts);
// cold entries that compaction has to carry forward, and must never lose
$cold = [];
for ($i = 0; $i < 40; $i++) {
    $cold["cold$i"] = tc_mkval("cold$i", 9, $i, 3000);
    $c->save($cold["cold$i"], "cold$i", ['cold'], null);
}
// this process maps the first logs now, and keeps its object
$reader = $c;
$reader->load('cold0');
$mapped = static fn() => array_values(array_filter(file('/proc/self/maps', FILE_IGNORE_NEW_LINES),
    fn($l) => str_contains($l, "$dir/store/") && str_contains($l, '.log')));
$before = $mapped();

// 3 readers and 1 writer, all forked; the writer overwrites 60 hot ids
// with values of 1 B .. 24 KB (compaction every few saves, eviction when
// the live data pass max_size), cleans a tag now and then, and finishes with
// clean('old') while the readers still read.
$workers = tc_fork_workers(4, static function (int $w) use ($opts, $cold) {
    $c = new TagCache\File($opts);
    if ($w === 0) {
        $r = ['saves' => 0, 'failed' => 0];
        for ($i = 0; $i < 1500; $i++) {
            $id = 'hot' . mt_rand(0, 59);
            $r['saves']++;
            if (!$c->save(tc_mkval($id, 0, $i, tc_randlen(24000)), $id, ['hot', 't' . ($i % 4)], null)) {
                $r['failed']++;
            }
            if ($i % 300 === 299) {
                $c->clean('matchingTag', ['t' . ($i % 4)]);
            }
        }
        $r['before'] = $c->stats();
        $r['clean_old'] = $c->clean('old');
        $r['after'] = $c->stats();
        return $r;
    }
    $r = ['reads' => 0, 'hits' => 0, 'bad' => [], 'cold_lost' => 0];
    for ($i = 0; $i < 12000; $i++) {
        if ($i % 10 === 0) {
            $id = 'cold' . mt_rand(0, 39);
            $l = $c->load($id);
            if ($l !== $cold[$id]) {
                $r['cold_lost']++;
            }
            continue;
        }
        $id = 'hot' . mt_rand(0, 59);
        $l = $c->load($id);
        $r['reads']++;
        if ($l !== false) {
            $r['hits']++;
            if (!is_array($chk = tc_checkval($l, $id))) {
                $r['bad'][] = $chk;
            }
        }
    }
    return $r;
}, 60, $dir);

$ok = true;
$why = [];
foreach ($workers as $i => $w) {
    if (!tc_worker_ok($w)) {
        $ok = false;
        $why[] = tc_describe_worker($i, $w);
    }
}
tc_check('writer and readers ran to the end', $ok, $why);
$wr = $workers[0]['result'] ?? [];
tc_check('every save succeeded', $ok && $wr['failed'] === 0, $wr);
$bad = [];
$lost = 0;
$hits = 0;
foreach (array_slice($workers, 1) as $w) {
    $bad = array_merge($bad, $w['result']['bad'] ?? ['no result']);
    $lost += $w['result']['cold_lost'] ?? 1;
    $hits += $w['result']['hits'] ?? 0;
}
tc_check('every read was a whole value of its id, or a miss', $bad === [] && $hits > 1000, array_slice($bad, 0, 3));
tc_check('no cold entry was ever lost (carried forward by compaction)', $lost === 0, $lost);
$b = $wr['before'] ?? [];
tc_check('compaction copied live records and unlinked old logs', ($b['copied'] ?? 0) > 0 && ($b['compactions'] ?? 0) > 3, $b);
tc_check('the logs stayed bounded (under 2 x max_size)', isset($b['log_bytes']) && $b['log_bytes'] < 2 * 2 * 1024 * 1024, $b);
$a = $wr['after'] ?? [];
tc_check("clean('old') compacted the logs to the live data (within 1.25 x, plus log headers)",
    ($wr['clean_old'] ?? null) === true && isset($a['log_bytes'])
    && $a['log_bytes'] <= 1.25 * $a['live_bytes'] + 64 * $a['logs'], [$b['log_bytes'] ?? null, $a]);

// The logs compaction unlinked are no longer mapped by this long-lived
// process once it makes its next read (their disk space goes back).
$reader->load('cold1');
$deleted = array_filter($mapped(), fn($l) => str_contains($l, '(deleted)'));
tc_check('a long-lived process drops its mappings of unlinked logs', $before !== [] && $deleted === [], [$before, $mapped()]);
$c = new TagCache\File($opts);
$okc = true;
foreach ($cold as $id => $v) {
    $okc = $okc && $c->load($id) === $v;
}
tc_check('the cold entries are all there after the run', $okc);
tc_check('verify() is empty', $c->verify() === [], $c->verify());
$sum = 0;
foreach (tcf_logs("$dir/store") as $f) {
    $sum += filesize($f);
}
tc_check('the log files hold exactly what the index accounts for', $sum === $c->stats()['log_bytes'], [$sum, $c->stats()]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f110');
?>
--EXPECT--
writer and readers ran to the end: ok
every save succeeded: ok
every read was a whole value of its id, or a miss: ok
no cold entry was ever lost (carried forward by compaction): ok
compaction copied live records and unlinked old logs: ok
the logs stayed bounded (under 2 x max_size): ok
clean('old') compacted the logs to the live data (within 1.25 x, plus log headers): ok
a long-lived process drops its mappings of unlinked logs: ok
the cold entries are all there after the run: ok
verify() is empty: ok
the log files hold exactly what the index accounts for: ok
