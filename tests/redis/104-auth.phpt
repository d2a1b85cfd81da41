--TEST--
Wrong password, ACL username, missing ACL rights: clear errors; the password never appears in messages, logs, var_dump() or phpinfo()
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
?>
--INI--
pcre.jit=0
log_errors=1
--FILE--
<?php
require __DIR__ . '/redis.inc';

const GOOD = 'G00d-Passw0rd-4711';
const WRONG = 'Wr0ng-S3cret-0815';
const USERPW = 'Us3r-Secr3t-9999';
$srv = tcr_start('auth', ['--requirepass' => GOOD]);
$port = $srv['port'];
$log = tcr_dir() . '/php-error.log';
ini_set('error_log', $log);

$leaks = [];
/** Records where a secret shows up. */
function leak_check(string $where, string $text): void
{
    global $leaks;
    foreach ([GOOD, WRONG, USERPW] as $secret) {
        if (str_contains($text, $secret)) {
            $leaks[] = "$where contains " . ($secret === GOOD ? 'the good password' : ($secret === WRONG ? 'the wrong password' : 'the ACL password'));
        }
    }
}

// wrong password, on_error=exception
$b = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'password' => WRONG, 'on_error' => 'exception']);
try {
    $b->load('x');
    tcr_check(false, 'a wrong password fails');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), "127.0.0.1:$port") && str_contains($e->getMessage(), 'authentication failed'),
        'a wrong password: ConnectionException "authentication failed", naming host:port', $e->getMessage());
    leak_check('the exception message', $e->getMessage());
    leak_check('the exception trace', $e->getTraceAsString());
    ob_start();
    var_dump($e);
    leak_check('var_dump() of the exception', ob_get_clean());
}
ob_start();
var_dump($b);
print_r($b);
var_export($b);
echo json_encode((array) $b);
leak_check('var_dump()/print_r()/var_export() of the backend', ob_get_clean());
tcr_same('********', $b->getOption('password'), "getOption('password') is masked");
tcr_same('', (new TagCache\Redis(['port' => $port]))->getOption('password'), "getOption('password') without one is ''");

// the constructor's options are a sensitive parameter: not in a trace
try {
    new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'password' => WRONG, 'on_error' => 'bogus']);
} catch (TagCache\ConfigurationException $e) {
    tcr_check(true, 'a bad option throws ConfigurationException');
    ob_start();
    var_dump($e->getTrace());
    leak_check('the trace of a constructor exception', ob_get_clean());
}

// wrong password, on_error=miss: a miss, one error-log line without the password
$m = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'password' => WRONG, 'retry_interval' => 0]);
tcr_same(false, $m->load('x'), 'on_error=miss: a wrong password is a miss');
tcr_same(false, $m->save('d', 'x'), 'on_error=miss: save() is false');
$logText = (string) @file_get_contents($log);
tcr_check(str_contains($logText, 'authentication failed') && str_contains($logText, "127.0.0.1:$port"),
    'the error log says "authentication failed" and names host:port', $logText);
leak_check('the error log', $logText);

ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
tcr_check(str_contains($info, 'Redis backend') && str_contains($info, 'hiredis'), 'phpinfo() lists the Redis backend with the hiredis version');
leak_check('phpinfo()', $info);

// the right password works
$g = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'password' => GOOD, 'on_error' => 'exception']);
tcr_same(true, $g->save('data', 'x', ['t']), 'the right password: save() works');
tcr_same('data', $g->load('x'), 'the right password: load() works');

// ACL: a user with a key pattern and every command, and one without EVALSHA
tcr_cmd_auth($port, 'ACL', 'SETUSER', 'cache', 'on', '>' . USERPW, '~tc:*', '+@all');
tcr_cmd_auth($port, 'ACL', 'SETUSER', 'reader', 'on', '>' . USERPW, '~tc:*', '+get', '+getrange', '+ping', '+config|get');
$u = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'username' => 'cache', 'password' => USERPW, 'on_error' => 'exception']);
tcr_same(true, $u->save('acl data', 'acl', ['t']), 'ACL username and password: save() works');
tcr_same('acl data', $u->load('acl'), 'ACL username and password: load() works');
$w = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'username' => 'cache', 'password' => WRONG, 'on_error' => 'exception']);
try {
    $w->load('acl');
    tcr_check(false, 'ACL user with a wrong password fails');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), 'authentication failed (ACL user)'), 'ACL user with a wrong password: authentication failed (ACL user)', $e->getMessage());
    leak_check('the ACL exception message', $e->getMessage());
}
$r = new TagCache\Redis(['server' => '127.0.0.1', 'port' => $port, 'username' => 'reader', 'password' => USERPW, 'on_error' => 'exception']);
tcr_same('acl data', $r->load('acl'), 'a user allowed only GET can load()');
try {
    $r->save('nope', 'acl2', ['t']);
    tcr_check(false, 'a user without the rights to save fails');
} catch (TagCache\ConnectionException $e) {
    tcr_check(str_contains($e->getMessage(), 'NOPERM') && str_contains($e->getMessage(), "127.0.0.1:$port"),
        'missing ACL rights: ConnectionException with the server\'s NOPERM, naming host:port', $e->getMessage());
    leak_check('the NOPERM message', $e->getMessage());
}
tcr_same(false, $g->load('acl2'), 'the refused save stored nothing');

tcr_same([], $leaks, 'no secret leaked anywhere');
echo "done\n";

function tcr_cmd_auth(int $port, string ...$args)
{
    $fp = stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 2);
    fwrite($fp, tcr_resp_encode(['AUTH', GOOD]) . tcr_resp_encode($args));
    $a = tcr_resp_read($fp);
    $r = tcr_resp_read($fp);
    fclose($fp);
    return $r;
}
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
?>
--EXPECT--
ok: a wrong password: ConnectionException "authentication failed", naming host:port
ok: getOption('password') is masked
ok: getOption('password') without one is ''
ok: a bad option throws ConfigurationException
ok: on_error=miss: a wrong password is a miss
ok: on_error=miss: save() is false
ok: the error log says "authentication failed" and names host:port
ok: phpinfo() lists the Redis backend with the hiredis version
ok: the right password: save() works
ok: the right password: load() works
ok: ACL username and password: save() works
ok: ACL username and password: load() works
ok: ACL user with a wrong password: authentication failed (ACL user)
ok: a user allowed only GET can load()
ok: missing ACL rights: ConnectionException with the server's NOPERM, naming host:port
ok: the refused save stored nothing
ok: no secret leaked anywhere
done
