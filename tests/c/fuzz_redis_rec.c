/*
 * fuzz_redis_rec.c: libFuzzer harness for what the Redis engine reads back
 * from the server: the entry record (tcr_record_parse() in
 * ext/tc_redis_cmd.c, format 2) and the decompressors (tcr_decompress() in
 * ext/tc_redis_codec.c: gzip, lz4, zstd, as built in). A GET can return
 * any bytes: another writer's, another version's, a damaged value.
 *
 * Byte 0 picks what the rest is:
 *   0  a record, read the way load() and getMetadatas() read it: parsed
 *      with and without header_only; when it parses, every length must lie
 *      inside the bytes, and the value is decompressed into exactly the
 *      announced length (bounded as max_value_size bounds it), the tag list
 *      walked
 *   1  a save: codec, level, up to 4 tag lengths, then the value; the
 *      record tcr_record_build() makes must parse back to the same tags,
 *      expiry and value
 *   2  a compressed stream: codec, the announced length (2 bytes), then the
 *      stream, decompressed into a buffer of exactly that length
 * TC_FUZZ_WRITE_SEEDS=dir: write seeds (records the engine builds) and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../ext/tc_redis.h"
#define FZ_NAME "fuzz_redis_rec"
#include "fuzzlib.h"

#define MAX_VALUE (1 << 20)

static tcr_state *st;

/* load(): the value as the caller gets it; -1 for a miss. */
static int read_value(const char *p, size_t len)
{
	tcr_record r;
	char *buf;
	int rc;

	if (tcr_record_parse(p, len, &r, 0) != 0) {
		return -1;
	}
	if (r.tags < p || r.tags + r.tags_len > p + len || r.data < p || r.data + r.data_len != p + len) {
		fz_fail("a parsed record's parts lie outside its bytes");
	}
	if (r.codec == TCR_CODEC_NONE && r.data_len != r.raw_len) {
		fz_fail("a plain record whose value length is not the announced one");
	}
	if (r.raw_len > MAX_VALUE) {
		return -1;
	}
	buf = malloc(r.raw_len ? r.raw_len : 1);
	if (!buf) {
		abort();
	}
	if (r.codec == TCR_CODEC_NONE) {
		memcpy(buf, r.data, r.raw_len);
		rc = 0;
	} else {
		rc = tcr_decompress(r.codec, r.data, r.data_len, buf, r.raw_len);
	}
	free(buf);
	return rc;
}

/* getMetadatas(): the header and the tag list only. */
static void read_tags(const char *p, size_t len)
{
	tcr_record r;
	size_t off, n = 0;

	if (tcr_record_parse(p, len, &r, 1) != 0 || !r.tags) {
		return;
	}
	if (r.tags + r.tags_len > p + len) {
		fz_fail("a header-only parse gives a tag list past the record");
	}
	for (off = 0; off + 2 <= r.tags_len;) {
		size_t l = (unsigned char)r.tags[off] | (size_t)(unsigned char)r.tags[off + 1] << 8;

		if (off + 2 + l > r.tags_len) {
			break;
		}
		n += l;
		off += 2 + l;
	}
	if (n > len) {
		fz_fail("tag names longer than the record");
	}
}

static void save_round_trip(const uint8_t *d, size_t n)
{
	tc_str tags[4], val;
	size_t ntags, i, pos = 3, outlen = 0, off;
	char *rec;
	tcr_record r;
	char *buf;

	if (n < 3) {
		return;
	}
	st->codec = d[0] % 4;
	st->level = d[1] % 13;
	st->cfg.compress_threshold = 0;
	ntags = fz_tags(d, n, &pos, d[2] % 5, tags);
	val.p = (const char *)d + pos;
	val.len = n - pos;
	rec = tcr_record_build(st, val, tags, ntags, 123.0, 2000000000, 1700000000, &outlen);
	if (!rec) {
		fz_fail("tcr_record_build() failed");
	}
	if (tcr_record_parse(rec, outlen, &r, 0) != 0) {
		fz_fail("a record the engine built does not parse");
	}
	if (r.expire != 2000000000 || r.mtime != 1700000000 || r.raw_len != val.len) {
		fz_fail("a record the engine built parses to other figures");
	}
	for (i = 0, off = 0; i < ntags; i++) {
		size_t l = (unsigned char)r.tags[off] | (size_t)(unsigned char)r.tags[off + 1] << 8;

		if (l != tags[i].len || memcmp(r.tags + off + 2, tags[i].p, l) != 0) {
			fz_fail("a record the engine built gives other tags");
		}
		off += 2 + l;
	}
	if (off != r.tags_len) {
		fz_fail("a record's tag list has bytes after its tags");
	}
	buf = malloc(val.len ? val.len : 1);
	if (!buf) {
		abort();
	}
	if (r.codec == TCR_CODEC_NONE) {
		if (r.data_len != val.len || memcmp(r.data, val.p, val.len) != 0) {
			fz_fail("a plain record gives another value");
		}
	} else if (tcr_decompress(r.codec, r.data, r.data_len, buf, r.raw_len) != 0
	           || memcmp(buf, val.p, val.len) != 0) {
		fz_fail("a compressed record does not decompress to its value");
	}
	free(buf);
	free(rec);
}

/* Records of each codec (built by the engine) as mode-0 inputs, their
 * streams as mode-2 inputs, and a save. */
static void write_seeds(const char *dir)
{
	static const char text[] = "a value that compresses: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                           " bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccc";
	tc_str tags[2] = {{"tag1", 4}, {"another_tag", 11}}, val = {text, sizeof(text) - 1};
	static const unsigned char save[] = {1, 3, 5, 2, 3, 'a', 'b', 'c', 'd', 1, 'x', 'y'};
	unsigned char buf[4096];
	int codec;

	for (codec = 0; codec < 4; codec++) {
		size_t outlen = 0;
		char *rec, name[32];
		tcr_record r;

		st->codec = codec;
		st->level = codec ? 3 : 0;
		rec = tcr_record_build(st, val, tags, 2, 5.0, 2000000000, 1700000000, &outlen);
		if (!rec || outlen + 4 > sizeof(buf) || tcr_record_parse(rec, outlen, &r, 0) != 0) {
			fz_fail("cannot build a seed");
		}
		if (codec && r.codec != codec) {
			free(rec);
			continue;   /* not built in */
		}
		buf[0] = 0;
		memcpy(buf + 1, rec, outlen);
		snprintf(name, sizeof(name), "record-%d", codec);
		fz_seed(dir, name, buf, outlen + 1);
		if (codec) {
			buf[0] = 2;
			buf[1] = (unsigned char)codec;
			buf[2] = (unsigned char)(r.raw_len & 0xff);
			buf[3] = (unsigned char)(r.raw_len >> 8);
			memcpy(buf + 4, r.data, r.data_len);
			snprintf(name, sizeof(name), "stream-%d", codec);
			fz_seed(dir, name, buf, 4 + r.data_len);
		}
		free(rec);
	}
	/* a save: codec 3, level 5, tags "abcd" and "xy", then the value */
	fz_seed2(dir, "save", save, sizeof(save), text, sizeof(text) - 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	st = calloc(1, sizeof(*st));
	if (!st) {
		abort();
	}
	fz_seeds(write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	switch (data[0] % 3) {
	case 0: {
		char *p = fz_copy(data + 1, size - 1);

		read_value(p, size - 1);
		read_tags(p, size - 1);
		free(p);
		break;
	}
	case 1:
		save_round_trip(data + 1, size - 1);
		break;
	default:
		if (size >= 4) {
			size_t outlen = (size_t)data[2] | (size_t)data[3] << 8, n = size - 4;
			char *in = fz_copy(data + 4, n), *out = malloc(outlen ? outlen : 1);

			if (!out) {
				abort();
			}
			tcr_decompress(data[1] % 4, in, n, out, outlen);
			free(in);
			free(out);
		}
		break;
	}
	return 0;
}
