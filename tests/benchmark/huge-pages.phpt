--TEST--
Benchmark: each client of TagCache\Shm (and of TagCache\TwoLevel) records whether the segment is in 2 MB pages (stats huge_pages) in results.json, and the report says it once per backend
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/bench.php')) die('skip benchmark/ not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
if (getenv('USE_ZEND_ALLOC') === '0') die('skip valgrind/ASan run: the run forks clients and checks no memory rule');
?>
--FILE--
<?php
// Not a timing test: a small data set, two forked clients. (TwoLevel's
// clients record fast.huge_pages the same way; its run needs Redis.)
$root = dirname(__DIR__, 2) . '/benchmark';
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$env = getenv();
unset($env['TAGCACHE_BENCH_REEXEC'], $env['TAGCACHE_BENCH_MODULE']);
if (!isset($env['TAGCACHE_MODULE'])) {
    $m = rtrim((string)ini_get('extension_dir'), '/') . '/tagcache.so';
    if (is_file($m)) {
        $env['TAGCACHE_MODULE'] = $m;
    }
}
$dir = sys_get_temp_dir() . '/tc-bench-huge-' . getmypid();
@mkdir($dir, 0700, true);

function bench(string $php, string $root, string $dir, string $out, array $extra, array $env): array
{
    $cmd = array_merge([$php, "$root/bench.php", '--backends=tagcache-shm', '--only-ops', '--runs=1', '--warmup=0',
        '--clients=2', '--no-servers', '--quiet', '--keys=200', '--tags=20', '--list-ops=5000', '--ops=3000',
        "--data=$dir/data", "--out=$dir/$out"], $extra);
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
    $o = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
    $rc = proc_close($p);
    return [$rc, $o, json_decode((string)@file_get_contents("$dir/$out/results.json"), true),
        (string)@file_get_contents("$dir/$out/report.txt")];
}

[$rc, $o, $r, $report] = bench($php, $root, $dir, 'out', [], $env);
echo "exit: $rc", $rc ? " $o" : '', "\n";
foreach ($r['ops'] ?? [] as $op) {
    $v = array_map(static fn ($c) => $c['huge_pages'] ?? 'missing', $op['clients']);
    echo $op['backend'], ': every client recorded it: ', in_array('missing', $v, true) ? 'no' : 'yes',
        ', the same in all: ', count(array_unique($v)) === 1 ? 'yes' : 'no (' . implode(',', $v) . ')', "\n";
    $w = [1 => 'yes', 0 => 'no (4 KB pages)'][$v[0]] ?? 'not tried';
    echo '  in the report: ', str_contains($report, "{$op['backend']} $w") ? 'yes' : 'no', "\n";
}
echo 'one report line: ', substr_count($report, 'note: segments in 2 MB pages (stats huge_pages): ') === 1 ? 'yes' : 'no', "\n";
exec('rm -rf ' . escapeshellarg($dir));
?>
--EXPECT--
exit: 0
tagcache-shm: every client recorded it: yes, the same in all: yes
  in the report: yes
one report line: yes
