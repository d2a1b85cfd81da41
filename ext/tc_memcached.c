/*
 * tc_memcached.c: the memcached engine behind TagCache\Memcached: its
 * options (Zend_Cache_Backend_Libmemcached's and Magento's names, plus
 * ours) and the operations of the tc_backend vtable.
 *
 * memcached cannot list keys, so tags work through version keys: each
 * entry records the namespace's epoch and the version of each of its tags
 * at save time; a load compares them with the current ones, and a clean by
 * tag (or clean('all'), for the epoch) gives them new random values. The
 * epoch lives in a clean log that also names the last tags cleaned, read
 * with every load: a process caches the tag versions it read and uses them
 * until the log names their tag (see "clean log" below). Version keys and
 * the log live on the server of the entry that reads them
 * (memcached_*_by_key with the entry's key as group key), one copy per
 * server: a load talks to one server only, and a server that is down
 * affects only its own keys. Listings (getIds,
 * getTags, getIdsMatching*) are empty, and the capabilities say so.
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
#include <sys/random.h>
#ifdef HAVE_TAGCACHE_ZLIB
#include <zlib.h>
#endif
#include "tc_memcached.h"
#include "tc_lease.h"
#include "tc_hash.h"
#include "tc_util.h"

#define PREFIX_MAX  128
#define HDR         40        /* entry record header, see build_record() */
#define REC_MAGIC   'T'
#define REC_VERSION 1
#define CODEC_NONE  0
#define CODEC_ZLIB  1
#define ITEM_OVERHEAD 128     /* memcached's item header, key and suffix, rounded up */
#define ENTRY_KEY_LEN 11      /* entry_key(): 64 bits, 6 a character */
#define MONTH       (30 * 86400)  /* memcached reads a longer TTL as a unix time */

static const tc_option_spec mc_options[] = {
	{"servers", TC_OPT_SERVERS, offsetof(tcm_config, servers), 0, 0, 0},
	{"server", TC_OPT_SERVERS, offsetof(tcm_config, servers), 0, 0, 0},   /* as TagCache\Redis */
	{"port", TC_OPT_INT, offsetof(tcm_config, port), 1, 65535, 0},
	{"persistent", TC_OPT_STRING, offsetof(tcm_config, persistent), 0, 0, 0},
	{"timeout", TC_OPT_SECONDS, offsetof(tcm_config, timeout), 0, 0, 0},
	{"read_timeout", TC_OPT_SECONDS, offsetof(tcm_config, read_timeout), 0, 0, 0},
	{"retry_interval", TC_OPT_SECONDS, offsetof(tcm_config, retry_interval), 0, 0, 0},
	{"on_error", TC_OPT_STRING, offsetof(tcm_config, on_error), 0, 0, 0},
	{"prefix", TC_OPT_STRING, offsetof(tcm_config, prefix), 0, 0, 0},
	{"grace", TC_OPT_INT, offsetof(tcm_config, grace), 0, 30 * 86400, 0},
	{"compress_data", TC_OPT_INT, offsetof(tcm_config, compress_data), 0, 9, 0},
	{"compression", TC_OPT_BOOL, offsetof(tcm_config, compression), 0, 0, 0},
	{"compress_threshold", TC_OPT_SIZE, offsetof(tcm_config, compress_threshold), 0, INT64_C(1) << 31, 0},
	{"max_item_size", TC_OPT_SIZE, offsetof(tcm_config, max_item_size), 1024, INT64_C(1) << 30, 0},
	{"binary_protocol", TC_OPT_BOOL, offsetof(tcm_config, binary_protocol), 0, 0, 0},
	{"client", TC_OPT_MAP, offsetof(tcm_config, client), 0, 0, 0},
	{"hint_memory", TC_OPT_SIZE, offsetof(tcm_config, hint_memory), 0, INT64_C(1) << 40, 0},
	TC_STALE_OPTION_ROWS(tcm_config, stale),
	/* Zend_Cache_Backend_Memcached / Magento 1 <memcached> names with no
	 * meaning here: servers are never ejected, there is one pool */
	{"compatibility", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"failure_callback", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"hashed_directory_level", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"cache_dir", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"automatic_cleaning_factor", TC_OPT_IGNORED, 0, 0, 0, 0},
	{NULL, 0, 0, 0, 0, 0}
};

static void mc_defaults(void *config)
{
	tcm_config *c = config;

	memset(c, 0, sizeof(*c));
	tc_stale_defaults(&c->stale);
	strcpy(c->servers, "127.0.0.1:11211");
	c->port = 11211;
	c->timeout = 1.0;
	c->retry_interval = 1.0;
	strcpy(c->on_error, "miss");
	strcpy(c->prefix, "tc:");
	c->grace = 60;
	c->compress_threshold = 20480;
	c->max_item_size = 1024 * 1024;
	c->hint_memory = 8 * 1024 * 1024;
}

/* Zend_Cache_Backend_Libmemcached's 'client' options that map onto ours:
 * the name without OPT_ (any case) or the Memcached::OPT_* number. */
static int apply_client(tcm_config *c, char *err)
{
	const char *s = c->client;

	while (*s) {
		size_t len = strcspn(s, ",");
		char item[256], *eq, *name;
		double v;

		if (len && len < sizeof(item)) {
			memcpy(item, s, len);
			item[len] = '\0';
			eq = strchr(item, '=');
			if (eq) {
				*eq = '\0';
				name = item;
				if (!strncasecmp(name, "OPT_", 4)) {
					name += 4;
				}
				v = strtod(eq + 1, NULL);
				if (!strcasecmp(name, "compression") || !strcmp(name, "-1001")) {
					c->compression = v != 0 || !strcasecmp(eq + 1, "true");
				} else if (!strcasecmp(name, "prefix_key") || !strcmp(name, "-1002")) {
					if (strlen(eq + 1) >= sizeof(c->prefix)) {
						snprintf(err, TC_ERRBUF, "Option \"client\": prefix_key is too long");
						return TC_ERR_CONFIG;
					}
					strcpy(c->prefix, eq + 1);
				} else if (!strcasecmp(name, "connect_timeout") || !strcmp(name, "14")) {
					c->timeout = v / 1000.0;           /* ms */
				} else if (!strcasecmp(name, "poll_timeout") || !strcmp(name, "8")) {
					c->read_timeout = v / 1000.0;      /* ms */
				} else if (!strcasecmp(name, "recv_timeout") || !strcmp(name, "20")
				           || !strcasecmp(name, "send_timeout") || !strcmp(name, "19")) {
					c->read_timeout = v / 1000000.0;   /* us */
				} else if (!strcasecmp(name, "retry_timeout") || !strcmp(name, "15")) {
					c->retry_interval = v;             /* s */
				} else if (!strcasecmp(name, "binary_protocol") || !strcmp(name, "18")) {
					c->binary_protocol = v != 0 || !strcasecmp(eq + 1, "true");
				}
				/* distribution, hash, libketama_compatible: always ketama;
				 * anything else has no equivalent and is ignored */
			}
		}
		s += len;
		if (*s) {
			s++;
		}
	}
	return TC_OK;
}

static void mc_close(void *sp);
static void tcm_state_prepare(tcm_state *st);

static int mc_open(void **state, const void *config, char *err)
{
	tcm_state *st;
	size_t i;
	int r;

	st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	memcpy(&st->cfg, config, sizeof(st->cfg));
	*state = NULL;
	r = apply_client(&st->cfg, err);
	if (r != TC_OK) {
		goto fail;
	}
	r = TC_ERR_CONFIG;
	if (tc_on_error_parse(st->cfg.on_error, &st->on_error, err) != 0) {
		goto fail;
	}
	if (strlen(st->cfg.prefix) > PREFIX_MAX) {
		snprintf(err, TC_ERRBUF, "Option \"prefix\" must be at most %d bytes", PREFIX_MAX);
		goto fail;
	}
	for (i = 0; st->cfg.prefix[i]; i++) {
		unsigned char ch = (unsigned char)st->cfg.prefix[i];

		if (ch < 0x21 || ch > 0x7e) {
			snprintf(err, TC_ERRBUF, "Option \"prefix\" must be printable ASCII without spaces");
			goto fail;
		}
	}
	st->level = (int)st->cfg.compress_data;
	if (!st->level && st->cfg.compression) {
		st->level = 1;
	}
#ifndef HAVE_TAGCACHE_ZLIB
	if (st->level) {
		snprintf(err, TC_ERRBUF, "Option \"compress_data\": this build has no zlib");
		goto fail;
	}
#endif
	if (tcm_check_servers(&st->cfg, err) != TC_OK) {
		goto fail;
	}
	st->connect_ms = (int64_t)((st->cfg.timeout > 0 ? st->cfg.timeout : 1.0) * 1000);
	st->read_ms = (int64_t)((st->cfg.read_timeout > 0 ? st->cfg.read_timeout
	                         : (st->cfg.timeout > 0 ? st->cfg.timeout : 1.0)) * 1000);
	if (st->connect_ms < 1) {
		st->connect_ms = 1;
	}
	if (st->read_ms < 1) {
		st->read_ms = 1;
	}
	st->retry_s = (int64_t)(st->cfg.retry_interval + 0.999);
	tcm_state_prepare(st);
	*state = st;
	return TC_OK;
fail:
	mc_close(st);
	return r;
}

static void mc_close(void *sp)
{
	tcm_state *st = sp;

	if (!st) {
		return;
	}
	tcm_conn_release(st);
	free(st->held);
	free(st);
}

/* ------------------------------------------------------------ key layout */

/*
 *   <prefix>c              clean log: the epoch, the last cleans (one per server)
 *   <prefix><11 chars>     entry record: a 64-bit hash of the id (entry_key())
 *   <prefix>t:<tag>        tag version (one copy per server)
 * A tag of other bytes than [A-Za-z0-9_.{}-], or one too long for
 * memcached's 250-byte keys, is replaced by 32 hex digits of a 128-bit hash
 * (kind T); an id never reaches the protocol (its key is a hash). The
 * record holds the id, so two ids of one hash are told apart.
 */
static unsigned char safe_byte[256];   /* 1 for [A-Za-z0-9_.{}-]; safe_init() */
static const char key_digit[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
static char key_pair[4096][2];         /* 12 bits: the two characters of entry_key(), low 6 bits first */

static void safe_init(void)
{
	int c;

	if (safe_byte['a']) {
		return;
	}
	for (c = 0; c < 256; c++) {
		safe_byte[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
		               || c == '.' || c == '-' || c == '{' || c == '}';
	}
	for (c = 0; c < 4096; c++) {
		key_pair[c][0] = key_digit[c & 63];
		key_pair[c][1] = key_digit[c >> 6];
	}
}

static int safe_name(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i;
	unsigned ok = 1;

	for (i = 0; i < n; i++) {
		ok &= safe_byte[u[i]];
	}
	return (int)ok;
}

/* What make_key() and view_of() take from the prefix; mc_open() calls it
 * once the prefix is final (the tests' states call it too). */
static void tcm_state_prepare(tcm_state *st)
{
	safe_init();
	st->plen = strlen(st->cfg.prefix);
	st->phash = tc_hash(st->cfg.prefix, st->plen, 0x76696577);
	memcpy(st->logkey, st->cfg.prefix, st->plen);
	st->logkey[st->plen] = 'c';
	st->logkey[st->plen + 1] = '\0';
	st->logkey_len = st->plen + 1;
	st->vconn = NULL;
}

/* buf: at least TCM_KEY_MAX + 1 bytes */
static size_t make_key(const tcm_state *st, char kind, const char *name, size_t nlen, char *buf)
{
	size_t pl = st->plen;

	memcpy(buf, st->cfg.prefix, pl);
	if (!name) {
		buf[pl] = kind;
		buf[pl + 1] = '\0';
		return pl + 1;
	}
	if (nlen > 0 && pl + 2 + nlen <= TCM_KEY_MAX && safe_name(name, nlen)) {
		buf[pl] = kind;
		buf[pl + 1] = ':';
		memcpy(buf + pl + 2, name, nlen);
		buf[pl + 2 + nlen] = '\0';
		return pl + 2 + nlen;
	}
	{
		uint64_t h1 = tc_hash(name, nlen, 0x7463656e74727931), h2 = tc_hash(name, nlen, 0x3172746e65637400);

		return pl + (size_t)snprintf(buf + pl, TCM_KEY_MAX + 1 - pl, "%c:%016llx%016llx", kind - 32,
		                             (unsigned long long)h1, (unsigned long long)h2);
	}
}

/* The entry key of an id: <prefix> and 11 characters of [A-Za-z0-9_-],
 * the 64 bits of the id's hash (layout 3). Short on purpose: libmemcached
 * parses the reply's VALUE line a byte at a time (~37 instructions a key
 * byte), and every load reads this key back. The record holds the id: two
 * ids of one hash are a miss (stats: collisions), never each other's data.
 * buf: at least TCM_KEY_MAX + 1 bytes. *hh: the key of the entry's tag
 * hint (the id's hash and the prefix's: hint_find()). */
static size_t entry_key(const tcm_state *st, const char *id, size_t n, char *buf, uint64_t *hh)
{
	uint64_t h = tc_hash(id, n, UINT64_C(0x656e747279));
	size_t pl = st->plen;
	char *p = buf + pl;

	*hh = h ^ st->phash;
	memcpy(buf, st->cfg.prefix, pl);
	/* character i: bits 6i..6i+5 of the hash (two at a time) */
	memcpy(p, key_pair[h & 4095], 2);
	memcpy(p + 2, key_pair[(h >> 12) & 4095], 2);
	memcpy(p + 4, key_pair[(h >> 24) & 4095], 2);
	memcpy(p + 6, key_pair[(h >> 36) & 4095], 2);
	memcpy(p + 8, key_pair[(h >> 48) & 4095], 2);
	p[10] = key_digit[h >> 60];
	p[ENTRY_KEY_LEN] = '\0';
	return pl + ENTRY_KEY_LEN;
}

/* ------------------------------------------------------------- helpers */

static void op_begin(tcm_state *st)
{
	if (st->held) {
		free(st->held);
		st->held = NULL;
	}
	st->fail = 0;
}

static int64_t now_s(void)
{
	return tc_now();
}

/* A fresh 64-bit version: splitmix64 over a per-process state seeded from
 * getrandom() once, and again in a forked child (tc_getpid() changes), so
 * that a clean costs no system call per version (it took three: the tag's
 * version, the log record, the trim draw) while two processes still never
 * share a sequence. */
static uint64_t new_version(void)
{
	static uint64_t state;
	static pid_t seeded;
	uint64_t z;

	if (seeded != tc_getpid()) {
		uint64_t v = 0;

		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
			struct timespec ts;
			uint64_t seed[3];

			clock_gettime(CLOCK_REALTIME, &ts);
			seed[0] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
			seed[1] = (uint64_t)tc_getpid();
			seed[2] = state;
			v = tc_hash(seed, sizeof(seed), 0x76657273);
		}
		__atomic_xor_fetch(&state, v, __ATOMIC_RELAXED);
		seeded = tc_getpid();
	}
	z = __atomic_add_fetch(&state, UINT64_C(0x9e3779b97f4a7c15), __ATOMIC_RELAXED);   /* threads (ZTS) draw apart */
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return z ? z : 1;
}

static int parse_version(const char *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (n != 16) {
		return -1;
	}
	for (i = 0; i < n; i++) {
		char c = p[i];

		x <<= 4;
		if (c >= '0' && c <= '9') {
			x |= (uint64_t)(c - '0');
		} else if (c >= 'a' && c <= 'f') {
			x |= (uint64_t)(c - 'a' + 10);
		} else {
			return -1;
		}
	}
	*v = x;
	return 0;
}

/* memcached's exptime for an entry: 0 = none; the entry outlives its expiry
 * by `grace` for load($id, true); over 30 days it must be a unix time. */
static time_t exptime_of(const tcm_state *st, int64_t expire, int64_t now)
{
	int64_t ttl;

	if (expire >= TC_EXPIRE_NEVER) {
		return 0;
	}
	ttl = (expire > now ? expire - now : 0) + st->cfg.grace;
	if (ttl < 1) {
		ttl = 1;
	}
	return (time_t)(ttl > MONTH ? now + ttl : ttl);
}

static int failed(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, memcached_return_t rc,
                  const char *what)
{
	return tcm_fail(st, cn, group, glen, rc, what);
}

/* ----------------------------------------------------------- the record */

/*
 * u8 'T', u8 version, u8 codec, u8 0, u32 id length, u32 tag count,
 * u32 value length (decompressed), i64 expire, i64 mtime, u64 epoch (of
 * the clean log); the id; per tag: u16 length, the name, u64 its version; the
 * value (zlib-compressed when codec is 1). Native byte order.
 */
typedef struct {
	int codec;
	uint32_t id_len, ntags, raw_len;
	int64_t expire, mtime;
	uint64_t ns;
	const char *id;
	const char *tags;        /* ntags x (u16, bytes, u64) */
	size_t tags_len;
	const char *data;
	size_t data_len;
	char *base;              /* the whole record (st->held) */
	size_t len;
	int img;                 /* 1: the tags are byte for byte the image rec_parse() was given */
} rec_t;

/* The record p (len bytes) in r. img (img_len bytes, the tags of ntags an
 * earlier record had: a hint's image, or NULL): when the record's tags are
 * those bytes, they are not walked again (r->img = 1). */
static int rec_parse(char *p, size_t len, rec_t *r, const char *img, size_t img_len, uint32_t img_ntags)
{
	size_t off;
	uint32_t i;

	if (len < HDR || p[0] != REC_MAGIC || p[1] != REC_VERSION || (p[2] != CODEC_NONE && p[2] != CODEC_ZLIB)) {
		return -1;
	}
	r->codec = p[2];
	memcpy(&r->id_len, p + 4, 4);
	memcpy(&r->ntags, p + 8, 4);
	memcpy(&r->raw_len, p + 12, 4);
	memcpy(&r->expire, p + 16, 8);
	memcpy(&r->mtime, p + 24, 8);
	memcpy(&r->ns, p + 32, 8);
	off = HDR;
	if (r->id_len > len - off || r->ntags > TC_TAGS_MAX) {
		return -1;
	}
	r->id = p + off;
	off += r->id_len;
	r->tags = p + off;
	r->img = img && img_ntags == r->ntags && len - off >= img_len && memcmp(p + off, img, img_len) == 0;
	if (r->img) {
		off += img_len;   /* hint_put() checked those bytes as the walk below does */
	}
	for (i = 0; !r->img && i < r->ntags; i++) {
		uint16_t tl;

		if (len - off < 2) {
			return -1;
		}
		memcpy(&tl, p + off, 2);
		if (tl == 0 || tl > TC_TAG_MAX || len - off - 2 < (size_t)tl + 8) {
			return -1;
		}
		off += 2 + (size_t)tl + 8;
	}
	r->tags_len = (size_t)(p + off - r->tags);
	r->data = p + off;
	r->data_len = len - off;
	if (r->codec == CODEC_NONE && r->data_len != r->raw_len) {
		return -1;
	}
	/* deflate expands at most 1032:1 (zlib's FAQ): a longer announced
	 * value is no stream of ours, and load() must not allocate it (in PHP
	 * a fatal error past memory_limit) */
	if (r->codec == CODEC_ZLIB && (uint64_t)r->raw_len > (uint64_t)r->data_len * 1032 + 64) {
		return -1;
	}
	r->base = p;
	r->len = len;
	return 0;
}

/* ------------------------------------------------------- version reads */

/* A result's value, read in place as memcached_result_value() and
 * memcached_result_length() do (the struct is public, in
 * libmemcached-1.0/struct/result.h, and its layout part of the ABI: callers
 * allocate it), without a call into the library each; with the key's
 * fields, read the same way, ~65 instructions a load. */
static inline char *res_value(const memcached_result_st *r)
{
	return r->value.string;
}

static inline size_t res_length(const memcached_result_st *r)
{
	return (size_t)(r->value.end - r->value.string);
}

/* mget of n keys on the server of `group`: the values found (16 hex
 * digits) in vers[], have[i] = 1 for each. TC_OK or TC_ERR (recorded).
 * The first nraw keys (at most 2) are taken whole instead: raw[i] (NULL
 * when missing), rawlen[i], borrowed from the handle's result buffers
 * (writable; no copy, no malloc) until the next mget on the handle that
 * takes keys whole. Replies are fetched into the handle's spare result,
 * which trades places with slot i when it holds key i < nraw: an mget
 * with nraw = 0 leaves the earlier raw values alone. */
static int mget(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, const char *const *keys,
                const size_t *klens, size_t n, uint64_t *vers, char *have, size_t nraw, char **raw, size_t *rawlen)
{
	static char empty[1];
	memcached_return_t rc;
	size_t next = 0, i, jl = n - 1;
	char joined[TCM_KEY_MAX + 1];
	const char *jk = joined;

	if (n <= 2) {
		have[0] = 0;
		have[n - 1] = 0;
	} else {
		memset(have, 0, n);
	}
	for (i = 0; i < nraw; i++) {
		raw[i] = NULL;
		rawlen[i] = 0;
	}
	/* Text protocol: the keys go as one, joined by spaces, when that fits
	 * in a key. libmemcached writes "get <k1> <k2> ...\r\n" either way,
	 * byte for byte, and reads the replies the same way (up to END, however
	 * many keys were asked for), but each key it is given costs a writev
	 * into its buffer and a pass of its loop (~380 instructions a load for
	 * the log's key). Our keys never hold a space (make_key(), the prefix
	 * checked at open), VERIFY_KEY is off (libmemcached checks the length
	 * only), and all the keys go to the group's server, so the request is
	 * the one the keys would make. */
	for (i = 0; cn->text && n > 1 && i < n && jl <= TCM_KEY_MAX; i++) {
		jl += klens[i];
	}
	if (cn->text && n > 1 && jl <= TCM_KEY_MAX) {
		char *p = joined;

		for (i = 0; i < n; i++) {
			memcpy(p, keys[i], klens[i]);
			p += klens[i];
			*p++ = ' ';
		}
		rc = memcached_mget_by_key(cn->mc, group, glen, &jk, &jl, 1);
	} else {
		rc = memcached_mget_by_key(cn->mc, group, glen, keys, klens, n);
	}
	if (memcached_failed(rc)) {
		return failed(st, cn, group, glen, rc, "get");
	}
	for (;;) {
		memcached_result_st *res = cn->slot[TCM_RESULTS - 1];
		const char *k;
		size_t kl;

		if (!memcached_fetch_result(cn->mc, res, &rc)) {
			break;
		}
		k = res->item_key;
		kl = res->key_length;
		/* replies come in request order (text protocol): the key after
		 * the last one's first, then any */
		i = next < n ? next : 0;
		if (klens[i] != kl || memcmp(keys[i], k, kl) != 0) {
			for (i = 0; i < n; i++) {
				if (klens[i] == kl && memcmp(keys[i], k, kl) == 0) {
					break;
				}
			}
			if (i == n) {
				continue;
			}
		}
		next = i + 1;
		if (i < nraw) {
			if (!raw[i]) {
				cn->slot[TCM_RESULTS - 1] = cn->slot[i];
				cn->slot[i] = res;
				rawlen[i] = res_length(res);
				raw[i] = rawlen[i] ? res_value(res) : empty;
				have[i] = raw[i] != NULL;
			}
			continue;
		}
		have[i] = parse_version(res_value(res), res_length(res), &vers[i]) == 0;
	}
	if (rc != MEMCACHED_END && rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND) {
		for (i = 0; i < nraw; i++) {
			raw[i] = NULL;
		}
		return failed(st, cn, group, glen, rc, "get");
	}
	return TC_OK;
}

/* Key buffers for an entry's tags: one block, on the stack (inl) up to
 * KS_INLINE keys, else malloc'd (mem). th[]: the tags' name hashes. */
#define KS_INLINE 12
#define KS_PER_KEY (sizeof(char *) + sizeof(size_t) + 3 * sizeof(uint64_t) + TCM_KEY_MAX + 1 + 1)
typedef struct {
	char (*buf)[TCM_KEY_MAX + 1];
	const char **keys;
	size_t *lens;
	uint64_t *vers, *th, *want;
	char *have;
	char *mem;
	uint64_t inl[(KS_INLINE * KS_PER_KEY + 7) / 8];
} keyset;

static int keyset_init(keyset *ks, size_t n)
{
	char *p;

	n = n ? n : 1;
	ks->mem = NULL;
	if (n <= KS_INLINE) {
		p = (char *)ks->inl;
	} else if (!(p = ks->mem = malloc(n * KS_PER_KEY))) {
		return -1;
	}
	ks->vers = (uint64_t *)p;
	ks->th = ks->vers + n;
	ks->want = ks->th + n;
	ks->lens = (size_t *)(ks->want + n);
	ks->keys = (const char **)(ks->lens + n);
	ks->buf = (char (*)[TCM_KEY_MAX + 1])(ks->keys + n);
	ks->have = (char *)(ks->buf + n);
	return 0;
}

static void keyset_free(keyset *ks)
{
	if (ks->mem) {
		free(ks->mem);
		ks->mem = NULL;
	}
}

static void keyset_put(keyset *ks, size_t i, const tcm_state *st, char kind, const char *name, size_t nlen)
{
	ks->lens[i] = make_key(st, kind, name, nlen, ks->buf[i]);
	ks->keys[i] = ks->buf[i];
}

/* ------------------------------------------------------------ tag hints */

/*
 * The tag names an entry had when this process last read or wrote it, so
 * that a load can ask for the entry, the clean log and (a guess) the
 * versions of its tags that are not cached in one round trip. A missing
 * or wrong guess costs the second round trip, never a wrong answer: the
 * versions compared are always those of the tags named in the record that
 * was read.
 *
 * Per process, sized by memory, not by a count: a chained hash table on
 * the 64-bit hash of the id and the prefix (entry_key()), one malloc'd node
 * per entry holding its tags' hashes and an image of the record's tags as
 * this process last saved or checked them (the record's own bytes: per tag
 * u16 length, the name without prefix, u64 version), the whole (nodes,
 * their malloc overhead, the bucket array) kept within hint_memory
 * (tagcache.memcached.hint_memory, default 8M: about 28,000 entries of 8
 * tags of 12 bytes). Nothing is evicted until the budget is full; then the
 * least recently used node goes. Two entry keys of one hash share a node:
 * a wrong guess, found as such (the names are compared with the record's).
 * A record whose tags are byte for byte the image needs neither a walk of
 * its tags nor a comparison of their names (check_image()). The largest
 * hint_memory of the instances that used it is the table's budget; 0 turns
 * hints off for an instance.
 */
#define HINT_NODE_OVERHEAD 16     /* malloc's, counted against the budget */
#define HINT_MIN_BUCKETS 1024

typedef struct hint_node {
	struct hint_node *chain;              /* same bucket */
	struct hint_node *newer, *older;      /* LRU list */
	uint64_t h;
	uint32_t ntags;
	uint32_t len;                         /* bytes after the struct: th[] and the image */
	uint64_t th[];                        /* the tags' hashes (tag_hash()), then the image */
} hint_node;

/* the record's tags as last saved or checked: u16 length, name, u64 version, per tag */
#define HINT_IMG(n) ((char *)((n)->th + (n)->ntags))
#define HINT_IMG_LEN(n) ((size_t)(n)->len - (size_t)(n)->ntags * sizeof(uint64_t))

static uint64_t tag_hash(const char *name, size_t len);

static struct {
	hint_node **buckets;
	size_t nbuckets;                      /* a power of two */
	size_t budget, used;                  /* bytes */
	size_t count;
	int64_t evictions;
	hint_node *newest, *oldest;
} hints;

static size_t hint_cost(const hint_node *n)
{
	return sizeof(*n) + n->len + HINT_NODE_OVERHEAD;
}

static void hint_unlink_lru(hint_node *n)
{
	if (n->newer) {
		n->newer->older = n->older;
	} else {
		hints.newest = n->older;
	}
	if (n->older) {
		n->older->newer = n->newer;
	} else {
		hints.oldest = n->newer;
	}
	n->newer = n->older = NULL;
}

static void hint_push_lru(hint_node *n)
{
	n->older = hints.newest;
	n->newer = NULL;
	if (hints.newest) {
		hints.newest->newer = n;
	}
	hints.newest = n;
	if (!hints.oldest) {
		hints.oldest = n;
	}
}

/* The pointer that points at the node of hash h (or at NULL, its chain's end). */
static hint_node **hint_ref(uint64_t h)
{
	hint_node **pp = &hints.buckets[h & (hints.nbuckets - 1)];

	while (*pp && (*pp)->h != h) {
		pp = &(*pp)->chain;
	}
	return pp;
}

static void hint_drop(hint_node **pp)
{
	hint_node *n = *pp;

	*pp = n->chain;
	hint_unlink_lru(n);
	hints.used -= hint_cost(n);
	hints.count--;
	free(n);
}

static void hints_free(void)
{
	while (hints.oldest) {
		hint_drop(hint_ref(hints.oldest->h));
	}
	free(hints.buckets);
	memset(&hints, 0, sizeof(hints));
}

/* The table at the budget of st (grown, never shrunk); 0 when it is usable. */
static int hints_ready(const tcm_state *st)
{
	size_t want = (size_t)st->cfg.hint_memory, nb;

	if (want == 0) {
		return -1;
	}
	if (hints.buckets && want <= hints.budget) {
		return 0;
	}
	/* about one bucket per 256 bytes of budget: chains of one or two at the
	 * budget's fill with typical hints (~170 bytes) */
	for (nb = HINT_MIN_BUCKETS; nb * 256 < want; nb *= 2) {
	}
	if (nb != hints.nbuckets) {
		hint_node **b = calloc(nb, sizeof(*b));
		hint_node *n;

		if (!b) {
			return hints.buckets ? 0 : -1;
		}
		/* rehash: every node into its new chain, LRU order kept */
		for (n = hints.oldest; n; n = n->newer) {
			n->chain = b[n->h & (nb - 1)];
			b[n->h & (nb - 1)] = n;
		}
		hints.used -= hints.nbuckets * sizeof(*b);
		free(hints.buckets);
		hints.buckets = b;
		hints.nbuckets = nb;
		hints.used += nb * sizeof(*b);
	}
	hints.budget = want;
	return 0;
}

/* The hint of an entry (h: entry_key()'s hint hash), or NULL. */
static hint_node *hint_find(const tcm_state *st, uint64_t h)
{
	hint_node *n;

	if (st->cfg.hint_memory == 0 || !hints.buckets) {
		return NULL;
	}
	n = *hint_ref(h);
	if (n && n != hints.newest) {
		hint_unlink_lru(n);
		hint_push_lru(n);
	}
	return n;
}

/* Whether the hint names the record's tags, in its order (their versions
 * may differ). */
static int hint_matches(const hint_node *n, const rec_t *rec)
{
	const char *img = HINT_IMG(n);
	size_t off = 0;
	uint32_t i;

	if (n->ntags != rec->ntags || HINT_IMG_LEN(n) != rec->tags_len) {
		return 0;
	}
	for (i = 0; i < rec->ntags; i++) {
		uint16_t tl, il;

		memcpy(&tl, rec->tags + off, 2);
		memcpy(&il, img + off, 2);
		if (il != tl || memcmp(img + off + 2, rec->tags + off + 2, tl) != 0) {
			return 0;
		}
		off += 2 + (size_t)tl + 8;
	}
	return 1;
}

/* Remember the tags of an entry (h: entry_key()'s hint hash): img, the
 * record's tags (n of them, img_len bytes, as rec_parse() reads them);
 * th[i], their hashes, or NULL to make them here. */
static void hint_put(const tcm_state *st, uint64_t h, const char *img, size_t img_len, size_t n,
                     const uint64_t *th)
{
	hint_node **pp, *node;
	size_t len, i, off;

	if (hints_ready(st) != 0) {
		return;
	}
	/* the image must be one rec_parse() accepts: check_image() takes it
	 * in place of the record's walk */
	for (i = 0, off = 0; i < n; i++) {
		uint16_t tl;

		if (img_len - off < 2) {
			return;
		}
		memcpy(&tl, img + off, 2);
		if (tl == 0 || tl > TC_TAG_MAX || img_len - off - 2 < (size_t)tl + 8) {
			return;
		}
		off += 2 + (size_t)tl + 8;
	}
	if (off != img_len || n > TC_TAGS_MAX) {
		return;
	}
	len = n * sizeof(uint64_t) + img_len;
	pp = hint_ref(h);
	if (*pp) {
		hint_drop(pp);
		pp = hint_ref(h);
	}
	if (sizeof(*node) + len + HINT_NODE_OVERHEAD > hints.budget / 4) {
		return;
	}
	while (hints.oldest && hints.used + sizeof(*node) + len + HINT_NODE_OVERHEAD > hints.budget) {
		hint_drop(hint_ref(hints.oldest->h));
		hints.evictions++;
		pp = hint_ref(h);
	}
	node = malloc(sizeof(*node) + len);
	if (!node) {
		return;
	}
	node->h = h;
	node->ntags = (uint32_t)n;
	node->len = (uint32_t)len;
	memcpy(HINT_IMG(node), img, img_len);
	for (i = 0, off = 0; i < n; i++) {
		uint16_t tl;

		memcpy(&tl, img + off, 2);
		node->th[i] = th ? th[i] : tag_hash(img + off + 2, tl);
		off += 2 + (size_t)tl + 8;
	}
	node->chain = NULL;
	*pp = node;
	hint_push_lru(node);
	hints.used += hint_cost(node);
	hints.count++;
}

/* ---------------------------------------------- clean log, version cache */

/*
 * <prefix>c, one per server, replaces a bare namespace version: u8 'C',
 * u8 3 (the layout: 3 since entry keys are hashes), u16 0, u32 0, u64 epoch (the namespace version: records hold it),
 * u64 base, then the 64-bit hashes of the tag keys cleaned, oldest first:
 * hash j is clean number base + 1 + j of the epoch, seq = base + count. A
 * clean by tag sets the tag's new version, then appends the hashes to the
 * log (memcached's append: atomic, one round trip, no read); one clean in
 * CLOG_TRIM_EVERY (and any clean of many tags) then trims the log to its
 * last CLOG_KEEP hashes with gets/cas (a lost race leaves it for the next).
 * clean('all') writes a new epoch.
 *
 * Each load reads the log with the entry (two keys, one round trip), so a
 * process can keep the tag versions it has read: a cached version is used
 * without reading its key while no clean of that tag (or a gap: more cleans
 * than the log holds since this process last looked, a new epoch) was seen
 * in the log. Per process and per (handle, server, prefix): a view (the
 * epoch and seq last read, a generation) and one direct-mapped table of
 * (key hash, version, generation, superseded) slots shared by the views. A
 * version named by the log as cleaned is kept as superseded: a record that
 * holds it is a miss with no further read (versions are random, a cleaned
 * one never comes back). A cached version that differs from the record's
 * is read again (the key may have been evicted and made anew by a save).
 * Tag keys are always read after the log (later in one multi-get, or in a
 * later one), so a version cached under a generation was current when the
 * log said so, or is named by a later part of the log.
 */
#define CLOG_MAGIC 'C'
#define CLOG_VERSION 4       /* 4: the log's readers hold a lease (LEASE_NS); 3 (session 7) did not wait */
#define CLOG_HDR 24
#define CLOG_KEEP 32         /* hashes a trim keeps */
#define CLOG_TRIM_EVERY 8    /* one clean in this many trims the log */
#define VIEWS_MAX 16
#define TVC_WAYS 4
#define TVC_MIN_SLOTS 1024
#define TVC_MAX_SLOTS (1u << 20)

typedef struct {
	uint64_t epoch, seq;
	uint32_t count;
	const char *hashes;      /* count x u64, unaligned */
} clog_t;

static int clog_parse(const char *p, size_t len, clog_t *c)
{
	uint64_t base;

	if (!p || len < CLOG_HDR || p[0] != CLOG_MAGIC || p[1] != CLOG_VERSION || (len - CLOG_HDR) % 8 != 0) {
		return -1;
	}
	memcpy(&c->epoch, p + 8, 8);
	memcpy(&base, p + 16, 8);
	c->count = (uint32_t)((len - CLOG_HDR) / 8);
	if (c->epoch == 0 || (len - CLOG_HDR) / 8 > UINT32_MAX || base > UINT64_MAX - c->count) {
		return -1;
	}
	c->seq = base + c->count;
	c->hashes = p + CLOG_HDR;
	return 0;
}

/* A log of `count` hashes whose last is clean number seq (count <= seq);
 * buf: CLOG_HDR + count * 8 bytes. Returns the length. */
static size_t clog_build(char *buf, uint64_t epoch, uint64_t seq, const char *hashes, uint32_t count)
{
	uint64_t base = seq - count;

	memset(buf, 0, CLOG_HDR);
	buf[0] = CLOG_MAGIC;
	buf[1] = CLOG_VERSION;
	memcpy(buf + 8, &epoch, 8);
	memcpy(buf + 16, &base, 8);
	if (count) {
		memmove(buf + CLOG_HDR, hashes, (size_t)count * 8);
	}
	return CLOG_HDR + (size_t)count * 8;
}

/* A tag's hash in the log and the version cache: of its name (the prefix
 * is the view's). */
static uint64_t tag_hash(const char *name, size_t len)
{
	uint64_t h = tc_hash(name, len, UINT64_C(0x636c6f67));

	return h ? h : 1;
}

typedef struct {
	uint64_t id;             /* hash of handle, server, prefix; 0: free */
	uint64_t epoch, seq;     /* epoch 0: not known */
	uint64_t gen;
	int64_t trust_until;     /* lease_now() before which the log last read is trusted (0: not) */
} tcm_view;

/*
 * The lease on the clean log (layout 4). A load that reads the log (the
 * entry and the log in one multi-get) takes t = lease_now() before the
 * request is sent; until t + L a load of this view whose tags' versions
 * are cached asks for the entry key alone, trusting the versions as of
 * that log. Every write of the log (a clean's append and trim,
 * clean('all'), a log made anew) returns only lease_wait() after it was
 * acknowledged: L plus a tenth for clock-rate drift between hosts. A
 * reader that did not see a clean read the log before the append applied,
 * so its trust ends before the append's acknowledgement + L, before the
 * clean returns: a load that starts after the clean returned reads the log
 * again. L is a protocol constant: every process sharing the servers must
 * use the same one (TECHNOTES "The clean log"). Test hook:
 * TAGCACHE_TEST_MEMCACHED_LEASE_MS (1..60000) replaces it, for a
 * deterministic test with a long lease.
 */
#define LEASE_NS INT64_C(1000000)   /* L: 1 ms */

static int64_t lease_ns(void)
{
	static int64_t l;

	if (l == 0) {
		const char *p = getenv("TAGCACHE_TEST_MEMCACHED_LEASE_MS");
		long ms = p ? atol(p) : 0;

		l = ms >= 1 && ms <= 60000 ? (int64_t)ms * 1000000 : LEASE_NS;
	}
	return l;
}

/* CLOCK_BOOTTIME (it counts a suspend, as a server's time does), else
 * CLOCK_MONOTONIC; ns. */
static int64_t lease_now(void)
{
	static int mono;
	struct timespec ts;

#ifdef CLOCK_BOOTTIME
	if (!mono && clock_gettime(CLOCK_BOOTTIME, &ts) != 0) {
		mono = 1;
	}
	if (mono)
#endif
	{
		clock_gettime(CLOCK_MONOTONIC, &ts);
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* After a write of the log acknowledged at `acked`: returns when every
 * reader's trust taken before it has run out (L + L/10 on lease_now()'s
 * clock; a signal does not cut it short). */
static void lease_wait(int64_t acked)
{
	int64_t end = acked + lease_ns() + lease_ns() / 10, now;

	while ((now = lease_now()) < end) {
		struct timespec d;

		d.tv_sec = (time_t)((end - now) / 1000000000);
		d.tv_nsec = (long)((end - now) % 1000000000);
		nanosleep(&d, NULL);
	}
}

typedef struct {
	uint64_t key, gen;       /* gen 0: empty */
	uint64_t ver;            /* the current version; 0: the log named the tag as cleaned since */
	uint64_t old;            /* the version the log last said was cleaned (0: none) */
} tver_slot;

static struct {
	tcm_view views[VIEWS_MAX];
	unsigned next_view;
	uint64_t gen;
	tver_slot *slot;         /* TVC_WAYS-slot sets */
	size_t mask;             /* slots - 1 */
	unsigned next_way;
} tvc;

/* This process's own clean: no view trusts the log it read before. */
static void lease_drop(void)
{
	unsigned i;

	for (i = 0; i < VIEWS_MAX; i++) {
		tvc.views[i].trust_until = 0;
	}
}

/* The view of the entry key's server, or NULL when versions are not
 * cached (hint_memory 0, or no memory). */
static tcm_view *view_of(tcm_state *st, tcm_conn *cn, const char *ekey, size_t eklen)
{
	uint64_t seed[2];
	uint32_t srv = 0;
	uint64_t id;
	size_t want;
	unsigned i;

	if (st->cfg.hint_memory == 0) {
		return NULL;
	}
	if (st->vconn == cn && cn->nservers == 1 && tvc.slot && tvc.views[st->vidx].id == st->vid) {
		return &tvc.views[st->vidx];   /* the last answer, still that view */
	}
	/* a quarter of hint_memory (the largest an instance asked for) */
	want = TVC_MIN_SLOTS;
	while (want < TVC_MAX_SLOTS && want * 2 * sizeof(tver_slot) <= (size_t)st->cfg.hint_memory / 4) {
		want *= 2;
	}
	if (!tvc.slot || want > tvc.mask + 1) {
		tver_slot *n = calloc(want, sizeof(tver_slot));

		if (n) {
			free(tvc.slot);   /* forgotten: read again */
			tvc.slot = n;
			tvc.mask = want - 1;
		} else if (!tvc.slot) {
			return NULL;
		}
	}
	if (cn->nservers > 1) {
		srv = memcached_generate_hash(cn->mc, ekey, eklen);
	}
	seed[0] = cn->key;
	seed[1] = srv;
	id = tc_hash(seed, sizeof(seed), st->phash) | 1;
	for (i = 0; i < VIEWS_MAX; i++) {
		if (tvc.views[i].id == id) {
			break;
		}
	}
	if (i == VIEWS_MAX) {
		i = tvc.next_view++ % VIEWS_MAX;
		tvc.views[i].id = id;
		tvc.views[i].epoch = 0;
		tvc.views[i].seq = 0;
		tvc.views[i].gen = ++tvc.gen;
		tvc.views[i].trust_until = 0;
	}
	st->vconn = cn;
	st->vid = id;
	st->vidx = i;
	return &tvc.views[i];
}

/* The slot of tag key hash th under view v, or (put) a slot for it: the
 * set's slot of another generation or view first, else one in turn. */
static tver_slot *tver_slot_of(const tcm_view *v, uint64_t th, uint64_t *key, int put)
{
	tver_slot *set;
	unsigned w;

	*key = (th ^ (v->id * UINT64_C(0x9e3779b97f4a7c15))) | 1;
	set = &tvc.slot[((*key ^ (*key >> 29)) & tvc.mask) & ~(size_t)(TVC_WAYS - 1)];
	for (w = 0; w < TVC_WAYS; w++) {
		if (set[w].key == *key) {
			return &set[w];
		}
	}
	if (!put) {
		return NULL;
	}
	for (w = 0; w < TVC_WAYS; w++) {
		if (set[w].gen == 0 || set[w].gen < v->gen) {
			return &set[w];   /* empty, or of an older generation (maybe another view's: it reads again) */
		}
	}
	return &set[tvc.next_way++ % TVC_WAYS];
}

/* 1: the current version in *ver; 0: not known. *old: a version known to
 * have been cleaned, or 0. */
static int tver_get(const tcm_view *v, uint64_t th, uint64_t *ver, uint64_t *old)
{
	uint64_t key;
	const tver_slot *s = tver_slot_of(v, th, &key, 0);

	*old = 0;
	if (!s || s->gen != v->gen) {
		return 0;
	}
	*old = s->old;
	*ver = s->ver;
	return s->ver != 0;
}

static void tver_put(const tcm_view *v, uint64_t th, uint64_t ver)
{
	uint64_t key;
	tver_slot *s = tver_slot_of(v, th, &key, 1);

	if (s->key != key || s->gen != v->gen) {
		s->old = 0;
	}
	s->key = key;
	s->ver = ver;
	s->gen = v->gen;
}

static void view_reset(tcm_view *v, uint64_t epoch, uint64_t seq)
{
	v->epoch = epoch;
	v->seq = seq;
	v->gen = ++tvc.gen;
}

/* What the log just read says: the cleans since the view's seq mark their
 * tags' versions superseded; a gap or a new epoch forgets them all. */
static void view_observe(tcm_view *v, const clog_t *c)
{
	uint64_t s;

	if (!c) {
		view_reset(v, 0, 0);
		return;
	}
	if (c->epoch != v->epoch || c->seq < v->seq || c->seq - v->seq > c->count) {
		view_reset(v, c->epoch, c->seq);
		return;
	}
	for (s = v->seq + 1; s <= c->seq; s++) {
		uint64_t th, key;
		tver_slot *sl;

		memcpy(&th, c->hashes + (size_t)(c->count - (c->seq - s) - 1) * 8, 8);
		sl = tver_slot_of(v, th, &key, 0);
		if (sl && sl->gen == v->gen && sl->ver) {
			sl->old = sl->ver;
			sl->ver = 0;
		}
	}
	v->seq = c->seq;
}

/* ----------------------------------------------------------- read path */

#define NEED_READ 2   /* check_tags(): versions still to read */

/* Where the tag of name hash th is among keys[first..n) (looked up from
 * *cursor on: the hint and the record name tags in one order), or n. */
static size_t find_key(const keyset *ks, size_t first, size_t n, size_t *cursor, uint64_t th)
{
	size_t j, k, m = n - first;

	for (k = 0; k < m; k++) {
		j = first + (*cursor - first + k) % m;
		if (ks->th[j] == th) {
			*cursor = j + 1 < n ? j + 1 : first;
			return j;
		}
	}
	return n;
}

/*
 * The record's tags against the current versions: those read by the first
 * multi-get (ks->keys[first..n)), else those cached under view v. TC_OK
 * (all equal), TC_MISS, TC_ERR (no memory) or NEED_READ with the keys still
 * to read in tk (*npend of them; tk->want[]: the record's versions of
 * them; tk is made here, on the first, and is to be freed by the caller
 * whatever the answer: it starts with tk->mem NULL). A version read now
 * decides; a cached one that is fresh and equal decides, as does a
 * superseded one that equals the record's (that tag was cleaned since);
 * one that is not cached or differs is read. ths: the tags' hashes in the
 * record's order (a hint that names the record's tags), or NULL.
 */
static int check_tags(const tcm_state *st, const tcm_view *v, const rec_t *rec, const keyset *ks, size_t first,
                      size_t n, const uint64_t *ths, keyset *tk, size_t *npend)
{
	size_t off, j, cursor = first;
	uint32_t i;

	*npend = 0;
	for (i = 0, off = 0; i < rec->ntags; i++) {
		char key[TCM_KEY_MAX + 1];
		const char *name;
		uint16_t tl;
		uint64_t rv, cv = 0, old, th;
		size_t kl = 0;

		memcpy(&tl, rec->tags + off, 2);
		name = rec->tags + off + 2;
		memcpy(&rv, name + tl, 8);
		off += 2 + (size_t)tl + 8;
		th = ths ? ths[i] : tag_hash(name, tl);
		j = n > first ? find_key(ks, first, n, &cursor, th) : n;
		if (j < n) {
			kl = make_key(st, 't', name, tl, key);
			if (kl == ks->lens[j] && memcmp(key, ks->keys[j], kl) == 0) {
				if (!ks->have[j] || ks->vers[j] != rv) {
					return TC_MISS;   /* cleaned by that tag, or its version was evicted */
				}
				continue;
			}
		}
		if (v) {
			if (tver_get(v, th, &cv, &old) && cv == rv) {
				continue;
			}
			if (old != 0 && old == rv) {
				return TC_MISS;   /* the log named this version of the tag as cleaned */
			}
		}
		if (!kl) {
			kl = make_key(st, 't', name, tl, key);
		}
		if (*npend == 0 && keyset_init(tk, rec->ntags) != 0) {
			return TC_ERR;
		}
		memcpy(tk->buf[*npend], key, kl + 1);
		tk->keys[*npend] = tk->buf[*npend];
		tk->lens[*npend] = kl;
		tk->th[*npend] = th;
		tk->want[*npend] = rv;
		(*npend)++;
	}
	return *npend ? NEED_READ : TC_OK;
}

/* The version of the image's next tag (u16 name length, the name, u64
 * version); *p moves past it. */
static inline uint64_t image_next(const char **p)
{
	uint16_t tl;
	uint64_t rv;

	memcpy(&tl, *p, 2);
	memcpy(&rv, *p + 2 + tl, 8);
	*p += 2 + (size_t)tl + 8;
	return rv;
}

/*
 * The common warm load in one pass: the first mget asked for no tag key
 * (every hinted tag's version is cached), and the record's tags are byte
 * for byte the hint's image (rec->img: the same names and versions as the
 * last time this process saved or checked the entry), but the view moved
 * since hint_slots() looked (the log named cleans, or a new generation
 * began), or a cached version differs from the image's. TC_OK when every
 * tag's cached version is current and equals the record's, TC_MISS when
 * one equals a version the log named as cleaned, else NEED_READ: a version
 * is not current or differs; fetch_entry() then takes the general path
 * (hint_matches(), check_tags()) from the start, which decides the same
 * way (this reads and changes nothing).
 */
static int check_image(const tcm_view *v, const hint_node *hint)
{
	const char *p = HINT_IMG(hint);
	uint32_t i;

	for (i = 0; i < hint->ntags; i++) {
		uint64_t key, rv = image_next(&p);
		const tver_slot *s = tver_slot_of(v, hint->th[i], &key, 0);

		if (!s || s->gen != v->gen) {
			return NEED_READ;
		}
		if (s->ver == 0 || s->ver != rv) {
			return s->old != 0 && s->old == rv ? TC_MISS : NEED_READ;
		}
	}
	return TC_OK;
}

/* The versions of check_tags()'s second read against the record's; they go
 * into the cache. */
static int check_pending(const tcm_view *v, const keyset *tk, size_t np)
{
	const uint64_t *want = tk->want;
	int r = TC_OK;
	size_t j;

	for (j = 0; j < np; j++) {
		if (tk->have[j] && v) {
			tver_put(v, tk->th[j], tk->vers[j]);
		}
		if (!tk->have[j] || tk->vers[j] != want[j]) {
			r = TC_MISS;
		}
	}
	return r;
}

/* Before a load's first mget: how many of the hint's tags have no current
 * version cached (their keys go into the mget). *same: 1 when every one
 * has, equal to the image's (the record that has the image's tags is then
 * valid as long as the view does not move). */
static size_t hint_slots(const tcm_view *view, const hint_node *hint, int *same)
{
	const char *p = HINT_IMG(hint);
	size_t miss = 0;
	uint32_t i;

	*same = 0;
	if (!view) {
		return hint->ntags;
	}
	/* the usual case: every version cached, current and the image's */
	for (i = 0; i < hint->ntags; i++) {
		uint64_t key, rv = image_next(&p);
		const tver_slot *s = tver_slot_of(view, hint->th[i], &key, 0);

		if (!s || s->gen != view->gen || s->ver == 0 || s->ver != rv) {
			break;
		}
	}
	if (i == hint->ntags) {
		*same = 1;
		return 0;
	}
	for (i = 0; i < hint->ntags; i++) {
		uint64_t key;
		const tver_slot *s = tver_slot_of(view, hint->th[i], &key, 0);

		if (!s || s->gen != view->gen || s->ver == 0) {
			miss++;
		}
	}
	return miss;
}

/* The keys of a load's first mget after the entry's (ks->keys[0]): the
 * clean log, then the hinted tags whose current version is not cached
 * (at most max in all). Returns how many keys in all. */
static size_t first_keys(const tcm_state *st, const tcm_view *view, const hint_node *hint, keyset *ks, size_t max)
{
	size_t n = 2, off = 0;
	uint32_t i;
	const char *img = hint ? HINT_IMG(hint) : NULL;

	ks->keys[1] = st->logkey;
	ks->lens[1] = st->logkey_len;
	for (i = 0; hint && i < hint->ntags && n < max; i++) {
		uint16_t nl;
		uint64_t key, th = hint->th[i];
		const tver_slot *s = view ? tver_slot_of(view, th, &key, 0) : NULL;

		memcpy(&nl, img + off, 2);
		if (!s || s->gen != view->gen || s->ver == 0) {
			keyset_put(ks, n, st, 't', img + off + 2, nl);
			ks->th[n++] = th;
		}
		off += 2 + (size_t)nl + 8;
	}
	return n;
}

/*
 * The entry of an id, checked: one mget of the record, the clean log and
 * the versions of the hinted tags that are not cached, on the entry's
 * server, then, only when a tag's version is still unknown (or differs from
 * the cached one), one mget of those. TC_OK with the record parsed (its
 * bytes in st->held), TC_MISS, or TC_ERR (recorded).
 */
static int fetch_entry(tcm_state *st, tc_str id, int allow_expired, rec_t *rec, char *ekey, size_t *eklen)
{
	tcm_conn *cn = tcm_conn_get(st);
	hint_node *hint;
	hint_node *mh = NULL;
	const uint64_t *ths = NULL;
	uint64_t hh;
	tcm_view *view;
	char *raw[2];
	size_t rawlen[2], n = 2, j, np = 0, nmiss = 0;
	int64_t t0 = 0;
	clog_t log;
	keyset ks, tk;
	/* the first mget's keys when it asks for no tag key: the entry, the log */
	const char *keys2[2];
	size_t lens2[2];
	uint64_t vers2[2];
	char have2[2];
	int r, have_log, same = 0, trusted = 0;

	if (!cn) {
		return TC_ERR;
	}
	*eklen = entry_key(st, id.p, id.len, ekey, &hh);
	hint = hint_find(st, hh);
	view = view_of(st, cn, ekey, *eklen);
	if (hint) {
		nmiss = hint_slots(view, hint, &same);
	}
	ks.mem = NULL;
	if (nmiss == 0) {
		ks.keys = keys2;
		ks.lens = lens2;
		ks.vers = vers2;
		ks.have = have2;
		ks.keys[1] = st->logkey;
		ks.lens[1] = st->logkey_len;
	} else if (keyset_init(&ks, 2 + nmiss) != 0) {
		keyset_free(&ks);
		return TC_ERR;
	}
	ks.keys[0] = ekey;
	ks.lens[0] = *eklen;
	if (nmiss > 0) {
		n = first_keys(st, view, hint, &ks, 2 + nmiss);
	}
	if (view) {
		/* before the request is sent: the lease a log read now gives */
		t0 = lease_now();
		trusted = nmiss == 0 && view->epoch != 0 && t0 < view->trust_until;
	}
	/* raw[]: in the handle's result buffers until its next mget that
	 * takes values whole (the second read below takes none). Within the
	 * view's lease, the entry alone: the log read at the lease's start
	 * stands for the log (n stays 2: no tag key was asked for) */
	r = mget(st, cn, ekey, *eklen, ks.keys, ks.lens, trusted ? 1 : n, ks.vers, ks.have, 2, raw, rawlen);
	if (r != TC_OK) {
		keyset_free(&ks);
		return TC_ERR;
	}
	if (trusted) {
		st->lease_loads++;
		have_log = 1;
		log.epoch = view->epoch;
	} else {
		have_log = clog_parse(raw[1], rawlen[1], &log) == 0;
	}
	if (view && !trusted) {
		uint64_t gen = view->gen, seq = view->seq;

		/* the log first, then what was read after it */
		view_observe(view, have_log ? &log : NULL);
		view->trust_until = have_log ? t0 + lease_ns() : 0;
		if (view->gen != gen || view->seq != seq) {
			same = 0;   /* it named cleans, or forgot every version: check_image() looks again */
		}
		for (j = 2; j < n; j++) {
			if (ks.have[j]) {
				tver_put(view, ks.th[j], ks.vers[j]);
			}
		}
	}
	if (!raw[0]) {
		keyset_free(&ks);
		return TC_MISS;
	}
	r = TC_MISS;
	tk.mem = NULL;
	if (rec_parse(raw[0], rawlen[0], rec, hint ? HINT_IMG(hint) : NULL, hint ? HINT_IMG_LEN(hint) : 0,
	              hint ? hint->ntags : 0) != 0) {
		goto out;   /* not a record of ours */
	}
	if (rec->id_len != id.len || memcmp(rec->id, id.p, id.len) != 0) {
		st->collisions++;
		goto out;   /* another id of the same hash */
	}
	if (!have_log || log.epoch != rec->ns) {
		goto out;   /* clean('all') since, or the log was evicted */
	}
	if (!allow_expired && rec->expire < now_s()) {
		goto out;
	}
	if (rec->img && same) {
		r = TC_OK;   /* the image's versions, current before the mget; the log named no clean since */
		goto out;
	}
	if (rec->img && view && n == 2 && (r = check_image(view, hint)) != NEED_READ) {
		goto out;
	}
	r = TC_MISS;
	if (hint && (rec->img || hint_matches(hint, rec))) {
		ths = hint->th;
		mh = hint;
	} else if (st->cfg.hint_memory > 0 && (hint || rec->ntags > 0)) {
		hint_put(st, hh, rec->tags, rec->tags_len, rec->ntags, NULL);   /* frees the old hint */
	}
	hint = NULL;
	r = check_tags(st, view, rec, &ks, 2, n, ths, &tk, &np);
	if (r == NEED_READ) {
		st->second_reads++;
		if (mget(st, cn, ekey, *eklen, tk.keys, tk.lens, np, tk.vers, tk.have, 0, NULL, NULL) != TC_OK) {
			r = TC_ERR;
			goto out;
		}
		r = check_pending(view, &tk, np);
	}
	if (r == TC_OK && mh && !rec->img) {
		/* the hint names these tags: its image takes their versions, so
		 * that the next load of the entry takes check_image() */
		memcpy(HINT_IMG(mh), rec->tags, rec->tags_len);
	}
out:
	keyset_free(&ks);
	keyset_free(&tk);
	return r;
}

/* the tags of a fetched record, to emit */
static void record_tags(const rec_t *rec, tc_emit_fn emit, void *ctx)
{
	size_t off;
	uint32_t i;

	for (i = 0, off = 0; i < rec->ntags; i++) {
		uint16_t tl;

		memcpy(&tl, rec->tags + off, 2);
		emit(ctx, rec->tags + off + 2, tl);
		off += 2 + (size_t)tl + 8;
	}
}

/* load(), and with emit (data non-NULL) load_tags(): the record fetched
 * carries the tags */
static int load_rec(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                    char **data, size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx)
{
	tcm_state *st = sp;
	char ekey[TCM_KEY_MAX + 1], *buf;
	size_t eklen;
	rec_t rec;
	int r;

	op_begin(st);
	r = fetch_entry(st, id, allow_expired, &rec, ekey, &eklen);
	if (r != TC_OK) {
		if (r == TC_MISS) {
			st->misses++;
		}
		return r;
	}
	if (meta) {
		meta->expire = rec.expire;
		meta->mtime = rec.mtime;
	}
	if (data) {
		if (emit) {
			record_tags(&rec, emit, ectx);
		}
		buf = alloc(ctx, rec.raw_len);
		if (!buf) {
			return TC_ERR;
		}
		if (rec.codec == CODEC_NONE) {
			memcpy(buf, rec.data, rec.raw_len);
		} else {
#ifdef HAVE_TAGCACHE_ZLIB
			uLongf out = rec.raw_len;

			if (uncompress((Bytef *)buf, &out, (const Bytef *)rec.data, (uLong)rec.data_len) != Z_OK
			    || out != rec.raw_len) {
				st->misses++;
				return TC_MISS;
			}
#else
			st->misses++;
			return TC_MISS;
#endif
		}
		*data = buf;
		*len = rec.raw_len;
	}
	st->hits++;
	return TC_OK;
}

static int mc_load(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                          char **data, size_t *len, tc_meta *meta)
{
	return load_rec(sp, id, allow_expired, alloc, ctx, data, len, meta, NULL, NULL);
}

/* one fetch (and its tag check): the record holds the tags */
static int mc_load_tags(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx,
                        char **data, size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx)
{
	return load_rec(sp, id, allow_expired, alloc, ctx, data, len, meta, data ? emit : NULL, ectx);
}

/* ---------------------------------------------------------- write path */

/* The clean log of the server of group, made when missing (add: a
 * concurrent maker's wins) or not ours (set). Its epoch in *epoch. */
static int log_for_save(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, const char *key, size_t klen,
                        char *raw, size_t rawlen, uint64_t *epoch)
{
	clog_t log;
	int attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		char buf[CLOG_HDR];
		memcached_return_t rc;
		uint64_t e;
		size_t len;
		uint32_t fl = 0;

		if (clog_parse(raw, rawlen, &log) == 0) {
			*epoch = log.epoch;
			if (attempt > 0) {
				free(raw);
			}
			return TC_OK;
		}
		e = new_version();
		len = clog_build(buf, e, 0, NULL, 0);
		rc = raw ? memcached_set_by_key(cn->mc, group, glen, key, klen, buf, len, 0, 0)
		         : memcached_add_by_key(cn->mc, group, glen, key, klen, buf, len, 0, 0);
		lease_drop();
		lease_wait(lease_now());   /* a log written anew: every reader's lease out first */
		if (attempt > 0) {
			free(raw);
		}
		raw = NULL;
		if (rc == MEMCACHED_SUCCESS) {
			*epoch = e;
			return TC_OK;
		}
		if (rc != MEMCACHED_NOTSTORED && rc != MEMCACHED_DATA_EXISTS) {
			return failed(st, cn, group, glen, rc, "add");
		}
		/* another writer made it: read theirs */
		raw = memcached_get_by_key(cn->mc, group, glen, key, klen, &rawlen, &fl, &rc);
		if (!raw && tcm_rc_failure(rc)) {
			return failed(st, cn, group, glen, rc, "get");
		}
	}
	free(raw);
	return failed(st, cn, group, glen, MEMCACHED_NOTSTORED, "creating the clean log");
}

/* The epoch of the clean log (keys[0]) and the current versions of the
 * tags (keys[1..n)) on the server of group, creating the missing ones (add:
 * a concurrent writer's value wins). A tag whose version is cached is not
 * asked for: the log read says whether it is still current (no clean of
 * the tag since it was read, the same test a load makes), and only those
 * that are not are read, after the log. A save of an entry whose tags this
 * process knows is then a multi-get of one key, the log (it was 1 + the
 * number of tags). Versions read after the log read go into the cache. */
static int versions_for_save(tcm_state *st, tcm_conn *cn, const char *group, size_t glen, keyset *ks, size_t n,
                             const tc_str *names, uint64_t *epoch)
{
	tcm_view *view = view_of(st, cn, group, glen);
	char *raw;
	size_t rawlen, i, j, m = 1, cached = 0;
	int64_t t0;
	clog_t log;
	int cache, r;
	keyset rs;   /* the keys read: borrowed from ks; rs.want[j] = their index in ks */

	for (i = 1; i < n; i++) {
		ks->th[i] = tag_hash(names[i - 1].p, names[i - 1].len);   /* mc_save() hints them too */
	}
	if (keyset_init(&rs, n) != 0) {
		keyset_free(&rs);
		view = NULL;   /* no memory for the list: read them all */
		rs.keys = ks->keys;
		rs.lens = ks->lens;
		rs.vers = ks->vers;
		rs.have = ks->have;
		m = n;
	} else {
		rs.keys[0] = ks->keys[0];
		rs.lens[0] = ks->lens[0];
		rs.want[0] = 0;
		for (i = 1; i < n; i++) {
			uint64_t cv, old;

			ks->have[i] = 0;
			if (view && tver_get(view, ks->th[i], &cv, &old)) {
				ks->vers[i] = cv;
				ks->have[i] = 2;   /* cached: checked against the log below */
				cached++;
				continue;
			}
			rs.keys[m] = ks->keys[i];
			rs.lens[m] = ks->lens[i];
			rs.want[m++] = i;
		}
	}
	t0 = lease_now();
	if (mget(st, cn, group, glen, rs.keys, rs.lens, m, rs.vers, rs.have, 1, &raw, &rawlen) != TC_OK) {
		if (rs.keys != ks->keys) {
			keyset_free(&rs);
		}
		return TC_ERR;
	}
	if (rs.keys != ks->keys) {
		for (j = 1; j < m; j++) {
			ks->vers[rs.want[j]] = rs.vers[j];
			ks->have[rs.want[j]] = rs.have[j];
		}
	}
	cache = clog_parse(raw, rawlen, &log) == 0;
	if (view) {
		view_observe(view, cache ? &log : NULL);
		view->trust_until = cache ? t0 + lease_ns() : 0;
	}
	r = log_for_save(st, cn, group, glen, ks->keys[0], ks->lens[0], raw, rawlen, epoch);   /* raw: borrowed */
	if (r == TC_OK && cached) {
		/* the cached versions the log did not name as cleaned since are
		 * current; the others are read now, after the log */
		m = 0;
		for (i = 1; i < n; i++) {
			uint64_t cv, old;

			if (ks->have[i] != 2) {
				continue;
			}
			if (cache && tver_get(view, ks->th[i], &cv, &old) && cv == ks->vers[i]) {
				ks->have[i] = 3;   /* current: not put again */
				continue;
			}
			ks->have[i] = 0;
			rs.keys[m] = ks->keys[i];
			rs.lens[m] = ks->lens[i];
			rs.want[m++] = i;
		}
		if (m) {
			r = mget(st, cn, group, glen, rs.keys, rs.lens, m, rs.vers, rs.have, 0, NULL, NULL);
			for (j = 0; r == TC_OK && j < m; j++) {
				ks->vers[rs.want[j]] = rs.vers[j];
				ks->have[rs.want[j]] = rs.have[j];
			}
		}
	}
	if (rs.keys != ks->keys) {
		keyset_free(&rs);
	}
	if (r != TC_OK) {
		return TC_ERR;
	}
	for (i = 1; i < n; i++) {
		char v[17];
		memcached_return_t rc;
		int attempt;

		if (ks->have[i] == 3) {
			continue;
		}
		for (attempt = 0; !ks->have[i] && attempt < 3; attempt++) {
			uint64_t nv = new_version();

			snprintf(v, sizeof(v), "%016llx", (unsigned long long)nv);
			rc = memcached_add_by_key(cn->mc, group, glen, ks->keys[i], ks->lens[i], v, 16, 0, 0);
			if (rc == MEMCACHED_SUCCESS) {
				ks->vers[i] = nv;
				ks->have[i] = 1;
			} else if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
				/* another writer made it: read theirs */
				size_t vl = 0;
				uint32_t fl = 0;
				char *got = memcached_get_by_key(cn->mc, group, glen, ks->keys[i], ks->lens[i], &vl, &fl, &rc);

				if (got) {
					ks->have[i] = parse_version(got, vl, &ks->vers[i]) == 0;
					free(got);
				} else if (tcm_rc_failure(rc)) {
					return failed(st, cn, group, glen, rc, "get");
				}
			} else {
				return failed(st, cn, group, glen, rc, "add");
			}
		}
		if (!ks->have[i]) {
			return failed(st, cn, group, glen, MEMCACHED_NOTSTORED, "creating a version key");
		}
		if (view && cache) {
			tver_put(view, ks->th[i], ks->vers[i]);
		}
	}
	return TC_OK;
}

static char *build_record(tcm_state *st, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                          const uint64_t *tag_vers, uint64_t ns, int64_t expire, int64_t mtime, size_t *outlen)
{
	size_t tl = 0, i, cap, off;
	char *p;
	uint32_t u;
	int codec = CODEC_NONE;

	for (i = 0; i < ntags; i++) {
		tl += 2 + tags[i].len + 8;
	}
	cap = HDR + id.len + tl + data.len;
#ifdef HAVE_TAGCACHE_ZLIB
	if (st->level > 0 && data.len >= (size_t)st->cfg.compress_threshold && data.len > 0) {
		cap = HDR + id.len + tl + compressBound((uLong)data.len);
		codec = CODEC_ZLIB;
	}
#endif
	p = malloc(cap);
	if (!p) {
		return NULL;
	}
	p[0] = REC_MAGIC;
	p[1] = REC_VERSION;
	p[3] = 0;
	u = (uint32_t)id.len;
	memcpy(p + 4, &u, 4);
	u = (uint32_t)ntags;
	memcpy(p + 8, &u, 4);
	u = (uint32_t)data.len;
	memcpy(p + 12, &u, 4);
	memcpy(p + 16, &expire, 8);
	memcpy(p + 24, &mtime, 8);
	memcpy(p + 32, &ns, 8);
	off = HDR;
	memcpy(p + off, id.p, id.len);
	off += id.len;
	for (i = 0; i < ntags; i++) {
		uint16_t l = (uint16_t)tags[i].len;

		memcpy(p + off, &l, 2);
		memcpy(p + off + 2, tags[i].p, l);
		memcpy(p + off + 2 + l, &tag_vers[i], 8);
		off += 2 + (size_t)l + 8;
	}
#ifdef HAVE_TAGCACHE_ZLIB
	if (codec == CODEC_ZLIB) {
		uLongf clen = (uLongf)(cap - off);

		if (compress2((Bytef *)p + off, &clen, (const Bytef *)data.p, (uLong)data.len, st->level) == Z_OK
		    && clen < data.len) {
			p[2] = CODEC_ZLIB;
			*outlen = off + clen;
			return p;
		}
		if (cap < off + data.len) {
			char *q = realloc(p, off + data.len);

			if (!q) {
				free(p);
				return NULL;
			}
			p = q;
		}
	}
#endif
	p[2] = CODEC_NONE;
	memcpy(p + off, data.p, data.len);
	*outlen = off + data.len;
	return p;
}

/* After a save that failed: the old entry must not stay readable. */
static void drop_entry(tcm_state *st, tcm_conn *cn, const char *ekey, size_t eklen)
{
	memcached_return_t rc = memcached_delete_by_key(cn->mc, ekey, eklen, ekey, eklen, 0);

	(void)st;
	(void)rc;
}

static int mc_save(void *sp, tc_str id, tc_str data, const tc_str *tags, size_t ntags,
                          int64_t expire, char *err)
{
	tcm_state *st = sp;
	tcm_conn *cn;
	char ekey[TCM_KEY_MAX + 1], *rec;
	size_t eklen, i, reclen = 0;
	int64_t now = now_s();
	memcached_return_t rc;
	uint64_t epoch = 0, hh;
	keyset ks;
	int r;

	op_begin(st);
	cn = tcm_conn_get(st);
	if (!cn) {
		return TC_ERR;
	}
	eklen = entry_key(st, id.p, id.len, ekey, &hh);
	if (keyset_init(&ks, ntags + 1) != 0) {
		keyset_free(&ks);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	keyset_put(&ks, 0, st, 'c', NULL, 0);
	for (i = 0; i < ntags; i++) {
		keyset_put(&ks, i + 1, st, 't', tags[i].p, tags[i].len);
	}
	r = versions_for_save(st, cn, ekey, eklen, &ks, ntags + 1, tags, &epoch);
	if (r != TC_OK) {
		keyset_free(&ks);
		return r;
	}
	rec = build_record(st, id, data, tags, ntags, ks.vers + 1, epoch, expire, now, &reclen);
	if (!rec) {
		keyset_free(&ks);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	if (reclen + eklen + ITEM_OVERHEAD > (uint64_t)st->cfg.max_item_size) {
		keyset_free(&ks);
		free(rec);
		drop_entry(st, cn, ekey, eklen);
		st->too_large++;
		snprintf(err, TC_ERRBUF, "the entry of %zu bytes does not fit in a memcached item (max_item_size %lld bytes, "
		         "memcached -I): not stored", reclen, (long long)st->cfg.max_item_size);
		return TC_ERR;
	}
	rc = memcached_set_by_key(cn->mc, ekey, eklen, ekey, eklen, rec, reclen, exptime_of(st, expire, now), 0);
	if (!memcached_failed(rc) && st->cfg.hint_memory > 0) {
		size_t tl = 0;

		for (i = 0; i < ntags; i++) {
			tl += 2 + tags[i].len + 8;
		}
		hint_put(st, hh, rec + HDR + id.len, tl, ntags, ks.th + 1);   /* the record's tags */
	}
	free(rec);
	keyset_free(&ks);
	if (rc == MEMCACHED_E2BIG || (rc == MEMCACHED_SERVER_ERROR && !tcm_rc_failure(rc))
	    || rc == MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE) {
		drop_entry(st, cn, ekey, eklen);
		st->too_large++;
		snprintf(err, TC_ERRBUF, "memcached refused the entry of %zu bytes: %s", reclen, memcached_strerror(cn->mc, rc));
		return TC_ERR;
	}
	if (memcached_failed(rc)) {
		if (tcm_rc_failure(rc)) {
			return failed(st, cn, ekey, eklen, rc, "save");
		}
		snprintf(err, TC_ERRBUF, "memcached did not store the entry: %s", memcached_strerror(cn->mc, rc));
		return TC_ERR;
	}
	st->saves++;
	return TC_OK;
}

static int mc_remove(void *sp, tc_str id)
{
	tcm_state *st = sp;
	char ekey[TCM_KEY_MAX + 1];
	size_t eklen;
	rec_t rec;
	memcached_return_t rc;
	int r;

	op_begin(st);
	r = fetch_entry(st, id, 1, &rec, ekey, &eklen);
	if (r == TC_ERR) {
		return r;
	}
	rc = memcached_delete_by_key(st->conn->mc, ekey, eklen, ekey, eklen, 0);
	if (tcm_rc_failure(rc)) {
		return failed(st, st->conn, ekey, eklen, rc, "remove");
	}
	st->removes++;
	return r;   /* TC_OK only for an entry that was valid */
}

static int clean_failed(tcm_state *st, tcm_conn *cn, const char *g, memcached_return_t rc)
{
	char name[300];

	/* the caller goes on with the other servers; the clean as a whole failed */
	tcm_server_name(cn, g, strlen(g), name, sizeof(name));
	snprintf(st->err, sizeof(st->err), "%s: clean failed: %s (the entries on that server were not "
	         "invalidated)", name, memcached_strerror(cn->mc, rc));
	st->fail = 1;
	st->errors++;
	return TC_ERR;
}

/* A value for a key on every server: v, or (v NULL) a new version. */
static int bump(tcm_state *st, tcm_conn *cn, const char *key, size_t klen, const char *v, size_t vlen)
{
	int i, ret = TC_OK;
	char hex[17];

	if (!v) {
		snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)new_version());
		v = hex;
		vlen = 16;
	}
	for (i = 0; i < cn->nservers; i++) {
		const char *g = cn->group[i];
		memcached_return_t rc = memcached_set_by_key(cn->mc, g, strlen(g), key, klen, v, vlen, 0, 0);

		if (memcached_failed(rc)) {
			ret = clean_failed(st, cn, g, rc);
		}
	}
	return ret;
}

/* The clean log of the server of g, with its cas (NULL: missing). */
static char *log_gets(tcm_conn *cn, const char *g, size_t gl, const char *key, size_t klen, size_t *len,
                      uint64_t *cas, memcached_return_t *rc)
{
	memcached_result_st res;
	char *v = NULL;

	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
	*rc = memcached_mget_by_key(cn->mc, g, gl, &key, &klen, 1);
	memcached_behavior_set(cn->mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 0);
	if (memcached_failed(*rc)) {
		return NULL;
	}
	if (!memcached_result_create(cn->mc, &res)) {
		memcached_quit(cn->mc);
		*rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
		return NULL;
	}
	while (memcached_fetch_result(cn->mc, &res, rc)) {
		if (!v && memcached_result_key_length(&res) == klen && !memcmp(memcached_result_key_value(&res), key, klen)) {
			*len = memcached_result_length(&res);
			*cas = memcached_result_cas(&res);
			v = memcached_result_take_value(&res);
		}
	}
	memcached_result_free(&res);
	if (*rc == MEMCACHED_END || *rc == MEMCACHED_NOTFOUND) {
		*rc = MEMCACHED_SUCCESS;
	}
	if (memcached_failed(*rc)) {
		free(v);
		return NULL;
	}
	return v;
}

/* Trims the log of the server of g to its last CLOG_KEEP hashes (gets/cas;
 * a lost race or a failure leaves it to a later clean). */
static void log_trim(tcm_conn *cn, const char *g, size_t gl, const char *key, size_t klen)
{
	char buf[CLOG_HDR + CLOG_KEEP * 8];
	memcached_return_t rc;
	uint64_t cas = 0;
	size_t len = 0;
	char *v = log_gets(cn, g, gl, key, klen, &len, &cas, &rc);
	clog_t log;

	if (v && clog_parse(v, len, &log) == 0 && log.count > CLOG_KEEP) {
		size_t blen = clog_build(buf, log.epoch, log.seq, log.hashes + (size_t)(log.count - CLOG_KEEP) * 8, CLOG_KEEP);

		rc = memcached_cas_by_key(cn->mc, g, gl, key, klen, buf, blen, 0, 0, cas);
		(void)rc;
	}
	free(v);
}

/* Appends the tag key hashes th[0..n) to the clean log of every server. A
 * log that is missing is made anew with a new epoch (every entry of the
 * server was a miss already). */
static int log_append(tcm_state *st, tcm_conn *cn, const char *key, size_t klen, const uint64_t *th, size_t n)
{
	char hdr[CLOG_HDR];
	int i, ret = TC_OK, trim = n >= CLOG_TRIM_EVERY || new_version() % CLOG_TRIM_EVERY == 0;

	for (i = 0; i < cn->nservers; i++) {
		const char *g = cn->group[i];
		size_t gl = strlen(g);
		memcached_return_t rc = memcached_append_by_key(cn->mc, g, gl, key, klen, (const char *)th, n * 8, 0, 0);

		if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_NOTFOUND) {
			/* no log: a new epoch (add: a concurrent maker's is as good) */
			rc = memcached_add_by_key(cn->mc, g, gl, key, klen, hdr, clog_build(hdr, new_version(), 0, NULL, 0), 0, 0);
			if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
				rc = memcached_append_by_key(cn->mc, g, gl, key, klen, (const char *)th, n * 8, 0, 0);
			}
		}
		if (memcached_failed(rc)) {
			ret = clean_failed(st, cn, g, rc);
		} else if (trim) {
			log_trim(cn, g, gl, key, klen);
		}
	}
	return ret;
}

static int mc_clean(void *sp, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	tcm_state *st = sp;
	tcm_conn *cn;
	char key[TCM_KEY_MAX + 1];
	size_t i;
	int ret = TC_OK;

	op_begin(st);
	switch (mode) {
	case TC_CLEAN_OLD:
		return TC_OK;   /* memcached drops expired items itself */
	case TC_CLEAN_NOT_MATCHING:
		snprintf(err, TC_ERRBUF, "memcached cannot clean in mode notMatchingTag: it cannot list the entries "
		         "(capability get_list is false); nothing was removed");
		return TC_ERR;
	case TC_CLEAN_MATCHING:
		if (ntags > 1) {
			snprintf(err, TC_ERRBUF, "memcached cannot clean in mode matchingTag with more than one tag: "
			         "an entry carrying all of them cannot be found without listing (use matchingAnyTag); "
			         "nothing was removed");
			return TC_ERR;
		}
		break;
	default:
		break;
	}
	cn = tcm_conn_get(st);
	if (!cn) {
		return TC_ERR;
	}
	lease_drop();   /* this process's next load reads the log */
	if (mode == TC_CLEAN_ALL) {
		char log[CLOG_HDR];

		ret = bump(st, cn, key, make_key(st, 'c', NULL, 0, key), log, clog_build(log, new_version(), 0, NULL, 0));
		lease_wait(lease_now());   /* acknowledged (or failed: it may have landed): every lease out */
	} else if (ntags > 0) {
		uint64_t *th = malloc(ntags * sizeof(*th));

		if (!th) {
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		/* the new versions first, then the log that names them */
		for (i = 0; i < ntags; i++) {
			size_t kl = make_key(st, 't', tags[i].p, tags[i].len, key);

			th[i] = tag_hash(tags[i].p, tags[i].len);
			if (bump(st, cn, key, kl, NULL, 0) != TC_OK) {
				ret = TC_ERR;
			}
		}
		if (log_append(st, cn, key, make_key(st, 'c', NULL, 0, key), th, ntags) != TC_OK) {
			ret = TC_ERR;
		}
		lease_wait(lease_now());   /* after the last server's append (and trim): every lease out */
		free(th);
	}
	st->cleans++;
	return ret;
}

/* memcached cannot list: empty listings (capability get_list is false). */
static int mc_ids(void *sp, tc_ids_mode mode, const tc_str *tags, size_t ntags, tc_emit_fn emit, void *ctx)
{
	(void)sp;
	(void)mode;
	(void)tags;
	(void)ntags;
	(void)emit;
	(void)ctx;
	return TC_OK;
}

static int mc_tags(void *sp, tc_emit_fn emit, void *ctx)
{
	(void)sp;
	(void)emit;
	(void)ctx;
	return TC_OK;
}

/* bytes / limit_maxbytes over the servers that answer */
static int mc_fill(void *sp)
{
	tcm_state *st = sp;
	tcm_conn *cn;
	memcached_stat_st *stats;
	memcached_return_t rc;
	uint64_t used = 0, limit = 0;
	int i;

	op_begin(st);
	cn = tcm_conn_get(st);
	if (!cn) {
		return 0;
	}
	stats = memcached_stat(cn->mc, NULL, &rc);
	if (!stats) {
		failed(st, cn, NULL, 0, rc, "stats");
		return 0;
	}
	for (i = 0; i < cn->nservers; i++) {
		used += stats[i].bytes;
		limit += stats[i].limit_maxbytes;
	}
	memcached_stat_free(NULL, stats);
	if (limit == 0) {
		return 0;
	}
	return used >= limit ? 100 : (int)(used * 100 / limit);
}

static int mc_metadata(void *sp, tc_str id, tc_meta *meta, tc_emit_fn emit, void *ctx)
{
	tcm_state *st = sp;
	char ekey[TCM_KEY_MAX + 1];
	size_t eklen;
	rec_t rec;
	int r;

	op_begin(st);
	r = fetch_entry(st, id, 0, &rec, ekey, &eklen);
	if (r != TC_OK) {
		return r;
	}
	meta->expire = rec.expire;
	meta->mtime = rec.mtime;
	record_tags(&rec, emit, ctx);
	return TC_OK;
}

/* Rewrites the checked record with a new expire (and mtime). */
static int set_expire(tcm_state *st, tc_str id, int64_t extra, int now_minus_one)
{
	char ekey[TCM_KEY_MAX + 1];
	size_t eklen;
	int64_t now = now_s(), expire, mtime = now;
	memcached_return_t rc;
	rec_t rec;
	int r;

	op_begin(st);
	r = fetch_entry(st, id, now_minus_one, &rec, ekey, &eklen);
	if (r != TC_OK) {
		return r;
	}
	if (now_minus_one) {
		expire = now - 1;
		mtime = rec.mtime;
	} else {
		expire = rec.expire >= TC_EXPIRE_NEVER ? rec.expire : rec.expire + extra;
	}
	memcpy(rec.base + 16, &expire, 8);
	memcpy(rec.base + 24, &mtime, 8);
	rc = memcached_replace_by_key(st->conn->mc, ekey, eklen, ekey, eklen, rec.base, rec.len,
	                              exptime_of(st, expire, now), 0);
	if (rc == MEMCACHED_NOTSTORED) {
		return TC_MISS;   /* removed meanwhile */
	}
	if (memcached_failed(rc)) {
		return tcm_rc_failure(rc) ? failed(st, st->conn, ekey, eklen, rc, "touch") : TC_MISS;
	}
	return TC_OK;
}

static int mc_touch(void *sp, tc_str id, int64_t extra)
{
	return set_expire(sp, id, extra, 0);
}

static int mc_expire_now(void *sp, tc_str id)
{
	return set_expire(sp, id, 0, 1);
}

static void mc_stats(void *sp, tc_stat_fn emit, void *ctx)
{
	tcm_state *st = sp;

	emit(ctx, "hits", st->hits);
	emit(ctx, "misses", st->misses);
	emit(ctx, "saves", st->saves);
	emit(ctx, "removes", st->removes);
	emit(ctx, "cleans", st->cleans);
	emit(ctx, "errors", st->errors);
	emit(ctx, "too_large", st->too_large);
	emit(ctx, "collisions", st->collisions);
	emit(ctx, "reconnects", st->reconnects);
	emit(ctx, "second_reads", st->second_reads);
	emit(ctx, "lease_loads", st->lease_loads);
	/* the per-process hint table (shared by the instances of the process) */
	emit(ctx, "hint_entries", (int64_t)hints.count);
	emit(ctx, "hint_bytes", (int64_t)hints.used);
	emit(ctx, "hint_evictions", hints.evictions);
	emit(ctx, "servers", st->conn ? st->conn->nservers : 0);
}

static int mc_verify(void *sp, tc_emit_fn emit, void *ctx)
{
	(void)sp;
	(void)emit;
	(void)ctx;
	return TC_OK;   /* nothing to walk: memcached cannot be listed */
}

static int mc_failure(void *sp, char *err)
{
	tcm_state *st = sp;

	if (!st || !st->fail) {
		return TC_FAIL_NONE;
	}
	st->fail = 0;
	snprintf(err, TC_ERRBUF, "%s", st->err);
	if (st->on_error == TCM_ON_ERROR_EXCEPTION) {
		return TC_FAIL_THROW;
	}
	tc_log_failure("memcached", st->err);
	return TC_FAIL_QUIET;
}

void tc_memcached_minfo(tc_info_fn emit, void *ctx)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "libmemcached %s; compression: %s", memcached_lib_version(),
#ifdef HAVE_TAGCACHE_ZLIB
	         "zlib"
#else
	         "none"
#endif
	);
	emit(ctx, "Memcached backend", buf);
}

void tc_memcached_shutdown(void)
{
	tcm_conn_shutdown();
	hints_free();
	free(tvc.slot);
	memset(&tvc, 0, sizeof(tvc));
}

/* stampede protection (issue 14): the options here, the leases in
 * tc_memcached_lease.c */
static const tc_stale_opts *mc_stale_opts(const void *config)
{
	return &((const tcm_config *)config)->stale;
}

const tc_backend tc_backend_memcached = {
	.name = "memcached",
	/* memcached cannot list keys, and evicts an entry without expiry
	 * whenever it needs the room */
	.caps = 0,
	.options = mc_options,
	.config_size = sizeof(tcm_config),
	.defaults = mc_defaults,
	.open = mc_open,
	.close = mc_close,
	.load = mc_load,
	.save = mc_save,
	.remove = mc_remove,
	.clean = mc_clean,
	.ids = mc_ids,
	.tags = mc_tags,
	.fill = mc_fill,
	.metadata = mc_metadata,
	.load_tags = mc_load_tags,
	.touch = mc_touch,
	.expire_now = mc_expire_now,
	.stats = mc_stats,
	.verify = mc_verify,
	.failure = mc_failure,
	.minfo = tc_memcached_minfo,
	.mshutdown = tc_memcached_shutdown,
	.atfork_child = tcm_conn_atfork_child,
	.stale_opts = mc_stale_opts,
	.lease_ops = &tc_lease_memcached,
};
