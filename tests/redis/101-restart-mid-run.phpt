--TEST--
Redis restarted in the middle of a run: fast failures during the outage, automatic reconnect, no reply to the wrong call
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

$srv = tcr_start('r');
$common = ['server' => '127.0.0.1', 'port' => $srv['port'], 'prefix' => 'rs:', 'timeout' => 1,
    'retry_interval' => 0.2];
$miss = new TagCache\Redis($common + ['persistent' => 'restart-test']);
$exc = new TagCache\Redis($common + ['on_error' => 'exception']);

/** Saves and reads back ids $from..$to; every read must be a miss or exactly its own value. */
function round_trip(TagCache\Backend $b, int $from, int $to, string $tag): array
{
    $ok = $wrong = 0;
    for ($i = $from; $i < $to; $i++) {
        $b->save("value of $tag-$i", "$tag-$i", [$tag]);
    }
    for ($i = $from; $i < $to; $i++) {
        $v = $b->load("$tag-$i");
        if ($v === "value of $tag-$i") {
            $ok++;
        } elseif ($v !== false) {
            $wrong++;
        }
    }
    return [$ok, $wrong];
}

[$ok, $wrong] = round_trip($miss, 0, 200, 'a');
tcr_same([200, 0], [$ok, $wrong], 'before the outage: 200 saves read back');

tcr_stop($srv);
$fails = 0;
for ($i = 0; $i < 50; $i++) {
    $fails += $miss->load("a-$i") === false ? 1 : 0;
    $fails += $miss->save('x', "a-$i") === false ? 1 : 0;
}
tcr_same(100, $fails, 'during the outage every call fails (miss / false)');
// (no wall-clock bound: a call that waited for the server would show as
// the test's timeout, and tests/redis/100 checks the "marked down" refusal)
try {
    $exc->load('a-1');
    tcr_check(false, 'on_error=exception during the outage throws');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), '127.0.0.1:' . $srv['port']), 'on_error=exception during the outage throws, naming the server', $e->getMessage());
}

$srv = tcr_restart($srv);
// The restarted server is empty; within a bounded number of tries the
// backends reconnect by themselves (the dead-server mark lasts 0.2 s).
$back = false;
for ($i = 0; $i < 100 && !$back; $i++) {
    $back = $miss->save('after', 'probe') === true;
    if (!$back) {
        usleep(50000);
    }
}
tcr_check($back, 'after the restart the persistent backend reconnects');
[$ok, $wrong] = round_trip($miss, 0, 200, 'b');
tcr_same([200, 0], [$ok, $wrong], 'after the restart: 200 saves read back, none wrong');
$back = false;
for ($i = 0; $i < 100 && !$back; $i++) {
    try {
        $back = $exc->save('after', 'probe2') === true;
    } catch (TagCache\ConnectionException $e) {
        usleep(50000);
    }
}
tcr_check($back, 'the on_error=exception backend reconnects too');
tcr_same('after', $exc->load('probe'), 'both see the same server');

// Kill the server while a run is going on, many times; a fresh object every
// round, as php-fpm requests make them. Values are self-describing: a
// reply read for the wrong call would show as a wrong value.
$wrongTotal = 0;
$rounds = 0;
for ($r = 0; $r < 3; $r++) {
    $b = new TagCache\Redis($common + ['persistent' => 'restart-test']);
    [$ok, $wrong] = round_trip($b, 0, 50, "c$r");
    $wrongTotal += $wrong;
    tcr_stop($srv);
    [$ok2, $wrong2] = round_trip($b, 50, 100, "c$r");
    $wrongTotal += $wrong2;
    $srv = tcr_restart($srv);
    for ($i = 0; $i < 100 && $b->save('x', 'probe') !== true; $i++) {
        usleep(50000);
    }
    [$ok3, $wrong3] = round_trip($b, 100, 150, "c$r");
    $wrongTotal += $wrong3;
    $rounds += ($ok === 50 && $ok2 === 0 && $ok3 === 50) ? 1 : 0;
}
tcr_same(3, $rounds, 'three kill/restart rounds: up, down (all misses), up again');
tcr_same(0, $wrongTotal, 'no call ever got another call\'s reply');
tcr_same([], $miss->verify(), 'verify() finds every entry with its links');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: before the outage: 200 saves read back
ok: during the outage every call fails (miss / false)
ok: on_error=exception during the outage throws, naming the server
ok: after the restart the persistent backend reconnects
ok: after the restart: 200 saves read back, none wrong
ok: the on_error=exception backend reconnects too
ok: both see the same server
ok: three kill/restart rounds: up, down (all misses), up again
ok: no call ever got another call's reply
ok: verify() finds every entry with its links
done
