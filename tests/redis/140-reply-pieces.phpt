--TEST--
A load's reply read without hiredis' buffers: a record in pieces, one larger than a read, a bad trailer, nil, a cut: the value or a clean failure
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

/* An entry record (version 2, no codec, no tags) holding $value. */
function record(string $value): string
{
    return chr(2) . chr(0) . pack('e', 65536.0) . pack('e', 1.0) . pack('V', 0) . pack('V', strlen($value))
        . pack('e', 9999999999.0) . $value;
}
function bulk(string $s): string
{
    return '$' . strlen($s) . "\r\n" . $s . "\r\n";
}

$small = record('hello, world');
$big = record(str_repeat('0123456789abcdef', 6250));   // 100,000 bytes: more than one read
/* Each connection gets the next scenario: pieces written one by one, the
 * server pausing between them so that they tend to arrive apart (the
 * result must be the same however they arrive). */
$scenarios = [
    'the header cut after "$"' => ['$', substr(bulk($small), 1)],
    'the header cut in its digits' => ['$4', substr(bulk($small), 2)],
    'the value cut in two, the CRLF apart' => [substr(bulk($small), 0, 20), substr(bulk($small), 20, -2), "\r\n"],
    'a record of 100,000 bytes at once' => [bulk($big)],
    'a record of 100,000 bytes in 1000-byte pieces' => str_split(bulk($big), 1000),
    'nil' => ["\$-1\r\n"],
    'an empty string' => ["\$0\r\n\r\n"],
    'a bulk string not followed by CRLF' => [substr(bulk($small), 0, -2) . 'XY'],
    'a bulk length of 25 digits' => ["\$1000000000000000000000000\r\n"],
    'the server closing in the middle of the value' => [substr(bulk($big), 0, 30000), 'close'],
];

$port = tcr_free_port();
$plan = [];
foreach ($scenarios as $name => $pieces) {
    $plan[] = array_map('base64_encode', $pieces);
}
file_put_contents(tcr_dir() . '/plan.json', json_encode(['port' => $port, 'plan' => $plan]));

$fake = tcr_spawn(<<<'PHP'
$cfg = json_decode(file_get_contents(getenv('TCR_PLAN')), true);
$srv = stream_socket_server('tcp://127.0.0.1:' . $cfg['port'], $errno, $errstr);
echo "listening\n";
fflush(STDOUT);
foreach ($cfg['plan'] as $pieces) {
    $c = @stream_socket_accept($srv, 20);
    if (!$c) {
        break;
    }
    stream_set_timeout($c, 5);
    fread($c, 65536);     // the first command, whatever it is
    $close = false;
    foreach ($pieces as $p) {
        $p = base64_decode($p);
        if ($p === 'close') {
            $close = true;
            break;
        }
        @fwrite($c, $p);
        fflush($c);
        if (count($pieces) > 1) {
            usleep(2000);
        }
    }
    if (!$close) {
        fread($c, 65536);     // until the client hangs up (or 5 s)
    }
    @fclose($c);
}
PHP, ['TCR_PLAN' => tcr_dir() . '/plan.json']);
$r = [$fake[1][1]];
$w = $x = null;
tcr_check(stream_select($r, $w, $x, 10) === 1 && trim((string) fgets($fake[1][1])) === 'listening', 'the fake server listens');

foreach (array_keys($scenarios) as $name) {
    $b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'on_error' => 'exception',
        'verify_tags' => 0, 'read_timeout' => 2, 'max_value_size' => '1M', 'retry_interval' => 0]);
    try {
        $v = $b->load('k');
        $what = $v === false ? 'false' : (strlen($v) > 20 ? strlen($v) . ' bytes, md5 ' . md5($v) : var_export($v, true));
    } catch (TagCache\ConnectionException $e) {
        $what = 'ConnectionException: ' . preg_replace('/127\.0\.0\.1:\d+/', 'HOST:PORT', $e->getMessage());
    }
    echo "$name: $what\n";
    unset($b);
}
echo 'the big value: md5 ', md5(str_repeat('0123456789abcdef', 6250)), "\n";
$out = tcr_wait($fake, 60);
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
the header cut after "$": 'hello, world'
the header cut in its digits: 'hello, world'
the value cut in two, the CRLF apart: 'hello, world'
a record of 100,000 bytes at once: 100000 bytes, md5 c9f2f7db06f1915bbf035eba63660b92
a record of 100,000 bytes in 1000-byte pieces: 100000 bytes, md5 c9f2f7db06f1915bbf035eba63660b92
nil: false
an empty string: false
a bulk string not followed by CRLF: ConnectionException: HOST:PORT: protocol error: bulk string not followed by CRLF, connection dropped
a bulk length of 25 digits: ConnectionException: HOST:PORT: protocol error: Bad bulk string length, connection dropped
the server closing in the middle of the value: ConnectionException: HOST:PORT: connection closed by the server
the big value: md5 c9f2f7db06f1915bbf035eba63660b92
ok: the fake server went through its plan
done