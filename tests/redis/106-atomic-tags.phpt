--TEST--
Save with tags is atomic: no entry without its tag links, under concurrent saves, cleans, removes and SIGKILLed clients
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

$srv = tcr_start('atomic');
// read_timeout well above the default 2.5 s: this test is about atomicity,
// and on a loaded machine (valgrind, parallel workers) one script of 4
// clients' churn can wait longer than that for the CPU, which threw here
$opts = ['server' => '127.0.0.1', 'port' => $srv['port'], 'prefix' => 'atomic:', 'on_error' => 'exception',
    'remove_chunk_size' => 7, 'read_timeout' => 30];
$b = new TagCache\Redis($opts);

/** Random work on 60 ids and 12 tags for $n steps. */
function churn(TagCache\Backend $b, int $seed, int $n): void
{
    mt_srand($seed);
    for ($i = 0; $i < $n; $i++) {
        $id = 'id' . mt_rand(0, 59);
        $op = mt_rand(0, 99);
        if ($op < 60) {
            $tags = [];
            for ($k = mt_rand(0, 5); $k > 0; $k--) {
                $tags[] = 'tag' . mt_rand(0, 11);
            }
            $tags = array_values(array_unique($tags));
            $life = [false, null, 1, 3600, -5][mt_rand(0, 4)];
            $b->save("$id@$seed:$i", $id, $tags, $life);
        } elseif ($op < 75) {
            $b->remove($id);
        } elseif ($op < 85) {
            $b->clean('matchingAnyTag', ['tag' . mt_rand(0, 11)]);
        } elseif ($op < 90) {
            $b->clean('matchingTag', ['tag' . mt_rand(0, 11), 'tag' . mt_rand(0, 11)]);
        } elseif ($op < 93) {
            $b->clean('notMatchingTag', ['tag' . mt_rand(0, 11)]);
        } elseif ($op < 96) {
            $b->touch($id, mt_rand(-10, 100));
        } elseif ($op < 98) {
            $b->clean('old');
        } else {
            $b->___expire($id);
        }
    }
}

// 4 processes at once, then verify
$pids = [];
for ($c = 0; $c < 4; $c++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $code = 0;
        try {
            churn(new TagCache\Redis($opts), 1000 + $c, 1500);
        } catch (Throwable $e) {
            fwrite(STDERR, get_class($e) . ': ' . $e->getMessage() . "\n");
            $code = 1;
        }
        exit($code);
    }
    $pids[] = $pid;
}
$bad = 0;
foreach ($pids as $pid) {
    pcntl_waitpid($pid, $st);
    $bad += pcntl_wexitstatus($st) === 0 ? 0 : 1;
}
tcr_same(0, $bad, '4 processes x 1500 random saves, removes, cleans of every mode, touches: no error');
tcr_same([], $b->verify(), 'verify(): every entry has all its tag links and its id-index link');

// every live id listed by a tag really carries it, and every live entry
// is listed under each of its tags
$wrong = [];
foreach ($b->getIds() as $id) {
    $m = $b->getMetadatas($id);
    if ($m === false) {
        continue;   // expired between the two calls
    }
    foreach ($m['tags'] as $t) {
        if (!in_array($id, $b->getIdsMatchingTags([$t]), true)) {
            $wrong[] = "$id not listed under $t";
        }
    }
}
foreach ($b->getTags() as $t) {
    foreach ($b->getIdsMatchingTags([$t]) as $id) {
        $m = $b->getMetadatas($id);
        if ($m !== false && !in_array($t, $m['tags'], true)) {
            $wrong[] = "$id listed under $t but does not carry it";
        }
    }
}
tcr_same([], $wrong, 'tag listings and entries agree both ways');

// clients SIGKILLed in the middle of bursts of saves: a script runs whole
// or not at all on the server, whatever happens to the client
$killed = 0;
for ($round = 0; $round < 6; $round++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        churn(new TagCache\Redis($opts), 2000 + $round, 100000);
        exit(0);
    }
    usleep(150000 + 50000 * $round);
    posix_kill($pid, SIGKILL);
    pcntl_waitpid($pid, $st);
    $killed += pcntl_wifsignaled($st) ? 1 : 0;
}
tcr_same(6, $killed, 'six clients killed with SIGKILL in the middle of their work');
tcr_same([], $b->verify(), 'verify() after the kills: no entry without its links');

// A clean by tag that races saves of that tag: after clean() returns, no
// entry saved before the clean started is left under the tag.
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new TagCache\Redis($opts);
    for ($i = 0; $i < 3000; $i++) {
        $w->save("race $i", "race$i", ['race', 'r' . ($i % 5)]);
    }
    exit(0);
}
$stale = 0;
for ($k = 0; $k < 30; $k++) {
    $before = $b->getIdsMatchingTags(['race']);
    $b->clean('matchingAnyTag', ['race']);
    foreach ($before as $id) {
        // saved before this clean started and never saved again after (ids are unique)
        $stale += $b->load($id) !== false ? 1 : 0;
    }
    usleep(10000);
}
pcntl_waitpid($pid, $st);
tcr_same(0, $stale, 'no entry listed before a clean survives it while saves race it');
tcr_same([], $b->verify(), 'verify() after the race');
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: 4 processes x 1500 random saves, removes, cleans of every mode, touches: no error
ok: verify(): every entry has all its tag links and its id-index link
ok: tag listings and entries agree both ways
ok: six clients killed with SIGKILL in the middle of their work
ok: verify() after the kills: no entry without its links
ok: no entry listed before a clean survives it while saves race it
ok: verify() after the race
done
