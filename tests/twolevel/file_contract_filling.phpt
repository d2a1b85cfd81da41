--TEST--
TwoLevel over File, backend contract: getFillingPercentage() is an int in 0..100
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
?>
--INI--
; PCRE's JIT reads past short subjects under valgrind
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/file_contract_factory.inc';
require __DIR__ . '/../contract/filling.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/file_contract_factory.inc';
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
