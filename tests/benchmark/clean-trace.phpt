--TEST--
Benchmark: --clean-trace writes every clean of every client, and benchmark/clean-trace.php sums them up by class
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
// Not a timing test: a small data set (200 records, 20 tags, 20,000-op
// lists, so about 20 cleans a client), two forked clients, then the
// summary of what they wrote.
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
$dir = sys_get_temp_dir() . '/tc-clean-trace-' . getmypid();
@mkdir($dir, 0700, true);

function run(array $cmd, array $env): array
{
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    return [proc_close($p), $out, $err];
}

[$rc, $out, $err] = run([$php, "$root/bench.php", '--backends=tagcache-shm', '--only-ops', '--runs=1', '--clients=2',
    '--no-servers', '--quiet', '--keys=200', '--tags=20', '--list-ops=20000', "--data=$dir/data", "--out=$dir/out",
    "--clean-trace=$dir/trace"], $env);
echo "exit: $rc", $rc ? " $out $err" : '', "\n";
$files = glob("$dir/trace/*.json");
echo 'files: ', count($files), "\n";
$res = json_decode((string)@file_get_contents("$dir/out/results.json"), true);
$cleans = $res['ops'][0]['sum']['totals']['cleans'] ?? -1;
$traced = 0;
foreach ($files as $f) {
    $d = json_decode((string)file_get_contents($f), true);
    $traced += count($d['cleans']);
    foreach ($d['cleans'] as $c) {
        if (!isset($c['lat'], $c['nvcsw'], $c['nivcsw'], $c['minflt']) || $c['lat'] <= 0) {
            echo 'bad record: ', json_encode($c), "\n";
            break 2;
        }
    }
}
echo 'cleans traced as counted: ', $cleans > 0 && $traced === $cleans ? 'yes' : "no ($traced traced, $cleans counted)", "\n";
[$rc, $out, $err] = run([$php, "$root/clean-trace.php", "$dir/trace"], $env);
echo "summary exit: $rc\n";
echo 'summary counts them: ', str_contains($out, "== tagcache-shm: $cleans cleans") ? 'yes' : "no: $out $err", "\n";
// every clean is in exactly one class: the class table's calls add up
$sum = 0;
if (preg_match('/^class .*?\n(.*?)\n\n/sm', $out, $m)) {
    foreach (explode("\n", $m[1]) as $line) {
        if (preg_match('/^(\S+)\s+(\d+)\s/', $line, $mm)) {
            $sum += (int)$mm[2];
        }
    }
}
echo 'classes add up: ', $sum === $cleans ? 'yes' : "no ($sum)", "\n";
echo 'reads by duration: ', preg_match('/^reads: \d+ ms in all/m', $out) ? 'yes' : 'no', "\n";
exec('rm -rf ' . escapeshellarg($dir));
?>
--EXPECT--
exit: 0
files: 2
cleans traced as counted: yes
summary exit: 0
summary counts them: yes
classes add up: yes
reads by duration: yes
