/*
 * tc_redis_codec.c: value compression for the Redis engine.
 *
 * Each codec is compiled in when configure found its library (zlib, liblz4,
 * libzstd). The record stores the codec and the uncompressed length, so
 * compressed and plain values coexist and a reader allocates exactly the
 * announced length (bounded by max_value_size before anything is
 * allocated); a stream that does not decompress to exactly that length is
 * refused.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "tc_redis.h"

#ifdef HAVE_TAGCACHE_ZLIB
#include <zlib.h>
#endif
#ifdef HAVE_TAGCACHE_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif
#ifdef HAVE_TAGCACHE_ZSTD
#include <zstd.h>
#endif

const char *tcr_codec_names(void)
{
	return ""
#ifdef HAVE_TAGCACHE_ZLIB
		"gzip "
#endif
#ifdef HAVE_TAGCACHE_LZ4
		"lz4 "
#endif
#ifdef HAVE_TAGCACHE_ZSTD
		"zstd "
#endif
		;
}

/* Cm_Cache_Backend_Redis's compression_lib names. "" picks the best one
 * built in; snappy and lzf (not available here) fall back the same way.
 * -1: not a codec name at all. */
int tcr_codec_by_name(const char *name, int *codec)
{
	int best = TCR_CODEC_NONE;

#ifdef HAVE_TAGCACHE_ZLIB
	best = TCR_CODEC_GZIP;
#endif
#ifdef HAVE_TAGCACHE_LZ4
	best = TCR_CODEC_LZ4;
#endif
#ifdef HAVE_TAGCACHE_ZSTD
	best = TCR_CODEC_ZSTD;
#endif
	if (!*name || !strcasecmp(name, "snappy") || !strcasecmp(name, "lzf") || !strcasecmp(name, "auto")) {
		*codec = best;
		return 0;
	}
	if (!strcasecmp(name, "gzip") || !strcasecmp(name, "zlib") || !strcasecmp(name, "gz")) {
#ifdef HAVE_TAGCACHE_ZLIB
		*codec = TCR_CODEC_GZIP;
		return 0;
#else
		return -2;
#endif
	}
	if (!strcasecmp(name, "lz4") || !strcasecmp(name, "l4z")) {
#ifdef HAVE_TAGCACHE_LZ4
		*codec = TCR_CODEC_LZ4;
		return 0;
#else
		return -2;
#endif
	}
	if (!strcasecmp(name, "zstd")) {
#ifdef HAVE_TAGCACHE_ZSTD
		*codec = TCR_CODEC_ZSTD;
		return 0;
#else
		return -2;
#endif
	}
	if (!strcasecmp(name, "none")) {
		*codec = TCR_CODEC_NONE;
		return 0;
	}
	return -1;
}

size_t tcr_compress_bound(int codec, size_t inlen)
{
	switch (codec) {
#ifdef HAVE_TAGCACHE_ZLIB
	case TCR_CODEC_GZIP:
		return (size_t)compressBound((uLong)inlen) + 32;
#endif
#ifdef HAVE_TAGCACHE_LZ4
	case TCR_CODEC_LZ4:
		return (size_t)LZ4_compressBound((int)inlen);
#endif
#ifdef HAVE_TAGCACHE_ZSTD
	case TCR_CODEC_ZSTD:
		return ZSTD_compressBound(inlen);
#endif
	default:
		return inlen;
	}
}

int tcr_compress(int codec, int level, const char *in, size_t inlen, char *out, size_t *outlen)
{
	(void)level;
	(void)in;
	(void)out;
	if (inlen > 0x7fff0000u) {
		return -1;
	}
	switch (codec) {
#ifdef HAVE_TAGCACHE_ZLIB
	case TCR_CODEC_GZIP: {
		uLongf n = (uLongf)*outlen;
		int lv = level < 1 ? 1 : level > 9 ? 9 : level;

		if (compress2((Bytef *)out, &n, (const Bytef *)in, (uLong)inlen, lv) != Z_OK) {
			return -1;
		}
		*outlen = (size_t)n;
		return 0;
	}
#endif
#ifdef HAVE_TAGCACHE_LZ4
	case TCR_CODEC_LZ4: {
		int n;

		if (level >= 3) {
			n = LZ4_compress_HC(in, out, (int)inlen, (int)*outlen, level > 12 ? 12 : level);
		} else {
			n = LZ4_compress_default(in, out, (int)inlen, (int)*outlen);
		}
		if (n <= 0) {
			return -1;
		}
		*outlen = (size_t)n;
		return 0;
	}
#endif
#ifdef HAVE_TAGCACHE_ZSTD
	case TCR_CODEC_ZSTD: {
		size_t n = ZSTD_compress(out, *outlen, in, inlen, level > 22 ? 22 : level < 1 ? 1 : level);

		if (ZSTD_isError(n)) {
			return -1;
		}
		*outlen = n;
		return 0;
	}
#endif
	default:
		(void)outlen;
		return -1;
	}
}

/* Exactly outlen bytes, or -1. */
int tcr_decompress(int codec, const char *in, size_t inlen, char *out, size_t outlen)
{
	(void)in;
	(void)inlen;
	(void)out;
	if (outlen > 0x7fff0000u || inlen > 0x7fff0000u) {
		return -1;
	}
	switch (codec) {
#ifdef HAVE_TAGCACHE_ZLIB
	case TCR_CODEC_GZIP: {
		uLongf n = (uLongf)outlen;

		if (uncompress((Bytef *)out, &n, (const Bytef *)in, (uLong)inlen) != Z_OK || (size_t)n != outlen) {
			return -1;
		}
		return 0;
	}
#endif
#ifdef HAVE_TAGCACHE_LZ4
	case TCR_CODEC_LZ4: {
		int n = LZ4_decompress_safe(in, out, (int)inlen, (int)outlen);

		return n >= 0 && (size_t)n == outlen ? 0 : -1;
	}
#endif
#ifdef HAVE_TAGCACHE_ZSTD
	case TCR_CODEC_ZSTD: {
		size_t n = ZSTD_decompress(out, outlen, in, inlen);

		return !ZSTD_isError(n) && n == outlen ? 0 : -1;
	}
#endif
	default:
		(void)outlen;
		return -1;
	}
}
