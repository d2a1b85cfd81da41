<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * What Magento 1 puts between `Mage::app()->loadCache()/saveCache()/
 * cleanCache()` and the backend (Mage_Core_Model_Cache + Varien_Cache_Core +
 * Zend_Cache_Core), reduced to the work it does per call:
 *
 * - ids and tags upper-cased and given the instance prefix
 *   (substr(md5(etc dir), 0, 3) . '_');
 * - ids and tags checked against Zend_Cache_Core's pattern;
 * - the tag MAGE added to every record;
 * - write_control: a load (doNotTestCacheValidity) after each save, the
 *   entry removed and false returned when it does not read back;
 * - clean by tags = matchingAnyTag.
 *
 * Every backend in the benchmark, tagcache and peers alike, is called
 * through this class, so the rows of a table are comparable.
 */
final class Frontend
{
    public const MAGE_TAG = 'MAGE';

    private string $prefix;

    public function __construct(
        private readonly Adapter $backend,
        ?string $prefix = null,
        private readonly bool $writeControl = true,
    ) {
        $this->prefix = $prefix ?? substr(md5('/var/www/magento/app/etc'), 0, 3) . '_';
    }

    public function backend(): Adapter
    {
        return $this->backend;
    }

    /** The id as the backend sees it. */
    public function id(string $id): string
    {
        return $this->prefix . strtoupper($id);
    }

    public function load(string $id): string|false
    {
        $id = $this->prefix . strtoupper($id);
        self::validate($id);
        return $this->backend->load($id);
    }

    public function save(string $data, string $id, array $tags = [], int|false|null $lifetime = false): bool
    {
        if (!in_array(self::MAGE_TAG, $tags, true)) {
            $tags[] = self::MAGE_TAG;
        }
        $id = $this->prefix . strtoupper($id);
        self::validate($id);
        foreach ($tags as $i => $tag) {
            $tags[$i] = $tag = $this->prefix . strtoupper($tag);
            self::validate($tag);
        }
        if (!$this->backend->save($data, $id, $tags, $lifetime)) {
            return false;
        }
        if ($this->writeControl) {
            $check = $this->backend->load($id, true);
            if ($check !== $data) {
                $this->backend->remove($id);
                return false;
            }
        }
        return true;
    }

    public function clean(array $tags): bool
    {
        foreach ($tags as $i => $tag) {
            $tags[$i] = $tag = $this->prefix . strtoupper($tag);
            self::validate($tag);
        }
        return $this->backend->cleanAnyTags($tags);
    }

    public function remove(string $id): bool
    {
        return $this->backend->remove($this->prefix . strtoupper($id));
    }

    /** Zend_Cache_Core::_validateIdOrTag(). */
    private static function validate(string $s): void
    {
        if (!preg_match('~^[a-zA-Z0-9_]+$~D', $s)) {
            throw new \InvalidArgumentException("invalid id or tag '$s': must use only [a-zA-Z0-9_]");
        }
    }
}
