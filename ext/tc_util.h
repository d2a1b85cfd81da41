/* tc_util.h: plain-C services that the engines share (no Zend API):
 * logging, clocks, the lock-free readers' helpers, striped hit/miss
 * counters, string and slot-id lists, structure-check reports, tag name
 * encoding, and the file and lock primitives that the shm segment and the
 * file store's index both use. The read path's helpers are static inline. */
#ifndef TC_UTIL_H
#define TC_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include "tc_backend.h"
#include "tc_sync.h"

/* ---------------------------------------------------------------- clocks */

/* Seconds of the realtime clock, as PHP's time() gives them. */
static inline int64_t tc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

/* The read path's clock: the coarse clock is read from the vDSO page
 * without touching the TSC (a full clock_gettime was an eighth of a load
 * hit on a VM), but it lags the real one by up to a tick, so an expiry
 * that falls in the current coarse second is checked on the real clock
 * (tc_expired_at). */
static inline int64_t tc_now_coarse(void)
{
#ifdef CLOCK_REALTIME_COARSE
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) == 0) {
		return (int64_t)ts.tv_sec;
	}
#endif
	return tc_now();
}

static inline int tc_expired_at(int64_t expire, int64_t coarse)
{
	return expire < coarse || (expire == coarse && expire < tc_now());
}

/* Fills ts with the realtime clock `seconds` from now: a deadline for
 * pthread_mutex_timedlock(). */
void tc_deadline(struct timespec *ts, double seconds);

/* 64 random bits, never 0: /dev/urandom mixed with the clock and the pid
 * (so two processes differ even when /dev/urandom cannot be read); for
 * identities (a node, a journal epoch, a lease owner), not for secrets. */
uint64_t tc_random64(void);

/* -------------------------------------------------- lock-free readers */

/* The seqlock reader (tc_seq_changed), its retries and tc_backoff(): tc_sync.h. */

/* A shared counter, bumped without the lock. */
static inline void tc_count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}


/* Hit and miss counters, striped over cache lines by pid so that readers
 * in different processes do not bounce one line. */
#define TC_NSTRIPES 64

typedef struct {
	uint64_t hits, misses;
	char pad[64 - 2 * sizeof(uint64_t)];
} tc_stripe;

extern unsigned tc_stripe_no;  /* this process's stripe */
/* This process's pid without a system call (getpid() is one: about 1 us on
 * a paravirtualised VM, and a point where a task past its slice is
 * preempted). Read once, and again in a forked child through
 * tc_util_atfork_child(); for hot paths (a clean's tombstones, a save's
 * mark word, TwoLevel's try-lock that reads call while a sync is due),
 * not for code that a child made by a raw clone() could run. */
extern pid_t tc_pid_cached;
static inline pid_t tc_getpid(void)
{
	pid_t p = __atomic_load_n(&tc_pid_cached, __ATOMIC_RELAXED);

	if (!p) {
		p = getpid();
		__atomic_store_n(&tc_pid_cached, p, __ATOMIC_RELAXED);
	}
	return p;
}
/* Picks this process's stripe, and again in every forked child. */
void tc_stripe_init(void);
/* The shared primitives' fork hook (in the child): called by the module's
 * one pthread_atfork() before the engines' hooks. */
void tc_util_atfork_child(void);
void tc_stripes_sum(const tc_stripe *s, uint64_t *hits, uint64_t *misses);

/* ---------------------------------------------------------------- layout */

static inline uint64_t tc_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* The smallest power of two >= v (1 for 0). */
static inline uint32_t tc_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v) {
		p <<= 1;
	}
	return p;
}

/* ------------------------------------------------------- what goes out */

/* A growable buffer of length-prefixed strings, filled under an engine's
 * lock with malloc (which fails softly: oom is set) and emitted to PHP
 * after the unlock, when allocating may bail out. */
typedef struct {
	unsigned char *p;
	size_t len, cap;
	int oom;
} tc_sbuf;

void tc_sbuf_add(tc_sbuf *b, const void *s, uint32_t n);
void tc_sbuf_cb(void *ctx, const char *p, size_t n);  /* a tc_emit_fn */
void tc_sbuf_emit(tc_sbuf *b, tc_emit_fn emit, void *ctx);  /* and frees */
/* The end of a listing: TC_ERR (nothing emitted) when `failed` or the
 * buffer ran out of memory, else TC_OK after emitting; frees either way. */
int tc_sbuf_done(tc_sbuf *b, int failed, tc_emit_fn emit, void *ctx);

/* A value read under the lock leaves it as a malloc'd copy (n may be 0;
 * NULL when out of memory) ... */
unsigned char *tc_copy(const void *p, size_t n);

/* ... and reaches the caller's buffer after the unlock. Frees the copy;
 * TC_ERR when there is none or alloc() fails. Inline: as a call, it made
 * GCC copy the load functions' stack arguments on their fast path too. */
static inline int tc_copy_out(unsigned char *copy, size_t n, tc_alloc_fn alloc, void *ctx,
                              char **data, size_t *len)
{
	char *buf;

	if (!copy || !(buf = alloc(ctx, n))) {
		free(copy);
		return TC_ERR;
	}
	memcpy(buf, copy, n);
	free(copy);
	*data = buf;
	*len = n;
	return TC_OK;
}

/* v's decimal digits and a NUL at buf (24 bytes are always enough); their
 * number. By hand: on the path of every Redis save and clean (several
 * numbers each), where snprintf() cost 600 to 1,000 instructions a call. */
size_t tc_dec64(char *buf, int64_t v);

/* verify() when the write lock could not be taken: says so, TC_ERR. */
int tc_verify_nolock(tc_emit_fn emit, void *ctx);

/* A growable array of slot ids, filled under an engine's lock. */
typedef struct {
	uint32_t *v;
	size_t n, cap;
} tc_ids;

/* Room for `want` ids (capacity 64, doubled as needed); -1 when out of
 * memory (the list stays as it was). */
int tc_ids_grow(tc_ids *l, size_t want);

static inline int tc_ids_push(tc_ids *l, uint32_t id)
{
	if (l->n == l->cap && tc_ids_grow(l, l->n + 1) != 0) {
		return -1;
	}
	l->v[l->n++] = id;
	return 0;
}

/* A bitmap of slot ids: 1 when id was not in it yet (now it is). */
static inline int tc_bit_first(unsigned char *bits, uint32_t id)
{
	unsigned char b = (unsigned char)(1u << (id & 7));

	if (bits[id >> 3] & b) {
		return 0;
	}
	bits[id >> 3] |= b;
	return 1;
}

#define TC_MEMBER_SKIP UINT32_MAX

/* An engine's index as the tag modes see it (tc_select), under the lock.
 * Slots and tags are numbered from 1; tag 0 means that nobody carries it. */
typedef struct {
	void *ix;
	uint32_t nslots;
	uint32_t (*next)(void *ix, uint32_t slot);       /* the next slot after this one
	                                                    that holds an entry, or 0 */
	int (*entry)(void *ix, uint32_t slot);           /* a sound entry; if not, the
	                                                    index is marked damaged */
	uint32_t (*tag)(void *ix, const tc_str *name);   /* the tag of that name, or 0 */
	uint32_t (*count)(void *ix, uint32_t tag);       /* its number of members (shm:
	                                                    including ones that no
	                                                    longer hold) */
	uint32_t (*member)(void *ix, uint32_t tag, uint32_t i);  /* the slot of member i,
	                                                    or TC_MEMBER_SKIP (a shm
	                                                    member that no longer holds) */
	int (*carries)(void *ix, uint32_t slot, uint32_t tag);
} tc_index;

/* The slots a mode selects, under the lock: O(members of the given tags)
 * for the matching modes, O(slots) for the others. A malloc'd array (n in
 * *n), or NULL with *n = 0 (none, or out of memory: *oom). Stops at the
 * first entry that is not sound, with what it has selected so far. */
uint32_t *tc_select(const tc_index *x, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                    size_t *n, int *oom);

/* The problems a structure check finds: each counted, the first 50 sent
 * to emit (which may be NULL). */
typedef struct {
	tc_emit_fn emit;
	void *ctx;
	int n;
} tc_report;

void tc_report_add(tc_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ tag names */

/* An entry's (shm) or a record's (file) tag names: each a u16 length and
 * its bytes, back to back. */
uint64_t tc_names_len(const tc_str *tags, size_t ntags);
/* Writes them at w; returns the end. */
unsigned char *tc_names_put(unsigned char *w, const tc_str *tags, size_t ntags);
/* 1 when len bytes at w are exactly ntags names of 1 to TC_TAG_MAX bytes. */
int tc_names_ok(const unsigned char *w, uint64_t len, uint32_t ntags);

/* ------------------------------------------------------ files and locks */

struct stat;
/* Whether this process may use a file or directory of another owner: its
 * own (euid), or, when `mode` (the configured one, e.g. 0660 or 0770)
 * grants the group, one whose group is this process's (effective or
 * supplementary) and whose mode grants that group too. TC_OK, or TC_ERR
 * with "<what>: owned by ..." in err (TC_ERRBUF bytes). The caller still
 * refuses a mode more open than `mode`. */
int tc_check_owner(const struct stat *st, int mode, const char *what, char *err);

/* A robust, process-shared mutex, in a shared mapping. */
void tc_mutex_init_shared(pthread_mutex_t *mx);
/* flock(LOCK_EX) on fd, tried every 2 ms up to `tries` times: 0, or -1
 * with errno (ETIMEDOUT when it stayed taken). */
int tc_flock_ex(int fd, int tries);
/* Reserves every page of a new file of `size` bytes (a page left a hole
 * would be a SIGBUS on a full disk): 0 or an errno. */
int tc_reserve(int fd, uint64_t size);
/* Maps an existing file of `size` bytes read-write and shared, its pages
 * reserved first (a sparse copy would SIGBUS too). NULL on failure, with
 * "<what>: cannot ..." in err (TC_ERRBUF bytes). */
unsigned char *tc_map_file(int fd, uint64_t size, const char *what, char *err);
/* mmap(fd) read-write and shared; a file in memory (tmpfs) of 2 MB or
 * more at a 2 MB boundary, marked MADV_HUGEPAGE. MAP_FAILED on failure. */
void *tc_mmap_shared(int fd, size_t size);
/* Best effort: turns the 4 KB pages of the whole 2 MB stretches of a
 * mapping of a file in memory, all of them reserved, into 2 MB pages of
 * the file, for every process that maps it at a 2 MB boundary
 * (MADV_COLLAPSE, Linux 6.1; whatever the mount's or the system's THP
 * setting short of "deny"). 0, or an errno: the pages stay as they were. */
int tc_huge_collapse(void *p, size_t size);

/* ------------------------------------------------------------- logging */

void tc_set_log_sink(void (*sink)(const char *msg));
/* TAGCACHE_TEST_CRASH_MODE=fatal: crash points call this instead of SIGKILL
 * (=stop: they SIGSTOP the process, which goes on after SIGCONT) */
void tc_set_crash_hook(void (*hook)(const char *point));
void tc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A network engine's failure under on_error=miss: one log line per
 * distinct message and minute, per process. */
void tc_log_failure(const char *engine, const char *msg);

#endif
