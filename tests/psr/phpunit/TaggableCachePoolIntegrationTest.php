<?php
/* Debian's tag suite (Cache\TagInterop) against TagCache\Psr6\TagAwarePool. */

class TaggableCachePoolIntegrationTest extends Cache\IntegrationTests\TaggableCachePoolTest
{
    protected function setUp(): void
    {
        $this->skippedTests = tcp_skipped('TaggableCachePoolTest');
        parent::setUp();
    }

    public function createCachePool()
    {
        return new TagCache\Psr6\TagAwarePool(tcp_backend(), 'psrunit');
    }
}
