--TEST--
Shm: segment created 0600 whatever the umask; foreign-owned, world-writable, symlinked segments refused; corrupt header, version and body never crash
--EXTENSIONS--
tagcache
posix
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if (!function_exists('posix_geteuid')) die('skip posix extension needed');
if (posix_geteuid() !== 0) die('skip needs root: chowns a segment to another user (nobody)');
if (!posix_getpwnam('nobody')) die('skip no user "nobody" to own a foreign segment');
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('108');
$nobody = posix_getpwnam('nobody')['uid'];
$oldUmask = umask();

function mode_of(string $path): string
{
    clearstatcache();
    return sprintf('%04o', fileperms($path) & 07777);
}

/** new Shm($opts) in this process; returns 'ok' or "ExceptionClass: message". */
function try_open(array $opts): string
{
    try {
        $c = new TagCache\Shm($opts);
        return 'ok';
    } catch (Throwable $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
}

/** A refusal is a StorageException whose message names the segment file. */
function refused(string $outcome, string $path): bool
{
    return strncmp($outcome, 'TagCache\StorageException: ', 27) === 0 && strpos($outcome, $path) !== false;
}

/** Makes a valid segment with a few entries, in a separate process (this one never maps it). */
function make_segment(string $seg, int $n = 5): void
{
    $h = tc_run_php('
        $c = new TagCache\Shm(["segment" => $P["seg"], "size" => "1M"]);
        $ok = true;
        for ($i = 0; $i < $P["n"]; $i++) {
            $ok = $c->save(tc_mkval("e$i", 0, $i, 100 + 37 * $i), "e$i", ["t" . ($i % 3)], null) && $ok;
        }
        tc_result($ok);
    ', ['seg' => $seg, 'n' => $n]);
    if (!tc_ok($h) || $h['result'] !== true) {
        throw new RuntimeException("cannot make segment $seg: " . tc_describe($h));
    }
}

// --- creation mode, whatever the umask --------------------------------------
foreach ([0000, 0077, 0022] as $um) {
    $seg = tc_seg('108', sprintf('_umask%03o', $um));
    umask($um);
    $r = try_open(['segment' => $seg, 'size' => '1M']);
    umask($oldUmask);
    $p = tc_seg_path($seg);
    tc_check(sprintf('umask %03o: created 0600, owned by us', $um), $r === 'ok' && is_file($p) && mode_of($p) === '0600'
        && fileowner($p) === posix_geteuid(), [$r, is_file($p) ? mode_of($p) : 'missing']);
}
$seg = tc_seg('108', '_mode0640');
umask(0077);
$r = try_open(['segment' => $seg, 'size' => '1M', 'mode' => '0640']);
umask($oldUmask);
tc_check('mode 0640 under umask 077: created 0640', $r === 'ok' && mode_of(tc_seg_path($seg)) === '0640', [$r, @mode_of(tc_seg_path($seg))]);

// --- foreign owner ----------------------------------------------------------
$seg = tc_seg('108', '_foreign');
$p = tc_seg_path($seg);
make_segment($seg);
chown($p, $nobody);
$hash = md5_file($p);
$r = try_open(['segment' => $seg, 'size' => '1M']);
clearstatcache();
tc_check('segment owned by nobody: StorageException naming the file', refused($r, $p), $r);
tc_check('foreign segment left alone', is_file($p) && fileowner($p) === $nobody && md5_file($p) === $hash);

$seg = tc_seg('108', '_foreign_empty');
$p = tc_seg_path($seg);
touch($p);
chmod($p, 0600);
chown($p, $nobody);
$r = try_open(['segment' => $seg, 'size' => '1M']);
clearstatcache();
tc_check('empty file owned by nobody: refused, not taken over', refused($r, $p) && fileowner($p) === $nobody && filesize($p) === 0, $r);

// --- world-writable ---------------------------------------------------------
$seg = tc_seg('108', '_world');
$p = tc_seg_path($seg);
make_segment($seg);
chmod($p, 0666);
$hash = md5_file($p);
$r = try_open(['segment' => $seg, 'size' => '1M']);
tc_check('world-writable segment (0666): StorageException naming the file', refused($r, $p), $r);
tc_check('world-writable segment left alone', mode_of($p) === '0666' && md5_file($p) === $hash);

// --- symlinks ---------------------------------------------------------------
$seg = tc_seg('108', '_link');
$p = tc_seg_path($seg);
$target = TC_SHM_DIR . '/tctest_108_' . tc_owner() . '_target';
make_segment(tc_seg('108', '_real'));
copy(tc_seg_path(tc_seg('108', '_real')), $target);
chmod($target, 0600);
symlink($target, $p);
$hash = md5_file($target);
$r = try_open(['segment' => $seg, 'size' => '1M']);
clearstatcache();
tc_check('symlink to a valid segment: StorageException naming the file', refused($r, $p), $r);
tc_check('symlink and its target left alone', is_link($p) && md5_file($target) === $hash);

$seg = tc_seg('108', '_dangling');
$p = tc_seg_path($seg);
$target = TC_SHM_DIR . '/tctest_108_' . tc_owner() . '_nonexistent';
@unlink($target);
symlink($target, $p);
$r = try_open(['segment' => $seg, 'size' => '1M']);
clearstatcache();
tc_check('dangling symlink: refused, target not created', refused($r, $p) && !file_exists($target), [$r, file_exists($target)]);

// --- corruption: every open runs in a separate process, so a crash is a signal, not our death ----
/** Overwrites bytes of $path at $offset. */
function poke(string $path, int $offset, string $bytes): void
{
    $f = fopen($path, 'r+b');
    fseek($f, $offset);
    fwrite($f, $bytes);
    fclose($f);
}

const AFTER_DAMAGE = '
    $r = ["open" => null, "problems" => []];
    try {
        $c = new TagCache\Shm(["segment" => $P["seg"], "size" => "1M"]);
        $r["open"] = "ok";
    } catch (TagCache\StorageException $e) {
        $r["open"] = "refused";
        $r["msg"] = $e->getMessage();
        tc_result($r);
        exit(0);
    }
    // Whatever is left must be one of the values we stored, or nothing.
    $ids = $c->getIds();
    foreach ($ids as $id) {
        if (!is_string($id)) {
            $r["problems"][] = "non-string id";
        }
    }
    for ($i = 0; $i < $P["n"]; $i++) {
        $v = $c->load("e$i");
        if ($v !== false && $P["strict"] && is_string($chk = tc_checkval($v, "e$i"))) {
            $r["problems"][] = "e$i: $chk";
        }
        $c->getMetadatas("e$i");
    }
    for ($t = 0; $t < 3; $t++) {
        $c->getIdsMatchingTags(["t$t"]);
    }
    $c->getTags();
    $c->stats();
    $r["verify"] = $c->verify();
    $r["later"] = $c->save("fresh value", "fresh", ["tf"], null) && $c->load("fresh") === "fresh value"
        && in_array("fresh", $c->getIdsMatchingTags(["tf"]), true);
    $c->clean("matchingTag", ["t1"]);
    $c->clean("old");
    $r["later2"] = $c->save("fresh value 2", "fresh2", [], null) && $c->load("fresh2") === "fresh value 2";
    $r["verify2"] = $c->verify();
    tc_result($r);
';

/** Header or version damage: the segment is refused (StorageException naming it) or recreated, never interpreted. */
function check_header_damage(string $name, string $seg): void
{
    $h = tc_run_php(AFTER_DAMAGE, ['seg' => $seg, 'n' => 20, 'strict' => true], [], 30);
    $r = $h['result'];
    if (!tc_ok($h)) {
        tc_check("$name: no crash", false, tc_describe($h));
        return;
    }
    if ($r['open'] === 'refused') {
        $ok = strpos($r['msg'], tc_seg_path($seg)) !== false;
    } else {
        $ok = $r['problems'] === [] && $r['verify'] === [] && $r['later'] === true && $r['later2'] === true && $r['verify2'] === [];
    }
    tc_check("$name: refused or recreated, no crash", $ok, $r);
}

$seg = tc_seg('108', '_hdr');
make_segment($seg, 20);
poke(tc_seg_path($seg), 0, str_repeat("\xA5\x5A\x00\xFF", 16)); // first 64 bytes
check_header_damage('garbage header', $seg);

$seg = tc_seg('108', '_ver');
make_segment($seg, 20);
poke(tc_seg_path($seg), 8, str_repeat("\xEE", 8));               // bytes 8..16: the layout version
check_header_damage('other layout version', $seg);

$seg = tc_seg('108', '_zero');
make_segment($seg, 20);
poke(tc_seg_path($seg), 0, str_repeat("\0", 4096));              // header zeroed
check_header_damage('zeroed header', $seg);

// Damage in the body (header intact): opening works, verify() reports or repairs, no crash,
// the segment keeps working, and no damaged value is ever served (a miss is fine: "a cache
// may lose an entry, it may never return a wrong or torn value").
mt_srand(108); // the same "random" damage every run, so that a failure can be replayed
foreach (['ff' => fn($n) => str_repeat("\xFF", $n), 'random' => fn($n) => implode('', array_map('chr', array_map(fn() => mt_rand(0, 255), range(1, $n)))),
          'small' => fn($n) => str_repeat("\x07\x00\x00\x00", intdiv($n, 4))] as $kind => $gen) {
    $seg = tc_seg('108', "_body_$kind");
    make_segment($seg, 200);
    $p = tc_seg_path($seg);
    clearstatcache();
    $size = filesize($p);
    for ($k = 1; $k <= 15; $k++) {
        poke($p, intdiv($size * $k, 16) & ~7, $gen(96));
    }
    $h = tc_run_php(AFTER_DAMAGE, ['seg' => $seg, 'n' => 200, 'strict' => true], [], 30);
    $r = $h['result'];
    tc_check("corrupt body ($kind): no crash", tc_ok($h), tc_describe($h));
    tc_check("corrupt body ($kind): opens, verify() returns a list, later operations work", tc_ok($h) && $r['open'] === 'ok'
        && is_array($r['verify']) && $r['later'] === true && $r['later2'] === true && is_array($r['verify2']), $r);
    tc_check("corrupt body ($kind): no damaged value served", tc_ok($h) && $r['problems'] === [], $r['problems'] ?? null);
}
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('108');
?>
--EXPECT--
umask 000: created 0600, owned by us: ok
umask 077: created 0600, owned by us: ok
umask 022: created 0600, owned by us: ok
mode 0640 under umask 077: created 0640: ok
segment owned by nobody: StorageException naming the file: ok
foreign segment left alone: ok
empty file owned by nobody: refused, not taken over: ok
world-writable segment (0666): StorageException naming the file: ok
world-writable segment left alone: ok
symlink to a valid segment: StorageException naming the file: ok
symlink and its target left alone: ok
dangling symlink: refused, target not created: ok
garbage header: refused or recreated, no crash: ok
other layout version: refused or recreated, no crash: ok
zeroed header: refused or recreated, no crash: ok
corrupt body (ff): no crash: ok
corrupt body (ff): opens, verify() returns a list, later operations work: ok
corrupt body (ff): no damaged value served: ok
corrupt body (random): no crash: ok
corrupt body (random): opens, verify() returns a list, later operations work: ok
corrupt body (random): no damaged value served: ok
corrupt body (small): no crash: ok
corrupt body (small): opens, verify() returns a list, later operations work: ok
corrupt body (small): no damaged value served: ok
