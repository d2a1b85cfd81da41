<?php

declare(strict_types=1);

namespace TagCacheBench;

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
