--TEST--
Zend adapters run the backend contract like their native classes: the ZF1 fixture (bar, bar2, bar3) and its teardown
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_run_contract('fixture');
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_contract();
?>
--EXPECTREGEX--
(ok: TagCache_Zend_\w+ prints what TagCache\\\w+ prints \(\d+ lines, no FAIL\)\n)+done: \d+ backend\(s\)
