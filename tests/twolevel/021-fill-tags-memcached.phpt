--TEST--
TwoLevel fills over Memcached: the slow read carries the entry's tags (load_tags: no second read), with the test hook TAGCACHE_TEST_TWOLEVEL_FILL=metadata a second read (metadata) does; either way the copy's tags are the entry's: a clean by one of them on another node reaches it, a clean by another tag does not
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/../memcached/memcached.inc';
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
if (($r = tcm_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/fill.inc';
require __DIR__ . '/../memcached/memcached.inc';

$env = getenv('TAGCACHE_MEMCACHED_PORT');
$port = is_string($env) && preg_match('/^\d+$/D', $env) && tcm_ping((int) $env) ? (int) $env : tcm_start('fill')['port'];
tl_fill_tags('Libmemcached', ['servers' => [['127.0.0.1', $port]], 'prefix' => 'tl021' . getmypid()], 'tl021', true);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/../memcached/memcached.inc';
tcm_clean();
?>
--EXPECT--
-- default
ok: A saves x with tags t1, t2
ok: A saves y with tag t3
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: B reads y from the slow level
ok: B reads y again
ok: B served y from its fast level
ok: B filled x and y
ok: no fill needed a second read
ok: B's metadata of x
ok: B's metadata of x has the save's mtime
ok: B's copy of x too: test() says what getMetadatas() says
ok: A cleans tag t2
ok: B misses x after the bound: its copy carried t2
ok: B still reads y
ok: from its fast level: the clean of t2 left its copy (tag t3)
ok: A cleans tag t3
ok: B misses y after the bound: its copy carried t3
ok: a miss fills nothing
-- metadata
ok: A saves x with tags t1, t2
ok: A saves y with tag t3
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: B reads y from the slow level
ok: B reads y again
ok: B served y from its fast level
ok: B filled x and y
ok: each fill read the tags again (metadata)
ok: B's metadata of x
ok: B's metadata of x has the save's mtime
ok: B's copy of x too: test() says what getMetadatas() says
ok: A cleans tag t2
ok: B misses x after the bound: its copy carried t2
ok: B still reads y
ok: from its fast level: the clean of t2 left its copy (tag t3)
ok: A cleans tag t3
ok: B misses y after the bound: its copy carried t3
ok: a miss fills nothing
done
