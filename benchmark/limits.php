<?php

declare(strict_types=1);

/*
 * How far TagCache\Redis's writes and cleans are from what any client could
 * do in this harness (issue 15: "which physical limit stands in the way and
 * how close to it we are"). It builds two throwaway variants of the
 * extension in a copy of this tree, each one doing less than a correct
 * store must, and measures them against Cm_Cache_Backend_Redis in turn
 * with the build under test, same workload, same machine:
 *
 *   write-floor    a write of the ops phase is one plain SET of the record
 *                  (no script, no tag links, no TTL), then the frontend's
 *                  write_control GET as always: the least a write in the
 *                  Magento call path sends, two round trips. Refills (the
 *                  benchmark's values of 'r's) and the load phase's saves
 *                  (the first saving process) keep the real save, so the
 *                  cleans find and remove the same entries.
 *   clean-ceiling  a clean of one tag deletes every id its tag key lists,
 *                  without the check that a link is still valid (the
 *                  ZINTERSTORE with the id index): one round trip, the
 *                  same entries deleted as a correct clean in this
 *                  workload, but not exact (an id saved again without the
 *                  tag after another clean would go too: Cm's behaviour).
 *
 * Neither variant is a product: the benchmark's verify() after the run
 * rejects write-floor's store (its records' scores are not their links'),
 * so its ratios are computed here from the clients' own counts.
 *
 *   php benchmark/limits.php [--rounds=3] [--ops=200000] [--clients=4]
 *                            [--redis-port=N] [--out=DIR] [--keep]
 *   php benchmark/limits.php --check    the variants still apply to ext/
 *
 * Needs the Cm peer (CM_CACHE_BACKEND_REDIS_PATH, CREDIS_PATH and ZF1_PATH,
 * as for bench.php), redis-server (bench.php starts one per run unless
 * --redis-port names one: it is flushed), phpize and the build tools.
 * TAGCACHE_MODULE names the build under test (default modules/tagcache.so).
 */

const VARIANTS = [
    'write-floor' => [
        'file' => 'ext/tc_redis.c',
        'anchor' => "\tr = tcr_eval(st, shard, st->jarm ? TCR_LUA_SAVE_J : TCR_LUA_SAVE, 0,",
        'before' => <<<'C'
	{
		static pid_t first;

		if (!first) {
			first = getpid();
		}
		if (getpid() != first && !(data.len > 1 && data.p[0] == 'r' && data.p[1] == 'r')) {
			const char *fv[3] = {"SET", a.v[0], rec};
			size_t fl[3] = {3, a.l[0], reclen};

			r = tcr_shard_cmd(st, shard, 0, 3, fv, fl);
			if (r && r->type == REDIS_REPLY_STATUS) {
				r->type = REDIS_REPLY_INTEGER;
			}
			goto sent;
		}
	}

C,
        'label_before' => "\tfree(rec);\n\targs_free(&a);\n\tif (!r) {",
        'label' => "sent:\n",
    ],
    'clean-ceiling' => [
        'file' => 'ext/tc_redis_lua.c',
        'anchor' => <<<'C'
"      redis.call('ZINTERSTORE', tmp, 2, tk, ik, 'WEIGHTS', 1, -1)\n"
"      local ids = redis.call('ZRANGEBYSCORE', tmp, 0, 0)\n"
"      redis.call('DEL', tmp)\n"
C,
        'replace' => <<<'C'
"      local ids = redis.call('ZRANGE', tk, 0, -1)\n"
C,
    ],
];

$root = dirname(__DIR__);
$opt = ['rounds' => 3, 'ops' => 200000, 'clients' => 4, 'redis-port' => null, 'out' => null, 'keep' => false,
    'check' => false];
foreach (array_slice($argv, 1) as $a) {
    if (preg_match('/^--(rounds|ops|clients|redis-port)=(\d+)$/', $a, $m)) {
        $opt[$m[1]] = (int)$m[2];
    } elseif (preg_match('/^--out=(.+)$/', $a, $m)) {
        $opt['out'] = $m[1];
    } elseif ($a === '--keep' || $a === '--check') {
        $opt[substr($a, 2)] = true;
    } else {
        fwrite(STDERR, "usage: php benchmark/limits.php [--rounds=N] [--ops=N] [--clients=N] [--redis-port=N] [--out=DIR] [--keep] | --check\n");
        exit(2);
    }
}

/** The variant's source text, or [why not] when its anchor is not found exactly once. */
function apply(string $src, array $v): string|array
{
    $n = substr_count($src, $v['anchor']);
    if ($n !== 1) {
        return ["anchor found $n times in {$v['file']} (the source changed: update benchmark/limits.php)"];
    }
    if (isset($v['replace'])) {
        return str_replace($v['anchor'], $v['replace'], $src);
    }
    $src = str_replace($v['anchor'], $v['before'] . $v['anchor'], $src);
    $pos = strpos($src, $v['label_before'], strpos($src, $v['anchor']));
    if ($pos === false) {
        return ["the code after the anchor in {$v['file']} changed: update benchmark/limits.php"];
    }
    return substr_replace($src, $v['label'], $pos, 0);
}

if ($opt['check']) {
    $bad = 0;
    foreach (VARIANTS as $name => $v) {
        $r = apply((string)file_get_contents("$root/{$v['file']}"), $v);
        echo $name, ': ', is_array($r) ? $r[0] : 'applies', "\n";
        $bad += is_array($r) ? 1 : 0;
    }
    exit($bad ? 1 : 0);
}

$mainModule = getenv('TAGCACHE_MODULE') ?: "$root/modules/tagcache.so";
if (!is_file($mainModule)) {
    fwrite(STDERR, "no build under test: $mainModule (run scripts/build.sh, or set TAGCACHE_MODULE)\n");
    exit(2);
}
foreach (['CM_CACHE_BACKEND_REDIS_PATH', 'CREDIS_PATH', 'ZF1_PATH'] as $e) {
    if (!getenv($e)) {
        fwrite(STDERR, "skipped: $e is not set; the limits are measured against Cm_Cache_Backend_Redis (benchmark/README.md)\n");
        exit(0);
    }
}
$work = $opt['out'] ?? sys_get_temp_dir() . '/tagcache-limits-' . getmypid();
@mkdir($work, 0700, true);

function sh(string $cmd, string $log): void
{
    passthru("($cmd) >> " . escapeshellarg($log) . ' 2>&1', $rc);
    if ($rc !== 0) {
        fwrite(STDERR, "failed ($rc): $cmd; see $log\n");
        exit(1);
    }
}

// the variants, each built in its own copy of the tree
$modules = ['main' => $mainModule];
foreach (VARIANTS as $name => $v) {
    $dir = "$work/src-$name";
    $log = "$work/build-$name.log";
    fwrite(STDERR, "building $name in $dir\n");
    sh('rm -rf ' . escapeshellarg($dir) . ' && mkdir -p ' . escapeshellarg($dir) . ' && cd ' . escapeshellarg($root)
        . ' && tar --exclude=./.git --exclude=./modules --exclude=./benchmark/data --exclude=./benchmark/results -cf - . | tar -xf - -C '
        . escapeshellarg($dir), $log);
    $src = apply((string)file_get_contents("$dir/{$v['file']}"), $v);
    if (is_array($src)) {
        fwrite(STDERR, "$name: {$src[0]}\n");
        exit(1);
    }
    file_put_contents("$dir/{$v['file']}", $src);
    sh('cd ' . escapeshellarg($dir) . ' && rm -f configure Makefile .build-flags && bash scripts/build.sh', $log);
    $modules[$name] = "$work/$name.so";
    copy("$dir/modules/tagcache.so", $modules[$name]);
}

/** ops/s of one op type summed over the clients (bench.php's columns), and misses. */
function figures(array $op): array
{
    $f = ['misses' => 0];
    foreach (['writes' => 'write_ns', 'cleans' => 'clean_ns'] as $k => $ns) {
        $f[$k] = 0.0;
        $n = $t = 0;
        foreach ($op['clients'] as $c) {
            $f[$k] += $c[$ns] > 0 ? $c[$k] / ($c[$ns] / 1e9) : 0;
            $n += $c[$k];
            $t += $c[$ns];
        }
        $f["{$k}_us"] = $n ? $t / $n / 1000 : 0;
    }
    foreach ($op['clients'] as $c) {
        $f['misses'] += $c['read_misses'];
    }
    return $f;
}

$php = PHP_BINARY;
$rows = [];
for ($r = 1; $r <= $opt['rounds']; $r++) {
    foreach ($modules as $name => $so) {
        $out = "$work/run-$name-$r";
        $cmd = [$php, "$root/benchmark/bench.php", '--backends=tagcache-redis,cm-redis', '--only-ops', '--runs=1',
            "--clients={$opt['clients']}", "--ops={$opt['ops']}", "--out=$out", '--quiet'];
        if ($opt['redis-port']) {
            $cmd[] = "--redis-port={$opt['redis-port']}";
            $cmd[] = '--no-servers';
        }
        $env = getenv();
        $env['TAGCACHE_MODULE'] = $so;
        unset($env['TAGCACHE_BENCH_REEXEC'], $env['TAGCACHE_BENCH_MODULE']);
        fwrite(STDERR, "round $r/{$opt['rounds']}: $name\n");
        $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$out.log", 'w'], 2 => ['file', "$out.log", 'a']],
            $pipes, null, $env);
        proc_close($p);
        $res = json_decode((string)@file_get_contents("$out/results.json"), true);
        $ops = [];
        foreach ($res['ops'] ?? [] as $o) {
            if (!empty($o['clients'])) {
                $ops[$o['backend']] = figures($o);
            }
        }
        if (!isset($ops['tagcache-redis'], $ops['cm-redis'])) {
            fwrite(STDERR, "round $r, $name: no figures (see $out.log)\n");
            exit(1);
        }
        $rows[$name][] = [$ops['tagcache-redis'], $ops['cm-redis']];
    }
}

function median(array $x): float
{
    sort($x);
    $n = count($x);
    return $n % 2 ? $x[intdiv($n, 2)] : ($x[$n / 2 - 1] + $x[$n / 2]) / 2;
}

echo "TagCache\\Redis and two limit variants against Cm_Cache_Backend_Redis, {$opt['clients']} clients, "
    . "{$opt['ops']} ops each, {$opt['rounds']} alternated round(s) (ratio > 1: faster than Cm)\n";
echo "| build | round | writes / Cm | us a write (ours, Cm) | cleans / Cm | us a clean (ours, Cm) | read misses (ours, Cm) |\n";
echo "|---|---|---|---|---|---|---|\n";
$med = [];
foreach ($rows as $name => $list) {
    foreach ($list as $i => [$t, $c]) {
        $w = $c['writes'] > 0 ? $t['writes'] / $c['writes'] : 0;
        $cl = $c['cleans'] > 0 ? $t['cleans'] / $c['cleans'] : 0;
        $med[$name]['w'][] = $w;
        $med[$name]['c'][] = $cl;
        printf("| %s | %d | %.2f | %.0f, %.0f | %.2f | %.0f, %.0f | %d, %d |\n", $name, $i + 1, $w, $t['writes_us'],
            $c['writes_us'], $cl, $t['cleans_us'], $c['cleans_us'], $t['misses'], $c['misses']);
    }
}
echo "\nmedians: ";
foreach ($med as $name => $m) {
    printf('%s writes %.2f cleans %.2f; ', $name, median($m['w']), median($m['c']));
}
echo "\n";
if (isset($med['write-floor'], $med['clean-ceiling'])) {
    printf("TagCache\\Redis at %.0f %% of the write floor's ratio and %.0f %% of the clean ceiling's\n",
        100 * median($med['main']['w']) / max(1e-9, median($med['write-floor']['w'])),
        100 * median($med['main']['c']) / max(1e-9, median($med['clean-ceiling']['c'])));
}
if (!$opt['keep'] && $opt['out'] === null) {
    passthru('rm -rf ' . escapeshellarg($work));
}
