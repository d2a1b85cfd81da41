--TEST--
Shm and TwoLevel: a new segment and a new node state file are turned into 2 MB pages (MADV_COLLAPSE) and mapped at a 2 MB boundary, so the creator and an unrelated process that maps them later both map them with 2 MB pages; so does the first process that maps a copy of the file (or one of an earlier build), and stats() says so (huge_pages) (TECHNOTES, "Huge pages")
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
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('120');
$dir = tc_make_tmpdir('120');

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

$seg = tc_seg('120');
$path = tc_seg_path($seg);
$opts = ['segment' => $seg, 'size' => '16M'];
$c = new TagCache\Shm($opts);
for ($i = 0; $i < 2000; $i++) {
    $c->save(str_repeat(chr(65 + $i % 26), 1000), "k$i", ['t' . ($i % 7)]);
}
$m = mapping_of($path);
echo "creator: mapped ", $m ? 'yes' : 'no', ", at 2 MB ", $m && $m['aligned'] ? 'yes' : 'no',
    ", size ", $m ? $m['kb'] : 0, " kB, 2 MB pages ", $m && $m['pmd_kb'] >= 2048 ? 'yes' : "no (" . json_encode($m) . ")",
    ", stats huge_pages ", var_export($c->stats()['huge_pages'] ?? null, true), "\n";

// an unrelated process maps the existing segment later and reads it
$r = tc_run_php(SMAPS . '
    $c = new TagCache\Shm($P["opts"]);
    $hits = 0;
    for ($i = 0; $i < 2000; $i++) { $hits += $c->load("k$i") === str_repeat(chr(65 + $i % 26), 1000) ? 1 : 0; }
    tc_result(["hits" => $hits, "map" => mapping_of($P["path"]), "stat" => $c->stats()["huge_pages"] ?? null]);
', ['opts' => $opts, 'path' => $path]);
$o = $r['result'];
echo "other process: ", $o ? "hits {$o['hits']}, at 2 MB " . ($o['map']['aligned'] ? 'yes' : 'no')
    . ", 2 MB pages " . ($o['map']['pmd_kb'] >= 2048 ? 'yes' : 'no (' . json_encode($o['map']) . ')')
    . ", stats huge_pages " . var_export($o['stat'], true) : tc_describe($r), "\n";

// a copy of the file (4 KB pages again; its header says the original was
// done): the first process that maps the copy collapses it
$copy = tc_seg_path(tc_seg('120', '_copy'));
copy($path, $copy);
chmod($copy, 0600);
$r = tc_run_php(SMAPS . '
    $c = new TagCache\Shm(["path" => $P["path"]]);
    $hits = 0;
    for ($i = 0; $i < 2000; $i++) { $hits += $c->load("k$i") === str_repeat(chr(65 + $i % 26), 1000) ? 1 : 0; }
    tc_result(["hits" => $hits, "map" => mapping_of($P["path"]), "stat" => $c->stats()["huge_pages"] ?? null]);
', ['path' => $copy]);
$o = $r['result'];
echo "a copy, in another process: ", $o ? "hits {$o['hits']}, 2 MB pages " . ($o['map']['pmd_kb'] >= 2048 ? 'yes' : 'no (' . json_encode($o['map']) . ')')
    . ", stats huge_pages " . var_export($o['stat'], true) : tc_describe($r), "\n";

// TwoLevel: the node state file beside the fast segment (4 MB of marks
// for a 16 MB segment), its marks touched by saves
$seg2 = tc_seg('120', '_tl');
$tl = new TagCache\TwoLevel([
    'slow_backend' => 'File',
    'slow_backend_options' => ['cache_dir' => "$dir/slow"],
    'fast_backend_options' => ['segment' => $seg2, 'size' => '16M'],
]);
for ($i = 0; $i < 500; $i++) {
    $tl->save("v$i", "id$i", ['t']);
}
$n = mapping_of(tc_seg_path($seg2) . '.twolevel');
echo "node file: at 2 MB ", $n && $n['aligned'] ? 'yes' : 'no', ", 2 MB pages ",
    $n && $n['pmd_kb'] >= 2048 ? 'yes' : "no (" . json_encode($n) . ")", "\n";
echo "TwoLevel reads its own write: ", $tl->load('id499') === 'v499' ? 'yes' : 'no',
    ", stats fast.huge_pages ", var_export($tl->stats()['fast.huge_pages'] ?? null, true),
    ", node_huge_pages ", var_export($tl->stats()['node_huge_pages'] ?? null, true), "\n";
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('120');
tc_clean_tmpdirs('120');
?>
--EXPECT--
creator: mapped yes, at 2 MB yes, size 16384 kB, 2 MB pages yes, stats huge_pages 1
other process: hits 2000, at 2 MB yes, 2 MB pages yes, stats huge_pages 1
a copy, in another process: hits 2000, 2 MB pages yes, stats huge_pages 1
node file: at 2 MB yes, 2 MB pages yes
TwoLevel reads its own write: yes, stats fast.huge_pages 1, node_huge_pages 1
done
