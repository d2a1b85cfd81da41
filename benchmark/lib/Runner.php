<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * One ops run: flush, load the records (timed), then N clients released
 * together by the barrier, each running its op list. Three process modes:
 *
 *   fork  clients are pcntl_fork()ed from this process after it loaded the
 *         extensions, as php-fpm forks its workers;
 *   fpm   a php-fpm pool (pm=static, N workers) runs the load and the
 *         clients, driven over FastCGI with cgi-fcgi;
 *   cli   clients are separate `php` processes. Valid for stores that
 *         separate processes share (tagcache, files, servers); refused for
 *         APCu, whose CLI processes each get a private cache.
 */
final class Runner
{
    public const MODES = ['fork', 'fpm', 'cli'];

    private int $seq = 0;
    public ?Fpm $fpm = null;
    private array $fpmMissing = [];

    /** A read miss is followed by an untimed save of the record, as the application would (Client). */
    public bool $refill = true;
    /** --client-warmup=N: each client first runs N ops of another list, untimed (Client::warmUp) */
    public int $clientWarmup = 0;
    /** --clean-trace=DIR: each client writes its cleans' trace there (Client::cleanTrace) */
    public ?string $cleanTrace = null;

    public function __construct(
        public readonly Context $ctx,
        public readonly Dataset $data,
        private readonly \Closure $log,
    ) {
    }

    public static function modeDescription(string $mode): string
    {
        return match ($mode) {
            'fork' => 'fork: clients pcntl_fork()ed after the extensions started (like php-fpm workers)',
            'fpm' => 'fpm: real php-fpm workers (pm=static) driven over FastCGI with cgi-fcgi',
            'cli' => 'cli: separate php CLI processes (APCu refused: private cache per process)',
        };
    }

    public static function modeUnavailable(string $mode): ?string
    {
        return match ($mode) {
            'fork' => function_exists('pcntl_fork') ? null : 'pcntl not available in this PHP CLI',
            'fpm' => Fpm::unavailable(),
            'cli' => null,
        };
    }

    private function specFile(array $spec): string
    {
        $f = $this->ctx->tmp . '/spec-' . (++$this->seq) . '.json';
        file_put_contents($f, json_encode($spec));
        return $f;
    }

    /** Why $backend cannot run in $mode, or null. */
    public function unavailable(string $mode, string $backend, array $def): ?array
    {
        if ($mode === 'cli' && $def['apcu']) {
            return ['invalid', 'APCu in separate CLI processes: each has a private cache (valid in fork or fpm only)'];
        }
        foreach ($def['servers'] as $s) {
            if (($s === 'redis' && $this->ctx->redisPort === null) || ($s === 'memcached' && $this->ctx->memcachedPort === null)) {
                return ['skipped', "needs $s (started by --all)"];
            }
        }
        if (($why = ($def['requires'])($this->ctx)) !== null) {
            return ['missing', $why];
        }
        if ($mode === 'fpm') {
            if (!array_key_exists($backend, $this->fpmMissing)) {
                $r = $this->fpm->request(['action' => 'check', 'spec' => $this->specFile(['ctx' => $this->ctx->toArray(), 'backend' => $backend])], 60);
                $this->fpmMissing[$backend] = is_array($r) && array_key_exists('missing', $r) ? $r['missing'] : ($r['error'] ?? 'no answer');
            }
            if ($this->fpmMissing[$backend] !== null) {
                return ['missing', 'in php-fpm: ' . $this->fpmMissing[$backend]];
            }
        }
        return null;
    }

    public function startFpm(int $children): void
    {
        $this->fpm ??= new Fpm($this->ctx->tmp);
        if ($this->fpm->children !== $children) {
            $this->fpmMissing = [];
        }
        $this->fpm->start($children);
    }

    public function stop(): void
    {
        $this->fpm?->stop();
    }

    /**
     * @param list<int>|null $lists op list per client (default 0..N-1)
     */
    public function ops(string $mode, string $backend, int $clients, ?int $opsLimit, int $run, ?array $lists = null): array
    {
        $def = Backends::all()[$backend];
        $res = ['mode' => $mode, 'backend' => $backend, 'label' => $def['label'], 'run' => $run, 'clients_n' => $clients,
            'ops_per_client' => $opsLimit ?? $this->data->params['ops'], 'tags' => $def['tags']];
        if (($u = $this->unavailable($mode, $backend, $def)) !== null) {
            return $res + ['status' => $u[0], 'reason' => $u[1]];
        }
        $lists ??= range(0, $clients - 1);
        $spec = [
            'ctx' => $this->ctx->toArray(), 'backend' => $backend, 'data_dir' => $this->data->dir,
            'params' => $this->data->params, 'ops' => $opsLimit, 'refill' => $this->refill,
            'client_warmup' => $this->clientWarmup,
            'clean_trace' => $run === 0 ? null : $this->cleanTrace, 'run' => $run,   // run 0: the warm-up
        ];
        try {
            if ($mode === 'fpm') {
                $load = $this->fpm->request(['action' => 'load', 'spec' => $this->specFile($spec)]);
                if (isset($load['error'])) {
                    throw new \RuntimeException('load in php-fpm: ' . $load['error']);
                }
            } else {
                $load = Measure::load($this->ctx, $backend, $this->data);
            }
            $res['load'] = $load;
            $barrier = new Barrier($this->ctx->tmp . '/b' . (++$this->seq) . '.sock');
            $spec['barrier'] = $barrier->path;
            $procs = [];
            try {
                if ($mode === 'fork') {
                    foreach ($lists as $c => $list) {
                        $pid = pcntl_fork();
                        if ($pid === -1) {
                            throw new \RuntimeException('fork failed');
                        }
                        if ($pid === 0) {
                            $r = Client::run($spec + ['list' => $list], $c);
                            exit($r['errors'] ? 1 : 0);
                        }
                        $procs[$c] = $pid;
                    }
                    $alive = static function () use (&$procs): ?string {
                        foreach ($procs as $c => $pid) {
                            if (pcntl_waitpid($pid, $st, WNOHANG) === $pid) {
                                unset($procs[$c]);
                                return "client $c (pid $pid) exited with " . (pcntl_wifsignaled($st) ? 'signal ' . pcntl_wtermsig($st) : 'status ' . pcntl_wexitstatus($st));
                            }
                        }
                        return null;
                    };
                } else {
                    $files = [];
                    foreach ($lists as $c => $list) {
                        $specFile = $this->specFile($spec + ['list' => $list]);
                        if ($mode === 'fpm') {
                            [$p, $out] = $this->fpm->spawn(['action' => 'client', 'spec' => $specFile, 'client' => $c]);
                        } else {
                            $out = $this->ctx->tmp . "/client-$c.out";
                            $p = proc_open(
                                Php::selfCommand(["--internal-client=$specFile", "--client=$c"]),
                                [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $out, 'a']],
                                $pipes,
                                null,
                                Php::env()
                            );
                        }
                        $procs[$c] = [$p, $out];
                    }
                    $alive = static function () use (&$procs): ?string {
                        foreach ($procs as $c => [$p, $out]) {
                            if (!proc_get_status($p)['running']) {
                                return "client $c: " . trim(substr((string)@file_get_contents($out), 0, 2000));
                            }
                        }
                        return null;
                    };
                }
                $barrier->wait(count($lists), 120, $alive);
                $srv0 = $this->serverCpu($def);
                $t0 = $barrier->go();
                [$results, $tEnd] = $barrier->collect(1800);
                $srv1 = $this->serverCpu($def);
            } finally {
                $barrier->close();
                $tail = $this->reap($mode, $procs);
            }
            foreach ($tail as $c => $msg) {
                $results[$c]['errors'][] = $msg;
            }
            $res['clients'] = array_values($results);
            $res['wall_seconds'] = ($tEnd - $t0) / 1e9;
            if ($srv0 !== null && $srv1 !== null) {
                $res['server'] = self::serverDiff($srv0, $srv1);
            }
            $res['sum'] = self::sum($res['clients'], $def['tags'], $res['wall_seconds']);
            foreach ($res['clients'] as &$c) {
                unset($c['write_lat_ns'], $c['clean_lat_ns']);   // summarised in sum.latency
            }
            unset($c);
            $errors = [];
            $warnings = [];
            // Honest peers: N clients must have been N different processes.
            $pids = array_filter(array_column($res['clients'], 'pid'));
            if (count(array_unique($pids)) !== count($lists)) {
                $errors[] = 'clients did not run in ' . count($lists) . ' distinct processes (pids ' . implode(',', $pids) . ')';
            }
            // What the store says after the run (tagcache: verify() and stats()).
            try {
                $after = $mode === 'fpm'
                    ? ($this->fpm->request(['action' => 'after', 'spec' => $this->specFile($spec)], 120)['after'] ?? null)
                    : Measure::after($this->ctx, $backend);
            } catch (\Throwable $e) {
                $after = ['error' => $e->getMessage()];
            }
            if ($after !== null) {
                $res['after'] = $after;
                if (!empty($after['error'])) {
                    $errors[] = 'after the run: ' . $after['error'];
                }
                if (!empty($after['verify'])) {
                    $errors[] = 'verify() after the run: ' . implode('; ', array_slice($after['verify'], 0, 5));
                }
                foreach (['lock_recoveries', 'evictions'] as $k) {
                    if (!empty($after['stats'][$k])) {
                        $warnings[] = "stats()['$k'] = {$after['stats'][$k]} after the run";
                    }
                }
            }
            foreach ($res['clients'] as $r) {
                foreach ($r['errors'] ?? [] as $e) {
                    $errors[] = "client {$r['client']}: $e";
                }
                if (($r['write_failures'] ?? 0) > 0) {
                    $warnings[] = "client {$r['client']}: {$r['write_failures']} saves failed (save or write_control)";
                }
                if (($r['clean_failures'] ?? 0) > 0) {
                    $warnings[] = "client {$r['client']}: {$r['clean_failures']} cleans returned false";
                }
            }
            if (($load['failures'] ?? 0) > 0) {
                $warnings[] = "load: {$load['failures']} of {$load['records']} saves failed";
            }
            $res['status'] = $errors ? 'error' : 'ok';
            if ($errors) {
                $res['reason'] = implode('; ', array_slice($errors, 0, 5));
            }
            $res['warnings'] = $warnings;
        } catch (\Throwable $e) {
            $res['status'] = 'error';
            $res['reason'] = get_class($e) . ': ' . $e->getMessage();
        }
        return $res;
    }

    /**
     * The server's own account around an ops phase (the clients wait at the
     * barrier before it and have reported after it): RedisProbe::cpu() or
     * memcached_cpu(). null when the backend uses neither server or it
     * cannot be asked.
     */
    private function serverCpu(array $def): ?array
    {
        try {
            if (in_array('redis', $def['servers'], true) && $this->ctx->redisPort !== null && class_exists('Redis')) {
                return (new RedisProbe($this->ctx->redisPort))->cpu();
            }
            if (in_array('memcached', $def['servers'], true) && $this->ctx->memcachedPort !== null && class_exists('Memcached')) {
                return memcached_cpu($this->ctx->memcachedPort);
            }
        } catch (\Throwable) {
        }
        return null;
    }

    /** after - before of two serverCpu() snapshots: CPU seconds and, per command, [calls, usec] */
    private static function serverDiff(array $a, array $b): array
    {
        $cmds = [];
        foreach ($b['commands'] as $k => [$n, $us]) {
            $d = [$n - ($a['commands'][$k][0] ?? 0), $us - ($a['commands'][$k][1] ?? 0)];
            if ($d[0] > 0) {
                $cmds[$k] = $d;
            }
        }
        uasort($cmds, static fn ($x, $y) => $y[1] <=> $x[1] ?: $y[0] <=> $x[0]);
        return ['server' => $b['server'], 'user_s' => $b['user'] - $a['user'], 'sys_s' => $b['sys'] - $a['sys'],
            'commands' => $cmds];
    }

    /** Wait for the client processes; returns error text per client. */
    private function reap(string $mode, array $procs): array
    {
        $errors = [];
        foreach ($procs as $c => $p) {
            if ($mode === 'fork') {
                $deadline = microtime(true) + 60;
                while (($r = pcntl_waitpid($p, $st, WNOHANG)) === 0 && microtime(true) < $deadline) {
                    usleep(5000);
                }
                if ($r === 0) {
                    posix_kill($p, 9);
                    pcntl_waitpid($p, $st);
                    $errors[$c] = 'client did not exit; killed';
                } elseif ($r === $p && pcntl_wifsignaled($st)) {
                    $errors[$c] = 'client died of signal ' . pcntl_wtermsig($st);
                }
                continue;
            }
            [$proc, $out] = $p;
            $deadline = microtime(true) + 60;
            while (proc_get_status($proc)['running'] && microtime(true) < $deadline) {
                usleep(5000);
            }
            $st = proc_get_status($proc);
            if ($st['running']) {
                stop_proc($proc);
                $errors[$c] = 'client did not exit; stopped';
                continue;
            }
            proc_close($proc);
            if ($mode === 'fpm') {
                $body = Fpm::body($out);
                $j = json_decode($body, true);
                if (!is_array($j) || !empty($j['error'])) {
                    $errors[$c] = 'php-fpm: ' . trim(substr(is_array($j) ? $j['error'] : $body, 0, 1000));
                }
            } else {
                $text = (string)@file_get_contents($out);
                @unlink($out);
                if ($st['exitcode'] > 1 || $st['signaled']) {
                    $errors[$c] = 'exit ' . $st['exitcode'] . ($st['signaled'] ? ' signal ' . $st['termsig'] : '') . ': ' . trim(substr($text, 0, 1000));
                }
            }
        }
        return $errors;
    }

    /** The published sum: per client count / time in that op type, added up. */
    public static function sum(array $clients, bool $tags, float $wall): array
    {
        $s = ['reads' => 0.0, 'writes' => 0.0, 'cleans' => $tags ? 0.0 : null];
        $tot = ['reads' => 0, 'writes' => 0, 'cleans' => 0, 'read_misses' => 0];
        foreach ($clients as $r) {
            foreach (['read' => 'reads', 'write' => 'writes', 'clean' => 'cleans'] as $op => $k) {
                $n = $r[$k] ?? 0;
                $ns = $r[$op . '_ns'] ?? 0;
                $tot[$k] += $n;
                if ($s[$k] !== null && $n > 0 && $ns > 0) {
                    $s[$k] += $n / ($ns / 1e9);
                }
            }
            $tot['read_misses'] += $r['read_misses'] ?? 0;
        }
        $s['totals'] = $tot;
        $s['hit_rate'] = $tot['reads'] ? round(1 - $tot['read_misses'] / $tot['reads'], 4) : null;
        // All ops of all clients over the wall time from release to the last
        // result: counts what per-call timing cannot (a client descheduled
        // between calls) and is dominated by slow cleans where there are any.
        $s['ops_per_wall_s'] = $wall > 0 ? ($tot['reads'] + $tot['writes'] + $tot['cleans']) / $wall : null;
        $s['latency'] = [];
        foreach (['write', 'clean'] as $op) {
            $all = array_merge(...array_map(static fn ($r) => $r[$op . '_lat_ns'] ?? [], $clients));
            if ($all) {
                $s['latency'][$op] = self::distribution($all);
            }
        }
        return $s;
    }

    /**
     * The distribution of the calls' own times (ns) over all clients: median,
     * p90, p99, worst, and the share of all the time the slowest 5 % of the
     * calls took (near 5 % when every call costs the same; most of it when
     * a few calls were descheduled or waited for a lock or a server).
     */
    public static function distribution(array $ns): array
    {
        sort($ns);
        $n = count($ns);
        $q = static fn (float $p) => $ns[min($n - 1, (int)floor($p * $n))];
        $total = array_sum($ns);
        $slow = array_sum(array_slice($ns, (int)floor(0.95 * $n)));
        return ['calls' => $n, 'p50_ns' => $q(0.5), 'p90_ns' => $q(0.9), 'p99_ns' => $q(0.99), 'max_ns' => $ns[$n - 1],
            'mean_ns' => $total / $n, 'slowest_5pct_share' => $total > 0 ? round($slow / $total, 4) : null];
    }
}
