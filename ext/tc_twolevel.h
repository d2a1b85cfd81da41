/*
 * tc_twolevel.h: TagCache\TwoLevel, the Shm engine in front of another
 * engine (Redis, File, Memcached), composed through the vtable.
 *
 *   tc_twolevel.c        the engine (plain C): reads, writes, the node sync
 *   tc_twolevel_node.c   the node state file beside the fast segment
 *   tc_redis_journal.c   the invalidation journal in Redis
 *   tc_twolevel_opts.c   the nested option arrays (Zend API)
 *
 * TECHNOTES.md ("TwoLevel") describes the invalidation journal, the bound
 * and the failure cases.
 */
#ifndef TC_TWOLEVEL_H
#define TC_TWOLEVEL_H

#include <stdint.h>
#include <stddef.h>
#include "tc_backend.h"
#include "tc_shm.h"

/* A slow engine's invalidation journal: opaque records, each with a
 * sequence number one larger than the one before, capped at `keep`
 * records. A side table beside the engine's vtable (tc_backend), keyed by
 * the engine: it can join struct tc_backend as two optional hooks. */
typedef void (*tc_journal_fn)(void *ctx, uint64_t seq, const char *p, size_t len);

typedef struct {
	const tc_backend *be;
	/* appends rec; TC_OK or TC_ERR (the engine's failure() says why) */
	int (*append)(void *st, tc_str rec, int64_t keep);
	/* records with seq > since, oldest first, to emit; *head: the newest
	 * seq; *epoch: the journal's identity (a new one after a flush or a
	 * restart that lost it). TC_MISS: records after since are gone (a gap:
	 * the caller drops its whole copy). TC_ERR: the slow level failed. */
	int (*read)(void *st, uint64_t since, tc_journal_fn emit, void *ctx, uint64_t *head,
	            uint64_t *epoch);
	/* optional (NULL: none): the engine's next save, remove or clean
	 * appends rec in the same atomic step as its write, and sets *done to 1
	 * when it did (left 0: append() it after the write). TC_OK: armed;
	 * anything else: not armed, append() after. rec NULL disarms (always
	 * called after the write); rec must stay valid until then. */
	int (*arm)(void *st, const tc_str *rec, int64_t keep, int *done);
} tc_journal_ops;

#ifdef HAVE_TAGCACHE_REDIS
extern const tc_journal_ops tc_journal_redis;
#endif
extern const tc_journal_ops tc_journal_file;
#ifdef HAVE_TAGCACHE_MEMCACHED
extern const tc_journal_ops tc_journal_memcached;
#endif

/* Room for the largest slow engine's config struct. */
#define TC_TL_SLOWCFG (160 * 1024)

typedef struct {
	char slow_backend[TC_OPT_STRMAX];
	char fast_backend[TC_OPT_STRMAX];
	double max_staleness;    /* s a fast hit may go without a sync */
	double stale_if_error;   /* s beyond that while the slow level is down */
	int64_t journal_size;    /* records the journal keeps */
	tc_stale_opts stale;     /* serve_stale, rebuild_timeout, early_rebuild */
	const tc_backend *slow;  /* set by the option layer from slow_backend */
	int slow_parsed;         /* slow_cfg was filled from slow_backend_options */
	tc_shm_config fast_cfg;
	_Alignas(16) unsigned char slow_cfg[TC_TL_SLOWCFG];
} tc_twolevel_config;

/* A remove or clean of this node, noted after its slow write and before
 * its second fast step (tc_twolevel.c, local_note()), so that a save of
 * this node that overlapped it drops its copy only if the remove or clean
 * may concern it. */
#define TC_TL_LRING 32
#define TC_TL_LRING_TAGS 6
typedef struct {
	uint64_t seq;      /* the value of gen its +2 made; UINT64_MAX while written */
	uint64_t what;     /* tc_clean_mode | ntags << 8, or TL_LOCAL_ID (a remove: h[0]) */
	uint64_t h[TC_TL_LRING_TAGS];   /* the tags' hashes (ntags at most TC_TL_LRING_TAGS) */
} tc_tl_local;

/* The node's state, shared by every process that uses the fast segment:
 * a small file mapped beside it (<segment path>.twolevel). */
typedef struct {
	uint64_t magic;
	uint64_t ino;              /* the fast segment it belongs to */
	uint64_t applied;          /* last journal seq applied to the fast level */
	uint64_t epoch;            /* of the journal it was applied from */
	int64_t synced_ns;         /* CLOCK_MONOTONIC when the last good sync started */
	int64_t fail_since_ns;     /* first failed sync since the last good one; 0: none */
	uint64_t gen;              /* odd while a sync applies records */
	uint64_t syncs, sync_failures, gaps, invalidations, lag_ms_last;
	uint64_t stale_served, stale_refused;
	uint64_t node_id;          /* random, new with every reset: stamps this node's records */
	uint64_t nonce;            /* last write nonce handed out (atomic add) */
	uint64_t own_skipped;      /* records of this node's own writes not applied again */
	uint64_t superseded;       /* id records not applied: a later one of the id in the same sync */
	uint64_t lring_head;       /* local removes and cleans noted: picks their ring slot */
	tc_tl_local lring[TC_TL_LRING];   /* the last of them */
	uint64_t save_failed;      /* a slow save of the node failed: fills make no final word */
	uint32_t pages_2m;         /* tc_huge_collapse() of the file: as tc_shm_hdr's */
} tc_tl_node;

/* Own-save marks (tc_twolevel.c, "own writes"): a table mapped after the
 * node state page, slot = hash(id) & (nmarks - 1): the hash of the id and
 * word (nonce, pid) of the save whose fast copy this node holds. A journal
 * record of a save is skipped only when that copy is the save's own or a
 * later one of the same process (tc_twolevel.c, mark_supersedes()). The
 * table has at least 8 times as many slots as the fast segment has entries
 * (a power of two, at least TC_TL_MARKS_MIN; tc_twolevel_node.c): two ids
 * that share a slot cost a miss each time the older one's record is
 * replayed. */
typedef struct {
	uint64_t h, nonce;
} tc_tl_mark;
#define TC_TL_MARKS_MIN 32768

/* tc_twolevel_node.c */
typedef struct {
	tc_tl_node *n;
	tc_tl_mark *marks;   /* nmarks slots */
	size_t nmarks;       /* a power of two */
	void *map;
} tc_tl_nodeh;
/* entries: the fast segment's number of entry slots (sizes the marks) */
int tc_tl_node_open(const char *segpath, uint64_t ino, size_t entries, int mode, int huge, tc_tl_nodeh *h,
                    char *err);
int tc_tl_node_trylock(tc_tl_nodeh *h);
void tc_tl_node_unlock(tc_tl_nodeh *h);
void tc_tl_node_shutdown(void);

extern const tc_backend tc_backend_twolevel;
const tc_journal_ops *tc_journal_for(const tc_backend *be);

#endif
