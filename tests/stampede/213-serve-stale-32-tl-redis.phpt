--TEST--
Stampede (TwoLevel over Redis, two nodes): 32 processes (8 under memcheck) load one just-cleaned / removed / expired hot id: one false in total, 31 stale copies, then all the new copy
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip('tl-redis'); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
foreach (['clean', 'remove', 'expire'] as $how) {
    st_scenario_32('tl-redis', '213', $how);
}
st_cleanup('tl-redis', '213');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('tl-redis', '213'); tcm_clean(); tcr_clean(); ?>
--EXPECTF--
clean: test() is false: ok
clean: not listed: ok
clean: not under its tag: ok
clean: exactly one of %d gets false: ok
clean: the others get the stale copy: ok
clean: the one rebuild saved: ok
clean: all get the new copy after the save: ok
clean: children exited cleanly: ok
clean: one lease taken: ok
clean: stale served to the others: ok
clean: no lease timed out: ok
clean: entry listed again: ok
clean: the parent sees the new copy: ok
remove: test() is false: ok
remove: not listed: ok
remove: not under its tag: ok
remove: exactly one of %d gets false: ok
remove: the others get the stale copy: ok
remove: the one rebuild saved: ok
remove: all get the new copy after the save: ok
remove: children exited cleanly: ok
remove: one lease taken: ok
remove: stale served to the others: ok
remove: no lease timed out: ok
remove: entry listed again: ok
remove: the parent sees the new copy: ok
expire: test() is false: ok
expire: not listed: ok
expire: not under its tag: ok
expire: exactly one of %d gets false: ok
expire: the others get the stale copy: ok
expire: the one rebuild saved: ok
expire: all get the new copy after the save: ok
expire: children exited cleanly: ok
expire: one lease taken: ok
expire: stale served to the others: ok
expire: no lease timed out: ok
expire: entry listed again: ok
expire: the parent sees the new copy: ok
