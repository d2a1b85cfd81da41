--TEST--
File: 50 processes saving the same id at once: every read is one whole value, exactly one complete value survives, with its own tags
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('pcntl_fork')) die('skip pcntl needed to fork the writers');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$dir = tc_make_tmpdir('f105');
$opts = ['cache_dir' => "$dir/store", 'max_size' => '16M', 'lock_timeout' => 20];
$c = new TagCache\File($opts);
$c->save('seed', 'X', ['seed'], null);
unset($c);

$workers = tc_fork_workers(50, static function (int $w) use ($opts) {
    $c = new TagCache\File($opts);
    $r = ['saves' => 0, 'failed' => 0, 'bad' => [], 'reads' => 0];
    for ($i = 0; $i < 20; $i++) {
        $v = tc_mkval('X', $w, $i, tc_randlen(30000));
        if ($c->save($v, 'X', ["w$w", 'all'], null)) {
            $r['saves']++;
        } else {
            $r['failed']++;
        }
        for ($k = 0; $k < 3; $k++) {
            $l = $c->load('X');
            $r['reads']++;
            if ($l !== 'seed' && !is_array($chk = tc_checkval($l, 'X'))) {
                $r['bad'][] = $chk;
            }
        }
    }
    return $r;
}, 60, $dir);

$ok = true;
$bad = [];
$saves = 0;
foreach ($workers as $i => $w) {
    if (!tc_worker_ok($w) || $w['result']['failed'] !== 0 || $w['result']['bad'] !== []) {
        $ok = false;
        $bad[] = tc_describe_worker($i, $w);
    } else {
        $saves += $w['result']['saves'];
    }
}
tc_check('50 writers ran; every save succeeded; every read was one whole value', $ok && $saves === 1000, array_slice($bad, 0, 3));

$c = new TagCache\File($opts);
$l = $c->load('X');
$chk = tc_checkval($l, 'X');
tc_check('exactly one complete value survives', is_array($chk) && $chk['seq'] === 19, $chk);
$m = $c->getMetadatas('X');
tc_check('its tags are those of the writer that wrote it', is_array($chk) && is_array($m)
    && $m['tags'] === ['w' . $chk['writer'], 'all'], [$chk, $m]);
$tags = $c->getTags();
sort($tags);
tc_check('one id, listed under its writer\'s tag only', is_array($chk) && $c->getIds() === ['X']
    && $c->getIdsMatchingTags(['all']) === ['X']
    && $c->getIdsMatchingAnyTags(array_map(fn($i) => "w$i", range(0, 49))) === ['X']
    && $tags === ['all', 'w' . $chk['writer']], $tags);
tc_check('verify() is empty', $c->verify() === [], $c->verify());
$st = $c->stats();
tc_check('no lock was lost or recovered', $st['lock_recoveries'] === 0, $st);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f105');
?>
--EXPECT--
50 writers ran; every save succeeded; every read was one whole value: ok
exactly one complete value survives: ok
its tags are those of the writer that wrote it: ok
one id, listed under its writer's tag only: ok
verify() is empty: ok
no lock was lost or recovered: ok
