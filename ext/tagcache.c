/* tagcache.c: the module: startup, ini, phpinfo, request end. It knows the
 * engines only through tc_engines[] and their hooks (tc_backend.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "php_ini.h"
#include "ext/standard/info.h"
#include "zend_smart_str.h"
#include "php_tagcache.h"
#include "tc_lease.h"
#include "tc_util.h"

#include <pthread.h>

PHP_INI_BEGIN()
	PHP_INI_ENTRY("tagcache.shm.dir", "/dev/shm", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.shm.size", "64M", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.shm.segment", "default", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.shm.huge_pages", "1", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.cache_dir", "", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.max_size", "1G", PHP_INI_SYSTEM, NULL)
	PHP_INI_ENTRY("tagcache.file.durability", "never", PHP_INI_SYSTEM, NULL)
#ifdef HAVE_TAGCACHE_MEMCACHED
	/* the per-process tag-hint table (tc_memcached.c "tag hints") */
	PHP_INI_ENTRY("tagcache.memcached.hint_memory", "8M", PHP_INI_SYSTEM, NULL)
#endif
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

/* The one fork hook of the module: the shared primitives' (tc_util.c:
 * the counter stripe), then each engine's, in table order. */
static void engines_atfork_child(void)
{
	const tc_engine *e;

	tc_util_atfork_child();
	for (e = tc_engines; e->be; e++) {
		if (e->be->atfork_child) {
			e->be->atfork_child();
		}
	}
}

static PHP_MINIT_FUNCTION(tagcache)
{
	static bool atfork_done;

	(void)type;
	REGISTER_INI_ENTRIES();
	tc_crash_init();
	tc_set_log_sink(log_to_php);
	tc_set_crash_hook(fatal_at);
	tc_class_minit();
	if (!atfork_done) {
		/* once per process, even if a SAPI starts the module twice: the
		 * hooks must not run twice in a child */
		atfork_done = true;
		pthread_atfork(NULL, NULL, engines_atfork_child);
	}
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(tagcache)
{
	const tc_engine *e;

	(void)type;
	UNREGISTER_INI_ENTRIES();
	for (e = tc_engines; e->be; e++) {
		if (e->be->mshutdown) {
			e->be->mshutdown();
		}
	}
	return SUCCESS;
}

/* Each engine notices what changed under it since the last request (shm: a
 * segment another process truncated is attached again before anything
 * touches it, a SIGBUS else). */
static PHP_RINIT_FUNCTION(tagcache)
{
	const tc_engine *e;

	(void)type;
	(void)module_number;
	for (e = tc_engines; e->be; e++) {
		if (e->be->rinit) {
			e->be->rinit();
		}
	}
	return SUCCESS;
}

/* A request that bailed out (hard timeout, fatal error) in the middle of a
 * locked section must not leave the lock held: each engine gives back what
 * it holds. */
static PHP_RSHUTDOWN_FUNCTION(tagcache)
{
	const tc_engine *e;

	(void)type;
	(void)module_number;
	for (e = tc_engines; e->be; e++) {
		if (e->be->rshutdown) {
			e->be->rshutdown();
		}
	}
	/* rebuild leases a request took and never ended with a save (a fatal
	 * error, exit(), an uncaught exception): the next caller rebuilds now,
	 * not after rebuild_timeout */
	tc_lease_release_all();
	return SUCCESS;
}

static void info_row(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	php_info_print_table_row(2, name, value);
}

static PHP_MINFO_FUNCTION(tagcache)
{
	const tc_engine *e;
	smart_str names = {0};

	(void)zend_module;
	for (e = tc_engines; e->be; e++) {
		if (names.s) {
			smart_str_appends(&names, ", ");
		}
		smart_str_appends(&names, e->be->name);
	}
	smart_str_0(&names);
	php_info_print_table_start();
	php_info_print_table_row(2, "tagcache support", "enabled");
	php_info_print_table_row(2, "Version", PHP_TAGCACHE_VERSION);
	php_info_print_table_row(2, "Backends", names.s ? ZSTR_VAL(names.s) : "");
	smart_str_free(&names);
	for (e = tc_engines; e->be; e++) {
		if (e->be->minfo) {
			e->be->minfo(info_row, NULL);
		}
	}
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
