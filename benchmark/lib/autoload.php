<?php

declare(strict_types=1);

// The harness has no Composer: PSR-4 for its own namespace, one class per
// file (TagCacheBench\Php is lib/Php.php), and the few free functions.
spl_autoload_register(static function (string $class): void {
    $prefix = 'TagCacheBench\\';
    if (!str_starts_with($class, $prefix)) {
        return;
    }
    $f = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($f)) {
        require $f;
    }
});
require_once __DIR__ . '/functions.php';
