/* testlib.h: what the C tests and fuzzers share: self-describing values,
 * whole files read and written (templates, damaged copies, seeds), and a
 * list of byte strings that the engines' listing callbacks fill.
 *
 * A value of 8 bytes or more starts with the id's index and a generation
 * (u32 each); the rest follows from both. A shorter one follows from the
 * index and its length. So any value read back can be checked on its own:
 * it was written for this id, whole, by some save. */
#ifndef TC_TESTLIB_H
#define TC_TESTLIB_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../ext/tc_backend.h"

#define TL_UNUSED __attribute__((unused))

static TL_UNUSED void fill_value(unsigned char *p, size_t len, uint32_t idx, uint32_t gen)
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
static TL_UNUSED int value_ok(uint32_t idx, const char *v, size_t len, uint32_t *gen)
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

/* The tags of all[0..nall) whose bit is set in mask, into out; how many. */
static TL_UNUSED size_t tags_in_mask(uint32_t mask, const tc_str *all, size_t nall, tc_str *out)
{
	size_t n = 0, i;

	for (i = 0; i < nall && i < 32; i++) {
		if (mask & (UINT32_C(1) << i)) {
			out[n++] = all[i];
		}
	}
	return n;
}

/* Byte strings, as ids() and tags() hand them to their callback. */
typedef struct {
	size_t n, cap;
	char **s;
	size_t *len;
} str_list;

/* A listing callback: ctx is a str_list; keeps a copy of p[0..len). */
static TL_UNUSED void str_list_add(void *ctx, const char *p, size_t len)
{
	str_list *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->s = realloc(l->s, l->cap * sizeof(*l->s));
		l->len = realloc(l->len, l->cap * sizeof(*l->len));
		if (!l->s || !l->len) {
			abort();
		}
	}
	l->s[l->n] = malloc(len ? len : 1);
	if (!l->s[l->n]) {
		abort();
	}
	memcpy(l->s[l->n], p, len);
	l->len[l->n++] = len;
}

static TL_UNUSED void str_list_free(str_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->s[i]);
	}
	free(l->s);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

/* The whole file at path, in a buffer of its size + 1 (free() it); NULL
 * when it cannot be read. */
static TL_UNUSED unsigned char *read_whole(const char *path, size_t *len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *p = NULL;
	size_t got = 0;

	if (fd < 0) {
		return NULL;
	}
	if (fstat(fd, &sb) == 0 && (p = malloc((size_t)sb.st_size + 1)) != NULL) {
		while (got < (size_t)sb.st_size) {
			ssize_t r = read(fd, p + got, (size_t)sb.st_size - got);

			if (r <= 0) {
				break;
			}
			got += (size_t)r;
		}
		if (got != (size_t)sb.st_size) {
			free(p);
			p = NULL;
		}
	}
	close(fd);
	*len = got;
	return p;
}

/* path made (or truncated) to hold exactly p[0..len), mode 0600, not
 * through a symlink; 0, or -1 when it cannot be written whole. */
static TL_UNUSED int write_whole(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0) {
		return -1;
	}
	while (done < len) {
		ssize_t w = write(fd, (const unsigned char *)p + done, len - done);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	return close(fd);
}

#endif
