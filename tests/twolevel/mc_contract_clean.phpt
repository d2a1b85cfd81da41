--TEST--
TwoLevel over Memcached, Backend contract: clean() modes, tag modes with [], unknown modes
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
require __DIR__ . '/../contract/clean.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
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
skip: no ids after clean('all') (get_list is false)
skip: no tags after clean('all') (get_list is false)
ok: test(bar) is false after clean('all')
ok: test(bar2) is false after clean('all')
ok: test(bar3) is false after clean('all')
ok: clean('all') on an empty backend returns true
ok: clean('all', [tag3]) returns true (tags ignored)
# old
ok: clean('old') returns true
ok: test(bar2) is false after ___expire + clean('old')
skip: load(bar2, true) after clean('old') (the server drops expired entries itself)
skip: clean('old') kept bar and bar3 (get_list is false)
ok: load(bar) still works
ok: load(bar3) still works
skip: getTags() no longer lists tag1 (only bar2 had it) (get_list is false)
ok: clean('old') with nothing expired returns true
skip: clean('old') with nothing expired removes nothing (get_list is false)
# old removes negative-lifetime entries
ok: load(neg, true) before clean(old)
ok: clean('old') returns true
skip: load(neg, true) after clean('old') (the server drops expired entries itself)
skip: the fixture survives clean('old') (get_list is false)
# matchingTag
ok: clean('matchingTag', [tag3]) returns true
skip: [tag3] removed bar, bar2 and bar3 (all carry tag3) (get_list is false)
ok: test(bar) is false after matchingTag [tag3]
ok: test(bar2) is false after matchingTag [tag3]
ok: test(bar3) is false after matchingTag [tag3]
ok: clean('matchingTag', [tag3, tag4]) returns true (unsupported: returns false)
ok: clean('matchingTag', [tag3, tag4]) returns true (unsupported: an E_WARNING says why)
ok: [tag3, tag4] removed bar (unsupported: bar kept)
skip: [tag3, tag4] kept bar2 and bar3 (get_list is false)
ok: clean('matchingTag', [tag1]) returns true
skip: [tag1] removed only bar2 (get_list is false)
ok: clean('matchingTag', [tag1, tag2]) returns true (unsupported: returns false)
ok: clean('matchingTag', [tag1, tag2]) returns true (unsupported: an E_WARNING says why)
skip: [tag1, tag2] removed nothing (no entry has both) (get_list is false)
ok: clean('matchingTag', [tag9999]) returns true
skip: [tag9999] removed nothing (get_list is false)
# notMatchingTag
ok: clean('notMatchingTag', [tag3]) returns true (unsupported: returns false)
ok: clean('notMatchingTag', [tag3]) returns true (unsupported: an E_WARNING says why)
skip: [tag3] removed nothing (get_list is false)
ok: clean('notMatchingTag', [tag4]) returns true (unsupported: returns false)
ok: clean('notMatchingTag', [tag4]) returns true (unsupported: an E_WARNING says why)
ok: [tag4] removed bar2 (unsupported: bar2 kept)
ok: [tag4] removed bar3 (unsupported: bar3 kept)
skip: [tag4] kept bar (get_list is false)
ok: clean('notMatchingTag', [tag4, tag1]) returns true (unsupported: returns false)
ok: clean('notMatchingTag', [tag4, tag1]) returns true (unsupported: an E_WARNING says why)
ok: [tag4, tag1] removed bar3 (unsupported: bar3 kept)
skip: [tag4, tag1] kept bar and bar2 (get_list is false)
ok: clean('notMatchingTag', [tag9999]) returns true (unsupported: returns false)
ok: clean('notMatchingTag', [tag9999]) returns true (unsupported: an E_WARNING says why)
skip: [tag9999] removed everything, untagged entries included (get_list is false)
# matchingAnyTag
ok: clean('matchingAnyTag', [tag9999]) returns true
skip: [tag9999] removed nothing (get_list is false)
ok: clean('matchingAnyTag', [tag1, tag4]) returns true
skip: [tag1, tag4] removed bar and bar2 (get_list is false)
ok: clean('matchingAnyTag', [tag2, tag9999]) returns true
skip: [tag2, tag9999] removed only bar3 (get_list is false)
ok: clean('matchingAnyTag', [tag3]) returns true
skip: [tag3] removed the 3 fixture records, not the untagged one (get_list is false)
skip: no tags left after matchingAnyTag [tag3] (get_list is false)
# tag modes with [] are no-ops
ok: clean('matchingTag', []) returns true
skip: clean('matchingTag', []) removed nothing (get_list is false)
ok: clean('notMatchingTag', []) returns true
skip: clean('notMatchingTag', []) removed nothing (get_list is false)
ok: clean('matchingAnyTag', []) returns true
skip: clean('matchingAnyTag', []) removed nothing (get_list is false)
ok: clean('matchingTag') without tags returns true
skip: clean('matchingTag') without tags removed nothing (get_list is false)
# unknown mode
ok: clean('foo') throws ValueError
ok: clean('') throws ValueError
ok: clean('foo', [tag3]) throws ValueError
ok: clean('all ') throws ValueError
skip: a rejected clean() removed nothing (get_list is false)
ok: clean('matchingTag', 'tag3') (tags not an array) throws TypeError
ok: clean('matchingTag', [[tag3]]) (a tag that is not a string) throws TypeError or ValueError
skip: the rejected calls removed nothing (get_list is false)
# one tag on many entries (Magento MAGE tag)
skip: getIdsMatchingTags([MAGE]) lists 300 ids (get_list is false)
skip: getIdsMatchingTags([MAGE, T_1]) lists 100 ids (get_list is false)
ok: clean('matchingTag', [T_1]) returns true
skip: 200 ids left under MAGE (get_list is false)
ok: load(E_1) after its tag was cleaned
ok: load(E_2) survives
ok: clean('matchingAnyTag', [MAGE]) returns true
skip: only the fixture is left (get_list is false)
skip: getTags() is back to the 4 fixture tags (get_list is false)
done
