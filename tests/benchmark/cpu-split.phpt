--TEST--
Benchmark: the report's "where the CPU goes" table: the clients' user and kernel time per op, and redis-server's own CPU and commands for a Redis backend
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/bench.php')) die('skip benchmark/ not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
if (!extension_loaded('redis')) die('skip the benchmark reads redis-server INFO through phpredis, which is not loaded');
if (getenv('USE_ZEND_ALLOC') === '0') die('skip valgrind/ASan run: the run forks clients and checks no memory rule');
require __DIR__ . '/../redis/redis.inc';
if ($why = tcr_skip_reason()) die("skip $why");
?>
--FILE--
<?php
// Not a timing test: what is checked is that the figures are there and
// add up (every client reported its CPU, the server's commands were seen),
// never how large they are. A redis-server of its own: the benchmark
// flushes the database it is given.
require __DIR__ . '/../redis/redis.inc';
$srv = tcr_start('cpu-split');
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
$dir = sys_get_temp_dir() . '/tc-cpu-split-' . getmypid();
@mkdir($dir, 0700, true);
register_shutdown_function(fn () => tcr_rmtree($dir));

function run(array $cmd, array $env): array
{
    $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    return [proc_close($p), $out, $err];
}

[$rc, $out, $err] = run([$php, "$root/bench.php", '--backends=tagcache-shm,tagcache-redis', '--only-ops', '--runs=1',
    '--clients=2', '--no-servers', "--redis-port={$srv['port']}", '--quiet', '--keys=200', '--tags=20',
    '--list-ops=5000', "--data=$dir/data", "--out=$dir/out"], $env);
echo "exit: $rc", $rc ? " $out $err" : '', "\n";
$res = json_decode((string)@file_get_contents("$dir/out/results.json"), true);
$runs = [];
foreach ($res['ops'] ?? [] as $r) {
    $runs[$r['backend']] = $r;
}
foreach (['tagcache-shm', 'tagcache-redis'] as $b) {
    $ok = isset($runs[$b]['clients']) && count($runs[$b]['clients']) === 2;
    foreach ($runs[$b]['clients'] ?? [] as $c) {
        $ok = $ok && isset($c['cpu_ns']['user'], $c['cpu_ns']['sys']) && $c['cpu_ns']['user'] >= 0
            && $c['cpu_ns']['sys'] >= 0 && $c['cpu_ns']['user'] + $c['cpu_ns']['sys'] > 0;
    }
    echo "$b: each client reported its CPU: ", $ok ? 'yes' : 'no', "\n";
}
echo 'tagcache-shm: no server figures: ', isset($runs['tagcache-shm']) && !isset($runs['tagcache-shm']['server']) ? 'yes' : 'no', "\n";
$s = $runs['tagcache-redis']['server'] ?? [];
echo 'tagcache-redis: server is redis-server: ', ($s['server'] ?? '') === 'redis-server' ? 'yes' : 'no', "\n";
echo 'tagcache-redis: server CPU counted: ', isset($s['user_s'], $s['sys_s']) && $s['user_s'] + $s['sys_s'] > 0 ? 'yes' : 'no', "\n";
// every read is a GET (its hits and misses): at least as many GETs as reads
$reads = array_sum(array_column($runs['tagcache-redis']['clients'] ?? [], 'reads'));
echo 'tagcache-redis: GETs seen for every read: ', $reads > 0 && ($s['commands']['get'][0] ?? 0) >= $reads ? 'yes' : 'no', "\n";
echo 'tagcache-redis: the save scripts seen: ', ($s['commands']['evalsha'][0] ?? 0) > 0 ? 'yes' : 'no', "\n";
$text = (string)@file_get_contents("$dir/out/report.txt");
echo 'report has the table: ', str_contains($text, 'Where the CPU goes in the ops phase') ? 'yes' : 'no', "\n";
$rows = [];
foreach (explode("\n", $text) as $line) {
    if (preg_match('/^\| fork \| (TagCache\\\\\w+)\s+\|\s+([\d,]+) \|\s+([\d.]+) \|\s+([\d.]+) \|\s*([^|]*)\|/', $line, $m)) {
        $rows[$m[1]] = [(int)str_replace(',', '', $m[2]), trim($m[5])];
    }
}
$ops = static fn (string $b) => array_sum(array_map(static fn ($c) => $c['reads'] + $c['writes'] + $c['cleans'], $runs[$b]['clients'] ?? []));
echo 'rows count every op: ', isset($rows['TagCache\\Shm'], $rows['TagCache\\Redis'])
    && $rows['TagCache\\Shm'][0] === $ops('tagcache-shm') && $rows['TagCache\\Redis'][0] === $ops('tagcache-redis') ? 'yes' : 'no', "\n";
echo 'Redis row names its server: ', str_contains($rows['TagCache\\Redis'][1] ?? '', '(redis-server)') ? 'yes' : 'no', "\n";
// the timed writes' and cleans' time split, for the stores with a server:
// the row is what the clients' schedstat sums in results.json say (the
// window between the readings less the empty readings, less the CPU and
// the run queue, is asleep), and nothing in it is negative
$split = [];
foreach (explode("\n", substr($text, (int)strpos($text, "Where a timed write's and clean's time goes"))) as $line) {
    if (preg_match('/^\| fork \| (TagCache\\\\\w+)\s+\|((?:\s+[\d.,]+ \|){10})/', $line, $m)) {
        $split[$m[1]] = array_map(static fn ($x) => (float)str_replace(',', '', $x), preg_split('/\s*\|\s*/', trim($m[2], " |")));
    }
}
echo 'report has the time split: ', str_contains($text, "Where a timed write's and clean's time goes") ? 'yes' : 'no', "\n";
echo 'no split for TagCache\\Shm (no server): ', isset($runs['tagcache-shm']) && !isset($split['TagCache\\Shm']) ? 'yes' : 'no', "\n";
$want = [];
foreach (['write' => 'writes', 'clean' => 'cleans'] as $k => $n) {
    $cnt = $wall = $cpu = $rq = $win = $emp = 0;
    foreach ($runs['tagcache-redis']['clients'] ?? [] as $c) {
        $sc = $c['sched'];
        $cnt += $c[$n];
        $wall += $c[$k . '_ns'];
        $cpu += $sc[$k . '_cpu_ns'] - $sc[$k . '_empty_ns'][0];
        $rq += $sc[$k . '_runq_ns'] - $sc[$k . '_empty_ns'][1];
        $win += $sc[$k . '_window_ns'] - $sc[$k . '_empty_ns'][2];
        $emp += $sc[$k . '_empty_ns'][2];
    }
    $us = static fn ($ns) => round(max(0, $ns) / 1000 / max(1, $cnt), 1);
    array_push($want, $us($wall), $us($cpu), $us($rq), $us($win - max(0, $cpu) - max(0, $rq)), $us($emp));
}
$v = $split['TagCache\\Redis'] ?? [];
$same = count($v) === 10;
foreach ($want as $k => $x) {
    $same = $same && abs($v[$k] - $x) <= 0.051;
}
echo 'TagCache\\Redis: the split is the clients\' schedstat sums: ', $same ? 'yes' : 'no ' . json_encode([$v, $want]), "\n";
echo 'TagCache\\Redis: nothing negative, a write and a clean each took time: ', $v && min($v) >= 0 && $v[0] > 0 && $v[5] > 0 ? 'yes' : 'no', "\n";
?>
--EXPECT--
exit: 0
tagcache-shm: each client reported its CPU: yes
tagcache-redis: each client reported its CPU: yes
tagcache-shm: no server figures: yes
tagcache-redis: server is redis-server: yes
tagcache-redis: server CPU counted: yes
tagcache-redis: GETs seen for every read: yes
tagcache-redis: the save scripts seen: yes
report has the table: yes
rows count every op: yes
Redis row names its server: yes
report has the time split: yes
no split for TagCache\Shm (no server): yes
TagCache\Redis: the split is the clients' schedstat sums: yes
TagCache\Redis: nothing negative, a write and a clean each took time: yes
