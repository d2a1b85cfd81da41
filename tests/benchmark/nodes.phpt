--TEST--
Benchmark: bench.php --nodes judges every read on N nodes against the side channel: TwoLevel serves no stale read beyond its bound; a bound it does not keep is counted
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
// Not a timing test: reads are counted and judged, not timed. The data set
// is small with few tags (20), so every clean removes many records and
// readers read cleaned records within milliseconds of each clean.
require __DIR__ . '/nodes.inc';

// 1. TwoLevel as configured (max_staleness 0.2 s): no read beyond 0.2 s.
$r = bench_nodes(['--nodes=2', '--clients=1', '--seconds=2', '--max-staleness=0.2', '--clean-every-ms=20']);
echo 'exit 0: ', $r['rc'] === 0 ? 'ok' : "FAILED ({$r['rc']}) {$r['err']}", "\n";
$row = $r['rows'][0] ?? [];
$s = $row['sum'] ?? [];
echo 'one ok row for tagcache-twolevel: ', count($r['rows']) === 1 && ($row['backend'] ?? '') === 'tagcache-twolevel' && ($row['status'] ?? '') === 'ok' ? 'ok' : 'FAILED ' . json_encode($row), "\n";
echo 'two node processes, readers on both: ', count(array_unique(array_column(array_filter($row['clients'] ?? [], fn ($c) => $c['role'] === 'reader'), 'node'))) === 2 ? 'ok' : 'FAILED', "\n";
echo 'reads and cleans ran: ', ($s['reads'] ?? 0) > 0 && ($s['cleans'] ?? 0) > 0 && ($s['resaved'] ?? 0) > 0 ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'every hit judged: ', ($s['current'] + $s['stale_within'] + $s['stale_beyond'] + $s['wrong'] + $s['misses']) === $s['reads'] ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'no wrong value: ', ($s['wrong'] ?? -1) === 0 ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'no stale read beyond the bound: ', ($s['stale_beyond'] ?? -1) === 0 ? 'ok' : 'FAILED ' . json_encode($s), "\n";
echo 'the table says so: ', preg_match('/^\| tagcache-twolevel \| 1 \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| 0 \|/m', $r['out']) ? 'ok' : "FAILED\n{$r['out']}", "\n";

// 2. The checker can fail: TwoLevel allowed an hour of staleness, judged
// against 0.2 s. Node 1 keeps serving what node 0 cleaned.
$r = bench_nodes(['--nodes=2', '--clients=1', '--seconds=2', '--max-staleness=3600', '--bound=0.2', '--clean-every-ms=20']);
$s = $r['rows'][0]['sum'] ?? [];
echo 'control: stale reads beyond the bound counted: ', $r['rc'] === 0 && ($s['stale_beyond'] ?? 0) > 0 && ($s['wrong'] ?? -1) === 0 ? 'ok' : "FAILED ({$r['rc']}) " . json_encode($s) . $r['err'], "\n";
echo 'no segment left: ', $r['left'] === [] ? 'ok' : 'FAILED ' . implode(' ', $r['left']), "\n";
?>
--EXPECT--
exit 0: ok
one ok row for tagcache-twolevel: ok
two node processes, readers on both: ok
reads and cleans ran: ok
every hit judged: ok
no wrong value: ok
no stale read beyond the bound: ok
the table says so: ok
control: stale reads beyond the bound counted: ok
no segment left: ok
