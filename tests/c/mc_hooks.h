/* mc_hooks.h: test-only entry points into the static record code of
 * ext/tc_memcached.c (mc_hooks.c). */
#ifndef TC_MC_HOOKS_H
#define TC_MC_HOOKS_H

#include <stddef.h>
#include <stdint.h>
#include "../../ext/tc_backend.h"

/* rec_t, field for field */
typedef struct {
	int codec;
	uint32_t id_len, ntags, raw_len;
	int64_t expire, mtime;
	uint64_t ns;
	const char *id, *tags, *data;
	size_t tags_len, data_len;
} tc_test_mc_rec;

/* rec_parse(): 0, or -1 for anything that is not a record of ours */
int tc_test_mc_parse(char *p, size_t len, tc_test_mc_rec *out);
/* build_record() with compression level `level` (0: none) from
 * `threshold` bytes on; malloc'd */
char *tc_test_mc_build(int level, int64_t threshold, tc_str id, tc_str data, const tc_str *tags,
                       size_t ntags, const uint64_t *vers, uint64_t ns, int64_t expire, int64_t mtime,
                       size_t *outlen);
/* What fetch_entry() does with a parsed record's tags (their keys, the
 * tag hint put and read back, the cached versions, the two reads, against
 * a server that has the record's versions) and what mc_load() does with
 * its value: TC_OK with the value (malloc'd) or TC_MISS. */
int tc_test_mc_read(const tc_test_mc_rec *r, const char *ekey, size_t eklen, char **value, size_t *len,
                    uint64_t *vsum);

/* The clean log and the version cache of one view: a log read
 * (view_observe(); missing: none on the server), a version read
 * (tver_put()), a lookup (tver_get(): 1 and *ver when current; *old a
 * version named as cleaned, or 0). tc_test_mc_log_parse(): clog_parse(). */
int tc_test_mc_log_observe(uint64_t epoch, uint64_t seq, const uint64_t *hashes, uint32_t count, int missing);
int tc_test_mc_log_parse(const char *p, size_t len);
void tc_test_mc_log_put(uint64_t th, uint64_t ver);
int tc_test_mc_log_get(uint64_t th, uint64_t *ver, uint64_t *old);

#endif
