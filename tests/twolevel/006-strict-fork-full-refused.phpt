--TEST--
TwoLevel over Redis: max_staleness=0 (strict) sees another node's clean at once; fork (parent and child share the node, each its own connection); a full fast segment evicts and never fails a save; a slow level that refuses a save leaves no fast copy; bad options throw
--EXTENSIONS--
tagcache
pcntl
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tl_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$port = (int) (getenv('TAGCACHE_REDIS_PORT') ?: tcr_start('strict')['port']);
$slow = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'tl006:' . getmypid() . ':'];
$mk = fn(string $n, array $x = []) => $x + ['slow_backend' => 'Redis', 'slow_backend_options' => $slow,
    'fast_backend_options' => tl_fast_options("tl006-$n-" . getmypid(), '1M')];

echo "# strict\n";
$a = new TagCache\TwoLevel($mk('a', ['max_staleness' => 0]));
$b = new TagCache\TwoLevel($mk('b', ['max_staleness' => 0]));
$a->clean('all');
tl_same(true, $a->save('v1', 'x', ['t']), 'A saves x');
tl_same('v1', $b->load('x'), 'B reads x');
tl_same('v1', $b->load('x'), 'B reads x again');
tl_same(true, $b->stats()['fast_hits'] >= 1, 'B served x from its fast level');
tl_same(true, $a->clean('matchingTag', ['t']), 'A cleans tag t');
tl_same(false, $b->load('x'), 'B misses x at once');

echo "# fork\n";
$f = new TagCache\TwoLevel($mk('f', ['max_staleness' => 0.05]));
$f->save('parent', 'p', ['pt']);
tl_same('parent', $f->load('p'), 'parent reads p');
$pid = pcntl_fork();
if ($pid === 0) {
    $ok = $f->load('p') === 'parent' && $f->save('child', 'c', ['ct']) && $f->load('c') === 'child'
        && $f->clean('matchingTag', ['pt']);
    exit($ok ? 0 : 1);
}
pcntl_waitpid($pid, $status);
tl_same(0, pcntl_wexitstatus($status), 'the child reads, saves and cleans through the inherited object');
tl_same(true, tl_wait(fn() => $f->load('p') === false, 10) !== null, 'the parent sees the child\'s clean');
tl_same('child', $f->load('c'), 'the parent reads the child\'s save');

echo "# fast level full\n";
$big = str_repeat('z', 200000);
$ok = true;
for ($i = 0; $i < 30; $i++) {
    $ok = $ok && $f->save($big . $i, "big$i", ['big']);
}
tl_same(true, $ok, '30 saves of 200 KB into a 1 MB fast level all return true');
$ok = true;
for ($i = 0; $i < 30; $i++) {
    $ok = $ok && $f->load("big$i") === $big . $i;
}
tl_same(true, $ok, 'every one reads back (from the slow level when evicted)');
tl_same(true, $f->save(str_repeat('y', 2000000), 'huge'), 'a value larger than the fast level is saved');
tl_same(2000000, strlen($f->load('huge')), 'and read back');

echo "# slow level refuses\n";
$r = new TagCache\TwoLevel($mk('r', ['slow_backend_options' => $slow + ['max_value_size' => 1024], 'max_staleness' => 5]));
tl_same(true, $r->save('small', 'k'), 'a small save');
tl_same('small', $r->load('k'), 'reads back');
tl_same('small', $r->load('k'), 'from the fast level');
$res = @$r->save(str_repeat('w', 5000), 'k');
tl_same(false, $res, 'the slow level refuses a value over its max_value_size');
tl_same(false, $r->load('k') === str_repeat('w', 5000), 'the refused value is not served');

echo "# options\n";
foreach ([
    ['slow_backend' => 'Nope'],
    ['slow_backend' => 'Redis', 'fast_backend' => 'Memcached'],
    ['slow_backend' => 'Redis', 'slow_backend_options' => 'x'],
    ['slow_backend' => 'Redis', 'max_staleness' => 'soon'],
] as $o) {
    try {
        new TagCache\TwoLevel($o);
        echo "FAIL: accepted ", json_encode($o), "\n";
    } catch (TagCache\ConfigurationException $e) {
        echo "ok: ", $e->getMessage(), "\n";
    }
}
$m = new TagCache\TwoLevel(['remote_backend' => '\Cm_Cache_Backend_Redis', 'remote_backend_options' => $slow,
    'local_backend' => 'Cm_Cache_Backend_File', 'local_backend_options' => tl_fast_options('tl006-m-' . getmypid()),
    'max_staleness' => '0.5', 'stale_if_error' => '2']);
tl_same(0.5, $m->getOption('max_staleness'), "Magento 2's names and strings: max_staleness 0.5");
tl_same('v2', ($m->save('v2', 'm') ? $m->load('m') : null), 'that one works');
$a->clean('all');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
# strict
ok: A saves x
ok: B reads x
ok: B reads x again
ok: B served x from its fast level
ok: A cleans tag t
ok: B misses x at once
# fork
ok: parent reads p
ok: the child reads, saves and cleans through the inherited object
ok: the parent sees the child's clean
ok: the parent reads the child's save
# fast level full
ok: 30 saves of 200 KB into a 1 MB fast level all return true
ok: every one reads back (from the slow level when evicted)
ok: a value larger than the fast level is saved
ok: and read back
# slow level refuses
ok: a small save
ok: reads back
ok: from the fast level
ok: the slow level refuses a value over its max_value_size
ok: the refused value is not served
# options
ok: Option "slow_backend": unknown backend "Nope" (Redis, File or Memcached)
ok: Option "fast_backend": the fast level is always Shm, "Memcached" cannot be one
ok: Option "slow_backend_options" must be an array
ok: Option "max_staleness" must be a number of seconds
ok: Magento 2's names and strings: max_staleness 0.5
ok: that one works
done
