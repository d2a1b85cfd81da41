<?php

declare(strict_types=1);

namespace TagCacheBench;

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
