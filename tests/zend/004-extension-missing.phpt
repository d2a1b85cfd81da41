--TEST--
Zend adapters without the extension: loading TagCache_Zend_Shm throws an Error and logs, so Magento cannot fall back silently
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
$log = sys_get_temp_dir() . '/tcz004.' . getmypid() . '.log';
@unlink($log);
[$code, $out] = tcz_run(array_merge(tcz_php(false, $log), [__DIR__ . '/fixtures/no_extension_child.php', $log]));
@unlink($log);
echo preg_replace('/\(cli 8\.[^)]*\)/', '(cli PHP, php.ini: none)', $out);
echo "exit: $code\n";
?>
--CLEAN--
<?php
foreach (glob(sys_get_temp_dir() . '/tcz004.*.log') ?: [] as $f) {
    unlink($f);
}
?>
--EXPECT--
tagcache loaded: false
a class that does not exist: Magento picks File (silently)
Magento 1 stops with TagCache_Zend_UnavailableError: tagcache: the PHP extension "tagcache" is not loaded in this PHP (cli PHP, php.ini: none), so the TagCache_Zend_* cache backends cannot run. Load it in every PHP that runs this application (php-fpm, CLI, cron): extension=tagcache.so
Magento 2 stops with TagCache_Zend_UnavailableError
Zend_Cache_Backend_File was made: false
logged: tagcache: the PHP extension "tagcache" is not loaded in this PHP (cli PHP, php.ini: none), so the TagCache_Zend_* cache backends cannot run. Load it in every PHP that runs this application (php-fpm, CLI, cron): extension=tagcache.so
logged: tagcache: the PHP extension "tagcache" is not loaded in this PHP (cli PHP, php.ini: none), so the TagCache_Zend_* cache backends cannot run. Load it in every PHP that runs this application (php-fpm, CLI, cron): extension=tagcache.so
exit: 0
