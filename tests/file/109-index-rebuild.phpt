--TEST--
File: the index is rebuilt from the logs when it is missing, damaged, truncated, from another boot, or when a rebuild was killed; the rebuilt store equals the original (values, tags, expiry, removals, cleans, touches)
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
$dir = tc_make_tmpdir('f109') . '/store';
$opts = ['cache_dir' => $dir, 'max_size' => '8M'];

// Everything that changes the index, in a child.
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    for ($i = 0; $i < 3000; $i++) {
        $tags = ["all", "m" . ($i % 7), "u" . $i];
        $c->save(str_repeat(chr(65 + $i % 26), 50 + $i % 400), "k$i", $tags, $i % 5 ? 3600 + $i : null);
    }
    for ($i = 0; $i < 300; $i++) {
        $c->save("again $i", "k$i", ["again"], 7200);         // overwrites
    }
    for ($i = 300; $i < 400; $i++) {
        $c->remove("k$i");                                       // removals
    }
    $c->clean("matchingAnyTag", ["m3"]);                         // a clean by tag
    $c->touch("k1000", 500);                                     // a touch
    $c->___expire("k1001");                                      // an expired entry
    tc_result($c->stats());
', ['opts' => $opts]);
tc_check('store filled (growing the index several times)', tc_ok($h) && $h['result']['rebuilds'] >= 4, tc_describe($h));

// What a store looks like from outside, taken in a child.
function snapshot(array $opts): array
{
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $s = ["entries" => []];
        for ($i = 0; $i < 3000; $i++) {
            $v = $c->load("k$i", true);
            $m = $c->getMetadatas("k$i");
            $s["entries"]["k$i"] = $v === false ? false : [sha1($v), $m === false ? "expired" : [$m["expire"], $m["tags"]]];
        }
        $ids = $c->getIds();
        sort($ids);
        $tags = $c->getTags();
        sort($tags);
        $s["ids"] = sha1(implode(",", $ids));
        $s["tags"] = sha1(implode(",", $tags));
        $s["m1"] = count($c->getIdsMatchingTags(["m1"]));
        $s["again"] = count($c->getIdsMatchingTags(["again"]));
        $s["verify"] = $c->verify();
        $st = $c->stats();
        $s["entries_count"] = $st["entries"];
        $s["live_bytes"] = $st["live_bytes"];
        $s["rebuilds"] = $st["rebuilds"];
        tc_result($s);
    ', ['opts' => $opts], [], 60);
    return tc_ok($h) ? $h['result'] : ['failed' => tc_describe($h)];
}

function same(array $a, array $b): bool
{
    unset($a['rebuilds'], $b['rebuilds']);
    return $a === $b && !isset($a['failed']);
}

function no_tmp(string $dir): bool
{
    return array_filter(tcf_ls($dir), fn($e) => str_ends_with($e, '.tmp')) === [];
}

$orig = snapshot($opts);
tc_check('the original store checks clean', ($orig['verify'] ?? null) === [] && $orig['entries']['k402'] === false
    && $orig['entries']['k301'] === false && $orig['entries']['k1001'][1] === 'expired' && $orig['again'] === 300, $orig['failed'] ?? null);

$idx = "$dir/tagcache.idx";
// A rebuild writes a new index file and renames it over the old one: the
// index's inode changes. The old file is held open meanwhile, so that its
// inode number cannot be given to the new file. (The counters of stats()
// start again with an index rebuilt from nothing; the active log may be
// the same as before: a rebuild appends to the newest log.)
$held = null;
$ino = 0;
$hold = static function () use ($idx, &$held, &$ino): void {
    clearstatcache();
    $held = fopen($idx, 'rb');
    $ino = fstat($held)['ino'];
};
$rebuilt = static function () use ($idx, &$held, &$ino, $hold): bool {
    clearstatcache();
    $r = file_exists($idx) && fileinode($idx) !== $ino;
    fclose($held);
    $hold();
    return $r;
};
$hold();

unlink($idx);
$s = snapshot($opts);
tc_check('index deleted: rebuilt, equal to the original', same($orig, $s) && $rebuilt(), $s['failed'] ?? null);

tcf_poke($idx, 0, 'GARBAGE!');
$s = snapshot($opts);
tc_check('index magic overwritten: rebuilt, equal', same($orig, $s) && $rebuilt(), $s['failed'] ?? null);

$f = fopen($idx, 'r+b');
ftruncate($f, 100);
fclose($f);
$s = snapshot($opts);
tc_check('index truncated: rebuilt, equal', same($orig, $s) && $rebuilt(), $s['failed'] ?? null);

tcf_poke($idx, 24, random_bytes(8));  // the boot id it was made in
$s = snapshot($opts);
tc_check('index from another boot: rebuilt, equal', same($orig, $s) && $rebuilt(), $s['failed'] ?? null);

// A rebuild killed half-way leaves a temporary file and the old state.
unlink($idx);
$h = tcf_run_php('new TagCache\File($P["opts"]); tc_result("survived");', ['opts' => $opts],
    ['TAGCACHE_TEST_CRASH' => 'file_rebuild']);
$tmp = array_values(array_filter(tcf_ls($dir), fn($e) => str_ends_with($e, '.tmp')));
tc_check('a rebuild killed by SIGKILL leaves a temporary index behind', $h['signal'] === 9 && count($tmp) === 1, [tc_describe($h), $tmp]);
$s = snapshot($opts);
tc_check('the next open rebuilds, removes the temporary file, equal', same($orig, $s) && no_tmp($dir) && $rebuilt(),
    [$s['failed'] ?? null, tcf_ls($dir)]);

// A dead writer's half-changed index (killed inside the odd window of a
// save) is noticed by the next writer and rebuilt.
$h = tcf_run_php('$c = new TagCache\File($P["opts"]); $c->save("x", "crashed", ["crash"], 60); tc_result("survived");',
    ['opts' => $opts], ['TAGCACHE_TEST_CRASH' => 'file_save_publishing']);
$h2 = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $r = ["verify" => $c->verify()];    // takes the lock: repairs
    $r["crashed"] = $c->load("crashed");
    $r["recoveries"] = $c->stats()["lock_recoveries"];
    $c->remove("crashed");              // back to the original content
    tc_result($r);
', ['opts' => $opts]);
$s = snapshot($opts);
tc_check('a half-changed index after a dead writer: rebuilt by the next writer, equal', $h['signal'] === 9 && tc_ok($h2)
    && $h2['result']['verify'] === [] && $h2['result']['recoveries'] >= 1 && in_array($h2['result']['crashed'], [false, 'x'], true)
    && same($orig, $s) && $rebuilt(), [tc_describe($h2), $s['failed'] ?? null]);

// Bytes overwritten in the slot table: no crash, never a wrong value; a rebuild restores everything.
tcf_poke($idx, 4096, random_bytes(20000));
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $wrong = 0;
    $hits = 0;
    for ($i = 0; $i < 3000; $i++) {
        $v = $c->load("k$i");
        if ($v !== false) {
            $hits++;
            $ok = $i < 300 ? $v === "again $i" : $v === str_repeat(chr(65 + $i % 26), 50 + $i % 400);
            $wrong += !$ok;
        }
    }
    tc_result(["wrong" => $wrong, "hits" => $hits]);
', ['opts' => $opts]);
tc_check('garbage in the slot table: no crash, no wrong value', tc_ok($h) && $h['result']['wrong'] === 0, tc_describe($h));
unlink($idx);
$s = snapshot($opts);
tc_check('... and a rebuild from the logs restores the store', same($orig, $s) && $rebuilt(), $s['failed'] ?? null);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f109');
?>
--EXPECT--
store filled (growing the index several times): ok
the original store checks clean: ok
index deleted: rebuilt, equal to the original: ok
index magic overwritten: rebuilt, equal: ok
index truncated: rebuilt, equal: ok
index from another boot: rebuilt, equal: ok
a rebuild killed by SIGKILL leaves a temporary index behind: ok
the next open rebuilds, removes the temporary file, equal: ok
a half-changed index after a dead writer: rebuilt by the next writer, equal: ok
garbage in the slot table: no crash, no wrong value: ok
... and a rebuild from the logs restores the store: ok
