--TEST--
TwoLevel over Redis, two nodes (two php processes, two fast segments): save on A is read on B; a clean by tag, a remove and an overwrite on A are never served by B once max_staleness passed
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/two_nodes.inc';

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('twonodes')['port']);
tl_two_nodes('Redis', ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl001:' . getmypid() . ':'], 'tl001');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: B: x is not there yet
ok: A saves x with tags t1, t2
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A cleans tag t2
ok: B misses x after the bound (clean by tag)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A removes x
ok: B misses x after the bound (remove)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A overwrites x
ok: B reads the new x after the bound (overwrite)
ok: B reads x from the slow level
ok: B reads x again
ok: B served x from its fast level
ok: A cleans all
ok: B misses x after the bound (clean all)
ok: A reads y
ok: B cleans tag t9
ok: A misses y after the bound
ok: B counted syncs and invalidations
ok: B served nothing stale
ok: every change reached B (lags measured)
done
