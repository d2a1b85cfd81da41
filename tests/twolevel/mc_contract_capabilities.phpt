--TEST--
TwoLevel over Memcached, Backend contract: getCapabilities()
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
require __DIR__ . '/../contract/capabilities.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# getCapabilities
ok: getCapabilities() is an array
ok: exactly the 6 ZF1 capability keys
ok: automatic_cleaning is a bool
ok: expired_read is a bool
ok: get_list is a bool
ok: infinite_lifetime is a bool
ok: priority is a bool
ok: tags is a bool
ok: tags is true
ok: expired_read is true
ok: infinite_lifetime is false, as documented
ok: get_list is false, as documented
ok: capabilities are exactly what the backend documents
ok: an empty backend has the same capabilities
done
