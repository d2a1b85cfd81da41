--TEST--
clean('all') keeps the keys of finite entries (the tag keys emptied with their anchor, I with its token, G) and their TTLs: a process whose TTL table is warm saves into them after another process's clean('all') and a third's short-lived save, and is SIGKILLed right after its EXEC reply (test hook TAGCACHE_TEST_CRASH=redis_save_exec), before any follow-up: the tag key's TTL still covers its entry, and a clean by that tag removes it
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

$srv = tcr_start('keep');
$port = $srv['port'];
$opts = '["server" => "127.0.0.1", "port" => ' . $port . ', "prefix" => "ck:"]';

/** Waits (at most 30 s) until $cond() is true. */
function until_true(callable $cond): bool
{
    $end = microtime(true) + 30;
    while (!$cond()) {
        if (microtime(true) > $end) {
            return false;
        }
        usleep(10000);
    }
    return true;
}

// P: a long-lived save (its table now trusts the TTLs it set), then, once
// told, a second one, killed at its second crash point (after EXEC)
$p = tcr_spawn('$p = new TagCache\Redis(' . $opts . ');
$ok = $p->save("v1", "p1", ["X"], 86400);
tcr_cmd(' . $port . ', "SET", "ready", $ok ? "1" : "0");
$end = microtime(true) + 30;
while (tcr_cmd(' . $port . ', "GET", "go") === null && microtime(true) < $end) usleep(10000);
$p->save("v2", "p2", ["X"], 86400);
tcr_result("not killed");', ['TAGCACHE_TEST_CRASH' => 'redis_save_exec', 'TAGCACHE_TEST_CRASH_AFTER' => '2']);
tcr_check(until_true(fn () => tcr_cmd($port, 'GET', 'ready') !== null), 'P saved p1 (lifetime 1 day) with tag X');
tcr_same('1', tcr_cmd($port, 'GET', 'ready'), 'and its save succeeded');

// another process: clean('all')
$c = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'ck:']);
tcr_same(true, $c->clean('all'), "another process: clean('all')");
tcr_same(false, $c->load('p1'), 'p1 is gone');
tcr_check(tcr_cmd($port, 'TTL', 'ck:{0}s:X') > 86000, "clean('all') kept the tag key's TTL", (string) tcr_cmd($port, 'TTL', 'ck:{0}s:X'));

// a third process: a short-lived save with tag X
$t = tcr_wait(tcr_spawn('$t = new TagCache\Redis(' . $opts . ');
tcr_result($t->save("vt", "t", ["X"], 10));'));
tcr_same(true, tcr_parse_result($t['out']), 'a third process saves t (lifetime 10) with tag X');

// P saves p2 with its warm table and is killed right after the EXEC reply
tcr_cmd($port, 'SET', 'go', '1');
$st = null;
tcr_check(until_true(function () use ($p, &$st) {
    $st = proc_get_status($p[0]);
    return !$st['running'];
}), 'P saves p2 (lifetime 1 day) with tag X');
tcr_check($st['signaled'] && $st['termsig'] === 9, 'and is killed by SIGKILL', json_encode($st));
tcr_same(1, tcr_cmd($port, 'EXISTS', 'ck:{0}e:p2'), "after its EXEC (p2's record is written)");
$et = tcr_cmd($port, 'TTL', 'ck:{0}e:p2');
foreach (['ck:{0}s:X', 'ck:{0}I', 'ck:{0}G'] as $k) {
    $kt = tcr_cmd($port, 'TTL', $k);
    tcr_check($kt >= $et, "$k: its TTL covers p2's record", "key $kt s, record $et s");
}
tcr_same([], $c->verify(), 'verify(): no key expires before an entry');
tcr_same(true, $c->clean('matchingAnyTag', ['X']), 'a clean by X');
tcr_same(false, $c->load('p2'), 'removes p2');
tcr_same(false, $c->load('t'), 'and t');
foreach ($p[1] as $pipe) {
    fclose($pipe);
}
proc_close($p[0]);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: P saved p1 (lifetime 1 day) with tag X
ok: and its save succeeded
ok: another process: clean('all')
ok: p1 is gone
ok: clean('all') kept the tag key's TTL
ok: a third process saves t (lifetime 10) with tag X
ok: P saves p2 (lifetime 1 day) with tag X
ok: and is killed by SIGKILL
ok: after its EXEC (p2's record is written)
ok: ck:{0}s:X: its TTL covers p2's record
ok: ck:{0}I: its TTL covers p2's record
ok: ck:{0}G: its TTL covers p2's record
ok: verify(): no key expires before an entry
ok: a clean by X
ok: removes p2
ok: and t
done
