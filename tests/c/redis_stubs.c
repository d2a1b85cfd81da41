/*
 * redis_stubs.c: the connection-side functions ext/tc_redis_cmd.c calls
 * (routing a command to a server), for the Redis record tests: they build
 * only tc_redis_cmd.c and tc_redis_codec.c (no server, no libhiredis to
 * link). None of them is reachable from the record and codec code; each
 * aborts if called.
 */
#include <stdio.h>
#include <stdlib.h>
#include "../../ext/tc_redis.h"

static void unreachable(const char *fn)
{
	fprintf(stderr, "redis_stubs: %s() called: the record tests reach no server\n", fn);
	abort();
}

tcr_conn *tcr_cluster_node(tcr_state *st, int slot)
{
	(void)st;
	(void)slot;
	unreachable(__func__);
	return NULL;
}

int tcr_cluster_redirect(tcr_state *st, const char *msg, int *asking, tcr_conn **to)
{
	(void)st;
	(void)msg;
	(void)asking;
	(void)to;
	unreachable(__func__);
	return TC_ERR;
}

void tcr_cluster_stale(tcr_state *st)
{
	(void)st;
	unreachable(__func__);
}

redisReply *tcr_conn_cmd(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	(void)st;
	(void)cn;
	(void)argc;
	(void)argv;
	(void)lens;
	unreachable(__func__);
	return NULL;
}

int tcr_conn_send(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	(void)st;
	(void)cn;
	(void)argc;
	(void)argv;
	(void)lens;
	unreachable(__func__);
	return TC_ERR;
}

redisReply *tcr_conn_recv(tcr_state *st, tcr_conn *cn)
{
	(void)st;
	(void)cn;
	unreachable(__func__);
	return NULL;
}

void tcr_reply_free(redisReply *r)
{
	(void)r;
	unreachable(__func__);
}

uint16_t tcr_crc16(const char *p, size_t len)
{
	(void)p;
	(void)len;
	unreachable(__func__);
	return 0;
}

int tcr_fail(tcr_state *st, const char *fmt, ...)
{
	(void)st;
	(void)fmt;
	unreachable(__func__);
	return TC_ERR;
}

tcr_conn *tcr_master(tcr_state *st)
{
	(void)st;
	unreachable(__func__);
	return NULL;
}

tcr_conn *tcr_reader(tcr_state *st)
{
	(void)st;
	unreachable(__func__);
	return NULL;
}

void tcr_master_failed(tcr_state *st, tcr_conn *cn)
{
	(void)st;
	(void)cn;
	unreachable(__func__);
}
