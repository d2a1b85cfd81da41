/* testlib.h: what the C tests and fuzzers share: self-describing values.
 *
 * A value of 8 bytes or more starts with the id's index and a generation
 * (u32 each); the rest follows from both. A shorter one follows from the
 * index and its length. So any value read back can be checked on its own:
 * it was written for this id, whole, by some save. */
#ifndef TC_TESTLIB_H
#define TC_TESTLIB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fill_value(unsigned char *p, size_t len, uint32_t idx, uint32_t gen)
{
	uint64_t x;
	size_t i = 0;

	if (len >= 8) {
		memcpy(p, &idx, 4);
		memcpy(p + 4, &gen, 4);
		i = 8;
	} else {
		gen = 0;
	}
	x = (uint64_t)idx * UINT64_C(0x9e3779b97f4a7c15) ^ ((uint64_t)gen << 20) ^ len;
	for (; i < len; i++) {
		if ((i & 7) == 0) {
			x += UINT64_C(0x9e3779b97f4a7c15);
			x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		}
		p[i] = (unsigned char)(x >> ((i & 7) * 8));
	}
}

/* 1 when v is a value written for id idx; *gen (if given) gets its
 * generation (0 for a short value). */
static int value_ok(uint32_t idx, const char *v, size_t len, uint32_t *gen)
{
	unsigned char *want;
	uint32_t g = 0, vi;
	int ok;

	if (len >= 8) {
		memcpy(&vi, v, 4);
		memcpy(&g, v + 4, 4);
		if (vi != idx) {
			return 0;
		}
	}
	want = malloc(len ? len : 1);
	if (!want) {
		abort();
	}
	fill_value(want, len, idx, g);
	ok = memcmp(want, v, len) == 0;
	free(want);
	if (gen) {
		*gen = g;
	}
	return ok;
}

#endif
