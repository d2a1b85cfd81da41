/* fuzzlib.h: what the libFuzzer harnesses share (fuzz_*.c). Each defines
 * FZ_NAME (its name, for messages) before including it.
 *
 *   fz_fail(what)          a broken rule: the message, then abort() (the
 *                          fuzzer keeps the input as a crash)
 *   fz_quiet               a log sink for tc_set_log_sink(): the engines'
 *                          warnings about damage are expected here
 *   fz_copy(d, n)          the input's bytes in a buffer of exactly n bytes,
 *                          so that ASan sees any read past them
 *   fz_tags(d, n, &pos, ..) the tags a save input announces: per tag a
 *                          length byte (1 + b % 40), then that many bytes
 *   fz_workdir(dir, ..)    a directory of this process's own under
 *                          TC_FUZZ_DIR (default /dev/shm)
 *   fz_seed(dir, name, ..) one seed file written, or exit(1); fz_seed2:
 *                          of two parts (a header, then a value)
 *   fz_seeds(write)        TC_FUZZ_WRITE_SEEDS=dir: write(dir), then exit(0)
 *                          (tests/c/run.sh starts each corpus that way)
 */
#ifndef TC_FUZZLIB_H
#define TC_FUZZLIB_H

#ifndef FZ_NAME
#error "define FZ_NAME (the harness's name) before including fuzzlib.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../ext/tc_backend.h"
#include "testlib.h"

static TL_UNUSED void fz_fail(const char *what)
{
	fprintf(stderr, FZ_NAME ": %s\n", what);
	abort();
}

static TL_UNUSED void fz_quiet(const char *msg)
{
	(void)msg;
}

static TL_UNUSED char *fz_copy(const uint8_t *d, size_t n)
{
	char *p = malloc(n ? n : 1);

	if (!p) {
		abort();
	}
	memcpy(p, d, n);
	return p;
}

/* Up to max tags from d[*pos..n) into tags (pointing into d); *pos ends
 * after the last whole tag, at n at the most. Returns how many. */
static TL_UNUSED size_t fz_tags(const uint8_t *d, size_t n, size_t *pos, size_t max, tc_str *tags)
{
	size_t i, l;

	for (i = 0; i < max; i++) {
		l = *pos < n ? d[*pos] % 40 + 1 : 1;
		(*pos)++;
		if (*pos + l > n) {
			break;
		}
		tags[i].p = (const char *)d + *pos;
		tags[i].len = l;
		*pos += l;
	}
	if (*pos > n) {
		*pos = n;
	}
	return i;
}

/* dir = TC_FUZZ_DIR (or /dev/shm) + "/<name>.<pid>", made if needed. */
static TL_UNUSED void fz_workdir(char *dir, size_t size, const char *name)
{
	const char *base = getenv("TC_FUZZ_DIR");

	snprintf(dir, size, "%s/%s.%ld", base && *base ? base : "/dev/shm", name, (long)getpid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, FZ_NAME ": cannot make %s: %s\n", dir, strerror(errno));
		exit(1);
	}
}

static TL_UNUSED void fz_seed(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (write_whole(path, p, n) != 0) {
		fprintf(stderr, FZ_NAME ": cannot write %s\n", path);
		exit(1);
	}
}

static TL_UNUSED void fz_seed2(const char *dir, const char *name, const void *a, size_t na, const void *b,
                                size_t nb)
{
	unsigned char *p = malloc(na + nb + 1);

	if (!p) {
		abort();
	}
	memcpy(p, a, na);
	memcpy(p + na, b, nb);
	fz_seed(dir, name, p, na + nb);
	free(p);
}

static TL_UNUSED void fz_seeds(void (*write_seeds)(const char *dir))
{
	const char *dir = getenv("TC_FUZZ_WRITE_SEEDS");

	if (dir && *dir) {
		write_seeds(dir);
		exit(0);
	}
}

#endif
