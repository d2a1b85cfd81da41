<?php
/*
 * The body of TagCache\Psr6\CacheItem (see CacheItem.php for why the class
 * itself is declared in two ways). Only TagCache\Psr6\TagAwarePool makes
 * items; it reads and writes their state through closures bound to this
 * class, so the public API is exactly PSR-6's plus the tag methods.
 *
 * @internal
 */

declare(strict_types=1);

namespace TagCache\Psr6;

use Psr\Cache\CacheItemInterface;

abstract class ItemBase implements CacheItemInterface
{
    private string $key;
    private mixed $value = null;
    private bool $hit = false;
    /** unix time, or null for the pool's default lifetime */
    private ?int $expiresAt = null;
    /** tags to save with the item (setTags()) */
    private array $tags = [];
    /** tags the item had when the pool returned it */
    private array $previousTags = [];

    final private function __construct()
    {
    }

    public function getKey(): string
    {
        return $this->key;
    }

    public function get(): mixed
    {
        return $this->hit ? $this->value : null;
    }

    public function isHit(): bool
    {
        return $this->hit;
    }

    public function set($value): static
    {
        $this->value = $value;
        return $this;
    }

    public function expiresAt($expiration): static
    {
        if ($expiration === null) {
            $this->expiresAt = null;
        } elseif ($expiration instanceof \DateTimeInterface) {
            $this->expiresAt = $expiration->getTimestamp();
        } else {
            throw new InvalidArgumentException('expiresAt() takes a DateTimeInterface or null, ' . get_debug_type($expiration) . ' given');
        }
        return $this;
    }

    public function expiresAfter($time): static
    {
        if ($time === null) {
            $this->expiresAt = null;
        } elseif (is_int($time)) {
            $this->expiresAt = time() + $time;
        } elseif ($time instanceof \DateInterval) {
            $this->expiresAt = (new \DateTimeImmutable('@' . time()))->add($time)->getTimestamp();
        } else {
            throw new InvalidArgumentException('expiresAfter() takes an int, a DateInterval or null, ' . get_debug_type($time) . ' given');
        }
        return $this;
    }

    /** The tags the item carried when the pool returned it. */
    public function getPreviousTags(): array
    {
        return $this->previousTags;
    }

    /**
     * The tags to save the item with, replacing any set before. Tags
     * follow the key rules: non-empty strings without {}()/\@:.
     */
    public function setTags(array $tags): static
    {
        $clean = [];
        foreach ($tags as $tag) {
            if (!is_string($tag) || $tag === '' || strpbrk($tag, '{}()/\\@:') !== false) {
                throw new InvalidArgumentException('A tag must be a non-empty string without {}()/\\@:, '
                    . (is_string($tag) ? '"' . $tag . '"' : get_debug_type($tag)) . ' given');
            }
            $clean[$tag] = true;
        }
        $this->tags = array_keys($clean);
        return $this;
    }
}
