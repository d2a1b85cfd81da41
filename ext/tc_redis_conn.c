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
 * - One command on an idle socket (tcr_conn_cmd) is sent from where it was
 *   formatted, and a bulk string reply is read straight into the reply
 *   object: no hiredis buffer in between (cmd_direct; other replies go to
 *   hiredis' reader as read).
 * - The bottom of the engine's stack: it knows one socket to one address;
 *   which address (Sentinel, Cluster) is decided above it, in
 *   tc_redis_sentinel.c and tc_redis_cluster.c.
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
#include <sys/socket.h>
#include <sys/types.h>
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

uint64_t tcr_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
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

/* A reply object; extra bytes after it hold a string's bytes (one malloc
 * for the object and its string: tcr_reply_free() tells by the address) */
static redisReply *new_obj(const redisReadTask *task, int type, size_t extra)
{
	redisReply *r = malloc(sizeof(*r) + extra);

	if (!r) {
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->type = type;
	if (task->parent) {
		redisReply *parent = task->parent->obj;

		if (parent && parent->type == REDIS_REPLY_ARRAY && (size_t)task->idx < parent->elements) {
			parent->element[task->idx] = r;
		}
	}
	return r;
}

#define INLINE_STR(r) ((char *)((r) + 1))

static void *mk_string(const redisReadTask *task, char *str, size_t len)
{
	redisReply *r;

	if (len > SIZE_MAX - sizeof(*r) - 1) {
		return NULL;
	}
	r = new_obj(task, task->type, len + 1);
	if (!r) {
		return NULL;
	}
	r->str = INLINE_STR(r);
	memcpy(r->str, str, len);
	r->str[len] = '\0';
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
	r = new_obj(task, REDIS_REPLY_ARRAY, 0);
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
	redisReply *r = new_obj(task, REDIS_REPLY_INTEGER, 0);

	if (r) {
		r->integer = value;
	}
	return r;
}

static void *mk_nil(const redisReadTask *task)
{
	return new_obj(task, REDIS_REPLY_NIL, 0);
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
	} else if (r->str != INLINE_STR(r)) {
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

/* A socket made in this process, without a pending error. */
int tcr_conn_live(const tcr_conn *cn)
{
	return cn && cn->c && cn->gen == fork_gen && !cn->c->err;
}

void tcr_conn_drop(tcr_conn *cn)
{
	conn_close(cn);
}

static uint64_t conn_key(const tcr_state *st, const tcr_addr *a, int db, int sentinel)
{
	uint64_t h = UINT64_C(1469598103934665603);

	h = tcr_fnv(h, st->cfg.persistent, strlen(st->cfg.persistent) + 1);
	h = tcr_fnv(h, a->host, strlen(a->host) + 1);
	h = tcr_fnv(h, &a->port, sizeof(a->port));
	h = tcr_fnv(h, a->path, strlen(a->path) + 1);
	h = tcr_fnv(h, &db, sizeof(db));
	h = tcr_fnv(h, &sentinel, sizeof(sentinel));
	if (sentinel) {
		h = tcr_fnv(h, st->cfg.sentinel_username, strlen(st->cfg.sentinel_username) + 1);
		h = tcr_fnv(h, st->cfg.sentinel_password, strlen(st->cfg.sentinel_password) + 1);
	} else {
		h = tcr_fnv(h, st->cfg.username, strlen(st->cfg.username) + 1);
		h = tcr_fnv(h, st->cfg.password, strlen(st->cfg.password) + 1);
	}
	h = tcr_fnv(h, &st->cfg.timeout, sizeof(st->cfg.timeout));
	h = tcr_fnv(h, &st->read_timeout, sizeof(st->read_timeout));
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
	tc_addr_name(a, cn->name, sizeof(cn->name));
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
int tcr_conn_ready_ex(tcr_state *st, tcr_conn *cn, int want_role)
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
	return tcr_conn_ready_ex(st, cn, 0);
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
 * The command in RESP: what redisAppendCommandArgv() does, without its
 * sdscatfmt() per argument (callgrind: 3,500 instructions to format a GET,
 * more than the rest of a load). Small commands are formatted in stack
 * (2 KB), larger ones in *out, malloc'd (the caller frees it when it is
 * not stack). The length in *len; -1: out of memory.
 */
#define CMD_STACK 2048

static int format_command(int argc, const char **argv, const size_t *lens, char *stack, char **out, size_t *len)
{
	char *buf = stack, *p;
	size_t need = 16, i;

	for (i = 0; i < (size_t)argc; i++) {
		need += lens[i] + 26;   /* "$" digits "\r\n" data "\r\n" */
	}
	if (need > CMD_STACK) {
		buf = malloc(need);
		if (!buf) {
			return -1;
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
	*out = buf;
	*len = (size_t)(p - buf);
	return 0;
}

/* The command appended to the context's output buffer (a pipeline). */
static int append_command(redisContext *c, int argc, const char **argv, const size_t *lens)
{
	char stack[CMD_STACK], *buf;
	size_t n;
	int r;

	if (format_command(argc, argv, lens, stack, &buf, &n) != 0) {
		return REDIS_ERR;
	}
	r = redisAppendFormattedCommand(c, buf, n);
	if (buf != stack) {
		free(buf);
	}
	return r;
}

/* ------------------------------------------------ one command, directly */

/*
 * One command and its reply on an idle socket, without hiredis' buffers:
 * the command is sent from where it was formatted (hiredis copies it into
 * its output buffer, which it frees and makes again after each write), and
 * a bulk string reply (a load's GET) is read into the reply object itself
 * (hiredis copies the bytes read into its reader's buffer, then into a
 * string it allocates). callgrind, a load of a 700-byte entry: 4,500
 * client instructions before, 1,800 of them in malloc and free; 2,050
 * after (phpredis' get(): 2,560). Any
 * other reply (arrays, integers, errors, a header cut short) is handed to
 * hiredis' reader as read, and parsed there: one parser of everything but
 * the bulk string. The socket is blocking, with SO_RCVTIMEO/SO_SNDTIMEO
 * (the read timeout), as hiredis uses it: one send and one recv a command,
 * no poll.
 */

/* hiredis holds no output, no unread input and no half-parsed reply */
static int context_idle(const redisContext *c)
{
	const redisReader *rd = c->reader;

	return (!c->obuf || !c->obuf[0]) && rd->ridx == -1 && rd->pos >= rd->len && !rd->err && !c->err;
}

static int send_all(tcr_state *st, tcr_conn *cn, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(cn->c->fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			int e = errno;

			if (e == EINTR) {
				continue;
			}
			if (e == EAGAIN || e == EWOULDBLOCK) {
				tcr_fail(st, "%s: write timeout after %.3g s, connection dropped", cn->name, st->read_timeout);
			} else {
				tcr_fail(st, "%s: write error: %s", cn->name, strerror(e));
			}
			conn_close(cn);
			return TC_ERR;
		}
		p += w;
		n -= (size_t)w;
	}
	return TC_OK;
}

/* At least one byte into p; -1 on failure (recorded, socket dropped). */
static ssize_t recv_some(tcr_state *st, tcr_conn *cn, char *p, size_t n)
{
	for (;;) {
		ssize_t got = recv(cn->c->fd, p, n, 0);

		if (got > 0) {
			return got;
		}
		if (got == 0) {
			tcr_fail(st, "%s: connection closed by the server", cn->name);
		} else {
			int e = errno;

			if (e == EINTR) {
				continue;
			}
			if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS) {
				tcr_fail(st, "%s: read timeout after %.3g s, connection dropped", cn->name, st->read_timeout);
			} else {
				tcr_fail(st, "%s: read error: %s", cn->name, strerror(e));
			}
		}
		conn_close(cn);
		return -1;
	}
}

/* "$<len>\r\n" at the start of p[0..n): the header's length in *hl and the
 * string's length in *len (-1: nil). 0 when it is one, else -1 (not a
 * bulk header, not complete, or not well formed: hiredis decides). */
static int bulk_header(const char *p, size_t n, size_t *hl, long long *len)
{
	const char *eol;
	long long v = 0;
	size_t i;

	if (n < 4 || p[0] != '$') {
		return -1;
	}
	eol = memchr(p, '\n', n < 24 ? n : 24);
	if (!eol || eol - p < 3 || eol[-1] != '\r') {
		return -1;
	}
	if (eol - p == 4 && p[1] == '-' && p[2] == '1') {
		*len = -1;
		*hl = 5;
		return 0;
	}
	if (p[1] == '0' && eol - p > 3) {
		return -1;   /* a leading zero: hiredis refuses it (string2ll) */
	}
	for (i = 1; p + i < eol - 1; i++) {
		if (p[i] < '0' || p[i] > '9' || i > 18) {
			return -1;
		}
		v = v * 10 + (p[i] - '0');
	}
	*len = v;
	*hl = (size_t)(eol - p) + 1;
	return 0;
}

#define RECV_FIRST 16384   /* hiredis reads 16 KB at a time too */

static redisReply *recv_direct(tcr_state *st, tcr_conn *cn)
{
	char first[RECV_FIRST];
	ssize_t got = recv_some(st, cn, first, sizeof(first));
	size_t have, hl, take, done, maxb = reply_bytes_max(st);
	long long blen;
	redisReply *r;

	if (got < 0) {
		return NULL;
	}
	have = (size_t)got;
	if (bulk_header(first, have, &hl, &blen) != 0) {
		goto parse;   /* anything else: hiredis parses it */
	}
	if (blen < 0) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			goto oom;
		}
		r->type = REDIS_REPLY_NIL;
		take = hl;
	} else {
		size_t len = (size_t)blen;

		if (len > maxb) {
			tcr_fail(st, "%s: reply larger than %zu bytes, connection dropped", cn->name, maxb);
			conn_close(cn);
			return NULL;
		}
		r = malloc(sizeof(*r) + len + 2);
		if (!r) {
			goto oom;
		}
		memset(r, 0, sizeof(*r));
		r->type = REDIS_REPLY_STRING;
		r->str = INLINE_STR(r);
		r->len = len;
		done = have - hl < len + 2 ? have - hl : len + 2;
		memcpy(r->str, first + hl, done);
		take = hl + done;
		while (done < len + 2) {
			got = recv_some(st, cn, r->str + done, len + 2 - done);
			if (got < 0) {
				free(r);
				return NULL;
			}
			done += (size_t)got;
		}
		if (r->str[len] != '\r' || r->str[len + 1] != '\n') {
			free(r);
			tcr_fail(st, "%s: protocol error: bulk string not followed by CRLF, connection dropped", cn->name);
			conn_close(cn);
			return NULL;
		}
		r->str[len] = '\0';
	}
	if (take < have && redisReaderFeed(cn->c->reader, first + take, have - take) != REDIS_OK) {
		/* bytes past the reply (none are expected): kept for the next read */
		tcr_reply_free(r);
		goto oom;
	}
	return r;
parse:
	if (redisReaderFeed(cn->c->reader, first, have) != REDIS_OK) {
		goto oom;
	}
	return recv_reply(st, cn);
oom:
	tcr_fail(st, "%s: out of memory reading a reply, connection dropped", cn->name);
	conn_close(cn);
	return NULL;
}

/* One command, one reply on an idle socket (the caller made it ready). */
static redisReply *cmd_direct(tcr_state *st, tcr_conn *cn, int argc, const char **argv, const size_t *lens)
{
	char stack[CMD_STACK], *buf;
	size_t n;
	int r;

	if (format_command(argc, argv, lens, stack, &buf, &n) != 0) {
		tcr_fail(st, "%s: out of memory formatting a command", cn->name);
		conn_close(cn);
		return NULL;
	}
	r = send_all(st, cn, buf, n);
	if (buf != stack) {
		free(buf);
	}
	return r == TC_OK ? recv_direct(st, cn) : NULL;
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

		if (tcr_conn_ready(st, cn) != TC_OK) {
			return NULL;
		}
		was_used = cn->used;
		if (context_idle(cn->c)) {
			r = cmd_direct(st, cn, argc, argv, lens);
			if (r) {
				cn->used = 1;
			}
		} else {
			if (tcr_conn_send(st, cn, argc, argv, lens) != TC_OK) {
				return NULL;
			}
			r = tcr_conn_recv(st, cn);
		}
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
}
