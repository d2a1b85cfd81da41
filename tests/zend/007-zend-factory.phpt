--TEST--
Zend adapters through Zend_Cache::factory() with custom naming: found on the include_path with no autoloader at all (autoload=false), and with one (autoload=true, as Magento calls it)
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
require __DIR__ . '/fixtures/zf1.php';
// No autoloader: Zend_Cache::factory(..., autoload=false) require_once's
// TagCache/Zend/<Name>.php from the include_path, which loads the base.
set_include_path(tcz_php_src() . PATH_SEPARATOR . get_include_path());

tcz_each_adapter('007', function (string $adapter, string $native, callable $make) {
    $options = tcz_test_options($native, '007.' . getmypid());
    $core = Zend_Cache::factory('Core', $adapter, ['cache_id_prefix' => 'z_'], $options, false, true, false);
    tcz_ok($core->getBackend() instanceof $adapter, 'factory(Core, <adapter>, ..., customBackendNaming=true, autoload=false) makes the adapter');
    tcz_same(true, $core->save('data', 'id', ['t']) && $core->load('id') === 'data', 'and it works');
    $e = tcz_throws('Zend_Cache_Exception', fn() => Zend_Cache::factory('Core', $adapter, [], $options, false, false, false),
        'without custom naming the name is normalized and not found: a Zend_Cache_Exception, not a fallback');
    tcz_ok($e && str_contains($e->getMessage(), 'not found in include_path'), '... saying the file was not found', $e ? $e->getMessage() : '');
    spl_autoload_register('tcz_varien_autoload');
    $core2 = Zend_Cache::factory('Core', $adapter, ['cache_id_prefix' => 'z_'], $options, false, true, true);
    tcz_same('data', $core2->load('id'), 'factory(..., true, true, true) (what Magento passes) gives an adapter on the same store');
    spl_autoload_unregister('tcz_varien_autoload');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_stores('007');
?>
--EXPECTF--
ok: factory(Core, <adapter>, ..., customBackendNaming=true, autoload=false) makes the adapter
ok: and it works
ok: without custom naming the name is normalized and not found: a Zend_Cache_Exception, not a fallback
ok: ... saying the file was not found
ok: factory(..., true, true, true) (what Magento passes) gives an adapter on the same store
backends: %d
