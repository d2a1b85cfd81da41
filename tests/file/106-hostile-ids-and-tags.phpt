--TEST--
File: hostile ids and tags (../../etc/passwd, a/b, NUL bytes, newlines, invalid UTF-8, 10 kB, empty) are rejected or stored as data; nothing is created or removed outside the cache directory
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
$sandbox = tc_make_tmpdir('f106');
$cache = "$sandbox/cache";
mkdir("$sandbox/victim", 0700);
file_put_contents("$sandbox/victim/passwd", 'untouched');
$passwd = is_file('/etc/passwd') ? [sha1_file('/etc/passwd'), filemtime('/etc/passwd')] : null;

function tree(string $d): array
{
    $out = [];
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($d, FilesystemIterator::SKIP_DOTS),
        RecursiveIteratorIterator::SELF_FIRST);
    foreach ($it as $f) {
        $out[] = substr($f->getPathname(), strlen($d));
    }
    sort($out);
    return $out;
}

$c = new TagCache\File(['cache_dir' => $cache]);
$before = tree($sandbox);

$hostile = [
    '../../etc/passwd', '../victim/passwd', 'a/b', '/', '..', '.', "a\0b", "\0", "\n", "x\r\ny", "\xff\xfe\xfd",
    'internal-x', 'tagcache.idx', 'tagcache.00000001.log', '*', '$(rm -rf /)', str_repeat('a', 1024),
];
$ok = true;
$why = [];
foreach ($hostile as $i => $id) {
    $tag = $hostile[($i + 3) % count($hostile)];
    $v = "value $i " . bin2hex($id);
    if ($c->save($v, $id, [$tag, 'hostile'], null) !== true) {
        $ok = false;
        $why[] = "save " . bin2hex($id);
    }
}
foreach ($hostile as $i => $id) {
    $tag = $hostile[($i + 3) % count($hostile)];
    if ($c->load($id) !== "value $i " . bin2hex($id) || !in_array($id, $c->getIdsMatchingTags([$tag]), true)
        || ($c->getMetadatas($id)['tags'] ?? null) !== [$tag, 'hostile']) {
        $ok = false;
        $why[] = 'load ' . bin2hex($id);
    }
}
tc_check('hostile ids and tags are stored and read back as data', $ok, $why);
$ids = $c->getIds();
sort($ids);
$want = $hostile;
sort($want);
tc_check('getIds() returns them exactly', $ids === $want);
tc_check("clean('matchingTag', ['../../etc/passwd']) removes only the entry carrying that tag",
    $c->clean('matchingTag', ['../../etc/passwd']) && count($c->getIds()) === count($hostile) - 1
    && $c->load($hostile[count($hostile) - 3]) === false);
tc_check('remove() of hostile ids', $c->remove('../victim/passwd') && $c->remove("a\0b") && $c->load("a\0b") === false);

$rejected = ['a 10 kB id' => str_repeat('x', 10240), 'an empty id' => ''];
foreach ($rejected as $what => $id) {
    foreach (['save' => fn() => $c->save('v', $id), 'load' => fn() => $c->load($id), 'remove' => fn() => $c->remove($id),
              'getMetadatas' => fn() => $c->getMetadatas($id), 'touch' => fn() => $c->touch($id, 1)] as $m => $fn) {
        try {
            $fn();
            tc_check("$m with $what is rejected", false);
        } catch (ValueError $e) {
            // expected
        }
    }
}
foreach (['a 10 kB tag' => str_repeat('t', 10240), 'an empty tag' => ''] as $what => $tag) {
    try {
        $c->save('v', 'ok', [$tag]);
        tc_check("save with $what is rejected", false);
    } catch (ValueError $e) {
    }
    try {
        $c->clean('matchingAnyTag', [$tag]);
        tc_check("clean with $what is rejected", false);
    } catch (ValueError $e) {
    }
}
tc_check('ids and tags of 10 kB or empty are rejected with ValueError', $c->load('ok') === false);

$after = tree($sandbox);
$new = array_values(array_diff($after, $before));
tc_check('nothing created in the sandbox outside the cache directory',
    array_filter($new, fn($p) => !str_starts_with($p, '/cache/')) === [], $new);
tc_check('the cache directory holds only the store\'s own files', tcf_only_store_files($cache), tcf_ls($cache));
tc_check('nothing removed', array_diff($before, $after) === [] || array_filter(array_diff($before, $after),
    fn($p) => !preg_match('#^/cache/tagcache\.[0-9a-f]{8}\.log$#', $p)) === [], array_diff($before, $after));
tc_check('the victim file is untouched', file_get_contents("$sandbox/victim/passwd") === 'untouched');
tc_check('/etc/passwd is untouched', $passwd === null || [sha1_file('/etc/passwd'), filemtime('/etc/passwd')] === $passwd);

// file_name_prefix names files: only [A-Za-z0-9_] is accepted.
foreach (['../x', 'a/b', '', '.hidden', 'x.y', "a\nb", str_repeat('p', 65)] as $prefix) {
    try {
        new TagCache\File(['cache_dir' => $cache, 'file_name_prefix' => $prefix]);
        tc_check('file_name_prefix ' . json_encode($prefix) . ' is refused', false);
    } catch (TagCache\Exception $e) {
    }
}
tc_check('hostile file_name_prefix values are refused, nothing created', tree($sandbox) === $after, array_diff(tree($sandbox), $after));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f106');
?>
--EXPECT--
hostile ids and tags are stored and read back as data: ok
getIds() returns them exactly: ok
clean('matchingTag', ['../../etc/passwd']) removes only the entry carrying that tag: ok
remove() of hostile ids: ok
ids and tags of 10 kB or empty are rejected with ValueError: ok
nothing created in the sandbox outside the cache directory: ok
the cache directory holds only the store's own files: ok
nothing removed: ok
the victim file is untouched: ok
/etc/passwd is untouched: ok
hostile file_name_prefix values are refused, nothing created: ok
