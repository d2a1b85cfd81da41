--TEST--
Benchmark: bench.php --lag measures, per clean on node 0, the first miss on node 1; a store that never misses is counted as never
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/bench.php')) die('skip benchmark/ not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel not in this build');
if (!function_exists('shmop_open') && !is_file(PHP_EXTENSION_DIR . '/shmop.so')) die('skip the node modes need shmop for their side channel');
if (getenv('USE_ZEND_ALLOC') === '0') die('skip valgrind/ASan run: the benchmark forks node processes and checks no memory rule');
$rs = trim((string)shell_exec('command -v redis-server 2>/dev/null'));
if ($rs === '') die('skip redis-server is not installed (the benchmark starts its own)');
?>
--FILE--
<?php
// Not a timing test: no lag is compared with a number. Every clean must be
// seen as a miss on node 1 (within the generous timeout), and a store told
// to keep stale copies for an hour must be seen as never missing.
require __DIR__ . '/nodes.inc';

$r = bench_nodes(['--lag=20', '--lag-every-ms=10', '--max-staleness=0.2']);
echo 'exit 0: ', $r['rc'] === 0 ? 'ok' : "FAILED ({$r['rc']}) {$r['err']}", "\n";
$row = $r['rows'][0] ?? [];
$s = $row['sum'] ?? [];
echo 'one ok lag row: ', count($r['rows']) === 1 && ($row['mode'] ?? '') === 'lag' && ($row['status'] ?? '') === 'ok' ? 'ok' : 'FAILED ' . json_encode($row), "\n";
echo 'every clean seen as a miss on node 1: ', ($s['cleans'] ?? 0) === 20 && ($s['seen'] ?? 0) === 20 && ($s['never'] ?? -1) === 0 ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'median <= p90 <= worst: ', isset($s['median_ms'], $s['p90_ms'], $s['worst_ms']) && $s['median_ms'] <= $s['p90_ms'] && $s['p90_ms'] <= $s['worst_ms'] ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'no hit served beyond the bound after a clean: ', ($s['last_hits_beyond_bound'] ?? -1) === 0 && isset($s['last_hit_worst_ms']) ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'the table has the row: ', preg_match('/^\| tagcache-twolevel \| 1 \| 20 \| 20 \| 0 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 0 \| ok \|$/m', $r['out']) ? 'ok' : "FAILED\n{$r['out']}", "\n";

// The counter can fail: an hour of allowed staleness, a 0.5 s timeout.
$r = bench_nodes(['--lag=5', '--lag-every-ms=10', '--max-staleness=3600', '--bound=0.2', '--lag-timeout=0.5']);
$s = $r['rows'][0]['sum'] ?? [];
echo 'control: never missed, counted: ', $r['rc'] === 0 && ($s['never'] ?? 0) === 5 && ($s['seen'] ?? -1) === 0 && ($s['last_hits_beyond_bound'] ?? 0) === 5 ? 'ok' : "FAILED ({$r['rc']}) " . json_encode($s) . $r['err'], "\n";
echo 'no segment left: ', $r['left'] === [] ? 'ok' : 'FAILED ' . implode(' ', $r['left']), "\n";
?>
--EXPECT--
exit 0: ok
one ok lag row: ok
every clean seen as a miss on node 1: ok
median <= p90 <= worst: ok
no hit served beyond the bound after a clean: ok
the table has the row: ok
control: never missed, counted: ok
no segment left: ok
