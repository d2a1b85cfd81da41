/*
 * mc_hooks.c: ext/tc_memcached.c compiled as is, plus test-only entry
 * points to its static record code. The memcached tests link this file
 * instead of ext/tc_memcached.c.
 *
 * tc_test_mc_read() repeats, line for line, the part of fetch_entry() that
 * follows rec_parse() (the walk over the record's tags, keyset_put(),
 * hint_put(), hint_find() and hint_fill(), the version reads) and the
 * value copy or inflate of mc_load(): both run inside functions that need
 * a server first.
 */
#include "../../ext/tc_memcached.c"

#include "mc_hooks.h"

int tc_test_mc_parse(char *p, size_t len, tc_test_mc_rec *out)
{
	rec_t r;

	if (rec_parse(p, len, &r) != 0) {
		return -1;
	}
	out->codec = r.codec;
	out->id_len = r.id_len;
	out->ntags = r.ntags;
	out->raw_len = r.raw_len;
	out->expire = r.expire;
	out->mtime = r.mtime;
	out->ns = r.ns;
	out->id = r.id;
	out->tags = r.tags;
	out->data = r.data;
	out->tags_len = r.tags_len;
	out->data_len = r.data_len;
	return 0;
}

char *tc_test_mc_build(int level, int64_t threshold, tc_str id, tc_str data, const tc_str *tags,
                       size_t ntags, const uint64_t *vers, uint64_t ns, int64_t expire, int64_t mtime,
                       size_t *outlen)
{
	static tcm_state st;

	st.level = level;
	st.cfg.compress_threshold = threshold;
	return build_record(&st, id, data, tags, ntags, vers, ns, expire, mtime, outlen);
}

int tc_test_mc_read(const tc_test_mc_rec *rec, const char *ekey, size_t eklen, char **value, size_t *len,
                    uint64_t *vsum)
{
	static tcm_state st;   /* prefix "" */
	const hint_node *hint;
	keyset ks, tk;
	size_t off, nh;
	uint32_t i;
	char *buf;
	rec_t r;

	/* the record as rec_parse() gave it, field for field */
	memset(&r, 0, sizeof(r));
	r.codec = rec->codec;
	r.id_len = rec->id_len;
	r.ntags = rec->ntags;
	r.raw_len = rec->raw_len;
	r.expire = rec->expire;
	r.mtime = rec->mtime;
	r.ns = rec->ns;
	r.id = rec->id;
	r.tags = rec->tags;
	r.data = rec->data;
	r.tags_len = rec->tags_len;
	r.data_len = rec->data_len;
	st.cfg.hint_memory = 1 << 20;   /* hints on, as by default */
	*vsum = 0;
	memset(&tk, 0, sizeof(tk));
	hint = hint_find(&st, ekey, eklen);
	nh = hint ? hint->ntags : 0;
	if (keyset_init(&ks, 2 + nh) != 0) {
		keyset_free(&ks);
		return TC_ERR;
	}
	if (hint) {
		hint_fill(&st, hint, &ks, 2);
	}
	/* the hint was right when it names the record's tags; else their keys */
	if (!(hint ? hint_matches(hint, &r) : rec->ntags == 0)) {
		if (keyset_init(&tk, rec->ntags) != 0) {
			keyset_free(&ks);
			keyset_free(&tk);
			return TC_ERR;
		}
		for (i = 0, off = 0; i < rec->ntags; i++) {
			uint16_t tl;

			memcpy(&tl, rec->tags + off, 2);
			keyset_put(&tk, i, &st, 't', rec->tags + off + 2, tl);
			off += 2 + (size_t)tl + 8;
		}
		hint_put(&st, ekey, eklen, NULL, rec->ntags, &r);
	}
	for (i = 0, off = 0; i < rec->ntags; i++) {
		uint16_t tl;
		uint64_t v;

		memcpy(&tl, rec->tags + off, 2);
		memcpy(&v, rec->tags + off + 2 + tl, 8);
		off += 2 + (size_t)tl + 8;
		*vsum += v;
	}
	keyset_free(&ks);
	keyset_free(&tk);

	buf = malloc(rec->raw_len ? rec->raw_len : 1);
	if (!buf) {
		return TC_ERR;
	}
	if (rec->codec == CODEC_NONE) {
		memcpy(buf, rec->data, rec->raw_len);
	} else {
#ifdef HAVE_TAGCACHE_ZLIB
		uLongf out = rec->raw_len;

		if (uncompress((Bytef *)buf, &out, (const Bytef *)rec->data, (uLong)rec->data_len) != Z_OK
		    || out != rec->raw_len) {
			free(buf);
			return TC_MISS;
		}
#else
		free(buf);
		return TC_MISS;
#endif
	}
	*value = buf;
	*len = rec->raw_len;
	return TC_OK;
}
