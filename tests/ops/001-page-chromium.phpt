--TEST--
Status page in headless Chromium: the figures of a Shm, File and Redis store equal stats(), hostile ids and tags are shown as text, a screenshot renders
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/ops.inc';
if (($r = ops_skip_reason(true, true)) !== null) die("skip $r");
?>
--INI--
log_errors=0
--FILE--
<?php
require __DIR__ . '/ops.inc';

$p = ops_populate();
$srv = ops_server($p['config']);

$before = [];
foreach ($p['objects'] as $name => $b) {
    $before[$name] = $b->stats();
}
$r = ops_chromium_run($srv['url'], ['--dump-dom']);
tcr_same(0, $r['exit'], 'chromium --dump-dom exits 0');
$page = ops_page_figures($r['out']);
tcr_check(!str_contains($r['out'], 'Warning:') && !str_contains($r['out'], 'Fatal error'), 'no PHP warning on the page', substr($r['out'], 0, 500));
tcr_same(array_keys($p['stores']), array_values(array_diff(array_keys($page), ['#scripts', '#bold'])), 'one section per configured store, in order');

foreach ($p['objects'] as $name => $b) {
    $st = $before[$name];
    $f = $page[$name]['figures'] ?? [];
    foreach (['entries' => 'entries', 'tags' => 'tags', 'bytes' => 'bytes_used'] as $k => $sk) {
        if ($name === 'shop-redis' && $k === 'bytes') {
            // Redis reports the server's used_memory, which moves with every connection
            tcr_check(ctype_digit($f[$k] ?? '') && (int)$f[$k] > 0, "$name: page bytes is the server's used_memory (a positive number)", json_encode($f));
            continue;
        }
        tcr_same((string)$st[$sk], $f[$k] ?? null, "$name: page $k = stats()['$sk']");
    }
    tcr_same((string)$b->getFillingPercentage(), $f['fill'] ?? null, "$name: page fill = getFillingPercentage()");
    $hp = $st['huge_pages'] ?? null;
    tcr_same($hp === null ? null : (string)$hp, $f['huge_pages'] ?? null, "$name: page memory pages = stats()['huge_pages'] (none without a segment)");
    if ($name !== 'shop-redis') {
        // Shm and File count reads for every process of the store
        foreach (['hits', 'misses', 'evictions', 'expirations', 'lock_recoveries'] as $k) {
            tcr_same((string)$st[$k], $f[$k] ?? null, "$name: page $k = stats()['$k']");
        }
        $rate = $st['hits'] / ($st['hits'] + $st['misses']);
        tcr_check(abs((float)$f['hit_rate'] - $rate) < 1e-6, "$name: page hit rate = hits / (hits + misses)", $f['hit_rate'] . " vs $rate");
    } else {
        tcr_same('', $f['hit_rate'] ?? null, "$name: no hit rate for per-process counters");
    }
    tcr_same(array_keys($st), array_keys($page[$name]['stats']), "$name: the page lists every key of stats()");
    if ($name !== 'shop-redis') {
        tcr_same($st, $page[$name]['stats'], "$name: with stats()'s values");
    }
    $after = $b->stats();
    tcr_same([$st['hits'], $st['misses']], [$after['hits'], $after['misses']], "$name: viewing the page reads no entry (hits and misses unchanged)");

    // top tags: the counts getIdsMatchingTags() gives
    $tags = $page[$name]['tags'];
    tcr_same(8, $tags['CATALOG'] ?? null, "$name: CATALOG is shown with its 8 entries");
    tcr_same(count($b->getIdsMatchingTags(['store_0'])), $tags['store_0'] ?? null, "$name: store_0's count = getIdsMatchingTags()");
    tcr_check(array_key_first($tags) === 'CATALOG', "$name: the tag with most entries comes first", json_encode($tags));
    tcr_check(in_array('<script>alert(1)</script>', $page[$name]['ids'], true), "$name: the <script> id is shown as text", json_encode($page[$name]['ids']));
    tcr_check(isset($tags['<b onmouseover="x">tag\'</b>']), "$name: the markup tag is shown as text");
}
tcr_same(0, $page['#scripts'], 'no <script> element in the rendered DOM');
tcr_same(0, $page['#bold'], 'no <b> element in the rendered DOM (the tag stayed text)');

$raw = ops_http($srv, 'GET', '/');
tcr_check(str_contains($raw['body'], '&lt;script&gt;alert(1)&lt;/script&gt;'), 'the HTML holds the id escaped');
tcr_check(str_contains($raw['body'], '&lt;b onmouseover=&quot;x&quot;&gt;tag&apos;&lt;/b&gt;') || str_contains($raw['body'], '&lt;b onmouseover=&quot;x&quot;&gt;tag&#039;&lt;/b&gt;'), 'the HTML holds the tag escaped, quotes included');
tcr_check(str_contains(implode(' ', $raw['headers']['content-security-policy'] ?? []), "default-src 'none'"), 'a Content-Security-Policy forbids scripts');

// with bytes per tag: the sizes of the entries carrying the tag
$r = ops_chromium_run($srv['url'] . '?tagbytes=1', ['--dump-dom']);
$page = ops_page_figures($r['out']);
$sum = 0;
foreach ($p['objects']['shop shm']->getIdsMatchingTags(['store_1']) as $id) {
    $sum += strlen($p['objects']['shop shm']->load($id));
}
$d = new DOMDocument();
@$d->loadHTML($r['out']);
$bytesShown = null;
foreach ((new DOMXPath($d))->query('//section[@data-store="shop shm"]//svg[@aria-label="top tags by bytes"]/g[@data-tag="store_1"]') as $g) {
    $bytesShown = (int)$g->getAttribute('data-value');
}
tcr_same($sum, $bytesShown, 'bytes per tag (?tagbytes=1): store_1 = the sum of its entries\' sizes');

$png = tcr_dir() . '/shot.png';
$r = ops_chromium_run($srv['url'], ['--screenshot=' . $png, '--window-size=1280,1600', '--hide-scrollbars']);
tcr_check(is_file($png) && substr((string)file_get_contents($png), 0, 8) === "\x89PNG\r\n\x1a\n", 'chromium --screenshot writes a PNG of the page', $r['err']);
?>
--CLEAN--
<?php
require __DIR__ . '/ops.inc';
ops_clean();
?>
--EXPECT--
ok: chromium --dump-dom exits 0
ok: no PHP warning on the page
ok: one section per configured store, in order
ok: shop shm: page entries = stats()['entries']
ok: shop shm: page tags = stats()['tags']
ok: shop shm: page bytes = stats()['bytes_used']
ok: shop shm: page fill = getFillingPercentage()
ok: shop shm: page memory pages = stats()['huge_pages'] (none without a segment)
ok: shop shm: page hits = stats()['hits']
ok: shop shm: page misses = stats()['misses']
ok: shop shm: page evictions = stats()['evictions']
ok: shop shm: page expirations = stats()['expirations']
ok: shop shm: page lock_recoveries = stats()['lock_recoveries']
ok: shop shm: page hit rate = hits / (hits + misses)
ok: shop shm: the page lists every key of stats()
ok: shop shm: with stats()'s values
ok: shop shm: viewing the page reads no entry (hits and misses unchanged)
ok: shop shm: CATALOG is shown with its 8 entries
ok: shop shm: store_0's count = getIdsMatchingTags()
ok: shop shm: the tag with most entries comes first
ok: shop shm: the <script> id is shown as text
ok: shop shm: the markup tag is shown as text
ok: shop-file: page entries = stats()['entries']
ok: shop-file: page tags = stats()['tags']
ok: shop-file: page bytes = stats()['bytes_used']
ok: shop-file: page fill = getFillingPercentage()
ok: shop-file: page memory pages = stats()['huge_pages'] (none without a segment)
ok: shop-file: page hits = stats()['hits']
ok: shop-file: page misses = stats()['misses']
ok: shop-file: page evictions = stats()['evictions']
ok: shop-file: page expirations = stats()['expirations']
ok: shop-file: page lock_recoveries = stats()['lock_recoveries']
ok: shop-file: page hit rate = hits / (hits + misses)
ok: shop-file: the page lists every key of stats()
ok: shop-file: with stats()'s values
ok: shop-file: viewing the page reads no entry (hits and misses unchanged)
ok: shop-file: CATALOG is shown with its 8 entries
ok: shop-file: store_0's count = getIdsMatchingTags()
ok: shop-file: the tag with most entries comes first
ok: shop-file: the <script> id is shown as text
ok: shop-file: the markup tag is shown as text
ok: shop-redis: page entries = stats()['entries']
ok: shop-redis: page tags = stats()['tags']
ok: shop-redis: page bytes is the server's used_memory (a positive number)
ok: shop-redis: page fill = getFillingPercentage()
ok: shop-redis: page memory pages = stats()['huge_pages'] (none without a segment)
ok: shop-redis: no hit rate for per-process counters
ok: shop-redis: the page lists every key of stats()
ok: shop-redis: viewing the page reads no entry (hits and misses unchanged)
ok: shop-redis: CATALOG is shown with its 8 entries
ok: shop-redis: store_0's count = getIdsMatchingTags()
ok: shop-redis: the tag with most entries comes first
ok: shop-redis: the <script> id is shown as text
ok: shop-redis: the markup tag is shown as text
ok: no <script> element in the rendered DOM
ok: no <b> element in the rendered DOM (the tag stayed text)
ok: the HTML holds the id escaped
ok: the HTML holds the tag escaped, quotes included
ok: a Content-Security-Policy forbids scripts
ok: bytes per tag (?tagbytes=1): store_1 = the sum of its entries' sizes
ok: chromium --screenshot writes a PNG of the page
