/*
 * tc_backend.h: the one vtable every engine implements.
 *
 * Engines are plain C: no Zend API, no emalloc, no PHP types. The PHP layer
 * (tc_class.c) parses and validates arguments, calls through this table and
 * converts the results. Anything an engine hands back goes through the
 * callbacks below, which the caller provides; an engine never calls them
 * while it holds a lock of its own, because they may allocate, and an
 * allocation in PHP can bail out (memory_limit) with a longjmp.
 */
#ifndef TC_BACKEND_H
#define TC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* Return codes. */
#define TC_OK      0
#define TC_MISS    1  /* not found, expired, or nothing to do */
#define TC_ERR    -1  /* failed; the engine's error buffer says why */
#define TC_ERR_CONFIG -2  /* open(): the options are wrong (ConfigurationException) */

/* What failure() says about the call that just ended (network engines). */
#define TC_FAIL_NONE  0  /* nothing to report */
#define TC_FAIL_THROW 1  /* throw TagCache\ConnectionException with the message */
#define TC_FAIL_QUIET 2  /* already logged: return the Zend result, no warning */

/* Zend's infinite lifetime is an expiry far in the future (Zend File). */
#define TC_EXPIRE_NEVER INT64_C(9999999999)

#define TC_ID_MAX    1024
#define TC_TAG_MAX   1024
#define TC_TAGS_MAX  4096
#define TC_ERRBUF    4608  /* room for a path of TC_OPT_STRMAX */

typedef enum {
	TC_CLEAN_ALL = 0,
	TC_CLEAN_OLD,
	TC_CLEAN_MATCHING,      /* carrying all the tags */
	TC_CLEAN_NOT_MATCHING,  /* carrying none of them */
	TC_CLEAN_MATCHING_ANY   /* carrying at least one */
} tc_clean_mode;

/* Which ids a listing wants; the tag modes share the clean numbering. */
typedef tc_clean_mode tc_ids_mode;

typedef struct {
	const char *p;
	size_t len;
} tc_str;

typedef struct {
	int64_t expire;  /* unix time; TC_EXPIRE_NEVER for no expiry */
	int64_t mtime;   /* unix time of the last save or touch */
} tc_meta;

/* Gives the engine a buffer of len bytes to fill (a zend_string in PHP).
 * NULL means out of memory. */
typedef char *(*tc_alloc_fn)(void *ctx, size_t len);
/* Receives one string of a listing (an id, a tag). */
typedef void (*tc_emit_fn)(void *ctx, const char *p, size_t len);
/* Receives one named counter. */
typedef void (*tc_stat_fn)(void *ctx, const char *name, int64_t value);

/* An engine's option table, parsed by the common layer (tc_options.c):
 * names are lower-case, values land at `offset` in the engine's config
 * struct, coerced from Magento 1's strings. */
typedef enum {
	TC_OPT_INT,     /* int64_t */
	TC_OPT_SIZE,    /* int64_t, accepts "64M", "1G", "512K" */
	TC_OPT_STRING,  /* char[TC_OPT_STRMAX] */
	TC_OPT_BOOL,    /* int */
	TC_OPT_MODE,    /* int, file mode, accepts "0660" */
	TC_OPT_SECONDS, /* double */
	TC_OPT_IGNORED, /* accepted for compatibility, has no effect */
	TC_OPT_SECRET,  /* like STRING; getOption() never returns it */
	TC_OPT_SERVERS, /* like STRING; an array of servers (Zend's [host, port,
	                   weight] arrays, Magento's <server> nodes, strings)
	                   becomes "host:port:weight,..." */
	TC_OPT_MAP      /* like STRING; an array of scalars becomes "key=value,..." */
} tc_opt_type;

#define TC_OPT_STRMAX 4096

typedef struct {
	const char *name;
	tc_opt_type type;
	size_t offset;
	int64_t min, max;  /* for INT, SIZE; ignored otherwise */
	int fixed;         /* cannot change once the engine is open */
} tc_option_spec;

/* The stampede options (issue 14) an engine embeds in its config struct
 * and lists in its option table (TC_STALE_OPTION_ROWS, tc_lease.h). */
typedef struct {
	double serve_stale;      /* seconds a removed/cleaned/expired copy is kept; 0 off */
	double rebuild_timeout;  /* seconds a rebuild lease lasts at most */
	double early_rebuild;    /* xfetch beta; 0 off */
} tc_stale_opts;

/* Receives one row of phpinfo() (a name and its value). */
typedef void (*tc_info_fn)(void *ctx, const char *name, const char *value);

/* What an engine can do, for getCapabilities(). */
#define TC_CAP_LISTINGS  (1u << 0)  /* getIds(), getTags(), getIds*Tags() list */
#define TC_CAP_FOREVER   (1u << 1)  /* an entry without expiry stays until removed */

typedef struct tc_backend {
	const char *name;  /* lower case, as phpinfo() lists it */
	unsigned caps;     /* TC_CAP_* */
	const tc_option_spec *options;  /* terminated by a NULL name */
	size_t config_size;
	/* Fill a config struct with defaults (ini values included). */
	void (*defaults)(void *config);

	int (*open)(void **state, const void *config, char *err);
	void (*close)(void *state);

	/* data: NULL for test(); allow_expired: Zend's doNotTestCacheValidity */
	int (*load)(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc,
	            void *ctx, char **data, size_t *len, tc_meta *meta);
	int (*save)(void *st, tc_str id, tc_str data, const tc_str *tags,
	            size_t ntags, int64_t expire, char *err);
	int (*remove)(void *st, tc_str id);
	int (*clean)(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags,
	             char *err);
	int (*ids)(void *st, tc_ids_mode mode, const tc_str *tags, size_t ntags,
	           tc_emit_fn emit, void *ctx);
	int (*tags)(void *st, tc_emit_fn emit, void *ctx);
	int (*fill)(void *st);
	/* tags of the entry go to emit, after the lock is released */
	int (*metadata)(void *st, tc_str id, tc_meta *meta, tc_emit_fn emit,
	                void *ctx);
	/* Optional (NULL: load(), then metadata()): load() with data
	 * non-NULL that also gives the entry's tags to emit (same rules as
	 * metadata's), from the same read of the entry: one round trip where
	 * load() and metadata() take two, and the value, its tags and meta
	 * (expire, mtime) all of one version. TwoLevel's fill uses it. */
	int (*load_tags)(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc,
	                 void *ctx, char **data, size_t *len, tc_meta *meta,
	                 tc_emit_fn emit, void *ectx);
	int (*touch)(void *st, tc_str id, int64_t extra);
	/* Zend's ___expire() test hook */
	int (*expire_now)(void *st, tc_str id);
	void (*stats)(void *st, tc_stat_fn emit, void *ctx);
	/* walks the whole store; each problem goes to emit; TC_OK if none */
	int (*verify)(void *st, tc_emit_fn emit, void *ctx);
	/* Network engines (NULL for the others): called after every operation;
	 * returns TC_FAIL_* for a failure of that operation and copies its
	 * message (host:port, never a password) to err. */
	int (*failure)(void *st, char *err);

	/* Process-wide hooks, each optional (NULL), called by the module
	 * (tagcache.c) for every engine of tc_engines[], in table order. */
	/* request start: notice what other processes changed under a mapping
	 * (a truncated segment) before anything touches it */
	void (*rinit)(void);
	/* request end: give back what a bailout left held (locks) */
	void (*rshutdown)(void);
	/* phpinfo(): name/value rows through emit */
	void (*minfo)(tc_info_fn emit, void *ctx);
	/* module shutdown: free the process's pools and caches */
	void (*mshutdown)(void);
	/* in the child after fork(), from the module's one pthread_atfork():
	 * async-signal-safe work only (bump a generation, no I/O, no free) */
	void (*atfork_child)(void);

	/* Stampede protection (issue 14, tc_stale.c, tc_lease.c), optional:
	 * the stampede options inside a config struct of this engine... */
	const tc_stale_opts *(*stale_opts)(const void *config);
	/* ...and where this store's per-machine lease table lives: a file
	 * path next to the store and its mode; TC_OK, or TC_ERR if none. */
	int (*lease_home)(void *st, char *path, size_t n, int *mode);
	/* ...or, optional, the engine and store whose leases this store's
	 * entries take instead (TwoLevel: its slow level's): sets *be and *sst.
	 * tc_lease_ops_for() asks it first. */
	void (*lease_store)(void *st, const struct tc_backend **be, void **sst);
	/* ...and, optional, the engine's own leases across machines (Redis:
	 * SET NX PX, memcached: add; tc_lease.h); NULL: the per-machine lease
	 * table at lease_home, if any. */
	const struct tc_lease_ops *lease_ops;

	/* Optional: the TC_CAP_* of one open store, when they depend on its
	 * options (TwoLevel: its slow engine's); NULL: `caps` above. */
	unsigned (*caps_of)(void *st);
} tc_backend;

/* Every engine's one public symbol: its vtable. Only those that
 * tc_engines[] lists are built. */
extern const tc_backend tc_backend_shm;
extern const tc_backend tc_backend_file;
extern const tc_backend tc_backend_redis;
extern const tc_backend tc_backend_memcached;
extern const tc_backend tc_backend_twolevel;

/* Set once at module startup from TAGCACHE_TEST_CRASH: engines call
 * tc_crash_point("name") where a SIGKILL test wants to stop them. */
void tc_crash_point(const char *point);
void tc_crash_init(void);

#endif
