--TEST--
File: files 0600 and directories 0700 by default whatever the umask (000, 077); group modes on request; stores more open than configured, or owned by someone else, are refused
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
$base = tc_make_tmpdir('f108');

// In a child with the given umask: makes a store, fills it past a log
// rotation and an index growth, reports the modes of everything in it.
const MAKE = '
    umask($P["umask"]);
    $c = new TagCache\File($P["opts"]);
    for ($i = 0; $i < 1500; $i++) {
        $c->save(str_repeat("v", 400), "k$i", ["t" . ($i % 600)]);
    }
    $c->clean("matchingAnyTag", ["t1"]);
    $modes = ["dir" => sprintf("%04o", fileperms($P["opts"]["cache_dir"]) & 07777)];
    foreach (tcf_ls($P["opts"]["cache_dir"]) as $f) {
        $modes[preg_replace("/\\\\.[0-9a-f]{8}\\\\./", ".N.", $f)] = sprintf("%04o", fileperms($P["opts"]["cache_dir"] . "/$f") & 07777);
    }
    ksort($modes);
    tc_result(["modes" => $modes, "logs" => count(tcf_logs($P["opts"]["cache_dir"])), "rebuilds" => $c->stats()["rebuilds"]]);
';

$cases = [
    'defaults' => [[], '0700', '0600'],
    'file_mode 0640, dir_mode 0750' => [['file_mode' => 0640, 'dir_mode' => 0750], '0750', '0640'],
    "Zend/Cm names as strings: cache_file_perm '0660', directory_mode '0770'" =>
        [['cache_file_perm' => '0660', 'directory_mode' => '0770'], '0770', '0660'],
];
foreach ([0000, 0077] as $umask) {
    foreach ($cases as $name => [$extra, $dmode, $fmode]) {
        $dir = "$base/u" . decoct($umask) . '-' . md5($name);
        $opts = ['cache_dir' => $dir, 'max_size' => '2M'] + $extra;
        $h = tcf_run_php(MAKE, ['umask' => $umask, 'opts' => $opts]);
        $r = $h['result'];
        $want = ['dir' => $dmode, 'tagcache.N.log' => $fmode, 'tagcache.idx' => $fmode];
        tc_check(sprintf('umask %03o, %s: directory %s, index and logs %s', $umask, $name, $dmode, $fmode),
            tc_ok($h) && $r['modes'] === $want && $r['logs'] > 1 && $r['rebuilds'] > 2, tc_describe($h));
    }
}

function refusal(array $opts): string
{
    try {
        new TagCache\File($opts);
    } catch (TagCache\Exception $e) {
        return $e->getMessage();
    }
    return 'accepted';
}

// Modes that would give the world access are refused outright.
foreach (['file_mode' => [0644, 0666, 0604], 'dir_mode' => [0755, 0777, 0701]] as $opt => $modes) {
    foreach ($modes as $m) {
        $msg = refusal(['cache_dir' => "$base/never", $opt => $m]);
        tc_check(sprintf('%s %04o is refused', $opt, $m), str_contains($msg, $opt) && !file_exists("$base/never"), $msg);
    }
}

// An existing directory that others may write into is refused; one they may only read is fine.
mkdir("$base/open", 0700);
chmod("$base/open", 0777);
tc_check('an existing directory mode 0777 is refused', str_contains(refusal(['cache_dir' => "$base/open"]), 'lets others write'));
chmod("$base/open", 01777);
tc_check('... so is 1777 (a /tmp-like directory)', str_contains(refusal(['cache_dir' => "$base/open"]), 'lets others write'));
chmod("$base/open", 0770);
tc_check('... and 0770 unless dir_mode says 0770', str_contains(refusal(['cache_dir' => "$base/open"]), 'lets others write')
    && refusal(['cache_dir' => "$base/open", 'dir_mode' => 0770]) === 'accepted');
chmod("$base/open", 0755);
tc_check('an existing directory mode 0755 is accepted (nobody else can write)', refusal(['cache_dir' => "$base/open"]) === 'accepted');

// A store file more open than file_mode is refused.
$c = new TagCache\File(['cache_dir' => "$base/widen"]);
$c->save('v', 'k');
unset($c);
chmod("$base/widen/tagcache.idx", 0644);
tc_check('an index more open than file_mode is refused', str_contains(refusal(['cache_dir' => "$base/widen"]), 'more open than'));
$h = tcf_run_php('try { new TagCache\File(["cache_dir" => $P["dir"]]); tc_result("accepted"); } catch (TagCache\Exception $e) { tc_result($e->getMessage()); }',
    ['dir' => "$base/widen"]);
tc_check('... by another process too', tc_ok($h) && str_contains($h['result'], 'more open than'), tc_describe($h));
chmod("$base/widen/tagcache.idx", 0600);

// Owned by another user (needs root to make).
if (function_exists('posix_geteuid') && posix_geteuid() === 0 && ($nobody = posix_getpwnam('nobody'))) {
    mkdir("$base/foreign", 0700);
    chown("$base/foreign", $nobody['uid']);
    tc_check('a directory owned by another user is refused', str_contains(refusal(['cache_dir' => "$base/foreign"]), 'owned by uid'));
    chown("$base/widen/tagcache.idx", $nobody['uid']);
    tc_check('an index owned by another user is refused', str_contains(refusal(['cache_dir' => "$base/widen"]), 'owned by uid'));
    chown("$base/widen/tagcache.idx", 0);
} else {
    // not root: other users' files cannot be made here; say so in the output
    tc_check('a directory owned by another user is refused', true);
    tc_check('an index owned by another user is refused', true);
}
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f108');
?>
--EXPECT--
umask 000, defaults: directory 0700, index and logs 0600: ok
umask 000, file_mode 0640, dir_mode 0750: directory 0750, index and logs 0640: ok
umask 000, Zend/Cm names as strings: cache_file_perm '0660', directory_mode '0770': directory 0770, index and logs 0660: ok
umask 077, defaults: directory 0700, index and logs 0600: ok
umask 077, file_mode 0640, dir_mode 0750: directory 0750, index and logs 0640: ok
umask 077, Zend/Cm names as strings: cache_file_perm '0660', directory_mode '0770': directory 0770, index and logs 0660: ok
file_mode 0644 is refused: ok
file_mode 0666 is refused: ok
file_mode 0604 is refused: ok
dir_mode 0755 is refused: ok
dir_mode 0777 is refused: ok
dir_mode 0701 is refused: ok
an existing directory mode 0777 is refused: ok
... so is 1777 (a /tmp-like directory): ok
... and 0770 unless dir_mode says 0770: ok
an existing directory mode 0755 is accepted (nobody else can write): ok
an index more open than file_mode is refused: ok
... by another process too: ok
a directory owned by another user is refused: ok
an index owned by another user is refused: ok
