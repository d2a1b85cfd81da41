<?php
/*
 * TagCache\Ops: what the status page (TagCache/status.php), the command
 * line (bin/tagcache) and a framework's own metrics endpoint share.
 *
 *   $stores = TagCache\Ops\stores_from_config('/etc/tagcache-status.php');
 *   $stores = TagCache\Ops\stores_from_magento('/var/www/app/etc/env.php');
 *   echo TagCache\Ops\prometheus($stores);        // text exposition format
 *   $figures = TagCache\Ops\collect($stores['default']);
 *
 * A store is an array ['name' => ..., 'class' => 'TagCache\Shm', 'options'
 * => [...]] (plus 'error' when its configuration could not be read). Only
 * the engines' own calls are used: stats(), getFillingPercentage(),
 * getTags(), getIdsMatchingTags(), getMetadatas(), clean(), remove(),
 * verify(). Nothing here scans a store without a bound: per-tag counts come
 * from at most TAG_SAMPLE tags and ID_BUDGET ids, and the page says when it
 * sampled.
 */

declare(strict_types=1);

namespace TagCache\Ops;

const VERSION = '1';
/** Tags whose entries are counted for "top tags" (the first ones getTags() lists). */
const TAG_SAMPLE = 300;
/** Ids counted over all sampled tags before counting stops. */
const ID_BUDGET = 50000;
/** Entries read (load()) to estimate bytes per tag, only when asked. */
const BYTES_SAMPLE = 500;
/** Ids listed on the page (getIds() only when the store holds at most LIST_LIMIT). */
const LIST_LIMIT = 10000;

/** The native class for a backend name: Shm, TagCache\Shm, TagCache_Zend_Shm. */
function backend_class(string $name): string
{
    $n = trim($name);
    if (preg_match('/^\\\\?TagCache[\\\\_](?:Zend_)?([A-Za-z]+)$/', $n, $m)) {
        $n = $m[1];
    }
    $known = ['shm' => 'Shm', 'file' => 'File', 'redis' => 'Redis', 'memcached' => 'Memcached', 'twolevel' => 'TwoLevel'];
    $k = strtolower($n);
    if (!isset($known[$k])) {
        throw new \InvalidArgumentException("backend \"$name\" is not a tagcache backend (Shm, File, Redis, Memcached, TwoLevel or TagCache_Zend_*)");
    }
    return 'TagCache\\' . $known[$k];
}

/** A store description; $error is set instead of throwing so the page shows every store it can. */
function store(string $name, string $backend, array $options, ?string $source = null): array
{
    $s = ['name' => $name, 'backend' => $backend, 'class' => null, 'options' => $options, 'source' => $source, 'error' => null];
    try {
        $s['class'] = backend_class($backend);
    } catch (\InvalidArgumentException $e) {
        $s['error'] = $e->getMessage();
    }
    return $s;
}

/**
 * Stores from a configuration file: a PHP file that returns an array, or an
 * INI file. PHP:
 *   return ['stores' => ['main' => ['backend' => 'Shm', 'options' => ['segment' => 'shop']],
 *                        'm2' => ['magento' => '/var/www/app/etc/env.php']],
 *           'auth' => [...], 'trusted' => ['127.0.0.1', '::1']];
 * INI: one section per store, [store.main] backend=Shm options[segment]=shop
 * or magento=/path/env.php; a section [auth] for the page.
 * Returns ['stores' => [name => store], 'auth' => [...], 'trusted' => [...]].
 */
function load_config(string $file): array
{
    if (!is_file($file) || !is_readable($file)) {
        throw new \RuntimeException("configuration file $file is missing or unreadable");
    }
    if (preg_match('/\.ini$/i', $file)) {
        $ini = parse_ini_file($file, true, INI_SCANNER_TYPED);
        if ($ini === false) {
            throw new \RuntimeException("configuration file $file: not valid INI");
        }
        $cfg = ['stores' => []];
        foreach ($ini as $section => $vals) {
            if (!is_array($vals)) {
                $cfg[$section] = $vals;
            } elseif (str_starts_with($section, 'store.')) {
                $cfg['stores'][substr($section, 6)] = $vals;
            } else {
                $cfg[$section] = $vals;
            }
        }
    } else {
        $cfg = (static fn () => include $file)();
        if (!is_array($cfg)) {
            throw new \RuntimeException("configuration file $file must return an array");
        }
    }
    if (isset($cfg['trusted']) && is_string($cfg['trusted'])) {
        $cfg['trusted'] = preg_split('/[\s,]+/', $cfg['trusted'], -1, PREG_SPLIT_NO_EMPTY);
    }
    $stores = [];
    foreach ($cfg['stores'] ?? [] as $name => $def) {
        $name = (string)$name;
        if (!is_array($def)) {
            $stores[$name] = store($name, '?', [], $file) + [];
            $stores[$name]['error'] = "store \"$name\": expected an array";
            continue;
        }
        if (isset($def['magento'])) {
            try {
                foreach (stores_from_magento((string)$def['magento'], $name) as $n => $s) {
                    $stores[$n] = $s;
                }
            } catch (\RuntimeException $e) {
                $stores[$name] = store($name, '?', [], (string)$def['magento']);
                $stores[$name]['error'] = $e->getMessage();
            }
            continue;
        }
        $stores[$name] = store($name, (string)($def['backend'] ?? '?'), (array)($def['options'] ?? []), $file);
    }
    $cfg['stores'] = $stores;
    return $cfg;
}

/**
 * The tagcache stores of a Magento configuration: app/etc/local.xml
 * (Magento 1: <global><cache> and <full_page_cache>, each <backend> with
 * <backend_options>) or app/etc/env.php (Magento 2: 'cache' => 'frontend' =>
 * id => 'backend' / 'backend_options'). Frontends whose backend is not a
 * tagcache one are listed with an error, so the page says why they are not
 * shown. Relative cache_dir options are taken from the Magento root.
 * Store names: $prefix (or "magento") plus "/" and the frontend id.
 */
function stores_from_magento(string $file, ?string $prefix = null): array
{
    if (!is_file($file) || !is_readable($file)) {
        throw new \RuntimeException("Magento configuration $file is missing or unreadable");
    }
    $root = dirname($file, 3);
    $prefix ??= 'magento';
    $found = [];
    if (preg_match('/\.xml$/i', $file)) {
        $prev = libxml_use_internal_errors(true);
        $xml = simplexml_load_file($file, 'SimpleXMLElement', LIBXML_NONET | LIBXML_NOCDATA);
        libxml_use_internal_errors($prev);
        if ($xml === false) {
            throw new \RuntimeException("Magento configuration $file: not well-formed XML");
        }
        foreach (['cache' => 'default', 'full_page_cache' => 'full_page_cache'] as $node => $id) {
            $c = $xml->global->{$node} ?? null;
            if ($c === null || !isset($c->backend)) {
                continue;
            }
            $opts = [];
            foreach ($c->backend_options->children() ?? [] as $k => $v) {
                $opts[$k] = $v->count() ? xml_array($v) : trim((string)$v);
            }
            $found[$id] = [trim((string)$c->backend), $opts];
        }
    } else {
        $env = (static fn () => include $file)();
        if (!is_array($env)) {
            throw new \RuntimeException("Magento configuration $file does not return an array");
        }
        foreach ($env['cache']['frontend'] ?? [] as $id => $fe) {
            if (is_array($fe) && isset($fe['backend'])) {
                $found[(string)$id] = [(string)$fe['backend'], (array)($fe['backend_options'] ?? [])];
            }
        }
    }
    if (!$found) {
        throw new \RuntimeException("Magento configuration $file names no cache backend");
    }
    $stores = [];
    foreach ($found as $id => [$backend, $opts]) {
        if (isset($opts['cache_dir']) && is_string($opts['cache_dir']) && $opts['cache_dir'] !== '' && $opts['cache_dir'][0] !== '/') {
            $opts['cache_dir'] = $root . '/' . $opts['cache_dir'];
        }
        $name = $prefix . '/' . $id;
        $stores[$name] = store($name, $backend, $opts, $file);
    }
    return $stores;
}

function xml_array(\SimpleXMLElement $e): array
{
    $out = [];
    foreach ($e->children() as $k => $v) {
        $out[$k] = $v->count() ? xml_array($v) : trim((string)$v);
    }
    return $out;
}

/** Parses "--option k=v" pairs (k may be a[b] for a nested array). */
function option_pairs(array $pairs): array
{
    $out = [];
    foreach ($pairs as $p) {
        $eq = strpos($p, '=');
        if ($eq === false || $eq === 0) {
            throw new \InvalidArgumentException("option \"$p\": expected name=value");
        }
        $k = substr($p, 0, $eq);
        $v = substr($p, $eq + 1);
        if (preg_match('/^([^\[]+)\[([^\]]*)\]$/', $k, $m)) {
            $m[2] === '' ? $out[$m[1]][] = $v : $out[$m[1]][$m[2]] = $v;
        } else {
            $out[$k] = $v;
        }
    }
    return $out;
}

/** Opens a store's native object; throws what the native class throws. */
function open(array $store): \TagCache\Backend
{
    if ($store['error'] !== null) {
        throw new \RuntimeException($store['error']);
    }
    $class = $store['class'];
    if (!class_exists($class, false)) {
        throw new \RuntimeException("$class is not in this build of the tagcache extension");
    }
    return new $class($store['options']);
}

/** The engine name of a native class: Shm, File, ... */
function engine(array $store): string
{
    return $store['class'] ? substr($store['class'], strlen('TagCache\\')) : '?';
}

/**
 * Whether a store's hit counters are shared by every process (Shm and File
 * keep them in the store) or belong to the process that asks (the network
 * engines count in the client).
 */
function shared_counters(string $engine): bool
{
    return $engine === 'Shm' || $engine === 'File' || $engine === 'TwoLevel';
}

/**
 * The figures of one store. Keys: name, engine, ok, error, stats (stats()
 * verbatim), fill (getFillingPercentage()), hits, misses, hit_rate (null
 * when there was no read, or when the counters are per process), entries,
 * tags, bytes, evictions, expirations, lock_recoveries, writes,
 * huge_pages (Shm and TwoLevel: the segment's pages, else null),
 * counters ('store' or 'process'), nodes (server state), and with
 * $withTags the top tags (see top_tags()).
 */
function collect(array $store, bool $withTags = true, bool $withBytes = false, ?\TagCache\Backend $b = null): array
{
    $f = ['name' => $store['name'], 'engine' => engine($store), 'source' => $store['source'] ?? null,
        'ok' => false, 'error' => null, 'stats' => [], 'nodes' => [], 'top' => null];
    $f['nodes'] = nodes($store);
    try {
        $b ??= open($store);
        $st = $b->stats();
        $f['stats'] = $st;
        $f['fill'] = $b->getFillingPercentage();
    } catch (\Throwable $e) {
        $f['error'] = $e->getMessage();
        return $f;
    }
    $f['ok'] = true;
    $shared = shared_counters($f['engine']);
    $f['counters'] = $shared ? 'store' : 'process';
    $get = static fn (string $k) => isset($st[$k]) ? (int)$st[$k] : null;
    $f['hits'] = $get('hits');
    $f['misses'] = $get('misses');
    $f['writes'] = $get('writes') ?? $get('saves');
    $reads = ($f['hits'] ?? 0) + ($f['misses'] ?? 0);
    $f['hit_rate'] = $shared && $reads > 0 ? $f['hits'] / $reads : null;
    $f['entries'] = $get('entries');
    $f['tags'] = $get('tags');
    $f['bytes'] = $get('bytes_used');
    $f['size'] = $get('size') ?? $get('max_size');
    foreach (['evictions', 'expirations', 'lock_recoveries'] as $k) {
        $f[$k] = $get($k);
    }
    // the segment's pages (Shm; TwoLevel's fast level): 1 = 2 MB, 0 = 4 KB
    // (refused, or a file under 2 MB), -1 = not collapsed yet
    $f['huge_pages'] = $get('huge_pages') ?? $get('fast.huge_pages');
    if ($withTags) {
        try {
            $f['top'] = top_tags($b, $f['tags'], $withBytes);
        } catch (\Throwable $e) {
            // a server that fails between stats() and the listings: the figures stay
            $f['top'] = ['by_entries' => [], 'by_bytes' => null, 'tags_counted' => 0, 'tags_total' => $f['tags'],
                'sampled' => false, 'bytes_entries' => 0, 'bytes_sampled' => false, 'supported' => false, 'error' => $e->getMessage()];
        }
    }
    return $f;
}

/**
 * Top tags by entries (and by bytes when $withBytes: that reads up to
 * BYTES_SAMPLE entries with load(), which counts as reads in the store's
 * hit counters). Returns ['by_entries' => [[tag, entries], ...], 'by_bytes'
 * => [[tag, bytes], ...] or null, 'tags_counted' => n, 'tags_total' => n,
 * 'sampled' => bool (not every tag counted), 'bytes_entries' => entries read,
 * 'bytes_sampled' => bool (not every entry read), 'supported' => bool].
 */
function top_tags(\TagCache\Backend $b, ?int $tagsTotal, bool $withBytes = false, int $top = 10): array
{
    $r = ['by_entries' => [], 'by_bytes' => null, 'tags_counted' => 0, 'tags_total' => $tagsTotal,
        'sampled' => false, 'bytes_entries' => 0, 'bytes_sampled' => false, 'supported' => true];
    try {
        $caps = $b->getCapabilities();
        if (empty($caps['get_list'])) {
            $r['supported'] = false;
            return $r;
        }
        $tags = $b->getTags();
    } catch (\Throwable $e) {
        $r['supported'] = false;
        $r['error'] = $e->getMessage();
        return $r;
    }
    $r['tags_total'] = count($tags);
    $counts = [];
    $ids = [];
    $budget = ID_BUDGET;
    foreach ($tags as $i => $tag) {
        if ($i >= TAG_SAMPLE || $budget <= 0) {
            $r['sampled'] = true;
            break;
        }
        $m = $b->getIdsMatchingTags([$tag]);
        $counts[$tag] = count($m);
        $budget -= count($m);
        if ($withBytes) {
            $ids[$tag] = $m;
        }
    }
    $r['tags_counted'] = count($counts);
    arsort($counts);
    foreach (array_slice($counts, 0, $top, true) as $t => $n) {
        $r['by_entries'][] = [(string)$t, $n];
    }
    if ($withBytes) {
        $size = [];
        $bytes = [];
        foreach ($ids as $tag => $m) {
            $bytes[$tag] = 0;
            foreach ($m as $id) {
                if (!array_key_exists($id, $size)) {
                    if (count($size) >= BYTES_SAMPLE) {
                        $r['bytes_sampled'] = true;
                        continue;
                    }
                    $v = $b->load($id, true);
                    $size[$id] = $v === false ? 0 : strlen($v);
                }
                $bytes[$tag] += $size[$id];
            }
        }
        $r['bytes_entries'] = count($size);
        arsort($bytes);
        $r['by_bytes'] = [];
        foreach (array_slice($bytes, 0, $top, true) as $t => $n) {
            $r['by_bytes'][] = [(string)$t, $n];
        }
    }
    return $r;
}

/** The servers a network store names: [['host' => , 'port' => , 'kind' => redis|memcached|sentinel]]. */
function node_list(array $store): array
{
    $engine = engine($store);
    $o = array_change_key_case($store['options']);
    $out = [];
    $add = static function ($spec, int $defPort, string $kind) use (&$out) {
        if (is_array($spec)) {
            if (isset($spec['host'])) {
                $out[] = ['host' => (string)$spec['host'], 'port' => (int)($spec['port'] ?? $defPort), 'kind' => $kind];
                return;
            }
            foreach ($spec as $s) {
                if (is_array($s) && isset($s['host'])) {
                    $out[] = ['host' => (string)$s['host'], 'port' => (int)($s['port'] ?? $defPort), 'kind' => $kind];
                } elseif (is_string($s)) {
                    $spec2[] = $s;
                }
            }
            $spec = implode(',', $spec2 ?? []);
        }
        foreach (preg_split('/[\s,]+/', (string)$spec, -1, PREG_SPLIT_NO_EMPTY) as $a) {
            $a = preg_replace('#^(tcp|redis)://#', '', $a);
            if ($a[0] === '/' || str_starts_with($a, 'unix://')) {
                $out[] = ['host' => preg_replace('#^unix://#', '', $a), 'port' => 0, 'kind' => $kind];
            } elseif (preg_match('/^\[([^\]]+)\](?::(\d+))?$/', $a, $m) || preg_match('/^([^:]+)(?::(\d+))?(?::\d+)?$/', $a, $m)) {
                $out[] = ['host' => $m[1], 'port' => isset($m[2]) && $m[2] !== '' ? (int)$m[2] : $defPort, 'kind' => $kind];
            }
        }
    };
    if ($engine === 'Redis') {
        $port = (int)($o['port'] ?? 6379);
        $add($o['server'] ?? '127.0.0.1', empty($o['sentinel_master']) ? $port : 26379, empty($o['sentinel_master']) ? 'redis' : 'sentinel');
    } elseif ($engine === 'Memcached') {
        $add($o['servers'] ?? $o['server'] ?? '127.0.0.1', (int)($o['port'] ?? 11211), 'memcached');
    } elseif ($engine === 'TwoLevel') {
        foreach (['slow_backend' => 'slow_backend_options'] as $b => $bo) {
            if (isset($o[$b])) {
                try {
                    $out = array_merge($out, node_list(store('slow', (string)$o[$b], (array)($o[$bo] ?? []))));
                } catch (\Throwable) {
                }
            }
        }
    }
    return $out;
}

/**
 * Probes each server a store names with a short timeout (PING / INFO for
 * Redis, version / stats for memcached). Returns [['node' => 'host:port',
 * 'kind', 'up' => bool, 'detail' => string, 'info' => [...]]].
 */
function nodes(array $store, float $timeout = 0.5): array
{
    $res = [];
    foreach (node_list($store) as $n) {
        $addr = $n['port'] ? (str_contains($n['host'], ':') ? "[{$n['host']}]" : $n['host']) . ':' . $n['port'] : $n['host'];
        $url = $n['port'] ? "tcp://$addr" : "unix://{$n['host']}";
        $row = ['node' => $addr, 'kind' => $n['kind'], 'up' => false, 'detail' => '', 'info' => []];
        $s = @stream_socket_client($url, $errno, $errstr, $timeout);
        if (!$s) {
            $row['detail'] = $errstr !== '' ? $errstr : 'unreachable';
            $res[] = $row;
            continue;
        }
        stream_set_timeout($s, (int)$timeout, (int)(fmod($timeout, 1) * 1e6));
        if ($n['kind'] === 'memcached') {
            fwrite($s, "stats\r\n");
            $info = [];
            while (($l = fgets($s)) !== false) {
                $l = rtrim($l);
                if ($l === 'END' || str_starts_with($l, 'ERROR')) {
                    break;
                }
                if (preg_match('/^STAT (\S+) (.*)$/', $l, $m)) {
                    $info[$m[1]] = $m[2];
                }
            }
            $row['up'] = isset($info['pid']);
            $row['info'] = array_intersect_key($info, array_flip(['version', 'uptime', 'curr_items', 'bytes', 'limit_maxbytes', 'get_hits', 'get_misses', 'evictions']));
            $row['detail'] = $row['up'] ? 'memcached ' . ($info['version'] ?? '') : 'no answer to stats';
        } else {
            $cmd = $n['kind'] === 'sentinel' ? "PING\r\n" : "INFO\r\n";
            fwrite($s, $cmd);
            $first = fgets($s);
            if ($first === false) {
                $row['detail'] = 'no answer';
            } elseif ($first[0] === '+' || $first[0] === '-') {
                $row['up'] = true;
                $row['detail'] = trim(substr($first, 1));
                if (str_starts_with($row['detail'], 'NOAUTH')) {
                    $row['detail'] = 'up (password needed for INFO)';
                }
            } elseif ($first[0] === '$') {
                $len = (int)substr($first, 1);
                $body = '';
                while (strlen($body) < $len + 2 && !feof($s)) {
                    $chunk = fread($s, $len + 2 - strlen($body));
                    if ($chunk === false || $chunk === '') {
                        break;
                    }
                    $body .= $chunk;
                }
                $info = [];
                foreach (explode("\n", $body) as $l) {
                    if (preg_match('/^(\w+):(.*)$/', trim($l), $m)) {
                        $info[$m[1]] = $m[2];
                    }
                }
                $row['up'] = true;
                $row['info'] = array_intersect_key($info, array_flip(['redis_version', 'role', 'uptime_in_seconds', 'used_memory', 'maxmemory', 'keyspace_hits', 'keyspace_misses', 'evicted_keys', 'expired_keys']));
                $row['detail'] = 'redis ' . ($info['redis_version'] ?? '') . ' ' . ($info['role'] ?? '');
            }
        }
        fclose($s);
        $res[] = $row;
    }
    return $res;
}

/** Collects every store; a store that cannot be opened is reported, not thrown. */
function collect_all(array $stores, bool $withTags = true, bool $withBytes = false): array
{
    $out = [];
    foreach ($stores as $s) {
        $out[$s['name']] = collect($s, $withTags, $withBytes);
    }
    return $out;
}

/** A label value in the text exposition format: backslash, double quote and newline escaped. */
function prom_label(string $v): string
{
    return str_replace(['\\', '"', "\n"], ['\\\\', '\\"', '\\n'], $v);
}

function prom_num(int|float $v): string
{
    if (is_int($v)) {
        return (string)$v;
    }
    if (is_nan($v)) {
        return 'NaN';
    }
    if (is_infinite($v)) {
        return $v > 0 ? '+Inf' : '-Inf';
    }
    $s = sprintf('%.17g', $v);
    return $s;
}

/** The metric families prometheus() writes: name => [type, help]. */
function metric_families(): array
{
    return [
        'tagcache_up' => ['gauge', 'Whether the store could be opened and read, and for a network store at least one of its servers answered (1), or not (0).'],
        'tagcache_hits_total' => ['counter', 'Reads that found an entry (Shm and File: every process of the store).'],
        'tagcache_misses_total' => ['counter', 'Reads that found no valid entry (Shm and File: every process of the store).'],
        'tagcache_writes_total' => ['counter', 'Entries written (Shm and File: every process of the store).'],
        'tagcache_evictions_total' => ['counter', 'Entries evicted to make room.'],
        'tagcache_expirations_total' => ['counter', 'Expired entries removed.'],
        'tagcache_lock_recoveries_total' => ['counter', 'Locks recovered from a process that died holding them.'],
        'tagcache_entries' => ['gauge', 'Entries in the store.'],
        'tagcache_tags' => ['gauge', 'Tags in the store.'],
        'tagcache_used_bytes' => ['gauge', 'Bytes the store uses (engine-specific: segment heap, logs plus index, Redis memory of the namespace).'],
        'tagcache_size_bytes' => ['gauge', 'Capacity of the store in bytes, where it has one.'],
        'tagcache_fill_ratio' => ['gauge', 'getFillingPercentage() / 100.'],
        'tagcache_node_up' => ['gauge', 'Whether a server of a network store answered (1) or not (0).'],
    ];
}

/**
 * The figures of $stores (store arrays, or figures from collect()) in the
 * Prometheus text exposition format, version 0.0.4. Hit, miss and write
 * counters are written only for engines that count for every process (Shm,
 * File): the network engines count per client process, which a scrape
 * cannot sum.
 */
function prometheus(array $stores): string
{
    $samples = array_fill_keys(array_keys(metric_families()), []);
    foreach ($stores as $s) {
        $f = isset($s['ok']) && array_key_exists('stats', $s) ? $s : collect($s, false);
        $l = 'store="' . prom_label($f['name']) . '"';
        $up = $f['ok'] && (!$f['nodes'] || in_array(true, array_column($f['nodes'], 'up'), true));
        $samples['tagcache_up'][] = '{' . $l . ',engine="' . prom_label($f['engine']) . '"} ' . ($up ? 1 : 0);
        foreach ($f['nodes'] as $n) {
            $samples['tagcache_node_up'][] = '{' . $l . ',node="' . prom_label($n['node']) . '",kind="' . prom_label($n['kind']) . '"} ' . ($n['up'] ? 1 : 0);
        }
        if (!$f['ok']) {
            continue;
        }
        $map = ['tagcache_evictions_total' => 'evictions', 'tagcache_expirations_total' => 'expirations',
            'tagcache_lock_recoveries_total' => 'lock_recoveries', 'tagcache_entries' => 'entries',
            'tagcache_tags' => 'tags', 'tagcache_used_bytes' => 'bytes', 'tagcache_size_bytes' => 'size'];
        if ($f['counters'] === 'store') {
            $map += ['tagcache_hits_total' => 'hits', 'tagcache_misses_total' => 'misses', 'tagcache_writes_total' => 'writes'];
        }
        foreach ($map as $metric => $k) {
            if (isset($f[$k])) {
                $samples[$metric][] = '{' . $l . '} ' . prom_num($f[$k]);
            }
        }
        $samples['tagcache_fill_ratio'][] = '{' . $l . '} ' . prom_num($f['fill'] / 100);
    }
    $out = '';
    foreach (metric_families() as $name => [$type, $help]) {
        if (!$samples[$name]) {
            continue;
        }
        $out .= "# HELP $name " . str_replace(['\\', "\n"], ['\\\\', '\\n'], $help) . "\n# TYPE $name $type\n";
        foreach ($samples[$name] as $line) {
            $out .= $name . $line . "\n";
        }
    }
    return $out;
}

/** Escapes for HTML text and attributes. */
function h(mixed $s): string
{
    return htmlspecialchars((string)$s, ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5, 'UTF-8');
}

/** 1536 -> "1.5 KiB". */
function bytes(?int $n): string
{
    if ($n === null) {
        return 'n/a';
    }
    $u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    $i = 0;
    $v = (float)$n;
    while ($v >= 1024 && $i < count($u) - 1) {
        $v /= 1024;
        $i++;
    }
    return $i === 0 ? $n . ' B' : number_format($v, $v >= 100 ? 0 : 1) . ' ' . $u[$i];
}
