--TEST--
File: damaged records (flipped bytes in value, header, key or tags; absurd lengths; truncated logs; garbage; a record image inside a value) are a miss and a repair, never a crash or a wrong value
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
$base = tc_make_tmpdir('f103');

// Every access to a store happens in a fresh child process: the test process
// changes the files between them (a process that has a log mapped must not
// see it truncated under it: see TECHNOTES.md).

/** Makes a store in $dir with entries $vals (id => [value, tags]); returns true. */
function make_store(string $dir, array $vals, array $opts = []): bool
{
    file_put_contents("$dir.vals", serialize($vals));
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $ok = true;
        foreach (unserialize(file_get_contents($P["vals"])) as $id => [$v, $tags]) {
            $ok = $c->save($v, $id, $tags, null) && $ok;
        }
        tc_result($ok);
    ', ['opts' => ['cache_dir' => $dir] + $opts, 'vals' => "$dir.vals"]);
    return tc_ok($h) && $h['result'] === true;
}

/** In a child: what every id loads as (true: its own value, false: a miss, "OTHER"), and the store's view. */
function inspect(string $dir, array $vals, array $opts = [], string $first = ''): array
{
    $h = tcf_run_php('
        $c = new TagCache\File($P["opts"]);
        $r = ["loads" => []];
        if ($P["first"] !== "") {
            $r["first"] = $c->load($P["first"]) === false;
        }
        foreach (unserialize(file_get_contents($P["vals"])) as $id => [$v, $tags]) {
            $l = $c->load($id);
            $r["loads"][$id] = $l === false ? false : ($l === $v ? true : "OTHER");
        }
        $ids = array_values(array_diff($c->getIds(), ["later"]));
        sort($ids);
        $r["ids"] = $ids;
        $r["verify"] = $c->verify();
        $st = $c->stats();
        $r["corrupt"] = $st["corrupt_records"];
        $r["later"] = $c->save("later", "later", ["tl"]) && $c->load("later") === "later";
        $r["verify2"] = $c->verify();
        tc_result($r);
    ', ['opts' => ['cache_dir' => $dir] + $opts, 'vals' => "$dir.vals", 'first' => $first]);
    return tc_ok($h) ? $h['result'] + ['ok' => true] : ['ok' => false, 'why' => tc_describe($h)];
}

/** The expected view when exactly the ids in $lost are gone. */
function expect_lost(array $r, array $vals, array $lost): bool
{
    if (!$r['ok']) {
        return false;
    }
    $want = [];
    foreach ($vals as $id => $_) {
        $want[$id] = !in_array($id, $lost, true);
    }
    $ids = array_keys(array_filter($want));
    sort($ids);
    return $r['loads'] === $want && $r['ids'] === $ids && $r['verify'] === [] && $r['later'] === true
        && $r['verify2'] === [];
}

$vals = [];
for ($i = 0; $i < 12; $i++) {
    $vals["e$i"] = [str_repeat(chr(65 + $i), 300 + 97 * $i), ["te", "t$i"]];
}

// One damage per store: [name, victim id, how]
$cases = [
    'a flipped byte in the value' => ['e3', fn($log, $off, $rec) => tcf_flip($log, $off + 48 + $rec[1] + $rec[3] + 10)],
    'a flipped byte in the header (vlen)' => ['e4', fn($log, $off, $rec) => tcf_flip($log, $off + 12)],
    'a flipped byte in the key' => ['e5', fn($log, $off, $rec) => tcf_flip($log, $off + 48)],
    'a flipped byte in a tag name' => ['e6', fn($log, $off, $rec) => tcf_flip($log, $off + 48 + $rec[1] + 3)],
    'an absurd value length' => ['e7', fn($log, $off, $rec) => tcf_poke($log, $off + 12, pack('V', 0xfffffff0))],
    'an absurd key length' => ['e8', fn($log, $off, $rec) => tcf_poke($log, $off + 4, pack('v', 0xffff))],
    'a zeroed header' => ['e9', fn($log, $off, $rec) => tcf_poke($log, $off, str_repeat("\0", 48))],
];
// The damage goes to the record the index uses: the last record of the id
// in any log (tcf_live_record), not the first match in the newest log (a
// rebuild used to start a new log, so the victim's record could be in an
// older one and the damage went nowhere: "not seen, corrupt 0"); and the
// bytes are read back, so a damage that did not land fails as such.
$n = 0;
foreach ($cases as $name => [$victim, $damage]) {
    $dir = "$base/case" . $n++;
    $setup = make_store($dir, $vals);
    $live = tcf_live_record($dir, $victim, $vals[$victim][0]);
    $landed = false;
    if ($setup && $live !== null) {
        [$log, $off, $rec] = $live;
        $before = file_get_contents($log);
        $damage($log, $off, $rec);
        clearstatcache();
        $landed = file_get_contents($log) !== $before;
    }
    tc_check("$name: the damage landed in the record the index uses", $setup && $live !== null && $landed,
        [$setup, $live === null ? null : [basename($live[0]), $live[1]], array_map('basename', tcf_logs($dir))]);
    $r = inspect($dir, $vals, [], $victim);
    tc_check("$name: a miss for that entry only, a consistent index after, saves work",
        $landed && expect_lost($r, $vals, [$victim]), $r);
    tc_check("$name: counted as a damaged record", $r['ok'] && $r['corrupt'] >= 1 || $name === 'a zeroed header', $r['corrupt'] ?? null);
    // A rebuild from the logs (index deleted) agrees.
    @unlink("$dir/tagcache.idx");
    $r = inspect($dir, $vals);
    tc_check("$name: a rebuild from the logs agrees", expect_lost($r + ['later' => true], $vals, [$victim]), $r);
}

// The tail of the log cut in the middle of its last record.
$dir = "$base/truncated";
$setup = make_store($dir, $vals);
$logs = tcf_logs($dir);
$log = end($logs);
$off = tcf_find_record($log, 'e11', $vals['e11'][0]);
if ($setup && $off !== null) {
    truncate_file($log, $off + 100);
}
function truncate_file(string $f, int $size): void
{
    $h = fopen($f, 'r+b');
    ftruncate($h, $size);
    fclose($h);
}
$r = inspect($dir, $vals, [], 'e11');
tc_check('a log cut inside its last record: that entry is a miss, the rest intact', $setup && $off !== null
    && expect_lost($r, $vals, ['e11']), $r);

// A log cut to 10 bytes (its header gone): what it held is lost, the store goes on.
$dir = "$base/headless";
$two = [];
for ($i = 0; $i < 6; $i++) {
    $two["big$i"] = [str_repeat(chr(97 + $i), 100000), ["tb"]];
}
$setup = make_store($dir, $two, ['max_size' => '2M']);
$logs = tcf_logs($dir);
if ($setup && count($logs) >= 2) {
    truncate_file($logs[0], 10);
}
$r = inspect($dir, $two, ['max_size' => '2M']);
$lost = $r['ok'] ? array_keys(array_filter($r['loads'], fn($x) => $x === false)) : [];
tc_check('a log cut to 10 bytes: its entries are misses, the others intact, the store works',
    $setup && count($logs) >= 2 && $lost !== [] && count($lost) < 6 && expect_lost($r, $two, $lost), [$r, count($logs)]);

// Garbage after the end of the active log is ignored.
$dir = "$base/garbage";
$setup = make_store($dir, $vals);
$logs = tcf_logs($dir);
file_put_contents(end($logs), random_bytes(5000), FILE_APPEND);
$r = inspect($dir, $vals);
tc_check('garbage appended to the active log: ignored', $setup && expect_lost($r, $vals, []), $r);
@unlink("$dir/tagcache.idx");
$r = inspect($dir, $vals);
tc_check('garbage appended to a log: a rebuild ignores it too', expect_lost($r, $vals, []), $r);

// A valid record image inside a value: when the scanner walks through that
// value (the header of the record holding it is damaged), the image is not
// taken for a record, so a removed entry does not come back with a forged value.
$dir = "$base/forged";
$setup = make_store($dir, ['victim' => ['evil', []]] + $vals);
$logs = tcf_logs($dir);
$log = end($logs);
$voff = tcf_find_record($log, 'victim', 'evil');
$image = $voff === null ? '' : substr(file_get_contents($log), $voff, 64);
$h = tcf_run_php('
    $c = new TagCache\File(["cache_dir" => $P["dir"]]);
    // 1 + 48 + 7 ("carrier") = 56: the image lands on an 8-byte boundary of the log
    tc_result($c->remove("victim") && $c->save("x" . $P["image"] . "y", "carrier", [], null));
', ['dir' => $dir, 'image' => $image]);
$coff = tcf_find_record($log, 'carrier', 'x' . $image . 'y');
if ($coff !== null) {
    tcf_flip($log, $coff + 40);  // its header check
}
@unlink("$dir/tagcache.idx");
$h2 = tcf_run_php('
    $c = new TagCache\File(["cache_dir" => $P["dir"]]);
    tc_result(["victim" => $c->load("victim"), "carrier" => $c->load("carrier"), "e0" => $c->load("e0") === $P["e0"],
        "verify" => $c->verify()]);
', ['dir' => $dir, 'e0' => $vals['e0'][0]]);
tc_check('a record image inside a value never passes for a record',
    $setup && strlen($image) === 64 && tc_ok($h) && $h['result'] === true && $coff !== null && ($coff + 56) % 8 === 0
    && tc_ok($h2) && $h2['result']['victim'] === false && $h2['result']['carrier'] === false
    && $h2['result']['e0'] === true && $h2['result']['verify'] === [], [tc_describe($h), tc_describe($h2), $coff]);
?>
--CLEAN--
<?php
require __DIR__ . '/util.inc';
tc_clean_tmpdirs('f103');
?>
--EXPECT--
a flipped byte in the value: the damage landed in the record the index uses: ok
a flipped byte in the value: a miss for that entry only, a consistent index after, saves work: ok
a flipped byte in the value: counted as a damaged record: ok
a flipped byte in the value: a rebuild from the logs agrees: ok
a flipped byte in the header (vlen): the damage landed in the record the index uses: ok
a flipped byte in the header (vlen): a miss for that entry only, a consistent index after, saves work: ok
a flipped byte in the header (vlen): counted as a damaged record: ok
a flipped byte in the header (vlen): a rebuild from the logs agrees: ok
a flipped byte in the key: the damage landed in the record the index uses: ok
a flipped byte in the key: a miss for that entry only, a consistent index after, saves work: ok
a flipped byte in the key: counted as a damaged record: ok
a flipped byte in the key: a rebuild from the logs agrees: ok
a flipped byte in a tag name: the damage landed in the record the index uses: ok
a flipped byte in a tag name: a miss for that entry only, a consistent index after, saves work: ok
a flipped byte in a tag name: counted as a damaged record: ok
a flipped byte in a tag name: a rebuild from the logs agrees: ok
an absurd value length: the damage landed in the record the index uses: ok
an absurd value length: a miss for that entry only, a consistent index after, saves work: ok
an absurd value length: counted as a damaged record: ok
an absurd value length: a rebuild from the logs agrees: ok
an absurd key length: the damage landed in the record the index uses: ok
an absurd key length: a miss for that entry only, a consistent index after, saves work: ok
an absurd key length: counted as a damaged record: ok
an absurd key length: a rebuild from the logs agrees: ok
a zeroed header: the damage landed in the record the index uses: ok
a zeroed header: a miss for that entry only, a consistent index after, saves work: ok
a zeroed header: counted as a damaged record: ok
a zeroed header: a rebuild from the logs agrees: ok
a log cut inside its last record: that entry is a miss, the rest intact: ok
a log cut to 10 bytes: its entries are misses, the others intact, the store works: ok
garbage appended to the active log: ignored: ok
garbage appended to a log: a rebuild ignores it too: ok
a record image inside a value never passes for a record: ok
