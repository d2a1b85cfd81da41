<?php
/*
 * TagCache_Zend_Shm: Zend_Cache backend over TagCache\Shm, the named
 * shared-memory segment that every process on the machine shares.
 *
 *   Magento 1 (app/etc/local.xml):  <backend>TagCache_Zend_Shm</backend>
 *   Magento 2 (app/etc/env.php):    'backend' => 'TagCache_Zend_Shm'
 *
 * Options: those of TagCache\Shm (segment, size, dir, path, max_entries,
 * mode, lifetime, lock_timeout); see README.md.
 *
 * Each backend's class is this file with another name and NATIVE: loading
 * it in a PHP whose tagcache extension lacks the native class throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

declare(strict_types=1);

require_once __DIR__ . '/UnavailableError.php';
TagCache_Zend_UnavailableError::check('TagCache_Zend_Shm', 'TagCache\Shm');
require_once __DIR__ . '/Backend.php';

class TagCache_Zend_Shm extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\Shm';
}
