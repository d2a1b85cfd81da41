<?php

declare(strict_types=1);

namespace TagCacheBench;

/** The single-process measurements: load phase, latency, growth, footprint. */
final class Measure
{
    public static function frontend(Context $ctx, string $backend): Frontend
    {
        $def = Backends::all()[$backend];
        if (($why = ($def['requires'])($ctx)) !== null) {
            throw new \RuntimeException("backend unavailable in this process: $why");
        }
        return new Frontend(($def['create'])($ctx));
    }

    /**
     * Flush, then save every record through the frontend. The time of the
     * save calls alone is "seconds"; "wall" includes reading the data file.
     */
    public static function load(Context $ctx, string $backend, Dataset $data): array
    {
        $fe = self::frontend($ctx, $backend);
        $fe->backend()->flush();
        $t0 = hrtime(true);
        $ns = 0;
        $n = 0;
        $fail = 0;
        $bytes = 0;
        foreach ($data->records() as $r) {
            $t = hrtime(true);
            $ok = $fe->save($r['data'], $r['key'], $r['tags'], $r['expires']);
            $ns += hrtime(true) - $t;
            $n++;
            $bytes += strlen($r['data']);
            if (!$ok) {
                $fail++;
            }
        }
        $wall = hrtime(true) - $t0;
        return [
            'records' => $n, 'failures' => $fail, 'value_bytes' => $bytes,
            'seconds' => $ns / 1e9, 'wall_seconds' => $wall / 1e9,
            'footprint' => self::footprint($fe, $n),
        ];
    }

    public static function footprint(Frontend $fe, int $records): ?array
    {
        try {
            $f = $fe->backend()->footprint();
        } catch (\Throwable $e) {
            return ['error' => $e->getMessage()];
        }
        if ($f === null) {
            return null;
        }
        $per = $f['entries'] ?? null;
        $per = $per ?: $records;
        $f['records'] = $records;
        $f['bytes_per_record'] = $per > 0 ? round($f['bytes'] / $per, 1) : null;
        return $f;
    }

    /**
     * ns/op, single process, through the frontend (the Magento path):
     * load hit, load miss, save of 500 B (with write_control), clean by one
     * tag; plus a hit with the adapter called directly, to show what the
     * frontend costs. Each loop stops after $maxOps or $budget seconds.
     *
     * "clean 1 tag" cleans a tag of typical size in a full store: each clean
     * (timed alone) is followed by an untimed re-save of the records it
     * removed, so the store never empties and every tag cleaned, in the
     * data set's order from a random start, still has all of its records
     * (mean ids_per_clean; 10,000 records x 7.5 tags / 2,000 tags: about
     * 37). Without that, a fast store cleaning all 2,000 tags in a row
     * measured ever emptier tags.
     */
    public static function latency(Context $ctx, string $backend, Dataset $data, int $maxOps, float $budget, ?int $maxRecords = null): array
    {
        $fe = self::frontend($ctx, $backend);
        $a = $fe->backend();
        $a->flush();
        $records = $data->allRecords();
        if ($maxRecords !== null) {
            $records = array_slice($records, 0, $maxRecords);
        }
        // Fill with the data set, but give slow stores (one file per entry
        // and per tag link) at most 10 s: hits then target what was loaded.
        $deadline = hrtime(true) + 10 * 1000000000;
        foreach ($records as $i => $r) {
            $fe->save($r['data'], $r['key'], $r['tags'], false);
            if (($i & 63) === 63 && hrtime(true) > $deadline) {
                $records = array_slice($records, 0, $i + 1);
                break;
            }
        }
        mt_srand(4242);
        $count = count($records);
        $ids = [];
        $missing = [];
        for ($i = 0; $i < $maxOps; $i++) {
            $ids[] = $records[mt_rand(0, $count - 1)]['key'];
            $missing[] = 'nosuchid' . $i;
        }
        $direct = array_map($fe->id(...), $ids);
        $out = [];
        $value = str_repeat('0123456789', 50);
        $tags = Dataset::tagList($data->params['tags']);
        $byTag = [];
        foreach ($records as $ri => $r) {
            foreach ($r['tags'] as $tg) {
                $byTag[$tg][] = $ri;
            }
        }
        $cleanStart = mt_rand(0, count($tags) - 1);
        $cleanNs = 0;
        $cleanIds = 0;
        // Plain loops (no closure per call): chunks of 100 calls, the clock
        // checked between chunks against the budget.
        foreach (['load_hit', 'load_hit_direct', 'load_miss', 'save_500b', 'clean_1tag'] as $what) {
            if ($what === 'clean_1tag' && !$a->supportsTags()) {
                $out[$what] = null;
                continue;
            }
            $max = $what === 'clean_1tag' ? min($maxOps, count($tags)) : $maxOps;
            $n = 0;
            $fails = 0;
            $t0 = hrtime(true);
            // cleans: 3 x the budget of wall time, the re-saves being untimed
            $limit = $t0 + (int)($budget * ($what === 'clean_1tag' ? 3 : 1) * 1e9);
            while ($n < $max) {
                $end = min($max, $n + ($what === 'clean_1tag' ? 5 : 100));
                switch ($what) {
                    case 'load_hit':
                        for (; $n < $end; $n++) {
                            if ($fe->load($ids[$n]) === false) {
                                $fails++;
                            }
                        }
                        break;
                    case 'load_hit_direct':
                        for (; $n < $end; $n++) {
                            if ($a->load($direct[$n]) === false) {
                                $fails++;
                            }
                        }
                        break;
                    case 'load_miss':
                        for (; $n < $end; $n++) {
                            if ($fe->load($missing[$n]) !== false) {
                                $fails++;
                            }
                        }
                        break;
                    case 'save_500b':
                        for (; $n < $end; $n++) {
                            $r = $records[$n % $count];
                            if (!$fe->save($value, $r['key'], $r['tags'])) {
                                $fails++;
                            }
                        }
                        break;
                    case 'clean_1tag':
                        for (; $n < $end; $n++) {
                            $tg = [$tags[($cleanStart + $n) % count($tags)]];
                            $t = hrtime(true);
                            if (!$fe->clean($tg)) {
                                $fails++;
                            }
                            $cleanNs += hrtime(true) - $t;
                            // untimed: put back what the clean removed
                            foreach ($byTag[$tg[0]] ?? [] as $ri) {
                                $r = $records[$ri];
                                $fe->save($value, $r['key'], $r['tags']);
                            }
                            $cleanIds += count($byTag[$tg[0]] ?? []);
                        }
                        break;
                }
                if (hrtime(true) > $limit) {
                    break;
                }
            }
            $ns = hrtime(true) - $t0;
            if ($what === 'clean_1tag') {
                $out[$what] = ['ns_per_op' => $n ? round($cleanNs / $n, 1) : null, 'ops' => $n, 'failures' => $fails,
                    'ids_per_clean' => $n ? round($cleanIds / $n, 1) : null];
                continue;
            }
            $out[$what] = ['ns_per_op' => $n ? round($ns / $n, 1) : null, 'ops' => $n, 'failures' => $fails];
        }
        $a->flush();
        $out['records'] = count($records);
        return $out;
    }

    /**
     * Growth: stream $records records of the same generator into the
     * backend (flushed first), time the saves, then clean 20 tags one by one.
     * Tags stay at 2,000, so a tag carries records * 7.5 / 2000 ids.
     */
    public static function growth(Context $ctx, string $backend, int $records, array $params, float $budget): array
    {
        $fe = self::frontend($ctx, $backend);
        $a = $fe->backend();
        $a->flush();
        mt_srand($params['seed'] + $records);
        $tagList = Dataset::tagList($params['tags']);
        $ns = 0;
        $fail = 0;
        $t0 = hrtime(true);
        $deadline = $t0 + (int)($budget * 1e9);
        $n = 0;
        for ($i = 0; $i < $records; $i++) {
            $r = Dataset::record($i, $tagList, $params);
            $t = hrtime(true);
            $ok = $fe->save($r['data'], $r['key'], $r['tags'], $r['expires']);
            $ns += hrtime(true) - $t;
            $n++;
            if (!$ok) {
                $fail++;
            }
            if (($i & 1023) === 0 && hrtime(true) > $deadline) {
                break;
            }
        }
        $res = [
            'records' => $records, 'loaded' => $n, 'complete' => $n === $records, 'failures' => $fail,
            'load_seconds' => round($ns / 1e9, 3), 'wall_seconds' => round((hrtime(true) - $t0) / 1e9, 3),
            'save_us' => $n ? round($ns / $n / 1000, 2) : null,
            'footprint' => self::footprint($fe, $n - $fail),
        ];
        // A lookup of 200 loaded ids, to see that the entries are really there.
        $hits = 0;
        mt_srand(99);
        for ($i = 0; $i < 200; $i++) {
            $hits += $fe->load(md5((string)mt_rand(0, $n - 1))) !== false ? 1 : 0;
        }
        $res['hit_rate_200'] = $hits / 200;
        if ($a->supportsTags()) {
            // 20 cleans of one tag each, or fewer (at least 3) when they take
            // more than a quarter of the budget (O(all entries) stores).
            $cns = [];
            $stop = hrtime(true) + (int)($budget / 4 * 1e9);
            for ($i = 0; $i < 20 && ($i < 3 || hrtime(true) < $stop); $i++) {
                $t = hrtime(true);
                $fe->clean([$tagList[$i * 97 % count($tagList)]]);
                $cns[] = hrtime(true) - $t;
            }
            sort($cns);
            $res['cleans'] = count($cns);
            $res['clean_ms_median'] = round($cns[intdiv(count($cns), 2)] / 1e6, 3);
            $res['clean_ms_mean'] = round(array_sum($cns) / count($cns) / 1e6, 3);
            $res['ids_per_tag'] = round($n * (($params['min_tags'] + $params['max_tags']) / 2) / count($tagList), 1);
        }
        $a->flush();
        return $res;
    }

    /**
     * After an ops run, what the store says about itself: for the tagcache
     * classes verify() (structural problems found by walking the segment)
     * and stats(); nothing for the others.
     */
    public static function after(Context $ctx, string $backend): ?array
    {
        $a = self::frontend($ctx, $backend)->backend();
        $inner = $a instanceof ZendBackendAdapter ? $a->inner() : null;
        if (!$inner || !interface_exists('TagCache\\Backend') || !$inner instanceof \TagCache\Backend) {
            return null;
        }
        return ['verify' => $inner->verify(), 'stats' => $inner->stats()];
    }

    /**
     * A correctness check for --smoke, single process: what is saved reads
     * back, misses are misses, a clean by one tag removes exactly the
     * entries carrying it, MAGE is on every record.
     */
    public static function check(Context $ctx, string $backend): array
    {
        $fe = self::frontend($ctx, $backend);
        $a = $fe->backend();
        $errors = [];
        $a->flush();
        $recs = [
            'rec_a' => ['AAAA' . str_repeat('a', 300), ['TAG_0001', 'TAG_0002']],
            'rec_b' => ['BBBB' . str_repeat('b', 1), ['TAG_0002']],
            'rec_c' => ['CCCC' . str_repeat('c', 1020), ['TAG_0003']],
            'rec_d' => ['DDDD', []],
        ];
        foreach ($recs as $id => [$v, $tags]) {
            if (!$fe->save($v, $id, $tags)) {
                $errors[] = "save($id) returned false";
            }
        }
        foreach ($recs as $id => [$v]) {
            $got = $fe->load($id);
            if ($got !== $v) {
                $errors[] = "load($id) returned " . var_export(is_string($got) ? substr($got, 0, 20) : $got, true);
            }
        }
        if ($fe->load('rec_missing') !== false) {
            $errors[] = 'load of a missing id did not return false';
        }
        if ($a->supportsTags()) {
            if (!$fe->clean(['TAG_0002'])) {
                $errors[] = 'clean(TAG_0002) returned false';
            }
            $expect = ['rec_a' => false, 'rec_b' => false, 'rec_c' => true, 'rec_d' => true];
            foreach ($expect as $id => $present) {
                if (($fe->load($id) !== false) !== $present) {
                    $errors[] = "after clean(TAG_0002), $id is " . ($present ? 'missing' : 'still there');
                }
            }
            $fe->clean(['MAGE']);
            foreach (array_keys($recs) as $id) {
                if ($fe->load($id) !== false) {
                    $errors[] = "after clean(MAGE), $id is still there";
                }
            }
        }
        $a->flush();
        if ($fe->load('rec_c') !== false) {
            $errors[] = 'flush did not remove rec_c';
        }
        return $errors;
    }
}
