/*
 * fuzz_mc_rec.c: libFuzzer harness for what the memcached engine reads
 * back from the servers: the entry record (rec_parse() in
 * ext/tc_memcached.c), then what a load does with a record that parsed:
 * the walk over its tags (their keys and versions, the tag hint) and the
 * value, copied or inflated into exactly the announced length
 * (mc_hooks.c). A get can return any bytes: another client's value under
 * our key, another version's record, a damaged one.
 *
 * Byte 0 picks what the rest is:
 *   0  a record, as read from a server
 *   1  a save: compression on or off, up to 4 tag lengths, then the value;
 *      the record build_record() makes must parse back to the same id,
 *      tags, versions, expiry and value
 * TC_FUZZ_WRITE_SEEDS=dir: write seeds (records the engine builds) and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mc_hooks.h"
#define FZ_NAME "fuzz_mc_rec"
#include "fuzzlib.h"

static void read_record(char *p, size_t len)
{
	tc_test_mc_rec r;
	char *v = NULL;
	size_t vlen = 0;
	uint64_t vsum;

	if (tc_test_mc_parse(p, len, &r) != 0) {
		return;
	}
	if (r.id < p || r.id + r.id_len > p + len || r.tags + r.tags_len > p + len
	    || r.data + r.data_len != p + len) {
		fz_fail("a parsed record's parts lie outside its bytes");
	}
	if (tc_test_mc_read(&r, r.id, r.id_len > 250 ? 250 : r.id_len, &v, &vlen, &vsum) == TC_OK
	    && vlen != r.raw_len) {
		fz_fail("a value of another length than the record announces");
	}
	free(v);
}

static void save_round_trip(const uint8_t *d, size_t n)
{
	tc_str tags[4], val, id = {"some:id", 7};
	uint64_t vers[4] = {11, 22, 33, 44}, vsum;
	size_t ntags, i, pos = 2, outlen = 0;
	tc_test_mc_rec r;
	char *rec, *v = NULL;
	size_t vlen = 0;

	if (n < 2) {
		return;
	}
	ntags = fz_tags(d, n, &pos, d[1] % 5, tags);
	/* one tag key, one version: a save reads a repeated tag's version once */
	for (i = 0; i < ntags; i++) {
		size_t j;

		for (j = 0; j < i; j++) {
			if (tags[j].len == tags[i].len && memcmp(tags[j].p, tags[i].p, tags[i].len) == 0) {
				vers[i] = vers[j];
				break;
			}
		}
	}
	val.p = (const char *)d + pos;
	val.len = n - pos;
	rec = tc_test_mc_build(d[0] & 1 ? 6 : 0, 0, id, val, tags, ntags, vers, 99, 2000000000, 1700000000,
	                       &outlen);
	if (!rec) {
		fz_fail("build_record() failed");
	}
	if (tc_test_mc_parse(rec, outlen, &r) != 0) {
		fz_fail("a record the engine built does not parse");
	}
	if (r.id_len != id.len || memcmp(r.id, id.p, id.len) != 0 || r.ntags != ntags || r.ns != 99
	    || r.expire != 2000000000 || r.mtime != 1700000000 || r.raw_len != val.len) {
		fz_fail("a record the engine built parses to other figures");
	}
	if (tc_test_mc_read(&r, "e:some:id", 9, &v, &vlen, &vsum) != TC_OK || vlen != val.len
	    || memcmp(v, val.p, vlen) != 0) {
		fz_fail("a record the engine built does not give its value back");
	}
	for (i = 0; i < ntags; i++) {
		vsum -= vers[i];
	}
	if (vsum != 0) {
		fz_fail("a record the engine built gives other tag versions");
	}
	free(v);
	free(rec);
}

static void write_seeds(const char *dir)
{
	static const char text[] = "a value that compresses: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                           " bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccc";
	tc_str tags[2] = {{"tag1", 4}, {"another tag", 11}}, val = {text, sizeof(text) - 1}, id = {"id:1", 4};
	static const unsigned char save[] = {1, 1, 2, 3, 'a', 'b', 'c', 'd', 1, 'x', 'y'};
	uint64_t vers[2] = {0x1234, 0xabcdef};
	unsigned char buf[4096];
	int level;

	for (level = 0; level < 2; level++) {
		size_t outlen = 0;
		char *rec = tc_test_mc_build(level * 6, 0, id, val, tags, 2, vers, 7, 2000000000, 1700000000, &outlen);
		char name[32];

		if (!rec || outlen + 1 > sizeof(buf)) {
			fz_fail("cannot build a seed");
		}
		buf[0] = 0;
		memcpy(buf + 1, rec, outlen);
		snprintf(name, sizeof(name), "record-%d", level);
		fz_seed(dir, name, buf, outlen + 1);
		free(rec);
	}
	/* a save: compressed, tags "abcd" and "xy", then the value */
	fz_seed2(dir, "save", save, sizeof(save), text, sizeof(text) - 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_seeds(write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	if (data[0] % 2 == 0) {
		char *p = fz_copy(data + 1, size - 1);

		read_record(p, size - 1);
		free(p);
	} else {
		save_round_trip(data + 1, size - 1);
	}
	return 0;
}
