--TEST--
Magento 1: the README's local.xml block, read the way Magento reads it (every value a string), loads TagCache_Zend_Shm through the include_path and works; cron in another process shares it
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
if (!extension_loaded('simplexml')) die('skip SimpleXML is not loaded (Magento reads local.xml with it; Debian: php-xml; phpize\'s make test loads no shared extension but this one)');
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();
require __DIR__ . '/fixtures/magento.php';

$xml = simplexml_load_string(tcz_readme_block('test:local.xml'));
$node = tcz_xml_as_array($xml->global->cache);
echo 'local.xml <cache>: ', json_encode($node), "\n";
// the test's own segment, in a temp directory: the README's size is kept
$tmp = sys_get_temp_dir() . '/tcz009.' . getmypid();
@mkdir($tmp, 0700);
$node['backend_options']['segment'] = 'tcz009';
$node['backend_options']['dir'] = $tmp;

$cache = new Tcz_Mage_Cache($node);
echo 'Magento chose: ', $cache->backendType, "\n";
echo 'fallback File made: ', var_export(isset(Zend_Cache::$made['Zend_Cache_Backend_File']), true), "\n";
$backend = $cache->frontend->getBackend();
echo 'backend object: ', get_class($backend), ' from ', substr((new ReflectionClass($backend))->getFileName(), strlen(tcz_php_src()) + 1), "\n";
echo "size '", $xml->global->cache->backend_options->size, "' became: ", var_export($backend->getOption('size'), true), "\n";
echo 'lifetime directive (Magento 1 default 7200): ', var_export($backend->getOption('lifetime'), true), "\n";

// Magento saves upper-cased, prefixed ids and tags, with MAGE on everything
var_dump($cache->save('<div>product</div>', 'product_1', ['catalog_product_1']));
var_dump($cache->save('<config/>', 'config_global', ['CONFIG']));
var_dump($cache->load('product_1'));
$ids = $backend->getIds();
sort($ids);
echo 'ids in the segment: ', implode(', ', array_map(fn($id) => preg_replace('/^[0-9a-f]{3}_/', '<prefix>_', $id), $ids)), "\n";
echo 'tags of PRODUCT_1: ', implode(', ', array_map(fn($t) => preg_replace('/^[0-9a-f]{3}_/', '<prefix>_', $t),
    $backend->getMetadatas($ids[1])['tags'])), "\n";

// cron, another process with the same local.xml, cleans the product tag
[$code, $out] = tcz_run(array_merge(tcz_php(), [__DIR__ . '/fixtures/mage1_cron_child.php', json_encode($node), 'catalog_product_1']));
echo $out;
var_dump($cache->load('product_1'));
var_dump($cache->load('config_global'));
// "Flush Magento Cache": clean by MAGE; config (no MAGE tag) stays
$cache->save('<div>again</div>', 'product_1', ['catalog_product_1']);
var_dump($cache->clean());
var_dump($cache->load('product_1'), $cache->load('config_global'));
unset($cache, $backend);
@unlink("$tmp/tagcache.tcz009");
@rmdir($tmp);
?>
--CLEAN--
<?php
foreach (glob(sys_get_temp_dir() . '/tcz009.*') ?: [] as $d) {
    @unlink("$d/tagcache.tcz009");
    @rmdir($d);
}
?>
--EXPECT--
local.xml <cache>: {"backend":"TagCache_Zend_Shm","backend_options":{"segment":"magento","size":"256M"}}
Magento chose: TagCache_Zend_Shm
fallback File made: false
backend object: TagCache_Zend_Shm from TagCache/Zend/Shm.php
size '256M' became: 268435456
lifetime directive (Magento 1 default 7200): 7200
bool(true)
bool(true)
string(18) "<div>product</div>"
ids in the segment: <prefix>_CONFIG_GLOBAL, <prefix>_PRODUCT_1
tags of PRODUCT_1: <prefix>_CATALOG_PRODUCT_1, <prefix>_MAGE
cron: backend TagCache_Zend_Shm, sees PRODUCT_1: '<div>product</div>'
cron: clean by tag catalog_product_1: true
bool(false)
string(9) "<config/>"
bool(true)
bool(false)
string(9) "<config/>"
