--TEST--
Benchmark: stampede.php runs its rows; with serve_stale at most one rebuild per clean (and some), without it at least one, and the JSON has every figure
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/stampede.php')) die('skip benchmark/ not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
if (!function_exists('pcntl_fork') && !is_file(PHP_EXTENSION_DIR . '/pcntl.so')) die('skip pcntl is needed to fork the clients');
if (getenv('USE_ZEND_ALLOC') === '0') die('skip valgrind/ASan run: the benchmark forks clients and checks no memory rule');
?>
--FILE--
<?php
// Not a timing test: rebuilds are counted, not timed. With serve_stale a
// clean of the hot entry (one a second) is followed by one rebuild, the
// lease holder's, and never by more: that is the stampede protection. It
// may be followed by none on a loaded machine, and that is not a failure:
// a clean that the cleaner makes late can come right after the one before,
// inside its rebuild (one rebuild then serves both), or after the clients
// stopped. So: at least one rebuild, at most one per clean.
$bench = dirname(__DIR__, 2) . '/benchmark/stampede.php';
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$env = getenv();
unset($env['TAGCACHE_BENCH_REEXEC']);
$json = tempnam(sys_get_temp_dir(), 'tagcache-stampede-bench');
$p = proc_open([$php, $bench, '--clients=4', '--seconds=3', '--rows=shm-off,shm-stale,shm-remember', "--json=$json"],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
$out = stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
$rc = proc_close($p);
$r = json_decode((string)file_get_contents($json), true);
unlink($json);
echo 'exit 0: ', $rc === 0 ? 'ok' : "FAILED ($rc) $err", "\n";
echo 'three rows: ', is_array($r) && array_keys($r) === ['shm-off', 'shm-stale', 'shm-remember'] ? 'ok' : "FAILED $out", "\n";
foreach (['shm-stale', 'shm-remember'] as $row) {
    $x = $r[$row] ?? [];
    echo "$row: at most one rebuild per clean: ", ($x['cleans'] ?? 0) >= 1 && $x['rebuilds'] >= 1 && $x['rebuilds'] <= $x['cleans'] ? 'ok' : 'FAILED ' . json_encode($x), "\n";
}
$x = $r['shm-off'] ?? [];
echo 'shm-off: a rebuild per clean at least: ', ($x['cleans'] ?? 0) >= 1 && $x['rebuilds'] >= $x['cleans'] ? 'ok' : 'FAILED ' . json_encode($x), "\n";
echo 'figures: ', isset($x['p99_ms'], $x['p50_ms'], $x['max_ms'], $x['requests'], $x['rebuilds_per_clean']) ? 'ok' : 'FAILED', "\n";
?>
--EXPECT--
exit 0: ok
three rows: ok
shm-stale: at most one rebuild per clean: ok
shm-remember: at most one rebuild per clean: ok
shm-off: a rebuild per clean at least: ok
figures: ok
