/*
 * tc_class.c: the PHP classes. One object layout and one set of methods
 * for every backend; the concrete class only picks the engine: one final
 * class per entry of tc_engines[], bound to its engine when an object is
 * created. No engine is named here. Methods
 * parse and validate arguments, call the engine's vtable and convert the
 * results; they hold no engine lock while PHP allocates.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_attributes.h"
#include "ext/spl/spl_exceptions.h"
#include "ext/date/php_date.h"
#include "php_tagcache.h"
#include "tagcache_arginfo.h"
#include "tc_lease.h"

zend_class_entry *tc_ce_exception, *tc_ce_config_exception, *tc_ce_storage_exception,
	*tc_ce_connection_exception, *tc_ce_backend, *tc_ce_abstract;

/* The class of each entry of tc_engines[], same index. */
#define TC_ENGINES_MAX 16
static zend_class_entry *engine_ce[TC_ENGINES_MAX];

static zend_object_handlers tc_handlers;

/* The engine of a class: its own entry (the engine classes are final); NULL
 * for a class of the user's that extends AbstractBackend directly, whose
 * constructor then says so. */
static const tc_engine *engine_of(zend_class_entry *ce)
{
	size_t i;

	for (i = 0; tc_engines[i].be; i++) {
		if (engine_ce[i] == ce) {
			return &tc_engines[i];
		}
	}
	return NULL;
}

static zend_object *tc_create(zend_class_entry *ce)
{
	tc_object *o = zend_object_alloc(sizeof(tc_object), ce);

	o->engine = engine_of(ce);
	o->be = o->engine ? o->engine->be : NULL;
	o->state = NULL;
	o->config = o->be ? ecalloc(1, o->be->config_size) : NULL;
	o->lifetime = 3600;
	o->lifetime_forever = false;
	o->logging = false;
	o->lease = NULL;
	o->lease_failed = false;
	ZVAL_NULL(&o->logger);
	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &tc_handlers;
	return &o->std;
}

static void tc_free(zend_object *obj)
{
	tc_object *o = tc_from_obj(obj);

	if (o->state) {
		tc_lease_release_owner(o);  /* leases it took and did not end */
		o->be->close(o->state);
		o->state = NULL;
	}
	if (o->config) {
		efree(o->config);
	}
	zval_ptr_dtor(&o->logger);
	zend_object_std_dtor(obj);
}

#define TC_THIS() tc_from_obj(Z_OBJ_P(ZEND_THIS))

#define TC_CHECK_EX(o, failure) do { \
		if (!(o)->state) { \
			zend_throw_error(NULL, "%s object is not initialized: its constructor did not run", \
			                 ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name)); \
			failure; \
		} \
	} while (0)

#define TC_CHECK(o) TC_CHECK_EX(o, RETURN_THROWS())

static bool check_id(zend_string *id, uint32_t arg)
{
	if (ZSTR_LEN(id) == 0) {
		zend_argument_value_error(arg, "must not be empty");
		return false;
	}
	if (ZSTR_LEN(id) > TC_ID_MAX) {
		zend_argument_value_error(arg, "must be at most %d bytes long", TC_ID_MAX);
		return false;
	}
	return true;
}

static inline tc_str S(zend_string *s)
{
	tc_str r = {ZSTR_VAL(s), ZSTR_LEN(s)};
	return r;
}

/* The store's leases (tc_lease.c) in *out, or NULL for an engine without
 * any. A network engine (and TwoLevel over one) has its own (the engine
 * state is the handle); Shm and File (and TwoLevel over File) the machine
 * table, opened on first use; with create, made if absent (a warning,
 * once, if it cannot be: then no stampede protection). */
static const tc_lease *lease_of(tc_object *o, bool create, tc_lease *out)
{
	char path[TC_OPT_STRMAX + 16], err[TC_ERRBUF];
	int mode = 0600;
	const tc_backend *be = o->be;
	void *st = o->state;
	const tc_lease_ops *ops = tc_lease_ops_for(&be, &st);

	out->owner = o;
	if (ops) {
		out->ops = ops;
		out->h = st;
		return out;
	}
	out->ops = &tc_lease_machine;
	if (o->lease) {
		out->h = o->lease;
		return out;
	}
	if (!be->lease_home || o->lease_failed) {
		return NULL;
	}
	if (be->lease_home(st, path, sizeof(path), &mode) != TC_OK) {
		o->lease_failed = true;
		return NULL;
	}
	err[0] = '\0';
	o->lease = tc_lease_open(path, mode, create, err);
	if (!o->lease && create) {
		o->lease_failed = true;
		php_error_docref(NULL, E_WARNING, "%s: no stampede protection", err);
	}
	out->h = o->lease;
	return o->lease ? out : NULL;
}

/* serve_stale is on (or, with reads, early_rebuild: for load() and
 * save()): sv is set up for tc_stale.c. */
static bool stale_on_ex(tc_object *o, tc_stale *sv, bool reads)
{
	const tc_stale_opts *so;

	if (!o->be->stale_opts) {
		return false;
	}
	so = o->be->stale_opts(o->config);
	if (!(so->serve_stale > 0) && !(reads && so->early_rebuild > 0)) {
		return false;
	}
	sv->be = o->be;
	sv->st = o->state;
	sv->o = so;
	sv->tab = lease_of(o, true, &sv->lease);
	return true;
}

/* Any stampede option is set. */
static bool stale_set(tc_object *o)
{
	const tc_stale_opts *so = o->be->stale_opts ? o->be->stale_opts(o->config) : NULL;

	return so && (so->serve_stale > 0 || so->early_rebuild > 0);
}

static bool stale_on(tc_object *o, tc_stale *sv)
{
	return stale_on_ex(o, sv, false);
}

/* The methods whose one argument is an id (test, remove, getMetadatas,
 * ___expire): the constructed object, with the id checked; NULL with an
 * exception. */
static inline tc_object *id_method(INTERNAL_FUNCTION_PARAMETERS, zend_string **id)
{
	tc_object *o = TC_THIS();

	(void)return_value;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(*id)
	ZEND_PARSE_PARAMETERS_END_EX(return NULL);

	TC_CHECK_EX(o, return NULL);
	return check_id(*id, 1) ? o : NULL;
}

/* One element of a tags argument: a string of 1 to TC_TAG_MAX bytes;
 * false with an exception otherwise. */
static bool tag_ok(zval *v, uint32_t arg)
{
	if (Z_TYPE_P(v) != IS_STRING) {
		zend_argument_type_error(arg, "must contain only strings, %s found", zend_zval_type_name(v));
		return false;
	}
	if (Z_STRLEN_P(v) == 0 || Z_STRLEN_P(v) > TC_TAG_MAX) {
		zend_argument_value_error(arg, "must contain tags of 1 to %d bytes", TC_TAG_MAX);
		return false;
	}
	return true;
}

/* Validated, de-duplicated tags; NULL with an exception on bad input.
 * *n may be 0 (then the result is a dummy non-NULL pointer to free). */
static tc_str *tags_arg(HashTable *ht, uint32_t arg, size_t *n)
{
	uint32_t cnt = ht ? zend_hash_num_elements(ht) : 0;
	tc_str *out;
	HashTable seen;
	zval *v;
	size_t k = 0;

	*n = 0;
	if (cnt > TC_TAGS_MAX) {
		zend_argument_value_error(arg, "must hold at most %d tags", TC_TAGS_MAX);
		return NULL;
	}
	out = safe_emalloc(cnt ? cnt : 1, sizeof(tc_str), 0);
	if (!cnt) {
		return out;
	}
	if (cnt <= 16) {
		/* the usual case: a few tags, de-duplicated by comparison */
		ZEND_HASH_FOREACH_VAL(ht, v) {
			size_t j;

			ZVAL_DEREF(v);
			if (!tag_ok(v, arg)) {
				efree(out);
				return NULL;
			}
			for (j = 0; j < k; j++) {
				if (out[j].len == Z_STRLEN_P(v) && memcmp(out[j].p, Z_STRVAL_P(v), out[j].len) == 0) {
					break;
				}
			}
			if (j == k) {
				out[k].p = Z_STRVAL_P(v);
				out[k].len = Z_STRLEN_P(v);
				k++;
			}
		} ZEND_HASH_FOREACH_END();
		*n = k;
		return out;
	}
	zend_hash_init(&seen, cnt, NULL, NULL, 0);
	ZEND_HASH_FOREACH_VAL(ht, v) {
		ZVAL_DEREF(v);
		if (!tag_ok(v, arg)) {
			goto fail;
		}
		if (zend_hash_add_empty_element(&seen, Z_STR_P(v))) {
			out[k].p = Z_STRVAL_P(v);
			out[k].len = Z_STRLEN_P(v);
			k++;
		}
	} ZEND_HASH_FOREACH_END();
	zend_hash_destroy(&seen);
	*n = k;
	return out;
fail:
	zend_hash_destroy(&seen);
	efree(out);
	return NULL;
}

static void warn(tc_object *o, const char *what, const char *err)
{
	(void)o;
	if (*err) {
		php_error_docref(NULL, E_WARNING, "%s failed: %s", what, err);
	}
}

/* After every engine call: a network engine's failure of that call throws
 * TagCache\ConnectionException (on_error=exception) or has been logged
 * (on_error=miss, the method returns its Zend result quietly). */
static bool raised(tc_object *o)
{
	char err[TC_ERRBUF];

	if (!o->be->failure) {
		return false;
	}
	err[0] = '\0';
	if (o->be->failure(o->state, err) == TC_FAIL_THROW) {
		zend_throw_exception(tc_ce_connection_exception, err, 0);
		return true;
	}
	return false;
}

#define TC_RAISE(o) do { \
		if (raised(o)) { \
			RETURN_THROWS(); \
		} \
	} while (0)

/* ------------------------------------------------------------ callbacks */

static char *alloc_zstr(void *ctx, size_t len)
{
	zend_string **s = ctx;

	if (*s) {
		zend_string_efree(*s);
	}
	*s = zend_string_alloc(len, 0);
	return ZSTR_VAL(*s);
}

static void emit_list(void *ctx, const char *p, size_t len)
{
	add_next_index_stringl((zval *)ctx, p, len);
}

/* A listing: the derived keys of stale copies are no entries. */
static void emit_list_visible(void *ctx, const char *p, size_t len)
{
	if (!tc_stale_key_is(p, len)) {
		add_next_index_stringl((zval *)ctx, p, len);
	}
}

static void emit_stat(void *ctx, const char *name, int64_t v)
{
	add_assoc_long((zval *)ctx, name, (zend_long)v);
}

/* The stampede counters after the engine's own: a name the engine uses
 * already (TwoLevel's stale_served, its stale_if_error reads) gets the
 * prefix "stampede_". */
static void emit_stat_new(void *ctx, const char *name, int64_t v)
{
	if (zend_hash_str_exists(Z_ARRVAL_P((zval *)ctx), name, strlen(name))) {
		char b[64];

		snprintf(b, sizeof(b), "stampede_%s", name);
		add_assoc_long((zval *)ctx, b, (zend_long)v);
		return;
	}
	add_assoc_long((zval *)ctx, name, (zend_long)v);
}

/* -------------------------------------------------------------- methods */

ZEND_METHOD(TagCache_AbstractBackend, __construct)
{
	(void)return_value;
	tc_object *o = TC_THIS();
	HashTable *opts = NULL, empty;
	char err[TC_ERRBUF];
	int r;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(opts)
	ZEND_PARSE_PARAMETERS_END();

	if (!o->be) {
		zend_throw_error(NULL, "%s is not a tagcache backend: extend a concrete backend class",
		                 ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name));
		RETURN_THROWS();
	}
	if (o->state) {
		zend_throw_error(NULL, "%s is already constructed", ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name));
		RETURN_THROWS();
	}
	if (!opts) {
		zend_hash_init(&empty, 0, NULL, NULL, 0);
		r = tc_options_init(o, &empty) == SUCCESS ? TC_OK : TC_ERR;
		zend_hash_destroy(&empty);
	} else {
		r = tc_options_init(o, opts) == SUCCESS ? TC_OK : TC_ERR;
	}
	if (r != TC_OK) {
		RETURN_THROWS();
	}
	err[0] = '\0';
	r = o->be->open(&o->state, o->config, err);
	if (r != TC_OK) {
		o->state = NULL;
		zend_throw_exception_ex(r == TC_ERR_CONFIG ? tc_ce_config_exception : tc_ce_storage_exception, 0, "%s", err);
		RETURN_THROWS();
	}
}

ZEND_METHOD(TagCache_AbstractBackend, setDirectives)
{
	(void)return_value;
	tc_object *o = TC_THIS();
	HashTable *d;
	zend_string *key;
	zend_ulong idx;
	zval *v;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(d)
	ZEND_PARSE_PARAMETERS_END();

	ZEND_HASH_FOREACH_KEY_VAL(d, idx, key, v) {
		if (!key) {
			zend_throw_exception_ex(tc_ce_config_exception, 0,
				"Incorrect directive name: " ZEND_ULONG_FMT " (directive names must be strings)", idx);
			RETURN_THROWS();
		}
		ZVAL_DEREF(v);
		if (zend_string_equals_literal_ci(key, "lifetime") || zend_string_equals_literal_ci(key, "logging")
		    || zend_string_equals_literal_ci(key, "logger")) {
			if (tc_option_set(o, key, v, true) != SUCCESS) {
				RETURN_THROWS();
			}
		}
	} ZEND_HASH_FOREACH_END();
}

ZEND_METHOD(TagCache_AbstractBackend, getOption)
{
	tc_object *o = TC_THIS();
	zend_string *name;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(name)
	ZEND_PARSE_PARAMETERS_END();

	if (!o->be) {
		zend_throw_error(NULL, "%s object is not initialized", ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name));
		RETURN_THROWS();
	}
	if (tc_option_get(o, name, return_value) != SUCCESS) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(TagCache_AbstractBackend, setOption)
{
	(void)return_value;
	tc_object *o = TC_THIS();
	zend_string *name;
	zval *value;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(name)
		Z_PARAM_ZVAL(value)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (tc_option_set(o, name, value, true) != SUCCESS) {
		RETURN_THROWS();
	}
	/* options an open engine may take (lock_timeout) are read at open;
	 * reopen cheaply so they apply */
	{
		char err[TC_ERRBUF];
		void *st = NULL;
		int r = o->be->open(&st, o->config, err);

		if (r == TC_OK) {
			o->be->close(o->state);
			o->state = st;
		} else if (r == TC_ERR_CONFIG) {
			zend_throw_exception_ex(tc_ce_config_exception, 0, "%s", err);
			RETURN_THROWS();
		}
	}
}

static int do_load(tc_object *o, zend_string *id, bool allow_expired, zval *rv)
{
	zend_string *buf = NULL;
	char *data = NULL;
	size_t len = 0;
	tc_meta meta;
	tc_stale sv;
	int r = !allow_expired && stale_on_ex(o, &sv, true)
	        ? tc_stale_load(&sv, S(id), alloc_zstr, &buf, &data, &len, &meta)
	        : o->be->load(o->state, S(id), allow_expired, alloc_zstr, &buf, &data, &len, &meta);

	if (r == TC_OK) {
		ZSTR_VAL(buf)[len] = '\0';
		ZSTR_LEN(buf) = len;
		ZVAL_NEW_STR(rv, buf);
		return r;
	}
	if (buf) {
		zend_string_efree(buf);
	}
	return r;
}

ZEND_METHOD(TagCache_AbstractBackend, load)
{
	tc_object *o = TC_THIS();
	zend_string *id;
	bool dntcv = false;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(id)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(dntcv)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (!check_id(id, 1)) {
		RETURN_THROWS();
	}
	if (do_load(o, id, dntcv, return_value) != TC_OK) {
		TC_RAISE(o);
		RETURN_FALSE;
	}
}

ZEND_METHOD(TagCache_AbstractBackend, loadMany)
{
	tc_object *o = TC_THIS();
	HashTable *ids;
	zval *v;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(ids)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	ZEND_HASH_FOREACH_VAL(ids, v) {
		ZVAL_DEREF(v);
		if (Z_TYPE_P(v) != IS_STRING) {
			zend_argument_type_error(1, "must contain only strings, %s found", zend_zval_type_name(v));
			RETURN_THROWS();
		}
		if (!check_id(Z_STR_P(v), 1)) {
			RETURN_THROWS();
		}
	} ZEND_HASH_FOREACH_END();
	array_init_size(return_value, zend_hash_num_elements(ids));
	ZEND_HASH_FOREACH_VAL(ids, v) {
		zval data;

		ZVAL_DEREF(v);
		if (do_load(o, Z_STR_P(v), false, &data) == TC_OK) {
			zend_symtable_update(Z_ARRVAL_P(return_value), Z_STR_P(v), &data);
		} else if (raised(o)) {
			RETURN_THROWS();
		}
	} ZEND_HASH_FOREACH_END();
}

ZEND_METHOD(TagCache_AbstractBackend, test)
{
	zend_string *id;
	tc_object *o = id_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, &id);
	tc_meta meta;

	if (!o) {
		RETURN_THROWS();
	}
	if (o->be->load(o->state, S(id), 0, NULL, NULL, NULL, NULL, &meta) != TC_OK) {
		TC_RAISE(o);
		RETURN_FALSE;
	}
	RETURN_LONG((zend_long)meta.mtime);
}

ZEND_METHOD(TagCache_AbstractBackend, save)
{
	tc_object *o = TC_THIS();
	zend_string *data, *id;
	HashTable *tags = NULL;
	zval *lt = NULL;
	zend_long secs = o->lifetime;
	bool forever = o->lifetime_forever;
	tc_str *t;
	size_t nt;
	int64_t expire;
	char err[TC_ERRBUF];
	int r;

	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_STR(data)
		Z_PARAM_STR(id)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(tags)
		Z_PARAM_ZVAL(lt)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (!check_id(id, 2)) {
		RETURN_THROWS();
	}
	if (lt && Z_TYPE_P(lt) != IS_FALSE) {
		if (Z_TYPE_P(lt) == IS_TRUE) {
			zend_argument_type_error(4, "must be of type int|false|null, true given");
			RETURN_THROWS();
		}
		if (tc_lifetime_from_zval(lt, &secs, &forever, "save(): Argument #4 ($specificLifetime)") != SUCCESS) {
			RETURN_THROWS();
		}
	}
	if (ZSTR_LEN(data) > UINT32_MAX - 1) {
		zend_argument_value_error(1, "must be shorter than 4 GB");
		RETURN_THROWS();
	}
	t = tags_arg(tags, 3, &nt);
	if (!t) {
		RETURN_THROWS();
	}
	expire = forever ? TC_EXPIRE_NEVER : (int64_t)php_time() + secs;
	err[0] = '\0';
	{
		tc_stale sv;

		r = stale_on_ex(o, &sv, true) ? tc_stale_save(&sv, S(id), S(data), t, nt, expire, err)
		                     : o->be->save(o->state, S(id), S(data), t, nt, expire, err);
	}
	efree(t);
	TC_RAISE(o);
	if (r != TC_OK) {
		warn(o, "save", err);
		RETURN_FALSE;
	}
	RETURN_TRUE;
}

/* remember(): the value, or one build of it per id at a time. The
 * callback runs with no engine lock held (every engine call has returned);
 * a waiter sleeps in tc_lease_wait() (a futex), never longer than the
 * lease: rebuild_timeout, or less when the holder's process is gone. */
ZEND_METHOD(TagCache_AbstractBackend, remember)
{
	tc_object *o = TC_THIS();
	zend_string *id;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	HashTable *tags = NULL;
	zval *lt = NULL, rv;
	zend_long secs = o->lifetime;
	bool forever = o->lifetime_forever, leased = false;
	tc_stale_opts defaults;
	const tc_stale_opts *so;
	tc_lease lz;
	const tc_lease *tab;
	tc_stale sv;
	tc_str *t;
	size_t nt;
	int64_t expire;
	char err[TC_ERRBUF];
	int attempt, r;

	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_STR(id)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(tags)
		Z_PARAM_ZVAL(lt)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (!check_id(id, 1)) {
		RETURN_THROWS();
	}
	if (lt && Z_TYPE_P(lt) != IS_FALSE) {
		if (Z_TYPE_P(lt) == IS_TRUE) {
			zend_argument_type_error(4, "must be of type int|false|null, true given");
			RETURN_THROWS();
		}
		if (tc_lifetime_from_zval(lt, &secs, &forever, "remember(): Argument #4 ($lifetime)") != SUCCESS) {
			RETURN_THROWS();
		}
	}
	t = tags_arg(tags, 3, &nt);
	if (!t) {
		RETURN_THROWS();
	}
	tc_stale_defaults(&defaults);
	so = o->be->stale_opts ? o->be->stale_opts(o->config) : &defaults;
	tab = lease_of(o, true, &lz);

	for (attempt = 0; attempt < 8; attempt++) {
		r = do_load(o, id, false, return_value);
		if (r == TC_OK) {
			efree(t);
			return;  /* fresh, or stale while another process rebuilds */
		}
		if (raised(o)) {
			efree(t);
			RETURN_THROWS();
		}
		if (!tab) {
			break;
		}
		r = tc_lease_take(tab, S(id), tc_rebuild_timeout(so), 0);
		if (r == TC_LEASE_HELD) {
			tc_lease_wait(tab, S(id), tc_rebuild_timeout(so));
			continue;
		}
		leased = r == TC_LEASE_TAKEN || r == TC_LEASE_MINE;
		if (r == TC_LEASE_TAKEN && do_load(o, id, false, return_value) == TC_OK) {
			/* it landed between the miss and the lease */
			tc_lease_release(tab, S(id));
			efree(t);
			return;
		}
		break;
	}

	ZVAL_UNDEF(&rv);
	fci.retval = &rv;
	fci.param_count = 0;
	fci.params = NULL;
	fci.named_params = NULL;
	if (zend_call_function(&fci, &fcc) != SUCCESS || EG(exception) || Z_TYPE(rv) == IS_UNDEF) {
		zval_ptr_dtor(&rv);
		if (leased) {
			tc_lease_release(tab, S(id));  /* the next caller builds */
		}
		efree(t);
		RETURN_THROWS();
	}
	if (Z_TYPE(rv) != IS_STRING) {
		if (leased) {
			tc_lease_release(tab, S(id));
		}
		zend_type_error("remember(): Argument #2 ($build) must return a string, %s returned",
		                zend_zval_type_name(&rv));
		zval_ptr_dtor(&rv);
		efree(t);
		RETURN_THROWS();
	}
	expire = forever ? TC_EXPIRE_NEVER : (int64_t)php_time() + secs;
	err[0] = '\0';
	if (!stale_on(o, &sv)) {
		sv.be = o->be;
		sv.st = o->state;
		sv.o = so;
		sv.tab = tab;
	}
	r = tc_stale_save(&sv, S(id), S(Z_STR(rv)), t, nt, expire, err);
	efree(t);
	if (raised(o)) {
		if (tab) {
			tc_lease_release(tab, S(id));
		}
		zval_ptr_dtor(&rv);
		RETURN_THROWS();
	}
	if (r != TC_OK) {
		warn(o, "remember", err);
		if (tab) {
			tc_lease_release(tab, S(id));
		}
	}
	RETURN_COPY_VALUE(&rv);
}

ZEND_METHOD(TagCache_AbstractBackend, remove)
{
	zend_string *id;
	tc_object *o = id_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, &id);
	tc_stale sv;
	int r;

	if (!o) {
		RETURN_THROWS();
	}
	r = stale_on(o, &sv) ? tc_stale_remove(&sv, S(id)) : o->be->remove(o->state, S(id));
	TC_RAISE(o);
	RETURN_BOOL(r == TC_OK);
}

static bool parse_mode(zend_string *mode, tc_clean_mode *out)
{
	if (zend_string_equals_literal(mode, "all")) {
		*out = TC_CLEAN_ALL;
	} else if (zend_string_equals_literal(mode, "old")) {
		*out = TC_CLEAN_OLD;
	} else if (zend_string_equals_literal(mode, "matchingTag")) {
		*out = TC_CLEAN_MATCHING;
	} else if (zend_string_equals_literal(mode, "notMatchingTag")) {
		*out = TC_CLEAN_NOT_MATCHING;
	} else if (zend_string_equals_literal(mode, "matchingAnyTag")) {
		*out = TC_CLEAN_MATCHING_ANY;
	} else {
		zend_argument_value_error(1, "must be one of \"all\", \"old\", \"matchingTag\", "
		                             "\"notMatchingTag\" or \"matchingAnyTag\"");
		return false;
	}
	return true;
}

ZEND_METHOD(TagCache_AbstractBackend, clean)
{
	tc_object *o = TC_THIS();
	zend_string *mode = NULL;
	HashTable *tags = NULL;
	tc_clean_mode m = TC_CLEAN_ALL;
	tc_str *t;
	size_t nt;
	char err[TC_ERRBUF];
	int r;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(mode)
		Z_PARAM_ARRAY_HT(tags)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (mode && !parse_mode(mode, &m)) {
		RETURN_THROWS();
	}
	t = tags_arg(m >= TC_CLEAN_MATCHING ? tags : NULL, 2, &nt);
	if (!t) {
		RETURN_THROWS();
	}
	if (m >= TC_CLEAN_MATCHING && nt == 0) {
		efree(t);
		RETURN_TRUE;  /* a tag mode with no tag selects nothing */
	}
	err[0] = '\0';
	{
		tc_stale sv;

		r = stale_on(o, &sv) ? tc_stale_clean(&sv, m, t, nt, err)
		                     : o->be->clean(o->state, m, t, nt, err);
	}
	efree(t);
	TC_RAISE(o);
	if (r == TC_ERR) {
		warn(o, "clean", err);
		RETURN_FALSE;
	}
	RETURN_TRUE;
}

static void list_ids(INTERNAL_FUNCTION_PARAMETERS, tc_ids_mode mode, bool has_tags)
{
	tc_object *o = TC_THIS();
	HashTable *tags = NULL;
	tc_str *t;
	size_t nt;

	if (has_tags) {
		ZEND_PARSE_PARAMETERS_START(0, 1)
			Z_PARAM_OPTIONAL
			Z_PARAM_ARRAY_HT(tags)
		ZEND_PARSE_PARAMETERS_END();
	} else {
		ZEND_PARSE_PARAMETERS_NONE();
	}
	TC_CHECK(o);
	t = tags_arg(tags, 1, &nt);
	if (!t) {
		RETURN_THROWS();
	}
	array_init(return_value);
	if (!has_tags || nt || mode == TC_CLEAN_NOT_MATCHING) {
		o->be->ids(o->state, mode, t, nt, o->be->stale_opts ? emit_list_visible : emit_list, return_value);
	}
	efree(t);
	TC_RAISE(o);
}

ZEND_METHOD(TagCache_AbstractBackend, getIds)
{
	list_ids(INTERNAL_FUNCTION_PARAM_PASSTHRU, TC_CLEAN_ALL, false);
}

ZEND_METHOD(TagCache_AbstractBackend, getIdsMatchingTags)
{
	list_ids(INTERNAL_FUNCTION_PARAM_PASSTHRU, TC_CLEAN_MATCHING, true);
}

ZEND_METHOD(TagCache_AbstractBackend, getIdsNotMatchingTags)
{
	list_ids(INTERNAL_FUNCTION_PARAM_PASSTHRU, TC_CLEAN_NOT_MATCHING, true);
}

ZEND_METHOD(TagCache_AbstractBackend, getIdsMatchingAnyTags)
{
	list_ids(INTERNAL_FUNCTION_PARAM_PASSTHRU, TC_CLEAN_MATCHING_ANY, true);
}

/* getTags(), stats(), verify(): no argument; an array that the engine
 * fills through a callback. */
typedef enum { FILL_TAGS, FILL_STATS, FILL_VERIFY } fill_what;

static void fill_array(INTERNAL_FUNCTION_PARAMETERS, fill_what what)
{
	tc_object *o = TC_THIS();

	ZEND_PARSE_PARAMETERS_NONE();
	TC_CHECK(o);
	array_init(return_value);
	switch (what) {
	case FILL_TAGS:
		o->be->tags(o->state, emit_list, return_value);
		break;
	case FILL_STATS:
		o->be->stats(o->state, emit_stat, return_value);
		if (o->be->lease_home || stale_set(o)) {
			/* a network store's counters cost a round trip: only when the
			 * options are set */
			tc_lease lz;
			const tc_lease *l = lease_of(o, false, &lz);

			if (l) {
				tc_lease_stats(l, emit_stat_new, return_value);
			} else {
				tc_lease_stats_zero(emit_stat_new, return_value);
			}
		}
		break;
	case FILL_VERIFY:
		o->be->verify(o->state, emit_list, return_value);
		break;
	}
	TC_RAISE(o);
}

ZEND_METHOD(TagCache_AbstractBackend, getTags)
{
	fill_array(INTERNAL_FUNCTION_PARAM_PASSTHRU, FILL_TAGS);
}

ZEND_METHOD(TagCache_AbstractBackend, getFillingPercentage)
{
	tc_object *o = TC_THIS();

	ZEND_PARSE_PARAMETERS_NONE();
	TC_CHECK(o);
	{
		int pct = o->be->fill(o->state);

		TC_RAISE(o);
		RETURN_LONG(pct);
	}
}

ZEND_METHOD(TagCache_AbstractBackend, getMetadatas)
{
	zend_string *id;
	tc_object *o = id_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, &id);
	zval tags;
	tc_meta meta;

	if (!o) {
		RETURN_THROWS();
	}
	array_init(&tags);
	if (o->be->metadata(o->state, S(id), &meta, emit_list, &tags) != TC_OK) {
		zval_ptr_dtor(&tags);
		TC_RAISE(o);
		RETURN_FALSE;
	}
	array_init_size(return_value, 3);
	add_assoc_long(return_value, "expire", (zend_long)meta.expire);
	add_assoc_zval(return_value, "tags", &tags);
	add_assoc_long(return_value, "mtime", (zend_long)meta.mtime);
}

ZEND_METHOD(TagCache_AbstractBackend, touch)
{
	tc_object *o = TC_THIS();
	zend_string *id;
	zend_long extra;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(id)
		Z_PARAM_LONG(extra)
	ZEND_PARSE_PARAMETERS_END();

	TC_CHECK(o);
	if (!check_id(id, 1)) {
		RETURN_THROWS();
	}
	if (extra > 100L * 365 * 86400 || extra < -100L * 365 * 86400) {
		zend_argument_value_error(2, "is out of range");
		RETURN_THROWS();
	}
	{
		int r = o->be->touch(o->state, S(id), extra);

		TC_RAISE(o);
		RETURN_BOOL(r == TC_OK);
	}
}

ZEND_METHOD(TagCache_AbstractBackend, getCapabilities)
{
	tc_object *o = TC_THIS();
	const tc_backend *be = o->be;
	bool lists = true, forever = true;

	ZEND_PARSE_PARAMETERS_NONE();
	if (be) {
		unsigned caps = be->caps_of && o->state ? be->caps_of(o->state) : be->caps;

		lists = (caps & TC_CAP_LISTINGS) != 0;
		forever = (caps & TC_CAP_FOREVER) != 0;
	}
	array_init_size(return_value, 6);
	add_assoc_bool(return_value, "automatic_cleaning", 0);
	add_assoc_bool(return_value, "tags", 1);
	add_assoc_bool(return_value, "expired_read", 1);
	add_assoc_bool(return_value, "priority", 0);
	add_assoc_bool(return_value, "infinite_lifetime", forever);
	add_assoc_bool(return_value, "get_list", lists);
}

ZEND_METHOD(TagCache_AbstractBackend, stats)
{
	fill_array(INTERNAL_FUNCTION_PARAM_PASSTHRU, FILL_STATS);
}

ZEND_METHOD(TagCache_AbstractBackend, verify)
{
	fill_array(INTERNAL_FUNCTION_PARAM_PASSTHRU, FILL_VERIFY);
}

ZEND_METHOD(TagCache_AbstractBackend, ___expire)
{
	zend_string *id;
	tc_object *o = id_method(INTERNAL_FUNCTION_PARAM_PASSTHRU, &id);

	if (!o) {
		RETURN_THROWS();
	}
	o->be->expire_now(o->state, S(id));
	TC_RAISE(o);
}

ZEND_METHOD(TagCache_AbstractBackend, __serialize)
{
	(void)return_value;
	ZEND_PARSE_PARAMETERS_NONE();
	zend_throw_exception_ex(NULL, 0, "Serialization of '%s' is not allowed",
	                        ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name));
}

ZEND_METHOD(TagCache_AbstractBackend, __unserialize)
{
	HashTable *d;

	(void)return_value;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(d)
	ZEND_PARSE_PARAMETERS_END();
	(void)d;
	zend_throw_exception_ex(NULL, 0, "Unserialization of '%s' is not allowed",
	                        ZSTR_VAL(Z_OBJCE_P(ZEND_THIS)->name));
}

/* An engine's class: TagCache\\<class_name>, final, never serialized, our
 * objects. */
static zend_class_entry *engine_class(const tc_engine *e)
{
	zend_class_entry ce, *c;
	zend_string *name = zend_strpprintf(0, "TagCache\\%s", e->class_name);

	INIT_CLASS_ENTRY_EX(ce, ZSTR_VAL(name), ZSTR_LEN(name), NULL);
	zend_string_release(name);
	c = zend_register_internal_class_ex(&ce, tc_ce_abstract);
	c->ce_flags |= ZEND_ACC_FINAL;
#ifdef ZEND_ACC_NOT_SERIALIZABLE
	c->ce_flags |= ZEND_ACC_NOT_SERIALIZABLE;
#endif
	c->create_object = tc_create;
	return c;
}

void tc_class_minit(void)
{
	size_t i;

	tc_ce_exception = register_class_TagCache_Exception(spl_ce_RuntimeException);
	tc_ce_config_exception = register_class_TagCache_ConfigurationException(tc_ce_exception);
	tc_ce_storage_exception = register_class_TagCache_StorageException(tc_ce_exception);
	tc_ce_connection_exception = register_class_TagCache_ConnectionException(tc_ce_exception);
	tc_ce_backend = register_class_TagCache_Backend();
	tc_ce_abstract = register_class_TagCache_AbstractBackend(tc_ce_backend);
	tc_ce_abstract->create_object = tc_create;
#ifdef ZEND_ACC_NOT_SERIALIZABLE
	tc_ce_abstract->ce_flags |= ZEND_ACC_NOT_SERIALIZABLE;
#endif

	memcpy(&tc_handlers, zend_get_std_object_handlers(), sizeof(tc_handlers));
	tc_handlers.offset = XtOffsetOf(tc_object, std);
	tc_handlers.free_obj = tc_free;
	tc_handlers.clone_obj = NULL;  /* a handle on a segment or socket is not copied */

	for (i = 0; tc_engines[i].be; i++) {
		if (i == TC_ENGINES_MAX) {
			zend_error_noreturn(E_CORE_ERROR, "tagcache: more than %d engines: raise TC_ENGINES_MAX",
			                    TC_ENGINES_MAX);
		}
		engine_ce[i] = engine_class(&tc_engines[i]);
	}
}
