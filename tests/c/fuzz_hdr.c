/*
 * fuzz_hdr.c: libFuzzer harness for the segment header check alone
 * (check_header() and compute_layout() in ext/tc_shm_seg.c), the code that
 * decides whether a file's layout is trusted or the segment is recreated.
 *
 * An input is a file size (8 bytes, reduced to at most 64 GiB, the largest
 * size the "size" option allows) and bytes written over the start of a
 * valid header. Whenever the check accepts a header, every region it
 * describes must lie inside the file, in order, without overlap, with
 * power-of-two bucket counts: the engine indexes them without further
 * checks.
 *
 * TC_FUZZ_WRITE_SEEDS=dir: write a seed corpus there and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../ext/tc_backend.h"
#include "../../ext/tc_shm.h"
#include "seg_hooks.h"
#define FZ_NAME "fuzz_hdr"
#include "fuzzlib.h"

#define MAXSIZE (UINT64_C(1) << 36)

static tc_shm_hdr valid;

static void fail(const char *what, const tc_shm_hdr *h, uint64_t fsize)
{
	fprintf(stderr, "fuzz_hdr: accepted a header with %s (file %llu, nslots %u, heap at %llu, %u units)\n",
	        what, (unsigned long long)fsize, h->nslots, (unsigned long long)h->off_heap, h->heap_units);
	abort();
}

/* The reference header as is, and with another slot count. */
static void write_seeds(const char *dir)
{
	unsigned char buf[8 + sizeof(tc_shm_hdr)];
	uint64_t fsize = 1 << 20;
	char name[16];
	int i;

	for (i = 0; i < 2; i++) {
		tc_shm_hdr h = valid;

		if (i == 1) {
			h.nslots = 4096;
		}
		memcpy(buf, &fsize, 8);
		memcpy(buf + 8, &h, sizeof(h));
		snprintf(name, sizeof(name), "seed-%d", i);
		fz_seed(dir, name, buf, sizeof(buf));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* A real header, as init_segment() writes it, for a 1 MiB segment
	 * of 2048 slots (the layout fields are checked, not trusted). */
	memset(&valid, 0, sizeof(valid));
	memcpy(valid.magic, TC_SHM_MAGIC, 8);
	valid.layout = TC_SHM_LAYOUT;
	valid.abi = tc_shm_abi();
	valid.size = 1 << 20;
	valid.nslots = 2048;
	valid.nbuckets = 2048;
	valid.ntagbuckets = 512;
	valid.ready = TC_SHM_READY;
	valid.off_slots = (sizeof(tc_shm_hdr) + 63) / 64 * 64;
	valid.off_buckets = valid.off_slots + 2048 * sizeof(tc_slot);
	valid.off_tagbuckets = valid.off_buckets + 2048 * 4;
	valid.off_heap = valid.off_tagbuckets + 512 * 4;
	valid.heap_units = (uint32_t)(((1 << 20) - valid.off_heap) / TC_UNIT);
	{
		uint32_t n;

		if (tc_test_check_header(&valid, 1 << 20, &n) != 0 || n != 2048) {
			fz_fail("the reference header is refused");
		}
	}
	fz_seeds(write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tc_shm_hdr h = valid;
	uint64_t fsize = 1 << 20, end_slots, end_buckets, end_tb, end_heap;
	uint32_t nslots = 0;
	size_t k;

	if (size >= 8) {
		memcpy(&fsize, data, 8);
		fsize %= MAXSIZE + 1;
		data += 8;
		size -= 8;
	}
	k = size < sizeof(h) ? size : sizeof(h);
	memcpy(&h, data, k);
	if (tc_test_check_header(&h, fsize, &nslots) != 0) {
		return 0;
	}
	if (nslots != h.nslots || nslots < 64) {
		fail("a slot count it does not report", &h, fsize);
	}
	if (h.size != fsize) {
		fail("another size than the file's", &h, fsize);
	}
	if ((h.nbuckets & (h.nbuckets - 1)) || h.nbuckets < nslots
	    || (h.ntagbuckets & (h.ntagbuckets - 1)) || h.ntagbuckets == 0) {
		fail("bucket counts that are not powers of two covering the slots", &h, fsize);
	}
	end_slots = h.off_slots + (uint64_t)nslots * sizeof(tc_slot);
	end_buckets = h.off_buckets + (uint64_t)h.nbuckets * 4;
	end_tb = h.off_tagbuckets + (uint64_t)h.ntagbuckets * 4;
	end_heap = h.off_heap + (uint64_t)h.heap_units * TC_UNIT;
	if (h.off_slots < sizeof(tc_shm_hdr) || end_slots > h.off_buckets || end_buckets > h.off_tagbuckets
	    || end_tb > h.off_heap || end_heap > fsize) {
		fail("regions that overlap or leave the file", &h, fsize);
	}
	if (h.off_slots % 16 || h.off_buckets % 4 || h.off_tagbuckets % 4 || h.off_heap % TC_UNIT) {
		fail("misaligned regions", &h, fsize);
	}
	if (h.heap_units < 256) {
		fail("a heap too small for its sentinels", &h, fsize);
	}
	return 0;
}
