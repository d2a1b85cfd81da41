/* tc_util.h: logging for the engines (the PHP layer routes it to the
 * error log). */
#ifndef TC_UTIL_H
#define TC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "tc_backend.h"

/* A growable buffer of length-prefixed strings, filled under an engine's
 * lock with malloc (which fails softly: oom is set) and emitted to PHP
 * after the unlock, when allocating may bail out. */
typedef struct {
	unsigned char *p;
	size_t len, cap;
	int oom;
} tc_sbuf;

void tc_sbuf_add(tc_sbuf *b, const void *s, uint32_t n);
void tc_sbuf_cb(void *ctx, const char *p, size_t n);  /* a tc_emit_fn */
void tc_sbuf_emit(tc_sbuf *b, tc_emit_fn emit, void *ctx);  /* and frees */

void tc_set_log_sink(void (*sink)(const char *msg));
/* TAGCACHE_TEST_CRASH_MODE=fatal: crash points call this instead of SIGKILL */
void tc_set_crash_hook(void (*hook)(const char *point));
void tc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
