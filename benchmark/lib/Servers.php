<?php

declare(strict_types=1);

namespace TagCacheBench;

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
