/*
 * tc_memcached_conn.c: libmemcached handles for TagCache\Memcached.
 *
 * One handle holds the whole server list with ketama (libketama-compatible
 * consistent hashing, weighted): adding or losing a server moves only its
 * share of the keys. A list of one server keeps libmemcached's modula
 * (the same answer, without a search of the continuum). Dead servers are never ejected (their keys would move
 * to a server that may hold stale copies): their keys miss until the server
 * answers again, and a failed server is not tried again for
 * retry_interval, so a dead memcached costs one connect timeout per
 * interval, not one per call.
 *
 * Fork: the fork hook bumps a generation counter in the child. A handle
 * made in an older generation shares its sockets with the parent; the
 * child never uses it and never frees it either (memcached_free() sends
 * "quit" and shuts the socket down, which would cut the parent's
 * connection): it is set aside, and the child connects anew.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tc_memcached.h"
#include "tc_hash.h"
#include "tc_util.h"

static tcm_conn *pool;      /* persistent handles of this process */
static tcm_conn *orphans;   /* handles inherited through fork: never used, never freed */
static unsigned long gen;
/* tc_backend_memcached.atfork_child, called by the module's one
 * pthread_atfork() */
void tcm_conn_atfork_child(void)
{
	gen++;
}

/* A handle of an older generation: set aside (see the top of the file). */
static void orphan(tcm_conn *cn)
{
	cn->next = orphans;
	orphans = cn;
}

static void results_free(tcm_conn *cn)
{
	while (cn->nres > 0) {
		memcached_result_free(&cn->res[--cn->nres]);
	}
}

static void conn_free(tcm_conn *cn)
{
	if (cn->gen != gen) {
		orphan(cn);
		return;
	}
	results_free(cn);
	if (cn->mc) {
		memcached_free(cn->mc);
	}
	free(cn->group);
	free(cn);
}

void tcm_conn_shutdown(void)
{
	tcm_conn *cn, *next;

	for (cn = pool; cn; cn = next) {
		next = cn->next;
		cn->next = NULL;
		conn_free(cn);
	}
	pool = NULL;
}

/* ---------------------------------------------------------- server list */

/* The server list, in the grammar of tc_net.h. */
static int parse_servers(const tcm_config *c, tc_addr *out, int max, char *err)
{
	return tc_addr_parse("servers", c->servers, (int)c->port, out, max, err);
}

int tcm_check_servers(const tcm_config *c, char *err)
{
	tc_addr sv[TCM_SERVERS_MAX];

	return parse_servers(c, sv, TCM_SERVERS_MAX, err) < 0 ? TC_ERR_CONFIG : TC_OK;
}

/* ------------------------------------------------------------- handles */

static uint64_t pool_key(const tcm_state *st)
{
	char buf[TC_OPT_STRMAX * 2 + 128];
	int n = snprintf(buf, sizeof(buf), "%s|%s|%lld|%lld|%lld|%d", st->cfg.persistent, st->cfg.servers,
	                 (long long)st->connect_ms, (long long)st->read_ms, (long long)st->retry_s,
	                 st->cfg.binary_protocol);

	return tc_hash(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, 0x6d656d63);
}

/* For each server, the first "g<k>" that ketama maps to it: writes to one
 * server go through it (memcached_*_by_key). */
static int find_groups(tcm_conn *cn)
{
	int found = 0, k;

	cn->group = calloc((size_t)cn->nservers, TCM_GROUP_MAX);
	if (!cn->group) {
		return -1;
	}
	for (k = 0; k < 1000000 && found < cn->nservers; k++) {
		char g[TCM_GROUP_MAX];
		int n = snprintf(g, sizeof(g), "g%d", k);
		uint32_t i = memcached_generate_hash(cn->mc, g, (size_t)n);

		if (i < (uint32_t)cn->nservers && !cn->group[i][0]) {
			memcpy(cn->group[i], g, (size_t)n + 1);
			found++;
		}
	}
	return found == cn->nservers ? 0 : -1;
}

static tcm_conn *conn_new(tcm_state *st, char *err)
{
	tc_addr sv[TCM_SERVERS_MAX];
	tcm_conn *cn;
	int n, i;

	n = parse_servers(&st->cfg, sv, TCM_SERVERS_MAX, err);
	if (n < 0) {
		return NULL;
	}
	cn = calloc(1, sizeof(*cn));
	if (!cn || !(cn->mc = memcached_create(NULL))) {
		free(cn);
		snprintf(err, TC_ERRBUF, "out of memory");
		return NULL;
	}
	cn->gen = gen;
	cn->nservers = n;
	for (i = 0; i < TCM_RESULTS; i++) {
		if (!memcached_result_create(cn->mc, &cn->res[i])) {
			results_free(cn);
			memcached_free(cn->mc);
			free(cn);
			snprintf(err, TC_ERRBUF, "out of memory");
			return NULL;
		}
		cn->slot[i] = &cn->res[i];
		cn->nres = i + 1;
	}
	/* ketama for a pool; one server keeps libmemcached's default (modula):
	 * every key maps to it either way, and a request then costs no search
	 * of ketama's continuum (~70 instructions a multi-get) */
	if (n > 1) {
		memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_DISTRIBUTION, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
		memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
	}
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
	/* no VERIFY_KEY: every key is made safe by construction (prefix checked
	 * at open, names outside [A-Za-z0-9_.{}-] hashed, tc_memcached.c
	 * make_key()); libmemcached's isgraph() of every byte cost ~270
	 * instructions a load. It still checks the length. */
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, (uint64_t)st->connect_ms);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t)st->read_ms);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_RCV_TIMEOUT, (uint64_t)st->read_ms * 1000);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_SND_TIMEOUT, (uint64_t)st->read_ms * 1000);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, (uint64_t)st->retry_s);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, (uint64_t)st->retry_s);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, 0);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 0);
	if (st->cfg.binary_protocol) {
		memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
	}
	cn->text = !st->cfg.binary_protocol;
	for (i = 0; i < n; i++) {
		memcached_return_t rc = sv[i].path[0]
			? memcached_server_add_unix_socket_with_weight(cn->mc, sv[i].path, sv[i].weight)
			: memcached_server_add_with_weight(cn->mc, sv[i].host, (in_port_t)sv[i].port, sv[i].weight);

		if (memcached_failed(rc)) {
			char name[TC_ADDR_NAME_MAX];

			tc_addr_name(&sv[i], name, sizeof(name));
			snprintf(err, TC_ERRBUF, "Option \"servers\": cannot add %.200s: %s", name, memcached_strerror(cn->mc, rc));
			results_free(cn);
			memcached_free(cn->mc);
			free(cn);
			return NULL;
		}
	}
	if (find_groups(cn) != 0) {
		snprintf(err, TC_ERRBUF, "cannot address every server of the pool");
		conn_free(cn);
		return NULL;
	}
	return cn;
}

/* The object's handle, made or found in the pool on first use; a handle
 * inherited through fork is replaced. NULL with a failure recorded. */
tcm_conn *tcm_conn_get(tcm_state *st)
{
	tcm_conn *cn = st->conn, **pp;
	char err[TC_ERRBUF];
	uint64_t key;

	if (cn && cn->gen == gen) {
		return cn;
	}
	if (cn) {
		/* inherited: the parent keeps using its sockets */
		if (cn->persistent) {
			for (pp = &pool; *pp; pp = &(*pp)->next) {
				if (*pp == cn) {
					*pp = cn->next;
					break;
				}
			}
		}
		orphan(cn);
		st->conn = NULL;
		st->reconnects++;
	}
	/* drop the pool's inherited handles too */
	for (pp = &pool; *pp;) {
		if ((*pp)->gen != gen) {
			tcm_conn *old = *pp;

			*pp = old->next;
			orphan(old);
		} else {
			pp = &(*pp)->next;
		}
	}
	key = pool_key(st);
	if (st->cfg.persistent[0]) {
		for (cn = pool; cn; cn = cn->next) {
			if (cn->key == key) {
				cn->refs++;
				return st->conn = cn;
			}
		}
	}
	err[0] = '\0';
	cn = conn_new(st, err);
	if (!cn) {
		st->fail = 1;
		st->errors++;
		snprintf(st->err, sizeof(st->err), "memcached: %.*s", (int)(sizeof(st->err) - 12), err);
		return NULL;
	}
	cn->key = key;
	cn->refs = 1;
	if (st->cfg.persistent[0]) {
		cn->persistent = 1;
		cn->next = pool;
		pool = cn;
	}
	return st->conn = cn;
}

void tcm_conn_release(tcm_state *st)
{
	tcm_conn *cn = st->conn;

	st->conn = NULL;
	if (!cn) {
		return;
	}
	if (cn->gen != gen) {
		if (!cn->persistent) {
			orphan(cn);
		}
		return;   /* a pooled one is set aside by the next tcm_conn_get() */
	}
	if (cn->persistent) {
		cn->refs--;
		return;   /* stays in the pool for the next object */
	}
	conn_free(cn);
}

/* ------------------------------------------------------------ failures */

void tcm_server_name(tcm_conn *cn, const char *group, size_t glen, char *buf, size_t len)
{
	memcached_return_t rc;
	const memcached_instance_st *in = group ? memcached_server_by_key(cn->mc, group, glen, &rc) : NULL;

	if (!in) {
		snprintf(buf, len, "memcached");
	} else if (strchr(memcached_server_name(in), '/')) {
		snprintf(buf, len, "%s", memcached_server_name(in));
	} else if (strchr(memcached_server_name(in), ':')) {
		snprintf(buf, len, "[%s]:%u", memcached_server_name(in), (unsigned)memcached_server_port(in));
	} else {
		snprintf(buf, len, "%s:%u", memcached_server_name(in), (unsigned)memcached_server_port(in));
	}
}

/* 1 when rc is the failure of a server or the network, not an outcome
 * (not found, not stored, too large). */
int tcm_rc_failure(memcached_return_t rc)
{
	switch (rc) {
	case MEMCACHED_SUCCESS:
	case MEMCACHED_NOTFOUND:
	case MEMCACHED_NOTSTORED:
	case MEMCACHED_DATA_EXISTS:
	case MEMCACHED_END:
	case MEMCACHED_STORED:
	case MEMCACHED_DELETED:
	case MEMCACHED_BUFFERED:
	case MEMCACHED_E2BIG:
	case MEMCACHED_VALUE:
		return 0;
	default:
		return 1;
	}
}

/* Records the failure of an operation on the server of `group`. */
int tcm_fail(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, memcached_return_t rc,
             const char *what)
{
	char name[300];

	tcm_server_name(cn, group, glen, name, sizeof(name));
	snprintf(st->err, sizeof(st->err), "%s: %s failed: %s", name, what, memcached_strerror(cn->mc, rc));
	st->fail = 1;
	st->errors++;
	return TC_ERR;
}
