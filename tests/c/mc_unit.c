/*
 * mc_unit.c: the memcached engine's entry record (rec_parse() and
 * build_record() in ext/tc_memcached.c, reached through mc_hooks.c) and
 * what a load does with a parsed record, without a server, built with
 * AddressSanitizer and UndefinedBehaviorSanitizer (run.sh).
 *
 * The last line is "N passed, N failed, N skipped".
 */
#include <stdlib.h>
#include <string.h>
#include "mc_hooks.h"
#include "unitlib.h"

#define HDR 40

static void test_round_trip(int level)
{
	size_t sizes[4] = {0, 1, 300, 1 << 20}, i;
	tc_str tags[2] = {{"t1", 2}, {"tag two", 7}}, id = {"the:id", 6};
	uint64_t vers[2] = {0x1111, 0x2222};

	u_begin(level ? "record: saves and reads back (zlib)" : "record: saves and reads back (plain)");
	for (i = 0; i < 4; i++) {
		char *v = malloc(sizes[i] + 1), *rec, *out = NULL;
		size_t len = 0, olen = 0, j;
		tc_test_mc_rec r;
		tc_str val;
		uint64_t vsum = 0;

		for (j = 0; j < sizes[i]; j++) {
			v[j] = (char)(j % 7 == 0 ? j : 'a');
		}
		val.p = v;
		val.len = sizes[i];
		rec = tc_test_mc_build(level, 0, id, val, tags, 2, vers, 5, 2000000000, 1700000000, &len);
		if (EXPECT(rec && tc_test_mc_parse(rec, len, &r) == 0, "%zu bytes: the record does not parse", sizes[i])) {
			EXPECT(r.id_len == 6 && memcmp(r.id, "the:id", 6) == 0 && r.ntags == 2 && r.ns == 5
			       && r.expire == 2000000000 && r.mtime == 1700000000 && r.raw_len == sizes[i],
			       "%zu bytes: other figures", sizes[i]);
			EXPECT(!level || sizes[i] < 300 || r.codec == 1, "%zu bytes: not compressed", sizes[i]);
			EXPECT(tc_test_mc_read(&r, "e:the:id", 8, &out, &olen, &vsum) == TC_OK && olen == sizes[i]
			       && memcmp(out, v, olen) == 0 && vsum == 0x3333, "%zu bytes: reads back wrong", sizes[i]);
		}
		free(out);
		free(rec);
		free(v);
	}
	u_end();
}

static char *plain(size_t *len)
{
	tc_str tags[1] = {{"tg", 2}}, id = {"k", 1}, val = {"value", 5};
	uint64_t vers[1] = {9};

	return tc_test_mc_build(0, 0, id, val, tags, 1, vers, 1, 2000000000, 1700000000, len);
}

static void test_parse_refuses(void)
{
	size_t len = 0;
	char *rec = plain(&len), *bad = malloc(len + 16);
	tc_test_mc_rec r;
	uint32_t u;
	uint16_t tl;

	u_begin("record: anything that is not a record of ours is refused");
	EXPECT(rec && tc_test_mc_parse(rec, len, &r) == 0, "a valid record is refused");
	EXPECT(tc_test_mc_parse(rec, HDR - 1, &r) != 0, "a short header is accepted");
	EXPECT(tc_test_mc_parse(rec, len - 1, &r) != 0, "a plain value of another length is accepted");
#define MUTATE(stmt, what)                                          \
	do {                                                            \
		memcpy(bad, rec, len);                                      \
		stmt;                                                       \
		EXPECT(tc_test_mc_parse(bad, len, &r) != 0, "%s", what);    \
	} while (0)
	MUTATE(bad[0] = 'X', "another magic is accepted");
	MUTATE(bad[1] = 2, "version 2 is accepted");
	MUTATE(bad[2] = 2, "codec 2 is accepted");
	MUTATE((u = 1000, memcpy(bad + 4, &u, 4)), "an id past the record is accepted");
	MUTATE((u = 4097, memcpy(bad + 8, &u, 4)), "4097 tags are accepted");
	MUTATE((u = 2, memcpy(bad + 8, &u, 4)), "a tag past the record is accepted");
	MUTATE((tl = 0, memcpy(bad + HDR + 1, &tl, 2)), "a tag of length 0 is accepted");
	MUTATE((tl = 1025, memcpy(bad + HDR + 1, &tl, 2)), "a tag over the limit is accepted");
	MUTATE((tl = 9, memcpy(bad + HDR + 1, &tl, 2)), "a tag without room for its version is accepted");
#undef MUTATE
	free(rec);
	free(bad);
	u_end();
}

/* A zlib record announcing ~4 GB from 10 bytes: load() allocated the
 * announced length before inflating (in PHP, a fatal error past
 * memory_limit). rec_parse() now refuses a length no deflate stream of
 * that size can inflate to (1032:1). fuzz_mc_rec found it. The bound is
 * not too tight: a megabyte of zeros, deflated, reads back. */
static void test_raw_len_bound(void)
{
	char rec[HDR + 1 + 10];
	tc_test_mc_rec r;
	uint32_t u;
	char *z = calloc(1, 1 << 20), *big, *out = NULL;
	tc_str id = {"k", 1}, val = {z, 1 << 20};
	size_t len = 0, olen = 0;
	uint64_t vsum;

	u_begin("record: a compressed value cannot announce more than deflate can give");
	memset(rec, 0, sizeof(rec));
	rec[0] = 'T';
	rec[1] = 1;
	rec[2] = 1;              /* zlib */
	u = 1;
	memcpy(rec + 4, &u, 4);  /* id of 1 byte, no tag */
	u = 0xff000000u;
	memcpy(rec + 12, &u, 4);
	rec[HDR] = 'k';
	EXPECT(tc_test_mc_parse(rec, sizeof(rec), &r) != 0, "a record announcing %u bytes from 10 is accepted", u);
	big = tc_test_mc_build(9, 0, id, val, NULL, 0, NULL, 1, 2000000000, 1700000000, &len);
	EXPECT(big && tc_test_mc_parse(big, len, &r) == 0 && r.codec == 1, "a megabyte of zeros (%zu bytes deflated) is refused",
	       len);
	EXPECT(big && tc_test_mc_read(&r, "e:k", 3, &out, &olen, &vsum) == TC_OK && olen == (1u << 20)
	       && memcmp(out, z, olen) == 0, "a megabyte of zeros does not read back");
	free(out);
	free(big);
	free(z);
	u_end();
}

/* The clean log and the cached versions: a clean named by the log makes
 * the cached version superseded (and a record holding it a miss); a gap, a
 * new epoch, a log gone or going back forget every version. */
static void test_clean_log(void)
{
	uint64_t h1 = 0x1001, h2 = 0x2002, ver = 0, old = 0, ring[48];
	char junk[24] = "C";
	int i;

	u_begin("clean log: cleans it names supersede cached versions; gaps and new epochs forget them");
	EXPECT(tc_test_mc_log_observe(7, 0, NULL, 0, 0) == 0, "a log of epoch 7 does not parse");
	tc_test_mc_log_put(h1, 111);
	tc_test_mc_log_put(h2, 222);
	EXPECT(tc_test_mc_log_get(h1, &ver, &old) == 1 && ver == 111 && old == 0, "h1 is not cached as 111");
	EXPECT(tc_test_mc_log_observe(7, 1, &h1, 1, 0) == 0, "a log naming h1 does not parse");
	EXPECT(tc_test_mc_log_get(h1, &ver, &old) == 0 && old == 111, "h1 cleaned: 111 is not superseded");
	EXPECT(tc_test_mc_log_get(h2, &ver, &old) == 1 && ver == 222, "h2 (not cleaned) is no longer current");
	tc_test_mc_log_put(h1, 333);
	EXPECT(tc_test_mc_log_get(h1, &ver, &old) == 1 && ver == 333 && old == 111,
	       "h1 read again: not current 333 with 111 still known as cleaned");
	/* the same log again: nothing new */
	EXPECT(tc_test_mc_log_observe(7, 1, &h1, 1, 0) == 0 && tc_test_mc_log_get(h1, &ver, &old) == 1 && ver == 333,
	       "reading the same log again changed h1");
	/* 48 cleans of others since: within the log, h2 stays */
	for (i = 0; i < 48; i++) {
		ring[i] = 0x9000 + (uint64_t)i;
	}
	EXPECT(tc_test_mc_log_observe(7, 49, ring, 48, 0) == 0 && tc_test_mc_log_get(h2, &ver, &old) == 1 && ver == 222,
	       "48 cleans of other tags, all in the log: h2 is no longer current");
	/* 49 more: more than the log holds since the last read, a gap */
	EXPECT(tc_test_mc_log_observe(7, 98, ring, 48, 0) == 0 && tc_test_mc_log_get(h2, &ver, &old) == 0,
	       "a gap (49 cleans, the log holds 48) kept h2");
	tc_test_mc_log_put(h2, 444);
	EXPECT(tc_test_mc_log_observe(8, 98, ring, 48, 0) == 0 && tc_test_mc_log_get(h2, &ver, &old) == 0,
	       "a new epoch kept h2");
	tc_test_mc_log_put(h2, 555);
	EXPECT(tc_test_mc_log_observe(8, 97, ring, 48, 0) == 0 && tc_test_mc_log_get(h2, &ver, &old) == 0,
	       "a log going back kept h2");
	tc_test_mc_log_put(h2, 666);
	EXPECT(tc_test_mc_log_observe(0, 0, NULL, 0, 1) == 0 && tc_test_mc_log_get(h2, &ver, &old) == 0,
	       "a missing log kept h2");
	EXPECT(tc_test_mc_log_parse(junk, sizeof(junk)) != 0, "a log of version 0 parses");
	junk[1] = 4;
	EXPECT(tc_test_mc_log_parse(junk, sizeof(junk)) != 0, "a log of epoch 0 parses");
	junk[8] = 1;
	junk[1] = 2;
	EXPECT(tc_test_mc_log_parse(junk, sizeof(junk)) != 0, "a log of layout 2 (entry keys e:<id>) parses");
	junk[1] = 3;
	EXPECT(tc_test_mc_log_parse(junk, sizeof(junk)) != 0, "a log of layout 3 (its readers held no lease) parses");
	junk[1] = 4;
	EXPECT(tc_test_mc_log_parse(junk, sizeof(junk)) == 0, "a log of epoch 1, no cleans, does not parse");
	{
		char longer[24 + 8 + 3] = {0};

		memcpy(longer, junk, sizeof(junk));
		EXPECT(tc_test_mc_log_parse(longer, sizeof(longer) - 3) == 0 && tc_test_mc_log_parse(longer, sizeof(longer)) != 0,
		       "a log with a piece of a hash parses (or one with a whole hash does not)");
	}
	EXPECT(tc_test_mc_log_parse("hello", 5) != 0, "a foreign value parses as a log");
	EXPECT(tc_test_mc_log_observe(9, 1, ring, 2, 0) != 0, "a log naming more cleans than its seq parses");
	u_end();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_round_trip(0);
	test_round_trip(6);
	test_parse_refuses();
	test_raw_len_bound();
	test_clean_log();
	return u_summary();
}
