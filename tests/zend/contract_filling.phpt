--TEST--
Zend adapters run the backend contract like their native classes: getFillingPercentage() is an int in 0..100
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_run_contract('filling');
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_contract();
?>
--EXPECTREGEX--
(ok: TagCache_Zend_\w+ prints what TagCache\\\w+ prints \(\d+ lines, no FAIL\)\n)+done: \d+ backend\(s\)
