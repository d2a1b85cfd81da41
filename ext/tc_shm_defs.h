/*
 * tc_shm_defs.h: the shared-memory segment's layout and the declarations
 * the engine's files share. TECHNOTES.md draws the same layout for
 * newcomers. The files form a stack, each using only those below it:
 *
 *   tc_shm.c          the operations (the vtable), the write lock
 *   tc_shm_evict.c    making room: sweeps, eviction, contiguous runs
 *   tc_shm_recover.c  the structure check and the repair
 *   tc_shm_index.c    hashes, chains, tag records, removing entries
 *   tc_shm_seg.c      finding, creating and mapping a segment
 *   tc_shm_alloc.c    the heap
 *
 *   [header][slots: nslots x 16 B][buckets: u32][tag buckets: u32][heap]
 *
 * Everything inside the segment refers to everything else by offsets, never
 * pointers: every process maps the segment at its own address. Heap offsets
 * are "refs", counted in 16-byte units from the heap start; ref 0 is the
 * start sentinel and means "none".
 */
#ifndef TC_SHM_DEFS_H
#define TC_SHM_DEFS_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "tc_backend.h"
#include "tc_util.h"

#define TC_SHM_MAGIC   "TAGCACH1"
#define TC_SHM_LAYOUT  4u  /* 2: tag members removed lazily (tc_tag.live);
                              3: the checksum mixes the version in after
                              hashing the bytes (tc_entry_check_of);
                              4: tagset, which a save's tag lookup made
                              without the lock relies on (tc_tag_pre); a
                              member array holds each member's link index
                              (TC_THINT) */
#define TC_SHM_READY   0x52454459u  /* "REDY", written last at creation */
#define TC_UNIT        16u
#define TC_NCLASSES    96           /* allocator free lists */
#define TC_NEXACT      64           /* classes 0..63 hold one exact size */
#define TC_MIN_SIZE    (1024 * 1024)
#define TC_SEQ_STRIPES 1024

typedef uint32_t tc_ref;

/* Block types. */
enum {
	TC_B_SENTINEL = 0x5e,
	TC_B_FREE = 0xf4,
	TC_B_ENTRY = 0xe7,
	TC_B_DEAD = 0xde,  /* an entry being removed: never read, never revived */
	TC_B_TAG = 0x7a,
	TC_B_TARR = 0x7b
};

typedef struct {
	uint32_t size;  /* in units, header included */
	uint32_t prev;  /* size of the block before, in units */
	uint16_t type;
	uint16_t cls;   /* free list class of a free block */
	uint32_t aux;   /* entry: its slot; free: unused */
} tc_blk;

typedef struct {
	tc_ref next, prev;  /* free list links, in the payload of a free block */
} tc_free;

/* An entry's payload: this, then ntags links, then key, value and the tag
 * names (each a u16 length and its bytes), contiguous. */
typedef struct {
	uint64_t version;  /* newer saves of an id have larger versions */
	int64_t expire;
	int64_t mtime;
	uint32_t klen, vlen;
	uint32_t ntags, tnlen;
	uint32_t hash;     /* low 32 bits of the key hash */
	uint32_t check;    /* checksum of version, lengths, key, value, names */
} tc_entry;

typedef struct {
	tc_ref tag;    /* the tag record */
	uint32_t pos;  /* this entry's index in the tag's member array */
} tc_link;

/* A tag's member array holds slot ids; member k (slot s) holds while the
 * entry in slot s has a link {this tag, k}. Removing an entry touches only
 * its tags' records (live--), never their arrays: the members it leaves
 * behind fail that test and are dropped when the array is compacted (when
 * it is full and at most half live, or when fewer than 1/8 of its members
 * are live), or with the whole array when the tag's last entry goes. */
typedef struct {
	tc_ref next;    /* tag bucket chain */
	uint32_t hash;
	uint32_t count; /* members in the array, including ones that no longer hold */
	uint32_t cap;
	tc_ref arr;     /* TARR block: u32 slot indexes */
	uint32_t live;  /* entries that carry the tag (0: the tag is dropped) */
	uint32_t nlen;  /* name follows (after gen) */
	uint32_t spare;
	uint64_t gen;   /* stamp of the last change that can add a member that
	                   holds or move one (a link, a compaction, a new array,
	                   the record's creation): ++hdr->tgen, stored with
	                   release after the change. A release (live--) does
	                   not stamp: a clean selected without the lock checks
	                   each member again under it (tc_clean_tag_pre) */
} tc_tag;

typedef struct {
	tc_ref blk;     /* 0: free slot */
	uint32_t next;  /* bucket chain (slot + 1), or free list */
	uint32_t hash;
	uint32_t atime; /* hdr->tick at the last read or save (an LRU clock
	                   that advances with writes), set by readers without a
	                   lock, and only when it is more than atime_slack ticks
	                   old: the slot table never moves, so a stale store
	                   only skews one entry's age */
} tc_slot;

typedef struct {
	char magic[8];
	uint32_t layout;
	uint32_t abi;
	uint64_t size;
	uint32_t nslots, nbuckets, ntagbuckets, ready;
	uint64_t off_slots, off_buckets, off_tagbuckets, off_heap;
	uint32_t heap_units;
	uint32_t needs_repair;  /* a holder left without finishing */
	char pad0[64];
	pthread_mutex_t lock;
	char pad1[64];
	uint64_t seq;           /* odd while the whole index changes (clean all,
	                           repair): every reader retries */
	uint32_t tick;          /* the LRU clock: version >> tick_shift */
	uint32_t pages_2m;      /* tc_huge_collapse() of the segment: 0 not
	                           tried (new, or made by an earlier build), 3
	                           under way, 1 done, 2 refused (4 KB pages); */
	uint64_t pages_2m_ino;  /* of the file it was tried on (a copy of the
	                           file has 4 KB pages again) */
	char pad2[40];
	/* below: written only under the lock */
	uint64_t version;
	uint64_t tgen;          /* the last tag stamp given (tc_tag.gen); never
	                           reset but with the file */
	uint64_t tagset;        /* bumped (release) after every change to the
	                           set of tag records: one created or dropped,
	                           the index reset (tc_tag_pre) */
	uint32_t free_slot;     /* slot + 1 */
	uint32_t entries, tags, clock;
	uint64_t bytes_used;
	int64_t min_expire;     /* no entry expires before this */
	uint64_t writes, evictions, expirations, lock_recoveries;
	uint64_t pre_kept, pre_redone;  /* cleans whose selection made without
	                                   the lock held, or had to be made again */
	uint64_t tpre_kept, tpre_redone;  /* the same for saves' tag lookups */
#ifdef TC_SHM_TRACE
	/* a tracing build's (never the default): what the holder does, and
	 * when the lock was last taken and given back (CLOCK_MONOTONIC ns) */
	uint32_t tr_kind, tr_pid;
	uint64_t tr_acq_ns, tr_rel_ns;
#endif
	tc_ref free_heads[TC_NCLASSES];
	char pad3[64];
	tc_stripe stripes[TC_NSTRIPES];
	/* Per stripe of buckets (bucket & (TC_SEQ_STRIPES - 1)): odd while an
	 * entry of that stripe is published or removed. A reader checks its
	 * key's stripe and the whole-index seq, so a writer stopped inside a
	 * window holds up the readers of one stripe, not all. */
	uint64_t sseq[TC_SEQ_STRIPES];
} tc_shm_hdr;

typedef struct {
	char segment[TC_OPT_STRMAX];
	char dir[TC_OPT_STRMAX];
	char path[TC_OPT_STRMAX];
	int64_t size;
	int64_t max_entries;
	int mode;
	double lock_timeout;
	int huge_pages;       /* this process may turn the segment (and TwoLevel's
	                         node file) into 2 MB pages: tc_huge_collapse() */
	tc_stale_opts stale;  /* serve_stale, rebuild_timeout, early_rebuild */
} tc_shm_config;

/* One mapping per segment file per process, shared by every object. */
typedef struct tc_shm_map {
	struct tc_shm_map *next;
	char *path;
	dev_t dev;
	ino_t ino;
	unsigned char *base;
	size_t size;
	tc_shm_hdr *hdr;
	tc_slot *slots;
	uint32_t *buckets, *tagbuckets;
	unsigned char *heap;
	uint32_t nslots, bmask, tbmask, heap_units;
	uint32_t tick_shift;   /* log2(nslots) - 10, at least 0 */
	uint32_t atime_slack;  /* nslots / 1024 versions, in ticks: a read
	                          refreshes an atime older than that (0 in a
	                          table of up to 1,024 entries: exact LRU) */
	int held;        /* this process holds the lock */
	int tainted;     /* this process found the segment damaged */
	int checked;     /* walked once since this process mapped it */
	int fd;          /* the file, kept open to fstat() it */
	tc_shm_config cfg;  /* as first attached: to attach again */
	int64_t fresh_at;  /* when a load last checked the file's size */
	uint64_t attach;   /* this process's count of mappings made, when this
	                      one was: a new one (the file changed under us,
	                      perhaps made again at the same address) differs */
} tc_shm_map;

typedef struct {
	tc_shm_map *m;
	double lock_timeout;
	/* tc_shm_save_if(): asked under the write lock, before a save
	 * changes anything; NULL for every other save */
	int (*save_if)(void *ctx);
	void *save_if_ctx;
	/* tc_shm_save_if(): the entry's mtime (the slow level's, for a
	 * TwoLevel fill); 0, as for every other save: now */
	int64_t save_mtime;
} tc_shm;

/* The LRU clock, on the whole-index seq's cache line (which a lock-free
 * load reads anyway, and writers dirty once per 2^tick_shift saves). */
#define TC_TICK(h)     __atomic_load_n(&(h)->tick, __ATOMIC_RELAXED)

/* The seqlock windows: tc_seq_begin()/tc_seq_end() (tc_sync.h). */
/* The window of the stripe that holds bucket hash h. */
static inline uint64_t *tc_sseq(tc_shm_hdr *H, uint32_t bucket)
{
	return &H->sseq[bucket & (TC_SEQ_STRIPES - 1)];
}

#define TC_BLK(m, r)   ((tc_blk *)((m)->heap + (size_t)(r) * TC_UNIT))
#define TC_PAYLOAD(b)  ((unsigned char *)(b) + sizeof(tc_blk))
#define TC_ENTRY(b)    ((tc_entry *)TC_PAYLOAD(b))
#define TC_LINKS(e)    ((tc_link *)((unsigned char *)(e) + sizeof(tc_entry)))
#define TC_KEY(e)      ((unsigned char *)TC_LINKS(e) + (size_t)(e)->ntags * sizeof(tc_link))
#define TC_VALUE(e)    (TC_KEY(e) + (e)->klen)
#define TC_NAMES(e)    (TC_VALUE(e) + (e)->vlen)
#define TC_TAGREC(b)   ((tc_tag *)TC_PAYLOAD(b))
#define TC_TAGNAME(t)  ((unsigned char *)(t) + sizeof(tc_tag))
#define TC_TARR(b)     ((uint32_t *)TC_PAYLOAD(b))
/* After a member array's cap slot ids, cap u16: member k's link index in
 * its entry (layout 4), so that the member test reads that one link. */
#define TC_THINT(b, cap) ((uint16_t *)(TC_TARR(b) + (cap)))
/* The bytes of a member array block of cap members, header included. */
#define TC_TARR_BYTES(cap) (sizeof(tc_blk) + (uint64_t)(cap) * (sizeof(uint32_t) + sizeof(uint16_t)))

/* tc_shm_seg.c */
int tc_shm_attach(const tc_shm_config *cfg, tc_shm_map **out, char *err);
/* The mapping checked against its file's size (one fstat): TC_OK when it
 * may be touched; when another process truncated or extended the file,
 * the old mapping is dropped (a page past the file's end is a SIGBUS) and
 * the segment attached again at the same map; TC_ERR (err says why) when
 * that fails, and the map stays detached (base NULL). */
int tc_shm_fresh(tc_shm_map *m, char *err);
/* At request start: tc_shm_fresh on every mapping whose size changed. */
void tc_shm_fresh_all(void);
void tc_shm_format(tc_shm_map *m);          /* empty index and heap */
void tc_shm_index_reset(tc_shm_map *m);     /* empty index (slots, buckets) */
void tc_shm_release_held(void);            /* request end after a bailout */
uint32_t tc_shm_abi(void);

/* tc_shm_alloc.c: the heap, only under the lock */
tc_ref tc_alloc(tc_shm_map *m, uint32_t units, uint16_t type);
void tc_free_blk(tc_shm_map *m, tc_ref r);
void tc_heap_reset(tc_shm_map *m);
void tc_freelist_push(tc_shm_map *m, tc_ref r);
int tc_size_class(uint32_t units);
/* A block ref inside the heap (not the sentinels); inline: every walk of
 * the index checks each ref it follows (a clean: 2-3 per tag link). */
static inline int tc_ref_ok(const tc_shm_map *m, tc_ref r)
{
	return r >= 1 && r < m->heap_units - 1;
}

/* tc_shm_index.c: under the lock */
uint32_t tc_key_hash(const unsigned char *p, size_t len);
uint32_t tc_tag_hash(const unsigned char *p, size_t len);
uint32_t tc_entry_check(const tc_entry *e);
/* tc_entry_check() in two parts: the bytes (key, value, names) hashed
 * without the lock, the version mixed in under it. */
uint64_t tc_entry_body_hash(const unsigned char *key, uint32_t klen, const unsigned char *val,
                            uint32_t vlen, const unsigned char *names, uint32_t tnlen, uint32_t ntags);
uint32_t tc_entry_check_of(uint64_t body, uint64_t version);
/* The bytes of an entry block with these lengths, header included. */
static inline uint64_t tc_entry_bytes(uint64_t ntags, uint64_t klen, uint64_t vlen, uint64_t tnlen)
{
	return sizeof(tc_blk) + sizeof(tc_entry) + ntags * sizeof(tc_link) + klen + vlen + tnlen;
}

/* The block at ref r if it is of that type, of at least min units, and
 * inside the heap; NULL otherwise. Inline, with tc_entry_sane(): a clean
 * checks every entry and tag record it follows (issue 15's profile). */
static inline const tc_blk *tc_blk_at(const tc_shm_map *m, tc_ref r, uint16_t type, uint32_t min)
{
	const tc_blk *b;

	if (!tc_ref_ok(m, r)) {
		return NULL;
	}
	b = TC_BLK(m, r);
	if (b->type != type || b->size < min || b->size > m->heap_units - 1 - r) {
		return NULL;
	}
	return b;
}

/* A block that claims to be an entry, checked against the heap's bounds. */
static inline int tc_entry_sane(const tc_shm_map *m, tc_ref r)
{
	const tc_blk *b = tc_blk_at(m, r, TC_B_ENTRY, 4);
	const tc_entry *e;

	if (!b) {
		return 0;
	}
	e = TC_ENTRY(b);
	return tc_entry_bytes(e->ntags, e->klen, e->vlen, e->tnlen) <= (uint64_t)b->size * TC_UNIT;
}
uint32_t tc_find(tc_shm_map *m, const unsigned char *k, uint32_t klen, uint32_t h);
tc_entry *tc_slot_entry(tc_shm_map *m, uint32_t id);
/* For slot ids read from the segment: the entry, or NULL (and the segment
 * marked for repair) when the slot does not hold one. */
tc_entry *tc_slot_entry_chk(tc_shm_map *m, uint32_t id);
/* A tag record and its member array, checked against the heap's bounds
 * (inline: a save checks each of its tags). */
static inline int tc_tag_ok(const tc_shm_map *m, tc_ref t)
{
	const tc_blk *b = tc_blk_at(m, t, TC_B_TAG, 2), *ab;
	const tc_tag *T;

	if (!b) {
		return 0;
	}
	T = TC_TAGREC(b);
	if (sizeof(tc_blk) + sizeof(tc_tag) + (uint64_t)T->nlen > (uint64_t)b->size * TC_UNIT
	    || T->count > T->cap || T->live > T->count) {
		return 0;
	}
	if (!T->cap) {
		return 1;
	}
	ab = tc_blk_at(m, T->arr, TC_B_TARR, 0);
	return ab && (uint64_t)ab->size * TC_UNIT >= TC_TARR_BYTES(T->cap);
}
tc_ref tc_tag_find(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h);
tc_ref tc_tag_get(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h);
/* A save's tag lookup made without the lock (tc_tag_pre), and what it
 * was made against: used under the lock only if the mapping, the
 * whole-index sequence and the tagset are the same (tc_tag_pre_holds). */
typedef struct {
	uint64_t attach, seq, tagset;
} tc_tags_pre;
/* Without the lock, a reader's rules: refs[i] the record of tags[i] (hash
 * th[i]), 0 for a name with none; 1 when made, 0 when it could not be (an
 * odd sequence, a writer in the middle). */
int tc_tag_pre(tc_shm_map *m, const tc_str *tags, const uint32_t *th, size_t n, tc_ref *refs, tc_tags_pre *p);
/* Under the lock: no tag record came or went since tc_tag_pre read *p,
 * so its refs name the same records, and its 0s names with none. */
static inline int tc_tag_pre_holds(const tc_shm_map *m, const tc_tags_pre *p)
{
	return p->attach == m->attach && p->seq == __atomic_load_n(&m->hdr->seq, __ATOMIC_RELAXED)
	       && p->tagset == m->hdr->tagset;
}
int tc_tag_reserve(tc_shm_map *m, tc_ref t);
/* tc_tag_reserve() with the usual case inline: room in the array. */
static inline int tc_tag_reserve_inl(tc_shm_map *m, tc_ref t)
{
	const tc_tag *T = TC_TAGREC(TC_BLK(m, t));

	return T->count < T->cap ? 0 : tc_tag_reserve(m, t);
}
/* Links tag t's new member (room reserved) to link l, link index j of the
 * entry in slot. */
void tc_tag_link(tc_shm_map *m, tc_ref t, uint32_t slot, tc_link *l, uint32_t j);
/* tc_tag_link() inline, for a save's links (room reserved): the stamp
 * `gen` is one fresh value of hdr->tgen for all of them (fresh for each
 * of its tags all the same: tgen only grows). */
static inline void tc_tag_link_inl(tc_shm_map *m, tc_ref t, uint32_t slot, tc_link *l, uint32_t j, uint64_t gen)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	tc_blk *ab = TC_BLK(m, T->arr);
	uint32_t k = T->count;

	TC_TARR(ab)[k] = slot;
	TC_THINT(ab, T->cap)[k] = (uint16_t)j;
	l->tag = t;
	l->pos = k;
	T->count = k + 1;
	T->live++;
	__atomic_store_n(&T->gen, gen, __ATOMIC_RELEASE);
}
/* The slot of member k of tag t if it still holds, else 0. */
uint32_t tc_tag_member(const tc_shm_map *m, tc_ref t, uint32_t k);
uint32_t tc_tag_member_sel(const tc_shm_map *m, tc_ref t, uint32_t k);
void tc_tag_drop(tc_shm_map *m, tc_ref t);
/* An entry that carried tag t is gone: one live member less. */
void tc_tag_release(tc_shm_map *m, tc_ref t);
/* tc_tag_release() with the usual case inline, its checks made on local
 * copies of m's fields (heap, heap_units: stores to the segment would make
 * the compiler reload them): one live member less; a tag that empties or
 * whose array is due for compaction goes the long way. */
static inline void tc_tag_release_inl(tc_shm_map *m, unsigned char *heap, uint32_t hu, tc_ref t)
{
	const tc_blk *tb = (const tc_blk *)(heap + (size_t)t * TC_UNIT);

	/* t <= hu - 3: the record's fields (units t + 1, t + 2) lie inside
	 * the heap whatever its size says (the long way checks that) */
	if (t >= 1 && t <= hu - 3 && tb->type == TC_B_TAG) {
		tc_tag *T = TC_TAGREC(tb);

		if (T->live > 1 && (T->count < 64 || T->live - 1 >= T->count / 8)) {
			T->live--;
			return;
		}
	}
	tc_tag_release(m, t);
}
void tc_remove_entry(tc_shm_map *m, uint32_t id);   /* inside a window */
void tc_remove_one(tc_shm_map *m, uint32_t id);     /* in its stripe's window */
void tc_remove_list(tc_shm_map *m, const uint32_t *ids, size_t n, const char *crash);
/* The ids a clean removed (tc_shm_clean_ids), copied out under the lock:
 * those of entries not expired at `now`. NULL where nobody asks. */
typedef struct {
	tc_sbuf b;
	int64_t now;
} tc_gone;
/* tc_remove_list(), the ids of the entries it removes added to *g. */
void tc_remove_list_gone(tc_shm_map *m, const uint32_t *ids, size_t n, const char *crash, tc_gone *g);
/* A clean of one tag: its entries removed (their ids added to *g unless
 * g is NULL), the tag dropped; how many. */
size_t tc_clean_tag(tc_shm_map *m, tc_ref t, const char *crash, tc_gone *g, int *oom);
/* A one-tag clean's selection made without the lock (tc_clean_tag_pre),
 * and used under it if nothing that could add a member changed since
 * (tc_clean_tag_use). */
typedef struct {
	uint64_t attach;      /* the mapping it was made in (tc_shm_map.attach) */
	uint64_t seq;         /* the whole-index sequence (even) */
	tc_ref t;
	uint64_t gen;         /* the tag's stamp when it was read */
	uint32_t count;       /* its members then */
	uint32_t n;           /* selected: */
	uint32_t *ids, *pos, *link;  /* slot, member position, which of the
	                                entry's links names t (one malloc) */
} tc_clean_pre;
/* Lock-free, every offset bounds-checked like a reader's: 1 with a
 * selection in *p (free p->ids), 0 when none could be made (no such tag,
 * an odd sequence, anything inconsistent: a writer was in the middle). */
int tc_clean_tag_pre(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h, tc_clean_pre *p);
/* Under the lock, t found again: if p still holds (same mapping, sequence,
 * tag and stamp), its members are each checked again (an entry removed
 * since, and its slot perhaps reused, is no member any more) and removed
 * as tc_clean_tag() does; returns 1 and *removed. 0: p is stale, nothing
 * was done. */
int tc_clean_tag_use(tc_shm_map *m, tc_ref t, const tc_clean_pre *p, const char *crash, tc_gone *g,
                     size_t *removed);

/* tc_shm_evict.c: under the lock */
void tc_sweep_expired(tc_shm_map *m, int64_t now);
int tc_make_contiguous(tc_shm_map *m, uint32_t units, int64_t now);
int tc_make_room(tc_shm_map *m, int64_t now);
tc_ref tc_alloc_room(tc_shm_map *m, uint32_t units, uint16_t type, int64_t now);

/* tc_shm_recover.c: under the lock */
void tc_shm_repair(tc_shm_map *m, const char *why);
int tc_shm_check(tc_shm_map *m, tc_emit_fn emit, void *ctx);

/* tc_shm.c, for TwoLevel only (its fast level is always this engine; not
 * in the vtable, no PHP method): clean() on a store opened by
 * tc_backend_shm, which then emits, after the lock, the id of every entry
 * it removed that had not expired, in one locked step: the fast level's
 * ids under a matchingTag / matchingAnyTag clean's tags, for TwoLevel's
 * tombstones, without selecting them a second time under a second lock.
 * Other modes: as clean(), nothing emitted. */
int tc_shm_clean_ids(void *st, tc_clean_mode mode, const tc_str *tags, size_t ntags, tc_emit_fn emit, void *ctx,
                     char *err);
/* Also for TwoLevel only: save() if cond(ctx), asked under the write lock
 * before anything is changed, still holds: TC_MISS (nothing written, err
 * empty) when it does not. A fill's copy lands only while no save of the
 * id began on the node since its slow read (the fill's word still in the
 * id's mark): a writer takes the lock after it published its mark, so the
 * fill either sees that mark or lands before that writer's copy. */
int tc_shm_save_if(void *st, tc_str id, tc_str data, const tc_str *tags, size_t ntags, int64_t expire,
                   int64_t mtime, int (*cond)(void *ctx), void *ctx, char *err);

#endif
