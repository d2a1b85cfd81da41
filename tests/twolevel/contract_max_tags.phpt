--TEST--
TwoLevel over Redis, backend contract: a save with 4096 (TC_TAGS_MAX) tags works, 4097 are a ValueError that changes nothing
--EXTENSIONS--
tagcache
--INI--
; PCRE's JIT reads past short subjects under valgrind
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/contract_factory.inc';
require __DIR__ . '/../contract/max_tags.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# a save with 4096 tags works
ok: save with 4096 tags
ok: load of the entry with 4096 tags
ok: getMetadatas lists the 4096 tags
ok: getIdsMatchingTags with the last tag
ok: getIdsMatchingTags with the 4096 tags
ok: getIdsMatchingAnyTags with the 4096 tags
ok: getIdsNotMatchingTags with the 4096 tags
ok: save again with the same 4096 tags
ok: load after the second save
ok: clean('matchingTag') with the 4096 tags
ok: the entry is gone after clean('matchingTag')
ok: save with 4096 tags after the clean
ok: clean('matchingAnyTag') with 4096 tags
ok: the entry is gone after clean('matchingAnyTag')
ok: the other entries are still there
# 4097 tags are refused and change nothing
ok: save with 4096 tags
ok: save over it with 4097 tags throws ValueError
ok: the error names the limit
ok: the entry keeps its value
ok: the entry keeps its 4096 tags
ok: a new entry with 4097 tags throws ValueError
ok: nothing was saved under the new id
ok: clean('matchingAnyTag') with 4097 tags throws ValueError
ok: the refused clean removed nothing
ok: the other entries are still there
done
