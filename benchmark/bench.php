<?php

/**
 * tagcache benchmark: the Magento cache workload of BENCHMARK.md, tagcache
 * side by side with its peers. See benchmark/README.md.
 *
 *   php benchmark/bench.php            shm + APCu, fork mode, about 2 minutes
 *   php benchmark/bench.php --all      the whole matrix (starts its own servers)
 *   php benchmark/bench.php --smoke    a few hundred ops per backend; exit 1 on any error
 *   php benchmark/bench.php init       (re)generate the data set only
 *   php benchmark/bench.php --help
 */

declare(strict_types=1);

namespace TagCacheBench;

require __DIR__ . '/lib/autoload.php';

Php::boot(__FILE__, $argv);

const USAGE = <<<'TXT'
Usage: php benchmark/bench.php [init] [options]

What runs
  (default)            TagCache\Shm and APCu through the same frontend, fork mode,
                       3 runs + latency, scaling, growth to 100k (about 2 minutes)
  --all                every backend, modes fork,fpm; starts redis-server and
                       memcached on 127.0.0.1 (free ports) and stops them after
  --smoke              a correctness check and a few hundred ops per backend that
                       needs no server (with --all: every backend); exit 1 on error
  --backends=a,b       choose backends (see --list); --list [--json] shows them and why not
  --goals              the backends of issue 15's and issue 10's rows (tagcache and the peers
                       each is measured against), so that the goals table is complete
  --modes=fork,fpm,cli process modes (default fork; --all: fork,fpm; see README)
  --runs=N             runs per measurement, medians reported (default 3)
  --clients=N          concurrent clients (default 4)
  --ops=N              use the first N ops of each client's list (default all 400,000:
                       Shm and File then run for over a second; --list-ops=N longer lists)
  --warmup=N           before the first run, one ops phase of N ops a client (default
                       100,000; 0: none) of the first backend that runs, discarded; each
                       run also starts one backend further along the list
  --no-refill          a read miss is not followed by an (untimed) save of the record
  --client-warmup=N    each client first runs N ops of the next client's list, untimed, before
                       the start barrier: a worker that has served requests, not a fresh fork
  --clean-trace=DIR    each client writes its cleans one by one to DIR (getrusage around
                       each; a -DTC_SHM_TRACE build of the extension adds its lock trace);
                       php benchmark/clean-trace.php DIR sums them up
  --no-latency --no-scaling --no-growth      skip a part
  --only-ops           skip latency, scaling and growth
  --scaling=1,2,4,8    client counts for the scaling table; --scaling-ops=N (20000);
                       backends whose load takes > --scaling-max-load=S (10) are skipped
  --growth=10000,100000 record counts for the growth table; --growth-1m adds 1,000,000
  --growth-budget=S    seconds allowed per growth step (default 120)
  --no-servers         never start redis-server / memcached
  --redis-port=N --memcached-port=N   use a server already listening on
                       127.0.0.1:N instead of starting one (it is flushed!)
Multi-node modes (instead of the tables above; default backends tagcache-twolevel,
zend-twolevels-apcu-cmredis, m2-remote-sync; see README "Multi-node")
  --nodes=N            N nodes (separate processes, each its own local level), --clients
                       readers each (default 2), node 0 also cleans: reads/s and stale reads
  --seconds=S          readers read their list over again for S seconds (default 10);
                       --node-reads=N stops a reader sooner; --clean-every-ms=MS (default 50)
  --bound=S            staleness bound for counting (default: --max-staleness, else 1)
  --max-staleness=S    TagCache\TwoLevel's max_staleness (default its own, 1 s)
  --lag=K              lag mode: K cleans on node 0, the time to the first miss on node 1
                       (median, p90, worst); --lag-every-ms=MS (default 20), --lag-timeout=S
                       (default 3 x bound + 2)
Data and output
  init                 generate the data set and stop (--force to regenerate)
  --seed=N --keys=N --tags=N --lists=N --list-ops=N   data set parameters
  --data=DIR           data set directory (default benchmark/data/<params>)
  --out=DIR            results directory (default benchmark/results/<date>)
  --keep-segment       leave the shm segments in /dev/shm
  --file-dir=DIR       where file stores write (default a temp dir under /tmp)
Environment
  TAGCACHE_MODULE      tagcache.so to load (default ../modules/tagcache.so)
  ZF1_PATH CM_CACHE_BACKEND_FILE_PATH CM_CACHE_BACKEND_REDIS_PATH CREDIS_PATH
                       sources of the optional Zend/Cm peers
  TAGCACHE_BENCH_OPTIONS  JSON options per tagcache backend (see lib/Backends.php)
TXT;

// ---------------------------------------------------------------- arguments
[$opt, $cmd] = Php::args($argv);
$int = static fn (string $k, ?int $d) => isset($opt[$k]) ? (int)$opt[$k] : $d;
$list = static fn (string $k, ?array $d) => isset($opt[$k]) && $opt[$k] !== true
    ? array_values(array_filter(array_map('trim', explode(',', (string)$opt[$k])), 'strlen')) : $d;

if (isset($opt['help']) || isset($opt['h'])) {
    echo USAGE, "\n";
    exit(0);
}

// ---------------------------------------------------------- internal entries
if (isset($opt['internal-node'])) {
    Php::$ownerPid = -1;
    exit(Nodes::node(json_decode((string)file_get_contents($opt['internal-node']), true)));
}
if (isset($opt['internal-client'])) {
    Php::$ownerPid = -1;
    $spec = json_decode((string)file_get_contents($opt['internal-client']), true);
    $r = Client::run($spec, (int)$opt['client']);
    exit($r['errors'] ? 1 : 0);
}
if (isset($opt['internal-growth'])) {
    Php::$ownerPid = -1;
    $spec = json_decode((string)file_get_contents($opt['internal-growth']), true);
    try {
        $r = Measure::growth(Context::fromArray($spec['ctx']), $spec['backend'], $spec['records'], $spec['params'], $spec['budget']);
    } catch (\Throwable $e) {
        $r = ['status' => 'error', 'reason' => get_class($e) . ': ' . $e->getMessage()];
    }
    echo "\nRESULT ", json_encode($r), "\n";
    exit(0);
}

$smoke = isset($opt['smoke']);
$all = isset($opt['all']);
$quiet = isset($opt['quiet']);
$log = static function (string $s) use ($quiet): void {
    if (!$quiet) {
        fwrite(STDERR, $s . "\n");
    }
};

// ------------------------------------------------------------------ data set
$params = [
    'seed' => $int('seed', Dataset::DEFAULTS['seed']),
    'keys' => $int('keys', $smoke ? 150 : Dataset::DEFAULTS['keys']),
    'tags' => $int('tags', Dataset::DEFAULTS['tags']),
    'clients' => $int('lists', max(8, $int('clients', 4))),
    'ops' => $int('list-ops', $smoke ? 400 : Dataset::DEFAULTS['ops']),
];
if ($smoke) {
    // The smoke test must see writes and cleans in a few hundred ops.
    $params += ['write_chance' => 25, 'clean_chance' => 50];
}
$params = array_merge(Dataset::DEFAULTS, $params);
$tag = $params == array_merge(Dataset::DEFAULTS, ['clients' => 8]) ? 'default'
    : sprintf('s%d-k%d-t%d-c%d-o%d', $params['seed'], $params['keys'], $params['tags'], $params['clients'], $params['ops']);
$tmpRoot = sys_get_temp_dir() . '/tagcache-bench-' . getmypid();
$dataDir = $opt['data'] ?? ($smoke ? "$tmpRoot/data" : __DIR__ . "/data/$tag");

if (in_array('init', $cmd, true)) {
    Dataset::generate($dataDir, $params, static fn ($s) => print("$s\n"));
    exit(0);
}

// --------------------------------------------------------------- what to run
$defs = Backends::all();
if (isset($opt['list'])) {
    $ctx = new Context($tmpRoot);
    if (isset($opt['json'])) {
        $out = [];
        foreach ($defs as $name => $d) {
            $why = ($d['requires'])($ctx);
            $out[$name] = ['label' => $d['label'], 'group' => $d['group'], 'tags' => $d['tags'], 'apcu' => $d['apcu'],
                'servers' => $d['servers'], 'available' => $why === null, 'reason' => $why];
        }
        echo json_encode($out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
        rm_tree($tmpRoot);
        exit(0);
    }
    foreach ($defs as $name => $d) {
        $why = ($d['requires'])($ctx);
        printf(
            "%-28s %-40s %-9s %s%s\n",
            $name,
            $d['label'],
            $d['group'],
            $why === null ? 'available' : "missing: $why",
            $d['servers'] ? ' (needs ' . implode(', ', $d['servers']) . ')' : ''
        );
    }
    rm_tree($tmpRoot);
    exit(0);
}
$nodesMode = !$smoke && (isset($opt['nodes']) || isset($opt['lag']));
$backends = $list('backends', null)
    ?? ($nodesMode ? Nodes::DEFAULT_SET : (isset($opt['goals']) ? Goals::backends()
        : ($all ? array_keys($defs) : ($smoke ? Backends::serverless() : Backends::DEFAULT_SET))));
foreach ($backends as $b) {
    if (!isset($defs[$b])) {
        fwrite(STDERR, "unknown backend '$b'; --list shows them\n");
        exit(2);
    }
}
$modes = $list('modes', null) ?? ($all ? ['fork', 'fpm'] : ['fork']);
foreach ($modes as $m) {
    if (!in_array($m, Runner::MODES, true)) {
        fwrite(STDERR, "unknown mode '$m' (fork, fpm, cli)\n");
        exit(2);
    }
}
$runs = max(1, $int('runs', $smoke ? 1 : 3));
$clients = max(1, $int('clients', $smoke ? 2 : 4));
$opsLimit = $int('ops', $smoke ? 300 : null);
$onlyOps = isset($opt['only-ops']);
$doLatency = !$onlyOps && !isset($opt['no-latency']);
$doScaling = !$onlyOps && !$smoke && !isset($opt['no-scaling']);
$doGrowth = !$onlyOps && !$smoke && !isset($opt['no-growth']);
$scalingN = array_map('intval', $list('scaling', ['1', '2', '4', '8']));
$scalingOps = $int('scaling-ops', 20000);
$growthSizes = array_map('intval', $list('growth', ['10000', '100000']));
if (isset($opt['growth-1m'])) {
    $growthSizes[] = 1000000;
}
$growthSizes = array_values(array_unique($growthSizes));
sort($growthSizes);
$growthBudget = (float)($opt['growth-budget'] ?? 120);
if ($clients > $params['clients'] || ($doScaling && max($scalingN) > $params['clients'])) {
    fwrite(STDERR, "more clients than op lists: use --lists=N\n");
    exit(2);
}

// ------------------------------------------------------------------- set up
@mkdir($tmpRoot, 0700, true);
$ctx = new Context($tmpRoot);
if ($smoke) {
    $ctx->shmSegment = 'bench_smoke_' . getmypid();
    $ctx->shmSize = '16M';
} else {
    // a segment of this run's own: two runs at once on one machine (other
    // builds among them) must not flush, recreate or unlink each other's
    $ctx->shmSegment = 'bench_' . getmypid();
}
if (isset($opt['file-dir'])) {
    $ctx->fileDir = rtrim((string)$opt['file-dir'], '/') . '/tagcache-bench-' . getmypid();
    if (!is_dir($ctx->fileDir) && !@mkdir($ctx->fileDir, 0700, true)) {
        fwrite(STDERR, "cannot create {$ctx->fileDir}\n");
        exit(2);
    }
}
if ($nodesMode) {
    // segments of their own: node runs make N of them, named after this run
    $ctx->shmSegment = 'bench_nodes_' . getmypid();
    $ctx->shmSize = (string)($opt['shm-size'] ?? '64M');
}
if (isset($opt['max-staleness'])) {
    $ctx->maxStaleness = (float)$opt['max-staleness'];
}
$segments = [$ctx->shmSegment, $ctx->shmSegment . '_tl'];
$servers = new Servers($tmpRoot);
$runner = null;
$cleanup = static function () use (&$runner, $servers, $tmpRoot, &$segments, $opt, $ctx): void {
    if (!Php::isOwner()) {
        return;
    }
    foreach ([static fn () => $runner?->stop(), $servers->stop(...)] as $step) {
        try {
            $step();
        } catch (\Throwable $e) {
            fwrite(STDERR, 'cleanup: ' . $e->getMessage() . "\n");
        }
    }
    rm_tree($tmpRoot);
    // per-node local levels on tmpfs (Context::shmDir)
    foreach (glob('/dev/shm/' . basename($tmpRoot) . '-*', GLOB_ONLYDIR) ?: [] as $d) {
        rm_tree($d);
    }
    if ($ctx->fileDir !== null) {
        rm_tree($ctx->fileDir);
    }
    if (getenv('TAGCACHE_BENCH_MODULE_MADE') === (string)getmypid() && getenv('TAGCACHE_BENCH_MODULE')) {
        @unlink((string)getenv('TAGCACHE_BENCH_MODULE'));
    }
    if (!isset($opt['keep-segment'])) {
        $dir = extension_loaded('tagcache') ? (ini_get('tagcache.shm.dir') ?: '/dev/shm') : '/dev/shm';
        foreach ($segments as $s) {
            @unlink("$dir/tagcache.$s");
            // TwoLevel's node file beside its fast segment
            @unlink("$dir/tagcache.$s.twolevel");
        }
    }
};
register_shutdown_function($cleanup);
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    foreach ([SIGINT, SIGTERM] as $sig) {
        pcntl_signal($sig, static function () {
            exit(130);
        });
    }
}

$data = Dataset::ensure($dataDir, $params, isset($opt['force']), $log);
$runner = new Runner($ctx, $data, \Closure::fromCallable($log));
$runner->refill = !isset($opt['no-refill']);
$runner->clientWarmup = max(0, $int('client-warmup', 0));
if (isset($opt['clean-trace'])) {
    $runner->cleanTrace = rtrim((string)$opt['clean-trace'], '/');
    if (!is_dir($runner->cleanTrace) && !@mkdir($runner->cleanTrace, 0700, true)) {
        fwrite(STDERR, "cannot create {$runner->cleanTrace}\n");
        exit(2);
    }
}

$needs = [];
foreach ($backends as $b) {
    foreach ($defs[$b]['servers'] as $s) {
        $needs[$s] = true;
    }
}
if (isset($opt['redis-port'])) {
    $ctx->redisPort = (int)$opt['redis-port'];
    unset($needs['redis']);
}
if (isset($opt['memcached-port'])) {
    $ctx->memcachedPort = (int)$opt['memcached-port'];
    unset($needs['memcached']);
}
if (!isset($opt['no-servers'])) {
    try {
        if (isset($needs['redis'])) {
            $ctx->redisPort = $servers->redis();
            $log("redis-server on 127.0.0.1:{$ctx->redisPort}");
        }
        if (isset($needs['memcached'])) {
            $ctx->memcachedPort = $servers->memcached();
            $log("memcached on 127.0.0.1:{$ctx->memcachedPort}");
        }
    } catch (\Throwable $e) {
        $log('server: ' . $e->getMessage());
    }
}

$cpuModel = '';
foreach (@file('/proc/cpuinfo') ?: [] as $l) {
    if (str_starts_with($l, 'model name')) {
        $cpuModel = trim(substr($l, strpos($l, ':') + 1));
        break;
    }
}
$res = [
    'meta' => [
        'date' => date('Y-m-d H:i:s T'),
        'command' => implode(' ', array_slice($argv, 0)),
        'php' => PHP_VERSION,
        'cpus' => (int)trim((string)@shell_exec('nproc 2>/dev/null')) ?: 1,
        'cpu_model' => $cpuModel,
        'tagcache_version' => phpversion('tagcache') ?: null,
        'tagcache_module' => extension_loaded('tagcache')
            ? ['source' => Php::tagcacheSource(), 'loaded_copy' => Php::tagcacheModule(), 'md5' => @md5_file(Php::tagcacheModule()) ?: null]
            : null,
        'extensions' => array_filter(['apcu' => phpversion('apcu'), 'redis' => phpversion('redis'), 'memcached' => phpversion('memcached')]),
        'modes' => $modes,
        'clients' => $clients,
        'runs' => $runs,
        'ops_per_client' => $opsLimit ?? $params['ops'],
        'seed' => $params['seed'],
        'data_dir' => $dataDir,
        'data' => $data->description(),
        'servers' => $servers->names(),
        'shm' => ['segment' => $ctx->shmSegment, 'size' => $ctx->shmSize],
        'notes' => [
            'figures vary by up to 40 % between runs on such VMs: compare within one run (the ratios), never across machines',
            'per-client ops/s = ops of that type / time inside those calls (hrtime around each call, ~40 ns of it timer overhead)',
            'cleans "n/a": the backend has no tags; the op list\'s cleans are skipped for it',
            'load time = sum of the 10,000 save() calls, write_control included',
        ],
        'client_warmup' => $runner->clientWarmup,
    ],
    'ops' => [], 'summary' => [], 'ratios' => [], 'latency' => [], 'scaling' => [], 'growth' => [],
];
if ($runner->clientWarmup > 0) {
    $res['meta']['notes'][] = "clients warmed up (--client-warmup={$runner->clientWarmup}): each ran that many ops of the next client's list, untimed, before the start barrier";
}

$modeOk = [];
foreach ($modes as $m) {
    $why = Runner::modeUnavailable($m);
    if ($why !== null) {
        $log("mode $m unavailable: $why");
    }
    $modeOk[$m] = $why;
}

// -------------------------------------------------------------------- smoke
$smokeErrors = [];
if ($smoke) {
    $rows = [];
    foreach ($backends as $b) {
        $d = $defs[$b];
        $row = ['backend' => $b, 'status' => 'ok', 'detail' => []];
        $u = $runner->unavailable('fork', $b, $d);
        if ($u !== null) {
            $rows[$b] = ['backend' => $b, 'status' => $u[0], 'detail' => [$u[1]]];
            continue;
        }
        try {
            $errs = Measure::check($ctx, $b);
        } catch (\Throwable $e) {
            $errs = [get_class($e) . ': ' . $e->getMessage()];
        }
        if ($errs) {
            $row['status'] = 'error';
            $row['detail'] = array_merge($row['detail'], $errs);
        }
        $rows[$b] = $row;
    }
    foreach ($modes as $m) {
        if ($modeOk[$m] !== null) {
            $smokeErrors[] = "mode $m: {$modeOk[$m]}";
            continue;
        }
        if ($m === 'fpm') {
            try {
                $runner->startFpm($clients);
            } catch (\Throwable $e) {
                $smokeErrors[] = 'php-fpm: ' . $e->getMessage();
                continue;
            }
        }
        foreach ($backends as $b) {
            if (in_array($rows[$b]['status'], ['missing', 'skipped'], true)) {
                continue;
            }
            $r = $runner->ops($m, $b, $clients, $opsLimit, 1);
            $res['ops'][] = $r;
            if ($r['status'] === 'invalid') {
                $rows[$b]['detail'][] = "$m: invalid";
                continue;
            }
            // A failed save or clean is an error for tagcache; for a peer it is
            // that backend's own behaviour under concurrency (Zend File's racy
            // cleans, TwoLevels' saves), reported but not failing the smoke.
            if ($r['status'] !== 'ok' || ($r['warnings'] && $defs[$b]['group'] === 'tagcache')) {
                $rows[$b]['status'] = 'error';
                $rows[$b]['detail'][] = "$m: " . ($r['reason'] ?? implode('; ', $r['warnings']));
                continue;
            }
            $t = $r['sum']['totals'];
            $rows[$b]['detail'][] = sprintf('%s: %d reads %d writes %s cleans, reads %s/s', $m, $t['reads'], $t['writes'],
                $r['tags'] ? $t['cleans'] : 'n/a', Report::num($r['sum']['reads'], true))
                . ($r['warnings'] ? ' (peer warnings: ' . implode('; ', $r['warnings']) . ')' : '');
        }
        if ($m === 'fpm') {
            $runner->stop();
        }
    }
    if ($doLatency) {
        foreach ($backends as $b) {
            if ($rows[$b]['status'] !== 'ok') {
                continue;
            }
            try {
                $l = Measure::latency($ctx, $b, $data, 100, 0.1, 50);
                $bad = array_filter($l, static fn ($x) => is_array($x) && $x['failures'] > 0);
                if ($bad) {
                    $rows[$b]['status'] = 'error';
                    $rows[$b]['detail'][] = 'latency loop failures: ' . json_encode($bad);
                }
            } catch (\Throwable $e) {
                $rows[$b]['status'] = 'error';
                $rows[$b]['detail'][] = 'latency: ' . $e->getMessage();
            }
        }
    }
    echo "tagcache benchmark smoke: modes " . implode(',', $modes) . ", $clients clients x " . ($opsLimit ?? 'all') . " ops, {$params['keys']} records\n";
    foreach ($rows as $b => $row) {
        printf("SMOKE %-28s %-8s %s\n", $b, $row['status'], implode(' | ', $row['detail']));
        if ($row['status'] === 'error') {
            $smokeErrors[] = $b;
        }
    }
    if (isset($opt['out'])) {
        $res['summary'] = Report::summarize($res['ops']);
        Report::write($opt['out'], $res, Report::text($res));
    }
    echo $smokeErrors ? 'SMOKE FAILED: ' . implode(', ', $smokeErrors) . "\n" : "SMOKE OK\n";
    exit($smokeErrors ? 1 : 0);
}

// ----------------------------------------------------------- multi-node modes
if ($nodesMode) {
    $bound = (float)($opt['bound'] ?? $ctx->maxStaleness ?? 1.0);
    $np = [
        'nodes' => max(2, $int('nodes', 2)),
        'clients' => max(1, $int('clients', 2)),
        'seconds' => max(1.0, (float)($opt['seconds'] ?? 10)),
        'reads' => max(1, $int('node-reads', 100_000_000)),
        'clean_every_ms' => max(1.0, (float)($opt['clean-every-ms'] ?? 50)),
        'bound' => $bound,
        'lag' => max(1, $int('lag', 1000)),
        'lag_every_ms' => max(1.0, (float)($opt['lag-every-ms'] ?? 20)),
        // a record still hit past the timeout was served beyond the bound: the timeout is at least the bound
        'lag_timeout' => max($bound, (float)($opt['lag-timeout'] ?? 3 * $bound + 2)),
    ];
    if ($np['nodes'] * $np['clients'] > min($params['clients'], Truth::MAX_READERS)) {
        fwrite(STDERR, "more readers (nodes x clients) than op lists: use --lists=N\n");
        exit(2);
    }
    $segments = array_merge($segments, Nodes::segments($ctx, $np['nodes']));
    $nodeModes = array_values(array_filter([isset($opt['nodes']) ? 'stale' : null, isset($opt['lag']) ? 'lag' : null]));
    $nodes = new Nodes($ctx, $data, $runner, \Closure::fromCallable($log));
    $res['meta']['nodes'] = $np;
    $res['nodes'] = [];
    foreach ($nodeModes as $nm) {
        for ($run = 1; $run <= $runs; ++$run) {
            foreach ($backends as $b) {
                $log("$nm: $b, run $run of $runs");
                $r = $nodes->run($nm, $b, $np, $run);
                $res['nodes'][] = $r;
                $log("  {$r['status']}" . (isset($r['reason']) ? ": {$r['reason']}" : '') . (isset($r['sum']) ? ' ' . json_encode($r['sum']) : ''));
            }
        }
    }
    $res['meta']['notes'] = array_slice($res['meta']['notes'], 0, 1);
    $text = Report::text($res) . Nodes::text($res['nodes'], $np);
    echo $text;
    $files = Nodes::write($opt['out'] ?? (__DIR__ . '/results/' . date('Ymd-His') . '-nodes'), $res, $text);
    echo "\nwritten: ", implode(' ', $files), "\n";
    exit(array_filter($res['nodes'], static fn ($r) => $r['status'] === 'error') ? 1 : 0);
}

// ---------------------------------------------------------------- ops table
$t0 = microtime(true);
// a progress prefix for long runs (--all): step/total, elapsed, and a rough time left
$steps = $runs * count($modes) * count($backends);
$step = 0;
$progress = static function () use (&$step, $steps, $t0): string {
    $el = microtime(true) - $t0;
    $left = $step > 0 ? $el / $step * ($steps - $step) : 0;
    return sprintf('[%d/%d %s, ~%s left] ', $step, $steps, gmdate($el >= 3600 ? 'G\hi\m' : 'i:s', (int)$el),
        $left >= 60 ? round($left / 60) . ' min' : (int)$left . ' s');
};
// Warm-up: the first ops phase of a session ran 10 to 35 % slower than the
// same backend's later ones (fresh tmpfs pages, cold caches and page cache),
// whichever backend it was; one short phase, discarded, goes first. And
// each run starts one backend further along, so that over runs no backend
// always runs first or always after the same one.
$warmOps = $int('warmup', $smoke ? 0 : 100000);
$warmed = [];
$order = static function (int $run) use ($backends): array {
    $k = ($run - 1) % max(1, count($backends));
    return array_merge(array_slice($backends, $k), array_slice($backends, 0, $k));
};
for ($run = 1; $run <= $runs; $run++) {
    foreach ($modes as $m) {
        if ($modeOk[$m] !== null) {
            if ($run === 1) {
                foreach ($backends as $b) {
                    $res['ops'][] = ['mode' => $m, 'backend' => $b, 'label' => $defs[$b]['label'], 'run' => $run,
                        'tags' => $defs[$b]['tags'], 'status' => 'skipped', 'reason' => "mode $m: {$modeOk[$m]}"];
                }
            }
            $step += count($backends);
            continue;
        }
        if ($m === 'fpm') {
            try {
                $runner->startFpm($clients);
            } catch (\Throwable $e) {
                $modeOk[$m] = $e->getMessage();
                $log("php-fpm: {$e->getMessage()}");
                $step += count($backends);
                continue;
            }
        }
        if ($warmOps > 0 && !isset($warmed[$m])) {
            $warmed[$m] = true;
            foreach ($backends as $b) {
                $w = $runner->ops($m, $b, $clients, min($warmOps, $opsLimit ?? $warmOps), 0);
                if ($w['status'] === 'ok') {
                    $log(sprintf('[warm-up %s] %-40s %s ops a client, discarded', $m, $defs[$b]['label'], Report::num($w['ops_per_client'], true)));
                    break;
                }
            }
        }
        foreach ($order($run) as $b) {
            $r = $runner->ops($m, $b, $clients, $opsLimit, $run);
            $res['ops'][] = $r;
            $step++;
            if ($r['status'] === 'ok') {
                $log($progress() . sprintf(
                    '[run %d/%d %s] %-40s reads/s %7s  writes/s %7s  cleans/s %7s  load %.2f s%s',
                    $run,
                    $runs,
                    $m,
                    $defs[$b]['label'],
                    Report::num($r['sum']['reads'], true),
                    Report::num($r['sum']['writes'], true),
                    Report::num($r['sum']['cleans'], true),
                    $r['load']['seconds'],
                    $r['warnings'] ? '  WARN ' . implode('; ', $r['warnings']) : ''
                ));
            } elseif ($run === 1 || $r['status'] === 'error') {
                $log($progress() . sprintf('[run %d/%d %s] %-40s %s: %s', $run, $runs, $m, $defs[$b]['label'], $r['status'], $r['reason'] ?? ''));
            }
        }
    }
}
$runner->stop();
$res['summary'] = Report::summarize($res['ops']);
$res['ratios'] = Report::ratios($res['ops']);
// Long enough? The fastest store's clients must run their lists for over a
// second (issue 15): the shortest time a client spent inside its calls.
$short = null;
foreach ($res['ops'] as $r) {
    if ($r['status'] !== 'ok') {
        continue;
    }
    foreach ($r['clients'] as $c) {
        $busy = (($c['read_ns'] ?? 0) + ($c['write_ns'] ?? 0) + ($c['clean_ns'] ?? 0)) / 1e9;
        if ($short === null || $busy < $short[0]) {
            $short = [$busy, $r['backend'], $r['mode'], ($r['wall_seconds'] ?? 0)];
        }
    }
}
if ($short !== null) {
    $res['meta']['shortest_client'] = ['seconds_in_calls' => $short[0], 'backend' => $short[1], 'mode' => $short[2], 'wall_seconds' => $short[3]];
    $res['meta']['notes'][] = sprintf('shortest client: %.2f s inside its calls (%s, %s; ops phase wall %.2f s)%s', $short[0], $short[1], $short[2],
        $short[3], $short[0] < 1 ? ': UNDER 1 s, use longer op lists (--list-ops=N, then --force)' : '');
    if ($short[0] < 1) {
        $log(sprintf('warning: %s ran its op list in %.2f s, under a second: use --list-ops=N', $short[1], $short[0]));
    }
}
$res['goals'] = Goals::evaluate($res['ratios']);
$res['goals_twolevel'] = Goals::evaluate($res['ratios'], Goals::ROWS_TWOLEVEL);
$log(sprintf('ops table done in %.0f s', microtime(true) - $t0));

// ------------------------------------------------------------------ latency
if ($doLatency) {
    $t0 = microtime(true);
    foreach ($backends as $b) {
        $u = $runner->unavailable('fork', $b, $defs[$b]);
        if ($u !== null) {
            $res['latency'][$b] = ['label' => $defs[$b]['label'], 'status' => $u[0], 'reason' => $u[1]];
            continue;
        }
        $per = [];
        try {
            for ($run = 1; $run <= $runs; $run++) {
                $per[] = Measure::latency($ctx, $b, $data, 20000, 1.0);
            }
        } catch (\Throwable $e) {
            $res['latency'][$b] = ['label' => $defs[$b]['label'], 'status' => 'error', 'reason' => $e->getMessage()];
            continue;
        }
        $median = [];
        $fail = [];
        foreach (array_keys($per[0]) as $k) {
            if ($k === 'records') {
                $median[$k] = $per[0][$k];
                continue;
            }
            $median[$k] = $per[0][$k] === null ? null : Report::median(array_map(static fn ($p) => $p[$k]['ns_per_op'], $per));
            $f = array_sum(array_map(static fn ($p) => $p[$k]['failures'] ?? 0, $per));
            if ($f) {
                $fail[$k] = $f;
            }
        }
        $res['latency'][$b] = ['label' => $defs[$b]['label'], 'median' => $median, 'failures' => $fail, 'runs' => $per];
        $log(sprintf('[latency] %-40s hit %s ns, miss %s ns, save %s ns, clean %s ns', $defs[$b]['label'],
            Report::num($median['load_hit']), Report::num($median['load_miss']), Report::num($median['save_500b']), Report::num($median['clean_1tag'])));
    }
    $log(sprintf('latency done in %.0f s', microtime(true) - $t0));
}

// ------------------------------------------------------------------ scaling
if ($doScaling && Runner::modeUnavailable('fork') === null) {
    $t0 = microtime(true);
    $res['scaling'] = ['mode' => 'fork', 'ops' => $scalingOps, 'clients' => $scalingN, 'backends' => []];
    $slowLoad = (float)($opt['scaling-max-load'] ?? 10);
    foreach ($backends as $b) {
        $loadS = null;
        foreach ($res['summary'] as $row) {
            if ($row['backend'] === $b && $row['status'] === 'ok') {
                $loadS = max($loadS ?? 0, $row['load_seconds']);
            }
        }
        if ($loadS !== null && $loadS > $slowLoad) {
            $res['scaling']['backends'][$b][$scalingN[0]] = ['status' => 'skipped',
                'reason' => sprintf('a load takes %.0f s (> --scaling-max-load=%.0f)', $loadS, $slowLoad)];
            $log("[scaling] {$defs[$b]['label']}: skipped, a load takes " . round($loadS) . ' s');
            continue;
        }
        foreach ($scalingN as $n) {
            $rs = [];
            $st = null;
            for ($run = 1; $run <= $runs; $run++) {
                $r = $runner->ops('fork', $b, $n, $scalingOps, $run);
                if ($r['status'] !== 'ok') {
                    $st = $r;
                    break;
                }
                $rs[] = $r;
            }
            $res['scaling']['backends'][$b][$n] = $st !== null
                ? ['status' => $st['status'], 'reason' => $st['reason'] ?? '']
                : ['reads' => Report::median(array_map(static fn ($r) => $r['sum']['reads'], $rs)),
                    'ops_per_wall_s' => Report::median(array_map(static fn ($r) => $r['sum']['ops_per_wall_s'], $rs)),
                    'runs' => array_map(static fn ($r) => ['reads' => $r['sum']['reads'], 'ops_per_wall_s' => $r['sum']['ops_per_wall_s']], $rs)];
            if ($st !== null) {
                break;
            }
        }
        $log("[scaling] {$defs[$b]['label']}: " . implode(', ', array_map(
            static fn ($n, $x) => "$n: " . (isset($x['status']) ? $x['status'] : Report::num($x['reads'], true)),
            array_keys($res['scaling']['backends'][$b]),
            $res['scaling']['backends'][$b]
        )));
    }
    $log(sprintf('scaling done in %.0f s', microtime(true) - $t0));
}

// ------------------------------------------------------------------- growth
if ($doGrowth) {
    $t0 = microtime(true);
    foreach ($backends as $b) {
        $d = $defs[$b];
        $u = $runner->unavailable('fork', $b, $d);
        $prev = null;
        foreach ($res['summary'] as $row) {
            // The ops table's load time is the first estimate.
            if ($row['backend'] === $b && $row['status'] === 'ok' && $row['load_seconds'] !== null) {
                $prev = ['records' => $params['keys'], 'wall_seconds' => max($prev['wall_seconds'] ?? 0, $row['load_seconds'])];
            }
        }
        foreach ($growthSizes as $n) {
            if ($u !== null) {
                $res['growth'][$b][$n] = ['status' => $u[0], 'reason' => $u[1]];
                break;
            }
            if ($prev !== null && $prev['records'] > 0) {
                $est = $prev['wall_seconds'] * $n / $prev['records'];
                if ($est > $growthBudget) {
                    $res['growth'][$b][$n] = ['status' => 'skipped', 'reason' => sprintf('estimated %.0f s > --growth-budget=%.0f', $est, $growthBudget)];
                    continue;
                }
            }
            $gctx = Context::fromArray($ctx->toArray());
            $gctx->shmSegment = 'bench_g' . $n . '_' . getmypid();
            $gctx->shmSize = max(64, (int)ceil($n * 2048 / 1048576)) . 'M';
            $segments[] = $gctx->shmSegment;
            $segments[] = $gctx->shmSegment . '_tl';
            $spec = $ctx->tmp . "/growth-$b-$n.json";
            file_put_contents($spec, json_encode(['ctx' => $gctx->toArray(), 'backend' => $b, 'records' => $n,
                'params' => $params, 'budget' => $growthBudget]));
            $ini = ['memory_limit' => '-1'];
            if ($d['apcu']) {
                $ini['apc.shm_size'] = max(128, (int)ceil($n * 2048 / 1048576)) . 'M';
            }
            $out = [];
            $p = proc_open(Php::selfCommand(["--internal-growth=$spec"]), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                $pipes, null, Php::env(['TAGCACHE_BENCH_INI' => json_encode($ini)]));
            $stdout = stream_get_contents($pipes[1]);
            $stderr = stream_get_contents($pipes[2]);
            proc_close($p);
            if (preg_match('/^RESULT (.*)$/m', $stdout, $mm)) {
                $g = json_decode($mm[1], true);
            } else {
                $g = ['status' => 'error', 'reason' => trim(substr($stdout . $stderr, 0, 1000))];
            }
            $res['growth'][$b][$n] = $g;
            $log(sprintf('[growth] %-40s %8d records: %s', $d['label'], $n, isset($g['status'])
                ? "{$g['status']}: {$g['reason']}"
                : sprintf('load %.2f s (%.1f us/save), clean %s ms, %s B/record', $g['load_seconds'], $g['save_us'],
                    $g['clean_ms_median'] ?? 'n/a', $g['footprint']['bytes_per_record'] ?? '?')));
            $prev = isset($g['status']) ? null : $g;
            if (isset($g['status']) || !$g['complete']) {
                break;
            }
            @unlink('/dev/shm/tagcache.' . $gctx->shmSegment);
        }
    }
    $log(sprintf('growth done in %.0f s', microtime(true) - $t0));
}

// ------------------------------------------------------------------- report
$text = Report::text($res) . ($res['ratios'] ? Goals::text($res['ratios'], $res['summary']) : '');
echo $text;
$out = $opt['out'] ?? __DIR__ . '/results/' . date('Ymd-His');
$files = Report::write($out, $res, $text);
echo "\nwritten: ", implode(' ', $files), "\n";
$failed = array_filter($res['summary'], static fn ($r) => $r['status'] === 'error');
exit($failed ? 1 : 0);
