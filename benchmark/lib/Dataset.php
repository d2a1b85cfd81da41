<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * The data set and op lists of colinmollenhour/magento-cache-benchmark
 * (`init`), generated from a seed so every backend runs the same records and
 * the same operations.
 *
 * Differences from the 2014 script, on purpose:
 * - tags are drawn with mt_rand() (rejection of duplicates) instead of
 *   array_rand(), whose algorithm changes between PHP versions and which on
 *   PHP 5 silently gave records drawn with 1 tag no tag at all;
 * - popularity and volatility are kept in the data file, and the write data
 *   of each client is derived from the seed, so a run is fully repeatable;
 * - op lists are packed (4 bytes an op, ops-client_N.bin), so that lists
 *   long enough for the fastest store to run over a second (400,000 ops)
 *   cost 1.6 MB per client, not the 100+ MB of PHP arrays.
 */
final class Dataset
{
    public const FORMAT = 3;

    /** Op codes of a packed op list: the op in the top 2 bits, its record or tag index below. */
    public const OP_READ = 0;
    public const OP_WRITE = 1;
    public const OP_CLEAN = 2;

    /** Default parameters: the published workload. */
    public const DEFAULTS = [
        'seed' => 20140101,
        'keys' => 10000,
        'tags' => 2000,
        'min_tags' => 0,
        'max_tags' => 15,
        'min_size' => 1,
        'max_size' => 1024,
        'clients' => 8,          // op lists generated; runs use the first N
        // 400,000 ops per client: the fastest stores (Shm, File: about 1M
        // reads/s summed over 4 clients on 2 cores) then run for more than
        // a second; --ops=N runs the first N
        'ops' => 400000,
        'write_chance' => 1000,  // write when mt_rand(0, 1000) == 0
        'clean_chance' => 1000,  // clean when mt_rand(0, 1000) == 0
        'default_lifetime' => 7200,
    ];

    public function __construct(public readonly string $dir, public readonly array $params)
    {
    }

    /** Tag names TAG_0001 .. TAG_2000 (zero padded to the width of the count, as the original). */
    public static function tagList(int $numTags): array
    {
        $w = strlen((string)$numTags);
        $tags = [];
        for ($i = 1; $i <= $numTags; $i++) {
            $tags[] = sprintf('TAG_%0' . $w . 'd', $i);
        }
        return $tags;
    }

    /** 0..15 distinct tags, uniformly: first the count, then distinct indexes. */
    public static function randomTags(array $tagList, int $min, int $max): array
    {
        $num = mt_rand($min, $max);
        $last = count($tagList) - 1;
        $num = min($num, $last + 1);
        $picked = [];
        while (count($picked) < $num) {
            $picked[mt_rand(0, $last)] = true;
        }
        ksort($picked);
        $tags = [];
        foreach ($picked as $i => $_) {
            $tags[] = $tagList[$i];
        }
        return $tags;
    }

    /** The original's random printable text: md5 of a random number, base64'd until long enough. */
    public static function randomData(int $min, ?int $max = null): string
    {
        $length = $max === null ? $min : mt_rand($min, $max);
        $string = md5((string)mt_rand());
        while (strlen($string) < $length) {
            $string = base64_encode($string);
        }
        return substr($string, 0, $length);
    }

    /** 1 record in 6 expires at a random 10..14,400 s, the rest get the default lifetime (false). */
    public static function randomLifetime(): int|false
    {
        static $expires = [false, false, false, false, false, 'rand'];
        $e = $expires[mt_rand(0, count($expires) - 1)];
        return $e === 'rand' ? mt_rand(10, 14400) : false;
    }

    /**
     * One record from the generator stream (used by init and by the growth
     * runs, which stream records instead of writing them to disk).
     */
    public static function record(int $i, array $tagList, array $p): array
    {
        $key = md5((string)$i);
        $expires = self::randomLifetime();
        $data = self::randomData($p['min_size'], $p['max_size']);
        $tags = self::randomTags($tagList, $p['min_tags'], $p['max_tags']);
        return ['key' => $key, 'data' => $data, 'tags' => $tags, 'expires' => $expires];
    }

    public static function open(string $dir): self
    {
        $meta = @file_get_contents("$dir/meta.json");
        if ($meta === false) {
            throw new \RuntimeException("no data set in $dir: run `php benchmark/bench.php init`");
        }
        $meta = json_decode($meta, true, 512, JSON_THROW_ON_ERROR);
        return new self($dir, $meta['params']);
    }

    /** Generate unless a data set with the same parameters is already there. */
    public static function ensure(string $dir, array $params, bool $force = false, ?callable $log = null): self
    {
        $params = array_merge(self::DEFAULTS, $params);
        if (!$force && is_file("$dir/meta.json")) {
            $meta = json_decode((string)file_get_contents("$dir/meta.json"), true);
            if (is_array($meta) && ($meta['format'] ?? 0) === self::FORMAT && ($meta['params'] ?? null) == $params
                && is_file("$dir/data.txt") && is_file("$dir/ops-client_" . ($params['clients'] - 1) . ".bin")) {
                return new self($dir, $params);
            }
        }
        self::generate($dir, $params, $log);
        return new self($dir, $params);
    }

    public static function generate(string $dir, array $p, ?callable $log = null): void
    {
        $log ??= static function (string $s): void {
        };
        if (!is_dir($dir) && !mkdir($dir, 0777, true) && !is_dir($dir)) {
            throw new \RuntimeException("cannot create $dir");
        }
        foreach (glob("$dir/*") ?: [] as $f) {
            if (is_file($f)) {
                unlink($f);
            }
        }
        $t0 = hrtime(true);
        mt_srand((int)$p['seed']);
        $tagList = self::tagList($p['tags']);
        $fp = fopen("$dir/data.txt.tmp", 'w');
        fwrite($fp, "{$p['keys']}\n");
        $reads = [];
        $writes = [];
        $lengths = [];
        $tagsOf = [];
        $totalData = 0;
        $totalTags = 0;
        $minLen = PHP_INT_MAX;
        $maxLen = 0;
        $expiring = 0;
        for ($i = 0; $i < $p['keys']; $i++) {
            $r = self::record($i, $tagList, $p);
            $key = $r['key'];
            $lengths[$key] = strlen($r['data']);
            $tagsOf[$key] = $r['tags'];
            $r['popularity'] = mt_rand(1, 100);
            for ($j = 0; $j < $r['popularity']; $j++) {
                $reads[] = $key;
            }
            $r['volatility'] = mt_rand(1, 100);
            for ($j = 0; $j < $r['volatility']; $j++) {
                $writes[] = $key;
            }
            $totalData += $lengths[$key];
            $totalTags += count($r['tags']);
            $minLen = min($minLen, $lengths[$key]);
            $maxLen = max($maxLen, $lengths[$key]);
            $expiring += $r['expires'] === false ? 0 : 1;
            fwrite($fp, json_encode($r, JSON_UNESCAPED_SLASHES) . "\n");
        }
        fclose($fp);
        rename("$dir/data.txt.tmp", "$dir/data.txt");

        $counts = [];
        $nReads = count($reads) - 1;
        $nWrites = count($writes) - 1;
        $nTags = count($tagList) - 1;
        $index = array_flip(array_keys($lengths));   // key => record index
        for ($c = 0; $c < $p['clients']; $c++) {
            $ops = [];
            $n = ['read' => 0, 'write' => 0, 'clean' => 0];
            for ($j = 0; $j < $p['ops']; $j++) {
                if (mt_rand(0, $p['clean_chance']) == 0) {
                    $ops[] = (self::OP_CLEAN << 30) | mt_rand(0, $nTags);
                    $n['clean']++;
                } elseif (mt_rand(0, $p['write_chance']) == 0) {
                    $ops[] = (self::OP_WRITE << 30) | $index[$writes[mt_rand(0, $nWrites)]];
                    $n['write']++;
                } else {
                    $ops[] = (self::OP_READ << 30) | $index[$reads[mt_rand(0, $nReads)]];
                    $n['read']++;
                }
            }
            file_put_contents("$dir/ops-client_$c.bin", pack('V*', ...$ops));
            $counts[$c] = $n;
        }
        $desc = [
            'records' => $p['keys'],
            'smallest_value' => $minLen,
            'largest_value' => $maxLen,
            'average_value' => round($totalData / $p['keys'], 1),
            'total_value_bytes' => $totalData,
            'tags' => $p['tags'],
            'average_tags_per_record' => round($totalTags / $p['keys'], 2),
            'records_with_own_lifetime' => $expiring,
            'ops_per_client' => $counts,
            'seconds_to_generate' => round((hrtime(true) - $t0) / 1e9, 2),
        ];
        file_put_contents("$dir/meta.json", json_encode(
            ['format' => self::FORMAT, 'params' => $p, 'description' => $desc],
            JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES
        ) . "\n");
        $log(sprintf(
            "data set in %s: %d records, values %d..%d B (mean %.0f, %.1f MB), %.2f tags/record, %d with own lifetime, %d op lists of %d; %.1f s",
            $dir,
            $p['keys'],
            $minLen,
            $maxLen,
            $totalData / $p['keys'],
            $totalData / 1048576,
            $totalTags / $p['keys'],
            $expiring,
            $p['clients'],
            $p['ops'],
            (hrtime(true) - $t0) / 1e9
        ));
    }

    public function description(): array
    {
        $meta = json_decode((string)file_get_contents("{$this->dir}/meta.json"), true);
        return $meta['description'] ?? [];
    }

    /** @return \Generator<int, array{key:string,data:string,tags:array,expires:int|false}> */
    public function records(): \Generator
    {
        $fp = fopen("{$this->dir}/data.txt", 'r');
        fgets($fp);
        while (($line = fgets($fp)) !== false) {
            yield json_decode($line, true);
        }
        fclose($fp);
    }

    /** All records in memory (10k records: about 8 MB). */
    public function allRecords(): array
    {
        return iterator_to_array($this->records(), false);
    }

    /**
     * Op list $client (its first $limit ops): a list of codes, the op in
     * the top 2 bits (OP_READ, OP_WRITE, OP_CLEAN), below it the record
     * index (reads, writes: a write saves that record's length and tags, as
     * in the original's op lists) or the tag index in tagList() (cleans).
     *
     * @return list<int>
     */
    public function ops(int $client, ?int $limit = null): array
    {
        $n = $this->params['clients'];
        if ($client >= $n) {
            throw new \RuntimeException("op list $client does not exist (data set has $n); re-run init with --clients");
        }
        $packed = (string)file_get_contents("{$this->dir}/ops-client_$client.bin");
        if ($limit !== null && $limit * 4 < strlen($packed)) {
            $packed = substr($packed, 0, $limit * 4);
        }
        return $packed === '' ? [] : array_values(unpack('V*', $packed));
    }
}
