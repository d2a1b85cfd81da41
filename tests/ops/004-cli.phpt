--TEST--
tagcache command line: stats, tags, inspect, clean, flush, verify, compact on --backend, --config and --magento (local.xml, env.php) stores; exit codes 0/1/2, --json, progress on stderr
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/ops.inc';
if (($r = ops_skip_reason(false)) !== null) die("skip $r");
if (!class_exists('SimpleXMLElement')) die('skip the simplexml extension is not loaded (Debian: php8.2-xml)');
?>
--INI--
log_errors=0
--FILE--
<?php
require __DIR__ . '/ops.inc';

$p = ops_populate(false);
$shm = $p['objects']['shop shm'];
$file = $p['objects']['shop-file'];
$seg = $p['stores']['shop shm']['options']['segment'];
$dir = tcr_dir();
$S = ['--backend=Shm', '--option', "segment=$seg", '--option', 'size=4M'];
$F = ['--backend', 'File', '--option', "cache_dir=$dir/file"];

// usage errors: 2, before the store is touched
foreach ([[[], 'no command'], [['frobnicate', ...$S], 'an unknown command'], [['stats'], 'no store'],
    [['stats', ...$S, '--magento=/x'], 'two stores'], [['stats', '--backend=Nope'], 'an unknown backend'],
    [['inspect', ...$S], 'inspect without an id'], [['tags', '--top', '0', ...$S], '--top 0'],
    [['clean', ...$S], 'clean without --tag'], [['flush', ...$S], 'flush without --yes'],
    [['compact', ...$S], 'compact on Shm'], [['stats', '--bogus', ...$S], 'an unknown option']] as [$args, $what]) {
    $r = ops_cli($args);
    tcr_check($r['exit'] === 2 && str_contains($r['err'], 'tagcache:') || ($args === [] && $r['exit'] === 2 && str_contains($r['err'], 'usage:')), "$what: exit 2 with a message", json_encode($r));
}
$r = ops_cli(['--help']);
tcr_check($r['exit'] === 0 && str_contains($r['out'], 'usage: tagcache'), '--help: exit 0, the usage on stdout');
tcr_same($shm->stats()['entries'], 8, 'nothing was flushed by the refused flush');

$r = ops_cli(['stats', ...$S, '--json']);
$st = $shm->stats();
tcr_same(0, $r['exit'], 'stats: exit 0');
tcr_same($st, $r['json']['stats'] ?? null, 'stats --json: "stats" is stats()');
tcr_same([$st['entries'], $st['hits'], true], [$r['json']['entries'] ?? null, $r['json']['hits'] ?? null, $r['json']['ok'] ?? null], 'stats --json: entries, hits, ok');
$r = ops_cli(['stats', ...$F]);
tcr_check($r['exit'] === 0 && preg_match('/^entries\s+8$/m', $r['out']) === 1, 'stats (text): one "name value" line per figure', $r['out']);

$r = ops_cli(['tags', '--top', '2', ...$S, '--json']);
tcr_same([0, [['CATALOG', 8], ['store_0', 4]]], [$r['exit'], $r['json']['by_entries'] ?? null], 'tags --top 2 --json: the two biggest tags with their counts');

$r = ops_cli(['inspect', '<script>alert(1)</script>', ...$F, '--json']);
tcr_same([0, true, 7, ['<b onmouseover="x">tag\'</b>', 'CATALOG']], [$r['exit'], $r['json']['found'] ?? null, $r['json']['bytes'] ?? null, $r['json']['tags'] ?? null], 'inspect --json: found, its size and tags');
$r = ops_cli(['inspect', 'nope', ...$F, '--json']);
tcr_same([1, false], [$r['exit'], $r['json']['found'] ?? null], 'inspect of a missing id: exit 1, found false');

$r = ops_cli(['clean', '--tag', 'store_0', '--tag', 'store_1', ...$S, '--json']);
tcr_same([0, 8, 1, []], [$r['exit'], $r['json']['entries_before'] ?? null, $r['json']['entries_after'] ?? null, $shm->getIdsMatchingAnyTags(['store_0', 'store_1'])], 'clean --tag a --tag b: exit 0, entries 8 -> 1');
tcr_check(str_contains($r['err'], 'cleaning tag 2/2: store_1'), 'clean of several tags: a progress line per tag on stderr', $r['err']);
$r = ops_cli(['clean', '--tag', 'x', '--tag', 'y', ...$S, '--quiet']);
tcr_same([0, ''], [$r['exit'], $r['err']], '--quiet: no progress lines');

$r = ops_cli(['verify', ...$F, '--json']);
tcr_same([0, []], [$r['exit'], $r['json']['problems'] ?? null], 'verify on a sound File store: exit 0, no problems');
tcr_check(str_contains($r['err'], 'verify done'), 'verify: a progress line on stderr', $r['err']);

// compact: overwrite the entries so the logs hold dead records, then compact
for ($round = 0; $round < 4; $round++) {
    for ($i = 0; $i < 7; $i++) {
        $file->save(str_repeat('w', 20000), "page_$i", ['CATALOG']);
    }
}
$before = $file->stats();
$r = ops_cli(['compact', ...$F, '--json']);
$after = $file->stats();
tcr_same(0, $r['exit'], 'compact on File: exit 0');
tcr_same([$before['log_bytes'], $after['log_bytes']], [$r['json']['log_bytes_before'] ?? null, $r['json']['log_bytes_after'] ?? null], 'compact --json: log bytes before and after as stats() says');
tcr_check($after['log_bytes'] < $before['log_bytes'], 'compact reclaimed dead bytes', json_encode([$before['log_bytes'], $after['log_bytes'], $after['live_bytes']]));
tcr_same(str_repeat('w', 20000), $file->load('page_3'), 'the live entries survive compaction');

$r = ops_cli(['flush', '--yes', ...$S, '--json']);
tcr_same([0, true, 0], [$r['exit'], $r['json']['ok'] ?? null, $shm->stats()['entries']], 'flush --yes: exit 0, the store empty');

// a store that fails: a Redis nobody listens on
if (class_exists('TagCache\Redis')) {
    $r = ops_cli(['stats', '--backend=Redis', '--option', 'server=127.0.0.1', '--option', 'port=' . ops_free_port(), '--option', 'timeout=0.5', '--json']);
    tcr_same(1, $r['exit'], 'stats on a dead Redis: exit 1');
    tcr_same(false, $r['json']['nodes'][0]['up'] ?? null, 'and its server is down in the JSON');
} else {
    tcr_check(true, 'stats on a dead Redis: exit 1');
    tcr_check(true, 'and its server is down in the JSON');
}
$r = ops_cli(['stats', '--backend=File', '--option', 'cache_dir=/proc/nope', '--json']);
tcr_check($r['exit'] === 1 && ($r['json']['ok'] ?? null) === false && ($r['json']['error'] ?? '') !== '', 'a store that cannot open: exit 1, ok false and the error in the JSON', json_encode($r));

// Magento configurations
$root = "$dir/magento";
mkdir("$root/app/etc", 0700, true);
mkdir("$root/var", 0700);
$shm->save('m1', 'm1-entry', ['M']);
file_put_contents("$root/app/etc/local.xml", <<<XML
<?xml version="1.0"?>
<config><global>
  <cache><backend>TagCache_Zend_Shm</backend><backend_options><segment>$seg</segment><size>4M</size></backend_options></cache>
  <full_page_cache><backend>TagCache_Zend_File</backend><backend_options><cache_dir>var/fpc</cache_dir></backend_options></full_page_cache>
</global></config>
XML);
$r = ops_cli(['inspect', 'm1-entry', "--magento=$root/app/etc/local.xml", '--json']);
tcr_same([0, 'magento/default', 'Shm', ['M']], [$r['exit'], $r['json']['store'] ?? null, $r['json']['engine'] ?? null, $r['json']['tags'] ?? null], 'local.xml <cache>: the Shm store it names');
$r = ops_cli(['stats', "--magento=$root/app/etc/local.xml", '--store=full_page_cache', '--json']);
tcr_same([0, 'File'], [$r['exit'], $r['json']['engine'] ?? null], 'local.xml <full_page_cache> (--store=full_page_cache)');
tcr_check(is_dir("$root/var/fpc"), 'a relative cache_dir is taken from the Magento root');
file_put_contents("$root/app/etc/env.php", '<?php return ' . var_export(['cache' => ['frontend' => [
    'default' => ['backend' => 'TagCache_Zend_Shm', 'backend_options' => ['segment' => $seg, 'size' => '4M']],
    'page_cache' => ['backend' => 'Cm_Cache_Backend_Redis', 'backend_options' => []]]]], true) . ';');
$r = ops_cli(['tags', "--magento=$root/app/etc/env.php", '--json']);
tcr_same([0, [['M', 1]]], [$r['exit'], $r['json']['by_entries'] ?? null], "env.php 'cache' => 'frontend' => 'default'");
$r = ops_cli(['stats', "--magento=$root/app/etc/env.php", '--store=page_cache', '--json']);
tcr_check($r['exit'] === 1 && str_contains($r['json']['error'] ?? '', 'not a tagcache backend'), 'env.php: a frontend with another backend: exit 1, said why', json_encode($r['json']));
$r = ops_cli(['stats', "--magento=$root/app/etc/nope.php"]);
tcr_check($r['exit'] === 1 && str_contains($r['err'], 'missing or unreadable'), 'a missing Magento file: exit 1, said why', $r['err']);

$r = ops_cli(['stats', '--config', $p['config'], '--store', 'shop-file', '--json']);
tcr_same([0, 'shop-file'], [$r['exit'], $r['json']['store'] ?? null], '--config --store: the status page\'s store');
file_put_contents("$dir/status.ini", "trusted = \"127.0.0.1, ::1\"\n[store.main]\nbackend = Shm\noptions[segment] = $seg\noptions[size] = 4M\n"
    . "[store.m1]\nmagento = $root/app/etc/local.xml\n");
$r = ops_cli(['inspect', 'm1-entry', '--config', "$dir/status.ini", '--store', 'main', '--json']);
tcr_same([0, true], [$r['exit'], $r['json']['found'] ?? null], 'an INI configuration: [store.main] with options[...]');
$r = ops_cli(['stats', '--config', "$dir/status.ini", '--store', 'm1/full_page_cache', '--json']);
tcr_same([0, 'File'], [$r['exit'], $r['json']['engine'] ?? null], 'an INI configuration: magento = local.xml gives m1/default and m1/full_page_cache');
$r = ops_cli(['stats', '--config', $p['config']]);
tcr_check($r['exit'] === 2 && str_contains($r['err'], 'choose one with --store'), '--config with several stores and no --store: exit 2', $r['err']);
?>
--CLEAN--
<?php
require __DIR__ . '/ops.inc';
ops_clean();
?>
--EXPECT--
ok: no command: exit 2 with a message
ok: an unknown command: exit 2 with a message
ok: no store: exit 2 with a message
ok: two stores: exit 2 with a message
ok: an unknown backend: exit 2 with a message
ok: inspect without an id: exit 2 with a message
ok: --top 0: exit 2 with a message
ok: clean without --tag: exit 2 with a message
ok: flush without --yes: exit 2 with a message
ok: compact on Shm: exit 2 with a message
ok: an unknown option: exit 2 with a message
ok: --help: exit 0, the usage on stdout
ok: nothing was flushed by the refused flush
ok: stats: exit 0
ok: stats --json: "stats" is stats()
ok: stats --json: entries, hits, ok
ok: stats (text): one "name value" line per figure
ok: tags --top 2 --json: the two biggest tags with their counts
ok: inspect --json: found, its size and tags
ok: inspect of a missing id: exit 1, found false
ok: clean --tag a --tag b: exit 0, entries 8 -> 1
ok: clean of several tags: a progress line per tag on stderr
ok: --quiet: no progress lines
ok: verify on a sound File store: exit 0, no problems
ok: verify: a progress line on stderr
ok: compact on File: exit 0
ok: compact --json: log bytes before and after as stats() says
ok: compact reclaimed dead bytes
ok: the live entries survive compaction
ok: flush --yes: exit 0, the store empty
ok: stats on a dead Redis: exit 1
ok: and its server is down in the JSON
ok: a store that cannot open: exit 1, ok false and the error in the JSON
ok: local.xml <cache>: the Shm store it names
ok: local.xml <full_page_cache> (--store=full_page_cache)
ok: a relative cache_dir is taken from the Magento root
ok: env.php 'cache' => 'frontend' => 'default'
ok: env.php: a frontend with another backend: exit 1, said why
ok: a missing Magento file: exit 1, said why
ok: --config --store: the status page's store
ok: an INI configuration: [store.main] with options[...]
ok: an INI configuration: magento = local.xml gives m1/default and m1/full_page_cache
ok: --config with several stores and no --store: exit 2
