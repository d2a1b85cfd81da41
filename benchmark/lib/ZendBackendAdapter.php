<?php

declare(strict_types=1);

namespace TagCacheBench;

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
