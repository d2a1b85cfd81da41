--TEST--
PSR-16 TagCache\Psr16\Cache: keys to backend ids, TTL semantics, default lifetime, namespace-scoped clear(), values, foreign or damaged entries
--EXTENSIONS--
tagcache
--INI--
pcre.jit=0
--SKIPIF--
<?php
require __DIR__ . '/psr.inc';
if ($r = tcp_skip_reason()) {
    die("skip $r");
}
?>
--FILE--
<?php
require __DIR__ . '/psr.inc';
tcp_setup();
require __DIR__ . '/../zend/fixtures/zf1.php';
use TagCache\Psr16\Cache;

tcz_each_adapter('p001', function (string $adapter, string $native, callable $make, array $options) {
    $b = new $native($options);
    $c = new Cache($b);
    tcz_ok($c instanceof Psr\SimpleCache\CacheInterface, 'implements Psr\SimpleCache\CacheInterface');

    // keys
    $keys = ['user42', 'user.42', 'user_42', 'user__42', 'user_d42', 'ümlaut key', 'a-b', str_repeat('k', 64), str_repeat('x', 300), str_repeat('.', 200)];
    foreach ($keys as $i => $k) {
        $c->set($k, "v$i");
    }
    $ids = $b->getIds();
    $lists = tcz_lists($b);   // memcached cannot list: the listing checks do not apply
    if ($lists) {
        tcz_same(count($keys), count(array_unique($ids)), 'ten different keys are ten different backend ids');
        tcz_same([], preg_grep('/^psr_[A-Za-z0-9_]{1,130}$/D', $ids, PREG_GREP_INVERT), 'every id is psr_ plus [A-Za-z0-9_], at most 130 bytes');
    }
    $expect = ['user42' => 'psr_user42', 'user.42' => 'psr_user_d42', 'user_42' => 'psr_user__42',
               'user__42' => 'psr_user____42', 'user_d42' => 'psr_user__d42', 'a-b' => 'psr_a_x2db'];
    $found = [];
    foreach ($expect as $k => $id) {
        $found[$k] = $b->test($id) !== false ? $id : null;
    }
    tcz_same($expect, $found, 'A-Z a-z 0-9 are kept; _ . and other bytes are escaped (__, _d, _xHH)');
    tcz_ok(($lists ? in_array('psr_' . '_h' . hash('sha256', str_repeat('x', 300)), $ids, true)
        : $b->test('psr_' . '_h' . hash('sha256', str_repeat('x', 300))) !== false), 'a key longer than 128 bytes becomes _h + its SHA-256');
    $got = [];
    foreach ($keys as $i => $k) {
        $got[] = $c->get($k);
    }
    tcz_same(array_map(fn($i) => "v$i", array_keys($keys)), $got, 'each key reads back its own value');
    tcz_same('sv1', $b->load('psr_user_d42'), "'user.42' is stored as id psr_user_d42, data 's' . value");
    foreach (['', '{a', 'a}', 'a(b', 'a)b', 'a/b', 'a\\b', 'a@b', 'a:b'] as $bad) {
        tcz_throws('Psr\SimpleCache\InvalidArgumentException', fn() => $c->get($bad), "get('$bad') throws InvalidArgumentException");
    }
    tcz_throws('Psr\SimpleCache\InvalidArgumentException', fn() => $c->set(42, 'x'), 'an int key throws (set(42))');
    tcz_same('v', $c->setMultiple([42 => 'v']) ? $c->get('42') : null, "setMultiple([42 => 'v']) stores key '42' (array keys)");

    // TTL
    $c->set('forever', 'x');
    tcz_same(9999999999, $b->getMetadatas('psr_forever')['expire'] ?? null, 'TTL null without a default lifetime: no expiry');
    $t0 = time();
    $c->set('ten', 'x', 10);
    $c->set('interval', 'x', new DateInterval('PT90S'));
    $e10 = $b->getMetadatas('psr_ten')['expire'] ?? 0;
    $e90 = $b->getMetadatas('psr_interval')['expire'] ?? 0;
    tcz_ok($e10 >= $t0 + 10 && $e10 <= time() + 10, 'TTL 10: expires in 10 s', "expire $e10, now $t0");
    tcz_ok($e90 >= $t0 + 90 && $e90 <= time() + 90, 'TTL DateInterval PT90S: expires in 90 s', "expire $e90, now $t0");
    tcz_same(true, $c->set('ten', 'y', 0), 'set() with TTL 0 returns true');
    tcz_same([false, false], [$c->has('ten'), $b->load('psr_ten', true)], '... and deletes the entry (not even an expired copy is left)');
    $c->set('neg', 'x');
    tcz_same(true, $c->set('neg', 'y', -5) && !$c->has('neg'), 'TTL -5 deletes');
    tcz_same(true, $c->set('ago', 'y', DateInterval::createFromDateString('-1 minute')) && !$c->has('ago'), 'a negative DateInterval deletes');
    foreach (['10', 1.5, true, ''] as $bad) {
        tcz_throws('Psr\SimpleCache\InvalidArgumentException', fn() => $c->set('k', 'v', $bad), 'TTL ' . var_export($bad, true) . ' throws InvalidArgumentException');
    }
    $d = new Cache($b, 'def', 100);
    $t0 = time();
    $d->set('k', 'x');
    $e = $b->getMetadatas('def_k')['expire'] ?? 0;
    tcz_ok($e >= $t0 + 100 && $e <= time() + 100, 'TTL null with a default lifetime of 100: expires in 100 s');
    tcz_throws('ValueError', fn() => new Cache($b, 'not_alnum'), "a namespace with '_' is refused (ValueError)");
    tcz_throws('ValueError', fn() => new Cache($b, 'ok', 0), 'a default lifetime of 0 is refused (ValueError)');

    // misses and defaults
    tcz_same(['missing' => 'dflt', 'forever' => 'x'], $c->getMultiple(['missing', 'forever'], 'dflt'), 'getMultiple() fills misses with the default');
    tcz_same('dflt', $c->get('missing', 'dflt'), 'get() of a missing key returns the default');

    // values
    $c->set('arr', ['a' => 1]);
    tcz_same('p' . serialize(['a' => 1]), $b->load('psr_arr'), 'a non-string is stored serialized');
    $c->set('false', false);
    tcz_same([false, true], [$c->get('false', 'dflt'), $c->has('false')], 'false is a value, not a miss');
    $o = new ArrayObject([1]);
    $c->set('obj', $o);
    $strict = new Cache($b, 'psr', null, false);
    tcz_same('__PHP_Incomplete_Class', get_class($strict->get('obj')), 'allowed_classes false: objects come back incomplete');
    tcz_same('ArrayObject', get_class($c->get('obj')), 'allowed_classes true: objects come back');

    // entries this class did not write are misses, silently
    $b->save('not ours', 'psr_foreign');
    $b->save('p{broken', 'psr_broken');
    $b->save('', 'psr_empty');
    tcz_same(['dflt', 'dflt', 'dflt'], [$c->get('foreign', 'dflt'), $c->get('broken', 'dflt'), $c->get('empty', 'dflt')],
        'a foreign, a damaged and an empty stored string are misses, with no warning');

    // clear() is scoped to the namespace
    $b->save('magento', 'a1b_CONFIG', ['a1b_MAGE']);
    $other = new Cache($b, 'other');
    $other->set('k', 'kept');
    tcz_same(true, $c->clear(), 'clear() returns true');
    tcz_same([false, 'magento', 'kept'], [$c->get('forever', false), $b->load('a1b_CONFIG'), $other->get('k')],
        "clear() removed this namespace's entries only (not Magento's, not another namespace's)");

    // deleteMultiple, has
    $c->setMultiple(['a' => 1, 'b' => 2]);
    tcz_same(true, $c->deleteMultiple(['a', 'nothere']), 'deleteMultiple() with a missing key returns true');
    tcz_same([false, true], [$c->has('a'), $c->has('b')], 'deleteMultiple() removed the listed key only');

    // any TagCache\Backend: the Zend adapter too
    $z = new Cache($make(), 'viazend');
    tcz_same('through the adapter', $z->set('k', 'through the adapter') ? $z->get('k') : null, 'works over a Zend adapter (a TagCache\Backend) as well');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/psr.inc';
tcz_clean_stores('p001');
?>
--EXPECTF--
ok: implements Psr\SimpleCache\CacheInterface
ok: ten different keys are ten different backend ids
ok: every id is psr_ plus [A-Za-z0-9_], at most 130 bytes
ok: A-Z a-z 0-9 are kept; _ . and other bytes are escaped (__, _d, _xHH)
ok: a key longer than 128 bytes becomes _h + its SHA-256
ok: each key reads back its own value
ok: 'user.42' is stored as id psr_user_d42, data 's' . value
ok: get('') throws InvalidArgumentException
ok: get('{a') throws InvalidArgumentException
ok: get('a}') throws InvalidArgumentException
ok: get('a(b') throws InvalidArgumentException
ok: get('a)b') throws InvalidArgumentException
ok: get('a/b') throws InvalidArgumentException
ok: get('a\b') throws InvalidArgumentException
ok: get('a@b') throws InvalidArgumentException
ok: get('a:b') throws InvalidArgumentException
ok: an int key throws (set(42))
ok: setMultiple([42 => 'v']) stores key '42' (array keys)
ok: TTL null without a default lifetime: no expiry
ok: TTL 10: expires in 10 s
ok: TTL DateInterval PT90S: expires in 90 s
ok: set() with TTL 0 returns true
ok: ... and deletes the entry (not even an expired copy is left)
ok: TTL -5 deletes
ok: a negative DateInterval deletes
ok: TTL '10' throws InvalidArgumentException
ok: TTL 1.5 throws InvalidArgumentException
ok: TTL true throws InvalidArgumentException
ok: TTL '' throws InvalidArgumentException
ok: TTL null with a default lifetime of 100: expires in 100 s
ok: a namespace with '_' is refused (ValueError)
ok: a default lifetime of 0 is refused (ValueError)
ok: getMultiple() fills misses with the default
ok: get() of a missing key returns the default
ok: a non-string is stored serialized
ok: false is a value, not a miss
ok: allowed_classes false: objects come back incomplete
ok: allowed_classes true: objects come back
ok: a foreign, a damaged and an empty stored string are misses, with no warning
ok: clear() returns true
ok: clear() removed this namespace's entries only (not Magento's, not another namespace's)
ok: deleteMultiple() with a missing key returns true
ok: deleteMultiple() removed the listed key only
ok: works over a Zend adapter (a TagCache\Backend) as well
backends: %d
