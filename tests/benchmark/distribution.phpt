--TEST--
Benchmark: Runner::distribution() gives the median, p90, p99, worst, mean and the slowest 5 % share of the calls' times
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/lib/autoload.php')) die('skip benchmark/ not present');
?>
--FILE--
<?php
require dirname(__DIR__, 2) . '/benchmark/lib/autoload.php';
use TagCacheBench\Runner;

// 1..100 ns in a shuffled order: the function sorts.
$xs = range(1, 100);
shuffle($xs);
$d = Runner::distribution($xs);
echo json_encode($d), "\n";
// Equal calls: the slowest 5 % hold 5 % of the time.
echo Runner::distribution(array_fill(0, 40, 7))['slowest_5pct_share'], "\n";
// One call of 20 slow ones: it carries most of the time.
$d = Runner::distribution(array_merge(array_fill(0, 19, 10), [810]));
echo $d['p50_ns'], ' ', $d['p99_ns'], ' ', $d['max_ns'], ' ', $d['slowest_5pct_share'], "\n";
// One call.
echo json_encode(Runner::distribution([5])), "\n";
?>
--EXPECT--
{"calls":100,"p50_ns":51,"p90_ns":91,"p99_ns":100,"max_ns":100,"mean_ns":50.5,"slowest_5pct_share":0.097}
0.05
10 810 810 0.81
{"calls":1,"p50_ns":5,"p90_ns":5,"p99_ns":5,"max_ns":5,"mean_ns":5,"slowest_5pct_share":1}
