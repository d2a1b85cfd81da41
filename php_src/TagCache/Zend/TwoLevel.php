<?php
/*
 * TagCache_Zend_TwoLevel: Zend_Cache backend over shared memory in front of another backend (TagCache\TwoLevel).
 *
 * Loading this file in a PHP whose tagcache extension has no TagCache\TwoLevel (not
 * built with it, or a version before it landed) throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

require_once __DIR__ . '/Backend.php';

if (!class_exists('TagCache\TwoLevel', false)) {
    throw TagCache_Zend_UnavailableError::logged(
        'tagcache: TagCache_Zend_TwoLevel needs the native class TagCache\TwoLevel, which this build of the'
        . ' tagcache extension (' . phpversion('tagcache') . ') does not have'
    );
}

class TagCache_Zend_TwoLevel extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\TwoLevel';
}
