<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * Everything a process needs to build a backend the same way as every other
 * process of the run: handed to forked children as is, to CLI and php-fpm
 * clients as a JSON file.
 */
final class Context
{
    public string $tmp;
    public ?int $redisPort = null;
    public ?int $memcachedPort = null;
    public string $shmSegment = 'bench';
    public string $shmSize = '64M';
    public int $defaultLifetime = 7200;
    /** env name => path, for the optional Zend/Cm peers */
    public array $paths = [];
    public ?string $symfonyAutoload = null;
    /** where the file stores keep their files (default: under $tmp) */
    public ?string $fileDir = null;
    /**
     * Which node of --nodes this process plays (0 otherwise): the local
     * level of a two-level store is per node (TwoLevel's segment, M2's
     * local Cm File directory; APCu is per node process by itself).
     */
    public int $node = 0;
    /** --max-staleness: TagCache\TwoLevel's bound (null: its default, 1 s) */
    public ?float $maxStaleness = null;

    public function __construct(?string $tmp = null)
    {
        $this->tmp = $tmp ?? sys_get_temp_dir() . '/tagcache-bench-' . getmypid();
        foreach (['ZF1_PATH', 'CM_CACHE_BACKEND_FILE_PATH', 'CM_CACHE_BACKEND_REDIS_PATH', 'CREDIS_PATH', 'MAGENTO_FRAMEWORK_PATH'] as $k) {
            $v = getenv($k);
            if ($v !== false && $v !== '') {
                $this->paths[$k] = $v;
            }
        }
        $auto = getenv('SYMFONY_CACHE_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Cache/autoload.php';
        $this->symfonyAutoload = is_file($auto) ? $auto : null;
    }

    /** A directory for a file store. */
    public function dir(string $name): string
    {
        $d = ($this->fileDir ?? $this->tmp) . '/' . $name;
        if (!is_dir($d)) {
            @mkdir($d, 0700, true);
        }
        return $d;
    }

    /** A directory on /dev/shm (tmpfs) for the local level of this node, as Adobe recommends for M2's L2. */
    public function shmDir(string $name): string
    {
        $base = is_dir('/dev/shm') && is_writable('/dev/shm') ? '/dev/shm' : $this->tmp;
        $d = $base . '/' . basename($this->tmp) . "-$name-node{$this->node}";
        if (!is_dir($d)) {
            @mkdir($d, 0700, true);
        }
        return $d;
    }

    public function toArray(): array
    {
        return get_object_vars($this);
    }

    public static function fromArray(array $a): self
    {
        $c = new self($a['tmp']);
        foreach ($a as $k => $v) {
            $c->$k = $v;
        }
        return $c;
    }
}
