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

/**
 * The common start barrier: every client checks in on a unix socket, and
 * all are released together. Results come back on the same connection.
 */
final class Barrier
{
    private $server;
    /** @var array<int, resource> */
    private array $conns = [];

    public function __construct(public readonly string $path)
    {
        @unlink($path);
        $this->server = @stream_socket_server("unix://$path", $errno, $err);
        if (!$this->server) {
            throw new \RuntimeException("barrier socket $path: $err");
        }
    }

    /**
     * Wait for $n check-ins. $alive() returns null while the clients can
     * still check in, or a reason why they cannot.
     */
    public function wait(int $n, float $timeout, ?\Closure $alive = null): void
    {
        $deadline = microtime(true) + $timeout;
        while (count($this->conns) < $n) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException(sprintf('only %d of %d clients reached the start barrier in %.0f s', count($this->conns), $n, $timeout));
            }
            $r = [$this->server];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 200000)) {
                $c = @stream_socket_accept($this->server, 5);
                if ($c) {
                    stream_set_timeout($c, 900);
                    $line = fgets($c);
                    if ($line !== false && preg_match('/^R (\d+)/', $line, $m)) {
                        $this->conns[(int)$m[1]] = $c;
                    }
                }
            } elseif ($alive && ($why = $alive()) !== null) {
                throw new \RuntimeException("a client ended before the start barrier: $why");
            }
        }
    }

    /** Release everybody; returns hrtime at release. */
    public function go(): int
    {
        $t = hrtime(true);
        foreach ($this->conns as $c) {
            fwrite($c, 'G');
        }
        return $t;
    }

    /** Read one JSON result per client; returns [results by client, hrtime when the last arrived]. */
    public function collect(float $timeout): array
    {
        $buf = array_fill_keys(array_keys($this->conns), '');
        $open = $this->conns;
        $done = [];
        $deadline = microtime(true) + $timeout;
        while ($open) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException('clients did not finish in ' . $timeout . ' s');
            }
            $r = array_values($open);
            $w = $e = null;
            if (!@stream_select($r, $w, $e, 1)) {
                continue;
            }
            foreach ($r as $c) {
                $k = array_search($c, $open, true);
                $chunk = fread($c, 65536);
                if ($chunk === '' || $chunk === false) {
                    if (feof($c)) {
                        fclose($c);
                        unset($open[$k]);
                        $done[$k] = hrtime(true);
                    }
                    continue;
                }
                $buf[$k] .= $chunk;
            }
        }
        $results = [];
        foreach ($buf as $k => $s) {
            $j = json_decode(trim($s), true);
            $results[$k] = is_array($j) ? $j : ['client' => $k, 'errors' => ['client ended without a result (crashed?)']];
        }
        ksort($results);
        $this->conns = [];
        return [$results, $done ? max($done) : hrtime(true)];
    }

    public function close(): void
    {
        foreach ($this->conns as $c) {
            @fclose($c);
        }
        $this->conns = [];
        if ($this->server) {
            fclose($this->server);
            $this->server = null;
        }
        @unlink($this->path);
    }
}

/** redis-server and memcached on 127.0.0.1, free ports, started and stopped by us. */
final class Servers
{
    /** @var array<string, array{proc: resource, port: int}> */
    private array $procs = [];

    public function __construct(private readonly string $tmp)
    {
    }

    public static function freePort(): int
    {
        $s = stream_socket_server('tcp://127.0.0.1:0', $errno, $err);
        if (!$s) {
            throw new \RuntimeException("no free port: $err");
        }
        $name = stream_socket_get_name($s, false);
        fclose($s);
        return (int)substr($name, strrpos($name, ':') + 1);
    }

    public function redis(): int
    {
        if (isset($this->procs['redis'])) {
            return $this->procs['redis']['port'];
        }
        $bin = Php::which('redis-server') ?? throw new \RuntimeException('redis-server not installed');
        $port = self::freePort();
        $dir = $this->tmp . '/redis';
        @mkdir($dir, 0700, true);
        $cmd = [$bin, '--bind', '127.0.0.1', '--port', (string)$port, '--save', '', '--appendonly', 'no',
            '--dir', $dir, '--daemonize', 'no', '--protected-mode', 'yes', '--maxmemory-policy', 'noeviction',
            '--logfile', "$dir/redis.log"];
        $this->start('redis', $cmd, $port);
        return $port;
    }

    public function memcached(): int
    {
        if (isset($this->procs['memcached'])) {
            return $this->procs['memcached']['port'];
        }
        $bin = Php::which('memcached') ?? throw new \RuntimeException('memcached not installed');
        $port = self::freePort();
        $cmd = [$bin, '-l', '127.0.0.1', '-p', (string)$port, '-U', '0', '-m', '4096', '-c', '1024'];
        if (function_exists('posix_geteuid') && posix_geteuid() === 0) {
            $cmd[] = '-u';
            $cmd[] = 'root';
        }
        $this->start('memcached', $cmd, $port);
        return $port;
    }

    private function start(string $name, array $cmd, int $port): void
    {
        $log = $this->tmp . "/$name.out";
        $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes);
        if (!$p) {
            throw new \RuntimeException("cannot start $name");
        }
        $this->procs[$name] = ['proc' => $p, 'port' => $port];
        $deadline = microtime(true) + 10;
        while (microtime(true) < $deadline) {
            $s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $err, 0.2);
            if ($s) {
                fclose($s);
                return;
            }
            if (!proc_get_status($p)['running']) {
                break;
            }
            usleep(50000);
        }
        throw new \RuntimeException("$name did not start on 127.0.0.1:$port: " . @file_get_contents($log));
    }

    public function names(): array
    {
        return array_map(static fn ($p) => $p['port'], $this->procs);
    }

    public function stop(): void
    {
        if (!Php::isOwner()) {
            return;
        }
        foreach ($this->procs as $name => $p) {
            stop_proc($p['proc']);
            unset($this->procs[$name]);
        }
    }
}

/** SIGTERM, wait up to 5 s, then SIGKILL; only processes we started. */
function stop_proc($proc): void
{
    $st = proc_get_status($proc);
    if ($st['running']) {
        proc_terminate($proc, 15);
        $deadline = microtime(true) + 5;
        while (microtime(true) < $deadline && proc_get_status($proc)['running']) {
            usleep(20000);
        }
        if (proc_get_status($proc)['running']) {
            proc_terminate($proc, 9);
        }
    }
    proc_close($proc);
}

/**
 * php-fpm with its own temporary configuration: one static pool of N
 * workers on a unix socket, requests sent with cgi-fcgi (libfcgi-bin).
 */
final class Fpm
{
    private $proc = null;
    public readonly string $sock;
    private string $dir;
    public int $children = 0;

    public function __construct(string $tmp)
    {
        $this->dir = "$tmp/fpm";
        @mkdir($this->dir, 0700, true);
        $this->sock = "{$this->dir}/fpm.sock";
    }

    public static function binary(): ?string
    {
        return Php::which(getenv('PHP_FPM') ?: '', 'php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION, 'php-fpm');
    }

    public static function unavailable(): ?string
    {
        if (self::binary() === null) {
            return 'php-fpm not found (apt-get install php8.2-fpm, or PHP_FPM=/path)';
        }
        if (Php::which('cgi-fcgi') === null) {
            return 'cgi-fcgi not found (apt-get install libfcgi-bin)';
        }
        return null;
    }

    public function start(int $children): void
    {
        if ($this->proc && $this->children === $children) {
            return;
        }
        $this->stop();
        $root = function_exists('posix_geteuid') && posix_geteuid() === 0;
        $d = $this->dir;
        $user = $root ? "user = root\ngroup = root\n" : '';
        file_put_contents("$d/fpm.conf", <<<CONF
            [global]
            pid = $d/fpm.pid
            error_log = $d/fpm.log
            daemonize = no
            log_level = warning

            [bench]
            {$user}listen = {$this->sock}
            listen.mode = 0600
            pm = static
            pm.max_children = $children
            request_terminate_timeout = 900
            catch_workers_output = yes
            clear_env = no
            php_admin_value[memory_limit] = 1024M
            php_admin_value[max_execution_time] = 0
            ; with max_input_time >= 0, PHP arms a CPU-time timer for input parsing
            ; that max_execution_time=0 never disarms ("Maximum execution time of
            ; 0 seconds exceeded" after 60 s of CPU): -1 arms none
            php_admin_value[max_input_time] = -1
            php_admin_flag[log_errors] = on
            php_admin_value[error_log] = $d/php-errors.log

            CONF);
        $cmd = [self::binary(), '-F', '-y', "$d/fpm.conf"];
        if ($root) {
            $cmd[] = '-R';
        }
        $module = Php::tagcacheModule();
        if (is_file($module)) {
            array_push($cmd, '-d', "extension=$module");
        }
        array_push($cmd, '-d', 'apc.shm_size=128M', '-d', 'apc.enabled=1');
        @unlink($this->sock);
        $this->proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$d/fpm.out", 'a'], 2 => ['file', "$d/fpm.out", 'a']], $pipes);
        $this->children = $children;
        $deadline = microtime(true) + 15;
        while (microtime(true) < $deadline) {
            if (file_exists($this->sock)) {
                $r = $this->request(['action' => 'ping'], 10);
                if (is_array($r)) {
                    return;
                }
            }
            if (!proc_get_status($this->proc)['running']) {
                break;
            }
            usleep(100000);
        }
        $why = @file_get_contents("$d/fpm.out") . @file_get_contents("$d/fpm.log");
        $this->stop();
        throw new \RuntimeException('php-fpm did not start: ' . trim($why));
    }

    private function env(array $query): array
    {
        return [
            'PATH' => (string)getenv('PATH'),
            'SCRIPT_FILENAME' => dirname(__DIR__) . '/fpm_worker.php',
            'SCRIPT_NAME' => '/fpm_worker.php',
            'REQUEST_URI' => '/fpm_worker.php?' . http_build_query($query),
            'REQUEST_METHOD' => 'GET',
            'QUERY_STRING' => http_build_query($query),
            'SERVER_NAME' => 'localhost',
            'SERVER_PROTOCOL' => 'HTTP/1.1',
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'CONTENT_LENGTH' => '0',
        ];
    }

    /** Start a request without waiting; returns [proc, output file]. */
    public function spawn(array $query): array
    {
        $out = tempnam($this->dir, 'resp');
        $p = proc_open(
            [Php::which('cgi-fcgi'), '-bind', '-connect', $this->sock],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $out, 'a']],
            $pipes,
            null,
            $this->env($query)
        );
        if (!$p) {
            throw new \RuntimeException('cannot run cgi-fcgi');
        }
        return [$p, $out];
    }

    /** The body of a finished request (headers stripped). */
    public static function body(string $out): string
    {
        $s = (string)@file_get_contents($out);
        @unlink($out);
        $p = strpos($s, "\r\n\r\n");
        return $p === false ? $s : substr($s, $p + 4);
    }

    /** One request, waited for; the worker answers JSON. */
    public function request(array $query, float $timeout = 900): ?array
    {
        [$p, $out] = $this->spawn($query);
        $deadline = microtime(true) + $timeout;
        while (proc_get_status($p)['running']) {
            if (microtime(true) > $deadline) {
                stop_proc($p);
                return null;
            }
            usleep(2000);
        }
        proc_close($p);
        $body = self::body($out);
        $j = json_decode($body, true);
        if (!is_array($j)) {
            $log = @file("{$this->dir}/php-errors.log", FILE_IGNORE_NEW_LINES) ?: [];
            throw new \RuntimeException('php-fpm answered: ' . trim(substr($body, 0, 2000))
                . ($log ? ' (php-fpm error log: ' . implode(' / ', array_slice($log, -3)) . ')' : ''));
        }
        return $j;
    }

    public function stop(): void
    {
        if ($this->proc && Php::isOwner()) {
            stop_proc($this->proc);
        }
        $this->proc = null;
        $this->children = 0;
    }
}
