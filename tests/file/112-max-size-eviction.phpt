--TEST--
File: max_size bounds the live data: getFillingPercentage() follows it, expired entries go first, then the oldest log whole (FIFO); an entry larger than half the store is refused and changes nothing
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
$base = tc_make_tmpdir('f112');
$c = new TagCache\File(['cache_dir' => "$base/a", 'max_size' => '1M']);
$v = str_repeat('x', 30000);

// 100 x 30 KB into 1 MB: every save fits, so every save succeeds; the oldest go.
$ok = true;
$fill = [];
for ($i = 0; $i < 100; $i++) {
    $ok = $ok && $c->save($v . $i, "k$i", ['all', 'g' . intdiv($i, 10)], null);
    $fill[] = $c->getFillingPercentage();
}
$st = $c->stats();
tc_check('100 saves of 30 KB into a 1 MB store all succeed', $ok);
tc_check('the live data stay within max_size; getFillingPercentage() stays in 0..100 and ends high',
    $st['live_bytes'] <= 1 << 20 && max($fill) <= 100 && min($fill) >= 0 && end($fill) >= 50, [$st, $fill]);
tc_check('the logs stay bounded too', $st['log_bytes'] <= 2 * (1 << 20), $st);
$present = array_values(array_filter(range(0, 99), fn($i) => $c->load("k$i") === $v . $i));
tc_check('the newest entries are there, the oldest were evicted (first in, first out)', in_array(99, $present, true)
    && !in_array(0, $present, true) && $present === range($present[0], 99) && $st['evictions'] > 0, [$present, $st]);
tc_check('evicted entries left their tags', count($c->getIdsMatchingTags(['all'])) === count($present)
    && $c->getIdsMatchingTags(['g0']) === [] && $c->verify() === []);

// Expired entries go before live ones.
$c = new TagCache\File(['cache_dir' => "$base/b", 'max_size' => '1M']);
for ($i = 0; $i < 28; $i++) {
    $c->save($v . $i, "old$i", ['old'], null);
}
for ($i = 0; $i < 28; $i += 2) {
    $c->___expire("old$i");   // half of the oldest entries expire
}
for ($i = 0; $i < 10; $i++) {
    $c->save($v . $i, "new$i", ['new'], null);
}
$kept = count(array_filter(range(1, 27, 2), fn($i) => $c->load("old$i") === $v . $i));
$st = $c->stats();
tc_check('room is made from expired entries first: every live old entry is still there', $kept === 14
    && $st['expirations'] >= 8 && $st['evictions'] === 0 && count($c->getIdsMatchingTags(['new'])) === 10, [$kept, $st]);

// Too big for the store: refused before anything is evicted.
$before = $c->getIds();
sort($before);
$warn = null;
set_error_handler(function ($no, $msg) use (&$warn) { $warn = $msg; return true; });
$r = $c->save(str_repeat('y', 600 * 1024), 'huge', ['new']);
restore_error_handler();
$after = $c->getIds();
sort($after);
tc_check('an entry larger than half the store: save() is false with a warning, nothing changes',
    $r === false && str_contains((string) $warn, 'does not fit') && $after === $before && $c->load('huge') === false, $warn);

// clean() gives the room back.
$c->clean('matchingAnyTag', ['old', 'new']);
tc_check('cleaning gives the space back', $c->getFillingPercentage() === 0 && $c->stats()['live_bytes'] === 0);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f112');
?>
--EXPECT--
100 saves of 30 KB into a 1 MB store all succeed: ok
the live data stay within max_size; getFillingPercentage() stays in 0..100 and ends high: ok
the logs stay bounded too: ok
the newest entries are there, the oldest were evicted (first in, first out): ok
evicted entries left their tags: ok
room is made from expired entries first: every live old entry is still there: ok
an entry larger than half the store: save() is false with a warning, nothing changes: ok
cleaning gives the space back: ok
