--TEST--
Benchmark: --client-warmup=N runs N untimed ops in each client before the barrier, says so in the report, and times the same ops as without it
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
// Not a timing test: a small data set, two forked clients, 3,000 timed ops
// each after 2,000 warm-up ops of the other client's list.
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
$dir = sys_get_temp_dir() . '/tc-client-warmup-' . getmypid();
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

[$rc, $o, $cold, $coldReport] = bench($php, $root, $dir, 'cold', [], $env);
echo "cold exit: $rc", $rc ? " $o" : '', "\n";
[$rc, $o, $warm, $warmReport] = bench($php, $root, $dir, 'warm', ['--client-warmup=2000'], $env);
echo "warm exit: $rc", $rc ? " $o" : '', "\n";
echo 'meta: ', $cold['meta']['client_warmup'] ?? 'none', ' / ', $warm['meta']['client_warmup'] ?? 'none', "\n";
foreach (['cold' => $cold, 'warm' => $warm] as $k => $r) {
    $c = $r['ops'][0]['clients'] ?? [];
    echo "$k: warm-up ops ", implode(',', array_map(static fn ($x) => $x['warmup_ops'] ?? '-', $c)),
        '; timed ops ', implode(',', array_map(static fn ($x) => $x['reads'] + $x['writes'] + $x['cleans'], $c)), "\n";
}
echo 'note in the warm report only: ', str_contains($warmReport, 'clients warmed up (--client-warmup=2000)')
    && !str_contains($coldReport, 'clients warmed up') ? 'yes' : 'no', "\n";
exec('rm -rf ' . escapeshellarg($dir));
?>
--EXPECT--
cold exit: 0
warm exit: 0
meta: 0 / 2000
cold: warm-up ops 0,0; timed ops 3000,3000
warm: warm-up ops 2000,2000; timed ops 3000,3000
note in the warm report only: yes
