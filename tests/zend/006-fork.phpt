--TEST--
Zend adapters across pcntl_fork(): one adapter object used by the parent and its children (Magento 2 rebuilds its frontend after fork; the adapter holds nothing that breaks)
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--SKIPIF--
<?php
if (!function_exists('pcntl_fork')) {
    die('skip pcntl_fork() is not available (pcntl extension not loaded)');
}
?>
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();

tcz_each_adapter('006', function (string $adapter, string $native, callable $make) {
    $b = $make();
    $core = Zend_Cache::factory('Varien_Cache_Core', $b, ['cache_id_prefix' => 'f1_'], [], true);
    $core->save('from parent', 'PARENT', ['MAGE']);
    $pids = [];
    for ($i = 1; $i <= 3; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            // the child uses the object it inherited, and a fresh one on the same store
            $ok = $core->load('PARENT') === 'from parent'
                && $core->save("from child $i", "CHILD_$i", ['MAGE', "C$i"])
                && $make()->load("f1_CHILD_$i") === "from child $i"
                && $core->remove('NOT_THERE') === false;
            exit($ok ? 0 : 1);
        }
        $pids[] = $pid;
    }
    $codes = [];
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $status);
        $codes[] = pcntl_wifexited($status) ? pcntl_wexitstatus($status) : -1;
    }
    tcz_same([0, 0, 0], $codes, 'three forked children read the parent\'s entry and wrote their own through the inherited adapter');
    tcz_same(['from child 1', 'from child 2', 'from child 3'],
        [$core->load('CHILD_1'), $core->load('CHILD_2'), $core->load('CHILD_3')], 'the parent reads what the children wrote');
    tcz_ok(!tcz_lists($b) || $core->getIdsMatchingTags(['C2']) === ['CHILD_2'], 'the children\'s tags are in the store');
    tcz_same(true, $core->clean('matchingAnyTag', ['MAGE']), 'the parent cleans by tag after the children exited');
    tcz_same(tcz_lists($b) ? [] : [false, false, false], tcz_lists($b) ? $b->getIds()
        : [$core->load('CHILD_1'), $core->load('CHILD_2'), $core->load('CHILD_3')], 'everything tagged MAGE went');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
tcz_clean_stores('006');
?>
--EXPECTF--
ok: three forked children read the parent's entry and wrote their own through the inherited adapter
ok: the parent reads what the children wrote
ok: the children's tags are in the store
ok: the parent cleans by tag after the children exited
ok: everything tagged MAGE went
backends: %d
