/*
 * tc_lease.h: stampede protection (issue 14), engine-independent, plain C.
 *
 * tc_lease.c: a per-machine table of rebuild leases, one small mapped file
 * per store (its path from the engine's lease_home hook), shared by every
 * process of the machine. A lease is one 64-bit word per id: the owner's
 * pid and a deadline, taken and ended with compare-and-swap; waiters sleep
 * on a futex word beside it that every release bumps.
 *
 * tc_stale.c: serve_stale over any engine's vtable: the previous copy of
 * an id is kept under a derived key that no listing shows, load() hands it
 * out while one caller (the lease holder) rebuilds.
 */
#ifndef TC_LEASE_H
#define TC_LEASE_H

#include <stddef.h>
#include <stdint.h>
#include "tc_backend.h"

/* The rows an engine adds to its option table; `member` is its
 * tc_stale_opts inside config struct `type`. */
#define TC_STALE_OPTION_ROWS(type, member) \
	{"serve_stale", TC_OPT_SECONDS, offsetof(type, member.serve_stale), 0, 0, 0}, \
	{"rebuild_timeout", TC_OPT_SECONDS, offsetof(type, member.rebuild_timeout), 0, 0, 0}, \
	{"early_rebuild", TC_OPT_SECONDS, offsetof(type, member.early_rebuild), 0, 0, 0}

#define TC_REBUILD_TIMEOUT_DEFAULT 30.0

static inline void tc_stale_defaults(tc_stale_opts *o)
{
	o->serve_stale = 0;
	o->rebuild_timeout = TC_REBUILD_TIMEOUT_DEFAULT;
	o->early_rebuild = 0;
}

static inline double tc_rebuild_timeout(const tc_stale_opts *o)
{
	return o->rebuild_timeout > 0 ? o->rebuild_timeout : TC_REBUILD_TIMEOUT_DEFAULT;
}

/* ----------------------------------------------------------- tc_lease.c */

typedef struct tc_lease_tab tc_lease_tab;

/* The table at path, mapped once per process (later calls share it).
 * create: make the file if absent; otherwise NULL when it is absent.
 * NULL with err set on failure. */
tc_lease_tab *tc_lease_open(const char *path, int mode, int create, char *err);

enum {
	TC_LEASE_NONE = 0,  /* no lease possible (table full, server down): act unprotected */
	TC_LEASE_TAKEN,     /* the caller holds it now: rebuild */
	TC_LEASE_MINE,      /* this process held it already */
	TC_LEASE_HELD       /* another live process holds it */
};

enum { TC_LS_STALE_SERVED = 0, TC_LS_LEASES_TAKEN, TC_LS_LEASE_TIMEOUTS, TC_LS_EARLY_REBUILDS, TC_LS_N };
extern const char *const tc_lease_stat_names[TC_LS_N];

/* Where the leases of a store live: one implementation per kind of store,
 * h its handle (the machine table, or the engine's state for a network
 * store). Every call is bounded: a wait by max_s and the lease's deadline,
 * the others by the engine's own timeouts. */
typedef struct tc_lease_ops {
	const char *name;
	/* Tries to take the lease of id for timeout seconds; serving: the
	 * caller hands out a stale copy if it is HELD (counted there). */
	int (*take)(void *h, tc_str id, double timeout, int serving);
	/* A value of id has landed: the caller's own lease ends (the machine
	 * table ends anyone's), its waiters wake; measured_ms (0: none) is kept
	 * as the id's rebuild time. *had_stale (if not NULL): whether a stale
	 * copy of id was marked (the mark is cleared: the caller drops it). */
	void (*end)(void *h, tc_str id, uint32_t measured_ms, int *had_stale);
	/* The caller gives its own lease of id back (no value: an exception,
	 * the end of the request); nobody else's. */
	void (*release)(void *h, tc_str id);
	/* Sleeps until the lease of id ends, its holder is gone or its
	 * deadline passes, at most max_s seconds. Never waits on the caller. */
	void (*wait)(void *h, tc_str id, double max_s);
	/* The id's last measured rebuild time in ms, 0 if unknown. */
	uint32_t (*rebuild_ms)(void *h, tc_str id);
	/* A stale copy of id may exist for secs (set when one is written). */
	void (*mark_stale)(void *h, tc_str id, double secs);
	void (*count)(void *h, int which);
	void (*stats)(void *h, tc_stat_fn emit, void *ctx);
} tc_lease_ops;

/* A store's leases: its implementation and handle, and the object that
 * takes them (leases it still holds when it goes, or when the request
 * ends, are given back). */
typedef struct {
	const tc_lease_ops *ops;
	void *h;
	const void *owner;
} tc_lease;

/* The per-machine table (Shm, File, TwoLevel over File). */
extern const tc_lease_ops tc_lease_machine;
/* The network engines' own, which their vtables name (lease_ops). */
extern const tc_lease_ops tc_lease_redis;     /* tc_redis_lease.c */
extern const tc_lease_ops tc_lease_memcached; /* tc_memcached_lease.c */

/* The network lease implementation of engine *be, NULL if it has none (a
 * lease_home engine uses the machine table). A store whose engine has a
 * lease_store hook uses the leases of the store it names (TwoLevel: its
 * slow level): *be and *st become that engine and its state. */
const tc_lease_ops *tc_lease_ops_for(const tc_backend **be, void **st);

/* Calls through l, keeping the process's list of held leases: a lease
 * taken here is given back by tc_lease_release_owner() (the object goes)
 * or tc_lease_release_all() (request end) unless a save ended it. */
int tc_lease_take(const tc_lease *l, tc_str id, double timeout, int serving);
/* measured: the caller's own lease ends with a save: its duration since
 * the take is kept as the id's rebuild time. */
void tc_lease_end(const tc_lease *l, tc_str id, int measured, int *had_stale);
void tc_lease_release(const tc_lease *l, tc_str id);
void tc_lease_wait(const tc_lease *l, tc_str id, double max_s);
uint32_t tc_lease_rebuild_ms(const tc_lease *l, tc_str id);
void tc_lease_mark_stale(const tc_lease *l, tc_str id, double secs);
void tc_lease_count(const tc_lease *l, int which);
void tc_lease_stats(const tc_lease *l, tc_stat_fn emit, void *ctx);
/* The leases owner still holds go back (before its engine state closes). */
void tc_lease_release_owner(const void *owner);
/* Request end: every lease still held goes back (module RSHUTDOWN). */
void tc_lease_release_all(void);
/* Zeros for a store whose table does not exist yet. */
void tc_lease_stats_zero(tc_stat_fn emit, void *ctx);

/* A per-process token naming this process as a network lease's owner
 * ("host:pid:random"; a new one after fork). */
const char *tc_lease_token(size_t *len);
uint64_t tc_lease_now_ms(void);

/* ----------------------------------------------------------- tc_stale.c */

typedef struct {
	const tc_backend *be;
	void *st;
	const tc_stale_opts *o;
	const tc_lease *tab;  /* may be NULL: then nothing is leased */
	tc_lease lease;       /* what tab points to, when set */
} tc_stale;

/* The prefix of the derived keys that hold stale copies. */
#define TC_STALE_PREFIX "\0tc:stale\0"
#define TC_STALE_PREFIX_LEN 10

static inline int tc_stale_key_is(const char *p, size_t len)
{
	return len >= TC_STALE_PREFIX_LEN && __builtin_memcmp(p, TC_STALE_PREFIX, TC_STALE_PREFIX_LEN) == 0;
}

/* load() with serve_stale on (and allow_expired off). TC_OK with the
 * fresh value or, while another caller rebuilds, the stale copy; TC_MISS
 * (the caller rebuilds: it may hold the lease now). *buf of alloc may be
 * set on a miss too: the caller frees it. */
int tc_stale_load(tc_stale *S, tc_str id, tc_alloc_fn alloc, void *ctx, char **data,
                  size_t *len, tc_meta *meta);
/* save(): then the lease of id ends and its stale copy goes. */
int tc_stale_save(tc_stale *S, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                  int64_t expire, char *err);
/* remove(): the current copy is kept as stale first. */
int tc_stale_remove(tc_stale *S, tc_str id);
/* clean(): the tag modes keep each selected entry as stale; "all" and
 * "old" go to the engine as they are. */
int tc_stale_clean(tc_stale *S, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err);

#endif
