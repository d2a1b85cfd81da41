/*
 * tc_shm_recover.c: checking the whole segment, and rebuilding its index
 * when a process died half-way through a change.
 *
 * The heap is the truth: every entry block carries its key, value, tag
 * names, a version and a checksum. Repair walks the heap (whose block
 * chain stays walkable whatever instruction a writer died at, see
 * tc_shm_alloc.c), keeps the entries whose checksum holds, frees every
 * other block, and builds the slot table, hash chains and tag records
 * again. Of two entries with one id (a save killed between publishing the
 * new block and freeing the old), the newer version wins. A block whose
 * header makes no sense ends the walk: the rest of the heap becomes free
 * space (the damaged part is discarded, the rest is kept).
 */
#include <stdlib.h>
#include <string.h>
#include "tc_shm_defs.h"

static int entry_whole(tc_shm_map *m, tc_ref r)
{
	tc_entry *e;

	if (!tc_entry_sane(m, r)) {
		return 0;
	}
	e = TC_ENTRY(TC_BLK(m, r));
	if (e->check != tc_entry_check(e) || e->klen == 0 || e->klen > TC_ID_MAX
	    || e->ntags > TC_TAGS_MAX) {
		return 0;
	}
	/* the tag names must parse exactly */
	return tc_names_ok(TC_NAMES(e), e->tnlen, e->ntags);
}

/* Puts a kept entry block into the index. 0 if it could not (no slot, no
 * room for its tags): the block is freed. */
static int reindex(tc_shm_map *m, tc_ref r)
{
	tc_shm_hdr *H = m->hdr;
	tc_entry *e = TC_ENTRY(TC_BLK(m, r));
	uint32_t h = tc_key_hash(TC_KEY(e), e->klen), old, slot, j;
	tc_ref trefs_small[16], *trefs = trefs_small;
	const unsigned char *w;
	int ok = 1;

	old = tc_find(m, TC_KEY(e), e->klen, h);
	if (old) {
		if (TC_ENTRY(TC_BLK(m, m->slots[old - 1].blk))->version > e->version) {
			tc_free_blk(m, r);
			return 0;
		}
		tc_remove_entry(m, old);
	}
	if (!H->free_slot) {
		tc_free_blk(m, r);
		return 0;
	}
	if (e->ntags > 16) {
		trefs = malloc(e->ntags * sizeof(tc_ref));
		if (!trefs) {
			tc_free_blk(m, r);
			return 0;
		}
	}
	w = TC_NAMES(e);
	for (j = 0; j < e->ntags; j++) {
		uint16_t n;

		memcpy(&n, w, 2);
		trefs[j] = tc_tag_get(m, w + 2, n, tc_tag_hash(w + 2, n));
		if (!trefs[j] || tc_tag_reserve(m, trefs[j]) != 0) {
			ok = 0;
			break;
		}
		w += 2 + n;
	}
	if (!ok) {
		uint32_t k;

		for (k = 0; k <= j && k < e->ntags; k++) {
			if (trefs[k] && TC_TAGREC(TC_BLK(m, trefs[k]))->live == 0) {
				tc_tag_drop(m, trefs[k]);
			}
		}
		if (trefs != trefs_small) {
			free(trefs);
		}
		tc_free_blk(m, r);
		return 0;
	}
	slot = tc_idlist_pop(TC_IDLIST(m->slots), &H->free_slot);
	m->slots[slot - 1].blk = r;
	m->slots[slot - 1].hash = h;
	m->slots[slot - 1].atime = TC_TICK(H);
	m->slots[slot - 1].next = m->buckets[h & m->bmask];
	m->buckets[h & m->bmask] = slot;
	TC_BLK(m, r)->aux = slot;
	e->hash = h;
	for (j = 0; j < e->ntags; j++) {
		tc_tag_link(m, trefs[j], slot, &TC_LINKS(e)[j], j);
	}
	H->entries++;
	if (e->expire < H->min_expire) {
		H->min_expire = e->expire;
	}
	if (trefs != trefs_small) {
		free(trefs);
	}
	return 1;
}

void tc_shm_repair(tc_shm_map *m, const char *why)
{
	tc_shm_hdr *H = m->hdr;
	uint32_t end = m->heap_units - 1, r, prev, kept = 0, cap = 1024, lost = 0, i;
	tc_ref *keep = malloc(cap * sizeof(tc_ref));
	int c;

	tc_log("tagcache: %s: %s; rebuilding the index from the stored entries", m->path, why);
	if (!(__atomic_load_n(&H->seq, __ATOMIC_RELAXED) & 1)) {
		__atomic_store_n(&H->seq, H->seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}

	/* Pass 1: walk the chain; keep whole entries, mark the rest free. */
	TC_BLK(m, 0)->size = 1;
	TC_BLK(m, 0)->type = TC_B_SENTINEL;
	prev = 1;
	for (r = 1; r < end;) {
		tc_blk *b = TC_BLK(m, r);
		uint32_t size = b->size;

		/* a size that leaves one unit before the end is damaged too: no
		 * block is smaller than two units, so nothing can fill that gap */
		if (size < 2 || size > end - r || end - r - size == 1) {
			size = end - r;   /* damaged from here on: discard the rest */
			b->size = size;
			b->type = TC_B_FREE;
			lost++;
		}
		b->prev = prev;
		/* Only published entries count: the slot named in the block must
		 * point back at it. A save killed before it switched the index
		 * leaves an unreferenced block, and the old value stands. */
		if (b->type == TC_B_ENTRY && b->aux >= 1 && b->aux <= m->nslots
		    && m->slots[b->aux - 1].blk == r && entry_whole(m, r)) {
			if (keep && kept == cap) {
				tc_ref *nk = realloc(keep, cap * 2 * sizeof(tc_ref));
				if (!nk) {
					free(keep);
					keep = NULL;
				} else {
					keep = nk;
					cap *= 2;
				}
			}
			if (keep) {
				keep[kept++] = r;
			}
		} else {
			if (b->type == TC_B_ENTRY) {
				lost++;
			}
			b->type = TC_B_FREE;
		}
		prev = size;
		r += size;
	}
	TC_BLK(m, end)->size = 1;
	TC_BLK(m, end)->prev = prev;
	TC_BLK(m, end)->type = TC_B_SENTINEL;

	/* Pass 2: an empty index; free blocks coalesced onto their lists. */
	tc_shm_index_reset(m);
	H->bytes_used = 0;
	H->min_expire = TC_EXPIRE_NEVER;
	for (c = 0; c < TC_NCLASSES; c++) {
		H->free_heads[c] = 0;
	}
	if (!keep) {
		/* no memory to remember what to keep: start empty */
		tc_heap_reset(m);
		kept = 0;
	} else {
		prev = 1;
		for (r = 1; r < end;) {
			tc_blk *b = TC_BLK(m, r);
			uint32_t size = b->size;

			b->prev = prev;
			if (b->type == TC_B_FREE) {
				while (r + size < end && TC_BLK(m, r + size)->type == TC_B_FREE) {
					size += TC_BLK(m, r + size)->size;
				}
				b->size = size;
				tc_freelist_push(m, r);
			} else {
				H->bytes_used += (uint64_t)size * TC_UNIT;
			}
			prev = size;
			r += size;
		}
		TC_BLK(m, end)->prev = prev;
	}

	/* Pass 3: index the kept entries again. */
	for (i = 0; i < kept; i++) {
		if (!reindex(m, keep[i])) {
			lost++;
		}
	}
	free(keep);
	H->needs_repair = 0;
	m->tainted = 0;
	/* a writer that died inside a stripe's window left it odd */
	for (i = 0; i < TC_SEQ_STRIPES; i++) {
		if (H->sseq[i] & 1) {
			__atomic_store_n(&H->sseq[i], H->sseq[i] + 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&H->seq, H->seq + 1, __ATOMIC_RELEASE);
	if (lost) {
		tc_log("tagcache: %s: repair kept %u entries, discarded %u damaged blocks",
		       m->path, H->entries, lost);
	}
}

/* ---------------------------------------------------------------- check */

int tc_shm_check(tc_shm_map *m, tc_emit_fn emit, void *ctx)
{
	tc_shm_hdr *H = m->hdr;
	tc_report R = {emit, ctx, 0};
	uint32_t end = m->heap_units - 1, r, prev = 1, i, nfree = 0, listed = 0;
	uint32_t used_slots = 0, free_slots = 0, chained = 0, ntags = 0;
	uint64_t used = 0, links = 0, members = 0;
	uint32_t live;
	unsigned char *seen = calloc((m->nslots + 8) / 8, 1);
	int c, prev_free = 0;

	if (!seen) {
		tc_report_add(&R, "out of memory");
		return TC_ERR;
	}
	if (H->seq & 1) {
		tc_report_add(&R, "sequence is odd (%llu) outside any change", (unsigned long long)H->seq);
	}
	for (i = 0; i < TC_SEQ_STRIPES; i++) {
		if (H->sseq[i] & 1) {
			tc_report_add(&R, "stripe %u's sequence is odd (%llu) outside any change", i,
			              (unsigned long long)H->sseq[i]);
		}
	}
	/* heap chain, from the start sentinel (a free's backward coalesce
	 * trusts its type) */
	if (TC_BLK(m, 0)->type != TC_B_SENTINEL || TC_BLK(m, 0)->size != 1) {
		tc_report_add(&R, "heap: start sentinel damaged");
	}
	for (r = 1; r < end;) {
		tc_blk *b = TC_BLK(m, r);

		if (b->size < 2 || b->size > end - r) {
			tc_report_add(&R, "heap: block %u has impossible size %u", r, b->size);
			goto slots;
		}
		if (b->prev != prev) {
			tc_report_add(&R, "heap: block %u records previous size %u, not %u", r, b->prev, prev);
		}
		switch (b->type) {
		case TC_B_FREE:
			if (prev_free) {
				tc_report_add(&R, "heap: free block %u follows a free block", r);
			}
			nfree++;
			break;
		case TC_B_ENTRY:
			if (!entry_whole(m, r)) {
				tc_report_add(&R, "heap: entry %u fails its checksum or bounds", r);
			} else if (b->aux < 1 || b->aux > m->nslots || m->slots[b->aux - 1].blk != r) {
				tc_report_add(&R, "heap: entry %u is not referenced by its slot %u", r, b->aux);
			}
			used += (uint64_t)b->size * TC_UNIT;
			break;
		case TC_B_TAG:
		case TC_B_TARR:
			used += (uint64_t)b->size * TC_UNIT;
			break;
		default:
			tc_report_add(&R, "heap: block %u has type 0x%x", r, b->type);
			used += (uint64_t)b->size * TC_UNIT;
		}
		prev_free = b->type == TC_B_FREE;
		prev = b->size;
		r += b->size;
	}
	if (TC_BLK(m, end)->type != TC_B_SENTINEL || TC_BLK(m, end)->prev != prev) {
		tc_report_add(&R, "heap: end sentinel damaged");
	}
	if (used != H->bytes_used) {
		tc_report_add(&R, "heap: %llu bytes in use, header says %llu", (unsigned long long)used,
		              (unsigned long long)H->bytes_used);
	}
	for (c = 0; c < TC_NCLASSES; c++) {
		tc_ref x = H->free_heads[c], back = 0;

		while (x) {
			tc_blk *b;
			tc_free *f;

			if (!tc_ref_ok(m, x) || ++listed > nfree + 1) {
				tc_report_add(&R, "free list %d: bad or looping entry %u", c, x);
				break;
			}
			b = TC_BLK(m, x);
			f = (tc_free *)TC_PAYLOAD(b);
			if (b->type != TC_B_FREE || b->cls != c || tc_size_class(b->size) != c) {
				tc_report_add(&R, "free list %d: block %u is not a free block of this class", c, x);
			}
			if (f->prev != back) {
				tc_report_add(&R, "free list %d: block %u has a wrong back link", c, x);
			}
			back = x;
			x = f->next;
		}
	}
	if (listed != nfree) {
		tc_report_add(&R, "free lists hold %u blocks, the heap has %u free blocks", listed, nfree);
	}

slots:
	for (i = 1; i <= m->nslots; i++) {
		tc_slot *sl = &m->slots[i - 1];

		if (!sl->blk) {
			continue;
		}
		used_slots++;
		if (!tc_entry_sane(m, sl->blk)) {
			tc_report_add(&R, "slot %u points to %u, not an entry", i, sl->blk);
			continue;
		}
		{
			tc_entry *e = TC_ENTRY(TC_BLK(m, sl->blk));
			tc_link *l = TC_LINKS(e);
			const unsigned char *w = TC_NAMES(e), *wend = w + e->tnlen;
			uint32_t j;

			if (tc_key_hash(TC_KEY(e), e->klen) != sl->hash) {
				tc_report_add(&R, "slot %u: hash does not match its key", i);
			}
			for (j = 0; j < e->ntags; j++) {
				uint16_t n;
				tc_tag *T;

				/* a damaged entry's name lengths must not lead out of it */
				if (wend - w < 2) {
					tc_report_add(&R, "slot %u: tag names overrun the entry", i);
					break;
				}
				memcpy(&n, w, 2);
				if (wend - w - 2 < n) {
					tc_report_add(&R, "slot %u: tag names overrun the entry", i);
					break;
				}
				links++;
				if (!tc_tag_ok(m, l[j].tag)) {
					tc_report_add(&R, "slot %u: tag link %u is not a tag", i, j);
				} else {
					T = TC_TAGREC(TC_BLK(m, l[j].tag));
					if (T->nlen != n || memcmp(TC_TAGNAME(T), w + 2, n) != 0) {
						tc_report_add(&R, "slot %u: tag link %u names another tag", i, j);
					} else if (l[j].pos >= T->count || !T->arr
					           || TC_TARR(TC_BLK(m, T->arr))[l[j].pos] != i) {
						tc_report_add(&R, "slot %u: tag link %u is not in the tag's members", i, j);
					} else if (TC_THINT(TC_BLK(m, T->arr), T->cap)[l[j].pos] != j) {
						tc_report_add(&R, "slot %u: tag link %u's member names another link", i, j);
					}
				}
				w += 2 + n;
			}
		}
	}
	if (used_slots != H->entries) {
		tc_report_add(&R, "%u slots in use, header says %u entries", used_slots, H->entries);
	}
	for (i = H->free_slot; i; i = tc_idlist_next(TC_IDLIST(m->slots), i)) {
		if (i > m->nslots || m->slots[i - 1].blk || ++free_slots > m->nslots) {
			tc_report_add(&R, "free slot list is damaged at %u", i);
			break;
		}
	}
	if (used_slots + free_slots != m->nslots) {
		tc_report_add(&R, "%u used + %u free slots, table has %u", used_slots, free_slots, m->nslots);
	}
	for (i = 0; i <= m->bmask; i++) {
		uint32_t id = m->buckets[i];

		while (id) {
			if (id > m->nslots || !m->slots[id - 1].blk) {
				tc_report_add(&R, "bucket %u chains to an unused slot %u", i, id);
				break;
			}
			if ((m->slots[id - 1].hash & m->bmask) != i) {
				tc_report_add(&R, "slot %u is chained in the wrong bucket", id);
			}
			if (!tc_bit_first(seen, id)) {
				tc_report_add(&R, "slot %u is chained twice", id);
				break;
			}
			chained++;
			id = m->slots[id - 1].next;
		}
	}
	if (chained != used_slots) {
		tc_report_add(&R, "%u entries reachable by hash, %u in use", chained, used_slots);
	}
	for (i = 0; i <= m->tbmask; i++) {
		tc_ref t = m->tagbuckets[i];

		while (t) {
			tc_tag *T;
			uint32_t k;

			if (!tc_tag_ok(m, t) || ++ntags > m->heap_units) {
				tc_report_add(&R, "tag bucket %u chains to a non-tag block %u", i, t);
				break;
			}
			T = TC_TAGREC(TC_BLK(m, t));
			if ((T->hash & m->tbmask) != i || tc_tag_hash(TC_TAGNAME(T), T->nlen) != T->hash) {
				tc_report_add(&R, "tag %u is in the wrong bucket", t);
			}
			if (T->live == 0) {
				tc_report_add(&R, "tag %u has no members", t);
			}
			if (!T->arr) {
				if (T->count) {
					tc_report_add(&R, "tag %u has no member array", t);
				}
				t = T->next;
				continue;
			}
			/* Members that no longer hold are allowed (removed lazily,
			 * tc_shm_defs.h); the ones that hold must be exactly the live ones. */
			live = 0;
			for (k = 0; k < T->count; k++) {
				uint32_t id = TC_TARR(TC_BLK(m, T->arr))[k];

				if (id < 1 || id > m->nslots) {
					tc_report_add(&R, "tag %u lists slot %u, out of the table", t, id);
					continue;
				}
				live += tc_tag_member(m, t, k) != 0;
			}
			if (live != T->live) {
				tc_report_add(&R, "tag %u has %u members that hold, its record says %u", t, live,
				              T->live);
			}
			members += live;
			t = T->next;
		}
	}
	if (ntags != H->tags) {
		tc_report_add(&R, "%u tags found, header says %u", ntags, H->tags);
	}
	if (links != members) {
		tc_report_add(&R, "entries carry %llu tag links, tags list %llu members",
		              (unsigned long long)links, (unsigned long long)members);
	}
	free(seen);
	return R.n ? TC_ERR : TC_OK;
}
