--TEST--
Shm and TwoLevel: huge_pages off (the option, or ini tagcache.shm.huge_pages=0) leaves a new segment and a new node state file in 4 KB pages (stats huge_pages -1: not tried), and the next process with it on turns them into 2 MB pages; an option overrides the ini; a value that is not a boolean is refused
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (PHP_OS_FAMILY !== 'Linux') die('skip 2 MB pages of files in memory (MADV_COLLAPSE) are Linux only');
$thp = @file_get_contents('/sys/kernel/mm/transparent_hugepage/shmem_enabled');
if ($thp === false) die('skip kernel without transparent huge pages (no /sys/kernel/mm/transparent_hugepage/shmem_enabled)');
if (strpos($thp, '[deny]') !== false) die('skip shmem_enabled is "deny": this system forbids 2 MB pages of files in memory');
if (version_compare(preg_replace('/[^0-9.].*$/', '', php_uname('r')), '6.1', '<')) die('skip MADV_COLLAPSE needs Linux 6.1 or later, this is ' . php_uname('r'));
if (!is_readable('/proc/self/smaps')) die('skip /proc/self/smaps is not readable here');
?>
--INI--
tagcache.shm.huge_pages=0
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('121');
$dir = tc_make_tmpdir('121');

// What /proc/self/smaps says of this process's mapping of a file: whether
// it starts at a 2 MB boundary, its size and how much of it is mapped by
// 2 MB pages (ShmemPmdMapped for a file in memory, FilePmdMapped on disk).
const SMAPS = '
    function mapping_of(string $path): ?array {
        $cur = null; $out = null;
        foreach (file("/proc/self/smaps") as $l) {
            if (preg_match("/^([0-9a-f]+)-([0-9a-f]+) \\\\S+ \\\\S+ \\\\S+ \\\\S+\\\\s*(.*)$/", $l, $m)) {
                $cur = trim($m[3]) === $path;
                if ($cur) {
                    $out = ["aligned" => hexdec($m[1]) % (2 << 20) === 0, "kb" => (hexdec($m[2]) - hexdec($m[1])) >> 10, "pmd_kb" => 0];
                }
            } elseif ($cur && preg_match("/^(Shmem|File)PmdMapped:\\\\s+(\\\\d+) kB/", $l, $m)) {
                $out["pmd_kb"] += (int)$m[2];
            }
        }
        return $out;
    }
';
eval(SMAPS);

function show(string $who, ?array $m, $stat): void {
    echo $who, ": at 2 MB ", $m && $m['aligned'] ? 'yes' : 'no', ", 2 MB pages ",
        !$m ? 'unmapped' : ($m['pmd_kb'] >= 2048 ? 'yes' : ($m['pmd_kb'] === 0 ? 'no' : json_encode($m))),
        ", stats huge_pages ", var_export($stat, true), "\n";
}

// this process: ini off; a new segment stays in 4 KB pages
$segA = tc_seg('121', '_a');
$optsA = ['segment' => $segA, 'size' => '16M'];
$a = new TagCache\Shm($optsA);
for ($i = 0; $i < 2000; $i++) {
    $a->save(str_repeat('x', 1000), "k$i", ['t' . ($i % 7)]);
}
echo "option from the ini: ", var_export($a->getOption('huge_pages'), true), "\n";
show('ini off, creator', mapping_of(tc_seg_path($segA)), $a->stats()['huge_pages'] ?? null);

// another process, huge_pages on (the default): it is the first of the
// segment's users that may, so it does
$r = tc_run_php(SMAPS . '
    $c = new TagCache\Shm($P["opts"]);
    $hits = 0;
    for ($i = 0; $i < 2000; $i++) { $hits += $c->load("k$i") === str_repeat("x", 1000) ? 1 : 0; }
    tc_result(["hits" => $hits, "map" => mapping_of($P["path"]), "stat" => $c->stats()["huge_pages"] ?? null]);
', ['opts' => $optsA, 'path' => tc_seg_path($segA)]);
$o = $r['result'];
if ($o) {
    echo "hits ", $o['hits'], "; ";
    show('default, another process', $o['map'], $o['stat']);
} else {
    echo tc_describe($r), "\n";
}
echo "this process sees it too: stats huge_pages ", var_export($a->stats()['huge_pages'] ?? null, true), "\n";

// the option overrides the ini, as XML gives it (a string)
$segB = tc_seg('121', '_b');
$b = new TagCache\Shm(['segment' => $segB, 'size' => '16M', 'huge_pages' => '1']);
$b->save('v', 'k');
show('option "1" over ini off, creator', mapping_of(tc_seg_path($segB)), $b->stats()['huge_pages'] ?? null);

// and off by option in a process whose ini is on
$segC = tc_seg('121', '_c');
$r = tc_run_php(SMAPS . '
    $c = new TagCache\Shm(["segment" => $P["seg"], "size" => "16M", "huge_pages" => false]);
    $c->save("v", "k");
    tc_result(["map" => mapping_of($P["path"]), "stat" => $c->stats()["huge_pages"] ?? null, "opt" => $c->getOption("huge_pages")]);
', ['seg' => $segC, 'path' => tc_seg_path($segC)]);
$o = $r['result'];
if ($o) {
    show('option false, another process (ini on)', $o['map'], $o['stat']);
} else {
    echo tc_describe($r), "\n";
}

// TwoLevel: fast_backend_options decide for the node state file too
$segT = tc_seg('121', '_tl');
$tl = new TagCache\TwoLevel([
    'slow_backend' => 'File',
    'slow_backend_options' => ['cache_dir' => "$dir/slow"],
    'fast_backend_options' => ['segment' => $segT, 'size' => '16M'],
]);
for ($i = 0; $i < 500; $i++) {
    $tl->save("v$i", "id$i", ['t']);
}
$st = $tl->stats();
$n = mapping_of(tc_seg_path($segT) . '.twolevel');
echo "TwoLevel, ini off: reads its write ", $tl->load('id499') === 'v499' ? 'yes' : 'no',
    ", fast.huge_pages ", var_export($st['fast.huge_pages'] ?? null, true),
    ", node_huge_pages ", var_export($st['node_huge_pages'] ?? null, true),
    ", node file in 2 MB pages ", $n && $n['pmd_kb'] > 0 ? 'yes' : 'no', "\n";

// not a boolean
try {
    new TagCache\Shm(['segment' => tc_seg('121', '_d'), 'huge_pages' => 'maybe']);
    echo "'maybe' accepted\n";
} catch (TagCache\ConfigurationException $e) {
    echo get_class($e), ": ", $e->getMessage(), "\n";
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('121');
tc_clean_tmpdirs('121');
?>
--EXPECT--
option from the ini: false
ini off, creator: at 2 MB yes, 2 MB pages no, stats huge_pages -1
hits 2000; default, another process: at 2 MB yes, 2 MB pages yes, stats huge_pages 1
this process sees it too: stats huge_pages 1
option "1" over ini off, creator: at 2 MB yes, 2 MB pages yes, stats huge_pages 1
option false, another process (ini on): at 2 MB yes, 2 MB pages no, stats huge_pages -1
TwoLevel, ini off: reads its write yes, fast.huge_pages -1, node_huge_pages -1, node file in 2 MB pages no
TagCache\ConfigurationException: Option "huge_pages" must be a boolean, 0 or 1
done
