<?php

declare(strict_types=1);

namespace TagCacheBench;

/** A phpredis connection to our own server, to flush it and read used_memory and its CPU. */
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

    /**
     * redis-server's CPU so far (INFO cpu, user and system seconds) and per
     * command [calls, usec] (INFO commandstats; a script's inner commands
     * are counted in the script's usec and again on their own).
     */
    public function cpu(): array
    {
        $cpu = $this->redis->info('cpu');
        $cmds = [];
        foreach ($this->redis->info('commandstats') as $k => $v) {
            if (preg_match('/calls=(\d+),usec=(\d+)/', (string)$v, $m)) {
                $cmds[substr($k, 8)] = [(int)$m[1], (int)$m[2]];   // without "cmdstat_"
            }
        }
        return ['server' => 'redis-server', 'user' => (float)$cpu['used_cpu_user'], 'sys' => (float)$cpu['used_cpu_sys'],
            'commands' => $cmds];
    }
}
