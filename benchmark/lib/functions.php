<?php

declare(strict_types=1);

namespace TagCacheBench;

// The few free functions of the harness (a class file each would only wrap
// them); loaded by autoload.php, as Composer loads its "files".

/** Sums sizes of a directory tree (apparent size and allocated blocks). */
function dir_footprint(string $dir): array
{
    $bytes = 0;
    $blocks = 0;
    $files = 0;
    if (is_dir($dir)) {
        $it = new \RecursiveIteratorIterator(
            new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS),
            \RecursiveIteratorIterator::SELF_FIRST
        );
        foreach ($it as $f) {
            $st = @lstat($f->getPathname());
            if ($st === false) {
                continue;
            }
            $blocks += $st['blocks'] * 512;
            if ($f->isFile()) {
                $bytes += $st['size'];
                $files++;
            }
        }
    }
    return ['bytes' => $blocks, 'apparent_bytes' => $bytes, 'files' => $files];
}

function apcu_footprint(): array
{
    $sma = apcu_sma_info(true);
    $info = apcu_cache_info(true);
    // Per record, not per APCu entry: tag-aware pools keep tag versions there too.
    return [
        'bytes' => (int)($sma['seg_size'] * $sma['num_seg'] - $sma['avail_mem']),
        'entries' => null,
        'apcu_entries' => (int)($info['num_entries'] ?? 0),
        'how' => 'apcu_sma_info: seg_size*num_seg - avail_mem, / records',
    ];
}

/** Removes a directory tree this benchmark made (never follows symlinks). */
function rm_tree(string $dir): void
{
    if (!is_dir($dir) || is_link($dir)) {
        return;
    }
    // rm -rf copes with what the file stores leave (Symfony's tag links,
    // directories emptied while listed); the PHP walk is the fallback.
    if (function_exists('exec') && is_executable('/bin/rm')) {
        exec('/bin/rm -rf -- ' . escapeshellarg($dir) . ' 2>/dev/null', $out, $rc);
        if ($rc === 0 && !file_exists($dir)) {
            return;
        }
    }
    foreach (@scandir($dir) ?: [] as $e) {
        if ($e === '.' || $e === '..') {
            continue;
        }
        $p = "$dir/$e";
        is_dir($p) && !is_link($p) ? rm_tree($p) : @unlink($p);
    }
    @rmdir($dir);
}

function redis_footprint(\Redis $redis, int $baseline): array
{
    return [
        'bytes' => (int)$redis->info('memory')['used_memory'] - $baseline,
        'entries' => null,
        'keys' => (int)$redis->dbSize(),
        'how' => 'redis INFO used_memory after load - after flush',
    ];
}

/**
 * memcached's CPU so far (stats rusage_user / rusage_system, seconds) and
 * its gets and sets as [calls, 0]: memcached does not time its commands.
 */
function memcached_cpu(int $port): ?array
{
    $m = new \Memcached();
    $m->addServer('127.0.0.1', $port);
    $st = $m->getStats();
    $st = $st ? reset($st) : null;
    if (!$st) {
        return null;
    }
    return ['server' => 'memcached', 'user' => (float)$st['rusage_user'], 'sys' => (float)$st['rusage_system'],
        'commands' => ['get' => [(int)$st['cmd_get'], 0], 'set' => [(int)$st['cmd_set'], 0]]];
}

/** SIGTERM, wait up to 5 s, then SIGKILL; only processes we started. */
function stop_proc($proc): void
{
    $st = proc_get_status($proc);
    if ($st['running']) {
        proc_terminate($proc, 15);
        $deadline = microtime(true) + 5;
        while (microtime(true) < $deadline && proc_get_status($proc)['running']) {
            usleep(20000);
        }
        if (proc_get_status($proc)['running']) {
            proc_terminate($proc, 9);
        }
    }
    proc_close($proc);
}
