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
 * PHP error log before it is thrown.
 */

class TagCache_Zend_UnavailableError extends Error
{
    /** Logs $message (error_log) and returns the error to throw. */
    public static function logged(string $message): self
    {
        error_log($message);
        return new self($message);
    }
}
