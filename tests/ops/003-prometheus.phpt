--TEST--
Prometheus text format (?format=prometheus and TagCache\Ops\prometheus()): every line parses, HELP and TYPE precede each family's samples, label values escaped, values equal stats()
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/ops.inc';
if (($r = ops_skip_reason(true)) !== null) die("skip $r");
?>
--INI--
log_errors=0
--FILE--
<?php
require __DIR__ . '/ops.inc';

/**
 * A strict parser of the text exposition format 0.0.4: returns [families
 * => [name => ['type', 'help']], samples => [[name, [label => value], float]]]
 * or throws on the first line that does not parse.
 */
function parse_prometheus(string $text): array
{
    if ($text !== '' && !str_ends_with($text, "\n")) {
        throw new RuntimeException('the text does not end with a newline');
    }
    $fam = [];
    $samples = [];
    $seen = [];
    $name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
    foreach (explode("\n", rtrim($text, "\n")) as $n => $line) {
        $where = 'line ' . ($n + 1) . ": $line";
        if (preg_match("/^# (HELP|TYPE) ($name) (.*)$/", $line, $m)) {
            if (isset($seen[$m[2]])) {
                throw new RuntimeException("$m[1] after the samples of $m[2]: $where");
            }
            if ($m[1] === 'TYPE') {
                if (!in_array($m[3], ['counter', 'gauge', 'histogram', 'summary', 'untyped'], true) || isset($fam[$m[2]]['type'])) {
                    throw new RuntimeException("bad or second TYPE: $where");
                }
                $fam[$m[2]]['type'] = $m[3];
            } else {
                $fam[$m[2]]['help'] = $m[3];
            }
            continue;
        }
        if ($line === '' || $line[0] === '#') {
            throw new RuntimeException("unexpected line: $where");
        }
        if (!preg_match("/^($name)(?:\{(.*)\})? (\S+)$/", $line, $m)) {
            throw new RuntimeException("not a sample: $where");
        }
        $labels = [];
        $rest = $m[2];
        while ($rest !== '') {
            if (!preg_match('/^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\n]|\\\\[\\\\"n])*)"(,|$)/', $rest, $l)) {
                throw new RuntimeException("bad labels: $where");
            }
            $labels[$l[1]] = strtr($l[2], ['\\\\' => '\\', '\\"' => '"', '\\n' => "\n"]);
            $rest = substr($rest, strlen($l[0]));
        }
        if (!is_numeric($m[3]) && !in_array($m[3], ['NaN', '+Inf', '-Inf'], true)) {
            throw new RuntimeException("bad value: $where");
        }
        if (!isset($fam[$m[1]]['type'], $fam[$m[1]]['help'])) {
            throw new RuntimeException("a sample before its HELP and TYPE: $where");
        }
        $key = $m[1] . json_encode($labels);
        if (isset($seen[$key])) {
            throw new RuntimeException("a duplicate sample: $where");
        }
        $seen[$key] = $seen[$m[1]] = true;
        $samples[] = [$m[1], $labels, (float)$m[3]];
    }
    return ['families' => $fam, 'samples' => $samples];
}

function sample(array $parsed, string $metric, string $store): ?float
{
    foreach ($parsed['samples'] as [$n, $l, $v]) {
        if ($n === $metric && ($l['store'] ?? null) === $store) {
            return $v;
        }
    }
    return null;
}

$p = ops_populate();
// a store name that needs every escape, and a store that cannot open
$odd = "we\"ird\\name\nline2";
$cfg = include $p['config'];
$cfg['stores'][$odd] = $cfg['stores']['shop shm'];
$cfg['stores']['broken'] = ['backend' => 'Shm', 'options' => ['segment' => ops_segment('x'), 'size' => '1']];
$cfg['stores']['down'] = ['backend' => 'Redis', 'options' => ['server' => '127.0.0.1', 'port' => ops_free_port(), 'timeout' => '0.5']];
file_put_contents($p['config'], '<?php return ' . var_export($cfg, true) . ';');
$stores = TagCache\Ops\load_config($p['config'])['stores'];

$srv = ops_server($p['config']);
$r = ops_http($srv, 'GET', '/?format=prometheus');
tcr_same(200, $r['status'], '?format=prometheus: 200');
tcr_same('text/plain; version=0.0.4; charset=utf-8', $r['headers']['content-type'][0] ?? null, 'Content-Type of the text format');
foreach (['page' => $r['body'], 'function' => TagCache\Ops\prometheus($stores)] as $how => $text) {
    try {
        $parsed = parse_prometheus($text);
        tcr_check(true, "$how: every line parses");
    } catch (RuntimeException $e) {
        tcr_check(false, "$how: every line parses", $e->getMessage() . "\n$text");
        continue;
    }
    $bad = [];
    foreach ($parsed['families'] as $n => $f) {
        if (!str_starts_with($n, 'tagcache_') || ($f['type'] === 'counter') !== str_ends_with($n, '_total')) {
            $bad[] = $n;
        }
    }
    tcr_same([], $bad, "$how: names start with tagcache_, counters and only counters end in _total");
    foreach ($p['objects'] as $name => $b) {
        $st = $b->stats();
        $want = ['tagcache_entries' => $st['entries'], 'tagcache_tags' => $st['tags'], 'tagcache_up' => 1];
        if ($name !== 'shop-redis') {
            $want += ['tagcache_hits_total' => $st['hits'], 'tagcache_misses_total' => $st['misses'], 'tagcache_writes_total' => $st['writes'],
                'tagcache_evictions_total' => $st['evictions'], 'tagcache_expirations_total' => $st['expirations'],
                'tagcache_lock_recoveries_total' => $st['lock_recoveries'], 'tagcache_used_bytes' => $st['bytes_used']];
        }
        $got = [];
        foreach ($want as $m => $v) {
            $got[$m] = sample($parsed, $m, $name);
            $want[$m] = (float)$v;
        }
        tcr_same($want, $got, "$how: $name's samples equal stats()");
    }
    tcr_same(null, sample($parsed, 'tagcache_hits_total', 'shop-redis'), "$how: no hit counter for Redis (its counters are per process)");
    tcr_same((float)$p['objects']['shop shm']->stats()['entries'], sample($parsed, 'tagcache_entries', $odd), "$how: the odd store name comes back through the label escapes");
    tcr_same([0.0, null], [sample($parsed, 'tagcache_up', 'broken'), sample($parsed, 'tagcache_entries', 'broken')], "$how: a store that cannot open: tagcache_up 0, no figures");
    $nodes = [];
    foreach ($parsed['samples'] as [$n, $l, $v]) {
        if ($n === 'tagcache_node_up') {
            $nodes[$l['store']] = $v;
        }
    }
    tcr_same([0.0, null], [sample($parsed, 'tagcache_up', 'down'), sample($parsed, 'tagcache_entries', 'down')], "$how: a Redis store whose server is down: tagcache_up 0, no entries");
    tcr_same(['shop-redis' => 1.0, 'down' => 0.0], $nodes, "$how: tagcache_node_up per Redis server, 0 for the dead one");
}
?>
--CLEAN--
<?php
require __DIR__ . '/ops.inc';
ops_clean();
?>
--EXPECT--
ok: ?format=prometheus: 200
ok: Content-Type of the text format
ok: page: every line parses
ok: page: names start with tagcache_, counters and only counters end in _total
ok: page: shop shm's samples equal stats()
ok: page: shop-file's samples equal stats()
ok: page: shop-redis's samples equal stats()
ok: page: no hit counter for Redis (its counters are per process)
ok: page: the odd store name comes back through the label escapes
ok: page: a store that cannot open: tagcache_up 0, no figures
ok: page: a Redis store whose server is down: tagcache_up 0, no entries
ok: page: tagcache_node_up per Redis server, 0 for the dead one
ok: function: every line parses
ok: function: names start with tagcache_, counters and only counters end in _total
ok: function: shop shm's samples equal stats()
ok: function: shop-file's samples equal stats()
ok: function: shop-redis's samples equal stats()
ok: function: no hit counter for Redis (its counters are per process)
ok: function: the odd store name comes back through the label escapes
ok: function: a store that cannot open: tagcache_up 0, no figures
ok: function: a Redis store whose server is down: tagcache_up 0, no entries
ok: function: tagcache_node_up per Redis server, 0 for the dead one
