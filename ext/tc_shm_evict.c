/*
 * tc_shm_evict.c: making room in a full segment, under the write lock:
 * sweeping expired entries, evicting the least recently read of a sample
 * (a CLOCK-like hand), and clearing a contiguous run when the heap is too
 * fragmented for a large block.
 *
 * Uses the index (tc_shm_index.c) and the allocator; used by the
 * operations (tc_shm.c).
 */
#include <stdlib.h>
#include "tc_shm_defs.h"

/* Removes every expired entry; keeps min_expire exact for the rest. */
void tc_sweep_expired(tc_shm_map *m, int64_t now)
{
	uint32_t i;
	tc_ids ids = {0};
	int64_t next = TC_EXPIRE_NEVER;

	if (tc_ids_grow(&ids, 256) != 0) {
		return;
	}
	for (i = 1; i <= m->nslots; i++) {
		tc_entry *e;

		if (!m->slots[i - 1].blk) {
			continue;
		}
		e = tc_slot_entry_chk(m, i);
		if (!e) {
			break;
		}
		if (e->expire < now) {
			if (tc_ids_push(&ids, i) != 0) {
				break;
			}
		} else if (e->expire < next) {
			next = e->expire;
		}
	}
	tc_remove_list(m, ids.v, ids.n, NULL);
	m->hdr->expirations += ids.n;
	m->hdr->min_expire = i > m->nslots ? next : now;
	free(ids.v);
}

/* The eviction victim: an expired entry if the sample finds one, else the
 * least recently read of a sample taken round the slot table (a CLOCK-like
 * hand, so every entry gets looked at in turn). 0 when the table is empty. */
static uint32_t pick_victim(tc_shm_map *m, int64_t now, int *expired)
{
	uint32_t best = 0, best_age = 0, seen = 0, n, tick = TC_TICK(m->hdr);

	*expired = 0;
	for (n = 0; n < m->nslots && seen < 16; n++) {
		uint32_t id = (m->hdr->clock++ % m->nslots) + 1;
		tc_slot *sl = &m->slots[id - 1];

		if (!sl->blk) {
			continue;
		}
		seen++;
		if (!tc_slot_entry_chk(m, id)) {
			return 0;
		}
		if (tc_slot_entry(m, id)->expire < now) {
			*expired = 1;
			return id;
		}
		if (!best || tick - sl->atime > best_age) {
			best = id;
			best_age = tick - sl->atime;
		}
	}
	return best;
}

static int evict_one(tc_shm_map *m, int64_t now)
{
	int expired;
	uint32_t best = pick_victim(m, now, &expired);

	if (!best) {
		return 0;
	}
	tc_remove_one(m, best);
	if (expired) {
		m->hdr->expirations++;
	} else {
		m->hdr->evictions++;
	}
	return 1;
}

/* Frees a run of at least `units` contiguous units by evicting the entries
 * that lie next to an LRU victim in the heap. Single evictions free blocks
 * scattered over the heap; a large block (a popular tag's member array that
 * must double) may never appear that way on a full, fragmented heap. */
int tc_make_contiguous(tc_shm_map *m, uint32_t units, int64_t now)
{
	uint32_t end = m->heap_units - 1, attempt, tick = TC_TICK(m->hdr);
	uint32_t best_age = 0, n = 0, i;
	tc_ref best_start = 0, best_end = 0;
	uint32_t ids[256];

	/* Of up to 8 windows around LRU victims, take the one whose most
	 * recently read entry is the least recent: the coldest region. */
	for (attempt = 0; attempt < 8; attempt++) {
		int expired;
		uint32_t victim = pick_victim(m, now, &expired), steps = 0, acc = 0, young;
		tc_ref start, r;

		if (!victim) {
			break;
		}
		start = r = m->slots[victim - 1].blk;
		while (r < end && acc < units + 2 && steps++ < 4096) {
			tc_blk *b = TC_BLK(m, r);

			if (b->size < 2 || b->size > end - r) {
				m->tainted = 1;
				return 0;
			}
			if (b->type == TC_B_FREE || b->type == TC_B_ENTRY) {
				acc += b->size;
			} else {
				acc = 0;  /* a tag record or array cannot move: start after it */
				start = r + b->size;
			}
			r += b->size;
		}
		if (acc < units + 2) {
			continue;
		}
		young = UINT32_MAX;
		for (tc_ref x = start; x < r; x += TC_BLK(m, x)->size) {
			tc_blk *b = TC_BLK(m, x);

			if (b->type == TC_B_ENTRY && b->aux >= 1 && b->aux <= m->nslots) {
				uint32_t age = tick - m->slots[b->aux - 1].atime;

				if (age < young) {
					young = age;
				}
			}
		}
		if (!best_end || young > best_age) {
			best_age = young;
			best_start = start;
			best_end = r;
		}
	}
	if (!best_end) {
		return 0;
	}
	for (tc_ref x = best_start; x < best_end && n < 256; x += TC_BLK(m, x)->size) {
		tc_blk *b = TC_BLK(m, x);

		if (b->type == TC_B_ENTRY && b->aux >= 1 && b->aux <= m->nslots
		    && m->slots[b->aux - 1].blk == x) {
			ids[n++] = b->aux;
		}
	}
	for (i = 0; i < n; i++) {
		if (!tc_slot_entry_chk(m, ids[i])) {
			return 0;
		}
	}
	tc_remove_list(m, ids, n, NULL);
	m->hdr->evictions += n;
	return n > 0;
}

/* Makes room: expired entries first, then least recently used. */
int tc_make_room(tc_shm_map *m, int64_t now)
{
	if (m->hdr->min_expire < now && m->hdr->entries) {
		uint32_t before = m->hdr->entries;

		tc_sweep_expired(m, now);
		if (m->hdr->entries < before) {
			return 1;
		}
	}
	return evict_one(m, now);
}

tc_ref tc_alloc_room(tc_shm_map *m, uint32_t units, uint16_t type, int64_t now)
{
	uint32_t tries;
	uint64_t used0 = m->hdr->bytes_used;

	for (tries = 0; tries <= m->nslots + 1; tries++) {
		tc_ref r = tc_alloc(m, units, type);

		if (r || m->tainted) {
			return r;
		}
		/* Single evictions have freed eight times the size asked for, and still
		 * no block fits: the heap is fragmented, clear a run instead. */
		if (used0 > m->hdr->bytes_used && used0 - m->hdr->bytes_used >= (uint64_t)units * TC_UNIT * 8
		    && tc_make_contiguous(m, units, now)) {
			continue;
		}
		if (!tc_make_room(m, now)) {
			return 0;
		}
	}
	return 0;
}

