/* php_tagcache.h: the module, its globals and the class entries. */
#ifndef PHP_TAGCACHE_H
#define PHP_TAGCACHE_H

#include "php.h"
#include "tc_backend.h"

extern zend_module_entry tagcache_module_entry;
#define phpext_tagcache_ptr &tagcache_module_entry

#define PHP_TAGCACHE_VERSION "0.1.0"

extern zend_class_entry *tc_ce_exception, *tc_ce_config_exception,
	*tc_ce_storage_exception, *tc_ce_connection_exception,
	*tc_ce_backend, *tc_ce_abstract;

/* The engines this build has (tc_engines.c, the one place that knows which
 * are compiled in), each with the short name of its PHP class
 * (TagCache\<class_name>, final, extending TagCache\AbstractBackend), and
 * optionally the options its table cannot hold (TwoLevel's nested arrays),
 * parsed by tc_options_init() after the table's. Ends with {NULL, NULL,
 * NULL}. */
typedef struct {
	const char *class_name;
	const tc_backend *be;
	zend_result (*nested_options)(void *config, HashTable *opts);
} tc_engine;

extern const tc_engine tc_engines[];

/* One layout for every backend class: the engine, its state, and what the
 * Zend contract keeps per object (directives). */
typedef struct {
	const tc_engine *engine;  /* its entry of tc_engines[], bound at creation */
	const tc_backend *be;     /* engine->be; NULL for a class of the user's */
	void *state;    /* engine state, NULL until the constructor succeeded */
	void *config;   /* engine config struct (be->config_size bytes) */
	zend_long lifetime;
	bool lifetime_forever;
	bool logging;
	zval logger;
	void *lease;        /* the store's lease table (tc_lease.c), NULL until used */
	bool lease_failed;  /* it could not be opened: warned once */
	zend_object std;
} tc_object;

static inline tc_object *tc_from_obj(zend_object *o)
{
	return (tc_object *)((char *)o - XtOffsetOf(tc_object, std));
}

void tc_class_minit(void);

/* tc_options.c */
zend_result tc_options_init(tc_object *o, HashTable *opts);
zend_result tc_option_set(tc_object *o, zend_string *name, zval *value, bool opened);
zend_result tc_option_get(tc_object *o, zend_string *name, zval *rv);
zend_result tc_options_parse_into(const tc_backend *be, void *config, HashTable *opts);
/* tc_twolevel_opts.c: TwoLevel's nested option arrays, after the flat ones
 * (its tc_engines[] entry's nested_options) */
zend_result tc_twolevel_options(void *config, HashTable *opts);
zend_result tc_lifetime_from_zval(zval *v, zend_long *secs, bool *forever, const char *what);

#endif
