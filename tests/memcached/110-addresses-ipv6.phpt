--TEST--
one address grammar, IPv6: "[::1]:port:weight", a bare "::1" with the port option, [host, port, weight] arrays
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
$s = @stream_socket_server('tcp://[::1]:0', $errno, $errstr);
if (!$s) die("skip the kernel has no IPv6 loopback [::1] here: $errstr");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';

$srv = tcm_start('six', null, ['-l', '[::1]']);
$port = $srv['port'];

function reaches(string $label, array $opts, int $port): void
{
    static $n = 0;
    $id = 'a' . ++$n;
    try {
        $b = new TagCache\Memcached($opts + ['on_error' => 'exception', 'timeout' => 5]);
        $ok = $b->save("v$id", $id, ['T']) && $b->load($id) === "v$id";
        tcr_check($ok && tcm_holds("tcp://[::1]:$port", $id), $label);
    } catch (Throwable $e) {
        tcr_check(false, $label, get_class($e) . ': ' . $e->getMessage());
    }
}

reaches('[::1]:port', ['servers' => "[::1]:$port"], $port);
reaches('[::1]:port:weight', ['servers' => "[::1]:$port:2"], $port);
reaches('::1 and the port option', ['servers' => '::1', 'port' => $port], $port);
reaches("['::1', port]", ['servers' => ['::1', $port]], $port);
reaches("[['host' => '::1', 'port' => port, 'weight' => 1]]", ['servers' => [['host' => '::1', 'port' => $port, 'weight' => 1]]], $port);
reaches('an IPv6 and an IPv4 address of one server in one list', ['servers' => "[::1]:$port,127.0.0.1:$port"], $port);
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: [::1]:port
ok: [::1]:port:weight
ok: ::1 and the port option
ok: ['::1', port]
ok: [['host' => '::1', 'port' => port, 'weight' => 1]]
ok: an IPv6 and an IPv4 address of one server in one list
