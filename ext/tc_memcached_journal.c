/*
 * tc_memcached_journal.c: TwoLevel's invalidation journal in memcached.
 *
 * <prefix>J:seq is a counter (INCR), <prefix>J:epoch a random id (ADD, so
 * the first one wins), and each record is <prefix>J:r:<seq> (SET, expiring
 * after a day). A reader gets the epoch and the counter, then multi-gets the
 * records after its seq. A record missing below the newest few is a gap
 * (evicted, expired, or the pool flushed: the epoch is gone too); one
 * missing among the newest few is a write still between its INCR and its
 * SET, and the reader stops before it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tc_memcached.h"
#include "tc_twolevel.h"
#include "tc_util.h"

#define MJ_KEYMAX 250
#define MJ_TTL (24 * 3600)
#define MJ_INFLIGHT 16     /* the newest seqs whose record may still be on its way */
#define MJ_BATCH 128

static size_t mj_key(const tcm_state *st, const char *what, uint64_t seq, char *buf)
{
	int n = seq ? snprintf(buf, MJ_KEYMAX + 1, "%sJ:r:%llu", st->cfg.prefix, (unsigned long long)seq)
	            : snprintf(buf, MJ_KEYMAX + 1, "%sJ:%s", st->cfg.prefix, what);

	return n < 0 || n > MJ_KEYMAX ? 0 : (size_t)n;
}

static uint64_t mj_hash(const char *p, size_t len)
{
	uint64_t h = UINT64_C(1469598103934665603);
	size_t i;

	for (i = 0; i < len; i++) {
		h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
	}
	return h ? h : 1;
}

/* The epoch, made if missing; 0 on failure. */
static uint64_t mj_epoch(tcm_state *st, tcm_conn *cn)
{
	char key[MJ_KEYMAX + 1], val[40];
	size_t kl = mj_key(st, "epoch", 0, key), vl;
	uint32_t flags;
	memcached_return_t rc;
	int i;

	for (i = 0; i < 2; i++) {
		char *v = memcached_get(cn->mc, key, kl, &vl, &flags, &rc);
		struct timespec ts;

		if (v) {
			uint64_t h = mj_hash(v, vl);

			free(v);
			return h;
		}
		if (rc != MEMCACHED_NOTFOUND) {
			tcm_fail(st, cn, NULL, 0, rc, "journal epoch");
			return 0;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(val, sizeof(val), "%d.%ld.%ld", (int)tc_getpid(), (long)ts.tv_sec, (long)ts.tv_nsec);
		rc = memcached_add(cn->mc, key, kl, val, strlen(val), 0, 0);
		if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTSTORED && rc != MEMCACHED_DATA_EXISTS) {
			tcm_fail(st, cn, NULL, 0, rc, "journal epoch");
			return 0;
		}
	}
	return 0;
}

static int mj_append(void *sp, tc_str rec, int64_t keep)
{
	tcm_state *st = sp;
	tcm_conn *cn;
	char key[MJ_KEYMAX + 1];
	size_t kl;
	uint64_t seq = 0;
	memcached_return_t rc;

	(void)keep;   /* memcached's LRU and the records' expiry bound it */
	free(st->held);
	st->held = NULL;
	st->fail = 0;
	cn = tcm_conn_get(st);
	if (!cn || !mj_epoch(st, cn)) {
		return TC_ERR;
	}
	kl = mj_key(st, "seq", 0, key);
	rc = memcached_increment(cn->mc, key, kl, 1, &seq);
	if (rc == MEMCACHED_NOTFOUND) {
		rc = memcached_add(cn->mc, key, kl, "0", 1, 0, 0);
		if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
			rc = memcached_increment(cn->mc, key, kl, 1, &seq);
		}
	}
	if (rc != MEMCACHED_SUCCESS) {
		return tcm_fail(st, cn, NULL, 0, rc, "journal sequence");
	}
	kl = mj_key(st, "r", seq, key);
	rc = memcached_set(cn->mc, key, kl, rec.p, rec.len, MJ_TTL, 0);
	if (rc != MEMCACHED_SUCCESS) {
		return tcm_fail(st, cn, NULL, 0, rc, "journal record");
	}
	return TC_OK;
}

static int mj_read(void *sp, uint64_t since, tc_journal_fn emit, void *ctx, uint64_t *head, uint64_t *epoch)
{
	tcm_state *st = sp;
	tcm_conn *cn;
	char key[MJ_KEYMAX + 1];
	size_t kl, vl, n, i;
	uint32_t flags;
	memcached_return_t rc;
	char *v;
	uint64_t h = 0, from, to;
	char **recs = NULL;
	size_t *rlens = NULL;
	int r = TC_OK;

	free(st->held);
	st->held = NULL;
	st->fail = 0;
	cn = tcm_conn_get(st);
	if (!cn) {
		return TC_ERR;
	}
	*epoch = mj_epoch(st, cn);
	if (!*epoch) {
		return TC_ERR;
	}
	kl = mj_key(st, "seq", 0, key);
	v = memcached_get(cn->mc, key, kl, &vl, &flags, &rc);
	if (v) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%.*s", (int)(vl < 31 ? vl : 31), v);
		h = strtoull(buf, NULL, 10);
		free(v);
	} else if (rc != MEMCACHED_NOTFOUND) {
		return tcm_fail(st, cn, NULL, 0, rc, "journal sequence");
	}
	*head = h;
	if (since > h) {
		return TC_MISS;
	}
	if (since == h) {
		return TC_OK;
	}
	for (from = since + 1; from <= h; from = to + 1) {
		const char *keys[MJ_BATCH];
		size_t lens[MJ_BATCH];
		char kbuf[MJ_BATCH][MJ_KEYMAX + 1];
		memcached_result_st *res;

		to = from + MJ_BATCH - 1 < h ? from + MJ_BATCH - 1 : h;
		n = (size_t)(to - from + 1);
		recs = calloc(n, sizeof(char *));
		rlens = calloc(n, sizeof(size_t));
		if (!recs || !rlens) {
			free(recs);
			free(rlens);
			return TC_ERR;
		}
		for (i = 0; i < n; i++) {
			lens[i] = mj_key(st, "r", from + i, kbuf[i]);
			keys[i] = kbuf[i];
		}
		rc = memcached_mget(cn->mc, keys, lens, n);
		if (rc != MEMCACHED_SUCCESS) {
			free(recs);
			free(rlens);
			return tcm_fail(st, cn, NULL, 0, rc, "journal read");
		}
		while ((res = memcached_fetch_result(cn->mc, NULL, &rc)) != NULL) {
			const char *k = memcached_result_key_value(res);
			size_t klen = memcached_result_key_length(res);
			uint64_t seq;
			char buf[32];
			size_t p = klen;

			while (p > 0 && k[p - 1] >= '0' && k[p - 1] <= '9') {
				p--;
			}
			snprintf(buf, sizeof(buf), "%.*s", (int)(klen - p < 31 ? klen - p : 31), k + p);
			seq = strtoull(buf, NULL, 10);
			if (seq >= from && seq <= to && !recs[seq - from]) {
				rlens[seq - from] = memcached_result_length(res);
				recs[seq - from] = malloc(rlens[seq - from] ? rlens[seq - from] : 1);
				if (recs[seq - from]) {
					memcpy(recs[seq - from], memcached_result_value(res), rlens[seq - from]);
				}
			}
			memcached_result_free(res);
		}
		for (i = 0; i < n && r == TC_OK; i++) {
			if (!recs[i]) {
				if (from + i + MJ_INFLIGHT > h) {
					*head = from + i - 1;   /* still being written: stop before it */
					r = -100;
				} else {
					r = TC_MISS;   /* lost */
				}
				break;
			}
			emit(ctx, from + i, recs[i], rlens[i]);
		}
		for (i = 0; i < n; i++) {
			free(recs[i]);
		}
		free(recs);
		free(rlens);
		if (r != TC_OK) {
			break;
		}
	}
	return r == -100 ? TC_OK : r;
}

const tc_journal_ops tc_journal_memcached = {
	&tc_backend_memcached,
	mj_append,
	mj_read,
	NULL,   /* arm: appends come after the write */
};
