<?php

declare(strict_types=1);

namespace TagCacheBench;

/** Loading the optional ZF1 / Cm peers from the paths given in the environment. */
final class Zend
{
    private static bool $autoload = false;

    public static function setup(Context $c, array $parts): ?string
    {
        foreach ($parts as $part) {
            $r = match ($part) {
                'zf1' => self::zf1($c),
                'cm-file' => self::cmFile($c),
                'cm-redis' => self::cmRedis($c),
                'magento' => self::magento($c),
            };
            if ($r !== null) {
                return $r;
            }
        }
        return null;
    }

    private static function zf1(Context $c): ?string
    {
        if (class_exists('Zend_Cache_Backend', false)) {
            return null;
        }
        $p = $c->paths['ZF1_PATH'] ?? null;
        if ($p === null) {
            return 'set ZF1_PATH (zf1 or zf1-future library dir)';
        }
        $lib = is_dir("$p/library/Zend") ? "$p/library" : $p;
        if (!is_file("$lib/Zend/Cache/Backend.php")) {
            return "ZF1_PATH=$p has no Zend/Cache/Backend.php";
        }
        set_include_path($lib . PATH_SEPARATOR . get_include_path());
        if (!self::$autoload) {
            self::$autoload = true;
            spl_autoload_register(static function (string $class) use ($lib): void {
                if (str_starts_with($class, 'Zend_')) {
                    $f = $lib . '/' . str_replace('_', '/', $class) . '.php';
                    if (is_file($f)) {
                        require_once $f;
                    }
                }
            });
        }
        require_once 'Zend/Cache.php';
        require_once 'Zend/Cache/Backend.php';
        require_once 'Zend/Cache/Backend/ExtendedInterface.php';
        return null;
    }

    private static bool $magentoAutoload = false;

    /**
     * Magento 2's framework classes the L2 peer needs
     * (Magento\Framework\Cache\Backend\RemoteSynchronizedCache and nothing
     * else while use_stale_cache is off), loaded from MAGENTO_FRAMEWORK_PATH:
     * the Framework directory itself, or a magento2 checkout (its
     * lib/internal/Magento/Framework). Never from the repository.
     */
    private static function magento(Context $c): ?string
    {
        $cls = 'Magento\\Framework\\Cache\\Backend\\RemoteSynchronizedCache';
        if (class_exists($cls, false)) {
            return null;
        }
        $p = $c->paths['MAGENTO_FRAMEWORK_PATH'] ?? null;
        if ($p === null) {
            return 'MAGENTO_FRAMEWORK_PATH not set (magento2\'s lib/internal/Magento/Framework, or a checkout of magento2)';
        }
        $root = null;
        foreach ([$p, "$p/lib/internal/Magento/Framework", "$p/Magento/Framework"] as $d) {
            if (is_file("$d/Cache/Backend/RemoteSynchronizedCache.php")) {
                $root = $d;
                break;
            }
        }
        if ($root === null) {
            return "MAGENTO_FRAMEWORK_PATH=$p has no Cache/Backend/RemoteSynchronizedCache.php";
        }
        if (!self::$magentoAutoload) {
            self::$magentoAutoload = true;
            spl_autoload_register(static function (string $class) use ($root): void {
                $prefix = 'Magento\\Framework\\';
                if (str_starts_with($class, $prefix)) {
                    $f = $root . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
                    if (is_file($f)) {
                        require_once $f;
                    }
                }
            });
        }
        return class_exists($cls) ? null : "no $cls under $root";
    }

    private static function cmFile(Context $c): ?string
    {
        if (class_exists('Cm_Cache_Backend_File', false)) {
            return null;
        }
        $p = $c->paths['CM_CACHE_BACKEND_FILE_PATH'] ?? null;
        if ($p === null) {
            return 'set CM_CACHE_BACKEND_FILE_PATH (dir of Cm_Cache_Backend_File)';
        }
        foreach ([$p, "$p/File.php", "$p/Cm/Cache/Backend/File.php"] as $f) {
            if (is_file($f)) {
                require_once $f;
                return null;
            }
        }
        return "no File.php under CM_CACHE_BACKEND_FILE_PATH=$p";
    }

    private static function cmRedis(Context $c): ?string
    {
        if (!class_exists('Credis_Client', false)) {
            $found = false;
            $cands = [];
            if (isset($c->paths['CREDIS_PATH'])) {
                $cands[] = $c->paths['CREDIS_PATH'] . '/Client.php';
                $cands[] = $c->paths['CREDIS_PATH'];
            }
            if (isset($c->paths['CM_CACHE_BACKEND_REDIS_PATH'])) {
                $cands[] = $c->paths['CM_CACHE_BACKEND_REDIS_PATH'] . '/lib/Credis/Client.php';
            }
            foreach ($cands as $f) {
                if (is_file($f)) {
                    require_once $f;
                    $found = true;
                    break;
                }
            }
            if (!$found) {
                return 'set CREDIS_PATH (colinmollenhour/credis) or check out Cm_Cache_Backend_Redis with its lib/Credis submodule';
            }
        }
        if (class_exists('Cm_Cache_Backend_Redis', false)) {
            return null;
        }
        $p = $c->paths['CM_CACHE_BACKEND_REDIS_PATH'] ?? null;
        if ($p === null) {
            return 'set CM_CACHE_BACKEND_REDIS_PATH (dir of Cm_Cache_Backend_Redis)';
        }
        foreach ([$p, "$p/Cm/Cache/Backend/Redis.php", "$p/Redis.php"] as $f) {
            if (is_file($f)) {
                require_once $f;
                return null;
            }
        }
        return "no Cm/Cache/Backend/Redis.php under CM_CACHE_BACKEND_REDIS_PATH=$p";
    }

    public static function cmFileOptions(string $dir): array
    {
        return ['cache_dir' => $dir, 'hashed_directory_level' => 1, 'file_name_prefix' => 'cm'];
    }

    /** Magento 1's sample local.xml values. */
    public static function cmRedisOptions(Context $c): array
    {
        return [
            'server' => '127.0.0.1', 'port' => $c->redisPort, 'database' => 0, 'persistent' => '',
            'force_standalone' => 0, 'connect_retries' => 1, 'read_timeout' => 10,
            'automatic_cleaning_factor' => 0, 'compress_data' => 1, 'compress_tags' => 1,
            'compress_threshold' => 20480, 'compression_lib' => 'gzip',
        ];
    }

    /** What Mage_Core_Model_Cache builds for <backend>apc</backend> with a slow backend. */
    public static function twoLevels(string $slow, array $slowOptions): object
    {
        return new \Zend_Cache_Backend_TwoLevels([
            'fast_backend' => 'Zend_Cache_Backend_Apc',
            'fast_backend_options' => [],
            'fast_backend_custom_naming' => true,
            'fast_backend_autoload' => true,
            'slow_backend' => $slow,
            'slow_backend_options' => $slowOptions,
            'slow_backend_custom_naming' => true,
            'slow_backend_autoload' => true,
            'auto_refresh_fast_cache' => false,
        ]);
    }

    /**
     * Magento 2's L2 cache as Adobe recommends it: RemoteSynchronizedCache,
     * local Cm File on /dev/shm, remote Cm Redis (Magento's own remote class
     * is a thin subclass of Cm_Cache_Backend_Redis).
     */
    public static function m2RemoteSync(Context $c, string $localDir): object
    {
        $cls = 'Magento\\Framework\\Cache\\Backend\\RemoteSynchronizedCache';
        return new $cls([
            'remote_backend' => 'Cm_Cache_Backend_Redis',
            'remote_backend_options' => self::cmRedisOptions($c),
            'remote_backend_custom_naming' => true,
            'remote_backend_autoload' => true,
            'local_backend' => 'Cm_Cache_Backend_File',
            'local_backend_options' => ['cache_dir' => $localDir],
            'local_backend_custom_naming' => true,
            'local_backend_autoload' => true,
        ]);
    }

    public static function adapter(object $b, Context $c, bool $tags, ?\Closure $footprint = null, ?\Closure $flushExtra = null): Adapter
    {
        $b->setDirectives(['lifetime' => $c->defaultLifetime, 'logging' => false]);
        $a = new ZendBackendAdapter($b, $tags, $footprint ? static fn (object $_) => $footprint() : null);
        return $flushExtra ? new FlushHook($a, $flushExtra) : $a;
    }
}
