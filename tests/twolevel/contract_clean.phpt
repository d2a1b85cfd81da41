--TEST--
TwoLevel over Redis, backend contract: clean() modes, tag modes with [], unknown modes
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
require __DIR__ . '/../contract/clean.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# mode constants
ok: CLEANING_MODE_ALL
ok: CLEANING_MODE_OLD
ok: CLEANING_MODE_MATCHING_TAG
ok: CLEANING_MODE_NOT_MATCHING_TAG
ok: CLEANING_MODE_MATCHING_ANY_TAG
# all
ok: clean('all') returns true
ok: no ids after clean('all')
ok: no tags after clean('all')
ok: test(bar) is false after clean('all')
ok: test(bar2) is false after clean('all')
ok: test(bar3) is false after clean('all')
ok: clean('all') on an empty backend returns true
ok: clean('all', [tag3]) returns true (tags ignored)
# old
ok: clean('old') returns true
ok: test(bar2) is false after ___expire + clean('old')
ok: load(bar2, true) is false: clean('old') removed it
ok: clean('old') kept bar and bar3
ok: load(bar) still works
ok: load(bar3) still works
ok: getTags() no longer lists tag1 (only bar2 had it)
ok: clean('old') with nothing expired returns true
ok: clean('old') with nothing expired removes nothing
# old removes negative-lifetime entries
ok: load(neg, true) before clean(old)
ok: clean('old') returns true
ok: load(neg, true) is false after clean('old')
ok: the fixture survives clean('old')
# matchingTag
ok: clean('matchingTag', [tag3]) returns true
ok: [tag3] removed bar, bar2 and bar3 (all carry tag3)
ok: test(bar) is false after matchingTag [tag3]
ok: test(bar2) is false after matchingTag [tag3]
ok: test(bar3) is false after matchingTag [tag3]
ok: clean('matchingTag', [tag3, tag4]) returns true
ok: [tag3, tag4] removed bar
ok: [tag3, tag4] kept bar2 and bar3
ok: clean('matchingTag', [tag1]) returns true
ok: [tag1] removed only bar2
ok: clean('matchingTag', [tag1, tag2]) returns true
ok: [tag1, tag2] removed nothing (no entry has both)
ok: clean('matchingTag', [tag9999]) returns true
ok: [tag9999] removed nothing
# notMatchingTag
ok: clean('notMatchingTag', [tag3]) returns true
ok: [tag3] removed nothing
ok: clean('notMatchingTag', [tag4]) returns true
ok: [tag4] removed bar2
ok: [tag4] removed bar3
ok: [tag4] kept bar
ok: clean('notMatchingTag', [tag4, tag1]) returns true
ok: [tag4, tag1] removed bar3
ok: [tag4, tag1] kept bar and bar2
ok: clean('notMatchingTag', [tag9999]) returns true
ok: [tag9999] removed everything, untagged entries included
# matchingAnyTag
ok: clean('matchingAnyTag', [tag9999]) returns true
ok: [tag9999] removed nothing
ok: clean('matchingAnyTag', [tag1, tag4]) returns true
ok: [tag1, tag4] removed bar and bar2
ok: clean('matchingAnyTag', [tag2, tag9999]) returns true
ok: [tag2, tag9999] removed only bar3
ok: clean('matchingAnyTag', [tag3]) returns true
ok: [tag3] removed the 3 fixture records, not the untagged one
ok: no tags left after matchingAnyTag [tag3]
# tag modes with [] are no-ops
ok: clean('matchingTag', []) returns true
ok: clean('matchingTag', []) removed nothing
ok: clean('notMatchingTag', []) returns true
ok: clean('notMatchingTag', []) removed nothing
ok: clean('matchingAnyTag', []) returns true
ok: clean('matchingAnyTag', []) removed nothing
ok: clean('matchingTag') without tags returns true
ok: clean('matchingTag') without tags removed nothing
# unknown mode
ok: clean('foo') throws ValueError
ok: clean('') throws ValueError
ok: clean('foo', [tag3]) throws ValueError
ok: clean('all ') throws ValueError
ok: a rejected clean() removed nothing
ok: clean('matchingTag', 'tag3') (tags not an array) throws TypeError
ok: clean('matchingTag', [[tag3]]) (a tag that is not a string) throws TypeError or ValueError
ok: the rejected calls removed nothing
# one tag on many entries (Magento MAGE tag)
ok: getIdsMatchingTags([MAGE]) lists 300 ids
ok: getIdsMatchingTags([MAGE, T_1]) lists 100 ids
ok: clean('matchingTag', [T_1]) returns true
ok: 200 ids left under MAGE
ok: load(E_1) after its tag was cleaned
ok: load(E_2) survives
ok: clean('matchingAnyTag', [MAGE]) returns true
ok: only the fixture is left
ok: getTags() is back to the 4 fixture tags
done
