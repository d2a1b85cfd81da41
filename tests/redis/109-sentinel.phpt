--TEST--
Sentinel on loopback: master discovery (a dead sentinel skipped), reads from the replica, a failover followed
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason(['redis-server', 'redis-sentinel'])) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

$master = tcr_start('master');
$replica = tcr_start('replica', ['--replicaof' => "127.0.0.1 {$master['port']}"]);
function wait_for(callable $cond, int $tries = 300): bool
{
    for ($i = 0; $i < $tries; $i++) {
        if ($cond()) {
            return true;
        }
        usleep(50000);
    }
    return false;
}
// the sentinel reads the replicas from the master's INFO when it connects:
// start it once the replica is in sync
wait_for(fn() => str_contains((string) tcr_cmd($replica['port'], 'INFO', 'replication'), 'master_link_status:up'));
$sport = tcr_free_port();
$conf = tcr_dir() . '/sentinel.conf';
file_put_contents($conf, "sentinel monitor mymaster 127.0.0.1 {$master['port']} 1\n"
    . "sentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 4000\n");
$sentinel = tcr_start('sentinel', ['conf' => $conf], $sport, 'redis-sentinel');

tcr_check(wait_for(function () use ($sport) {
    // the sentinel has talked to the replica itself (it can promote it)
    $r = tcr_cmd($sport, 'SENTINEL', 'replicas', 'mymaster');
    if (!is_array($r) || count($r) !== 1 || !is_array($r[0])) {
        return false;
    }
    $f = [];
    for ($i = 0; $i + 1 < count($r[0]); $i += 2) {
        $f[$r[0][$i]] = $r[0][$i + 1];
    }
    return ($f['flags'] ?? '') === 'slave' && ($f['master-link-status'] ?? '') === 'ok';
}), 'the sentinel knows the master and its replica, which is in sync');

$dead = tcr_free_port();
$opts = ['server' => "tcp://127.0.0.1:$dead,tcp://127.0.0.1:$sport", 'sentinel_master' => 'mymaster',
    'prefix' => 'sen:', 'on_error' => 'exception', 'timeout' => 1];
$b = new TagCache\Redis($opts);
tcr_same(true, $b->save('v1', 'k1', ['t']), 'save() through the sentinel (the first one listed is dead)');
tcr_same(1, tcr_cmd($master['port'], 'EXISTS', 'sen:{0}e:k1'), 'the entry is on the master the sentinel named');
tcr_same('v1', $b->load('k1'), 'load()');

// reads from the replica
$hits = function (int $port): int {
    preg_match('/keyspace_hits:(\d+)/', (string) tcr_cmd($port, 'INFO', 'stats'), $m);
    return (int) $m[1];
};
$r = new TagCache\Redis($opts + ['load_from_slaves' => '1', 'retry_reads_on_master' => '1']);
wait_for(fn() => tcr_cmd($replica['port'], 'EXISTS', 'sen:{0}e:k1') === 1);
$h0 = $hits($replica['port']);
$ok = 0;
for ($i = 0; $i < 20; $i++) {
    $ok += $r->load('k1') === 'v1' ? 1 : 0;
}
tcr_same(20, $ok, 'load_from_slaves=1: loads answer');
tcr_check($hits($replica['port']) - $h0 >= 20, 'and were served by the replica', ($hits($replica['port']) - $h0) . ' hits on the replica');
tcr_same(true, $r->save('v2', 'k2', ['t']), 'saves still go to the master');
tcr_same('v2', $r->load('k2'), 'a load right after a save (the replica may lag: retry_reads_on_master)');
$v = new TagCache\Redis($opts + ['load_from_slaves' => '1', 'verify_tags' => '1']);
wait_for(fn() => tcr_cmd($replica['port'], 'EXISTS', 'sen:{0}e:k2') === 1);
tcr_same('v2', $v->load('k2'), 'verify_tags=1 on a replica: the link check runs read-only');
$rs = new TagCache\Redis(['server' => "127.0.0.1:{$master['port']}", 'load_from_slave' => "127.0.0.1:{$replica['port']}",
    'prefix' => 'sen:', 'on_error' => 'exception']);
$h0 = $hits($replica['port']);
tcr_same('v1', $rs->load('k1'), 'load_from_slave (no sentinel): a load');
tcr_check($hits($replica['port']) > $h0, 'served by the replica named in load_from_slave');

// failover: the replica becomes the master
tcr_same('OK', tcr_cmd($sport, 'SENTINEL', 'FAILOVER', 'mymaster'), 'SENTINEL FAILOVER');
tcr_check(wait_for(function () use ($sport, $replica) {
    $a = tcr_cmd($sport, 'SENTINEL', 'get-master-addr-by-name', 'mymaster');
    return is_array($a) && ($a[1] ?? '') === (string) $replica['port'];
}), 'after SENTINEL FAILOVER the sentinel names the former replica');
// what the sentinel does next (on its own schedule): the former master follows the new one
tcr_cmd($master['port'], 'REPLICAOF', '127.0.0.1', (string) $replica['port']);
tcr_check(str_contains((string) tcr_cmd($master['port'], 'INFO', 'replication'), 'role:slave'), 'the former master is now a replica');
tcr_same(true, $b->save('v3', 'k3', ['t']), 'the same backend object saves: READONLY from the old master, the sentinel asked again');
tcr_same(1, tcr_cmd($replica['port'], 'EXISTS', 'sen:{0}e:k3'), 'the entry is on the new master');
tcr_same('v3', $b->load('k3'), 'and loads');
tcr_same(['k1', 'k2', 'k3'], (function ($a) { sort($a); return $a; })($b->getIdsMatchingTags(['t'])), 'the tag index came along');
$n = new TagCache\Redis($opts);
tcr_same('v1', $n->load('k1'), 'a new object finds the new master');
tcr_same([], $n->verify(), 'verify() on the new master');

$bad = new TagCache\Redis(['sentinel_master' => 'nosuchmaster'] + $opts);
try {
    $bad->load('k1');
    tcr_check(false, 'an unknown master name fails');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), 'nosuchmaster'), 'an unknown master name: ConnectionException naming it', $e->getMessage());
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: the sentinel knows the master and its replica, which is in sync
ok: save() through the sentinel (the first one listed is dead)
ok: the entry is on the master the sentinel named
ok: load()
ok: load_from_slaves=1: loads answer
ok: and were served by the replica
ok: saves still go to the master
ok: a load right after a save (the replica may lag: retry_reads_on_master)
ok: verify_tags=1 on a replica: the link check runs read-only
ok: load_from_slave (no sentinel): a load
ok: served by the replica named in load_from_slave
ok: SENTINEL FAILOVER
ok: after SENTINEL FAILOVER the sentinel names the former replica
ok: the former master is now a replica
ok: the same backend object saves: READONLY from the old master, the sentinel asked again
ok: the entry is on the new master
ok: and loads
ok: the tag index came along
ok: a new object finds the new master
ok: verify() on the new master
ok: an unknown master name: ConnectionException naming it
done
