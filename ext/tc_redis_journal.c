/*
 * tc_redis_journal.c: TwoLevel's invalidation journal in Redis.
 *
 * Three keys on shard 0 (so one cluster slot): <prefix>{ht}Jseq (INCR
 * counter, the seq of the newest record), <prefix>{ht}Jlog (a list of the
 * newest `keep` records, the last one with seq = Jseq) and <prefix>{ht}Jepoch
 * (a random id, made by the first script that finds none). Both scripts keep
 * the three consistent atomically; a flush, an eviction or a restart
 * without persistence loses the epoch or shortens the list, and a reader
 * sees that as a gap. One EVAL per append and per read.
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

static const char append_lua[] =
	"local e = redis.call('GET', KEYS[3])\n"
	"if not e then redis.call('SET', KEYS[3], ARGV[2]); redis.call('DEL', KEYS[2]) end\n"
	"local s = redis.call('INCR', KEYS[1])\n"
	"local n = redis.call('RPUSH', KEYS[2], ARGV[1])\n"
	"local keep = tonumber(ARGV[3])\n"
	"if n > keep then redis.call('LTRIM', KEYS[2], n - keep, -1) end\n"
	"return s\n";

/* {epoch, head, gap, records} */
static const char read_lua[] =
	"local e = redis.call('GET', KEYS[3])\n"
	"if not e then e = ARGV[2]; redis.call('SET', KEYS[3], e); redis.call('DEL', KEYS[2]) end\n"
	"local h = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
	"local since = tonumber(ARGV[1])\n"
	"if since >= h then return {e, tostring(h), since > h and 1 or 0} end\n"
	"local n = redis.call('LLEN', KEYS[2])\n"
	"if since + 1 < h - n + 1 then return {e, tostring(h), 1} end\n"
	"return {e, tostring(h), 0, redis.call('LRANGE', KEYS[2], n - (h - since), -1)}\n";

static void new_epoch(char *buf, size_t cap)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, cap, "%08x%08x%08x%08lx", tcr_rand(), tcr_rand(), (unsigned)getpid(), (unsigned long)ts.tv_nsec);
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

typedef struct {
	char seq[TC_OPT_STRMAX + 64], log[TC_OPT_STRMAX + 64], epoch[TC_OPT_STRMAX + 64];
	size_t lseq, llog, lepoch;
} jkeys;

static int keys_of(tcr_state *st, jkeys *k)
{
	k->lseq = tcr_key(st, 0, 'J', "seq", 3, k->seq, sizeof(k->seq));
	k->llog = tcr_key(st, 0, 'J', "log", 3, k->log, sizeof(k->log));
	k->lepoch = tcr_key(st, 0, 'J', "epoch", 5, k->epoch, sizeof(k->epoch));
	return k->lseq && k->llog && k->lepoch ? TC_OK : TC_ERR;
}

static redisReply *run(tcr_state *st, const char *script, size_t slen, jkeys *k, const char *a1, size_t l1,
                       const char *a2, size_t l2, const char *a3, size_t l3)
{
	const char *argv[9] = {"EVAL", script, "3", k->seq, k->log, k->epoch, a1, a2, a3};
	size_t lens[9] = {4, slen, 1, k->lseq, k->llog, k->lepoch, l1, l2, l3};

	if (st->held) {
		tcr_reply_free(st->held);
		st->held = NULL;
	}
	st->fail = 0;
	return tcr_shard_cmd(st, 0, 0, 9, argv, lens);
}

static int rj_append(void *sp, tc_str rec, int64_t keep)
{
	tcr_state *st = sp;
	jkeys k;
	char ep[64], kb[32];
	redisReply *r;
	int ok;

	if (keys_of(st, &k) != TC_OK) {
		return TC_ERR;
	}
	new_epoch(ep, sizeof(ep));
	snprintf(kb, sizeof(kb), "%lld", (long long)keep);
	r = run(st, append_lua, sizeof(append_lua) - 1, &k, rec.p, rec.len, ep, strlen(ep), kb, strlen(kb));
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
	jkeys k;
	char ep[64], sb[32];
	redisReply *r;
	int ret = TC_OK;
	size_t i;

	if (keys_of(st, &k) != TC_OK) {
		return TC_ERR;
	}
	new_epoch(ep, sizeof(ep));
	snprintf(sb, sizeof(sb), "%llu", (unsigned long long)since);
	r = run(st, read_lua, sizeof(read_lua) - 1, &k, sb, strlen(sb), ep, strlen(ep), "", 0);
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

const tc_journal_ops tc_journal_redis = {
	&tc_backend_redis,
	rj_append,
	rj_read,
};
