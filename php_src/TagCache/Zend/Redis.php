<?php
/*
 * TagCache_Zend_Redis: Zend_Cache backend over Redis, Sentinel or Redis Cluster (TagCache\Redis).
 *
 * Loading this file in a PHP whose tagcache extension has no TagCache\Redis (not
 * built with it, or a version before it landed) throws
 * TagCache_Zend_UnavailableError and logs why, so Magento cannot silently
 * fall back to its file cache.
 */

require_once __DIR__ . '/Backend.php';

if (!class_exists('TagCache\Redis', false)) {
    throw TagCache_Zend_UnavailableError::logged(
        'tagcache: TagCache_Zend_Redis needs the native class TagCache\Redis, which this build of the'
        . ' tagcache extension (' . phpversion('tagcache') . ') does not have'
    );
}

class TagCache_Zend_Redis extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\Redis';
}
