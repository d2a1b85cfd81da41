/*
 * tc_options.c: the options array every backend takes, as Zend_Cache
 * backends take it. Names are case-insensitive and unknown names are
 * ignored (Zend_Cache_Backend::setOption); a name that is not a string
 * throws. Magento 1 passes every value as a string from XML ('0', '1',
 * '20480', '64M'): values are coerced to the type each option needs.
 * Process-wide defaults come from ini: tagcache.<backend>.<option>.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "zend_smart_str.h"
#include "zend_exceptions.h"
#include "php_tagcache.h"
#include "tc_net.h"

static zend_result bad(const char *name, const char *what)
{
	zend_throw_exception_ex(tc_ce_config_exception, 0, "Option \"%s\" %s", name, what);
	return FAILURE;
}

static const tc_option_spec *spec_find(const tc_backend *be, const char *name)
{
	const tc_option_spec *s;

	for (s = be->options; s->name; s++) {
		if (strcmp(s->name, name) == 0) {
			return s;
		}
	}
	return NULL;
}

static bool to_long(zval *v, zend_long *out)
{
	double d;

	switch (Z_TYPE_P(v)) {
	case IS_LONG:
		*out = Z_LVAL_P(v);
		return true;
	case IS_TRUE:
		*out = 1;
		return true;
	case IS_FALSE:
		*out = 0;
		return true;
	case IS_DOUBLE:
		d = Z_DVAL_P(v);
		if (d != (double)(zend_long)d) {
			return false;
		}
		*out = (zend_long)d;
		return true;
	case IS_STRING: {
		zend_long l;
		zend_uchar t = is_numeric_string(Z_STRVAL_P(v), Z_STRLEN_P(v), &l, &d, false);

		if (t == IS_LONG) {
			*out = l;
			return true;
		}
		if (t == IS_DOUBLE && d == (double)(zend_long)d) {
			*out = (zend_long)d;
			return true;
		}
		return false;
	}
	default:
		return false;
	}
}

/* "64M", "512k", "1G", "1048576" */
static bool to_size(zval *v, int64_t *out)
{
	zend_long l;

	if (Z_TYPE_P(v) == IS_STRING && Z_STRLEN_P(v) > 0) {
		const char *s = Z_STRVAL_P(v);
		size_t n = Z_STRLEN_P(v), i = 0;
		uint64_t num = 0, mul = 1;

		while (i < n && s[i] == ' ') {
			i++;
		}
		if (i == n || s[i] < '0' || s[i] > '9') {
			return false;
		}
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			num = num * 10 + (uint64_t)(s[i] - '0');
			if (num > (UINT64_C(1) << 50)) {
				return false;
			}
			i++;
		}
		if (i < n) {
			switch (s[i]) {
			case 'k': case 'K': mul = 1024; i++; break;
			case 'm': case 'M': mul = 1024 * 1024; i++; break;
			case 'g': case 'G': mul = 1024 * 1024 * 1024; i++; break;
			default: break;
			}
			if (i < n && (s[i] == 'b' || s[i] == 'B')) {
				i++;
			}
		}
		if (i != n) {
			return false;
		}
		*out = (int64_t)(num * mul);
		return true;
	}
	if (!to_long(v, &l)) {
		return false;
	}
	*out = l;
	return true;
}

static bool to_bool(zval *v, int *out)
{
	zend_long l;

	if (Z_TYPE_P(v) == IS_STRING) {
		const char *s = Z_STRVAL_P(v);

		if (!*s || !strcasecmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "off") || !strcasecmp(s, "no")) {
			*out = 0;
			return true;
		}
		if (!strcasecmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "on") || !strcasecmp(s, "yes")) {
			*out = 1;
			return true;
		}
		return false;
	}
	if (Z_TYPE_P(v) == IS_NULL) {
		*out = 0;
		return true;
	}
	if (!to_long(v, &l)) {
		return false;
	}
	*out = l != 0;
	return true;
}

/* Appends "s" to an option's flattened value (TC_OPT_SERVERS, TC_OPT_MAP);
 * false when it does not fit or holds a separator. */
static bool flat_add(smart_str *out, const char *sep, zend_string *s)
{
	if (ZSTR_LEN(s) == 0) {
		return true;
	}
	if (memchr(ZSTR_VAL(s), 0, ZSTR_LEN(s)) || memchr(ZSTR_VAL(s), ',', ZSTR_LEN(s))) {
		return false;
	}
	if (out->s && ZSTR_LEN(out->s)) {
		smart_str_appends(out, sep);
	}
	smart_str_append(out, s);
	return out->s && ZSTR_LEN(out->s) < TC_OPT_STRMAX;
}

/* A member of a server array: by name, else by position ([host, port, weight]). */
static zval *server_part(HashTable *ht, const char *name, zend_ulong pos)
{
	zval *v = zend_hash_str_find_deref(ht, name, strlen(name));

	return v ? v : zend_hash_index_find_deref(ht, pos);
}

/* A port or weight of a server array as a number: 0 when absent or empty,
 * -1 when it is no number. */
static long server_num(zval *v)
{
	zend_long l;

	if (!v || Z_TYPE_P(v) == IS_NULL || (Z_TYPE_P(v) == IS_STRING && Z_STRLEN_P(v) == 0)) {
		return 0;
	}
	if (Z_TYPE_P(v) == IS_LONG) {
		l = Z_LVAL_P(v);
	} else if (Z_TYPE_P(v) != IS_STRING || !is_numeric_string(Z_STRVAL_P(v), Z_STRLEN_P(v), &l, NULL, 0)) {
		return -1;
	}
	return l < 0 || l > TC_ADDR_WEIGHT_MAX ? -1 : (long)l;
}

/* One server from an array, written in the address grammar (tc_net.h):
 * "host:port:weight", "[v6]:port" or a socket path. NULL when the host is
 * missing or a part is no number. */
static zend_string *server_of(HashTable *ht)
{
	zval *host = server_part(ht, "host", 0), *port = server_part(ht, "port", 1), *weight = server_part(ht, "weight", 2);
	long p = server_num(port), w = server_num(weight);
	char buf[TC_ADDR_HOST_MAX + 32];
	zend_string *h;
	int n;

	if (!host || (Z_TYPE_P(host) != IS_STRING && Z_TYPE_P(host) != IS_LONG) || p < 0 || w < 0) {
		return NULL;
	}
	h = zval_get_string(host);
	n = tc_addr_format(ZSTR_VAL(h), p, p > 0 ? w : 0, buf, sizeof(buf));
	zend_string_release(h);
	return n < 0 ? NULL : zend_string_init(buf, (size_t)n, 0);
}

/* [host, port] or [host, port, weight]: a list of two or three scalars
 * whose second is a number (a list of addresses holds strings only). */
static bool one_positional(HashTable *ht)
{
	zval *h = zend_hash_index_find_deref(ht, 0), *p = zend_hash_index_find_deref(ht, 1);
	uint32_t n = zend_hash_num_elements(ht);

	return (n == 2 || n == 3) && h && Z_TYPE_P(h) == IS_STRING && p
		&& (Z_TYPE_P(p) == IS_LONG || (Z_TYPE_P(p) == IS_STRING && is_numeric_string(Z_STRVAL_P(p), Z_STRLEN_P(p), NULL, NULL, 0) == IS_LONG))
		&& (n == 2 || zend_hash_index_find_deref(ht, 2));
}

/* TC_OPT_SERVERS and TC_OPT_MAP given an array: the flattened string in
 * *out (released by the caller), or false. */
static bool flatten(const tc_option_spec *s, HashTable *ht, zend_string **out)
{
	smart_str b = {0};
	zend_string *key;
	zend_ulong idx;
	zval *v;
	bool ok = true;

	if (s->type == TC_OPT_SERVERS && (zend_hash_str_exists(ht, "host", 4) || one_positional(ht))) {
		/* one server as an associative array (Zend allows it) or [host, port(, weight)] */
		zend_string *one = server_of(ht);

		if (!one) {
			return false;
		}
		ok = flat_add(&b, ",", one);
		zend_string_release(one);
	} else {
		ZEND_HASH_FOREACH_KEY_VAL(ht, idx, key, v) {
			zend_string *item;

			ZVAL_DEREF(v);
			if (s->type == TC_OPT_SERVERS) {
				if (Z_TYPE_P(v) == IS_ARRAY) {
					item = server_of(Z_ARRVAL_P(v));
				} else if (Z_TYPE_P(v) == IS_STRING) {
					item = zend_string_copy(Z_STR_P(v));
				} else {
					item = NULL;
				}
			} else if (Z_TYPE_P(v) == IS_ARRAY || Z_TYPE_P(v) == IS_OBJECT) {
				item = NULL;
			} else {
				zend_string *vs = Z_TYPE_P(v) == IS_TRUE ? zend_string_init("1", 1, 0) : zval_get_string(v);

				item = key ? zend_strpprintf(0, "%s=%s", ZSTR_VAL(key), ZSTR_VAL(vs))
				           : zend_strpprintf(0, ZEND_LONG_FMT "=%s", (zend_long)idx, ZSTR_VAL(vs));
				zend_string_release(vs);
			}
			if (!item) {
				ok = false;
				break;
			}
			ok = flat_add(&b, ",", item);
			zend_string_release(item);
			if (!ok) {
				break;
			}
		} ZEND_HASH_FOREACH_END();
	}
	if (!ok) {
		smart_str_free(&b);
		return false;
	}
	smart_str_0(&b);
	*out = b.s ? b.s : ZSTR_EMPTY_ALLOC();
	return true;
}

static zend_result set_spec(void *config, const tc_option_spec *s, zval *v)
{
	char *field = (char *)config + s->offset;

	switch (s->type) {
	case TC_OPT_IGNORED:
		return SUCCESS;
	case TC_OPT_INT:
	case TC_OPT_SIZE: {
		int64_t x;
		zend_long l;

		if (s->type == TC_OPT_SIZE) {
			if (!to_size(v, &x)) {
				return bad(s->name, "must be a size in bytes, such as 67108864 or \"64M\"");
			}
		} else {
			if (!to_long(v, &l)) {
				return bad(s->name, "must be an integer");
			}
			x = l;
		}
		if (x < s->min || x > s->max) {
			zend_throw_exception_ex(tc_ce_config_exception, 0,
				"Option \"%s\" must be between " ZEND_LONG_FMT " and " ZEND_LONG_FMT ", " ZEND_LONG_FMT " given",
				s->name, (zend_long)s->min, (zend_long)s->max, (zend_long)x);
			return FAILURE;
		}
		memcpy(field, &x, sizeof(x));
		return SUCCESS;
	}
	case TC_OPT_STRING:
	case TC_OPT_SECRET:
	case TC_OPT_SERVERS:
	case TC_OPT_MAP: {
		zend_string *str;

		if ((s->type == TC_OPT_SERVERS || s->type == TC_OPT_MAP) && Z_TYPE_P(v) == IS_ARRAY) {
			if (!flatten(s, Z_ARRVAL_P(v), &str)) {
				return bad(s->name, s->type == TC_OPT_SERVERS
					? "must be a list of servers: \"host:port:weight\" strings or [host, port, weight] arrays"
					: "must be an array of scalar values without commas");
			}
		} else if (Z_TYPE_P(v) != IS_STRING && Z_TYPE_P(v) != IS_LONG) {
			return bad(s->name, "must be a string");
		} else {
			str = zval_get_string(v);
		}
		if (ZSTR_LEN(str) >= TC_OPT_STRMAX || memchr(ZSTR_VAL(str), 0, ZSTR_LEN(str))) {
			zend_string_release(str);
			return bad(s->name, "is too long or contains a NUL byte");
		}
		memcpy(field, ZSTR_VAL(str), ZSTR_LEN(str) + 1);
		zend_string_release(str);
		return SUCCESS;
	}
	case TC_OPT_BOOL: {
		int b;

		if (!to_bool(v, &b)) {
			return bad(s->name, "must be a boolean, 0 or 1");
		}
		memcpy(field, &b, sizeof(b));
		return SUCCESS;
	}
	case TC_OPT_MODE: {
		zend_long mode;

		if (Z_TYPE_P(v) == IS_STRING) {
			char *end;

			mode = ZEND_STRTOL(Z_STRVAL_P(v), &end, 8);
			if (Z_STRLEN_P(v) == 0 || *end) {
				return bad(s->name, "must be an octal file mode such as \"0600\"");
			}
		} else if (!to_long(v, &mode)) {
			return bad(s->name, "must be a file mode such as 0600");
		}
		if (mode < 0 || mode > 0777) {
			return bad(s->name, "must be a file mode between 0 and 0777");
		}
		{
			int m = (int)mode;
			memcpy(field, &m, sizeof(m));
		}
		return SUCCESS;
	}
	case TC_OPT_SECONDS: {
		double d;

		if (Z_TYPE_P(v) == IS_DOUBLE) {
			d = Z_DVAL_P(v);
		} else if (Z_TYPE_P(v) == IS_STRING && is_numeric_string(Z_STRVAL_P(v), Z_STRLEN_P(v), NULL, &d, false) == IS_LONG) {
			d = zend_strtod(Z_STRVAL_P(v), NULL);
		} else if (Z_TYPE_P(v) == IS_STRING && is_numeric_string(Z_STRVAL_P(v), Z_STRLEN_P(v), NULL, &d, false) == IS_DOUBLE) {
			/* d set */
		} else if (Z_TYPE_P(v) == IS_LONG) {
			d = (double)Z_LVAL_P(v);
		} else {
			return bad(s->name, "must be a number of seconds");
		}
		if (!(d >= 0 && d <= 86400)) {
			return bad(s->name, "must be between 0 and 86400 seconds");
		}
		memcpy(field, &d, sizeof(d));
		return SUCCESS;
	}
	}
	return SUCCESS;
}

zend_result tc_lifetime_from_zval(zval *v, zend_long *secs, bool *forever, const char *what)
{
	zend_long l;

	if (Z_TYPE_P(v) == IS_NULL) {
		*forever = true;
		*secs = 0;
		return SUCCESS;
	}
	if (Z_TYPE_P(v) == IS_TRUE || Z_TYPE_P(v) == IS_FALSE || !to_long(v, &l)) {
		zend_throw_exception_ex(tc_ce_config_exception, 0, "%s must be an integer number of seconds or null", what);
		return FAILURE;
	}
	if (l > 100L * 365 * 86400 || l < -100L * 365 * 86400) {
		zend_throw_exception_ex(tc_ce_config_exception, 0, "%s of " ZEND_LONG_FMT " seconds is out of range", what, l);
		return FAILURE;
	}
	*forever = false;
	*secs = l;
	return SUCCESS;
}

/* name must be lower-case */
static zend_result set_one(tc_object *o, const char *name, zval *v, bool opened)
{
	const tc_option_spec *s;

	if (strcmp(name, "lifetime") == 0) {
		return tc_lifetime_from_zval(v, &o->lifetime, &o->lifetime_forever, "Option \"lifetime\"");
	}
	if (strcmp(name, "logging") == 0) {
		int b;

		if (!to_bool(v, &b)) {
			return bad(name, "must be a boolean");
		}
		o->logging = b;
		return SUCCESS;
	}
	if (strcmp(name, "logger") == 0) {
		zval_ptr_dtor(&o->logger);
		ZVAL_COPY(&o->logger, v);
		return SUCCESS;
	}
	s = spec_find(o->be, name);
	if (!s) {
		return SUCCESS;  /* unknown: ignored, as Zend does */
	}
	if (opened && s->fixed) {
		zend_throw_exception_ex(tc_ce_config_exception, 0,
			"Option \"%s\" cannot be changed once the backend is open", name);
		return FAILURE;
	}
	return set_spec(o->config, s, v);
}

/* defaults, then ini defaults: tagcache.<backend>.<option> */
static zend_result ini_defaults(const tc_backend *be, void *config)
{
	const tc_option_spec *s;
	char ini[160];

	be->defaults(config);
	for (s = be->options; s->name; s++) {
		bool exists = false;
		const char *val;

		snprintf(ini, sizeof(ini), "tagcache.%s.%s", be->name, s->name);
		val = zend_ini_string_ex(ini, strlen(ini), 0, &exists);
		if (exists && val && *val) {
			zval z;

			ZVAL_STRING(&z, val);
			if (set_spec(config, s, &z) != SUCCESS) {
				zval_ptr_dtor(&z);
				return FAILURE;
			}
			zval_ptr_dtor(&z);
		}
	}
	return SUCCESS;
}

/* A nested options array (TwoLevel's slow_backend_options) into another
 * engine's config struct, with that engine's table; the directives
 * (lifetime, logging, logger) belong to the outer object and are ignored. */
zend_result tc_options_parse_into(const tc_backend *be, void *config, HashTable *opts)
{
	zend_string *key;
	zend_ulong idx;
	zval *v;

	if (ini_defaults(be, config) != SUCCESS) {
		return FAILURE;
	}
	if (!opts) {
		return SUCCESS;
	}
	ZEND_HASH_FOREACH_KEY_VAL(opts, idx, key, v) {
		zend_string *lc;
		const tc_option_spec *s;
		zend_result r = SUCCESS;

		if (!key) {
			zend_throw_exception_ex(tc_ce_config_exception, 0,
				"Incorrect option name: " ZEND_ULONG_FMT " (option names must be strings)", idx);
			return FAILURE;
		}
		ZVAL_DEREF(v);
		lc = zend_string_tolower(key);
		s = spec_find(be, ZSTR_VAL(lc));
		if (s) {
			r = set_spec(config, s, v);
		}
		zend_string_release(lc);
		if (r != SUCCESS) {
			return FAILURE;
		}
	} ZEND_HASH_FOREACH_END();
	return SUCCESS;
}

zend_result tc_options_init(tc_object *o, HashTable *opts)
{
	zend_string *key;
	zend_ulong idx;
	zval *v;

	if (ini_defaults(o->be, o->config) != SUCCESS) {
		return FAILURE;
	}
	ZEND_HASH_FOREACH_KEY_VAL(opts, idx, key, v) {
		zend_string *lc;
		zend_result r;

		if (!key) {
			zend_throw_exception_ex(tc_ce_config_exception, 0,
				"Incorrect option name: " ZEND_ULONG_FMT " (option names must be strings)", idx);
			return FAILURE;
		}
		ZVAL_DEREF(v);
		lc = zend_string_tolower(key);
		r = set_one(o, ZSTR_VAL(lc), v, false);
		zend_string_release(lc);
		if (r != SUCCESS) {
			return FAILURE;
		}
	} ZEND_HASH_FOREACH_END();
	if (o->engine->nested_options) {
		return o->engine->nested_options(o->config, opts);
	}
	return SUCCESS;
}

zend_result tc_option_set(tc_object *o, zend_string *name, zval *value, bool opened)
{
	zend_string *lc = zend_string_tolower(name);
	zend_result r = set_one(o, ZSTR_VAL(lc), value, opened);

	zend_string_release(lc);
	return r;
}

zend_result tc_option_get(tc_object *o, zend_string *name, zval *rv)
{
	zend_string *lc = zend_string_tolower(name);
	const tc_option_spec *s;
	const char *field;

	if (zend_string_equals_literal(lc, "lifetime")) {
		if (o->lifetime_forever) {
			ZVAL_NULL(rv);
		} else {
			ZVAL_LONG(rv, o->lifetime);
		}
		zend_string_release(lc);
		return SUCCESS;
	}
	if (zend_string_equals_literal(lc, "logging")) {
		ZVAL_BOOL(rv, o->logging);
		zend_string_release(lc);
		return SUCCESS;
	}
	if (zend_string_equals_literal(lc, "logger")) {
		ZVAL_COPY(rv, &o->logger);
		zend_string_release(lc);
		return SUCCESS;
	}
	s = spec_find(o->be, ZSTR_VAL(lc));
	zend_string_release(lc);
	if (!s || s->type == TC_OPT_IGNORED) {
		zend_throw_exception_ex(tc_ce_config_exception, 0, "Incorrect option name: %s", ZSTR_VAL(name));
		return FAILURE;
	}
	field = (const char *)o->config + s->offset;
	switch (s->type) {
	case TC_OPT_INT:
	case TC_OPT_SIZE: {
		int64_t x;
		memcpy(&x, field, sizeof(x));
		ZVAL_LONG(rv, (zend_long)x);
		break;
	}
	case TC_OPT_STRING:
	case TC_OPT_SERVERS:
	case TC_OPT_MAP:
		ZVAL_STRING(rv, field);
		break;
	case TC_OPT_SECRET:
		ZVAL_STRING(rv, *field ? "********" : "");
		break;
	case TC_OPT_BOOL:
	case TC_OPT_MODE: {
		int x;
		memcpy(&x, field, sizeof(x));
		if (s->type == TC_OPT_BOOL) {
			ZVAL_BOOL(rv, x);
		} else {
			ZVAL_LONG(rv, x);
		}
		break;
	}
	case TC_OPT_SECONDS: {
		double d;
		memcpy(&d, field, sizeof(d));
		ZVAL_DOUBLE(rv, d);
		break;
	}
	default:
		ZVAL_NULL(rv);
	}
	return SUCCESS;
}
