/*
 * tc_shm_index.c: the segment's index, under the write lock: key and tag
 * hashes, the entry checks, the hash chains of slots, the tag records and
 * their member arrays (removed lazily: tc_shm_defs.h), and removing
 * entries inside their stripe's seqlock window.
 *
 * Below it: the heap allocator (tc_shm_alloc.c). Above it: eviction
 * (tc_shm_evict.c), repair (tc_shm_recover.c) and the operations
 * (tc_shm.c).
 */
#include <stdlib.h>
#include <string.h>
#include "tc_shm_defs.h"
#include "tc_hash.h"

#define SEED_KEY   UINT64_C(0x6b6579)
#define SEED_TAG   UINT64_C(0x746167)
#define SEED_CHECK UINT64_C(0x636865636b)

uint32_t tc_key_hash(const unsigned char *p, size_t len)
{
	return (uint32_t)tc_hash(p, len, SEED_KEY);
}

uint32_t tc_tag_hash(const unsigned char *p, size_t len)
{
	return (uint32_t)tc_hash(p, len, SEED_TAG);
}

/* The checksum in two parts (layout 3), so that a save hashes its bytes
 * before it takes the lock and only mixes in the version under it: the
 * hash of key, value and names (seeded with the lengths), then the
 * version, mixed through a bijection, so that any change of either
 * changes the result. */
uint64_t tc_entry_body_hash(const unsigned char *key, uint32_t klen, const unsigned char *val,
                            uint32_t vlen, const unsigned char *names, uint32_t tnlen, uint32_t ntags)
{
	uint64_t h = SEED_CHECK ^ ((uint64_t)klen << 40) ^ ((uint64_t)vlen << 8)
	             ^ ((uint64_t)ntags << 56) ^ tnlen;

	/* each part where it lies: a save hashes its arguments, repair the
	 * block (the lengths in the seed fix where each part ends) */
	h = tc_hash(key, klen, h);
	h = tc_hash(val, vlen, h);
	return tc_hash(names, tnlen, h);
}

uint32_t tc_entry_check_of(uint64_t body, uint64_t version)
{
	uint64_t x = body + version * UINT64_C(0x9e3779b97f4a7c15);

	/* splitmix64's finaliser */
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (uint32_t)(x ^ (x >> 31));
}

uint32_t tc_entry_check(const tc_entry *e)
{
	return tc_entry_check_of(tc_entry_body_hash(TC_KEY(e), e->klen, TC_VALUE(e), e->vlen, TC_NAMES(e),
	                                            e->tnlen, e->ntags),
	                         e->version);
}

/* Under the lock: slot id (1-based) of the key, 0 if absent. Sets tainted
 * when the chain is broken. */
uint32_t tc_find(tc_shm_map *m, const unsigned char *k, uint32_t klen, uint32_t h)
{
	uint32_t i = m->buckets[h & m->bmask], steps = 0;

	while (i) {
		tc_slot *sl;

		if (i > m->nslots || ++steps > m->nslots) {
			m->tainted = 1;
			return 0;
		}
		sl = &m->slots[i - 1];
		if (sl->hash == h) {
			tc_entry *e;

			if (!tc_entry_sane(m, sl->blk)) {
				m->tainted = 1;
				return 0;
			}
			e = TC_ENTRY(TC_BLK(m, sl->blk));
			if (e->klen == klen && memcmp(TC_KEY(e), k, klen) == 0) {
				return i;
			}
		}
		i = sl->next;
	}
	return 0;
}

tc_entry *tc_slot_entry(tc_shm_map *m, uint32_t id)
{
	return TC_ENTRY(TC_BLK(m, m->slots[id - 1].blk));
}

/* Under the lock, for slot ids read from the segment: the entry, or NULL
 * (and the segment marked for repair) when the slot does not hold one. */
tc_entry *tc_slot_entry_chk(tc_shm_map *m, uint32_t id)
{
	if (id < 1 || id > m->nslots || !tc_entry_sane(m, m->slots[id - 1].blk)) {
		m->tainted = 1;
		return NULL;
	}
	return tc_slot_entry(m, id);
}

/* A change to tag T that can add a holding member or move one: a new
 * stamp, stored after the change (tc_clean_pre's check). */
static inline void tag_stamp(tc_shm_map *m, tc_tag *T)
{
	__atomic_store_n(&T->gen, ++m->hdr->tgen, __ATOMIC_RELEASE);
}

tc_ref tc_tag_find(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h)
{
	tc_ref t = m->tagbuckets[h & m->tbmask];
	uint32_t steps = 0;

	while (t) {
		tc_tag *T;

		if (!tc_tag_ok(m, t) || ++steps > m->heap_units) {
			m->tainted = 1;
			return 0;
		}
		T = TC_TAGREC(TC_BLK(m, t));
		if (T->hash == h && T->nlen == len && memcmp(TC_TAGNAME(T), name, len) == 0) {
			return t;
		}
		t = T->next;
	}
	return 0;
}

/* A change to the set of tag records (one created or dropped; the index
 * reset by clean('all') and repair): a new tagset, stored with release
 * after the change, so that a save's lookup made without the lock
 * (tc_tag_pre) is used under it only if no record came or went since. */
static inline void tagset_bump(tc_shm_map *m)
{
	__atomic_store_n(&m->hdr->tagset, m->hdr->tagset + 1, __ATOMIC_RELEASE);
}

/* A new tag record, with no member yet, for a name that has none
 * (tc_tag_find said so). 0 when the heap has no room. */
static tc_ref tag_new(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h)
{
	tc_ref t = tc_alloc(m, (uint32_t)((sizeof(tc_blk) + sizeof(tc_tag) + len + TC_UNIT - 1) / TC_UNIT), TC_B_TAG);
	tc_tag *T;

	if (!t) {
		return 0;
	}
	T = TC_TAGREC(TC_BLK(m, t));
	T->hash = h;
	T->count = 0;
	T->cap = 0;
	T->arr = 0;
	T->live = 0;
	T->nlen = len;
	T->spare = 0;
	tag_stamp(m, T);
	memcpy(TC_TAGNAME(T), name, len);
	T->next = m->tagbuckets[h & m->tbmask];
	__atomic_store_n(&m->tagbuckets[h & m->tbmask], t, __ATOMIC_RELEASE);
	m->hdr->tags++;
	tagset_bump(m);
	return t;
}

/* Find or create (with no member yet). 0 when the heap has no room. */
tc_ref tc_tag_get(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h)
{
	tc_ref t = tc_tag_find(m, name, len, h);

	if (t || m->tainted) {
		return t;
	}
	return tag_new(m, name, len, h);
}

/* The link of the entry in slot s that names member k of tag t, or NULL:
 * the member no longer holds (that entry was removed, or saved again and
 * linked at another position). */
static tc_link *member_link(const tc_shm_map *m, tc_ref t, uint32_t k, uint32_t s)
{
	tc_ref r;
	tc_entry *e;
	tc_link *l;
	uint32_t j;

	if (s < 1 || s > m->nslots) {
		return NULL;
	}
	r = m->slots[s - 1].blk;
	if (!r || !tc_entry_sane(m, r)) {
		return NULL;
	}
	e = TC_ENTRY(TC_BLK(m, r));
	l = TC_LINKS(e);
	for (j = 0; j < e->ntags; j++) {
		if (l[j].tag == t && l[j].pos == k) {
			return &l[j];
		}
	}
	return NULL;
}

/* What tc_select() asks of member k of tag t (ix_member), with one check
 * of the entry: its slot if the member holds; TC_MEMBER_SKIP if it no
 * longer does (lazy removal); a slot out of range, or one whose block is
 * no sound entry, as it is (the caller's entry check then marks the
 * segment damaged). */
uint32_t tc_tag_member_sel(const tc_shm_map *m, tc_ref t, uint32_t k)
{
	const tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	uint32_t s = TC_TARR(TC_BLK(m, T->arr))[k], j;
	const tc_entry *e;
	const tc_link *l;
	tc_ref r;

	if (s < 1 || s > m->nslots) {
		return s == TC_MEMBER_SKIP ? 0 : s;
	}
	r = m->slots[s - 1].blk;
	if (!r) {
		return TC_MEMBER_SKIP;
	}
	if (!tc_entry_sane(m, r)) {
		return s;
	}
	e = TC_ENTRY(TC_BLK(m, r));
	l = TC_LINKS(e);
	for (j = 0; j < e->ntags; j++) {
		if (l[j].tag == t && l[j].pos == k) {
			return s;
		}
	}
	return TC_MEMBER_SKIP;
}

uint32_t tc_tag_member(const tc_shm_map *m, tc_ref t, uint32_t k)
{
	const tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	uint32_t s = TC_TARR(TC_BLK(m, T->arr))[k];

	return member_link(m, t, k, s) ? s : 0;
}

/* A tracing build's counts (tc_shm.c, -DTC_SHM_TRACE). */
#ifdef TC_SHM_TRACE
extern uint64_t tc_tr_compacts, tc_tr_reallocs, tc_tr_drops, tc_tr_compact_members;
#define TR_COUNT(c) ((c)++)
#else
#define TR_COUNT(c) ((void)0)
#endif

/* Drops the members that no longer hold, keeping the order of the rest
 * (their links follow them). The live count must come out as recorded;
 * if not, the segment is marked for repair. The member test is
 * member_link()'s, inline, on local copies of m's fields (the stores to
 * the segment would make the compiler reload them: a save's largest cost
 * under the lock after its tag lookups, issue 15), and reads only the
 * link the member's index names (TC_THINT): a member that holds has its
 * own link's index there (written with it, moved with it), and one that
 * does not hold fails at every link. */
static void tag_compact(tc_shm_map *m, tc_ref t)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	uint32_t *const arr = TC_TARR(TC_BLK(m, T->arr));
	uint16_t *const hint = TC_THINT(TC_BLK(m, T->arr), T->cap);
	const uint32_t count = T->count, ns = m->nslots, hu = m->heap_units;
	const tc_slot *const slots = m->slots;
	unsigned char *const heap = m->heap;
	uint32_t k, n = 0;

	TR_COUNT(tc_tr_compacts);
#ifdef TC_SHM_TRACE
	tc_tr_compact_members += count;  /* members walked */
#endif
	for (k = 0; k < count; k++) {
		const uint32_t s = arr[k];
		const tc_blk *b;
		tc_entry *e;
		tc_link *l;
		uint32_t j, nt, bs;
		tc_ref r;

		if (s < 1 || s > ns) {
			continue;
		}
		r = slots[s - 1].blk;
		/* tc_entry_sane(), on the copies */
		if (r < 1 || r >= hu - 1) {
			continue;
		}
		b = (const tc_blk *)(heap + (size_t)r * TC_UNIT);
		bs = b->size;
		if (b->type != TC_B_ENTRY || bs < 4 || bs > hu - 1 - r) {
			continue;
		}
		e = TC_ENTRY(b);
		nt = e->ntags;
		if (tc_entry_bytes(nt, e->klen, e->vlen, e->tnlen) > (uint64_t)bs * TC_UNIT) {
			continue;
		}
		l = TC_LINKS(e);
		j = hint[k];
		if (j < nt && l[j].tag == t && l[j].pos == k) {
			l[j].pos = n;
			arr[n] = s;
			hint[n++] = (uint16_t)j;
		}
	}
	T->count = n;
	tag_stamp(m, T);
	if (n != T->live) {
		m->tainted = 1;
	}
}

/* A new array of cap members for tag t, the members copied; -1 when the
 * heap has no room (nothing changed). */
static int tag_realloc(tc_shm_map *m, tc_ref t, uint32_t cap)
{
	tc_tag *T;
	tc_ref a = tc_alloc(m, (uint32_t)((TC_TARR_BYTES(cap) + TC_UNIT - 1) / TC_UNIT), TC_B_TARR);

	if (!a) {
		return -1;
	}
	TR_COUNT(tc_tr_reallocs);
	T = TC_TAGREC(TC_BLK(m, t));
	if (T->arr) {
		memcpy(TC_TARR(TC_BLK(m, a)), TC_TARR(TC_BLK(m, T->arr)), (size_t)T->count * 4);
		memcpy(TC_THINT(TC_BLK(m, a), cap), TC_THINT(TC_BLK(m, T->arr), T->cap), (size_t)T->count * 2);
		tc_free_blk(m, T->arr);
	}
	T->arr = a;
	T->cap = cap;
	tag_stamp(m, T);
	return 0;
}

/* Room for one more member: a full array at most half live is compacted,
 * otherwise it doubles. */
int tc_tag_reserve(tc_shm_map *m, tc_ref t)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));

	if (T->count < T->cap) {
		return 0;
	}
	if (T->cap && T->live <= T->cap / 2) {
		tag_compact(m, t);
		if (T->count < T->cap) {
			return 0;
		}
	}
	return tag_realloc(m, t, T->cap ? T->cap * 2 : 4);
}

void tc_tag_link(tc_shm_map *m, tc_ref t, uint32_t slot, tc_link *l, uint32_t j)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));

	TC_TARR(TC_BLK(m, T->arr))[T->count] = slot;
	TC_THINT(TC_BLK(m, T->arr), T->cap)[T->count] = (uint16_t)j;
	l->tag = t;
	l->pos = T->count;
	T->count++;
	T->live++;
	tag_stamp(m, T);
}

void tc_tag_drop(tc_shm_map *m, tc_ref t)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	tc_ref *p = &m->tagbuckets[T->hash & m->tbmask];
	uint32_t steps = 0;

	TR_COUNT(tc_tr_drops);
	while (*p && *p != t && ++steps < m->heap_units) {
		p = &TC_TAGREC(TC_BLK(m, *p))->next;
	}
	if (*p == t) {
		*p = T->next;
	}
	if (T->arr) {
		tc_free_blk(m, T->arr);
	}
	tc_free_blk(m, t);
	m->hdr->tags--;
	tagset_bump(m);
}

/* An entry that carried tag t is gone (its slot no longer names it): one
 * live member less. Only the tag record is touched, unless the tag is now
 * empty (dropped with its array) or its array mostly members that no
 * longer hold (compacted, and shrunk when it can be). */
void tc_tag_release(tc_shm_map *m, tc_ref t)
{
	const tc_blk *b = tc_blk_at(m, t, TC_B_TAG, 2);
	tc_tag *T;

	if (!b || TC_TAGREC(b)->live == 0) {
		m->tainted = 1;
		return;
	}
	T = TC_TAGREC(TC_BLK(m, t));
	if (--T->live == 0) {
		if (!tc_tag_ok(m, t)) {
			m->tainted = 1;
			return;
		}
		tc_tag_drop(m, t);
		return;
	}
	if (T->count >= 64 && T->live < T->count / 8) {
		if (!tc_tag_ok(m, t)) {
			m->tainted = 1;
			return;
		}
		tag_compact(m, t);
		if (T->cap >= 64 && T->count < T->cap / 4) {
			(void)tag_realloc(m, t, T->cap / 4);  /* no room: keep the bigger one */
		}
	}
}

/* Prefetch distance of a clean's walks, in members: far enough ahead that
 * the slot's line and then the entry's arrive by the time they are read
 * (at 1,000,000 records every one is a miss to memory, and the members'
 * entries are independent of each other), near enough that the lines of
 * 2 x this many members stay cached. */
#define TC_PF_AHEAD 8

/* Inside an odd window of its stripe (or of the whole index): take the
 * entry out of the index, free its block. Its links to tag `skip` (not 0)
 * are not released: the count of them is returned, for a caller that
 * drops that tag itself (a clean of it). */
static inline uint32_t remove_entry(tc_shm_map *m, uint32_t id, tc_ref skip)
{
	tc_slot *sl = &m->slots[id - 1];
	tc_ref r = sl->blk;
	tc_blk *b = TC_BLK(m, r);
	tc_entry *e = TC_ENTRY(b);
	tc_link *l = TC_LINKS(e);
	uint32_t *p = &m->buckets[sl->hash & m->bmask], j, steps = 0, skipped = 0;
	unsigned char *const heap = m->heap;
	const uint32_t hu = m->heap_units;

	__atomic_store_n(&b->type, TC_B_DEAD, __ATOMIC_RELEASE);
	while (*p && *p != id && ++steps <= m->nslots) {
		p = &m->slots[*p - 1].next;
	}
	if (*p == id) {
		*p = sl->next;
	}
	sl->blk = 0;  /* first: its members stop holding (tag_release may compact) */
	sl->hash = 0;
	for (j = 0; j < e->ntags; j++) {
		/* one live member less for each tag (tc_tag_release_inl) */
		tc_ref t = l[j].tag;

		if (t == skip) {
			skipped++;
			continue;
		}
		tc_tag_release_inl(m, heap, hu, t);
	}
	tc_idlist_push(TC_IDLIST(m->slots), &m->hdr->free_slot, id);
	m->hdr->entries--;
	tc_free_blk(m, r);
	return skipped;
}

void tc_remove_entry(tc_shm_map *m, uint32_t id)
{
	(void)remove_entry(m, id, 0);
}

/* Removes one entry inside its stripe's window. */
void tc_remove_one(tc_shm_map *m, uint32_t id)
{
	uint64_t *q = tc_sseq(m->hdr, m->slots[id - 1].hash & m->bmask);

	tc_seq_begin(q);
	tc_remove_entry(m, id);
	tc_seq_end(q);
}

/* Removes a list of slots, each in its own stripe's window: a reader waits
 * for at most one removal, and only if its key is in that stripe. The
 * crash point is inside the first window. skip is a tag whose links are
 * left alone (0: none; tc_clean_tag's tag): how many there were is added
 * to *skipped; the number of entries removed is returned. checked: the
 * caller checked each slot's entry just before, under this lock (a
 * one-tag clean's member test): an empty slot is one this list named
 * twice, already removed; otherwise each is checked here. */
static size_t remove_windowed(tc_shm_map *m, const uint32_t *ids, size_t n, const char *crash,
                              tc_ref skip, uint32_t *skipped, tc_gone *g, int checked)
{
	size_t i, removed = 0;

	for (i = 0; i < n && !m->tainted; i++) {
		uint64_t *q;
		const tc_entry *e;

		if (checked) {
			/* removing one entry changes no other entry's block (a
			 * free coalesces free neighbours only) */
			tc_ref r = m->slots[ids[i] - 1].blk;

			if (i + TC_PF_AHEAD < n) {
				/* what the removal TC_PF_AHEAD later touches that the
				 * selection did not: the bucket, the block's neighbours */
				const tc_slot *ps = &m->slots[ids[i + TC_PF_AHEAD] - 1];
				tc_ref pr = ps->blk;

				__builtin_prefetch(&m->buckets[ps->hash & m->bmask]);
				if (pr >= 1 && pr < m->heap_units - 1) {
					const tc_blk *pb = TC_BLK(m, pr);

					if (pb->size < m->heap_units - pr) {
						__builtin_prefetch(TC_BLK(m, pr + pb->size), 1);
					}
					if (pb->prev <= pr) {
						__builtin_prefetch(TC_BLK(m, pr - pb->prev), 1);
					}
				}
			}

			e = r ? TC_ENTRY(TC_BLK(m, r)) : NULL;
		} else {
			e = tc_slot_entry_chk(m, ids[i]);
		}
		if (!e) {
			continue;
		}
		if (g && e->expire >= g->now) {
			tc_sbuf_add(&g->b, TC_KEY(e), e->klen);   /* before its block is freed */
		}
		q = tc_sseq(m->hdr, m->slots[ids[i] - 1].hash & m->bmask);
		tc_seq_begin(q);
		*skipped += remove_entry(m, ids[i], skip);
		removed++;
		if (i == 0 && crash) {
			tc_crash_point(crash);
		}
		tc_seq_end(q);
	}
	return removed;
}

void tc_remove_list(tc_shm_map *m, const uint32_t *ids, size_t n, const char *crash)
{
	uint32_t none = 0;

	(void)remove_windowed(m, ids, n, crash, 0, &none, NULL, 0);
}

void tc_remove_list_gone(tc_shm_map *m, const uint32_t *ids, size_t n, const char *crash, tc_gone *g)
{
	uint32_t none = 0;

	(void)remove_windowed(m, ids, n, crash, 0, &none, g, 0);
}


/* The removals of a one-tag clean: ids are the slots whose entries carry
 * t (each checked just before, under this lock); t's record is left alone under the walk, then dropped
 * once, when the links skipped are its live count (else the segment is
 * marked for repair). */
static size_t clean_tag_finish(tc_shm_map *m, tc_ref t, const uint32_t *ids, uint32_t n, const char *crash,
                               tc_gone *g)
{
	uint32_t skipped = 0;
	size_t removed = remove_windowed(m, ids, n, crash, t, &skipped, g, 1);

	if (!m->tainted) {
		/* every member that held is gone: so is the tag */
		if (skipped != TC_TAGREC(TC_BLK(m, t))->live) {
			m->tainted = 1;
		} else {
			tc_tag_drop(m, t);
		}
	}
	return removed;
}

/* A clean of one tag t (found by tc_tag_find, so checked): every entry
 * that carries it leaves the index, each in its own stripe's window, and
 * the tag goes with the last of them. The selection is tc_select()'s for
 * one tag, inline (the member test of tc_tag_member_sel, a damaged member
 * ending it and marking the segment for repair); the removals release
 * every tag of an entry but t, whose record is left alone until the end
 * (neither compacted nor dropped under the walk) and then dropped once.
 * Returns the number removed; *oom when the list could not be made. */
size_t tc_clean_tag(tc_shm_map *m, tc_ref t, const char *crash, tc_gone *g, int *oom)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	uint32_t count = T->count, k, n = 0;
	const uint32_t *arr;
	const uint16_t *hint;
	uint32_t *ids;
	size_t removed;

	*oom = 0;
	if (!count) {
		return 0;
	}
	ids = malloc((size_t)count * sizeof(*ids));
	if (!ids) {
		*oom = 1;
		return 0;
	}
	arr = TC_TARR(TC_BLK(m, T->arr));
	hint = TC_THINT(TC_BLK(m, T->arr), T->cap);
	for (k = 0; k < count; k++) {
		uint32_t s = arr[k], j;
		const tc_entry *e;
		const tc_link *l;
		tc_ref r;

		if (s < 1 || s > m->nslots) {
			m->tainted = 1;
			break;
		}
		r = m->slots[s - 1].blk;
		if (!r) {
			continue;  /* removed: the member no longer holds */
		}
		if (!tc_entry_sane(m, r)) {
			m->tainted = 1;
			break;
		}
		e = TC_ENTRY(TC_BLK(m, r));
		l = TC_LINKS(e);
		j = hint[k];  /* the member's link (tag_compact) */
		if (j < e->ntags && l[j].tag == t && l[j].pos == k) {
			ids[n++] = s;
		}
	}
	removed = clean_tag_finish(m, t, ids, n, crash, g);
	free(ids);
	return removed;
}

/* The selection made without the lock. A reader's rules: the whole-index
 * sequence even (no clean('all') or repair under way; checked again under
 * the lock), every ref and length bounds-checked before it is followed,
 * plain loads of what a writer may be changing; anything that does not
 * make sense means a writer is in the middle, and the selection is left
 * to the lock (nothing is marked damaged). What it selects may be wrong
 * for members that changed meanwhile; tc_clean_tag_use() finds out. */
/* Without the lock: the size of the block at r, read once (a writer may
 * change it meanwhile: every bound is then checked on this copy), if r is
 * inside the heap, the block of that type, of at least min units and
 * inside the heap; 0 otherwise. */
static uint32_t blk_size_nolock(const tc_shm_map *m, tc_ref r, uint16_t type, uint32_t min)
{
	const tc_blk *b;
	uint32_t sz;

	if (!tc_ref_ok(m, r)) {
		return 0;
	}
	b = TC_BLK(m, r);
	sz = __atomic_load_n(&b->size, __ATOMIC_RELAXED);
	if (__atomic_load_n(&b->type, __ATOMIC_RELAXED) != type || sz < min || sz > m->heap_units - 1 - r) {
		return 0;
	}
	return sz;
}

#define TAG_UNSURE ((tc_ref)-1)

/* Without the lock, ahead of a member walk (arr of count members): the
 * slot of member k + 2 x TC_PF_AHEAD, and the block (its header, entry and
 * first links) of member k + TC_PF_AHEAD, whose slot was asked for
 * earlier. Hints only: a prefetch never faults, and what it reads is
 * bounds-checked as the walk itself checks it. */
static inline void clean_prefetch(const tc_shm_map *m, const uint32_t *arr, uint32_t k, uint32_t count)
{
	uint32_t s;

	if (k + 2 * TC_PF_AHEAD < count) {
		s = __atomic_load_n(&arr[k + 2 * TC_PF_AHEAD], __ATOMIC_RELAXED);
		if (s >= 1 && s <= m->nslots) {
			__builtin_prefetch(&m->slots[s - 1]);
		}
	}
	if (k + TC_PF_AHEAD < count) {
		s = __atomic_load_n(&arr[k + TC_PF_AHEAD], __ATOMIC_RELAXED);
		if (s >= 1 && s <= m->nslots) {
			tc_ref r = __atomic_load_n(&m->slots[s - 1].blk, __ATOMIC_RELAXED);

			if (r >= 1 && r + 8 < m->heap_units) {
				const unsigned char *b = (const unsigned char *)TC_BLK(m, r);

				__builtin_prefetch(b);
				__builtin_prefetch(b + 64);
			}
		}
	}
}

/* Without the lock: the record of tag `name` (hash h) by a reader's
 * rules, 0 when there is none, TAG_UNSURE when what it met made no sense
 * (a writer in the middle, a chain longer than 64). */
static tc_ref tag_find_nolock(const tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h)
{
	tc_ref t = __atomic_load_n(&m->tagbuckets[h & m->tbmask], __ATOMIC_ACQUIRE);
	uint32_t steps = 0, sz;

	for (;;) {
		const tc_tag *T;

		if (!t) {
			return 0;
		}
		if (++steps > 64) {
			return TAG_UNSURE;
		}
		sz = blk_size_nolock(m, t, TC_B_TAG, (sizeof(tc_blk) + sizeof(tc_tag) + TC_UNIT - 1) / TC_UNIT);
		if (!sz) {
			return TAG_UNSURE;
		}
		T = TC_TAGREC(TC_BLK(m, t));
		if (__atomic_load_n(&T->hash, __ATOMIC_RELAXED) == h && __atomic_load_n(&T->nlen, __ATOMIC_RELAXED) == len
		    && sizeof(tc_blk) + sizeof(tc_tag) + (uint64_t)len <= (uint64_t)sz * TC_UNIT
		    && memcmp(TC_TAGNAME(T), name, len) == 0) {
			return t;
		}
		t = __atomic_load_n(&T->next, __ATOMIC_RELAXED);
	}
}

int tc_tag_pre(tc_shm_map *m, const tc_str *tags, const uint32_t *th, size_t n, tc_ref *refs, tc_tags_pre *p)
{
	size_t i;

	p->attach = m->attach;
	p->seq = __atomic_load_n(&m->hdr->seq, __ATOMIC_ACQUIRE);
	p->tagset = __atomic_load_n(&m->hdr->tagset, __ATOMIC_ACQUIRE);
	if (p->seq & 1) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		refs[i] = tag_find_nolock(m, (const unsigned char *)tags[i].p, (uint32_t)tags[i].len, th[i]);
		if (refs[i] == TAG_UNSURE) {
			return 0;
		}
	}
	return 1;
}

int tc_clean_tag_pre(tc_shm_map *m, const unsigned char *name, uint32_t len, uint32_t h, tc_clean_pre *p)
{
	tc_shm_hdr *H = m->hdr;
	const uint32_t ns = m->nslots;
	tc_ref t, a;
	const tc_tag *T;
	const uint32_t *arr;
	const uint16_t *hint;
	uint32_t count, cap, k, n = 0, sz;

	p->ids = NULL;
	p->attach = m->attach;
	p->seq = __atomic_load_n(&H->seq, __ATOMIC_ACQUIRE);
	if (p->seq & 1) {
		return 0;
	}
	t = tag_find_nolock(m, name, len, h);
	if (!t || t == TAG_UNSURE) {
		return 0;
	}
	T = TC_TAGREC(TC_BLK(m, t));
	p->t = t;
	p->gen = __atomic_load_n(&T->gen, __ATOMIC_ACQUIRE);
	count = __atomic_load_n(&T->count, __ATOMIC_RELAXED);
	cap = __atomic_load_n(&T->cap, __ATOMIC_RELAXED);
	if (!count || count > cap) {
		return 0;
	}
	a = __atomic_load_n(&T->arr, __ATOMIC_RELAXED);
	sz = blk_size_nolock(m, a, TC_B_TARR, 1);
	if (!sz || (uint64_t)sz * TC_UNIT < TC_TARR_BYTES(cap)) {
		return 0;
	}
	arr = TC_TARR(TC_BLK(m, a));
	hint = TC_THINT(TC_BLK(m, a), cap);
	p->ids = malloc((size_t)count * 3 * sizeof(uint32_t));
	if (!p->ids) {
		return 0;
	}
	p->pos = p->ids + count;
	p->link = p->pos + count;
	for (k = 0; k < count; k++) {
		uint32_t s = __atomic_load_n(&arr[k], __ATOMIC_RELAXED), j, nt;

		clean_prefetch(m, arr, k, count);
		const tc_link *l;
		const tc_entry *e;
		tc_ref r;

		if (s < 1 || s > ns) {
			goto stale;
		}
		r = __atomic_load_n(&m->slots[s - 1].blk, __ATOMIC_ACQUIRE);
		if (!r) {
			continue;
		}
		/* an entry being removed (DEAD) is no member by the time the lock
		 * is ours; any other block that is no entry: a writer is in the
		 * middle */
		sz = blk_size_nolock(m, r, TC_B_ENTRY, 4);
		if (!sz) {
			if (tc_ref_ok(m, r) && __atomic_load_n(&TC_BLK(m, r)->type, __ATOMIC_RELAXED) == TC_B_DEAD) {
				continue;
			}
			goto stale;
		}
		e = TC_ENTRY(TC_BLK(m, r));
		nt = __atomic_load_n(&e->ntags, __ATOMIC_RELAXED);
		if (sizeof(tc_blk) + sizeof(tc_entry) + (uint64_t)nt * sizeof(tc_link) > (uint64_t)sz * TC_UNIT) {
			goto stale;
		}
		l = TC_LINKS(e);
		j = __atomic_load_n(&hint[k], __ATOMIC_RELAXED);  /* the member's link */
		if (j < nt && __atomic_load_n(&l[j].tag, __ATOMIC_RELAXED) == t
		    && __atomic_load_n(&l[j].pos, __ATOMIC_RELAXED) == k) {
			p->ids[n] = s;
			p->pos[n] = k;
			p->link[n] = j;
			n++;
		}
	}
	p->count = count;
	p->n = n;
	return 1;

stale:
	free(p->ids);
	p->ids = NULL;
	return 0;
}

int tc_clean_tag_use(tc_shm_map *m, tc_ref t, const tc_clean_pre *p, const char *crash, tc_gone *g,
                     size_t *removed)
{
	tc_tag *T = TC_TAGREC(TC_BLK(m, t));
	uint32_t i, n = 0;

	if (p->attach != m->attach || t != p->t || __atomic_load_n(&m->hdr->seq, __ATOMIC_RELAXED) != p->seq
	    || T->gen != p->gen || T->count != p->count) {
		return 0;
	}
	/* Nothing added a member that holds or moved one since the selection;
	 * removals (which do not stamp) may have taken some of the selected,
	 * and the slot may hold another entry now: each is checked again, as
	 * tc_clean_tag() checks every member. */
	for (i = 0; i < p->n; i++) {
		uint32_t s = p->ids[i], j = p->link[i];
		const tc_entry *e;
		const tc_link *l;
		tc_ref r = m->slots[s - 1].blk;

		if (!r) {
			continue;
		}
		if (!tc_entry_sane(m, r)) {
			m->tainted = 1;
			break;
		}
		/* an entry carries a tag once: the link found then, or none */
		e = TC_ENTRY(TC_BLK(m, r));
		l = TC_LINKS(e);
		if (j < e->ntags && l[j].tag == t && l[j].pos == p->pos[i]) {
			p->ids[n++] = s;
		}
	}
	*removed = clean_tag_finish(m, t, p->ids, n, crash, g);
	return 1;
}
