<?php
/*
 * TagCache_Zend_Memcached: Zend_Cache backend over memcached servers (TagCache\Memcached).
 *
 * Loading this file in a PHP whose tagcache extension has no TagCache\Memcached (not
 * built with it, or a version before it landed) throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

declare(strict_types=1);

require_once __DIR__ . '/UnavailableError.php';
TagCache_Zend_UnavailableError::check('TagCache_Zend_Memcached', 'TagCache\Memcached');
require_once __DIR__ . '/Backend.php';

class TagCache_Zend_Memcached extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\Memcached';
}
