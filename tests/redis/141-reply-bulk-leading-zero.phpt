--TEST--
A bulk length with a leading zero ("$012"): a protocol error, whether the header arrives whole (the direct reader) or in pieces (hiredis' reader)
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

$small = record('hello');
/* Until 2026-12-01 the direct reader (bulk_header) took "$0<n>" as <n>
 * when the header came in one read, while hiredis' reader (the header in
 * pieces) refuses it: the same bytes gave a value or an error depending on
 * how they arrived (found by tests/c/fuzz_redis_reply). */
$lz = '$0' . strlen($small) . "\r\n" . $small . "\r\n";
$scenarios = [
    'a leading zero, the header whole' => [$lz],
    'a leading zero, the header in pieces' => ['$0', substr($lz, 2)],
    'an empty string as "$00"' => ["\$00\r\n\r\n"],
    'the same record without the zero' => [substr($lz, 0, 1) . substr($lz, 2)],
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
a leading zero, the header whole: ConnectionException: HOST:PORT: protocol error: Bad bulk string length, connection dropped
a leading zero, the header in pieces: ConnectionException: HOST:PORT: protocol error: Bad bulk string length, connection dropped
an empty string as "$00": ConnectionException: HOST:PORT: protocol error: Bad bulk string length, connection dropped
the same record without the zero: 'hello'
ok: the fake server went through its plan
done
