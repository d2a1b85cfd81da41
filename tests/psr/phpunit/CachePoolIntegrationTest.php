<?php
/* Debian's PSR-6 integration suite against TagCache\Psr6\TagAwarePool. */

class CachePoolIntegrationTest extends Cache\IntegrationTests\CachePoolTest
{
    protected function setUp(): void
    {
        $this->skippedTests = tcp_skipped('CachePoolTest');
        parent::setUp();
    }

    public function createCachePool()
    {
        return new TagCache\Psr6\TagAwarePool(tcp_backend(), 'psrunit');
    }
}
