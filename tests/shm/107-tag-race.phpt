--TEST--
Shm: tag race, after clean(tag) returns no load returns an entry saved before the clean started
--EXTENSIONS--
tagcache
pcntl
posix
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('pcntl_fork')) die('skip pcntl_fork() not available');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('107');
$dir = tc_make_tmpdir('107');
const NIDS = 64;
const SECONDS = 3.0;
$opts = ['segment' => tc_seg('107'), 'size' => '4M'];
$c = new TagCache\Shm($opts);
$c->clean('all');

// The writer reports each sequence number on the socket *after* its save() returned. The
// cleaner reads the latest number B before it calls clean(): every save up to B completed
// before the clean started, so once clean() has returned none of them may be loaded again.
$pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$pid = pcntl_fork();
if ($pid === 0) {
    fclose($pair[0]);
    $sock = $pair[1];
    $w = new TagCache\Shm($opts);
    $failed = 0;
    $seq = 0;
    $done = false;
    $stopAt = microtime(true) + SECONDS + 20; // safety net only: the parent says when to stop
    while (!$done && microtime(true) < $stopAt) {
        $seq++;
        if ($w->save("seq:$seq", 'r' . ($seq % NIDS), ['T', 'g' . ($seq % 4)], null)) {
            fwrite($sock, "$seq\n");
        } else {
            $failed++;
        }
        if ($seq % 16 === 0) {
            stream_set_blocking($sock, false);
            $done = fread($sock, 16) === 'done';
            stream_set_blocking($sock, true);
        }
    }
    // After the last clean returned: NIDS more saves, which must all survive.
    $last = $seq;
    for ($i = 0; $i < NIDS; $i++) {
        $last++;
        $failed += $w->save("seq:$last", 'r' . ($last % NIDS), ['T'], null) ? 0 : 1;
    }
    fwrite($sock, "final $last $failed " . ($done ? 'done' : 'timeout') . "\n");
    exit(0);
}
fclose($pair[1]);
$sock = $pair[0];
stream_set_blocking($sock, false);
$reaped = false;
tc_on_exit(static function () use ($pid, &$reaped) {
    if (!$reaped) {
        tc_kill($pid, 9);
        pcntl_waitpid($pid, $st);
    }
});

$buf = '';
$B = 0;
$drain = function () use ($sock, &$buf, &$B) {
    while (($d = fread($sock, 65536)) !== false && $d !== '') {
        $buf .= $d;
    }
    $nl = strrpos($buf, "\n");
    if ($nl === false) {
        return;
    }
    $lines = explode("\n", substr($buf, 0, $nl));
    $buf = substr($buf, $nl + 1);
    for ($i = count($lines) - 1; $i >= 0; $i--) {
        if (preg_match('/^\d+$/D', $lines[$i])) {
            $B = max($B, (int) $lines[$i]);
            break;
        }
    }
};

$end = microtime(true) + SECONDS;
$rounds = 0;
$cleanFailed = 0;
$violations = [];
$later = 0; // loads after a clean that returned an entry saved after the boundary: the race was real
$start = microtime(true);
while (microtime(true) < $end && $rounds < 100000) {
    $drain();
    if ($B === 0) {
        if (microtime(true) > $start + 20) {
            break;
        }
        usleep(1000);
        continue;
    }
    $boundary = $B;                       // saves <= $boundary completed before this clean starts
    $mode = $rounds % 2 ? 'matchingAnyTag' : 'matchingTag';
    $ok = $c->clean($mode, $mode === 'matchingTag' ? ['T'] : ['zz', 'T']);
    $cleanFailed += $ok ? 0 : 1;
    $rounds++;
    $ids = [];
    for ($i = 0; $i < NIDS; $i++) {
        $ids[] = "r$i";
    }
    $seen = [];
    foreach ($ids as $id) {
        $seen[] = [$id, $c->load($id)];
    }
    foreach ($c->loadMany($ids) as $id => $v) {
        $seen[] = [$id, $v];
    }
    foreach ($c->getIdsMatchingTags(['T']) as $id) {
        $seen[] = [$id, $c->load($id)];
    }
    foreach ($seen as [$id, $v]) {
        if ($v === false) {
            continue;
        }
        $s = (int) substr($v, 4);
        if ($s <= $boundary) {
            if (count($violations) < 5) {
                $violations[] = "round $rounds: $id holds seq $s, saved before the clean that started after seq $boundary";
            }
        } else {
            $later++;
        }
    }
}
stream_set_blocking($sock, true);
fwrite($sock, 'done');
// Read until the writer's final line (bounded: the socket read times out).
stream_set_timeout($sock, 30);
$final = null;
while (($line = fgets($sock)) !== false) {
    if (strncmp($line, 'final ', 6) === 0) {
        $final = explode(' ', trim($line));
        break;
    }
}
$wr = tc_wait_forked([$pid], 15, $dir)[0]; // SIGKILLs the writer if it does not exit
$reaped = true;

tc_check('writer finished normally', $final !== null && $final[3] === 'done' && !$wr['timed_out']
    && $wr['signal'] === null && $wr['exit'] === 0, [$final, $wr]);
tc_check('clean() always returned true', $rounds > 0 && $cleanFailed === 0, [$rounds, $cleanFailed]);
tc_check('writer saves never failed', $final !== null && $final[2] === '0', $final);
tc_check('no entry saved before a clean was loaded after it', $violations === [], $violations);
// Entries saved after the last clean() returned all survive.
$bad = [];
if ($final !== null) {
    $last = (int) $final[1];
    for ($s = $last - NIDS + 1; $s <= $last; $s++) {
        $v = $c->load('r' . ($s % NIDS));
        if ($v !== "seq:$s") {
            $bad[] = 'r' . ($s % NIDS) . ' = ' . var_export($v, true) . " instead of seq:$s";
        }
    }
}
tc_check('entries saved after the last clean survive', $final !== null && $bad === [], array_slice($bad, 0, 5));
tc_check('verify() is empty', ($v = $c->verify()) === [], $v);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('107');
tc_remove_segments('107');
?>
--EXPECT--
writer finished normally: ok
clean() always returned true: ok
writer saves never failed: ok
no entry saved before a clean was loaded after it: ok
entries saved after the last clean survive: ok
verify() is empty: ok
