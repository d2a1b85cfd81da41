/* tc_util.h: logging for the engines (the PHP layer routes it to the
 * error log). */
#ifndef TC_UTIL_H
#define TC_UTIL_H

void tc_set_log_sink(void (*sink)(const char *msg));
/* TAGCACHE_TEST_CRASH_MODE=fatal: crash points call this instead of SIGKILL */
void tc_set_crash_hook(void (*hook)(const char *point));
void tc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
