/*
 * tc_memcached_lease.c: rebuild leases in memcached (issue 14), across
 * every node that shares the pool. Keys (the id hashed to 128 bits, so
 * any id fits memcached's key rules):
 *
 *   <prefix>ZL:<hash>  the lease: ADD with the lease's expiry, the value
 *                      "<owner token> <deadline ms>"; "-" once given back
 *   <prefix>ZB:<hash>  a lease was taken and not ended (a take that finds
 *                      it counts a lease timeout)
 *   <prefix>ZS:<hash>  a stale copy of id may exist
 *   <prefix>ZR:<hash>  the id's last measured rebuild time, ms
 *   <prefix>ZN:<name>  the counters (INCR)
 *
 * Taking: ADD; if the key exists, GETS it: our token is MINE, "-" (given
 * back) is replaced with a CAS, anything else is HELD. Ending or giving
 * back: GETS, and only if the value is still our token a CAS to "-" with
 * a 2 s expiry (libmemcached has no delete-if-CAS; a tombstone that a CAS
 * takes over is as good). memcached has no blocking read: a waiter polls
 * the lease with a back-off from 2 ms to 50 ms, bounded by the deadline in
 * the lease's value and by max_s (TECHNOTES: why). memcached's expiry is
 * in whole seconds: a lease lasts ceil(rebuild_timeout) s at the server,
 * the deadline in its value is exact.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tc_memcached.h"
#include "tc_lease.h"
#include "tc_hash.h"

#define TOMB "-"
#define TOMB_TTL 2
#define POLL_MIN_MS 2
#define POLL_MAX_MS 50

static size_t mkey(const tcm_state *st, char kind, tc_str id, char *buf)
{
	uint64_t h1 = tc_hash(id.p, id.len, UINT64_C(0x6c6561736531)), h2 = tc_hash(id.p, id.len, UINT64_C(0x6c6561736532));
	int n = snprintf(buf, TCM_KEY_MAX + 1, "%sZ%c:%016llx%016llx", st->cfg.prefix, kind,
	                 (unsigned long long)h1, (unsigned long long)h2);

	return n < 0 || n > TCM_KEY_MAX ? 0 : (size_t)n;
}

static size_t nkey(const tcm_state *st, const char *name, char *buf)
{
	int n = snprintf(buf, TCM_KEY_MAX + 1, "%sZN:%s", st->cfg.prefix, name);

	return n < 0 || n > TCM_KEY_MAX ? 0 : (size_t)n;
}

/* The handle, with the engine's pending failure kept as it was: a lease
 * call that fails is quiet. */
static tcm_conn *conn(tcm_state *st, int *fail)
{
	tcm_conn *cn;

	free(st->held);
	st->held = NULL;
	*fail = st->fail;
	cn = tcm_conn_get(st);
	if (!cn) {
		st->fail = *fail;
	}
	return cn;
}

/* GETS: the value (malloc'd, NUL-terminated) and its cas; NULL if absent. */
static char *gets(memcached_st *mc, const char *k, size_t kl, uint64_t *cas, memcached_return_t *rc)
{
	uint64_t had = memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS);
	const char *keys[1] = {k};
	size_t lens[1] = {kl};
	memcached_result_st *res;
	char *v = NULL;

	if (!had) {
		memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
	}
	*rc = memcached_mget(mc, keys, lens, 1);
	if (*rc == MEMCACHED_SUCCESS) {
		*rc = MEMCACHED_NOTFOUND;
		while ((res = memcached_fetch_result(mc, NULL, rc)) != NULL) {
			if (!v) {
				size_t n = memcached_result_length(res);

				v = malloc(n + 1);
				if (v) {
					memcpy(v, memcached_result_value(res), n);
					v[n] = '\0';
					*cas = memcached_result_cas(res);
				}
			}
			memcached_result_free(res);
		}
		if (v) {
			*rc = MEMCACHED_SUCCESS;
		}
	}
	if (!had) {
		memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 0);
	}
	return v;
}

/* "<token> <deadline>" is ours */
static int is_mine(const char *v, const char *tok, size_t tl)
{
	return strncmp(v, tok, tl) == 0 && v[tl] == ' ';
}

static void bump(tcm_state *st, tcm_conn *cn, int which)
{
	char k[TCM_KEY_MAX + 1];
	size_t kl = nkey(st, tc_lease_stat_names[which], k);
	uint64_t v;

	if (kl && memcached_increment(cn->mc, k, kl, 1, &v) == MEMCACHED_NOTFOUND
	    && memcached_add(cn->mc, k, kl, "1", 1, 0, 0) != MEMCACHED_SUCCESS) {
		memcached_increment(cn->mc, k, kl, 1, &v);  /* another one added it first */
	}
}

static int ml_take(void *h, tc_str id, double timeout, int serving)
{
	tcm_state *st = h;
	int fail, i, ret = TC_LEASE_NONE;
	tcm_conn *cn = conn(st, &fail);
	char lk[TCM_KEY_MAX + 1], bk[TCM_KEY_MAX + 1], val[200];
	size_t ll = mkey(st, 'L', id, lk), bl = mkey(st, 'B', id, bk), tl, vl;
	const char *tok = tc_lease_token(&tl);
	time_t ttl = (time_t)ceil(timeout);

	if (!cn || !ll || !bl) {
		return TC_LEASE_NONE;
	}
	if (ttl < 1) {
		ttl = 1;
	}
	vl = (size_t)snprintf(val, sizeof(val), "%s %llu", tok,
	                      (unsigned long long)(tc_lease_now_ms() + (uint64_t)ceil(timeout * 1000)));
	for (i = 0; i < 4; i++) {
		memcached_return_t rc = memcached_add(cn->mc, lk, ll, val, vl, ttl, 0);
		uint64_t cas = 0;
		char *cur;

		if (rc == MEMCACHED_SUCCESS) {
			ret = TC_LEASE_TAKEN;
			break;
		}
		if (rc != MEMCACHED_NOTSTORED && rc != MEMCACHED_DATA_EXISTS) {
			break;  /* the server failed: unprotected */
		}
		cur = gets(cn->mc, lk, ll, &cas, &rc);
		if (!cur) {
			if (rc == MEMCACHED_NOTFOUND) {
				continue;  /* it just expired: ADD again */
			}
			break;
		}
		if (is_mine(cur, tok, tl)) {
			free(cur);
			ret = TC_LEASE_MINE;
			break;
		}
		if (strcmp(cur, TOMB) == 0) {
			free(cur);
			if (memcached_cas(cn->mc, lk, ll, val, vl, ttl, 0, cas) == MEMCACHED_SUCCESS) {
				ret = TC_LEASE_TAKEN;
				break;
			}
			continue;  /* someone else took it first: look again */
		}
		free(cur);
		ret = TC_LEASE_HELD;
		break;
	}
	if (ret == TC_LEASE_TAKEN) {
		size_t dl;
		uint32_t flags;
		memcached_return_t rc;
		char *b = memcached_get(cn->mc, bk, bl, &dl, &flags, &rc);

		bump(st, cn, TC_LS_LEASES_TAKEN);
		if (b) {
			free(b);
			bump(st, cn, TC_LS_LEASE_TIMEOUTS);
		}
		memcached_set(cn->mc, bk, bl, "1", 1, ttl * 2 + 60, 0);
	} else if (ret == TC_LEASE_HELD && serving) {
		bump(st, cn, TC_LS_STALE_SERVED);
	}
	st->fail = fail;
	return ret;
}

/* The lease goes if it is still ours: CAS to the tombstone. */
static void give_back(tcm_state *st, tcm_conn *cn, tc_str id, uint32_t measured_ms)
{
	char lk[TCM_KEY_MAX + 1], bk[TCM_KEY_MAX + 1];
	size_t ll = mkey(st, 'L', id, lk), bl = mkey(st, 'B', id, bk), tl;
	const char *tok = tc_lease_token(&tl);
	uint64_t cas = 0;
	memcached_return_t rc;
	char *cur;

	if (!ll || !bl) {
		return;
	}
	cur = gets(cn->mc, lk, ll, &cas, &rc);
	if (!cur) {
		return;
	}
	if (is_mine(cur, tok, tl)
	    && memcached_cas(cn->mc, lk, ll, TOMB, 1, TOMB_TTL, 0, cas) == MEMCACHED_SUCCESS) {
		memcached_delete(cn->mc, bk, bl, 0);
		if (measured_ms) {
			char rk[TCM_KEY_MAX + 1], v[16];
			size_t rl = mkey(st, 'R', id, rk);

			snprintf(v, sizeof(v), "%u", (unsigned)measured_ms);
			if (rl) {
				memcached_set(cn->mc, rk, rl, v, strlen(v), 86400, 0);
			}
		}
	}
	free(cur);
}

static void ml_end(void *h, tc_str id, uint32_t measured_ms, int *had_stale)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);

	if (had_stale) {
		*had_stale = 0;
	}
	if (!cn) {
		return;
	}
	give_back(st, cn, id, measured_ms);
	if (had_stale) {
		char sk[TCM_KEY_MAX + 1];
		size_t sl = mkey(st, 'S', id, sk);

		*had_stale = sl && memcached_delete(cn->mc, sk, sl, 0) == MEMCACHED_SUCCESS;
	}
	st->fail = fail;
}

static void ml_release(void *h, tc_str id)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);

	if (cn) {
		give_back(st, cn, id, 0);
	}
	st->fail = fail;
}

/* memcached cannot block a reader until a key changes: a bounded poll */
static void ml_wait(void *h, tc_str id, double max_s)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);
	char lk[TCM_KEY_MAX + 1];
	size_t ll = mkey(st, 'L', id, lk), tl;
	const char *tok = tc_lease_token(&tl);
	uint64_t until = tc_lease_now_ms() + (uint64_t)(max_s * 1000), pause = POLL_MIN_MS;

	if (!cn || !ll) {
		st->fail = fail;
		return;
	}
	for (;;) {
		uint64_t now = tc_lease_now_ms(), dl, left;
		size_t vl;
		uint32_t flags;
		memcached_return_t rc;
		char *v = memcached_get(cn->mc, lk, ll, &vl, &flags, &rc);
		const char *sp;
		struct timespec ts;

		if (!v) {
			break;  /* ended and expired, or a failure */
		}
		sp = memchr(v, ' ', vl);
		if (!sp || is_mine(v, tok, tl) || vl > 190) {
			free(v);
			break;  /* given back ("-"), or ours */
		}
		{
			char b[32];
			size_t n = vl - (size_t)(sp + 1 - v);

			if (n >= sizeof(b)) {
				n = sizeof(b) - 1;
			}
			memcpy(b, sp + 1, n);
			b[n] = '\0';
			dl = strtoull(b, NULL, 10);
		}
		free(v);
		if (now >= until || now >= dl) {
			break;
		}
		left = (dl < until ? dl : until) - now;
		if (pause > left) {
			pause = left;
		}
		ts.tv_sec = (time_t)(pause / 1000);
		ts.tv_nsec = (long)(pause % 1000) * 1000000;
		nanosleep(&ts, NULL);
		pause = pause * 2 > POLL_MAX_MS ? POLL_MAX_MS : pause * 2;
	}
	st->fail = fail;
}

static uint32_t ml_rebuild_ms(void *h, tc_str id)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);
	char rk[TCM_KEY_MAX + 1];
	size_t rl = mkey(st, 'R', id, rk), vl;
	uint32_t flags, ms = 0;
	memcached_return_t rc;
	char *v;

	if (!cn || !rl) {
		st->fail = fail;
		return 0;
	}
	v = memcached_get(cn->mc, rk, rl, &vl, &flags, &rc);
	if (v) {
		char b[16];

		if (vl < sizeof(b)) {
			memcpy(b, v, vl);
			b[vl] = '\0';
			ms = (uint32_t)strtoul(b, NULL, 10);
		}
		free(v);
	}
	st->fail = fail;
	return ms;
}

static void ml_mark_stale(void *h, tc_str id, double secs)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);
	char sk[TCM_KEY_MAX + 1];
	size_t sl = mkey(st, 'S', id, sk);

	if (cn && sl) {
		memcached_set(cn->mc, sk, sl, "1", 1, (time_t)ceil(secs) + 1, 0);
	}
	st->fail = fail;
}

static void ml_count(void *h, int which)
{
	tcm_state *st = h;
	int fail;
	tcm_conn *cn = conn(st, &fail);

	if (cn) {
		bump(st, cn, which);
	}
	st->fail = fail;
}

static void ml_stats(void *h, tc_stat_fn emit, void *ctx)
{
	tcm_state *st = h;
	int fail, i;
	tcm_conn *cn = conn(st, &fail);

	for (i = 0; i < TC_LS_N; i++) {
		char k[TCM_KEY_MAX + 1];
		size_t kl = nkey(st, tc_lease_stat_names[i], k), vl;
		uint32_t flags;
		memcached_return_t rc;
		char *v = cn && kl ? memcached_get(cn->mc, k, kl, &vl, &flags, &rc) : NULL;
		int64_t n = 0;

		if (v) {
			char b[32];

			if (vl < sizeof(b)) {
				memcpy(b, v, vl);
				b[vl] = '\0';
				n = strtoll(b, NULL, 10);
			}
			free(v);
		}
		emit(ctx, tc_lease_stat_names[i], n);
	}
	st->fail = fail;
}

const tc_lease_ops tc_lease_memcached = {
	"memcached", ml_take, ml_end, ml_release, ml_wait, ml_rebuild_ms, ml_mark_stale, ml_count, ml_stats,
};
