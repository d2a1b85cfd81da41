<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * One client of the ops phase, whatever process runs it (a forked child, a
 * separate CLI process, a php-fpm worker): build the backend, read the op
 * list, wait at the start barrier, run the list, send the counts back.
 *
 * Per op type it keeps count and time spent in that type, as the original
 * (which printed count / time per client). Time is hrtime() around each
 * call, so it includes about 30-50 ns of timer overhead per op.
 *
 * Refill (default; --no-refill turns it off): a read that misses is
 * followed by a save of that record (its length and tags), untimed and
 * counted apart ("refills"), as the application rebuilds what it missed.
 * Without it a list long enough to time the fastest stores (400,000 ops,
 * 1,600 cleans of 2,000 tags over 4 clients) empties a tagged store: a
 * third of the reads hit by the end, and reads are timed on misses.
 */
final class Client
{
    public static function run(array $spec, int $client): array
    {
        $res = [
            'client' => $client, 'pid' => getmypid(),
            'reads' => 0, 'read_ns' => 0, 'read_misses' => 0, 'bad_values' => 0,
            'writes' => 0, 'write_ns' => 0, 'write_failures' => 0,
            'cleans' => 0, 'clean_ns' => 0, 'cleans_skipped' => 0, 'clean_failures' => 0,
            'refills' => 0, 'errors' => [],
        ];
        $sock = null;
        try {
            $ctx = Context::fromArray($spec['ctx']);
            $defs = Backends::all();
            $def = $defs[$spec['backend']];
            if (($why = ($def['requires'])($ctx)) !== null) {
                throw new \RuntimeException("backend unavailable in this process: $why");
            }
            $fe = new Frontend(($def['create'])($ctx));
            $tags = $fe->backend()->supportsTags();
            $data = new Dataset($spec['data_dir'], $spec['params']);
            $ops = $data->ops($spec['list'] ?? $client, $spec['ops']);
            $keys = [];
            $lens = [];
            $tagsOf = [];
            foreach ($data->records() as $r) {
                $keys[] = $r['key'];
                $lens[] = strlen($r['data']);
                $tagsOf[] = $r['tags'];
            }
            $tagList = Dataset::tagList($data->params['tags']);
            $refill = (bool)($spec['refill'] ?? true);
            $filler = str_repeat('r', max($lens ?: [1]));
            $nf = 0;

            // Write payloads prepared before the barrier (the original drew
            // each write's payload outside its timer too), by op index.
            mt_srand($spec['params']['seed'] * 1000 + $client + 1);
            $payload = [];
            foreach ($ops as $j => $code) {
                if ($code >> 30 === Dataset::OP_WRITE) {
                    $payload[$j] = Dataset::randomData($lens[$code & 0x3fffffff]);
                }
            }

            $tlKeys = [
                'fast_hits', 'slow_hits', 'misses', 'fills', 'fills_skipped', 'fills_undone',
                'slow_reads', 'known_absent', 'journal_errors', 'node_syncs', 'node_sync_failures',
                'node_gaps', 'invalidations', 'own_skipped', 'superseded', 'stale_refused', 'fast.entries',
                'fast.evictions', 'fill_reads', 'tombstones_kept', 'fast.huge_pages', 'node_huge_pages',
            ];
            $inner = $fe->backend() instanceof ZendBackendAdapter ? $fe->backend()->inner() : null;
            $tl = $inner !== null && $inner instanceof \TagCache\TwoLevel ? $inner : null;
            if ($tl !== null) {
                // the node's counters (node_*, invalidations, own_skipped) before the run
                $res['store_stats_before'] = array_intersect_key($tl->stats(), array_flip($tlKeys));
            }

            // Where a write's and a clean's time went (few calls: 2 in 1,000
            // ops): /proc/self/schedstat around each, read outside the timer:
            // ns on a CPU and ns runnable but waiting for one (the rest of the
            // call's time the process slept, waiting for its server).
            $sched = is_readable('/proc/self/schedstat');
            $wcpu = $wdelay = $ccpu = $cdelay = $wwin = $cwin = 0;
            // the same two readings with nothing between them, taken right
            // after each timed call: what the readings alone add to a window
            $we = $ce = [0, 0, 0];
            // Each write's and clean's own time, for the distribution (the
            // columns are means: a few calls descheduled inside can carry
            // most of the time). Kept in ns, summarised by Runner::sum().
            $wlat = $clat = [];
            // --clean-trace=DIR: per clean, getrusage() around it (context
            // switches, page faults) and a tracing build's stats() trace_*
            // (TECHNOTES "Where the time goes"); reads' time by duration.
            $traceDir = $spec['clean_trace'] ?? null;
            $ctrace = $rhist = [];

            $res['warmup_ops'] = self::warmUp($fe, $data, $spec, $client, $keys, $lens, $tagsOf, $tagList, $refill, $tags);
            $sock = self::barrier($spec['barrier'], $client);
            $ru0 = getrusage();
            $t0 = hrtime(true);
            $rt = $wt = $ct = 0;
            $nr = $nw = $nc = $miss = $bad = $wfail = $cfail = $skipped = 0;
            foreach ($ops as $j => $code) {
                $i = $code & 0x3fffffff;
                switch ($code >> 30) {
                    case Dataset::OP_READ:
                        $id = $keys[$i];
                        $t = hrtime(true);
                        $v = $fe->load($id);
                        $rt += $dt = hrtime(true) - $t;
                        if ($traceDir !== null) {
                            $b = $dt < 2048 ? $dt >> 7 : 100 + (int)log($dt, 2);
                            $rhist[$b] = ($rhist[$b] ?? 0) + $dt;
                        }
                        ++$nr;
                        if ($v === false) {
                            ++$miss;
                            if ($refill) {
                                $fe->save(substr($filler, 0, $lens[$i]), $id, $tagsOf[$i]);
                                ++$nf;
                            }
                        } elseif (strlen($v) !== $lens[$i]) {
                            ++$bad;
                        }
                        break;
                    case Dataset::OP_WRITE:
                        $id = $keys[$i];
                        $v = $payload[$j];
                        $tg = $tagsOf[$i];
                        $ss = $sched ? self::sched() : null;
                        $t = hrtime(true);
                        $ok = $fe->save($v, $id, $tg);
                        $wt += $wlat[] = hrtime(true) - $t;
                        if ($ss) {
                            $se = self::sched();
                            $wcpu += $se[0] - $ss[0];
                            $wdelay += $se[1] - $ss[1];
                            $wwin += $se[3] - $ss[2];
                            $we = self::emptyWindow($we);
                        }
                        ++$nw;
                        if (!$ok) {
                            ++$wfail;
                        }
                        break;
                    default:
                        if (!$tags) {
                            ++$skipped;
                            break;
                        }
                        $tg = [$tagList[$i]];
                        $ss = $sched ? self::sched() : null;
                        $ru = $traceDir !== null ? getrusage() : null;
                        $t = hrtime(true);
                        $ok = $fe->clean($tg);
                        $ct += $clat[] = $dt = hrtime(true) - $t;
                        if ($ru !== null) {
                            $ctrace[] = self::cleanTrace($t, $dt, $ru, getrusage(), $inner);
                        }
                        if ($ss) {
                            $se = self::sched();
                            $ccpu += $se[0] - $ss[0];
                            $cdelay += $se[1] - $ss[1];
                            $cwin += $se[3] - $ss[2];
                            $ce = self::emptyWindow($ce);
                        }
                        ++$nc;
                        if (!$ok) {
                            ++$cfail;
                        }
                        break;
                }
            }
            $res['wall_ns'] = hrtime(true) - $t0;
            // the process's CPU over the whole op list (timed calls, refills
            // and the loop itself), user and kernel apart: the report's
            // "where the CPU goes" table
            $ru1 = getrusage();
            $res['cpu_ns'] = ['user' => self::ruNs($ru1, $ru0, 'utime'), 'sys' => self::ruNs($ru1, $ru0, 'stime')];
            if ($traceDir !== null) {
                $st = $inner !== null && method_exists($inner, 'stats') ? $inner->stats() : [];
                file_put_contents(sprintf('%s/%s-run%d-client%d.json', $traceDir, $spec['backend'], $spec['run'] ?? 1, $client),
                    json_encode(['backend' => $spec['backend'], 'cleans' => $ctrace, 'read_ns_by_duration' => $rhist,
                        'stats' => array_filter($st, static fn ($k) => str_starts_with($k, 'trace_'), ARRAY_FILTER_USE_KEY)]));
            }
            $res = array_merge($res, [
                'reads' => $nr, 'read_ns' => $rt, 'read_misses' => $miss, 'bad_values' => $bad,
                'writes' => $nw, 'write_ns' => $wt, 'write_failures' => $wfail,
                'cleans' => $nc, 'clean_ns' => $ct, 'cleans_skipped' => $skipped, 'clean_failures' => $cfail,
                'refills' => $nf, 'write_lat_ns' => $wlat, 'clean_lat_ns' => $clat,
            ]);
            if ($sched) {
                $res['sched'] = ['write_cpu_ns' => $wcpu, 'write_runq_ns' => $wdelay,
                    'clean_cpu_ns' => $ccpu, 'clean_runq_ns' => $cdelay,
                    'write_window_ns' => $wwin, 'clean_window_ns' => $cwin,
                    'write_empty_ns' => $we, 'clean_empty_ns' => $ce];
            }
            if ($bad) {
                $res['errors'][] = "$bad reads returned a value of the wrong length";
            }
            // TagCache\TwoLevel counts per object where each read went (fast
            // hit, slow hit, miss) and what its fills and syncs did: kept per
            // client in results.json ("store_stats"), untimed, after the run.
            if ($tl !== null) {
                $res['store_stats'] = array_intersect_key($tl->stats(), array_flip($tlKeys));
            }
            // whether the segment is in 2 MB pages (README, "Options of
            // TagCache\Shm": 1 yes, 0 4 KB pages, -1 not tried)
            if ($tl !== null) {
                $res['huge_pages'] = $res['store_stats']['fast.huge_pages'] ?? null;
            } elseif ($inner instanceof \TagCache\Shm) {
                $res['huge_pages'] = $inner->stats()['huge_pages'] ?? null;
            }
        } catch (\Throwable $e) {
            $res['errors'][] = get_class($e) . ': ' . $e->getMessage() . ' at ' . basename($e->getFile()) . ':' . $e->getLine();
        }
        if ($sock === null && isset($spec['barrier'])) {
            // Failed before the barrier: still check in, so the others are not held.
            try {
                $sock = self::barrier($spec['barrier'], $client);
            } catch (\Throwable) {
            }
        }
        if ($sock) {
            fwrite($sock, json_encode($res) . "\n");
            fclose($sock);
        }
        return $res;
    }

    /**
     * --client-warmup=N: before the barrier, N ops of the next client's
     * list, untimed (a read that misses is refilled when refills are on). A
     * php-fpm worker has served requests before the one being timed; a
     * fresh fork has not, and its first touch of each page of a shared
     * mapping costs it microseconds on a VM, where a run of a few hundred
     * cleans per client spends much of its clean time on them (TECHNOTES,
     * TwoLevel "Costs", session 18). The store is in the same steady state
     * after it (cleans and refills alike).
     */
    private static function warmUp(Frontend $fe, Dataset $data, array $spec, int $client, array $keys, array $lens,
                                   array $tagsOf, array $tagList, bool $refill, bool $tags): int
    {
        $n = (int)($spec['client_warmup'] ?? 0);
        if ($n <= 0) {
            return 0;
        }
        $lists = max(1, (int)$data->params['clients']);
        $ops = $data->ops((($spec['list'] ?? $client) + 1) % $lists, $n);
        foreach ($ops as $code) {
            $i = $code & 0x3fffffff;
            $op = $code >> 30;
            if ($op === Dataset::OP_READ) {
                if ($fe->load($keys[$i]) === false && $refill) {
                    $fe->save(str_repeat('r', $lens[$i]), $keys[$i], $tagsOf[$i]);
                }
            } elseif ($op === Dataset::OP_WRITE) {
                $fe->save(str_repeat('w', $lens[$i]), $keys[$i], $tagsOf[$i]);
            } elseif ($tags) {
                $fe->clean([$tagList[$i]]);
            }
        }
        return count($ops);
    }

    /** ns of getrusage() field ru_<f> (utime, stime) between two calls */
    public static function ruNs(array $b, array $a, string $f): int
    {
        return ($b["ru_$f.tv_sec"] - $a["ru_$f.tv_sec"]) * 1000000000 + ($b["ru_$f.tv_usec"] - $a["ru_$f.tv_usec"]) * 1000;
    }

    /**
     * One clean of --clean-trace: its start (hrtime) and time, getrusage()
     * differences around it, and what a tracing build of TagCache\Shm
     * (-DTC_SHM_TRACE) says of its last write-locked call (trace_* of
     * stats(), without the histograms).
     */
    private static function cleanTrace(int $t, int $dt, array $r0, array $r1, ?object $inner): array
    {
        $rec = ['t0' => $t, 'lat' => $dt, 'nvcsw' => $r1['ru_nvcsw'] - $r0['ru_nvcsw'],
            'nivcsw' => $r1['ru_nivcsw'] - $r0['ru_nivcsw'], 'minflt' => $r1['ru_minflt'] - $r0['ru_minflt']];
        if ($inner !== null && method_exists($inner, 'stats')) {
            foreach ($inner->stats() as $k => $v) {
                if (str_starts_with($k, 'trace_') && !preg_match('/^trace_((hold|wait)_[a-z]+_\d+|n_|contended_)/', $k)) {
                    $rec[substr($k, 6)] = $v;
                }
            }
        }
        return $rec;
    }

    /**
     * [ns on a CPU, ns waiting on a run queue, hrtime before and after
     * reading them] of this process (Linux, /proc/self/schedstat). Not
     * getrusage(): it brings the task's CPU sum up to date, and under EEVDF
     * (Linux 6.6 and later) that also preempts a task whose slice is used
     * up, so the reading itself would put run-queue waits into the window
     * it measures. schedstat's CPU sum is as of the last scheduler event: a
     * call that sleeps (a round trip) gets its stretch before the sleep and
     * gives its last one to the next reading, right on average; a call
     * that never sleeps shows none (the report leaves the local stores out).
     */
    private static function sched(): ?array
    {
        $t0 = hrtime(true);
        $s = @file_get_contents('/proc/self/schedstat');
        if ($s === false) {
            return null;
        }
        $f = explode(' ', trim($s));
        return [(int)$f[0], (int)($f[1] ?? 0), $t0, hrtime(true)];
    }

    /** $acc plus [cpu, run queue, window] of two readings with nothing between them. */
    private static function emptyWindow(array $acc): array
    {
        $a = self::sched();
        $b = self::sched();
        return [$acc[0] + $b[0] - $a[0], $acc[1] + $b[1] - $a[1], $acc[2] + $b[3] - $a[2]];
    }

    /** Check in at the start barrier and block until the orchestrator says go. */
    public static function barrier(string $path, int $client)
    {
        $s = @stream_socket_client("unix://$path", $errno, $err, 30);
        if (!$s) {
            throw new \RuntimeException("barrier $path: $err");
        }
        stream_set_timeout($s, 900);
        fwrite($s, "R $client\n");
        $go = fread($s, 1);
        if ($go !== 'G') {
            throw new \RuntimeException('barrier: no go signal');
        }
        return $s;
    }
}
