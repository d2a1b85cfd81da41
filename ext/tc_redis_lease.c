/*
 * tc_redis_lease.c: rebuild leases in Redis (issue 14), across every node
 * that shares the store. Plain C over the Redis client (tcr_shard_cmd);
 * the keys of an id sit on the id's shard (one cluster slot):
 *
 *   <prefix>{ht}L:<id>  the lease: SET NX PX <rebuild_timeout>, the value
 *                       the owner's token (host:pid:random)
 *   <prefix>{ht}B:<id>  "a lease was taken and not ended": a take that
 *                       finds it counts a lease timeout
 *   <prefix>{ht}Q:<id>  how many callers wait (INCR before they block)
 *   <prefix>{ht}W:<id>  the wake list: the end of a lease pushes one
 *                       element per waiter (short expiry), waiters BLPOP
 *   <prefix>{ht}S:<id>  a stale copy of id may exist (expires with it)
 *   <prefix>{ht}R:<id>  the id's last measured rebuild time, ms (a day)
 *   <prefix>{ht}N       the counters of the shard (a hash)
 *
 * Every step is one EVAL (take, end, release, register a waiter) except
 * the waiter's BLPOP, which blocks at most min(the lease's PTTL, max_s,
 * half the read timeout) per call: a holder that dies leaves a lease that
 * expires on its own after rebuild_timeout, and its waiters are back by
 * then. A failure of a lease call is quiet (TC_LEASE_NONE: act without
 * protection); the engine's own calls report a dead server.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_redis.h"
#include "tc_lease.h"

#define KEYCAP (TC_OPT_STRMAX + TC_ID_MAX + 64)

/* KEYS: L B N; ARGV: token, ms, serving. 1 taken, 2 mine, 3 held */
static const char take_lua[] =
	"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
	"  redis.call('HINCRBY', KEYS[3], 'leases_taken', 1)\n"
	"  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HINCRBY', KEYS[3], 'lease_timeouts', 1) end\n"
	"  redis.call('SET', KEYS[2], '1', 'PX', tonumber(ARGV[2]) * 2 + 60000)\n"
	"  return 1\n"
	"end\n"
	"if redis.call('GET', KEYS[1]) == ARGV[1] then return 2 end\n"
	"if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[3], 'stale_served', 1) end\n"
	"return 3\n";

/* KEYS: L B Q W S R; ARGV: token, measured ms (0 none), clear stale (1/0),
 * release only (1/0). Returns whether a stale mark was cleared. */
static const char end_lua[] =
	"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
	"  redis.call('DEL', KEYS[1], KEYS[2])\n"
	"  if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[6], ARGV[2], 'EX', 86400) end\n"
	"elseif ARGV[4] == '1' then return 0 end\n"
	"local n = tonumber(redis.call('GET', KEYS[3]) or '0')\n"
	"if n > 0 then\n"
	"  if n > 1000 then n = 1000 end\n"
	"  for i = 1, n do redis.call('RPUSH', KEYS[4], '1') end\n"
	"  redis.call('PEXPIRE', KEYS[4], 5000)\n"
	"  redis.call('DEL', KEYS[3])\n"
	"end\n"
	"if ARGV[3] == '1' then return redis.call('DEL', KEYS[5]) end\n"
	"return 0\n";

/* KEYS: L Q; ARGV: token. The lease's PTTL after registering as a waiter;
 * -1: no lease (or ours: -2), do not wait. */
static const char wait_lua[] =
	"local v = redis.call('GET', KEYS[1])\n"
	"if not v then return -1 end\n"
	"if v == ARGV[1] then return -2 end\n"
	"local t = redis.call('PTTL', KEYS[1])\n"
	"if t <= 0 then return -1 end\n"
	"redis.call('INCR', KEYS[2])\n"
	"redis.call('PEXPIRE', KEYS[2], t + 5000)\n"
	"return t\n";

typedef struct {
	char b[KEYCAP];
	size_t n;
} rkey;

static int key(tcr_state *st, int shard, char kind, tc_str id, rkey *k)
{
	k->n = tcr_key(st, shard, kind, id.p, id.len, k->b, sizeof(k->b));
	return k->n ? TC_OK : TC_ERR;
}

/* One command on the id's shard; NULL (quietly: the previous state of
 * failure() is kept) on any failure. */
static redisReply *cmd(tcr_state *st, int shard, int argc, const char **argv, const size_t *lens)
{
	int fail = st->fail;
	redisReply *r;

	if (st->held) {
		tcr_reply_free(st->held);
		st->held = NULL;
	}
	st->fail = 0;
	r = tcr_shard_cmd(st, shard, 0, argc, argv, lens);
	if (r && r->type == REDIS_REPLY_ERROR) {
		tcr_reply_free(r);
		r = NULL;
	}
	st->fail = fail;
	return r;
}

static int rl_take(void *h, tc_str id, double timeout, int serving)
{
	tcr_state *st = h;
	int shard = tcr_shard_of(st, id.p, id.len), ret = TC_LEASE_NONE;
	rkey l, b, n;
	size_t tl;
	const char *tok = tc_lease_token(&tl);
	char ms[32];
	redisReply *r;

	if (key(st, shard, 'L', id, &l) || key(st, shard, 'B', id, &b)
	    || !(n.n = tcr_key(st, shard, 'N', NULL, 0, n.b, sizeof(n.b)))) {
		return TC_LEASE_NONE;
	}
	snprintf(ms, sizeof(ms), "%lld", (long long)ceil(timeout * 1000));
	{
		const char *argv[9] = {"EVAL", take_lua, "3", l.b, b.b, n.b, tok, ms, serving ? "1" : "0"};
		size_t lens[9] = {4, sizeof(take_lua) - 1, 1, l.n, b.n, n.n, tl, strlen(ms), 1};

		r = cmd(st, shard, 9, argv, lens);
	}
	if (r && r->type == REDIS_REPLY_INTEGER) {
		ret = r->integer == 1 ? TC_LEASE_TAKEN : r->integer == 2 ? TC_LEASE_MINE : TC_LEASE_HELD;
	}
	tcr_reply_free(r);
	return ret;
}

static int end_ex(tcr_state *st, tc_str id, uint32_t measured_ms, int *had_stale, int release)
{
	int shard = tcr_shard_of(st, id.p, id.len), ret = 0;
	rkey k[6];
	static const char kinds[6] = {'L', 'B', 'Q', 'W', 'S', 'R'};
	size_t tl;
	const char *tok = tc_lease_token(&tl);
	char ms[16];
	redisReply *r;
	int i;

	for (i = 0; i < 6; i++) {
		if (key(st, shard, kinds[i], id, &k[i])) {
			return 0;
		}
	}
	snprintf(ms, sizeof(ms), "%u", (unsigned)measured_ms);
	{
		const char *argv[13] = {"EVAL", end_lua, "6", k[0].b, k[1].b, k[2].b, k[3].b, k[4].b, k[5].b,
		                        tok, ms, had_stale ? "1" : "0", release ? "1" : "0"};
		size_t lens[13] = {4, sizeof(end_lua) - 1, 1, k[0].n, k[1].n, k[2].n, k[3].n, k[4].n, k[5].n,
		                   tl, strlen(ms), 1, 1};

		r = cmd(st, shard, 13, argv, lens);
	}
	if (r && r->type == REDIS_REPLY_INTEGER) {
		ret = r->integer > 0;
	}
	tcr_reply_free(r);
	return ret;
}

static void rl_end(void *h, tc_str id, uint32_t measured_ms, int *had_stale)
{
	int s = end_ex(h, id, measured_ms, had_stale, 0);

	if (had_stale) {
		*had_stale = s;
	}
}

static void rl_release(void *h, tc_str id)
{
	end_ex(h, id, 0, NULL, 1);
}

/* Blocks on the wake list, never longer than the lease has left nor half
 * the read timeout per BLPOP (the socket would give up first). */
static void rl_wait(void *h, tc_str id, double max_s)
{
	tcr_state *st = h;
	int shard = tcr_shard_of(st, id.p, id.len);
	rkey l, q, w;
	size_t tl;
	const char *tok = tc_lease_token(&tl);
	uint64_t until = tc_lease_now_ms() + (uint64_t)(max_s * 1000);
	double chunk = st->read_timeout > 0 ? st->read_timeout / 2 : 1.0;

	if (key(st, shard, 'L', id, &l) || key(st, shard, 'Q', id, &q) || key(st, shard, 'W', id, &w)) {
		return;
	}
	for (;;) {
		uint64_t now = tc_lease_now_ms();
		long long ttl;
		double s;
		char secs[32];
		redisReply *r;

		if (now >= until) {
			return;
		}
		{
			const char *argv[6] = {"EVAL", wait_lua, "2", l.b, q.b, tok};
			size_t lens[6] = {4, sizeof(wait_lua) - 1, 1, l.n, q.n, tl};

			r = cmd(st, shard, 6, argv, lens);
		}
		if (!r || r->type != REDIS_REPLY_INTEGER || r->integer <= 0) {
			tcr_reply_free(r);
			return;  /* no lease (ended or expired), ours, or a failure */
		}
		ttl = r->integer;
		tcr_reply_free(r);
		s = (double)ttl / 1000.0;
		if (s > (double)(until - now) / 1000.0) {
			s = (double)(until - now) / 1000.0;
		}
		if (s > chunk) {
			s = chunk;
		}
		if (s < 0.01) {
			s = 0.01;  /* 0 would block for ever */
		}
		snprintf(secs, sizeof(secs), "%.3f", s);
		{
			const char *argv[3] = {"BLPOP", w.b, secs};
			size_t lens[3] = {5, w.n, strlen(secs)};

			r = cmd(st, shard, 3, argv, lens);
		}
		if (!r) {
			return;
		}
		if (r->type == REDIS_REPLY_ARRAY) {
			tcr_reply_free(r);
			return;  /* woken: a value landed, or the holder gave up */
		}
		tcr_reply_free(r);  /* timed out: look at the lease again */
	}
}

static uint32_t rl_rebuild_ms(void *h, tc_str id)
{
	tcr_state *st = h;
	int shard = tcr_shard_of(st, id.p, id.len);
	rkey k;
	redisReply *r;
	uint32_t ms = 0;

	if (key(st, shard, 'R', id, &k)) {
		return 0;
	}
	{
		const char *argv[2] = {"GET", k.b};
		size_t lens[2] = {3, k.n};

		r = cmd(st, shard, 2, argv, lens);
	}
	if (r && r->type == REDIS_REPLY_STRING && r->len < 16) {
		char b[16];

		memcpy(b, r->str, r->len);
		b[r->len] = '\0';
		ms = (uint32_t)strtoul(b, NULL, 10);
	}
	tcr_reply_free(r);
	return ms;
}

static void rl_mark_stale(void *h, tc_str id, double secs)
{
	tcr_state *st = h;
	int shard = tcr_shard_of(st, id.p, id.len);
	rkey k;
	char ms[32];

	if (key(st, shard, 'S', id, &k)) {
		return;
	}
	snprintf(ms, sizeof(ms), "%lld", (long long)ceil(secs * 1000) + 1000);
	{
		const char *argv[5] = {"SET", k.b, "1", "PX", ms};
		size_t lens[5] = {3, k.n, 1, 2, strlen(ms)};

		tcr_reply_free(cmd(st, shard, 5, argv, lens));
	}
}

static void rl_count(void *h, int which)
{
	tcr_state *st = h;
	rkey n;

	if (!(n.n = tcr_key(st, 0, 'N', NULL, 0, n.b, sizeof(n.b)))) {
		return;
	}
	{
		const char *argv[4] = {"HINCRBY", n.b, tc_lease_stat_names[which], "1"};
		size_t lens[4] = {7, n.n, strlen(tc_lease_stat_names[which]), 1};

		tcr_reply_free(cmd(st, 0, 4, argv, lens));
	}
}

/* The sums over the shards' counter hashes. */
static void rl_stats(void *h, tc_stat_fn emit, void *ctx)
{
	tcr_state *st = h;
	int64_t sum[TC_LS_N] = {0};
	int s, i;
	size_t j;

	for (s = 0; s < st->nshards; s++) {
		rkey n;
		redisReply *r;

		if (!(n.n = tcr_key(st, s, 'N', NULL, 0, n.b, sizeof(n.b)))) {
			continue;
		}
		{
			const char *argv[2] = {"HGETALL", n.b};
			size_t lens[2] = {7, n.n};

			r = cmd(st, s, 2, argv, lens);
		}
		if (r && r->type == REDIS_REPLY_ARRAY) {
			for (j = 0; j + 1 < r->elements; j += 2) {
				redisReply *f = r->element[j], *v = r->element[j + 1];
				char b[32];

				if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING || v->len >= sizeof(b)) {
					continue;
				}
				memcpy(b, v->str, v->len);
				b[v->len] = '\0';
				for (i = 0; i < TC_LS_N; i++) {
					if (f->len == strlen(tc_lease_stat_names[i])
					    && memcmp(f->str, tc_lease_stat_names[i], f->len) == 0) {
						sum[i] += strtoll(b, NULL, 10);
					}
				}
			}
		}
		tcr_reply_free(r);
	}
	for (i = 0; i < TC_LS_N; i++) {
		emit(ctx, tc_lease_stat_names[i], sum[i]);
	}
}

const tc_lease_ops tc_lease_redis = {
	"redis", rl_take, rl_end, rl_release, rl_wait, rl_rebuild_ms, rl_mark_stale, rl_count, rl_stats,
};
