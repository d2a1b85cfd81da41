/*
 * redis_unit.c: the Redis engine's entry record (tcr_record_parse(),
 * tcr_record_build() in ext/tc_redis_cmd.c) and its codecs
 * (ext/tc_redis_codec.c), without a server, built with AddressSanitizer
 * and UndefinedBehaviorSanitizer (run.sh). A codec this build lacks is a
 * skip, with the reason.
 *
 * The last line is "N passed, N failed, N skipped".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../ext/tc_redis.h"
#include "unitlib.h"

static tcr_state *st;
static const char *codec_name[4] = {"none", "gzip", "lz4", "zstd"};

static void put_f64(char *p, double d)
{
	memcpy(p, &d, 8);   /* the record is little-endian; so is every build host here */
}

static char *build(int codec, int level, tc_str val, const tc_str *tags, size_t ntags, size_t *len)
{
	st->codec = codec;
	st->level = level;
	st->cfg.compress_threshold = 0;
	return tcr_record_build(st, val, tags, ntags, 42.0, 2000000000, 1700000000, len);
}

static void test_round_trip(int codec)
{
	char name[96];
	size_t sizes[4] = {0, 1, 300, 1 << 20}, i;
	tc_str tags[2] = {{"t1", 2}, {"\0binary tag", 11}};
	int c;

	snprintf(name, sizeof(name), "record: saves and reads back (%s)", codec_name[codec]);
	if (codec && (tcr_codec_by_name(codec_name[codec], &c) != 0 || c != codec)) {
		u_skip(name, "this build has no such codec (configure did not find its library)");
		return;
	}
	u_begin(name);
	for (i = 0; i < 4; i++) {
		char *v = malloc(sizes[i] + 1), *rec, *out;
		size_t len = 0, j;
		tcr_record r;
		tc_str val;

		for (j = 0; j < sizes[i]; j++) {
			v[j] = (char)(j % 7 == 0 ? j : 'a');
		}
		val.p = v;
		val.len = sizes[i];
		rec = build(codec, 3, val, tags, 2, &len);
		if (!EXPECT(rec && tcr_record_parse(rec, len, &r, 0) == 0, "%zu bytes: the record does not parse", sizes[i])) {
			free(v);
			free(rec);
			continue;
		}
		EXPECT(r.expire == 2000000000 && r.mtime == 1700000000 && r.raw_len == sizes[i] && r.tags_len == 17,
		       "%zu bytes: other figures", sizes[i]);
		EXPECT(codec == 0 || sizes[i] < 300 || r.codec == codec, "%zu bytes: not compressed", sizes[i]);
		out = malloc(sizes[i] + 1);
		if (r.codec == TCR_CODEC_NONE) {
			EXPECT(r.data_len == sizes[i] && memcmp(r.data, v, sizes[i]) == 0, "plain value differs");
		} else {
			EXPECT(tcr_decompress(r.codec, r.data, r.data_len, out, r.raw_len) == 0
			       && memcmp(out, v, sizes[i]) == 0, "%zu bytes: does not decompress to the value", sizes[i]);
			EXPECT(tcr_decompress(r.codec, r.data, r.data_len, out, r.raw_len - 1) != 0,
			       "%zu bytes: decompresses into one byte less", sizes[i]);
			EXPECT(tcr_decompress(r.codec, r.data, r.data_len - 1, out, r.raw_len) != 0,
			       "%zu bytes: a truncated stream decompresses", sizes[i]);
		}
		free(out);
		free(rec);
		free(v);
	}
	u_end();
}

static void test_parse_refuses(void)
{
	char rec[64], bad[64];
	tcr_record r;
	size_t len;
	int i;

	u_begin("record: anything that is not a record of ours is refused");
	memset(rec, 0, sizeof(rec));
	rec[0] = 2;
	put_f64(rec + 2, 5.0);
	put_f64(rec + 10, 1700000000.0);
	put_f64(rec + 26, 2000000000.0);
	rec[18] = 4;             /* tags: one of 2 bytes */
	rec[22] = 6;             /* value: 6 bytes */
	rec[34] = 2;
	rec[36] = 'a';
	rec[37] = 'b';
	memcpy(rec + 38, "value!", 6);
	len = 44;
	EXPECT(tcr_record_parse(rec, len, &r, 0) == 0 && r.data_len == 6 && r.tags_len == 4,
	       "a valid record is refused");
	EXPECT(tcr_record_parse(rec, TCR_HDR - 1, &r, 1) != 0, "a short header is accepted");
	EXPECT(tcr_record_parse(rec, len - 1, &r, 0) != 0, "a plain value of another length is accepted");
	memcpy(bad, rec, sizeof(rec));
	bad[0] = 1;
	EXPECT(tcr_record_parse(bad, len, &r, 0) != 0, "format 1 is accepted");
	memcpy(bad, rec, sizeof(rec));
	bad[1] = 4;
	EXPECT(tcr_record_parse(bad, len, &r, 0) != 0, "codec 4 is accepted");
	for (i = 0; i < 3; i++) {
		double v[3] = {NAN, INFINITY, 1e19};
		int at[3] = {2, 10, 26}, k;

		for (k = 0; k < 3; k++) {
			memcpy(bad, rec, sizeof(rec));
			put_f64(bad + at[k], v[i]);
			EXPECT(tcr_record_parse(bad, len, &r, 1) != 0, "%g at offset %d is accepted", v[i], at[k]);
		}
	}
	memcpy(bad, rec, sizeof(rec));
	bad[21] = 1;             /* tags: 16 MB */
	EXPECT(tcr_record_parse(bad, len, &r, 0) != 0, "a tag list past the record is accepted");
	EXPECT(tcr_record_parse(bad, len, &r, 1) == 0 && r.tags == NULL && r.data == NULL,
	       "header only: a tag list past the record is not dropped");
	memcpy(bad, rec, sizeof(rec));
	bad[1] = TCR_CODEC_GZIP;
	EXPECT(tcr_record_parse(bad, len, &r, 0) == 0, "a compressed value (lengths differ) is refused");
	u_end();
}

static void test_decompress_refuses(void)
{
	char out[64], garbage[64];
	int codec, c;

	u_begin("decompress: garbage, an unknown codec, huge lengths are refused");
	memset(garbage, 0x5a, sizeof(garbage));
	for (codec = 0; codec < 5; codec++) {
		EXPECT(tcr_decompress(codec, garbage, sizeof(garbage), out, sizeof(out)) != 0,
		       "codec %d: garbage decompresses", codec);
	}
	EXPECT(tcr_decompress(TCR_CODEC_GZIP, garbage, 10, out, (size_t)0x7fff0001u) != 0, "a length over 2 GB");
	EXPECT(tcr_codec_by_name("gzip", &c) != -1 && tcr_codec_by_name("zlib", &c) != -1, "gzip names");
	EXPECT(tcr_codec_by_name("brotli", &c) == -1, "an unknown codec name is accepted");
	EXPECT(tcr_codec_by_name("none", &c) == 0 && c == TCR_CODEC_NONE, "none");
	u_end();
}

int main(void)
{
	int codec;

	setvbuf(stdout, NULL, _IOLBF, 0);
	st = calloc(1, sizeof(*st));
	if (!st) {
		return 2;
	}
	printf("redis_unit: codecs built in: %s\n", tcr_codec_names());
	for (codec = 0; codec < 4; codec++) {
		test_round_trip(codec);
	}
	test_parse_refuses();
	test_decompress_refuses();
	free(st);
	return u_summary();
}
