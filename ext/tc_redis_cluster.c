/*
 * tc_redis_cluster.c: Redis Cluster above the sockets of tc_redis_conn.c:
 * the key slot (CRC16), a slot map from CLUSTER SLOTS per set of seed
 * nodes (shared by the objects of a process), MOVED and ASK followed; a
 * node that fails makes the next call read the map again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tc_redis.h"

struct tcr_cluster {
	struct tcr_cluster *next;
	uint64_t key;
	int nnodes;
	tcr_addr nodes[TCR_NODES_MAX];
	uint8_t slot_node[TCR_SLOTS];
	int ready;
};
static struct tcr_cluster *clusters;

static const uint16_t crc16tab[256] = {
	0x0000,0x1021,0x2042,0x3063,0x4084,0x50a5,0x60c6,0x70e7,0x8108,0x9129,0xa14a,0xb16b,0xc18c,0xd1ad,0xe1ce,0xf1ef,
	0x1231,0x0210,0x3273,0x2252,0x52b5,0x4294,0x72f7,0x62d6,0x9339,0x8318,0xb37b,0xa35a,0xd3bd,0xc39c,0xf3ff,0xe3de,
	0x2462,0x3443,0x0420,0x1401,0x64e6,0x74c7,0x44a4,0x5485,0xa56a,0xb54b,0x8528,0x9509,0xe5ee,0xf5cf,0xc5ac,0xd58d,
	0x3653,0x2672,0x1611,0x0630,0x76d7,0x66f6,0x5695,0x46b4,0xb75b,0xa77a,0x9719,0x8738,0xf7df,0xe7fe,0xd79d,0xc7bc,
	0x48c4,0x58e5,0x6886,0x78a7,0x0840,0x1861,0x2802,0x3823,0xc9cc,0xd9ed,0xe98e,0xf9af,0x8948,0x9969,0xa90a,0xb92b,
	0x5af5,0x4ad4,0x7ab7,0x6a96,0x1a71,0x0a50,0x3a33,0x2a12,0xdbfd,0xcbdc,0xfbbf,0xeb9e,0x9b79,0x8b58,0xbb3b,0xab1a,
	0x6ca6,0x7c87,0x4ce4,0x5cc5,0x2c22,0x3c03,0x0c60,0x1c41,0xedae,0xfd8f,0xcdec,0xddcd,0xad2a,0xbd0b,0x8d68,0x9d49,
	0x7e97,0x6eb6,0x5ed5,0x4ef4,0x3e13,0x2e32,0x1e51,0x0e70,0xff9f,0xefbe,0xdfdd,0xcffc,0xbf1b,0xaf3a,0x9f59,0x8f78,
	0x9188,0x81a9,0xb1ca,0xa1eb,0xd10c,0xc12d,0xf14e,0xe16f,0x1080,0x00a1,0x30c2,0x20e3,0x5004,0x4025,0x7046,0x6067,
	0x83b9,0x9398,0xa3fb,0xb3da,0xc33d,0xd31c,0xe37f,0xf35e,0x02b1,0x1290,0x22f3,0x32d2,0x4235,0x5214,0x6277,0x7256,
	0xb5ea,0xa5cb,0x95a8,0x8589,0xf56e,0xe54f,0xd52c,0xc50d,0x34e2,0x24c3,0x14a0,0x0481,0x7466,0x6447,0x5424,0x4405,
	0xa7db,0xb7fa,0x8799,0x97b8,0xe75f,0xf77e,0xc71d,0xd73c,0x26d3,0x36f2,0x0691,0x16b0,0x6657,0x7676,0x4615,0x5634,
	0xd94c,0xc96d,0xf90e,0xe92f,0x99c8,0x89e9,0xb98a,0xa9ab,0x5844,0x4865,0x7806,0x6827,0x18c0,0x08e1,0x3882,0x28a3,
	0xcb7d,0xdb5c,0xeb3f,0xfb1e,0x8bf9,0x9bd8,0xabbb,0xbb9a,0x4a75,0x5a54,0x6a37,0x7a16,0x0af1,0x1ad0,0x2ab3,0x3a92,
	0xfd2e,0xed0f,0xdd6c,0xcd4d,0xbdaa,0xad8b,0x9de8,0x8dc9,0x7c26,0x6c07,0x5c64,0x4c45,0x3ca2,0x2c83,0x1ce0,0x0cc1,
	0xef1f,0xff3e,0xcf5d,0xdf7c,0xaf9b,0xbfba,0x8fd9,0x9ff8,0x6e17,0x7e36,0x4e55,0x5e74,0x2e93,0x3eb2,0x0ed1,0x1ef0
};

uint16_t tcr_crc16(const char *p, size_t len)
{
	uint16_t crc = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		crc = (uint16_t)((crc << 8) ^ crc16tab[((crc >> 8) ^ (unsigned char)p[i]) & 0xff]);
	}
	return crc;
}

static int cluster_node_index(struct tcr_cluster *cl, const tcr_addr *a)
{
	int i;

	for (i = 0; i < cl->nnodes; i++) {
		if (cl->nodes[i].port == a->port && strcmp(cl->nodes[i].host, a->host) == 0) {
			return i;
		}
	}
	if (cl->nnodes == TCR_NODES_MAX) {
		return -1;
	}
	cl->nodes[cl->nnodes] = *a;
	return cl->nnodes++;
}

static int cluster_refresh(tcr_state *st, struct tcr_cluster *cl)
{
	int i;
	char first_err[TC_ERRBUF];

	first_err[0] = '\0';
	for (i = 0; i < st->naddrs + cl->nnodes; i++) {
		const tcr_addr *seed = i < st->naddrs ? &st->addrs[i] : &cl->nodes[i - st->naddrs];
		tcr_conn *sc = tcr_conn_get(st, seed, -1, 0);
		const char *argv[2] = {"CLUSTER", "SLOTS"};
		size_t lens[2] = {7, 5}, k;
		redisReply *r;
		int covered = 0;

		if (!sc) {
			continue;
		}
		r = tcr_conn_cmd(st, sc, 2, argv, lens);
		if (!r || r->type != REDIS_REPLY_ARRAY) {
			if (!first_err[0]) {
				if (r && r->type == REDIS_REPLY_ERROR) {
					snprintf(first_err, sizeof(first_err), "%s: CLUSTER SLOTS: %.200s", sc->name, r->str);
				} else {
					snprintf(first_err, sizeof(first_err), "%s", st->err);
				}
			}
			tcr_reply_free(r);
			tcr_conn_release(st, sc);
			continue;
		}
		for (k = 0; k < r->elements; k++) {
			redisReply *e = r->element[k], *n;
			tcr_addr a;
			long long from, to, s;
			int idx;

			if (!e || e->type != REDIS_REPLY_ARRAY || e->elements < 3 || !e->element[0] || !e->element[1]
			    || e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER) {
				continue;
			}
			n = e->element[2];
			if (!n || n->type != REDIS_REPLY_ARRAY || n->elements < 2 || !n->element[0] || !n->element[1]
			    || n->element[0]->type != REDIS_REPLY_STRING || n->element[1]->type != REDIS_REPLY_INTEGER) {
				continue;
			}
			memset(&a, 0, sizeof(a));
			if (n->element[0]->len == 0 || n->element[0]->len >= TCR_HOST_MAX) {
				snprintf(a.host, sizeof(a.host), "%s", seed->host);
			} else {
				memcpy(a.host, n->element[0]->str, n->element[0]->len);
			}
			a.port = (int)n->element[1]->integer;
			idx = cluster_node_index(cl, &a);
			from = e->element[0]->integer;
			to = e->element[1]->integer;
			if (idx < 0 || from < 0 || to >= TCR_SLOTS || from > to) {
				continue;
			}
			for (s = from; s <= to; s++) {
				cl->slot_node[s] = (uint8_t)idx;
			}
			covered += (int)(to - from + 1);
		}
		tcr_reply_free(r);
		tcr_conn_release(st, sc);
		if (covered > 0) {
			cl->ready = 1;
			st->fail = 0;
			return TC_OK;
		}
	}
	return tcr_fail(st, "no cluster node gave a slot map (%s)", first_err[0] ? first_err : "no seed reachable");
}

int tcr_cluster_init(tcr_state *st)
{
	uint64_t key = UINT64_C(1469598103934665603);
	struct tcr_cluster *cl;
	int i;

	for (i = 0; i < st->naddrs; i++) {
		key = tcr_fnv(key, &st->addrs[i], sizeof(st->addrs[i]));
	}
	for (cl = clusters; cl; cl = cl->next) {
		if (cl->key == key) {
			break;
		}
	}
	if (!cl) {
		cl = calloc(1, sizeof(*cl));
		if (!cl) {
			return tcr_fail(st, "out of memory");
		}
		cl->key = key;
		cl->next = clusters;
		clusters = cl;
	}
	st->cl = cl;
	if (!cl->ready) {
		return cluster_refresh(st, cl);
	}
	return TC_OK;
}

tcr_conn *tcr_cluster_node(tcr_state *st, int slot)
{
	struct tcr_cluster *cl;
	int idx;

	if (!st->cl && tcr_cluster_init(st) != TC_OK) {
		return NULL;
	}
	cl = st->cl;
	if (!cl->ready && cluster_refresh(st, cl) != TC_OK) {
		return NULL;
	}
	idx = cl->slot_node[slot];
	if (idx >= cl->nnodes) {
		tcr_fail(st, "cluster slot %d has no node", slot);
		return NULL;
	}
	if (st->nodes[idx] && memcmp(&st->nodes[idx]->addr, &cl->nodes[idx], sizeof(tcr_addr)) != 0) {
		tcr_conn_release(st, st->nodes[idx]);
		st->nodes[idx] = NULL;
	}
	if (!st->nodes[idx]) {
		st->nodes[idx] = tcr_conn_get(st, &cl->nodes[idx], -1, 0);
		if (!st->nodes[idx]) {
			tcr_fail(st, "out of memory");
			return NULL;
		}
	}
	if (tcr_conn_ready(st, st->nodes[idx]) != TC_OK) {
		/* the node may have gone: refresh the map on the next call */
		cl->ready = 0;
		return NULL;
	}
	return st->nodes[idx];
}

void tcr_cluster_stale(tcr_state *st)
{
	if (st->cl) {
		st->cl->ready = 0;
	}
}

/* "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381": points the
 * slot at the node (MOVED) and returns the node to ask. */
int tcr_cluster_redirect(tcr_state *st, const char *msg, int *asking, tcr_conn **to)
{
	struct tcr_cluster *cl = st->cl;
	const char *p;
	char *end;
	long slot;
	tcr_addr a;
	char err[TC_ERRBUF];
	int idx;

	*asking = strncmp(msg, "ASK ", 4) == 0;
	if (!cl || (!*asking && strncmp(msg, "MOVED ", 6) != 0)) {
		return TC_ERR;
	}
	p = msg + (*asking ? 4 : 6);
	slot = strtol(p, &end, 10);
	if (end == p || *end != ' ' || slot < 0 || slot >= TCR_SLOTS) {
		return TC_ERR;
	}
	if (tc_addr_parse("server", end + 1, 6379, &a, 1, err) != 1 || a.path[0]) {
		return TC_ERR;
	}
	idx = cluster_node_index(cl, &a);
	if (idx < 0) {
		return TC_ERR;
	}
	if (!*asking) {
		cl->slot_node[slot] = (uint8_t)idx;
	}
	if (!st->nodes[idx]) {
		st->nodes[idx] = tcr_conn_get(st, &cl->nodes[idx], -1, 0);
	}
	if (!st->nodes[idx] || tcr_conn_ready(st, st->nodes[idx]) != TC_OK) {
		return TC_ERR;
	}
	*to = st->nodes[idx];
	st->redirects++;
	return TC_OK;
}

void tcr_cluster_shutdown(void)
{
	while (clusters) {
		struct tcr_cluster *n = clusters->next;

		free(clusters);
		clusters = n;
	}
}
