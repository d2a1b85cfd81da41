--TEST--
Status page actions: from a non-loopback client (php -S on 127.0.0.2, trusted only 127.0.0.1) nothing without credentials; POST only; CSRF token must equal the SameSite cookie; same-origin only
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/ops.inc';
if (($r = ops_skip_reason(false)) !== null) die("skip $r");
$s = @stream_socket_server('tcp://127.0.0.2:0', $errno, $errstr);
if (!$s) die("skip cannot bind 127.0.0.2 (no 127.0.0.0/8 loopback here): $errstr");
?>
--INI--
log_errors=0
--FILE--
<?php
require __DIR__ . '/ops.inc';

$p = ops_populate(false, ['auth' => ['user' => 'ops', 'password_hash' => password_hash('s3cret', PASSWORD_DEFAULT),
    'token_sha256' => hash('sha256', 'scrape-token')], 'trusted' => ['127.0.0.1', '::1']]);
$shm = $p['objects']['shop shm'];
$srv = ops_server($p['config'], '127.0.0.2');
$from = '127.0.0.2';   // REMOTE_ADDR 127.0.0.2: not trusted
$basic = ['Authorization' => 'Basic ' . base64_encode('ops:s3cret')];
$store = 'shop shm';

$r = ops_http($srv, 'GET', '/', [], null, $from);
tcr_same(401, $r['status'], 'GET without credentials: 401');
tcr_check(str_starts_with($r['headers']['www-authenticate'][0] ?? '', 'Basic'), 'with a Basic challenge');
tcr_check(!str_contains($r['body'], 'page_0'), 'and no store content');
$r = ops_http($srv, 'GET', '/?format=prometheus', [], null, $from);
tcr_same(401, $r['status'], 'metrics without credentials: 401');
$r = ops_http($srv, 'GET', '/', ['Authorization' => 'Basic ' . base64_encode('ops:wrong')], null, $from);
tcr_same(401, $r['status'], 'a wrong password: 401');
$r = ops_http($srv, 'GET', '/', ['Authorization' => 'Bearer wrong'], null, $from);
tcr_same(401, $r['status'], 'a wrong token: 401');

$r = ops_http($srv, 'POST', '/', [], ['store' => $store, 'action' => 'remove', 'id' => 'page_0'], $from);
tcr_same(401, $r['status'], 'POST remove without credentials: 401');
tcr_check($shm->test('page_0') !== false, 'page_0 still there');

$r = ops_http($srv, 'GET', '/', $basic, null, $from);
tcr_same(200, $r['status'], 'GET with the right password: 200');
$cookie = null;
foreach ($r['headers']['set-cookie'] ?? [] as $c) {
    if (preg_match('/^tagcache_csrf=([0-9a-f]{64});/', $c, $m)) {
        $cookie = $m[1];
        tcr_check(stripos($c, 'SameSite=Strict') !== false && stripos($c, 'HttpOnly') !== false, 'the CSRF cookie is SameSite=Strict and HttpOnly', $c);
    }
}
tcr_check($cookie !== null, 'a CSRF cookie is set');
tcr_check(str_contains($r['body'], 'name="csrf" value="' . $cookie . '"'), 'the forms carry the token');
$r = ops_http($srv, 'GET', '/?format=prometheus', ['Authorization' => 'Bearer scrape-token'], null, $from);
tcr_same(200, $r['status'], 'metrics with the bearer token: 200');

$form = ['store' => $store, 'action' => 'remove', 'id' => 'page_0'];
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie"], $form, $from);
tcr_same(403, $r['status'], 'POST with credentials but no CSRF field: 403');
$r = ops_http($srv, 'POST', '/', $basic, $form + ['csrf' => $cookie], $from);
tcr_same(403, $r['status'], 'POST with the token but no cookie: 403');
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie"], $form + ['csrf' => str_repeat('0', 64)], $from);
tcr_same(403, $r['status'], 'POST with a wrong token: 403');
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie", 'Origin' => 'http://evil.example'], $form + ['csrf' => $cookie], $from);
tcr_same(403, $r['status'], 'POST from another origin: 403');
$r = ops_http($srv, 'GET', '/?store=' . rawurlencode($store) . '&action=remove&id=page_0', $basic + ['Cookie' => "tagcache_csrf=$cookie"], null, $from);
tcr_same(405, $r['status'], 'an action by GET: 405');
tcr_check($shm->test('page_0') !== false, 'page_0 still there after all of them');

$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie", 'Origin' => "http://{$srv['host']}:{$srv['port']}"], $form + ['csrf' => $cookie], $from);
tcr_same(200, $r['status'], 'POST remove with credentials, cookie and token: 200');
tcr_same(false, $shm->test('page_0'), 'page_0 removed');
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie"], ['store' => $store, 'action' => 'clean', 'tag' => 'store_1', 'csrf' => $cookie], $from);
tcr_same([200, []], [$r['status'], $shm->getIdsMatchingTags(['store_1'])], 'clean by tag: 200, the tag\'s entries gone');
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie"], ['store' => $store, 'action' => 'flush', 'csrf' => $cookie], $from);
tcr_check($r['status'] === 400 && $shm->getIds() !== [], 'flush without the confirmation box: 400, nothing flushed');
$r = ops_http($srv, 'POST', '/', $basic + ['Cookie' => "tagcache_csrf=$cookie"], ['store' => $store, 'action' => 'flush', 'confirm' => 'yes', 'csrf' => $cookie], $from);
tcr_same([200, []], [$r['status'], $shm->getIds()], 'flush: 200, the store empty');

// a page with no credentials configured refuses non-trusted clients outright
$dir = tcr_dir();
file_put_contents("$dir/open.php", '<?php return ' . var_export(['stores' => $p['stores']], true) . ';');
$open = ops_server("$dir/open.php", '127.0.0.2');
$r = ops_http($open, 'GET', '/', [], null, $from);
tcr_check($r['status'] === 403 && str_contains($r['body'], 'none are configured'), 'no credentials configured: 403 for a non-trusted client', $r['status'] . ' ' . $r['body']);

// a trusted (loopback) client needs no credentials, but still the token
$local = ops_server("$dir/open.php", '127.0.0.1');
$p['objects']['shop-file']->save('x', 'keep', []);
$r = ops_http($local, 'GET', '/', [], null, '127.0.0.1');
tcr_same(200, $r['status'], '127.0.0.1 sees the page without credentials');
$r = ops_http($local, 'POST', '/', [], ['store' => 'shop-file', 'action' => 'remove', 'id' => 'keep'], '127.0.0.1');
tcr_same(403, $r['status'], '127.0.0.1 without the CSRF token: 403');
tcr_check($p['objects']['shop-file']->test('keep') !== false, 'keep still there');
?>
--CLEAN--
<?php
require __DIR__ . '/ops.inc';
ops_clean();
?>
--EXPECT--
ok: GET without credentials: 401
ok: with a Basic challenge
ok: and no store content
ok: metrics without credentials: 401
ok: a wrong password: 401
ok: a wrong token: 401
ok: POST remove without credentials: 401
ok: page_0 still there
ok: GET with the right password: 200
ok: the CSRF cookie is SameSite=Strict and HttpOnly
ok: a CSRF cookie is set
ok: the forms carry the token
ok: metrics with the bearer token: 200
ok: POST with credentials but no CSRF field: 403
ok: POST with the token but no cookie: 403
ok: POST with a wrong token: 403
ok: POST from another origin: 403
ok: an action by GET: 405
ok: page_0 still there after all of them
ok: POST remove with credentials, cookie and token: 200
ok: page_0 removed
ok: clean by tag: 200, the tag's entries gone
ok: flush without the confirmation box: 400, nothing flushed
ok: flush: 200, the store empty
ok: no credentials configured: 403 for a non-trusted client
ok: 127.0.0.1 sees the page without credentials
ok: 127.0.0.1 without the CSRF token: 403
ok: keep still there
