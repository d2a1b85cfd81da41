--TEST--
Zend adapters and native classes keep the options (a Redis password) out of exception traces: constructor options and setOption()'s value are #[\SensitiveParameter] (zend.exception_ignore_args=0)
--EXTENSIONS--
tagcache
--INI--
zend.exception_ignore_args=0
; strings whole in getTraceAsString() (Debian's php.ini shows none)
zend.exception_string_param_max_len=1000
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/zend.inc';
tcz_setup();
$log = sys_get_temp_dir() . '/tcz011.' . getmypid() . '.log';
ini_set('error_log', $log);
@unlink($log);

// short enough that a trace would print it whole ('...' only past 15 bytes)
const SECRET = 'pw-S3cr3t!';

/** Every way an exception shows its trace: none may contain SECRET. */
function no_secret(Throwable $e, string $label): void
{
    ob_start();
    var_dump($e);
    $dump = ob_get_clean();
    $shown = [
        'getTraceAsString()' => $e->getTraceAsString(),
        'print_r(getTrace())' => print_r($e->getTrace(), true),
        'var_export(getTrace())' => var_export($e->getTrace(), true),
        'var_dump($e)' => $dump,
        '(string) $e (with the previous exceptions)' => (string) $e,
    ];
    for ($p = $e->getPrevious(); $p !== null; $p = $p->getPrevious()) {
        $shown['var_dump($e)'] .= print_r($p->getTrace(), true) . $p->getTraceAsString();
    }
    foreach ($shown as $how => $text) {
        tcz_ok(!str_contains($text, SECRET), "$label: $how does not show the password",
            'it shows it: ' . substr($text, 0, 2000));
    }
    tcz_ok(str_contains($dump, 'SensitiveParameterValue'), "$label: the trace keeps the frame, its argument redacted");
    $GLOBALS['checked'][] = $label;
}

// The setting is on: an ordinary parameter does show the secret.
function plain_parameter(array $options, string $password): void
{
    throw new RuntimeException('control');
}
try {
    plain_parameter(['password' => SECRET], SECRET);
} catch (RuntimeException $e) {
    ob_start();
    var_dump($e);
    echo str_contains(ob_get_clean(), SECRET) ? 'ok' : 'FAIL', ": control: without the attribute var_dump(\$e) shows the password (the checks below can fail)\n";
    echo str_contains($e->getTraceAsString(), SECRET) ? 'ok' : 'FAIL', ": control: and getTraceAsString() shows it\n";
}

/** Checks the exception $e (null: nothing was thrown) is a $class. */
function thrown(?Throwable $e, string $class, string $label): void
{
    tcz_ok($e instanceof $class, $label, $e ? 'got ' . get_class($e) . ': ' . $e->getMessage() : 'nothing thrown');
    if ($e) {
        no_secret($e, $label);
    }
}

// The calls are made here, at the top level: a helper of this test taking
// the options would put them into the trace itself.
if (class_exists('TagCache\Redis', false)) {
    require_once 'TagCache/Zend/Redis.php';
    $e = null;
    try {
        new TagCache_Zend_Redis(['server' => '127.0.0.1', 'port' => 'not a port', 'password' => SECRET, 'sentinel_password' => SECRET]);
    } catch (Throwable $e) {
    }
    thrown($e, 'Zend_Cache_Exception', 'TagCache_Zend_Redis::__construct');
    $e = null;
    try {
        new TagCache\Redis(['server' => '127.0.0.1', 'port' => 'not a port', 'password' => SECRET, 'sentinel_password' => SECRET]);
    } catch (Throwable $e) {
    }
    thrown($e, 'TagCache\ConfigurationException', 'TagCache\Redis::__construct');
    $b = new TagCache_Zend_Redis(['server' => '127.0.0.1', 'port' => 1, 'password' => SECRET]);
    $e = null;
    try {
        $b->setOption('lifetime', SECRET);
    } catch (Throwable $e) {
    }
    thrown($e, 'Zend_Cache_Exception', 'TagCache_Zend_Redis::setOption');
    $n = new TagCache\Redis(['server' => '127.0.0.1', 'port' => 1, 'password' => SECRET]);
    $e = null;
    try {
        $n->setOption('lifetime', SECRET);
    } catch (Throwable $e) {
    }
    thrown($e, 'TagCache\ConfigurationException', 'TagCache\Redis::setOption');
    ob_start();
    var_dump($b, $n);
    tcz_ok(!str_contains(ob_get_clean(), SECRET), 'var_dump of the objects does not show the password');
} else {
    echo "TagCache\\Redis is not in this build: its cases do not apply\n";
}
// every adapter's constructor: an options array may carry a secret whatever the engine
foreach (['Shm', 'File', 'Memcached'] as $name) {
    if (!class_exists("TagCache\\$name", false)) {
        echo "TagCache\\$name is not in this build: its case does not apply\n";
        continue;
    }
    require_once "TagCache/Zend/$name.php";
    $class = "TagCache_Zend_$name";
    $e = null;
    try {
        new $class(['password' => SECRET, 'lifetime' => 'not a lifetime']);
    } catch (Throwable $e) {
    }
    thrown($e, 'Zend_Cache_Exception', "$class::__construct");
}
$logged = (string) @file_get_contents($log);
tcz_ok($logged !== '' && !str_contains($logged, SECRET), 'the constructors\' error_log lines do not show the password', $logged);
@unlink($log);
// the File and Shm adapters are in every build
tcz_ok(in_array('TagCache_Zend_Shm::__construct', $GLOBALS['checked'] ?? [], true)
    && in_array('TagCache_Zend_File::__construct', $GLOBALS['checked'] ?? [], true), 'the constructors were checked');
$failed = 0;
foreach ($GLOBALS['tcz_checks'] as $label => $failures) {
    foreach ($failures as $f) {
        echo "FAIL: $label$f\n";
        $failed++;
    }
}
echo 'checks: ', count($GLOBALS['tcz_checks']) >= 20 ? 'many' : count($GLOBALS['tcz_checks']), ", failed: $failed\n";
echo "done\n";
?>
--EXPECT--
ok: control: without the attribute var_dump($e) shows the password (the checks below can fail)
ok: control: and getTraceAsString() shows it
checks: many, failed: 0
done
