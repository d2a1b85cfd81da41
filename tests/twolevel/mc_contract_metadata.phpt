--TEST--
TwoLevel over Memcached, Backend contract: getMetadatas() and touch()
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
require __DIR__ . '/../contract/metadata.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# getMetadatas
ok: getMetadatas(bar) is an array
ok: keys are exactly expire, mtime, tags
ok: tags is a list of strings
ok: bar has 2 tags
ok: bar has tags tag3, tag4
ok: expire is an int
ok: mtime is an int
ok: expire > time()
ok: mtime <= time()
ok: mtime is the time of the save
ok: expire is the save time + 3600 (default lifetime directive)
ok: mtime equals test(bar)
# getMetadatas on missing, untagged, specific and infinite lifetimes
ok: getMetadatas(barbar) (missing) is false
ok: an untagged entry has tags []
ok: expire is save time + 100 for lifetime 100
ok: a null lifetime gives expire 9999999999
ok: tags of forever
ok: a null lifetime directive gives expire 9999999999
# getMetadatas on expired entries
ok: getMetadatas(bar) is false after ___expire(bar)
ok: getMetadatas(neg) is false for a negative lifetime
ok: getMetadatas(bar2) unaffected
# touch
ok: touch(bar, 30) returns true
ok: expire grew by exactly 30
ok: mtime did not go down
ok: mtime is the time of the touch
ok: touch kept the tags
ok: touch kept the data
ok: test(bar) returns the new mtime
ok: touch(bar, 30) a second time
ok: expire grew by 60 after two touches
ok: touch(bar2, 7200)
ok: expire grew by exactly 7200
skip: touch changed no id (get_list is false)
# touch on a missing entry
ok: touch(barbar, 30) (missing) returns false
ok: touch did not create barbar
skip: touch of a missing id changed nothing (get_list is false)
# touch then expiry
ok: load(short) with lifetime -100 is false
ok: touch(short2, 1000)
ok: short2 expire grew by exactly 1000
ok: load(short2) after touch
done
