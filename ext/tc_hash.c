/*
 * tc_hash.c: a multiply-fold hash (the construction wyhash made popular):
 * 16 bytes per step, one 64x64->128 multiply each. It only has to spread
 * keys over buckets and catch torn or overwritten records; it is not a
 * defence against chosen collisions (chains are bounded by the slot count).
 */
#include <string.h>
#include "tc_hash.h"

#define K0 UINT64_C(0xa0761d6478bd642f)
#define K1 UINT64_C(0xe7037ed1a0b428db)
#define K2 UINT64_C(0x8ebc6af09c88c6e3)
#define K3 UINT64_C(0x589965cc75374cc3)

static inline uint64_t fold(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

uint64_t tc_hash(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	size_t n = len;
	uint64_t h = seed ^ fold(seed ^ K0, (uint64_t)len ^ K1);
	uint64_t a, b;

	if (n > 64) {
		/* two independent lanes, so the multiplies overlap */
		uint64_t h2 = h ^ K2;

		while (n > 32) {
			h = fold(rd64(p) ^ K1, rd64(p + 8) ^ h);
			h2 = fold(rd64(p + 16) ^ K3, rd64(p + 24) ^ h2);
			p += 32;
			n -= 32;
		}
		h ^= h2;
	}
	while (n > 16) {
		h = fold(rd64(p) ^ K1, rd64(p + 8) ^ h);
		p += 16;
		n -= 16;
	}
	if (n > 8) {
		a = rd64(p);
		b = rd64(p + n - 8);
	} else if (n >= 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, p + n - 4, 4);
		a = x;
		b = y;
	} else if (n > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
		b = 0;
	} else {
		a = b = 0;
	}
	h = fold(a ^ K1 ^ h, b ^ K2);
	return fold(h ^ K3, (uint64_t)len ^ K1);
}
