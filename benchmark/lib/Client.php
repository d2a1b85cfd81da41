<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * One client of the ops phase, whatever process runs it (a forked child, a
 * separate CLI process, a php-fpm worker): build the backend, read the op
 * list, wait at the start barrier, run the list, send the counts back.
 *
 * Per op type it keeps count and time spent in that type, as the original
 * (which printed count / time per client). Time is hrtime() around each
 * call, so it includes about 30-50 ns of timer overhead per op.
 */
final class Client
{
    public static function run(array $spec, int $client): array
    {
        $res = [
            'client' => $client, 'pid' => getmypid(),
            'reads' => 0, 'read_ns' => 0, 'read_misses' => 0, 'bad_values' => 0,
            'writes' => 0, 'write_ns' => 0, 'write_failures' => 0,
            'cleans' => 0, 'clean_ns' => 0, 'cleans_skipped' => 0, 'clean_failures' => 0,
            'errors' => [],
        ];
        $sock = null;
        try {
            $ctx = Context::fromArray($spec['ctx']);
            $defs = Backends::all();
            $def = $defs[$spec['backend']];
            if (($why = ($def['requires'])($ctx)) !== null) {
                throw new \RuntimeException("backend unavailable in this process: $why");
            }
            $fe = new Frontend(($def['create'])($ctx));
            $tags = $fe->backend()->supportsTags();
            $data = new Dataset($spec['data_dir'], $spec['params']);
            $ops = $data->ops($spec['list'] ?? $client, $spec['ops']);

            // Op codes and write payloads prepared before the barrier; the
            // original drew each write's payload outside its timer too.
            mt_srand($spec['params']['seed'] * 1000 + $client + 1);
            $lens = [];
            foreach ($ops as $i => $op) {
                if ($op[0] === 'write') {
                    $ops[$i][4] = Dataset::randomData($op[2]);
                    $lens[$op[1]] = $op[2];
                }
            }
            foreach ($data->records() as $r) {
                $lens[$r['key']] = strlen($r['data']);
            }

            $sock = self::barrier($spec['barrier'], $client);
            $t0 = hrtime(true);
            $rt = $wt = $ct = 0;
            $nr = $nw = $nc = $miss = $bad = $wfail = $cfail = $skipped = 0;
            foreach ($ops as $op) {
                switch ($op[0]) {
                    case 'read':
                        $t = hrtime(true);
                        $v = $fe->load($op[1]);
                        $rt += hrtime(true) - $t;
                        ++$nr;
                        if ($v === false) {
                            ++$miss;
                        } elseif (strlen($v) !== $lens[$op[1]]) {
                            ++$bad;
                        }
                        break;
                    case 'write':
                        $t = hrtime(true);
                        $ok = $fe->save($op[4], $op[1], $op[3]);
                        $wt += hrtime(true) - $t;
                        ++$nw;
                        if (!$ok) {
                            ++$wfail;
                        }
                        break;
                    case 'clean':
                        if (!$tags) {
                            ++$skipped;
                            break;
                        }
                        $t = hrtime(true);
                        $ok = $fe->clean([$op[1]]);
                        $ct += hrtime(true) - $t;
                        ++$nc;
                        if (!$ok) {
                            ++$cfail;
                        }
                        break;
                }
            }
            $res['wall_ns'] = hrtime(true) - $t0;
            $res = array_merge($res, [
                'reads' => $nr, 'read_ns' => $rt, 'read_misses' => $miss, 'bad_values' => $bad,
                'writes' => $nw, 'write_ns' => $wt, 'write_failures' => $wfail,
                'cleans' => $nc, 'clean_ns' => $ct, 'cleans_skipped' => $skipped, 'clean_failures' => $cfail,
            ]);
            if ($bad) {
                $res['errors'][] = "$bad reads returned a value of the wrong length";
            }
        } catch (\Throwable $e) {
            $res['errors'][] = get_class($e) . ': ' . $e->getMessage() . ' at ' . basename($e->getFile()) . ':' . $e->getLine();
        }
        if ($sock === null && isset($spec['barrier'])) {
            // Failed before the barrier: still check in, so the others are not held.
            try {
                $sock = self::barrier($spec['barrier'], $client);
            } catch (\Throwable) {
            }
        }
        if ($sock) {
            fwrite($sock, json_encode($res) . "\n");
            fclose($sock);
        }
        return $res;
    }

    /** Check in at the start barrier and block until the orchestrator says go. */
    public static function barrier(string $path, int $client)
    {
        $s = @stream_socket_client("unix://$path", $errno, $err, 30);
        if (!$s) {
            throw new \RuntimeException("barrier $path: $err");
        }
        stream_set_timeout($s, 900);
        fwrite($s, "R $client\n");
        $go = fread($s, 1);
        if ($go !== 'G') {
            throw new \RuntimeException('barrier: no go signal');
        }
        return $s;
    }
}
