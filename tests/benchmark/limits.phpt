--TEST--
Benchmark: benchmark/limits.php's two limit variants still apply to the sources (--check), so that the note's floor and ceiling can be measured again
--SKIPIF--
<?php
if (!is_file(dirname(__DIR__, 2) . '/benchmark/limits.php')) die('skip benchmark/ not present');
if (!is_file(dirname(__DIR__, 2) . '/ext/tc_redis.c')) die('skip ext/ sources not present');
if (!function_exists('proc_open')) die('skip proc_open() disabled');
?>
--FILE--
<?php
// Each variant patches one exact passage of ext/ (an anchor that must be
// found once); a change to that passage makes --check fail here instead of
// leaving a tool that no longer builds what it says.
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$p = proc_open([$php, '-n', dirname(__DIR__, 2) . '/benchmark/limits.php', '--check'],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
$out = stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
echo "exit: ", proc_close($p), "\n", $out, $err;

// and a usage error is an error, not a run
$p = proc_open([$php, '-n', dirname(__DIR__, 2) . '/benchmark/limits.php', '--rounds=x'],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
echo "exit: ", proc_close($p), "\n", $err;
?>
--EXPECT--
exit: 0
write-floor: applies
clean-ceiling: applies
exit: 2
usage: php benchmark/limits.php [--rounds=N] [--ops=N] [--clients=N] [--redis-port=N] [--out=DIR] [--keep] | --check
