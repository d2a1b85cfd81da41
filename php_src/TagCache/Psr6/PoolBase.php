<?php
/*
 * The body of TagCache\Psr6\TagAwarePool (see TagAwarePool.php for why the
 * class itself is declared in two ways).
 *
 *   $pool = new TagCache\Psr6\TagAwarePool(new TagCache\Shm(['segment' => 'app']));
 *   $item = $pool->getItem('product.42')->set($html)->setTags(['product.42', 'catalog']);
 *   $pool->save($item);
 *   $pool->invalidateTags(['catalog']);      // clean('matchingAnyTag') in the store
 *
 * Keys, tags, values and expiry map to the backend as
 * TagCache\Psr\StoreTrait describes; clear() removes this namespace's
 * entries only. Deferred items are kept in the object until commit(),
 * invalidateTags() or the pool's destruction, and are seen by getItem()
 * and hasItem() before that.
 *
 * Methods take untyped parameters where psr/cache 1 and 3 differ and
 * declare psr/cache 3's return types, so the class implements versions 1,
 * 2 and 3 of the interfaces alike.
 *
 * @internal the class to use is TagAwarePool
 */

declare(strict_types=1);

namespace TagCache\Psr6;

use Psr\Cache\CacheItemInterface;
use Psr\Cache\CacheItemPoolInterface;
use TagCache\Backend;
use TagCache\Psr\StoreTrait;

abstract class PoolBase implements CacheItemPoolInterface
{
    use StoreTrait;

    /** @var array<string, ItemBase> items saved with saveDeferred(), by key */
    private array $deferred = [];

    /**
     * @param string $namespace     1 to 64 characters A-Z a-z 0-9; entries of other namespaces are never touched
     * @param ?int $defaultLifetime seconds an item without an expiry lives; null: no expiry
     * @param array|bool $allowedClasses unserialize()'s allowed_classes for values read back
     */
    public function __construct(Backend $backend, string $namespace = 'psr', ?int $defaultLifetime = null,
                                array|bool $allowedClasses = true)
    {
        $this->initStore($backend, $namespace, $defaultLifetime, $allowedClasses);
    }

    public function __destruct()
    {
        if ($this->deferred) {
            $this->commit();
        }
    }

    public function getItem($key): CacheItemInterface
    {
        $id = $this->id($key);
        if (isset($this->deferred[$key])) {
            return self::fromDeferred($this->deferred[$key]) ?? self::item($key, false, null, []);
        }
        try {
            $data = $this->backend->load($id);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        if ($data !== false && $this->decode($data, $value, $tags)) {
            return self::item($key, true, $value, $tags);
        }
        return self::item($key, false, null, []);
    }

    public function getItems(array $keys = []): iterable
    {
        $ids = [];
        foreach ($keys as $key) {
            $id = $this->id($key);
            if (!isset($this->deferred[$key])) {
                $ids[$key] = $id;
            }
        }
        try {
            $found = $ids ? $this->backend->loadMany(array_values($ids)) : [];
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        $out = [];
        foreach ($keys as $key) {
            if (isset($this->deferred[$key])) {
                $out[$key] = self::fromDeferred($this->deferred[$key]) ?? self::item($key, false, null, []);
                continue;
            }
            $id = $ids[$key];
            $out[$key] = isset($found[$id]) && $this->decode($found[$id], $value, $tags)
                ? self::item($key, true, $value, $tags)
                : self::item($key, false, null, []);
        }
        return $out;
    }

    public function hasItem($key): bool
    {
        $id = $this->id($key);
        if (isset($this->deferred[$key])) {
            return self::fromDeferred($this->deferred[$key]) !== null;
        }
        try {
            return $this->backend->test($id) !== false;
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    public function clear(): bool
    {
        $this->deferred = [];
        try {
            return $this->backend->clean('matchingAnyTag', [$this->nsTag]);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    public function deleteItem($key): bool
    {
        return $this->deleteItems([$key]);
    }

    public function deleteItems(array $keys): bool
    {
        $ids = [];
        foreach ($keys as $key) {
            $ids[$key] = $this->id($key);
        }
        try {
            foreach ($ids as $key => $id) {
                unset($this->deferred[$key]);
                $this->backend->remove($id);
            }
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        return true;  // gone, whether they were there or not
    }

    public function save(CacheItemInterface $item): bool
    {
        [$key, $value, $expiresAt, $tags] = self::export($item);
        unset($this->deferred[$key]);
        return $this->store($key, $value, $expiresAt, $tags);
    }

    public function saveDeferred(CacheItemInterface $item): bool
    {
        [$key] = self::export($item);
        $this->deferred[$key] = clone $item;
        return true;
    }

    public function commit(): bool
    {
        $ok = true;
        $deferred = $this->deferred;
        $this->deferred = [];
        foreach ($deferred as $item) {
            [$key, $value, $expiresAt, $tags] = self::export($item);
            $ok = $this->store($key, $value, $expiresAt, $tags) && $ok;
        }
        return $ok;
    }

    public function invalidateTag($tag): bool
    {
        return $this->invalidateTags([$tag]);
    }

    /** Removes every item carrying at least one of $tags (deferred items are committed first). */
    public function invalidateTags(array $tags): bool
    {
        foreach ($tags as $tag) {
            if (($error = self::keyError($tag, 'tag')) !== null) {
                throw self::invalid($error);
            }
        }
        if (!$tags) {
            return true;
        }
        $this->commit();
        $mapped = $this->mapTags($tags);
        array_shift($mapped);  // not the namespace tag: that would be clear()
        try {
            return $this->backend->clean('matchingAnyTag', $mapped);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    private function store(string $key, mixed $value, ?int $expiresAt, array $tags): bool
    {
        $id = $this->id($key);
        try {
            $lifetime = $this->lifetimeUntil($expiresAt);
            if ($lifetime === false) {
                $this->backend->remove($id);  // PSR-6: an item already expired is not kept
                return true;
            }
            return $this->backend->save($this->encode($value, $tags), $id, $this->mapTags($tags), $lifetime);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    private static function invalid(string $message): \InvalidArgumentException
    {
        return new InvalidArgumentException($message);
    }

    /* Items' private state, read and written in ItemBase's scope. */

    private static function item(string $key, bool $hit, mixed $value, array $previousTags): CacheItem
    {
        static $make = null;
        $make ??= \Closure::bind(static function (string $key, bool $hit, mixed $value, array $previousTags): CacheItem {
            $item = new CacheItem();
            $item->key = $key;
            $item->hit = $hit;
            $item->value = $value;
            $item->previousTags = $previousTags;
            return $item;
        }, null, ItemBase::class);
        return $make($key, $hit, $value, $previousTags);
    }

    /** [key, value, expiresAt, tags] of one of our items; InvalidArgumentException for any other. */
    private static function export(CacheItemInterface $item): array
    {
        static $export = null;
        if (!$item instanceof ItemBase) {
            throw new InvalidArgumentException('This pool saves only items it made, not ' . get_class($item));
        }
        $export ??= \Closure::bind(static fn(ItemBase $i): array => [$i->key, $i->value, $i->expiresAt, $i->tags],
            null, ItemBase::class);
        return $export($item);
    }

    /** What getItem() returns for a deferred item: a hit carrying its tags as previous ones, or null once it expired. */
    private static function fromDeferred(ItemBase $deferred): ?CacheItem
    {
        static $copy = null;
        $copy ??= \Closure::bind(static function (ItemBase $d): ?CacheItem {
            if ($d->expiresAt !== null && $d->expiresAt <= time()) {
                return null;
            }
            $item = new CacheItem();
            $item->key = $d->key;
            $item->hit = true;
            $item->value = $d->value;
            $item->previousTags = $d->tags;
            return $item;
        }, null, ItemBase::class);
        return $copy($deferred);
    }
}
