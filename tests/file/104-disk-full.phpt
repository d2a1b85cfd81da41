--TEST--
File: a full disk (a 1 MB tmpfs) makes save() return false with a clear error; older entries stay intact and readable; clean('all') gives the space back
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
// the effective uid without posix (make test runs php -n: posix may not be loaded)
if (!preg_match('/^Uid:\s+\d+\s+0\s/m', (string) @file_get_contents('/proc/self/status'))) die('skip mounting a small tmpfs needs root');
$d = tc_tmpdir('f104', getmypid()) . '-probe';
@mkdir($d, 0700, true);
exec('mount -t tmpfs -o size=1m tmpfs ' . escapeshellarg($d) . ' 2>&1', $o, $rc);
if ($rc !== 0) {
    @rmdir($d);
    die('skip cannot mount a tmpfs here: ' . implode(' ', $o));
}
exec('umount ' . escapeshellarg($d));
@rmdir($d);
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$dir = tc_make_tmpdir('f104');
$mnt = "$dir/mnt";
mkdir($mnt, 0700);
exec('mount -t tmpfs -o size=1m tmpfs ' . escapeshellarg($mnt) . ' 2>&1', $o, $rc);
tc_check('a 1 MB tmpfs mounted', $rc === 0, $o);
tc_on_exit(static function () use ($mnt) {
    exec('umount ' . escapeshellarg($mnt) . ' 2>/dev/null');
});
$opts = ['cache_dir' => "$mnt/store", 'max_size' => '64M'];

$h = tcf_run_php('
    $warnings = [];
    set_error_handler(function ($no, $msg) use (&$warnings) { $warnings[] = $msg; return true; });
    $c = new TagCache\File($P["opts"]);
    $saved = [];
    $failed = null;
    for ($i = 0; $i < 400; $i++) {
        $v = tc_mkval("k$i", 1, $i, 20000);
        if ($c->save($v, "k$i", ["t" . ($i % 5), "all"], null)) {
            $saved["k$i"] = sha1($v);
        } else {
            $failed = $i;
            break;
        }
    }
    $r = ["saved" => count($saved), "failed" => $failed, "warnings" => $warnings];
    $ok = true;
    foreach ($saved as $id => $h) {
        $l = $c->load($id);
        $ok = $ok && $l !== false && sha1($l) === $h;
    }
    $r["intact"] = $ok;
    $r["listed"] = count($c->getIds()) === count($saved) && count($c->getIdsMatchingTags(["all"])) === count($saved);
    $r["verify"] = $c->verify();
    // a save over an existing id that does not fit: the old value stays
    $warnings = [];
    $r["overwrite"] = $c->save(str_repeat("z", 200000), "k0", ["all"], null);
    $l = $c->load("k0");
    $r["k0_kept"] = $l !== false && sha1($l) === $saved["k0"];
    $r["overwrite_warning"] = $warnings;
    // removing works on a full disk (the removal is kept even if its
    // tombstone cannot be written)
    $r["remove"] = $c->remove("k1") && $c->load("k1") === false;
    $r["clean_tag"] = $c->clean("matchingTag", ["t2"]) && $c->getIdsMatchingTags(["t2"]) === [];
    $r["verify2"] = $c->verify();
    file_put_contents($P["saved"], serialize($saved));
    tc_result($r);
', ['opts' => $opts, 'saved' => "$dir/saved"]);
$r = $h['result'];
tc_check('child ran', tc_ok($h), tc_describe($h));
tc_check('saves succeed until the disk is full, then one fails', tc_ok($h) && $r['saved'] >= 10 && $r['failed'] !== null, $r);
tc_check('the failed save warned once, naming the cause', tc_ok($h) && count($r['warnings']) === 1
    && str_contains($r['warnings'][0], 'save failed') && str_contains($r['warnings'][0], 'No space left on device'),
    $r['warnings'] ?? null);
tc_check('every entry saved before is intact and listed', tc_ok($h) && $r['intact'] && $r['listed'], $r);
tc_check('verify() is empty on the full disk', tc_ok($h) && $r['verify'] === [], $r['verify'] ?? null);
tc_check('a save over an existing id fails and keeps its old value', tc_ok($h) && $r['overwrite'] === false
    && $r['k0_kept'] === true && count($r['overwrite_warning']) === 1, $r);
tc_check('remove() and clean() by tag still work', tc_ok($h) && $r['remove'] && $r['clean_tag'] && $r['verify2'] === [], $r);

// Another process opens the full store and reads what was there.
$h = tcf_run_php('
    $c = new TagCache\File($P["opts"]);
    $saved = unserialize(file_get_contents($P["saved"]));
    $ok = 0;
    foreach ($saved as $id => $h) {
        $l = $c->load($id);
        if ($l !== false && sha1($l) === $h) {
            $ok++;
        }
    }
    $r = ["ok" => $ok, "expect" => count($saved) - 1 - count(array_filter(array_keys($saved), fn($id) => substr($id, 1) % 5 == 2 && $id !== "k1"))];
    $r["verify"] = $c->verify();
    // clean("all") gives the space back: saves work again
    $r["clean"] = $c->clean("all");
    $r["after"] = $c->save(str_repeat("a", 20000), "again", ["all"]) && $c->load("again") === str_repeat("a", 20000);
    $r["verify2"] = $c->verify();
    tc_result($r);
', ['opts' => $opts, 'saved' => "$dir/saved"]);
$r = $h['result'];
tc_check('a new process reads every remaining entry', tc_ok($h) && $r['ok'] === $r['expect'] && $r['verify'] === [], tc_describe($h));
tc_check("clean('all') gives the space back, saves work again", tc_ok($h) && $r['clean'] === true && $r['after'] === true
    && $r['verify2'] === [], $r);
tc_check('nothing but the store in the tmpfs', tcf_ls($mnt) === ['store'] && tcf_only_store_files("$mnt/store"), tcf_ls("$mnt/store"));
exec('umount ' . escapeshellarg($mnt), $o, $rc);
tc_check('tmpfs unmounted', $rc === 0);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f104', static function (string $d) {
    exec('umount ' . escapeshellarg("$d/mnt") . ' 2>/dev/null');
});
?>
--EXPECT--
a 1 MB tmpfs mounted: ok
child ran: ok
saves succeed until the disk is full, then one fails: ok
the failed save warned once, naming the cause: ok
every entry saved before is intact and listed: ok
verify() is empty on the full disk: ok
a save over an existing id fails and keeps its old value: ok
remove() and clean() by tag still work: ok
a new process reads every remaining entry: ok
clean('all') gives the space back, saves work again: ok
nothing but the store in the tmpfs: ok
tmpfs unmounted: ok
