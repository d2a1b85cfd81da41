--TEST--
Stampede (File): the lease holder SIGKILLed or SIGSTOPped: the next caller rebuilds when the lease runs out, remember() waiters no longer than that
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip(); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_dead_holder('file', '204');
st_cleanup('file', '204');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('file', '204'); ?>
--EXPECT--
holder got false: ok
another caller gets the stale copy: ok
stopped holder: a caller rebuilds once the lease ran out: ok
stopped holder: stale copy until then: ok
stopped holder: counted as a lease timeout: ok
stopped holder: the new copy: ok
holder got false again: ok
killed holder: the next caller rebuilds: ok
killed holder: lease taken over: ok
killed holder: the new copy: ok
killed builder: its callback runs: ok
killed builder: the waiter builds it, within the lease: ok
killed builder: stored: ok
stopped builder: its callback runs: ok
stopped builder: the waiter builds it, within the lease: ok
stopped builder: stored: ok
