--TEST--
Stampede (memcached): the lease holder SIGKILLed: the others get the stale copy until the lease expires (rebuild_timeout), then one caller rebuilds; a remember() waiter no longer than that
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip('memcached'); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_dead_holder_net('memcached', '221');
st_cleanup('memcached', '221');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('memcached', '221'); tcm_clean(); tcr_clean(); ?>
--EXPECT--
holder got false: ok
killed holder: a caller rebuilds once the lease ran out: ok
killed holder: stale copy until then: ok
killed holder: counted as a lease timeout: ok
killed holder: one more lease, the taker's: ok
killed holder: the new copy: ok
killed holder: the new copy on the other node too: ok
killed builder: its callback runs: ok
killed builder: the waiter builds it, within the lease: ok
killed builder: stored: ok
killed builder: its lease timed out: ok
