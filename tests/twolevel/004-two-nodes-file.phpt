--TEST--
TwoLevel over File, two nodes (two php processes, two fast segments, one cache_dir): save on A is read on B; a clean by tag, a remove, an overwrite and a clean all on A are never served by B once max_staleness passed (journal compacted on the way)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/two_nodes.inc';

$dir = sys_get_temp_dir() . '/tl004-' . getmypid();
@mkdir($dir, 0700);
tl_two_nodes('Cm_Cache_Backend_File', ['cache_dir' => $dir], 'tl004', ['journal_size' => 16]);
tcr_rmtree($dir);
echo "done\n";
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
