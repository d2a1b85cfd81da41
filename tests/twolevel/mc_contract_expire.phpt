--TEST--
TwoLevel over Memcached, Backend contract: ___expire() and expired reads
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
require __DIR__ . '/../contract/expire.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# ZF1 expired read
ok: ___expire('bar')
ok: ___expire returns nothing
ok: setDirectives([lifetime => -1])
ok: load(bar) is false
ok: load(bar, true) returns the data
# what an expired entry looks like
ok: load(bar) is false
ok: load(bar, false) is false
ok: load(bar, true) returns the data
ok: test(bar) is false
ok: getMetadatas(bar) is false
skip: getIds() does not list bar (get_list is false)
skip: getIdsMatchingTags([tag3]) does not list bar (get_list is false)
ok: loadMany() does not return bar
ok: load(bar2) unaffected
ok: load(bar3) unaffected
# ___expire on a missing id
ok: ___expire('barbar') (missing) does not throw
ok: ___expire did not create barbar
skip: ids unchanged (get_list is false)
# ___expire is idempotent and save revives
ok: load(bar3) is false after two ___expire
ok: load(bar3, true) still returns the data
ok: save(bar3) again
ok: the new bar3 is live
skip: getIds() lists bar3 again (get_list is false)
skip: getIdsMatchingTags([tag2]) lists bar3 again (get_list is false)
# clean('old') after ___expire
ok: clean('old') returns true
skip: load(bar, true) is false: clean('old') removed it (the server drops expired entries itself)
skip: load(bar3, true) is false: clean('old') removed it (the server drops expired entries itself)
skip: only bar2 is left (get_list is false)
skip: getTags() lists only the tags of bar2 (get_list is false)
skip: remove(bar) after clean(old) returns false (the server drops expired entries itself)
# expired entries and tag cleaning
ok: clean('matchingTag', [tag4]) with bar expired returns true
ok: the expired bar was removed by its tag
skip: bar2 and bar3 kept (get_list is false)
done
