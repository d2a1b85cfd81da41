/*
 * tc_twolevel_opts.c: TagCache\TwoLevel's nested options. The flat ones
 * (slow_backend, max_staleness, ...) went through TwoLevel's table; here
 * the slow engine is picked by name (Zend TwoLevels' slow_backend, Magento
 * 2's remote_backend, with the class names users already have in
 * local.xml / env.php) and the sub-arrays are parsed with the sub-engine's
 * own option table, ini defaults included.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_tagcache.h"
#include "tc_twolevel.h"
#ifdef HAVE_TAGCACHE_REDIS
#include "tc_redis.h"
#endif
#ifdef HAVE_TAGCACHE_MEMCACHED
#include "tc_memcached.h"
#endif

static bool name_is(const char *name, const char *const *list)
{
	for (; *list; list++) {
		if (strcasecmp(name, *list) == 0) {
			return true;
		}
	}
	return false;
}

static const char *const redis_names[] = {"redis", "tagcache\\redis", "tagcache_zend_redis",
	"cm_cache_backend_redis", "magento\\framework\\cache\\backend\\redis", NULL};
static const char *const file_names[] = {"file", "tagcache\\file", "tagcache_zend_file",
	"cm_cache_backend_file", "zend_cache_backend_file", "magento\\framework\\cache\\backend\\file", NULL};
static const char *const memcached_names[] = {"memcached", "libmemcached", "tagcache\\memcached",
	"tagcache_zend_memcached", "zend_cache_backend_libmemcached", "zend_cache_backend_memcached",
	"magento\\framework\\cache\\backend\\memcached", NULL};
/* what a fast level may be called: the fast level is always Shm; the local
 * levels of Zend TwoLevels and Magento's L2 map to it */
static const char *const fast_names[] = {"shm", "tagcache\\shm", "tagcache_zend_shm", "apc", "apcu",
	"zend_cache_backend_apc", "zend_cache_backend_apcu", "file", "cm_cache_backend_file",
	"zend_cache_backend_file", "magento\\framework\\cache\\backend\\file", NULL};

static HashTable *sub(HashTable *opts, const char *a, const char *b, zend_result *bad)
{
	zend_string *key;
	zval *v;
	HashTable *found = NULL;

	ZEND_HASH_FOREACH_STR_KEY_VAL(opts, key, v) {
		if (!key) {
			continue;
		}
		if (strcasecmp(ZSTR_VAL(key), a) == 0 || strcasecmp(ZSTR_VAL(key), b) == 0) {
			ZVAL_DEREF(v);
			if (Z_TYPE_P(v) != IS_ARRAY) {
				zend_throw_exception_ex(tc_ce_config_exception, 0, "Option \"%s\" must be an array", ZSTR_VAL(key));
				*bad = FAILURE;
				return NULL;
			}
			found = Z_ARRVAL_P(v);
		}
	} ZEND_HASH_FOREACH_END();
	return found;
}

static bool has_key(HashTable *ht, const char *name)
{
	zend_string *key;

	ZEND_HASH_FOREACH_STR_KEY(ht, key) {
		if (key && strcasecmp(ZSTR_VAL(key), name) == 0) {
			return true;
		}
	} ZEND_HASH_FOREACH_END();
	return false;
}

zend_result tc_twolevel_options(void *config, HashTable *opts)
{
	tc_twolevel_config *c = config;
	const char *name = c->slow_backend[0] ? c->slow_backend : "File";
	const tc_backend *be = NULL;
	HashTable *slow, *fast;
	zend_result bad = SUCCESS;

	if (*name == '\\') {
		name++;
	}
	if (name_is(name, redis_names)) {
#ifdef HAVE_TAGCACHE_REDIS
		be = &tc_backend_redis;
#else
		zend_throw_exception_ex(tc_ce_config_exception, 0,
			"Option \"slow_backend\": %s needs the Redis engine, which is not in this build", name);
		return FAILURE;
#endif
	} else if (name_is(name, file_names)) {
		be = &tc_backend_file;
	} else if (name_is(name, memcached_names)) {
#ifdef HAVE_TAGCACHE_MEMCACHED
		be = &tc_backend_memcached;
#else
		zend_throw_exception_ex(tc_ce_config_exception, 0,
			"Option \"slow_backend\": %s needs the memcached engine, which is not in this build", name);
		return FAILURE;
#endif
	} else {
		zend_throw_exception_ex(tc_ce_config_exception, 0,
			"Option \"slow_backend\": unknown backend \"%s\" (Redis, File or Memcached)", name);
		return FAILURE;
	}
	if (c->fast_backend[0]) {
		const char *f = c->fast_backend[0] == '\\' ? c->fast_backend + 1 : c->fast_backend;

		if (!name_is(f, fast_names)) {
			zend_throw_exception_ex(tc_ce_config_exception, 0,
				"Option \"fast_backend\": the fast level is always Shm, \"%s\" cannot be one", f);
			return FAILURE;
		}
	}
	if (be->config_size > sizeof(c->slow_cfg)) {
		zend_throw_exception_ex(tc_ce_config_exception, 0, "TwoLevel: the %s config does not fit", be->name);
		return FAILURE;
	}
	if (!tc_journal_for(be)) {
		zend_throw_exception_ex(tc_ce_config_exception, 0,
			"Option \"slow_backend\": %s has no invalidation journal in this build", be->name);
		return FAILURE;
	}
	slow = sub(opts, "slow_backend_options", "remote_backend_options", &bad);
	if (bad != SUCCESS) {
		return FAILURE;
	}
	fast = sub(opts, "fast_backend_options", "local_backend_options", &bad);
	if (bad != SUCCESS) {
		return FAILURE;
	}
	c->slow = be;
	if (tc_options_parse_into(be, c->slow_cfg, slow) != SUCCESS) {
		return FAILURE;
	}
	c->slow_parsed = 1;
	if (tc_options_parse_into(&tc_backend_shm, &c->fast_cfg, fast) != SUCCESS) {
		return FAILURE;
	}
	/* a segment of its own unless named: a plain TagCache\Shm on the
	 * default segment must not share the fast level */
	if (!fast || !has_key(fast, "segment")) {
		snprintf(c->fast_cfg.segment, sizeof(c->fast_cfg.segment), "twolevel");
	}
	return SUCCESS;
}
