<?php

/**
 * What a Redis-backed cache leaves in Redis once its entries have expired:
 * tag metadata that outlives its entries is memory nobody frees.
 *
 *   php benchmark/expiry.php [--records=100000] [--clients=4] [--lifetime=5]
 *       [--backends=tagcache-redis,cm-redis,symfony-redis-tagaware]
 *       [--wait=120] [--redis-port=N] [--json=FILE]
 *
 * Per backend, on a Redis of its own (started here on 127.0.0.1 and stopped
 * after, or --redis-port, which is flushed): N records of the data set
 * (its ids and tags, the Magento frontend's prefix and MAGE tag, 100-byte
 * values) saved by forked clients with lifetimes of 1..--lifetime s, then
 * keys and used_memory right after the saves and once the keys stop
 * expiring (or --wait seconds passed; tagcache keeps an entry its grace of
 * 60 s past expiry, so allow for that). Nothing calls clean('old').
 */

declare(strict_types=1);

namespace TagCacheBench;

require __DIR__ . '/lib/autoload.php';

Php::boot(__FILE__, $argv);

[$opt] = Php::args($argv);
if (isset($opt['help'])) {
    echo "usage: php benchmark/expiry.php [--records=N] [--clients=N] [--lifetime=S] [--backends=a,b] [--wait=S] [--redis-port=N] [--json=FILE]\n";
    exit(0);
}
$records = max(1, (int)($opt['records'] ?? 100000));
$clients = max(1, (int)($opt['clients'] ?? 4));
$lifetime = max(1, (int)($opt['lifetime'] ?? 5));
$wait = max(1, (int)($opt['wait'] ?? 120));
$names = array_values(array_filter(explode(',', (string)($opt['backends'] ?? 'tagcache-redis,cm-redis,symfony-redis-tagaware'))));

$tmpRoot = sys_get_temp_dir() . '/tagcache-expiry-' . getmypid();
@mkdir($tmpRoot, 0700, true);
$ctx = new Context($tmpRoot);
$servers = new Servers($tmpRoot);
register_shutdown_function(static function () use ($servers, $tmpRoot): void {
    if (Php::isOwner()) {
        $servers->stop();
        rm_tree($tmpRoot);
    }
});
if (isset($opt['redis-port'])) {
    $ctx->redisPort = (int)$opt['redis-port'];
} else {
    $ctx->redisPort = $servers->redis();
}
$params = Dataset::DEFAULTS;
$tagList = Dataset::tagList($params['tags']);
$defs = Backends::all();

$rows = [];
foreach ($names as $name) {
    if (!isset($defs[$name])) {
        fwrite(STDERR, "unknown backend $name (see bench.php --list)\n");
        exit(2);
    }
    if (($why = ($defs[$name]['requires'])($ctx)) !== null) {
        $rows[$name] = ['label' => $defs[$name]['label'], 'status' => "missing: $why"];
        continue;
    }
    $r = new \Redis();
    $r->connect('127.0.0.1', $ctx->redisPort, 5.0);
    $r->flushAll();
    $base = ['keys' => $r->dbSize(), 'memory' => (int)$r->info('memory')['used_memory']];

    $t0 = microtime(true);
    $pids = [];
    for ($c = 0; $c < $clients; $c++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $fe = Measure::frontend($ctx, $name);
            $fail = 0;
            for ($i = $c; $i < $records; $i += $clients) {
                $rec = Dataset::record($i, $tagList, $params);
                $fail += $fe->save(str_repeat(chr(97 + $i % 26), 100), $rec['key'], $rec['tags'], 1 + $i % $lifetime) ? 0 : 1;
            }
            exit($fail > 0 ? 1 : 0);
        }
        $pids[] = $pid;
    }
    $failed = 0;
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $st);
        $failed += pcntl_wexitstatus($st) !== 0 ? 1 : 0;
    }
    $saved = microtime(true);
    $after = ['keys' => $r->dbSize(), 'memory' => (int)$r->info('memory')['used_memory']];

    // Wait for the keys to stop expiring: the same count for 10 s in a row
    // once the longest lifetime and tagcache's grace (60 s) have passed, or
    // none left, or --wait. Every backend waits by the same rule.
    $last = -1;
    $steady = 0;
    do {
        sleep(1);
        $k = $r->dbSize();
        $steady = $k === $last ? $steady + 1 : 0;
        $last = $k;
        $elapsed = microtime(true) - $saved;
    } while ($k > 0 && $elapsed < $wait && !($elapsed > $lifetime + 62 && $steady >= 10));
    $left = ['keys' => $r->dbSize(), 'memory' => (int)$r->info('memory')['used_memory']];
    $kinds = [];
    $it = null;
    $r->setOption(\Redis::OPT_SCAN, \Redis::SCAN_RETRY);
    $sample = 0;
    while ($sample < 2000 && ($keys = $r->scan($it, '*', 1000)) !== false) {
        foreach ($keys as $key) {
            $t = $r->type($key);
            $type = [\Redis::REDIS_STRING => 'string', \Redis::REDIS_SET => 'set', \Redis::REDIS_ZSET => 'zset',
                \Redis::REDIS_HASH => 'hash', \Redis::REDIS_LIST => 'list'][$t] ?? 'other';
            $kinds[$type] = ($kinds[$type] ?? 0) + 1;
            $sample++;
        }
    }
    $rows[$name] = [
        'label' => $defs[$name]['label'], 'status' => $failed ? "$failed client(s) saw failed saves" : 'ok',
        'records' => $records, 'save_seconds' => round($saved - $t0, 2),
        'keys_after_saves' => $after['keys'] - $base['keys'], 'bytes_after_saves' => $after['memory'] - $base['memory'],
        'waited_seconds' => round(microtime(true) - $saved, 1),
        'keys_left' => $left['keys'] - $base['keys'], 'bytes_left' => max(0, $left['memory'] - $base['memory']),
        'left_by_type' => $kinds,
    ];
    $r->flushAll();
    $r->close();
    fprintf(STDERR, "%s done\n", $name);
}

printf("Redis after %s records with lifetimes of 1..%d s (the data set's tags + MAGE, 100 B values, %d clients); no clean('old')\n",
    number_format($records), $lifetime, $clients);
printf("| %-36s | %8s | %10s | %14s | %6s | %10s | %14s | %-23s |\n", 'backend', 'save s', 'keys', 'bytes', 'waited', 'keys left', 'bytes left', 'left by type (<= 2000)');
printf("|%s|%s|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 38), str_repeat('-', 10), str_repeat('-', 12), str_repeat('-', 16),
    str_repeat('-', 8), str_repeat('-', 12), str_repeat('-', 16), str_repeat('-', 25));
foreach ($rows as $row) {
    if (!isset($row['records'])) {
        printf("| %-36s | %s |\n", $row['label'], $row['status']);
        continue;
    }
    $kinds = implode(' ', array_map(static fn ($k, $v) => "$k $v", array_keys($row['left_by_type']), $row['left_by_type']));
    printf("| %-36s | %8.1f | %10s | %14s | %5.0fs | %10s | %14s | %-23s |\n", $row['label'], $row['save_seconds'],
        number_format($row['keys_after_saves']), number_format($row['bytes_after_saves']), $row['waited_seconds'],
        number_format($row['keys_left']), number_format($row['bytes_left']), $kinds ?: '-');
}
if (isset($opt['json'])) {
    file_put_contents((string)$opt['json'], json_encode($rows, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
}
