/*
 * tc_redis_conn.c: sockets to Redis servers, through hiredis.
 *
 * - Connect with a timeout, then AUTH (ACL username and password), SELECT
 *   and CONFIG GET maxmemory* pipelined in one round trip; a read timeout
 *   on every socket; a bounded number of attempts with a short backoff.
 * - A server that could not be reached is not tried again for
 *   retry_interval seconds (per process): a dead Redis costs one connect
 *   timeout per interval, not one per call.
 * - Any I/O error, timeout or protocol error drops the socket: a late reply
 *   can never be read as the answer to the next command.
 * - Persistent connections live in a per-process pool. The fork hook bumps
 *   a generation counter in the child: a socket made before the fork is
 *   never written to by the child; the child closes its copy of the
 *   descriptor (which leaves the parent's socket alone) and reconnects.
 * - Replies are built by our own hiredis object functions, which cap the
 *   elements a reply may allocate; the reader's buffer is capped too, and
 *   hiredis refuses nesting deeper than 7: a hostile server gets a protocol
 *   error, not our memory.
 * - Sentinel: the master comes from SENTINEL get-master-addr-by-name and is
 *   checked with ROLE; a READONLY reply or a dead master makes the next call
 *   ask the sentinels again. Cluster: a slot map from CLUSTER SLOTS, MOVED
 *   and ASK followed.
 *
 * Messages name host:port (or the socket path); the password never appears
 * in them (server replies are scrubbed of it too).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "tc_redis.h"
#include "tc_util.h"

static unsigned long fork_gen = 1;
static tcr_conn *pool;

/* servers that failed recently (per process) */
#define DOWN_MAX 32
static struct {
	char name[TCR_HOST_MAX + 16];
	double until;
} down[DOWN_MAX];

/* Sentinel answers, per process: which master a set of sentinels named. */
#define SENT_MAX 8
static struct {
	uint64_t key;
	tcr_addr master;
	int valid;
} sent_cache[SENT_MAX];

struct tcr_cluster {
	struct tcr_cluster *next;
	uint64_t key;
	int nnodes;
	tcr_addr nodes[TCR_NODES_MAX];
	uint8_t slot_node[TCR_SLOTS];
	int ready;
};
static struct tcr_cluster *clusters;

void tcr_conn_atfork_child(void)
{
	fork_gen++;
}

/* A small per-process generator for the versions of saves (xorshift64*),
 * seeded again in a forked child so parent and child differ. */
uint32_t tcr_rand(void)
{
	static uint64_t x;
	static unsigned long seeded_gen;

	if (!x || seeded_gen != fork_gen) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		x ^= (uint64_t)ts.tv_nsec * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec;
		if (!x) {
			x = UINT64_C(0x2545F4914F6CDD1D);
		}
		seeded_gen = fork_gen;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return (uint32_t)((x * UINT64_C(0x2545F4914F6CDD1D)) >> 32);
}

double tcr_now_f(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* ------------------------------------------------------------ addresses */

void tcr_addr_name(const tcr_addr *a, char *buf, size_t len)
{
	if (a->path[0]) {
		snprintf(buf, len, "%s", a->path);
	} else if (strchr(a->host, ':')) {
		snprintf(buf, len, "[%s]:%d", a->host, a->port);
	} else {
		snprintf(buf, len, "%s:%d", a->host, a->port);
	}
}

static int parse_one(const char *s, size_t n, int default_port, tcr_addr *a, char *err)
{
	char buf[TC_OPT_STRMAX];
	char *p, *colon;
	long port = default_port;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
		n--;
	}
	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, TC_ERRBUF, "Option \"server\": an empty or too long server address");
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(a, 0, sizeof(*a));
	p = buf;
	if (strncasecmp(p, "unix://", 7) == 0 || p[0] == '/') {
		if (p[0] != '/') {
			p += 7;
		}
		if (strlen(p) >= TCR_PATH_MAX || p[0] != '/') {
			snprintf(err, TC_ERRBUF, "Option \"server\": a unix socket path must be absolute and shorter than %d bytes", TCR_PATH_MAX);
			return -1;
		}
		strcpy(a->path, p);
		return 0;
	}
	if (strncasecmp(p, "tcp://", 6) == 0) {
		p += 6;
	} else if (strncasecmp(p, "redis://", 8) == 0) {
		p += 8;
	}
	if (p[0] == '[') {
		char *end = strchr(p, ']');

		if (!end) {
			snprintf(err, TC_ERRBUF, "Option \"server\": unbalanced [ in an IPv6 address");
			return -1;
		}
		*end = '\0';
		colon = end[1] == ':' ? end + 1 : NULL;
		p++;
	} else {
		colon = strchr(p, ':');
		if (colon && strchr(colon + 1, ':')) {
			colon = NULL;  /* a bare IPv6 address */
		}
	}
	if (colon) {
		char *e;

		*colon = '\0';
		port = strtol(colon + 1, &e, 10);
		if (*e && *e != '/') {
			snprintf(err, TC_ERRBUF, "Option \"server\": bad port in \"%.200s\"", s);
			return -1;
		}
	}
	{
		char *slash = strchr(p, '/');

		if (slash) {
			*slash = '\0';
		}
	}
	if (!*p || strlen(p) >= TCR_HOST_MAX) {
		snprintf(err, TC_ERRBUF, "Option \"server\": bad host name");
		return -1;
	}
	if (port < 1 || port > 65535) {
		snprintf(err, TC_ERRBUF, "Option \"server\": port %ld is out of range", port);
		return -1;
	}
	strcpy(a->host, p);
	a->port = (int)port;
	return 0;
}

/* "host", "host:port", "tcp://host:port", "[::1]:6379", "/path.sock",
 * "unix:///path.sock", comma separated. */
int tcr_parse_addrs(const char *list, int default_port, tcr_addr *out, int max, char *err)
{
	int n = 0;
	const char *s = list;

	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);

		if (n == max) {
			snprintf(err, TC_ERRBUF, "Option \"server\": at most %d servers", max);
			return -1;
		}
		if (parse_one(s, len, default_port, &out[n], err) != 0) {
			return -1;
		}
		n++;
		if (!comma) {
			break;
		}
		s = comma + 1;
	}
	if (n == 0) {
		snprintf(err, TC_ERRBUF, "Option \"server\" is empty");
		return -1;
	}
	return n;
}

/* ------------------------------------------------------------- failures */

/* Remove every occurrence of a secret from a message. */
static void scrub(char *msg, const char *secret)
{
	size_t sl = strlen(secret);
	char *p;

	if (sl == 0) {
		return;
	}
	while ((p = strstr(msg, secret)) != NULL) {
		memmove(p + 3, p + sl, strlen(p + sl) + 1);
		memcpy(p, "***", 3);
	}
}

int tcr_fail(tcr_state *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
	scrub(st->err, st->cfg.password);
	scrub(st->err, st->cfg.sentinel_password);
	st->fail = 1;
	st->errors++;
	return TC_ERR;
}

/* on_error=miss: one log line per distinct failure and minute, per process */
void tcr_log_failure(const char *msg)
{
	tc_log_failure("Redis", msg);
}

static double *down_slot(const char *name, int create)
{
	int i, free_i = -1, old_i = 0;

	for (i = 0; i < DOWN_MAX; i++) {
		if (down[i].name[0] && strcmp(down[i].name, name) == 0) {
			return &down[i].until;
		}
		if (!down[i].name[0] && free_i < 0) {
			free_i = i;
		}
		if (down[i].until < down[old_i].until) {
			old_i = i;
		}
	}
	if (!create) {
		return NULL;
	}
	i = free_i >= 0 ? free_i : old_i;
	snprintf(down[i].name, sizeof(down[i].name), "%s", name);
	down[i].until = 0;
	return &down[i].until;
}

/* ---------------------------------------------------- bounded replies */

#define ELEMS_BUDGET (UINT32_C(1) << 22)   /* array slots per reply: 32 MB of pointers */

static redisReply *new_obj(const redisReadTask *task, int type)
{
	redisReply *r = calloc(1, sizeof(*r));

	if (!r) {
		return NULL;
	}
	r->type = type;
	if (task->parent) {
		redisReply *parent = task->parent->obj;

		if (parent && parent->type == REDIS_REPLY_ARRAY && (size_t)task->idx < parent->elements) {
			parent->element[task->idx] = r;
		}
	}
	return r;
}

static void *mk_string(const redisReadTask *task, char *str, size_t len)
{
	redisReply *r;
	char *buf = malloc(len + 1);

	if (!buf) {
		return NULL;
	}
	r = new_obj(task, task->type);
	if (!r) {
		free(buf);
		return NULL;
	}
	memcpy(buf, str, len);
	buf[len] = '\0';
	r->str = buf;
	r->len = len;
	return r;
}

static void *mk_array(const redisReadTask *task, int elements)
{
	tcr_conn *cn = task->privdata;
	redisReply *r;

	if (elements < 0 || (cn && (size_t)elements > cn->budget_elems)) {
		if (cn) {
			cn->too_large = 1;
		}
		return NULL;
	}
	if (cn) {
		cn->budget_elems -= (size_t)elements;
	}
	r = new_obj(task, REDIS_REPLY_ARRAY);
	if (!r) {
		return NULL;
	}
	if (elements > 0) {
		r->element = calloc((size_t)elements, sizeof(redisReply *));
		if (!r->element) {
			/* unlink from the parent before freeing */
			if (task->parent) {
				redisReply *parent = task->parent->obj;

				if (parent && (size_t)task->idx < parent->elements) {
					parent->element[task->idx] = NULL;
				}
			}
			free(r);
			return NULL;
		}
	}
	r->elements = (size_t)elements;
	return r;
}

static void *mk_integer(const redisReadTask *task, long long value)
{
	redisReply *r = new_obj(task, REDIS_REPLY_INTEGER);

	if (r) {
		r->integer = value;
	}
	return r;
}

static void *mk_nil(const redisReadTask *task)
{
	return new_obj(task, REDIS_REPLY_NIL);
}

void tcr_reply_free(redisReply *r)
{
	size_t i;

	if (!r) {
		return;
	}
	if (r->type == REDIS_REPLY_ARRAY && r->element) {
		for (i = 0; i < r->elements; i++) {
			tcr_reply_free(r->element[i]);
		}
		free(r->element);
	} else {
		free(r->str);
	}
	free(r);
}

static void free_obj(void *r)
{
	tcr_reply_free(r);
}

static redisReplyObjectFunctions bounded_fns = {
	mk_string, mk_array, mk_integer, mk_nil, free_obj
};

static size_t reply_bytes_max(const tcr_state *st)
{
	size_t m = (size_t)st->cfg.max_value_size + (1u << 20);

	return m < (16u << 20) ? (16u << 20) : m;
}

/* ---------------------------------------------------------- connections */

static void conn_close(tcr_conn *cn)
{
	if (cn->c) {
		/* In a forked child this closes only the child's descriptor. */
		redisFree(cn->c);
		cn->c = NULL;
	}
	cn->used = 0;
	/* the next socket may reach another server (a restart, a failover):
	 * its policy is read again */
	cn->eviction = -1;
	cn->eviction_at = 0;
}

void tcr_conn_drop(tcr_conn *cn)
{
	conn_close(cn);
}

static uint64_t conn_key(const tcr_state *st, const tcr_addr *a, int db, int sentinel)
{
	uint64_t h = UINT64_C(1469598103934665603);

	h = fnv(h, st->cfg.persistent, strlen(st->cfg.persistent) + 1);
	h = fnv(h, a->host, strlen(a->host) + 1);
	h = fnv(h, &a->port, sizeof(a->port));
	h = fnv(h, a->path, strlen(a->path) + 1);
	h = fnv(h, &db, sizeof(db));
	h = fnv(h, &sentinel, sizeof(sentinel));
	if (sentinel) {
		h = fnv(h, st->cfg.sentinel_username, strlen(st->cfg.sentinel_username) + 1);
		h = fnv(h, st->cfg.sentinel_password, strlen(st->cfg.sentinel_password) + 1);
	} else {
		h = fnv(h, st->cfg.username, strlen(st->cfg.username) + 1);
		h = fnv(h, st->cfg.password, strlen(st->cfg.password) + 1);
	}
	h = fnv(h, &st->cfg.timeout, sizeof(st->cfg.timeout));
	h = fnv(h, &st->read_timeout, sizeof(st->read_timeout));
	return h;
}

/* A handle on a server: pooled when the persistent option is set. The
 * socket is made on first use (tcr_conn_ready). db < 0: no SELECT
 * (sentinels, cluster nodes). */
tcr_conn *tcr_conn_get(tcr_state *st, const tcr_addr *a, int db, int sentinel)
{
	uint64_t key = conn_key(st, a, db, sentinel);
	tcr_conn *cn;

	if (st->cfg.persistent[0]) {
		for (cn = pool; cn; cn = cn->next) {
			if (cn->key == key) {
				cn->refs++;
				return cn;
			}
		}
	}
	cn = calloc(1, sizeof(*cn));
	if (!cn) {
		return NULL;
	}
	cn->key = key;
	cn->addr = *a;
	cn->eviction = -1;
	cn->db = db;
	cn->sentinel = sentinel;
	tcr_addr_name(a, cn->name, sizeof(cn->name));
	cn->refs = 1;
	cn->persistent = st->cfg.persistent[0] != 0;
	if (cn->persistent) {
		cn->next = pool;
		pool = cn;
	}
	return cn;
}

void tcr_conn_release(tcr_state *st, tcr_conn *cn)
{
	(void)st;
	if (!cn) {
		return;
	}
	if (cn->persistent) {
		if (cn->refs > 0) {
			cn->refs--;
		}
		if (cn->gen != fork_gen) {
			conn_close(cn);   /* inherited across fork: never reused */
		}
		return;
	}
	conn_close(cn);
	free(cn);
}

/* Reads one reply, within the read timeout and the size bounds. NULL on
 * failure: the socket is dropped and st->err says why. */
static redisReply *recv_reply(tcr_state *st, tcr_conn *cn)
{
	void *reply = NULL;
	size_t maxb = reply_bytes_max(st);

	cn->budget_elems = ELEMS_BUDGET;
	cn->too_large = 0;
	for (;;) {
		if (redisGetReplyFromReader(cn->c, &reply) != REDIS_OK) {
			if (cn->too_large) {
				tcr_fail(st, "%s: reply too large (more than %u array elements), connection dropped",
				         cn->name, (unsigned)ELEMS_BUDGET);
			} else {
				tcr_fail(st, "%s: protocol error: %s, connection dropped", cn->name, cn->c->errstr);
			}
			conn_close(cn);
			return NULL;
		}
		if (reply) {
			return reply;
		}
		if (cn->c->reader->len > maxb) {
			tcr_fail(st, "%s: reply larger than %zu bytes, connection dropped", cn->name, maxb);
			conn_close(cn);
			return NULL;
		}
		if (redisBufferRead(cn->c) != REDIS_OK) {
			int e = errno;

			if (cn->c->err == REDIS_ERR_IO && (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS)) {
				tcr_fail(st, "%s: read timeout after %.3g s, connection dropped", cn->name, st->read_timeout);
			} else if (cn->c->err == REDIS_ERR_EOF) {
				tcr_fail(st, "%s: connection closed by the server", cn->name);
			} else {
				tcr_fail(st, "%s: read error: %s", cn->name, cn->c->errstr);
			}
			conn_close(cn);
			return NULL;
		}
	}
}

static int flush_out(tcr_state *st, tcr_conn *cn)
{
	int done = 0;

	do {
		if (redisBufferWrite(cn->c, &done) != REDIS_OK) {
			int e = errno;

			if (e == EAGAIN || e == EWOULDBLOCK) {
				tcr_fail(st, "%s: write timeout after %.3g s, connection dropped", cn->name, st->read_timeout);
			} else {
				tcr_fail(st, "%s: write error: %s", cn->name, cn->c->errstr);
			}
			conn_close(cn);
			return TC_ERR;
		}
	} while (!done);
	return TC_OK;
}

static struct timeval tv_of(double s)
{
	struct timeval tv;

	if (s <= 0) {
		s = 2.5;
	}
	tv.tv_sec = (time_t)s;
	tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
	return tv;
}

/* cn->eviction from a CONFIG GET maxmemory* reply. */
static void read_eviction(tcr_conn *cn, const redisReply *r)
{
	long long maxmem = -1;
	const char *policy = NULL;
	size_t k;

	if (r->type == REDIS_REPLY_ARRAY) {
		for (k = 0; k + 1 < r->elements; k += 2) {
			redisReply *kk = r->element[k], *vv = r->element[k + 1];

			if (!kk || !vv || kk->type != REDIS_REPLY_STRING || vv->type != REDIS_REPLY_STRING) {
				continue;
			}
			if (strcmp(kk->str, "maxmemory") == 0) {
				maxmem = atoll(vv->str);
			} else if (strcmp(kk->str, "maxmemory-policy") == 0) {
				policy = vv->str;
			}
		}
	}
	/* unknown (CONFIG disabled, managed Redis): assume it may evict */
	cn->eviction = (maxmem == 0 || (policy && strcmp(policy, "noeviction") == 0)) ? 0 : 1;
	cn->eviction_at = tcr_now_f();
}

/* AUTH, SELECT, CONFIG GET maxmemory*, ROLE: one round trip. */
static int setup(tcr_state *st, tcr_conn *cn, int db, int sentinel, int want_role)
{
	const char *argv[4];
	size_t lens[4];
	int n = 0, i, nauth = 0, nsel = 0, ncfg = 0, nrole = 0;
	const char *user = sentinel ? st->cfg.sentinel_username : st->cfg.username;
	const char *pass = sentinel ? st->cfg.sentinel_password : st->cfg.password;
	char dbs[24];

	if (pass[0]) {
		argv[0] = "AUTH";
		if (user[0]) {
			argv[1] = user;
			argv[2] = pass;
			n = 3;
		} else {
			argv[1] = pass;
			n = 2;
		}
		for (i = 0; i < n; i++) {
			lens[i] = strlen(argv[i]);
		}
		redisAppendCommandArgv(cn->c, n, argv, lens);
		nauth = 1;
	}
	if (db > 0) {
		snprintf(dbs, sizeof(dbs), "%d", db);
		argv[0] = "SELECT";
		argv[1] = dbs;
		lens[0] = 6;
		lens[1] = strlen(dbs);
		redisAppendCommandArgv(cn->c, 2, argv, lens);
		nsel = 1;
	}
	if (!sentinel && st->verify == TCR_VERIFY_AUTO) {
		argv[0] = "CONFIG";
		argv[1] = "GET";
		argv[2] = "maxmemory*";
		lens[0] = 6;
		lens[1] = 3;
		lens[2] = 10;
		redisAppendCommandArgv(cn->c, 3, argv, lens);
		ncfg = 1;
	}
	if (want_role) {
		argv[0] = "ROLE";
		lens[0] = 4;
		redisAppendCommandArgv(cn->c, 1, argv, lens);
		nrole = 1;
	}
	if (nauth + nsel + ncfg + nrole == 0) {
		return TC_OK;
	}
	if (flush_out(st, cn) != TC_OK) {
		return TC_ERR;
	}
	if (nauth) {
		redisReply *r = recv_reply(st, cn);

		if (!r) {
			return TC_ERR;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			tcr_fail(st, "%s: authentication failed%s: %.200s", cn->name, user[0] ? " (ACL user)" : "", r->str);
			tcr_reply_free(r);
			conn_close(cn);
			return -2;
		}
		tcr_reply_free(r);
	}
	if (nsel) {
		redisReply *r = recv_reply(st, cn);

		if (!r) {
			return TC_ERR;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			tcr_fail(st, "%s: SELECT %d failed: %.200s", cn->name, db, r->str);
			tcr_reply_free(r);
			conn_close(cn);
			return -2;
		}
		tcr_reply_free(r);
	}
	if (ncfg) {
		redisReply *r = recv_reply(st, cn);

		if (!r) {
			return TC_ERR;
		}
		read_eviction(cn, r);
		tcr_reply_free(r);
	}
	if (nrole) {
		redisReply *r = recv_reply(st, cn);
		int master;

		if (!r) {
			return TC_ERR;
		}
		master = r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]
		         && r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;
		tcr_reply_free(r);
		if (!master) {
			tcr_fail(st, "%s: the server the sentinels named is not a master (ROLE)", cn->name);
			conn_close(cn);
			return TC_ERR;
		}
	}
	return TC_OK;
}

static void backoff(int attempt)
{
	struct timespec ts;
	long ms = 20L << (attempt < 4 ? attempt : 4);   /* 20, 40, 80, 160, 320 ms */

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* Makes sure cn has a live socket made in this process. */
static int conn_ready_ex(tcr_state *st, tcr_conn *cn, int want_role)
{
	int attempts = (int)(st->cfg.connect_retries < 1 ? 1 : st->cfg.connect_retries);
	int db = cn->db, sentinel = cn->sentinel, a, r;
	double *d, now;
	struct timeval ctv = tv_of(st->cfg.timeout), rtv = tv_of(st->read_timeout);
	char why[512];

	if (cn->c && cn->gen != fork_gen) {
		conn_close(cn);   /* made by our parent: the child never touches it */
		st->reconnects++;
	}
	if (cn->c && !cn->c->err) {
		return TC_OK;
	}
	if (cn->c) {
		conn_close(cn);
	}
	now = tcr_now_f();
	d = down_slot(cn->name, 0);
	if (d && *d > now) {
		return tcr_fail(st, "%s: server marked down after a failure; next attempt in %.1f s",
		                cn->name, *d - now);
	}
	why[0] = '\0';
	for (a = 0; a < attempts; a++) {
		if (a > 0) {
			backoff(a - 1);
		}
		if (cn->addr.path[0]) {
			cn->c = redisConnectUnixWithTimeout(cn->addr.path, ctv);
		} else {
			cn->c = redisConnectWithTimeout(cn->addr.host, cn->addr.port, ctv);
		}
		if (!cn->c) {
			snprintf(why, sizeof(why), "out of memory");
			continue;
		}
		if (cn->c->err) {
			snprintf(why, sizeof(why), "%s", cn->c->errstr);
			if (strstr(why, "Resource temporarily unavailable") || strstr(why, "timed out")) {
				snprintf(why, sizeof(why), "connect timeout after %.3g s", st->cfg.timeout);
			}
			redisFree(cn->c);
			cn->c = NULL;
			continue;
		}
		cn->gen = fork_gen;
		/* replies through our bounded object functions */
		cn->c->reader->fn = &bounded_fns;
		cn->c->reader->privdata = cn;
		redisSetTimeout(cn->c, rtv);
		if (!cn->addr.path[0]) {
			redisEnableKeepAlive(cn->c);
		}
		r = setup(st, cn, db, sentinel, want_role);
		if (r == TC_OK) {
			d = down_slot(cn->name, 0);
			if (d) {
				*d = 0;
			}
			return TC_OK;
		}
		if (r == -2) {
			return TC_ERR;   /* auth or SELECT refused: retrying will not help */
		}
		snprintf(why, sizeof(why), "%.400s", st->err);
		conn_close(cn);
	}
	d = down_slot(cn->name, 1);
	*d = tcr_now_f() + st->cfg.retry_interval;
	if (strncmp(why, cn->name, strlen(cn->name)) == 0) {
		return tcr_fail(st, "%s (%d attempt%s)", why, attempts, attempts > 1 ? "s" : "");
	}
	return tcr_fail(st, "%s: cannot connect: %s (%d attempt%s)", cn->name, why, attempts,
	                attempts > 1 ? "s" : "");
}

int tcr_conn_ready(tcr_state *st, tcr_conn *cn)
{
	return conn_ready_ex(st, cn, 0);
}

/* Append decimal v to p; returns the end. */
static char *put_dec(char *p, size_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n) {
		*p++ = tmp[--n];
	}
	return p;
}

/*
 * The command in RESP, appended to the connection's output buffer: what
 * redisAppendCommandArgv() does, without its sdscatfmt() per argument
 * (callgrind: 3,500 instructions to format a GET, more than the rest of a
 * load). Small commands are formatted on the stack.
 */
static int append_command(redisContext *c, int argc, const char **argv, const size_t *lens)
{
	char stack[2048], *buf = stack, *p;
	size_t need = 16, i;
	int r;

	for (i = 0; i < (size_t)argc; i++) {
		need += lens[i] + 26;   /* "$" digits "\r\n" data "\r\n" */
	}
	if (need > sizeof(stack)) {
		buf = malloc(need);
		if (!buf) {
			return REDIS_ERR;
		}
	}
	p = buf;
	*p++ = '*';
	p = put_dec(p, (size_t)argc);
	*p++ = '\r';
	*p++ = '\n';
	for (i = 0; i < (size_t)argc; i++) {
		*p++ = '$';
		p = put_dec(p, lens[i]);
		*p++ = '\r';
		*p++ = '\n';
		memcpy(p, argv[i], lens[i]);
		p += lens[i];
		*p++ = '\r';
		*p++ = '\n';
	}
	r = redisAppendFormattedCommand(c, buf, (size_t)(p - buf));
	if (buf != stack) {
		free(buf);
	}
	return r;
}

int tcr_conn_send(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	if (tcr_conn_ready(st, cn) != TC_OK) {
		return TC_ERR;
	}
	if (append_command(cn->c, argc, argv, lens) != REDIS_OK) {
		tcr_fail(st, "%s: out of memory formatting a command", cn->name);
		conn_close(cn);
		return TC_ERR;
	}
	return TC_OK;
}

redisReply *tcr_conn_recv(tcr_state *st, tcr_conn *cn)
{
	redisReply *r;

	if (!cn->c) {
		if (!st->fail) {
			tcr_fail(st, "%s: not connected", cn->name);
		}
		return NULL;
	}
	if (cn->c->obuf && cn->c->obuf[0] && flush_out(st, cn) != TC_OK) {
		return NULL;
	}
	r = recv_reply(st, cn);
	if (r) {
		cn->used = 1;
	}
	return r;
}

/* One command, one reply. A socket that had served earlier commands and is
 * found closed (the server restarted, an idle timeout) is replaced once. */
redisReply *tcr_conn_cmd(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	int attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		int was_used;
		redisReply *r;

		if (tcr_conn_send(st, cn, argc, argv, lens) != TC_OK) {
			return NULL;
		}
		was_used = cn->used;
		r = tcr_conn_recv(st, cn);
		if (r) {
			return r;
		}
		if (!was_used || attempt > 0 || (!strstr(st->err, "closed by the server")
		    && !strstr(st->err, "reset by peer") && !strstr(st->err, "Broken pipe"))) {
			return NULL;
		}
		/* stale socket: forget this failure and try a fresh one */
		st->fail = 0;
		st->reconnects++;
	}
	return NULL;
}

/* Whether the server behind cn may evict keys: 1 yes (or unknown), 0 no,
 * -1 the server failed (recorded). The policy is read when the socket is
 * made (setup) and read again when that is verify_tags_recheck seconds old
 * (one CONFIG GET): a CONFIG SET maxmemory-policy on a running server
 * reaches a long-lived persistent connection within that time. */
int tcr_conn_may_evict(tcr_state *st, tcr_conn *cn)
{
	double now = tcr_now_f();

	if (cn->eviction < 0 || now - cn->eviction_at >= st->cfg.verify_tags_recheck || now < cn->eviction_at) {
		const char *argv[3] = {"CONFIG", "GET", "maxmemory*"};
		size_t lens[3] = {6, 3, 10};
		redisReply *r = tcr_conn_cmd(st, cn, 3, argv, lens);

		if (!r) {
			return -1;
		}
		read_eviction(cn, r);
		tcr_reply_free(r);
	}
	return cn->eviction != 0;
}

/* An error reply as a failure of the call; scrubbed of secrets. */
int tcr_reply_err(tcr_state *st, tcr_conn *cn, redisReply *r, const char *what)
{
	const char *name = cn ? cn->name : st->last[0] ? st->last : "redis";

	if (!r) {
		return TC_ERR;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		return tcr_fail(st, "%s: %s: %.300s", name, what, r->str ? r->str : "error");
	}
	return tcr_fail(st, "%s: %s: unexpected reply type %d", name, what, r->type);
}

/* ------------------------------------------------------------ sentinel */

static uint64_t sentinel_key(const tcr_state *st)
{
	uint64_t h = UINT64_C(1469598103934665603);
	int i;

	for (i = 0; i < st->naddrs; i++) {
		h = fnv(h, &st->addrs[i], sizeof(st->addrs[i]));
	}
	return fnv(h, st->cfg.sentinel_master, strlen(st->cfg.sentinel_master));
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
	if (st->master && st->master->c && st->master->gen == fork_gen && !st->master->c->err) {
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
			if (conn_ready_ex(st, st->master, 1) == TC_OK) {
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
		conn_close(cn);
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

/* ------------------------------------------------------------- cluster */

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
		key = fnv(key, &st->addrs[i], sizeof(st->addrs[i]));
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
	if (parse_one(end + 1, strlen(end + 1), 6379, &a, err) != 0 || a.path[0]) {
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

/* -------------------------------------------------------------- release */

void tcr_release_all(tcr_state *st)
{
	int i;

	tcr_conn_release(st, st->master);
	st->master = NULL;
	tcr_conn_release(st, st->replica);
	st->replica = NULL;
	for (i = 0; i < TCR_NODES_MAX; i++) {
		tcr_conn_release(st, st->nodes[i]);
		st->nodes[i] = NULL;
	}
}

void tcr_conn_shutdown(void)
{
	while (pool) {
		tcr_conn *n = pool->next;

		conn_close(pool);
		free(pool);
		pool = n;
	}
	while (clusters) {
		struct tcr_cluster *n = clusters->next;

		free(clusters);
		clusters = n;
	}
}
