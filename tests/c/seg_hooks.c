/*
 * seg_hooks.c: ext/tc_shm_seg.c compiled as is, plus two test-only entry
 * points to its static parts. The fuzzers link this file instead of
 * ext/tc_shm_seg.c (the unit test links the engine file directly).
 *
 * A process maps each segment once and keeps the mapping for its lifetime
 * (the static list `maps`), and walks it once (tc_shm_check) at the first
 * open. A fuzzer runs thousands of inputs in one process, so after each it
 * forgets every mapping; the next open of a segment file then maps and
 * checks it afresh, as a new PHP process would.
 */
#include "../../ext/tc_shm_seg.c"

#include "seg_hooks.h"

void tc_test_forget_maps(void)
{
	while (maps) {
		tc_shm_map *m = maps;

		maps = m->next;
		if (m->base) {
			munmap(m->base, m->size);
		}
		close(m->fd);
		free(m->path);
		free(m);
	}
}

int tc_test_check_header(const tc_shm_hdr *h, uint64_t fsize, uint32_t *nslots)
{
	return check_header(h, fsize, nslots);
}
