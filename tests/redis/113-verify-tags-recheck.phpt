--TEST--
verify_tags=auto follows a CONFIG SET maxmemory-policy on a running server: a persistent connection made under noeviction rechecks the policy every verify_tags_recheck seconds and on reconnect, and then no longer serves an entry whose tag key was evicted
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

/** Polls $cond until it holds or $timeout seconds passed; whether it held. */
function wait_until(callable $cond, float $timeout = 30.0): bool
{
    $end = microtime(true) + $timeout;
    do {
        if ($cond()) {
            return true;
        }
        usleep(20000);
    } while (microtime(true) < $end);
    return $cond();
}

/** An entry with tags [$tag, 'other'] whose tag key $tag is then deleted (an eviction), cleaned by $tag. */
function orphan(TagCache\Redis $b, int $port, string $id, string $tag): void
{
    tcr_check($b->save("value of $id", $id, [$tag, 'other'], 3600), "save $id");
    tcr_cmd($port, 'DEL', "rc:{0}t:$tag");
    // the clean cannot find the entry any more: only a checked load keeps it from being served
    tcr_check($b->clean('matchingTag', [$tag]), "clean('matchingTag', ['$tag'])");
}

/** How many CONFIG GET the server has run (INFO commandstats). */
function config_gets(int $port): int
{
    $info = tcr_cmd($port, 'INFO', 'commandstats');
    if (preg_match('/^cmdstat_config\|get:calls=(\d+)/m', $info, $m)) {
        return (int) $m[1];   // Redis 7: per subcommand
    }
    return preg_match('/^cmdstat_config:calls=(\d+)/m', $info, $m) ? (int) $m[1] : -1;
}

$srv = tcr_start('recheck', ['--maxmemory' => '64mb', '--maxmemory-policy' => 'noeviction']);
$port = $srv['port'];
$opts = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'rc:', 'persistent' => 'recheck', 'on_error' => 'exception'];

$d = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'rc:']);
tcr_same(10.0, (float) $d->getOption('verify_tags_recheck'), 'the recheck interval is 10 s by default');

echo "# every verify_tags_recheck seconds\n";
$b = new TagCache\Redis($opts + ['verify_tags_recheck' => 0.2]);
orphan($b, $port, 'e1', 'T1');
tcr_same('value of e1', $b->load('e1'), 'noeviction: loads are not checked (the orphan is served: this proves the check below can fail)');
tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru'), 'CONFIG SET maxmemory-policy allkeys-lru');
orphan($b, $port, 'e2', 'T2');
tcr_check(wait_until(fn() => $b->load('e2') === false), 'within the recheck interval the same connection checks tags: the orphan is not served');
tcr_same(false, $b->load('e2'), 'and stays a miss');
$b2 = new TagCache\Redis($opts + ['verify_tags_recheck' => 0.2]);
orphan($b2, $port, 'e3', 'T3');
tcr_same(false, $b2->load('e3'), 'a new object on the pooled connection checks at once');
tcr_same(1, (int) preg_match('/connected_clients:2\b/', tcr_cmd($port, 'INFO', 'clients')),
    'one pooled connection (and the test\'s own)');

tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction'), 'CONFIG SET maxmemory-policy noeviction');
$before = config_gets($port);
tcr_check(wait_until(fn() => $b->load('probe') === false && config_gets($port) > $before),
    'within the recheck interval the connection reads the policy again (CONFIG GET)');
orphan($b, $port, 'e4', 'T4');
tcr_same('value of e4', $b->load('e4'), 'back under noeviction loads are unchecked again (one GET)');

echo "# on reconnect\n";
$c = new TagCache\Redis($opts + ['persistent' => 'reconnect', 'verify_tags_recheck' => 3600]);
orphan($c, $port, 'e5', 'T5');
tcr_same('value of e5', $c->load('e5'), 'noeviction: the orphan is served');
tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru'), 'CONFIG SET maxmemory-policy volatile-lru');
orphan($c, $port, 'e6', 'T6');
tcr_same('value of e6', $c->load('e6'), 'inside the (long) interval the connection still reads unchecked');
tcr_check((int) tcr_cmd($port, 'CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes') >= 1, 'the server closes the connections');
tcr_same(false, $c->test('nothing'), 'a call reconnects');
tcr_same(false, $c->load('e6'), 'the new socket read the policy: the orphan is not served');
tcr_stop($srv);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: the recheck interval is 10 s by default
# every verify_tags_recheck seconds
ok: save e1
ok: clean('matchingTag', ['T1'])
ok: noeviction: loads are not checked (the orphan is served: this proves the check below can fail)
ok: CONFIG SET maxmemory-policy allkeys-lru
ok: save e2
ok: clean('matchingTag', ['T2'])
ok: within the recheck interval the same connection checks tags: the orphan is not served
ok: and stays a miss
ok: save e3
ok: clean('matchingTag', ['T3'])
ok: a new object on the pooled connection checks at once
ok: one pooled connection (and the test's own)
ok: CONFIG SET maxmemory-policy noeviction
ok: within the recheck interval the connection reads the policy again (CONFIG GET)
ok: save e4
ok: clean('matchingTag', ['T4'])
ok: back under noeviction loads are unchecked again (one GET)
# on reconnect
ok: save e5
ok: clean('matchingTag', ['T5'])
ok: noeviction: the orphan is served
ok: CONFIG SET maxmemory-policy volatile-lru
ok: save e6
ok: clean('matchingTag', ['T6'])
ok: inside the (long) interval the connection still reads unchecked
ok: the server closes the connections
ok: a call reconnects
ok: the new socket read the policy: the orphan is not served
done
