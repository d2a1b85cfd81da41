--TEST--
Cm_Cache_Backend_Redis options as Magento passes them, compression, namespaces and the scoped flush, unix socket and database, tag metadata that expires with its entries
--EXTENSIONS--
tagcache
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

$sock = tcr_dir() . '/redis.sock';
$srv = tcr_start('opts', ['--unixsocket' => $sock, '--unixsocketperm' => '700']);
$port = $srv['port'];

echo "# a Cm local.xml block: every value a string\n";
$cm = [
    'server' => '127.0.0.1', 'port' => (string) $port, 'persistent' => '', 'database' => '2',
    'password' => '', 'force_standalone' => '0', 'connect_retries' => '1', 'read_timeout' => '10',
    'automatic_cleaning_factor' => '0', 'compress_data' => '1', 'compress_tags' => '1',
    'compress_threshold' => '20480', 'compression_lib' => 'gzip', 'use_lua' => '0',
    'lifetimelimit' => '57600', 'notMatchingTags' => '1', 'sunion_chunk_size' => '500',
    'remove_chunk_size' => '10000', 'timeout' => '2.5', 'load_from_slave' => '', 'retry_reads_on_master' => '0',
];
$b = new TagCache\Redis($cm);
tcr_same(true, $b->save('cm data', 'cm', ['MAGE', 'CONFIG']), 'the Cm options are accepted and the backend works');
$fp = stream_socket_client("tcp://127.0.0.1:$port");
fwrite($fp, tcr_resp_encode(['SELECT', '2']) . tcr_resp_encode(['EXISTS', 'tc:{0}e:cm']));
tcr_resp_read($fp);
tcr_same(1, tcr_resp_read($fp), "database '2' is used");
fclose($fp);
tcr_same(0, tcr_cmd($port, 'DBSIZE'), 'database 0 is untouched');
$t0 = time();
$b->save('long', 'long', [], 86400 * 30);
$m = $b->getMetadatas('long');
tcr_check($m['expire'] >= $t0 + 57600 && $m['expire'] <= time() + 57600, 'lifetimelimit caps a lifetime of 30 days at 57600 s', json_encode($m));
$b->save('forever', 'forever', [], null);
tcr_same(9999999999, $b->getMetadatas('forever')['expire'], 'lifetimelimit leaves infinite lifetimes infinite');
tcr_same(10.0, $b->getOption('read_timeout'), "getOption('read_timeout')");
tcr_same(2, $b->getOption('database'), "getOption('database') is coerced to an int");

echo "# compression\n";
// The codecs are optional (configure finds zlib, liblz4, libzstd; or
// --without-tagcache-lz4/zstd): each name must give the codec this build
// has for it, or a clear refusal when the build has none. The build's list
// is the one phpinfo() prints.
ob_start();
(new ReflectionExtension('tagcache'))->info();
$built = preg_match('/^Redis backend => .*compression: ?(.*)$/m', ob_get_clean(), $m) ? preg_split('/\s+/', trim($m[1])) : [];
$codec = ['gzip' => in_array('gzip', $built, true) ? 1 : null, 'lz4' => in_array('lz4', $built, true) ? 2 : null,
    'zstd' => in_array('zstd', $built, true) ? 3 : null];
$best = $codec['zstd'] ?? $codec['lz4'] ?? $codec['gzip'] ?? 0;   // what '' (and snappy, lzf) pick
$big = str_repeat("<div class=\"product\">Magento block HTML, repetitive enough to compress</div>\n", 1000);
$plain = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'cz:', 'compress_data' => 0]);
foreach (['gzip' => $codec['gzip'], 'lz4' => $codec['lz4'], 'l4z' => $codec['lz4'], 'zstd' => $codec['zstd'],
          'snappy' => $best, 'lzf' => $best, '' => $best] as $lib => $want) {
    $opts = ['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'cz:', 'compress_data' => '1',
        'compress_threshold' => '1000', 'compression_lib' => $lib];
    // one label for every build: what is checked depends on the build
    $label = "compression_lib '$lib': the codec this build has for it (stored compressed, loads back, "
        . 'a backend without compression reads it), or a refusal when the build has none';
    if ($want === null) {
        try {
            new TagCache\Redis($opts);
            $why = 'accepted';
        } catch (TagCache\ConfigurationException $e) {
            $why = $e->getMessage();
        }
        tcr_check(str_contains($why, 'is not available in this build'), $label, $why);
        continue;
    }
    $c = new TagCache\Redis($opts);
    $c->save($big, "big-$lib", ['z']);
    $raw = tcr_cmd($port, 'GET', "cz:{0}e:big-$lib");
    $got = is_string($raw) ? ord($raw[1]) : null;
    $back = $c->load("big-$lib");
    $other = $plain->load("big-$lib");
    tcr_check($got === $want && ($want === 0 || strlen($raw) < strlen($big) / 4) && $back === $big && $other === $big, $label,
        "codec $want expected, " . (is_string($raw) ? "codec $got, " . strlen($raw) . ' bytes stored' : 'missing')
        . ', load ' . ($back === $big ? 'ok' : 'wrong') . ', plain load ' . ($other === $big ? 'ok' : 'wrong'));
}
$c = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'cz:', 'compress_threshold' => '1000']);
$c->save('short value', 'small', []);
tcr_same(0, ord(tcr_cmd($port, 'GET', 'cz:{0}e:small')[1]), 'a value under compress_threshold is stored plain');
$plain->save($big, 'plainbig', []);
tcr_same($big, $c->load('plainbig'), 'a compressing backend reads plain values');
$rnd = random_bytes(50000);
$c->save($rnd, 'random', []);
tcr_same(0, ord(tcr_cmd($port, 'GET', 'cz:{0}e:random')[1]), 'a value that does not compress is stored plain');
tcr_same($rnd, $c->load('random'), 'and loads back');
// a record that claims to expand to 512 MB: a miss, not an allocation
$rec = tcr_cmd($port, 'GET', 'cz:{0}e:big-gzip');
tcr_cmd($port, 'SET', 'cz:{0}e:bomb', substr($rec, 0, 22) . pack('V', 512 << 20) . substr($rec, 26));
$before = memory_get_peak_usage();
tcr_same(false, $c->load('bomb'), 'a record announcing 512 MB (max_value_size 64M) is a miss');
tcr_check(memory_get_peak_usage() - $before < 1 << 20, 'and nothing big was allocated');
tcr_cmd($port, 'SET', 'cz:{0}e:bomb', substr($rec, 0, 22) . pack('V', strlen($big) + 1) . substr($rec, 26));
tcr_same(false, $c->load('bomb'), 'a record whose data does not expand to its announced length is a miss');
tcr_same(1, $c->stats()['bad_records'] >= 2 ? 1 : 0, 'stats() counts the bad records');
try {
    new TagCache\Redis(['compression_lib' => 'brotli']);
    tcr_check(false, 'an unknown compression_lib is refused');
} catch (TagCache\ConfigurationException $e) {
    tcr_check(str_contains($e->getMessage(), 'compression_lib'), 'an unknown compression_lib: ConfigurationException');
}

echo "# namespaces: clean('all') is scoped, never FLUSHDB\n";
tcr_cmd($port, 'SET', 'session:abc', 'a PHP session');
tcr_cmd($port, 'SET', 'tc:{0}e', 'not ours either');
$a1 = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'app1:']);
$a2 = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'app2:']);
for ($i = 0; $i < 50; $i++) {
    $a1->save("one $i", "id$i", ['MAGE', "t$i"]);
    $a2->save("two $i", "id$i", ['MAGE', "t$i"]);
}
tcr_same(50, count($a1->getIds()), 'app1 sees its 50 ids');
tcr_same('two 7', $a2->load('id7'), 'the same id in app2 is app2\'s');
tcr_same(true, $a1->clean('all'), "app1 clean('all')");
tcr_same([], $a1->getIds(), 'app1 is empty');
tcr_same([], $a1->getTags(), 'app1 has no tags');
tcr_same(50, count($a2->getIds()), 'app2 still has its 50 ids');
tcr_same('a PHP session', tcr_cmd($port, 'GET', 'session:abc'), 'a key of another application survives');
tcr_same('not ours either', tcr_cmd($port, 'GET', 'tc:{0}e'), 'a look-alike key survives');
tcr_same([], tcr_cmd($port, 'KEYS', 'app1:*'), 'no key of app1 is left');
try {
    new TagCache\Redis(['prefix' => 'bad{prefix}']);
    tcr_check(false, 'a prefix with braces is refused');
} catch (TagCache\ConfigurationException $e) {
    tcr_check(true, 'a prefix with braces (cluster hash tags) is refused');
}

echo "# unix socket\n";
$u = new TagCache\Redis(['server' => $sock, 'prefix' => 'unix:', 'on_error' => 'exception']);
tcr_same(true, $u->save('via socket', 'u', ['t']), 'save through the unix socket');
tcr_same('via socket', (new TagCache\Redis(['server' => "unix://$sock", 'prefix' => 'unix:']))->load('u'), 'unix:// form');
tcr_same('via socket', tcr_cmd($port, 'GET', 'unix:{0}e:u') !== null ? 'via socket' : null, 'same server');

echo "# tag metadata expires with the entries (no orphans, no clean('old'))\n";
$x = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'exp:', 'grace' => 0]);
for ($i = 0; $i < 30; $i++) {
    $x->save("short $i", "s$i", ['MAGE', 'T' . ($i % 4)], 1);
}
$x->save('longer', 'l', ['MAGE', 'OTHER'], 3600);
$x->remove('l');
tcr_check(count(tcr_cmd($port, 'KEYS', 'exp:*')) > 30, 'entries, tag keys, id index and tag registry exist');
$gone = false;
for ($i = 0; $i < 250 && !$gone; $i++) {
    usleep(100000);
    $gone = tcr_cmd($port, 'KEYS', 'exp:*') === [];
}
tcr_check($gone, 'a few seconds after the entries expire, not one key of the namespace is left', json_encode(tcr_cmd($port, 'KEYS', 'exp:*')));

echo "# verify() reports what it finds\n";
$v = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'prefix' => 'ver:']);
$v->save('x', 'e1', ['ta', 'tb']);
tcr_same([], $v->verify(), 'verify() of a sound store is []');
tcr_cmd($port, 'ZREM', 'ver:{0}t:tb', 'e1');
$p = $v->verify();
tcr_check(count($p) === 1 && str_contains($p[0], 'no link in tag tb'), 'a removed link is reported', json_encode($p));

echo "# configuration errors\n";
foreach ([
    ['on_error' => 'ignore'],
    ['verify_tags' => 'sometimes'],
    ['server' => '127.0.0.1:1,127.0.0.1:2'],
    ['server' => ''],
    ['server' => 'host:99999'],
    ['cluster' => 1, 'database' => 3],
    ['port' => 0],
    ['connect_retries' => 0],
] as $bad) {
    try {
        new TagCache\Redis($bad);
        tcr_check(false, 'refused: ' . json_encode($bad));
    } catch (TagCache\ConfigurationException $e) {
        tcr_check(true, 'ConfigurationException: ' . json_encode($bad));
    }
}
$o = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port]);
try {
    $o->setOption('on_error', 'sometimes');
    tcr_check(false, "setOption('on_error', 'sometimes') is refused");
} catch (TagCache\ConfigurationException $e) {
    tcr_check(true, "setOption('on_error', 'sometimes') is refused");
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# a Cm local.xml block: every value a string
ok: the Cm options are accepted and the backend works
ok: database '2' is used
ok: database 0 is untouched
ok: lifetimelimit caps a lifetime of 30 days at 57600 s
ok: lifetimelimit leaves infinite lifetimes infinite
ok: getOption('read_timeout')
ok: getOption('database') is coerced to an int
# compression
ok: compression_lib 'gzip': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib 'lz4': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib 'l4z': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib 'zstd': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib 'snappy': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib 'lzf': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: compression_lib '': the codec this build has for it (stored compressed, loads back, a backend without compression reads it), or a refusal when the build has none
ok: a value under compress_threshold is stored plain
ok: a compressing backend reads plain values
ok: a value that does not compress is stored plain
ok: and loads back
ok: a record announcing 512 MB (max_value_size 64M) is a miss
ok: and nothing big was allocated
ok: a record whose data does not expand to its announced length is a miss
ok: stats() counts the bad records
ok: an unknown compression_lib: ConfigurationException
# namespaces: clean('all') is scoped, never FLUSHDB
ok: app1 sees its 50 ids
ok: the same id in app2 is app2's
ok: app1 clean('all')
ok: app1 is empty
ok: app1 has no tags
ok: app2 still has its 50 ids
ok: a key of another application survives
ok: a look-alike key survives
ok: no key of app1 is left
ok: a prefix with braces (cluster hash tags) is refused
# unix socket
ok: save through the unix socket
ok: unix:// form
ok: same server
# tag metadata expires with the entries (no orphans, no clean('old'))
ok: entries, tag keys, id index and tag registry exist
ok: a few seconds after the entries expire, not one key of the namespace is left
# verify() reports what it finds
ok: verify() of a sound store is []
ok: a removed link is reported
# configuration errors
ok: ConfigurationException: {"on_error":"ignore"}
ok: ConfigurationException: {"verify_tags":"sometimes"}
ok: ConfigurationException: {"server":"127.0.0.1:1,127.0.0.1:2"}
ok: ConfigurationException: {"server":""}
ok: ConfigurationException: {"server":"host:99999"}
ok: ConfigurationException: {"cluster":1,"database":3}
ok: ConfigurationException: {"port":0}
ok: ConfigurationException: {"connect_retries":0}
ok: setOption('on_error', 'sometimes') is refused
done
