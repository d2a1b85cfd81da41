<?php
/*
 * What the PHP glue costs per call: the same operation on the native class
 * (TagCache\Shm) and through its Zend adapter (TagCache_Zend_Shm), on one
 * segment, in one process. Also, for scale, through a Zend_Cache_Core
 * (prefix, id validation) and the PSR-16 adapter.
 *
 *   php -d extension=modules/tagcache.so scripts/zend-glue-bench.php [calls]
 *
 * Uses the test suite's minimal Zend_Cache (tests/zend/fixtures/zf1.php).
 * Each figure is the best of 9 interleaved rounds, in nanoseconds per call,
 * less the cost of the empty loop.
 */

$root = dirname(__DIR__);
require "$root/tests/zend/fixtures/zf1.php";
set_include_path("$root/php_src" . PATH_SEPARATOR . get_include_path());
spl_autoload_register(function (string $class) use ($root): void {
    $file = "$root/php_src/" . str_replace(['\\', '_'], '/', $class) . '.php';
    if (is_file($file)) {
        require $file;
    } elseif (str_starts_with($class, 'Psr\\SimpleCache\\')) {
        require_once 'Psr/SimpleCache/autoload.php';
    }
});

$calls = (int) ($argv[1] ?? 500000);
$seg = 'glue-bench.' . getmypid();
$opts = ['segment' => $seg, 'dir' => sys_get_temp_dir(), 'size' => '16M'];
$native = new TagCache\Shm($opts);
$adapter = new TagCache_Zend_Shm($opts);
$core = Zend_Cache::factory('Core', $adapter, ['cache_id_prefix' => 'p_', 'write_control' => false], []);
$psr = stream_resolve_include_path('Psr/SimpleCache/autoload.php') !== false ? new TagCache\Psr16\Cache($native) : null;
register_shutdown_function(fn() => @unlink(sys_get_temp_dir() . "/tagcache.$seg"));

$data = str_repeat('x', 1024);
$native->save($data, 'p_BLOCK_HTML_1', ['MAGE', 'BLOCK_HTML']);
$psr?->set('block.html.1', $data);

/** Best of 7 rounds of $n calls of $fn, in ns per call (the empty loop subtracted). */
function best(callable $fn, int $n): float
{
    $best = INF;
    for ($r = 0; $r < 7; $r++) {
        $t = hrtime(true);
        $fn($n);
        $best = min($best, (hrtime(true) - $t) / $n);
    }
    return $best;
}

$empty = best(function (int $n) { for ($i = 0; $i < $n; $i++) { } }, $calls);
$rows = [
    'load hit, TagCache\Shm'          => function (int $n) use ($native) { for ($i = 0; $i < $n; $i++) { $native->load('p_BLOCK_HTML_1'); } },
    'load hit, TagCache_Zend_Shm'     => function (int $n) use ($adapter) { for ($i = 0; $i < $n; $i++) { $adapter->load('p_BLOCK_HTML_1'); } },
    'load hit, Zend_Cache_Core'       => function (int $n) use ($core) { for ($i = 0; $i < $n; $i++) { $core->load('BLOCK_HTML_1'); } },
    'load miss, TagCache\Shm'         => function (int $n) use ($native) { for ($i = 0; $i < $n; $i++) { $native->load('p_NOPE'); } },
    'load miss, TagCache_Zend_Shm'    => function (int $n) use ($adapter) { for ($i = 0; $i < $n; $i++) { $adapter->load('p_NOPE'); } },
    'test hit, TagCache\Shm'          => function (int $n) use ($native) { for ($i = 0; $i < $n; $i++) { $native->test('p_BLOCK_HTML_1'); } },
    'test hit, TagCache_Zend_Shm'     => function (int $n) use ($adapter) { for ($i = 0; $i < $n; $i++) { $adapter->test('p_BLOCK_HTML_1'); } },
    'save 1 KB + 2 tags, TagCache\Shm'      => function (int $n) use ($native, $data) { for ($i = 0; $i < $n; $i++) { $native->save($data, 'p_S', ['MAGE', 'T']); } },
    'save 1 KB + 2 tags, TagCache_Zend_Shm' => function (int $n) use ($adapter, $data) { for ($i = 0; $i < $n; $i++) { $adapter->save($data, 'p_S', ['MAGE', 'T']); } },
];
if ($psr) {
    $rows['get hit, TagCache\Psr16\Cache'] = function (int $n) use ($psr) { for ($i = 0; $i < $n; $i++) { $psr->get('block.html.1'); } };
}
printf("PHP %s, %d calls per round (save: a fifth), best of 9 interleaved rounds, ns per call\n", PHP_VERSION, $calls);
$res = array_fill_keys(array_keys($rows), INF);
for ($round = 0; $round < 9; $round++) {
    foreach ($rows as $name => $fn) {
        $n = str_starts_with($name, 'save') ? intdiv($calls, 5) : $calls;
        $t = hrtime(true);
        $fn($n);
        $res[$name] = min($res[$name], (hrtime(true) - $t) / $n - $empty);
    }
}
foreach ($res as $name => $ns) {
    printf("  %-40s %8.0f\n", $name, $ns);
}
printf("glue per call: load hit %+.0f ns, load miss %+.0f ns, test %+.0f ns, save %+.0f ns\n",
    $res['load hit, TagCache_Zend_Shm'] - $res['load hit, TagCache\Shm'],
    $res['load miss, TagCache_Zend_Shm'] - $res['load miss, TagCache\Shm'],
    $res['test hit, TagCache_Zend_Shm'] - $res['test hit, TagCache\Shm'],
    $res['save 1 KB + 2 tags, TagCache_Zend_Shm'] - $res['save 1 KB + 2 tags, TagCache\Shm']);
