<?php
/*
 * TagCache\Psr6\TagAwarePool: a PSR-6 pool with tags, over any native
 * tagcache backend.
 *
 * It implements Cache\TagInterop\TaggableCacheItemPoolInterface when that
 * interface is installed (Debian: php-cache-tag-interop; Composer:
 * cache/tag-interop), and plain Psr\Cache\CacheItemPoolInterface otherwise;
 * invalidateTag() and invalidateTags() are there either way.
 */

declare(strict_types=1);

namespace TagCache\Psr6;

if (interface_exists(\Cache\TagInterop\TaggableCacheItemPoolInterface::class)) {
    class TagAwarePool extends PoolBase implements \Cache\TagInterop\TaggableCacheItemPoolInterface
    {
    }
} else {
    class TagAwarePool extends PoolBase
    {
    }
}
