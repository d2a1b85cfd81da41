/*
 * tc_engines.c: the engines this build has, the one place that knows which
 * are compiled in. The module (tagcache.c) calls their hooks and the PHP
 * layer (tc_class.c) registers one final class per entry, bound to its
 * engine; neither names an engine.
 *
 * Adding an engine: its own ext/tc_NAME*.c defining
 * `const tc_backend tc_backend_NAME` (tc_backend.h declares it), its sources
 * in config.m4 (and config.w32), and one line here (php_tagcache.h declares
 * the table).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "php_tagcache.h"

const tc_engine tc_engines[] = {
	{"Shm", &tc_backend_shm, NULL},
	{"File", &tc_backend_file, NULL},
#ifdef HAVE_TAGCACHE_REDIS
	{"Redis", &tc_backend_redis, NULL},
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
	{"Memcached", &tc_backend_memcached, NULL},
#endif
	{"TwoLevel", &tc_backend_twolevel, tc_twolevel_options},
	{NULL, NULL, NULL}
};
