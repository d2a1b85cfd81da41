/*
 * tc_redis_sentinel.c: where a standalone or Sentinel-managed Redis takes
 * writes and reads, above the sockets of tc_redis_conn.c.
 *
 * - Standalone: the one server of "server".
 * - Sentinel ("server" lists the sentinels, "sentinel_master" names the
 *   set): the master comes from SENTINEL get-master-addr-by-name, cached
 *   per process, and is checked with ROLE; a READONLY reply or a dead
 *   master (tcr_master_failed) makes the next call ask the sentinels again.
 * - Reads go to a replica when load_from_slave names one or, with
 *   Sentinel, load_from_slaves asks for one (SENTINEL replicas, healthy
 *   ones only); a replica that fails sends reads to the master for the
 *   rest of the object's life.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tc_redis.h"

/* Sentinel answers, per process: which master a set of sentinels named. */
#define SENT_MAX 8
static struct {
	uint64_t key;
	tcr_addr master;
	int valid;
} sent_cache[SENT_MAX];

static uint64_t sentinel_key(const tcr_state *st)
{
	uint64_t h = UINT64_C(1469598103934665603);
	int i;

	for (i = 0; i < st->naddrs; i++) {
		h = tcr_fnv(h, &st->addrs[i], sizeof(st->addrs[i]));
	}
	return tcr_fnv(h, st->cfg.sentinel_master, strlen(st->cfg.sentinel_master));
}

static int sentinel_ask(tcr_state *st, tcr_addr *master)
{
	int i;
	char first_err[TC_ERRBUF];

	first_err[0] = '\0';
	for (i = 0; i < st->naddrs; i++) {
		tcr_conn *sc = tcr_conn_get(st, &st->addrs[i], -1, 1);
		const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", st->cfg.sentinel_master};
		size_t lens[3] = {8, 23, strlen(st->cfg.sentinel_master)};
		redisReply *r;

		if (!sc) {
			continue;
		}
		r = tcr_conn_cmd(st, sc, 3, argv, lens);
		if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]
		    && r->element[0]->type == REDIS_REPLY_STRING && r->element[1]
		    && r->element[1]->type == REDIS_REPLY_STRING) {
			memset(master, 0, sizeof(*master));
			snprintf(master->host, sizeof(master->host), "%s", r->element[0]->str);
			master->port = atoi(r->element[1]->str);
			tcr_reply_free(r);
			tcr_conn_release(st, sc);
			if (master->port > 0) {
				st->fail = 0;
				return TC_OK;
			}
			continue;
		}
		if (r) {
			if (!first_err[0]) {
				snprintf(first_err, sizeof(first_err), "%s: sentinel does not know master \"%s\"",
				         sc->name, st->cfg.sentinel_master);
			}
			tcr_reply_free(r);
		} else if (!first_err[0]) {
			snprintf(first_err, sizeof(first_err), "%s", st->err);
		}
		tcr_conn_release(st, sc);
	}
	return tcr_fail(st, "no sentinel gave a master for \"%s\" (%s)", st->cfg.sentinel_master,
	                first_err[0] ? first_err : "no sentinel reachable");
}

/* Replicas the sentinels know, healthy ones only. */
static int sentinel_replicas(tcr_state *st, tcr_addr *out, int max)
{
	int i, n = 0;

	for (i = 0; i < st->naddrs && n == 0; i++) {
		tcr_conn *sc = tcr_conn_get(st, &st->addrs[i], -1, 1);
		const char *argv[3] = {"SENTINEL", "replicas", st->cfg.sentinel_master};
		size_t lens[3] = {8, 8, strlen(st->cfg.sentinel_master)}, k, j;
		redisReply *r;

		if (!sc) {
			continue;
		}
		r = tcr_conn_cmd(st, sc, 3, argv, lens);
		if (r && r->type == REDIS_REPLY_ARRAY) {
			for (k = 0; k < r->elements && n < max; k++) {
				redisReply *e = r->element[k];
				const char *ip = NULL, *port = NULL, *flags = "";

				if (!e || e->type != REDIS_REPLY_ARRAY) {
					continue;
				}
				for (j = 0; j + 1 < e->elements; j += 2) {
					redisReply *kk = e->element[j], *vv = e->element[j + 1];

					if (!kk || !vv || kk->type != REDIS_REPLY_STRING || vv->type != REDIS_REPLY_STRING) {
						continue;
					}
					if (!strcmp(kk->str, "ip")) {
						ip = vv->str;
					} else if (!strcmp(kk->str, "port")) {
						port = vv->str;
					} else if (!strcmp(kk->str, "flags")) {
						flags = vv->str;
					}
				}
				if (ip && port && !strstr(flags, "s_down") && !strstr(flags, "o_down")
				    && !strstr(flags, "disconnected") && strlen(ip) < TCR_HOST_MAX) {
					memset(&out[n], 0, sizeof(out[n]));
					strcpy(out[n].host, ip);
					out[n].port = atoi(port);
					n++;
				}
			}
		}
		tcr_reply_free(r);
		tcr_conn_release(st, sc);
	}
	st->fail = 0;
	return n;
}

/* The connection writes go to. */
tcr_conn *tcr_master(tcr_state *st)
{
	if (tcr_conn_live(st->master)) {
		return st->master;
	}
	if (st->mode == TCR_SENTINEL) {
		uint64_t key = sentinel_key(st);
		int i, slot = -1, tries;

		for (i = 0; i < SENT_MAX; i++) {
			if (sent_cache[i].key == key) {
				slot = i;
				break;
			}
		}
		if (slot < 0) {
			slot = (int)(key % SENT_MAX);
			sent_cache[slot].key = key;
			sent_cache[slot].valid = 0;
		}
		for (tries = 0; tries < 2; tries++) {
			if (!sent_cache[slot].valid) {
				if (sentinel_ask(st, &sent_cache[slot].master) != TC_OK) {
					return NULL;
				}
				sent_cache[slot].valid = 1;
			}
			if (st->master && memcmp(&st->master->addr, &sent_cache[slot].master, sizeof(tcr_addr)) != 0) {
				tcr_conn_release(st, st->master);
				st->master = NULL;
			}
			if (!st->master) {
				st->master = tcr_conn_get(st, &sent_cache[slot].master, (int)st->cfg.database, 0);
				if (!st->master) {
					tcr_fail(st, "out of memory");
					return NULL;
				}
			}
			if (tcr_conn_ready_ex(st, st->master, 1) == TC_OK) {
				return st->master;
			}
			/* the named master is down or not a master: ask again once */
			sent_cache[slot].valid = 0;
			tcr_conn_release(st, st->master);
			st->master = NULL;
		}
		return NULL;
	}
	if (!st->master) {
		st->master = tcr_conn_get(st, &st->addrs[0], (int)st->cfg.database, 0);
		if (!st->master) {
			tcr_fail(st, "out of memory");
			return NULL;
		}
	}
	if (tcr_conn_ready(st, st->master) != TC_OK) {
		return NULL;
	}
	return st->master;
}

/* A master that failed or answered READONLY: ask the sentinels again. */
void tcr_master_failed(tcr_state *st, tcr_conn *cn)
{
	int i;

	if (cn) {
		tcr_conn_drop(cn);
	}
	if (st->mode != TCR_SENTINEL) {
		return;
	}
	for (i = 0; i < SENT_MAX; i++) {
		if (sent_cache[i].key == sentinel_key(st)) {
			sent_cache[i].valid = 0;
		}
	}
	if (st->master) {
		tcr_conn_release(st, st->master);
		st->master = NULL;
	}
}

/* The connection reads go to: a replica when configured and alive, else
 * the master. */
tcr_conn *tcr_reader(tcr_state *st)
{
	if ((st->nreplicas > 0 || (st->mode == TCR_SENTINEL && st->cfg.load_from_slaves > 0))
	    && st->replica_failed == 0) {
		if (!st->replica) {
			tcr_addr cand[TCR_ADDRS_MAX + 1];
			int n = 0;

			if (st->nreplicas > 0) {
				memcpy(cand, st->replicas, sizeof(tcr_addr) * (size_t)st->nreplicas);
				n = st->nreplicas;
			} else {
				n = sentinel_replicas(st, cand, TCR_ADDRS_MAX);
				if (st->cfg.load_from_slaves == 2) {
					tcr_conn *m = tcr_master(st);

					st->fail = 0;
					if (m) {
						cand[n++] = m->addr;
					}
				}
			}
			if (n > 0) {
				st->replica = tcr_conn_get(st, &cand[(unsigned)getpid() % (unsigned)n], (int)st->cfg.database, 0);
			}
		}
		if (st->replica && tcr_conn_ready(st, st->replica) == TC_OK) {
			return st->replica;
		}
		/* no replica: the master serves reads until this object is made again */
		st->fail = 0;
		st->replica_failed = 1;
	}
	return tcr_master(st);
}
