--TEST--
PSR-6 TagCache\Psr6\TagAwarePool where cache/tag-interop is not installed: the pool is a plain CacheItemPoolInterface and its tag methods still work
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--SKIPIF--
<?php
if (stream_resolve_include_path('Psr/Cache/autoload.php') === false) {
    die('skip Psr/Cache is not on the include_path (Debian package php-psr-cache, installed by scripts/setup.sh)');
}
?>
--FILE--
<?php
require __DIR__ . '/psr.inc';
// psr/cache only: no Cache\TagInterop autoloader
require_once 'Psr/Cache/autoload.php';
spl_autoload_register(static function (string $class): void {
    $file = tcz_php_src() . '/' . str_replace('\\', '/', $class) . '.php';
    if (str_starts_with($class, 'TagCache\\Psr') && is_file($file)) {
        require $file;
    }
});

tcz_each_adapter('p003', function (string $adapter, string $native, callable $make, array $options) {
    $p = new TagCache\Psr6\TagAwarePool(new $native($options));
    tcz_ok(!interface_exists('Cache\TagInterop\TaggableCacheItemPoolInterface', false), 'Cache\TagInterop is not loaded');
    tcz_ok($p instanceof Psr\Cache\CacheItemPoolInterface, 'the pool is a Psr\Cache\CacheItemPoolInterface');
    $p->save($p->getItem('a')->set('1')->setTags(['t']));
    $p->save($p->getItem('b')->set('2'));
    tcz_same(['t'], $p->getItem('a')->getPreviousTags(), 'setTags() and getPreviousTags() work');
    tcz_same(true, $p->invalidateTags(['t']) && !$p->hasItem('a') && $p->hasItem('b'), 'invalidateTags() works');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/psr.inc';
tcz_clean_stores('p003');
?>
--EXPECTF--
ok: Cache\TagInterop is not loaded
ok: the pool is a Psr\Cache\CacheItemPoolInterface
ok: setTags() and getPreviousTags() work
ok: invalidateTags() works
backends: %d
