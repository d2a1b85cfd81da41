--TEST--
TwoLevel over Redis, backend contract: ___expire() and expired reads
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
; PCRE's JIT reads past short subjects under valgrind
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/contract_factory.inc';
require __DIR__ . '/../contract/expire.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/contract_factory.inc';
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
ok: getIds() does not list bar
ok: getIdsMatchingTags([tag3]) does not list bar
ok: loadMany() does not return bar
ok: load(bar2) unaffected
ok: load(bar3) unaffected
# ___expire on a missing id
ok: ___expire('barbar') (missing) does not throw
ok: ___expire did not create barbar
ok: ids unchanged
# ___expire is idempotent and save revives
ok: load(bar3) is false after two ___expire
ok: load(bar3, true) still returns the data
ok: save(bar3) again
ok: the new bar3 is live
ok: getIds() lists bar3 again
ok: getIdsMatchingTags([tag2]) lists bar3 again
# clean('old') after ___expire
ok: clean('old') returns true
ok: load(bar, true) is false: clean('old') removed it
ok: load(bar3, true) is false: clean('old') removed it
ok: only bar2 is left
ok: getTags() lists only the tags of bar2
ok: remove(bar) after clean(old) returns false
# expired entries and tag cleaning
ok: clean('matchingTag', [tag4]) with bar expired returns true
ok: the expired bar was removed by its tag
ok: bar2 and bar3 kept
done
