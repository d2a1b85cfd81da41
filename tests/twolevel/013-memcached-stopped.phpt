--TEST--
TwoLevel over Memcached: memcached stopped with SIGSTOP longer than the bound, then restarted empty: no stale read beyond the bound, no hang, recovery afterwards; stale_if_error serves the copy for its seconds, counted
--EXTENSIONS--
tagcache
posix
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
if (($r = tcm_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';

$srv = tcm_start('stopped');
$pid = tcr_server_pid($srv);
register_shutdown_function(fn() => posix_kill($pid, SIGCONT));
$bound = 0.2;
$slow = ['servers' => [['127.0.0.1', $srv['port']]], 'prefix' => 'tl013', 'timeout' => 0.2, 'read_timeout' => 0.2,
    'retry_interval' => 0];
$mk = fn(string $n, array $x = []) => $x + ['slow_backend' => 'Memcached', 'slow_backend_options' => $slow,
    'max_staleness' => $bound, 'fast_backend_options' => tl_fast_options("tl013-$n-" . getmypid())];
$a = new TagCache\TwoLevel($mk('a'));
$c = new TagCache\TwoLevel($mk('c', ['stale_if_error' => 3600]));

/** Whether $b serves $id from its fast level (within a bound). */
function fast_hit(TagCache\Backend $b, string $id, string $want): bool
{
    $h0 = $b->stats()['fast_hits'];
    return tl_wait(fn() => $b->load($id) === $want && $b->stats()['fast_hits'] > $h0, 10) !== null;
}

/** A read once the bound has passed since now; the seconds it took go to $took. */
function after_bound(TagCache\Backend $b, string $id, float $bound, ?float &$took)
{
    $t = microtime(true);
    tl_wait(fn() => microtime(true) - $t > $bound, 10);
    $t = microtime(true);
    $v = $b->load($id);
    $took = microtime(true) - $t;
    return $v;
}

tl_same(true, $a->save('v1', 'x', ['t']), 'A saves x');
tl_same(true, fast_hit($a, 'x', 'v1'), 'A serves x from its fast level');
tl_same('v1', $c->load('x'), 'C reads x');
tl_same(true, fast_hit($c, 'x', 'v1'), 'C serves x from its fast level');

posix_kill($pid, SIGSTOP);
tl_same(true, tl_wait_stopped($pid), 'memcached stopped');
tl_same(false, after_bound($a, 'x', $bound, $took), 'the bound passed: A misses x');
// (no wall-clock bound on $took: a read that hung would be the test's timeout)
tl_same(false, $a->load('x'), 'and misses it again');
$st = $a->stats();
tl_same(1, $st['sync_failing'], 'A reports its sync failing');
tl_same(true, $st['stale_refused'] >= 1, 'A counted the copies it refused');
tl_same('v1', $c->load('x'), 'C (stale_if_error) serves its copy');
tl_same(true, $c->stats()['stale_served'] >= 1, 'C counted the stale read');
tl_same(false, @$a->save('v2', 'x'), 'a save while memcached is stopped fails');
posix_kill($pid, SIGCONT);
tl_same(true, tl_wait(fn() => $a->load('x') === 'v1', 10) !== null, 'memcached continued: A reads x again');
tl_same(0, $a->stats()['sync_failing'], 'A syncs again');
tl_same(true, fast_hit($a, 'x', 'v1'), 'A serves x from its fast level again');

// restart empty: the journal's epoch is gone, every fast copy goes
tcr_stop($srv);
$srv = tcm_start('stopped', $srv['port']);
$pid = tcr_server_pid($srv);
tl_same(false, after_bound($a, 'x', $bound, $took), 'memcached restarted empty: A misses x after the bound');
tl_same(true, $a->stats()['node_gaps'] >= 1, 'A counted the gap');
tl_same(true, $a->save('v3', 'x'), 'A saves again');
tl_same(true, fast_hit($a, 'x', 'v3'), 'A serves the new x from its fast level');
tl_same('v3', $c->load('x'), 'C reads the new x');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
require __DIR__ . '/../memcached/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: A saves x
ok: A serves x from its fast level
ok: C reads x
ok: C serves x from its fast level
ok: memcached stopped
ok: the bound passed: A misses x
ok: and misses it again
ok: A reports its sync failing
ok: A counted the copies it refused
ok: C (stale_if_error) serves its copy
ok: C counted the stale read
ok: a save while memcached is stopped fails
ok: memcached continued: A reads x again
ok: A syncs again
ok: A serves x from its fast level again
ok: memcached restarted empty: A misses x after the bound
ok: A counted the gap
ok: A saves again
ok: A serves the new x from its fast level
ok: C reads the new x
done
