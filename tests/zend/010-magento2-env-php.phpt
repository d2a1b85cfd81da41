--TEST--
Magento 2: the README's env.php block builds both cache frontends on TagCache_Zend_Shm through Magento 2's checks, no fallback
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();
require __DIR__ . '/fixtures/magento.php';

$env = eval('return [' . tcz_readme_block('test:env.php') . '];');
$tmp = sys_get_temp_dir() . '/tcz010.' . getmypid();
@mkdir($tmp, 0700);
foreach ($env['cache']['frontend'] as $name => $options) {
    echo "# $name: ", json_encode($options), "\n";
    $options['backend_options']['dir'] = $tmp;   // the test's own directory; names and sizes as in the README
    [$frontend, $type] = tcz_mage2_cache($options);
    $backend = $frontend->getBackend();
    echo 'Magento 2 chose: ', $type, ', backend ', get_class($backend), "\n";
    $file = 'tagcache.' . $options['backend_options']['segment'];
    echo "segment file $file exists: ", var_export(file_exists("$tmp/$file"), true), "\n";
    echo 'size: ', $backend->getOption('size'), "\n";
    // Magento 2 upper-cases ids and tags, and cleans with matchingAnyTag
    var_dump($frontend->save('value', 'ID_1', ['TAG_A']), $frontend->load('ID_1'));
    var_dump($frontend->clean('matchingAnyTag', ['TAG_A']), $frontend->load('ID_1'));
}
echo 'fallback File made: ', var_export(isset(Zend_Cache::$made['Zend_Cache_Backend_File']), true), "\n";
unset($frontend, $backend);
foreach (glob("$tmp/tagcache.*") as $f) {
    unlink($f);
}
rmdir($tmp);
?>
--CLEAN--
<?php
foreach (glob(sys_get_temp_dir() . '/tcz010.*') ?: [] as $d) {
    foreach (glob("$d/tagcache.*") ?: [] as $f) {
        unlink($f);
    }
    @rmdir($d);
}
?>
--EXPECT--
# default: {"backend":"TagCache_Zend_Shm","backend_options":{"segment":"magento2","size":"256M"}}
Magento 2 chose: TagCache_Zend_Shm, backend TagCache_Zend_Shm
segment file tagcache.magento2 exists: true
size: 268435456
bool(true)
string(5) "value"
bool(true)
bool(false)
# page_cache: {"backend":"TagCache_Zend_Shm","backend_options":{"segment":"magento2_fpc","size":"512M"}}
Magento 2 chose: TagCache_Zend_Shm, backend TagCache_Zend_Shm
segment file tagcache.magento2_fpc exists: true
size: 536870912
bool(true)
string(5) "value"
bool(true)
bool(false)
fallback File made: false
