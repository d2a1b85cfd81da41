--TEST--
Stampede (Shm): remember() across 8 processes builds once; a throwing callback releases the lease and propagates
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; st_skip(); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
st_scenario_remember('shm', '207');
st_cleanup('shm', '207');
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('shm', '207'); ?>
--EXPECT--
remember: one callback runs: ok
remember: 8 processes, one build: ok
remember: all get the built value: ok
remember: saved with its tags: ok
remember: saved with its lifetime: ok
remember: the builder's lease, and no more than one per process; none timed out: ok
throwing callback: exception propagates: ok
throwing callback: nothing stored: ok
throwing callback: the next caller builds at once: ok
throwing callback: the lease was released, not timed out: ok
non-string: TypeError: ok
non-string: nothing stored: ok
non-string: the next call builds: ok
remember: a hit does not call back: ok
