<?php

declare(strict_types=1);

namespace TagCacheBench;

/** Medians, ratios, and the text / JSON / CSV / PNG outputs. */
final class Report
{
    public static function median(array $xs): ?float
    {
        $xs = array_values(array_filter($xs, static fn ($x) => $x !== null));
        if (!$xs) {
            return null;
        }
        sort($xs);
        $n = count($xs);
        return $n % 2 ? (float)$xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
    }

    public static function num(?float $x, bool $compact = false): string
    {
        if ($x === null) {
            return 'n/a';
        }
        if ($compact) {
            foreach ([[1e6, 'M'], [1e3, 'k']] as [$d, $u]) {
                if (abs($x) >= $d) {
                    $v = $x / $d;
                    return ($v >= 100 ? number_format($v, 0) : ($v >= 10 ? number_format($v, 1) : number_format($v, 2))) . $u;
                }
            }
        }
        return abs($x) >= 100 ? number_format($x, 0) : number_format($x, 2);
    }

    /** Group the ops results by mode and backend and take medians over runs. */
    public static function summarize(array $ops): array
    {
        $groups = [];
        foreach ($ops as $r) {
            $groups[$r['mode']][$r['backend']][] = $r;
        }
        $out = [];
        foreach ($groups as $mode => $byBackend) {
            foreach ($byBackend as $backend => $runs) {
                $ok = array_values(array_filter($runs, static fn ($r) => $r['status'] === 'ok'));
                $row = [
                    'mode' => $mode, 'backend' => $backend, 'label' => $runs[0]['label'],
                    'runs' => count($runs), 'runs_ok' => count($ok),
                    'status' => $ok ? 'ok' : $runs[0]['status'],
                    'reason' => $ok ? null : ($runs[0]['reason'] ?? null),
                    'tags' => $runs[0]['tags'],
                ];
                foreach (['reads', 'writes', 'cleans'] as $k) {
                    $vals = array_map(static fn ($r) => $r['sum'][$k], $ok);
                    $row[$k] = ['median' => self::median($vals), 'min' => $vals && $vals[0] !== null ? min($vals) : null,
                        'max' => $vals && $vals[0] !== null ? max($vals) : null];
                }
                $row['ops_per_wall_s'] = self::median(array_map(static fn ($r) => $r['sum']['ops_per_wall_s'], $ok));
                $row['hit_rate'] = self::median(array_map(static fn ($r) => $r['sum']['hit_rate'], $ok));
                $row['load_seconds'] = self::median(array_map(static fn ($r) => $r['load']['seconds'] ?? null, $ok));
                $row['bytes_per_record'] = self::median(array_map(static fn ($r) => $r['load']['footprint']['bytes_per_record'] ?? null, $ok));
                $row['footprint_how'] = null;
                foreach ($ok as $r) {
                    $row['footprint_how'] ??= $r['load']['footprint']['how'] ?? null;
                }
                $row['warnings'] = array_values(array_unique(array_merge(...array_map(static fn ($r) => $r['warnings'] ?? [], $runs))));
                // The run whose reads sum is the median one: its per-client rows are printed.
                if ($ok) {
                    usort($ok, static fn ($a, $b) => $a['sum']['reads'] <=> $b['sum']['reads']);
                    $row['median_run'] = $ok[intdiv(count($ok) - 1, 2)]['run'];
                }
                $out[] = $row;
            }
        }
        return $out;
    }

    /** tagcache / peer per run (same run, same mode), median over runs. */
    public static function ratios(array $ops): array
    {
        $by = [];
        foreach ($ops as $r) {
            if ($r['status'] === 'ok') {
                $by[$r['mode']][$r['run']][$r['backend']] = $r;
            }
        }
        $defs = Backends::all();
        $acc = [];
        foreach ($by as $mode => $runs) {
            foreach ($runs as $run => $rows) {
                foreach ($rows as $t => $tr) {
                    if ($defs[$t]['group'] !== 'tagcache') {
                        continue;
                    }
                    foreach ($rows as $p => $pr) {
                        if ($p === $t) {
                            continue;
                        }
                        foreach (['reads', 'writes', 'cleans'] as $k) {
                            $a = $tr['sum'][$k];
                            $b = $pr['sum'][$k];
                            $acc[$mode][$t][$p][$k][] = ($a !== null && $b) ? $a / $b : null;
                        }
                    }
                }
            }
        }
        $out = [];
        foreach ($acc as $mode => $ts) {
            foreach ($ts as $t => $ps) {
                foreach ($ps as $p => $ks) {
                    $row = ['mode' => $mode, 'tagcache' => $t, 'peer' => $p, 'runs' => count($ks['reads'])];
                    foreach ($ks as $k => $vals) {
                        $row[$k] = self::median($vals);
                    }
                    $out[] = $row;
                }
            }
        }
        return $out;
    }

    /** A markdown-style table; columns in $left are left-aligned, the others right-aligned. */
    private static function table(array $head, array $rows, array $left = [0]): string
    {
        $w = array_map('strlen', $head);
        foreach ($rows as $r) {
            foreach (array_values($r) as $i => $c) {
                $w[$i] = max($w[$i] ?? 0, strlen((string)$c));
            }
        }
        $line = static function (array $cells) use ($w, $left): string {
            $out = [];
            foreach (array_values($cells) as $i => $c) {
                $out[] = str_pad((string)$c, $w[$i], ' ', in_array($i, $left, true) ? STR_PAD_RIGHT : STR_PAD_LEFT);
            }
            return '| ' . implode(' | ', $out) . " |\n";
        };
        $s = $line($head);
        $s .= '|' . implode('|', array_map(static fn ($n) => str_repeat('-', $n + 2), $w)) . "|\n";
        foreach ($rows as $r) {
            $s .= $line($r);
        }
        return $s;
    }

    /** The published per-client table of one run. */
    public static function clientTable(array $r): string
    {
        $s = "         |      reads|     writes|     cleans\n";
        $s .= "---------------------------------------------\n";
        foreach ($r['clients'] as $c) {
            $s .= sprintf('Client %2d', $c['client']);
            foreach (['read' => 'reads', 'write' => 'writes', 'clean' => 'cleans'] as $op => $k) {
                if ($k === 'cleans' && !$r['tags']) {
                    $s .= sprintf('|%11s', 'n/a');
                    continue;
                }
                $n = $c[$k] ?? 0;
                $ns = $c[$op . '_ns'] ?? 0;
                $s .= sprintf('|%11.2f', $ns > 0 ? $n / ($ns / 1e9) : 0);
            }
            $s .= "\n";
        }
        $s .= "---------------------------------------------\n";
        $s .= 'ops/sec  ';
        foreach (['reads', 'writes', 'cleans'] as $k) {
            $v = $r['sum'][$k];
            $s .= $v === null ? sprintf('|%11s', 'n/a') : sprintf('|%11.2f', $v);
        }
        return $s . "\n";
    }

    public static function text(array $res): string
    {
        $m = $res['meta'];
        $s = "tagcache benchmark: the magento-cache-benchmark workload (BENCHMARK.md)\n";
        $s .= sprintf(
            "%s; PHP %s; %d CPUs (%s); %s\n",
            $m['date'],
            $m['php'],
            $m['cpus'],
            $m['cpu_model'],
            $m['tagcache_version'] ? "tagcache {$m['tagcache_version']}" : 'tagcache not loaded'
        );
        $d = $m['data'];
        $s .= sprintf(
            "data: %d records (%s B values, mean %s, %.1f MB), %d tags, %.2f tags/record, seed %d; %d clients x %d ops; %d run(s), medians\n",
            $d['records'],
            "{$d['smallest_value']}..{$d['largest_value']}",
            $d['average_value'],
            $d['total_value_bytes'] / 1048576,
            $d['tags'],
            $d['average_tags_per_record'],
            $m['seed'],
            $m['clients'],
            $m['ops_per_client'],
            $m['runs']
        );
        $s .= "calls: every backend through the same Magento-like frontend (prefix + upper-case, MAGE tag, write_control, clean = matchingAnyTag)\n";
        foreach ($m['modes'] as $mode) {
            $s .= 'mode ' . Runner::modeDescription($mode) . "\n";
        }
        foreach ($m['notes'] as $n) {
            $s .= "note: $n\n";
        }
        $pages = [];
        foreach ($res['ops'] ?? [] as $o) {
            foreach ($o['clients'] ?? [] as $c) {
                if (isset($c['huge_pages'])) {
                    $w = [1 => 'yes', 0 => 'no (4 KB pages)'][$c['huge_pages']] ?? 'not tried';
                    $pages[$o['backend']] = $o['backend'] . ' ' . $w;
                    break;
                }
            }
        }
        if ($pages) {
            $s .= 'note: segments in 2 MB pages (stats huge_pages): ' . implode(', ', $pages) . "\n";
        }

        $summary = $res['summary'];
        if ($res['ops']) {
            $latRows = $cpuRows = $schedRows = [];
            foreach ($summary as $row) {
                $s .= "\n== {$row['label']} [{$row['backend']}] | mode {$row['mode']} | ";
                if ($row['status'] !== 'ok') {
                    $s .= strtoupper($row['status']) . ": {$row['reason']}\n";
                    continue;
                }
                $run = null;
                foreach ($res['ops'] as $r) {
                    if ($r['mode'] === $row['mode'] && $r['backend'] === $row['backend'] && $r['run'] === $row['median_run']) {
                        $run = $r;
                    }
                }
                $s .= "run {$run['run']} of {$row['runs']} (the median by reads) ==\n";
                $l = $run['load'];
                $fp = $l['footprint']['bytes_per_record'] ?? null;
                $s .= sprintf(
                    "Loaded %d cache records in %.3f seconds (%.3f s with reading the data file)%s\n",
                    $l['records'],
                    $l['seconds'],
                    $l['wall_seconds'],
                    $fp !== null ? sprintf('; %s B/record (%s)', number_format($fp, 0), $l['footprint']['how']) : ''
                );
                $s .= self::clientTable($run);
                $s .= sprintf(
                    "median of %d: reads %s (%s..%s), writes %s (%s..%s), cleans %s; hit rate %.1f %%; wall %.2f s\n",
                    $row['runs_ok'],
                    self::num($row['reads']['median']),
                    self::num($row['reads']['min'], true),
                    self::num($row['reads']['max'], true),
                    self::num($row['writes']['median']),
                    self::num($row['writes']['min'], true),
                    self::num($row['writes']['max'], true),
                    $row['cleans']['median'] === null ? 'n/a' : self::num($row['cleans']['median']) . ' (' . self::num($row['cleans']['min'], true) . '..' . self::num($row['cleans']['max'], true) . ')',
                    100 * ($row['hit_rate'] ?? 0),
                    $run['wall_seconds']
                );
                foreach ($row['warnings'] as $w) {
                    $s .= "warning: $w\n";
                }
                $lat = $run['sum']['latency'] ?? [];
                if ($lat) {
                    $us = static fn ($d, $k) => $d === null ? '' : number_format($d[$k] / 1000, $d[$k] < 100000 ? 1 : 0);
                    $w = $lat['write'] ?? null;
                    $c = $lat['clean'] ?? null;
                    $latRows[] = [$row['mode'], $row['label'], $us($w, 'p50_ns'), $us($w, 'p99_ns'),
                        $w === null ? '' : sprintf('%.0f %%', 100 * $w['slowest_5pct_share']),
                        $us($c, 'p50_ns'), $us($c, 'p90_ns'), $us($c, 'p99_ns'), $us($c, 'mean_ns'),
                        $c === null ? 'n/a' : sprintf('%.0f %%', 100 * $c['slowest_5pct_share'])];
                }
                if (($cpu = self::cpuRow($run)) !== null) {
                    $cpuRows[] = array_merge([$row['mode'], $row['label']], $cpu);
                }
                if (($sr = self::schedRow($run)) !== null) {
                    $schedRows[] = array_merge([$row['mode'], $row['label']], $sr);
                }
            }

            $s .= "\nSummary: ops/s summed over {$m['clients']} clients, median of {$m['runs']} run(s) [min..max]\n";
            $rows = [];
            foreach ($summary as $row) {
                $ok = $row['status'] === 'ok';
                $rng = static fn ($k) => $ok && $row[$k]['median'] !== null
                    ? self::num($row[$k]['median'], true) . ' [' . self::num($row[$k]['min'], true) . '..' . self::num($row[$k]['max'], true) . ']'
                    : ($ok ? 'n/a' : '');
                $rows[] = [
                    $row['mode'], $row['label'], $rng('reads'), $rng('writes'), $rng('cleans'),
                    $ok && $row['load_seconds'] !== null ? sprintf('%.3f', $row['load_seconds']) : '',
                    $ok && $row['bytes_per_record'] !== null ? number_format($row['bytes_per_record'], 0) : '',
                    $ok && $row['hit_rate'] !== null ? sprintf('%.1f', 100 * $row['hit_rate']) : '',
                    $ok ? 'ok' . ($row['warnings'] ? ' (warnings)' : '') : $row['status'] . ': ' . $row['reason'],
                ];
            }
            $s .= self::table(['mode', 'backend', 'reads/s', 'writes/s', 'cleans/s', 'load s', 'B/record', 'hit %', 'status'], $rows, [0, 1, 8]);
            if ($latRows) {
                $s .= "\nWrites and cleans call by call (us inside each call, all clients of the median run): the columns above are means, "
                    . "and \"slowest 5 %\" is the share of all the time the slowest 5 % of the calls took (5 % if every call cost the same)\n";
                $s .= self::table(['mode', 'backend', 'write p50', 'write p99', 'slowest 5 %', 'clean p50', 'clean p90', 'clean p99',
                    'clean mean', 'slowest 5 %'], $latRows, [0, 1]);
            }
            if ($schedRows) {
                $s .= "\nWhere a timed write's and clean's time goes, stores with a server (us per call, mean over all clients of the "
                    . "median run): /proc/self/schedstat read before and after each call, less the same two readings with nothing "
                    . "between them (\"readings\", taken right after each call), split into on a CPU, runnable but waiting for a CPU "
                    . "(the run queue), and the rest, asleep (the round trips). More runnable processes than CPUs make the run queue; "
                    . "a store whose readers never sleep keeps it long for its writers\n";
                $s .= self::table(['mode', 'backend', 'write', 'on a CPU', 'run queue', 'asleep', 'readings', 'clean', 'on a CPU',
                    'run queue', 'asleep', 'readings'],
                    $schedRows, [0, 1]);
            }
            if ($cpuRows) {
                $s .= "\nWhere the CPU goes in the ops phase (median run; us per op, an op being a read, write or clean of the lists, "
                    . "refills included in the cost but not counted as ops): the clients' user and kernel time (getrusage), "
                    . "the server's own (redis-server INFO cpu, memcached rusage), and the server commands that took most "
                    . "(calls per op, us per call; a script's inner commands are counted in it and again on their own)\n";
                $s .= self::table(['mode', 'backend', 'ops', 'clients user', 'clients sys', 'server', 'wall per op x clients',
                    'server commands'], $cpuRows, [0, 1, 7]);
            }

            if ($res['ratios']) {
                $s .= "\nRatios in the same run: tagcache / peer, median over runs (> 1: tagcache faster)\n";
                $rows = [];
                $labels = array_map(static fn ($d) => $d['label'], Backends::all());
                foreach ($res['ratios'] as $r) {
                    $f = static fn ($x) => $x === null ? 'n/a' : sprintf('%.2fx', $x);
                    $rows[] = [$r['mode'], $labels[$r['tagcache']], $labels[$r['peer']], $f($r['reads']), $f($r['writes']), $f($r['cleans'])];
                }
                $s .= self::table(['mode', 'tagcache', 'peer', 'reads', 'writes', 'cleans'], $rows, [0, 1, 2]);
            }
        }

        if ($res['latency']) {
            $s .= "\nSingle-process latency, ns/op, median of runs (through the frontend unless said; clean 1 tag: a tag of its full size in a full store)\n";
            $rows = [];
            foreach ($res['latency'] as $b => $l) {
                if (isset($l['status'])) {
                    $rows[] = [$l['label'], '', '', '', '', '', '', $l['status'] . ': ' . $l['reason']];
                    continue;
                }
                $md = $l['median'];
                $f = static fn ($k) => $md[$k] === null ? 'n/a' : number_format($md[$k], 0);
                $rows[] = [$l['label'], $f('load_hit'), $f('load_hit_direct'), $f('load_miss'), $f('save_500b'), $f('clean_1tag'),
                    number_format($md['records'] ?? 0), $l['failures'] ? 'failures: ' . json_encode($l['failures']) : 'ok'];
            }
            $s .= self::table(['backend', 'load hit', 'hit, adapter only', 'load miss', 'save 500 B', 'clean 1 tag', 'records', 'status'], $rows, [0, 7]);
        }

        if ($res['scaling']) {
            $sc = $res['scaling'];
            $s .= "\nReads/s by number of clients (mode fork, {$sc['ops']} ops per client, median of runs; this machine has {$m['cpus']} CPUs: "
                . "past {$m['cpus']} clients processes share cores). Sum of per-client read rates / all ops over wall time\n";
            $rows = [];
            foreach ($sc['backends'] as $b => $byN) {
                $row = [Backends::all()[$b]['label']];
                foreach ($sc['clients'] as $n) {
                    $x = $byN[$n] ?? null;
                    $row[] = $x === null ? '' : (isset($x['status']) ? $x['status'] : self::num($x['reads'], true) . ' / ' . self::num($x['ops_per_wall_s'], true));
                }
                $rows[] = $row;
            }
            $s .= self::table(array_merge(['backend'], array_map(static fn ($n) => "$n client" . ($n > 1 ? 's' : ''), $sc['clients'])), $rows);
        }

        if ($res['growth']) {
            $s .= "\nGrowth: load and clean-by-tag time by record count (single process; tags stay 2,000, so ids per tag grow)\n";
            $rows = [];
            foreach ($res['growth'] as $b => $bySize) {
                foreach ($bySize as $n => $g) {
                    if (isset($g['status'])) {
                        $rows[] = [Backends::all()[$b]['label'], number_format((int)$n), '', '', '', '', '', $g['status'] . ': ' . $g['reason']];
                        continue;
                    }
                    $rows[] = [
                        Backends::all()[$b]['label'], number_format((int)$n),
                        sprintf('%.2f', $g['load_seconds']) . ($g['complete'] ? '' : ' (partial: ' . number_format($g['loaded']) . ')'),
                        sprintf('%.1f', $g['save_us']),
                        isset($g['clean_ms_median']) ? sprintf('%.3f', $g['clean_ms_median']) : 'n/a',
                        isset($g['ids_per_tag']) ? number_format($g['ids_per_tag'], 0) : '',
                        isset($g['footprint']['bytes_per_record']) ? number_format($g['footprint']['bytes_per_record'], 0) : '',
                        ($g['failures'] ? "{$g['failures']} saves failed; " : '') . sprintf('hits %.0f %%', 100 * $g['hit_rate_200']),
                    ];
                }
            }
            $s .= self::table(['backend', 'records', 'load s', 'us/save', 'clean 1 tag ms', 'ids/tag', 'B/record', 'note'], $rows, [0, 7]);
        }
        return $s;
    }

    /**
     * [write us, on a CPU, run queue, asleep, the readings alone, the same
     * five for cleans] per call, or null without schedstat figures. The
     * split is of the window of the two readings around the call, less what
     * the same two readings with nothing between them show (taken right
     * after each call); asleep is what is left of it; each at least 0.
     */
    private static function schedRow(array $run): ?array
    {
        $t = ['write' => [0, 0, 0, 0, 0, 0], 'clean' => [0, 0, 0, 0, 0, 0]];
        if (!isset($run['server'])) {
            return null;   // a local store's calls never sleep: no up-to-date CPU sum inside them (Client::sched())
        }
        foreach ($run['clients'] ?? [] as $c) {
            $sc = $c['sched'] ?? null;
            if ($sc === null) {
                return null;
            }
            foreach (['write' => 'writes', 'clean' => 'cleans'] as $k => $n) {
                if (!isset($sc[$k . '_window_ns'], $sc[$k . '_empty_ns'])) {
                    return null;
                }
                $e = $sc[$k . '_empty_ns'];
                $t[$k][0] += $c[$n];
                $t[$k][1] += $c[$k . '_ns'];
                $t[$k][2] += $sc[$k . '_cpu_ns'] - $e[0];
                $t[$k][3] += $sc[$k . '_runq_ns'] - $e[1];
                $t[$k][4] += $sc[$k . '_window_ns'] - $e[2];
                $t[$k][5] += $e[2];
            }
        }
        $out = [];
        foreach ($t as [$n, $wall, $cpu, $runq, $win, $empty]) {
            if ($n === 0) {
                array_push($out, 'n/a', '', '', '', '');
                continue;
            }
            $us = static fn (float $ns) => number_format(max(0, $ns) / 1000 / $n, 1);
            array_push($out, $us($wall), $us($cpu), $us($runq), $us($win - max(0, $cpu) - max(0, $runq)), $us($empty));
        }
        return $out;
    }

    /** The CPU split of one run (see text()): null when the clients did not report their CPU */
    private static function cpuRow(array $run): ?array
    {
        $ops = 0;
        $u = $y = 0;
        $wall = 0.0;
        foreach ($run['clients'] ?? [] as $c) {
            if (!isset($c['cpu_ns'])) {
                return null;
            }
            $ops += $c['reads'] + $c['writes'] + $c['cleans'];
            $u += $c['cpu_ns']['user'];
            $y += $c['cpu_ns']['sys'];
            $wall += $c['wall_ns'];
        }
        if ($ops === 0) {
            return null;
        }
        $f = static fn (float $ns) => number_format($ns / 1000 / $ops, 2);
        $srv = $run['server'] ?? null;
        $cmds = [];
        foreach (array_slice($srv['commands'] ?? [], 0, 4, true) as $k => [$n, $us]) {
            // memcached counts its commands but does not time them
            $cmds[] = $us > 0 ? sprintf('%s %.3f x %.2f', $k, $n / $ops, $us / $n) : sprintf('%s %.3f', $k, $n / $ops);
        }
        return [number_format($ops), $f($u), $f($y),
            $srv === null ? '' : $f(($srv['user_s'] + $srv['sys_s']) * 1e9) . ' (' . $srv['server'] . ')',
            $f($wall), implode('; ', $cmds)];
    }

    public static function writeCsv(string $file, array $head, array $rows): void
    {
        $fp = fopen($file, 'w');
        fputcsv($fp, $head);
        foreach ($rows as $r) {
            fputcsv($fp, $r);
        }
        fclose($fp);
    }

    /** JSON, CSV files, the text report and the chart into $dir. Returns written paths. */
    public static function write(string $dir, array $res, string $text): array
    {
        @mkdir($dir, 0777, true);
        $files = [];
        file_put_contents($files[] = "$dir/results.json", json_encode($res, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n");
        file_put_contents($files[] = "$dir/report.txt", $text);

        $rows = [];
        foreach ($res['ops'] as $r) {
            foreach ($r['clients'] ?? [] as $c) {
                $rate = static fn ($n, $ns) => $ns > 0 ? round($n / ($ns / 1e9), 2) : '';
                $rows[] = [$r['mode'], $r['backend'], $r['run'], $c['client'], $c['reads'] ?? 0, $rate($c['reads'] ?? 0, $c['read_ns'] ?? 0),
                    $c['writes'] ?? 0, $rate($c['writes'] ?? 0, $c['write_ns'] ?? 0),
                    $r['tags'] ? ($c['cleans'] ?? 0) : 'n/a', $r['tags'] ? $rate($c['cleans'] ?? 0, $c['clean_ns'] ?? 0) : 'n/a',
                    $c['read_misses'] ?? 0, $c['write_failures'] ?? 0, $r['load']['seconds'] ?? '', $r['status']];
            }
            if (!isset($r['clients'])) {
                $rows[] = [$r['mode'], $r['backend'], $r['run'], '', '', '', '', '', '', '', '', '', '', $r['status'] . ': ' . ($r['reason'] ?? '')];
            }
        }
        self::writeCsv($files[] = "$dir/ops.csv", ['mode', 'backend', 'run', 'client', 'reads', 'reads_per_s', 'writes', 'writes_per_s',
            'cleans', 'cleans_per_s', 'read_misses', 'write_failures', 'load_seconds', 'status'], $rows);

        $rows = [];
        foreach ($res['summary'] as $r) {
            $rows[] = [$r['mode'], $r['backend'], $r['label'], $r['runs_ok'], $r['reads']['median'], $r['reads']['min'], $r['reads']['max'],
                $r['writes']['median'], $r['cleans']['median'] ?? 'n/a', $r['load_seconds'], $r['bytes_per_record'], $r['status'], $r['reason']];
        }
        self::writeCsv($files[] = "$dir/summary.csv", ['mode', 'backend', 'label', 'runs_ok', 'reads_per_s_median', 'reads_min', 'reads_max',
            'writes_per_s_median', 'cleans_per_s_median', 'load_seconds', 'bytes_per_record', 'status', 'reason'], $rows);

        if ($res['ratios']) {
            self::writeCsv($files[] = "$dir/ratios.csv", ['mode', 'tagcache', 'peer', 'runs', 'reads', 'writes', 'cleans'],
                array_map(static fn ($r) => [$r['mode'], $r['tagcache'], $r['peer'], $r['runs'], $r['reads'], $r['writes'], $r['cleans'] ?? ''], $res['ratios']));
        }
        if ($res['latency']) {
            $rows = [];
            foreach ($res['latency'] as $b => $l) {
                $md = $l['median'] ?? [];
                $rows[] = [$b, $md['load_hit'] ?? '', $md['load_hit_direct'] ?? '', $md['load_miss'] ?? '', $md['save_500b'] ?? '',
                    $md['clean_1tag'] ?? 'n/a', $l['status'] ?? 'ok'];
            }
            self::writeCsv($files[] = "$dir/latency.csv", ['backend', 'load_hit_ns', 'load_hit_direct_ns', 'load_miss_ns', 'save_500b_ns', 'clean_1tag_ns', 'status'], $rows);
        }
        if ($res['scaling']) {
            $rows = [];
            foreach ($res['scaling']['backends'] as $b => $byN) {
                foreach ($byN as $n => $x) {
                    $rows[] = [$b, $n, $x['reads'] ?? '', $x['ops_per_wall_s'] ?? '', $x['status'] ?? 'ok'];
                }
            }
            self::writeCsv($files[] = "$dir/scaling.csv", ['backend', 'clients', 'reads_per_s_sum', 'ops_per_wall_s', 'status'], $rows);
        }
        if ($res['growth']) {
            $rows = [];
            foreach ($res['growth'] as $b => $bySize) {
                foreach ($bySize as $n => $g) {
                    $rows[] = [$b, $n, $g['loaded'] ?? '', $g['load_seconds'] ?? '', $g['save_us'] ?? '', $g['clean_ms_median'] ?? '',
                        $g['ids_per_tag'] ?? '', $g['footprint']['bytes_per_record'] ?? '', $g['status'] ?? 'ok'];
                }
            }
            self::writeCsv($files[] = "$dir/growth.csv", ['backend', 'records', 'loaded', 'load_seconds', 'save_us', 'clean_ms_median',
                'ids_per_tag', 'bytes_per_record', 'status'], $rows);
        }
        foreach (array_merge(glob("$dir/chart*.png") ?: [], glob("$dir/ratios-*.png") ?: []) as $old) {
            @unlink($old);   // a chart of an earlier run must not pass for this one's
        }
        if (self::chart($dir, $res) !== null) {
            array_push($files, ...glob("$dir/chart.png"), ...(glob("$dir/ratios-*.png") ?: []));
        } else {
            fwrite(STDERR, self::$chartNote . "\n");
        }
        return $files;
    }

    /** Why chart() wrote no chart, or null when it did (bench.php prints it). */
    public static ?string $chartNote = null;

    /** One colour per backend, the same in every chart of a run (a palette that stays apart in print). */
    private const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
        '#bcbd22', '#17becf', '#393b79', '#ad494a', '#637939', '#843c39', '#7b4173', '#3182bd'];

    /**
     * chart.png: reads, writes and cleans per second side by side, linear
     * scale, one colour per backend (legend), grouped by process mode, the
     * value over each bar and "n/a" where a backend has no figure.
     * ratios-MODE.png: tagcache / peer for every pair of the same run, linear
     * scale with a line at 1 (as fast), value labels ("12.3x"), "n/a" where
     * one side has no figure. Returns the first file written, or null with
     * self::$chartNote saying why (gnuplot missing, no successful row, a
     * gnuplot error: chart.err).
     */
    public static function chart(string $dir, array $res): ?string
    {
        self::$chartNote = null;
        $gnuplot = Php::which('gnuplot');
        if (!$gnuplot) {
            self::$chartNote = 'no chart: gnuplot is not installed (Debian: apt-get install gnuplot-nox; scripts/setup.sh installs it); '
                . 'the figures are in summary.csv and ratios.csv';
            return null;
        }
        $ok = array_values(array_filter($res['summary'], static fn ($r) => $r['status'] === 'ok'));
        if (!$ok) {
            self::$chartNote = 'no chart: no backend finished a run';
            return null;
        }
        $modes = array_values(array_unique(array_map(static fn ($r) => $r['mode'], $ok)));
        $defs = Backends::all();
        $labels = [];
        foreach ($res['summary'] as $r) {
            $labels[$r['backend']] = $r['label'];
        }
        $colour = [];
        foreach (array_keys($labels) as $i => $b) {
            $colour[$b] = self::PALETTE[$i % count(self::PALETTE)];
        }
        $title = sprintf('%d clients, median of %d run(s), %s', $res['meta']['clients'] ?? 0, $res['meta']['runs'] ?? 0, $res['meta']['date'] ?? '');

        // absolute figures: groups = modes, series = backends that ran ok somewhere
        $series = [];
        foreach ($ok as $r) {
            $series[$r['backend']] = $labels[$r['backend']];
        }
        $panels = [];
        foreach (['reads' => 'reads/s', 'writes' => 'writes/s', 'cleans' => 'cleans/s (n/a: the backend has no tags)'] as $k => $yl) {
            $groups = [];
            foreach ($modes as $m) {
                foreach ($series as $b => $_) {
                    $groups[$m][$b] = null;
                }
            }
            foreach ($ok as $r) {
                $groups[$r['mode']][$r['backend']] = $r[$k]['median'];
            }
            $panels[] = ['ylabel' => $yl . ', linear scale', 'groups' => $groups, 'fmt' => static fn ($v) => self::num($v, true), 'ref' => null];
        }
        $first = self::bars($gnuplot, "$dir/chart", 'tagcache benchmark: operations per second, higher is better (' . $title . ')',
            $panels, $series, $colour);
        if ($first === null) {
            return null;
        }

        // ratios: per mode, groups = tagcache backends, series = peers
        foreach ($modes as $m) {
            // against the peers only (ratios.csv also has tagcache against tagcache)
            $rows = array_values(array_filter($res['ratios'] ?? [], static fn ($r) => $r['mode'] === $m
                && ($defs[$r['peer']]['group'] ?? 'peer') !== 'tagcache'));
            if (!$rows) {
                continue;
            }
            $peers = [];
            foreach ($rows as $r) {
                $peers[$r['peer']] = $labels[$r['peer']] ?? $r['peer'];
            }
            $panels = [];
            foreach (['reads', 'writes', 'cleans'] as $k) {
                $groups = [];
                foreach ($rows as $r) {
                    $groups[$labels[$r['tagcache']] ?? $r['tagcache']][$r['peer']] = $r[$k] ?? null;
                }
                $panels[] = ['ylabel' => "$k: tagcache / peer (log scale, x10 per step; bars start at 1 = as fast)", 'groups' => $groups,
                    'fmt' => static fn ($v) => ($v >= 10 ? number_format($v, 0) : number_format($v, 2)) . 'x', 'ref' => 1.0, 'log' => true];
            }
            self::bars($gnuplot, "$dir/ratios-$m", "tagcache against each peer, same run, mode $m ($title)", $panels, $peers, $colour);
        }
        return $first;
    }

    /**
     * Writes $base.png: one panel per $panels entry, bars at computed
     * positions (groups along x, one bar per series inside a group, coloured
     * by series), a legend of the series, the value over each bar, "n/a"
     * where the value is null, and an optional reference line.
     */
    private static function bars(string $gnuplot, string $base, string $title, array $panels, array $series, array $colour): ?string
    {
        $q = static fn (string $s) => "'" . str_replace("'", "''", $s) . "'";
        $n = max(1, count($series));
        $w = 0.8 / $n;
        $plots = '';
        $ngroups = 1;
        foreach ($panels as $pi => $p) {
            $bars = $na = '';
            $tics = [];
            $max = 0.0;
            $min = INF;
            $log = !empty($p['log']);
            $gi = 0;
            foreach ($p['groups'] as $g => $vals) {
                $tics[] = $q((string)$g) . ' ' . $gi;
                $si = 0;
                foreach ($series as $sk => $_) {
                    $x = $gi - 0.4 + $w * ($si + 0.5);
                    $v = $vals[$sk] ?? null;
                    $c = hexdec(substr($colour[$sk] ?? '#888888', 1));
                    if ($v === null || ($log && $v <= 0)) {
                        $na .= sprintf("%.4f %g \"n/a\"\n", $x, $log ? 1 : 0);
                    } else {
                        // x, value, width, colour, label, and the box's bottom and top (log: from 1)
                        $lo = $log ? min(1.0, (float)$v) : 0.0;
                        $hi = $log ? max(1.0, (float)$v) : (float)$v;
                        $bars .= sprintf("%.4f %.6g %.4f %d \"%s\" %.6g %.6g\n", $x, $v, $w * 0.92, $c, str_replace('"', "'", ($p['fmt'])($v)), $lo, $hi);
                        $max = max($max, (float)$v);
                        $min = min($min, (float)$v);
                    }
                    $si++;
                }
                $gi++;
            }
            $ngroups = max($ngroups, $gi);
            // an empty file or a NaN label crashes gnuplot 5.4: a point outside the x range instead
            file_put_contents("$base-$pi-bars.dat", $bars === '' ? "-100 1 0 0 \"\" 1 1\n" : $bars);
            file_put_contents("$base-$pi-na.dat", $na === '' ? "-100 1 \"\"\n" : $na);
            if ($log) {
                // whole decades around every value and 1, so the steps read as x10
                $lo = 10 ** floor(log10(min($min === INF ? 1 : $min, 1) * 0.99));
                $hi = 10 ** ceil(log10(max($max, 1) * 1.5));
                $range = sprintf("set logscale y 10\nset yrange [%g:%g]\nset format y '%%gx'\n", $lo, $hi);
            } else {
                $range = sprintf("unset logscale y\nset yrange [0:%.6g]\nset format y '%%.1s%%c'\n", $max > 0 ? $max * 1.18 : 1);
            }
            // many bars per group: value labels upright would overlap
            $lab = $n > 6 ? "rotate by 90 left offset 0,0.4 font ',8'" : "offset 0,0.7 font ',8'";
            $plots .= 'set ylabel ' . $q($p['ylabel']) . "\n"
                . 'set xtics (' . implode(', ', $tics) . ")\n"
                . sprintf("set xrange [-0.6:%.1f]\n", $gi - 0.4) . $range
                . ($p['ref'] !== null ? sprintf("set arrow 1 from graph 0, first %g to graph 1, first %g nohead dt 2 lw 1.5 lc rgb '#444444' front\n", $p['ref'], $p['ref']) : "unset arrow 1\n")
                . 'plot ' . $q("$base-$pi-bars.dat") . " using 1:2:(\$1-\$3/2):(\$1+\$3/2):6:7:4 with boxxyerror fs solid 0.9 border -1 lc rgb variable notitle, \\\n"
                . '  ' . $q("$base-$pi-bars.dat") . " using 1:7:5 with labels $lab notitle, \\\n"
                . '  ' . $q("$base-$pi-na.dat") . " using 1:2:3 with labels $lab tc rgb '#b00000' notitle";
            // the legend: one empty plot per series, in its colour
            foreach ($series as $sk => $label) {
                $plots .= ", \\\n  NaN with boxes lc rgb " . $q($colour[$sk] ?? '#888888') . ' title ' . $q((string)$label);
            }
            $plots .= "\n";
        }
        $width = (int)max(1000, 240 + 26 * $n * $ngroups + 60 * $ngroups + 300);
        $height = 170 + 420 * count($panels);
        $script = "set terminal pngcairo noenhanced size $width,$height font 'sans,9'\n"
            . 'set output ' . $q("$base.png") . "\n"
            . "set style fill solid 0.9 border -1\nset grid ytics\n"
            . "set key outside right top vertical Left reverse samplen 1.5 spacing 1.1\n"
            . "set xtics scale 0 font ',9' noenhanced\nset tmargin 2\nset bmargin 3\n"
            . 'set multiplot layout ' . count($panels) . ',1 title ' . $q($title) . " font ',11'\n"
            . $plots . "unset multiplot\n";
        file_put_contents("$base.gp", $script);
        exec(escapeshellarg($gnuplot) . ' ' . escapeshellarg("$base.gp") . ' 2>&1', $out, $rc);
        if ($rc !== 0 || !is_file("$base.png")) {
            file_put_contents("$base.err", implode("\n", $out));
            self::$chartNote = "no chart: gnuplot failed (see $base.err)";
            return null;
        }
        return "$base.png";
    }
}
