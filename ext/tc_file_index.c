/*
 * tc_file_index.c: the index, an mmapped file every process shares.
 *
 *   [header][slots][buckets][tag records][tag buckets][heap]
 *
 * A slot says where an id's record is: (log number, offset, length), with
 * the expiry and mtime (which touch() changes without moving the record).
 * Keys are not copied into the index: a slot keeps the key's hash, and the
 * key itself is compared in the record. Tags live in the index: a tag
 * record (name in the heap) with an array of its member slots, and each
 * slot an array of links (tag, position in that tag's array), so that
 * removing an entry from a tag is O(1) and a clean by tag costs O(members).
 *
 * Everything here runs under the write lock, or on an index that no other
 * process can see yet (a rebuild). Changes that lock-free readers could
 * trip over (bucket chains, slot locations, the log table) are made inside
 * odd-sequence windows by the callers. Every reference read from the file
 * is bounds-checked before it is followed; a bad one marks the index
 * tainted, and the lock holder rebuilds it from the logs.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tc_file_defs.h"
#include "tc_hash.h"

#define SEED_KEY UINT64_C(0x6b6579)
#define SEED_TAG UINT64_C(0x746167)

uint32_t tcf_key_hash(const unsigned char *p, size_t len)
{
	return (uint32_t)tc_hash(p, len, SEED_KEY);
}

uint32_t tcf_tag_hash(const unsigned char *p, size_t len)
{
	return (uint32_t)tc_hash(p, len, SEED_TAG);
}

/* The seqlock writer shared with shm (tc_sync.h). */
void tcf_seq_begin(tcf_hdr *h)
{
	tc_seq_begin(&h->seq);
}

void tcf_seq_end(tcf_hdr *h)
{
	tc_seq_end(&h->seq);
}

void tcf_rseq_begin(uint32_t *q)
{
	tc_seq32_begin(q);
}

void tcf_rseq_end(uint32_t *q)
{
	tc_seq32_end(q);
}

/* ---------------------------------------------------------------- layout */

/* Fills the size fields of h for capacities c. -1 if c is out of range. */
int tcf_layout(const tcf_caps *c, tcf_hdr *h)
{
	uint64_t off;

	if (c->nslots < 64 || c->nslots > (1u << 30) || c->ntags < 64 || c->ntags > (1u << 30)
	    || c->heap_units < 1024 || c->heap_units > UINT32_MAX - 16) {
		return -1;
	}
	h->nslots = c->nslots;
	h->nbuckets = tc_pow2(c->nslots);
	h->ntags = c->ntags;
	h->ntagbuckets = tc_pow2(c->ntags);
	h->heap_units = c->heap_units;
	off = tc_align(sizeof(tcf_hdr), 64);
	h->off_slots = off;
	off = tc_align(off + (uint64_t)h->nslots * sizeof(tcf_slot), 64);
	h->off_buckets = off;
	off = tc_align(off + (uint64_t)h->nbuckets * 4, 64);
	h->off_tags = off;
	off = tc_align(off + (uint64_t)h->ntags * sizeof(tcf_tag), 64);
	h->off_tagbuckets = off;
	off = tc_align(off + (uint64_t)h->ntagbuckets * 4, 64);
	h->off_heap = off;
	h->size = tc_align(off + (uint64_t)h->heap_units * TCF_UNIT, 4096);
	return 0;
}

void tcf_bind(tcf_idx *x, unsigned char *base, size_t size)
{
	tcf_hdr *h = (tcf_hdr *)base;

	x->base = base;
	x->size = size;
	x->hdr = h;
	x->slots = (tcf_slot *)(base + h->off_slots);
	x->buckets = (uint32_t *)(base + h->off_buckets);
	x->tags = (tcf_tag *)(base + h->off_tags);
	x->tagbuckets = (uint32_t *)(base + h->off_tagbuckets);
	x->heap = base + h->off_heap;
	x->nslots = h->nslots;
	x->bmask = h->nbuckets - 1;
	x->ntags = h->ntags;
	x->tbmask = h->ntagbuckets - 1;
	x->heap_units = h->heap_units;
	x->tainted = 0;
	x->full = TCF_FULL_NONE;
}

/* Empty slots, buckets, tags and heap. */
void tcf_format(tcf_idx *x)
{
	tcf_hdr *h = x->hdr;

	memset(x->slots, 0, (size_t)x->nslots * sizeof(tcf_slot));
	memset(x->buckets, 0, (size_t)(x->bmask + 1) * 4);
	memset(x->tags, 0, (size_t)x->ntags * sizeof(tcf_tag));
	memset(x->tagbuckets, 0, (size_t)(x->tbmask + 1) * 4);
	tc_idlist_reset(TC_IDLIST(x->slots), x->nslots, &h->free_slot);
	tc_idlist_reset(TC_IDLIST(x->tags), x->ntags, &h->free_tag);
	h->entries = 0;
	h->tags = 0;
	h->heap_top = 1;  /* ref 0 means "none" */
	h->heap_used = 0;
	memset(h->free_heads, 0, sizeof(h->free_heads));
	h->min_expire = TC_EXPIRE_NEVER;
}

/* ------------------------------------------------------------------ heap */

/* Size classes: 1..4 units exactly, then four classes per power of two,
 * so a block wastes at most a quarter of itself. Blocks carry no header:
 * their owner knows their size. */
static uint32_t hclass(uint32_t n, uint32_t *units)
{
	uint32_t b, k;

	if (n <= 4) {
		*units = n ? n : 1;
		return n ? n - 1 : 0;
	}
	b = 31u - (uint32_t)__builtin_clz(n - 1);
	k = (n - 1) >> (b - 2);
	*units = (k + 1) << (b - 2);
	return 4 + (b - 2) * 4 + (k - 4);
}

/* The size of class c, in units (the inverse of hclass). */
static uint32_t class_units(uint32_t c)
{
	uint32_t g;

	if (c < 4) {
		return c + 1;
	}
	g = (c - 4) / 4;
	return ((c - 4) % 4 + 5) << g;
}

static uint32_t units_of(uint64_t bytes)
{
	return (uint32_t)((bytes + TCF_UNIT - 1) / TCF_UNIT);
}

static int href_ok(const tcf_idx *x, uint32_t r, uint32_t units)
{
	return r >= 1 && r < x->hdr->heap_top && x->hdr->heap_top <= x->heap_units
	       && units <= x->hdr->heap_top - r;
}

static uint32_t pop(tcf_idx *x, uint32_t c)
{
	tcf_hdr *h = x->hdr;
	uint32_t r = h->free_heads[c], next;

	if (!href_ok(x, r, class_units(c))) {
		h->free_heads[c] = 0;  /* a damaged list: drop it, the space with it */
		x->tainted = 1;
		return 0;
	}
	memcpy(&next, TCF_H(x, r), 4);
	h->free_heads[c] = next;
	return r;
}

static void push(tcf_idx *x, uint32_t r, uint32_t c)
{
	memcpy(TCF_H(x, r), &x->hdr->free_heads[c], 4);
	x->hdr->free_heads[c] = r;
}

/* A block of n units: from its class's free list, else from the top, else
 * cut from a larger free block (the rest goes back to the free lists in
 * pieces of exact class sizes: blocks have no header, so any run of units
 * can be one). Full only when none of that works. */
uint32_t tcf_halloc(tcf_idx *x, uint32_t n)
{
	tcf_hdr *h = x->hdr;
	uint32_t u, c = hclass(n, &u), r = 0;

	if (h->free_heads[c]) {
		r = pop(x, c);
		if (!r) {
			return 0;
		}
	} else if (h->heap_top <= x->heap_units && u <= x->heap_units - h->heap_top) {
		r = h->heap_top;
		h->heap_top += u;
	} else {
		uint32_t cc, rest, at;

		for (cc = c + 1; cc < TCF_NCLASSES && !h->free_heads[cc]; cc++) {
		}
		if (cc == TCF_NCLASSES) {
			x->full = TCF_FULL_HEAP;
			return 0;
		}
		r = pop(x, cc);
		if (!r) {
			return 0;
		}
		rest = class_units(cc) - u;
		at = r + u;
		while (rest) {
			uint32_t pu, pc = hclass(rest, &pu);

			if (pu > rest) {
				pc--;  /* the largest class that fits in what is left */
				pu = class_units(pc);
			}
			push(x, at, pc);
			at += pu;
			rest -= pu;
		}
	}
	h->heap_used += u;
	return r;
}

void tcf_hfree(tcf_idx *x, uint32_t r, uint32_t n)
{
	tcf_hdr *h = x->hdr;
	uint32_t u, c = hclass(n, &u);

	if (!r || !href_ok(x, r, u)) {
		return;
	}
	push(x, r, c);
	h->heap_used -= u <= h->heap_used ? u : h->heap_used;
}

/* --------------------------------------------------------------- records */

/* The record a slot names, if it lies within its log's published bytes
 * and the log can be mapped. */
const unsigned char *tcf_record(tcf_store *s, tcf_idx *x, uint32_t log, uint64_t off, uint32_t len)
{
	tcf_logent *le = TCF_LOGENT(x, log);
	unsigned char *b;

	if (!log || le->number != log || off < TCF_LOGHDR || len < TCF_REC || off > le->end
	    || len > le->end - off) {
		return NULL;
	}
	b = tcf_lmap_get(s, log, le->salt, le->end);
	return b ? b + off : NULL;
}

/* The record of a live slot when its header is whole and agrees with the
 * slot (a PUT of the slot's length); NULL otherwise. */
const unsigned char *tcf_slot_record(tcf_store *s, tcf_idx *x, uint32_t slot, tcf_rec *r)
{
	tcf_slot *sl = &x->slots[slot - 1];
	const unsigned char *rec = tcf_record(s, x, sl->log, sl->off, sl->len);

	if (!rec || !tcf_rec_header_ok(rec, sl->len, TCF_LOGENT(x, sl->log)->salt, sl->off, r)
	    || (r->magic & 0xff) != TCF_PUT || tcf_rec_size(r->klen, r->tnlen, r->vlen) != sl->len) {
		return NULL;
	}
	return rec;
}

int tcf_slot_ok(const tcf_idx *x, uint32_t slot)
{
	const tcf_slot *sl;

	if (slot < 1 || slot > x->nslots) {
		return 0;
	}
	sl = &x->slots[slot - 1];
	return sl->log != 0 && sl->ntags <= TC_TAGS_MAX
	       && (sl->ntags == 0 || href_ok(x, sl->links, sl->ntags));
}

static tcf_link *links_of(tcf_idx *x, const tcf_slot *sl)
{
	return (tcf_link *)TCF_H(x, sl->links);
}

uint32_t tcf_find(tcf_store *s, tcf_idx *x, const unsigned char *k, uint32_t klen, uint32_t h)
{
	uint32_t i = x->buckets[h & x->bmask], steps = 0;

	while (i) {
		tcf_slot *sl;

		if (i > x->nslots || ++steps > x->nslots) {
			x->tainted = 1;
			return 0;
		}
		sl = &x->slots[i - 1];
		if (sl->hash == h) {
			const unsigned char *rec = tcf_record(s, x, sl->log, sl->off, sl->len);
			uint16_t rk;

			if (!rec) {
				x->tainted = 1;
				return 0;
			}
			memcpy(&rk, rec + offsetof(tcf_rec, klen), 2);
			if (rk == klen && (uint64_t)TCF_REC + klen <= sl->len
			    && memcmp(rec + TCF_REC, k, klen) == 0) {
				/* callers follow its links (publish, remove, metadata) */
				if (!tcf_slot_ok(x, i)) {
					x->tainted = 1;
					return 0;
				}
				return i;
			}
		}
		i = sl->next;
	}
	return 0;
}

void tcf_account(tcf_idx *x, uint32_t log, int64_t bytes, int64_t n)
{
	tcf_logent *le = TCF_LOGENT(x, log);

	/* taking away more than was counted: the counts were damaged, and a
	 * wrapped live_bytes would evict every log (tcf_make_room) */
	if (bytes < 0 && (x->hdr->live_bytes < (uint64_t)-bytes
	                  || (le->number == log && (le->live < (uint64_t)-bytes || le->nlive < (uint64_t)-n)))) {
		x->tainted = 1;
	}
	if (le->number == log) {
		le->live += (uint64_t)bytes;
		le->nlive += (uint64_t)n;
	}
	x->hdr->live_bytes += (uint64_t)bytes;
}

/* ------------------------------------------------------------------ tags */

/* A tag's members (slot + 1): up to CHUNK of them in one array that
 * doubles (cap is its capacity); beyond that in chunks of CHUNK members
 * listed by a directory (cap is chunks x CHUNK; the directory holds the
 * next power of two of chunks). So the biggest block a tag ever asks for
 * is a chunk, whatever the size of the tag (MAGE: every entry), and freed
 * blocks are reusable. */
#define CHUNK       256u
#define CHUNK_UNITS (CHUNK * 4 / TCF_UNIT)

static uint32_t dir_units(uint32_t cap)
{
	return units_of((uint64_t)tc_pow2(cap / CHUNK) * 4);
}

/* After a change that adds a member or moves one (or makes the record):
 * a fresh stamp, stored last (tcf_clean_pre reads it first). */
static inline void tag_stamp(tcf_idx *x, tcf_tag *T)
{
	__atomic_store_n(&T->gen, ++x->hdr->tgen, __ATOMIC_RELEASE);
}

int tcf_tag_ok(const tcf_idx *x, uint32_t t)
{
	const tcf_tag *T;

	if (t < 1 || t > x->ntags) {
		return 0;
	}
	T = &x->tags[t - 1];
	if (T->nlen == 0 || T->nlen > TC_TAG_MAX || !href_ok(x, T->name, units_of(T->nlen))
	    || T->count > T->cap || T->live > T->count) {
		return 0;
	}
	if (T->cap == 0) {
		return T->arr == 0;
	}
	if (T->cap <= CHUNK) {
		return href_ok(x, T->arr, units_of((uint64_t)T->cap * 4));
	}
	return T->cap % CHUNK == 0 && href_ok(x, T->arr, dir_units(T->cap));
}

const unsigned char *tcf_tag_name(const tcf_idx *x, uint32_t t)
{
	return TCF_H(x, x->tags[t - 1].name);
}

/* Where member i of T is; NULL (and the index tainted) if a chunk
 * reference is out of bounds. */
static uint32_t *member_at(tcf_idx *x, const tcf_tag *T, uint32_t i)
{
	uint32_t c;

	if (T->cap <= CHUNK) {
		return (uint32_t *)TCF_H(x, T->arr) + i;
	}
	c = ((uint32_t *)TCF_H(x, T->arr))[i / CHUNK];
	if (!href_ok(x, c, CHUNK_UNITS)) {
		x->tainted = 1;
		return NULL;
	}
	return (uint32_t *)TCF_H(x, c) + i % CHUNK;
}

uint32_t tcf_member(tcf_idx *x, const tcf_tag *T, uint32_t i)
{
	uint32_t *p = member_at(x, T, i);

	return p ? *p : 0;
}

/* The link of the entry in slot s (one that passed tcf_slot_ok) that
 * names member k of tag t, or NULL: the member no longer holds (that
 * entry was removed, or saved again and linked at another position). */
static tcf_link *sound_member_link(tcf_idx *x, uint32_t t, uint32_t k, uint32_t s)
{
	tcf_link *l = links_of(x, &x->slots[s - 1]);
	uint32_t j, n;

	n = x->slots[s - 1].ntags;
	for (j = 0; j < n; j++) {
		if (l[j].tag == t && l[j].pos == k) {
			return &l[j];
		}
	}
	return NULL;
}

uint32_t tcf_member_sel(tcf_idx *x, uint32_t t, uint32_t i)
{
	uint32_t s = tcf_member(x, &x->tags[t - 1], i);

	if (s < 1 || s > x->nslots) {
		return s == TC_MEMBER_SKIP ? 0 : s;
	}
	if (!x->slots[s - 1].log) {
		return TC_MEMBER_SKIP;  /* removed */
	}
	if (!tcf_slot_ok(x, s)) {
		return s;  /* ix_entry() marks the index damaged */
	}
	return sound_member_link(x, t, i, s) ? s : TC_MEMBER_SKIP;
}

/* The entries of tag t (a sound tag record), in member order: every member
 * that holds, each a sound slot, at most the tag's live count of them (a
 * clean of one tag, without tc_select's callbacks, which check each slot
 * twice). NULL with *n 0: none, out of memory (*oom), or a member that is
 * no sound slot (the index is marked damaged). */
uint32_t *tcf_tag_members(tcf_idx *x, uint32_t t, size_t *n, int *oom)
{
	const tcf_tag *T = &x->tags[t - 1];
	uint32_t *ids, i, live = T->live;
	size_t k = 0;

	*n = 0;
	*oom = 0;
	if (!live) {
		return NULL;
	}
	if (!(ids = malloc((size_t)live * sizeof(*ids)))) {
		*oom = 1;
		return NULL;
	}
	for (i = 0; i < T->count; i++) {
		uint32_t s = tcf_member(x, T, i);

		if (s == TC_MEMBER_SKIP) {
			continue;
		}
		if (s < 1 || s > x->nslots) {
			x->tainted = 1;
			break;
		}
		if (!x->slots[s - 1].log) {
			continue;  /* removed */
		}
		if (!tcf_slot_ok(x, s)) {
			x->tainted = 1;
			break;
		}
		if (!sound_member_link(x, t, i, s)) {
			continue;
		}
		if (k == live) {
			x->tainted = 1;  /* more members hold than the live count */
			break;
		}
		ids[k++] = s;
	}
	if (x->tainted) {
		free(ids);
		return NULL;
	}
	*n = k;
	return ids;
}

/* ---------------------------------------- a one-tag clean's selection
 * made without the lock. A reader's rules: every index read with a plain
 * (relaxed) load of what a writer may be changing, every ref and length
 * bounds-checked on the copy read before it is followed; anything that
 * does not make sense ends the attempt without marking the index damaged
 * (a writer was in the middle: the selection is then made under the lock
 * as before). What it selects may be wrong for members that changed
 * meanwhile: tcf_clean_use() finds out. */

/* r is a heap block of units inside the heap (heap_top read once). */
static int href_ok_nolock(const tcf_idx *x, uint32_t r, uint32_t units)
{
	uint32_t top = __atomic_load_n(&x->hdr->heap_top, __ATOMIC_RELAXED);

	return r >= 1 && r < top && top <= x->heap_units && units <= top - r;
}

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define DEL_MAX (TCF_REC + TC_ID_MAX + 8)  /* the largest DEL (tcf_rec_header_ok: klen <= TC_ID_MAX) */

/* Member k of a tag whose (cap, arr) were read as given, or 0 when a ref
 * does not make sense. */
static uint32_t member_nolock(const tcf_idx *x, uint32_t cap, uint32_t arr, uint32_t k)
{
	uint32_t c;

	if (cap <= CHUNK) {
		return LD((const uint32_t *)TCF_H(x, arr) + k);
	}
	c = LD((const uint32_t *)TCF_H(x, arr) + k / CHUNK);
	if (!href_ok_nolock(x, c, CHUNK_UNITS)) {
		return 0;
	}
	return LD((const uint32_t *)TCF_H(x, c) + k % CHUNK);
}

/* The DEL of the record a slot was seen naming at (log, off, len), built
 * at buf (room for DEL_MAX bytes) as tcf_tombstones()
 * would build it: its size, 0 when the record's header check fails (no
 * tombstone, as under the lock), -1 when it cannot be read now. */
static int64_t del_nolock(tcf_store *s, const tcf_idx *x, uint32_t lg, uint64_t off, uint32_t rlen,
                          int64_t now, unsigned char *buf)
{
	const tcf_logent *le = TCF_LOGENT(x, lg);
	const unsigned char *base;
	uint64_t end, salt;
	tcf_rec r;

	if (__atomic_load_n(&le->number, __ATOMIC_ACQUIRE) != lg) {
		return -1;
	}
	end = __atomic_load_n(&le->end, __ATOMIC_ACQUIRE);
	salt = LD(&le->salt);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* the end read belongs to this log only if the entry still names it
	 * (numbers are never reused); below it, a record never changes */
	if (LD(&le->number) != lg || off < TCF_LOGHDR || rlen < TCF_REC || off > end || rlen > end - off) {
		return -1;
	}
	if (!(base = tcf_lmap_get(s, lg, salt, end))) {
		return -1;
	}
	if (!tcf_rec_header_ok(base + off, rlen, salt, off, &r) || (r.magic & 0xff) != TCF_PUT
	    || tcf_rec_size(r.klen, r.tnlen, r.vlen) != rlen) {
		return 0;
	}
	return (int64_t)tcf_rec_build_del(buf, base + off + TCF_REC, r.klen, now);
}

void tcf_pre_free(tcf_pre *p)
{
	free(p->e);
	free(p->buf);
	p->e = NULL;
	p->buf = NULL;
	p->n = 0;
	p->total = 0;
}

int tcf_clean_pre(tcf_store *s, const unsigned char *name, uint32_t len, uint32_t h, int64_t now,
                  tcf_pre *p)
{
	const tcf_idx *x = &s->ix;
	const uint32_t ns = x->nslots, nt = x->ntags;
	const tcf_tag *T;
	uint32_t t, count, cap, arr, k, steps = 0, nref, nlen;
	size_t n = 0, bcap;

	memset(p, 0, sizeof(*p));
	p->attach = x->attach;
	t = LD(&x->tagbuckets[h & x->tbmask]);
	for (;;) {
		if (!t || t > nt || ++steps > 64) {
			return 0;
		}
		T = &x->tags[t - 1];
		if (LD(&T->hash) == h && LD(&T->nlen) == len) {
			break;
		}
		t = LD(&T->next);
	}
	/* the stamp first: any change that adds or moves a member after this
	 * read stores a new one before the lock is free again */
	p->gen = __atomic_load_n(&T->gen, __ATOMIC_ACQUIRE);
	nref = LD(&T->name);
	nlen = LD(&T->nlen);
	count = LD(&T->count);
	cap = LD(&T->cap);
	arr = LD(&T->arr);
	if (nlen != len || !href_ok_nolock(x, nref, units_of(len)) || memcmp(TCF_H(x, nref), name, len) != 0
	    || !count || count > cap
	    || !href_ok_nolock(x, arr, cap <= CHUNK ? units_of((uint64_t)cap * 4) : dir_units(cap))) {
		return 0;
	}
	p->t = t;
	p->count = count;
	bcap = (count < 64 ? count : 64) * (size_t)DEL_MAX;
	p->e = malloc((size_t)count * sizeof(*p->e));
	p->buf = malloc(bcap);
	if (!p->e || !p->buf) {
		goto stale;
	}
	for (k = 0; k < count; k++) {
		uint32_t sl_no = member_nolock(x, cap, arr, k), j, ntg, lref, lg, rlen;
		const tcf_slot *sl;
		const tcf_link *l;
		uint64_t off;
		tcf_pre_ent *e;
		int64_t d;

		if (sl_no == TC_MEMBER_SKIP) {
			continue;
		}
		if (sl_no < 1 || sl_no > ns) {
			goto stale;
		}
		sl = &x->slots[sl_no - 1];
		/* where its record is, read before its links: a slot whose
		 * (log, off, len) are the same under the lock names the same
		 * record, whatever happened meanwhile */
		lg = __atomic_load_n(&sl->log, __ATOMIC_ACQUIRE);
		if (!lg) {
			continue;  /* removed */
		}
		off = LD(&sl->off);
		rlen = LD(&sl->len);
		ntg = LD(&sl->ntags);
		lref = LD(&sl->links);
		if (ntg > TC_TAGS_MAX || !ntg || !href_ok_nolock(x, lref, ntg)) {
			continue;  /* checked again under the lock, whatever it is */
		}
		l = (const tcf_link *)TCF_H(x, lref);
		for (j = 0; j < ntg; j++) {
			if (LD(&l[j].tag) == t && LD(&l[j].pos) == k) {
				break;
			}
		}
		if (j == ntg) {
			continue;
		}
		e = &p->e[n++];
		e->slot = sl_no;
		e->pos = k;
		e->link = j;
		e->log = lg;
		e->off = off;
		e->len = rlen;
		e->del = UINT64_MAX;
		if (p->total + DEL_MAX > bcap) {
			unsigned char *nb = realloc(p->buf, bcap * 2);

			if (!nb) {
				goto stale;
			}
			p->buf = nb;
			bcap *= 2;
		}
		d = del_nolock(s, x, lg, off, rlen, now, p->buf + p->total);
		if (d < 0) {
			e->log = 0;  /* not read: built under the lock */
		} else if (d > 0) {
			e->del = p->total;
			p->total += (uint64_t)d;
		}
	}
	p->n = n;
	return 1;

stale:
	tcf_pre_free(p);
	return 0;
}

int tcf_clean_use(tcf_store *s, uint32_t t, tcf_pre *p, int64_t now)
{
	tcf_idx *x = &s->ix;
	const tcf_tag *T = &x->tags[t - 1];
	size_t i, n = 0, moved = 0;

	if (p->attach != x->attach || t != p->t || T->gen != p->gen || T->count != p->count) {
		return 0;
	}
	/* Nothing added a member that holds or moved one since the selection;
	 * removals (which do not stamp) may have taken some of the selected,
	 * and the slot may hold another entry now: each is checked again by
	 * its one link, as tcf_tag_members() checks every member. */
	for (i = 0; i < p->n; i++) {
		tcf_pre_ent *e = &p->e[i];
		const tcf_slot *sl = &x->slots[e->slot - 1];
		const tcf_link *l;

		if (!sl->log) {
			continue;
		}
		if (!tcf_slot_ok(x, e->slot)) {
			return 0;  /* the selection under the lock finds the damage */
		}
		l = links_of(x, sl);
		if (e->link >= sl->ntags || l[e->link].tag != t || l[e->link].pos != e->pos) {
			continue;
		}
		if (e->log != sl->log || e->off != sl->off || e->len != sl->len) {
			e->log = 0;  /* moved (compaction) or not read: its DEL is built here */
			moved++;
		}
		p->e[n++] = *e;
	}
	/* every member that holds now was selected (no member was added), so
	 * those kept are the live count; anything else is damage, which the
	 * selection under the lock finds */
	if (n != T->live) {
		return 0;
	}
	if (n != p->n || moved) {
		/* the DELs of the entries kept, in their order */
		unsigned char *nb = malloc((size_t)p->total + moved * DEL_MAX + 1);
		uint64_t total = 0;

		if (!nb) {
			return -1;
		}
		for (i = 0; i < n; i++) {
			tcf_pre_ent *e = &p->e[i];

			if (e->log) {
				if (e->del != UINT64_MAX) {
					uint64_t sz = tcf_rec_size(((const tcf_rec *)(p->buf + e->del))->klen, 0, 0);

					memcpy(nb + total, p->buf + e->del, (size_t)sz);
					total += sz;
				}
			} else {
				const unsigned char *rec;
				tcf_rec r;

				if ((rec = tcf_slot_record(s, x, e->slot, &r))) {
					total += tcf_rec_build_del(nb + total, rec + TCF_REC, r.klen, now);
				}
			}
		}
		free(p->buf);
		p->buf = nb;
		p->total = total;
	}
	p->n = n;
	return 1;
}

/* Drops the members that no longer hold, keeping the order of the rest
 * (their links follow them); the array keeps its capacity. The members
 * that hold must come out as the live count, else the index is marked
 * damaged. */
static void tag_compact(tcf_idx *x, uint32_t t)
{
	tcf_tag *T = &x->tags[t - 1];
	const uint32_t count = T->count, ns = x->nslots;
	uint32_t k, n = 0, *pk = NULL, *pn = NULL;

	for (k = 0; k < count; k++) {
		const tcf_slot *sl;
		uint32_t s, j, nt;
		tcf_link *l;

		/* a chunk's members are contiguous: its place is looked up once
		 * per chunk (a member array of at most CHUNK is one chunk) */
		if (!pk || k % CHUNK == 0) {
			if (!(pk = member_at(x, T, k))) {
				return;  /* tainted */
			}
		} else {
			pk++;
		}
		s = *pk;
		if (s < 1 || s > ns) {
			continue;
		}
		sl = &x->slots[s - 1];
		nt = sl->ntags;
		/* what tcf_slot_ok() checks, then the link that names member k */
		if (!sl->log || nt == 0 || nt > TC_TAGS_MAX || !href_ok(x, sl->links, nt)) {
			continue;
		}
		l = links_of(x, sl);
		for (j = 0; j < nt && !(l[j].tag == t && l[j].pos == k); j++) {
		}
		if (j == nt) {
			continue;
		}
		if (n != k) {
			/* from the first member dropped on, every member kept is
			 * written at the next place */
			if (!pn || n % CHUNK == 0) {
				if (!(pn = member_at(x, T, n))) {
					return;
				}
			} else {
				pn++;
			}
			*pn = *pk;
			l[j].pos = n;
		}
		n++;
	}
	T->count = n;
	tag_stamp(x, T);
	if (n != T->live) {
		x->tainted = 1;
	}
}

uint32_t tcf_tag_find(tcf_idx *x, const unsigned char *name, uint32_t len, uint32_t h)
{
	uint32_t t = x->tagbuckets[h & x->tbmask], steps = 0;

	/* Every step is bounded; the whole record is checked only where the
	 * name is compared (its hash matches): a chain of ~2 tags walked for
	 * each tag of every save was a tenth of a save's instructions. */
	while (t) {
		tcf_tag *T;

		if (t > x->ntags || ++steps > x->ntags) {
			x->tainted = 1;
			return 0;
		}
		T = &x->tags[t - 1];
		if (T->hash == h) {
			if (!tcf_tag_ok(x, t)) {
				x->tainted = 1;
				return 0;
			}
			if (T->nlen == len && memcmp(TCF_H(x, T->name), name, len) == 0) {
				return t;
			}
		}
		t = T->next;
	}
	return 0;
}

uint32_t tcf_tag_find_nolock(const tcf_idx *x, const unsigned char *name, uint32_t len, uint32_t h,
                             uint64_t *born)
{
	uint32_t t = LD(&x->tagbuckets[h & x->tbmask]), steps = 0, nt = x->ntags;

	while (t) {
		const tcf_tag *T;

		if (t > nt || ++steps > 64) {
			return 0;
		}
		T = &x->tags[t - 1];
		if (LD(&T->hash) == h && LD(&T->nlen) == len) {
			/* the stamp first, then the name, then the stamp again: a record
			 * dropped or made meanwhile changes it */
			uint64_t b = __atomic_load_n(&T->born, __ATOMIC_ACQUIRE);
			uint32_t nref = LD(&T->name);

			if (b && href_ok_nolock(x, nref, units_of(len)) && memcmp(TCF_H(x, nref), name, len) == 0) {
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				if (LD(&T->born) != b || LD(&T->nlen) != len) {
					return 0;
				}
				*born = b;
				return t;
			}
		}
		t = LD(&T->next);
	}
	return 0;
}

/* Finds or creates a tag (with no member yet); 0 when out of room. pre:
 * the tag found without the lock (0: none), in record `born` of it: it is
 * the same record if that record was not dropped since (every creation
 * takes a fresh stamp), and then needs no chain walk nor name compare. */
static uint32_t tag_get(tcf_idx *x, const unsigned char *name, uint32_t len, uint32_t h, uint32_t pre,
                        uint64_t born)
{
	tcf_hdr *H = x->hdr;
	uint32_t t, nref;
	tcf_tag *T;

	if (pre && pre <= x->ntags && x->tags[pre - 1].born == born && tcf_tag_ok(x, pre)) {
		return pre;
	}
	t = tcf_tag_find(x, name, len, h);
	if (t || x->tainted) {
		return t;
	}
	t = H->free_tag;
	if (!t || t > x->ntags) {
		x->full = TCF_FULL_TAGS;
		return 0;
	}
	nref = tcf_halloc(x, units_of(len));
	if (!nref) {
		return 0;
	}
	tc_idlist_pop(TC_IDLIST(x->tags), &H->free_tag);
	T = &x->tags[t - 1];
	memcpy(TCF_H(x, nref), name, len);
	T->hash = h;
	T->count = 0;
	T->live = 0;
	T->cap = 0;
	T->arr = 0;
	T->name = nref;
	T->nlen = len;
	T->next = x->tagbuckets[h & x->tbmask];
	tag_stamp(x, T);
	__atomic_store_n(&T->born, T->gen, __ATOMIC_RELEASE);
	__atomic_store_n(&x->tagbuckets[h & x->tbmask], t, __ATOMIC_RELEASE);
	H->tags++;
	return t;
}

/* Room for one more member. */
static int tag_reserve(tcf_idx *x, uint32_t t)
{
	tcf_tag *T = &x->tags[t - 1];
	uint32_t cap, a, c, n;

	if (T->count < T->cap) {
		return 0;
	}
	if (T->cap && T->live <= T->cap / 2) {
		/* at most half of it holds: make room by dropping the rest */
		tag_compact(x, t);
		if (x->tainted) {
			return -1;
		}
		if (T->count < T->cap) {
			return 0;
		}
	}
	if (T->cap < CHUNK) {
		cap = T->cap ? T->cap * 2 : 4;
		a = tcf_halloc(x, units_of((uint64_t)cap * 4));
		if (!a) {
			return -1;
		}
		if (T->arr) {
			memcpy(TCF_H(x, a), TCF_H(x, T->arr), (size_t)T->count * 4);
			tcf_hfree(x, T->arr, units_of((uint64_t)T->cap * 4));
		}
		T->arr = a;
		T->cap = cap;
		tag_stamp(x, T);
		return 0;
	}
	if (T->cap > UINT32_MAX - CHUNK) {
		x->full = TCF_FULL_HEAP;
		return -1;
	}
	c = tcf_halloc(x, CHUNK_UNITS);
	if (!c) {
		return -1;
	}
	if (T->cap == CHUNK) {
		/* the full array becomes the first chunk of a directory of two */
		a = tcf_halloc(x, units_of(2 * 4));
		if (!a) {
			tcf_hfree(x, c, CHUNK_UNITS);
			return -1;
		}
		((uint32_t *)TCF_H(x, a))[0] = T->arr;
		((uint32_t *)TCF_H(x, a))[1] = c;
		T->arr = a;
		T->cap = 2 * CHUNK;
		tag_stamp(x, T);
		return 0;
	}
	n = T->cap / CHUNK;
	if (n == tc_pow2(n)) {
		/* the directory is full: twice as many entries */
		a = tcf_halloc(x, units_of((uint64_t)n * 2 * 4));
		if (!a) {
			tcf_hfree(x, c, CHUNK_UNITS);
			return -1;
		}
		memcpy(TCF_H(x, a), TCF_H(x, T->arr), (size_t)n * 4);
		tcf_hfree(x, T->arr, dir_units(T->cap));
		T->arr = a;
	}
	((uint32_t *)TCF_H(x, T->arr))[n] = c;
	T->cap += CHUNK;
	tag_stamp(x, T);
	return 0;
}

static void free_members(tcf_idx *x, tcf_tag *T)
{
	if (!T->arr) {
		return;
	}
	if (T->cap <= CHUNK) {
		tcf_hfree(x, T->arr, units_of((uint64_t)T->cap * 4));
	} else {
		uint32_t *dir = (uint32_t *)TCF_H(x, T->arr), i;

		for (i = 0; i < T->cap / CHUNK; i++) {
			tcf_hfree(x, dir[i], CHUNK_UNITS);
		}
		tcf_hfree(x, T->arr, dir_units(T->cap));
	}
	T->arr = 0;
	T->cap = 0;
}

static void tag_drop(tcf_idx *x, uint32_t t)
{
	tcf_tag *T = &x->tags[t - 1];
	uint32_t *p = &x->tagbuckets[T->hash & x->tbmask], steps = 0;

	while (*p && *p != t && *p <= x->ntags && ++steps <= x->ntags) {
		p = &x->tags[*p - 1].next;
	}
	if (*p == t) {
		*p = T->next;
	}
	free_members(x, T);
	tcf_hfree(x, T->name, units_of(T->nlen));
	memset(T, 0, sizeof(*T));
	tc_idlist_push(TC_IDLIST(x->tags), &x->hdr->free_tag, t);
	x->hdr->tags--;
}

static void tag_link(tcf_idx *x, uint32_t t, uint32_t slot, tcf_link *l)
{
	tcf_tag *T = &x->tags[t - 1];
	uint32_t *p = member_at(x, T, T->count);

	if (!p) {
		return;
	}
	*p = slot;
	l->tag = t;
	l->pos = T->count;
	T->count++;
	T->live++;
	tag_stamp(x, T);
}

/* An entry that carried tag t no longer does (its slot is free, or names
 * other links now): one live member less. Only the tag record is touched,
 * unless the tag is now empty (dropped with its array) or mostly members
 * that no longer hold (compacted). */
static void tag_release_slow(tcf_idx *x, uint32_t t);

static inline void tag_release(tcf_idx *x, uint32_t t)
{
	/* the usual case, inline: a record of the table (nothing else is
	 * followed) that keeps members and needs no compaction */
	if (t >= 1 && t <= x->ntags) {
		tcf_tag *T = &x->tags[t - 1];

		if (T->nlen && T->live > 1 && T->live <= T->count
		    && (T->count < 64 || T->live - 1 >= T->count / 8)) {
			T->live--;
			return;
		}
	}
	tag_release_slow(x, t);
}

static __attribute__((noinline)) void tag_release_slow(tcf_idx *x, uint32_t t)
{
	tcf_tag *T;

	if (!tcf_tag_ok(x, t) || x->tags[t - 1].live == 0) {
		x->tainted = 1;
		return;
	}
	T = &x->tags[t - 1];
	if (--T->live == 0) {
		tag_drop(x, t);
	} else if (T->count >= 64 && T->live < T->count / 8) {
		tag_compact(x, t);
	}
}

/* --------------------------------------------------------------- entries */

int tcf_reserve(tcf_store *s, tcf_idx *x, const unsigned char *key, uint32_t klen, uint32_t h,
                const tc_str *tags, size_t ntags, tcf_resv *r)
{
	size_t i;

	x->full = TCF_FULL_NONE;
	r->links = 0;
	r->ntags = ntags;
	for (i = 0; i < ntags; i++) {
		r->trefs[i] = 0;
	}
	r->old = tcf_find(s, x, key, klen, h);
	if (x->tainted) {
		return -1;
	}
	r->slot = r->old ? r->old : x->hdr->free_slot;
	if (!r->slot || r->slot > x->nslots) {
		x->full = TCF_FULL_SLOTS;
		return -1;
	}
	if (ntags && !(r->links = tcf_halloc(x, (uint32_t)ntags))) {
		return -1;
	}
	for (i = 0; i < ntags; i++) {
		const unsigned char *p = (const unsigned char *)tags[i].p;

		r->trefs[i] = tag_get(x, p, (uint32_t)tags[i].len, r->thash ? r->thash[i] : tcf_tag_hash(p, tags[i].len),
		                      r->tpre && r->attach == x->attach ? r->tpre[i] : 0, r->tborn ? r->tborn[i] : 0);
		if (!r->trefs[i] || tag_reserve(x, r->trefs[i]) != 0) {
			return -1;
		}
	}
	return x->tainted ? -1 : 0;
}

/* Gives back what a reservation took when the save does not happen. */
void tcf_unreserve(tcf_idx *x, const tc_str *tags, size_t ntags, tcf_resv *r)
{
	size_t i;

	if (x->tainted) {
		return;  /* the index is rebuilt anyway */
	}
	if (r->links) {
		tcf_hfree(x, r->links, (uint32_t)r->ntags);
		r->links = 0;
	}
	for (i = 0; i < ntags; i++) {
		const unsigned char *p = (const unsigned char *)tags[i].p;
		uint32_t t = tcf_tag_find(x, p, (uint32_t)tags[i].len,
		                          r->thash ? r->thash[i] : tcf_tag_hash(p, tags[i].len));

		if (t && x->tags[t - 1].count == 0) {
			tag_drop(x, t);
		}
	}
}

/* Inside an odd window: the id now lives at (log, off, len). */
void tcf_publish(tcf_idx *x, tcf_resv *r, uint32_t h, uint32_t log, uint64_t off, uint32_t len,
                 int64_t expire, int64_t mtime)
{
	tcf_hdr *H = x->hdr;
	tcf_slot *sl = &x->slots[r->slot - 1];
	uint32_t olinks = 0, ontags = 0, j;
	size_t i;

	uint32_t *q = TCF_RSEQ(x, h);

	tcf_rseq_begin(q);
	if (r->old) {
		tcf_account(x, sl->log, -(int64_t)sl->len, -1);
		olinks = sl->links;
		ontags = sl->ntags;
		__atomic_store_n(&sl->log, 0, __ATOMIC_RELAXED);
		sl->off = off;
		sl->len = len;
		sl->expire = expire;
		sl->mtime = mtime;
		__atomic_store_n(&sl->log, log, __ATOMIC_RELEASE);
	} else {
		tc_idlist_pop(TC_IDLIST(x->slots), &H->free_slot);
		sl->hash = h;
		sl->off = off;
		sl->len = len;
		sl->expire = expire;
		sl->mtime = mtime;
		sl->log = log;
		sl->next = x->buckets[h & x->bmask];
		__atomic_store_n(&x->buckets[h & x->bmask], r->slot, __ATOMIC_RELEASE);
		H->entries++;
	}
	tcf_rseq_end(q);
	/* Link the new tags before unlinking the old ones, so that a tag both
	 * carry never drops to zero members (which would free its record). */
	sl->links = r->links;
	sl->ntags = (uint32_t)r->ntags;
	for (i = 0; i < r->ntags; i++) {
		tag_link(x, r->trefs[i], r->slot, &links_of(x, sl)[i]);
	}
	if (ontags) {
		tcf_link *ol = (tcf_link *)TCF_H(x, olinks);

		for (j = 0; j < ontags; j++) {
			tag_release(x, ol[j].tag);
		}
	}
	if (olinks) {
		tcf_hfree(x, olinks, ontags);
	}
	tcf_account(x, log, len, 1);
	if (expire < H->min_expire) {
		H->min_expire = expire;
	}
}

/* Inside an odd window: the same record, copied to (log, off). */
void tcf_relocate(tcf_idx *x, uint32_t slot, uint32_t log, uint64_t off, uint32_t len)
{
	tcf_slot *sl = &x->slots[slot - 1];
	uint32_t *q = TCF_RSEQ(x, sl->hash);

	tcf_account(x, sl->log, -(int64_t)sl->len, -1);
	tcf_rseq_begin(q);
	__atomic_store_n(&sl->log, 0, __ATOMIC_RELAXED);
	sl->off = off;
	sl->len = len;
	__atomic_store_n(&sl->log, log, __ATOMIC_RELEASE);
	tcf_rseq_end(q);
	tcf_account(x, log, len, 1);
}

#define PF(p) __builtin_prefetch((p), 1, 3)

/* The slot and the links of an entry about to be removed (the next one in
 * a list: tcf_remove_list), so that they are in cache when its turn comes. */
void tcf_remove_prefetch(tcf_idx *x, uint32_t slot, int links)
{
	const tcf_slot *sl;

	if (slot < 1 || slot > x->nslots) {
		return;
	}
	sl = &x->slots[slot - 1];
	if (!links) {
		PF(sl);
	} else if (sl->ntags && sl->ntags <= TC_TAGS_MAX && href_ok(x, sl->links, sl->ntags)) {
		PF(links_of(x, sl));
	}
}

/* Inside an odd window: the entry leaves the index, then its tags lose a
 * live member each (lazily: their arrays are not touched; the members
 * stop holding once the slot is free). Its links to tag `skip` (not 0)
 * are not released, for a caller that drops the tag itself (a clean of
 * it: tcf_tag_drop_cleaned); returns how many. */
uint32_t tcf_remove_skip(tcf_idx *x, uint32_t slot, uint32_t skip)
{
	tcf_hdr *H = x->hdr;
	tcf_slot *sl = &x->slots[slot - 1];
	uint32_t *p = &x->buckets[sl->hash & x->bmask], steps = 0, j, skipped = 0;
	uint32_t *q = TCF_RSEQ(x, sl->hash);
	uint32_t links = sl->links, ntags = sl->ntags;
	const tcf_link *l = links_of(x, sl);

	for (j = 0; j < ntags; j++) {
		if (l[j].tag >= 1 && l[j].tag <= x->ntags && l[j].tag != skip) {
			PF(&x->tags[l[j].tag - 1]);
		}
	}
	tcf_account(x, sl->log, -(int64_t)sl->len, -1);
	tcf_rseq_begin(q);
	while (*p && *p != slot && *p <= x->nslots && ++steps <= x->nslots) {
		p = &x->slots[*p - 1].next;
	}
	if (*p == slot) {
		__atomic_store_n(p, sl->next, __ATOMIC_RELEASE);
	} else {
		x->tainted = 1;
	}
	__atomic_store_n(&sl->log, 0, __ATOMIC_RELEASE);
	sl->hash = 0;
	sl->links = 0;
	sl->ntags = 0;
	tc_idlist_push(TC_IDLIST(x->slots), &H->free_slot, slot);
	tcf_rseq_end(q);
	H->entries--;
	/* the tags after the slot: readers never look at them, and a
	 * compaction the release starts must find this entry's members
	 * no longer holding */
	for (j = 0; j < ntags; j++) {
		if (l[j].tag == skip) {
			skipped++;
		} else {
			tag_release(x, l[j].tag);
		}
	}
	if (ntags) {
		tcf_hfree(x, links, ntags);
	}
	return skipped;
}

void tcf_remove(tcf_idx *x, uint32_t slot)
{
	(void)tcf_remove_skip(x, slot, 0);
}

/* After a clean of tag t that removed every entry of it with
 * tcf_remove_skip(..., t), skipping `removed` links: those were all of its
 * members, and the tag goes with them (its array was never touched). The
 * index is marked damaged if they were not. */
void tcf_tag_drop_cleaned(tcf_idx *x, uint32_t t, uint32_t removed)
{
	if (!tcf_tag_ok(x, t) || x->tags[t - 1].live != removed) {
		x->tainted = 1;
		return;
	}
	tag_drop(x, t);
}

/* ----------------------------------------------------------------- check */

/* The log files agree with the log table: every log it lists is there
 * with at least the bytes it says, and no log of its range is missing
 * from it (a log unlinked under live entries, or one the index forgot). */
static void check_files(tcf_store *s, tcf_idx *x, tc_report *P)
{
	tcf_hdr *H = x->hdr;
	struct dirent *e;
	DIR *d;
	int i, fd;

	for (i = 0; i < TCF_MAXLOGS; i++) {
		tcf_logent *le = &H->logs[i];
		char name[TCF_PREFIXMAX + 32];
		struct stat st;

		if (!le->number) {
			continue;
		}
		tcf_log_name(name, sizeof(name), s->prefix, le->number);
		if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || (uint64_t)st.st_size < le->end) {
			tc_report_add(P, "log %u: its file is missing or shorter than the %llu bytes the index says",
			              le->number, (unsigned long long)le->end);
		}
	}
	fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	while ((e = readdir(d)) != NULL) {
		uint32_t num;

		if (tcf_log_parse_name(e->d_name, s->prefix, &num) && num >= H->first_log && num <= H->active_log
		    && TCF_LOGENT(x, num)->number != num) {
			tc_report_add(P, "log file %s is not in the index's log table", e->d_name);
		}
	}
	closedir(d);
}

/* Walks the whole index and every record it points at. Each problem goes
 * to emit (at most 50); TC_OK when there is none. */
int tcf_check(tcf_store *s, tcf_idx *x, tc_emit_fn emit, void *ctx)
{
	tcf_hdr *H = x->hdr;
	tc_report P = {emit, ctx, 0};
	uint32_t i, j, live = 0, chained = 0, ntags = 0, free_slots = 0, steps, holding;
	uint64_t live_bytes = 0, loglive[TCF_MAXLOGS], lognlive[TCF_MAXLOGS];

	memset(loglive, 0, sizeof(loglive));
	memset(lognlive, 0, sizeof(lognlive));
	if (H->heap_top > x->heap_units || H->heap_used > H->heap_top) {
		tc_report_add(&P, "heap top %u or used %u out of range (%u units)", H->heap_top, H->heap_used,
		              x->heap_units);
		return TC_ERR;
	}
	for (i = 1; i <= x->nslots; i++) {
		tcf_slot *sl = &x->slots[i - 1];
		const unsigned char *rec;
		tcf_rec r;
		tcf_logent *le;

		if (!sl->log) {
			continue;
		}
		live++;
		if (!tcf_slot_ok(x, i)) {
			tc_report_add(&P, "slot %u: bad links", i);
			continue;
		}
		le = TCF_LOGENT(x, sl->log);
		rec = tcf_record(s, x, sl->log, sl->off, sl->len);
		if (!rec || !tcf_rec_header_ok(rec, sl->len, le->salt, sl->off, &r)
		    || (r.magic & 0xff) != TCF_PUT || tcf_rec_size(r.klen, r.tnlen, r.vlen) != sl->len) {
			tc_report_add(&P, "slot %u: no valid record at log %u offset %llu", i, sl->log,
			              (unsigned long long)sl->off);
			continue;
		}
		if (!tcf_rec_body_ok(rec, &r)) {
			tc_report_add(&P, "slot %u: record checksum mismatch (log %u offset %llu)", i, sl->log,
			              (unsigned long long)sl->off);
			continue;
		}
		if (tcf_key_hash(rec + TCF_REC, r.klen) != sl->hash || r.ntags != sl->ntags) {
			tc_report_add(&P, "slot %u: hash or tag count differs from its record", i);
			continue;
		}
		live_bytes += sl->len;
		loglive[sl->log % TCF_MAXLOGS] += sl->len;
		lognlive[sl->log % TCF_MAXLOGS]++;
		{
			tcf_link *l = links_of(x, sl);
			const unsigned char *w = rec + TCF_REC + r.klen;

			for (j = 0; j < sl->ntags; j++) {
				uint16_t n;
				tcf_tag *T;

				memcpy(&n, w, 2);
				if (!tcf_tag_ok(x, l[j].tag)) {
					tc_report_add(&P, "slot %u: link %u names a bad tag", i, j);
					break;
				}
				T = &x->tags[l[j].tag - 1];
				if (T->nlen != n || memcmp(TCF_H(x, T->name), w + 2, n) != 0) {
					tc_report_add(&P, "slot %u: link %u names another tag than its record", i, j);
				}
				if (l[j].pos >= T->count || tcf_member(x, T, l[j].pos) != i) {
					tc_report_add(&P, "slot %u: link %u position does not point back", i, j);
				}
				w += 2 + n;
			}
		}
	}
	for (i = 0; i <= x->bmask; i++) {
		uint32_t k = x->buckets[i];

		steps = 0;
		while (k) {
			if (k > x->nslots || !x->slots[k - 1].log || ++steps > x->nslots) {
				tc_report_add(&P, "bucket %u: chain reaches a bad slot", i);
				break;
			}
			if ((x->slots[k - 1].hash & x->bmask) != i) {
				tc_report_add(&P, "slot %u chained in the wrong bucket", k);
			}
			chained++;
			k = x->slots[k - 1].next;
		}
	}
	steps = 0;
	for (i = H->free_slot; i; i = tc_idlist_next(TC_IDLIST(x->slots), i)) {
		if (i > x->nslots || x->slots[i - 1].log || ++steps > x->nslots) {
			tc_report_add(&P, "free slot list is broken");
			break;
		}
		free_slots++;
	}
	if (live != H->entries || chained != live || live + free_slots != x->nslots) {
		tc_report_add(&P, "entries: header %u, slots %u, chained %u, free %u of %u", H->entries, live,
		              chained, free_slots, x->nslots);
	}
	for (i = 1; i <= x->ntags; i++) {
		tcf_tag *T = &x->tags[i - 1];

		if (!T->nlen) {
			continue;
		}
		ntags++;
		if (!tcf_tag_ok(x, i)) {
			tc_report_add(&P, "tag %u: bad record", i);
			continue;
		}
		if (T->live == 0) {
			tc_report_add(&P, "tag %u: no member", i);
		}
		/* members that no longer hold (removed lazily) are allowed; the
		 * ones that hold are the live count */
		holding = 0;
		for (j = 0; j < T->count; j++) {
			uint32_t m = tcf_member(x, T, j), k;

			if (m < 1 || m > x->nslots) {
				tc_report_add(&P, "tag %u: member %u is not a slot", i, j);
				break;
			}
			if (!x->slots[m - 1].log) {
				continue;
			}
			if (!tcf_slot_ok(x, m)) {
				tc_report_add(&P, "tag %u: member %u is not an entry", i, j);
				break;
			}
			for (k = 0; k < x->slots[m - 1].ntags; k++) {
				tcf_link *l = &links_of(x, &x->slots[m - 1])[k];

				if (l->tag == i && l->pos == j) {
					holding++;
					break;
				}
			}
		}
		if (j == T->count && holding != T->live) {
			tc_report_add(&P, "tag %u: %u members hold, live count %u", i, holding, T->live);
		}
	}
	if (ntags != H->tags) {
		tc_report_add(&P, "tags: header %u, records %u", H->tags, ntags);
	}
	if (live_bytes != H->live_bytes) {
		tc_report_add(&P, "live bytes: header %llu, counted %llu", (unsigned long long)H->live_bytes,
		              (unsigned long long)live_bytes);
	}
	{
		uint64_t total = 0;

		for (i = 0; i < TCF_MAXLOGS; i++) {
			tcf_logent *le = &H->logs[i];

			if (!le->number) {
				if (loglive[i]) {
					tc_report_add(&P, "entries point at an unknown log");
				}
				continue;
			}
			total += le->end;
			if (le->live != loglive[i] || le->nlive != lognlive[i]) {
				tc_report_add(&P, "log %u: live bytes %llu/%llu, records %llu/%llu", le->number,
				              (unsigned long long)le->live, (unsigned long long)loglive[i],
				              (unsigned long long)le->nlive, (unsigned long long)lognlive[i]);
			}
			if (le->number < H->first_log || le->number > H->active_log) {
				tc_report_add(&P, "log %u outside %u..%u", le->number, H->first_log, H->active_log);
			}
		}
		if (total != H->log_bytes) {
			tc_report_add(&P, "log bytes: header %llu, counted %llu", (unsigned long long)H->log_bytes,
			              (unsigned long long)total);
		}
	}
	check_files(s, x, &P);
	return P.n ? TC_ERR : TC_OK;
}
