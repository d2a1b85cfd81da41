--TEST--
TwoLevel over Memcached, Backend contract: save(), load(), test(), remove()
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/mc_contract_factory.inc';
if (($r = tl_mc_skip_reason()) !== null) die("skip $r");
?>
--INI--
; PCRE's JIT reads past short subjects under valgrind
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/mc_contract_factory.inc';
require __DIR__ . '/../contract/save_load.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# save
ok: save(foo) with tags returns true
ok: save(foo2) without tags returns true
ok: save(foo3) with a specific lifetime of 10 returns true
skip: getIds() after three more saves (get_list is false)
skip: foo is listed under tag1 (get_list is false)
# save with a null lifetime directive
ok: setDirectives([lifetime => null])
ok: save(foo) returns true
ok: test(foo) is an int > 999999
ok: load(foo)
# test
ok: test(bar) is an int > 999999
ok: test(barbar) (missing) is false
ok: test(fresh) is the mtime of the save (a unix time)
ok: test(fresh) equals getMetadatas(fresh)['mtime']
# test with a null lifetime directive
ok: test(forever) is an int > 999999
ok: test(bar) is still an int > 999999
# load
ok: load(barbar) (missing) is false
ok: load(barbar, true) (missing) is false
ok: load(bar)
ok: load(bar, true) on a live entry
ok: load(bar2)
ok: load(bar3)
# load data with UTF-8, quotes and newlines
ok: save(foo) with UTF-8, quotes and newlines
ok: load(foo) returns exactly the same bytes
# overwrite
ok: save(bar) again with other data and tags
ok: load(bar) returns the new data
skip: still 3 ids (get_list is false)
skip: bar no longer listed under its old tag tag4 (get_list is false)
skip: bar no longer listed under its old tag tag3 (get_list is false)
skip: bar listed under its new tag tag9 (get_list is false)
ok: getMetadatas(bar) has only the new tag
ok: save(bar) again without tags
skip: bar no longer listed under tag9 (get_list is false)
ok: load(bar) after the second overwrite
# remove
ok: remove(bar) returns true
ok: test(bar) is false after remove
ok: load(bar) is false after remove
ok: load(bar, true) is false after remove
ok: getMetadatas(bar) is false after remove
ok: remove(barbar) (missing) returns false
ok: remove(bar) a second time returns false
skip: getIds() after remove(bar) (get_list is false)
skip: tag4 lists no id after remove(bar) (get_list is false)
skip: tag3 lists bar2 and bar3 after remove(bar) (get_list is false)
skip: getTags() no longer lists tag4 (no entry uses it) (get_list is false)
ok: load(bar2) unaffected
ok: save(bar) again after remove
ok: load(bar) after saving it again
done
