<?php
/*
 * TagCache\Psr6\CacheItem: the items of TagCache\Psr6\TagAwarePool.
 *
 * It implements Cache\TagInterop\TaggableCacheItemInterface when that
 * interface is installed (Debian: php-cache-tag-interop; Composer:
 * cache/tag-interop), and plain Psr\Cache\CacheItemInterface otherwise; the
 * methods (getPreviousTags(), setTags()) are there either way.
 */

declare(strict_types=1);

namespace TagCache\Psr6;

if (interface_exists(\Cache\TagInterop\TaggableCacheItemInterface::class)) {
    final class CacheItem extends ItemBase implements \Cache\TagInterop\TaggableCacheItemInterface
    {
    }
} else {
    final class CacheItem extends ItemBase
    {
    }
}
