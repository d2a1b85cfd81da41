<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * The small surface the Frontend needs from a backend. Ids and tags arrive
 * already prefixed and upper-cased. $lifetime: false = the backend's default
 * (7,200 s here, Magento's), null = forever, int = seconds.
 */
interface Adapter
{
    public function load(string $id, bool $doNotTestCacheValidity = false): string|false;

    /** @param list<string> $tags */
    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool;

    public function remove(string $id): bool;

    /** clean(matchingAnyTag); never called when supportsTags() is false. */
    public function cleanAnyTags(array $tags): bool;

    public function flush(): bool;

    public function supportsTags(): bool;

    /**
     * Memory or disk the store uses now: ['bytes' => int, 'entries' => ?int,
     * 'how' => string], or null when it cannot be measured.
     */
    public function footprint(): ?array;
}

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

/**
 * Any object with the Zend_Cache backend method set: the tagcache classes
 * (TagCache\Shm, File, Redis, Memcached, TwoLevel) and the Zend/Cm backends.
 */
final class ZendBackendAdapter implements Adapter
{
    /** @param object $backend TagCache\Backend or Zend_Cache_Backend_ExtendedInterface */
    public function __construct(
        private readonly object $backend,
        private readonly bool $tags = true,
        private readonly ?\Closure $footprint = null,
    ) {
    }

    public function inner(): object
    {
        return $this->backend;
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        return $this->backend->load($id, $doNotTestCacheValidity);
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        return $this->backend->save($data, $id, $tags, $lifetime);
    }

    public function remove(string $id): bool
    {
        return (bool)$this->backend->remove($id);
    }

    public function cleanAnyTags(array $tags): bool
    {
        return (bool)$this->backend->clean('matchingAnyTag', $tags);
    }

    public function flush(): bool
    {
        return (bool)$this->backend->clean('all');
    }

    public function supportsTags(): bool
    {
        return $this->tags;
    }

    public function footprint(): ?array
    {
        return $this->footprint ? ($this->footprint)($this->backend) : null;
    }
}

/** APCu called directly: apcu_fetch / apcu_store. No tags. */
final class ApcuAdapter implements Adapter
{
    public function __construct(private readonly int $defaultLifetime)
    {
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        return apcu_fetch($id);
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        return apcu_store($id, $data, $lifetime === false ? $this->defaultLifetime : (int)$lifetime);
    }

    public function remove(string $id): bool
    {
        return apcu_delete($id);
    }

    public function cleanAnyTags(array $tags): bool
    {
        throw new \LogicException('APCu has no tags');
    }

    public function flush(): bool
    {
        return apcu_clear_cache();
    }

    public function supportsTags(): bool
    {
        return false;
    }

    public function footprint(): ?array
    {
        return apcu_footprint();
    }
}

/** phpredis called directly: GET / SETEX. No tags. */
final class RedisAdapter implements Adapter
{
    private \Redis $redis;
    private int $baseline = 0;

    public function __construct(string $host, int $port, private readonly int $defaultLifetime, int $db = 0)
    {
        $this->redis = new \Redis();
        $this->redis->connect($host, $port, 5.0);
        $this->redis->select($db);
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        return $this->redis->get($id);
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        $ttl = $lifetime === false ? $this->defaultLifetime : $lifetime;
        return (bool)($ttl === null ? $this->redis->set($id, $data) : $this->redis->setex($id, $ttl, $data));
    }

    public function remove(string $id): bool
    {
        return $this->redis->del($id) > 0;
    }

    public function cleanAnyTags(array $tags): bool
    {
        throw new \LogicException('plain Redis GET/SET has no tags');
    }

    public function flush(): bool
    {
        $ok = $this->redis->flushDB();
        $this->baseline = (int)$this->redis->info('memory')['used_memory'];
        return (bool)$ok;
    }

    public function supportsTags(): bool
    {
        return false;
    }

    public function footprint(): ?array
    {
        return redis_footprint($this->redis, $this->baseline);
    }
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

/** php-memcached called directly: get / set. No tags. */
final class MemcachedAdapter implements Adapter
{
    private \Memcached $mc;

    public function __construct(string $host, int $port, private readonly int $defaultLifetime)
    {
        $this->mc = new \Memcached();
        $this->mc->addServer($host, $port);
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        return $this->mc->get($id);
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        $ttl = $lifetime === false ? $this->defaultLifetime : (int)$lifetime;
        return $this->mc->set($id, $data, $ttl);
    }

    public function remove(string $id): bool
    {
        return $this->mc->delete($id);
    }

    public function cleanAnyTags(array $tags): bool
    {
        throw new \LogicException('plain memcached has no tags');
    }

    public function flush(): bool
    {
        return $this->mc->flush();
    }

    public function supportsTags(): bool
    {
        return false;
    }

    public function footprint(): ?array
    {
        $stats = $this->mc->getStats();
        $s = reset($stats);
        return [
            'bytes' => (int)$s['bytes'],
            'entries' => (int)$s['curr_items'],
            'how' => 'memcached stats bytes / curr_items',
        ];
    }
}

/**
 * A Symfony Cache PSR-6 pool. Loads are getItem(); saves are getItem() +
 * set() + expiresAfter() + tag() + save() (PSR-6 has no way to make an item
 * without getItem); clean is invalidateTags() on tag-aware pools.
 */
final class SymfonyAdapter implements Adapter
{
    /**
     * @param \Symfony\Component\Cache\Adapter\AdapterInterface $pool
     * @param \Closure|null $flush extra flush work (e.g. FLUSHDB on our own Redis)
     * @param \Closure|null $footprint
     */
    public function __construct(
        private readonly object $pool,
        private readonly bool $tags,
        private readonly int $defaultLifetime,
        private readonly ?\Closure $flushExtra = null,
        private readonly ?\Closure $footprintFn = null,
    ) {
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        $item = $this->pool->getItem($id);
        return $item->isHit() ? $item->get() : false;
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        $item = $this->pool->getItem($id);
        $item->set($data);
        $item->expiresAfter($lifetime === false ? $this->defaultLifetime : $lifetime);
        if ($this->tags && $tags) {
            $item->tag($tags);
        }
        return $this->pool->save($item);
    }

    public function remove(string $id): bool
    {
        return $this->pool->deleteItem($id);
    }

    public function cleanAnyTags(array $tags): bool
    {
        return $this->pool->invalidateTags($tags);
    }

    public function flush(): bool
    {
        $ok = $this->pool->clear();
        if ($this->flushExtra) {
            ($this->flushExtra)();
        }
        return $ok;
    }

    public function supportsTags(): bool
    {
        return $this->tags;
    }

    public function footprint(): ?array
    {
        return $this->footprintFn ? ($this->footprintFn)() : null;
    }
}
