--TEST--
Stampede (Memcached): 32 processes (8 under memcheck) load one just-cleaned / removed / expired hot id: one false in total, 31 stale copies, then all the new copy
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip('memcached'); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
foreach (['remove', 'expire'] as $how) {
    st_scenario_32('memcached', '214', $how);
}
st_cleanup('memcached', '214');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('memcached', '214'); tcm_clean(); tcr_clean(); ?>
--EXPECTF--
remove: test() is false: ok
remove: exactly one of %d gets false: ok
remove: the others get the stale copy: ok
remove: the one rebuild saved: ok
remove: all get the new copy after the save: ok
remove: children exited cleanly: ok
remove: one lease taken: ok
remove: stale served to the others: ok
remove: no lease timed out: ok
remove: the parent sees the new copy: ok
expire: test() is false: ok
expire: exactly one of %d gets false: ok
expire: the others get the stale copy: ok
expire: the one rebuild saved: ok
expire: all get the new copy after the save: ok
expire: children exited cleanly: ok
expire: one lease taken: ok
expire: stale served to the others: ok
expire: no lease timed out: ok
expire: the parent sees the new copy: ok
