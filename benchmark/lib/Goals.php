<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * The rows of issue 15's table (tagcache against the peer a shop would
 * switch from, per column) with their goals, read from the ratios of the
 * same run: one table that says per row and mode whether the goal is met.
 * A row whose backends did not both run says so.
 */
final class Goals
{
    /** [tagcache, peer, [column => goal ratio]] (a column without a goal: null, shown for reference). */
    public const ROWS = [
        ['tagcache-shm', 'apcu', ['reads' => 1.5, 'writes' => null]],
        ['tagcache-shm', 'zend-apc', ['reads' => 1.5, 'writes' => null]],
        ['tagcache-shm', 'cm-redis', ['cleans' => 10.0]],
        ['tagcache-file', 'cm-file', ['reads' => 10.0, 'writes' => null, 'cleans' => 100.0]],
        ['tagcache-redis', 'redis', ['reads' => 1.0]],
        ['tagcache-redis', 'cm-redis', ['reads' => 1.0, 'writes' => 1.5, 'cleans' => 1.5]],
        ['tagcache-memcached', 'memcached', ['reads' => 0.9, 'writes' => null]],
        ['tagcache-memcached', 'zend-libmemcached', ['reads' => 0.9, 'writes' => null]],
    ];

    /** Issue 10's Measure note: TwoLevel over Redis against the stores a multi-node shop has. */
    public const ROWS_TWOLEVEL = [
        ['tagcache-twolevel', 'cm-redis', ['reads' => 10.0, 'writes' => null, 'cleans' => null]],
        ['tagcache-twolevel', 'tagcache-redis', ['reads' => null, 'writes' => 1.0, 'cleans' => 1.0]],
        ['tagcache-twolevel', 'zend-twolevels-apcu-cmredis', ['reads' => 2.0, 'writes' => null, 'cleans' => null]],
        ['tagcache-twolevel', 'm2-remote-sync', ['reads' => 20.0, 'writes' => null, 'cleans' => null]],
        ['tagcache-twolevel', 'tagcache-shm', ['reads' => 0.6]],
    ];

    /** Every backend a row names, in the order of Backends::all(): what --goals runs. */
    public static function backends(): array
    {
        $want = [];
        foreach (array_merge(self::ROWS, self::ROWS_TWOLEVEL) as [$t, $p]) {
            $want[$t] = $want[$p] = true;
        }
        return array_values(array_filter(array_keys(Backends::all()), static fn ($b) => isset($want[$b])));
    }

    /** @return list<array{mode:string,tagcache:string,peer:string,column:string,goal:?float,ratio:?float,met:?bool}> */
    public static function evaluate(array $ratios, array $rows = self::ROWS): array
    {
        $by = [];
        $modes = [];
        foreach ($ratios as $r) {
            $by[$r['mode']][$r['tagcache']][$r['peer']] = $r;
            $modes[$r['mode']] = true;
        }
        $out = [];
        foreach (array_keys($modes ?: ['fork' => true]) as $mode) {
            foreach ($rows as [$t, $p, $cols]) {
                foreach ($cols as $k => $goal) {
                    $x = $by[$mode][$t][$p][$k] ?? null;
                    $out[] = ['mode' => $mode, 'tagcache' => $t, 'peer' => $p, 'column' => $k, 'goal' => $goal,
                        'ratio' => $x, 'met' => $goal === null || $x === null ? null : $x >= $goal,
                        'ran' => isset($by[$mode][$t][$p])];
                }
            }
        }
        return $out;
    }

    /** $summary (Report::summarize): a row that did not run says why. */
    public static function text(array $ratios, array $summary = []): string
    {
        $why = [];
        foreach ($summary as $r) {
            if ($r['status'] !== 'ok') {
                $why[$r['mode']][$r['backend']] = "{$r['backend']} {$r['status']}" . ($r['reason'] ? ": {$r['reason']}" : '');
            }
        }
        $s = self::table($ratios, self::ROWS, "Issue 15's rows", $why);
        $ran = array_filter($ratios, static fn ($r) => $r['tagcache'] === 'tagcache-twolevel');
        return $ran ? $s . self::table($ratios, self::ROWS_TWOLEVEL, "Issue 10's rows (TwoLevel)", $why) : $s;
    }

    private static function table(array $ratios, array $rows, string $title, array $why): string
    {
        $s = "\n$title: tagcache / peer in the same run, median over runs, against the goal\n";
        $s .= "| mode | tagcache / peer | column | ratio | goal | met |\n|---|---|---|---|---|---|\n";
        foreach (self::evaluate($ratios, $rows) as $g) {
            $s .= sprintf(
                "| %s | %s / %s | %s | %s | %s | %s |\n",
                $g['mode'],
                $g['tagcache'],
                $g['peer'],
                $g['column'],
                $g['ratio'] === null ? ($g['ran'] ? 'n/a'
                    : 'not run' . (($w = $why[$g['mode']][$g['peer']] ?? $why[$g['mode']][$g['tagcache']] ?? null) ? " ($w)" : ''))
                    : sprintf('%.2fx', $g['ratio']),
                $g['goal'] === null ? '' : sprintf('>= %.1f', $g['goal']),
                $g['met'] === null ? '' : ($g['met'] ? 'yes' : 'NO')
            );
        }
        return $s;
    }
}
