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

#define PAGE      2000    /* ids per reply when listing: each is checked (alive()), so a page is a few ms of the server */
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

/* A working set's name: pid.seq.random (unique to this call), by hand. */
static size_t tmp_name(tcr_state *st, char *buf)
{
	size_t n = tc_dec64(buf, (int64_t)tc_getpid());

	buf[n++] = '.';
	n += tc_dec64(buf + n, (int64_t)++st->tmp_seq);
	buf[n++] = '.';
	n += tc_dec64(buf + n, (int64_t)tcr_rand());
	return n;
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
			lens[1] = tcr_key(st, shard, 'i', NULL, 0, ik, sizeof(ik));
			argv[2] = H;
			lens[2] = hl;
			argv[3] = id.p;
			lens[3] = id.len;
			argv[4] = ns;
			lens[4] = tc_dec64(ns, now);
			argv[5] = gs;
			lens[5] = tc_dec64(gs, st->cfg.grace);
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

static int redis_save(void *sp, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                      int64_t expire, char *err)
{
	tcr_state *st = sp;
	char H[KEYBUF], es[40], ns[24], gs[24];
	int shard = tcr_shard_of(st, id.p, id.len);
	int64_t now = now_s();
	double score;
	size_t reclen = 0, i, hl;
	char *rec;
	args_t a;
	redisReply *r;
	int ret, evict;

	(void)err;
	op_begin(st);
	if (data.len > (size_t)st->cfg.max_value_size) {
		return tcr_fail(st, "save: a value of %zu bytes is larger than max_value_size (%lld)", data.len,
		                (long long)st->cfg.max_value_size);
	}
	if (expire != TC_EXPIRE_NEVER && st->cfg.lifetimelimit > 0 && expire > now + st->cfg.lifetimelimit) {
		expire = now + st->cfg.lifetimelimit;
	}
	if (expire < now - 1) {
		/* Already expired (a negative lifetime): only load($id, true) can
		 * see it, for grace seconds. Its index scores must not claim it
		 * died long ago, or the trimming of old members (score < now -
		 * grace) would drop its links while it still exists. */
		expire = now - 1;
	}
	/* the save's score: its expiry bucket plus a version (see tc_redis_lua.c) */
	score = (double)tcr_bucket(expire, now) * TCR_SCORE_SCALE + (double)(tcr_rand() & 0xffff);
	evict = may_evict(st, shard);
	if (evict < 0) {
		return TC_ERR;
	}
	rec = tcr_record_build(st, data, tags, ntags, score, expire, now, &reclen);
	args_init(&a, 2 * ntags + 16);
	/* KEYS: entry, id index, registry, the tags' keys */
	args_key(&a, st, shard, 'e', id.p, id.len);
	args_key(&a, st, shard, 'i', NULL, 0);
	args_key(&a, st, shard, 'T', NULL, 0);
	for (i = 0; i < ntags; i++) {
		args_key(&a, st, shard, 't', tags[i].p, tags[i].len);
	}
	if (st->jarm) {
		args_jkeys(&a, st->jarm);
	}
	hl = tcr_shard_prefix(st, shard, H, sizeof(H));
	args_add(&a, H, hl);
	args_add(&a, id.p, id.len);
	args_add(&a, rec, reclen);
	args_add(&a, es, tc_dec64(es, (int64_t)score));   /* an integer below 2^53 */
	args_add(&a, ns, tc_dec64(ns, now));
	args_add(&a, gs, tc_dec64(gs, st->cfg.grace));
	/* the short path keeps links as they are: not when the server may have
	 * evicted one of them (a full save puts them back) */
	args_add(&a, evict ? "0" : "1", 1);
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
	r = tcr_eval(st, shard, st->jarm ? TCR_LUA_SAVE_J : TCR_LUA_SAVE, 0, (int)(3 + ntags + (st->jarm ? 3 : 0)),
	             a.n, a.v, a.l);
	free(rec);
	args_free(&a);
	if (!r) {
		return TC_ERR;
	}
	ret = TC_OK;
	if (r->type != REDIS_REPLY_INTEGER) {
		ret = tcr_reply_err(st, NULL, r, "save");
	}
	tcr_reply_free(r);
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
	lens[1] = tcr_key(st, shard, 'i', NULL, 0, k->ik, sizeof(k->ik));
	argv[2] = k->rk;
	lens[2] = tcr_key(st, shard, 'T', NULL, 0, k->rk, sizeof(k->rk));
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
	lens[5] = tc_dec64(ns, now_s());
	argv[6] = gs;
	lens[6] = tc_dec64(gs, st->cfg.grace);
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
	const tcr_jarm *j = strcmp(mode, "old") ? st->jarm : NULL;
	args_t a;

	args_init(&a, 2 * ntags + 17);
	/* KEYS: id index, registry, two working sets, the tags' keys */
	args_key(&a, st, shard, 'i', NULL, 0);
	args_key(&a, st, shard, 'T', NULL, 0);
	tmp_name(st, tmp);
	args_key(&a, st, shard, 'x', tmp, strlen(tmp));
	strcat(tmp, ".2");
	args_key(&a, st, shard, 'x', tmp, strlen(tmp));
	for (i = 0; i < ntags; i++) {
		args_key(&a, st, shard, 't', tags[i].p, tags[i].len);
	}
	if (j) {
		args_jkeys(&a, j);
	}
	args_add(&a, H, tcr_shard_prefix(st, shard, H, sizeof(H)));
	args_add(&a, mode, strlen(mode));
	args_add(&a, ns, tc_dec64(ns, now_s()));
	args_add(&a, gs, tc_dec64(gs, st->cfg.grace));
	args_add(&a, cs, tc_dec64(cs, chunk_of(st)));
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
		if (left <= 0 || (!strcmp(mode, "old") && left < chunk_of(st))) {
			break;
		}
	}
	args_free(&a);
	return ret;
}

/* clean('old'), second pass: expired members of every tag. */
static int gc_tags(tcr_state *st, int shard)
{
	char key[KEYBUF], ik[KEYBUF], H[KEYBUF], ns[24], gs[24], os[24], cs[24];
	const char *argv[8];
	size_t lens[8];
	long long off = 0;
	long loops;

	argv[0] = key;
	lens[0] = tcr_key(st, shard, 'T', NULL, 0, key, sizeof(key));
	argv[1] = ik;
	lens[1] = tcr_key(st, shard, 'i', NULL, 0, ik, sizeof(ik));
	argv[2] = H;
	lens[2] = tcr_shard_prefix(st, shard, H, sizeof(H));
	argv[3] = ns;
	lens[3] = tc_dec64(ns, now_s());
	argv[4] = gs;
	lens[4] = tc_dec64(gs, st->cfg.grace);
	argv[6] = "200";
	lens[6] = 3;
	argv[7] = cs;
	lens[7] = tc_dec64(cs, chunk_of(st));
	for (loops = 0; loops < LOOPS_MAX; loops++) {
		redisReply *r;
		long long seen, kept;

		argv[5] = os;
		lens[5] = tc_dec64(os, off);
		r = tcr_eval(st, shard, TCR_LUA_GCTAGS, 0, 2, 8, argv, lens);
		if (!r) {
			return TC_ERR;
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1]
		    || r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_INTEGER) {
			int e = tcr_reply_err(st, NULL, r, "clean old");

			tcr_reply_free(r);
			return e;
		}
		seen = r->element[0]->integer;
		kept = r->element[1]->integer;
		tcr_reply_free(r);
		off += kept;
		if (seen < 200) {
			break;
		}
	}
	return TC_OK;
}

static int clean_old(tcr_state *st)
{
	int s;

	for (s = 0; s < st->nshards; s++) {
		if (clean_shard(st, s, "old", NULL, 0) != TC_OK || gc_tags(st, s) != TC_OK) {
			return TC_ERR;
		}
	}
	return TC_OK;
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
	return TC_OK;
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
		args_key(&a, st, s, 'i', NULL, 0);
		tmp_name(st, tmp);
		args_key(&a, st, s, 'x', tmp, strlen(tmp));
		strcat(tmp, ".2");
		args_key(&a, st, s, 'x', tmp, strlen(tmp));
		for (i = 0; i < ntags; i++) {
			args_key(&a, st, s, 't', tags[i].p, tags[i].len);
		}
		args_add(&a, H, tcr_shard_prefix(st, s, H, sizeof(H)));
		args_add(&a, m, strlen(m));
		args_add(&a, ns, tc_dec64(ns, now_s()));
		offi = a.n;
		args_add(&a, os, 0);
		args_add(&a, cs, tc_dec64(cs, PAGE));
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

			a.l[offi] = tc_dec64(os, off);
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
			/* the script appends the page's size before it dropped ids
			 * that expired inside their bucket */
			n = r->elements;
			if (n > 0 && r->element[n - 1] && r->element[n - 1]->type == REDIS_REPLY_INTEGER) {
				n = (size_t)r->element[n - 1]->integer;
			}
			hold(st, r);
			for (k = 0; k < r->elements; k++) {
				if (r->element[k] && r->element[k]->type == REDIS_REPLY_STRING) {
					emit(ctx, r->element[k]->str, r->element[k]->len);
				}
			}
			unhold(st);
			if (n < PAGE) {
				break;
			}
			off += PAGE;
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
		char key[KEYBUF], ns[24], os[24];
		long long off = 0;
		long loops;

		for (loops = 0; loops < LOOPS_MAX; loops++) {
			char ik[KEYBUF], tmp[KEYBUF], H[KEYBUF];
			const char *argv[7] = {key, ik, tmp, ns, os, "1000", H};
			size_t lens[7];
			redisReply *r;
			long long seen;

			lens[0] = tcr_key(st, s, 'T', NULL, 0, key, sizeof(key));
			lens[1] = tcr_key(st, s, 'i', NULL, 0, ik, sizeof(ik));
			tmp_name(st, H);
			lens[2] = tcr_key(st, s, 'x', H, strlen(H), tmp, sizeof(tmp));
			lens[3] = tc_dec64(ns, now_s());
			lens[4] = tc_dec64(os, off);
			lens[5] = 4;
			lens[6] = tcr_shard_prefix(st, s, H, sizeof(H));
			r = tcr_eval(st, s, TCR_LUA_TAGS, 0, 3, 7, argv, lens);
			if (!r) {
				ret = TC_ERR;
				break;
			}
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1]
			    || r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_ARRAY) {
				ret = tcr_reply_err(st, NULL, r, "list tags");
				tcr_reply_free(r);
				break;
			}
			seen = r->element[0]->integer;
			if (take_strings(all, r->element[1]) != 0) {
				ret = tcr_fail(st, "out of memory");
			}
			tcr_reply_free(r);
			if (seen < 1000) {
				break;
			}
			off += 1000;
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
	lens[5] = tc_dec64(xs, extra);
	argv[6] = ns;
	lens[6] = tc_dec64(ns, now_s());
	argv[7] = gs;
	lens[7] = tc_dec64(gs, st->cfg.grace);
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
		const char *a1[2] = {"ZCARD", ik}, *a2[2] = {"ZCARD", tk};
		size_t l1[2] = {5, 0}, l2[2] = {5, 0};
		redisReply *r;

		l1[1] = tcr_key(st, s, 'i', NULL, 0, ik, sizeof(ik));
		l2[1] = tcr_key(st, s, 'T', NULL, 0, tk, sizeof(tk));
		r = tcr_shard_cmd(st, s, 0, 2, a1, l1);
		ok = r && r->type == REDIS_REPLY_INTEGER;
		entries += ok ? r->integer : 0;
		tcr_reply_free(r);
		if (!ok) {
			break;
		}
		r = tcr_shard_cmd(st, s, 0, 2, a2, l2);
		ok = r && r->type == REDIS_REPLY_INTEGER;
		tags += ok ? r->integer : 0;
		tcr_reply_free(r);
		if (ok) {
			/* the registry also holds the id index's deadline, under '' */
			const char *a3[3] = {"ZSCORE", tk, ""};
			size_t l3[3] = {6, l2[1], 0};

			r = tcr_shard_cmd(st, s, 0, 3, a3, l3);
			tags -= r && r->type == REDIS_REPLY_STRING ? 1 : 0;
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
	lens[0] = tcr_key(st, shard, 'i', NULL, 0, key, sizeof(key));
	argv[1] = rk;
	lens[1] = tcr_key(st, shard, 'T', NULL, 0, rk, sizeof(rk));
	argv[2] = H;
	lens[2] = tcr_shard_prefix(st, shard, H, sizeof(H));
	argv[3] = ns;
	lens[3] = tc_dec64(ns, now_s());
	argv[4] = gs;
	lens[4] = tc_dec64(gs, st->cfg.grace);
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
