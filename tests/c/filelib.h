/*
 * filelib.h: what the File store's C tests share (file_unit.c,
 * fuzz_file_log.c, fuzz_file_idx.c): opening a store through the vtable,
 * writing log files by hand, and a model of what a rebuild from those logs
 * must serve.
 *
 * Log files are written the way ext/tc_file_log.c does (the header, then
 * records sealed with the log's salt and their offset). A walk like the
 * replay's (a valid record header, else 8 bytes further) lists the records
 * of each log; the model replays them:
 *   a PUT whose payload checksum holds   the id has that value (and tags,
 *                                        expiry, mtime)
 *   a DEL                                the id is gone
 *   a TOUCH                              a present id gets its expiry
 *   a PUT whose payload check fails      unsure: the engine may serve
 *                                        nothing, or (as it did before
 *                                        issue 11 item 2) an older value
 * A log header is damaged (bad_header) by one flipped bit of its check:
 * the rebuild puts that bit right (TECHNOTES "Recovery"), so the log counts
 * as written. A whole header with a base past its own number is not one the
 * engine interprets: that log is removed, its records never replayed. Logs
 * numbered below the base (the largest base a header names, or one past a
 * valid obsolete mark) are dropped. Inputs keep at most a few logs whose numbers
 * span less than the log table, so no other rule drops one.
 *
 * An unsure id may be a miss, or a value that some valid PUT of that id in
 * the logs carried: never bytes that no save wrote.
 */
#ifndef TC_FILELIB_H
#define TC_FILELIB_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../ext/tc_backend.h"
#include "../../ext/tc_file.h"
#include "../../ext/tc_hash.h"
#include "../../ext/tc_util.h"
#include "file_hooks.h"
#include "testlib.h"

/* loghdr_check() of ext/tc_file_log.c: file_unit.c checks that
 * tcf_log_header_ok() accepts a header made with it */
#define FL_SEED_LOG UINT64_C(0x6c6f67686472)
#define FL_PREFIX "fz"
#define FL_UNUSED __attribute__((unused))

static const tc_backend *FB = &tc_backend_file;

/* ------------------------------------------------------------- problems */

static int fl_problems;
static void (*fl_report)(const char *msg);

static FL_UNUSED void fl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static FL_UNUSED void fl_fail(const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fl_problems++;
	if (fl_report) {
		fl_report(buf);
	} else if (fl_problems <= 12) {
		fprintf(stderr, "  %s\n", buf);
	}
}

/* ---------------------------------------------------------- the store */

static FL_UNUSED char *fl_alloc(void *ctx, size_t len)
{
	(void)ctx;
	return malloc(len ? len : 1);
}

static FL_UNUSED void *fl_open(const char *dir, char *err)
{
	tc_file_config c;
	void *st = NULL;

	FB->defaults(&c);
	snprintf(c.cache_dir, sizeof(c.cache_dir), "%s", dir);
	snprintf(c.prefix, sizeof(c.prefix), "%s", FL_PREFIX);
	c.max_size = 64 << 20;
	if (FB->open(&st, &c, err) != TC_OK) {
		return NULL;
	}
	return st;
}

/* Every file of dir goes; dir stays. */
static FL_UNUSED void fl_empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4200];

	if (!d) {
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

static FL_UNUSED void fl_unlink_index(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s.idx", dir, FL_PREFIX);
	unlink(path);
}

/* ------------------------------------------------------------ log files */

typedef struct {
	uint32_t number;
	tcf_loghdr h;
	int bad_header;      /* its check is broken on purpose */
	unsigned char *img;  /* the whole file: header and body */
	size_t len;
} fl_log;

static FL_UNUSED uint64_t fl_salt(uint32_t number)
{
	uint64_t v = number;

	return tc_hash(&v, sizeof(v), 0x73616c74) | 1;
}

static FL_UNUSED void fl_header(fl_log *L, uint32_t base, uint32_t obsolete, uint32_t obsolete_inv)
{
	memset(&L->h, 0, sizeof(L->h));
	memcpy(L->h.magic, TCF_LOG_MAGIC, 8);
	L->h.layout = TCF_LAYOUT;
	L->h.number = L->number;
	L->h.base = base;
	L->h.salt = fl_salt(L->number);
	L->h.created = 1700000000;
	L->h.check = tc_hash(&L->h, offsetof(tcf_loghdr, check), FL_SEED_LOG);
	if (L->bad_header) {
		L->h.check ^= 1;
	}
	L->h.obsolete = obsolete;
	L->h.obsolete_inv = obsolete_inv;
	memcpy(L->img, &L->h, sizeof(L->h));
}

/* A log image of the header and body bytes; fl_header() fills the header. */
static FL_UNUSED void fl_log_init(fl_log *L, uint32_t number, const unsigned char *body, size_t blen)
{
	memset(L, 0, sizeof(*L));
	L->number = number;
	L->len = TCF_LOGHDR + blen;
	L->img = calloc(1, L->len);
	if (!L->img) {
		abort();
	}
	if (blen) {
		memcpy(L->img + TCF_LOGHDR, body, blen);
	}
}

/* Seals every record-looking header of the body in a replay-like walk:
 * fixes its payload check (unless the record's bit in *damage is set:
 * records are numbered across calls by *counter), then its header check. */
static FL_UNUSED void fl_seal(fl_log *L, uint64_t damage, unsigned *counter)
{
	uint64_t off = TCF_LOGHDR, salt = L->h.salt;

	while (L->len - off >= TCF_REC) {
		unsigned char *p = L->img + off;
		uint64_t avail = L->len - off, size;
		tcf_rec r;

		memcpy(&r, p, sizeof(r));
		if ((r.magic & ~UINT32_C(0xff)) == TCF_RECMAGIC
		    && (size = tcf_rec_size(r.klen, r.tnlen, r.vlen)) <= avail) {
			unsigned k = (*counter)++;

			if (k >= 64 || !(damage >> k & 1)) {
				r.pcheck = tcf_rec_pcheck(p, &r, p + TCF_REC + r.klen + r.tnlen);
				memcpy(p + offsetof(tcf_rec, pcheck), &r.pcheck, 8);
			}
			tcf_rec_seal(p, salt, off);
			if (tcf_rec_header_ok(p, avail, salt, off, NULL)) {
				off += size;
				continue;
			}
		}
		off += 8;
	}
}

static FL_UNUSED int fl_write_log(const char *dir, const fl_log *L)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s.%08x.log", dir, FL_PREFIX, L->number);
	return write_whole(path, L->img, L->len);
}

/* ---------------------------------------------------------------- model */

enum { FL_ABSENT = 0, FL_PRESENT, FL_UNSURE };

typedef struct {
	const unsigned char *key;
	uint16_t klen;
	int state;
	const unsigned char *val;   /* PRESENT: the record's value, tag names */
	uint32_t vlen;
	const unsigned char *tn;
	uint32_t tnlen;
	uint16_t ntags;
	int64_t expire, mtime;
} fl_ent;

typedef struct {
	const unsigned char *key, *val;
	uint16_t klen;
	uint32_t vlen;
} fl_put;

typedef struct {
	fl_ent *e;
	size_t n, cap;
	fl_put *puts;       /* every valid PUT seen, for unsure ids */
	size_t nputs, capputs;
	/* values saved by the test itself (fl_model_save) live here */
	unsigned char *own[8];
	size_t nown;
} fl_model;

static FL_UNUSED fl_ent *fl_find(fl_model *m, const unsigned char *k, size_t klen, int add)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (m->e[i].klen == klen && memcmp(m->e[i].key, k, klen) == 0) {
			return &m->e[i];
		}
	}
	if (!add) {
		return NULL;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->e = realloc(m->e, m->cap * sizeof(*m->e));
		if (!m->e) {
			abort();
		}
	}
	memset(&m->e[m->n], 0, sizeof(m->e[0]));
	m->e[m->n].key = k;
	m->e[m->n].klen = (uint16_t)klen;
	m->e[m->n].state = FL_ABSENT;
	return &m->e[m->n++];
}

static FL_UNUSED void fl_add_put(fl_model *m, const unsigned char *k, uint16_t klen, const unsigned char *v, uint32_t vlen)
{
	if (m->nputs == m->capputs) {
		m->capputs = m->capputs ? m->capputs * 2 : 64;
		m->puts = realloc(m->puts, m->capputs * sizeof(*m->puts));
		if (!m->puts) {
			abort();
		}
	}
	m->puts[m->nputs].key = k;
	m->puts[m->nputs].klen = klen;
	m->puts[m->nputs].val = v;
	m->puts[m->nputs].vlen = vlen;
	m->nputs++;
}

static FL_UNUSED void fl_model_free(fl_model *m)
{
	size_t i;

	for (i = 0; i < m->nown; i++) {
		free(m->own[i]);
	}
	free(m->e);
	free(m->puts);
	memset(m, 0, sizeof(*m));
}

/* Replays one log's records into the model. */
static FL_UNUSED void fl_model_log(fl_model *m, const fl_log *L)
{
	uint64_t off = TCF_LOGHDR;

	while (L->len - off >= TCF_REC) {
		const unsigned char *p = L->img + off;
		tcf_rec r;
		uint64_t n = tcf_rec_header_ok(p, L->len - off, L->h.salt, off, &r);
		int type = (int)(r.magic & 0xff);
		fl_ent *e;

		if (!n) {
			off += 8;
			continue;
		}
		e = fl_find(m, p + TCF_REC, r.klen, 1);
		if (type == TCF_PUT && tcf_rec_body_ok(p, &r)) {
			e->state = FL_PRESENT;
			e->tn = p + TCF_REC + r.klen;
			e->tnlen = r.tnlen;
			e->ntags = r.ntags;
			e->val = e->tn + r.tnlen;
			e->vlen = r.vlen;
			e->expire = r.expire;
			e->mtime = r.mtime;
			fl_add_put(m, e->key, e->klen, e->val, e->vlen);
		} else if (type == TCF_PUT) {
			e->state = FL_UNSURE;
		} else if (type == TCF_DEL) {
			e->state = FL_ABSENT;
		} else if (e->state == FL_PRESENT) {
			e->expire = r.expire;
			e->mtime = r.mtime;
		}
		off += n;
	}
}

/* The logs a rebuild keeps (see the top), replayed in number order; logs
 * must be given in increasing number order. A bad_header log is replayed
 * like any other: its check is one flipped bit off, which the rebuild puts
 * right (tcf_log_header_repair()), and h holds the header as written. */
static FL_UNUSED void fl_model_logs(fl_model *m, const fl_log *logs, size_t n)
{
	uint32_t base = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		const tcf_loghdr *h = &logs[i].h;

		if (h->base > logs[i].number) {
			continue;  /* whole but not ours to interpret: removed */
		}
		if (h->base > base) {
			base = h->base;
		}
		if (h->obsolete == ~h->obsolete_inv && h->obsolete && h->obsolete + 1 > base && h->obsolete < UINT32_MAX) {
			base = h->obsolete + 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (logs[i].h.base <= logs[i].number && logs[i].number >= base) {
			fl_model_log(m, &logs[i]);
		}
	}
}

/* ---------------------------------------------------------------- check */

static FL_UNUSED int fl_value_known(const fl_model *m, const fl_ent *e, const char *v, size_t len)
{
	size_t i;

	for (i = 0; i < m->nputs; i++) {
		const fl_put *p = &m->puts[i];

		if (p->klen == e->klen && memcmp(p->key, e->key, e->klen) == 0 && p->vlen == len
		    && (len == 0 || memcmp(p->val, v, len) == 0)) {
			return 1;
		}
	}
	return 0;
}

static FL_UNUSED void fl_verify(void *st, const char *when)
{
	str_list msgs = {0};
	int rc = FB->verify(st, str_list_add, &msgs);

	if (rc != TC_OK || msgs.n) {
		fl_fail("%s: verify() found %zu problems%s%.*s", when, msgs.n, msgs.n ? ", the first: " : "",
		        msgs.n ? (int)(msgs.len[0] > 200 ? 200 : msgs.len[0]) : 0, msgs.n ? msgs.s[0] : "");
	}
	str_list_free(&msgs);
}

/* The store against the model: verify() clean; every id loads as the
 * model says (with load($id, true): expiry does not matter); the listing
 * holds no id twice, nothing absent, and every present id that is far
 * from expiring; metadata gives the record's tags. */
static FL_UNUSED void fl_check(void *st, const fl_model *m, const char *when)
{
	int64_t now = tc_now();
	str_list ids = {0};
	size_t i, j;

	fl_verify(st, when);
	for (i = 0; i < m->n; i++) {
		const fl_ent *e = &m->e[i];
		tc_str id = {(const char *)e->key, e->klen};
		char *data = NULL;
		size_t len = 0;
		tc_meta meta = {0, 0};
		int rc = FB->load(st, id, 1, fl_alloc, NULL, &data, &len, &meta);

		if (e->state == FL_PRESENT) {
			if (rc != TC_OK) {
				fl_fail("%s: id %zu (%u bytes): a miss (%d), the logs hold a value", when, i, e->klen, rc);
			} else if (len != e->vlen || (len && memcmp(data, e->val, len) != 0)) {
				fl_fail("%s: id %zu: %zu bytes served, not the last value saved (%u bytes)", when, i, len,
				        e->vlen);
			} else if (meta.expire != e->expire || (e->mtime != INT64_MIN && meta.mtime != e->mtime)) {
				fl_fail("%s: id %zu: expire %lld mtime %lld, the logs say %lld %lld", when, i,
				        (long long)meta.expire, (long long)meta.mtime, (long long)e->expire,
				        (long long)e->mtime);
			}
		} else if (e->state == FL_ABSENT) {
			if (rc != TC_MISS) {
				fl_fail("%s: id %zu: load() gives %d, the id was removed", when, i, rc);
			}
		} else if (rc == TC_OK && !fl_value_known(m, e, data, len)) {
			fl_fail("%s: id %zu: %zu bytes served that no valid record of it holds", when, i, len);
		} else if (rc != TC_OK && rc != TC_MISS) {
			fl_fail("%s: id %zu: load() gives %d", when, i, rc);
		}
		free(data);
		if (e->state == FL_PRESENT && e->expire > now + 5) {
			str_list tags = {0};
			const unsigned char *w = e->tn;

			rc = FB->metadata(st, id, &meta, str_list_add, &tags);
			if (rc != TC_OK || tags.n != e->ntags) {
				fl_fail("%s: id %zu: metadata() gives %d with %zu tags, the record has %u", when, i, rc,
				        tags.n, e->ntags);
			} else {
				for (j = 0; j < tags.n; j++) {
					uint16_t tl;

					memcpy(&tl, w, 2);
					if (tags.len[j] != tl || memcmp(tags.s[j], w + 2, tl) != 0) {
						fl_fail("%s: id %zu: tag %zu differs from its record's", when, i, j);
						break;
					}
					w += 2 + tl;
				}
			}
			str_list_free(&tags);
		}
	}
	if (FB->ids(st, TC_CLEAN_ALL, NULL, 0, str_list_add, &ids) != TC_OK) {
		fl_fail("%s: ids() failed", when);
	}
	for (i = 0; i < ids.n; i++) {
		const fl_ent *e = fl_find((fl_model *)m, (const unsigned char *)ids.s[i], ids.len[i], 0);

		if (!e || e->state == FL_ABSENT) {
			fl_fail("%s: ids() lists an id (%zu bytes) that %s", when, ids.len[i],
			        e ? "was removed" : "no record holds");
		}
		for (j = 0; j < i; j++) {
			if (ids.len[j] == ids.len[i] && memcmp(ids.s[j], ids.s[i], ids.len[i]) == 0) {
				fl_fail("%s: ids() lists an id twice", when);
			}
		}
	}
	for (i = 0; i < m->n; i++) {
		const fl_ent *e = &m->e[i];

		if (e->state == FL_PRESENT && e->expire > now + 5) {
			for (j = 0; j < ids.n; j++) {
				if (ids.len[j] == e->klen && memcmp(ids.s[j], e->key, e->klen) == 0) {
					break;
				}
			}
			if (j == ids.n) {
				fl_fail("%s: ids() does not list id %zu", when, i);
			}
		}
	}
	str_list_free(&ids);
}

#endif
