<?php

declare(strict_types=1);

namespace TagCacheBench;

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
