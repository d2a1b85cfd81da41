--TEST--
TagCache\Redis as TwoLevel's slow level: the invalidation journal's append is part of the write's own script (save, remove, every journaled clean mode, chunked cleans), one round trip; with shards = 2 (the journal on another slot) it still comes after the write
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/redis.inc';
if (($r = tcr_skip_reason()) !== null) die("skip $r");
if (!class_exists('TagCache\TwoLevel')) die('skip TagCache\TwoLevel is not in this build');
?>
--FILE--
<?php
require __DIR__ . '/redis.inc';

// a server of its own: SLOWLOG with a threshold of 0 lists every command
// a client sent (a script's inner commands are not listed)
$srv = tcr_start('jw', ['--slowlog-log-slower-than' => '0', '--slowlog-max-len' => '10000']);
$port = $srv['port'];
$seg = 'tcr115-' . getmypid();
foreach (["/dev/shm/tagcache.$seg", "/dev/shm/tagcache.$seg.twolevel"] as $f) {
    @unlink($f);
}
register_shutdown_function(static function () use ($seg): void {
    foreach (["/dev/shm/tagcache.$seg", "/dev/shm/tagcache.$seg.twolevel"] as $f) {
        @unlink($f);
    }
});

function tl(int $port, string $seg, array $slow): TagCache\TwoLevel
{
    return new TagCache\TwoLevel([
        'slow_backend' => 'Redis',
        'slow_backend_options' => ['server' => '127.0.0.1', 'port' => $port] + $slow,
        'fast_backend_options' => ['segment' => $seg, 'dir' => '/dev/shm', 'size' => '4M'],
        'max_staleness' => 3600,   // no journal read between the steps
    ]);
}

/** The journal's newest seq (its J:seq key), found by name. */
function seq(int $port, string $prefix): int
{
    $keys = tcr_cmd($port, 'KEYS', $prefix . '*J:seq');
    return count($keys) === 1 ? (int) tcr_cmd($port, 'GET', $keys[0]) : -1;
}

/** Runs $op; returns [commands the client sent (names), journal records added]. */
function step(int $port, string $prefix, callable $op): array
{
    $before = seq($port, $prefix);
    tcr_cmd($port, 'SLOWLOG', 'RESET');
    $op();
    $log = tcr_cmd($port, 'SLOWLOG', 'GET', '10000');
    $names = [];
    foreach (array_reverse($log) as $e) {
        // a script's own commands are listed too, from the client "?:0"
        $name = strtoupper($e[3][0]);
        if ($name !== 'SLOWLOG' && $e[4] !== '?:0') {
            $names[] = $name;
        }
    }
    // a script's first use: EVALSHA (NOSCRIPT), SCRIPT LOAD, EVALSHA
    $cmds = preg_replace('/EVALSHA SCRIPT ?/', '', implode(' ', $names));
    return [$cmds, seq($port, $prefix) - $before];
}

foreach ([1, 2] as $shards) {
    $prefix = "j115s$shards:";
    $c = tl($port, $seg . "-$shards", ['prefix' => $prefix, 'shards' => $shards, 'remove_chunk_size' => 2]);
    $c->save('warm', 'w0', ['tw']);   // connects, reads the journal once
    $c->load('w0');
    // [what, the op, journal records it must add (writes the TwoLevel journals)]
    $steps = [
        ['save', fn () => $c->save('v1', 'a', ['t1', 't2']), 1],
        ['save again (the short path)', fn () => $c->save('v1', 'a', ['t1', 't2']), 1],
        ['save b', fn () => $c->save('v2', 'b', ['t1']), 1],
        ['remove', fn () => $c->remove('b'), 1],
        ['remove of a missing id', fn () => $c->remove('nope'), 1],
        ['clean matchingAnyTag', fn () => $c->clean('matchingAnyTag', ['t2']), 1],
        ['save, clean matchingTag', fn () => $c->save('x', 'c', ['t3', 't4']) && $c->clean('matchingTag', ['t3', 't4']), 2],
        ['clean notMatchingTag', fn () => $c->clean('notMatchingTag', ['tw']), 1],
        ['clean all', fn () => $c->clean('all'), 1],
        ['clean old (not journaled)', fn () => $c->clean('old'), 0],
    ];
    // a clean that takes several calls (remove_chunk_size 2)
    $steps[] = ['chunked clean', function () use ($c) {
        for ($i = 0; $i < 5; $i++) {
            $c->save("v$i", "k$i", ['big']);
        }
        $c->save('y', 'y', ['tw']);
        return $c->clean('matchingAnyTag', ['big', 'tw']);
    }, 7];
    foreach ($steps as [$what, $op, $records]) {
        [$cmds, $added] = step($port, $prefix, $op);
        $calls = substr_count($cmds, 'EVALSHA');
        $onlyScripts = trim(str_replace('EVALSHA', '', $cmds)) === '';
        if ($shards === 1) {
            // every write script carries its record: as many records as
            // script calls (a clean of several calls journals in each)
            $ok = $onlyScripts && ($records === 0 ? $added === 0 : $added === $calls && $added >= $records);
            $how = 'in the write scripts';
        } else {
            // the journal is on another slot: one append after the write
            $ok = $onlyScripts && $added === $records;
            $how = 'after the write';
        }
        tcr_check($ok, "shards=$shards: $what: journaled $how", "commands: $cmds, records added: $added");
    }
    tcr_check($c->load('k1') === false && $c->load('y') === false && $c->getIds() === [],
        "shards=$shards: the chunked clean removed everything");
    // another node (a fresh object on its own fast segment) reads the journal
    $d = tl($port, $seg . "-$shards-d", ['prefix' => $prefix, 'shards' => $shards]);
    $d->save('z', 'z', []);
    tcr_check($d->load('z') === 'z', "shards=$shards: another node works on the same journal");
}
echo "done\n";
?>
--CLEAN--
<?php
require __DIR__ . '/redis.inc';
tcr_clean();
foreach (glob('/dev/shm/tagcache.tcr115-*') ?: [] as $f) {
    @unlink($f);
}
?>
--EXPECT--
ok: shards=1: save: journaled in the write scripts
ok: shards=1: save again (the short path): journaled in the write scripts
ok: shards=1: save b: journaled in the write scripts
ok: shards=1: remove: journaled in the write scripts
ok: shards=1: remove of a missing id: journaled in the write scripts
ok: shards=1: clean matchingAnyTag: journaled in the write scripts
ok: shards=1: save, clean matchingTag: journaled in the write scripts
ok: shards=1: clean notMatchingTag: journaled in the write scripts
ok: shards=1: clean all: journaled in the write scripts
ok: shards=1: clean old (not journaled): journaled in the write scripts
ok: shards=1: chunked clean: journaled in the write scripts
ok: shards=1: the chunked clean removed everything
ok: shards=1: another node works on the same journal
ok: shards=2: save: journaled after the write
ok: shards=2: save again (the short path): journaled after the write
ok: shards=2: save b: journaled after the write
ok: shards=2: remove: journaled after the write
ok: shards=2: remove of a missing id: journaled after the write
ok: shards=2: clean matchingAnyTag: journaled after the write
ok: shards=2: save, clean matchingTag: journaled after the write
ok: shards=2: clean notMatchingTag: journaled after the write
ok: shards=2: clean all: journaled after the write
ok: shards=2: clean old (not journaled): journaled after the write
ok: shards=2: chunked clean: journaled after the write
ok: shards=2: the chunked clean removed everything
ok: shards=2: another node works on the same journal
done
