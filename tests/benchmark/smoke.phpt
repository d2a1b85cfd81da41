--TEST--
Benchmark: bench.php --smoke runs every backend that needs no server and reports a row for each
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/bench.php')) die('skip benchmark/ not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
if (getenv('USE_ZEND_ALLOC') === '0') die('skip valgrind/ASan run: the smoke spawns many processes and checks no memory rule');
?>
--FILE--
<?php
// Not a timing test: the smoke run checks that each backend works through the
// benchmark's call path (save/load/clean, the op lists, forked clients), and
// bench.php exits non-zero on any error.
$bench = dirname(__DIR__, 2) . '/benchmark/bench.php';
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$env = getenv();
unset($env['TAGCACHE_BENCH_REEXEC'], $env['TAGCACHE_BENCH_MODULE']);
if (!isset($env['TAGCACHE_MODULE'])) {
    $m = rtrim((string)ini_get('extension_dir'), '/') . '/tagcache.so';
    if (is_file($m)) {
        $env['TAGCACHE_MODULE'] = $m;
    }
}

function run(array $cmd, array $env): array
{
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    return [proc_close($p), $out, $err];
}

[$rc, $out, $err] = run([$php, $bench, '--list', '--json'], $env);
$defs = json_decode($out, true);
echo 'list: ', is_array($defs) ? 'ok' : "bad ($rc) $out $err", "\n";
$serverless = array_keys(array_filter($defs ?: [], static fn ($d) => !$d['servers']));
echo 'serverless backends include tagcache-shm and apcu: ',
    in_array('tagcache-shm', $serverless, true) && in_array('apcu', $serverless, true) ? 'yes' : 'no', "\n";

// File stores on tmpfs when there is one: this checks behaviour, not disk speed,
// and keeps the test well inside run-tests' timeout on a slow disk.
$smoke = [$php, $bench, '--smoke', '--quiet'];
if (is_dir('/dev/shm') && is_writable('/dev/shm')) {
    $smoke[] = '--file-dir=/dev/shm';
}
[$rc, $out, $err] = run($smoke, $env);
echo "exit: $rc\n";
$rows = [];
foreach (explode("\n", $out) as $line) {
    if (preg_match('/^SMOKE (\S+)\s+(\S+)\s*(.*)$/', $line, $m)) {
        $rows[$m[1]] = [$m[2], $m[3]];
    }
}
$missingRows = array_diff($serverless, array_keys($rows));
echo 'every serverless backend has a row: ', $missingRows ? 'no: ' . implode(', ', $missingRows) : 'yes', "\n";
echo 'no other rows: ', array_diff(array_keys($rows), $serverless) ? 'no' : 'yes', "\n";
echo 'tagcache-shm: ', $rows['tagcache-shm'][0] ?? 'absent', "\n";
$bad = [];
foreach ($rows as $b => [$status, $detail]) {
    // "missing": a class or optional peer not present here; never "error".
    if (!in_array($status, ['ok', 'missing'], true)) {
        $bad[] = "$b $status $detail";
    }
    // A backend that ran must have run reads, writes and (with tags) cleans.
    if ($status === 'ok' && !preg_match('/fork: [1-9]\d* reads [1-9]\d* writes ([1-9]\d*|n\/a) cleans/', $detail)) {
        $bad[] = "$b ran no full op mix: $detail";
    }
}
echo 'rows all ok or missing: ', $bad ? "no\n" . implode("\n", $bad) : 'yes', "\n";
echo 'verdict line: ', str_contains($out, "\nSMOKE OK\n") ? 'SMOKE OK' : "missing\n$out\n$err", "\n";
?>
--EXPECT--
list: ok
serverless backends include tagcache-shm and apcu: yes
exit: 0
every serverless backend has a row: yes
no other rows: yes
tagcache-shm: ok
rows all ok or missing: yes
verdict line: SMOKE OK
