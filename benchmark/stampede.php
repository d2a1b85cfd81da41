<?php

/**
 * Stampede mode (issue 14): what a clean of a hot entry costs.
 *
 *   php benchmark/stampede.php [--clients=16] [--seconds=6] [--rebuild-ms=50]
 *       [--think-ms=20] [--rows=shm-off,shm-stale,...] [--json=FILE]
 *       [--redis-port=P] [--memcached-port=P]
 *
 * N clients play php-fpm workers: each "request" loads one hot entry and,
 * on a miss, rebuilds it (the rebuild costs --rebuild-ms: a sleep standing
 * for the database) and saves it; then it spends --think-ms on the rest of
 * the request. A cleaner process cleans the entry's tag every second.
 * Per row: rebuilds per clean (what the database sees) and the time each
 * request waited for its value (load, plus the rebuild or the wait for
 * one): p50, p99, max. Rows:
 *
 *   shm-off, file-off       the backend as it was: load, miss, rebuild
 *   shm-stale, file-stale   serve_stale=10: one rebuild, the others the stale copy
 *   shm-remember            remember(): one build, the others wait (futex), no stale copy
 *   m2-lockguard            an emulation of Magento 2's LockGuardedCacheLoader
 *                           over shm-off: a lock taken with load/save/load on
 *                           the cache (not atomic), waiters sleep-poll every
 *                           20 ms (its delayTimeout) up to 10 s (loadTimeout)
 *   redis-off, redis-stale, redis-remember, redis-lockguard
 *                           the same over Redis (network leases: SET NX PX,
 *                           waiters on a BLPOP wake list); each client its own
 *                           connection, as php-fpm workers on several hosts
 *   tl-off, tl-stale        TwoLevel over Redis, two nodes: half the clients on
 *                           one fast segment, half on another (max_staleness 0.2)
 *   mc-off, mc-stale        Memcached (leases with ADD; no tag clean keeps a stale
 *                           copy there, so its cleaner removes the entry)
 *
 * The network rows need a server: --redis-port (default TAGCACHE_REDIS_PORT,
 * else 6379) and --memcached-port (TAGCACHE_MEMCACHED_PORT, else 11211);
 * a row whose server does not answer is left out with a note.
 *
 * Bounded: every client stops after --seconds; the whole run is
 * rows x (seconds + set-up).
 */

declare(strict_types=1);

namespace TagCacheBench;

require __DIR__ . '/lib/autoload.php';

Php::boot(__FILE__, $argv);

[$opt] = Php::args($argv);
if (isset($opt['help'])) {
    echo "usage: php benchmark/stampede.php [--clients=N] [--seconds=S] [--rebuild-ms=MS] [--think-ms=MS] [--rows=a,b] [--json=FILE]\n";
    exit(0);
}
$clients = max(1, (int)($opt['clients'] ?? 16));
$seconds = max(2, (int)($opt['seconds'] ?? 6));
$rebuildUs = max(0, (int)($opt['rebuild-ms'] ?? 50)) * 1000;
$thinkUs = max(0, (int)($opt['think-ms'] ?? 20)) * 1000;
$allRows = ['shm-off', 'shm-stale', 'shm-remember', 'm2-lockguard', 'file-off', 'file-stale',
    'redis-off', 'redis-stale', 'redis-remember', 'redis-lockguard', 'tl-off', 'tl-stale', 'mc-off', 'mc-stale'];
$redisPort = (int)($opt['redis-port'] ?? (getenv('TAGCACHE_REDIS_PORT') ?: 6379));
$mcPort = (int)($opt['memcached-port'] ?? (getenv('TAGCACHE_MEMCACHED_PORT') ?: 11211));
$prefix = 'bench-stampede-' . getmypid() . ':';
$rows = array_values(array_filter(explode(',', (string)($opt['rows'] ?? implode(',', $allRows)))));
foreach ($rows as $r) {
    if (!in_array($r, $allRows, true)) {
        fwrite(STDERR, "unknown row $r: one of " . implode(', ', $allRows) . "\n");
        exit(2);
    }
}
if (!function_exists('pcntl_fork')) {
    fwrite(STDERR, "pcntl is needed to fork the clients\n");
    exit(2);
}

$tmp = sys_get_temp_dir() . '/tagcache-stampede-' . getmypid();
@mkdir($tmp, 0700, true);
$seg = 'bench-stampede-' . getmypid();
register_shutdown_function(static function () use ($tmp, $seg): void {
    if (Php::isOwner()) {
        foreach (['', '.lease', '-A', '-A.twolevel', '-B', '-B.twolevel'] as $sfx) {
            @unlink("/dev/shm/tagcache.$seg$sfx");
        }
        rm_tree($tmp);
    }
});

/* The row's backend; $node: the fast segment of a TwoLevel row (0 or 1). */
function st_make(string $row, string $seg, string $tmp, int $node = 0): \TagCache\Backend
{
    global $redisPort, $mcPort, $prefix;
    $stale = str_ends_with($row, '-stale') ? ['serve_stale' => 10, 'rebuild_timeout' => 5] : [];
    $redis = ['server' => '127.0.0.1', 'port' => $redisPort, 'prefix' => $prefix, 'timeout' => 5, 'read_timeout' => 10];
    if (str_starts_with($row, 'file')) {
        return new \TagCache\File(['cache_dir' => "$tmp/file"] + $stale);
    }
    if (str_starts_with($row, 'redis')) {
        return new \TagCache\Redis($redis + $stale);
    }
    if (str_starts_with($row, 'tl')) {
        return new \TagCache\TwoLevel([
            'slow_backend' => 'Redis',
            'slow_backend_options' => $redis,
            'fast_backend_options' => ['segment' => $seg . ($node ? '-B' : '-A'), 'size' => '16M'],
            'max_staleness' => 0.2,
        ] + $stale);
    }
    if (str_starts_with($row, 'mc')) {
        return new \TagCache\Memcached(['servers' => "127.0.0.1:$mcPort", 'prefix' => $prefix, 'timeout' => 5,
            'read_timeout' => 10] + $stale);
    }
    return new \TagCache\Shm(['segment' => $seg, 'size' => '16M'] + $stale);
}

/* The row's server answers (or the row needs none). */
function st_reachable(string $row): bool
{
    global $redisPort, $mcPort;
    $port = str_starts_with($row, 'redis') || str_starts_with($row, 'tl') ? $redisPort
        : (str_starts_with($row, 'mc') ? $mcPort : 0);
    if (!$port) {
        return true;
    }
    $fp = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 1.0);
    if ($fp) {
        fclose($fp);
    }
    return (bool)$fp;
}

/* One request of a client: the value, and whether this request rebuilt it. */
function st_request(string $row, \TagCache\Backend $b, string $value, int $rebuildUs): bool
{
    $build = static function () use ($value, $rebuildUs): string {
        usleep($rebuildUs);  // the database
        return $value;
    };
    switch ($row) {
    case 'shm-remember':
    case 'redis-remember':
        $built = false;
        $b->remember('hot', static function () use ($build, &$built): string {
            $built = true;
            return $build();
        }, ['HOT'], 3600);
        return $built;
    case 'm2-lockguard':
    case 'redis-lockguard':
        // LockGuardedCacheLoader::lockedLoadData(): load; on a miss take the
        // lock (here as Magento's cache lock does it: load, save, load the
        // lock entry) or sleep delayTimeout and load again, up to loadTimeout
        $deadline = microtime(true) + 10.0;
        for (;;) {
            if ($b->load('hot') !== false) {
                return false;
            }
            $me = getmypid() . ':' . mt_rand();
            if ($b->load('lock_hot') === false && $b->save($me, 'lock_hot', [], 10)
                && $b->load('lock_hot') === $me) {
                $b->save($build(), 'hot', ['HOT'], 3600);
                $b->remove('lock_hot');
                return true;
            }
            if (microtime(true) > $deadline) {
                $b->save($build(), 'hot', ['HOT'], 3600);  // loadTimeout: it builds anyway
                return true;
            }
            usleep(20000);
        }
    default:
        if ($b->load('hot') !== false) {
            return false;
        }
        $b->save($build(), 'hot', ['HOT'], 3600);
        return true;
    }
}

function pct(array $v, float $p): float
{
    if (!$v) {
        return 0.0;
    }
    sort($v);
    return $v[min(count($v) - 1, (int)floor($p * count($v)))];
}

$value = str_repeat('x', 20000);
$report = [];
foreach ($rows as $row) {
    if (!st_reachable($row)) {
        fwrite(STDERR, "$row: left out, its server does not answer (--redis-port, --memcached-port)\n");
        continue;
    }
    fwrite(STDERR, "$row: $clients clients, $seconds s ...\n");
    $b = st_make($row, $seg, $tmp);
    $b->clean('all');
    $b->save($value, 'hot', ['HOT'], 3600);
    $s0 = $b->stats();  // the lease counters are the store's, kept across rows
    $start = microtime(true) + 0.5;
    $end = $start + $seconds;
    $kids = [];
    for ($i = 0; $i <= $clients; $i++) {  // client $clients is the cleaner
        [$p, $c] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
        $pid = pcntl_fork();
        if ($pid === 0) {
            fclose($p);
            $bb = st_make($row, $seg, $tmp, $i % 2);
            mt_srand(getmypid());
            @time_sleep_until($start);
            $out = ['lat' => [], 'rebuilds' => 0, 'cleans' => 0];
            if ($i === $clients) {
                for ($t = $start + 1; $t < $end; $t += 1.0) {
                    @time_sleep_until($t);
                    if (str_starts_with($row, 'mc')) {
                        $bb->remove('hot');  // a memcached tag clean keeps no stale copy
                    } else {
                        $bb->clean('matchingTag', ['HOT']);
                    }
                    $out['cleans']++;
                }
            } else {
                while (($t0 = microtime(true)) < $end) {
                    $out['rebuilds'] += st_request($row, $bb, $value, $rebuildUs) ? 1 : 0;
                    $out['lat'][] = (microtime(true) - $t0) * 1000;
                    usleep($thinkUs);  // the rest of the request
                }
            }
            fwrite($c, json_encode($out) . "\n");
            exit(0);
        }
        fclose($c);
        $kids[] = [$pid, $p];
    }
    $lat = [];
    $rebuilds = $cleans = 0;
    foreach ($kids as [$pid, $p]) {
        stream_set_timeout($p, $seconds + 30);
        $o = json_decode((string)fgets($p), true) ?: ['lat' => [], 'rebuilds' => 0, 'cleans' => 0];
        fclose($p);
        pcntl_waitpid($pid, $st);
        array_push($lat, ...$o['lat']);
        $rebuilds += $o['rebuilds'];
        $cleans += $o['cleans'];
    }
    $s = $b->stats();
    if ($b instanceof \TagCache\TwoLevel) {  // its own stale_served counts stale_if_error reads
        $s['stale_served'] = $s['stampede_stale_served'] ?? 0;
        $s0['stale_served'] = $s0['stampede_stale_served'] ?? 0;
    }
    if (!str_starts_with($row, 'shm') && !str_starts_with($row, 'file') && $row !== 'm2-lockguard') {
        $b->clean('all');
    }
    $report[$row] = [
        'cleans' => $cleans,
        'rebuilds' => $rebuilds,
        'rebuilds_per_clean' => $cleans ? round($rebuilds / $cleans, 2) : null,
        'requests' => count($lat),
        'p50_ms' => round(pct($lat, 0.50), 3),
        'p99_ms' => round(pct($lat, 0.99), 3),
        'max_ms' => round($lat ? max($lat) : 0, 3),
        'p999_ms' => round(pct($lat, 0.999), 3),
        'stale_served' => ($s['stale_served'] ?? 0) - ($s0['stale_served'] ?? 0),
        'leases_taken' => ($s['leases_taken'] ?? 0) - ($s0['leases_taken'] ?? 0),
        'lease_timeouts' => ($s['lease_timeouts'] ?? 0) - ($s0['lease_timeouts'] ?? 0),
    ];
}

printf("stampede: %d clients, a hot entry (20 KB) cleaned every second for %d s, rebuild %d ms, think %d ms\n\n",
    $clients, $seconds, $rebuildUs / 1000, $thinkUs / 1000);
printf("%-16s %7s %9s %10s %9s %9s %9s %9s %9s %8s\n", 'row', 'cleans', 'rebuilds', 'per clean', 'requests',
    'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'stale');
foreach ($report as $row => $r) {
    printf("%-16s %7d %9d %10s %9d %9.3f %9.3f %9.3f %9.3f %8d\n", $row, $r['cleans'], $r['rebuilds'],
        $r['rebuilds_per_clean'] ?? '-', $r['requests'], $r['p50_ms'], $r['p99_ms'], $r['p999_ms'], $r['max_ms'],
        $r['stale_served']);
}
if (isset($opt['json'])) {
    file_put_contents((string)$opt['json'], json_encode($report, JSON_PRETTY_PRINT) . "\n");
}
