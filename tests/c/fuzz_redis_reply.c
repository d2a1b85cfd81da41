/*
 * fuzz_redis_reply.c: libFuzzer harness for the Redis engine's reply
 * reader (ext/tc_redis_conn.c): a server's reply comes from the network and
 * is hostile input. Each input is what a server sends after our command:
 * the engine connects (tcr_conn_ready, a unix socket in a directory of this
 * process's own; no AUTH, SELECT or CONFIG GET), the harness accepts the far
 * end and a thread writes the bytes there in pieces of the input's sizes
 * (each piece only once the one before was read, so the reader sees those
 * boundaries), then shuts its writing side (the reader sees EOF) or, with
 * "keep open", leaves it open (a cut reply ends by the read timeout, 10 ms).
 * Up to 4 commands go through tcr_conn_cmd(): the first on an idle socket
 * (cmd_direct: recv_direct's bulk string reader, hiredis' reader for the
 * rest), the next ones after bytes left over (tcr_conn_send/recv) or on an
 * idle socket again.
 *
 * Every reply must be the one hiredis' reader alone (a reference with its
 * own objects and the same element budget) makes of the same bytes, built
 * well: lengths, NUL-terminated strings inline in their object, str NULL in
 * the others, no NULL element. When the reference has no complete reply
 * next (cut short, a protocol error, too many elements), the call must fail
 * with the failure recorded (st->fail, st->err) and the socket dropped. A
 * read timeout is accepted anywhere (a loaded machine). The far end must
 * have received exactly the commands sent. Everything is freed (ASan's leak
 * check).
 *
 * Input: byte 0 flags: bits 0-2 the number of pieces - 1; bit 3 a command
 * larger than format_command's stack buffer; bits 4-6 all set: keep open.
 * Then one byte per piece but the last (its size - 1); the rest is the
 * server's bytes (the last piece holds what the others leave).
 * TC_FUZZ_WRITE_SEEDS=dir: write the seeds below and exit.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "../../ext/tc_redis.h"
#define FZ_NAME "fuzz_redis_reply"
#include "fuzzlib.h"

#define MAX_CMDS 4
#define ELEMS_BUDGET (UINT32_C(1) << 22)   /* as tc_redis_conn.c */
#define BIG_ARG 3000

static tcr_state *st;
static tcr_addr addr;
static char big[BIG_ARG];

/* ------------------------------------------------- the reference reader */

typedef struct ref {
	int type;
	long long integer;
	char *str;
	size_t len;
	size_t n;
	struct ref **el;
} ref;

static size_t ref_budget;
static int ref_too_large;

static ref *ref_new(const redisReadTask *t, int type)
{
	ref *r = calloc(1, sizeof(*r));

	if (!r) {
		abort();
	}
	r->type = type;
	if (t->parent) {
		ref *p = t->parent->obj;

		if ((size_t)t->idx >= p->n) {
			fz_fail("reference: an element index past its array");
		}
		p->el[t->idx] = r;
	}
	return r;
}

static void *ref_string(const redisReadTask *t, char *s, size_t len)
{
	ref *r = ref_new(t, t->type);

	r->str = fz_copy((const uint8_t *)s, len);
	r->len = len;
	return r;
}

static void *ref_array(const redisReadTask *t, int n)
{
	ref *r;

	if (n < 0 || (size_t)n > ref_budget) {
		ref_too_large = 1;
		return NULL;
	}
	ref_budget -= (size_t)n;
	r = ref_new(t, REDIS_REPLY_ARRAY);
	r->n = (size_t)n;
	if (n > 0) {
		r->el = calloc((size_t)n, sizeof(*r->el));
		if (!r->el) {
			abort();
		}
	}
	return r;
}

static void *ref_integer(const redisReadTask *t, long long v)
{
	ref *r = ref_new(t, REDIS_REPLY_INTEGER);

	r->integer = v;
	return r;
}

static void *ref_nil(const redisReadTask *t)
{
	return ref_new(t, REDIS_REPLY_NIL);
}

static void ref_free(void *p)
{
	ref *r = p;
	size_t i;

	if (!r) {
		return;
	}
	for (i = 0; i < r->n; i++) {
		ref_free(r->el[i]);
	}
	free(r->el);
	free(r->str);
	free(r);
}

static redisReplyObjectFunctions ref_fns = {ref_string, ref_array, ref_integer, ref_nil, ref_free};

/* Our reply: built well, and equal to the reference. */
static void check_reply(const redisReply *r, const ref *e, int depth)
{
	size_t i;

	if (!r) {
		fz_fail("a NULL element in a complete reply");
	}
	if (depth > 8) {
		fz_fail("a reply nested deeper than hiredis allows");
	}
	if (r->type != e->type) {
		fz_fail("a reply of another type than hiredis' reader gives");
	}
	switch (r->type) {
	case REDIS_REPLY_STRING:
	case REDIS_REPLY_STATUS:
	case REDIS_REPLY_ERROR:
		if (!r->str || r->str != (const char *)(r + 1)) {
			fz_fail("a string reply whose bytes are not inline in its object");
		}
		if (r->len != e->len || memcmp(r->str, e->str, e->len) != 0) {
			fz_fail("a string reply with other bytes than hiredis' reader gives");
		}
		if (r->str[r->len] != '\0') {
			fz_fail("a string reply not NUL-terminated");
		}
		if (r->elements || r->element) {
			fz_fail("a string reply with elements");
		}
		break;
	case REDIS_REPLY_INTEGER:
	case REDIS_REPLY_NIL:
		if (r->str || r->len || r->elements || r->element) {
			fz_fail("an integer or nil reply with a string or elements");
		}
		if (r->type == REDIS_REPLY_INTEGER && r->integer != e->integer) {
			fz_fail("an integer reply with another value than hiredis' reader gives");
		}
		break;
	case REDIS_REPLY_ARRAY:
		if (r->str || r->len) {
			fz_fail("an array reply with a string");
		}
		if (r->elements != e->n || (r->elements > 0) != (r->element != NULL)) {
			fz_fail("an array reply with another number of elements");
		}
		for (i = 0; i < r->elements; i++) {
			check_reply(r->element[i], e->el[i], depth + 1);
		}
		break;
	default:
		fz_fail("a reply of an unknown type");
	}
}

/* ------------------------------------------------------------ the server */

typedef struct {
	int fd;
	const char *p;
	size_t n;
	const uint8_t *sizes;   /* pieces - 1 of them */
	int pieces;
	int keep_open;
	atomic_int done;        /* the harness sends no more commands */
} feed;

static void pause_briefly(void)
{
	struct timespec ts = {0, 20000};

	nanosleep(&ts, NULL);
}

static void *writer(void *arg)
{
	feed *f = arg;
	size_t pos = 0;
	int i;

	for (i = 0; i < f->pieces && pos < f->n; i++) {
		size_t size = i + 1 < f->pieces ? (size_t)f->sizes[i] + 1 : f->n - pos, sent = 0;

		if (size > f->n - pos) {
			size = f->n - pos;
		}
		while (sent < size) {
			ssize_t w = send(f->fd, f->p + pos + sent, size - sent, MSG_NOSIGNAL);

			if (w < 0) {
				if (errno == EINTR) {
					continue;
				}
				goto out;   /* the engine dropped the socket */
			}
			sent += (size_t)w;
		}
		pos += size;
		/* the next piece once this one is read, or the harness is done */
		for (;;) {
			int q = 0;

			if (atomic_load(&f->done) || ioctl(f->fd, SIOCOUTQ, &q) != 0 || q == 0) {
				break;
			}
			pause_briefly();
		}
	}
out:
	if (!f->keep_open) {
		shutdown(f->fd, SHUT_WR);
	}
	return NULL;
}

/* The engine's socket to our listener, and our end of it (accepted). */
static tcr_conn *connect_engine(int *far)
{
	struct sockaddr_un sa;
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	tcr_conn *cn;

	if (lfd < 0) {
		fz_fail("socket() failed");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", addr.path);
	unlink(addr.path);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4) != 0) {
		fz_fail("cannot listen on the unix socket");
	}
	cn = tcr_conn_get(st, &addr, -1, 0);
	if (!cn || tcr_conn_ready(st, cn) != TC_OK) {
		fprintf(stderr, FZ_NAME ": %s\n", st->err);
		fz_fail("the engine cannot connect to the harness");
	}
	*far = accept(lfd, NULL, NULL);
	if (*far < 0) {
		fz_fail("accept() failed");
	}
	/* a reconnect (a stale socket replaced) finds no server */
	close(lfd);
	unlink(addr.path);
	return cn;
}

static size_t format_cmd(char *buf, int big_cmd)
{
	if (big_cmd) {
		size_t n = (size_t)sprintf(buf, "*2\r\n$3\r\nGET\r\n$%d\r\n", BIG_ARG);

		memcpy(buf + n, big, BIG_ARG);
		memcpy(buf + n + BIG_ARG, "\r\n", 2);
		return n + BIG_ARG + 2;
	}
	return (size_t)sprintf(buf, "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n");
}

static void run(const uint8_t *d, size_t size)
{
	int flags = d[0], pieces = (flags & 7) + 1, big_cmd = (flags >> 3) & 1, keep_open = ((flags >> 4) & 7) == 7;
	const char *argv[2] = {"GET", "key"};
	size_t lens[2] = {3, 3}, hdr = 1 + (size_t)pieces - 1, ncmds = 0, i, got, explen;
	char cmd[BIG_ARG + 64], *seen;
	redisReader *refr;
	pthread_t th;
	feed f;
	int far, k;
	tcr_conn *cn;

	if (size < hdr) {
		return;
	}
	if (big_cmd) {
		argv[1] = big;
		lens[1] = BIG_ARG;
	}
	st->read_timeout = keep_open ? 0.01 : 2.0;
	st->fail = 0;
	st->err[0] = '\0';
	cn = connect_engine(&far);

	memset(&f, 0, sizeof(f));
	f.fd = far;
	f.p = fz_copy(d + hdr, size - hdr);
	f.n = size - hdr;
	f.sizes = d + 1;
	f.pieces = pieces;
	f.keep_open = keep_open;
	atomic_init(&f.done, 0);

	refr = redisReaderCreateWithFunctions(&ref_fns);
	if (!refr || redisReaderFeed(refr, f.p, f.n) != REDIS_OK) {
		abort();
	}
	ref_budget = ELEMS_BUDGET;
	if (pthread_create(&th, NULL, writer, &f) != 0) {
		fz_fail("pthread_create() failed");
	}

	for (k = 0; k < MAX_CMDS; k++) {
		void *e = NULL;
		int rc, complete;
		redisReply *r;

		ref_too_large = 0;
		rc = redisReaderGetReply(refr, &e);
		complete = rc == REDIS_OK && e;
		ncmds++;
		st->fail = 0;
		st->err[0] = '\0';
		r = tcr_conn_cmd(st, cn, 2, argv, lens);
		if (r) {
			if (!complete) {
				fprintf(stderr, FZ_NAME ": command %d: reference %s\n", k,
				        rc != REDIS_OK ? refr->errstr : "incomplete");
				fz_fail("a reply where hiredis' reader alone has none");
			}
			if (st->fail) {
				fz_fail("a reply with a failure recorded");
			}
			check_reply(r, e, 0);
			tcr_reply_free(r);
			ref_free(e);
			continue;
		}
		ref_free(e);
		if (!st->fail || !st->err[0]) {
			fz_fail("a failed command without a failure recorded");
		}
		if (tcr_conn_live(cn)) {
			fz_fail("a failed command left its socket in use");
		}
		/* hiredis 0.14 skips the 2 bytes after a bulk string unread; the
		 * direct reader requires them to be CRLF */
		if (complete && !strstr(st->err, "read timeout") && !strstr(st->err, "not followed by CRLF")) {
			fprintf(stderr, FZ_NAME ": command %d: %s\n", k, st->err);
			fz_fail("a failure where hiredis' reader alone reads a complete reply");
		}
		if (rc != REDIS_OK && !ref_too_large && !strstr(st->err, "protocol error")
		    && !strstr(st->err, "read timeout")) {
			fprintf(stderr, FZ_NAME ": command %d: %s; reference: %s\n", k, st->err, refr->errstr);
			fz_fail("a protocol error not reported as one");
		}
		break;
	}
	redisReaderFree(refr);
	atomic_store(&f.done, 1);
	pthread_join(th, NULL);
	tcr_conn_release(st, cn);   /* closes the engine's socket */

	/* the far end got exactly the commands sent, once each */
	explen = format_cmd(cmd, big_cmd);
	seen = malloc(explen * ncmds + 1);
	if (!seen) {
		abort();
	}
	for (got = 0; got < explen * ncmds + 1;) {
		ssize_t n = recv(far, seen + got, explen * ncmds + 1 - got, 0);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		got += (size_t)n;
	}
	if (got != explen * ncmds) {
		fz_fail("the server received another number of command bytes than the commands sent");
	}
	for (i = 0; i < ncmds; i++) {
		if (memcmp(seen + i * explen, cmd, explen) != 0) {
			fz_fail("the server received another command than the one sent");
		}
	}
	free(seen);
	close(far);
	free((void *)f.p);
}

/* ----------------------------------------------------------------- seeds */

static void write_seeds(const char *dir)
{
	static const struct {
		const char *name;
		const char *bytes;
		size_t n;
	} seeds[] = {
#define S(name, lit) {name, lit, sizeof(lit) - 1}
		S("bulk", "\x00$11\r\nhello world\r\n"),
		S("bulk-pieces", "\x02\x01\x06$11\r\nhello world\r\n"),
		S("bulk-empty", "\x00$0\r\n\r\n"),
		S("nil", "\x00$-1\r\n"),
		S("array", "\x00*4\r\n$3\r\nfoo\r\n:42\r\n*2\r\n$-1\r\n+OK\r\n*-1\r\n"),
		S("array-pieces", "\x03\x00\x04\x09*2\r\n$3\r\nfoo\r\n$5\r\nvalue\r\n"),
		S("integer", "\x00:-12345\r\n"),
		S("status", "\x00+OK\r\n"),
		S("error", "\x00-ERR unknown command 'GET'\r\n"),
		S("bulk-cut", "\x00$10\r\nhello"),
		S("bulk-cut-header", "\x00$1"),
		S("bulk-cut-open", "\x70$10\r\nhel"),
		S("bulk-no-crlf", "\x00$5\r\nhelloXY"),
		S("bulk-extra", "\x00$5\r\nhello\r\n:7\r\n$3\r\nabc\r\nxyz"),
		S("bulk-extra-pieces", "\x01\x0a$5\r\nhello\r\n$3\r\nabc\r\n"),
		S("bulk-huge", "\x00$99999999999\r\n"),
		S("array-too-large", "\x00*5000000\r\n"),
		S("nested-too-deep", "\x00*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"),
		S("big-command", "\x08$3\r\nabc\r\n"),
		S("bad-type", "\x00?what\r\n"),
#undef S
	};
	size_t i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		fz_seed(dir, seeds[i].name, seeds[i].bytes, seeds[i].n);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[4096];

	(void)argc;
	(void)argv;
	fz_seeds(write_seeds);
	memset(big, 'k', sizeof(big));
	st = calloc(1, sizeof(*st));
	if (!st) {
		abort();
	}
	st->verify = TCR_VERIFY_OFF;   /* no CONFIG GET when connecting */
	st->cfg.timeout = 1.0;
	st->cfg.connect_retries = 1;
	st->cfg.retry_interval = 0;    /* a failed reconnect marks nothing down */
	fz_workdir(dir, sizeof(dir), FZ_NAME);
	memset(&addr, 0, sizeof(addr));
	if ((size_t)snprintf(addr.path, sizeof(addr.path), "%s/s", dir) >= sizeof(addr.path)
	    || strlen(addr.path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fz_fail("the socket path is too long (set TC_FUZZ_DIR)");
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	run(data, size);
	return 0;
}
