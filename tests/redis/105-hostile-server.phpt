--TEST--
A hostile or broken server (huge lengths, deep nesting, garbage, stalls): bounded memory, a protocol error, no crash
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason([])) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

/* Each connection to the fake server gets the next scenario: a reply to
 * whatever command comes first. */
$scenarios = [
    'huge bulk length, then 200 MB of data' => ['stream', "\$1073741824\r\n"],
    'array of 2^31-1 elements' => ['send', "*2147483647\r\n"],
    'nested arrays of 4M elements each' => ['send', "*4000000\r\n*4000000\r\n*4000000\r\n"],
    'arrays nested 50 deep' => ['send', str_repeat("*1\r\n", 50) . ":1\r\n"],
    'an unknown reply type' => ['send', "?what is this\r\n"],
    'an integer that overflows' => ['send', ":99999999999999999999999999999\r\n"],
    'a negative bulk length' => ['send', "\$-7\r\n"],
    'a string that is not an entry record' => ['send', "\$5\r\nhello\r\n"],
    'a record announcing 4 GB once decompressed' => ['record', 0xFFFFFFF0, 1],
    'a record whose tag list runs past its end' => ['record', 10, 0, 0x7FFFFFFF],
    'a record whose compressed data is garbage' => ['record', 1000, 1],
    'closing without a reply' => ['close', ''],
    'half a reply, then silence' => ['stall', "\$10\r\nabc"],
    'an error reply that repeats the password' => ['send', "-ERR invalid password Pw-s3cret-1234 for you\r\n"],
];

$port = tcr_free_port();
$plan = [];
foreach ($scenarios as $name => $sc) {
    if ($sc[0] === 'record') {
        // version 1, codec, expire (far), mtime, tag list length, raw length; then a few bytes
        $rec = chr(1) . chr($sc[2]) . pack('e', 9999999999.0) . pack('e', 1.0) . pack('V', $sc[3] ?? 0)
            . pack('V', $sc[1]) . str_repeat("\x1f\x8b garbage", 8);
        $sc = ['send', '$' . strlen($rec) . "\r\n" . $rec . "\r\n"];
    }
    $plan[] = [$sc[0], base64_encode($sc[1])];
}
file_put_contents(tcr_dir() . '/plan.json', json_encode(['port' => $port, 'plan' => $plan]));

$fake = tcr_spawn(<<<'PHP'
$cfg = json_decode(file_get_contents(getenv('TCR_PLAN')), true);
$srv = stream_socket_server('tcp://127.0.0.1:' . $cfg['port'], $errno, $errstr);
echo "listening\n";
fflush(STDOUT);
foreach ($cfg['plan'] as [$kind, $payload]) {
    $c = @stream_socket_accept($srv, 20);
    if (!$c) {
        break;
    }
    stream_set_timeout($c, 5);
    $req = fread($c, 65536);     // the first command, whatever it is
    if ($kind === 'close') {
        fclose($c);
        continue;
    }
    @fwrite($c, base64_decode($payload));
    if ($kind === 'stream') {
        $chunk = str_repeat('x', 65536);
        for ($sent = 0; $sent < 200 << 20; $sent += 65536) {
            if (@fwrite($c, $chunk) === false) {
                break;   // the client hung up
            }
        }
    }
    if ($kind === 'stall') {
        $keep[] = $c;   // left open, silent
        continue;
    }
    @fclose($c);
}
PHP, ['TCR_PLAN' => tcr_dir() . '/plan.json']);
$r = [$fake[1][1]];
$w = $x = null;
tcr_check(stream_select($r, $w, $x, 10) === 1 && trim((string) fgets($fake[1][1])) === 'listening', 'the fake server listens');

function peak_kb(): int
{
    preg_match('/VmHWM:\s+(\d+)/', (string) file_get_contents('/proc/self/status'), $m);
    return (int) $m[1];
}
$peak0 = peak_kb();
$names = array_keys($scenarios);
$results = [];
foreach ($names as $k => $name) {
    $b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'on_error' => 'exception',
        'verify_tags' => 0, 'read_timeout' => 0.5, 'max_value_size' => '1M', 'retry_interval' => 0,
        'password' => $k === count($names) - 1 ? 'Pw-s3cret-1234' : '']);
    try {
        $r = $b->load('k');
        $results[$name] = 'returned ' . var_export($r, true);
    } catch (TagCache\ConnectionException $e) {
        $results[$name] = 'ConnectionException: ' . preg_replace('/127\.0\.0\.1:\d+/', 'HOST:PORT', $e->getMessage());
    }
}
foreach ($results as $name => $what) {
    echo "$name: $what\n";
}
$grown = peak_kb() - $peak0;
tcr_check($grown < 80 * 1024, 'peak memory grew by less than 80 MB over all the scenarios', "$grown KB");
$out = tcr_wait($fake, 30);
tcr_check(!$out['timed_out'], 'the fake server went through its plan', $out['err']);
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: the fake server listens
huge bulk length, then 200 MB of data: ConnectionException: HOST:PORT: reply larger than 16777216 bytes, connection dropped
array of 2^31-1 elements: ConnectionException: HOST:PORT: reply too large (more than 4194304 array elements), connection dropped
nested arrays of 4M elements each: ConnectionException: HOST:PORT: reply too large (more than 4194304 array elements), connection dropped
arrays nested 50 deep: ConnectionException: HOST:PORT: protocol error: No support for nested multi bulk replies with depth > 7, connection dropped
an unknown reply type: ConnectionException: HOST:PORT: protocol error: Protocol error, got "?" as reply type byte, connection dropped
an integer that overflows: ConnectionException: HOST:PORT: protocol error: Bad integer value, connection dropped
a negative bulk length: ConnectionException: HOST:PORT: protocol error: Bulk string length out of range, connection dropped
a string that is not an entry record: returned false
a record announcing 4 GB once decompressed: returned false
a record whose tag list runs past its end: returned false
a record whose compressed data is garbage: returned false
closing without a reply: ConnectionException: HOST:PORT: connection closed by the server
half a reply, then silence: ConnectionException: HOST:PORT: read timeout after 0.5 s, connection dropped
an error reply that repeats the password: ConnectionException: HOST:PORT: authentication failed: ERR invalid password *** for you
ok: peak memory grew by less than 80 MB over all the scenarios
ok: the fake server went through its plan
done
