--TEST--
Shm: `path` naming a non-empty file that is not a segment (no tagcache header) is refused with a clear error and left as it was; only an empty file or our own segment is used (issue 11 item 7)
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
$dir = tc_make_tmpdir('114');

function try_open(array $opts): string
{
    try {
        $c = new TagCache\Shm($opts);
        return $c->save('v', 'k', [], null) && $c->load('k') === 'v' ? 'ok' : 'opened but not working';
    } catch (Throwable $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
}

$cases = [
    'a text file' => str_repeat("precious line of someone's data\n", 4000),
    'a 3-byte file' => "abc",
    'a file of zeros as large as a segment' => str_repeat("\0", 2 * 1024 * 1024),
    'a file that starts like a segment but one byte off' => 'TAGCACH2' . str_repeat("\0", 1024 * 1024),
];
$i = 0;
foreach ($cases as $name => $bytes) {
    $f = "$dir/file" . $i++;
    file_put_contents($f, $bytes);
    chmod($f, 0600);
    $r = try_open(['path' => $f, 'size' => '1M']);
    clearstatcache();
    tc_check("$name: refused with a clear error naming the file",
        strncmp($r, 'TagCache\StorageException: ', 27) === 0 && strpos($r, $f) !== false
        && strpos($r, 'not a tagcache segment') !== false, $r);
    tc_check("$name: left as it was", file_get_contents($f) === $bytes, filesize($f));
}

// An empty file is ours to make; a file we made is used again.
$f = "$dir/empty";
touch($f);
chmod($f, 0600);
tc_check('an empty file becomes a segment', try_open(['path' => $f, 'size' => '1M']) === 'ok');
$h = tc_run_php('
    $c = new TagCache\Shm(["path" => $P["f"], "size" => "1M"]);
    tc_result($c->load("k"));
', ['f' => $f], [], 30);
tc_check('another process uses that segment again, with its entry', tc_ok($h) && $h['result'] === 'v', tc_describe($h));

// A segment of ours made with another size is ours too.
$f2 = "$dir/other-size";
$h = tc_run_php('
    $c = new TagCache\Shm(["path" => $P["f"], "size" => "2M"]);
    tc_result($c->save("old", "k", [], null));
', ['f' => $f2], [], 30);
$h = tc_run_php('
    $c = new TagCache\Shm(["path" => $P["f"], "size" => "1M"]);
    tc_result([$c->load("k"), $c->save("v", "k", [], null), $c->load("k"), $c->stats()["size"]]);
', ['f' => $f2], [], 30);
tc_check('our own segment, made with another size, is used, not refused', tc_ok($h) && $h['result'][1] === true && $h['result'][2] === 'v', tc_describe($h));
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('114');
?>
--EXPECT--
a text file: refused with a clear error naming the file: ok
a text file: left as it was: ok
a 3-byte file: refused with a clear error naming the file: ok
a 3-byte file: left as it was: ok
a file of zeros as large as a segment: refused with a clear error naming the file: ok
a file of zeros as large as a segment: left as it was: ok
a file that starts like a segment but one byte off: refused with a clear error naming the file: ok
a file that starts like a segment but one byte off: left as it was: ok
an empty file becomes a segment: ok
another process uses that segment again, with its entry: ok
our own segment, made with another size, is used, not refused: ok
