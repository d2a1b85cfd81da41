<?php
/*
 * Bootstrap of the PSR integration suites (Debian's php-cache-integration-
 * tests) run against TagCache\Psr16\Cache and TagCache\Psr6\TagAwarePool.
 * scripts/psr-suite.sh runs PHPUnit once per native backend class this
 * build has, naming it in TAGCACHE_PSR_NATIVE.
 */

require __DIR__ . '/../psr.inc';
tcp_setup();
require_once 'Cache/IntegrationTests/autoload.php';

/** A backend on this run's store, created on first use and removed when PHPUnit exits. */
function tcp_backend(): TagCache\Backend
{
    static $options = null;
    $native = getenv('TAGCACHE_PSR_NATIVE') ?: 'TagCache\Shm';
    if ($options === null) {
        $name = 'psrunit.' . getmypid();
        $options = tcz_test_options($native, $name);
        if ($options === null) {
            throw new RuntimeException("add $native to tcz_test_options() in tests/zend/zend.inc");
        }
        tcz_test_cleanup($native, $name);
        register_shutdown_function('tcz_test_cleanup', $native, $name);
    }
    return new $native($options);
}

/** The reasons a case is skipped; tests/psr/SKIPPED.md lists the same cases. */
function tcp_skipped(string $suite): array
{
    $skipped = [];
    foreach (file(__DIR__ . '/../SKIPPED.md', FILE_IGNORE_NEW_LINES) ?: [] as $line) {
        if (preg_match('/^- `(\w+)::(\w+)`: (.+)$/', $line, $m) && $m[1] === $suite) {
            $skipped[$m[2]] = $m[3];
        }
    }
    return $skipped;
}
