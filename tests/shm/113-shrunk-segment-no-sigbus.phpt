--TEST--
Shm: a segment truncated by another process under a live mapping is noticed before it is touched: a new object and the next operation reattach, never a SIGBUS (issue 11 item 6)
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('113');
$dir = tc_make_tmpdir('113');

/** Waits (bounded) until $file exists. */
function wait_file(string $file, float $timeout): bool
{
    $deadline = microtime(true) + $timeout;
    while (!file_exists($file)) {
        if (microtime(true) > $deadline) {
            return false;
        }
        usleep(5000);
    }
    return true;
}

// The child maps the segment, says so, waits until the parent has shrunk
// the file, then does what the round asks, first thing.
const CHILD = '
    function wait_file(string $file, float $timeout): bool {
        $deadline = microtime(true) + $timeout;
        while (!file_exists($file)) { if (microtime(true) > $deadline) return false; usleep(5000); }
        return true;
    }
    $c = new TagCache\Shm($P["opts"]);
    for ($i = 0; $i < 50; $i++) {
        $c->save(str_repeat("v$i", 300), "k$i", ["t"], null);
    }
    $before = $c->load("k7") === str_repeat("v7", 300);
    touch($P["dir"] . "/mapped");
    if (!wait_file($P["dir"] . "/shrunk", 60)) { tc_result("never shrunk"); exit; }
    $r = ["before" => $before];
    if ($P["round"] === "new object") {
        try { $d = new TagCache\Shm($P["opts"]); $r["new"] = "ok"; }
        catch (Throwable $e) { $r["new"] = get_class($e) . ": " . $e->getMessage(); $d = null; }
        $r["new_load"] = $d ? $d->load("k7") : "no object";
    } else {
        // an operation checks the size once per second of the coarse
        // clock (which lags time() by up to a tick): wait until it has
        // moved on, then the round\'s operation comes first
        $t = time();
        while (time() < $t + 2) { usleep(10000); }
        if ($P["round"] === "load") { $r["load"] = $c->load("k7"); }
    }
    try { $r["save"] = $c->save("after", "after", ["u"], null); }
    catch (Throwable $e) { $r["save"] = get_class($e) . ": " . $e->getMessage(); }
    $r["load_after"] = $c->load("after");
    $r["verify"] = $c->verify();
    $r["ids_u"] = $c->getIdsMatchingTags(["u"]);
    tc_result($r);
';

foreach (['new object', 'save', 'load'] as $round) {
    @unlink("$dir/mapped");
    @unlink("$dir/shrunk");
    $seg = tc_seg('113', '_' . str_replace(' ', '_', $round));
    $path = tc_seg_path($seg);
    $P = ['opts' => ['segment' => $seg, 'size' => '2M'], 'dir' => $dir, 'round' => $round];
    $h = tc_spawn_php(CHILD, $P, [], $round);
    $mapped = wait_file("$dir/mapped", 60);
    // another process (this one) cuts the file to one page under the mapping
    $f = fopen($path, 'r+');
    $cut = $mapped && $f && ftruncate($f, 4096);
    fclose($f);
    clearstatcache();
    touch("$dir/shrunk");
    $h = tc_wait($h, 60);
    $r = $h['result'];
    tc_check("$round: the file was cut to 4096 bytes under the child's mapping", $mapped && $cut && is_array($r) && $r['before'] === true, tc_describe($h));
    tc_check("$round: no SIGBUS, the child ended normally", $h['signal'] === null && tc_ok($h), tc_describe($h));
    if ($round === 'new object') {
        tc_check("$round: the new object works", is_array($r) && $r['new'] === 'ok' && $r['new_load'] === false, $r);
    }
    if ($round === 'load') {
        tc_check("$round: the first load after the cut is a miss", is_array($r) && $r['load'] === false, $r);
    }
    tc_check("$round: then save, load, tags and verify() work on the old object",
        is_array($r) && $r['save'] === true && $r['load_after'] === 'after' && $r['ids_u'] === ['after'] && $r['verify'] === [], $r);
    clearstatcache();
    tc_check("$round: the segment has its size again", filesize($path) === 2 * 1024 * 1024, filesize($path));
}

// A process that starts after the cut gets a working segment too.
$seg = tc_seg('113', '_fresh');
$path = tc_seg_path($seg);
$opts = ['segment' => $seg, 'size' => '2M'];
$c = new TagCache\Shm($opts);
$c->save('x', 'x', [], null);
unset($c);
$f = fopen($path, 'r+');
ftruncate($f, 100);
fclose($f);
$h = tc_run_php('
    $c = new TagCache\Shm($P["opts"]);
    tc_result([$c->load("x"), $c->save("y", "y", [], null), $c->load("y"), $c->verify()]);
', ['opts' => $opts], [], 30);
tc_check('a new process after the cut: a fresh segment', tc_ok($h) && $h['result'] === [false, true, 'y', []], tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('113');
tc_clean_tmpdirs('113');
?>
--EXPECT--
new object: the file was cut to 4096 bytes under the child's mapping: ok
new object: no SIGBUS, the child ended normally: ok
new object: the new object works: ok
new object: then save, load, tags and verify() work on the old object: ok
new object: the segment has its size again: ok
save: the file was cut to 4096 bytes under the child's mapping: ok
save: no SIGBUS, the child ended normally: ok
save: then save, load, tags and verify() work on the old object: ok
save: the segment has its size again: ok
load: the file was cut to 4096 bytes under the child's mapping: ok
load: no SIGBUS, the child ended normally: ok
load: the first load after the cut is a miss: ok
load: then save, load, tags and verify() work on the old object: ok
load: the segment has its size again: ok
a new process after the cut: a fresh segment: ok
