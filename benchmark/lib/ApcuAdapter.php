<?php

declare(strict_types=1);

namespace TagCacheBench;

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
