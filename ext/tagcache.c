/* tagcache.c: the module: startup, ini, phpinfo, request end. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "php_ini.h"
#include "ext/standard/info.h"
#include "php_tagcache.h"
#include "tc_shm.h"
#include "tc_util.h"
#include "tc_file.h"
#ifdef HAVE_TAGCACHE_REDIS
#include "tc_redis.h"
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
#include "tc_memcached.h"
#endif

PHP_INI_BEGIN()
	PHP_INI_ENTRY("tagcache.shm.dir", "/dev/shm", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.shm.size", "64M", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.shm.segment", "default", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.cache_dir", "", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.max_size", "1G", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.durability", "never", PHP_INI_SYSTEM, NULL)
PHP_INI_END()

/* php_log_err() writes whatever log_errors says (to stderr in the CLI
 * without error_log): honour log_errors=0. */
static void log_to_php(const char *msg)
{
	if (PG(log_errors)) {
		php_log_err((char *)msg);
	}
}

/* A fatal error in the middle of a locked section, for the tests that
 * prove the lock does not stay held (TAGCACHE_TEST_CRASH_MODE=fatal). */
static void fatal_at(const char *point)
{
	zend_error_noreturn(E_ERROR, "tagcache test: fatal error at crash point %s", point);
}

static PHP_MINIT_FUNCTION(tagcache)
{
	(void)type;
	REGISTER_INI_ENTRIES();
	tc_crash_init();
	tc_set_log_sink(log_to_php);
	tc_set_crash_hook(fatal_at);
	tc_class_minit();
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(tagcache)
{
	(void)type;
	UNREGISTER_INI_ENTRIES();
#ifdef HAVE_TAGCACHE_REDIS
	tc_redis_shutdown();
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
	tc_memcached_shutdown();
#endif
	return SUCCESS;
}

/* A segment that another process truncated or extended since the last
 * request is attached again before anything touches it (a SIGBUS else). */
static PHP_RINIT_FUNCTION(tagcache)
{
	(void)type;
	(void)module_number;
	tc_shm_fresh_all();
	return SUCCESS;
}

/* A request that bailed out (hard timeout, fatal error) in the middle of a
 * locked section must not leave the lock held. */
static PHP_RSHUTDOWN_FUNCTION(tagcache)
{
	(void)type;
	(void)module_number;
	tc_shm_release_held();
	tc_file_release_held();
	return SUCCESS;
}

static PHP_MINFO_FUNCTION(tagcache)
{
	(void)zend_module;
	php_info_print_table_start();
	php_info_print_table_row(2, "tagcache support", "enabled");
	php_info_print_table_row(2, "Version", PHP_TAGCACHE_VERSION);
	php_info_print_table_row(2, "Backends", "shm, file"
#ifdef HAVE_TAGCACHE_REDIS
		", redis"
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
		", memcached"
#endif
	);
	php_info_print_table_row(2, "Shm segment layout", "1");
	php_info_print_table_row(2, "File store layout", TC_FILE_LAYOUT_STR);
#ifdef HAVE_TAGCACHE_REDIS
	{
		char buf[128];

		tc_redis_info(buf, sizeof(buf));
		php_info_print_table_row(2, "Redis backend", buf);
	}
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
	{
		char buf[128];

		tc_memcached_info(buf, sizeof(buf));
		php_info_print_table_row(2, "Memcached backend", buf);
	}
#endif
	php_info_print_table_end();
	DISPLAY_INI_ENTRIES();
}

zend_module_entry tagcache_module_entry = {
	STANDARD_MODULE_HEADER,
	"tagcache",
	NULL,
	PHP_MINIT(tagcache),
	PHP_MSHUTDOWN(tagcache),
	PHP_RINIT(tagcache),
	PHP_RSHUTDOWN(tagcache),
	PHP_MINFO(tagcache),
	PHP_TAGCACHE_VERSION,
	STANDARD_MODULE_PROPERTIES
};

#ifdef COMPILE_DL_TAGCACHE
ZEND_GET_MODULE(tagcache)
#endif
