<?php

/**
 * The single source of tagcache's PHP API. scripts/gen-stubs.sh turns it
 * into tagcache_arginfo.h (committed).
 *
 * @generate-class-entries
 * @generate-legacy-arginfo 80100
 */

namespace TagCache {

    /** Base of every error tagcache throws on purpose. */
    class Exception extends \RuntimeException
    {
    }

    /** Bad options: unknown value, wrong type, impossible size. */
    class ConfigurationException extends Exception
    {
    }

    /** The store cannot be opened or used: segment refused, disk error. */
    class StorageException extends Exception
    {
    }

    /** A server could not be reached or answered wrongly (network backends). */
    class ConnectionException extends Exception
    {
    }

    /** The Zend_Cache backend method set, plus stats() and loadMany(). */
    interface Backend
    {
        /** @var string */
        public const CLEANING_MODE_ALL = "all";
        /** @var string */
        public const CLEANING_MODE_OLD = "old";
        /** @var string */
        public const CLEANING_MODE_MATCHING_TAG = "matchingTag";
        /** @var string */
        public const CLEANING_MODE_NOT_MATCHING_TAG = "notMatchingTag";
        /** @var string */
        public const CLEANING_MODE_MATCHING_ANY_TAG = "matchingAnyTag";

        public function setDirectives(array $directives): void;

        public function getOption(string $name): mixed;

        public function setOption(string $name, mixed $value): void;

        public function load(string $id, bool $doNotTestCacheValidity = false): string|false;

        public function loadMany(array $ids): array;

        public function test(string $id): int|false;

        public function save(string $data, string $id, array $tags = [], mixed $specificLifetime = false): bool;

        public function remove(string $id): bool;

        public function clean(string $mode = "all", array $tags = []): bool;

        public function getIds(): array;

        public function getTags(): array;

        public function getIdsMatchingTags(array $tags = []): array;

        public function getIdsNotMatchingTags(array $tags = []): array;

        public function getIdsMatchingAnyTags(array $tags = []): array;

        public function getFillingPercentage(): int;

        public function getMetadatas(string $id): array|false;

        public function touch(string $id, int $extraLifetime): bool;

        public function getCapabilities(): array;

        public function stats(): array;

        public function verify(): array;

        public function ___expire(string $id): void;
    }

    /**
     * One object layout and one method set for every native backend; the
     * concrete class only chooses the engine.
     */
    abstract class AbstractBackend implements Backend
    {
        public function __construct(#[\SensitiveParameter] array $options = []) {}

        public function setDirectives(array $directives): void {}

        public function getOption(string $name): mixed {}

        public function setOption(string $name, #[\SensitiveParameter] mixed $value): void {}

        public function load(string $id, bool $doNotTestCacheValidity = false): string|false {}

        public function loadMany(array $ids): array {}

        public function test(string $id): int|false {}

        public function save(string $data, string $id, array $tags = [], mixed $specificLifetime = false): bool {}

        /**
         * The value of $id; if there is none, $build() makes it (a string),
         * and it is saved with $tags and $lifetime. One build per id at a
         * time across the processes of the machine (Shm, File); the others
         * wait for it, woken when it lands, at most rebuild_timeout.
         */
        public function remember(string $id, callable $build, array $tags = [], mixed $lifetime = false): string {}

        public function remove(string $id): bool {}

        public function clean(string $mode = "all", array $tags = []): bool {}

        public function getIds(): array {}

        public function getTags(): array {}

        public function getIdsMatchingTags(array $tags = []): array {}

        public function getIdsNotMatchingTags(array $tags = []): array {}

        public function getIdsMatchingAnyTags(array $tags = []): array {}

        public function getFillingPercentage(): int {}

        public function getMetadatas(string $id): array|false {}

        public function touch(string $id, int $extraLifetime): bool {}

        public function getCapabilities(): array {}

        public function stats(): array {}

        public function verify(): array {}

        public function ___expire(string $id): void {}

        public function __serialize(): array {}

        public function __unserialize(array $data): void {}
    }

    /*
     * The engines' classes are not declared here: tc_class.c registers one
     * per entry of tc_engines[] (ext/tc_engines.c), each
     * `final class TagCache\<Name> extends AbstractBackend {}` with no
     * method of its own: Shm (the named shared-memory segment under
     * /dev/shm), File (append-only log files plus an index, in one
     * directory), Redis (Redis, Sentinel or Redis Cluster through hiredis)
     * and Memcached (a memcached pool through libmemcached, ketama; tags
     * through version keys, no listings) when built.
     */
}
