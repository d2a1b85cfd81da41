/*
 * tc_file.c: the file store behind TagCache\File: options and the vtable.
 *
 * load() and test() take no lock and make no system call once the store
 * is open: they follow the shared index under a seqlock to (log, offset),
 * check the record's header and key in this process's read-only mapping
 * of the log, copy the value and check its checksum. A record never
 * changes once published, so what a consistent view of the index pointed
 * at can be copied at leisure; a checksum that fails is a damaged record:
 * a miss, and the entry is removed (under the lock) and counted.
 *
 * Writers take the index's robust mutex. A save builds its record before
 * taking it, reserves what the index needs, appends the record with one
 * pwrite() and only then points the index at it, inside an odd-sequence
 * window: a reader sees the old value or the new one, and a writer killed
 * at any point leaves the old value, the new one, or (if the index was
 * half-changed) an index that the next writer rebuilds from the logs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "tc_file_defs.h"
#include "tc_lease.h"

/* ------------------------------------------------------------- options */

static const tc_option_spec file_options[] = {
	{"cache_dir", TC_OPT_STRING, offsetof(tc_file_config, cache_dir), 0, 0, 1},
	{"file_name_prefix", TC_OPT_STRING, offsetof(tc_file_config, prefix), 0, 0, 1},
	{"max_size", TC_OPT_SIZE, offsetof(tc_file_config, max_size), TCF_MIN_SIZE, INT64_C(1) << 44, 0},
	{"file_mode", TC_OPT_MODE, offsetof(tc_file_config, file_mode), 0, 0, 1},
	{"cache_file_perm", TC_OPT_MODE, offsetof(tc_file_config, file_mode), 0, 0, 1},
	{"cache_file_umask", TC_OPT_MODE, offsetof(tc_file_config, file_mode), 0, 0, 1},
	{"dir_mode", TC_OPT_MODE, offsetof(tc_file_config, dir_mode), 0, 0, 1},
	{"directory_mode", TC_OPT_MODE, offsetof(tc_file_config, dir_mode), 0, 0, 1},
	{"durability", TC_OPT_STRING, offsetof(tc_file_config, durability), 0, 0, 0},
	{"fsync_interval", TC_OPT_SECONDS, offsetof(tc_file_config, fsync_interval), 0, 0, 0},
	{"lock_timeout", TC_OPT_SECONDS, offsetof(tc_file_config, lock_timeout), 0, 0, 0},
	TC_STALE_OPTION_ROWS(tc_file_config, stale),
	/* Zend_Cache_Backend_File / Cm_Cache_Backend_File options that no
	 * longer apply: no file per entry, every record checksummed, always
	 * locked, metadata inside the records, modes always set explicitly. */
	{"hashed_directory_level", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"hashed_directory_perm", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"hashed_directory_umask", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"read_control", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"read_control_type", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"file_locking", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"metadatas_array_max_size", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"use_chmod", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"automatic_cleaning_factor", TC_OPT_IGNORED, 0, 0, 0, 0},
	{NULL, 0, 0, 0, 0, 0}
};

static void file_defaults(void *config)
{
	tc_file_config *c = config;
	const char *tmp = getenv("TMPDIR");

	memset(c, 0, sizeof(*c));
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 1024) {
		tmp = "/tmp";
	}
	snprintf(c->cache_dir, sizeof(c->cache_dir), "%s%stagcache-%u", tmp,
	         tmp[strlen(tmp) - 1] == '/' ? "" : "/", (unsigned)geteuid());
	snprintf(c->prefix, sizeof(c->prefix), "tagcache");
	c->max_size = INT64_C(1) << 30;
	c->file_mode = 0600;
	c->dir_mode = 0700;
	snprintf(c->durability, sizeof(c->durability), "never");
	c->fsync_interval = 1.0;
	c->lock_timeout = 5.0;
	tc_stale_defaults(&c->stale);
}

static int file_open(void **state, const void *config, char *err)
{
	const tc_file_config *c = config;
	tc_file *f;
	int fm = c->file_mode & 0777, dm = c->dir_mode & 0777, dur;

	if (strcasecmp(c->durability, "never") == 0) {
		dur = TCF_NEVER;
	} else if (strcasecmp(c->durability, "always") == 0) {
		dur = TCF_ALWAYS;
	} else if (strcasecmp(c->durability, "interval") == 0) {
		dur = TCF_INTERVAL;
	} else {
		snprintf(err, TC_ERRBUF, "durability \"%.100s\": use never, always or interval", c->durability);
		return TC_ERR;
	}
	if (fm != 0600 && fm != 0640 && fm != 0660) {
		snprintf(err, TC_ERRBUF, "file_mode %04o: use 0600, 0640 or 0660", (unsigned)fm);
		return TC_ERR;
	}
	if (dm != 0700 && dm != 0750 && dm != 0770) {
		snprintf(err, TC_ERRBUF, "dir_mode %04o: use 0700, 0750 or 0770", (unsigned)dm);
		return TC_ERR;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	f->max_size = (uint64_t)c->max_size;
	f->seg_size = f->max_size / 8;
	if (f->seg_size < 256 * 1024) {
		f->seg_size = 256 * 1024;
	}
	if (f->seg_size > 256 * 1024 * 1024) {
		f->seg_size = 256 * 1024 * 1024;
	}
	f->durability = dur;
	f->interval = c->fsync_interval > 0 ? c->fsync_interval : 1.0;
	f->lock_timeout = c->lock_timeout;
	f->file_mode = fm;
	f->dir_mode = dm;
	if (tcf_attach(f, c, err) != TC_OK) {
		free(f);
		return TC_ERR;
	}
	*state = f;
	return TC_OK;
}

static void file_close(void *state)
{
	free(state);  /* the store stays mapped for the process's lifetime */
}

/* --------------------------------------------------------------- reads */

/* How long a reader waits for a writer's odd-sequence window to close:
 * READ_TRIES attempts with tc_backoff() (spins, then yields, then 20 us
 * sleeps: some tens of milliseconds in all), then a miss. A window holds a
 * few stores (a save) or a batch of 32 to 64 changes (removals,
 * compaction), so only a writer that stopped inside it (SIGSTOP, a
 * debugger, a cgroup freezer) makes a reader give up; while the same
 * window stays open, later reads of this process give up after a few
 * spins (s->stuck_seq: stripe and value). The sequence is the one of the
 * id's bucket stripe (TCF_RSEQ): a writer stopped in its window makes only
 * the keys of that stripe miss, and none waits. */
#define READ_TRIES TC_READ_TRIES    /* tc_sync.h, shared with shm */
#define STUCK_TRIES TC_STUCK_TRIES

/* A load's time is mostly memory latency (issue 15's profile: the first
 * touch of the slot and of the record header take most of load_fast):
 * the record's lines past its header (key, tag names, value: about 10
 * lines for the benchmark's 515-byte mean value) are asked for at once,
 * so that their misses overlap the header's and the key compare instead of
 * following them one by one in the copy. A hint only: nothing is read
 * through it, and the record lies inside the mapping (checked above). */
#define PREFETCH_MAX 2048

static inline void prefetch_record(const unsigned char *rec, uint32_t rlen)
{
	uint32_t k, n = rlen < PREFETCH_MAX ? rlen : PREFETCH_MAX;

	for (k = 64; k < n; k += 64) {
		__builtin_prefetch(rec + k, 0, 3);
	}
}

/* The lock-free read. TC_OK, TC_MISS, TC_ERR (allocation), or 2: a
 * damaged record or an inconsistent index: the caller repairs, under the
 * lock if it is free. */
static int load_fast(tc_file *f, tc_str id, uint32_t h, int allow_expired, int64_t now,
                     tc_alloc_fn alloc, void *ctx, char **data, size_t *len, tc_meta *meta,
                     tc_emit_fn emit, void *ectx)
{
	tcf_store *s = f->s;
	tcf_idx *x;
	tcf_hdr *H;
	uint32_t *q;
	int attempt;

	if (__atomic_load_n(&s->ix.hdr->retired, __ATOMIC_ACQUIRE)) {
		char err[TC_ERRBUF];

		if (tcf_reopen_index(f, err) != TC_OK) {
			return 2;
		}
	}
	x = &s->ix;
	H = x->hdr;
	q = TCF_RSEQ(x, h);
	tcf_lmap_prune(s);
	for (attempt = 0;; attempt++) {
		uint32_t s1 = __atomic_load_n(q, __ATOMIC_ACQUIRE);
		uint64_t off = 0, end = 0, salt = 0;
		uint32_t i, steps = 0, found = 0, lg = 0, rlen = 0, want_map = 0;
		int64_t expire = 0, mtime = 0;
		const unsigned char *rec = NULL;
		int bad = 0, damaged = 0;
		tcf_rec r;

		if (s1 & 1) {
			uint64_t mark = ((uint64_t)(q - H->rseq) << 32) | s1;

			if (attempt >= READ_TRIES || (mark == s->stuck_seq && attempt >= STUCK_TRIES)) {
				/* a writer inside its window all this time: a miss */
				s->stuck_seq = mark;
				tc_count(&H->stripes[tc_stripe_no].misses);
				return TC_MISS;
			}
			tc_backoff(attempt);
			continue;
		}
		i = __atomic_load_n(&x->buckets[h & x->bmask], __ATOMIC_RELAXED);
		while (i) {
			tcf_slot *sl;

			if (i > x->nslots || ++steps > x->nslots) {
				bad = 1;
				break;
			}
			sl = &x->slots[i - 1];
			if (__atomic_load_n(&sl->hash, __ATOMIC_RELAXED) == h
			    && (lg = __atomic_load_n(&sl->log, __ATOMIC_ACQUIRE)) != 0) {
				tcf_logent *le = TCF_LOGENT(x, lg);
				tcf_lmap *lm = &s->logs[lg % TCF_MAXLOGS];

				off = sl->off;
				rlen = sl->len;
				expire = sl->expire;
				mtime = sl->mtime;
				if (__atomic_load_n(&le->number, __ATOMIC_ACQUIRE) != lg) {
					bad = 1;
					break;
				}
				end = __atomic_load_n(&le->end, __ATOMIC_ACQUIRE);
				salt = le->salt;
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				/* the end read belongs to this log only if the entry still
				 * names it: numbers are never reused */
				if (__atomic_load_n(&le->number, __ATOMIC_RELAXED) != lg || off < TCF_LOGHDR
				    || rlen < TCF_REC || off > end || rlen > end - off) {
					bad = 1;
					break;
				}
				if (!lm->base || lm->number != lg || lm->salt != salt || lm->len < end) {
					want_map = lg;
					break;
				}
				rec = lm->base + off;
				prefetch_record(rec, rlen);
				/* the header first: a damaged one (or a torn view) must not
				 * be believed, not even to compare keys */
				if (!tcf_rec_header_ok(rec, rlen, salt, off, &r) || (r.magic & 0xff) != TCF_PUT
				    || tcf_rec_size(r.klen, r.tnlen, r.vlen) != rlen) {
					damaged = 1;
					break;
				}
				if (r.klen == id.len && memcmp(rec + TCF_REC, id.p, id.len) == 0) {
					found = i;
					break;
				}
				/* Same hash, another key: a rare collision, or a damaged
				 * key; the payload check tells which (the slow path drops
				 * a damaged one). */
				if (tcf_key_hash(rec + TCF_REC, r.klen) != h) {
					damaged = 1;
					break;
				}
			}
			i = __atomic_load_n(&sl->next, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(q, __ATOMIC_RELAXED) != s1) {
			if (attempt >= READ_TRIES) {
				tc_count(&H->stripes[tc_stripe_no].misses);
				return TC_MISS;  /* writers all the time: never stable */
			}
			tc_backoff(attempt);
			continue;
		}
		if (want_map) {
			/* first read of this log in this process: map it, look again */
			if (!tcf_lmap_get(s, want_map, salt, end)) {
				return 2;
			}
			continue;
		}
		if (bad || damaged) {
			return 2;
		}
		if (!found || (!allow_expired && tc_expired_at(expire, now))) {
			tc_count(&H->stripes[tc_stripe_no].misses);
			return TC_MISS;
		}
		{
			/* The record cannot change any more: it was published, and
			 * our mapping of its log stays while this call runs. */
			if (data) {
				char *buf = alloc(ctx, r.vlen);

				if (!buf) {
					return TC_ERR;
				}
				memcpy(buf, rec + TCF_REC + r.klen + r.tnlen, r.vlen);
				if (tcf_rec_pcheck(rec, &r, (const unsigned char *)buf) != r.pcheck) {
					return 2;
				}
				*data = buf;
				*len = r.vlen;
				if (emit) {
					/* load_tags(): the record's tag names, which pcheck
					 * covers too */
					const unsigned char *nm = rec + TCF_REC + r.klen;
					uint32_t j;

					if (!tc_names_ok(nm, r.tnlen, r.ntags)) {
						return 2;
					}
					for (j = 0; j < r.ntags; j++) {
						uint16_t l;

						memcpy(&l, nm, 2);
						emit(ectx, (const char *)nm + 2, l);
						nm += 2 + (size_t)l;
					}
				}
			}
		}
		meta->expire = expire;
		meta->mtime = mtime;
		tc_count(&H->stripes[tc_stripe_no].hits);
		return TC_OK;
	}
}

/* Under the lock: the slot of an id in the current index, 0 if absent. */
static uint32_t find_id(tcf_store *s, tc_str id)
{
	return tcf_find(s, &s->ix, (const unsigned char *)id.p, (uint32_t)id.len,
	                tcf_key_hash((const unsigned char *)id.p, id.len));
}

/* Under the lock: is the entry's record whole? If not, it is removed (with
 * a tombstone, so that an older record of the id cannot come back) and
 * counted, and the damage logged once per process. */
static int verify_or_drop(tc_file *f, uint32_t slot)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	tcf_slot *sl = &x->slots[slot - 1];
	tcf_logent *le = TCF_LOGENT(x, sl->log);
	const unsigned char *rec = tcf_record(s, x, sl->log, sl->off, sl->len);
	tcf_rec r;
	char err[TC_ERRBUF];

	if (!rec) {
		/* not a damaged record: the log is shorter than the index says,
		 * or gone. The index no longer matches the logs: rebuild it. */
		x->tainted = 1;
		return 0;
	}
	if (tcf_rec_header_ok(rec, sl->len, le->salt, sl->off, &r) && (r.magic & 0xff) == TCF_PUT
	    && tcf_rec_size(r.klen, r.tnlen, r.vlen) == sl->len && tcf_rec_body_ok(rec, &r)) {
		return 1;
	}
	if (!s->warned) {
		s->warned = 1;
		tc_log("tagcache: %s: a damaged record (log %u, offset %llu) was found and its entry removed",
		       s->dir, sl->log, (unsigned long long)sl->off);
	}
	x->hdr->corrupt++;
	tcf_tombstones(f, &slot, 1, 0, err);
	tcf_remove_list(f, &slot, 1, NULL);
	return 0;
}

static int file_load(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                     char **data, size_t *len, tc_meta *meta)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	tcf_idx *x;
	uint32_t h = tcf_key_hash((const unsigned char *)id.p, id.len), slot;
	int64_t now = tc_now_coarse();
	int rc = load_fast(f, id, h, allow_expired, now, alloc, ctx, data, len, meta, NULL, NULL);
	unsigned char *copy = NULL;
	size_t vlen = 0;

	if (rc != 2) {
		return rc;
	}
	/* Slow path: under the lock, which also repairs what it must; only if
	 * the lock is free at once: a reader never waits for a writer (one
	 * that holds the lock repairs nothing for us, and may be stopped). */
	if (tcf_lock_nowait(f, NULL) != TC_OK) {
		tc_count(&s->ix.hdr->stripes[tc_stripe_no].misses);
		return TC_MISS;
	}
	x = &s->ix;
	/* every entry of this hash whose record is damaged goes, then the
	 * lookup runs on what is left */
	{
		uint32_t i = x->buckets[h & x->bmask], steps = 0;

		while (i && i <= x->nslots && ++steps <= x->nslots && !x->tainted) {
			uint32_t next = x->slots[i - 1].next;

			if (x->slots[i - 1].hash == h && tcf_slot_ok(x, i)) {
				verify_or_drop(f, i);
			}
			i = next;
		}
	}
	slot = tcf_find(s, x, (const unsigned char *)id.p, (uint32_t)id.len, h);
	if (slot) {
		tcf_slot *sl = &x->slots[slot - 1];

		if (allow_expired || !tc_expired_at(sl->expire, now)) {
			const unsigned char *rec = tcf_record(s, x, sl->log, sl->off, sl->len);
			tcf_rec r;

			memcpy(&r, rec, sizeof(r));
			meta->expire = sl->expire;
			meta->mtime = sl->mtime;
			vlen = r.vlen;
			if (data) {
				copy = tc_copy(rec + TCF_REC + r.klen + r.tnlen, vlen);
			}
		} else {
			slot = 0;
		}
	}
	tcf_unlock(f);
	if (!slot) {
		tc_count(&s->ix.hdr->stripes[tc_stripe_no].misses);
		return TC_MISS;
	}
	tc_count(&s->ix.hdr->stripes[tc_stripe_no].hits);
	return data ? tc_copy_out(copy, vlen, alloc, ctx, data, len) : TC_OK;
}

/* -------------------------------------------------------------- writes */

/* Grows the index (by rebuilding it bigger) so that this save fits: each
 * capacity to at least what is in use plus what the save asks for, with
 * room to spare, and what ran out by half again at least (half, not
 * double: the index is a good part of the store's bytes, and every page
 * of it is reserved on disk). The heap is sized from the save's own needs
 * (its links, and for each tag a name and a member array), not from what
 * is in use now: a reservation that failed gave back everything it took,
 * so a save of thousands of tags never showed in heap_used, and growing by
 * that alone rebuilt the index at the same size again and again.
 * TC_MISS when the index cannot grow to that (nothing was rebuilt). */
static uint32_t half_more(uint32_t v, uint32_t max)
{
	uint64_t n = (uint64_t)v + v / 2 + 64;

	return n > max ? max : (uint32_t)n;
}

static uint32_t at_least(uint32_t v, uint64_t want, uint32_t max)
{
	return want > max ? max : (want > v ? (uint32_t)want : v);
}

static int grow(tc_file *f, const tc_str *tags, size_t ntags, char *err)
{
	tcf_idx *x = &f->s->ix;
	tcf_hdr *H = x->hdr;
	tcf_caps c = {x->nslots, x->ntags, x->heap_units};
	uint64_t units = ntags, heap;
	size_t i;

	for (i = 0; i < ntags; i++) {
		units += (tags[i].len + TCF_UNIT - 1) / TCF_UNIT + 2;
	}
	/* size classes round a block up by a quarter at most */
	units += units / 4 + 64;
	heap = (uint64_t)H->heap_used + H->heap_used / 2 + units + 1024;
	c.nslots = at_least(c.nslots, (uint64_t)H->entries + H->entries / 4 + 64, 1u << 30);
	c.ntags = at_least(c.ntags, (uint64_t)H->tags + H->tags / 4 + ntags + 64, 1u << 30);
	c.heap_units = at_least(c.heap_units, heap, UINT32_MAX - 16);
	switch (x->full) {
	case TCF_FULL_SLOTS:
		c.nslots = at_least(c.nslots, half_more(x->nslots, 1u << 30), 1u << 30);
		break;
	case TCF_FULL_TAGS:
		c.ntags = at_least(c.ntags, half_more(x->ntags, 1u << 30), 1u << 30);
		break;
	case TCF_FULL_HEAP:
		c.heap_units = at_least(c.heap_units, half_more(x->heap_units, UINT32_MAX - 16), UINT32_MAX - 16);
		break;
	default:
		break;
	}
	if (c.nslots == x->nslots && c.ntags == x->ntags && c.heap_units == x->heap_units) {
		snprintf(err, TC_ERRBUF, "%.3000s: the index cannot grow any more (%u slots, %u tags, %u heap units)",
		         f->s->dir, x->nslots, x->ntags, x->heap_units);
		return TC_MISS;
	}
	return tcf_rebuild(f, &c, 0, NULL, err);
}

static int file_save(void *st, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                     int64_t expire, char *err)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	uint64_t tnlen = tc_names_len(tags, ntags), need, off = 0, salt = 0;
	uint32_t h = tcf_key_hash((const unsigned char *)id.p, id.len);
	unsigned char *buf;
	int64_t now = tc_now();
	tcf_resv rv;
	int tries, reserved = 0;

	need = tcf_rec_size(id.len, tnlen, data.len);
	if (need > f->max_size / 2 || need > UINT32_MAX || ntags > TC_TAGS_MAX) {
		snprintf(err, TC_ERRBUF, "%.3000s: an entry of %llu bytes does not fit in this store (max_size %llu)",
		         s->dir, (unsigned long long)need, (unsigned long long)f->max_size);
		return TC_ERR;
	}
	buf = malloc(need);
	/* the tag references, the tags' hashes, the tags found before the
	 * lock; their records' creation stamps */
	rv.trefs = malloc((3 * ntags + 1) * sizeof(uint32_t) + ntags * sizeof(uint64_t));
	if (!buf || !rv.trefs) {
		free(buf);
		free(rv.trefs);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	/* everything that needs no index before the lock: the record (but
	 * its header check, which needs its offset) and the tags' hashes */
	tcf_rec_build(buf, TCF_PUT, id, tags, ntags, (const unsigned char *)data.p, data.len, expire, now);
	{
		uint32_t *th = rv.trefs + ntags;
		size_t i;

		uint32_t *tp = th + ntags;
		uint64_t *tb = (uint64_t *)(void *)(rv.trefs + 3 * ntags + (ntags & 1));

		for (i = 0; i < ntags; i++) {
			th[i] = tcf_tag_hash((const unsigned char *)tags[i].p, tags[i].len);
		}
		rv.thash = th;
		rv.tpre = NULL;
		rv.tborn = NULL;
		/* and the tags looked up (tcf_reserve takes each that is still
		 * the same record as it is, without walking its chain) */
		if (ntags && (!__atomic_load_n(&s->ix.hdr->retired, __ATOMIC_ACQUIRE)
		              || tcf_reopen_index(f, err) == TC_OK)) {
			rv.attach = s->ix.attach;
			for (i = 0; i < ntags; i++) {
				tb[i] = 0;
				tp[i] = tcf_tag_find_nolock(&s->ix, (const unsigned char *)tags[i].p, (uint32_t)tags[i].len,
				                            th[i], &tb[i]);
			}
			rv.tpre = tp;
			rv.tborn = tb;
			tc_crash_point("file_save_looked_up");
		}
	}
	if (tcf_lock(f, err) != TC_OK) {
		goto out_nolock;
	}
	tc_crash_point("file_save_locked");
	/* A failed reservation grows the index to fit this save at once; a
	 * second try is for a heap that fragmentation still defeats. */
	for (tries = 0; tries < 4; tries++) {
		if (tcf_make_room(f, need, now, err) != TC_OK) {
			goto fail;
		}
		tcf_dirty(s);
		if (tcf_reserve(s, x, (const unsigned char *)id.p, (uint32_t)id.len, h, tags, ntags, &rv) == 0) {
			reserved = 1;
			break;
		}
		tcf_unreserve(x, tags, ntags, &rv);
		if (x->tainted) {
			tcf_caps c = {x->nslots, x->ntags, x->heap_units};

			if (tcf_rebuild(f, &c, 0, "an inconsistency was found in the index", err) != TC_OK) {
				goto fail;
			}
		} else if (grow(f, tags, ntags, err) != TC_OK) {
			goto fail;
		}
	}
	if (!reserved) {
		snprintf(err, TC_ERRBUF, "%.3000s: the index could not make room for an entry with %zu tags", s->dir,
		         ntags);
		goto fail;
	}
	if (tcf_prepare_append(f, need, &off, &salt, err) != TC_OK) {
		tcf_unreserve(x, tags, ntags, &rv);
		goto fail;
	}
	tcf_rec_seal(buf, salt, off);
	if (tcf_append(f, buf, (size_t)need, off, err) != TC_OK) {
		tcf_unreserve(x, tags, ntags, &rv);
		goto fail;
	}
	tc_crash_point("file_save_unpublished");
	tcf_seq_begin(x->hdr);
	tcf_set_end(x, off + need);
	tcf_publish(x, &rv, h, x->hdr->active_log, off, (uint32_t)need, expire, now);
	tc_crash_point("file_save_publishing");
	tcf_seq_end(x->hdr);
	x->hdr->writes++;
	tcf_maybe_compact(f, need, now);
	tcf_unlock(f);
	free(buf);
	free(rv.trefs);
	return TC_OK;
fail:
	tcf_unlock(f);
out_nolock:
	free(buf);
	free(rv.trefs);
	return TC_ERR;
}

static int file_remove(void *st, tc_str id)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	char err[TC_ERRBUF];
	uint32_t slot;

	if (tcf_lock(f, NULL) != TC_OK) {
		return TC_ERR;
	}
	slot = find_id(s, id);
	if (slot) {
		tcf_tombstones(f, &slot, 1, 1, err);
		tcf_remove_list(f, &slot, 1, NULL);
		s->ix.hdr->writes++;
	}
	tcf_unlock(f);
	return slot ? TC_OK : TC_MISS;
}

/* ---------------------------------------------------------------- tags */

static int carries(tcf_idx *x, const tcf_slot *sl, uint32_t t)
{
	const tcf_link *l = (const tcf_link *)TCF_H(x, sl->links);
	uint32_t j;

	for (j = 0; j < sl->ntags; j++) {
		if (l[j].tag == t) {
			return 1;
		}
	}
	return 0;
}

/* The index as tc_select() walks it. */
static uint32_t ix_next(void *ix, uint32_t slot)
{
	tcf_idx *x = ix;

	while (++slot <= x->nslots) {
		if (x->slots[slot - 1].log) {
			return slot;
		}
	}
	return 0;
}

static int ix_entry(void *x, uint32_t slot)
{
	if (!tcf_slot_ok(x, slot)) {
		((tcf_idx *)x)->tainted = 1;
		return 0;
	}
	return 1;
}

static uint32_t ix_tag(void *x, const tc_str *name)
{
	const unsigned char *p = (const unsigned char *)name->p;

	return tcf_tag_find(x, p, (uint32_t)name->len, tcf_tag_hash(p, name->len));
}

static uint32_t ix_count(void *x, uint32_t t)
{
	return ((tcf_idx *)x)->tags[t - 1].count;
}

static uint32_t ix_member(void *x, uint32_t t, uint32_t i)
{
	return tcf_member_sel(x, t, i);
}

static int ix_carries(void *x, uint32_t slot, uint32_t t)
{
	return carries(x, &((tcf_idx *)x)->slots[slot - 1], t);
}

/* The slots a mode selects, under the lock (tc_select). Nothing when the
 * index turns out damaged: the unlock rebuilds it. */
static uint32_t *select_ids(tcf_store *s, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                            size_t *n, int *oom)
{
	tcf_idx *x = &s->ix;
	const tc_index ix = {x, x->nslots, ix_next, ix_entry, ix_tag, ix_count, ix_member, ix_carries};
	uint32_t *ids;

	/* one tag: the same set, without the bitmap of nslots bits that
	 * matchingAny clears to merge several tags' members */
	if (mode == TC_CLEAN_MATCHING_ANY && ntags == 1) {
		mode = TC_CLEAN_MATCHING;
	}
	ids = tc_select(&ix, mode, tags, ntags, n, oom);

	if (x->tainted) {
		free(ids);
		*n = 0;
		return NULL;
	}
	return ids;
}

/* clean('old'): every log compacted, a megabyte per step, the lock taken
 * and released around each step. Called without the lock. */
static int tcf_compact_all(tc_file *f, int64_t now, char *err)
{
	tcf_hdr *H;
	uint32_t stop;
	uint64_t dead, steps, i;

	if (tcf_lock(f, err) != TC_OK) {
		return TC_ERR;
	}
	H = f->s->ix.hdr;
	dead = H->log_bytes > H->live_bytes ? H->log_bytes - H->live_bytes : 0;
	if (dead <= H->log_bytes / 16 + (uint64_t)TCF_LOGHDR * TCF_MAXLOGS) {
		tcf_unlock(f);
		return TC_OK;
	}
	if (TCF_LOGENT(&f->s->ix, H->active_log)->end > TCF_LOGHDR && tcf_rotate(f, err) != TC_OK) {
		tcf_unlock(f);
		return TC_ERR;
	}
	stop = H->active_log;
	steps = H->log_bytes / (1024 * 1024) + 4 * TCF_MAXLOGS;
	tcf_unlock(f);
	for (i = 0; i < steps; i++) {
		int r;

		if (tcf_lock(f, err) != TC_OK) {
			return TC_ERR;
		}
		H = f->s->ix.hdr;
		r = H->first_log < stop ? tcf_compact_step(f, 1024 * 1024, now) : 0;
		tcf_unlock(f);
		if (r < 0) {
			snprintf(err, TC_ERRBUF, "%.3000s: compaction stopped (no room to copy, or a damaged index)",
			         f->s->dir);
			return TC_ERR;
		}
		if (r == 0) {
			return TC_OK;
		}
	}
	return TC_OK;
}

/* Test hook (TAGCACHE_TEST_FILE_DAMAGE=tag_live): a clean of one tag
 * first takes one from the tag's live count, once per process, as a
 * damaged index would have it. */
static int test_damage_live(void)
{
	static int armed = -1;

	if (armed < 0) {
		const char *p = getenv("TAGCACHE_TEST_FILE_DAMAGE");

		armed = p && strcmp(p, "tag_live") == 0;
	}
	if (armed) {
		armed = 0;
		return 1;
	}
	return 0;
}

static int file_clean(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	int64_t now = tc_now();
	uint32_t *ids, t = 0, h0 = 0;
	const unsigned char *th0 = ntags ? (const unsigned char *)tags[0].p : NULL;
	size_t n = 0;
	int oom = 0, rc = TC_OK, pass, one = (mode == TC_CLEAN_MATCHING_ANY || mode == TC_CLEAN_MATCHING) && ntags == 1;
	int have_pre = 0;
	tcf_pre pre;

	if (ntags == 1) {
		h0 = tcf_tag_hash(th0, tags[0].len);  /* before the lock */
	}
	/* A one-tag clean selects its entries and builds their DELs before it
	 * takes the lock (the lock every other writer waits for): under it the
	 * selection is used if no member was added or moved since, else made
	 * again (tcf_clean_use). */
	if (one) {
		if (__atomic_load_n(&s->ix.hdr->retired, __ATOMIC_ACQUIRE) && tcf_reopen_index(f, err) != TC_OK) {
			return TC_ERR;
		}
		tcf_lmap_prune(s);
		have_pre = tcf_clean_pre(s, th0, (uint32_t)tags[0].len, h0, now, &pre);
		if (have_pre) {
			tc_crash_point("file_clean_preselected");
		}
	}
	if (tcf_lock_spin(f, err) != TC_OK) {
		if (have_pre) {
			tcf_pre_free(&pre);
		}
		return TC_ERR;
	}
	if (have_pre) {
		int r = 0;

		t = tcf_tag_find(&s->ix, th0, (uint32_t)tags[0].len, h0);
		if (t && test_damage_live()) {
			s->ix.tags[t - 1].live--;  /* test hook: a live count one too low */
		}
		if (t && !s->ix.tainted && (r = tcf_clean_use(s, t, &pre, now)) > 0) {
			uint32_t *slots = malloc((pre.n ? pre.n : 1) * sizeof(*slots));
			size_t i;

			if (slots) {
				s->ix.hdr->pre_kept++;
				for (i = 0; i < pre.n; i++) {
					slots[i] = pre.e[i].slot;
				}
				if (pre.n) {
					/* a failed tombstone write still removes: the logs are marked */
					tcf_tombstones_built(f, pre.buf, pre.total, 1, err);
					tcf_remove_list_tag(f, slots, pre.n, "file_clean_tag", t);
					s->ix.hdr->writes++;
				}
				tcf_unlock(f);
				free(slots);
				tcf_pre_free(&pre);
				return TC_OK;
			}
			r = -1;
		}
		tcf_pre_free(&pre);
		if (r < 0) {
			tcf_unlock(f);
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		if (t) {
			s->ix.hdr->pre_redone++;
		}
	}
	if (mode == TC_CLEAN_ALL) {
		/* a new, empty index and a new log that makes every older one
		 * obsolete; the old logs are unlinked */
		tc_crash_point("file_clean_all");
		rc = tcf_rebuild(f, NULL, 1, NULL, err);
		s->ix.hdr->writes++;
		tcf_unlock(f);
		return rc;
	}
	if (mode == TC_CLEAN_OLD) {
		rc = tcf_sweep_expired(f, now, err);
		tcf_unlock(f);
		if (rc == TC_OK) {
			char cerr[TC_ERRBUF];

			/* Compaction gives space back; when it cannot (a full disk),
			 * the store stays as it is and correct, so clean('old') still
			 * did its job. */
			if (tcf_compact_all(f, now, cerr) != TC_OK) {
				tc_log("tagcache: %s", cerr);
			}
		}
		return rc;
	}
	/* A selection that finds the index damaged selects nothing: the index
	 * is rebuilt from the logs at once and the selection made again, so
	 * that the clean still happens. */
	for (pass = 0;; pass++) {
		if ((mode == TC_CLEAN_MATCHING_ANY || mode == TC_CLEAN_MATCHING) && ntags == 1) {
			/* one tag: every entry of it goes, and the tag after them */
			t = tcf_tag_find(&s->ix, th0, (uint32_t)tags[0].len, h0);
			if (t && !have_pre && test_damage_live()) {
				s->ix.tags[t - 1].live--;  /* test hook: a live count one too low */
			}
			ids = t ? tcf_tag_members(&s->ix, t, &n, &oom) : NULL;
			if (!ids) {
				t = 0;
				n = 0;
			}
		} else {
			ids = select_ids(s, mode, tags, ntags, &n, &oom);
		}
		if (!s->ix.tainted || oom || pass == 1) {
			break;
		}
		{
			tcf_caps c = {s->ix.nslots, s->ix.ntags, s->ix.heap_units};

			if (tcf_rebuild(f, &c, 0, "an inconsistency was found in the index", err) != TC_OK) {
				tcf_unlock(f);
				return TC_ERR;
			}
		}
	}
	if (oom) {
		tcf_unlock(f);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	if (n) {
		/* a failed tombstone write still removes: the logs are marked */
		tcf_tombstones(f, ids, n, 1, err);
		tcf_remove_list_tag(f, ids, n, "file_clean_tag", t);
		s->ix.hdr->writes++;
	}
	tcf_unlock(f);
	free(ids);
	return TC_OK;
}

static int file_ids(void *st, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                    tc_emit_fn emit, void *ctx)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	int64_t now = tc_now();
	uint32_t *ids;
	size_t n, i;
	int oom;
	tc_sbuf b = {0};

	if (tcf_lock(f, NULL) != TC_OK) {
		return TC_ERR;
	}
	ids = select_ids(s, mode, tags, ntags, &n, &oom);
	for (i = 0; i < n; i++) {
		tcf_slot *sl = &s->ix.slots[ids[i] - 1];
		const unsigned char *rec;
		tcf_rec r;

		if (sl->expire < now) {
			continue;
		}
		if (!(rec = tcf_slot_record(s, &s->ix, ids[i], &r))
		    || tcf_key_hash(rec + TCF_REC, r.klen) != sl->hash) {
			verify_or_drop(f, ids[i]);  /* a damaged header or key: never listed */
			if (s->ix.tainted) {
				break;
			}
			continue;
		}
		tc_sbuf_add(&b, rec + TCF_REC, r.klen);
	}
	tcf_unlock(f);
	free(ids);
	return tc_sbuf_done(&b, oom, emit, ctx);
}

static int file_tags(void *st, tc_emit_fn emit, void *ctx)
{
	tc_file *f = st;
	tcf_idx *x;
	uint32_t i;
	tc_sbuf b = {0};

	if (tcf_lock(f, NULL) != TC_OK) {
		return TC_ERR;
	}
	x = &f->s->ix;
	for (i = 1; i <= x->ntags; i++) {
		tcf_tag *T = &x->tags[i - 1];

		if (T->nlen && T->count && tcf_tag_ok(x, i)) {
			tc_sbuf_add(&b, tcf_tag_name(x, i), T->nlen);
		}
	}
	tcf_unlock(f);
	return tc_sbuf_done(&b, 0, emit, ctx);
}

/* For the calls that read the header without the lock: the current index. */
static void fresh(tc_file *f)
{
	char err[TC_ERRBUF];

	if (__atomic_load_n(&f->s->ix.hdr->retired, __ATOMIC_ACQUIRE)) {
		tcf_reopen_index(f, err);
	}
}

static int file_fill(void *st)
{
	tc_file *f = st;
	uint64_t live;

	fresh(f);
	live = __atomic_load_n(&f->s->ix.hdr->live_bytes, __ATOMIC_RELAXED);
	uint64_t p = f->max_size ? live * 100 / f->max_size : 100;

	return p > 100 ? 100 : (int)p;
}

static int file_metadata(void *st, tc_str id, tc_meta *meta, tc_emit_fn emit, void *ctx)
{
	tc_file *f = st;
	tcf_store *s = f->s;
	tcf_idx *x;
	int64_t now = tc_now();
	uint32_t slot;
	tc_sbuf b = {0};

	if (tcf_lock(f, NULL) != TC_OK) {
		return TC_ERR;
	}
	x = &s->ix;
	slot = find_id(s, id);
	if (slot && x->slots[slot - 1].expire < now) {
		slot = 0;
	}
	if (slot) {
		tcf_slot *sl = &x->slots[slot - 1];
		const tcf_link *l = (const tcf_link *)TCF_H(x, sl->links);
		uint32_t j;

		meta->expire = sl->expire;
		meta->mtime = sl->mtime;
		for (j = 0; j < sl->ntags; j++) {
			if (tcf_tag_ok(x, l[j].tag)) {
				tc_sbuf_add(&b, tcf_tag_name(x, l[j].tag), x->tags[l[j].tag - 1].nlen);
			}
		}
	}
	tcf_unlock(f);
	return slot ? tc_sbuf_done(&b, 0, emit, ctx) : TC_MISS;
}

/* The lock-free read, the tags from the record it found (no lock: a
 * metadata() takes the store's lock). A damaged record or an inconsistent
 * index (load_fast's 2, rare): metadata() under the lock, then load(). */
static int file_load_tags(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx, char **data,
                          size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx)
{
	tc_file *f = st;
	tc_meta m;
	int rc;

	if (!data) {
		return file_load(st, id, allow_expired, alloc, ctx, data, len, meta);
	}
	rc = load_fast(f, id, tcf_key_hash((const unsigned char *)id.p, id.len), allow_expired, tc_now_coarse(), alloc,
	               ctx, data, len, meta, emit, ectx);
	if (rc != 2) {
		return rc;
	}
	rc = file_metadata(st, id, &m, emit, ectx);
	if (rc != TC_OK) {
		return rc;
	}
	return file_load(st, id, allow_expired, alloc, ctx, data, len, meta);
}

/* touch() and ___expire(): a TOUCH record, then the slot's expiry. */
static int set_expire(tc_file *f, tc_str id, int64_t extra, int force_expired)
{
	tcf_store *s = f->s;
	tcf_idx *x;
	int64_t now = tc_now(), e;
	uint64_t off, salt, need = tcf_rec_size(id.len, 0, 0);
	unsigned char *buf = malloc(need);
	char err[TC_ERRBUF];
	uint32_t slot;
	int rc = TC_MISS;

	if (!buf) {
		return TC_ERR;
	}
	if (tcf_lock(f, NULL) != TC_OK) {
		free(buf);
		return TC_ERR;
	}
	x = &s->ix;
	slot = find_id(s, id);
	if (slot) {
		tcf_slot *sl = &x->slots[slot - 1];

		if (force_expired) {
			e = now - 1;
		} else if (sl->expire < now) {
			goto out;
		} else {
			e = sl->expire + extra;
		}
		tcf_rec_build(buf, TCF_TOUCH, id, NULL, 0, NULL, 0, e, now);
		if (tcf_prepare_append(f, need, &off, &salt, err) != TC_OK) {
			goto out;
		}
		tcf_rec_seal(buf, salt, off);
		if (tcf_append(f, buf, (size_t)need, off, err) != TC_OK) {
			goto out;
		}
		tcf_seq_begin(x->hdr);
		tcf_set_end(x, off + need);
		tcf_rseq_begin(TCF_RSEQ(x, sl->hash));
		__atomic_store_n(&sl->expire, e, __ATOMIC_RELAXED);
		__atomic_store_n(&sl->mtime, now, __ATOMIC_RELAXED);
		tcf_rseq_end(TCF_RSEQ(x, sl->hash));
		tcf_seq_end(x->hdr);
		if (e < x->hdr->min_expire) {
			x->hdr->min_expire = e;
		}
		x->hdr->writes++;
		rc = TC_OK;
	}
out:
	tcf_unlock(f);
	free(buf);
	return rc;
}

static int file_touch(void *st, tc_str id, int64_t extra)
{
	return set_expire(st, id, extra, 0);
}

static int file_expire_now(void *st, tc_str id)
{
	return set_expire(st, id, 0, 1);
}

static void file_stats(void *st, tc_stat_fn emit, void *ctx)
{
	tc_file *f = st;
	tcf_idx *x;
	tcf_hdr *H;
	uint64_t hits, misses, logs = 0;
	int i;

	fresh(f);
	x = &f->s->ix;
	H = x->hdr;

	tc_stripes_sum(H->stripes, &hits, &misses);
	for (i = 0; i < TCF_MAXLOGS; i++) {
		logs += H->logs[i].number != 0;
	}
	emit(ctx, "hits", (int64_t)hits);
	emit(ctx, "misses", (int64_t)misses);
	emit(ctx, "writes", (int64_t)H->writes);
	emit(ctx, "entries", (int64_t)H->entries);
	emit(ctx, "tags", (int64_t)H->tags);
	emit(ctx, "live_bytes", (int64_t)H->live_bytes);
	emit(ctx, "log_bytes", (int64_t)H->log_bytes);
	/* what the store takes on disk: its logs and its index */
	emit(ctx, "bytes_used", (int64_t)(H->log_bytes + x->size));
	emit(ctx, "index_bytes", (int64_t)x->size);
	emit(ctx, "index_slots", (int64_t)x->nslots);
	emit(ctx, "index_heap_bytes", (int64_t)x->heap_units * TCF_UNIT);
	emit(ctx, "index_heap_used", (int64_t)H->heap_used * TCF_UNIT);
	emit(ctx, "logs", (int64_t)logs);
	emit(ctx, "max_size", (int64_t)f->max_size);
	emit(ctx, "copied", (int64_t)H->copied);
	emit(ctx, "compactions", (int64_t)H->compactions);
	emit(ctx, "evictions", (int64_t)H->evictions);
	emit(ctx, "expirations", (int64_t)H->expirations);
	emit(ctx, "corrupt_records", (int64_t)H->corrupt);
	emit(ctx, "rebuilds", (int64_t)H->rebuilds);
	emit(ctx, "lock_recoveries", (int64_t)H->lock_recoveries);
	emit(ctx, "cleans_preselected", (int64_t)H->pre_kept);
	emit(ctx, "cleans_reselected", (int64_t)H->pre_redone);
}

static int file_verify(void *st, tc_emit_fn emit, void *ctx)
{
	tc_file *f = st;
	tc_sbuf b = {0};
	int rc;

	if (tcf_lock(f, NULL) != TC_OK) {
		return tc_verify_nolock(emit, ctx);
	}
	rc = tcf_check(f->s, &f->s->ix, tc_sbuf_cb, &b);
	tcf_unlock(f);
	tc_sbuf_emit(&b, emit, ctx);
	return rc;
}

static void file_minfo(tc_info_fn emit, void *ctx)
{
	emit(ctx, "File store layout", TC_FILE_LAYOUT_STR);
}

const tc_backend tc_backend_file = {
	.name = "file",
	.caps = TC_CAP_LISTINGS | TC_CAP_FOREVER,
	.options = file_options,
	.config_size = sizeof(tc_file_config),
	.defaults = file_defaults,
	.open = file_open,
	.close = file_close,
	.load = file_load,
	.save = file_save,
	.remove = file_remove,
	.clean = file_clean,
	.ids = file_ids,
	.tags = file_tags,
	.fill = file_fill,
	.metadata = file_metadata,
	.load_tags = file_load_tags,
	.touch = file_touch,
	.expire_now = file_expire_now,
	.stats = file_stats,
	.verify = file_verify,
	.failure = NULL, /* no connection to lose */
	.rshutdown = tc_file_release_held,
	.minfo = file_minfo,
	.stale_opts = tc_file_stale_opts,
	.lease_home = tc_file_lease_home,
};
