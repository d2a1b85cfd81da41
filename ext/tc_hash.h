/* tc_hash.h: one fast 64-bit hash for keys, tags and record checksums. */
#ifndef TC_HASH_H
#define TC_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t tc_hash(const void *p, size_t len, uint64_t seed);

#endif
