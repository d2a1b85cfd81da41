/*
 * tc_redis.h: the Redis engine's internals (TagCache\Redis).
 *
 * A stack, each file calling only those below it:
 *
 *   tc_redis.c          the engine: options and the tc_backend operations
 *   tc_redis_lua.c      the Lua scripts and EVALSHA (NOSCRIPT reloads them)
 *   tc_redis_cmd.c      key layout, the entry record, shard routing
 *   tc_redis_sentinel.c the master and the replica: standalone or Sentinel
 *   tc_redis_cluster.c  the Cluster slot map, MOVED and ASK
 *   tc_redis_conn.c     sockets: connect/auth/select, timeouts, retries,
 *                       the per-process pool (fork-safe), bounded replies
 *   tc_redis_codec.c    compression (gzip, lz4, zstd) with a size bound
 *   tc_net.c            the address grammar, on_error (shared with memcached)
 *
 * TECHNOTES.md ("Redis") describes the key layout and the scripts.
 */
#ifndef TC_REDIS_H
#define TC_REDIS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>
#include "tc_backend.h"
#include "tc_net.h"

#define TCR_SLOTS       16384
#define TCR_SHARDS_MAX  1024
#define TCR_HOST_MAX    TC_ADDR_HOST_MAX
#define TCR_ADDRS_MAX   16       /* servers in a comma list */
#define TCR_NODES_MAX   64       /* cluster masters */
#define TCR_HDR         34       /* entry record header, see tc_redis_cmd.c */
#define TCR_RECORD_VERSION 2
#define TCR_HASHTAG_MAX 24
#define TCR_SCORE_SCALE 65536.0  /* a save's score: expire * 65536 + version */
#define TCR_BUCKET_DIV  16       /* expiry bucket: 1/16 of the time left ... */
#define TCR_BUCKET_MAX  60       /* ... at most 60 s (tcr_bucket) */

/* on_error (tc_net.h) */
#define TCR_ON_ERROR_MISS      TC_ON_ERROR_MISS
#define TCR_ON_ERROR_EXCEPTION TC_ON_ERROR_EXCEPTION

/* verify_tags */
#define TCR_VERIFY_AUTO 0
#define TCR_VERIFY_ON   1
#define TCR_VERIFY_OFF  2

/* codecs, as stored in the record's flags byte */
#define TCR_CODEC_NONE 0
#define TCR_CODEC_GZIP 1
#define TCR_CODEC_LZ4  2
#define TCR_CODEC_ZSTD 3

typedef struct {
	char server[TC_OPT_STRMAX];
	int64_t port;
	int64_t database;
	char username[TC_OPT_STRMAX];
	char password[TC_OPT_STRMAX];
	char persistent[TC_OPT_STRMAX];
	double timeout;          /* connect timeout, s */
	double read_timeout;     /* 0: same as timeout */
	int64_t connect_retries; /* attempts per connect */
	double retry_interval;   /* a server that failed is not tried again for this long */
	char on_error[TC_OPT_STRMAX];
	char prefix[TC_OPT_STRMAX];
	int64_t grace;           /* s an expired entry stays readable with load($id, true) */
	int64_t compress_data;   /* level, 0 = off */
	int64_t compress_threshold;
	char compression_lib[TC_OPT_STRMAX];
	int64_t max_value_size;  /* bound on a decompressed value and on a reply */
	int64_t lifetimelimit;   /* 0 = none */
	int64_t automatic_cleaning_factor;
	char load_from_slave[TC_OPT_STRMAX];
	int64_t load_from_slaves;
	int retry_reads_on_master;
	char sentinel_master[TC_OPT_STRMAX];
	char sentinel_username[TC_OPT_STRMAX];
	char sentinel_password[TC_OPT_STRMAX];
	int cluster;
	int64_t shards;          /* 0 = auto: 1, or 16 on a cluster */
	int64_t remove_chunk_size;
	char verify_tags[TC_OPT_STRMAX];
	double verify_tags_recheck; /* auto: s between two reads of a server's maxmemory-policy */
	tc_stale_opts stale;     /* serve_stale, rebuild_timeout, early_rebuild (tc_redis_lease.c) */
} tcr_config;

/* One server address: host and port, or a unix socket path (tc_net.h;
 * the weight is not used). */
typedef tc_addr tcr_addr;

/* One socket to one server. Persistent ones live in a per-process pool and
 * outlive the objects that use them; the others belong to one object. */
typedef struct tcr_conn {
	struct tcr_conn *next;    /* pool list */
	uint64_t key;             /* pool key: hash of address, db, credentials, persistent id */
	tcr_addr addr;
	char name[TCR_HOST_MAX + 16]; /* "host:port" or the socket path, for messages */
	redisContext *c;
	unsigned long gen;        /* fork generation the socket was made in */
	int persistent;
	int refs;                 /* objects using a pooled connection */
	int used;                 /* at least one command completed on this socket */
	int db;                   /* SELECTed after connecting; < 0: none */
	int sentinel;             /* a sentinel: sentinel credentials, no SELECT */
	int eviction;             /* -1 unknown, 0 no eviction, 1 the server may evict */
	double eviction_at;       /* when eviction was read (tcr_now_f), 0: never */
	/* bounded reading: what the current reply may still allocate */
	size_t budget_elems;
	int too_large;
} tcr_conn;

/* Where commands go. */
enum { TCR_STANDALONE = 0, TCR_SENTINEL, TCR_CLUSTER };

typedef struct tcr_state tcr_state;

/* A TwoLevel journal record armed for the engine's next write
 * (tc_journal_ops.arm in tc_redis_journal.c): the journal's keys and the
 * script arguments; *done is set when a write script appended it. */
typedef struct {
	char key[3][TC_OPT_STRMAX + 64];   /* seq, log, epoch */
	size_t klen[3];
	char epoch[64];
	char keep[24];
	size_t elen, kplen;
	tc_str rec;
	int *done;
} tcr_jarm;

struct tcr_state {
	tcr_config cfg;
	int mode;
	int on_error;
	int verify;
	int codec;               /* for writes */
	int level;
	tcr_addr addrs[TCR_ADDRS_MAX];   /* server list: the server, sentinels or seeds */
	int naddrs;
	tcr_addr replicas[TCR_ADDRS_MAX];
	int nreplicas;
	double read_timeout;
	/* routing */
	tcr_conn *master;        /* standalone and sentinel */
	tcr_conn *replica;       /* reads, when load_from_slave(s) */
	int replica_failed;      /* replica unusable: reads go to the master */
	struct tcr_cluster *cl;  /* cluster slot map (shared per process) */
	tcr_conn *nodes[TCR_NODES_MAX]; /* this object's handles on cluster nodes */
	/* key layout */
	int nshards;
	char (*hashtag)[TCR_HASHTAG_MAX];
	uint16_t *shard_slot;
	size_t plen;
	/* failure reporting */
	int fail;                /* a failure is pending for failure() */
	char err[TC_ERRBUF];
	unsigned long tmp_seq;
	redisReply *held;        /* a reply kept while PHP callbacks run */
	tcr_jarm *jarm;          /* TwoLevel: a journal record for the next write, or NULL */
	char last[TCR_HOST_MAX + 16]; /* the server that gave the last reply, for messages */
	/* counters of this object */
	int64_t hits, misses, saves, removes, cleans, errors, reconnects, redirects, noscript, bad_records;
};

/* tc_redis_conn.c */
void tcr_conn_atfork_child(void);  /* tc_backend_redis.atfork_child */
void tcr_conn_shutdown(void);
double tcr_now_f(void);
uint64_t tcr_fnv(uint64_t h, const void *p, size_t n);
tcr_conn *tcr_conn_get(tcr_state *st, const tcr_addr *a, int db, int sentinel);
void tcr_conn_release(tcr_state *st, tcr_conn *cn);
void tcr_conn_drop(tcr_conn *cn);
int tcr_conn_ready(tcr_state *st, tcr_conn *cn);
int tcr_conn_ready_ex(tcr_state *st, tcr_conn *cn, int want_role);  /* want_role: check ROLE is master */
int tcr_conn_live(const tcr_conn *cn);
redisReply *tcr_conn_cmd(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens);
int tcr_conn_may_evict(tcr_state *st, tcr_conn *cn);
int tcr_conn_send(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens);
redisReply *tcr_conn_recv(tcr_state *st, tcr_conn *cn);
void tcr_reply_free(redisReply *r);
int tcr_fail(tcr_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tcr_log_failure(const char *msg);
uint32_t tcr_rand(void);
int tcr_reply_err(tcr_state *st, tcr_conn *cn, redisReply *r, const char *what);
void tcr_release_all(tcr_state *st);

/* tc_redis_sentinel.c */
tcr_conn *tcr_master(tcr_state *st);
tcr_conn *tcr_reader(tcr_state *st);
void tcr_master_failed(tcr_state *st, tcr_conn *cn);

/* tc_redis_cluster.c */
void tcr_cluster_shutdown(void);
int tcr_cluster_init(tcr_state *st);
tcr_conn *tcr_cluster_node(tcr_state *st, int slot);
void tcr_cluster_stale(tcr_state *st);
int tcr_cluster_redirect(tcr_state *st, const char *msg, int *asking, tcr_conn **to);
uint16_t tcr_crc16(const char *p, size_t len);

/* tc_redis_cmd.c: commands for one shard, routed (cluster redirects,
 * replica reads) */
redisReply *tcr_shard_cmd(tcr_state *st, int shard, int read, int argc, const char **argv,
                          const size_t *lens);
int tcr_shard_of(const tcr_state *st, const char *id, size_t len);
int tcr_layout_init(tcr_state *st, char *err);
size_t tcr_key(const tcr_state *st, int shard, char kind, const char *name, size_t nlen,
               char *buf, size_t cap);
size_t tcr_shard_prefix(const tcr_state *st, int shard, char *buf, size_t cap);
typedef struct {
	int64_t expire, mtime;
	const char *tags;   /* (u16 len, bytes) pairs */
	uint32_t tags_len;
	uint32_t raw_len;   /* value length after decompression */
	int codec;
	const char *data;   /* stored value bytes */
	size_t data_len;
} tcr_record;
int tcr_record_parse(const char *p, size_t len, tcr_record *r, int header_only);
char *tcr_record_build(tcr_state *st, tc_str data, const tc_str *tags, size_t ntags,
                       double score, int64_t expire, int64_t mtime, size_t *outlen);
int64_t tcr_bucket(int64_t expire, int64_t now);

/* tc_redis_lua.c */
enum {
	TCR_LUA_SAVE = 0,
	TCR_LUA_REMOVE,
	TCR_LUA_CLEAN,
	TCR_LUA_IDS,
	TCR_LUA_TOUCH,
	TCR_LUA_META,
	TCR_LUA_LOADV,    /* load that checks the entry's tag links (verify_tags) */
	TCR_LUA_GCTAGS,
	TCR_LUA_TAGS,     /* getTags: registry names with a valid link */
	TCR_LUA_VERIFY,
	/* the writes with TwoLevel's journal append in the same script: 3 more
	 * KEYS and 3 more ARGV at the ends (tc_redis_journal.c, tcr_jarm) */
	TCR_LUA_SAVE_J,
	TCR_LUA_REMOVE_J,
	TCR_LUA_CLEAN_J,
	TCR_LUA_JAPPEND,  /* the journal alone: append, read */
	TCR_LUA_JREAD,
	TCR_LUA_COUNT
};
int tcr_lua_init(void);
void tcr_lua_shutdown(void);
redisReply *tcr_eval(tcr_state *st, int shard, int script, int read, int nkeys, int argc,
                     const char **argv, const size_t *lens);

/* tc_redis_codec.c */
int tcr_codec_by_name(const char *name, int *codec);
const char *tcr_codec_names(void);
int tcr_compress(int codec, int level, const char *in, size_t inlen, char *out, size_t *outlen);
size_t tcr_compress_bound(int codec, size_t inlen);
int tcr_decompress(int codec, const char *in, size_t inlen, char *out, size_t outlen);

/* tc_redis.c */
void tc_redis_minfo(tc_info_fn emit, void *ctx);
void tc_redis_shutdown(void);
extern const tc_backend tc_backend_redis;

#endif
