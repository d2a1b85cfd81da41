--TEST--
PSR-6 TagCache\Psr6\TagAwarePool: tags to backend tags, invalidateTags() scoped to the namespace, previous tags, expiry, deferred items, sharing with PSR-16
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
use TagCache\Psr6\TagAwarePool;

tcz_each_adapter('p002', function (string $adapter, string $native, callable $make, array $options) {
    $b = new $native($options);
    $p = new TagAwarePool($b);
    tcz_ok($p instanceof Psr\Cache\CacheItemPoolInterface, 'implements Psr\Cache\CacheItemPoolInterface');
    tcz_ok($p instanceof Cache\TagInterop\TaggableCacheItemPoolInterface, 'implements Cache\TagInterop\TaggableCacheItemPoolInterface (installed here)');
    tcz_ok($p->getItem('x') instanceof Cache\TagInterop\TaggableCacheItemInterface, 'its items implement Cache\TagInterop\TaggableCacheItemInterface');

    $p->save($p->getItem('product.1')->set('<p>one</p>')->setTags(['product.1', 'catalog']));
    $p->save($p->getItem('product.2')->set('<p>two</p>')->setTags(['product.2', 'catalog', 'catalog']));
    $p->save($p->getItem('home')->set('<p>home</p>'));
    if (tcz_lists($b)) {   // memcached cannot list
        tcz_same(['psr', 'psr_catalog', 'psr_product_d1', 'psr_product_d2'], (function ($t) { sort($t); return $t; })($b->getTags()),
            'tags are stored as psr_<escaped tag>, plus the namespace tag psr on every entry');
        tcz_same(['psr_product_d1', 'psr_product_d2'], (function ($t) { sort($t); return $t; })($b->getIdsMatchingTags(['psr_catalog'])),
            'the backend knows which ids carry a tag');
    }
    tcz_same(['catalog', 'product.2'], (function ($t) { sort($t); return $t; })($p->getItem('product.2')->getPreviousTags()),
        'getPreviousTags() comes back with the item (duplicates dropped)');
    tcz_same([], $p->getItem('home')->getPreviousTags(), 'an item saved without tags has none');

    $other = new TagAwarePool($b, 'other');
    $other->save($other->getItem('product.1')->set('other')->setTags(['catalog']));
    $b->save('magento', 'a1b_X', ['catalog']);
    tcz_same(true, $p->invalidateTags(['catalog']), 'invalidateTags([catalog]) returns true');
    tcz_same([false, false, true], [$p->hasItem('product.1'), $p->hasItem('product.2'), $p->hasItem('home')],
        'it removed the tagged items only');
    tcz_same(['other', 'magento'], [$other->getItem('product.1')->get(), $b->load('a1b_X')],
        "another namespace's tag of the same name, and a backend tag 'catalog', are untouched");
    tcz_same(true, $p->invalidateTag('nothing') && $p->invalidateTags([]), 'invalidating an unknown tag or no tag is fine');
    tcz_throws('Psr\Cache\InvalidArgumentException', fn() => $p->invalidateTags(['bad:tag']), 'a tag with : is refused');
    tcz_throws('Psr\Cache\InvalidArgumentException', fn() => $p->getItem('x')->setTags([7]), 'a tag that is not a string is refused');

    // expiry
    $t0 = time();
    $p->save($p->getItem('after')->set(1)->expiresAfter(60));
    $p->save($p->getItem('at')->set(1)->expiresAt(new DateTimeImmutable('@' . ($t0 + 120))));
    $p->save($p->getItem('never')->set(1));
    $ea = $b->getMetadatas('psr_after')['expire'] ?? 0;
    tcz_ok($ea >= $t0 + 60 && $ea <= time() + 60, 'expiresAfter(60): expires in 60 s');
    tcz_same($t0 + 120, $b->getMetadatas('psr_at')['expire'] ?? 0, 'expiresAt(t): expires at t');
    tcz_same(9999999999, $b->getMetadatas('psr_never')['expire'] ?? 0, 'no expiry and no default lifetime: never expires');
    tcz_same(true, $p->save($p->getItem('at')->set(2)->expiresAt(new DateTime('-1 second'))), 'saving an item whose time has passed returns true');
    tcz_same([false, false], [$p->hasItem('at'), $b->load('psr_at', true)], '... and removes the stored one');
    $d = new TagAwarePool($b, 'def', 30);
    $t0 = time();
    $d->save($d->getItem('k')->set(1));
    $e = $b->getMetadatas('def_k')['expire'] ?? 0;
    tcz_ok($e >= $t0 + 30 && $e <= time() + 30, 'no expiry with a default lifetime of 30: expires in 30 s');
    tcz_throws('Psr\Cache\InvalidArgumentException', fn() => $p->getItem('x')->expiresAfter('60'), "expiresAfter('60') is refused");

    // deferred
    $q = new TagAwarePool($b, 'defer');
    $q->saveDeferred($q->getItem('later')->set('v')->setTags(['t']));
    tcz_same([true, false], [$q->hasItem('later'), $b->test('defer_later') !== false], 'a deferred item is seen by the pool, not yet stored');
    tcz_same(['t'], $q->getItem('later')->getPreviousTags(), 'a deferred item read back carries its tags as previous tags');
    unset($q);
    tcz_same('v', (new TagAwarePool($b, 'defer'))->getItem('later')->get(), 'destroying the pool commits its deferred items');

    // one store, two APIs
    $s = new TagCache\Psr16\Cache($b);
    $s->set('shared', ['from' => 'psr16']);
    tcz_same(['from' => 'psr16'], $p->getItem('shared')->get(), 'an entry set through PSR-16 is a PSR-6 hit in the same namespace');
    $p->save($p->getItem('tagged')->set('from psr6')->setTags(['x']));
    tcz_same('from psr6', $s->get('tagged'), 'a tagged PSR-6 item reads through PSR-16');
    tcz_same(true, $s->clear() && !$p->hasItem('tagged') && !$p->hasItem('home'), 'PSR-16 clear() empties the PSR-6 pool of the same namespace');

    $foreign = new class implements Psr\Cache\CacheItemInterface {
        public function getKey() { return 'k'; }
        public function get() { return null; }
        public function isHit() { return false; }
        public function set($value) { return $this; }
        public function expiresAt($expiration) { return $this; }
        public function expiresAfter($time) { return $this; }
    };
    tcz_throws('Psr\Cache\InvalidArgumentException', fn() => $p->save($foreign), 'an item from elsewhere is refused');
});
tcz_report();
?>
--CLEAN--
<?php
require __DIR__ . '/psr.inc';
tcz_clean_stores('p002');
?>
--EXPECTF--
ok: implements Psr\Cache\CacheItemPoolInterface
ok: implements Cache\TagInterop\TaggableCacheItemPoolInterface (installed here)
ok: its items implement Cache\TagInterop\TaggableCacheItemInterface
ok: tags are stored as psr_<escaped tag>, plus the namespace tag psr on every entry
ok: the backend knows which ids carry a tag
ok: getPreviousTags() comes back with the item (duplicates dropped)
ok: an item saved without tags has none
ok: invalidateTags([catalog]) returns true
ok: it removed the tagged items only
ok: another namespace's tag of the same name, and a backend tag 'catalog', are untouched
ok: invalidating an unknown tag or no tag is fine
ok: a tag with : is refused
ok: a tag that is not a string is refused
ok: expiresAfter(60): expires in 60 s
ok: expiresAt(t): expires at t
ok: no expiry and no default lifetime: never expires
ok: saving an item whose time has passed returns true
ok: ... and removes the stored one
ok: no expiry with a default lifetime of 30: expires in 30 s
ok: expiresAfter('60') is refused
ok: a deferred item is seen by the pool, not yet stored
ok: a deferred item read back carries its tags as previous tags
ok: destroying the pool commits its deferred items
ok: an entry set through PSR-16 is a PSR-6 hit in the same namespace
ok: a tagged PSR-6 item reads through PSR-16
ok: PSR-16 clear() empties the PSR-6 pool of the same namespace
ok: an item from elsewhere is refused
backends: %d
