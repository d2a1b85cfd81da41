/*
 * tc_shm.c: the shared-memory engine behind TagCache\Shm.
 *
 * Readers take no lock: load() and test() follow the index under the
 * seqlocks of the whole index and of their key's stripe of buckets, copy
 * what they found, then check that no writer changed either in the
 * meantime; every offset they follow is bounds-checked first, so a
 * concurrent change can cost a retry but never a wild read. Writers take
 * one robust process-shared mutex; a writer killed while holding it is
 * detected by the next (EOWNERDEAD) and the index is rebuilt from the
 * checksummed entries (tc_shm_recover.c).
 *
 * A save writes the new entry into a fresh block first, and only then,
 * inside a short odd-sequence window, switches the index to it: a reader
 * sees the old value or the new one, never a mix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "tc_shm_defs.h"
#include "tc_lease.h"

/* A profiling build's hook (-DTC_SHM_LOCK_PROFILE, never the default):
 * callgrind collects only while this process holds the write lock, with
 * --collect-atstart=no (TECHNOTES "Where the time goes"). */
#ifdef TC_SHM_LOCK_PROFILE
#include <valgrind/callgrind.h>
#define LOCK_PROF_HELD() CALLGRIND_TOGGLE_COLLECT
#define LOCK_PROF_FREE() CALLGRIND_TOGGLE_COLLECT
#else
#define LOCK_PROF_HELD() ((void)0)
#define LOCK_PROF_FREE() ((void)0)
#endif

/* A tracing build's record (-DTC_SHM_TRACE, never the default): per
 * process, the last write-locked call (how long it waited for the lock,
 * who held it, how long it held it, what a clean removed) and histograms
 * of wait and hold times per kind of call, shown by stats() as trace_*
 * (benchmark analysis, TECHNOTES "Where the time goes"). */
#ifdef TC_SHM_TRACE
#include <unistd.h>
enum { TR_OTHER, TR_SAVE, TR_CLEAN, TR_SAVE_ARR, TR_KINDS };  /* TR_SAVE_ARR: a save that compacted or
                                                               reallocated a member array */
#define TR_BUCKETS 24  /* log2 of ns: bucket b holds [2^b, 2^(b+1)) */
static struct {
	int kind;          /* of the call in progress */
	uint64_t t_call;   /* the call's start */
	uint64_t t_acq;
	/* the last locked call */
	uint64_t lkind, wait_ns, hold_ns, contended, holder_kind, holder_pid, holder_acq_ns, wake_ns, call_ns;
	uint64_t pre_ns, removed, members, pre, prev_rel_ns;
	uint64_t call_compacts, call_compact_members, call_reallocs;
	uint64_t t_call_abs, t_rel_abs, waiters_at_unlock;
} tr;
static uint64_t tr_hold[TR_KINDS][TR_BUCKETS], tr_wait[TR_KINDS][TR_BUCKETS], tr_n[TR_KINDS], tr_cont[TR_KINDS];
uint64_t tc_tr_compacts, tc_tr_reallocs, tc_tr_drops, tc_tr_compact_members;
static uint64_t tr_c0, tr_m0, tr_r0;

static uint64_t tr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int tr_bucket(uint64_t ns)
{
	int b = ns ? 63 - __builtin_clzll(ns) : 0;

	return b >= TR_BUCKETS ? TR_BUCKETS - 1 : b;
}
#define TR_KIND(k) (tr.kind = (k), tr.t_call = tr_now(), tr_c0 = tc_tr_compacts, tr_m0 = tc_tr_compact_members, \
                    tr_r0 = tc_tr_reallocs)
#else
#define TR_KIND(k) ((void)0)
#endif

/* ---------------------------------------------------------------- lock */

/* How long a clean spins (the lock tried whenever it is seen free) before
 * it sleeps on the futex (other writers sleep at once: their spins took
 * the readers' CPU): a sleeper is woken by the holder's unlock, and
 * on 2 CPUs under 4 clients the wakee then takes the unlocker's CPU (a
 * clean then waits a time slice to return) or waits one itself for a CPU
 * (TECHNOTES "Where the time goes", session 9). Holds are 0.3-2 us for a
 * save and 4-10 us for a clean, up to some tens of us when an interrupt
 * comes in the middle; a holder descheduled for milliseconds costs each
 * waiter this spin, then the sleep. */
#ifndef TC_SHM_SPIN_NS
#define TC_SHM_SPIN_NS 50000
#endif

/* The file's size against the mapping's (tc_shm_fresh: one fstat), once
 * per second of the coarse clock here; a new object and every request
 * start check it unconditionally. TC_OK when the mapping may be touched. */
static int fresh(tc_shm_map *m, int64_t now, char *err)
{
	char ebuf[TC_ERRBUF];

	if (m->base && m->fresh_at == now) {
		return TC_OK;
	}
	m->fresh_at = now;
	return tc_shm_fresh(m, err ? err : ebuf);
}

/* The write lock, waited for up to lock_timeout; with `wait` 0 only
 * tried (a reader's slow path: TC_ERR at once when a live process holds
 * it); with 2 spun for first (wlock_spin()). */
static int wlock_(tc_shm *s, char *err, int wait)
{
	tc_shm_map *m = s->m;
	double t = s->lock_timeout > 0 ? s->lock_timeout : 5.0;
	int r, owner_died;

	/* Another process may have truncated the file under the mapping:
	 * checked before the lock in it is touched. */
	if (fresh(m, tc_now_coarse(), err) != TC_OK) {
		return TC_ERR;
	}
	if (m->held) {
		/* This process holds it already: a call bailed out of a locked
		 * section (fatal error, timeout) and a shutdown function or the
		 * next request is here. Release it; the next holder repairs. */
		m->hdr->needs_repair = 1;
		m->held = 0;
		LOCK_PROF_FREE();
		pthread_mutex_unlock(&m->hdr->lock);
	}
#ifdef TC_SHM_TRACE
	{
		/* glibc's mutex fields: the holder's tid, the waiters bit */
		static int64_t spin = -1;
		uint64_t t0 = tr_now(), owner = __atomic_load_n(&m->hdr->lock.__data.__owner, __ATOMIC_RELAXED);

		tr.holder_kind = owner ? m->hdr->tr_kind : 0;
		tr.holder_pid = owner ? m->hdr->tr_pid : 0;
		tr.holder_acq_ns = owner ? t0 - m->hdr->tr_acq_ns : 0;
		if (spin < 0) {
			const char *e = getenv("TC_TRACE_SPIN_NS");  /* a tracing build's experiments */

			spin = e ? atoll(e) : TC_SHM_SPIN_NS;
		}
		r = tc_robust_lock_spin(&m->hdr->lock, t, wait != 0, wait == 2 ? (uint64_t)spin : 0, &owner_died, m->path, err,
		                        TC_ERRBUF);
		tr.t_acq = tr_now();
		tr.lkind = (uint64_t)tr.kind;
		tr.contended = owner != 0;
		tr.wait_ns = tr.t_acq - t0;
		tr.prev_rel_ns = m->hdr->tr_rel_ns;
		tr.wake_ns = owner && m->hdr->tr_rel_ns > t0 ? tr.t_acq - m->hdr->tr_rel_ns : 0;
		if (r == 0) {
			m->hdr->tr_kind = (uint32_t)tr.kind;
			m->hdr->tr_pid = (uint32_t)getpid();
			m->hdr->tr_acq_ns = tr.t_acq;
			tr_n[tr.kind]++;
			tr_cont[tr.kind] += tr.contended;
			tr_wait[tr.kind][tr_bucket(tr.wait_ns)]++;
		}
	}
#else
	r = tc_robust_lock_spin(&m->hdr->lock, t, wait != 0, wait == 2 ? TC_SHM_SPIN_NS : 0, &owner_died, m->path, err,
	                        TC_ERRBUF);
#endif
	if (r == 0 && owner_died) {
		LOCK_PROF_HELD();
		m->held = 1;
		m->hdr->lock_recoveries++;
		tc_shm_repair(m, "a process died while holding the write lock");
		pthread_mutex_consistent(&m->hdr->lock);
		m->checked = 1;  /* rebuilt from the checked entries */
		return TC_OK;
	}
	if (r != 0) {
		return TC_ERR;
	}
	LOCK_PROF_HELD();
	m->held = 1;
	if (m->hdr->needs_repair || m->tainted) {
		tc_shm_repair(m, m->tainted ? "inconsistent structure found"
		                            : "a request ended while holding the write lock");
	}
	if (!m->checked) {
		/* First use in this process: walk the segment once, so that bytes
		 * overwritten while nobody watched are repaired, never followed. */
		if (tc_shm_check(m, NULL, NULL) != TC_OK) {
			tc_shm_repair(m, "the structure check at attach failed");
		}
		m->checked = 1;
	}
	return TC_OK;
}

static int wlock(tc_shm *s, char *err)
{
	return wlock_(s, err, 1);
}

/* The write lock for clean(), spun for first (TC_SHM_SPIN_NS): the rare
 * writer whose latency counts. Saves, removes and the rest sleep at once:
 * with every writer spinning, the refills' spins took the CPU the readers
 * needed (an idle 4-client run: reads 3.35M/s against 6.01M/s for APCu, a
 * third of what they were without). */
static int wlock_spin(tc_shm *s, char *err)
{
	return wlock_(s, err, 2);
}

static int wlock_try(tc_shm *s)
{
	return wlock_(s, NULL, 0);
}

static void wunlock(tc_shm_map *m)
{
	if (m->tainted) {
		tc_shm_repair(m, "inconsistent structure found");
	}
	m->held = 0;
	LOCK_PROF_FREE();
#ifdef TC_SHM_TRACE
	{
		uint64_t t1 = tr_now();

		tr.hold_ns = t1 - tr.t_acq;
		tr.call_ns = t1 - tr.t_call;
		tr.t_call_abs = tr.t_call;
		tr.t_rel_abs = t1;
		tr.waiters_at_unlock = (__atomic_load_n(&m->hdr->lock.__data.__lock, __ATOMIC_RELAXED) & 0x80000000u) != 0;
		tr.call_compacts = tc_tr_compacts - tr_c0;
		tr.call_compact_members = tc_tr_compact_members - tr_m0;
		tr.call_reallocs = tc_tr_reallocs - tr_r0;
		if (tr.kind == TR_SAVE && (tr.call_compacts || tr.call_reallocs)) {
			tr.kind = TR_SAVE_ARR;
		}
		tr_hold[tr.kind][tr_bucket(tr.hold_ns)]++;
		m->hdr->tr_rel_ns = t1;
		tr.kind = TR_OTHER;
	}
#endif
	pthread_mutex_unlock(&m->hdr->lock);
}

/* Under the lock: the slot of an id, 0 if absent. */
static uint32_t find_id(tc_shm_map *m, tc_str id)
{
	return tc_find(m, (const unsigned char *)id.p, (uint32_t)id.len,
	               tc_key_hash((const unsigned char *)id.p, id.len));
}


/* ---------------------------------------------------------- operations */

static const tc_option_spec shm_options[] = {
	{"segment", TC_OPT_STRING, offsetof(tc_shm_config, segment), 0, 0, 1},
	{"dir", TC_OPT_STRING, offsetof(tc_shm_config, dir), 0, 0, 1},
	{"path", TC_OPT_STRING, offsetof(tc_shm_config, path), 0, 0, 1},
	{"size", TC_OPT_SIZE, offsetof(tc_shm_config, size), TC_MIN_SIZE, INT64_C(1) << 36, 1},
	{"max_entries", TC_OPT_INT, offsetof(tc_shm_config, max_entries), 0, INT64_C(1) << 30, 1},
	{"mode", TC_OPT_MODE, offsetof(tc_shm_config, mode), 0, 0, 1},
	{"lock_timeout", TC_OPT_SECONDS, offsetof(tc_shm_config, lock_timeout), 0, 0, 0},
	{"huge_pages", TC_OPT_BOOL, offsetof(tc_shm_config, huge_pages), 0, 0, 1},
	{"automatic_cleaning_factor", TC_OPT_IGNORED, 0, 0, 0, 0},
	TC_STALE_OPTION_ROWS(tc_shm_config, stale),
	{NULL, 0, 0, 0, 0, 0}
};

/* ini defaults, set by the module (tagcache.c) */
const char *tc_shm_ini_dir = "/dev/shm";
const char *tc_shm_ini_segment = "default";
int64_t tc_shm_ini_size = 64 * 1024 * 1024;

static void shm_defaults(void *config)
{
	tc_shm_config *c = config;

	memset(c, 0, sizeof(*c));
	snprintf(c->segment, sizeof(c->segment), "%s", tc_shm_ini_segment);
	snprintf(c->dir, sizeof(c->dir), "%s", tc_shm_ini_dir);
	c->size = tc_shm_ini_size;
	c->mode = 0600;
	c->lock_timeout = 5.0;
	c->huge_pages = 1;
	tc_stale_defaults(&c->stale);
}

static int shm_open_(void **state, const void *config, char *err)
{
	const tc_shm_config *c = config;
	tc_shm *s;
	tc_shm_map *m;
	int mode = c->mode & 0777;

	if (mode != 0600 && mode != 0640 && mode != 0660) {
		snprintf(err, TC_ERRBUF, "mode %04o: use 0600, 0640 or 0660", (unsigned)mode);
		return TC_ERR;
	}
	if (tc_shm_attach(c, &m, err) != TC_OK) {
		return TC_ERR;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	s->m = m;
	s->lock_timeout = c->lock_timeout;
	if (!m->checked && wlock_try(s) == TC_OK) {
		/* First use in this process: the lock's first taker walks the
		 * segment (wlock_), now if the lock is free, else with the first
		 * write: a writer stopped with the lock held must not make the
		 * constructor wait (readers bounds-check what they follow). */
		wunlock(m);
	}
	*state = s;
	return TC_OK;
}

static void shm_close(void *state)
{
	free(state);  /* the mapping stays for the process's lifetime */
}

/* The lock-free read. TC_OK / TC_MISS, 2: the index is damaged (the
 * caller repairs it under the lock if the lock is free), or 3: no stable
 * view within the bounded retries (a writer is inside its publish window:
 * stopped, preempted, or died there). A reader never waits for a writer. */
static int load_lockfree(tc_shm *s, tc_str id, uint32_t h, int allow_expired, int64_t now,
                         tc_alloc_fn alloc, void *ctx, char **data, size_t *len, tc_meta *meta)
{
	tc_shm_map *m = s->m;
	tc_shm_hdr *H = m->hdr;
	int attempt;

	uint64_t *sq = tc_sseq(H, h & m->bmask);

	for (attempt = 0; attempt < TC_READ_TRIES; attempt++) {
		uint64_t g1 = __atomic_load_n(&H->seq, __ATOMIC_ACQUIRE);
		uint64_t s1 = __atomic_load_n(sq, __ATOMIC_ACQUIRE);
		uint32_t i, steps = 0, found = 0;
		tc_blk b;
		tc_entry e;
		tc_ref r = 0;
		int bad = 0;

		if ((g1 | s1) & 1) {
			tc_backoff(attempt);
			continue;
		}
		i = __atomic_load_n(&m->buckets[h & m->bmask], __ATOMIC_RELAXED);
		while (i) {
			tc_slot *sl;

			if (i > m->nslots || ++steps > m->nslots) {
				bad = 1;
				break;
			}
			sl = &m->slots[i - 1];
			if (__atomic_load_n(&sl->hash, __ATOMIC_RELAXED) == h) {
				r = __atomic_load_n(&sl->blk, __ATOMIC_RELAXED);
				if (!tc_ref_ok(m, r)) {
					bad = 1;
					break;
				}
				memcpy(&b, TC_BLK(m, r), sizeof(b));
				if (b.size < 4 || b.size > m->heap_units - 1 - r) {
					bad = 1;
					break;
				}
				memcpy(&e, TC_ENTRY(TC_BLK(m, r)), sizeof(e));
				if (tc_entry_bytes(e.ntags, e.klen, e.vlen, e.tnlen) > (uint64_t)b.size * TC_UNIT) {
					bad = 1;
					break;
				}
				if (b.type == TC_B_ENTRY && e.klen == id.len
				    && memcmp(TC_PAYLOAD(TC_BLK(m, r)) + sizeof(tc_entry) + (size_t)e.ntags * sizeof(tc_link),
				              id.p, id.len) == 0) {
					found = i;
					break;
				}
			}
			i = __atomic_load_n(&sl->next, __ATOMIC_RELAXED);
		}
		if (tc_seq_changed(sq, s1) || __atomic_load_n(&H->seq, __ATOMIC_RELAXED) != g1) {
			tc_backoff(attempt);
			continue;
		}
		if (bad) {
			m->tainted = 1;
			return 2;
		}
		if (!found || (!allow_expired && tc_expired_at(e.expire, now))) {
			tc_count(&H->stripes[tc_stripe_no].misses);
			return TC_MISS;
		}
		if (data) {
			const unsigned char *v = TC_PAYLOAD(TC_BLK(m, r)) + sizeof(tc_entry)
			                         + (size_t)e.ntags * sizeof(tc_link) + e.klen;
			char *buf = alloc(ctx, e.vlen);

			if (!buf) {
				return TC_ERR;
			}
			memcpy(buf, v, e.vlen);
			if (tc_seq_changed(sq, s1) || __atomic_load_n(&H->seq, __ATOMIC_RELAXED) != g1) {
				continue;  /* the next alloc() replaces this buffer */
			}
			*data = buf;
			*len = e.vlen;
		}
		meta->expire = e.expire;
		meta->mtime = e.mtime;
		{
			/* recency on the writes' clock (on the line of the seq read
			 * above: no other shared line read), written only when off by
			 * more than the slack: a hot entry's slot line is not
			 * written by every read of it */
			uint32_t tick = TC_TICK(H);
			uint32_t at = __atomic_load_n(&m->slots[found - 1].atime, __ATOMIC_RELAXED);

			if (tick - at > m->atime_slack) {
				__atomic_store_n(&m->slots[found - 1].atime, tick, __ATOMIC_RELAXED);
			}
		}
		tc_count(&H->stripes[tc_stripe_no].hits);
		return TC_OK;
	}
	return 3;
}

static int shm_load(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                    char **data, size_t *len, tc_meta *meta)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	uint32_t h = tc_key_hash((const unsigned char *)id.p, id.len), slot;
	int64_t now = tc_now_coarse();
	unsigned char *copy = NULL;
	size_t vlen = 0;
	int rc;

	if (fresh(m, now, NULL) != TC_OK) {
		return TC_MISS;
	}
	rc = load_lockfree(s, id, h, allow_expired, now, alloc, ctx, data, len, meta);
	if (rc != 2 && rc != 3) {
		return rc;
	}
	/* Slow path: under the lock, which also repairs what it must, but only
	 * if it is free (or its holder died): a live holder, even one stopped
	 * in its publish window, makes this key a miss, not a wait. */
	if (wlock_try(s) != TC_OK) {
		tc_count(&m->hdr->stripes[tc_stripe_no].misses);
		return TC_MISS;
	}
	slot = tc_find(m, (const unsigned char *)id.p, (uint32_t)id.len, h);
	if (slot) {
		tc_entry *e = tc_slot_entry(m, slot);

		if (allow_expired || !tc_expired_at(e->expire, now)) {
			meta->expire = e->expire;
			meta->mtime = e->mtime;
			vlen = e->vlen;
			if (data) {
				copy = tc_copy(TC_VALUE(e), vlen);
			}
		} else {
			slot = 0;
		}
	}
	wunlock(m);
	if (!slot) {
		tc_count(&m->hdr->stripes[tc_stripe_no].misses);
		return TC_MISS;
	}
	tc_count(&m->hdr->stripes[tc_stripe_no].hits);
	return data ? tc_copy_out(copy, vlen, alloc, ctx, data, len) : TC_OK;
}

/* Drops tags created for a save that did not happen. */
static void drop_unused_tags(tc_shm_map *m, const tc_str *tags, const uint32_t *th, size_t ntags)
{
	size_t i;

	for (i = 0; i < ntags; i++) {
		const unsigned char *p = (const unsigned char *)tags[i].p;
		tc_ref t = tc_tag_find(m, p, (uint32_t)tags[i].len, th[i]);

		if (t && TC_TAGREC(TC_BLK(m, t))->live == 0) {
			tc_tag_drop(m, t);
		}
	}
}

/* Under the lock: 1 when the entry in slot `old` carries the tags whose
 * names (as a block holds them) are names[0..tnlen), in that order, and
 * each of its links is sound (a tag record whose member at the link's
 * position is that slot): then an entry saved into that slot with those
 * tags takes its links over as they are, and every member goes on holding
 * at the same position, through the same link index (what a clean's
 * selection made without the lock checks again: tc_clean_tag_use), with
 * no live count, member or stamp to change. */
static int same_tags(tc_shm_map *m, uint32_t old, const unsigned char *names, uint64_t tnlen, size_t ntags)
{
	const tc_entry *oe = tc_slot_entry(m, old);  /* tc_find checked it */
	const tc_link *ol = TC_LINKS(oe);
	size_t j;

	if (oe->ntags != ntags || oe->tnlen != tnlen || memcmp(TC_NAMES(oe), names, tnlen) != 0) {
		return 0;
	}
	for (j = 0; j < ntags; j++) {
		const tc_ref t = ol[j].tag;
		const tc_tag *T;

		if (!tc_tag_ok(m, t)) {
			return 0;  /* the usual way, which finds it damaged */
		}
		T = TC_TAGREC(TC_BLK(m, t));
		if (ol[j].pos >= T->count || TC_TARR(TC_BLK(m, T->arr))[ol[j].pos] != old) {
			return 0;
		}
	}
	return 1;
}

static int shm_save(void *st, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                    int64_t expire, char *err)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	tc_shm_hdr *H;
	uint64_t tnlen = tc_names_len(tags, ntags), need;
	uint32_t units, h = tc_key_hash((const unsigned char *)id.p, id.len), old, slot;
	tc_ref r = 0, oref = 0, *trefs, trefs_small[32];
	uint32_t *th, th_small[32];
	unsigned char *names, names_small[1024];
	uint64_t *sq;
	uint64_t used0, body;
	tc_entry *e;
	int64_t now = tc_now();
	size_t i;
	int tries, rc = TC_ERR, pre = 0, same = 0;
	tc_tags_pre tp;

	TR_KIND(TR_SAVE);
	need = tc_entry_bytes(ntags, id.len, data.len, tnlen);
	/* An entry that cannot fit even in an empty heap fails before
	 * anything is touched: no eviction for nothing. */
	if (need > (uint64_t)(m->heap_units - 2) * TC_UNIT / 2 || ntags > TC_TAGS_MAX) {
		snprintf(err, TC_ERRBUF, "%s: an entry of %llu bytes does not fit in this segment (size %llu)",
		         m->path, (unsigned long long)need, (unsigned long long)m->size);
		return TC_ERR;
	}
	units = (uint32_t)((need + TC_UNIT - 1) / TC_UNIT);
	/* Made before the lock, which every other writer may be waiting for:
	 * the tag hashes, the names' bytes as the block holds them, and the
	 * hash of key, value and names; under it only the copies into the
	 * block and the version mixed into the checksum (tc_entry_check_of). */
	if (ntags <= 32) {
		trefs = trefs_small;
		th = th_small;
	} else {
		trefs = malloc(ntags * (sizeof(tc_ref) + sizeof(uint32_t)));
		th = trefs ? (uint32_t *)(trefs + ntags) : NULL;
	}
	names = tnlen <= sizeof(names_small) ? names_small : malloc(tnlen);
	if (!trefs || !names) {
		if (trefs != trefs_small) {
			free(trefs);
		}
		if (names != names_small) {
			free(names);
		}
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	for (i = 0; i < ntags; i++) {
		th[i] = tc_tag_hash((const unsigned char *)tags[i].p, tags[i].len);
	}
	tc_names_put(names, tags, ntags);
	body = tc_entry_body_hash((const unsigned char *)id.p, (uint32_t)id.len, (const unsigned char *)data.p,
	                          (uint32_t)data.len, names, (uint32_t)tnlen, (uint32_t)ntags);
	/* The tag records too, by a reader's rules: used under the lock if no
	 * record came or went meanwhile (tc_tag_pre_holds), else looked up
	 * again there. */
	if (ntags && fresh(m, tc_now_coarse(), NULL) == TC_OK) {
		pre = tc_tag_pre(m, tags, th, ntags, trefs, &tp) ? 1 : -1;
		if (pre > 0) {
			tc_crash_point("save_preselected");
		}
	}
	if (wlock(s, err) != TC_OK) {
		goto out;
	}
	H = m->hdr;  /* after wlock(), which may have attached it again */
	tc_crash_point("save_locked");
	if (s->save_if && !s->save_if(s->save_if_ctx)) {
		wunlock(m);
		rc = TC_MISS;
		goto out;
	}
	if (pre > 0 && !tc_tag_pre_holds(m, &tp)) {
		pre = -1;
	}
	if (pre > 0) {
		H->tpre_kept++;
	} else if (pre < 0) {
		H->tpre_redone++;
	}
	r = tc_alloc_room(m, units, TC_B_ENTRY, now);
	if (!r) {
		goto full;
	}
	e = TC_ENTRY(TC_BLK(m, r));
	e->version = ++H->version;
	if ((uint32_t)(H->version >> m->tick_shift) != H->tick) {
		__atomic_store_n(&H->tick, (uint32_t)(H->version >> m->tick_shift), __ATOMIC_RELAXED);
	}
	e->expire = expire;
	e->mtime = s->save_mtime ? s->save_mtime : now;
	e->klen = (uint32_t)id.len;
	e->vlen = (uint32_t)data.len;
	e->ntags = (uint32_t)ntags;
	e->tnlen = (uint32_t)tnlen;
	e->hash = h;
	memset(TC_LINKS(e), 0, ntags * sizeof(tc_link));
	memcpy(TC_KEY(e), id.p, id.len);
	memcpy(TC_VALUE(e), data.p, data.len);
	memcpy(TC_NAMES(e), names, tnlen);
	e->check = tc_entry_check_of(body, e->version);

	/* Tag records and room in their member arrays, evicting if needed;
	 * the new block is not in the index, so eviction cannot take it. */
	used0 = H->bytes_used;
	for (tries = 0;; tries++) {
		int ok = 1;
		uint32_t want = 0;

		old = tc_find(m, (const unsigned char *)id.p, (uint32_t)id.len, h);
		if (!old && !H->free_slot) {
			ok = 0;
		}
		/* the same tags as the entry it replaces: its links are taken
		 * over, no tag record is touched */
		same = old && ntags && same_tags(m, old, names, tnlen, ntags);
		for (i = 0; ok && !same && i < ntags; i++) {
			const unsigned char *p = (const unsigned char *)tags[i].p;

			if (pre > 0 && tries == 0 && trefs[i]) {
				/* the record found without the lock, still the same one
				 * (tc_tag_pre_holds): checked as tc_tag_find checks */
				if (!tc_tag_ok(m, trefs[i])) {
					m->tainted = 1;
					break;
				}
			} else {
				/* a tag that had none, or a lookup that does not hold */
				trefs[i] = tc_tag_get(m, p, (uint32_t)tags[i].len, th[i]);
			}
			if (!trefs[i]) {
				ok = 0;
				want = (uint32_t)((sizeof(tc_blk) + sizeof(tc_tag) + tags[i].len + TC_UNIT - 1) / TC_UNIT);
			} else if (tc_tag_reserve_inl(m, trefs[i]) != 0) {
				uint64_t cap = TC_TAGREC(TC_BLK(m, trefs[i]))->cap;

				ok = 0;
				want = (uint32_t)((TC_TARR_BYTES(cap ? cap * 2 : 4) + TC_UNIT - 1) / TC_UNIT);
			}
		}
		if (m->tainted) {
			goto full;
		}
		if (ok) {
			break;
		}
		if (tries > 64) {
			goto full;
		}
		/* a few single evictions first; then clear a run big enough */
		if (!(want && used0 > H->bytes_used && used0 - H->bytes_used >= (uint64_t)want * TC_UNIT * 8
		      && tc_make_contiguous(m, want, now))
		    && !tc_make_room(m, now)) {
			goto full;
		}
	}
	tc_crash_point("save_unpublished");

	/* The block names its slot before the slot names the block: repair
	 * keeps a block only when both agree (published). */
	TC_BLK(m, r)->aux = old ? old : H->free_slot;
	sq = tc_sseq(H, h & m->bmask);
	tc_seq_begin(sq);
	if (old) {
		slot = old;
		oref = m->slots[old - 1].blk;
		__atomic_store_n(&TC_BLK(m, oref)->type, TC_B_DEAD, __ATOMIC_RELEASE);
		__atomic_store_n(&m->slots[old - 1].blk, r, __ATOMIC_RELEASE);
	} else {
		tc_slot *sl;

		slot = tc_idlist_pop(TC_IDLIST(m->slots), &H->free_slot);
		sl = &m->slots[slot - 1];
		sl->hash = h;
		sl->blk = r;
		sl->next = m->buckets[h & m->bmask];
		m->buckets[h & m->bmask] = slot;
		H->entries++;
	}
	m->slots[slot - 1].atime = TC_TICK(H);
	tc_crash_point("save_publishing");
	/* Link the new entry before unlinking the old one, so that a tag both
	 * carry never drops to zero members (which would free its record). */
	if (same) {
		memcpy(TC_LINKS(e), TC_LINKS(TC_ENTRY(TC_BLK(m, oref))), ntags * sizeof(tc_link));
	} else if (ntags) {
		const uint64_t gen = ++H->tgen;  /* one stamp for its tags */
		tc_link *const nl = TC_LINKS(e);

		for (i = 0; i < ntags; i++) {
			tc_tag_link_inl(m, trefs[i], slot, &nl[i], (uint32_t)i, gen);
		}
	}
	if (oref && !same) {
		tc_entry *oe = TC_ENTRY(TC_BLK(m, oref));
		tc_link *ol = TC_LINKS(oe);
		unsigned char *const heap = m->heap;
		const uint32_t hu = m->heap_units, on = oe->ntags;
		uint32_t j;

		for (j = 0; j < on; j++) {
			tc_tag_release_inl(m, heap, hu, ol[j].tag);
		}
	}
	if (oref) {
		tc_free_blk(m, oref);
	}
	tc_seq_end(sq);
	if (expire < H->min_expire) {
		H->min_expire = expire;
	}
	H->writes++;
	wunlock(m);
	rc = TC_OK;
	goto out;

full:
	if (!m->tainted) {
		if (r) {
			tc_free_blk(m, r);
		}
		drop_unused_tags(m, tags, th, ntags);
	}
	wunlock(m);
	snprintf(err, TC_ERRBUF, "%s: no room for an entry of %llu bytes", m->path,
	         (unsigned long long)need);
out:
	if (trefs != trefs_small) {
		free(trefs);
	}
	if (names != names_small) {
		free(names);
	}
	return rc;
}

static int shm_remove(void *st, tc_str id)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	uint32_t slot;

	if (wlock(s, NULL) != TC_OK) {
		return TC_ERR;
	}
	slot = find_id(m, id);
	if (slot) {
		tc_remove_one(m, slot);
		m->hdr->writes++;
	}
	wunlock(m);
	return slot ? TC_OK : TC_MISS;
}

static int carries(const tc_entry *e, tc_ref t)
{
	const tc_link *l = TC_LINKS(e);
	uint32_t j;

	for (j = 0; j < e->ntags; j++) {
		if (l[j].tag == t) {
			return 1;
		}
	}
	return 0;
}

/* The segment's index as tc_select() walks it. */
static uint32_t ix_next(void *ix, uint32_t slot)
{
	tc_shm_map *m = ix;

	while (++slot <= m->nslots) {
		if (m->slots[slot - 1].blk) {
			return slot;
		}
	}
	return 0;
}

static int ix_entry(void *m, uint32_t slot)
{
	return tc_slot_entry_chk(m, slot) != NULL;
}

static uint32_t ix_tag(void *m, const tc_str *name)
{
	const unsigned char *p = (const unsigned char *)name->p;

	return tc_tag_find(m, p, (uint32_t)name->len, tc_tag_hash(p, name->len));
}

static uint32_t ix_count(void *m, uint32_t t)
{
	return TC_TAGREC(TC_BLK((tc_shm_map *)m, t))->count;
}

/* TC_MEMBER_SKIP for a member that no longer holds; a slot id out of
 * range or a slot naming no sound entry comes back as it is, and
 * ix_entry() then marks the segment damaged. */
static uint32_t ix_member(void *ix, uint32_t t, uint32_t i)
{
	return tc_tag_member_sel(ix, t, i);
}

static int ix_carries(void *m, uint32_t slot, uint32_t t)
{
	return carries(tc_slot_entry(m, slot), t);
}

/* The slots a tag mode selects, under the lock (tc_select). A damaged
 * entry ends the selection (and taints the segment): what was selected
 * before it is returned. */
static uint32_t *select_ids(tc_shm_map *m, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                            size_t *n, int *oom)
{
	const tc_index ix = {m, m->nslots, ix_next, ix_entry, ix_tag, ix_count, ix_member, ix_carries};

	/* one tag: the same set, without the bitmap of nslots bits that
	 * matchingAny clears to merge several tags' members */
	if (mode == TC_CLEAN_MATCHING_ANY && ntags == 1) {
		mode = TC_CLEAN_MATCHING;
	}
	return tc_select(&ix, mode, tags, ntags, n, oom);
}

/* clean(); g not NULL: the ids it removes by tag are added to *g (the
 * other modes add none). */
static int clean_(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags, tc_gone *g, char *err)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	int64_t now = tc_now();
	uint32_t *ids;
	size_t n;
	int oom, one = (mode == TC_CLEAN_MATCHING_ANY || mode == TC_CLEAN_MATCHING) && ntags == 1;
	int have_pre = 0;
	const unsigned char *p1 = one ? (const unsigned char *)tags[0].p : NULL;
	uint32_t h1 = one ? tc_tag_hash(p1, tags[0].len) : 0;
	tc_clean_pre pre = {0};

	/* A one-tag clean selects its entries before it takes the lock (the
	 * lock is what every other writer waits for): under it the selection
	 * is used if no member was added or moved since, else made again. */
	TR_KIND(TR_CLEAN);
	if (one && fresh(m, tc_now_coarse(), err) == TC_OK) {
		have_pre = tc_clean_tag_pre(m, p1, (uint32_t)tags[0].len, h1, &pre);
		if (have_pre) {
			tc_crash_point("clean_preselected");
		}
	}
#ifdef TC_SHM_TRACE
	tr.pre_ns = tr_now() - tr.t_call;
	tr.members = have_pre ? pre.count : 0;
	tr.removed = 0;
	tr.pre = 0;
#endif
	if (wlock_spin(s, err) != TC_OK) {
		free(pre.ids);
		return TC_ERR;
	}
	if (mode == TC_CLEAN_ALL) {
		tc_seq_begin(&m->hdr->seq);
		tc_crash_point("clean_all");
		tc_shm_format(m);
		m->hdr->min_expire = TC_EXPIRE_NEVER;
		tc_seq_end(&m->hdr->seq);
		m->hdr->writes++;
		wunlock(m);
		return TC_OK;
	}
	if (mode == TC_CLEAN_OLD) {
		tc_sweep_expired(m, now + 0);
		wunlock(m);
		return TC_OK;
	}
	if (one) {
		/* the usual clean (Magento's): one tag, its entries and the tag */
		tc_ref t = tc_tag_find(m, p1, (uint32_t)tags[0].len, h1);

		oom = 0;
		if (!t) {
			n = 0;
		} else if (have_pre && tc_clean_tag_use(m, t, &pre, "clean_tag", g, &n)) {
			m->hdr->pre_kept++;
#ifdef TC_SHM_TRACE
			tr.pre = 1;
#endif
		} else {
			m->hdr->pre_redone += have_pre;
			n = tc_clean_tag(m, t, "clean_tag", g, &oom);
#ifdef TC_SHM_TRACE
			tr.pre = have_pre ? 2 : 3;
#endif
		}
#ifdef TC_SHM_TRACE
		tr.removed = n;
#endif
		free(pre.ids);
		if (oom) {
			wunlock(m);
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		m->hdr->writes += n ? 1 : 0;
		wunlock(m);
		return TC_OK;
	}
	ids = select_ids(m, mode, tags, ntags, &n, &oom);
	if (oom) {
		wunlock(m);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	tc_remove_list_gone(m, ids, n, "clean_tag", g);
	m->hdr->writes += n ? 1 : 0;
	wunlock(m);
	free(ids);
	return TC_OK;
}

static int shm_clean(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	return clean_(st, mode, tags, ntags, NULL, err);
}

int tc_shm_clean_ids(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags, tc_emit_fn emit, void *ctx,
                     char *err)
{
	tc_gone g = {{NULL, 0, 0, 0}, tc_now()};
	int r;

	if (mode != TC_CLEAN_MATCHING && mode != TC_CLEAN_MATCHING_ANY) {
		return clean_(st, mode, tags, ntags, NULL, err);
	}
	r = clean_(st, mode, tags, ntags, &g, err);
	/* after the lock; a copy that ran out of memory emits what it holds
	 * (for TwoLevel: fewer tombstones, only reads that ask the slow level) */
	g.b.oom = 0;
	tc_sbuf_emit(&g.b, emit, ctx);
	return r;
}

int tc_shm_save_if(void *st, tc_str id, tc_str data, const tc_str *tags, size_t ntags, int64_t expire,
                   int64_t mtime, int (*cond)(void *ctx), void *ctx, char *err)
{
	tc_shm *s = st;
	int r;

	s->save_if = cond;
	s->save_if_ctx = ctx;
	s->save_mtime = mtime;
	r = shm_save(st, id, data, tags, ntags, expire, err);
	s->save_if = NULL;
	s->save_if_ctx = NULL;
	s->save_mtime = 0;
	return r;
}

static int shm_ids(void *st, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                   tc_emit_fn emit, void *ctx)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	int64_t now = tc_now();
	uint32_t *ids;
	size_t n, i;
	int oom;
	tc_sbuf b = {0};

	if (wlock(s, NULL) != TC_OK) {
		return TC_ERR;
	}
	ids = select_ids(m, mode, tags, ntags, &n, &oom);
	for (i = 0; i < n; i++) {
		tc_entry *e = tc_slot_entry_chk(m, ids[i]);

		if (e && e->expire >= now) {
			tc_sbuf_add(&b, TC_KEY(e), e->klen);
		}
	}
	wunlock(m);
	free(ids);
	return tc_sbuf_done(&b, oom, emit, ctx);
}

static int shm_tags(void *st, tc_emit_fn emit, void *ctx)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	uint32_t i, steps = 0;
	tc_sbuf b = {0};

	if (wlock(s, NULL) != TC_OK) {
		return TC_ERR;
	}
	for (i = 0; i <= m->tbmask; i++) {
		tc_ref t = m->tagbuckets[i];

		while (t && ++steps <= m->heap_units) {
			tc_tag *T = TC_TAGREC(TC_BLK(m, t));

			if (T->live) {
				tc_sbuf_add(&b, TC_TAGNAME(T), T->nlen);
			}
			t = T->next;
		}
	}
	wunlock(m);
	return tc_sbuf_done(&b, 0, emit, ctx);
}

static int shm_fill(void *st)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	uint64_t heap, used, by_bytes, by_slots, p;

	if (fresh(m, tc_now_coarse(), NULL) != TC_OK) {
		return 0;
	}
	heap = (uint64_t)(m->heap_units - 2) * TC_UNIT;
	used = __atomic_load_n(&m->hdr->bytes_used, __ATOMIC_RELAXED);
	by_bytes = heap ? used * 100 / heap : 100;
	by_slots = (uint64_t)m->hdr->entries * 100 / m->nslots;
	p = by_bytes > by_slots ? by_bytes : by_slots;
	return p > 100 ? 100 : (int)p;
}

static int shm_metadata(void *st, tc_str id, tc_meta *meta, tc_emit_fn emit, void *ctx)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	int64_t now = tc_now();
	uint32_t slot;
	tc_sbuf b = {0};

	if (wlock(s, NULL) != TC_OK) {
		return TC_ERR;
	}
	slot = find_id(m, id);
	if (slot) {
		tc_entry *e = tc_slot_entry(m, slot);

		if (e->expire < now) {
			slot = 0;
		} else {
			const unsigned char *w = TC_NAMES(e);
			uint32_t j;

			meta->expire = e->expire;
			meta->mtime = e->mtime;
			for (j = 0; j < e->ntags; j++) {
				uint16_t n;

				memcpy(&n, w, 2);
				tc_sbuf_add(&b, w + 2, n);
				w += 2 + n;
			}
		}
	}
	wunlock(m);
	return slot ? tc_sbuf_done(&b, 0, emit, ctx) : TC_MISS;
}

/* touch and ___expire: change the expiry in place. One aligned 8-byte
 * store, so a lock-free reader sees the old or the new expiry. */
static int set_expire(tc_shm *s, tc_str id, int64_t extra, int force_expired)
{
	tc_shm_map *m = s->m;
	int64_t now = tc_now();
	uint32_t slot;

	if (wlock(s, NULL) != TC_OK) {
		return TC_ERR;
	}
	slot = find_id(m, id);
	if (slot) {
		tc_entry *e = tc_slot_entry(m, slot);
		int64_t x;

		if (force_expired) {
			x = now - 1;
		} else if (e->expire < now) {
			slot = 0;
			x = 0;
		} else {
			/* the stored expiry is not covered by the checksum: a damaged
			 * one near INT64_MAX must not overflow */
			if (__builtin_add_overflow(e->expire, extra, &x)) {
				x = extra > 0 ? INT64_MAX : INT64_MIN;
			}
			__atomic_store_n(&e->mtime, now, __ATOMIC_RELAXED);
		}
		if (slot) {
			__atomic_store_n(&e->expire, x, __ATOMIC_RELAXED);
			if (x < m->hdr->min_expire) {
				m->hdr->min_expire = x;
			}
		}
	}
	wunlock(m);
	return slot ? TC_OK : TC_MISS;
}

static int shm_touch(void *st, tc_str id, int64_t extra)
{
	return set_expire(st, id, extra, 0);
}

static int shm_expire_now(void *st, tc_str id)
{
	return set_expire(st, id, 0, 1);
}

static void shm_stats(void *st, tc_stat_fn emit, void *ctx)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	tc_shm_hdr *H;
	uint64_t hits, misses, heap;

	if (fresh(m, tc_now_coarse(), NULL) != TC_OK) {
		return;  /* nothing to count: the segment is not attached */
	}
	H = m->hdr;
	heap = (uint64_t)(m->heap_units - 2) * TC_UNIT;

	tc_stripes_sum(H->stripes, &hits, &misses);
	emit(ctx, "hits", (int64_t)hits);
	emit(ctx, "misses", (int64_t)misses);
	emit(ctx, "writes", (int64_t)H->writes);
	emit(ctx, "evictions", (int64_t)H->evictions);
	emit(ctx, "expirations", (int64_t)H->expirations);
	emit(ctx, "entries", (int64_t)H->entries);
	emit(ctx, "tags", (int64_t)H->tags);
	emit(ctx, "bytes_used", (int64_t)H->bytes_used);
	emit(ctx, "bytes_free", (int64_t)(heap - H->bytes_used));
	emit(ctx, "size", (int64_t)m->size);
	emit(ctx, "max_entries", (int64_t)m->nslots);
	{
		/* 1: in 2 MB pages; 0: in 4 KB pages (smaller than 2 MB, or the
		 * kernel refused); -1: not known (not tried yet, or a process
		 * died trying) */
		uint32_t p2 = __atomic_load_n(&H->pages_2m, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&H->pages_2m_ino, __ATOMIC_RELAXED) != m->ino) {
			p2 = 0;   /* tried on the file this is a copy of */
		}
		emit(ctx, "huge_pages", p2 == 1 ? 1 : p2 == 2 ? 0 : -1);
	}
	emit(ctx, "lock_recoveries", (int64_t)H->lock_recoveries);
	emit(ctx, "cleans_preselected", (int64_t)H->pre_kept);
	emit(ctx, "cleans_reselected", (int64_t)H->pre_redone);
	emit(ctx, "saves_tags_preselected", (int64_t)H->tpre_kept);
	emit(ctx, "saves_tags_reselected", (int64_t)H->tpre_redone);
#ifdef TC_SHM_TRACE
	{
		static const char *const kn[TR_KINDS] = {"other", "save", "clean", "savearr"};
		char k[64];
		int i, b;

		emit(ctx, "trace_kind", (int64_t)tr.lkind);
		emit(ctx, "trace_wait_ns", (int64_t)tr.wait_ns);
		emit(ctx, "trace_hold_ns", (int64_t)tr.hold_ns);
		emit(ctx, "trace_call_ns", (int64_t)tr.call_ns);
		emit(ctx, "trace_pre_ns", (int64_t)tr.pre_ns);
		emit(ctx, "trace_contended", (int64_t)tr.contended);
		emit(ctx, "trace_holder_kind", (int64_t)tr.holder_kind);
		emit(ctx, "trace_holder_pid", (int64_t)tr.holder_pid);
		emit(ctx, "trace_holder_acq_ns", (int64_t)tr.holder_acq_ns);
		emit(ctx, "trace_wake_ns", (int64_t)tr.wake_ns);
		emit(ctx, "trace_removed", (int64_t)tr.removed);
		emit(ctx, "trace_members", (int64_t)tr.members);
		emit(ctx, "trace_pre", (int64_t)tr.pre);
		emit(ctx, "trace_compacts", (int64_t)tc_tr_compacts);
		emit(ctx, "trace_reallocs", (int64_t)tc_tr_reallocs);
		emit(ctx, "trace_drops", (int64_t)tc_tr_drops);
		emit(ctx, "trace_compact_members", (int64_t)tc_tr_compact_members);
		emit(ctx, "trace_call_compacts", (int64_t)tr.call_compacts);
		emit(ctx, "trace_call_compact_members", (int64_t)tr.call_compact_members);
		emit(ctx, "trace_call_reallocs", (int64_t)tr.call_reallocs);
		emit(ctx, "trace_t_call", (int64_t)tr.t_call_abs);
		emit(ctx, "trace_t_rel", (int64_t)tr.t_rel_abs);
		emit(ctx, "trace_waiters_at_unlock", (int64_t)tr.waiters_at_unlock);
		for (i = 0; i < TR_KINDS; i++) {
			snprintf(k, sizeof(k), "trace_n_%s", kn[i]);
			emit(ctx, k, (int64_t)tr_n[i]);
			snprintf(k, sizeof(k), "trace_contended_%s", kn[i]);
			emit(ctx, k, (int64_t)tr_cont[i]);
			for (b = 0; b < TR_BUCKETS; b++) {
				if (tr_hold[i][b]) {
					snprintf(k, sizeof(k), "trace_hold_%s_%d", kn[i], b);
					emit(ctx, k, (int64_t)tr_hold[i][b]);
				}
				if (tr_wait[i][b]) {
					snprintf(k, sizeof(k), "trace_wait_%s_%d", kn[i], b);
					emit(ctx, k, (int64_t)tr_wait[i][b]);
				}
			}
		}
	}
#endif
}

static int shm_verify(void *st, tc_emit_fn emit, void *ctx)
{
	tc_shm *s = st;
	tc_shm_map *m = s->m;
	tc_sbuf b = {0};
	int rc;

	if (wlock(s, NULL) != TC_OK) {
		return tc_verify_nolock(emit, ctx);
	}
	rc = tc_shm_check(m, tc_sbuf_cb, &b);
	wunlock(m);
	tc_sbuf_emit(&b, emit, ctx);
	return rc;
}

static const tc_stale_opts *shm_stale_opts(const void *config)
{
	return &((const tc_shm_config *)config)->stale;
}

/* The segment's lease table (tc_lease.c) is a file beside it: the segment
 * layout is unchanged, and its mode is the segment's. */
static int shm_lease_home(void *st, char *path, size_t n, int *mode)
{
	tc_shm *s = st;
	struct stat sb;

	if ((size_t)snprintf(path, n, "%s.lease", s->m->path) >= n) {
		return TC_ERR;
	}
	*mode = stat(s->m->path, &sb) == 0 ? (int)(sb.st_mode & 0666) : 0600;
	return TC_OK;
}

static void shm_minfo(tc_info_fn emit, void *ctx)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", TC_SHM_LAYOUT);
	emit(ctx, "Shm segment layout", v);
}

const tc_backend tc_backend_shm = {
	.name = "shm",
	.caps = TC_CAP_LISTINGS | TC_CAP_FOREVER,
	.options = shm_options,
	.config_size = sizeof(tc_shm_config),
	.defaults = shm_defaults,
	.open = shm_open_,
	.close = shm_close,
	.load = shm_load,
	.save = shm_save,
	.remove = shm_remove,
	.clean = shm_clean,
	.ids = shm_ids,
	.tags = shm_tags,
	.fill = shm_fill,
	.metadata = shm_metadata,
	.touch = shm_touch,
	.expire_now = shm_expire_now,
	.stats = shm_stats,
	.verify = shm_verify,
	.failure = NULL, /* shm has no connection to lose */
	.rinit = tc_shm_fresh_all,
	.rshutdown = tc_shm_release_held,
	.minfo = shm_minfo,
	.stale_opts = shm_stale_opts,
	.lease_home = shm_lease_home,
};
