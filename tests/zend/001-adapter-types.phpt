--TEST--
Zend adapters: each is a Zend_Cache_Backend with the extended interface, a TagCache\Backend, and passes Zend_Cache_Core's type hint
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();

tcz_each_adapter('001', function (string $adapter, string $native, callable $make) {
    tcz_ok(class_exists($adapter, true), 'class_exists() with autoload finds the adapter');
    $rc = new ReflectionClass($adapter);
    $file = substr($rc->getFileName(), strlen(tcz_php_src()) + 1);
    tcz_same(str_replace('_', '/', $adapter) . '.php', $file, 'its file is <Class/With/Underscores>.php under php_src/');
    tcz_ok($rc->isSubclassOf('Zend_Cache_Backend'), 'extends Zend_Cache_Backend');
    $impl = class_implements($adapter, true);
    foreach (['Zend_Cache_Backend_Interface', 'Zend_Cache_Backend_ExtendedInterface', 'TagCache\Backend'] as $i) {
        tcz_ok(isset($impl[$i]), "class_implements() lists $i");
    }
    $missing = [];
    foreach (['Zend_Cache_Backend_ExtendedInterface', $native] as $from) {
        foreach ((new ReflectionClass($from))->getMethods(ReflectionMethod::IS_PUBLIC) as $m) {
            $name = $m->getName();
            if (!in_array($name, ['__construct', '__serialize', '__unserialize'], true)
                && (!$rc->hasMethod($name) || !$rc->getMethod($name)->isPublic())) {
                $missing[] = $name;
            }
        }
    }
    tcz_same([], $missing, 'every public method of the Zend interfaces and of the native class is there');
    tcz_ok($rc->hasMethod('___expire'), 'the ZF1 test hook ___expire() is there');
    $typed = [];
    foreach ((new ReflectionClass('Zend_Cache_Backend_ExtendedInterface'))->getMethods() as $m) {
        foreach ($rc->getMethod($m->getName())->getParameters() as $p) {
            if ($p->hasType()) {
                $typed[] = $m->getName() . '($' . $p->getName() . ')';
            }
        }
    }
    tcz_same([], $typed, 'the Zend methods take untyped parameters, as ZF1 declares them');

    $b = $make();
    $core = new Zend_Cache_Core(['lifetime' => 300]);
    $core->setBackend($b);
    tcz_same(300, $b->getOption('lifetime'), 'Zend_Cache_Core::setBackend() (typed Zend_Cache_Backend) accepts it and sets the lifetime directive');
    tcz_same(300, $b->getLifetime(false), 'getLifetime(false) is the directive');
    tcz_same(null, $b->getLifetime(null), 'getLifetime(null) is null (forever)');
    tcz_ok(is_int($core->getFillingPercentage()), 'Zend_Cache_Core treats it as an extended backend');
    tcz_same($b->getCapabilities(), (new $native(tcz_test_options($native, '001.' . getmypid())))->getCapabilities(),
        "getCapabilities() is the native class's");
    $e = tcz_throws('Zend_Cache_Exception', fn() => clone $b, 'clone throws Zend_Cache_Exception');
    $e = tcz_throws('Zend_Cache_Exception', fn() => serialize($b), 'serialize() throws Zend_Cache_Exception');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_stores('001');
?>
--EXPECTF--
ok: class_exists() with autoload finds the adapter
ok: its file is <Class/With/Underscores>.php under php_src/
ok: extends Zend_Cache_Backend
ok: class_implements() lists Zend_Cache_Backend_Interface
ok: class_implements() lists Zend_Cache_Backend_ExtendedInterface
ok: class_implements() lists TagCache\Backend
ok: every public method of the Zend interfaces and of the native class is there
ok: the ZF1 test hook ___expire() is there
ok: the Zend methods take untyped parameters, as ZF1 declares them
ok: Zend_Cache_Core::setBackend() (typed Zend_Cache_Backend) accepts it and sets the lifetime directive
ok: getLifetime(false) is the directive
ok: getLifetime(null) is null (forever)
ok: Zend_Cache_Core treats it as an extended backend
ok: getCapabilities() is the native class's
ok: clone throws Zend_Cache_Exception
ok: serialize() throws Zend_Cache_Exception
backends: %d
