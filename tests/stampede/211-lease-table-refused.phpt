--TEST--
Stampede (Shm): a lease table more open than the segment's mode, or of another layout, is refused with a warning; loads then miss as without serve_stale, nothing is lost
--EXTENSIONS--
tagcache
--SKIPIF--
<?php require __DIR__ . '/stampede.inc'; if ($r = tc_skip_reason_module()) die("skip $r"); ?>
--FILE--
<?php
require __DIR__ . '/stampede.inc';
foreach (['too open' => 'mode', 'another layout' => 'magic', 'another size' => 'size'] as $what => $how) {
    $store = st_store('shm', '211');
    $lease = st_lease_file('shm', $store);
    if ($how === 'mode') {
        touch($lease);
        chmod($lease, 0666);
    } else {
        // 64 + 4096 x 64 bytes is this build's size: another magic; or another size
        file_put_contents($lease, str_repeat("\xAB", 8) . str_repeat("\0", $how === 'magic' ? 262200 : 4096));
        chmod($lease, 0600);
    }
    $before = file_get_contents($lease);
    $c = st_backend('shm', $store, ['serve_stale' => 60]);
    $warned = null;
    set_error_handler(function ($no, $msg) use (&$warned) {
        $warned .= $msg;
        return true;
    });
    $c->save('v1', 'hot', ['t']);  // the first call that wants the lease table
    $c->clean('matchingTag', ['t']);
    $v1 = $c->load('hot');
    $v2 = $c->load('hot');
    restore_error_handler();
    tc_check("$what: one warning names the lease table", is_string($warned) && str_contains($warned, $lease)
        && substr_count($warned, 'no stampede protection') === 1, $warned);
    tc_check("$what: loads miss as without the option", $v1 === false && $v2 === false);
    tc_check("$what: the file is left as it was", file_get_contents($lease) === $before);
    tc_check("$what: the store works", $c->save('v2', 'hot') && $c->load('hot') === 'v2');
    st_cleanup('shm', '211');
}
?>
--CLEAN--
<?php require __DIR__ . '/stampede.inc'; st_cleanup('shm', '211'); ?>
--EXPECT--
too open: one warning names the lease table: ok
too open: loads miss as without the option: ok
too open: the file is left as it was: ok
too open: the store works: ok
another layout: one warning names the lease table: ok
another layout: loads miss as without the option: ok
another layout: the file is left as it was: ok
another layout: the store works: ok
another size: one warning names the lease table: ok
another size: loads miss as without the option: ok
another size: the file is left as it was: ok
another size: the store works: ok
