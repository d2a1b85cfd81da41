<?php
/*
 * TagCache_Zend_Backend: what every TagCache_Zend_* class shares. A real
 * Zend_Cache backend (extends the userland class Zend_Cache_Backend that
 * Zend_Cache_Core::setBackend() and Magento 2's Cache\Core type-hint, and
 * implements Zend_Cache_Backend_ExtendedInterface, which both Magentos'
 * factories look for) that forwards every call to one native object of the
 * class named by the subclass's NATIVE constant (TagCache\Shm, ...).
 *
 * The adapter keeps no state of its own: options, directives, the store and
 * everything else live in the native object, so it is exactly as fork-safe
 * as the native class (TagCache\Shm holds a mapping, which fork() shares
 * correctly; network backends reconnect in the child). It is also a
 * TagCache\Backend, so code written against the native interface (the PSR
 * adapters, the contract test suite) takes it as well.
 *
 * Errors: whatever the native class throws (TagCache\Exception for bad
 * options or a store that cannot be opened, ValueError for an id or tag it
 * refuses, TypeError for a wrong argument type) reaches the caller as a
 * Zend_Cache_Exception with the same message, prefixed with the adapter's
 * class name, and the original exception as getPrevious(). Ordinary cache
 * outcomes (a miss, a failed save) stay false, as the Zend contract says.
 *
 * The methods are one call each: no argument arrays, no func_get_args(), no
 * per-call checks beyond what the native method does. The parameters are
 * untyped, as in Zend_Cache_Backend_Interface, so a subclass stays
 * compatible with every ZF1 flavour (zf1, zf1-future, magento/zend-cache);
 * the native method coerces them (Magento 1 passes strings). That is why
 * this file, alone in php_src, has no declare(strict_types=1): it governs
 * the calls made from here, and strict calls would turn Zend_Cache's loose
 * arguments ("3600" for a lifetime, 0 for a flag) into TypeErrors.
 */

require_once __DIR__ . '/UnavailableError.php';
TagCache_Zend_UnavailableError::check();

abstract class TagCache_Zend_Backend extends Zend_Cache_Backend implements
    Zend_Cache_Backend_ExtendedInterface,
    TagCache\Backend
{
    /** The native class this adapter forwards to; each subclass sets it. */
    protected const NATIVE = '';

    /** @var TagCache\Backend the native object; the adapter's only state */
    protected TagCache\Backend $_native;

    /**
     * $options as the native class takes them (names case-insensitive,
     * unknown names ignored, values may be strings as Magento 1 passes them).
     * They may hold a password: #[\SensitiveParameter] keeps them out of
     * exception traces (zend.exception_ignore_args=0, var_dump($e), Sentry),
     * as the native constructor does.
     */
    public function __construct(#[\SensitiveParameter] array $options = [])
    {
        $class = static::NATIVE;
        if ($class === '' || !class_exists($class, false)) {
            $message = static::class . ': the native class ' . ($class === '' ? '(none)' : $class)
                . ' does not exist in this build of the tagcache extension';
            error_log($message);
            throw new Zend_Cache_Exception($message);
        }
        try {
            $this->_native = new $class($options);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            /* Magento 2 falls back to its file cache when a backend
             * constructor throws: leave a trace of why. */
            $z = $this->_zendException($e);
            error_log($z->getMessage());
            throw $z;
        }
    }

    public function setDirectives($directives): void
    {
        try {
            $this->_native->setDirectives($directives);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getOption($name): mixed
    {
        try {
            return $this->_native->getOption($name);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    /** $value may be a password (setOption('password', ...)): kept out of traces. */
    public function setOption($name, #[\SensitiveParameter] $value): void
    {
        try {
            $this->_native->setOption($name, $value);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    /** Zend_Cache_Backend::getLifetime(), reading the native directive. */
    public function getLifetime($specificLifetime)
    {
        return $specificLifetime === false ? $this->_native->getOption('lifetime') : $specificLifetime;
    }

    public function load($id, $doNotTestCacheValidity = false): string|false
    {
        try {
            return $this->_native->load($id, $doNotTestCacheValidity);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function loadMany($ids): array
    {
        try {
            return $this->_native->loadMany($ids);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function test($id): int|false
    {
        try {
            return $this->_native->test($id);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function save($data, $id, $tags = [], $specificLifetime = false): bool
    {
        try {
            return $this->_native->save($data, $id, $tags, $specificLifetime);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    /**
     * The native remember(): one build of $id at a time (see the native
     * class). What $build throws reaches the caller as it is; only the
     * native method's own errors become Zend_Cache_Exception.
     */
    public function remember($id, $build, $tags = [], $lifetime = false): string
    {
        if (!is_callable($build)) {
            throw $this->_zendException(new TypeError(
                'TagCache\\AbstractBackend::remember(): Argument #2 ($build) must be a valid callback'));
        }
        // a flag, not the exception: an exception held by a variable that
        // its own trace reaches (through this closure) is a cycle PHP 8.2
        // does not free at shutdown
        $fromBuild = false;
        try {
            return $this->_native->remember($id, static function () use ($build, &$fromBuild) {
                try {
                    return $build();
                } catch (Throwable $e) {
                    $fromBuild = true;
                    throw $e;
                }
            }, $tags, $lifetime);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            if ($fromBuild) {
                throw $e;
            }
            throw $this->_zendException($e);
        }
    }

    public function remove($id): bool
    {
        try {
            return $this->_native->remove($id);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function clean($mode = 'all', $tags = []): bool
    {
        try {
            return $this->_native->clean($mode, $tags);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getIds(): array
    {
        try {
            return $this->_native->getIds();
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getTags(): array
    {
        try {
            return $this->_native->getTags();
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getIdsMatchingTags($tags = []): array
    {
        try {
            return $this->_native->getIdsMatchingTags($tags);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getIdsNotMatchingTags($tags = []): array
    {
        try {
            return $this->_native->getIdsNotMatchingTags($tags);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getIdsMatchingAnyTags($tags = []): array
    {
        try {
            return $this->_native->getIdsMatchingAnyTags($tags);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getFillingPercentage(): int
    {
        try {
            return $this->_native->getFillingPercentage();
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getMetadatas($id): array|false
    {
        try {
            return $this->_native->getMetadatas($id);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function touch($id, $extraLifetime): bool
    {
        try {
            return $this->_native->touch($id, $extraLifetime);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function getCapabilities(): array
    {
        return $this->_native->getCapabilities();
    }

    public function stats(): array
    {
        try {
            return $this->_native->stats();
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    public function verify(): array
    {
        try {
            return $this->_native->verify();
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    /** The ZF1 test suite's hook: make $id expired now (still readable with load($id, true)). */
    public function ___expire($id): void
    {
        try {
            $this->_native->___expire($id);
        } catch (TagCache\Exception | ValueError | TypeError $e) {
            throw $this->_zendException($e);
        }
    }

    /** A handle on a store is not copied: a clone would share it anyway. */
    public function __clone()
    {
        throw new Zend_Cache_Exception(static::class . ' cannot be cloned');
    }

    public function __serialize(): array
    {
        throw new Zend_Cache_Exception('Serialization of ' . static::class . ' is not allowed');
    }

    public function __unserialize(array $data): void
    {
        throw new Zend_Cache_Exception('Unserialization of ' . static::class . ' is not allowed');
    }

    /**
     * $e as a Zend_Cache_Exception: same message (prefixed with our class
     * name), $e as previous. Only runs when something was thrown.
     */
    protected function _zendException(Throwable $e): Zend_Cache_Exception
    {
        $message = static::class . ': ' . $e->getMessage();
        if ($e instanceof Exception) {
            return new Zend_Cache_Exception($message, 0, $e);
        }
        /* ZF1 types Zend_Exception's $previous as Exception, which a
         * ValueError or TypeError is not: set it afterwards. */
        $z = new Zend_Cache_Exception($message);
        static $previous = null;
        $previous ??= new ReflectionProperty(Exception::class, 'previous');
        $previous->setValue($z, $e);
        return $z;
    }
}
