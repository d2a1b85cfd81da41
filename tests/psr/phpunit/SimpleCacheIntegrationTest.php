<?php
/* Debian's PSR-16 integration suite against TagCache\Psr16\Cache. */

class SimpleCacheIntegrationTest extends Cache\IntegrationTests\SimpleCacheTest
{
    protected function setUp(): void
    {
        $this->skippedTests = tcp_skipped('SimpleCacheTest');
        parent::setUp();
    }

    public function createSimpleCache()
    {
        return new TagCache\Psr16\Cache(tcp_backend(), 'psrunit');
    }
}
