<?php
/*
 * tagcache status page: one file, no assets, no JavaScript. Drop it (or a
 * one-line file that requires it) into a web root as you would apc.php, or
 * look at it with PHP's built-in server:
 *
 *   TAGCACHE_STATUS_CONFIG=/etc/tagcache-status.php php -S 127.0.0.1:8080 status.php
 *
 * The configuration (README "Status page") names the stores, the
 * credentials and the addresses that need none. Where it is looked for, in
 * order: the variable $tagcache_status_config set by a script that
 * requires this one; the environment variable TAGCACHE_STATUS_CONFIG;
 * tagcache-status.config.php or .ini beside the script the server runs.
 *
 * Access: a client in "trusted" (default 127.0.0.1 and ::1) needs no
 * credentials; any other client must authenticate (HTTP basic against
 * auth.user / auth.password_hash, or "Authorization: Bearer" against
 * auth.token_sha256) to see anything, and with no credentials configured is
 * refused. Actions (clean by tag, remove an id, flush) are POST only and
 * carry a CSRF token that must equal the page's SameSite=Strict cookie.
 * ?format=prometheus gives the metrics in the text exposition format.
 */

declare(strict_types=1);

namespace TagCache\Ops;

if (!function_exists('TagCache\Ops\collect')) {
    $lib = __DIR__ . '/Ops/functions.php';
    require is_file($lib) ? $lib : 'TagCache/Ops/functions.php';
}

status_main($tagcache_status_config ?? null);

function status_main(string|array|null $config): void
{
    header('X-Content-Type-Options: nosniff');
    header('Referrer-Policy: no-referrer');
    header('Cache-Control: no-store');
    header("Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    header('X-Frame-Options: DENY');

    $path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH) ?: '/';
    if (PHP_SAPI === 'cli-server' && $path === '/favicon.ico') {
        http_response_code(404);
        return;
    }
    if (!extension_loaded('tagcache')) {
        fail(500, 'The tagcache extension is not loaded in this PHP.');
        return;
    }
    try {
        $cfg = find_config($config);
    } catch (\Throwable $e) {
        fail(500, 'Configuration: ' . $e->getMessage());
        return;
    }
    $auth = authorize($cfg);
    if ($auth !== true) {
        [$code, $msg] = $auth;
        if ($code === 401) {
            header('WWW-Authenticate: Basic realm="tagcache", charset="UTF-8"');
        }
        fail($code, $msg);
        return;
    }
    $method = $_SERVER['REQUEST_METHOD'] ?? 'GET';
    if (($_GET['format'] ?? '') === 'prometheus') {
        header('Content-Type: text/plain; version=0.0.4; charset=utf-8');
        echo prometheus($cfg['stores']);
        return;
    }
    $csrf = csrf_token();
    $message = null;
    if (isset($_GET['action'])) {
        fail(405, 'Actions are POST only.');
        return;
    }
    if ($method === 'POST') {
        $r = act($cfg['stores'], $csrf);
        if ($r[0] !== 200) {
            fail($r[0], $r[1]);
            return;
        }
        $message = $r[1];
    } elseif ($method !== 'GET' && $method !== 'HEAD') {
        header('Allow: GET, HEAD, POST');
        fail(405, 'Method not allowed.');
        return;
    }
    header('Content-Type: text/html; charset=utf-8');
    echo render($cfg, $csrf, $message);
}

function find_config(string|array|null $config): array
{
    if (is_array($config)) {
        return $config + ['stores' => []];
    }
    $file = $config ?? (getenv('TAGCACHE_STATUS_CONFIG') ?: null);
    if ($file === null) {
        $dir = dirname($_SERVER['SCRIPT_FILENAME'] ?? __FILE__);
        foreach (['tagcache-status.config.php', 'tagcache-status.config.ini'] as $n) {
            if (is_file("$dir/$n")) {
                $file = "$dir/$n";
                break;
            }
        }
    }
    if ($file === null) {
        return ['stores' => [], 'unconfigured' => true];
    }
    return load_config($file);
}

/** true, or [http code, message]. */
function authorize(array $cfg): true|array
{
    $trusted = $cfg['trusted'] ?? ['127.0.0.1', '::1'];
    $client = $_SERVER['REMOTE_ADDR'] ?? '';
    if ($client !== '' && in_array(inet_normal($client), array_map('TagCache\Ops\inet_normal', (array)$trusted), true)) {
        return true;
    }
    $a = $cfg['auth'] ?? [];
    if (empty($a['password_hash']) && empty($a['token_sha256'])) {
        return [403, 'This page needs credentials for clients outside "trusted" and none are configured (auth.user and auth.password_hash, or auth.token_sha256).'];
    }
    [$user, $pass, $bearer] = credentials();
    if ($bearer !== null && !empty($a['token_sha256']) && hash_equals(strtolower((string)$a['token_sha256']), hash('sha256', $bearer))) {
        return true;
    }
    if ($user !== null && !empty($a['password_hash']) && hash_equals((string)($a['user'] ?? ''), $user)
        && password_verify((string)$pass, (string)$a['password_hash'])) {
        return true;
    }
    return [401, 'Authentication required.'];
}

function inet_normal(string $a): string
{
    $p = @inet_pton(trim($a, '[] '));
    if ($p === false) {
        return $a;
    }
    if (strlen($p) === 16 && str_starts_with($p, str_repeat("\0", 10) . "\xff\xff")) {
        $p = substr($p, 12);  // ::ffff:127.0.0.1 is 127.0.0.1
    }
    return inet_ntop($p);
}

/** [basic user, basic password, bearer token], each null when absent. */
function credentials(): array
{
    $user = $_SERVER['PHP_AUTH_USER'] ?? null;
    $pass = $_SERVER['PHP_AUTH_PW'] ?? null;
    $bearer = null;
    $h = $_SERVER['HTTP_AUTHORIZATION'] ?? $_SERVER['REDIRECT_HTTP_AUTHORIZATION'] ?? '';
    if (preg_match('/^Bearer\s+(\S+)$/i', $h, $m)) {
        $bearer = $m[1];
    } elseif ($user === null && preg_match('/^Basic\s+(\S+)$/i', $h, $m)) {
        $d = base64_decode($m[1], true);
        if ($d !== false && str_contains($d, ':')) {
            [$user, $pass] = explode(':', $d, 2);
        }
    }
    return [$user, $pass, $bearer];
}

/** The CSRF token: the cookie's, or a new one set now (SameSite=Strict, HttpOnly). */
function csrf_token(): string
{
    $c = $_COOKIE['tagcache_csrf'] ?? '';
    if (is_string($c) && preg_match('/^[0-9a-f]{64}$/', $c)) {
        return $c;
    }
    $t = bin2hex(random_bytes(32));
    setcookie('tagcache_csrf', $t, [
        'path' => '/', 'httponly' => true, 'samesite' => 'Strict',
        'secure' => !empty($_SERVER['HTTPS']) && $_SERVER['HTTPS'] !== 'off',
    ]);
    return $t;
}

/** Runs a POSTed action: [200, message] or [error code, message]. */
function act(array $stores, string $csrf): array
{
    $origin = $_SERVER['HTTP_ORIGIN'] ?? null;
    if ($origin !== null && $origin !== 'null' && parse_url($origin, PHP_URL_HOST) . (parse_url($origin, PHP_URL_PORT) ? ':' . parse_url($origin, PHP_URL_PORT) : '') !== ($_SERVER['HTTP_HOST'] ?? '')) {
        return [403, 'Cross-origin request refused.'];
    }
    $sent = $_POST['csrf'] ?? '';
    if (!isset($_COOKIE['tagcache_csrf']) || !is_string($sent) || !hash_equals($csrf, $sent)) {
        return [403, 'Missing or wrong CSRF token: reload the page and try again.'];
    }
    $name = (string)($_POST['store'] ?? '');
    if (!isset($stores[$name])) {
        return [400, 'No such store.'];
    }
    try {
        $b = open($stores[$name]);
        switch ($_POST['action'] ?? '') {
            case 'clean':
                $tags = array_values(array_filter(array_map('trim', explode(',', (string)($_POST['tag'] ?? ''))), 'strlen'));
                if (!$tags) {
                    return [400, 'Give a tag.'];
                }
                $ok = $b->clean('matchingAnyTag', $tags);
                return [200, ($ok ? 'Cleaned' : 'Failed to clean') . " entries tagged " . implode(', ', $tags) . " in $name."];
            case 'remove':
                $id = (string)($_POST['id'] ?? '');
                $ok = $b->remove($id);
                return [200, ($ok ? 'Removed' : 'Could not remove') . " \"$id\" from $name."];
            case 'flush':
                if (($_POST['confirm'] ?? '') !== 'yes') {
                    return [400, 'Tick the box to confirm the flush.'];
                }
                $ok = $b->clean('all');
                return [200, ($ok ? 'Flushed' : 'Failed to flush') . " $name."];
        }
    } catch (\Throwable $e) {
        return [500, 'Action failed: ' . $e->getMessage()];
    }
    return [400, 'Unknown action.'];
}

function fail(int $code, string $msg): void
{
    http_response_code($code);
    header('Content-Type: text/html; charset=utf-8');
    echo '<!doctype html><meta charset="utf-8"><title>tagcache: ' . $code . '</title>'
        . '<body style="font:15px system-ui,sans-serif;margin:2em"><h1>' . $code . '</h1><p id="error">' . h($msg) . "</p></body>\n";
}

/** A horizontal bar, value 0..1, as inline SVG. */
function svg_bar(?float $ratio, string $label, string $color = '#2f6fb3', int $w = 220): string
{
    $x = $ratio === null ? 0 : max(0, min(1, $ratio)) * $w;
    return '<svg class="bar" width="' . $w . '" height="14" viewBox="0 0 ' . $w . ' 14" role="img" aria-label="' . h($label) . '">'
        . '<rect width="' . $w . '" height="14" rx="3" fill="#e6e9ee"/>'
        . ($ratio === null ? '' : '<rect width="' . round($x, 1) . '" height="14" rx="3" fill="' . $color . '"/>')
        . '</svg>';
}

/** A small horizontal bar chart of [[label, value], ...] as inline SVG. */
function svg_chart(array $rows, string $color, callable $fmt, string $title): string
{
    if (!$rows) {
        return '<p class="muted">no tags</p>';
    }
    $max = max(1, max(array_column($rows, 1)));
    $lh = 22;
    $lw = 170;
    $bw = 200;
    $h = count($rows) * $lh + 4;
    $o = '<svg class="chart" width="' . ($lw + $bw + 90) . '" height="' . $h . '" role="img" aria-label="' . h($title) . '">';
    foreach ($rows as $i => [$label, $v]) {
        $y = $i * $lh + 2;
        $short = preg_replace('/^(.{27}).{2,}$/us', '$1…', $label) ?? (strlen($label) > 28 ? substr($label, 0, 27) . '…' : $label);
        $o .= '<g data-tag="' . h($label) . '" data-value="' . h($v) . '"><text x="' . ($lw - 6) . '" y="' . ($y + 15) . '" text-anchor="end"><title>' . h($label) . '</title>' . h($short) . '</text>'
            . '<rect x="' . $lw . '" y="' . ($y + 3) . '" width="' . max(1, round($v / $max * $bw, 1)) . '" height="15" rx="2" fill="' . $color . '"/>'
            . '<text x="' . ($lw + round($v / $max * $bw, 1) + 6) . '" y="' . ($y + 15) . '" class="v">' . h($fmt($v)) . '</text></g>';
    }
    return $o . '</svg>';
}

function fig(string $key, mixed $value, string $shown, string $label, string $extra = ''): string
{
    return '<div class="fig"><dt>' . h($label) . '</dt><dd data-figure="' . h($key) . '" data-value="' . h($value ?? '') . '">'
        . h($shown) . '</dd>' . $extra . '</div>';
}

function render(array $cfg, string $csrf, ?string $message): string
{
    $withBytes = ($_GET['tagbytes'] ?? '') === '1';
    $self = h(strtok($_SERVER['REQUEST_URI'] ?? '/', '?'));
    $all = collect_all($cfg['stores'], true, $withBytes);
    $o = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">'
        . '<title>tagcache status</title><style>' . css() . '</style></head><body>';
    $o .= '<header><h1>tagcache status</h1><p class="muted">' . h(gethostname()) . ' · PHP ' . h(PHP_VERSION)
        . ' · tagcache ' . h(phpversion('tagcache')) . ' · ' . h(gmdate('Y-m-d H:i:s')) . ' UTC · <a href="?format=prometheus">Prometheus metrics</a>'
        . ($withBytes ? ' · <a href="' . $self . '">without bytes per tag</a>' : ' · <a href="?tagbytes=1">with bytes per tag</a>') . '</p></header>';
    if ($message !== null) {
        $o .= '<p class="msg" id="message">' . h($message) . '</p>';
    }
    if (!$all) {
        $o .= '<section><h2>No store configured</h2><p>Point the page at a configuration file: set TAGCACHE_STATUS_CONFIG, '
            . 'or put tagcache-status.config.php beside this script (see the README, "Status page").</p></section>';
    }
    if (count($all) > 1) {
        $o .= render_overview($all);
    }
    foreach ($all as $f) {
        $o .= render_store($f, $cfg['stores'][$f['name']], $csrf, $withBytes);
    }
    return $o . "<footer class=\"muted\">Figures from each engine's stats(). Shm and File count hits for every process of the store; "
        . "Redis and Memcached count per client process, so their hit rate is not shown here (the server's own counters are under Servers).</footer></body></html>\n";
}

/** One line per store: the figures a person scans first. */
function render_overview(array $all): string
{
    $o = '<section class="store overview"><h2>Stores</h2><table><tr><th>store</th><th>engine</th><th>fill</th><th class="num">hit rate</th>'
        . '<th class="num">entries</th><th class="num">bytes used</th><th class="num">evictions</th><th>servers</th></tr>';
    foreach ($all as $f) {
        $up = count(array_filter($f['nodes'], static fn ($n) => $n['up']));
        $servers = $f['nodes'] ? ($up === count($f['nodes']) ? '<span class="up">' . $up . ' up</span>'
            : '<span class="down">' . (count($f['nodes']) - $up) . ' down</span>, ' . $up . ' up') : '';
        $o .= '<tr><td><a href="#store-' . h(rawurlencode($f['name'])) . '">' . h($f['name']) . '</a></td><td>' . h($f['engine']) . '</td>';
        if (!$f['ok']) {
            $o .= '<td colspan="5" class="err">' . h($f['error']) . '</td><td>' . $servers . '</td></tr>';
            continue;
        }
        $o .= '<td>' . svg_bar($f['fill'] / 100, 'fill', $f['fill'] >= 90 ? '#c0392b' : '#2f6fb3', 90) . ' ' . h($f['fill']) . ' %</td>'
            . '<td class="num">' . ($f['hit_rate'] === null ? '<span class="muted">n/a</span>' : h(number_format($f['hit_rate'] * 100, 1)) . ' %') . '</td>'
            . '<td class="num">' . ($f['entries'] === null ? 'n/a' : h(number_format($f['entries']))) . '</td>'
            . '<td class="num">' . h(bytes($f['bytes'])) . '</td>'
            . '<td class="num">' . ($f['evictions'] === null ? '<span class="muted">n/a</span>' : h(number_format($f['evictions']))) . '</td>'
            . '<td>' . $servers . '</td></tr>';
    }
    return $o . '</table></section>';
}

function render_store(array $f, array $store, string $csrf, bool $withBytes): string
{
    $name = $f['name'];
    $o = '<section class="store" id="store-' . h(rawurlencode($name)) . '" data-store="' . h($name) . '">';
    $o .= '<h2>' . h($name) . ' <span class="engine">' . h($f['engine']) . '</span></h2>';
    if ($f['source'] !== null) {
        $o .= '<p class="muted">from ' . h($f['source']) . '</p>';
    }
    if (!$f['ok']) {
        $o .= '<p class="err" data-figure="error">' . h($f['error']) . '</p>';
        $o .= render_nodes($f);
        return $o . '</section>';
    }
    $hr = $f['hit_rate'];
    $o .= '<dl class="figs">';
    $o .= fig('fill', $f['fill'], $f['fill'] . ' %', 'Fill', svg_bar($f['fill'] / 100, 'fill', $f['fill'] >= 90 ? '#c0392b' : '#2f6fb3'));
    $o .= fig('hit_rate', $hr === null ? '' : round($hr, 6), $hr === null ? 'n/a' : number_format($hr * 100, 1) . ' %', 'Hit rate',
        svg_bar($hr, 'hit rate', '#2e8b57'));
    $o .= fig('hits', $f['hits'], $f['hits'] === null ? 'n/a' : number_format($f['hits']), 'Hits' . ($f['counters'] === 'process' ? ' (this process)' : ''));
    $o .= fig('misses', $f['misses'], $f['misses'] === null ? 'n/a' : number_format($f['misses']), 'Misses' . ($f['counters'] === 'process' ? ' (this process)' : ''));
    $o .= fig('entries', $f['entries'], $f['entries'] === null ? 'n/a' : number_format($f['entries']), 'Entries');
    $o .= fig('tags', $f['tags'], $f['tags'] === null ? 'n/a' : number_format($f['tags']), 'Tags');
    $o .= fig('bytes', $f['bytes'], bytes($f['bytes']), $f['engine'] === 'Redis' ? 'Bytes used (whole server)' : 'Bytes used', $f['size'] ? '<span class="muted">of ' . h(bytes($f['size'])) . '</span>' : '');
    foreach (['evictions' => 'Evictions', 'expirations' => 'Expirations', 'lock_recoveries' => 'Lock recoveries'] as $k => $l) {
        $o .= fig($k, $f[$k], $f[$k] === null ? 'n/a' : number_format($f[$k]), $l);
    }
    if ($f['huge_pages'] !== null) {
        // README, "Options of TagCache\Shm", Pages
        $hp = $f['huge_pages'];
        $o .= fig('huge_pages', $hp, $hp === 1 ? '2 MB' : '4 KB', 'Memory pages', $hp === 1 ? ''
            : '<span class="muted">' . ($hp === 0 ? 'the kernel refused 2 MB pages, or under 2 MB' : 'not turned into 2 MB pages yet (huge_pages off?)') . '</span>');
    }
    $o .= '</dl>';
    // everything else the engine counts (File compactions, Redis errors and reconnects, TwoLevel lag and invalidations)
    $o .= '<details><summary>All of stats()</summary><table class="all">';
    foreach ($f['stats'] as $k => $v) {
        $o .= '<tr><td>' . h($k) . '</td><td class="num" data-stat="' . h($k) . '">' . h(is_scalar($v) ? (is_int($v) ? number_format($v) : $v) : json_encode($v)) . '</td></tr>';
    }
    $o .= '</table></details>';
    $o .= render_nodes($f);

    $t = $f['top'];
    $o .= '<div class="cols"><div><h3>Top tags by entries</h3>';
    if (!$t['supported']) {
        $o .= isset($t['error']) ? '<p class="err">' . h($t['error']) . '</p>'
            : '<p class="muted">This engine keeps no tag listing (getTags() is not supported).</p>';
    } else {
        $o .= svg_chart($t['by_entries'], '#2f6fb3', static fn ($v) => number_format($v), 'top tags by entries');
        $o .= '<p class="muted">Counted ' . number_format($t['tags_counted']) . ' of ' . number_format((int)$t['tags_total']) . ' tags'
            . ($t['sampled'] ? ' (a bounded sample: the first ' . TAG_SAMPLE . ' tags listed, at most ' . number_format(ID_BUDGET) . ' ids)' : '') . '.</p>';
    }
    $o .= '</div><div><h3>Top tags by bytes</h3>';
    if (!$t['supported']) {
        $o .= '<p class="muted">n/a</p>';
    } elseif ($t['by_bytes'] === null) {
        $o .= '<p class="muted">Not measured: no engine keeps bytes per tag, so this reads up to ' . BYTES_SAMPLE
            . ' entries (those reads count as hits). <a href="?tagbytes=1#store-' . h(rawurlencode($name)) . '">Measure</a></p>';
    } else {
        $o .= svg_chart($t['by_bytes'], '#8e44ad', static fn ($v) => bytes($v), 'top tags by bytes');
        $o .= '<p class="muted">From ' . number_format($t['bytes_entries']) . ' entries read' . ($t['bytes_sampled'] ? ' (a sample: at most ' . BYTES_SAMPLE . ')' : '') . '.</p>';
    }
    $o .= '</div></div>';

    $o .= '<div class="cols"><div>' . render_ids($f, $store, $csrf) . '</div><div>' . render_actions($name, $csrf) . '</div></div>';
    return $o . '</section>';
}

function render_nodes(array $f): string
{
    if (!$f['nodes']) {
        return '';
    }
    $o = '<h3>Servers</h3><table class="nodes"><tr><th>server</th><th>kind</th><th>state</th><th>detail</th><th>server-wide figures</th></tr>';
    foreach ($f['nodes'] as $n) {
        $info = [];
        foreach ($n['info'] as $k => $v) {
            $info[] = h($k) . ' ' . h($v);
        }
        $o .= '<tr data-node="' . h($n['node']) . '"><td>' . h($n['node']) . '</td><td>' . h($n['kind']) . '</td><td class="'
            . ($n['up'] ? 'up">up' : 'down">down') . '</td><td>' . h($n['detail']) . '</td><td class="small">' . implode(' · ', $info) . '</td></tr>';
    }
    return $o . '</table>';
}

function render_ids(array $f, array $store, string $csrf): string
{
    $o = '<h3>Entries</h3>';
    $lookup = isset($_GET['store'], $_GET['id']) && $_GET['store'] === $f['name'] ? (string)$_GET['id'] : null;
    $o .= '<form method="get" class="inline" action="#store-' . h(rawurlencode($f['name'])) . '"><input type="hidden" name="store" value="' . h($f['name']) . '">'
        . '<input name="id" placeholder="id" value="' . h($lookup ?? '') . '"> <button>Look up</button></form>';
    try {
        $b = open($store);
        if ($lookup !== null) {
            $m = $b->getMetadatas($lookup);
            $o .= $m === false ? '<p class="muted">No entry ' . h($lookup) . '.</p>'
                : '<p class="lookup">' . h($lookup) . ': expires ' . h($m['expire'] ? gmdate('Y-m-d H:i:s', (int)$m['expire']) . ' UTC' : 'never')
                . ', written ' . h(gmdate('Y-m-d H:i:s', (int)$m['mtime'])) . ' UTC, tags ' . h(implode(', ', $m['tags']) ?: '(none)') . '</p>';
        }
        if (empty($b->getCapabilities()['get_list']) || ($f['entries'] ?? 0) > LIST_LIMIT) {
            return $o . '<p class="muted">No listing of ids here (' . (empty($b->getCapabilities()['get_list']) ? 'the engine keeps none' : 'more than ' . number_format(LIST_LIMIT) . ' entries') . '): look one up.</p>';
        }
        $ids = array_slice($b->getIds(), 0, 10);
    } catch (\Throwable $e) {
        return $o . '<p class="err">' . h($e->getMessage()) . '</p>';
    }
    if (!$ids) {
        return $o . '<p class="muted">The store is empty.</p>';
    }
    $o .= '<table class="ids"><tr><th>id (first ' . count($ids) . ')</th><th></th></tr>';
    foreach ($ids as $id) {
        $o .= '<tr><td class="id" data-id="' . h($id) . '">' . h($id) . '</td><td><form method="post" class="inline">' . hidden($f['name'], $csrf, 'remove')
            . '<input type="hidden" name="id" value="' . h($id) . '"><button class="small">remove</button></form></td></tr>';
    }
    return $o . '</table>';
}

function hidden(string $store, string $csrf, string $action): string
{
    return '<input type="hidden" name="csrf" value="' . h($csrf) . '"><input type="hidden" name="store" value="' . h($store)
        . '"><input type="hidden" name="action" value="' . h($action) . '">';
}

function render_actions(string $name, string $csrf): string
{
    return '<h3>Actions</h3><div class="actions">'
        . '<form method="post">' . hidden($name, $csrf, 'clean') . '<label>Clean by tag <input name="tag" placeholder="tag, tag"></label> <button>Clean</button></form>'
        . '<form method="post">' . hidden($name, $csrf, 'remove') . '<label>Remove id <input name="id" placeholder="id"></label> <button>Remove</button></form>'
        . '<form method="post">' . hidden($name, $csrf, 'flush') . '<label><input type="checkbox" name="confirm" value="yes"> flush everything in ' . h($name) . '</label> <button class="danger">Flush</button></form>'
        . '</div>';
}

function css(): string
{
    return 'body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2733;background:#f4f6f9;margin:0}'
        . 'header{background:#1d2733;color:#fff;padding:14px 28px}header h1{margin:0;font-size:20px}header .muted,header a{color:#b8c4d3}'
        . 'nav{padding:8px 28px}nav a{margin-right:14px}'
        . '.store{background:#fff;margin:18px 28px;padding:6px 22px 18px;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}'
        . 'h2{font-size:18px;margin:14px 0 2px}h3{font-size:14px;margin:18px 0 6px;color:#445}.engine{font-size:12px;background:#e6eef8;color:#2f6fb3;padding:2px 8px;border-radius:10px;vertical-align:middle}'
        . '.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:12px 0}'
        . '.fig{background:#f7f9fc;border:1px solid #e3e8ef;border-radius:6px;padding:8px 12px}.fig dt{font-size:12px;color:#667}.fig dd{margin:0;font-size:20px;font-weight:600}'
        . '.fig:nth-child(-n+2){grid-column:span 2}'
        . 'table{border-collapse:collapse;margin:4px 0}th,td{text-align:left;padding:3px 10px;border-bottom:1px solid #eef0f3}th{font-size:12px;color:#667;font-weight:600}'
        . '.num{text-align:right;font-variant-numeric:tabular-nums}.id{font-family:ui-monospace,monospace;word-break:break-all;max-width:520px}'
        . '.up{color:#1e7e34;font-weight:600}.down{color:#c0392b;font-weight:600}.small{font-size:12px}.muted{color:#778;font-size:12px}'
        . '.err{color:#c0392b;font-weight:600}.msg{margin:14px 28px;padding:10px 14px;background:#fff7d6;border:1px solid #e8d48a;border-radius:6px}'
        . '.cols{display:flex;flex-wrap:wrap;gap:12px 48px}.cols>div{flex:1 1 440px}.overview td{vertical-align:middle;white-space:nowrap}.overview td.err{white-space:normal;font-size:13px}.overview svg{vertical-align:middle}.chart text{font-size:12px;fill:#334}.chart text.v{fill:#667}'
        . '.actions form{margin:6px 0}form.inline{display:inline}input{font:inherit;padding:3px 6px;border:1px solid #c9d1dc;border-radius:4px}'
        . 'button{font:inherit;padding:3px 12px;border:1px solid #2f6fb3;background:#2f6fb3;color:#fff;border-radius:4px;cursor:pointer}'
        . 'button.small{padding:0 8px;font-size:12px;background:#fff;color:#2f6fb3}button.danger{background:#c0392b;border-color:#c0392b}'
        . 'details{margin:4px 0 8px}summary{cursor:pointer;color:#2f6fb3;font-size:13px}table.all td{font-size:12px;padding:1px 10px}'
        . 'footer{margin:10px 28px 30px}';
}
