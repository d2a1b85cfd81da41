<?php

declare(strict_types=1);

namespace TagCacheBench;

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
