/*
 * tc_stale.c: serve_stale over any engine's vtable (issue 14).
 *
 * With serve_stale on, the copy a remove() or a tag clean() takes out is
 * first written under a derived key (TC_STALE_PREFIX + id, no tags, the
 * lifetime serve_stale); an entry that expired less than serve_stale ago
 * is its own stale copy. Neither counts as an entry: test(), the listings
 * and the tags never show them (tc_class.c filters the derived keys out of
 * the listings). load() that finds no fresh value but a stale copy takes
 * the id's rebuild lease (tc_lease.c): the one caller that takes it gets
 * false and rebuilds; every other caller gets the stale copy until the
 * holder's save() ends the lease and drops the copy, or the lease runs out
 * (rebuild_timeout, or at once when the holder's process is gone).
 *
 * Early rebuild (xfetch, Vattani et al.): a load of a fresh entry whose
 * rebuild time delta is known returns false early when
 *     now - delta * beta * ln(rand()) >= expiry,
 * and only if it also takes the lease, so one caller rebuilds early while
 * the others keep getting the value.
 *
 * Nothing here holds an engine lock: every step is one vtable call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tc_lease.h"
#include "tc_util.h"

/* The derived key of id, in buf (TC_ID_MAX + TC_STALE_PREFIX_LEN bytes). */
static tc_str stale_key(tc_str id, char *buf)
{
	tc_str k;

	memcpy(buf, TC_STALE_PREFIX, TC_STALE_PREFIX_LEN);
	memcpy(buf + TC_STALE_PREFIX_LEN, id.p, id.len);
	k.p = buf;
	k.len = TC_STALE_PREFIX_LEN + id.len;
	return k;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A uniform draw in (0, 1], per process. */
static double draw(void)
{
	static uint64_t x;
	static pid_t owner;

	if (owner != tc_getpid()) {
		owner = tc_getpid();
		x = (uint64_t)time(NULL) * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)owner << 32 ^ (uint64_t)(uintptr_t)&x;
		x |= 1;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return ((double)(x >> 11) + 1.0) / 9007199254740992.0;
}

int tc_stale_load(tc_stale *S, tc_str id, tc_alloc_fn alloc, void *ctx, char **data,
                  size_t *len, tc_meta *meta)
{
	char kb[TC_ID_MAX + TC_STALE_PREFIX_LEN];
	int64_t now = tc_now();
	int r, have = 0;

	/* one engine call: the fresh value, or an expired one */
	r = S->be->load(S->st, id, 1, alloc, ctx, data, len, meta);
	if (r == TC_ERR) {
		return r;
	}
	if (r == TC_OK && meta->expire >= now) {
		if (S->o->early_rebuild > 0 && S->tab && meta->expire != TC_EXPIRE_NEVER) {
			uint32_t d = tc_lease_rebuild_ms(S->tab, id);

			if (d && now_s() - d / 1000.0 * S->o->early_rebuild * log(draw()) >= (double)meta->expire
			    && tc_lease_take(S->tab, id, tc_rebuild_timeout(S->o), 0) == TC_LEASE_TAKEN) {
				tc_lease_count(S->tab, TC_LS_EARLY_REBUILDS);
				return TC_MISS;
			}
		}
		return TC_OK;
	}
	if (!S->tab) {
		return TC_MISS;
	}
	if (!(S->o->serve_stale > 0)) {
		/* early_rebuild alone: a miss times its rebuild (the lease binds
		 * nobody else: without a stale copy they all miss anyway) */
		tc_lease_take(S->tab, id, tc_rebuild_timeout(S->o), 0);
		return TC_MISS;
	}
	if (r == TC_OK && (double)meta->expire + S->o->serve_stale >= (double)now) {
		have = 1;  /* expired lately: its own stale copy */
	} else if (S->be->load(S->st, stale_key(id, kb), 0, alloc, ctx, data, len, meta) == TC_OK) {
		have = 1;
	}
	if (!have) {
		if (S->o->early_rebuild > 0) {
			tc_lease_take(S->tab, id, tc_rebuild_timeout(S->o), 0);  /* to time the rebuild */
		}
		return TC_MISS;  /* a plain miss: nothing to serve */
	}
	r = tc_lease_take(S->tab, id, tc_rebuild_timeout(S->o), 1);
	if (r == TC_LEASE_HELD) {
		return TC_OK;  /* counted as stale_served by the take */
	}
	if (r == TC_LEASE_TAKEN) {
		/* the previous holder may have saved (and ended its lease) between
		 * the first read and this take, a few round trips on a network
		 * store: a fresh value now is served, and the lease goes back */
		r = S->be->load(S->st, id, 0, alloc, ctx, data, len, meta);
		if (r == TC_OK) {
			tc_lease_release(S->tab, id);
			return TC_OK;
		}
		if (r == TC_ERR) {
			tc_lease_release(S->tab, id);
			return TC_ERR;
		}
	}
	return TC_MISS;  /* this caller rebuilds */
}

int tc_stale_save(tc_stale *S, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                  int64_t expire, char *err)
{
	char kb[TC_ID_MAX + TC_STALE_PREFIX_LEN];
	int r = S->be->save(S->st, id, data, tags, ntags, expire, err);

	if (r == TC_OK && S->tab) {
		int had = 0;

		tc_lease_end(S->tab, id, 1, &had);
		if (had) {
			S->be->remove(S->st, stale_key(id, kb));
		}
	}
	return r;
}

static char *alloc_malloc(void *ctx, size_t len)
{
	char **p = ctx;

	free(*p);
	*p = malloc(len ? len : 1);
	return *p;
}

/* Writes the current copy of id (if any, and not expired longer than
 * serve_stale ago) under its derived key. Best effort: a store that is
 * full just has no stale copy. */
static void keep(tc_stale *S, tc_str id)
{
	char kb[TC_ID_MAX + TC_STALE_PREFIX_LEN], *buf = NULL, *data = NULL;
	size_t len = 0;
	tc_meta meta;
	int64_t now = tc_now();
	char err[TC_ERRBUF];

	if (tc_stale_key_is(id.p, id.len) || id.len > TC_ID_MAX) {
		return;
	}
	if (S->be->load(S->st, id, 1, alloc_malloc, &buf, &data, &len, &meta) == TC_OK
	    && (double)meta.expire + S->o->serve_stale >= (double)now) {
		tc_str v = {data, len};

		err[0] = '\0';
		if (S->be->save(S->st, stale_key(id, kb), v, NULL, 0,
		                now + (int64_t)ceil(S->o->serve_stale), err) == TC_OK) {
			tc_lease_mark_stale(S->tab, id, S->o->serve_stale);
		}
	}
	free(buf);
}

int tc_stale_remove(tc_stale *S, tc_str id)
{
	if (S->tab) {
		keep(S, id);
	}
	return S->be->remove(S->st, id);
}

typedef struct {
	tc_str *v;
	char *pool;
	size_t n, cap, used, pcap;
	int oom;
} idlist;

static void collect(void *ctx, const char *p, size_t len)
{
	idlist *l = ctx;

	if (l->oom || tc_stale_key_is(p, len)) {
		return;
	}
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 64;
		tc_str *v = realloc(l->v, c * sizeof(*v));

		if (!v) {
			l->oom = 1;
			return;
		}
		l->v = v;
		l->cap = c;
	}
	if (l->used + len > l->pcap) {
		/* offsets, not pointers, until the pool stops moving */
		size_t c = l->pcap ? l->pcap * 2 : 4096;
		char *np;

		while (c < l->used + len) {
			c *= 2;
		}
		np = realloc(l->pool, c);
		if (!np) {
			l->oom = 1;
			return;
		}
		l->pool = np;
		l->pcap = c;
	}
	memcpy(l->pool + l->used, p, len);
	l->v[l->n].p = (const char *)(uintptr_t)l->used;
	l->v[l->n].len = len;
	l->used += len;
	l->n++;
}

int tc_stale_clean(tc_stale *S, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	idlist l = {0};
	size_t i;
	int r;

	if (mode == TC_CLEAN_ALL || mode == TC_CLEAN_OLD || !S->tab) {
		return S->be->clean(S->st, mode, tags, ntags, err);
	}
	/* the tag modes: the entries they select, each kept, then removed;
	 * the engine's own clean would also take the stale copies (they carry
	 * no tag: notMatchingTag selects them) */
	r = S->be->ids(S->st, mode, tags, ntags, collect, &l);
	if (r == TC_ERR || l.oom) {
		free(l.v);
		free(l.pool);
		if (l.oom) {
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		return S->be->clean(S->st, mode, tags, ntags, err);
	}
	for (i = 0; i < l.n; i++) {
		tc_str id = {l.pool + (uintptr_t)l.v[i].p, l.v[i].len};

		keep(S, id);
		S->be->remove(S->st, id);
	}
	free(l.v);
	free(l.pool);
	return TC_OK;
}
