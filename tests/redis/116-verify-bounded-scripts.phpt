--TEST--
verify() checks a large store in short scripts (at most 64 entries each), finds every broken link, and never times out
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

// One verify script used to check every entry a SCAN step returned (up to
// 1000, some 30,000 Redis calls): 0.3 to 0.5 s of a loaded server, during
// which every other client waited, and past read_timeout on a busier one
// ("read timeout after 2.5 s" at the end of each benchmark run, where
// verify() then returned an incomplete list). The server's SLOWLOG, set to
// log every command, shows the size of each script that ran.
$srv = tcr_start('verify');
$port = $srv['port'];
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'vb:', 'on_error' => 'exception']);
$n = 500;
$ok = true;
for ($i = 0; $i < $n; $i++) {
    $ok = $b->save("value $i", "id$i", ['MAGE', 'T' . ($i % 20)], 3600) && $ok;
}
tcr_check($ok, "$n saves");
// two broken links, found only if their entries are checked
tcr_same(1, tcr_cmd($port, 'ZREM', 'vb:{0}t:T3', 'id3'), 'link of id3 in T3 removed');
tcr_same(1, tcr_cmd($port, 'ZREM', 'vb:{0}t:T17', 'id497'), 'link of id497 in T17 removed');

tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'slowlog-log-slower-than', '0'), 'SLOWLOG logs every command');
tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'slowlog-max-len', '100000'), 'SLOWLOG keeps them all');
tcr_same('OK', tcr_cmd($port, 'SLOWLOG', 'RESET'), 'SLOWLOG RESET');

$problems = $b->verify();
tcr_same(2, count($problems), 'verify() lists two problems');
tcr_check((bool) preg_grep('/\bid3\b.*\bT3\b/', $problems), 'the missing link of id3 in T3', json_encode($problems));
tcr_check((bool) preg_grep('/\bid497\b.*\bT17\b/', $problems), 'the missing link of id497 in T17', json_encode($problems));

tcr_same('OK', tcr_cmd($port, 'CONFIG', 'SET', 'slowlog-log-slower-than', '10000'), 'SLOWLOG back to 10 ms');
$log = tcr_cmd($port, 'SLOWLOG', 'GET', '100000');
$scripts = 0;
$ids = 0;
$largest = 0;
foreach ($log as $e) {
    $argv = $e[3];
    // EVALSHA sha 2 <id index> <registry> H now grace id...; SLOWLOG keeps 32
    // arguments, the last one then saying how many more there were
    if (($argv[0] ?? '') !== 'EVALSHA' || ($argv[3] ?? '') !== 'vb:{0}i' || ($argv[4] ?? '') !== 'vb:{0}T'
        || ($argv[2] ?? '') !== '2') {
        continue;
    }
    $argc = count($argv);
    if (preg_match('/^\.\.\. \((\d+) more arguments\)$/', (string) end($argv), $m)) {
        $argc = $argc - 1 + (int) $m[1];
    }
    $scripts++;
    $ids += $argc - 8;
    $largest = max($largest, $argc - 8);
}
tcr_check($scripts >= intdiv($n + 63, 64), "at least " . intdiv($n + 63, 64) . " verify scripts for $n entries", "$scripts");
tcr_check($largest > 0 && $largest <= 64, 'no verify script checks more than 64 entries', "largest: $largest");
tcr_check($ids >= $n, "the scripts checked all $n entries", "$ids");

// A check that could not finish is not a clean store: with on_error=miss,
// verify() used to return [] for a server it could not reach.
$dead = tcr_free_port();
$d = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $dead, 'prefix' => 'vb:', 'on_error' => 'miss',
    'timeout' => 1, 'retry_interval' => 0]);
$problems = $d->verify();
tcr_check(count($problems) === 1 && str_starts_with($problems[0], 'check incomplete: ')
    && str_contains($problems[0], "127.0.0.1:$dead"), 'on_error=miss, no server: verify() says the check is incomplete',
    json_encode($problems));
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: 500 saves
ok: link of id3 in T3 removed
ok: link of id497 in T17 removed
ok: SLOWLOG logs every command
ok: SLOWLOG keeps them all
ok: SLOWLOG RESET
ok: verify() lists two problems
ok: the missing link of id3 in T3
ok: the missing link of id497 in T17
ok: SLOWLOG back to 10 ms
ok: at least 8 verify scripts for 500 entries
ok: no verify script checks more than 64 entries
ok: the scripts checked all 500 entries
ok: on_error=miss, no server: verify() says the check is incomplete
done
