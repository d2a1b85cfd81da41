/*
 * tc_redis_journal.c: TwoLevel's invalidation journal in Redis.
 *
 * Three keys on shard 0 (so one cluster slot): <prefix>{ht}J:seq (INCR
 * counter, the seq of the newest record), <prefix>{ht}J:log (a list of the
 * newest `keep` records, the last one with seq = J:seq) and <prefix>{ht}J:epoch
 * (a random id, made by the first script that finds none). Both scripts keep
 * the three consistent atomically; a flush, an eviction or a restart
 * without persistence loses the epoch or shortens the list, and a reader
 * sees that as a gap. One EVALSHA per append and per read (the scripts are
 * in tc_redis_lua.c); when the store is TwoLevel's slow level, an append
 * rides in the write's own script (rj_arm, TCR_LUA_*_J).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tc_redis.h"
#include "tc_twolevel.h"
#include "tc_util.h"

/* On every journaled write's path: written by hand, not snprintf (which
 * took half of rj_arm's instructions, a sixth of a TwoLevel save's). */
static char *hex32(char *w, uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 7; i >= 0; i--) {
		w[i] = digits[v & 15];
		v >>= 4;
	}
	return w + 8;
}

/* 32 hex digits: two random words, the pid, the wall clock's ns (a new
 * candidate every call: a journal recreated after a flush must not get the
 * epoch it had) */
static size_t new_epoch(char *buf, size_t cap)
{
	struct timespec ts;
	char *w = buf;

	if (cap < 33) {
		buf[0] = '\0';
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	w = hex32(w, tcr_rand());
	w = hex32(w, tcr_rand());
	w = hex32(w, (uint32_t)tc_getpid());
	w = hex32(w, (uint32_t)ts.tv_nsec);
	*w = '\0';
	return (size_t)(w - buf);
}

static uint64_t epoch_id(const char *p, size_t len)
{
	uint64_t h = UINT64_C(1469598103934665603);
	size_t i;

	for (i = 0; i < len; i++) {
		h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
	}
	return h ? h : 1;
}

static int keys_of(tcr_state *st, tcr_jarm *k)
{
	k->klen[0] = tcr_key(st, 0, 'J', "seq", 3, k->key[0], sizeof(k->key[0]));
	k->klen[1] = tcr_key(st, 0, 'J', "log", 3, k->key[1], sizeof(k->key[1]));
	k->klen[2] = tcr_key(st, 0, 'J', "epoch", 5, k->key[2], sizeof(k->key[2]));
	return k->klen[0] && k->klen[1] && k->klen[2] ? TC_OK : TC_ERR;
}

/* One of the journal's scripts (EVALSHA, tc_redis_lua.c) on shard 0. */
static redisReply *run(tcr_state *st, int script, tcr_jarm *k, const char *a1, size_t l1, const char *a2,
                       size_t l2, const char *a3, size_t l3)
{
	const char *argv[6] = {k->key[0], k->key[1], k->key[2], a1, a2, a3};
	size_t lens[6] = {k->klen[0], k->klen[1], k->klen[2], l1, l2, l3};

	if (st->held) {
		tcr_reply_free(st->held);
		st->held = NULL;
	}
	st->fail = 0;
	return tcr_eval(st, 0, script, 0, 3, a3 ? 6 : 5, argv, lens);
}

static int rj_append(void *sp, tc_str rec, int64_t keep)
{
	tcr_state *st = sp;
	tcr_jarm k;
	char ep[64], kb[32];
	size_t el, kl;
	redisReply *r;
	int ok;

	if (keys_of(st, &k) != TC_OK) {
		return TC_ERR;
	}
	el = new_epoch(ep, sizeof(ep));
	kl = tc_dec64(kb, keep);
	r = run(st, TCR_LUA_JAPPEND, &k, rec.p, rec.len, ep, el, kb, kl);
	if (!r) {
		return TC_ERR;
	}
	ok = r->type == REDIS_REPLY_INTEGER;
	if (!ok) {
		tcr_fail(st, "%s: journal append: %.200s", st->last, r->type == REDIS_REPLY_ERROR ? r->str : "bad reply");
	}
	tcr_reply_free(r);
	return ok ? TC_OK : TC_ERR;
}

static int rj_read(void *sp, uint64_t since, tc_journal_fn emit, void *ctx, uint64_t *head, uint64_t *epoch)
{
	tcr_state *st = sp;
	tcr_jarm k;
	char ep[64], sb[32];
	redisReply *r;
	int ret = TC_OK;
	size_t i, el, sl;

	if (keys_of(st, &k) != TC_OK) {
		return TC_ERR;
	}
	el = new_epoch(ep, sizeof(ep));
	sl = (size_t)snprintf(sb, sizeof(sb), "%llu", (unsigned long long)since);
	r = run(st, TCR_LUA_JREAD, &k, sb, sl, ep, el, NULL, 0);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || r->element[0]->type != REDIS_REPLY_STRING
	    || r->element[1]->type != REDIS_REPLY_STRING || r->element[2]->type != REDIS_REPLY_INTEGER
	    || (r->elements > 3 && r->element[3]->type != REDIS_REPLY_ARRAY)) {
		tcr_fail(st, "%s: journal read: %.200s", st->last, r->type == REDIS_REPLY_ERROR ? r->str : "bad reply");
		tcr_reply_free(r);
		return TC_ERR;
	}
	*epoch = epoch_id(r->element[0]->str, r->element[0]->len);
	*head = strtoull(r->element[1]->str, NULL, 10);
	if (r->element[2]->integer) {
		ret = TC_MISS;
	} else if (r->elements > 3) {
		redisReply *recs = r->element[3];
		uint64_t first = *head - recs->elements + 1;

		for (i = 0; i < recs->elements; i++) {
			if (recs->element[i]->type == REDIS_REPLY_STRING) {
				emit(ctx, first + i, recs->element[i]->str, recs->element[i]->len);
			}
		}
	}
	tcr_reply_free(r);
	return ret;
}

/* The next save, remove or clean of this object appends rec in its own
 * script (TCR_LUA_*_J): when every key is on one shard, the journal's slot
 * (option shards = 1, the default outside a cluster). Otherwise TC_MISS:
 * the caller appends after the write. rec NULL: disarm. rec must stay
 * valid until then. */
static int rj_arm(void *sp, const tc_str *rec, int64_t keep, int *done)
{
	tcr_state *st = sp;
	tcr_jarm *k;

	free(st->jarm);
	st->jarm = NULL;
	if (!rec) {
		return TC_OK;
	}
	*done = 0;
	if (st->nshards != 1) {
		return TC_MISS;
	}
	k = malloc(sizeof(*k));
	if (!k) {
		return TC_ERR;
	}
	if (keys_of(st, k) != TC_OK) {
		free(k);
		return TC_ERR;
	}
	k->elen = new_epoch(k->epoch, sizeof(k->epoch));
	k->kplen = tc_dec64(k->keep, keep);
	k->rec = *rec;
	k->done = done;
	st->jarm = k;
	return TC_OK;
}

const tc_journal_ops tc_journal_redis = {
	&tc_backend_redis,
	rj_append,
	rj_read,
	rj_arm,
};
