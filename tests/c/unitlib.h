/* unitlib.h: reporting for the C unit tests of the engines (shm_unit.c,
 * file_unit.c, redis_unit.c, mc_unit.c): one line per case, "ok", "FAIL"
 * or "skip" (with the reason), then "N passed, N failed, N skipped".
 * u_verbose: each case's name on stderr as it starts. */
#ifndef TC_UNITLIB_H
#define TC_UNITLIB_H

#include <stdarg.h>
#include <stdio.h>

static int u_passed, u_failed, u_skipped, u_case_fails, u_verbose;
static const char *u_case;

static void u_begin(const char *name)
{
	u_case = name;
	u_case_fails = 0;
	if (u_verbose) {
		fprintf(stderr, "-- %s\n", name);
	}
}

static void u_end(void)
{
	if (u_case_fails) {
		u_failed++;
		printf("FAIL %s (%d problems)\n", u_case, u_case_fails);
	} else {
		u_passed++;
		printf("ok   %s\n", u_case);
	}
	fflush(stdout);
}

static __attribute__((unused)) void u_skip(const char *name, const char *why)
{
	u_skipped++;
	printf("skip %s: %s\n", name, why);
	fflush(stdout);
}

static int u_expect(int ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int u_expect(int ok, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		return 1;
	}
	if (++u_case_fails <= 12) {
		fprintf(stderr, "  %s: line %d: ", u_case, line);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return 0;
}

#define EXPECT(c, ...) u_expect(!!(c), __LINE__, __VA_ARGS__)

static int u_summary(void)
{
	printf("%d passed, %d failed, %d skipped\n", u_passed, u_failed, u_skipped);
	return u_failed ? 1 : 0;
}

#endif
