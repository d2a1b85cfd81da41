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
