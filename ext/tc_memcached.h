/*
 * tc_memcached.h: the memcached engine's internals (TagCache\Memcached).
 *
 *   tc_memcached_conn.c  libmemcached handles: the server list, ketama,
 *                        timeouts, the per-process pool (fork-safe), a
 *                        group key per server, failure messages
 *   tc_memcached.c       the engine: options, key layout, the entry record,
 *                        tag versions and the tc_backend operations
 *
 * TECHNOTES.md ("Memcached") describes the key layout and what a load costs.
 */
#ifndef TC_MEMCACHED_H
#define TC_MEMCACHED_H

#include <stddef.h>
#include <stdint.h>
#include <libmemcached/memcached.h>
#include "tc_backend.h"
#include "tc_net.h"

#define TCM_SERVERS_MAX 64
#define TCM_KEY_MAX     250      /* memcached's key length limit */
#define TCM_GROUP_MAX   16       /* "g<number>": a key that maps to one server */
#define TCM_RESULTS     3        /* result buffers of a handle: two values taken whole, one spare */

#define TCM_ON_ERROR_MISS      TC_ON_ERROR_MISS       /* on_error (tc_net.h) */
#define TCM_ON_ERROR_EXCEPTION TC_ON_ERROR_EXCEPTION

typedef struct {
	char servers[TC_OPT_STRMAX];   /* addresses (tc_net.h), TC_OPT_SERVERS */
	int64_t port;                  /* for a server given without one */
	char persistent[TC_OPT_STRMAX];
	double timeout;                /* connect timeout, s */
	double read_timeout;           /* 0: same as timeout */
	double retry_interval;         /* a failed server is not tried again for this long */
	char on_error[TC_OPT_STRMAX];
	char prefix[TC_OPT_STRMAX];
	int64_t grace;                 /* s an expired entry stays readable with load($id, true) */
	int64_t compress_data;         /* zlib level, 0 = off */
	int compression;               /* Zend/Magento's bool: level 1 when compress_data is 0 */
	int64_t compress_threshold;
	int64_t max_item_size;         /* the server's item size limit (-I) */
	int binary_protocol;
	char client[TC_OPT_STRMAX];    /* Zend_Cache_Backend_Libmemcached's client options (TC_OPT_MAP) */
	int64_t hint_memory;           /* bytes of the per-process tag-hint table; 0: no hints */
	tc_stale_opts stale;           /* serve_stale, rebuild_timeout, early_rebuild (tc_memcached_lease.c) */
} tcm_config;

/* One libmemcached handle on the whole pool. Persistent ones live in a
 * per-process list and outlive the objects that use them. */
typedef struct tcm_conn {
	struct tcm_conn *next;
	uint64_t key;                  /* pool key */
	memcached_st *mc;
	unsigned long gen;             /* fork generation the handle was made in */
	int persistent;
	int refs;
	int nservers;
	int text;                      /* the text protocol: a multi-get's keys can go as one (tc_memcached.c mget()) */
	char (*group)[TCM_GROUP_MAX];  /* group[i]: a key that ketama maps to server i */
	/* mget()'s result buffers, kept from one call to the next (no malloc
	 * a reply): slot[] points into res[] in the order of the last mget */
	memcached_result_st res[TCM_RESULTS];
	memcached_result_st *slot[TCM_RESULTS];
	int nres;                      /* res[0..nres) created */
} tcm_conn;

typedef struct {
	tcm_config cfg;
	int on_error;
	int level;                     /* compression level in use */
	int64_t read_ms, connect_ms, retry_s;
	tcm_conn *conn;
	/* failure reporting */
	int fail;
	char err[TC_ERRBUF];
	char *held;                    /* a record kept while PHP allocates; freed by the next call */
	int64_t hits, misses, saves, removes, cleans, errors, too_large, collisions, reconnects;
	int64_t second_reads;           /* loads whose tag hint was missing or wrong: two round trips */
	/* from the prefix, set by mc_open() (tcm_state_prepare()) */
	size_t plen;                   /* strlen(cfg.prefix) */
	uint64_t phash;                /* the prefix's hash: a view's identity (view_of()) */
	char logkey[TC_OPT_STRMAX + 2];  /* <prefix>c */
	size_t logkey_len;
	/* view_of()'s last answer: the view of (handle, server 0) */
	const tcm_conn *vconn;
	uint64_t vid;
	unsigned vidx;
} tcm_state;

/* tc_memcached_conn.c */
void tcm_conn_atfork_child(void);  /* tc_backend_memcached.atfork_child */
void tcm_conn_shutdown(void);
int tcm_check_servers(const tcm_config *c, char *err);
tcm_conn *tcm_conn_get(tcm_state *st);
void tcm_conn_release(tcm_state *st);
void tcm_server_name(tcm_conn *cn, const char *group, size_t glen, char *buf, size_t len);
int tcm_rc_failure(memcached_return_t rc);
int tcm_fail(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, memcached_return_t rc,
             const char *what);

/* tc_memcached.c */
void tc_memcached_minfo(tc_info_fn emit, void *ctx);
void tc_memcached_shutdown(void);
extern const tc_backend tc_backend_memcached;

#endif
