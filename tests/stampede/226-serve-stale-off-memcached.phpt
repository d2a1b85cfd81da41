--TEST--
Stampede (memcached): serve_stale off (the default): after a clean, a remove or an expiry every load misses, no lease is taken, nothing stampede-related reaches the server
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip('memcached'); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_off('memcached', '226');
st_cleanup('memcached', '226');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('memcached', '226'); tcm_clean(); tcr_clean(); ?>
--EXPECT--
default serve_stale is 0: ok
default rebuild_timeout: ok
clean: every load misses: ok
clean: expired entry still readable as Zend says: ok
remove: every load misses: ok
remove: expired entry still readable as Zend says: ok
expire: every load misses: ok
expire: expired entry still readable as Zend says: ok
no stampede counters in stats(): ok
