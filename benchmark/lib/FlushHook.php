<?php

declare(strict_types=1);

namespace TagCacheBench;

/** Runs extra work after a backend's own flush (e.g. reset a memory baseline). */
final class FlushHook implements Adapter
{
    public function __construct(private readonly Adapter $a, private readonly \Closure $after)
    {
    }

    public function load(string $id, bool $doNotTestCacheValidity = false): string|false
    {
        return $this->a->load($id, $doNotTestCacheValidity);
    }

    public function save(string $data, string $id, array $tags, int|false|null $lifetime): bool
    {
        return $this->a->save($data, $id, $tags, $lifetime);
    }

    public function remove(string $id): bool
    {
        return $this->a->remove($id);
    }

    public function cleanAnyTags(array $tags): bool
    {
        return $this->a->cleanAnyTags($tags);
    }

    public function flush(): bool
    {
        $ok = $this->a->flush();
        ($this->after)();
        return $ok;
    }

    public function supportsTags(): bool
    {
        return $this->a->supportsTags();
    }

    public function footprint(): ?array
    {
        return $this->a->footprint();
    }
}
