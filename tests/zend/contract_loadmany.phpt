--TEST--
Zend adapters run the backend contract like their native classes: loadMany()
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_run_contract('loadmany');
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_contract();
?>
--EXPECTREGEX--
(ok: TagCache_Zend_\w+ prints what TagCache\\\w+ prints \(\d+ lines, no FAIL\)\n)+done: \d+ backend\(s\)
