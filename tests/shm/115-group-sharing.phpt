--TEST--
Shm: a 0660 segment is shared by two real users of its group (issue 11 item 8); a user outside the group, a 0600 segment and world bits are refused
--EXTENSIONS--
tagcache
posix
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
if ($r = tc_skip_reason_group()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('115');
$ids = tc_group_users();

// Each step runs as a real user (never root, which ignores permissions).
const STEP = '
    $r = [];
    try {
        $c = new TagCache\Shm($P["opts"]);
        $r["open"] = "ok";
        foreach ($P["load"] ?? [] as $id) { $r["load"][$id] = $c->load($id); }
        foreach ($P["save"] ?? [] as $id => $v) { $r["save"][$id] = $c->save($v, $id, ["t", "by-" . posix_getpwuid(posix_geteuid())["name"]], null); }
        if (!empty($P["clean"])) { $r["clean"] = $c->clean("matchingAnyTag", $P["clean"]); }
        $r["ids"] = $c->getIds();
        sort($r["ids"]);
        $r["verify"] = $c->verify();
    } catch (Throwable $e) {
        $r["open"] = get_class($e) . ": " . $e->getMessage();
    }
    $r["uid"] = posix_geteuid();
    tc_result($r);
';

function step(string $user, array $P): array
{
    $h = tc_run_php_as($user, STEP, $P);
    if (!tc_ok($h)) {
        return ['open' => 'child failed: ' . tc_describe($h)];
    }
    return $h['result'];
}

$seg = tc_seg('115');
$path = tc_seg_path($seg);
$opts = ['segment' => $seg, 'size' => '1M', 'mode' => '0660'];

$a = step('tcgrp-a', ['opts' => $opts, 'save' => ['from-a' => 'value of a', 'shared' => 'first']]);
clearstatcache();
tc_check('tcgrp-a creates the 0660 segment, owned by it and group tcgrp',
    $a['open'] === 'ok' && $a['uid'] === $ids['tcgrp-a'] && fileowner($path) === $ids['tcgrp-a']
    && filegroup($path) === $ids['gid'] && (fileperms($path) & 0777) === 0660, [$a, @fileowner($path), @filegroup($path)]);

$b = step('tcgrp-b', ['opts' => $opts, 'load' => ['from-a', 'shared'], 'save' => ['from-b' => 'value of b', 'shared' => 'second']]);
tc_check('tcgrp-b (same group) opens it, reads what a saved and writes',
    $b['open'] === 'ok' && $b['uid'] === $ids['tcgrp-b'] && $b['load'] === ['from-a' => 'value of a', 'shared' => 'first']
    && $b['save'] === ['from-b' => true, 'shared' => true] && $b['verify'] === [], $b);

$a = step('tcgrp-a', ['opts' => $opts, 'load' => ['from-b', 'shared'], 'clean' => ['by-tcgrp-b']]);
tc_check('tcgrp-a sees b\'s writes and cleans b\'s tag',
    $a['open'] === 'ok' && $a['load'] === ['from-b' => 'value of b', 'shared' => 'second'] && $a['clean'] === true
    && $a['ids'] === ['from-a'] && $a['verify'] === [], $a);

// Refusals.
$n = step('nobody', ['opts' => $opts]);
tc_check('a user outside the group is refused with a clear error',
    str_starts_with($n['open'], 'TagCache\StorageException: ') && str_contains($n['open'], $path), $n);

$b = step('tcgrp-b', ['opts' => ['mode' => '0600'] + $opts]);
tc_check('a group member asking for mode 0600 (not shared) is refused: not its segment',
    str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], 'owned by uid ' . $ids['tcgrp-a']), $b);

chmod($path, 0666);
$b = step('tcgrp-b', ['opts' => $opts]);
tc_check('world bits on the segment (0666) are refused',
    str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], 'more open than 0660'), $b);
chmod($path, 0660);

$seg2 = tc_seg('115', '_private');
$a = step('tcgrp-a', ['opts' => ['segment' => $seg2, 'size' => '1M']]);
$b = step('tcgrp-b', ['opts' => ['segment' => $seg2, 'size' => '1M', 'mode' => '0660']]);
clearstatcache();
tc_check('a 0600 segment of tcgrp-a stays closed to tcgrp-b',
    $a['open'] === 'ok' && (fileperms(tc_seg_path($seg2)) & 0777) === 0600
    && str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], tc_seg_path($seg2)), [$a, $b]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('115');
?>
--EXPECT--
tcgrp-a creates the 0660 segment, owned by it and group tcgrp: ok
tcgrp-b (same group) opens it, reads what a saved and writes: ok
tcgrp-a sees b's writes and cleans b's tag: ok
a user outside the group is refused with a clear error: ok
a group member asking for mode 0600 (not shared) is refused: not its segment: ok
world bits on the segment (0666) are refused: ok
a 0600 segment of tcgrp-a stays closed to tcgrp-b: ok
