--TEST--
TwoLevel over Memcached, Backend contract: loadMany()
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
require __DIR__ . '/../contract/loadmany.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# hits only
ok: loadMany([bar, missing, bar3])
ok: loadMany of the 3 fixture ids
ok: loadMany of missing ids gives []
ok: loadMany([]) gives []
# the argument may have any keys and duplicates
ok: keys of the argument are ignored
ok: a repeated id appears once
# expired, removed and empty values
ok: loadMany skips expired and removed ids, keeps an empty value
# numeric ids
ok: loadMany of 3 numeric-looking ids and bar gives 4 entries
ok: loadMany(['123'])['123']
ok: loadMany(['0'])['0']
ok: loadMany(['0123'])['0123']
ok: loadMany(...)['bar']
# many ids
ok: loadMany of 500 ids (250 hits, 250 misses)
ok: loadMany agrees with load() id by id
# ids must be strings
ok: loadMany([[bar]]) throws TypeError or ValueError
ok: loadMany([null]) throws TypeError or ValueError
done
