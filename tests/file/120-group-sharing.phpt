--TEST--
File: a store with dir_mode 0770 and file_mode 0660 is shared by two real users of its group (issue 11 item 8); a user outside the group, a 0700 store and world bits are refused
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
$ids = tc_group_users();
$base = tc_make_tmpdir('f120');
chmod($base, 01777);  // like /tmp: the test users make their stores inside

const STEP = '
    $r = [];
    try {
        $c = new TagCache\File($P["opts"]);
        $r["open"] = "ok";
        foreach ($P["load"] ?? [] as $id) { $r["load"][$id] = $c->load($id); }
        $me = posix_getpwuid(posix_geteuid())["name"];
        foreach ($P["save"] ?? [] as $id => $v) { $r["save"][$id] = $c->save($v, $id, ["t", "by-$me"]); }
        for ($i = 0; $i < ($P["many"] ?? 0); $i++) { $c->save(str_repeat("$me ", 200), "$me-$i", ["m"]); }
        if (!empty($P["clean"])) { $r["clean"] = $c->clean("matchingAnyTag", $P["clean"]); }
        $r["ids"] = $c->getIdsMatchingTags(["t"]);
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
    $h = tc_run_php_as($user, STEP, $P, 60);
    if (!tc_ok($h)) {
        return ['open' => 'child failed: ' . tc_describe($h)];
    }
    return $h['result'];
}

$dir = "$base/shared";
$opts = ['cache_dir' => $dir, 'dir_mode' => '0770', 'file_mode' => '0660'];

$a = step('tcgrp-a', ['opts' => $opts, 'save' => ['from-a' => 'value of a', 'shared' => 'first']]);
clearstatcache();
tc_check('tcgrp-a creates the 0770 store, owned by it and group tcgrp',
    $a['open'] === 'ok' && $a['uid'] === $ids['tcgrp-a'] && fileowner($dir) === $ids['tcgrp-a']
    && filegroup($dir) === $ids['gid'] && (fileperms($dir) & 0777) === 0770, [$a, @fileowner($dir)]);

// b writes enough to start logs of its own; a then reads them.
$b = step('tcgrp-b', ['opts' => $opts, 'load' => ['from-a', 'shared'], 'save' => ['from-b' => 'value of b', 'shared' => 'second'], 'many' => 3000]);
tc_check('tcgrp-b (same group) opens it, reads what a saved and writes',
    $b['open'] === 'ok' && $b['uid'] === $ids['tcgrp-b'] && $b['load'] === ['from-a' => 'value of a', 'shared' => 'first']
    && $b['save'] === ['from-b' => true, 'shared' => true] && $b['verify'] === [], $b);
clearstatcache();
$owners = [];
foreach (tcf_ls($dir) as $f) {
    $owners[posix_getpwuid(fileowner("$dir/$f"))['name']] = true;
}
ksort($owners);
tc_check('the store holds files of both users', array_keys($owners) === ['tcgrp-a', 'tcgrp-b'], $owners);

$a = step('tcgrp-a', ['opts' => $opts, 'load' => ['from-b', 'shared', 'tcgrp-b-2999'], 'clean' => ['by-tcgrp-b'], 'many' => 500]);
tc_check('tcgrp-a sees b\'s writes (in b\'s files) and cleans b\'s tag',
    $a['open'] === 'ok' && $a['load'] === ['from-b' => 'value of b', 'shared' => 'second', 'tcgrp-b-2999' => str_repeat('tcgrp-b ', 200)]
    && $a['clean'] === true && $a['ids'] === ['from-a'] && $a['verify'] === [], $a);

// Refusals.
$n = step('nobody', ['opts' => $opts]);
tc_check('a user outside the group is refused with a clear error',
    str_starts_with($n['open'], 'TagCache\StorageException: ') && str_contains($n['open'], $dir), $n);

$b = step('tcgrp-b', ['opts' => ['cache_dir' => $dir]]);
tc_check('a group member asking for the default 0700 (not shared) is refused: not its store',
    str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], 'owned by uid ' . $ids['tcgrp-a']), $b);

chmod($dir, 0777);
$b = step('tcgrp-b', ['opts' => $opts]);
tc_check('world bits on the directory (0777) are refused',
    str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], 'lets others write'), $b);
chmod($dir, 0770);

$dir2 = "$base/private";
$a = step('tcgrp-a', ['opts' => ['cache_dir' => $dir2]]);
$b = step('tcgrp-b', ['opts' => ['cache_dir' => $dir2] + $opts]);
clearstatcache();
tc_check('a 0700 store of tcgrp-a stays closed to tcgrp-b',
    $a['open'] === 'ok' && (fileperms($dir2) & 0777) === 0700
    && str_starts_with($b['open'], 'TagCache\StorageException: ') && str_contains($b['open'], $dir2), [$a, $b]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f120');
?>
--EXPECT--
tcgrp-a creates the 0770 store, owned by it and group tcgrp: ok
tcgrp-b (same group) opens it, reads what a saved and writes: ok
the store holds files of both users: ok
tcgrp-a sees b's writes (in b's files) and cleans b's tag: ok
a user outside the group is refused with a clear error: ok
a group member asking for the default 0700 (not shared) is refused: not its store: ok
world bits on the directory (0777) are refused: ok
a 0700 store of tcgrp-a stays closed to tcgrp-b: ok
