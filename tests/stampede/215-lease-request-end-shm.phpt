--TEST--
Stampede (shm): a lease holder whose request ends without a save (fatal error, exit, uncaught exception) gives the lease back: the next caller rebuilds at once, not after rebuild_timeout
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip('shm'); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_request_end('shm', '215');
st_cleanup('shm', '215');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('shm', '215'); tcm_clean(); tcr_clean(); ?>
--EXPECT--
fatal: the holder got false: ok
fatal: meanwhile the others get the stale copy: ok
fatal: the holder's request ended: ok
fatal: its lease went back: the next caller rebuilds at once: ok
fatal: given back, not timed out: ok
fatal: the new copy: ok
exit: the holder got false: ok
exit: meanwhile the others get the stale copy: ok
exit: the holder's request ended: ok
exit: its lease went back: the next caller rebuilds at once: ok
exit: given back, not timed out: ok
exit: the new copy: ok
exception: the holder got false: ok
exception: meanwhile the others get the stale copy: ok
exception: the holder's request ended: ok
exception: its lease went back: the next caller rebuilds at once: ok
exception: given back, not timed out: ok
exception: the new copy: ok
remember, fatal: the callback runs: ok
remember, fatal: the builder died of it: ok
remember, fatal: the waiter builds it: ok
