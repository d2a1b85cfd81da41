<?php

declare(strict_types=1);

/*
 * Sums up what bench.php --clean-trace=DIR wrote: where the clean time of
 * each backend went, call by call.
 *
 *   php benchmark/clean-trace.php DIR [--slowest=N]
 *
 * Each clean is put in a class: "preempted" (an involuntary context switch
 * in the call; with a -DTC_SHM_TRACE build, @where names the largest part
 * of the call: php_in before the engine, pre the selection without the
 * lock, lockwait, hold, out after the unlock), "slept" (a voluntary one:
 * a sleep on the lock's futex, or on a server), "contended" (the lock was
 * held when the call came; tracing builds only), "faults" (minor page
 * faults), "arrays" (member arrays compacted or reallocated under it),
 * "clean" (none of these). Then the classes' share of all clean time, the
 * slowest calls, the lock's holds and waits by kind of call (tracing
 * builds: log2 ns buckets, summed over the clients) and the reads' time
 * by duration (reads that took over 128 us were descheduled inside).
 */

$dir = $argv[1] ?? null;
if ($dir === null || !is_dir($dir)) {
    fwrite(STDERR, "usage: php benchmark/clean-trace.php DIR [--slowest=N]\n");
    exit(2);
}
$slowest = 10;
foreach (array_slice($argv, 2) as $a) {
    if (preg_match('/^--slowest=(\d+)$/', $a, $m)) {
        $slowest = (int)$m[1];
    }
}

$by = [];
foreach (glob("$dir/*.json") as $f) {
    $d = json_decode((string)file_get_contents($f), true);
    if (!is_array($d) || !isset($d['backend'])) {
        continue;
    }
    $b = &$by[$d['backend']];
    $b['cleans'] = array_merge($b['cleans'] ?? [], $d['cleans']);
    foreach ($d['stats'] as $k => $v) {
        $b['stats'][$k] = ($b['stats'][$k] ?? 0) + $v;
    }
    foreach ($d['read_ns_by_duration'] as $k => $v) {
        $b['reads'][(int)$k] = ($b['reads'][(int)$k] ?? 0) + $v;
    }
    unset($b);
}

/** The parts of a traced call, ns. */
function parts(array $r): array
{
    if (empty($r['t_call'])) {
        return [];
    }
    $p = ['php_in' => $r['t_call'] - $r['t0'], 'pre' => $r['pre_ns'], 'lockwait' => $r['wait_ns'], 'hold' => $r['hold_ns'],
        'out' => $r['t0'] + $r['lat'] - $r['t_rel']];
    return $p;
}

function klass(array $r): string
{
    $c = [];
    if ($r['nivcsw'] > 0) {
        $p = parts($r);
        $c[] = $p ? 'preempted@' . array_search(max($p), $p, true) : 'preempted';
    }
    if ($r['nvcsw'] > 0) {
        $c[] = 'slept';
    }
    if (!empty($r['contended'])) {
        $c[] = 'contended';
    }
    if ($r['minflt'] > 0) {
        $c[] = 'faults';
    }
    if (!empty($r['call_compacts']) || !empty($r['call_reallocs'])) {
        $c[] = 'arrays';
    }
    return $c ? implode('+', $c) : 'clean';
}

$us = static fn (float $ns) => sprintf('%.1f', $ns / 1000);
foreach ($by as $backend => $b) {
    $recs = $b['cleans'];
    $n = count($recs);
    if (!$n) {
        continue;
    }
    $tot = array_sum(array_column($recs, 'lat'));
    printf("== %s: %d cleans, mean %s us\n\n", $backend, $n, $us($tot / $n));
    echo "by time (us)        calls  % calls  % time  classes\n";
    $edges = [5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, PHP_INT_MAX];
    $lo = 0;
    foreach ($edges as $e) {
        $s = array_filter($recs, static fn ($r) => $r['lat'] >= $lo && $r['lat'] < $e);
        if ($s) {
            $cc = array_count_values(array_map('klass', $s));
            arsort($cc);
            $t = array_sum(array_column($s, 'lat'));
            printf("%8s-%-9s %6d %7.1f %7.1f  %s\n", $us($lo), $e === PHP_INT_MAX ? '' : $us($e), count($s), 100 * count($s) / $n,
                100 * $t / $tot, implode(', ', array_map(static fn ($k, $v) => "$k $v", array_keys(array_slice($cc, 0, 6)),
                    array_slice($cc, 0, 6))));
        }
        $lo = $e;
    }
    echo "\nclass                                    calls  % time  median us  mean us  wait us  hold us  removed\n";
    $cls = [];
    foreach ($recs as $r) {
        $cls[klass($r)][] = $r;
    }
    uasort($cls, static fn ($a, $b) => array_sum(array_column($b, 'lat')) <=> array_sum(array_column($a, 'lat')));
    foreach ($cls as $k => $v) {
        $l = array_column($v, 'lat');
        sort($l);
        $m = static fn (string $f) => array_sum(array_column($v, $f)) / count($v);
        printf("%-40s %6d %7.1f %10s %8s %8s %8s %8.1f\n", $k, count($v), 100 * array_sum($l) / $tot, $us($l[intdiv(count($l), 2)]),
            $us(array_sum($l) / count($l)), $us($m('wait_ns')), $us($m('hold_ns')), $m('removed'));
    }
    usort($recs, static fn ($a, $b) => $b['lat'] <=> $a['lat']);
    echo "\nslowest (us; holder: what held the lock when the call came, for how long by then)\n";
    foreach (array_slice($recs, 0, $slowest) as $r) {
        $p = parts($r);
        printf("%9s  %-34s %s%s\n", $us($r['lat']), klass($r),
            implode(' ', array_map(static fn ($k, $v) => "$k " . sprintf('%.1f', $v / 1000), array_keys($p), $p)),
            !empty($r['contended']) ? sprintf('  holder %s %s us', ['other', 'save', 'clean', 'save'][$r['holder_kind']] ?? '?',
                $us($r['holder_acq_ns'])) : '');
    }
    if (!empty($b['stats'])) {
        echo "\nlock holds and waits, calls per log2(ns) bucket, all clients\n";
        foreach (['save', 'savearr', 'clean', 'other'] as $kind) {
            foreach (['hold', 'wait'] as $what) {
                $row = [];
                foreach ($b['stats'] as $k => $v) {
                    if (preg_match("/^trace_{$what}_{$kind}_(\\d+)$/", $k, $m)) {
                        $row[(int)$m[1]] = $v;
                    }
                }
                ksort($row);
                if ($row) {
                    printf("  %-7s %-4s %s\n", $kind, $what, implode(' ', array_map(static fn ($k, $v) => "2^$k:$v", array_keys($row), $row)));
                }
            }
        }
    }
    if (!empty($b['reads'])) {
        $rt = array_sum($b['reads']);
        $slow = array_sum(array_filter($b['reads'], static fn ($k) => $k >= 117, ARRAY_FILTER_USE_KEY));
        printf("\nreads: %.0f ms in all, %.0f ms (%.0f %%) in reads over 128 us\n", $rt / 1e6, $slow / 1e6, 100 * $slow / $rt);
    }
    echo "\n";
}
