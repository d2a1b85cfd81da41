<?php

declare(strict_types=1);

namespace TagCacheBench;

/** A phpredis connection to our own server, to flush it and read used_memory. */
final class RedisProbe
{
    public \Redis $redis;
    private int $baseline = 0;

    public function __construct(?int $port)
    {
        if ($port === null) {
            throw new \RuntimeException('no redis-server started (use --all)');
        }
        $this->redis = new \Redis();
        $this->redis->connect('127.0.0.1', $port, 5.0);
    }

    public function flush(): void
    {
        $this->redis->flushDB();
        $this->baseline = (int)$this->redis->info('memory')['used_memory'];
    }

    public function footprint(): array
    {
        return redis_footprint($this->redis, $this->baseline);
    }
}
