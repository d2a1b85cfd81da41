<?php
/*
 * Thrown while a TagCache_Zend_* class file loads, when that backend cannot
 * work in this PHP at all: the tagcache extension is not loaded, the
 * extension was built without this backend, or Zend_Cache is not loadable.
 *
 * An Error on purpose, not an Exception: Magento 1 (Mage_Core_Model_Cache)
 * and Magento 2 (Cache\Frontend\Factory) call class_exists() on the
 * configured backend inside try { } catch (Exception $e) { } and silently
 * fall back to a file cache when anything goes wrong. An Error passes that
 * catch, so the request stops with this message instead of running on
 * another cache than the one configured. The message is also written to the
 * PHP error log (error_log()) before it is thrown.
 */

declare(strict_types=1);

class TagCache_Zend_UnavailableError extends Error
{
    /**
     * Throws (and logs) unless the extension is loaded, Zend_Cache is
     * loadable and, when given, the native class $native exists.
     */
    public static function check(?string $adapter = null, ?string $native = null): void
    {
        if (!extension_loaded('tagcache')) {
            throw self::logged(
                'tagcache: the PHP extension "tagcache" is not loaded in this PHP ('
                . PHP_SAPI . ' ' . PHP_VERSION . ', php.ini: ' . (php_ini_loaded_file() ?: 'none')
                . '), so the TagCache_Zend_* cache backends cannot run. Load it in every PHP that'
                . ' runs this application (php-fpm, CLI, cron): extension=tagcache.so'
            );
        }
        if (!class_exists('Zend_Cache_Backend') || !interface_exists('Zend_Cache_Backend_ExtendedInterface')) {
            throw self::logged(
                'tagcache: the TagCache_Zend_* cache backends need Zend_Cache (Zend_Cache_Backend and'
                . ' Zend_Cache_Backend_ExtendedInterface, from zf1, zf1-future or magento/zend-cache),'
                . ' and it cannot be loaded here'
            );
        }
        if ($native !== null && !class_exists($native, false)) {
            throw self::logged(
                "tagcache: $adapter needs the native class $native, which this build of the tagcache"
                . ' extension (' . phpversion('tagcache') . ') does not have'
            );
        }
    }

    /** Logs $message (error_log) and returns the error to throw. */
    public static function logged(string $message): self
    {
        error_log($message);
        return new self($message);
    }
}
