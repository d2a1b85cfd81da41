<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * The side channel of the multi-node modes (Nodes): what every record's
 * value should be, and when its older versions stopped being current, in a
 * System V shared memory segment (shmop) that every node process attaches
 * by key. It is not part of any store: reading it is a memcpy, outside the
 * timed calls.
 *
 * Per record, four words: seq (odd while the one writer, the cleaner,
 * updates the record), gen (the version of the record's value: a value is
 * "gen:payload"), sup (when gen-1 stopped being current = when the save or
 * clean that made gen current returned, hrtime ns; PENDING while that call
 * is in flight) and older (sup of the step before: an upper bound of when
 * every gen <= gen-2 stopped being current).
 *
 * A read that returns gen g < gen is stale; it is stale beyond the bound
 * when the version after g had been current for more than the bound when
 * the read started. Judged conservatively (never counts a read that might
 * be within the bound): a call still in flight counts as not returned, and
 * g <= gen-2 uses `older`.
 *
 * Before them: a header of HEADER words (one "done" flag per reader),
 * then one word per slot: when the lag mode's clean k returned (0 = not yet).
 */
final class Truth
{
    public const PENDING = PHP_INT_MAX;
    /** header words: one "done" flag per reader (MAX_READERS), written by that reader only */
    public const MAX_READERS = 1024;
    public const HEADER = self::MAX_READERS;

    private \Shmop $shm;
    private int $recBase;
    private int $slotBase;

    private function __construct(\Shmop $shm, public readonly int $records, public readonly int $slots)
    {
        $this->shm = $shm;
        $this->slotBase = self::HEADER * 8;
        $this->recBase = $this->slotBase + $slots * 8;
    }

    private static function size(int $records, int $slots): int
    {
        return (self::HEADER + $slots + 4 * $records) * 8;
    }

    private static function key(string $file): int
    {
        if (!is_file($file)) {
            touch($file);
        }
        $k = ftok($file, 't');
        if ($k === -1) {
            throw new \RuntimeException("ftok($file) failed");
        }
        return $k;
    }

    public static function create(string $file, int $records, int $slots): self
    {
        if (!function_exists('shmop_open')) {
            throw new \RuntimeException('the multi-node modes need the shmop extension');
        }
        $key = self::key($file);
        $size = self::size($records, $slots);
        $old = @shmop_open($key, 'w', 0, 0);
        if ($old) {
            shmop_delete($old);
        }
        $shm = @shmop_open($key, 'n', 0600, $size);
        if (!$shm) {
            throw new \RuntimeException("shmop_open($file): cannot create $size bytes");
        }
        shmop_write($shm, str_repeat("\0", $size), 0);
        return new self($shm, $records, $slots);
    }

    public static function attach(string $file, int $records, int $slots): self
    {
        $shm = @shmop_open(self::key($file), 'w', 0, 0);
        if (!$shm) {
            throw new \RuntimeException("shmop_open($file): not there");
        }
        return new self($shm, $records, $slots);
    }

    public function delete(): void
    {
        shmop_delete($this->shm);
    }

    /** Reader $r (its op list index) has finished. */
    public function setDone(int $r): void
    {
        shmop_write($this->shm, pack('q', 1), $r * 8);
    }

    /** How many of readers 0..$n-1 have finished. */
    public function doneCount(int $n): int
    {
        return (int)array_sum(unpack('q*', shmop_read($this->shm, 0, $n * 8)));
    }

    /** @return array{0:int,1:int,2:int} [gen, sup, older], consistent (seqlock) */
    public function get(int $i): array
    {
        $off = $this->recBase + 32 * $i;
        for ($try = 0; ; ++$try) {
            $r = unpack('q4', shmop_read($this->shm, $off, 32));
            if (($r[1] & 1) === 0 && unpack('q', shmop_read($this->shm, $off, 8))[1] === $r[1]) {
                return [$r[2], $r[3], $r[4]];
            }
            if ($try > 1000) {
                usleep(100);
            }
        }
    }

    private function put(int $i, int $gen, int $sup, int $older): void
    {
        $off = $this->recBase + 32 * $i;
        $seq = unpack('q', shmop_read($this->shm, $off, 8))[1];
        shmop_write($this->shm, pack('q', $seq + 1), $off);
        shmop_write($this->shm, pack('q3', $gen, $sup, $older), $off + 8);
        shmop_write($this->shm, pack('q', $seq + 2), $off);
    }

    /** Before a save or clean of record $i: its next version, in flight. Returns the new gen. */
    public function begin(int $i): int
    {
        [$gen, $sup] = $this->get($i);
        $this->put($i, $gen + 1, self::PENDING, $sup === self::PENDING ? self::PENDING : $sup);
        return $gen + 1;
    }

    /** The call that made the current version returned at $t (hrtime ns). */
    public function commit(int $i, int $t): void
    {
        [$gen, , $older] = $this->get($i);
        $this->put($i, $gen, $t, $older);
    }

    /**
     * Judge a read of version $g of record $i that started at $t:
     * 0 current, 1 stale within the bound, 2 stale beyond it, 3 a version
     * never written (a wrong value). $age: how long the next version had
     * been current when the read started (ns; 0 unless stale).
     */
    public function judge(int $i, int $g, int $t, int $boundNs, int &$age): int
    {
        [$gen, $sup, $older] = $this->get($i);
        $age = 0;
        if ($g === $gen) {
            return 0;
        }
        if ($g > $gen) {
            return 3;
        }
        $since = $g === $gen - 1 ? $sup : $older;
        if ($since === self::PENDING || $since >= $t) {
            return 1;
        }
        $age = $t - $since;
        return $age > $boundNs ? 2 : 1;
    }

    public function slot(int $k): int
    {
        return unpack('q', shmop_read($this->shm, $this->slotBase + 8 * $k, 8))[1];
    }

    public function setSlot(int $k, int $v): void
    {
        shmop_write($this->shm, pack('q', $v), $this->slotBase + 8 * $k);
    }
}
