--TEST--
File: options: cache_dir default, Zend/Cm File option names with the same meaning, the ones that no longer apply accepted and ignored, durability never/always/interval, Magento 1 strings
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
$base = tc_make_tmpdir('f111');

// The default cache_dir: <TMPDIR or /tmp>/tagcache-<euid>, made 0700.
$h = tcf_run_php('
    $c = new TagCache\File();
    tc_result(["dir" => $c->getOption("cache_dir"), "save" => $c->save("v", "k") && $c->load("k") === "v",
        "durability" => $c->getOption("durability"), "max_size" => $c->getOption("max_size"),
        "prefix" => $c->getOption("file_name_prefix"), "file_mode" => $c->getOption("file_mode"),
        "dir_mode" => $c->getOption("dir_mode")]);
', [], ['TMPDIR' => $base]);
$uid = function_exists('posix_geteuid') ? posix_geteuid() : getmyuid();
tc_check('the default cache_dir is $TMPDIR/tagcache-<euid>, made 0700', tc_ok($h) && $h['result']['dir'] === "$base/tagcache-$uid"
    && $h['result']['save'] === true && is_dir("$base/tagcache-$uid") && (fileperms("$base/tagcache-$uid") & 0777) === 0700, tc_describe($h));
tc_check('defaults: durability never, max_size 1G, prefix tagcache, modes 0600/0700', tc_ok($h)
    && array_slice($h['result'], 2) === ['durability' => 'never', 'max_size' => 1 << 30, 'prefix' => 'tagcache',
    'file_mode' => 0600, 'dir_mode' => 0700], $h['result'] ?? null);

// Zend_Cache_Backend_File / Cm_Cache_Backend_File names, as Magento 1 passes them (strings).
$zend = [
    'cache_dir' => "$base/zend", 'file_name_prefix' => 'zend_cache', 'cache_file_perm' => '0640',
    'hashed_directory_perm' => '0700', 'hashed_directory_level' => '2', 'hashed_directory_umask' => '0700',
    'read_control' => '1', 'read_control_type' => 'crc32', 'file_locking' => '1', 'metadatas_array_max_size' => '100',
    'automatic_cleaning_factor' => '0', 'use_chmod' => '0', 'directory_mode' => '0750', 'lifetime' => '7200',
    'max_size' => '64M',
];
$c = new TagCache\File($zend);
tc_check('Zend/Cm option names are accepted', $c->save('v', 'k', ['t']) && $c->load('k') === 'v');
tc_check('file_name_prefix names the files', tcf_only_store_files("$base/zend", 'zend_cache') && count(tcf_logs("$base/zend", 'zend_cache')) === 1);
tc_check('cache_file_perm and directory_mode set the modes', (fileperms("$base/zend/zend_cache.idx") & 0777) === 0640
    && (fileperms("$base/zend") & 0777) === 0750);
tc_check('the same values read back under both names', $c->getOption('cache_file_perm') === 0640 && $c->getOption('file_mode') === 0640
    && $c->getOption('directory_mode') === 0750 && $c->getOption('dir_mode') === 0750 && $c->getOption('max_size') === 64 << 20
    && $c->getOption('lifetime') === 7200);
$ignored = ['hashed_directory_level', 'hashed_directory_perm', 'hashed_directory_umask', 'read_control', 'read_control_type',
    'file_locking', 'metadatas_array_max_size', 'use_chmod', 'automatic_cleaning_factor'];
$all = true;
foreach ($ignored as $o) {
    try {
        $c->getOption($o);
        $all = false;
    } catch (TagCache\ConfigurationException $e) {
    }
}
tc_check('options that no longer apply are accepted and ignored (getOption() says so)', $all);
tc_check('cache_file_umask is the old name of cache_file_perm', (new TagCache\File(['cache_dir' => "$base/umask",
    'cache_file_umask' => '0660']))->getOption('file_mode') === 0660);

// durability
foreach (['never', 'always', 'interval', 'ALWAYS'] as $d) {
    $c = new TagCache\File(['cache_dir' => "$base/dur", 'durability' => $d, 'fsync_interval' => '0.5']);
    $ok = $c->save("v $d", "k$d", ['t']) && $c->load("k$d") === "v $d" && $c->touch("k$d", 10) && $c->remove("k$d");
    tc_check("durability $d works", $ok && $c->getOption('durability') === $d);
}
try {
    new TagCache\File(['cache_dir' => "$base/dur", 'durability' => 'sometimes']);
    tc_check('an unknown durability is refused', false);
} catch (TagCache\Exception $e) {
    tc_check('an unknown durability is refused', str_contains($e->getMessage(), 'durability'));
}
$c = new TagCache\File(['cache_dir' => "$base/dur"]);
$c->setOption('durability', 'always');
tc_check('setOption(durability) applies to an open store', $c->getOption('durability') === 'always' && $c->save('v', 'k') && $c->load('k') === 'v');
try {
    $c->setOption('cache_dir', "$base/elsewhere");
    tc_check('cache_dir cannot change once open', false);
} catch (TagCache\ConfigurationException $e) {
    tc_check('cache_dir cannot change once open', !file_exists("$base/elsewhere"));
}
foreach (['512K', '0', 'lots'] as $bad) {
    try {
        new TagCache\File(['cache_dir' => "$base/dur", 'max_size' => $bad]);
        tc_check("max_size $bad is refused", false);
    } catch (TagCache\ConfigurationException $e) {
    }
}
tc_check('max_size below 1M or not a size is refused', true);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f111');
?>
--EXPECT--
the default cache_dir is $TMPDIR/tagcache-<euid>, made 0700: ok
defaults: durability never, max_size 1G, prefix tagcache, modes 0600/0700: ok
Zend/Cm option names are accepted: ok
file_name_prefix names the files: ok
cache_file_perm and directory_mode set the modes: ok
the same values read back under both names: ok
options that no longer apply are accepted and ignored (getOption() says so): ok
cache_file_umask is the old name of cache_file_perm: ok
durability never works: ok
durability always works: ok
durability interval works: ok
durability ALWAYS works: ok
an unknown durability is refused: ok
setOption(durability) applies to an open store: ok
cache_dir cannot change once open: ok
max_size below 1M or not a size is refused: ok
