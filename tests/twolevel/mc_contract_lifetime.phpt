--TEST--
TwoLevel over Memcached, Backend contract: save() lifetimes false, null, int, negative
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
require __DIR__ . '/../contract/lifetime.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# false uses the lifetime directive
ok: save with lifetime false
ok: expire is now + 3600 (default directive)
ok: expire is now + 100 after setDirectives([lifetime => 100])
ok: the default argument is false too
ok: an entry saved earlier keeps its expire
# null is forever
ok: save with lifetime null
ok: expire is 9999999999
ok: load(forever)
ok: clean('old')
ok: a forever entry survives clean('old')
ok: save with lifetime false and a null directive
ok: expire is 9999999999 with a null directive
ok: save with lifetime null and a directive of 10
ok: an explicit null beats the directive
# int seconds
ok: save with lifetime 1
ok: expire is now + 1
ok: load(lt1)
ok: save with lifetime 10
ok: expire is now + 10
ok: load(lt10)
ok: save with lifetime 3600
ok: expire is now + 3600
ok: load(lt3600)
ok: save with lifetime 2592000
ok: expire is now + 2592000
ok: load(lt2592000)
ok: save with lifetime 157680000
ok: expire is now + 157680000
ok: load(lt157680000)
ok: a specific lifetime beats the directive
# negative lifetimes are already expired
ok: save with lifetime -1 returns true
ok: load(neg-1) is false
ok: load(neg-1, true) returns the data
ok: test(neg-1) is false
ok: save with lifetime -100 returns true
ok: load(neg-100) is false
ok: load(neg-100, true) returns the data
ok: test(neg-100) is false
ok: save with lifetime -86400 returns true
ok: load(neg-86400) is false
ok: load(neg-86400, true) returns the data
ok: test(neg-86400) is false
skip: getIds() does not list them (get_list is false)
skip: getIdsMatchingTags([tag1]) does not list them (get_list is false)
ok: loadMany() does not return them
ok: saving again over an expired id
ok: the new save is live
ok: save with a lifetime directive of -1
ok: load(negdir) is false
ok: load(negdir, true) returns the data
# an entry expires in real time
ok: save with lifetime 1
ok: load right after the save
ok: load after 2 s is false
ok: load(soon, true) still returns the data
ok: test(soon) is false
ok: getMetadatas(soon) is false
skip: getIdsMatchingTags([tag1]) no longer lists it (get_list is false)
skip: getIds() no longer lists it (get_list is false)
ok: clean('old')
skip: load(soon, true) is false after clean('old') (the server drops expired entries itself)
done
