--TEST--
Zend adapters: every error is a Zend_Cache_Exception carrying the native error; constructor failures are also logged
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();
$log = sys_get_temp_dir() . '/tcz003.' . getmypid() . '.log';
ini_set('error_log', $log);

function tcz_wrapped(string $previous, callable $fn, string $label, string $adapter): void
{
    $e = tcz_throws('Zend_Cache_Exception', $fn, "$label throws Zend_Cache_Exception");
    if ($e instanceof Zend_Cache_Exception) {
        tcz_ok($e->getPrevious() instanceof $previous, "... whose previous is a $previous",
            'previous: ' . ($e->getPrevious() ? get_class($e->getPrevious()) : 'none'));
        tcz_ok(str_starts_with($e->getMessage(), "$adapter: ") && $e->getPrevious()
            && str_ends_with($e->getMessage(), $e->getPrevious()->getMessage()),
            '... with the native message, prefixed with the adapter class', $e->getMessage());
    }
}

tcz_each_adapter('003', function (string $adapter, string $native, callable $make) use ($log) {
    @unlink($log);
    $b = $make();
    tcz_ok(is_subclass_of('Zend_Cache_Exception', 'Zend_Exception'), 'Zend_Cache_Exception is a Zend_Exception (fixture)');
    tcz_wrapped('ValueError', fn() => $b->load(''), 'load(\'\')', $adapter);
    tcz_wrapped('ValueError', fn() => $b->save('x', str_repeat('i', 1025)), 'save() with a 1025-byte id', $adapter);
    tcz_wrapped('ValueError', fn() => $b->clean('nonsense'), "clean('nonsense')", $adapter);
    tcz_wrapped('TypeError', fn() => $b->clean('matchingTag', 'tag3'), 'clean() with tags not an array', $adapter);
    tcz_wrapped('TypeError', fn() => $b->save('x', 'id', [['nested']]), 'save() with a tag that is an array', $adapter);
    tcz_wrapped('TypeError', fn() => $b->setDirectives('foo'), "setDirectives('foo')", $adapter);
    tcz_wrapped('TypeError', fn() => $b->save('x', 'id', [], true), 'save() with lifetime true', $adapter);
    tcz_wrapped('TypeError', fn() => $b->touch('id', 'soon'), "touch() with a lifetime 'soon'", $adapter);
    tcz_wrapped('TagCache\ConfigurationException', fn() => $b->setDirectives([5 => 3600]), 'setDirectives([5 => 3600])', $adapter);
    tcz_wrapped('TagCache\ConfigurationException', fn() => $b->getOption('doesNotExist'), "getOption('doesNotExist')", $adapter);
    tcz_wrapped('TagCache\ConfigurationException', fn() => $b->setOption('lifetime', 'forever'), "setOption('lifetime', 'forever')", $adapter);
    tcz_same('', (string) @file_get_contents($log), 'errors after construction are not logged (the caller sees them)');

    tcz_wrapped('TagCache\ConfigurationException', fn() => $make([1 => 'bar']), 'new adapter([1 => bar])', $adapter);
    tcz_wrapped('TagCache\ConfigurationException', fn() => $make(['lifetime' => 'a while']), "new adapter([lifetime => 'a while'])", $adapter);
    $lines = file_exists($log) ? file($log, FILE_IGNORE_NEW_LINES) : [];
    tcz_same(2, count($lines), 'each failed constructor wrote one line to the PHP error log');
    tcz_ok(isset($lines[1]) && str_contains($lines[1], "$adapter: ") && str_contains($lines[1], 'lifetime'),
        '... naming the adapter and the problem', $lines[1] ?? '');
    if ($native === 'TagCache\Shm') {
        tcz_wrapped('TagCache\StorageException', fn() => $make(['dir' => '/nonexistent/tagcache']),
            'new adapter on a store that cannot be opened', $adapter);
        tcz_wrapped('TagCache\ConfigurationException', fn() => $make(['size' => 'lots']),
            "new adapter([size => 'lots'])", $adapter);
    }
    tcz_same('bar : data', ($b->save('bar : data', 'bar') ? $b->load('bar') : false), 'the adapter still works after all that');
});
@unlink($log);
tcz_report();

class Tcz_Zend_Nowhere extends TagCache_Zend_Backend
{
    protected const NATIVE = 'TagCache\Nowhere';
}
$e = null;
ini_set('error_log', $log);
try {
    new Tcz_Zend_Nowhere([]);
} catch (Zend_Cache_Exception $e) {
}
echo 'an adapter subclass naming a native class that does not exist: ', $e ? $e->getMessage() : 'no exception', "\n";
echo 'logged: ', $e && str_ends_with(trim((string) @file_get_contents($log)), '] ' . $e->getMessage()) ? 'yes' : 'no', "\n";
@unlink($log);
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_stores('003');
foreach (glob(sys_get_temp_dir() . '/tcz003.*.log') ?: [] as $f) {
    unlink($f);
}
?>
--EXPECTF--
ok: Zend_Cache_Exception is a Zend_Exception (fixture)
ok: load('') throws Zend_Cache_Exception
ok: ... whose previous is a ValueError
ok: ... with the native message, prefixed with the adapter class
ok: save() with a 1025-byte id throws Zend_Cache_Exception
ok: clean('nonsense') throws Zend_Cache_Exception
ok: clean() with tags not an array throws Zend_Cache_Exception
ok: ... whose previous is a TypeError
ok: save() with a tag that is an array throws Zend_Cache_Exception
ok: setDirectives('foo') throws Zend_Cache_Exception
ok: save() with lifetime true throws Zend_Cache_Exception
ok: touch() with a lifetime 'soon' throws Zend_Cache_Exception
ok: setDirectives([5 => 3600]) throws Zend_Cache_Exception
ok: ... whose previous is a TagCache\ConfigurationException
ok: getOption('doesNotExist') throws Zend_Cache_Exception
ok: setOption('lifetime', 'forever') throws Zend_Cache_Exception
ok: errors after construction are not logged (the caller sees them)
ok: new adapter([1 => bar]) throws Zend_Cache_Exception
ok: new adapter([lifetime => 'a while']) throws Zend_Cache_Exception
ok: each failed constructor wrote one line to the PHP error log
ok: ... naming the adapter and the problem
ok: new adapter on a store that cannot be opened throws Zend_Cache_Exception
ok: ... whose previous is a TagCache\StorageException
ok: new adapter([size => 'lots']) throws Zend_Cache_Exception
ok: the adapter still works after all that
backends: %d
an adapter subclass naming a native class that does not exist: Tcz_Zend_Nowhere: the native class TagCache\Nowhere does not exist in this build of the tagcache extension
logged: yes
