<?php

/**
 * The php-fpm side of `--modes=fpm`: bench.php sends requests here with
 * cgi-fcgi. action=ping|check|load|client, spec=<json file>, client=N.
 * Answers JSON.
 */

declare(strict_types=1);

namespace TagCacheBench;

require __DIR__ . '/lib/autoload.php';

set_time_limit(0);
header('Content-Type: application/json');
Php::$ownerPid = -1;

$q = $_GET;
try {
    $spec = isset($q['spec']) ? json_decode((string)file_get_contents($q['spec']), true, 512, JSON_THROW_ON_ERROR) : null;
    $ctx = $spec ? Context::fromArray($spec['ctx']) : null;
    switch ($q['action'] ?? '') {
        case 'ping':
            echo json_encode([
                'pid' => getmypid(), 'sapi' => PHP_SAPI, 'php' => PHP_VERSION,
                'tagcache' => extension_loaded('tagcache'), 'apcu' => extension_loaded('apcu') && apcu_enabled(),
            ]);
            break;
        case 'check':
            $def = Backends::all()[$spec['backend']];
            echo json_encode(['missing' => ($def['requires'])($ctx)]);
            break;
        case 'load':
            echo json_encode(Measure::load($ctx, $spec['backend'], new Dataset($spec['data_dir'], $spec['params'])));
            break;
        case 'after':
            echo json_encode(['after' => Measure::after($ctx, $spec['backend'])]);
            break;
        case 'client':
            $r = Client::run($spec, (int)$q['client']);
            echo json_encode(['ok' => !$r['errors'], 'pid' => getmypid()]);
            break;
        default:
            echo json_encode(['error' => 'unknown action']);
    }
} catch (\Throwable $e) {
    echo json_encode(['error' => get_class($e) . ': ' . $e->getMessage() . ' at ' . basename($e->getFile()) . ':' . $e->getLine()]);
}
