--TEST--
Zend adapters whose native class this build lacks: loading throws TagCache_Zend_UnavailableError (logged), every time, and Magento cannot fall back silently
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--SKIPIF--
<?php
require __DIR__ . '/zend.inc';
if (!tcz_missing()) {
    die('skip this build has every native class in TCZ_BACKENDS: no adapter to load without its native class');
}
?>
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();
require __DIR__ . '/fixtures/magento.php';
$log = sys_get_temp_dir() . '/tcz005.' . getmypid() . '.log';
ini_set('error_log', $log);

$n = 0;
foreach (tcz_missing() as $native => $adapter) {
    $GLOBALS['tcz_current'] = $adapter;
    $n++;
    @unlink($log);
    $expected = "tagcache: $adapter needs the native class $native, which this build of the tagcache extension ("
        . phpversion('tagcache') . ') does not have';
    foreach (['first', 'second'] as $attempt) {
        $e = tcz_throws('TagCache_Zend_UnavailableError', fn() => class_exists($adapter, true),
            "class_exists() with autoload throws TagCache_Zend_UnavailableError ($attempt attempt)");
        tcz_same($expected, $e ? $e->getMessage() : null, "... naming the adapter and the missing native class ($attempt attempt)");
    }
    tcz_ok($e instanceof Error && !$e instanceof Exception, 'it is an Error, not an Exception');
    $e = tcz_throws('TagCache_Zend_UnavailableError', fn() => tcz_magento_backend_type($adapter, 'File'),
        "Magento's class_exists()/class_implements() check does not swallow it (it catches Exception)");
    $lines = file_exists($log) ? file($log, FILE_IGNORE_NEW_LINES) : [];
    tcz_same(3, count($lines), 'each attempt wrote one line to the PHP error log');
    tcz_ok(isset($lines[0]) && str_ends_with($lines[0], "] $expected"), '... with the same message', $lines[0] ?? '');
}
$GLOBALS['tcz_backends_run'] = $n;
@unlink($log);
tcz_report();
?>
--CLEAN--
<?php
foreach (glob(sys_get_temp_dir() . '/tcz005.*.log') ?: [] as $f) {
    unlink($f);
}
?>
--EXPECTF--
ok: class_exists() with autoload throws TagCache_Zend_UnavailableError (first attempt)
ok: ... naming the adapter and the missing native class (first attempt)
ok: class_exists() with autoload throws TagCache_Zend_UnavailableError (second attempt)
ok: ... naming the adapter and the missing native class (second attempt)
ok: it is an Error, not an Exception
ok: Magento's class_exists()/class_implements() check does not swallow it (it catches Exception)
ok: each attempt wrote one line to the PHP error log
ok: ... with the same message
backends: %d
