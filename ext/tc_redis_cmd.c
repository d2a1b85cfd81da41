/*
 * tc_redis_cmd.c: the key layout, the entry record, and commands routed to
 * the node that serves a shard.
 *
 * Shards. Every id belongs to one shard: FNV-1a 32 of the id, modulo the
 * number of shards (1 unless the shards option or a cluster says more).
 * Every key of a shard carries the shard's hash tag, so an entry, the tags
 * it is linked into and the id index it is listed in sit in one cluster
 * slot, and one Lua script can change them atomically. On a cluster the N
 * hash tags are chosen so their slots spread evenly over the slot range
 * ("<s>.<k>", the first k whose slot falls in the s-th Nth of 16384), and a
 * tag query runs once per shard. The number of shards is part of the data
 * layout: a namespace must always be opened with the same value.
 *
 *   <prefix>{<hashtag>}e:<id>    the entry record
 *   <prefix>{<hashtag>}t:<tag>   a tag's ids, scored by expire
 *   <prefix>{<hashtag>}i         every id, scored by expire
 *   <prefix>{<hashtag>}T         every tag, scored by its longest expire
 *
 * The entry record (one STRING, read with one GET):
 *
 *   0   u8      format version (2)
 *   1   u8      codec of the value: 0 none, 1 gzip, 2 lz4, 3 zstd
 *   2   f64 LE  the save's score: the expiry bucket (see tcr_bucket)
 *               * 65536 + a 16-bit version (tc_redis_lua.c)
 *   10  f64 LE  mtime
 *   18  u32 LE  length of the tag list
 *   22  u32 LE  length of the value once decompressed
 *   26  f64 LE  expire (unix time; 9999999999 = never)
 *   34  tags    (u16 LE length, bytes) per tag
 *   ..  value   as stored (compressed or not)
 *
 * Doubles because Lua reads them (struct.unpack '<d'): every expiry a
 * lifetime can give is an integer far below 2^53.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include "tc_redis.h"

/* ---------------------------------------------------------------- layout */

int tcr_layout_init(tcr_state *st, char *err)
{
	int n = (int)st->cfg.shards, s;

	if (n <= 0) {
		n = st->mode == TCR_CLUSTER ? 16 : 1;
	}
	st->nshards = n;
	st->hashtag = calloc((size_t)n, sizeof(*st->hashtag));
	st->shard_slot = calloc((size_t)n, sizeof(*st->shard_slot));
	if (!st->hashtag || !st->shard_slot) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	for (s = 0; s < n; s++) {
		if (n == 1) {
			strcpy(st->hashtag[s], "0");
		} else {
			unsigned lo = (unsigned)((uint64_t)s * TCR_SLOTS / (uint64_t)n);
			unsigned hi = (unsigned)((uint64_t)(s + 1) * TCR_SLOTS / (uint64_t)n);
			unsigned k;

			for (k = 0; k < 1000000; k++) {
				unsigned slot;

				snprintf(st->hashtag[s], TCR_HASHTAG_MAX, "%u.%u", (unsigned)s % 10000u, k % 1000000u);
				slot = tcr_crc16(st->hashtag[s], strlen(st->hashtag[s])) & (TCR_SLOTS - 1);
				if (slot >= lo && slot < hi) {
					break;
				}
			}
		}
		st->shard_slot[s] = (uint16_t)(tcr_crc16(st->hashtag[s], strlen(st->hashtag[s])) & (TCR_SLOTS - 1));
	}
	st->plen = strlen(st->cfg.prefix);
	return TC_OK;
}

int tcr_shard_of(const tcr_state *st, const char *id, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	if (st->nshards == 1) {
		return 0;
	}
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)id[i];
		h *= 16777619u;
	}
	return (int)(h % (uint32_t)st->nshards);
}

/* "<prefix>{<hashtag>}" */
size_t tcr_shard_prefix(const tcr_state *st, int shard, char *buf, size_t cap)
{
	/* on every command's path: memcpy, not snprintf (a third of the
	 * client's instructions per load went to formatting) */
	size_t pl = strlen(st->cfg.prefix), hl = strlen(st->hashtag[shard]);

	if (pl + hl + 2 >= cap) {
		return 0;
	}
	memcpy(buf, st->cfg.prefix, pl);
	buf[pl] = '{';
	memcpy(buf + pl + 1, st->hashtag[shard], hl);
	buf[pl + 1 + hl] = '}';
	buf[pl + 2 + hl] = '\0';
	return pl + 2 + hl;
}

/* "<prefix>{<hashtag>}<kind>" or "...<kind>:<name>" (binary-safe name) */
size_t tcr_key(const tcr_state *st, int shard, char kind, const char *name, size_t nlen,
               char *buf, size_t cap)
{
	size_t n = tcr_shard_prefix(st, shard, buf, cap);

	if (!n || n + 2 + nlen + 1 > cap) {
		return 0;
	}
	buf[n++] = kind;
	if (name) {
		buf[n++] = ':';
		memcpy(buf + n, name, nlen);
		n += nlen;
	}
	buf[n] = '\0';
	return n;
}

/* ---------------------------------------------------------------- record */

static void put_u32(char *p, uint32_t v)
{
	p[0] = (char)(v & 0xff);
	p[1] = (char)((v >> 8) & 0xff);
	p[2] = (char)((v >> 16) & 0xff);
	p[3] = (char)((v >> 24) & 0xff);
}

static uint32_t get_u32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void put_f64(char *p, double d)
{
	uint64_t u;
	int i;

	memcpy(&u, &d, 8);
	for (i = 0; i < 8; i++) {
		p[i] = (char)((u >> (8 * i)) & 0xff);
	}
}

static int get_f64(const char *p, double *out)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t u = 0;
	double d;
	int i;

	for (i = 0; i < 8; i++) {
		u |= (uint64_t)b[i] << (8 * i);
	}
	memcpy(&d, &u, 8);
	if (!isfinite(d) || d > 9.2e18 || d < -9.2e18) {
		return -1;
	}
	*out = d;
	return 0;
}

/* Checks a record's header (and, unless header_only, that its lengths fit
 * the bytes given). -1 for anything that is not a record we wrote. */
int tcr_record_parse(const char *p, size_t len, tcr_record *r, int header_only)
{
	uint32_t tl;
	double score, mtime, expire;

	if (len < TCR_HDR || (unsigned char)p[0] != TCR_RECORD_VERSION || (unsigned char)p[1] > TCR_CODEC_ZSTD) {
		return -1;
	}
	r->codec = (unsigned char)p[1];
	if (get_f64(p + 2, &score) != 0 || get_f64(p + 10, &mtime) != 0 || get_f64(p + 26, &expire) != 0) {
		return -1;
	}
	r->expire = (int64_t)expire;
	r->mtime = (int64_t)mtime;
	tl = get_u32(p + 18);
	r->raw_len = get_u32(p + 22);
	r->tags_len = tl;
	if ((size_t)tl > len - TCR_HDR) {
		if (!header_only) {
			return -1;
		}
		r->tags = NULL;
		r->data = NULL;
		r->data_len = 0;
		return 0;
	}
	r->tags = p + TCR_HDR;
	r->data = p + TCR_HDR + tl;
	r->data_len = len - TCR_HDR - tl;
	if (!header_only && r->codec == TCR_CODEC_NONE && r->data_len != r->raw_len) {
		return -1;
	}
	return 0;
}

char *tcr_record_build(tcr_state *st, tc_str data, const tc_str *tags, size_t ntags,
                       double score, int64_t expire, int64_t mtime, size_t *outlen)
{
	size_t tl = 0, i, off, cap, clen;
	int codec = TCR_CODEC_NONE;
	char *rec;

	for (i = 0; i < ntags; i++) {
		tl += 2 + tags[i].len;
	}
	if (st->codec != TCR_CODEC_NONE && st->level > 0 && data.len >= (size_t)st->cfg.compress_threshold
	    && data.len > 0) {
		codec = st->codec;
		cap = TCR_HDR + tl + tcr_compress_bound(codec, data.len);
	} else {
		cap = TCR_HDR + tl + data.len;
	}
	rec = malloc(cap ? cap : 1);
	if (!rec) {
		return NULL;
	}
	rec[0] = TCR_RECORD_VERSION;
	put_f64(rec + 2, score);
	put_f64(rec + 10, (double)mtime);
	put_u32(rec + 18, (uint32_t)tl);
	put_u32(rec + 22, (uint32_t)data.len);
	put_f64(rec + 26, (double)expire);
	off = TCR_HDR;
	for (i = 0; i < ntags; i++) {
		rec[off] = (char)(tags[i].len & 0xff);
		rec[off + 1] = (char)((tags[i].len >> 8) & 0xff);
		memcpy(rec + off + 2, tags[i].p, tags[i].len);
		off += 2 + tags[i].len;
	}
	if (codec != TCR_CODEC_NONE) {
		clen = cap - off;
		/* stored compressed only when that saves space */
		if (tcr_compress(codec, st->level, data.p, data.len, rec + off, &clen) == 0 && clen < data.len) {
			rec[1] = (char)codec;
			*outlen = off + clen;
			return rec;
		}
	}
	if (cap < off + data.len) {
		char *n = realloc(rec, off + data.len);

		if (!n) {
			free(rec);
			return NULL;
		}
		rec = n;
	}
	rec[1] = TCR_CODEC_NONE;
	memcpy(rec + off, data.p, data.len);
	*outlen = off + data.len;
	return rec;
}

/* The expiry a save's score carries: its expire rounded up to g seconds,
 * g = 1/16 of the time left, from 1 to 60 s (never: exact). Saves of an id
 * inside one bucket keep one score, so a save with the same tags need not
 * touch its links (tc_redis_lua.c, the save's head). An entry's own TTL
 * and load() go by the exact expire in the record; the id index, links and
 * index key TTLs by the bucket, at most 60 s later. The numbers are
 * TCR_BUCKET_DIV and TCR_BUCKET_MAX; the scripts get them from here
 * (tc_redis_lua.c, script_join()): a touch's new expiry is the stored one
 * plus the extra lifetime, known only inside its script. */
int64_t tcr_bucket(int64_t expire, int64_t now)
{
	int64_t g;

	if (expire >= TC_EXPIRE_NEVER) {
		return expire;
	}
	g = expire > now ? (expire - now) / TCR_BUCKET_DIV : 0;
	g = g < 1 ? 1 : g > TCR_BUCKET_MAX ? TCR_BUCKET_MAX : g;
	return (expire + g - 1) / g * g;
}

/* --------------------------------------------------------------- routing */

static int is_err(const redisReply *r, const char *prefix)
{
	return r && r->type == REDIS_REPLY_ERROR && r->str && strncmp(r->str, prefix, strlen(prefix)) == 0;
}

/* ASKING, then the command, on the node a migration points at. */
static redisReply *ask(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	const char *a[1] = {"ASKING"};
	size_t al[1] = {6};
	redisReply *r;

	if (tcr_conn_send(st, cn, 1, a, al) != TC_OK || tcr_conn_send(st, cn, argc, argv, lens) != TC_OK) {
		return NULL;
	}
	r = tcr_conn_recv(st, cn);
	if (!r) {
		return NULL;
	}
	tcr_reply_free(r);
	return tcr_conn_recv(st, cn);
}

/* One command for one shard: to its cluster node, or to the master (the
 * replica for reads, when configured). Follows MOVED and ASK, asks the
 * sentinels again when the master is gone or answers READONLY, and falls
 * back from a dead replica to the master. */
redisReply *tcr_shard_cmd(tcr_state *st, int shard, int read, int argc, const char **argv,
                          const size_t *lens)
{
	int hop, master_retry = 0, tryagain = 0;
	tcr_conn *cn = NULL, *asking_to = NULL;

	for (hop = 0; hop < 6; hop++) {
		redisReply *r;

		if (asking_to) {
			cn = asking_to;
			r = ask(st, cn, argc, argv, lens);
			asking_to = NULL;
		} else {
			if (st->mode == TCR_CLUSTER) {
				cn = tcr_cluster_node(st, st->shard_slot[shard]);
			} else {
				cn = read ? tcr_reader(st) : tcr_master(st);
			}
			if (!cn) {
				return NULL;
			}
			r = tcr_conn_cmd(st, cn, argc, argv, lens);
		}
		if (!r) {
			if (cn == st->replica && st->replica) {
				st->replica_failed = 1;   /* reads go to the master from now on */
				st->fail = 0;
				continue;
			}
			if (st->mode == TCR_SENTINEL && !master_retry) {
				master_retry = 1;
				tcr_master_failed(st, cn);
				st->fail = 0;
				continue;
			}
			if (st->mode == TCR_CLUSTER) {
				tcr_cluster_stale(st);   /* a failover may have moved the slot */
			}
			return NULL;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			if (st->mode == TCR_CLUSTER && (is_err(r, "MOVED ") || is_err(r, "ASK "))) {
				int asking;
				tcr_conn *to = NULL;

				if (tcr_cluster_redirect(st, r->str, &asking, &to) == TC_OK) {
					tcr_reply_free(r);
					if (asking) {
						asking_to = to;
					}
					continue;
				}
				tcr_fail(st, "%s: cannot follow \"%.100s\"", cn->name, r->str);
				tcr_reply_free(r);
				return NULL;
			}
			if (is_err(r, "READONLY") && !master_retry) {
				/* a failover turned our master into a replica */
				master_retry = 1;
				tcr_reply_free(r);
				tcr_master_failed(st, cn);
				continue;
			}
			if (is_err(r, "TRYAGAIN") && tryagain < 4) {
				/* a slot migrating under a multi-key script: wait for the move */
				struct timespec ts = {0, 25000000L << tryagain};

				tryagain++;
				hop--;
				tcr_reply_free(r);
				nanosleep(&ts, NULL);
				continue;
			}
			if (is_err(r, "CLUSTERDOWN") || is_err(r, "TRYAGAIN")) {
				tcr_fail(st, "%s: %.200s", cn->name, r->str);
				tcr_reply_free(r);
				return NULL;
			}
		}
		memcpy(st->last, cn->name, strlen(cn->name) + 1);
		return r;
	}
	tcr_fail(st, "%s: too many redirections", cn ? cn->name : "redis");
	return NULL;
}
