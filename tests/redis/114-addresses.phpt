--TEST--
one address grammar: "server" as a string, a list or an array (Zend's [host, port, weight], Magento's nodes), URLs, a unix socket
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
$srv = tcr_start('addr', ['--unixsocket' => $sock, '--unixsocketperm' => '700']);
$port = $srv['port'];

/* a save through the address; the key must then be on the server */
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

function refused(string $label, array $opts, string $needle): void
{
    try {
        new TagCache\Redis($opts + ['on_error' => 'exception']);
        tcr_check(false, $label, 'accepted');
    } catch (TagCache\ConfigurationException $e) {
        tcr_check(str_contains($e->getMessage(), $needle), $label, $e->getMessage());
    }
}

echo "# strings\n";
reaches('host and the port option', ['server' => '127.0.0.1', 'port' => $port], $port);
reaches('host:port', ['server' => "127.0.0.1:$port"], $port);
reaches('tcp://host:port', ['server' => "tcp://127.0.0.1:$port"], $port);
reaches('redis://host:port/db (the database option selects the database)', ['server' => "redis://127.0.0.1:$port/5"], $port);
reaches('host:port:weight (the weight is ignored)', ['server' => "127.0.0.1:$port:3"], $port);
reaches('blanks around the address', ['server' => " 127.0.0.1:$port\t"], $port);

echo "# arrays\n";
reaches('[host, port] (Zend)', ['server' => ['127.0.0.1', $port]], $port);
reaches('[host, port, weight] as strings', ['server' => ['127.0.0.1', (string) $port, '1']], $port);
reaches("['host' => ..., 'port' => ...]", ['server' => ['host' => '127.0.0.1', 'port' => (string) $port]], $port);
reaches('a list of one node (Magento <server> node)', ['server' => ['server1' => ['host' => '127.0.0.1', 'port' => (string) $port, 'weight' => '1']]], $port);
reaches('a list of one string', ['server' => ["127.0.0.1:$port"]], $port);

echo "# a unix socket\n";
reaches('/path', ['server' => $sock], $port);
reaches('unix:///path', ['server' => "unix://$sock"], $port);
reaches("['host' => '/path', 'port' => 0]", ['server' => [['host' => $sock, 'port' => 0]]], $port);
reaches('unix:///path with a port option (not used)', ['server' => "unix://$sock", 'port' => 1], $port);

echo "# lists\n";
refused('"h1:p1,h2:p2" is read as two servers (a list needs sentinels or a cluster)', ['server' => "127.0.0.1:$port,127.0.0.1:1"], 'names 2 servers');
refused('";" and blanks separate servers too', ['server' => "127.0.0.1:$port; 127.0.0.1:1 127.0.0.1:2"], 'names 3 servers');
refused('a list of arrays', ['server' => [['127.0.0.1', $port], ['host' => '127.0.0.1', 'port' => 1]]], 'names 2 servers');
reaches('empty items are skipped', ['server' => ",127.0.0.1:$port,"], $port);

echo "# bad addresses: a clear error\n";
refused('port 0', ['server' => '127.0.0.1:0'], 'bad port');
refused('port 65536', ['server' => '127.0.0.1:65536'], 'bad port');
refused('a port that is no number', ['server' => '127.0.0.1:redis'], 'bad port');
refused('a bad weight', ['server' => "127.0.0.1:$port:x"], 'bad weight');
refused('an IPv6 address without its ]', ['server' => '[::1:6379'], 'lacks the ]');
refused('a relative unix socket path', ['server' => 'unix://redis.sock'], 'must be absolute');
refused('a socket path longer than sun_path', ['server' => '/' . str_repeat('s', 120)], 'shorter than 108');
refused('no host', ['server' => ':6379'], 'names no host');
refused('an empty list', ['server' => ' , '], 'names no server');
refused('an array without a host', ['server' => [['port' => $port]]], 'must be a list of servers');
refused('load_from_slave takes the grammar and names itself', ['server' => "127.0.0.1:$port", 'load_from_slave' => '127.0.0.1:0'], 'Option "load_from_slave": bad port');
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
# strings
ok: host and the port option
ok: host:port
ok: tcp://host:port
ok: redis://host:port/db (the database option selects the database)
ok: host:port:weight (the weight is ignored)
ok: blanks around the address
# arrays
ok: [host, port] (Zend)
ok: [host, port, weight] as strings
ok: ['host' => ..., 'port' => ...]
ok: a list of one node (Magento <server> node)
ok: a list of one string
# a unix socket
ok: /path
ok: unix:///path
ok: ['host' => '/path', 'port' => 0]
ok: unix:///path with a port option (not used)
# lists
ok: "h1:p1,h2:p2" is read as two servers (a list needs sentinels or a cluster)
ok: ";" and blanks separate servers too
ok: a list of arrays
ok: empty items are skipped
# bad addresses: a clear error
ok: port 0
ok: port 65536
ok: a port that is no number
ok: a bad weight
ok: an IPv6 address without its ]
ok: a relative unix socket path
ok: a socket path longer than sun_path
ok: no host
ok: an empty list
ok: an array without a host
ok: load_from_slave takes the grammar and names itself
