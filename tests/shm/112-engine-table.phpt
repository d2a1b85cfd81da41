--TEST--
Module: the engine classes, phpinfo's rows and the capabilities come from one engine table and agree
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/util.inc';
if ($r = tc_skip_reason_module()) die("skip $r");
?>
--FILE--
<?php
require __DIR__ . '/util.inc';
tc_remove_segments('112');

ob_start();
(new ReflectionExtension('tagcache'))->info();
$info = ob_get_clean();
$rows = [];
foreach (explode("\n", $info) as $line) {
    $p = explode(' => ', $line, 2);
    if (count($p) === 2) {
        $rows[trim($p[0])] = trim($p[1]);
    }
}
$names = array_map('trim', explode(',', $rows['Backends'] ?? ''));
tc_check('shm and file are always built', array_slice($names, 0, 2) === ['shm', 'file'], $rows['Backends'] ?? '(no Backends row)');

// Every internal subclass of AbstractBackend is an engine phpinfo lists, and back.
$classes = [];
foreach (get_declared_classes() as $c) {
    $r = new ReflectionClass($c);
    if ($r->isInternal() && $r->isSubclassOf(TagCache\AbstractBackend::class)) {
        $classes[] = strtolower(substr($c, strlen('TagCache\\')));
    }
}
sort($classes);
$sorted = $names;
sort($sorted);
tc_check('one class per engine listed', $classes === $sorted, implode(',', $classes) . ' vs ' . implode(',', $sorted));

$bad = [];
foreach ($names as $n) {
    $r = new ReflectionClass('TagCache\\' . ucfirst($n));
    $own = array_filter($r->getMethods(), fn($m) => $m->class === $r->getName());
    if (!$r->isFinal() || $r->getParentClass()->getName() !== TagCache\AbstractBackend::class || $own) {
        $bad[] = $r->getName();
    }
}
tc_check('each engine class: final, extends AbstractBackend, no method of its own', !$bad, implode(',', $bad));

// each engine's own phpinfo rows, only for the engines built
tc_check('shm layout row', preg_match('/^[1-9][0-9]*$/', $rows['Shm segment layout'] ?? '') === 1, $rows['Shm segment layout'] ?? '(none)');
tc_check('file layout row', preg_match('/^[1-9][0-9]*$/', $rows['File store layout'] ?? '') === 1, $rows['File store layout'] ?? '(none)');
tc_check('a Redis row iff the Redis engine is built', isset($rows['Redis backend']) === in_array('redis', $names, true), $rows['Redis backend'] ?? '(none)');
tc_check('a Memcached row iff the memcached engine is built', isset($rows['Memcached backend']) === in_array('memcached', $names, true), $rows['Memcached backend'] ?? '(none)');

// the engine is bound when the object is created
$c = new TagCache\Shm(['segment' => tc_seg('112'), 'size' => '1M']);
$caps = $c->getCapabilities();
tc_check('shm lists and keeps entries forever', $caps['get_list'] === true && $caps['infinite_lifetime'] === true, json_encode($caps));
tc_check('bound object works', $c->save('v', 'k') && $c->load('k') === 'v' && $c->getIds() === ['k'], json_encode($c->getIds()));
unset($c);

class Mine extends TagCache\AbstractBackend {}
try {
    new Mine();
    tc_check('a user class without an engine refuses to construct', false, 'constructed');
} catch (Error $e) {
    tc_check('a user class without an engine refuses to construct', str_contains($e->getMessage(), 'is not a tagcache backend'), $e->getMessage());
}
tc_remove_segments('112');
echo "done\n";
?>
--EXPECT--
shm and file are always built: ok
one class per engine listed: ok
each engine class: final, extends AbstractBackend, no method of its own: ok
shm layout row: ok
file layout row: ok
a Redis row iff the Redis engine is built: ok
a Memcached row iff the memcached engine is built: ok
shm lists and keeps entries forever: ok
bound object works: ok
a user class without an engine refuses to construct: ok
done
