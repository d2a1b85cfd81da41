--TEST--
Stampede (File): serve_stale off (the default): every load after a clean, remove or expiry misses as before, no lease table, counters at 0
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip(); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_off('file', '206');
st_cleanup('file', '206');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('file', '206'); ?>
--EXPECT--
default serve_stale is 0: ok
default rebuild_timeout: ok
clean: every load misses: ok
clean: expired entry still readable as Zend says: ok
remove: every load misses: ok
remove: expired entry still readable as Zend says: ok
expire: every load misses: ok
expire: expired entry still readable as Zend says: ok
no lease table made: ok
counters at 0: ok
