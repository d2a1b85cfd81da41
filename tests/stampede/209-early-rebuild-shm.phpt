--TEST--
Stampede (Shm): early rebuild (xfetch) with the measured rebuild time: one caller of 32 (16 under memcheck) rebuilds before expiry, the others get the value
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip(); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_early('shm', '209');
st_cleanup('shm', '209');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('shm', '209'); ?>
--EXPECTF--
early rebuild off: every load gets the value: ok
early rebuild off: none counted: ok
early rebuild on: exactly one load of %d returns false early: ok
early rebuild on: counted: ok
early rebuild alone: a plain miss: ok
early rebuild alone: exactly one load of %d returns false early: ok
early rebuild alone: counted: ok
