/* tc_util.c: plain-C services shared by the engines: logging and the
 * crash points that the SIGKILL tests use. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tc_backend.h"
#include "tc_util.h"

static void (*log_sink)(const char *msg);
static char crash_name[64];
static long crash_after = 1, crash_seen;
static int crash_fatal;
static void (*crash_hook)(const char *point);

void tc_set_crash_hook(void (*hook)(const char *point))
{
	crash_hook = hook;
}

void tc_set_log_sink(void (*sink)(const char *msg))
{
	log_sink = sink;
}

void tc_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (log_sink) {
		log_sink(buf);
	} else {
		fprintf(stderr, "%s\n", buf);
	}
}

void tc_crash_init(void)
{
	const char *p = getenv("TAGCACHE_TEST_CRASH");
	const char *n = getenv("TAGCACHE_TEST_CRASH_AFTER");

	crash_name[0] = '\0';
	if (p && *p) {
		snprintf(crash_name, sizeof(crash_name), "%s", p);
	}
	crash_after = n ? atol(n) : 1;
	p = getenv("TAGCACHE_TEST_CRASH_MODE");
	crash_fatal = p && strcmp(p, "fatal") == 0;
	if (crash_after < 1) {
		crash_after = 1;
	}
}

void tc_crash_point(const char *point)
{
	if (crash_name[0] && strcmp(crash_name, point) == 0 && ++crash_seen == crash_after) {
		if (crash_fatal && crash_hook) {
			crash_hook(point);  /* a PHP fatal error: longjmps out */
		}
		kill(getpid(), SIGKILL);
		pause();
	}
}

void tc_sbuf_add(tc_sbuf *b, const void *s, uint32_t n)
{
	if (b->oom) {
		return;
	}
	if (b->len + 4 + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		unsigned char *np;

		while (cap < b->len + 4 + n) {
			cap *= 2;
		}
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, &n, 4);
	memcpy(b->p + b->len + 4, s, n);
	b->len += 4 + n;
}

void tc_sbuf_cb(void *ctx, const char *p, size_t n)
{
	tc_sbuf_add(ctx, p, (uint32_t)n);
}

void tc_sbuf_emit(tc_sbuf *b, tc_emit_fn emit, void *ctx)
{
	size_t o = 0;
	uint32_t n;

	while (o < b->len) {
		memcpy(&n, b->p + o, 4);
		emit(ctx, (const char *)b->p + o + 4, n);
		o += 4 + n;
	}
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
