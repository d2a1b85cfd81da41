--TEST--
File: symbolic links planted where the store writes (the directory, the index, the next logs, a temporary index, a log) are never followed
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
$base = tc_make_tmpdir('f107');
mkdir("$base/victimdir", 0700);
file_put_contents("$base/victim", 'victim data');
chmod("$base/victim", 0600);
$victim = static fn() => [file_get_contents("$base/victim"), fileperms("$base/victim") & 0777, tcf_ls("$base/victimdir")];
$pristine = $victim();

function refused(array $opts, string $needle): bool
{
    try {
        new TagCache\File($opts);
    } catch (TagCache\StorageException $e) {
        return str_contains($e->getMessage(), $needle);
    }
    return false;
}

// The cache directory itself is a symbolic link (with and without a trailing slash).
symlink("$base/victimdir", "$base/linkdir");
tc_check('cache_dir that is a symbolic link is refused', refused(['cache_dir' => "$base/linkdir"], 'symbolic link'));
tc_check('... also written with a trailing slash', refused(['cache_dir' => "$base/linkdir/"], 'symbolic link'));
tc_check('... and nothing was created through it', $victim() === $pristine);

// The index is a symbolic link to a victim file.
mkdir("$base/s1", 0700);
symlink("$base/victim", "$base/s1/tagcache.idx");
tc_check('an index that is a symbolic link is refused', refused(['cache_dir' => "$base/s1"], 'symbolic link'));
tc_check('... and the victim is untouched', $victim() === $pristine && is_link("$base/s1/tagcache.idx"));

// The names of the next logs are symbolic links: they are skipped, never
// opened (in a child: the store logs each link it ignores).
mkdir("$base/s2", 0700);
for ($i = 1; $i <= 6; $i++) {
    symlink("$base/victim", sprintf('%s/s2/tagcache.%08x.log', $base, $i));
}
$h = tcf_run_php('
    $c = new TagCache\File(["cache_dir" => $P["dir"], "max_size" => "2M"]);
    $ok = true;
    for ($i = 0; $i < 40; $i++) {
        $ok = $ok && $c->save(str_repeat("v", 20000), "k$i", ["t"]);
    }
    tc_result($ok && count($c->getIds()) === 40 && $c->load("k39") === str_repeat("v", 20000) && $c->verify() === []);
', ['dir' => "$base/s2"]);
tc_check('planted links at the next log names: the store works around them', tc_ok($h) && $h['result'] === true, tc_describe($h));
$links = 0;
for ($i = 1; $i <= 6; $i++) {
    $links += is_link(sprintf('%s/s2/tagcache.%08x.log', $base, $i));
}
tc_check('... the links are still links, the victim untouched', $links === 6 && $victim() === $pristine, [$links, $victim()]);

// The temporary name this process's first rebuild would use.
mkdir("$base/s4", 0700);
symlink("$base/victim", "$base/s4/tagcache.idx." . getmypid() . ".0.tmp");
$c = new TagCache\File(['cache_dir' => "$base/s4"]);
tc_check('a link at the temporary index name: removed, not followed',
    $c->save('v', 'k') && $c->load('k') === 'v' && $victim() === $pristine
    && !file_exists("$base/s4/tagcache.idx." . getmypid() . ".0.tmp") && !is_link("$base/s4/tagcache.idx." . getmypid() . ".0.tmp"));
unset($c);

// A log of a working store replaced by a symbolic link (to a copy of itself):
// a new process does not follow it; what it held is a miss; the store goes on.
mkdir("$base/s3", 0700);
$h = tcf_run_php('
    $c = new TagCache\File(["cache_dir" => $P["dir"]]);
    for ($i = 0; $i < 10; $i++) {
        $c->save("v$i", "k$i", ["t"]);
    }
    tc_result(count($c->getIds()));
', ['dir' => "$base/s3"]);
$logs = tcf_logs("$base/s3");
$log = $logs[0] ?? '';
copy($log, "$base/copy.log");
unlink($log);
symlink("$base/copy.log", $log);
$copy = sha1_file("$base/copy.log");
$h2 = tcf_run_php('
    $c = new TagCache\File(["cache_dir" => $P["dir"]]);
    $hits = 0;
    for ($i = 0; $i < 10; $i++) {
        $hits += $c->load("k$i") !== false;
    }
    tc_result(["hits" => $hits, "save" => $c->save("new", "new") && $c->load("new") === "new", "verify" => $c->verify()]);
', ['dir' => "$base/s3"]);
tc_check('a log replaced by a symbolic link is not followed: misses, the store works',
    tc_ok($h) && $h['result'] === 10 && tc_ok($h2) && $h2['result']['hits'] === 0 && $h2['result']['save'] === true
    && $h2['result']['verify'] === [], [tc_describe($h), tc_describe($h2)]);
tc_check('... and the file it points to is untouched', sha1_file("$base/copy.log") === $copy && is_link($log));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f107');
?>
--EXPECT--
cache_dir that is a symbolic link is refused: ok
... also written with a trailing slash: ok
... and nothing was created through it: ok
an index that is a symbolic link is refused: ok
... and the victim is untouched: ok
planted links at the next log names: the store works around them: ok
... the links are still links, the victim untouched: ok
a link at the temporary index name: removed, not followed: ok
a log replaced by a symbolic link is not followed: misses, the store works: ok
... and the file it points to is untouched: ok
