--TEST--
Zend adapters run the backend contract like their native classes: binary-safe data, ids and tags; empty and 256 KB values
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_run_contract('binary');
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_contract();
?>
--EXPECTREGEX--
(ok: TagCache_Zend_\w+ prints what TagCache\\\w+ prints \(\d+ lines, no FAIL\)\n)+done: \d+ backend\(s\)
