--TEST--
pcntl_fork after connecting: children reconnect, the parent keeps its own socket
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/memcached.inc';
if (($r = tcm_skip_reason()) !== null) die("skip $r");
if (!function_exists("pcntl_fork")) die("skip pcntl is not loaded (Debian: php8.2-cli ships it)");
?>
--INI--
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/memcached.inc';
$srv = tcm_start("fork");
foreach (["" => "non-persistent", "p1" => "persistent"] as $pers => $what) {
    $b = new TagCache\Memcached(["read_timeout" => 30, "servers" => "127.0.0.1:" . $srv["port"], "persistent" => $pers, "prefix" => "f$pers:"]);
    $b->save("parent", "p", ["T"]);
    $pids = [];
    for ($i = 1; $i <= 3; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $ok = $b->load("p") === "parent" && $b->save("child $i", "c$i", ["T"]) && $b->load("c$i") === "child $i"
                && $b->stats()["reconnects"] === 1;
            exit($ok ? 0 : 1);
        }
        $pids[] = $pid;
        tcr_same("parent", $b->load("p"), "$what: the parent reads while child $i runs");
    }
    $codes = [];
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $st);
        $codes[] = pcntl_wifexited($st) ? pcntl_wexitstatus($st) : -1;
    }
    tcr_same([0, 0, 0], $codes, "$what: the children read and wrote on connections of their own");
    tcr_same(["child 1", "child 2", "child 3"], [$b->load("c1"), $b->load("c2"), $b->load("c3")], "$what: the parent reads what they wrote");
    tcr_same(0, $b->stats()["reconnects"], "$what: the parent never reconnected (its socket was left alone)");
    tcr_same(0, $b->stats()["errors"], "$what: and saw no error");
}
?>
--CLEAN--
<?php
require __DIR__ . '/memcached.inc';
tcm_clean();
?>
--EXPECT--
ok: non-persistent: the parent reads while child 1 runs
ok: non-persistent: the parent reads while child 2 runs
ok: non-persistent: the parent reads while child 3 runs
ok: non-persistent: the children read and wrote on connections of their own
ok: non-persistent: the parent reads what they wrote
ok: non-persistent: the parent never reconnected (its socket was left alone)
ok: non-persistent: and saw no error
ok: persistent: the parent reads while child 1 runs
ok: persistent: the parent reads while child 2 runs
ok: persistent: the parent reads while child 3 runs
ok: persistent: the children read and wrote on connections of their own
ok: persistent: the parent reads what they wrote
ok: persistent: the parent never reconnected (its socket was left alone)
ok: persistent: and saw no error
