--TEST--
TwoLevel over Redis, backend contract: getIds(), getTags(), getIds*Tags()
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
require __DIR__ . '/../contract/get_ids.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# getIds
ok: getIds() is a list of strings
ok: getIds() has 3 ids
ok: getIds() is bar, bar2, bar3
# getTags
ok: getTags() is a list of strings
ok: getTags() has 4 tags
ok: getTags() is tag1..tag4
# getIdsMatchingTags
ok: getIdsMatchingTags([tag3]) is a list of strings
ok: [tag3] gives the 3 ids
ok: [tag2] gives [bar3]
ok: [tag9999] gives []
ok: [tag3, tag4] gives [bar]
ok: [tag1, tag3] gives [bar2]
ok: [tag1, tag2] gives [] (no id has both)
ok: [tag3, tag9999] gives []
# getIdsNotMatchingTags
ok: [tag3] gives []
ok: getIdsNotMatchingTags([tag1]) is a list of strings
ok: [tag1] gives [bar, bar3]
ok: [tag1, tag4] gives [bar3]
ok: [tag9999] gives all ids
ok: [] gives all ids
ok: no argument gives all ids
ok: [tag1] includes an untagged id
# getIdsMatchingAnyTags
ok: [tag9999] gives []
ok: getIdsMatchingAnyTags([tag1, tag4]) is a list of strings
ok: [tag1, tag4] gives [bar, bar2]
ok: [tag3] gives the 3 ids
ok: [tag3, tag1] gives each id once
ok: [tag1, tag9999] gives [bar2]
ok: [] gives []
ok: no argument gives []
# empty backend
ok: getIds() is []
ok: getTags() is []
ok: getIdsMatchingTags([tag3]) is []
ok: getIdsNotMatchingTags([tag3]) is []
ok: getIdsMatchingAnyTags([tag3]) is []
# expired entries are not listed
ok: getIds() skips ___expire(bar) and a negative-lifetime entry
ok: getIdsMatchingTags([tag3]) skips them
ok: getIdsMatchingTags([tag4]) skips expired bar
ok: getIdsNotMatchingTags([tag1]) skips expired bar
ok: getIdsMatchingAnyTags([tag1, tag4, tag5]) skips them
# duplicate tags in a query
ok: getIdsMatchingTags([tag4, tag4]) gives [bar]
ok: getIdsNotMatchingTags([tag1, tag1]) gives [bar, bar3]
ok: getIdsMatchingAnyTags([tag1, tag1]) gives [bar2] once
# the tag list argument may have any keys
ok: getIdsMatchingTags with string/int keys
ok: getIdsNotMatchingTags with string/int keys
ok: getIdsMatchingAnyTags with string/int keys
ok: clean('matchingTag') with a string key returns true
ok: the clean used the value, not the key
# many tags on one entry
ok: save(multi) with 64 tags
ok: getIdsMatchingTags(all 64 tags) gives [multi]
ok: getIdsMatchingTags([many_63]) gives [multi]
ok: getTags() lists the 64 tags
ok: getMetadatas(multi) lists the 64 tags
done
