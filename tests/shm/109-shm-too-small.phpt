--TEST--
Shm: a segment bigger than its tmpfs fails at construction with StorageException, never SIGBUS later
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!is_executable('/bin/mount') && !is_executable('/usr/bin/mount')) die('skip mount(8) not available');
// Probe: can we mount a tmpfs at all (root, CAP_SYS_ADMIN, not forbidden by the container)?
$d = tc_tmpdir('109') . '-probe';
@mkdir($d, 0700, true);
exec('mount -t tmpfs -o size=1m tmpfs ' . escapeshellarg($d) . ' 2>&1', $out, $rc);
if ($rc === 0) {
    exec('umount ' . escapeshellarg($d) . ' 2>&1');
}
@rmdir($d);
if ($rc !== 0) die('skip cannot mount a tmpfs here: ' . implode(' ', $out));
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
function unmount(string $dir): void
{
    if (tc_is_mountpoint($dir)) {
        exec('umount ' . escapeshellarg($dir));
    }
}
tc_clean_tmpdirs('109', 'unmount'); // leftovers of earlier runs
$dir = tc_make_tmpdir('109');
exec('mount -t tmpfs -o size=1m tmpfs ' . escapeshellarg($dir) . ' 2>&1', $out, $rc);
tc_check('1 MB tmpfs mounted', $rc === 0 && tc_is_mountpoint($dir), $out);
tc_on_exit(static function () use ($dir) {
    unmount($dir);
});

// Every attempt runs in its own process: a SIGBUS shows up as a signal, not as the death of this test.
$code = '
    $r = [];
    try {
        $c = new TagCache\Shm(["segment" => $P["seg"], "dir" => $P["dir"], "size" => $P["size"]]);
        $r["open"] = "ok";
        // If the constructor did not refuse, use the whole segment: this is where a SIGBUS would hit.
        $big = str_repeat("x", 200000);
        for ($i = 0; $i < 100; $i++) {
            $c->save($big . $i, "k$i", ["t"], null);
        }
        $r["saved"] = count($c->getIds());
    } catch (TagCache\StorageException $e) {
        $r["open"] = "StorageException";
        $r["msg"] = $e->getMessage();
    } catch (Throwable $e) {
        $r["open"] = get_class($e);
        $r["msg"] = $e->getMessage();
    }
    tc_result($r);
';
$path = tc_seg_path('big', $dir);
for ($attempt = 1; $attempt <= 2; $attempt++) {
    // The second attempt also finds whatever the first one may have left behind.
    $h = tc_run_php($code, ['seg' => 'big', 'dir' => $dir, 'size' => '8M'], [], 30);
    tc_check("8M segment on a 1M tmpfs, attempt $attempt: no signal", tc_ok($h), tc_describe($h));
    tc_check("8M segment on a 1M tmpfs, attempt $attempt: StorageException naming the file",
        tc_ok($h) && $h['result']['open'] === 'StorageException' && strpos($h['result']['msg'], $path) !== false, $h['result']);
}

// A leftover from a crash during creation: a sparse 8M file (ours, 0600, no header). It must be
// recreated (and then refused for lack of space) or refused, never mapped and touched.
$sparse = tc_seg_path('sparse', $dir);
$f = fopen($sparse, 'c');
ftruncate($f, 8 * 1048576);
fclose($f);
chmod($sparse, 0600);
$h = tc_run_php($code, ['seg' => 'sparse', 'dir' => $dir, 'size' => '8M'], [], 30);
tc_check('sparse leftover file: no signal', tc_ok($h), tc_describe($h));
tc_check('sparse leftover file: StorageException naming the file', tc_ok($h) && $h['result']['open'] === 'StorageException'
    && strpos($h['result']['msg'], $sparse) !== false, $h['result']);

// The same tmpfs takes a segment that fits (1M on 1M): the refusals above were about space.
@unlink($path);
@unlink($sparse);
$h = tc_run_php('
    $c = new TagCache\Shm(["segment" => "fits", "dir" => $P["dir"], "size" => "1M"]);
    $s = $c->save(str_repeat("v", 100000), "k", ["t"], null);
    tc_result(["ok" => $s && $c->load("k") === str_repeat("v", 100000) && $c->verify() === []]);
', ['dir' => $dir], [], 30);
tc_check('1M segment on the 1M tmpfs works', tc_ok($h) && $h['result']['ok'] === true, tc_describe($h));
exec('umount ' . escapeshellarg($dir) . ' 2>&1', $out, $rc);
tc_check('tmpfs unmounted', $rc === 0 && !tc_is_mountpoint($dir), $out);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('109', static function (string $dir) {
    if (tc_is_mountpoint($dir)) {
        exec('umount ' . escapeshellarg($dir));
    }
    if (tc_is_mountpoint($dir)) {
        exec('umount -l ' . escapeshellarg($dir));
    }
});
?>
--EXPECT--
1 MB tmpfs mounted: ok
8M segment on a 1M tmpfs, attempt 1: no signal: ok
8M segment on a 1M tmpfs, attempt 1: StorageException naming the file: ok
8M segment on a 1M tmpfs, attempt 2: no signal: ok
8M segment on a 1M tmpfs, attempt 2: StorageException naming the file: ok
sparse leftover file: no signal: ok
sparse leftover file: StorageException naming the file: ok
1M segment on the 1M tmpfs works: ok
tmpfs unmounted: ok
