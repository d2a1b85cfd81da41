/*
 * mc_hooks.c: ext/tc_memcached.c compiled as is, plus test-only entry
 * points to its static record code. The memcached tests link this file
 * instead of ext/tc_memcached.c.
 *
 * tc_test_mc_read() runs fetch_entry()'s steps around its two mgets with
 * a server that answers the record's own versions (hint_find(),
 * view_of(), hint_slots(), first_keys(), view_observe(), tver_put(), the
 * image test of rec_parse(), check_image(), hint_matches(), hint_put(),
 * check_tags(), check_pending(): the same functions, in fetch_entry()'s
 * order) and the value copy or inflate of mc_load(): both run inside
 * functions that need a server first. tc_test_mc_log_*() drive the clean
 * log and the version cache directly.
 */
#include "../../ext/tc_memcached.c"

/* The vtable names the engine's leases (tc_memcached_lease.c, which these
 * unit tests do not build: they never take a lease). */
const tc_lease_ops tc_lease_memcached = {0};

#include "mc_hooks.h"

int tc_test_mc_parse(char *p, size_t len, tc_test_mc_rec *out)
{
	rec_t r;

	if (rec_parse(p, len, &r, NULL, 0, 0) != 0) {
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
	static tcm_conn cn;    /* one server and no handle: view_of() hashes no key */
	hint_node *hint, *mh = NULL;
	uint64_t hh, gen, seq;
	tcm_view *view;
	keyset ks, tk;
	size_t off, nmiss = 0, n, j, np = 0;
	const uint64_t *ths = NULL;
	clog_t log;
	uint32_t i;
	char *buf;
	rec_t r;
	int rr, same = 0;

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
	st.cfg.hint_memory = 1 << 20;   /* hints and cached versions on, as by default */
	tcm_state_prepare(&st);
	cn.nservers = 1;
	cn.key = 0x74657374;
	*vsum = 0;
	memset(&tk, 0, sizeof(tk));
	/* fetch_entry(): the first mget's keys */
	hh = tc_hash(ekey, eklen, UINT64_C(0x68696e74));   /* as entry_key() would: any hash of the key */
	hint = hint_find(&st, hh);
	view = view_of(&st, &cn, ekey, eklen);
	if (hint) {
		nmiss = hint_slots(view, hint, &same);
	}
	if (keyset_init(&ks, 2 + nmiss) != 0) {
		keyset_free(&ks);
		return TC_ERR;
	}
	ks.keys[0] = ekey;
	ks.lens[0] = eklen;
	n = first_keys(&st, view, hint, &ks, 2 + nmiss);
	/* the server's answer: a log of the record's epoch, no clean since;
	 * the record's own versions of the tags asked for */
	memset(&log, 0, sizeof(log));
	log.epoch = r.ns ? r.ns : 1;
	if (view) {
		gen = view->gen;
		seq = view->seq;
		view_observe(view, &log);
		if (view->gen != gen || view->seq != seq) {
			same = 0;
		}
	}
	for (j = 2; j < n; j++) {
		ks.have[j] = 0;
		for (i = 0, off = 0; i < r.ntags; i++) {
			char key[TCM_KEY_MAX + 1];
			uint16_t tl;
			size_t kl;

			memcpy(&tl, r.tags + off, 2);
			kl = make_key(&st, 't', r.tags + off + 2, tl, key);
			if (kl == ks.lens[j] && memcmp(key, ks.keys[j], kl) == 0) {
				memcpy(&ks.vers[j], r.tags + off + 2 + tl, 8);
				ks.have[j] = 1;
				break;
			}
			off += 2 + (size_t)tl + 8;
		}
		if (view && ks.have[j]) {
			tver_put(view, ks.th[j], ks.vers[j]);
		}
	}
	/* rec_parse()'s test of the record's tags against the hint's image */
	r.img = hint && hint->ntags == r.ntags && HINT_IMG_LEN(hint) == r.tags_len
	        && memcmp(r.tags, HINT_IMG(hint), r.tags_len) == 0;
	/* fetch_entry() after rec_parse() and the id, log and expiry checks */
	tk.mem = NULL;
	if (r.img && same) {
		rr = TC_OK;
		goto checked;
	}
	if (r.img && view && n == 2 && (rr = check_image(view, hint)) != NEED_READ) {
		goto checked;
	}
	if (hint && (r.img || hint_matches(hint, &r))) {
		ths = hint->th;
		mh = hint;
	} else if (hint || rec->ntags > 0) {
		hint_put(&st, hh, r.tags, r.tags_len, r.ntags, NULL);
	}
	hint = NULL;
	tk.mem = NULL;
	rr = check_tags(&st, view, &r, &ks, 2, n, ths, &tk, &np);
	if (rr == NEED_READ) {
		/* the second mget: the server has the record's versions */
		for (j = 0; j < np; j++) {
			tk.have[j] = 1;
			tk.vers[j] = tk.want[j];
		}
		rr = check_pending(view, &tk, np);
	}
	if (rr == TC_OK && mh && !r.img) {
		memcpy(HINT_IMG(mh), r.tags, r.tags_len);
	}
checked:
	keyset_free(&ks);
	keyset_free(&tk);
	if (rr != TC_OK) {
		return rr == TC_ERR ? TC_ERR : TC_MISS;
	}
	for (i = 0, off = 0; i < rec->ntags; i++) {
		uint16_t tl;
		uint64_t v;

		memcpy(&tl, rec->tags + off, 2);
		memcpy(&v, rec->tags + off + 2 + tl, 8);
		off += 2 + (size_t)tl + 8;
		*vsum += v;
	}

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

/* ------------------------------------------------ clean log, version cache */

static tcm_view *test_view(void)
{
	static tcm_state st;
	static tcm_conn cn;

	st.cfg.hint_memory = 1 << 20;
	if (!st.logkey_len) {
		tcm_state_prepare(&st);
	}
	cn.nservers = 1;
	cn.key = 0x6c6f67;
	return view_of(&st, &cn, "e:x", 3);
}

int tc_test_mc_log_observe(uint64_t epoch, uint64_t seq, const uint64_t *hashes, uint32_t count, int missing)
{
	char buf[CLOG_HDR + 64 * 8];
	size_t len;
	clog_t log;
	tcm_view *v = test_view();

	if (!v) {
		return -1;
	}
	if (missing) {
		view_observe(v, NULL);
		return 0;
	}
	if (count > 64) {
		return -1;
	}
	len = clog_build(buf, epoch, seq, (const char *)hashes, count);
	if (clog_parse(buf, len, &log) != 0) {
		return -1;
	}
	view_observe(v, &log);
	return 0;
}

int tc_test_mc_log_parse(const char *p, size_t len)
{
	clog_t log;

	return clog_parse(p, len, &log);
}

void tc_test_mc_log_put(uint64_t th, uint64_t ver)
{
	tver_put(test_view(), th, ver);
}

int tc_test_mc_log_get(uint64_t th, uint64_t *ver, uint64_t *old)
{
	return tver_get(test_view(), th, ver, old);
}
