--TEST--
Zend adapters behind Zend_Cache_Core and Varien_Cache_Core: prefix, validation, write_control, serialization off, directives
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();

tcz_each_adapter('002', function (string $adapter, string $native, callable $make) {
    $b = $make();
    $core = Zend_Cache::factory('Core', $b, ['cache_id_prefix' => 'p1_', 'lifetime' => 120], []);
    tcz_same($b, $core->getBackend(), 'Zend_Cache::factory() takes a ready adapter object (class_implements check)');

    // prefix on ids, not on tags (plain Zend_Cache_Core)
    tcz_same(true, $core->save('one', 'id1', ['t1']), 'Core::save() returns true');
    if (tcz_lists($b)) {
        tcz_same(['p1_id1'], $b->getIds(), 'the backend stores the prefixed id');
        tcz_same(['t1'], $b->getTags(), 'plain Zend_Cache_Core does not prefix tags');
        tcz_same(['id1'], $core->getIds(), 'Core::getIds() strips the prefix');
        tcz_same(['id1'], $core->getIdsMatchingTags(['t1']), 'Core::getIdsMatchingTags() strips the prefix');
    }
    tcz_same('one', $core->load('id1'), 'Core::load()');
    tcz_ok(is_int($core->test('id1')) && $core->test('id1') > 999999, 'Core::test() is an mtime');

    // write_control: the save is read back once; the entry must be there already
    $before = $b->stats()['hits'] ?? null;
    $core->save('two', 'id2');
    $after = $b->stats()['hits'] ?? null;
    tcz_ok(is_int($before) && $after === $before + 1, 'write_control: Core reads every save back, and it is a hit',
        "hits before $before, after $after");

    // the lifetime directive reaches the backend
    $t0 = time();
    $core->save('three', 'id3');
    $m = $core->getMetadatas('id3');
    tcz_ok(is_array($m) && $m['expire'] >= $t0 + 120 && $m['expire'] <= time() + 120,
        'the frontend lifetime (120) is the backend directive', var_export($m, true));
    $core->setLifetime('60');  // a Magento 1 string
    tcz_same(60, $b->getOption('lifetime'), 'Core::setLifetime() pushes the directive (string coerced)');
    $core->save('four', 'id4', [], null);
    tcz_same(9999999999, $core->getMetadatas('id4')['expire'] ?? null, 'a null specific lifetime is forever');
    tcz_same(true, $core->touch('id3', 30), 'Core::touch() (prefixed, not validated)');
    tcz_same($m['expire'] + 30, $core->getMetadatas('id3')['expire'] ?? null, 'touch() added exactly 30 s');

    // validation happens before the backend sees the id
    $ids = $b->getIds();
    foreach (['bad-id', 'sp ace', 'internal-x', 'dot.ted'] as $bad) {
        tcz_throws('Zend_Cache_Exception', fn() => $core->save('x', $bad), "Core::save() rejects the id '$bad'");
    }
    tcz_throws('Zend_Cache_Exception', fn() => $core->save('x', 'ok_id', ['bad-tag']), 'Core::save() rejects a tag with -');
    tcz_same($ids, $b->getIds(), 'rejected saves never reached the backend');

    // serialization is the frontend's job: off, non-strings are refused
    tcz_throws('Zend_Cache_Exception', fn() => $core->save(['an', 'array'], 'arr'), 'Core::save() of an array throws (automatic_serialization off)');
    $ser = Zend_Cache::factory('Core', $b, ['automatic_serialization' => true, 'cache_id_prefix' => 'p2_'], []);
    $ser->save(['an', 'array'], 'arr');
    tcz_same(['an', 'array'], $ser->load('arr'), 'with automatic_serialization on, the backend stores the serialized string');
    tcz_same(serialize(['an', 'array']), $b->load('p2_arr'), 'which is a plain string in the backend');

    // Varien/Magento cores prefix tags like ids; Magento cleans with matchingAnyTag
    $v = Zend_Cache::factory('Varien_Cache_Core', $b, ['cache_id_prefix' => 'a1b_'], [], true);
    $v->save('p', 'PRODUCT_1', ['CATALOG_PRODUCT_1', 'MAGE']);
    $v->save('q', 'PRODUCT_2', ['CATALOG_PRODUCT_2', 'MAGE']);
    tcz_ok(!tcz_lists($b) || in_array('a1b_MAGE', $b->getTags(), true), 'Varien_Cache_Core prefixes tags');
    tcz_same(true, $v->clean('matchingAnyTag', ['CATALOG_PRODUCT_1']), "clean('matchingAnyTag') through the frontend");
    tcz_same([false, 'q'], [$v->load('PRODUCT_1'), $v->load('PRODUCT_2')], 'only the tagged entry went');
    tcz_throws('Zend_Cache_Exception', fn() => $v->clean('nonsense'), 'the frontend rejects an unknown mode');
    tcz_same(true, $v->clean('old'), "clean('old') through the frontend");
    tcz_same(true, $v->clean('all'), "clean('all') through the frontend");
    tcz_same(tcz_lists($b) ? [] : false, tcz_lists($b) ? $b->getIds() : $v->load('PRODUCT_2'), "clean('all') emptied the store");
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_stores('002');
?>
--EXPECTF--
ok: Zend_Cache::factory() takes a ready adapter object (class_implements check)
ok: Core::save() returns true
ok: the backend stores the prefixed id
ok: plain Zend_Cache_Core does not prefix tags
ok: Core::getIds() strips the prefix
ok: Core::getIdsMatchingTags() strips the prefix
ok: Core::load()
ok: Core::test() is an mtime
ok: write_control: Core reads every save back, and it is a hit
ok: the frontend lifetime (120) is the backend directive
ok: Core::setLifetime() pushes the directive (string coerced)
ok: a null specific lifetime is forever
ok: Core::touch() (prefixed, not validated)
ok: touch() added exactly 30 s
ok: Core::save() rejects the id 'bad-id'
ok: Core::save() rejects the id 'sp ace'
ok: Core::save() rejects the id 'internal-x'
ok: Core::save() rejects the id 'dot.ted'
ok: Core::save() rejects a tag with -
ok: rejected saves never reached the backend
ok: Core::save() of an array throws (automatic_serialization off)
ok: with automatic_serialization on, the backend stores the serialized string
ok: which is a plain string in the backend
ok: Varien_Cache_Core prefixes tags
ok: clean('matchingAnyTag') through the frontend
ok: only the tagged entry went
ok: the frontend rejects an unknown mode
ok: clean('old') through the frontend
ok: clean('all') through the frontend
ok: clean('all') emptied the store
backends: %d
