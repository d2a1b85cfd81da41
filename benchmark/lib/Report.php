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

        $summary = $res['summary'];
        if ($res['ops']) {
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
        $png = self::chart($dir, $res);
        if ($png) {
            $files[] = $png;
        }
        return $files;
    }

    /** Backends side by side: reads, writes, cleans (log scale), one bar per mode. */
    public static function chart(string $dir, array $res): ?string
    {
        $gnuplot = Php::which('gnuplot');
        $ok = array_values(array_filter($res['summary'], static fn ($r) => $r['status'] === 'ok'));
        if (!$gnuplot || !$ok) {
            return null;
        }
        $modes = array_values(array_unique(array_map(static fn ($r) => $r['mode'], $ok)));
        $backends = [];
        foreach ($ok as $r) {
            $backends[$r['backend']] = $r['label'];
        }
        $val = [];
        foreach ($ok as $r) {
            foreach (['reads', 'writes', 'cleans'] as $k) {
                $val[$k][$r['backend']][$r['mode']] = $r[$k]['median'];
            }
        }
        foreach (['reads', 'writes', 'cleans'] as $k) {
            $lines = '# backend ' . implode(' ', $modes) . "\n";
            foreach ($backends as $b => $label) {
                $lines .= '"' . str_replace(['"', '\\'], ["'", '\\\\'], $label) . '"';
                foreach ($modes as $mode) {
                    $v = $val[$k][$b][$mode] ?? null;
                    $lines .= ' ' . ($v ? sprintf('%.2f', $v) : '?');
                }
                $lines .= "\n";
            }
            file_put_contents("$dir/chart-$k.dat", $lines);
        }
        $title = sprintf('tagcache benchmark, %d clients, median of %d run(s), %s', $res['meta']['clients'], $res['meta']['runs'], $res['meta']['date']);
        $plots = '';
        foreach (['reads' => 'reads/s', 'writes' => 'writes/s', 'cleans' => 'cleans/s (n/a: no tags)'] as $k => $t) {
            $cols = [];
            foreach ($modes as $i => $mode) {
                $cols[] = sprintf("'%s/chart-%s.dat' using %d:xtic(1) title '%s'", $dir, $k, $i + 2, $mode);
            }
            $plots .= "set ylabel '$t'\nplot " . implode(', ', $cols) . "\n";
        }
        $width = max(900, 160 + 34 * count($backends) * max(1, count($modes)) + 20 * count($backends));
        $script = <<<GP
            set terminal pngcairo noenhanced size $width,1600 font 'sans,9'
            set output '$dir/chart.png'
            set datafile missing '?'
            set style data histograms
            set style histogram clustered gap 1
            set style fill solid 0.85 border -1
            set boxwidth 0.9
            set logscale y
            set format y '%.0s%c'
            set grid ytics
            set xtics rotate by -30 left
            set key top right
            set bmargin 9
            set rmargin 16
            set multiplot layout 3,1 title "$title"
            $plots
            unset multiplot
            GP;
        file_put_contents("$dir/chart.gp", $script);
        exec(escapeshellarg($gnuplot) . ' ' . escapeshellarg("$dir/chart.gp") . ' 2>&1', $out, $rc);
        if ($rc !== 0 || !is_file("$dir/chart.png")) {
            file_put_contents("$dir/chart.err", implode("\n", $out));
            return null;
        }
        return "$dir/chart.png";
    }
}
