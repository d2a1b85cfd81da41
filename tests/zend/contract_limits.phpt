--TEST--
Zend adapters run the backend contract like their native classes: ids and tags of 1..1024 bytes, ValueError beyond
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_run_contract('limits');
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_contract();
?>
--EXPECTREGEX--
(ok: TagCache_Zend_\w+ prints what TagCache\\\w+ prints \(\d+ lines, no FAIL\)\n)+done: \d+ backend\(s\)
