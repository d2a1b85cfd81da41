<?php

declare(strict_types=1);

namespace TagCacheBench;

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
