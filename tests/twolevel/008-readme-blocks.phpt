--TEST--
TwoLevel: the README's Magento 1 local.xml and Magento 2 env.php blocks (every value a string, nested option arrays, Cm and Magento L2 names) build a working TagCache\TwoLevel over Redis
--EXTENSIONS--
tagcache
simplexml
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

function readme_block(string $marker): string
{
    $readme = file_get_contents(dirname(__DIR__, 2) . '/README.md');
    if (!preg_match('/<!-- ' . preg_quote($marker, '/') . ' -->\s*\n```[a-z]*\n(.*?)\n```/s', $readme, $m)) {
        throw new RuntimeException("README.md has no block after <!-- $marker -->");
    }
    return $m[1];
}

/** SimpleXML as Magento 1 turns it into options: every leaf a string. */
function xml_array(SimpleXMLElement $x)
{
    if (!$x->children()->count()) {
        return (string) $x;
    }
    $out = [];
    foreach ($x->children() as $k => $c) {
        $out[$k] = xml_array($c);
    }
    return $out;
}

$port = (string) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('readme')['port']);

$m1 = xml_array(simplexml_load_string(readme_block('test:twolevel-local.xml'))->global->cache);
tl_same('TagCache_Zend_TwoLevel', $m1['backend'], 'Magento 1 block: the backend class');
$o = $m1['backend_options'];
$o['slow_backend_options']['port'] = $port;               // the test's server
$o['slow_backend_options']['prefix'] = 'tl008a:' . getmypid() . ':';
$o['fast_backend_options'] = ['size' => $o['fast_backend_options']['size']] + tl_fast_options('tl008-m1-' . getmypid());
$b = new TagCache\TwoLevel($o);
tl_same(1.0, $b->getOption('max_staleness'), "max_staleness '1' became 1.0");
tl_same(true, $b->save('<config/>', 'CONFIG_GLOBAL', ['CONFIG']), 'save');
tl_same('<config/>', $b->load('CONFIG_GLOBAL'), 'load');
tl_same(['CONFIG_GLOBAL'], $b->getIdsMatchingTags(['CONFIG']), 'listing from Redis');
$b->clean('all');

$env = eval('return [' . readme_block('test:twolevel-env.php') . '];');
$d = $env['cache']['frontend']['default'];
tl_same('TagCache_Zend_TwoLevel', $d['backend'], 'Magento 2 block: the backend class');
$o = $d['backend_options'];
$o['remote_backend_options']['port'] = $port;
$o['remote_backend_options']['prefix'] = 'tl008b:' . getmypid() . ':';
$o['local_backend_options'] = ['size' => $o['local_backend_options']['size']] + tl_fast_options('tl008-m2-' . getmypid());
$b = new TagCache\TwoLevel($o);
tl_same(true, $b->save('<page/>', 'PAGE', ['FPC']), 'save');
tl_same('<page/>', $b->load('PAGE'), 'load');
tl_same(true, $b->clean('matchingAnyTag', ['FPC']), 'clean by tag');
tl_same(false, $b->load('PAGE'), 'gone');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: Magento 1 block: the backend class
ok: max_staleness '1' became 1.0
ok: save
ok: load
ok: listing from Redis
ok: Magento 2 block: the backend class
ok: save
ok: load
ok: clean by tag
ok: gone
done
