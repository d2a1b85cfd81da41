--TEST--
TwoLevel over Memcached, Backend contract: getFillingPercentage() is an int in 0..100
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
require __DIR__ . '/../contract/filling.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# empty backend
ok: getFillingPercentage() is an int in 0..100 (empty)
# fixture
ok: getFillingPercentage() is an int in 0..100 (fixture)
ok: getFillingPercentage() is an int in 0..100 (fixture + 256 KB)
ok: getFillingPercentage() is an int in 0..100 (after clean('all'))
done
