--TEST--
Backend contract: getFillingPercentage() follows the data in the store
--EXTENSIONS--
tagcache
--FILE--
<?php
require __DIR__ . '/contract_factory.inc';
require __DIR__ . '/../contract/filling_store.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# getFillingPercentage follows the data stored
ok: empty: an int in 0..100
ok: saves of 64 KB values filling half the store all succeed
ok: half full: an int in 0..100
ok: storing half the store adds at least 40 points
ok: clean('matchingTag', [fill])
ok: after cleaning the data: an int in 0..100
ok: cleaning the data gives the space back
done
