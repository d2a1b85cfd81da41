<?php
/*
 * TagCache_Zend_TwoLevel: Zend_Cache backend over shared memory in front of another backend (TagCache\TwoLevel).
 *
 * Loading this file in a PHP whose tagcache extension has no TagCache\TwoLevel (not
 * built with it, or a version before it landed) throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

declare(strict_types=1);

require_once __DIR__ . '/UnavailableError.php';
TagCache_Zend_UnavailableError::check('TagCache_Zend_TwoLevel', 'TagCache\TwoLevel');
require_once __DIR__ . '/Backend.php';

class TagCache_Zend_TwoLevel extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\TwoLevel';
}
