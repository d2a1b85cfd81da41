--TEST--
Redis down at first use: miss or ConnectionException naming host:port, within connect timeout x retries
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

// A port nobody listens on: connection refused at once.
$port = tcr_free_port();
$opts = ['server' => '127.0.0.1', 'port' => (string) $port, 'timeout' => '0.5', 'connect_retries' => '2',
    'retry_interval' => '30', 'prefix' => 'down:'];

$b = new TagCache\Redis($opts);     // does not connect: constructing never fails on a dead server
tcr_check(true, 'the constructor does not connect');
$warnings = [];
set_error_handler(function ($no, $str) use (&$warnings) { $warnings[] = $str; return true; });
tcr_same(false, $b->load('id'), 'on_error=miss (default): load() is a miss');
tcr_same(false, $b->test('id'), 'test() is false');
tcr_same(false, $b->save('data', 'id', ['t']), 'save() is false');
tcr_same(false, $b->remove('id'), 'remove() is false');
tcr_same(false, $b->clean('matchingAnyTag', ['t']), 'clean() is false');
tcr_same([], $b->getIds(), 'getIds() is []');
tcr_same([], $b->getTags(), 'getTags() is []');
tcr_same(false, $b->getMetadatas('id'), 'getMetadatas() is false');
tcr_same(false, $b->touch('id', 10), 'touch() is false');
tcr_same([], $b->loadMany(['a', 'b']), 'loadMany() is []');
tcr_same(0, $b->getFillingPercentage(), 'getFillingPercentage() is 0');
restore_error_handler();
tcr_same([], $warnings, 'no PHP warning in miss mode (the failure goes to the error log)');
$s = $b->stats();
tcr_check(($s['errors'] ?? 0) >= 1, 'stats() counts the errors', json_encode($s));

$e = new TagCache\Redis($opts + ['on_error' => 'exception']);
foreach (['load' => fn() => $e->load('id'), 'save' => fn() => $e->save('d', 'id'),
          'clean' => fn() => $e->clean(), 'getIds' => fn() => $e->getIds(), 'stats' => fn() => $e->stats()] as $what => $fn) {
    try {
        $fn();
        tcr_check(false, "on_error=exception: $what() throws");
    } catch (TagCache\ConnectionException $x) {
        tcr_check(true, "on_error=exception: $what() throws TagCache\\ConnectionException");
        tcr_check(str_contains($x->getMessage(), "127.0.0.1:$port"), "  the message names 127.0.0.1:$port", $x->getMessage());
    }
}
tcr_check($e instanceof TagCache\Backend, 'still a usable object after the exceptions');

// A blackhole: a listener whose accept queue is full drops our SYNs, so
// connect() waits for its timeout; 3 attempts of 0.3 s.
$ctx = stream_context_create(['socket' => ['backlog' => 1]]);
$bh = tcr_free_port();
$srv = stream_socket_server("tcp://127.0.0.1:$bh", $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $ctx);
$fill = [];
for ($i = 0; $i < 8; $i++) {
    $c = @stream_socket_client("tcp://127.0.0.1:$bh", $errno, $errstr, 0.2);
    if (!$c) {
        break;
    }
    $fill[] = $c;
}
tcr_check($i < 8, 'the blackhole listener stops completing connections (accept queue full)');
$h = new TagCache\Redis(['server' => "tcp://127.0.0.1:$bh", 'timeout' => 0.3, 'connect_retries' => 3,
    'on_error' => 'exception', 'retry_interval' => 30]);
try {
    $h->load('x');
    tcr_check(false, 'connect to the blackhole fails');
} catch (TagCache\ConnectionException $x) {
    tcr_check(str_contains($x->getMessage(), "127.0.0.1:$bh") && str_contains($x->getMessage(), 'connect timeout'),
        'the message names the server and the connect timeout', $x->getMessage());
    tcr_check(str_contains($x->getMessage(), '3 attempts'), 'three attempts were made', $x->getMessage());
    // (no wall-clock bound here: a hang would be the test's timeout; the
    // attempts are counted by the message and by stats() below)
}
// The server is now marked down for retry_interval: the next call fails
// at once, before any connect (the "marked down" refusal comes first)
try {
    $h->save('d', 'x');
    tcr_check(false, 'a call while the server is marked down fails');
} catch (TagCache\ConnectionException $x) {
    tcr_check(str_contains($x->getMessage(), 'marked down'), 'a call while the server is marked down fails without connecting (it says marked down)', $x->getMessage());
}
// A unix socket path that does not exist.
$u = new TagCache\Redis(['server' => tcr_dir() . '/nothing.sock', 'on_error' => 'exception']);
try {
    $u->load('x');
    tcr_check(false, 'a missing unix socket fails');
} catch (TagCache\ConnectionException $x) {
    tcr_check(str_contains($x->getMessage(), tcr_dir() . '/nothing.sock'), 'a missing unix socket: the message names the path', $x->getMessage());
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECTF--
ok: the constructor does not connect
ok: on_error=miss (default): load() is a miss
ok: test() is false
ok: save() is false
ok: remove() is false
ok: clean() is false
ok: getIds() is []
ok: getTags() is []
ok: getMetadatas() is false
ok: touch() is false
ok: loadMany() is []
ok: getFillingPercentage() is 0
ok: no PHP warning in miss mode (the failure goes to the error log)
ok: stats() counts the errors
ok: on_error=exception: load() throws TagCache\ConnectionException
ok:   the message names 127.0.0.1:%d
ok: on_error=exception: save() throws TagCache\ConnectionException
ok:   the message names 127.0.0.1:%d
ok: on_error=exception: clean() throws TagCache\ConnectionException
ok:   the message names 127.0.0.1:%d
ok: on_error=exception: getIds() throws TagCache\ConnectionException
ok:   the message names 127.0.0.1:%d
ok: on_error=exception: stats() throws TagCache\ConnectionException
ok:   the message names 127.0.0.1:%d
ok: still a usable object after the exceptions
ok: the blackhole listener stops completing connections (accept queue full)
ok: the message names the server and the connect timeout
ok: three attempts were made
ok: a call while the server is marked down fails without connecting (it says marked down)
ok: a missing unix socket: the message names the path
done
