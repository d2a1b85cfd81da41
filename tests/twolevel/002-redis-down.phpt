--TEST--
TwoLevel over Redis: Redis stopped with SIGSTOP longer than the bound and Redis restarted empty: no stale read beyond the bound, no hang, recovery afterwards; stale_if_error serves the copy for its seconds, counted
--EXTENSIONS--
tagcache
posix
--SKIPIF--
<?php
require __DIR__ . '/twolevel.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/twolevel.inc';

$srv = tcr_start('down');
$bound = 0.2;
$slow = ['server' => '127.0.0.1', 'port' => $srv['port'], 'prefix' => 'tl002:', 'timeout' => 0.2,
    'read_timeout' => 0.2, 'connect_retries' => 1, 'retry_interval' => 0];
$mk = fn(string $n, array $x = []) => $x + ['slow_backend' => 'Redis', 'slow_backend_options' => $slow,
    'max_staleness' => $bound, 'fast_backend_options' => tl_fast_options("tl002-$n-" . getmypid())];
$a = new TagCache\TwoLevel($mk('a'));
$c = new TagCache\TwoLevel($mk('c', ['stale_if_error' => 3600]));

/** The first read after $bound seconds from now. */
function later(TagCache\Backend $b, string $id, float $bound)
{
    $t = microtime(true) + $bound;
    while (microtime(true) < $t) {
        usleep((int) (($t - microtime(true)) * 1e6) + 1000);
    }
    return $b->load($id);
}

tl_same(true, $a->save('v1', 'x', ['t']), 'A saves x');
tl_same('v1', later($a, 'x', $bound), 'A reads x (a fill after its own save record)');
tl_same('v1', $a->load('x'), 'A reads x from its fast level');
tl_same('v1', $c->load('x'), 'C reads x');
tl_same('v1', $c->load('x'), 'C reads x again');

// SIGSTOP: the node cannot prove it is current once the bound passed
posix_kill(tcr_server_pid($srv), SIGSTOP);
$t0 = microtime(true);
tl_same(false, later($a, 'x', $bound), 'Redis stopped, the bound passed: A misses x');
tl_same(false, $a->load('x'), 'and misses it again');
$st = $a->stats();
tl_same(1, $st['sync_failing'], 'A reports its sync failing');
tl_same(true, $st['stale_refused'] >= 1, 'A counted the copies it refused');
tl_same('v1', $c->load('x'), 'C (stale_if_error) serves its copy');
tl_same(true, $c->stats()['stale_served'] >= 1, 'C counted the stale read');
tl_same(false, $a->save('v2', 'x'), 'a save while Redis is stopped fails');
posix_kill(tcr_server_pid($srv), SIGCONT);
tl_same(true, tl_wait(fn() => $a->load('x') === 'v1', 10) !== null, 'Redis continued: A reads x again');
tl_same(0, $a->stats()['sync_failing'], 'A syncs again');

// restart without persistence: the journal is new, every fast copy goes
tl_same('v1', $a->load('x'), 'A holds x');
tcr_stop($srv);
$srv = tcr_restart($srv);
tl_same(false, later($a, 'x', $bound), 'Redis restarted empty: A misses x after the bound');
tl_same(true, $a->stats()['node_gaps'] >= 1, 'A counted the gap');
tl_same(true, $a->save('v3', 'x'), 'A saves again');
tl_same('v3', tl_wait(fn() => $a->load('x') === 'v3', 10) !== null ? 'v3' : $a->load('x'), 'A reads the new x');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/twolevel.inc';
tcr_clean();
?>
--EXPECT--
ok: A saves x
ok: A reads x (a fill after its own save record)
ok: A reads x from its fast level
ok: C reads x
ok: C reads x again
ok: Redis stopped, the bound passed: A misses x
ok: and misses it again
ok: A reports its sync failing
ok: A counted the copies it refused
ok: C (stale_if_error) serves its copy
ok: C counted the stale read
ok: a save while Redis is stopped fails
ok: Redis continued: A reads x again
ok: A syncs again
ok: A holds x
ok: Redis restarted empty: A misses x after the bound
ok: A counted the gap
ok: A saves again
ok: A reads the new x
done
