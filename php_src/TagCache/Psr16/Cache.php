<?php
/*
 * TagCache\Psr16\Cache: PSR-16 (Psr\SimpleCache\CacheInterface) over any
 * native tagcache backend.
 *
 *   $cache = new TagCache\Psr16\Cache(new TagCache\Shm(['segment' => 'app']));
 *   $cache->set('user.42', $user, 300);
 *
 * Keys, values and TTLs map to the backend as TagCache\Psr\StoreTrait
 * describes: keys escaped into <namespace>_..., values as strings or
 * serialized, TTL null = $defaultLifetime (null: no expiry), TTL <= 0
 * deletes. clear() removes this namespace's entries only.
 *
 * The methods take untyped parameters and declare the return types of
 * psr/simple-cache 3, so the class implements versions 1, 2 and 3 of the
 * interface alike.
 */

declare(strict_types=1);

namespace TagCache\Psr16;

use Psr\SimpleCache\CacheInterface;
use TagCache\Backend;
use TagCache\Psr\StoreTrait;

class Cache implements CacheInterface
{
    use StoreTrait;

    /**
     * @param string $namespace     1 to 64 characters A-Z a-z 0-9; entries of other namespaces are never touched
     * @param ?int $defaultLifetime seconds an entry set with a null TTL lives; null: no expiry
     * @param array|bool $allowedClasses unserialize()'s allowed_classes for values read back
     */
    public function __construct(Backend $backend, string $namespace = 'psr', ?int $defaultLifetime = null,
                                array|bool $allowedClasses = true)
    {
        $this->initStore($backend, $namespace, $defaultLifetime, $allowedClasses);
    }

    public function get($key, $default = null): mixed
    {
        $id = $this->id($key);
        try {
            $data = $this->backend->load($id);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        if ($data === false) {
            return $default;
        }
        if (($data[0] ?? '') === 's') {
            return substr($data, 1);  // a string: no call to decode()
        }
        return $this->decode($data, $value) ? $value : $default;
    }

    public function set($key, $value, $ttl = null): bool
    {
        return $this->store($this->id($key), $this->encode($value), self::expiry($ttl));
    }

    public function delete($key): bool
    {
        $id = $this->id($key);
        try {
            $this->backend->remove($id);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        return true;  // gone, whether it was there or not
    }

    public function clear(): bool
    {
        try {
            return $this->backend->clean('matchingAnyTag', [$this->nsTag]);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    public function getMultiple($keys, $default = null): iterable
    {
        $ids = [];
        foreach (self::iterable($keys) as $key) {
            $ids[$key] = $this->id($key);
        }
        try {
            $found = $ids ? $this->backend->loadMany(array_values($ids)) : [];
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        $out = [];
        foreach ($ids as $key => $id) {
            $out[$key] = isset($found[$id]) && $this->decode($found[$id], $value) ? $value : $default;
        }
        return $out;
    }

    public function setMultiple($values, $ttl = null): bool
    {
        $expiry = self::expiry($ttl);
        $todo = [];
        foreach (self::iterable($values, 'values') as $key => $value) {
            if (is_int($key)) {
                $key = (string) $key;  // array keys such as '0' arrive as ints
            }
            $todo[$this->id($key)] = $this->encode($value);
        }
        $ok = true;
        foreach ($todo as $id => $data) {
            $ok = $this->store((string) $id, $data, $expiry) && $ok;
        }
        return $ok;
    }

    public function deleteMultiple($keys): bool
    {
        $ids = [];
        foreach (self::iterable($keys) as $key) {
            $ids[] = $this->id($key);
        }
        try {
            foreach ($ids as $id) {
                $this->backend->remove($id);
            }
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
        return true;
    }

    public function has($key): bool
    {
        $id = $this->id($key);
        try {
            return $this->backend->test($id) !== false;
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    /** Saves (or, when $expiresAt has passed, deletes) one encoded value. */
    private function store(string $id, string $data, int|null|false $expiresAt): bool
    {
        try {
            $lifetime = $expiresAt === false ? false : $this->lifetimeUntil($expiresAt);
            if ($lifetime === false) {
                $this->backend->remove($id);
                return true;
            }
            return $this->backend->save($data, $id, [$this->nsTag], $lifetime);
        } catch (\TagCache\Exception $e) {
            throw new CacheException($e->getMessage(), 0, $e);
        }
    }

    private static function invalid(string $message): \InvalidArgumentException
    {
        return new InvalidArgumentException($message);
    }

    /** A PSR-16 TTL as an absolute expiry: null (default lifetime), a unix time, or false (already expired). */
    private static function expiry(mixed $ttl): int|null|false
    {
        if ($ttl === null) {
            return null;
        }
        if (is_int($ttl)) {
            return $ttl > 0 ? time() + $ttl : false;
        }
        if ($ttl instanceof \DateInterval) {
            $at = (new \DateTimeImmutable('@' . time()))->add($ttl)->getTimestamp();
            return $at > time() ? $at : false;
        }
        throw new InvalidArgumentException('A TTL must be null, an int or a DateInterval, ' . get_debug_type($ttl) . ' given');
    }

    private static function iterable(mixed $keys, string $what = 'keys'): iterable
    {
        if (!is_iterable($keys)) {
            throw new InvalidArgumentException("The $what must be an array or a Traversable, " . get_debug_type($keys) . ' given');
        }
        return $keys;
    }
}
