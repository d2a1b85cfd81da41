--TEST--
TwoLevel over Memcached, Backend contract: ids and tags of 1..1024 bytes, ValueError beyond
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
require __DIR__ . '/../contract/limits.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# ids of 1024 bytes work
ok: the multibyte id is 1024 bytes
ok: save with a 1024-byte id
ok: save with a 1024-byte multibyte id
ok: load with a 1024-byte id
ok: load with a 1024-byte multibyte id
ok: test with a 1024-byte id is an int
ok: getMetadatas with a 1024-byte id
ok: touch with a 1024-byte id
ok: loadMany with a 1024-byte id
skip: getIds() returns the 1024-byte ids whole (get_list is false)
skip: getIdsMatchingTags returns the 1024-byte id whole (get_list is false)
ok: remove with a 1024-byte id
ok: test after remove with a 1024-byte id
ok: save with a 1-byte id
ok: load with a 1-byte id
# ids of 1025 bytes and empty ids are rejected
ok: save with a 1025-byte id throws ValueError
ok: load with a 1025-byte id throws ValueError
ok: test with a 1025-byte id throws ValueError
ok: remove with a 1025-byte id throws ValueError
ok: getMetadatas with a 1025-byte id throws ValueError
ok: touch with a 1025-byte id throws ValueError
ok: loadMany with a 1025-byte id throws ValueError
ok: save with a 1025-byte multibyte id throws ValueError
ok: load with a 1025-byte multibyte id throws ValueError
ok: test with a 1025-byte multibyte id throws ValueError
ok: remove with a 1025-byte multibyte id throws ValueError
ok: getMetadatas with a 1025-byte multibyte id throws ValueError
ok: touch with a 1025-byte multibyte id throws ValueError
ok: loadMany with a 1025-byte multibyte id throws ValueError
ok: save with a '' id throws ValueError
ok: load with a '' id throws ValueError
ok: test with a '' id throws ValueError
ok: remove with a '' id throws ValueError
ok: getMetadatas with a '' id throws ValueError
ok: touch with a '' id throws ValueError
ok: loadMany with a '' id throws ValueError
ok: save with a 1 MB id throws ValueError
ok: load with a 1 MB id throws ValueError
ok: test with a 1 MB id throws ValueError
ok: remove with a 1 MB id throws ValueError
ok: getMetadatas with a 1 MB id throws ValueError
ok: touch with a 1 MB id throws ValueError
ok: loadMany with a 1 MB id throws ValueError
skip: nothing was saved by the rejected calls (get_list is false)
ok: a rejected 1025-byte save did not store a truncated 1024-byte id
ok: the backend still works
# tags of 1024 bytes work
ok: save with a 1024-byte tag
skip: getIdsMatchingTags with a 1024-byte tag (get_list is false)
skip: getIdsMatchingAnyTags with a 1024-byte tag (get_list is false)
skip: getIdsNotMatchingTags with a 1024-byte tag (get_list is false)
skip: getTags() returns the 1024-byte tag whole (get_list is false)
ok: getMetadatas returns the 1024-byte tag whole
ok: clean matchingTag with a 1024-byte tag
ok: the entry with the 1024-byte tag is gone
ok: save with a 1-byte tag
skip: getIdsMatchingTags with a 1-byte tag (get_list is false)
# tags of 1025 bytes and empty tags are rejected
ok: save with a 1025-byte tag throws ValueError
ok: save with a 1025-byte tag stored nothing
ok: save over bar with a 1025-byte tag throws ValueError
ok: save over bar with a 1025-byte tag left bar unchanged
ok: clean('matchingTag') with a 1025-byte tag throws ValueError
ok: clean('notMatchingTag') with a 1025-byte tag throws ValueError
ok: clean('matchingAnyTag') with a 1025-byte tag throws ValueError
ok: getIdsMatchingTags with a 1025-byte tag throws ValueError
ok: getIdsNotMatchingTags with a 1025-byte tag throws ValueError
ok: getIdsMatchingAnyTags with a 1025-byte tag throws ValueError
ok: save with a '' tag throws ValueError
ok: save with a '' tag stored nothing
ok: save over bar with a '' tag throws ValueError
ok: save over bar with a '' tag left bar unchanged
ok: clean('matchingTag') with a '' tag throws ValueError
ok: clean('notMatchingTag') with a '' tag throws ValueError
ok: clean('matchingAnyTag') with a '' tag throws ValueError
ok: getIdsMatchingTags with a '' tag throws ValueError
ok: getIdsNotMatchingTags with a '' tag throws ValueError
ok: getIdsMatchingAnyTags with a '' tag throws ValueError
skip: the rejected calls removed nothing (get_list is false)
ok: bar kept its tags
skip: getTags() unchanged (get_list is false)
# tags must be strings
ok: save with an int tag throws TypeError or ValueError
ok: save with an array tag throws TypeError or ValueError
ok: save with a null tag throws TypeError or ValueError
ok: save with an object tag throws TypeError or ValueError
ok: nothing was saved
skip: ids unchanged (get_list is false)
skip: getTags() unchanged (get_list is false)
done
