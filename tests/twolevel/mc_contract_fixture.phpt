--TEST--
TwoLevel over Memcached, Backend contract: the ZF1 fixture (bar, bar2, bar3) and its teardown
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
require __DIR__ . '/../contract/fixture.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# fresh backend is empty
ok: instance of TagCache\Backend
skip: getIds() on a fresh backend (get_list is false)
skip: getTags() on a fresh backend (get_list is false)
ok: load(bar) on a fresh backend
# fixture setup
ok: setDirectives([logging => true])
ok: save(bar) with tags tag3,tag4
ok: save(bar2) with tags tag3,tag1
ok: save(bar3) with tags tag2,tag3
skip: getIds() lists the 3 records (get_list is false)
skip: getTags() lists the 4 tags (get_list is false)
ok: load(bar)
ok: test(bar) is an int
ok: getMetadatas(bar) tags
ok: load(bar2)
ok: test(bar2) is an int
ok: getMetadatas(bar2) tags
ok: load(bar3)
ok: test(bar3) is an int
ok: getMetadatas(bar3) tags
# fixture teardown: clean()
ok: clean() with no argument returns true
skip: no ids left after clean() (get_list is false)
skip: no tags left after clean() (get_list is false)
ok: load(bar) after clean()
ok: load(bar, true) after clean()
ok: load(bar2) after clean()
ok: load(bar2, true) after clean()
ok: load(bar3) after clean()
ok: load(bar3, true) after clean()
# a fixture can be rebuilt after clean()
skip: getIds() after re-saving the fixture (get_list is false)
ok: load(bar2) after re-saving the fixture
done
