<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * The multi-node modes (issue 10): N web nodes over one slow store.
 *
 * A node is a separate `php` process (so APCu, private to a process tree,
 * is a node's own, as on a real web node) with its own local level:
 * TagCache\TwoLevel a segment of its own ({segment}_tl_nK), Magento 2's L2
 * a local Cm File directory of its own on /dev/shm, Zend TwoLevels the
 * node process's APCu. Each node forks its clients; all of them are
 * released by one barrier. Everything else (the slow store, Redis) is shared.
 *
 * --nodes=N (stale mode): node 0 runs the cleaner, every node runs
 * --clients readers. The cleaner, paced every --clean-every-ms, cleans a
 * random tag of the data set, re-saves the records it removed (as the
 * application rebuilds them) and writes one volatility-weighted record,
 * recording every version in the side channel (Truth) before and after
 * each call. Readers run the read ops of their op lists (no refill: only
 * the cleaner writes, so every value in any level came from one ordered
 * writer) and judge each hit against the side channel: current, stale
 * within the bound, stale beyond it (the version after it had been
 * current for longer than --bound seconds when the read started), or a
 * value never written. Bounded: readers stop after their list or
 * --seconds; the cleaner when the readers are done or at --seconds.
 *
 * --lag=K (lag mode): K records, each with a tag of its own, saved through
 * node 0 and read on node 1 until node 1 serves them from its own level;
 * then node 0 cleans one tag every --lag-every-ms (with jitter, so the
 * cleans fall at random points of a poller's period) and node 1 polls
 * every cleaned record until its first miss. Lag = that miss's time minus
 * the time the clean returned, from one monotonic clock. A record not seen
 * to miss within --lag-timeout seconds counts as "never".
 */
final class Nodes
{
    /** The backends the node modes run by default: TwoLevel and the two-level peers. */
    public const DEFAULT_SET = ['tagcache-twolevel', 'zend-twolevels-apcu-cmredis', 'm2-remote-sync'];

    public const LAG_TAG = 'LAGTAG_';
    public const LAG_ID = 'LAGREC_';

    public function __construct(
        private readonly Context $ctx,
        private readonly Dataset $data,
        private readonly Runner $runner,
        private readonly \Closure $log,
    ) {
    }

    /** Every segment or directory a node's local level may use, for the cleanup. */
    public static function segments(Context $ctx, int $nodes): array
    {
        $s = [];
        for ($k = 0; $k < $nodes; ++$k) {
            $s[] = $ctx->shmSegment . '_tl' . ($k ? "_n$k" : '');
        }
        return $s;
    }

    private function clearLocal(int $nodes): void
    {
        $dir = extension_loaded('tagcache') ? (ini_get('tagcache.shm.dir') ?: '/dev/shm') : '/dev/shm';
        foreach (self::segments($this->ctx, $nodes) as $s) {
            @unlink("$dir/tagcache.$s");
            @unlink("$dir/tagcache.$s.twolevel");
        }
        foreach (glob('/dev/shm/' . basename($this->ctx->tmp) . '-*-node*', GLOB_ONLYDIR) ?: [] as $d) {
            rm_tree($d);
        }
    }

    public static function value(int $gen, string $payload): string
    {
        return $gen . ':' . $payload;
    }

    /**
     * One run of a mode ('stale' or 'lag') for one backend.
     * $p: nodes, clients, seconds, bound, clean_every_ms, lag, lag_every_ms, lag_timeout, reads
     */
    public function run(string $mode, string $backend, array $p, int $run): array
    {
        $def = Backends::all()[$backend];
        $res = ['mode' => $mode, 'backend' => $backend, 'label' => $def['label'], 'run' => $run,
            'nodes' => $p['nodes'], 'clients_per_node' => $p['clients'], 'bound_s' => $p['bound']];
        if (!$def['tags']) {
            return $res + ['status' => 'n/a', 'reason' => 'no tags: nothing to invalidate'];
        }
        if (($u = $this->runner->unavailable('fork', $backend, $def)) !== null) {
            return $res + ['status' => $u[0], 'reason' => $u[1]];
        }
        $this->clearLocal($p['nodes']);
        $seq = $backend . '-' . $mode . '-' . $run;
        $truthFile = $this->ctx->tmp . "/truth-$seq";
        $records = $this->data->params['keys'];
        $slots = $mode === 'lag' ? $p['lag'] : 0;
        $truth = Truth::create($truthFile, $records, $slots);
        $barrier = null;
        $procs = [];
        try {
            // The load, through node 0 (this process shares node 0's segment or directory).
            $fe = Measure::frontend($this->ctx, $backend);
            $fe->backend()->flush();
            $t = hrtime(true);
            $fail = 0;
            if ($mode === 'stale') {
                foreach ($this->data->records() as $r) {
                    $fail += $fe->save(self::value(0, $r['data']), $r['key'], $r['tags']) ? 0 : 1;
                }
            } else {
                for ($k = 0; $k < $p['lag']; ++$k) {
                    $fail += $fe->save(self::value(0, 'lag'), self::LAG_ID . $k, [self::LAG_TAG . $k]) ? 0 : 1;
                }
            }
            $res['load'] = ['seconds' => (hrtime(true) - $t) / 1e9, 'failures' => $fail];
            unset($fe);

            $barrier = new Barrier($this->ctx->tmp . "/nb-$seq.sock");
            $spec = [
                'ctx' => $this->ctx->toArray(), 'backend' => $backend, 'data_dir' => $this->data->dir,
                'params' => $this->data->params, 'barrier' => $barrier->path, 'truth' => $truthFile,
                'records' => $records, 'slots' => $slots, 'mode' => $mode, 'p' => $p,
            ];
            $want = 0;
            for ($k = 0; $k < $p['nodes']; ++$k) {
                $roles = self::roles($mode, $k, $p);
                $want += count($roles);
                $specFile = $this->ctx->tmp . "/node-$seq-$k.json";
                file_put_contents($specFile, json_encode($spec + ['node' => $k, 'roles' => $roles]));
                $out = $this->ctx->tmp . "/node-$seq-$k.out";
                $proc = proc_open(
                    Php::selfCommand(["--internal-node=$specFile"]),
                    [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $out, 'a']],
                    $pipes,
                    null,
                    Php::env()
                );
                if (!$proc) {
                    throw new \RuntimeException("cannot start node $k");
                }
                $procs[$k] = [$proc, $out];
            }
            $alive = static function () use (&$procs): ?string {
                foreach ($procs as $k => [$proc, $out]) {
                    if (!proc_get_status($proc)['running']) {
                        return "node $k: " . trim(substr((string)@file_get_contents($out), 0, 2000));
                    }
                }
                return null;
            };
            $barrier->wait($want, 120, $alive);
            $t0 = $barrier->go();
            $limit = $mode === 'lag'
                ? $p['lag'] * ($p['lag_every_ms'] * 1.5 / 1000) + $p['lag_timeout'] + 60
                : $p['seconds'] + 60;
            [$results, $tEnd] = $barrier->collect($limit);
            $res['wall_seconds'] = ($tEnd - $t0) / 1e9;
            $res['clients'] = array_values($results);
        } catch (\Throwable $e) {
            $res['status'] = 'error';
            $res['reason'] = get_class($e) . ': ' . $e->getMessage();
        } finally {
            $barrier?->close();
            foreach ($procs as $k => [$proc, $out]) {
                $deadline = microtime(true) + 30;
                while (proc_get_status($proc)['running'] && microtime(true) < $deadline) {
                    usleep(10000);
                }
                if (proc_get_status($proc)['running']) {
                    stop_proc($proc);
                    $res['errors'][] = "node $k did not exit; stopped";
                } else {
                    $st = proc_get_status($proc);
                    proc_close($proc);
                    if ($st['exitcode'] > 1) {
                        $res['errors'][] = "node $k: exit {$st['exitcode']}: " . trim(substr((string)@file_get_contents($out), 0, 1000));
                    }
                }
                @unlink($out);
            }
            $truth->delete();
            @unlink($truthFile);
        }
        if (isset($res['status'])) {
            return $res;
        }
        foreach ($res['clients'] as $c) {
            foreach ($c['errors'] ?? [] as $e) {
                $res['errors'][] = "node {$c['node']} {$c['role']}: $e";
            }
        }
        $res['sum'] = $mode === 'lag' ? self::sumLag($res['clients'], $p) : self::sumStale($res['clients']);
        $res['status'] = empty($res['errors']) ? 'ok' : 'error';
        if (!empty($res['errors'])) {
            $res['reason'] = implode('; ', array_slice($res['errors'], 0, 5));
        }
        return $res;
    }

    /** The client processes of node $k: list of [role, op list index]. */
    public static function roles(string $mode, int $k, array $p): array
    {
        if ($mode === 'lag') {
            return match ($k) {
                0 => [['cleaner', 0]],
                1 => [['prober', 1]],
                default => [],
            };
        }
        $r = $k === 0 ? [['cleaner', $p['nodes'] * $p['clients']]] : [];
        for ($c = 0; $c < $p['clients']; ++$c) {
            $r[] = ['reader', $k * $p['clients'] + $c];
        }
        return $r;
    }

    /** The node process: fork its clients, wait for them (bounded). */
    public static function node(array $spec): int
    {
        $ctx = Context::fromArray($spec['ctx']);
        $ctx->node = $spec['node'];
        $spec['ctx'] = $ctx->toArray();
        $pids = [];
        foreach ($spec['roles'] as $j => [$role, $list]) {
            $pid = pcntl_fork();
            if ($pid === -1) {
                fwrite(STDERR, "fork failed\n");
                return 2;
            }
            if ($pid === 0) {
                $id = $spec['node'] * 1000 + $j;
                $r = self::client($spec, $role, $list, $id);
                exit(empty($r['errors']) ? 0 : 1);
            }
            $pids[] = $pid;
        }
        $p = $spec['p'];
        $deadline = microtime(true) + ($spec['mode'] === 'lag'
            ? $p['lag'] * ($p['lag_every_ms'] * 1.5 / 1000) + $p['lag_timeout'] + 120
            : $p['seconds'] + 120);
        $rc = 0;
        foreach ($pids as $pid) {
            while (($w = pcntl_waitpid($pid, $st, WNOHANG)) === 0 && microtime(true) < $deadline) {
                usleep(20000);
            }
            if ($w === 0) {
                posix_kill($pid, SIGKILL);
                pcntl_waitpid($pid, $st);
                fwrite(STDERR, "client pid $pid did not end; killed\n");
                $rc = 2;
            }
        }
        return $rc;
    }

    /** One client of a node: build the store, check in, play the role, report. */
    private static function client(array $spec, string $role, int $list, int $id): array
    {
        $res = ['node' => $spec['node'], 'role' => $role, 'pid' => getmypid(), 'errors' => []];
        $sock = null;
        try {
            $ctx = Context::fromArray($spec['ctx']);
            $fe = Measure::frontend($ctx, $spec['backend']);
            $truth = Truth::attach($spec['truth'], $spec['records'], $spec['slots']);
            $data = new Dataset($spec['data_dir'], $spec['params']);
            $p = $spec['p'];
            $boundNs = (int)($p['bound'] * 1e9);
            if ($spec['mode'] === 'lag') {
                if ($role === 'prober') {
                    self::prime($fe, $p);
                }
                $sock = Client::barrier($spec['barrier'], $id);
                $res += $role === 'cleaner' ? self::lagCleaner($fe, $truth, $p) : self::lagProber($fe, $truth, $p);
            } else {
                $recs = $data->allRecords();
                if ($role === 'reader') {
                    $ops = $data->ops($list);
                    $sock = Client::barrier($spec['barrier'], $id);
                    $res += self::reader($fe, $truth, $recs, $ops, $p, $boundNs);
                    $truth->setDone($list);
                } else {
                    $sock = Client::barrier($spec['barrier'], $id);
                    $res += self::cleaner($fe, $truth, $recs, $data, $p, $spec['params']['seed']);
                }
            }
        } catch (\Throwable $e) {
            $res['errors'][] = get_class($e) . ': ' . $e->getMessage() . ' at ' . basename($e->getFile()) . ':' . $e->getLine();
        }
        if ($sock === null) {
            try {
                $sock = Client::barrier($spec['barrier'], $id);
            } catch (\Throwable) {
            }
        }
        if ($sock) {
            fwrite($sock, json_encode($res) . "\n");
            fclose($sock);
        }
        return $res;
    }

    private static function reader(Frontend $fe, Truth $truth, array $recs, array $ops, array $p, int $boundNs): array
    {
        $deadline = hrtime(true) + (int)($p['seconds'] * 1e9);
        $n = $ns = $miss = $cur = $within = $beyond = $wrong = 0;
        $maxAge = 0;
        $age = 0;
        $ids = [];
        foreach ($ops as $code) {
            if ($code >> 30 === Dataset::OP_READ) {
                $ids[] = $code & 0x3fffffff;
            }
        }
        $len = count($ids);
        // the list's reads, over again until the time is up (or --node-reads)
        for ($j = 0; $len && $j < $p['reads']; ++$j) {
            $i = $ids[$j % $len];
            $t = hrtime(true);
            $v = $fe->load($recs[$i]['key']);
            $ns += hrtime(true) - $t;
            ++$n;
            if ($v === false) {
                ++$miss;
            } else {
                $c = strpos($v, ':');
                $g = $c === false ? -1 : (int)substr($v, 0, $c);
                $verdict = $g < 0 || substr($v, $c + 1) !== $recs[$i]['data'] ? 3 : $truth->judge($i, $g, $t, $boundNs, $age);
                match ($verdict) {
                    0 => ++$cur,
                    1 => ++$within,
                    2 => ++$beyond,
                    3 => ++$wrong,
                };
                if ($age > $maxAge) {
                    $maxAge = $age;
                }
            }
            if (($j & 255) === 0 && $t > $deadline) {
                break;
            }
        }
        return ['reads' => $n, 'read_ns' => $ns, 'misses' => $miss, 'current' => $cur, 'stale_within' => $within,
            'stale_beyond' => $beyond, 'wrong' => $wrong, 'max_stale_age_ms' => $maxAge / 1e6];
    }

    private static function cleaner(Frontend $fe, Truth $truth, array $recs, Dataset $data, array $p, int $seed): array
    {
        mt_srand($seed * 7 + 3);
        $byTag = [];
        $weights = [];
        foreach ($recs as $i => $r) {
            foreach ($r['tags'] as $tg) {
                $byTag[$tg][] = $i;
            }
            $weights[$i] = $r['volatility'] ?? 1;
        }
        $tags = array_keys($byTag);
        $cum = [];
        $sum = 0;
        foreach ($weights as $i => $w) {
            $sum += $w;
            $cum[$i] = $sum;
        }
        $readers = $p['nodes'] * $p['clients'];
        $every = (int)($p['clean_every_ms'] * 1e6);
        $deadline = hrtime(true) + (int)($p['seconds'] * 1e9);
        $nc = $cns = $nw = $wns = $resaved = $fail = 0;
        $next = hrtime(true);
        while (hrtime(true) < $deadline && $truth->doneCount($readers) < $readers) {
            // a clean of one tag, then the records it removed saved again
            $tg = $tags[mt_rand(0, count($tags) - 1)];
            foreach ($byTag[$tg] as $i) {
                $truth->begin($i);
            }
            $t = hrtime(true);
            $ok = $fe->clean([$tg]);
            $t1 = hrtime(true);
            $cns += $t1 - $t;
            ++$nc;
            $fail += $ok ? 0 : 1;
            // a call that said it failed is never held against the store:
            // its records stay "in flight" (not judged) until the next call
            foreach ($ok ? $byTag[$tg] : [] as $i) {
                $truth->commit($i, $t1);
            }
            foreach ($byTag[$tg] as $i) {
                [$gen] = $truth->get($i);
                $fe->save(self::value($gen, $recs[$i]['data']), $recs[$i]['key'], $recs[$i]['tags']);
                ++$resaved;
            }
            // and one write (a new version) of a volatility-weighted record
            $x = mt_rand(1, $sum);
            $lo = 0;
            $hi = count($cum) - 1;
            while ($lo < $hi) {
                $mid = intdiv($lo + $hi, 2);
                $cum[$mid] < $x ? $lo = $mid + 1 : $hi = $mid;
            }
            $gen = $truth->begin($lo);
            $t = hrtime(true);
            $ok = $fe->save(self::value($gen, $recs[$lo]['data']), $recs[$lo]['key'], $recs[$lo]['tags']);
            $t1 = hrtime(true);
            if ($ok) {
                $truth->commit($lo, $t1);
            }
            $wns += $t1 - $t;
            ++$nw;
            $fail += $ok ? 0 : 1;
            $next += $every;
            $sleep = $next - hrtime(true);
            if ($sleep > 0) {
                usleep(intdiv($sleep, 1000));
            } else {
                $next = hrtime(true);
            }
        }
        return ['cleans' => $nc, 'clean_ns' => $cns, 'writes' => $nw, 'write_ns' => $wns, 'resaved' => $resaved,
            'failures' => $fail];
    }

    /**
     * Lag mode, node 1 before the barrier: read every record until this
     * node serves it, and for longer than the bound (a two-level store may
     * still have older invalidations of the load to apply; those must not
     * pass for the clean's).
     */
    private static function prime(Frontend $fe, array $p): void
    {
        $t0 = microtime(true);
        $until = $t0 + $p['bound'] + 0.2;
        $deadline = $t0 + $p['bound'] + 30;
        do {
            $all = true;
            for ($k = 0; $k < $p['lag']; ++$k) {
                if ($fe->load(self::LAG_ID . $k) === false) {
                    $all = false;
                }
            }
            if (microtime(true) > $deadline) {
                throw new \RuntimeException('lag mode: node 1 never read every record back');
            }
            if (!$all) {
                // a miss: the load is not visible here yet; look again soon
                usleep(10000);
            }
        } while (!$all || microtime(true) < $until);
    }

    private static function lagCleaner(Frontend $fe, Truth $truth, array $p): array
    {
        mt_srand(20140101);
        $ns = $fail = 0;
        $every = (int)($p['lag_every_ms'] * 1e6);
        for ($k = 0; $k < $p['lag']; ++$k) {
            $t = hrtime(true);
            $ok = $fe->clean([self::LAG_TAG . $k]);
            $t1 = hrtime(true);
            $truth->setSlot($k, $t1);
            $ns += $t1 - $t;
            $fail += $ok ? 0 : 1;
            // jitter: half to one and a half times the period
            usleep(intdiv(mt_rand(intdiv($every, 2), $every + intdiv($every, 2)), 1000));
        }
        return ['cleans' => $p['lag'], 'clean_ns' => $ns, 'failures' => $fail];
    }

    private static function lagProber(Frontend $fe, Truth $truth, array $p): array
    {
        $timeoutNs = (int)($p['lag_timeout'] * 1e9);
        $lags = [];
        $lastHit = [];
        $hitAt = [];
        $never = 0;
        $polls = 0;
        $next = 0;          // the first clean not yet seen
        $open = [];         // k => clean time
        $end = hrtime(true) + (int)(($p['lag'] * $p['lag_every_ms'] * 1.5 / 1000 + $p['lag_timeout'] + 30) * 1e9);
        while (($next < $p['lag'] || $open) && hrtime(true) < $end) {
            while ($next < $p['lag'] && ($tc = $truth->slot($next)) !== 0) {
                $open[$next++] = $tc;
            }
            foreach ($open as $k => $tc) {
                ++$polls;
                $t = hrtime(true);
                if ($fe->load(self::LAG_ID . $k) === false) {
                    $lags[] = max(0, hrtime(true) - $tc);
                    // the last hit after the clean: when that read started
                    $lastHit[] = $hitAt[$k] ?? 0;
                    unset($open[$k], $hitAt[$k]);
                } else {
                    $hitAt[$k] = max(0, $t - $tc);
                    if ($t - $tc > $timeoutNs) {
                        // never missed: a hit that started past the timeout
                        ++$never;
                        $lastHit[] = $hitAt[$k];
                        unset($open[$k], $hitAt[$k]);
                    }
                }
            }
            if (!$open) {
                usleep(200);
            }
        }
        $never += count($open) + ($p['lag'] - $next);
        return ['lags_ns' => $lags, 'last_hit_ns' => $lastHit, 'never' => $never, 'polls' => $polls];
    }

    public static function sumStale(array $clients): array
    {
        $s = ['reads' => 0, 'reads_per_s' => 0.0, 'misses' => 0, 'current' => 0, 'stale_within' => 0, 'stale_beyond' => 0,
            'wrong' => 0, 'max_stale_age_ms' => 0.0, 'cleans' => 0, 'writes' => 0, 'resaved' => 0, 'clean_ms' => null,
            'failures' => 0];
        foreach ($clients as $c) {
            if ($c['role'] === 'reader') {
                foreach (['reads', 'misses', 'current', 'stale_within', 'stale_beyond', 'wrong'] as $k) {
                    $s[$k] += $c[$k] ?? 0;
                }
                if (($c['read_ns'] ?? 0) > 0) {
                    $s['reads_per_s'] += $c['reads'] / ($c['read_ns'] / 1e9);
                }
                $s['max_stale_age_ms'] = max($s['max_stale_age_ms'], $c['max_stale_age_ms'] ?? 0);
            } elseif ($c['role'] === 'cleaner') {
                $s['cleans'] = $c['cleans'] ?? 0;
                $s['writes'] = $c['writes'] ?? 0;
                $s['resaved'] = $c['resaved'] ?? 0;
                $s['failures'] = $c['failures'] ?? 0;
                $s['clean_ms'] = ($c['cleans'] ?? 0) ? $c['clean_ns'] / $c['cleans'] / 1e6 : null;
            }
        }
        return $s;
    }

    public static function sumLag(array $clients, array $p): array
    {
        $s = ['cleans' => $p['lag'], 'seen' => 0, 'never' => 0, 'median_ms' => null, 'p90_ms' => null, 'worst_ms' => null,
            'last_hit_worst_ms' => null, 'last_hits_beyond_bound' => 0];
        foreach ($clients as $c) {
            if ($c['role'] !== 'prober') {
                continue;
            }
            $l = $c['lags_ns'] ?? [];
            sort($l);
            $s['seen'] = count($l);
            $s['never'] = $c['never'] ?? 0;
            if ($l) {
                $s['median_ms'] = Report::median($l) / 1e6;
                $s['p90_ms'] = $l[(int)floor(0.9 * (count($l) - 1))] / 1e6;
                $s['worst_ms'] = end($l) / 1e6;
            }
            // the polling's own delay is in the lag; the last hit is what the store served
            $h = $c['last_hit_ns'] ?? [];
            $s['last_hit_worst_ms'] = $h ? max($h) / 1e6 : null;
            $s['last_hits_beyond_bound'] = count(array_filter($h, static fn ($x) => $x > $p['bound'] * 1e9));
        }
        return $s;
    }

    /** results.json, report.txt and nodes.csv (one row per backend and run). */
    public static function write(string $dir, array $res, string $text): array
    {
        @mkdir($dir, 0777, true);
        $files = [];
        file_put_contents($files[] = "$dir/results.json", json_encode($res, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n");
        file_put_contents($files[] = "$dir/report.txt", $text);
        $cols = ['reads', 'reads_per_s', 'misses', 'stale_within', 'stale_beyond', 'max_stale_age_ms', 'wrong', 'cleans',
            'seen', 'never', 'median_ms', 'p90_ms', 'worst_ms', 'last_hit_worst_ms', 'last_hits_beyond_bound'];
        $rows = [];
        foreach ($res['nodes'] as $r) {
            $row = [$r['mode'], $r['backend'], $r['run'], $r['nodes'], $r['clients_per_node'], $r['bound_s']];
            foreach ($cols as $c) {
                $row[] = $r['sum'][$c] ?? '';
            }
            $row[] = $r['status'] . (isset($r['reason']) ? ': ' . $r['reason'] : '');
            $rows[] = $row;
        }
        Report::writeCsv($files[] = "$dir/nodes.csv", array_merge(['mode', 'backend', 'run', 'nodes', 'clients_per_node', 'bound_s'], $cols, ['status']), $rows);
        return $files;
    }

    public static function text(array $rows, array $p): string
    {
        $stale = array_values(array_filter($rows, static fn ($r) => $r['mode'] === 'stale'));
        $lag = array_values(array_filter($rows, static fn ($r) => $r['mode'] === 'lag'));
        $s = '';
        if ($stale) {
            $s .= sprintf("\nMulti-node: %d nodes x %d readers (node 0 also runs the cleaner: a clean of one tag every %s ms, its records saved again, and one write), each reader its list's reads over again for %s s (at most %s reads); bound %s s\n",
                $p['nodes'], $p['clients'], $p['clean_every_ms'], $p['seconds'], number_format($p['reads']), $p['bound']);
            $s .= "stale beyond the bound = a hit whose next version had been current for longer than the bound when the read started (judged against the side channel)\n";
            $s .= "| backend | run | reads/s | reads | hit rate | stale within bound | stale beyond bound | oldest stale (ms) | wrong values | cleans | clean ms | status |\n";
            $s .= "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
            foreach ($stale as $r) {
                $u = $r['sum'] ?? null;
                $s .= $u === null
                    ? sprintf("| %s | %d | | | | | | | | | | %s: %s |\n", $r['backend'], $r['run'], $r['status'], $r['reason'] ?? '')
                    : sprintf("| %s | %d | %s | %s | %.1f %% | %s | %s | %.0f | %s | %d | %s | %s |\n",
                        $r['backend'], $r['run'], Report::num($u['reads_per_s'], true), number_format($u['reads']),
                        $u['reads'] ? 100 * ($u['reads'] - $u['misses']) / $u['reads'] : 0,
                        number_format($u['stale_within']), number_format($u['stale_beyond']), $u['max_stale_age_ms'],
                        number_format($u['wrong']), $u['cleans'], $u['clean_ms'] === null ? 'n/a' : sprintf('%.2f', $u['clean_ms']),
                        $r['status'] . (isset($r['reason']) ? ': ' . $r['reason'] : ''));
            }
        }
        if ($lag) {
            $s .= sprintf("\nLag: a clean on node 0 returning -> the first miss on node 1, %d cleans (one every %s ms, jittered), never = no miss within %s s\n",
                $p['lag'], $p['lag_every_ms'], $p['lag_timeout']);
            $s .= "lag includes the poller's own delay (one poll round, and the poller descheduled on a loaded machine); \"last hit\" = when the last read that still hit after the clean started: what the store served\n";
            $s .= "| backend | run | cleans | seen | never | median ms | p90 ms | worst ms | last hit worst ms | last hits beyond bound | status |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
            foreach ($lag as $r) {
                $u = $r['sum'] ?? null;
                $f = static fn (?float $x) => $x === null ? 'n/a' : sprintf('%.2f', $x);
                $s .= $u === null
                    ? sprintf("| %s | %d | | | | | | | | | %s: %s |\n", $r['backend'], $r['run'], $r['status'], $r['reason'] ?? '')
                    : sprintf("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %d | %s |\n", $r['backend'], $r['run'], $u['cleans'], $u['seen'],
                        $u['never'], $f($u['median_ms']), $f($u['p90_ms']), $f($u['worst_ms']), $f($u['last_hit_worst_ms']),
                        $u['last_hits_beyond_bound'],
                        $r['status'] . (isset($r['reason']) ? ': ' . $r['reason'] : ''));
            }
        }
        return $s;
    }
}
