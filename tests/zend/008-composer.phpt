--TEST--
Composer (Magento 2): php_src/composer.json is a valid package whose autoload (PSR-4 for the namespaced classes, PSR-0 for TagCache_Zend_*) finds every class, installed from a path repository; and the include_path route (use-include-path) finds the pecl-installed copy
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--SKIPIF--
<?php
require __DIR__ . '/zend.inc';
if (!is_executable('/usr/bin/composer')) {
    die('skip composer is not installed (Debian package composer, installed by scripts/setup.sh)');
}
?>
--FILE--
<?php
require __DIR__ . '/zend.inc';
$src = tcz_php_src();
$tmp = sys_get_temp_dir() . '/tcz008.' . getmypid();
@mkdir($tmp, 0700, true);
$shm = ['segment' => 'tcz.008.' . getmypid(), 'dir' => $tmp, 'size' => '1M'];
// Composer runs on the system php.ini (it needs mbstring or iconv, json, ...) plus our module.
$composer = [PHP_BINARY, '-d', 'extension=' . tcz_module(), '/usr/bin/composer', '--no-interaction', '--no-ansi'];
$env = ['HOME' => $tmp, 'COMPOSER_HOME' => "$tmp/home", 'COMPOSER_CACHE_DIR' => "$tmp/cache",
        'COMPOSER_DISABLE_XDEBUG_WARN' => '1', 'PATH' => getenv('PATH')];

// 1. the package itself
[$code, $out] = tcz_run(array_merge($composer, ['validate', '--no-check-publish', '--strict', "$src/composer.json"]), $env);
echo 'composer validate php_src/composer.json: ', $code === 0 ? 'valid' : "exit $code\n$out", "\n";
$pkg = json_decode(file_get_contents("$src/composer.json"), true);
$unmapped = [];
$it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator("$src/TagCache", FilesystemIterator::SKIP_DOTS));
foreach ($it as $f) {
    if (!preg_match('/^\s*(?:(?:final|abstract)\s+)?(?:class|interface|trait)\s/m', (string)file_get_contents($f->getPathname()))) {
        continue;   // no class: an entry script (status.php) or functions (autoload "files")
    }
    $rel = substr($f->getPathname(), strlen($src) + 1);
    $class = preg_replace('/\.php$/', '', $rel);
    $class = str_starts_with($class, 'TagCache/Zend/') ? str_replace('/', '_', $class) : str_replace('/', '\\', $class);
    $ok = false;
    // TagCache_Zend_*: PSR-0 (underscores, as Magento 1's include_path loads them)
    foreach ($pkg['autoload']['psr-0'] ?? [] as $prefix => $dir) {
        $ok = $ok || (str_starts_with($class, $prefix) && $dir === '');
    }
    // namespaced classes: PSR-4, the file is the prefix's directory plus the rest of the name
    foreach ($pkg['autoload']['psr-4'] ?? [] as $prefix => $dir) {
        $ok = $ok || (str_starts_with($class, $prefix)
            && $rel === $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php');
    }
    if (!$ok) {
        $unmapped[] = $class;
    }
}
echo 'classes under php_src/TagCache outside the psr-4 and psr-0 prefixes: ', $unmapped ? implode(', ', $unmapped) : 'none', "\n";
// the top composer.json is PIE's (Debian's Composer 2.5 predates the php-ext schema: checked by hand)
$pie = json_decode(file_get_contents(tcz_root() . '/composer.json'), true);
echo 'composer.json for PIE: type ', $pie['type'] ?? '?', ', extension-name ', $pie['php-ext']['extension-name'] ?? '?',
    ' (the module is ', (new ReflectionExtension('tagcache'))->getName(), '), php ', $pie['require']['php'] ?? '?', "\n";

// 2. a Composer app requiring it from a path repository (offline: packagist off)
mkdir("$tmp/app");
file_put_contents("$tmp/app/composer.json", json_encode([
    'repositories' => [['type' => 'path', 'url' => $src, 'options' => ['symlink' => false]], ['packagist.org' => false]],
    'require' => ['tagcache/tagcache-adapters' => '*@dev'],
], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
[$code, $out] = tcz_run(array_merge($composer, ['install', '--working-dir=' . "$tmp/app"]), $env);
echo 'composer install: ', $code === 0 ? 'ok' : "exit $code\n$out", "\n";
[$code, $out] = tcz_run(array_merge(tcz_php(), ['-d', 'include_path=.:/usr/share/php', __DIR__ . '/fixtures/composer_child.php',
    "$tmp/app/vendor/autoload.php", json_encode($shm)]));
echo $out;

// 3. no package: Composer's use-include-path finds the copy pecl put on the include_path
mkdir("$tmp/app2");
file_put_contents("$tmp/app2/composer.json", json_encode(['config' => ['use-include-path' => true],
    'repositories' => [['packagist.org' => false]]], JSON_PRETTY_PRINT));
[$code, $out] = tcz_run(array_merge($composer, ['install', '--working-dir=' . "$tmp/app2"]), $env);
echo 'composer install (use-include-path): ', $code === 0 ? 'ok' : "exit $code\n$out", "\n";
[$code, $out] = tcz_run(array_merge(tcz_php(), ['-d', "include_path=.:$src:/usr/share/php", __DIR__ . '/fixtures/composer_child.php',
    "$tmp/app2/vendor/autoload.php", json_encode($shm)]));
echo $out;
?>
--CLEAN--
<?php
require __DIR__ . '/zend.inc';
foreach (glob(sys_get_temp_dir() . '/tcz008.*') ?: [] as $d) {
    if (is_dir($d) && !is_link($d)) {
        exec('rm -rf ' . escapeshellarg($d));
    }
}
?>
--EXPECT--
composer validate php_src/composer.json: valid
classes under php_src/TagCache outside the psr-4 and psr-0 prefixes: none
composer.json for PIE: type php-ext, extension-name tagcache (the module is tagcache), php >=8.1
composer install: ok
class_exists(TagCache_Zend_Shm): true
loaded from: vendor/tagcache/tagcache-adapters/TagCache/Zend/Shm.php
save and load through Zend_Cache_Core: true
TagCache\Psr16\Cache autoloaded: true
composer install (use-include-path): ok
class_exists(TagCache_Zend_Shm): true
loaded from: php_src/TagCache/Zend/Shm.php
save and load through Zend_Cache_Core: true
TagCache\Psr16\Cache autoloaded: true
