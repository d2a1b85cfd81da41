<?php
/*
 * TagCache_Zend_File: Zend_Cache backend over the append-only file store (TagCache\File).
 *
 * Loading this file in a PHP whose tagcache extension has no TagCache\File (not
 * built with it, or a version before it landed) throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

declare(strict_types=1);

require_once __DIR__ . '/UnavailableError.php';
TagCache_Zend_UnavailableError::check('TagCache_Zend_File', 'TagCache\File');
require_once __DIR__ . '/Backend.php';

class TagCache_Zend_File extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\File';
}
