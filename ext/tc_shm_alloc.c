/*
 * tc_shm_alloc.c: the segment's heap allocator. Called only under the
 * write lock.
 *
 * Blocks carry boundary tags (their size and the size of the block before)
 * so that neighbours coalesce in O(1). Free blocks sit on segregated lists:
 * one list per exact size up to 63 units, then one per power of two. Every
 * change to a block's size is one aligned store, made after the new
 * neighbour's header is written, so that a linear walk of the heap (what
 * crash recovery does) always sees a consistent chain of blocks, whatever
 * instruction a killed writer stopped at.
 */
#include "tc_shm_defs.h"

int tc_size_class(uint32_t units)
{
	int k = 0;

	if (units < TC_NEXACT) {
		return (int)units;
	}
	while ((units >> k) > 1) {
		k++;
	}
	k = TC_NEXACT + (k - 6);
	return k < TC_NCLASSES ? k : TC_NCLASSES - 1;
}

static tc_free *fl(tc_shm_map *m, tc_ref r)
{
	return (tc_free *)TC_PAYLOAD(TC_BLK(m, r));
}

void tc_freelist_push(tc_shm_map *m, tc_ref r)
{
	tc_blk *b = TC_BLK(m, r);
	int c = tc_size_class(b->size);
	tc_ref head = m->hdr->free_heads[c];

	b->type = TC_B_FREE;
	b->cls = (uint16_t)c;
	fl(m, r)->prev = 0;
	fl(m, r)->next = head;
	if (head) {
		fl(m, head)->prev = r;
	}
	m->hdr->free_heads[c] = r;
}

static void unlink_free(tc_shm_map *m, tc_ref r)
{
	tc_blk *b = TC_BLK(m, r);
	tc_free *f = fl(m, r);

	if ((f->prev && !tc_ref_ok(m, f->prev)) || (f->next && !tc_ref_ok(m, f->next))
	    || b->cls >= TC_NCLASSES) {
		m->tainted = 1;
		return;
	}

	if (f->prev) {
		fl(m, f->prev)->next = f->next;
	} else {
		m->hdr->free_heads[b->cls] = f->next;
	}
	if (f->next) {
		fl(m, f->next)->prev = f->prev;
	}
}

tc_ref tc_alloc(tc_shm_map *m, uint32_t units, uint16_t type)
{
	int c0 = tc_size_class(units), c;
	tc_ref r = 0;
	tc_blk *b;
	uint32_t total, scanned;

	if (units < 2) {
		units = 2;
	}
	for (c = c0; c < TC_NCLASSES && !r; c++) {
		tc_ref x = m->hdr->free_heads[c];

		for (scanned = 0; x && scanned < 64; scanned++) {
			if (!tc_ref_ok(m, x)) {
				m->tainted = 1;  /* damaged list: repair at unlock */
				return 0;
			}
			if (TC_BLK(m, x)->size >= units) {
				r = x;
				break;
			}
			if (c > c0 || c < TC_NEXACT) {
				break;  /* every block of this class is the same size */
			}
			x = fl(m, x)->next;
		}
	}
	if (!r) {
		return 0;
	}
	unlink_free(m, r);
	b = TC_BLK(m, r);
	total = b->size;
	if (total - units >= 2) {
		tc_blk *rb = TC_BLK(m, r + units);

		rb->size = total - units;
		rb->prev = units;
		rb->type = TC_B_FREE;
		rb->aux = 0;
		TC_BLK(m, r + total)->prev = total - units;
		__atomic_store_n(&b->size, units, __ATOMIC_RELEASE);
		tc_freelist_push(m, r + units);
	}
	b->type = type;
	b->aux = 0;
	m->hdr->bytes_used += (uint64_t)b->size * TC_UNIT;
	return r;
}

void tc_free_blk(tc_shm_map *m, tc_ref r)
{
	tc_blk *b = TC_BLK(m, r);
	uint32_t size = b->size;
	tc_blk *nb;

	if (!tc_ref_ok(m, r) || size < 2 || size > m->heap_units - 1 - r
	    || b->prev > r) {
		m->tainted = 1;  /* leave it to the repair at unlock */
		return;
	}
	nb = TC_BLK(m, r + size);
	m->hdr->bytes_used -= (uint64_t)size * TC_UNIT;
	b->type = TC_B_FREE;
	/* never into a sentinel, whatever its type byte says */
	if (tc_ref_ok(m, r + size) && nb->type == TC_B_FREE) {
		unlink_free(m, r + size);
		size += nb->size;
	}
	if (b->prev && b->prev < r) {
		tc_ref p = r - b->prev;
		tc_blk *pb = TC_BLK(m, p);

		if (pb->type == TC_B_FREE) {
			unlink_free(m, p);
			size += pb->size;
			r = p;
			b = pb;
		}
	}
	__atomic_store_n(&b->size, size, __ATOMIC_RELEASE);
	TC_BLK(m, r + size)->prev = size;
	tc_freelist_push(m, r);
}

/* One free block between the two sentinels. */
void tc_heap_reset(tc_shm_map *m)
{
	uint32_t n = m->heap_units;
	tc_blk *s = TC_BLK(m, 0), *e = TC_BLK(m, n - 1), *f = TC_BLK(m, 1);
	int c;

	for (c = 0; c < TC_NCLASSES; c++) {
		m->hdr->free_heads[c] = 0;
	}
	s->size = 1;
	s->prev = 0;
	s->type = TC_B_SENTINEL;
	s->aux = 0;
	f->size = n - 2;
	f->prev = 1;
	f->aux = 0;
	e->size = 1;
	e->prev = n - 2;
	e->type = TC_B_SENTINEL;
	e->aux = 0;
	tc_freelist_push(m, 1);
	m->hdr->bytes_used = 0;
}
