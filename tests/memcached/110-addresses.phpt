--TEST--
one address grammar: "servers" (and "server") as a string, a list or an array (Zend's [host, port, weight], Magento's <server> nodes), a unix socket
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';

$s1 = tcm_start('one');
$s2 = tcm_start('two');
$sock = tcr_dir() . '/mc.sock';
tcm_start('unix', null, [], $sock);
$p1 = $s1['port'];
$p2 = $s2['port'];

/* saves through the address; each key must be on one of the servers at $at */
function reaches(string $label, array $opts, array $at): void
{
    static $n = 0;
    $ids = [];
    try {
        $b = new TagCache\Memcached($opts + ['on_error' => 'exception', 'timeout' => 5]);
        $ok = true;
        for ($i = 0; $i < 20; $i++) {
            $id = 'a' . ++$n;
            $ids[] = $id;
            $ok = $ok && $b->save("v$id", $id, ['T']) && $b->load($id) === "v$id";
        }
        $where = [];
        foreach ($ids as $id) {
            foreach ($at as $a) {
                if (tcm_holds($a, $id)) {
                    $where[$a] = true;
                }
            }
        }
        tcr_check($ok && count($where) === count($at), $label, json_encode(array_keys($where)));
    } catch (Throwable $e) {
        tcr_check(false, $label, get_class($e) . ': ' . $e->getMessage());
    }
}

function refused(string $label, array $opts, string $needle): void
{
    try {
        $b = new TagCache\Memcached($opts + ['on_error' => 'exception']);
        $b->load('x');
        tcr_check(false, $label, 'accepted');
    } catch (TagCache\ConfigurationException $e) {
        tcr_check(str_contains($e->getMessage(), $needle), $label, $e->getMessage());
    }
}

echo "# strings\n";
reaches('host and the port option', ['servers' => '127.0.0.1', 'port' => $p1], [$p1]);
reaches('"server" is the same option', ['server' => "127.0.0.1:$p1"], [$p1]);
reaches('tcp://host:port:weight', ['servers' => "tcp://127.0.0.1:$p1:2"], [$p1]);
reaches('"h1:p1,h2:p2"', ['servers' => "127.0.0.1:$p1,127.0.0.1:$p2"], [$p1, $p2]);
reaches('";" and blanks separate servers, empty items skipped', ['servers' => "127.0.0.1:$p1:1 ; 127.0.0.1:$p2:1,"], [$p1, $p2]);

echo "# arrays\n";
reaches('[host, port] (one server)', ['servers' => ['127.0.0.1', $p1]], [$p1]);
reaches('[[host, port, weight], ...] (Zend)', ['servers' => [['127.0.0.1', $p1, 1], ['127.0.0.1', (string) $p2, '2']]], [$p1, $p2]);
reaches("['host' => ..., 'port' => ...] (one server)", ['servers' => ['host' => '127.0.0.1', 'port' => $p1]], [$p1]);
reaches('Magento <server> nodes', ['servers' => [
    'server1' => ['host' => '127.0.0.1', 'port' => (string) $p1, 'persistent' => '1', 'weight' => '1'],
    'server2' => ['host' => '127.0.0.1', 'port' => (string) $p2, 'persistent' => '1', 'weight' => '1']]], [$p1, $p2]);
reaches('a list of strings', ['servers' => ["127.0.0.1:$p1", "127.0.0.1:$p2"]], [$p1, $p2]);

echo "# a unix socket\n";
reaches('/path', ['servers' => $sock], ["unix://$sock"]);
reaches('unix:///path', ['server' => "unix://$sock"], ["unix://$sock"]);
reaches("['host' => '/path', 'port' => 0] (Zend's unix socket form)", ['servers' => [['host' => $sock, 'port' => 0, 'weight' => 1]]], ["unix://$sock"]);
reaches('a socket and a TCP server in one list', ['servers' => "$sock,127.0.0.1:$p1"], ["unix://$sock", $p1]);

echo "# bad addresses: a clear error\n";
refused('port 0', ['servers' => '127.0.0.1:0'], 'bad port');
refused('a port that is no number', ['servers' => '127.0.0.1:mc'], 'bad port');
refused('a bad weight', ['servers' => "127.0.0.1:$p1:-1"], 'bad weight');
refused('an IPv6 address without its ]', ['servers' => '[::1:11211'], 'lacks the ]');
refused('a relative unix socket path', ['servers' => 'unix://mc.sock'], 'must be absolute');
refused('no host', ['servers' => ':11211'], 'names no host');
refused('an empty list', ['servers' => ' ; '], 'names no server');
refused('an array port that is no number', ['servers' => [['127.0.0.1', 'x']]], 'must be a list of servers');
refused('on_error is checked as on TagCache\Redis', ['servers' => "127.0.0.1:$p1", 'on_error' => 'ignore'], 'Option "on_error" must be "miss" or "exception"');
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
# strings
ok: host and the port option
ok: "server" is the same option
ok: tcp://host:port:weight
ok: "h1:p1,h2:p2"
ok: ";" and blanks separate servers, empty items skipped
# arrays
ok: [host, port] (one server)
ok: [[host, port, weight], ...] (Zend)
ok: ['host' => ..., 'port' => ...] (one server)
ok: Magento <server> nodes
ok: a list of strings
# a unix socket
ok: /path
ok: unix:///path
ok: ['host' => '/path', 'port' => 0] (Zend's unix socket form)
ok: a socket and a TCP server in one list
# bad addresses: a clear error
ok: port 0
ok: a port that is no number
ok: a bad weight
ok: an IPv6 address without its ]
ok: a relative unix socket path
ok: no host
ok: an empty list
ok: an array port that is no number
ok: on_error is checked as on TagCache\Redis
