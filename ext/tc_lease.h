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
	TC_LEASE_NONE = 0,  /* no lease possible (table full): act unprotected */
	TC_LEASE_TAKEN,     /* the caller holds it now: rebuild */
	TC_LEASE_MINE,      /* this process held it already */
	TC_LEASE_HELD       /* another live process holds it */
};

/* Tries to take the lease of id for timeout seconds. */
int tc_lease_take(tc_lease_tab *t, tc_str id, double timeout);
/* Ends the lease of id, whoever holds it (a value has landed, or the
 * holder gave up), and wakes the waiters. measured: the caller's own lease
 * ends with a save: its duration is kept as the id's rebuild time. */
void tc_lease_end(tc_lease_tab *t, tc_str id, int measured);
/* Sleeps until the lease of id ends (futex), its holder is gone or its
 * deadline passes, at most max_s seconds. Never waits on this process. */
void tc_lease_wait(tc_lease_tab *t, tc_str id, double max_s);
/* The id's last measured rebuild time in ms, 0 if unknown. */
uint32_t tc_lease_rebuild_ms(tc_lease_tab *t, tc_str id);
/* A stale copy of id may exist for secs (set when one is written). */
void tc_lease_mark_stale(tc_lease_tab *t, tc_str id, double secs);
/* Clears the mark; 1 if it was set. */
int tc_lease_clear_stale(tc_lease_tab *t, tc_str id);

enum { TC_LS_STALE_SERVED = 0, TC_LS_LEASES_TAKEN, TC_LS_LEASE_TIMEOUTS, TC_LS_EARLY_REBUILDS, TC_LS_N };
void tc_lease_count(tc_lease_tab *t, int which);
void tc_lease_stats(tc_lease_tab *t, tc_stat_fn emit, void *ctx);

/* ----------------------------------------------------------- tc_stale.c */

typedef struct {
	const tc_backend *be;
	void *st;
	const tc_stale_opts *o;
	tc_lease_tab *tab;  /* may be NULL: then nothing is leased */
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
