--TEST--
one address grammar, IPv6: "[::1]:port", a bare "::1" with the port option, [host, port] arrays
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
$s = @stream_socket_server('tcp://[::1]:0', $errno, $errstr);
if (!$s) die("skip the kernel has no IPv6 loopback [::1] here: $errstr");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/redis.inc';

$srv = tcr_start('addr6', ['--bind' => '127.0.0.1 ::1']);
$port = $srv['port'];

function reaches(string $label, array $opts, int $port): void
{
    static $n = 0;
    $id = 'a' . ++$n;
    try {
        $b = new TagCache\Redis($opts + ['on_error' => 'exception', 'timeout' => 5]);
        $ok = $b->save("v$id", $id, ['T']) && $b->load($id) === "v$id";
        tcr_check($ok && tcr_cmd($port, 'EXISTS', "tc:{0}e:$id") === 1, $label);
    } catch (Throwable $e) {
        tcr_check(false, $label, get_class($e) . ': ' . $e->getMessage());
    }
}

reaches('[::1]:port', ['server' => "[::1]:$port"], $port);
reaches('tcp://[::1]:port', ['server' => "tcp://[::1]:$port"], $port);
reaches('::1 and the port option', ['server' => '::1', 'port' => $port], $port);
reaches('[::1] and the port option', ['server' => '[::1]', 'port' => $port], $port);
reaches("['::1', port]", ['server' => ['::1', $port]], $port);
reaches("['host' => '::1', 'port' => port, 'weight' => 1]", ['server' => [['host' => '::1', 'port' => $port, 'weight' => 1]]], $port);
try {
    $b = new TagCache\Redis(['server' => '[::1]:1', 'on_error' => 'exception', 'timeout' => 1, 'connect_retries' => 1]);
    $b->load('x');
    tcr_check(false, 'a dead IPv6 server is named in brackets');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), '[::1]:1'), 'a dead IPv6 server is named in brackets', $e->getMessage());
}
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: [::1]:port
ok: tcp://[::1]:port
ok: ::1 and the port option
ok: [::1] and the port option
ok: ['::1', port]
ok: ['host' => '::1', 'port' => port, 'weight' => 1]
ok: a dead IPv6 server is named in brackets
