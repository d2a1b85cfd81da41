/*
 * tc_redis.c: the Redis engine behind TagCache\Redis: its options (the
 * Cm_Cache_Backend_Redis names with the same meaning, plus ours) and the
 * operations of the tc_backend vtable.
 *
 * A load is one GET of the entry record (or, when the server may evict
 * keys, one script that also checks the entry's index keys still exist);
 * every write and every tag query is one Lua script per shard
 * (tc_redis_lua.c). Nothing connects before the first call: a backend can
 * be constructed while Redis is down. Failures are recorded in the state
 * and reported once per call through failure(): with on_error=miss the
 * call returns a miss (false) and the failure goes to the error log, with
 * on_error=exception the common layer throws TagCache\ConnectionException.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "tc_redis.h"
#include "tc_lease.h"
#include "tc_util.h"

#define PAGE      10000   /* ids or tags per reply when listing */
#define KEYBUF    (TC_OPT_STRMAX + TC_ID_MAX + 64)
#define PREFIX_MAX 128
#define LOOPS_MAX 1000000 /* bound on script calls of one clean */

static const tc_option_spec redis_options[] = {
	{"server", TC_OPT_SERVERS, offsetof(tcr_config, server), 0, 0, 0},
	{"port", TC_OPT_INT, offsetof(tcr_config, port), 1, 65535, 0},
	{"database", TC_OPT_INT, offsetof(tcr_config, database), 0, 1000000, 0},
	{"username", TC_OPT_STRING, offsetof(tcr_config, username), 0, 0, 0},
	{"password", TC_OPT_SECRET, offsetof(tcr_config, password), 0, 0, 0},
	{"persistent", TC_OPT_STRING, offsetof(tcr_config, persistent), 0, 0, 0},
	{"timeout", TC_OPT_SECONDS, offsetof(tcr_config, timeout), 0, 0, 0},
	{"read_timeout", TC_OPT_SECONDS, offsetof(tcr_config, read_timeout), 0, 0, 0},
	{"connect_retries", TC_OPT_INT, offsetof(tcr_config, connect_retries), 1, 10, 0},
	{"retry_interval", TC_OPT_SECONDS, offsetof(tcr_config, retry_interval), 0, 0, 0},
	{"on_error", TC_OPT_STRING, offsetof(tcr_config, on_error), 0, 0, 0},
	{"prefix", TC_OPT_STRING, offsetof(tcr_config, prefix), 0, 0, 0},
	{"grace", TC_OPT_INT, offsetof(tcr_config, grace), 0, 30 * 86400, 0},
	{"compress_data", TC_OPT_INT, offsetof(tcr_config, compress_data), 0, 22, 0},
	{"compress_threshold", TC_OPT_SIZE, offsetof(tcr_config, compress_threshold), 0, INT64_C(1) << 31, 0},
	{"compression_lib", TC_OPT_STRING, offsetof(tcr_config, compression_lib), 0, 0, 0},
	{"max_value_size", TC_OPT_SIZE, offsetof(tcr_config, max_value_size), 1024, INT64_C(1) << 31, 0},
	{"lifetimelimit", TC_OPT_INT, offsetof(tcr_config, lifetimelimit), 0, INT64_C(100) * 365 * 86400, 0},
	{"automatic_cleaning_factor", TC_OPT_INT, offsetof(tcr_config, automatic_cleaning_factor), 0, 1 << 30, 0},
	{"load_from_slave", TC_OPT_STRING, offsetof(tcr_config, load_from_slave), 0, 0, 0},
	{"load_from_slaves", TC_OPT_INT, offsetof(tcr_config, load_from_slaves), 0, 2, 0},
	{"retry_reads_on_master", TC_OPT_BOOL, offsetof(tcr_config, retry_reads_on_master), 0, 0, 0},
	{"sentinel_master", TC_OPT_STRING, offsetof(tcr_config, sentinel_master), 0, 0, 0},
	{"sentinel_username", TC_OPT_STRING, offsetof(tcr_config, sentinel_username), 0, 0, 0},
	{"sentinel_password", TC_OPT_SECRET, offsetof(tcr_config, sentinel_password), 0, 0, 0},
	{"cluster", TC_OPT_BOOL, offsetof(tcr_config, cluster), 0, 0, 0},
	{"shards", TC_OPT_INT, offsetof(tcr_config, shards), 0, TCR_SHARDS_MAX, 0},
	{"remove_chunk_size", TC_OPT_INT, offsetof(tcr_config, remove_chunk_size), 1, 100000, 0},
	{"verify_tags", TC_OPT_STRING, offsetof(tcr_config, verify_tags), 0, 0, 0},
	{"verify_tags_recheck", TC_OPT_SECONDS, offsetof(tcr_config, verify_tags_recheck), 0, 0, 0},
	/* Cm_Cache_Backend_Redis options that have no meaning here: tags are
	 * never compressed (scripts read them), Lua is always used, the id
	 * index always exists (notMatchingTags), garbage collection is
	 * incremental, the master is always checked with ROLE. */
	{"compress_tags", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"force_standalone", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"use_lua", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"notmatchingtags", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"sunion_chunk_size", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"lua_max_c_stack", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"master_write_only", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"sentinel_master_verify", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"sentinel", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"slave_select_callable", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"auto_expire_lifetime", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"auto_expire_pattern", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"auto_expire_refresh_on_load", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"gc_scan_count", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"gc_exists_cache_size", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"gc_remove_chunk_size", TC_OPT_IGNORED, 0, 0, 0, 0},
	TC_STALE_OPTION_ROWS(tcr_config, stale),
	{NULL, 0, 0, 0, 0, 0}
};

static void redis_defaults(void *config)
{
	tcr_config *c = config;

	memset(c, 0, sizeof(*c));
	tc_stale_defaults(&c->stale);
	strcpy(c->server, "127.0.0.1");
	c->port = 6379;
	c->timeout = 2.5;
	c->connect_retries = 1;
	c->retry_interval = 1.0;
	strcpy(c->on_error, "miss");
	strcpy(c->prefix, "tc:");
	c->grace = 60;
	c->compress_data = 1;
	c->compress_threshold = 20480;
	c->max_value_size = 64 * 1024 * 1024;
	c->remove_chunk_size = 1000;
	strcpy(c->verify_tags, "auto");
	c->verify_tags_recheck = 10;
}

static int cfg_err(char *err, const char *fmt, const char *a)
{
	snprintf(err, TC_ERRBUF, fmt, a);
	return TC_ERR_CONFIG;
}

static void redis_close(void *sp);

static int redis_open(void **state, const void *config, char *err)
{
	const tcr_config *c = config;
	tcr_state *st;
	int r;
	size_t i;

	if (tcr_lua_init() != 0) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	memcpy(&st->cfg, c, sizeof(*c));
	*state = NULL;
	r = TC_ERR_CONFIG;
	if (tc_on_error_parse(c->on_error, &st->on_error, err) != 0) {
		goto fail;
	}
	if (!strcasecmp(c->verify_tags, "auto") || !c->verify_tags[0]) {
		st->verify = TCR_VERIFY_AUTO;
	} else if (!strcmp(c->verify_tags, "1") || !strcasecmp(c->verify_tags, "on") || !strcasecmp(c->verify_tags, "yes")
	           || !strcasecmp(c->verify_tags, "true")) {
		st->verify = TCR_VERIFY_ON;
	} else if (!strcmp(c->verify_tags, "0") || !strcasecmp(c->verify_tags, "off") || !strcasecmp(c->verify_tags, "no")
	           || !strcasecmp(c->verify_tags, "false")) {
		st->verify = TCR_VERIFY_OFF;
	} else {
		cfg_err(err, "Option \"verify_tags\" must be \"auto\", 1 or 0, \"%.100s\" given", c->verify_tags);
		goto fail;
	}
	switch (tcr_codec_by_name(c->compression_lib, &st->codec)) {
	case 0:
		break;
	case -2:
		snprintf(err, TC_ERRBUF, "Option \"compression_lib\": \"%.50s\" is not available in this build (built with: %s)",
		         c->compression_lib, tcr_codec_names()[0] ? tcr_codec_names() : "none");
		goto fail;
	default:
		cfg_err(err, "Option \"compression_lib\" must be gzip, lz4, zstd, snappy, lzf or empty, \"%.50s\" given",
		        c->compression_lib);
		goto fail;
	}
	st->level = (int)c->compress_data;
	if (strlen(c->prefix) > PREFIX_MAX || strpbrk(c->prefix, "{}")) {
		snprintf(err, TC_ERRBUF, "Option \"prefix\" must be at most %d bytes without { or }", PREFIX_MAX);
		goto fail;
	}
	for (i = 0; c->prefix[i]; i++) {
		if ((unsigned char)c->prefix[i] < 0x21 || (unsigned char)c->prefix[i] == 0x7f) {
			snprintf(err, TC_ERRBUF, "Option \"prefix\" must be printable ASCII without spaces");
			goto fail;
		}
	}
	st->naddrs = tc_addr_parse("server", c->server, (int)c->port, st->addrs, TCR_ADDRS_MAX, err);
	if (st->naddrs < 0) {
		goto fail;
	}
	if (c->sentinel_master[0]) {
		st->mode = TCR_SENTINEL;
		if (c->cluster) {
			snprintf(err, TC_ERRBUF, "Options \"sentinel_master\" and \"cluster\" exclude each other");
			goto fail;
		}
	} else if (c->cluster) {
		st->mode = TCR_CLUSTER;
		if (c->database != 0) {
			snprintf(err, TC_ERRBUF, "Option \"database\" must be 0 on a Redis Cluster");
			goto fail;
		}
		if (c->load_from_slave[0]) {
			snprintf(err, TC_ERRBUF, "Option \"load_from_slave\" is not supported on a Redis Cluster");
			goto fail;
		}
	} else if (st->naddrs > 1) {
		snprintf(err, TC_ERRBUF, "Option \"server\" names %d servers: a list needs \"sentinel_master\" (sentinels) or \"cluster\" (seed nodes)",
		         st->naddrs);
		goto fail;
	}
	if (c->load_from_slave[0] && st->mode != TCR_CLUSTER) {
		st->nreplicas = tc_addr_parse("load_from_slave", c->load_from_slave, (int)c->port, st->replicas, TCR_ADDRS_MAX, err);
		if (st->nreplicas < 0) {
			goto fail;
		}
	}
	st->read_timeout = c->read_timeout > 0 ? c->read_timeout : (c->timeout > 0 ? c->timeout : 2.5);
	if (tcr_layout_init(st, err) != TC_OK) {
		r = TC_ERR;
		goto fail;
	}
	*state = st;
	return TC_OK;
fail:
	redis_close(st);
	return r;
}

static void redis_close(void *sp)
{
	tcr_state *st = sp;

	if (!st) {
		return;
	}
	tcr_release_all(st);
	free(st->hashtag);
	free(st->shard_slot);
	free(st->held);
	free(st->jarm);
	memset(&st->cfg, 0, sizeof(st->cfg));   /* no password left in freed memory */
	free(st);
}

/* -------------------------------------------------------------- helpers */

/* Start of every operation: forget a reply a bailed-out call left held. */
static void op_begin(tcr_state *st)
{
	if (st->held) {
		tcr_reply_free(st->held);
		st->held = NULL;
	}
	st->fail = 0;
}

/* CLOCK_REALTIME, as PHP's time(): glibc's time(NULL) reads the coarse
 * clock, which can still show the previous second for a few ms. */
static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

static int i64s(char *buf, int64_t v)
{
	return snprintf(buf, 24, "%lld", (long long)v);
}

/* A reply we keep while calling back into PHP (which may bail out): the
 * next operation frees it. */
static void hold(tcr_state *st, redisReply *r)
{
	st->held = r;
}

static void unhold(tcr_state *st)
{
	tcr_reply_free(st->held);
	st->held = NULL;
}

/* An argument vector for a script: borrowed strings, and keys it makes
 * (owned, freed with it). */
typedef struct {
	const char **v;
	size_t *l;
	int n, cap;
	char **own;
	int nown;
	int oom;
} args_t;

static void args_init(args_t *a, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->cap = (int)cap;
	a->v = malloc(sizeof(*a->v) * cap);
	a->l = malloc(sizeof(*a->l) * cap);
	a->own = malloc(sizeof(*a->own) * cap);
	a->oom = !a->v || !a->l || !a->own;
}

static void args_add(args_t *a, const char *p, size_t len)
{
	if (a->oom || a->n == a->cap) {
		a->oom = 1;
		return;
	}
	a->v[a->n] = p;
	a->l[a->n++] = len;
}

/* a key of the shard, copied */
static void args_key(args_t *a, const tcr_state *st, int shard, char kind, const char *name, size_t nlen)
{
	size_t cap = st->plen + TCR_HASHTAG_MAX + nlen + 8, kl;
	char *k;

	if (a->oom) {
		return;
	}
	k = malloc(cap);
	if (!k) {
		a->oom = 1;
		return;
	}
	kl = tcr_key(st, shard, kind, name, nlen, k, cap);
	a->own[a->nown++] = k;
	args_add(a, k, kl);
}

static void args_free(args_t *a)
{
	int i;

	for (i = 0; i < a->nown; i++) {
		free(a->own[i]);
	}
	free(a->own);
	free(a->v);
	free(a->l);
	memset(a, 0, sizeof(*a));
}

/* TwoLevel's journal record armed for this write (tc_redis_journal.c):
 * its three keys go after the script's own keys, its three arguments
 * after the script's own arguments (TCR_LUA_*_J). */
static void args_jkeys(args_t *a, const tcr_jarm *j)
{
	int i;

	for (i = 0; i < 3; i++) {
		args_add(a, j->key[i], j->klen[i]);
	}
}

static void args_jargs(args_t *a, const tcr_jarm *j)
{
	args_add(a, j->rec.p, j->rec.len);
	args_add(a, j->epoch, j->elen);
	args_add(a, j->keep, j->kplen);
}

/* a journaled write script succeeded: the record is in the journal */
static void jarm_done(tcr_state *st)
{
	if (st->jarm && st->jarm->done) {
		*st->jarm->done = 1;
	}
}

/* entries one script call removes: unpack() in Redis's Lua has a limit */
static int64_t chunk_of(const tcr_state *st)
{
	return st->cfg.remove_chunk_size < 5000 ? st->cfg.remove_chunk_size : 5000;
}

static int want_verify(tcr_state *st, int shard, int *on_replica)
{
	tcr_conn *cn;

	*on_replica = 0;
	if (st->verify != TCR_VERIFY_AUTO) {
		if (st->verify == TCR_VERIFY_ON && st->mode != TCR_CLUSTER) {
			cn = tcr_reader(st);
			if (!cn) {
				return -1;
			}
			*on_replica = cn == st->replica;
		}
		return st->verify == TCR_VERIFY_ON;
	}
	cn = st->mode == TCR_CLUSTER ? tcr_cluster_node(st, st->shard_slot[shard]) : tcr_reader(st);
	if (!cn) {
		return -1;   /* no server: the failure is recorded */
	}
	*on_replica = cn == st->replica;
	return tcr_conn_may_evict(st, cn);
}

/* Whether the node of a shard may evict keys (unknown: yes); -1: no
 * server (the failure is recorded). */
static int may_evict(tcr_state *st, int shard)
{
	tcr_conn *cn = st->mode == TCR_CLUSTER ? tcr_cluster_node(st, st->shard_slot[shard]) : tcr_master(st);

	if (!cn) {
		return -1;
	}
	if (st->verify != TCR_VERIFY_AUTO) {
		return cn->eviction != 0;
	}
	return tcr_conn_may_evict(st, cn);
}

/* ----------------------------------------------------------------- load */

/* the tags of a parsed record, to emit */
static void record_tags(const tcr_record *rec, tc_emit_fn emit, void *ctx)
{
	size_t off;

	for (off = 0; off + 2 <= rec->tags_len;) {
		size_t l = (unsigned char)rec->tags[off] | (size_t)(unsigned char)rec->tags[off + 1] << 8;

		if (off + 2 + l > rec->tags_len) {
			break;
		}
		emit(ctx, rec->tags + off + 2, l);
		off += 2 + l;
	}
}

/* load(), and with emit (data non-NULL) load_tags(): the record read
 * carries the tags */
static int load_rec(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                    char **data, size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx)
{
	tcr_state *st = sp;
	char key[KEYBUF], H[KEYBUF];
	size_t kl, hl;
	int shard = tcr_shard_of(st, id.p, id.len), attempt, on_replica = 0;
	redisReply *r = NULL;
	tcr_record rec;
	int64_t now = now_s();

	op_begin(st);
	kl = tcr_key(st, shard, 'e', id.p, id.len, key, sizeof(key));
	for (attempt = 0; attempt < 2; attempt++) {
		int read = attempt == 0, verify = data ? want_verify(st, shard, &on_replica) : 0;

		if (verify < 0) {
			return TC_ERR;
		}
		if (!data) {
			const char *argv[4] = {"GETRANGE", key, "0", "33"};
			size_t lens[4] = {8, kl, 1, 2};

			r = tcr_shard_cmd(st, shard, read, 4, argv, lens);
		} else if (verify) {
			char ns[24], gs[24], ik[KEYBUF];
			const char *argv[7];
			size_t lens[7];

			hl = tcr_shard_prefix(st, shard, H, sizeof(H));
			argv[0] = key;
			lens[0] = kl;
			argv[1] = ik;
			lens[1] = tcr_key(st, shard, 'I', NULL, 0, ik, sizeof(ik));
			argv[2] = H;
			lens[2] = hl;
			argv[3] = id.p;
			lens[3] = id.len;
			argv[4] = ns;
			lens[4] = (size_t)i64s(ns, now);
			argv[5] = gs;
			lens[5] = (size_t)i64s(gs, st->cfg.grace);
			argv[6] = on_replica && read ? "1" : "0";
			lens[6] = 1;
			r = tcr_eval(st, shard, TCR_LUA_LOADV, read, 2, 7, argv, lens);
		} else {
			const char *argv[2] = {"GET", key};
			size_t lens[2] = {3, kl};

			r = tcr_shard_cmd(st, shard, read, 2, argv, lens);
		}
		if (!r) {
			return TC_ERR;
		}
		if (r->type == REDIS_REPLY_NIL && read && st->replica && !st->replica_failed
		    && st->cfg.retry_reads_on_master) {
			/* the replica may lag behind a write */
			tcr_reply_free(r);
			r = NULL;
			continue;
		}
		break;
	}
	if (r->type == REDIS_REPLY_NIL) {
		tcr_reply_free(r);
		st->misses++;
		return TC_MISS;
	}
	if (r->type != REDIS_REPLY_STRING) {
		tcr_reply_err(st, NULL, r, "load");
		tcr_reply_free(r);
		return TC_ERR;
	}
	if (tcr_record_parse(r->str, r->len, &rec, data == NULL) != 0) {
		/* not a record of ours (another writer, another version) */
		tcr_reply_free(r);
		st->misses++;
		st->bad_records++;
		return TC_MISS;
	}
	if (rec.expire < now && !allow_expired) {
		tcr_reply_free(r);
		st->misses++;
		return TC_MISS;
	}
	if (meta) {
		meta->expire = rec.expire;
		meta->mtime = rec.mtime;
	}
	if (data) {
		char *buf;

		if (rec.raw_len > (uint64_t)st->cfg.max_value_size) {
			tcr_reply_free(r);
			st->misses++;
			st->bad_records++;
			tc_log("tagcache: Redis: entry of %u bytes is larger than max_value_size (%lld): a miss",
			       rec.raw_len, (long long)st->cfg.max_value_size);
			return TC_MISS;
		}
		hold(st, r);
		if (emit) {
			record_tags(&rec, emit, ectx);
		}
		buf = alloc(ctx, rec.raw_len);
		if (!buf) {
			unhold(st);
			return TC_ERR;
		}
		if (rec.codec == TCR_CODEC_NONE) {
			memcpy(buf, rec.data, rec.raw_len);
		} else if (tcr_decompress(rec.codec, rec.data, rec.data_len, buf, rec.raw_len) != 0) {
			unhold(st);
			st->misses++;
			st->bad_records++;
			return TC_MISS;
		}
		*data = buf;
		*len = rec.raw_len;
		unhold(st);
	} else {
		tcr_reply_free(r);
	}
	st->hits++;
	return TC_OK;
}

static int redis_load(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                      char **data, size_t *len, tc_meta *meta)
{
	return load_rec(sp, id, allow_expired, alloc, ctx, data, len, meta, NULL, NULL);
}

/* one GET: the record holds the tags, expire and mtime */
static int redis_load_tags(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                           char **data, size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx)
{
	return load_rec(sp, id, allow_expired, alloc, ctx, data, len, meta, data ? emit : NULL, ectx);
}

/* ----------------------------------------------------------------- save */

static int clean_old(tcr_state *st);

/*
 * The TTLs of index keys this process set (per process, all objects): a
 * key's TTL only grows (EXPIRE NX, then GT) and a key is emptied with its
 * TTL kept (the scripts' reset()), so a key this process gave a TTL
 * reaching D lives at least until D, and a save whose need is below D
 * sends no EXPIRE. A closed socket (a restart, a failover, a fork) makes
 * every entry untrusted (tcr_sock_epoch); a server that may evict keys
 * is never trusted (a key can vanish any time: loadv covers the entry).
 * Direct-mapped on a 64-bit hash of the server list and the key name: a
 * collision only costs an EXPIRE.
 */
#define TTLTAB 8192
static struct {
	uint64_t key;
	int64_t until;
	unsigned long epoch;
} ttltab[TTLTAB];

static uint64_t ttl_key(tcr_state *st, const char *k, size_t kl)
{
	uint64_t h;

	if (!st->ttl_salt) {
		h = tcr_fnv(14695981039346656037ULL, st->addrs, sizeof(st->addrs[0]) * (size_t)st->naddrs);
		st->ttl_salt = tcr_fnv(h, &st->cfg.database, sizeof(st->cfg.database)) | 1;
	}
	h = tcr_fnv(st->ttl_salt, k, kl);
	/* FNV's last bytes reach few bits: mixed before the slot is taken */
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h | 1;
}

/* Saves of a longer lifetime always send their EXPIREs: a clean that
 * empties a tag key keeps its TTL only up to this (reset() in the
 * scripts, TRUST), so that a key emptied of a forever entry's links goes. */
#define TTL_TRUST_MAX (30 * 86400)

/* The token of each id index this process saw (its anchor's value, set by
 * the save that made the key: HSETNX). Another token means the key was
 * made again (deleted by hand, an expiry, a restart; clean('all') keeps
 * it and its token, like every key of finite entries): every key of the shard
 * may have gone with it, so nothing in ttltab is trusted any more and the
 * save's own keys get their EXPIREs at once. */
#define TOKTAB 256
static struct {
	uint64_t key;
	char tok[16];
} toktab[TOKTAB];
static char my_token[17];

/* two ways per set: a key sits in slot i or i ^ 1 */
static size_t ttl_slot(uint64_t k)
{
	return (size_t)((k >> 20) % TTLTAB);
}

static int ttl_covered(uint64_t k, int64_t need)
{
	size_t i = ttl_slot(k), w;

	for (w = 0; w < 2; w++, i ^= 1) {
		if (ttltab[i].key == k) {
			return ttltab[i].epoch == tcr_sock_epoch && ttltab[i].until >= need;
		}
	}
	return 0;
}

static void ttl_note(uint64_t k, int64_t until)
{
	size_t i = ttl_slot(k);

	if (ttltab[i].key != k && (ttltab[i ^ 1].key == k || ttltab[i ^ 1].epoch != tcr_sock_epoch
	                           || (ttltab[i].epoch == tcr_sock_epoch && ttltab[i ^ 1].until < ttltab[i].until))) {
		i ^= 1;
	}
	ttltab[i].key = k;
	ttltab[i].until = until;
	ttltab[i].epoch = tcr_sock_epoch;
}

/* The link version of a save: a 53-bit hash of its tag list (exact in a
 * double, the record's f64 at offset 2). Saves of an id with the same tags
 * share their links; a save with other tags gets another version, so the
 * links of the former tags no longer match the id index. */
static double tags_version(const tc_str *tags, size_t ntags)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < ntags; i++) {
		uint32_t l = (uint32_t)tags[i].len;

		h = tcr_fnv(h, &l, sizeof(l));
		h = tcr_fnv(h, tags[i].p, tags[i].len);
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (double)(h & ((1ULL << 53) - 1));
}

/* A command of the save's transaction. */
typedef struct {
	int argc;
	const char *argv[TC_TAGS_MAX + 8];
	size_t lens[TC_TAGS_MAX + 8];
} cmd_t;

static void cmd_arg(cmd_t *c, const char *p, size_t l)
{
	c->argv[c->argc] = p;
	c->lens[c->argc++] = l;
}

/*
 * The save as MULTI, the writes, EXEC, pipelined (one round trip): SADD of
 * the link (version .. id) into each tag's key, HSET of the id index, SET
 * of the record, and for the keys whose TTL this process has not yet set
 * far enough (ttl_covered()), their anchor (the member '', which keeps an
 * emptied key and its TTL) in the same SADD or HSET, the tag names in the
 * registry, and EXPIRE NX + EXPIRE GT. Nothing is read: no script, no
 * reply parsed by Lua. TC_MISS: not run (a redirection, a refused
 * command: the caller runs the same writes as a script).
 */
static int save_multi(tcr_state *st, int shard, args_t *a, size_t ntags, const char *flags, int *ret,
                      redisReply **tokr)
{
	/* a: KEYS entry, index, registry, tags; ARGV id, rec, ival, ettl, kttl, flags, token, other index, tags */
	const char **K = a->v, **A = a->v + 3 + ntags;
	const size_t *KL = a->l, *AL = a->l + 3 + ntags;
	tcr_conn *cn = st->mode == TCR_CLUSTER ? tcr_cluster_node(st, st->shard_slot[shard]) : tcr_master(st);
	char link[TC_ID_MAX + 16];
	cmd_t c;
	size_t i, n = 0, ll;
	int was_used, reg = flags[1] == '1', ok = 1, forever = AL[6] == 0;
	redisReply *r;

	if (!cn || AL[0] + 8 > sizeof(link)) {
		return TC_MISS;
	}
	ll = 8 + AL[0];
	memcpy(link, A[2], 8);
	memcpy(link + 8, A[0], AL[0]);
	if (tcr_conn_ready(st, cn) != TC_OK) {
		return TC_ERR;
	}
	was_used = cn->used;
#define SEND() do { if (tcr_conn_send(st, cn, c.argc, c.argv, c.lens) != TC_OK) return TC_ERR; n++; } while (0)
	c.argc = 0;
	cmd_arg(&c, "MULTI", 5);
	SEND();
	for (i = 0; i < ntags; i++) {
		c.argc = 0;
		cmd_arg(&c, "SADD", 4);
		cmd_arg(&c, K[3 + i], KL[3 + i]);
		if (flags[2 + i] == '1') {
			if (!forever) {
				/* forever keys: no anchor (no TTL to keep) */
				cmd_arg(&c, "", 0);
			}
			reg = 1;
		}
		cmd_arg(&c, link, ll);
		SEND();
	}
	if (AL[6]) {
		c.argc = 0;
		cmd_arg(&c, "HSETNX", 6);
		cmd_arg(&c, K[1], KL[1]);
		cmd_arg(&c, "", 0);
		cmd_arg(&c, A[6], AL[6]);
		SEND();
	}
	c.argc = 0;
	cmd_arg(&c, "HSET", 4);
	cmd_arg(&c, K[1], KL[1]);
	cmd_arg(&c, A[0], AL[0]);
	cmd_arg(&c, A[2], AL[2]);
	SEND();
	c.argc = 0;
	cmd_arg(&c, "HDEL", 4);
	cmd_arg(&c, A[7], AL[7]);
	cmd_arg(&c, A[0], AL[0]);
	SEND();
	if (reg) {
		c.argc = 0;
		cmd_arg(&c, "SADD", 4);
		cmd_arg(&c, K[2], KL[2]);
		if (!forever) {
			cmd_arg(&c, "", 0);
		}
		for (i = 0; i < ntags; i++) {
			if (flags[2 + i] == '1') {
				cmd_arg(&c, A[8 + i], AL[8 + i]);
			}
		}
		SEND();
	}
	c.argc = 0;
	cmd_arg(&c, "SET", 3);
	cmd_arg(&c, K[0], KL[0]);
	cmd_arg(&c, A[1], AL[1]);
	if (AL[3]) {
		cmd_arg(&c, "EX", 2);
		cmd_arg(&c, A[3], AL[3]);
	}
	SEND();
	for (i = 0; i < ntags + 2 && !forever; i++) {
		int k = i == 0 ? 1 : i == 1 ? 2 : (int)(1 + i);

		if (flags[i] != '1' && !(i == 1 && reg)) {
			continue;
		}
		c.argc = 0;
		cmd_arg(&c, "EXPIRE", 6);
		cmd_arg(&c, K[k], KL[k]);
		cmd_arg(&c, A[4], AL[4]);
		cmd_arg(&c, "NX", 2);
		SEND();
		c.argv[3] = "GT";
		SEND();
	}
	if (!forever) {
		c.argc = 0;
		cmd_arg(&c, "HGET", 4);
		cmd_arg(&c, K[1], KL[1]);
		cmd_arg(&c, "", 0);
		SEND();
	}
	c.argc = 0;
	cmd_arg(&c, "EXEC", 4);
	SEND();
#undef SEND
	for (i = 0; i < n; i++) {
		r = tcr_conn_recv(st, cn);
		if (!r) {
			if (i == 0 && was_used && (strstr(st->err, "closed by the server") || strstr(st->err, "reset by peer")
			                           || strstr(st->err, "Broken pipe"))) {
				/* a stale socket: the script path makes a fresh one */
				st->fail = 0;
				st->reconnects++;
				return TC_MISS;
			}
			return TC_ERR;
		}
		if (i + 1 < n) {
			/* +OK, QUEUED; an error (MOVED, ASK, READONLY, OOM...) aborts the EXEC */
			ok = ok && r->type != REDIS_REPLY_ERROR;
		} else if (!ok || r->type != REDIS_REPLY_ARRAY) {
			ok = 0;
		} else {
			size_t k;

			for (k = 0; k < r->elements; k++) {
				if (!r->element[k] || r->element[k]->type == REDIS_REPLY_ERROR) {
					/* ran, but a command failed (a foreign key of another type) */
					*ret = tcr_reply_err(st, NULL, r->element[k] ? r->element[k] : r, "save");
					tcr_reply_free(r);
					return TC_OK;
				}
			}
			if (r->elements > 0) {
				/* the last: HGET of the id index's token */
				*tokr = r->element[r->elements - 1];
				r->element[r->elements - 1] = NULL;
			}
		}
		tcr_reply_free(r);
	}
	if (!ok) {
		return TC_MISS;
	}
	memcpy(st->last, cn->name, strlen(cn->name) + 1);
	*ret = TC_OK;
	return TC_OK;
}

/* EXPIRE NX + EXPIRE GT of the keys a save took as covered (flags '0'),
 * after a save that found its id index made again: pipelined, replies
 * read and dropped (a failure leaves keys without a TTL: kept, never
 * expiring early). */
static void push_keys(tcr_state *st, int shard, const args_t *a, size_t ntags, const char *flags)
{
	tcr_conn *cn = st->mode == TCR_CLUSTER ? tcr_cluster_node(st, st->shard_slot[shard]) : tcr_master(st);
	const char *av[4];
	size_t al[4], i, n = 0;

	if (!cn || tcr_conn_ready(st, cn) != TC_OK) {
		st->fail = 0;
		return;
	}
	for (i = 0; i < ntags + 2; i++) {
		if (flags[i] != '0') {
			continue;
		}
		av[0] = "EXPIRE";
		al[0] = 6;
		av[1] = a->v[1 + i];
		al[1] = a->l[1 + i];
		/* ARGV[5], the keys' TTL (after the journal's keys, if armed) */
		av[2] = a->v[3 + ntags + (st->jarm ? 3 : 0) + 4];
		al[2] = a->l[3 + ntags + (st->jarm ? 3 : 0) + 4];
		av[3] = "NX";
		al[3] = 2;
		if (tcr_conn_send(st, cn, 4, av, al) != TC_OK) {
			break;
		}
		av[3] = "GT";
		if (tcr_conn_send(st, cn, 4, av, al) != TC_OK) {
			break;
		}
		n += 2;
	}
	for (i = 0; i < n; i++) {
		redisReply *r = tcr_conn_recv(st, cn);

		if (!r) {
			break;
		}
		tcr_reply_free(r);
	}
	st->fail = 0;
}

static int redis_save(void *sp, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                      int64_t expire, char *err)
{
	tcr_state *st = sp;
	char ival[16], ets[24], kts[24], flags[TC_TAGS_MAX + 3];
	int shard = tcr_shard_of(st, id.p, id.len);
	int64_t now = now_s(), need, until;
	uint64_t hk[TC_TAGS_MAX + 2];
	size_t reclen = 0, i;
	char *rec;
	args_t a;
	redisReply *r;
	redisReply *tokr = NULL;
	int ret = TC_ERR, evict, done = TC_MISS, forever;

	(void)err;
	op_begin(st);
	if (data.len > (size_t)st->cfg.max_value_size) {
		return tcr_fail(st, "save: a value of %zu bytes is larger than max_value_size (%lld)", data.len,
		                (long long)st->cfg.max_value_size);
	}
	if (ntags > TC_TAGS_MAX) {
		return tcr_fail(st, "save: too many tags");
	}
	if (expire != TC_EXPIRE_NEVER && st->cfg.lifetimelimit > 0 && expire > now + st->cfg.lifetimelimit) {
		expire = now + st->cfg.lifetimelimit;
	}
	if (expire < now - 1) {
		/* already expired (a negative lifetime): only load($id, true) can
		 * see it, for grace seconds */
		expire = now - 1;
	}
	evict = may_evict(st, shard);
	if (evict < 0) {
		return TC_ERR;
	}
	rec = tcr_record_build(st, data, tags, ntags, tags_version(tags, ntags), expire, now, &reclen);
	if (rec) {
		/* the id index's value: the version (the record's bytes 2..9), the expire */
		memcpy(ival, rec + 2, 8);
		memcpy(ival + 8, rec + 26, 8);
	}
	/* a key's TTL must reach expire + grace + 5 (a script runs seconds
	 * after its client read the clock, under load); it is set a slack
	 * further, so that it is not set again on every save */
	need = (expire > now ? expire : now) + st->cfg.grace + 5;
	until = need + (expire >= TC_EXPIRE_NEVER ? 0 : expire - now > 14400 ? 3600 : expire > now ? (expire - now) / 4 : 0);
	args_init(&a, 2 * ntags + 18);
	/* KEYS: entry, id index, registry, the tags' keys: of finite entries
	 * (I, G, s:), which have TTLs, or of forever entries (J, F, f:), which
	 * have none and are never given one */
	forever = expire >= TC_EXPIRE_NEVER;
	args_key(&a, st, shard, 'e', id.p, id.len);
	args_key(&a, st, shard, forever ? 'J' : 'I', NULL, 0);
	args_key(&a, st, shard, forever ? 'F' : 'G', NULL, 0);
	for (i = 0; i < ntags; i++) {
		args_key(&a, st, shard, forever ? 'f' : 's', tags[i].p, tags[i].len);
	}
	if (st->jarm) {
		args_jkeys(&a, st->jarm);
	}
	for (i = 0; i < ntags + 2 && !a.oom; i++) {
		/* index, registry, tags */
		hk[i] = ttl_key(st, a.v[i + 1], a.l[i + 1]);
		/* forever: '1' = register the tag names (no TTL, no anchor) */
		flags[i] = !forever && !evict && until - now <= TTL_TRUST_MAX && ttl_covered(hk[i], need) ? '0' : '1';
	}
	flags[ntags + 2] = '\0';
	args_add(&a, id.p, id.len);
	args_add(&a, rec, reclen);
	args_add(&a, ival, 16);
	args_add(&a, ets, expire >= TC_EXPIRE_NEVER ? 0
	         : (size_t)i64s(ets, expire - now + st->cfg.grace < 1 ? 1 : expire - now + st->cfg.grace));
	args_add(&a, kts, (size_t)i64s(kts, until - now));
	args_add(&a, flags, ntags + 2);
	if (!my_token[0]) {
		snprintf(my_token, sizeof(my_token), "%08x%08x", tcr_rand(), tcr_rand());
	}
	/* the token: '' for a forever entry (no TTL, nothing to trust) */
	args_add(&a, my_token, forever ? 0 : 16);
	/* the other id index, where the id must not stay */
	args_key(&a, st, shard, forever ? 'I' : 'J', NULL, 0);
	for (i = 0; i < ntags; i++) {
		args_add(&a, tags[i].p, tags[i].len);
	}
	if (st->jarm) {
		args_jargs(&a, st->jarm);
	}
	if (!rec || a.oom) {
		free(rec);
		args_free(&a);
		return tcr_fail(st, "save: out of memory");
	}
	if (!st->jarm) {
		done = save_multi(st, shard, &a, ntags, flags, &ret, &tokr);
	}
	if (done == TC_MISS) {
		/* journaled (the append rides in the script), or the transaction
		 * was refused: the same writes as one script */
		st->fail = 0;
		r = tcr_eval(st, shard, st->jarm ? TCR_LUA_SAVE_J : TCR_LUA_SAVE, 0, (int)(3 + ntags + (st->jarm ? 3 : 0)),
		             a.n, a.v, a.l);
		if (r) {
			ret = r->type == REDIS_REPLY_STRING ? TC_OK : tcr_reply_err(st, NULL, r, "save");
			if (ret == TC_OK) {
				tokr = r;
			} else {
				tcr_reply_free(r);
			}
		}
	}
	if (ret == TC_OK) {
		/* tests: a process killed after its writes, before the token's
		 * follow-up (tests/redis/142) */
		tc_crash_point("redis_save_exec");
	}
	if (ret == TC_OK && !forever) {
		size_t ti = (size_t)(hk[0] >> 24) % TOKTAB;
		int fresh = !tokr || tokr->type != REDIS_REPLY_STRING || tokr->len != 16 || toktab[ti].key != hk[0]
		            || memcmp(toktab[ti].tok, tokr->str, 16) != 0;

		if (fresh) {
			/* the id index was made again since this process last saw it
			 * (or never seen): its keys' TTLs set by this process may have
			 * gone with them */
			tcr_sock_epoch++;
			if (strchr(flags, '0')) {
				push_keys(st, shard, &a, ntags, flags);
			}
			memset(flags, '1', ntags + 2);
			if (tokr && tokr->type == REDIS_REPLY_STRING && tokr->len == 16) {
				toktab[ti].key = hk[0];
				memcpy(toktab[ti].tok, tokr->str, 16);
			}
		}
		for (i = 0; i < ntags + 2 && until - now <= TTL_TRUST_MAX; i++) {
			if (flags[i] == '1') {
				ttl_note(hk[i], until);
			}
		}
	}
	tcr_reply_free(tokr);
	free(rec);
	args_free(&a);
	if (ret == TC_OK) {
		jarm_done(st);
		st->saves++;
		if (st->cfg.automatic_cleaning_factor > 0 && rand() % st->cfg.automatic_cleaning_factor == 0) {
			clean_old(st);
			st->fail = 0;
		}
	}
	return ret;
}

/* --------------------------------------------------------------- remove */

/* The first arguments of the scripts on one entry: KEYS entry, id index,
 * registry; ARGV H, id. Returns how many were filled (5). */
typedef struct {
	char key[KEYBUF], ik[KEYBUF], rk[KEYBUF], H[KEYBUF];
} entry_keys;

static int entry_args(tcr_state *st, int shard, tc_str id, entry_keys *k, const char **argv, size_t *lens)
{
	argv[0] = k->key;
	lens[0] = tcr_key(st, shard, 'e', id.p, id.len, k->key, sizeof(k->key));
	argv[1] = k->ik;
	lens[1] = tcr_key(st, shard, 'I', NULL, 0, k->ik, sizeof(k->ik));
	argv[2] = k->rk;
	lens[2] = tcr_key(st, shard, 'G', NULL, 0, k->rk, sizeof(k->rk));
	argv[3] = k->H;
	lens[3] = tcr_shard_prefix(st, shard, k->H, sizeof(k->H));
	argv[4] = id.p;
	lens[4] = id.len;
	return 5;
}

static int redis_remove(void *sp, tc_str id)
{
	tcr_state *st = sp;
	char ns[24], gs[24];
	int shard = tcr_shard_of(st, id.p, id.len);
	entry_keys k;
	const char *argv[13];
	size_t lens[13];
	redisReply *r;
	int ret, nkeys = 3, argc = 7;

	op_begin(st);
	entry_args(st, shard, id, &k, argv, lens);
	argv[5] = ns;
	lens[5] = (size_t)i64s(ns, now_s());
	argv[6] = gs;
	lens[6] = (size_t)i64s(gs, st->cfg.grace);
	if (st->jarm) {
		/* KEYS entry, id index, registry, the journal's 3; ARGV H, id,
		 * now, grace, the journal's 3 */
		const tcr_jarm *j = st->jarm;

		memmove(argv + 6, argv + 3, 4 * sizeof(*argv));
		memmove(lens + 6, lens + 3, 4 * sizeof(*lens));
		for (nkeys = 0; nkeys < 3; nkeys++) {
			argv[3 + nkeys] = j->key[nkeys];
			lens[3 + nkeys] = j->klen[nkeys];
		}
		nkeys = 6;
		argv[10] = j->rec.p;
		lens[10] = j->rec.len;
		argv[11] = j->epoch;
		lens[11] = j->elen;
		argv[12] = j->keep;
		lens[12] = j->kplen;
		argc = 13;
	}
	r = tcr_eval(st, shard, st->jarm ? TCR_LUA_REMOVE_J : TCR_LUA_REMOVE, 0, nkeys, argc, argv, lens);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_INTEGER) {
		ret = tcr_reply_err(st, NULL, r, "remove");
	} else {
		jarm_done(st);
		ret = r->integer > 0 ? TC_OK : TC_MISS;
		st->removes += r->integer > 0;
	}
	tcr_reply_free(r);
	return ret;
}

/* ---------------------------------------------------------------- clean */

/* Runs the clean script on one shard until it says nothing is left. */
static int clean_shard(tcr_state *st, int shard, const char *mode, const tc_str *tags, size_t ntags)
{
	char H[KEYBUF], ns[24], gs[24], cs[24], tmp[64];
	size_t i;
	long loops;
	int ret = TC_OK, phase;
	/* TwoLevel's journal record rides in every call (each drops entries) */
	const tcr_jarm *j = st->jarm;
	args_t a;

	args_init(&a, 2 * ntags + 17);
	/* KEYS: id index, registry, two working sets, the tags' keys */
	args_key(&a, st, shard, 'I', NULL, 0);
	args_key(&a, st, shard, 'G', NULL, 0);
	snprintf(tmp, sizeof(tmp), "%ld.%lu.%u", (long)getpid(), ++st->tmp_seq, tcr_rand());
	args_key(&a, st, shard, 'x', tmp, strlen(tmp));
	strcat(tmp, ".2");
	args_key(&a, st, shard, 'x', tmp, strlen(tmp));
	for (i = 0; i < ntags; i++) {
		args_key(&a, st, shard, 's', tags[i].p, tags[i].len);
	}
	if (j) {
		args_jkeys(&a, j);
	}
	args_add(&a, H, tcr_shard_prefix(st, shard, H, sizeof(H)));
	args_add(&a, mode, strlen(mode));
	args_add(&a, ns, (size_t)i64s(ns, now_s()));
	args_add(&a, gs, (size_t)i64s(gs, st->cfg.grace));
	args_add(&a, cs, (size_t)i64s(cs, chunk_of(st)));
	phase = a.n;
	args_add(&a, "0", 1);
	for (i = 0; i < ntags; i++) {
		args_add(&a, tags[i].p, tags[i].len);
	}
	if (j) {
		args_jargs(&a, j);
	}
	if (a.oom) {
		args_free(&a);
		return tcr_fail(st, "clean: out of memory");
	}
	for (loops = 0; loops < LOOPS_MAX; loops++) {
		redisReply *r;
		long long left;

		a.v[phase] = loops == 0 ? "0" : "1";
		r = tcr_eval(st, shard, j ? TCR_LUA_CLEAN_J : TCR_LUA_CLEAN, 0, (int)(4 + ntags + (j ? 3 : 0)), a.n, a.v,
		             a.l);
		if (!r) {
			ret = TC_ERR;
			break;
		}
		if (r->type != REDIS_REPLY_INTEGER) {
			ret = tcr_reply_err(st, NULL, r, "clean");
			tcr_reply_free(r);
			break;
		}
		left = r->integer;
		tcr_reply_free(r);
		if (j) {
			jarm_done(st);
		}
		if (left <= 0) {
			break;
		}
	}
	args_free(&a);
	return ret;
}

/* clean('old'): HSCAN steps of the id index (the clean script, mode old,
 * its phase argument the cursor), then SSCAN steps of the registry (the
 * gctags script): each step one script, until the cursor is 0 again. */
static int scan_steps(tcr_state *st, int shard, int script, int nkeys, int argc, const char **argv, size_t *lens,
                      int curi, const char *what)
{
	char cur[32] = "0";
	long loops;

	for (loops = 0; loops < LOOPS_MAX; loops++) {
		redisReply *r;

		argv[curi] = cur;
		lens[curi] = strlen(cur);
		r = tcr_eval(st, shard, script, 0, nkeys, argc, argv, lens);
		if (!r) {
			return TC_ERR;
		}
		if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len >= sizeof(cur)) {
			int e = tcr_reply_err(st, NULL, r, what);

			tcr_reply_free(r);
			return e;
		}
		memcpy(cur, r->str, r->len);
		cur[r->len] = '\0';
		tcr_reply_free(r);
		if (strcmp(cur, "0") == 0) {
			break;
		}
	}
	return TC_OK;
}

static int clean_old(tcr_state *st)
{
	int s;

	for (s = 0; s < st->nshards; s++) {
		char ik[KEYBUF], rk[KEYBUF], tmp[KEYBUF], tmp2[KEYBUF], H[KEYBUF], ns[24], gs[24], cs[24];
		const char *argv[10];
		size_t lens[10];

		/* KEYS: id index, registry, two working sets (unused); ARGV: H,
		 * old, now, grace, chunk, cursor */
		argv[0] = ik;
		lens[0] = tcr_key(st, s, 'I', NULL, 0, ik, sizeof(ik));
		argv[1] = rk;
		lens[1] = tcr_key(st, s, 'G', NULL, 0, rk, sizeof(rk));
		argv[2] = tmp;
		lens[2] = tcr_key(st, s, 'x', "old", 3, tmp, sizeof(tmp));
		argv[3] = tmp2;
		lens[3] = tcr_key(st, s, 'x', "old.2", 5, tmp2, sizeof(tmp2));
		argv[4] = H;
		lens[4] = tcr_shard_prefix(st, s, H, sizeof(H));
		argv[5] = "old";
		lens[5] = 3;
		argv[6] = ns;
		lens[6] = (size_t)i64s(ns, now_s());
		argv[7] = gs;
		lens[7] = (size_t)i64s(gs, st->cfg.grace);
		argv[8] = cs;
		lens[8] = (size_t)i64s(cs, chunk_of(st));
		if (scan_steps(st, s, TCR_LUA_CLEAN, 4, 10, argv, lens, 9, "clean old") != TC_OK) {
			return TC_ERR;
		}
		/* KEYS: registry, id index; ARGV: H, now, grace, cursor, count */
		argv[0] = rk;
		lens[0] = lens[1];
		argv[1] = ik;
		lens[1] = tcr_key(st, s, 'I', NULL, 0, ik, sizeof(ik));
		argv[2] = H;
		lens[2] = lens[4];
		argv[3] = ns;
		lens[3] = lens[6];
		argv[4] = gs;
		lens[4] = lens[7];
		argv[6] = "20";
		lens[6] = 2;
		/* the tags of finite entries, then those of forever entries */
		argv[7] = "s:";
		lens[7] = 2;
		if (scan_steps(st, s, TCR_LUA_GCTAGS, 2, 8, argv, lens, 5, "clean old") != TC_OK) {
			return TC_ERR;
		}
		argv[7] = "f:";
		if (scan_steps(st, s, TCR_LUA_GCTAGS, 2, 8, argv, lens, 5, "clean old") != TC_OK) {
			return TC_ERR;
		}
	}
	return TC_OK;
}

/* keys of layout 2 handed to one purge script */
#define PURGE_KEYS 256

static size_t glob_escape(const char *in, char *out, size_t cap);

/* Sends cmd (EXISTS or UNLINK) of shard s's layout-2 id index i and
 * registry T; *n: the reply's count. */
static int layout2_marks(tcr_state *st, int s, const char *cmd, long long *n)
{
	char H[KEYBUF], ki[KEYBUF + 1], kt[KEYBUF + 1];
	size_t hl = tcr_shard_prefix(st, s, H, sizeof(H));
	const char *argv[3] = {cmd, ki, kt};
	size_t lens[3] = {strlen(cmd), hl + 1, hl + 1};
	redisReply *r;
	int ret = TC_OK;

	memcpy(ki, H, hl);
	ki[hl] = 'i';
	memcpy(kt, H, hl);
	kt[hl] = 'T';
	r = tcr_shard_cmd(st, s, 0, 3, argv, lens);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_INTEGER) {
		ret = tcr_reply_err(st, NULL, r, "clean all (layout 2)");
	} else {
		*n = r->integer;
	}
	tcr_reply_free(r);
	return ret;
}

/*
 * clean('all'), last: the keys layout 2 left under this prefix (its id
 * index i, registry T, tag keys t:<tag> and records of format 2, which for
 * forever entries never expire). Only when some shard still has layout 2's
 * i or T (every layout-2 store with an entry has both): then SCAN steps of
 * each node with the prefix's pattern, each step's t: and e: keys of a
 * shard handed to a short script (TCR_LUA_PURGE2) that unlinks them (a
 * record only when its format byte is not 3), and i and T last, once the
 * SCANs went through: a purge cut short (an error, a timeout) leaves them,
 * so the next clean('all') scans again, and every later one costs one
 * EXISTS per shard. Its working sets x:<n> had a TTL of 600 s: left to
 * expire.
 */
static int purge_layout2(tcr_state *st)
{
	char pat[KEYBUF];
	size_t pl = glob_escape(st->cfg.prefix, pat, sizeof(pat) - 8);
	int s, ret = TC_OK;
	long long n, found = 0;

	for (s = 0; s < st->nshards; s++) {
		if (layout2_marks(st, s, "EXISTS", &n) != TC_OK) {
			return TC_ERR;
		}
		found += n;
	}
	if (!found) {
		return TC_OK;
	}
	memcpy(pat + pl, "{*}*", 5);
	for (s = 0; s < st->nshards && ret == TC_OK; s++) {
		char cursor[32] = "0";
		long loops;
		int first_of_node = 1, t;

		if (st->mode == TCR_CLUSTER) {
			tcr_conn *mine = tcr_cluster_node(st, st->shard_slot[s]);

			if (!mine) {
				return TC_ERR;
			}
			for (t = 0; t < s; t++) {
				if (tcr_cluster_node(st, st->shard_slot[t]) == mine) {
					first_of_node = 0;
				}
			}
		} else if (s > 0) {
			break;
		}
		if (!first_of_node) {
			continue;
		}
		for (loops = 0; loops < LOOPS_MAX && ret == TC_OK; loops++) {
			const char *argv[6] = {"SCAN", cursor, "MATCH", pat, "COUNT", "1000"};
			size_t lens[6] = {4, strlen(cursor), 5, strlen(pat), 5, 4}, k;
			redisReply *r = tcr_shard_cmd(st, s, 0, 6, argv, lens), *keys;

			if (!r) {
				return TC_ERR;
			}
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1]
			    || r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY
			    || r->element[0]->len >= sizeof(cursor)) {
				ret = tcr_reply_err(st, NULL, r, "clean all (SCAN)");
				tcr_reply_free(r);
				return ret;
			}
			memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
			keys = r->element[1];
			for (t = 0; t < st->nshards && ret == TC_OK; t++) {
				char H[KEYBUF], ik[KEYBUF];
				const char *av[PURGE_KEYS + 2];
				size_t al[PURGE_KEYS + 2], hl = tcr_shard_prefix(st, t, H, sizeof(H)), nb = 0;

				av[0] = ik;
				al[0] = tcr_key(st, t, 'I', NULL, 0, ik, sizeof(ik));
				av[1] = H;
				al[1] = hl;
				for (k = 0; k <= keys->elements && ret == TC_OK; k++) {
					redisReply *kk = k < keys->elements ? keys->element[k] : NULL;

					if (kk && kk->type == REDIS_REPLY_STRING && kk->len > hl && memcmp(kk->str, H, hl) == 0) {
						const char *x = kk->str + hl;
						size_t xl = kk->len - hl;

						if (xl > 2 && (x[0] == 't' || x[0] == 'e') && x[1] == ':') {
							av[2 + nb] = kk->str;
							al[2 + nb++] = kk->len;
						}
					}
					if (nb == PURGE_KEYS || (k == keys->elements && nb > 0)) {
						redisReply *q = tcr_eval(st, t, TCR_LUA_PURGE2, 0, 1, (int)(2 + nb), av, al);

						if (!q) {
							return TC_ERR;
						}
						if (q->type != REDIS_REPLY_INTEGER) {
							ret = tcr_reply_err(st, NULL, q, "clean all (layout 2)");
						}
						tcr_reply_free(q);
						nb = 0;
					}
				}
			}
			tcr_reply_free(r);
			if (strcmp(cursor, "0") == 0) {
				break;
			}
		}
		if (loops == LOOPS_MAX) {
			return TC_OK;  /* not through: i and T stay for the next clean('all') */
		}
	}
	for (s = 0; s < st->nshards && ret == TC_OK; s++) {
		ret = layout2_marks(st, s, "UNLINK", &n);
	}
	return ret;
}

static int redis_clean(void *sp, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	tcr_state *st = sp;
	const char *m;
	int s;

	(void)err;
	op_begin(st);
	st->cleans++;
	switch (mode) {
	case TC_CLEAN_OLD:
		return clean_old(st);
	case TC_CLEAN_ALL:
		m = "flush";
		ntags = 0;
		break;
	case TC_CLEAN_MATCHING:
		m = "all";
		break;
	case TC_CLEAN_NOT_MATCHING:
		m = "not";
		break;
	case TC_CLEAN_MATCHING_ANY:
		m = "any";
		break;
	default:
		return TC_ERR;
	}
	for (s = 0; s < st->nshards; s++) {
		if (clean_shard(st, s, m, tags, ntags) != TC_OK) {
			return TC_ERR;
		}
	}
	return mode == TC_CLEAN_ALL ? purge_layout2(st) : TC_OK;
}

/* -------------------------------------------------------------- listing */

static int redis_ids(void *sp, tc_ids_mode mode, const tc_str *tags, size_t ntags, tc_emit_fn emit, void *ctx)
{
	tcr_state *st = sp;
	const char *m;
	size_t i;
	int s, ret = TC_OK;

	op_begin(st);
	switch (mode) {
	case TC_CLEAN_ALL:
		m = "all";
		ntags = 0;
		break;
	case TC_CLEAN_MATCHING:
		m = "all_of";
		break;
	case TC_CLEAN_NOT_MATCHING:
		m = "not";
		break;
	case TC_CLEAN_MATCHING_ANY:
		m = "any";
		break;
	default:
		return TC_ERR;
	}
	for (s = 0; s < st->nshards && ret == TC_OK; s++) {
		char H[KEYBUF], ns[24], tmp[64], os[24], cs[24];
		long long off = 0;
		long loops;
		int offi;
		args_t a;

		args_init(&a, 2 * ntags + 9);
		/* KEYS: id index, two working sets, the tags' keys */
		args_key(&a, st, s, 'I', NULL, 0);
		snprintf(tmp, sizeof(tmp), "%ld.%lu.%u", (long)getpid(), ++st->tmp_seq, tcr_rand());
		args_key(&a, st, s, 'x', tmp, strlen(tmp));
		strcat(tmp, ".2");
		args_key(&a, st, s, 'x', tmp, strlen(tmp));
		for (i = 0; i < ntags; i++) {
			args_key(&a, st, s, 's', tags[i].p, tags[i].len);
		}
		args_add(&a, H, tcr_shard_prefix(st, s, H, sizeof(H)));
		args_add(&a, m, strlen(m));
		args_add(&a, ns, (size_t)i64s(ns, now_s()));
		offi = a.n;
		args_add(&a, os, 0);
		args_add(&a, cs, (size_t)i64s(cs, PAGE));
		for (i = 0; i < ntags; i++) {
			args_add(&a, tags[i].p, tags[i].len);
		}
		if (a.oom) {
			args_free(&a);
			return tcr_fail(st, "out of memory");
		}
		for (loops = 0; loops < LOOPS_MAX; loops++) {
			redisReply *r;
			size_t k, n;

			a.l[offi] = (size_t)i64s(os, off);
			r = tcr_eval(st, s, TCR_LUA_IDS, 0, (int)(3 + ntags), a.n, a.v, a.l);
			if (!r) {
				ret = TC_ERR;
				break;
			}
			if (r->type != REDIS_REPLY_ARRAY) {
				ret = tcr_reply_err(st, NULL, r, "list ids");
				tcr_reply_free(r);
				break;
			}
			/* one reply: every id of the shard (the script reads the id
			 * index or the tags' links whole) */
			n = r->elements;
			hold(st, r);
			for (k = 0; k < r->elements; k++) {
				if (r->element[k] && r->element[k]->type == REDIS_REPLY_STRING) {
					emit(ctx, r->element[k]->str, r->element[k]->len);
				}
			}
			unhold(st);
			(void)n;
			(void)off;
			break;
		}
		args_free(&a);
	}
	return ret;
}

/* Tags of several shards, merged: the shards' replies give their string
 * objects to one array, sorted as byte strings, duplicates dropped. */
static int cmp_reply(const void *a, const void *b)
{
	const redisReply *x = *(redisReply *const *)a, *y = *(redisReply *const *)b;
	size_t ml = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->str, y->str, ml);

	return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

static int take_strings(redisReply *all, redisReply *r)
{
	size_t k;

	for (k = 0; k < r->elements; k++) {
		redisReply *e = r->element[k];

		if (!e || e->type != REDIS_REPLY_STRING) {
			continue;
		}
		if (all->elements == (size_t)all->integer) {
			/* an array reply's integer field is free: it holds the capacity */
			size_t cap = all->integer ? (size_t)all->integer * 2 : 64;
			redisReply **n = realloc(all->element, cap * sizeof(*n));

			if (!n) {
				return -1;
			}
			all->element = n;
			all->integer = (long long)cap;
		}
		all->element[all->elements++] = e;
		r->element[k] = NULL;
	}
	return 0;
}

static int redis_tags(void *sp, tc_emit_fn emit, void *ctx)
{
	tcr_state *st = sp;
	redisReply *all = calloc(1, sizeof(*all));
	int s, ret = TC_OK;
	size_t i, w;

	op_begin(st);
	if (!all) {
		return tcr_fail(st, "out of memory");
	}
	all->type = REDIS_REPLY_ARRAY;
	for (s = 0; s < st->nshards && ret == TC_OK; s++) {
		char key[KEYBUF], ns[24], os[32] = "0";
		long loops;
		int kind = 0;

		/* SSCAN steps of the registry, until its cursor is 0 again: the
		 * tags of finite entries (s:), then those of forever entries (f:) */
		for (loops = 0; loops < LOOPS_MAX; loops++) {
			char ik[KEYBUF], tmp[KEYBUF], H[KEYBUF];
			const char *argv[8] = {key, ik, tmp, ns, os, "1000", H, kind ? "f:" : "s:"};
			size_t lens[8];
			redisReply *r;

			lens[0] = tcr_key(st, s, 'G', NULL, 0, key, sizeof(key));
			lens[1] = tcr_key(st, s, 'I', NULL, 0, ik, sizeof(ik));
			lens[2] = tcr_key(st, s, 'x', "tags", 4, tmp, sizeof(tmp));
			lens[3] = (size_t)i64s(ns, now_s());
			lens[4] = strlen(os);
			lens[5] = 4;
			lens[6] = tcr_shard_prefix(st, s, H, sizeof(H));
			lens[7] = 2;
			r = tcr_eval(st, s, TCR_LUA_TAGS, 0, 3, 8, argv, lens);
			if (!r) {
				ret = TC_ERR;
				break;
			}
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1]
			    || r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len == 0
			    || r->element[0]->len >= sizeof(os) || r->element[1]->type != REDIS_REPLY_ARRAY) {
				ret = tcr_reply_err(st, NULL, r, "list tags");
				tcr_reply_free(r);
				break;
			}
			memcpy(os, r->element[0]->str, r->element[0]->len);
			os[r->element[0]->len] = '\0';
			if (take_strings(all, r->element[1]) != 0) {
				ret = tcr_fail(st, "out of memory");
			}
			tcr_reply_free(r);
			if (strcmp(os, "0") == 0) {
				if (kind++) {
					break;
				}
			}
		}
	}
	if (ret == TC_OK) {
		if (all->elements > 1) {
			qsort(all->element, all->elements, sizeof(*all->element), cmp_reply);
			for (i = 0, w = 0; i < all->elements; i++) {
				if (w > 0 && cmp_reply(&all->element[w - 1], &all->element[i]) == 0) {
					tcr_reply_free(all->element[i]);
					continue;
				}
				all->element[w++] = all->element[i];
			}
			all->elements = w;
		}
		hold(st, all);
		for (i = 0; i < all->elements; i++) {
			emit(ctx, all->element[i]->str, all->element[i]->len);
		}
		unhold(st);
	} else {
		tcr_reply_free(all);
	}
	return ret;
}

/* ---------------------------------------------------------- fill, meta */

static long long info_field(const char *info, const char *name)
{
	size_t nl = strlen(name);
	const char *p = info;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == info || p[-1] == '\n') && p[nl] == ':') {
			return atoll(p + nl + 1);
		}
		p += nl;
	}
	return -1;
}

/* used_memory / maxmemory of the fullest node (of total_system_memory
 * when maxmemory is 0). */
static int redis_fill(void *sp)
{
	tcr_state *st = sp;
	int s, best = 0;

	op_begin(st);
	for (s = 0; s < st->nshards; s++) {
		const char *argv[2] = {"INFO", "memory"};
		size_t lens[2] = {4, 6};
		redisReply *r = tcr_shard_cmd(st, s, 0, 2, argv, lens);
		long long used, max, total;
		int pct = 0;

		if (!r) {
			return 0;
		}
		if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) {
			used = info_field(r->str, "used_memory");
			max = info_field(r->str, "maxmemory");
			total = info_field(r->str, "total_system_memory");
			if (max <= 0) {
				max = total;
			}
			if (used > 0 && max > 0) {
				pct = (int)(used * 100 / max);
			}
		}
		tcr_reply_free(r);
		if (pct > best) {
			best = pct;
		}
		if (st->mode != TCR_CLUSTER) {
			break;
		}
	}
	return best > 100 ? 100 : best;
}

static int redis_metadata(void *sp, tc_str id, tc_meta *meta, tc_emit_fn emit, void *ctx)
{
	tcr_state *st = sp;
	char key[KEYBUF];
	int shard = tcr_shard_of(st, id.p, id.len);
	const char *argv[1];
	size_t lens[1];
	redisReply *r;
	tcr_record rec;

	op_begin(st);
	argv[0] = key;
	lens[0] = tcr_key(st, shard, 'e', id.p, id.len, key, sizeof(key));
	r = tcr_eval(st, shard, TCR_LUA_META, 1, 1, 1, argv, lens);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_STRING || tcr_record_parse(r->str, r->len, &rec, 1) != 0 || !rec.tags
	    || rec.expire < now_s()) {
		int e = r->type == REDIS_REPLY_ERROR ? tcr_reply_err(st, NULL, r, "getMetadatas") : TC_MISS;

		tcr_reply_free(r);
		return e;
	}
	meta->expire = rec.expire;
	meta->mtime = rec.mtime;
	hold(st, r);
	record_tags(&rec, emit, ctx);
	unhold(st);
	return TC_OK;
}

static int set_expire(tcr_state *st, tc_str id, int64_t extra, int force)
{
	char xs[24], ns[24], gs[24];
	int shard = tcr_shard_of(st, id.p, id.len);
	entry_keys k;
	const char *argv[9];
	size_t lens[9];
	redisReply *r;
	int ret;

	op_begin(st);
	entry_args(st, shard, id, &k, argv, lens);
	argv[5] = xs;
	lens[5] = (size_t)i64s(xs, extra);
	argv[6] = ns;
	lens[6] = (size_t)i64s(ns, now_s());
	argv[7] = gs;
	lens[7] = (size_t)i64s(gs, st->cfg.grace);
	argv[8] = force ? "1" : "0";
	lens[8] = 1;
	r = tcr_eval(st, shard, TCR_LUA_TOUCH, 0, 3, 9, argv, lens);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_INTEGER) {
		ret = tcr_reply_err(st, NULL, r, force ? "___expire" : "touch");
	} else {
		ret = r->integer ? TC_OK : TC_MISS;
	}
	tcr_reply_free(r);
	return ret;
}

static int redis_touch(void *sp, tc_str id, int64_t extra)
{
	return set_expire(sp, id, extra, 0);
}

static int redis_expire_now(void *sp, tc_str id)
{
	return set_expire(sp, id, 0, 1);
}

/* ---------------------------------------------------------------- stats */

static void redis_stats(void *sp, tc_stat_fn emit, void *ctx)
{
	tcr_state *st = sp;
	int64_t entries = 0, tags = 0, used = -1;
	int s, ok = 1;

	op_begin(st);
	for (s = 0; s < st->nshards && ok; s++) {
		char ik[KEYBUF], tk[KEYBUF];
		const char *a1[2] = {"HLEN", ik}, *a2[2] = {"SCARD", tk};
		size_t l1[2] = {4, 0}, l2[2] = {5, 0};
		redisReply *r;

		l1[1] = tcr_key(st, s, 'I', NULL, 0, ik, sizeof(ik));
		l2[1] = tcr_key(st, s, 'G', NULL, 0, tk, sizeof(tk));
		r = tcr_shard_cmd(st, s, 0, 2, a1, l1);
		ok = r && r->type == REDIS_REPLY_INTEGER;
		/* less the anchor ('') the key holds once a save gave it a TTL
		 * (the id index also counts expired entries not yet dropped) */
		entries += ok && r->integer > 0 ? r->integer - 1 : 0;
		tcr_reply_free(r);
		if (!ok) {
			break;
		}
		r = tcr_shard_cmd(st, s, 0, 2, a2, l2);
		ok = r && r->type == REDIS_REPLY_INTEGER;
		tags += ok && r->integer > 0 ? r->integer - 1 : 0;
		tcr_reply_free(r);
		if (ok) {
			/* forever entries and their tags: J and F, no anchors */
			l1[1] = tcr_key(st, s, 'J', NULL, 0, ik, sizeof(ik));
			l2[1] = tcr_key(st, s, 'F', NULL, 0, tk, sizeof(tk));
			r = tcr_shard_cmd(st, s, 0, 2, a1, l1);
			entries += r && r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
			tcr_reply_free(r);
			r = tcr_shard_cmd(st, s, 0, 2, a2, l2);
			tags += r && r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
			tcr_reply_free(r);
		}
	}
	if (ok) {
		const char *argv[2] = {"INFO", "memory"};
		size_t lens[2] = {4, 6};
		redisReply *r = tcr_shard_cmd(st, 0, 0, 2, argv, lens);

		if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)) {
			used = info_field(r->str, "used_memory");
		}
		tcr_reply_free(r);
	}
	emit(ctx, "hits", st->hits);
	emit(ctx, "misses", st->misses);
	emit(ctx, "writes", st->saves);
	emit(ctx, "removes", st->removes);
	emit(ctx, "cleans", st->cleans);
	emit(ctx, "errors", st->errors);
	emit(ctx, "reconnects", st->reconnects);
	emit(ctx, "redirects", st->redirects);
	emit(ctx, "script_loads", st->noscript);
	emit(ctx, "bad_records", st->bad_records);
	emit(ctx, "shards", st->nshards);
	if (ok) {
		emit(ctx, "entries", entries);
		emit(ctx, "tags", tags);
	}
	if (used >= 0) {
		emit(ctx, "bytes_used", used);
	}
}

/* --------------------------------------------------------------- verify */

/* entries checked by one verify script (each about 30 Redis calls) */
#define VERIFY_IDS 64

/* glob-escape a key prefix for SCAN MATCH */
static size_t glob_escape(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in && n + 3 < cap; in++) {
		if (strchr("*?[]\\", *in)) {
			out[n++] = '\\';
		}
		out[n++] = *in;
	}
	out[n] = '\0';
	return n;
}

static int verify_batch(tcr_state *st, int shard, redisReply **ids, size_t n, tc_emit_fn emit, void *ctx,
                        int *problems)
{
	char key[KEYBUF], rk[KEYBUF], H[KEYBUF], ns[24], gs[24];
	const char **argv = malloc(sizeof(*argv) * (n + 5));
	size_t *lens = malloc(sizeof(*lens) * (n + 5)), i;
	redisReply *r;

	if (!argv || !lens) {
		free(argv);
		free(lens);
		return tcr_fail(st, "out of memory");
	}
	argv[0] = key;
	lens[0] = tcr_key(st, shard, 'I', NULL, 0, key, sizeof(key));
	argv[1] = rk;
	lens[1] = tcr_key(st, shard, 'G', NULL, 0, rk, sizeof(rk));
	argv[2] = H;
	lens[2] = tcr_shard_prefix(st, shard, H, sizeof(H));
	argv[3] = ns;
	lens[3] = (size_t)i64s(ns, now_s());
	argv[4] = gs;
	lens[4] = (size_t)i64s(gs, st->cfg.grace);
	for (i = 0; i < n; i++) {
		argv[5 + i] = ids[i]->str + lens[2] + 2;
		lens[5 + i] = ids[i]->len - lens[2] - 2;
	}
	r = tcr_eval(st, shard, TCR_LUA_VERIFY, 0, 2, (int)(n + 5), argv, lens);
	free(argv);
	free(lens);
	if (!r) {
		return TC_ERR;
	}
	if (r->type != REDIS_REPLY_ARRAY) {
		int e = tcr_reply_err(st, NULL, r, "verify");

		tcr_reply_free(r);
		return e;
	}
	hold(st, r);
	for (i = 0; i < r->elements; i++) {
		if (r->element[i] && r->element[i]->type == REDIS_REPLY_STRING) {
			emit(ctx, r->element[i]->str, r->element[i]->len);
			(*problems)++;
		}
	}
	unhold(st);
	return TC_OK;
}

/* SCANs every master for this namespace's entries and checks each one's
 * links (TC_OK when none is missing). */
static int redis_verify(void *sp, tc_emit_fn emit, void *ctx)
{
	tcr_state *st = sp;
	char pat[KEYBUF];
	size_t pl = glob_escape(st->cfg.prefix, pat, sizeof(pat) - 8);
	int s, problems = 0, ret = TC_OK;

	op_begin(st);
	memcpy(pat + pl, "{*}e:*", 7);
	/* one SCAN per distinct node: on a cluster, the shards' nodes */
	for (s = 0; s < st->nshards && ret == TC_OK; s++) {
		char cursor[32] = "0";
		long loops;
		int first_of_node = 1, t;

		if (st->mode == TCR_CLUSTER) {
			tcr_conn *mine = tcr_cluster_node(st, st->shard_slot[s]);

			for (t = 0; t < s && mine; t++) {
				if (tcr_cluster_node(st, st->shard_slot[t]) == mine) {
					first_of_node = 0;
				}
			}
			if (!mine) {
				ret = TC_ERR;
				break;
			}
		} else if (s > 0) {
			break;
		}
		if (!first_of_node) {
			continue;
		}
		for (loops = 0; loops < LOOPS_MAX; loops++) {
			const char *argv[6] = {"SCAN", cursor, "MATCH", pat, "COUNT", "1000"};
			size_t lens[6] = {4, strlen(cursor), 5, strlen(pat), 5, 4}, k;
			redisReply *r = tcr_shard_cmd(st, s, 0, 6, argv, lens), *keys;

			if (!r) {
				ret = TC_ERR;
				break;
			}
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1]
			    || r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY
			    || r->element[0]->len >= sizeof(cursor)) {
				ret = tcr_reply_err(st, NULL, r, "verify (SCAN)");
				tcr_reply_free(r);
				break;
			}
			memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
			keys = r->element[1];
			/* group the keys by shard: each shard's script checks its own */
			for (t = 0; t < st->nshards && ret == TC_OK; t++) {
				char H[KEYBUF];
				size_t hl = tcr_shard_prefix(st, t, H, sizeof(H)), nb = 0;
				redisReply **batch = malloc(sizeof(*batch) * (keys->elements + 1));

				if (!batch) {
					ret = tcr_fail(st, "out of memory");
					break;
				}
				for (k = 0; k < keys->elements; k++) {
					redisReply *kk = keys->element[k];

					if (kk && kk->type == REDIS_REPLY_STRING && kk->len > hl + 2
					    && memcmp(kk->str, H, hl) == 0 && kk->str[hl] == 'e' && kk->str[hl + 1] == ':') {
						batch[nb++] = kk;
					}
				}
				/* a few ids per script: a check of 1000 entries is some
				 * 30,000 Redis calls, 0.3 to 0.5 s of a loaded server's
				 * time, during which every other client waits */
				for (k = 0; k < nb && ret == TC_OK; k += VERIFY_IDS) {
					ret = verify_batch(st, t, batch + k, nb - k < VERIFY_IDS ? nb - k : VERIFY_IDS, emit, ctx,
					                   &problems);
				}
				free(batch);
			}
			tcr_reply_free(r);
			if (strcmp(cursor, "0") == 0) {
				break;
			}
		}
	}
	if (ret != TC_OK) {
		/* on_error=miss returns the list: an aborted check must not read
		 * as a consistent store ([]) */
		char m[sizeof(st->err) + 32];
		int ml = snprintf(m, sizeof(m), "check incomplete: %s", st->fail ? st->err : "failed");

		emit(ctx, m, ml < 0 ? 0 : (size_t)ml < sizeof(m) ? (size_t)ml : sizeof(m) - 1);
		return ret;
	}
	return problems ? TC_MISS : TC_OK;
}

/* --------------------------------------------------------------- errors */

static int redis_failure(void *sp, char *err)
{
	tcr_state *st = sp;

	if (!st || !st->fail) {
		return TC_FAIL_NONE;
	}
	st->fail = 0;
	snprintf(err, TC_ERRBUF, "%s", st->err);
	if (st->on_error == TCR_ON_ERROR_EXCEPTION) {
		return TC_FAIL_THROW;
	}
	tcr_log_failure(st->err);
	return TC_FAIL_QUIET;
}

void tc_redis_minfo(tc_info_fn emit, void *ctx)
{
	const char *codecs = tcr_codec_names();
	char buf[128];

	snprintf(buf, sizeof(buf), "hiredis %d.%d.%d; compression: %s", HIREDIS_MAJOR, HIREDIS_MINOR,
	         HIREDIS_PATCH, codecs[0] ? codecs : "none");
	emit(ctx, "Redis backend", buf);
}

void tc_redis_shutdown(void)
{
	tcr_conn_shutdown();
	tcr_cluster_shutdown();
	tcr_lua_shutdown();
}

/* stampede protection (issue 14): the options here, the leases in
 * tc_redis_lease.c */
static const tc_stale_opts *redis_stale_opts(const void *config)
{
	return &((const tcr_config *)config)->stale;
}

const tc_backend tc_backend_redis = {
	.name = "redis",
	.caps = TC_CAP_LISTINGS | TC_CAP_FOREVER,
	.options = redis_options,
	.config_size = sizeof(tcr_config),
	.defaults = redis_defaults,
	.open = redis_open,
	.close = redis_close,
	.load = redis_load,
	.save = redis_save,
	.remove = redis_remove,
	.clean = redis_clean,
	.ids = redis_ids,
	.tags = redis_tags,
	.fill = redis_fill,
	.metadata = redis_metadata,
	.load_tags = redis_load_tags,
	.touch = redis_touch,
	.expire_now = redis_expire_now,
	.stats = redis_stats,
	.verify = redis_verify,
	.failure = redis_failure,
	.minfo = tc_redis_minfo,
	.mshutdown = tc_redis_shutdown,
	.atfork_child = tcr_conn_atfork_child,
	.stale_opts = redis_stale_opts,
	.lease_ops = &tc_lease_redis,
};
