--TEST--
pcntl_fork after connecting: children reconnect, parent and children never share a socket
--EXTENSIONS--
tagcache
pcntl
posix
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

$srv = tcr_start('fork');
$opts = ['server' => '127.0.0.1', 'port' => $srv['port'], 'prefix' => 'fork:', 'on_error' => 'exception'];
$persistent = new TagCache\Redis($opts + ['persistent' => 'shared-by-fork']);
$plain = new TagCache\Redis($opts);
tcr_same(true, $persistent->save('parent value', 'parent', ['p']), 'parent saves through a persistent connection');
tcr_same(true, $plain->save('parent value 2', 'parent2', ['p']), 'parent saves through a non-persistent connection');
$before = tcr_cmd($srv['port'], 'INFO', 'clients');
preg_match('/connected_clients:(\d+)/', $before, $m);
$clientsBefore = (int) $m[1];

/** $n save/load pairs with self-describing values; the number of wrong answers. */
function hammer(TagCache\Backend $b, string $who, int $n): int
{
    $wrong = 0;
    for ($i = 0; $i < $n; $i++) {
        $v = "$who:$i:" . str_repeat(chr(65 + $i % 26), $i % 300);
        if ($b->save($v, "$who-$i", ["tag-$who", 'all']) !== true) {
            $wrong++;
            continue;
        }
        $got = $b->load("$who-$i");
        $wrong += $got === $v ? 0 : 1;
        $wrong += $b->load('parent') === 'parent value' ? 0 : 1;
    }
    return $wrong;
}

$dir = tcr_dir();
$children = [];
for ($c = 0; $c < 4; $c++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $res = ['wrong' => 0, 'error' => null];
        try {
            $res['wrong'] += hammer($persistent, "child$c-p", 300);
            $res['wrong'] += hammer($plain, "child$c-n", 300);
            $res['reconnects'] = $persistent->stats()['reconnects'] + $plain->stats()['reconnects'];
            $res['ids'] = count($persistent->getIdsMatchingTags(["tag-child$c-p"]));
        } catch (Throwable $e) {
            $res['error'] = get_class($e) . ': ' . $e->getMessage();
        }
        file_put_contents("$dir/child$c.json", json_encode($res));
        exit(0);   // destructors run here: they must not disturb the parent's sockets
    }
    $children[] = $pid;
}
// the parent keeps using its own sockets while the children run
$parentWrong = hammer($persistent, 'parent-p', 300) + hammer($plain, 'parent-n', 300);
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}
$ok = 0;
for ($c = 0; $c < 4; $c++) {
    $res = json_decode((string) @file_get_contents("$dir/child$c.json"), true);
    if (!is_array($res)) {
        tcr_check(false, "child $c reported", 'no result');
        continue;
    }
    $good = $res['error'] === null && $res['wrong'] === 0 && $res['reconnects'] >= 2 && $res['ids'] === 300;
    $ok += $good ? 1 : 0;
    if (!$good) {
        tcr_check(false, "child $c", json_encode($res));
    }
}
tcr_same(4, $ok, '4 children: every answer right, each reconnected both inherited backends');
tcr_same(0, $parentWrong, 'the parent got every answer right while the children ran');
tcr_same('parent value', $persistent->load('parent'), 'after the children exited the parent\'s persistent socket still works');
tcr_same('parent value 2', $plain->load('parent2'), 'and its non-persistent one');
tcr_same(0, $persistent->stats()['reconnects'] + $plain->stats()['reconnects'], 'the parent never had to reconnect');
tcr_same(300 * 10 + 2, count($persistent->getIds()), 'every save of every process is there');
tcr_same([], $persistent->verify(), 'verify(): every entry has its links');

// A fork inside a loop of calls, many times: the child's first call
// reconnects, the parent's next call needs nothing.
$fails = 0;
for ($k = 0; $k < 10; $k++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $v = $persistent->load('parent');
        exit($v === 'parent value' ? 0 : 3);
    }
    $fails += $persistent->load('parent') === 'parent value' ? 0 : 1;
    pcntl_waitpid($pid, $status);
    $fails += pcntl_wexitstatus($status) === 0 ? 0 : 1;
}
tcr_same(0, $fails, '10 forks racing a load on the same persistent backend: all right');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: parent saves through a persistent connection
ok: parent saves through a non-persistent connection
ok: 4 children: every answer right, each reconnected both inherited backends
ok: the parent got every answer right while the children ran
ok: after the children exited the parent's persistent socket still works
ok: and its non-persistent one
ok: the parent never had to reconnect
ok: every save of every process is there
ok: verify(): every entry has its links
ok: 10 forks racing a load on the same persistent backend: all right
done
