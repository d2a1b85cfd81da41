<?php
/*
 * What TagCache\Psr16\Cache and TagCache\Psr6\TagAwarePool share: how PSR
 * keys, tags, values and TTLs become backend ids, tags, strings and
 * lifetimes. Both classes map them the same way, so a PSR-16 cache and a
 * PSR-6 pool on the same backend and namespace see the same entries.
 *
 * Ids. PSR keys may hold any character but {}()/\@: and need not be short;
 * a backend id should stay within what Zend_Cache_Core accepts
 * ([A-Za-z0-9_]) and well under every engine's limit. A key becomes
 *   <namespace>_<escaped key>
 * where the escape keeps A-Z a-z 0-9 and writes "_" as "__", "." as "_d"
 * and any other byte as "_x" plus two hex digits; escaped keys longer than
 * 128 bytes become "_h" plus the SHA-256 of the key. Both forms are
 * one-to-one ("_" is only ever followed by "_", "d" or "x" in an escaped
 * key), so two keys never share an id.
 *
 * Tags. A PSR-6 tag t is stored as the backend tag <namespace>_<escaped t>.
 * Every entry also carries the tag <namespace> itself, so clear() is
 * clean('matchingAnyTag', [<namespace>]): it removes this namespace's
 * entries and nothing else in the backend (Magento's, another pool's).
 * Namespaces are [A-Za-z0-9], so no namespace's tags or ids can be
 * another's.
 *
 * Values. A string is stored as "s" . $value; anything else as "p" .
 * serialize($value); an item saved with tags as "t" . serialize([$tags,
 * $value]), so getItem() learns the previous tags from the same read.
 * unserialize() takes the allowed_classes given to the constructor. A
 * stored string that is none of these (written by something else) is a
 * miss.
 *
 * TTLs. null: the default lifetime given to the constructor (null: no
 * expiry). An int or a DateInterval: seconds from now; zero or less
 * deletes the entry.
 *
 * @internal
 */

declare(strict_types=1);

namespace TagCache\Psr;

use TagCache\Backend;

trait StoreTrait
{
    private Backend $backend;
    private string $prefix;
    private string $nsTag;
    private ?int $defaultLifetime;
    private array $unserializeOptions;

    private function initStore(Backend $backend, string $namespace, ?int $defaultLifetime, array|bool $allowedClasses): void
    {
        if (!preg_match('/^[A-Za-z0-9]{1,64}$/D', $namespace)) {
            throw new \ValueError(static::class . '::__construct(): Argument #2 ($namespace) must be 1 to 64 characters A-Z, a-z, 0-9');
        }
        if ($defaultLifetime !== null && $defaultLifetime <= 0) {
            throw new \ValueError(static::class . '::__construct(): Argument #3 ($defaultLifetime) must be a positive number of seconds or null');
        }
        $this->backend = $backend;
        $this->prefix = $namespace . '_';
        $this->nsTag = $namespace;
        $this->defaultLifetime = $defaultLifetime;
        $this->unserializeOptions = ['allowed_classes' => $allowedClasses];
    }

    /** The exception a caller gets for a bad key, tag or TTL (each PSR has its own class). */
    abstract private static function invalid(string $message): \InvalidArgumentException;

    /**
     * The backend id for a PSR key; throws invalid() when the key is not
     * valid. Keys of A-Z a-z 0-9 _ . (most) skip the full validation.
     */
    private function id(mixed $key): string
    {
        if (is_string($key) && $key !== '') {
            $n = strspn($key, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._');
            if ($n === strlen($key)) {
                return $this->prefix . self::escape($key);  // valid: no reserved character
            }
        }
        if (($error = self::keyError($key)) !== null) {
            throw self::invalid($error);
        }
        return $this->prefix . self::escape($key);
    }

    /** Why $key is not a valid PSR key (or tag), or null when it is. */
    private static function keyError(mixed $key, string $what = 'key'): ?string
    {
        if (!is_string($key)) {
            return "A cache $what must be a string, " . get_debug_type($key) . ' given';
        }
        if ($key === '') {
            return "A cache $what must not be empty";
        }
        if (strcspn($key, '{}()/\\@:') !== strlen($key)) {
            return "Cache $what \"$key\" contains a reserved character: {}()/\\@:";
        }
        return null;
    }

    /** The escaped form of a valid key or tag (see the file comment). */
    private static function escape(string $s): string
    {
        static $alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
        if (strspn($s, $alnum) !== strlen($s)) {
            // "_" first: the "_" that "_d" brings in must not be doubled
            $s = str_replace(['_', '.'], ['__', '_d'], $s);
            if (strspn($s, $alnum . '_') !== strlen($s)) {
                $s = preg_replace_callback('/[^A-Za-z0-9_]/', static fn(array $m): string => '_x' . bin2hex($m[0]), $s);
            }
        }
        return strlen($s) > 128 ? '_h' . hash('sha256', $s) : $s;
    }

    /** Backend tags for PSR tags (already validated), plus the namespace tag. */
    private function mapTags(array $tags): array
    {
        $out = [$this->nsTag];
        foreach ($tags as $tag) {
            $out[] = $this->prefix . self::escape($tag);
        }
        return $out;
    }

    /** The stored form of $value (and its tags). */
    private function encode(mixed $value, array $tags = []): string
    {
        if ($tags) {
            return 't' . serialize([$tags, $value]);
        }
        return is_string($value) ? 's' . $value : 'p' . serialize($value);
    }

    /**
     * Decodes a stored string: true and $value (and $tags) set, or false
     * when it is not something this class wrote.
     */
    private function decode(string $data, mixed &$value, ?array &$tags = null): bool
    {
        $tags = [];
        switch ($data[0] ?? '') {
            case 's':
                $value = substr($data, 1);
                return true;
            case 'p':
                $value = @unserialize(substr($data, 1), $this->unserializeOptions);
                return $value !== false || $data === 'pb:0;';
            case 't':
                $pair = @unserialize(substr($data, 1), $this->unserializeOptions);
                if (!is_array($pair) || !isset($pair[0]) || !is_array($pair[0]) || !array_key_exists(1, $pair)) {
                    return false;
                }
                [$tags, $value] = $pair;
                return true;
        }
        return false;
    }

    /**
     * The backend lifetime for an absolute expiry time (null: the default
     * lifetime), or false when that time has passed.
     */
    private function lifetimeUntil(?int $expiresAt): int|null|false
    {
        if ($expiresAt === null) {
            return $this->defaultLifetime;
        }
        $left = $expiresAt - time();
        return $left > 0 ? $left : false;
    }
}
