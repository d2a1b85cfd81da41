<?php

declare(strict_types=1);

namespace TagCacheBench;

/** Which PHP process we are, and how to start another like it. */
final class Php
{
    public static int $ownerPid = 0;

    /** The process that started the benchmark (not a forked child). */
    public static function isOwner(): bool
    {
        return getmypid() === self::$ownerPid;
    }

    /** The module as given: TAGCACHE_MODULE, or modules/tagcache.so of this repository. */
    public static function tagcacheSource(): string
    {
        return getenv('TAGCACHE_MODULE') ?: dirname(__DIR__, 2) . '/modules/tagcache.so';
    }

    /**
     * The module every process of this benchmark loads: a private copy of
     * the source, made once by the first process and handed down through
     * the environment. A `make` that rewrites modules/tagcache.so in place
     * while the benchmark runs would otherwise crash it with SIGBUS.
     */
    public static function tagcacheModule(): string
    {
        $copy = getenv('TAGCACHE_BENCH_MODULE');
        if ($copy && is_file($copy)) {
            return $copy;
        }
        $src = self::tagcacheSource();
        if (!is_file($src)) {
            return $src;
        }
        $copy = sys_get_temp_dir() . '/tagcache-bench-' . md5_file($src) . '.so';
        if (!is_file($copy)) {
            $tmp = $copy . '.' . getmypid();
            if (!@copy($src, $tmp) || !@rename($tmp, $copy)) {
                @unlink($tmp);
                return $src;
            }
            // Ours to remove when the run ends (see bench.php's cleanup).
            putenv('TAGCACHE_BENCH_MODULE_MADE=' . getmypid());
        }
        putenv("TAGCACHE_BENCH_MODULE=$copy");
        return $copy;
    }

    public static function bytes(string|false $v): int
    {
        if ($v === false || $v === '') {
            return 0;
        }
        $n = (float)$v;
        return (int)match (strtoupper(substr(trim($v), -1))) {
            'K' => $n * 1024, 'M' => $n * 1048576, 'G' => $n * 1073741824, default => $n,
        };
    }

    /**
     * The -d flags this process is missing: tagcache from TAGCACHE_MODULE,
     * the peers' extensions (apcu, redis, memcached and what they depend on)
     * when present on disk, apc.enable_cli=1 and apc.shm_size >= 128M, plus
     * any ini given as JSON in TAGCACHE_BENCH_INI.
     */
    public static function missingFlags(): array
    {
        $flags = [];
        if (!extension_loaded('tagcache')) {
            $m = self::tagcacheModule();
            if (is_file($m)) {
                $flags[] = "extension=$m";
            }
        }
        $extDir = (string)ini_get('extension_dir');
        foreach (['igbinary', 'msgpack', 'apcu', 'redis', 'memcached', 'posix'] as $e) {
            if (!extension_loaded($e) && is_file("$extDir/$e.so")) {
                $flags[] = "extension=$e";
            }
        }
        $apcu = extension_loaded('apcu') || in_array('extension=apcu', $flags, true);
        $ini = json_decode((string)getenv('TAGCACHE_BENCH_INI'), true) ?: [];
        if ($apcu) {
            $ini += ['apc.enable_cli' => '1'];
            if (!isset($ini['apc.shm_size']) && self::bytes(ini_get('apc.shm_size')) < 128 * 1048576) {
                $ini['apc.shm_size'] = '128M';
            }
        }
        foreach ($ini as $k => $v) {
            $cur = ini_get($k);
            $same = $cur !== false && ($cur === (string)$v
                || (in_array($v, ['0', '1'], true) && (bool)filter_var($cur, FILTER_VALIDATE_BOOLEAN) === (bool)$v)
                || (preg_match('/^\d+[KMG]?$/i', (string)$v) && self::bytes($cur) === self::bytes((string)$v)));
            if (!$same) {
                $flags[] = "$k=$v";
            }
        }
        return $flags;
    }

    /**
     * The command line: options `--name[=value]` (true without a value)
     * and the other words, in order.
     *
     * @return array{0: array<string, string|true>, 1: list<string>}
     */
    public static function args(array $argv): array
    {
        $opt = [];
        $words = [];
        foreach (array_slice($argv, 1) as $a) {
            if (preg_match('/^--([a-z0-9-]+)(?:=(.*))?$/', $a, $m)) {
                $opt[$m[1]] = $m[2] ?? true;
            } else {
                $words[] = $a;
            }
        }
        return [$opt, $words];
    }

    /**
     * What every entry script does first: run again with the flags it
     * needs, note the owner process (the one that cleans up), no memory
     * limit, every error reported.
     */
    public static function boot(string $script, array $argv): void
    {
        self::reexecIfNeeded($script, $argv);
        self::$ownerPid = getmypid();
        ini_set('memory_limit', '-1');
        error_reporting(E_ALL);
    }

    /** Re-run this script with the missing flags (once). */
    public static function reexecIfNeeded(string $script, array $argv): void
    {
        $flags = self::missingFlags();
        if (!$flags || getenv('TAGCACHE_BENCH_REEXEC') === '1') {
            return;
        }
        $args = [];
        foreach ($flags as $f) {
            $args[] = '-d';
            $args[] = $f;
        }
        $args[] = $script;
        $args = array_merge($args, array_slice($argv, 1));
        putenv('TAGCACHE_BENCH_REEXEC=1');
        if (function_exists('pcntl_exec')) {
            $env = getenv();
            pcntl_exec(PHP_BINARY, $args, $env);
        }
        $p = proc_open(array_merge([PHP_BINARY], $args), [STDIN, STDOUT, STDERR], $pipes);
        exit($p ? proc_close($p) : 1);
    }

    /**
     * A command line to start this script again in a fresh process (it
     * re-executes itself with whatever flags it needs).
     */
    public static function selfCommand(array $args): array
    {
        return array_merge([PHP_BINARY, dirname(__DIR__) . '/bench.php'], $args);
    }

    public static function env(array $extra = []): array
    {
        $env = getenv();
        unset($env['TAGCACHE_BENCH_REEXEC']);
        return array_merge($env, $extra);
    }

    public static function which(string ...$names): ?string
    {
        $dirs = array_merge(explode(PATH_SEPARATOR, (string)getenv('PATH')), ['/usr/sbin', '/usr/local/sbin', '/sbin']);
        foreach ($names as $n) {
            if ($n === '') {
                continue;
            }
            if ($n[0] === '/') {
                if (is_file($n) && is_executable($n)) {
                    return $n;
                }
                continue;
            }
            foreach ($dirs as $d) {
                if ($d !== '' && is_file("$d/$n") && is_executable("$d/$n")) {
                    return "$d/$n";
                }
            }
        }
        return null;
    }
}
