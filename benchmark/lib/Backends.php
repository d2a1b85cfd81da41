<?php

declare(strict_types=1);

namespace TagCacheBench;

/**
 * Every backend the benchmark knows. A row runs when its requirement holds
 * (class present, paths given, servers started) and says why not otherwise.
 *
 * Fields:
 *   label    what the tables print
 *   group    tagcache | peer | optional (Zend/Cm, only with their paths)
 *   tags     false: cleans are "n/a" (not run) for this backend
 *   apcu     the store is APCu: valid only when clients share one APCu
 *            (fork, fpm); refused in cli mode
 *   servers  servers it needs: redis, memcached (started by --all)
 *   requires fn(Context): ?string   null when usable, else why "missing"
 *   create   fn(Context): Adapter
 */
final class Backends
{
    /**
     * The native tagcache classes. Only TagCache\Shm exists today; the others
     * are picked up as soon as `class_exists` says they landed. Options are
     * the Zend/Cm option names (unknown names are ignored by tagcache), and
     * can be replaced without editing this file through the environment:
     *   TAGCACHE_BENCH_OPTIONS='{"tagcache-file": {"dir": "{tmp}/tc-file"}}'
     * with placeholders {tmp} {files} {redis_port} {memcached_port} {segment} {size}.
     */
    public static function tagcacheConfig(): array
    {
        return [
            'tagcache-shm' => [
                'class' => 'TagCache\\Shm',
                'label' => 'TagCache\\Shm',
                'servers' => [],
                'options' => ['segment' => '{segment}', 'size' => '{size}'],
            ],
            'tagcache-file' => [
                'class' => 'TagCache\\File',
                'label' => 'TagCache\\File',
                'servers' => [],
                'options' => ['dir' => '{files}/tagcache-file', 'cache_dir' => '{files}/tagcache-file'],
            ],
            'tagcache-redis' => [
                'class' => 'TagCache\\Redis',
                'label' => 'TagCache\\Redis',
                'servers' => ['redis'],
                'options' => ['server' => '127.0.0.1', 'port' => '{redis_port}', 'database' => 0],
            ],
            'tagcache-twolevel' => [
                'class' => 'TagCache\\TwoLevel',
                'label' => 'TagCache\\TwoLevel (Shm + Redis)',
                'servers' => ['redis'],
                'options' => [
                    'slow_backend' => 'Redis',
                    'slow_backend_options' => ['server' => '127.0.0.1', 'port' => '{redis_port}', 'database' => 0],
                    // one segment per node (--nodes); node 0 is {segment}_tl
                    'fast_backend_options' => ['segment' => '{segment}_tl{node}', 'size' => '{size}'],
                ],
            ],
            'tagcache-memcached' => [
                'class' => 'TagCache\\Memcached',
                'label' => 'TagCache\\Memcached',
                'servers' => ['memcached'],
                'options' => [
                    'servers' => [['host' => '127.0.0.1', 'port' => '{memcached_port}']],
                    'server' => '127.0.0.1',
                    'port' => '{memcached_port}',
                ],
            ],
        ];
    }

    /** @return array<string, array> name => definition, in table order */
    public static function all(): array
    {
        $defs = [];
        $override = json_decode((string)getenv('TAGCACHE_BENCH_OPTIONS'), true) ?: [];
        foreach (self::tagcacheConfig() as $name => $cfg) {
            if (isset($override[$name])) {
                $cfg['options'] = $override[$name];
            }
            $defs[$name] = [
                'label' => $cfg['label'],
                'group' => 'tagcache',
                'tags' => true,
                'apcu' => false,
                'servers' => $cfg['servers'],
                'requires' => static fn (Context $c): ?string => class_exists($cfg['class'])
                    ? null
                    : (extension_loaded('tagcache') ? "class {$cfg['class']} not in this build" : 'extension tagcache not loaded'),
                'create' => static function (Context $c) use ($cfg): Adapter {
                    $class = $cfg['class'];
                    $o = self::expand($cfg['options'], $c);
                    if ($c->maxStaleness !== null && $class === 'TagCache\\TwoLevel') {
                        $o['max_staleness'] = $c->maxStaleness;
                    }
                    $b = new $class($o);
                    $b->setDirectives(['lifetime' => $c->defaultLifetime, 'logging' => false]);
                    return new ZendBackendAdapter($b, true, static function (object $b): ?array {
                        $s = $b->stats();
                        if (!isset($s['bytes_used'])) {
                            return null;
                        }
                        return ['bytes' => (int)$s['bytes_used'], 'entries' => isset($s['entries']) ? (int)$s['entries'] : null,
                            'how' => "stats()['bytes_used'] / stats()['entries']"];
                    });
                },
            ];
        }

        $apcu = static fn (): ?string => !extension_loaded('apcu') ? 'extension apcu not loaded'
            : (!apcu_enabled() ? 'APCu not enabled (apc.enable_cli=0?)' : null);
        $symfony = static function (Context $c, bool $needApcu = false) use ($apcu): ?string {
            if ($needApcu && ($r = $apcu()) !== null) {
                return $r;
            }
            if ($c->symfonyAutoload === null) {
                return 'symfony/cache not found (php-symfony-cache, or SYMFONY_CACHE_AUTOLOAD)';
            }
            require_once $c->symfonyAutoload;
            return null;
        };
        $redisExt = static fn (): ?string => extension_loaded('redis') ? null : 'extension redis not loaded';

        $defs['apcu'] = [
            'label' => 'APCu directly (no tags)',
            'group' => 'peer', 'tags' => false, 'apcu' => true, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $apcu(),
            'create' => static fn (Context $c): Adapter => new ApcuAdapter($c->defaultLifetime),
        ];
        $defs['redis'] = [
            'label' => 'phpredis GET/SETEX directly (no tags)',
            'group' => 'peer', 'tags' => false, 'apcu' => false, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $redisExt(),
            'create' => static fn (Context $c): Adapter => new RedisAdapter('127.0.0.1', $c->redisPort, $c->defaultLifetime),
        ];
        $defs['memcached'] = [
            'label' => 'php-memcached directly (no tags)',
            'group' => 'peer', 'tags' => false, 'apcu' => false, 'servers' => ['memcached'],
            'requires' => static fn (Context $c): ?string => extension_loaded('memcached') ? null : 'extension memcached not loaded',
            'create' => static fn (Context $c): Adapter => new MemcachedAdapter('127.0.0.1', $c->memcachedPort, $c->defaultLifetime),
        ];
        $defs['symfony-apcu'] = [
            'label' => 'Symfony ApcuAdapter (no tags)',
            'group' => 'peer', 'tags' => false, 'apcu' => true, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $symfony($c, true),
            'create' => static fn (Context $c): Adapter => new SymfonyAdapter(
                new \Symfony\Component\Cache\Adapter\ApcuAdapter('bench', $c->defaultLifetime),
                false,
                $c->defaultLifetime,
                null,
                static fn () => apcu_footprint()
            ),
        ];
        $defs['symfony-tagaware-apcu'] = [
            'label' => 'Symfony TagAwareAdapter(ApcuAdapter)',
            'group' => 'peer', 'tags' => true, 'apcu' => true, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $symfony($c, true),
            'create' => static fn (Context $c): Adapter => new SymfonyAdapter(
                new \Symfony\Component\Cache\Adapter\TagAwareAdapter(
                    new \Symfony\Component\Cache\Adapter\ApcuAdapter('bench', $c->defaultLifetime)
                ),
                true,
                $c->defaultLifetime,
                null,
                static fn () => apcu_footprint()
            ),
        ];
        $defs['symfony-fs-tagaware'] = [
            'label' => 'Symfony FilesystemTagAwareAdapter',
            'group' => 'peer', 'tags' => true, 'apcu' => false, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $symfony($c),
            'create' => static function (Context $c): Adapter {
                $dir = $c->dir('symfony-fs');
                return new SymfonyAdapter(
                    new \Symfony\Component\Cache\Adapter\FilesystemTagAwareAdapter('bench', $c->defaultLifetime, $dir),
                    true,
                    $c->defaultLifetime,
                    null,
                    static fn () => dir_footprint($dir) + ['entries' => null, 'how' => 'allocated blocks of the cache directory']
                );
            },
        ];
        $defs['symfony-redis-tagaware'] = [
            'label' => 'Symfony RedisTagAwareAdapter',
            'group' => 'peer', 'tags' => true, 'apcu' => false, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $redisExt() ?? $symfony($c),
            'create' => static function (Context $c): Adapter {
                $probe = new RedisProbe($c->redisPort);
                return new SymfonyAdapter(
                    new \Symfony\Component\Cache\Adapter\RedisTagAwareAdapter($probe->redis, 'bench', $c->defaultLifetime),
                    true,
                    $c->defaultLifetime,
                    $probe->flush(...),
                    $probe->footprint(...)
                );
            },
        ];
        $defs['symfony-chain-apcu-redis'] = [
            'label' => 'Symfony TagAware(Chain(APCu, Redis))',
            'group' => 'peer', 'tags' => true, 'apcu' => true, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $redisExt() ?? $symfony($c, true),
            'create' => static function (Context $c): Adapter {
                $probe = new RedisProbe($c->redisPort);
                $items = new \Symfony\Component\Cache\Adapter\ChainAdapter([
                    new \Symfony\Component\Cache\Adapter\ApcuAdapter('bench', $c->defaultLifetime),
                    new \Symfony\Component\Cache\Adapter\RedisAdapter($probe->redis, 'bench', $c->defaultLifetime),
                ], $c->defaultLifetime);
                $tags = new \Symfony\Component\Cache\Adapter\RedisAdapter($probe->redis, 'benchtags', 0);
                return new SymfonyAdapter(
                    new \Symfony\Component\Cache\Adapter\TagAwareAdapter($items, $tags),
                    true,
                    $c->defaultLifetime,
                    static function () use ($probe): void {
                        apcu_clear_cache();
                        $probe->flush();
                    },
                    static function () use ($probe): array {
                        $a = apcu_footprint();
                        $r = $probe->footprint();
                        return ['bytes' => $a['bytes'] + $r['bytes'], 'entries' => null,
                            'apcu_bytes' => $a['bytes'], 'redis_bytes' => $r['bytes'], 'how' => 'APCu used + Redis used_memory'];
                    }
                );
            },
        ];

        // Optional peers: the PHP backends Magento shops use today.
        $zf = static fn (Context $c): ?string => Zend::setup($c, ['zf1']);
        $defs['zend-file'] = [
            'label' => 'Zend_Cache_Backend_File',
            'group' => 'optional', 'tags' => true, 'apcu' => false, 'servers' => [],
            'requires' => $zf,
            'create' => static function (Context $c): Adapter {
                $dir = $c->dir('zend-file');
                return Zend::adapter(new \Zend_Cache_Backend_File([
                    'cache_dir' => $dir, 'hashed_directory_level' => 1, 'file_name_prefix' => 'mage',
                ]), $c, true, static fn () => dir_footprint($dir) + ['entries' => null, 'how' => 'allocated blocks of the cache directory']);
            },
        ];
        $defs['cm-file'] = [
            'label' => 'Cm_Cache_Backend_File',
            'group' => 'optional', 'tags' => true, 'apcu' => false, 'servers' => [],
            'requires' => static fn (Context $c): ?string => Zend::setup($c, ['zf1', 'cm-file']),
            'create' => static function (Context $c): Adapter {
                $dir = $c->dir('cm-file');
                return Zend::adapter(new \Cm_Cache_Backend_File(Zend::cmFileOptions($dir)), $c, true,
                    static fn () => dir_footprint($dir) + ['entries' => null, 'how' => 'allocated blocks of the cache directory']);
            },
        ];
        $defs['cm-redis'] = [
            'label' => 'Cm_Cache_Backend_Redis (phpredis)',
            'group' => 'optional', 'tags' => true, 'apcu' => false, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $redisExt() ?? Zend::setup($c, ['zf1', 'cm-redis']),
            'create' => static function (Context $c): Adapter {
                $probe = new RedisProbe($c->redisPort);
                return Zend::adapter(new \Cm_Cache_Backend_Redis(Zend::cmRedisOptions($c)), $c, true,
                    $probe->footprint(...), $probe->flush(...));
            },
        ];
        $defs['zend-apc'] = [
            'label' => 'Zend_Cache_Backend_Apc (no tags)',
            'group' => 'optional', 'tags' => false, 'apcu' => true, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $apcu() ?? Zend::setup($c, ['zf1']),
            'create' => static fn (Context $c): Adapter => Zend::adapter(new \Zend_Cache_Backend_Apc([]), $c, false,
                static fn () => apcu_footprint()),
        ];
        $defs['zend-libmemcached'] = [
            'label' => 'Zend_Cache_Backend_Libmemcached (no tags)',
            'group' => 'optional', 'tags' => false, 'apcu' => false, 'servers' => ['memcached'],
            'requires' => static fn (Context $c): ?string => (extension_loaded('memcached') ? null : 'extension memcached not loaded')
                ?? Zend::setup($c, ['zf1']),
            'create' => static fn (Context $c): Adapter => Zend::adapter(new \Zend_Cache_Backend_Libmemcached([
                'servers' => [['host' => '127.0.0.1', 'port' => $c->memcachedPort, 'weight' => 1]],
            ]), $c, false, static fn () => (new MemcachedAdapter('127.0.0.1', $c->memcachedPort, 0))->footprint()),
        ];
        $defs['zend-twolevels-apcu-cmfile'] = [
            'label' => 'Zend TwoLevels APCu + Cm File',
            'group' => 'optional', 'tags' => true, 'apcu' => true, 'servers' => [],
            'requires' => static fn (Context $c): ?string => $apcu() ?? Zend::setup($c, ['zf1', 'cm-file']),
            'create' => static function (Context $c): Adapter {
                $dir = $c->dir('twolevels-cm-file');
                return Zend::adapter(Zend::twoLevels('Cm_Cache_Backend_File', Zend::cmFileOptions($dir)), $c, true,
                    static fn () => ['bytes' => apcu_footprint()['bytes'] + dir_footprint($dir)['bytes'], 'entries' => null,
                        'how' => 'APCu used + allocated blocks of the directory']);
            },
        ];
        $defs['zend-twolevels-apcu-cmredis'] = [
            'label' => 'Zend TwoLevels APCu + Cm Redis',
            'group' => 'optional', 'tags' => true, 'apcu' => true, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $apcu() ?? $redisExt() ?? Zend::setup($c, ['zf1', 'cm-redis']),
            'create' => static function (Context $c): Adapter {
                $probe = new RedisProbe($c->redisPort);
                return Zend::adapter(Zend::twoLevels('Cm_Cache_Backend_Redis', Zend::cmRedisOptions($c)), $c, true,
                    static fn () => ['bytes' => apcu_footprint()['bytes'] + $probe->footprint()['bytes'], 'entries' => null,
                        'how' => 'APCu used + Redis used_memory'],
                    static function () use ($probe): void {
                        apcu_clear_cache();
                        $probe->flush();
                    });
            },
        ];
        $defs['m2-remote-sync'] = [
            'label' => 'Magento 2 L2 (Cm File /dev/shm + Cm Redis)',
            'group' => 'optional', 'tags' => true, 'apcu' => false, 'servers' => ['redis'],
            'requires' => static fn (Context $c): ?string => $redisExt() ?? Zend::setup($c, ['zf1', 'cm-file', 'cm-redis', 'magento']),
            'create' => static function (Context $c): Adapter {
                $probe = new RedisProbe($c->redisPort);
                $dir = $c->shmDir('m2-local');
                return Zend::adapter(Zend::m2RemoteSync($c, $dir), $c, true,
                    static fn () => ['bytes' => dir_footprint($dir)['bytes'] + $probe->footprint()['bytes'], 'entries' => null,
                        'how' => 'allocated blocks of the local directory + Redis used_memory'],
                    $probe->flush(...));
            },
        ];
        return $defs;
    }

    /** Names run by default: the native shm store and APCu, through the same path. */
    public const DEFAULT_SET = ['tagcache-shm', 'apcu'];

    /** Names that need no server (the smoke test in the test suite runs these). */
    public static function serverless(): array
    {
        return array_keys(array_filter(self::all(), static fn ($d) => !$d['servers']));
    }

    public static function expand(mixed $v, Context $c): mixed
    {
        if (is_array($v)) {
            $out = [];
            foreach ($v as $k => $x) {
                $out[$k] = self::expand($x, $c);
            }
            return $out;
        }
        if (!is_string($v)) {
            return $v;
        }
        $map = [
            '{tmp}' => $c->tmp,
            '{files}' => $c->fileDir ?? $c->tmp,
            '{redis_port}' => (string)$c->redisPort,
            '{memcached_port}' => (string)$c->memcachedPort,
            '{segment}' => $c->shmSegment,
            '{size}' => $c->shmSize,
            '{node}' => $c->node ? "_n{$c->node}" : '',
        ];
        if (isset($map[$v]) && in_array($v, ['{redis_port}', '{memcached_port}'], true)) {
            return (int)$map[$v];
        }
        $s = strtr($v, $map);
        if ((str_starts_with($v, '{tmp}') || str_starts_with($v, '{files}')) && !is_dir($s)) {
            @mkdir($s, 0700, true);
        }
        return $s;
    }
}
