/* tc_util.c: plain-C services shared by the engines (tc_util.h): logging,
 * the crash points that the SIGKILL tests use, and the helpers that the shm
 * and file engines would otherwise each write again. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif
#include <unistd.h>
#include "tc_backend.h"
#include "tc_util.h"

static void (*log_sink)(const char *msg);
static char crash_name[64];
static long crash_after = 1, crash_seen;
static int crash_fatal, crash_stop;
static void (*crash_hook)(const char *point);

void tc_set_crash_hook(void (*hook)(const char *point))
{
	crash_hook = hook;
}

void tc_set_log_sink(void (*sink)(const char *msg))
{
	log_sink = sink;
}

void tc_log_failure(const char *engine, const char *msg)
{
	static char last[256];
	static double last_at;
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (strncmp(last, msg, sizeof(last) - 1) != 0 || now - last_at > 60) {
		snprintf(last, sizeof(last), "%s", msg);
		last_at = now;
		tc_log("tagcache: %s: %s (on_error=miss: the call returned a miss)", engine, msg);
	}
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
	crash_stop = p && strcmp(p, "stop") == 0;
	if (crash_after < 1) {
		crash_after = 1;
	}
}

void tc_crash_point(const char *point)
{
	if (crash_name[0] && strcmp(crash_name, point) == 0 && ++crash_seen == crash_after) {
		if (crash_stop) {
			/* a writer frozen at this point (SIGSTOP, a debugger, a
			 * cgroup freezer): it goes on where it was after SIGCONT */
			raise(SIGSTOP);
			return;
		}
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

int tc_sbuf_done(tc_sbuf *b, int failed, tc_emit_fn emit, void *ctx)
{
	if (failed || b->oom) {
		free(b->p);
		b->p = NULL;
		b->len = b->cap = 0;
		return TC_ERR;
	}
	tc_sbuf_emit(b, emit, ctx);
	return TC_OK;
}

unsigned char *tc_copy(const void *p, size_t n)
{
	unsigned char *c = malloc(n ? n : 1);

	if (c) {
		memcpy(c, p, n);
	}
	return c;
}

size_t tc_dec64(char *buf, int64_t v)
{
	char tmp[24], *t = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t n;

	do {
		*--t = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0) {
		*--t = '-';
	}
	n = (size_t)(tmp + sizeof(tmp) - t);
	memcpy(buf, t, n);
	buf[n] = '\0';
	return n;
}

int tc_verify_nolock(tc_emit_fn emit, void *ctx)
{
	const char *msg = "the write lock could not be taken";

	emit(ctx, msg, strlen(msg));
	return TC_ERR;
}

int tc_ids_grow(tc_ids *l, size_t want)
{
	size_t cap = l->cap ? l->cap * 2 : 64;
	uint32_t *np;

	if (want <= l->cap) {
		return 0;
	}
	while (cap < want) {
		cap *= 2;
	}
	np = realloc(l->v, cap * sizeof(uint32_t));
	if (!np) {
		return -1;
	}
	l->v = np;
	l->cap = cap;
	return 0;
}

uint32_t *tc_select(const tc_index *x, tc_ids_mode mode, const tc_str *tags, size_t ntags,
                    size_t *n, int *oom)
{
	uint32_t *refs = malloc((ntags ? ntags : 1) * sizeof(uint32_t)), i;
	tc_ids out = {0};
	size_t k;
	unsigned char *seen = NULL;

	*n = 0;
	*oom = 0;
	if (!refs) {
		*oom = 1;
		return NULL;
	}
	for (k = 0; k < ntags; k++) {
		refs[k] = x->tag(x->ix, &tags[k]);
	}

#define PUSH(id) do { \
		if (tc_ids_push(&out, (id)) != 0) { \
			*oom = 1; \
			goto done; \
		} \
	} while (0)

	if (mode == TC_CLEAN_ALL || mode == TC_CLEAN_NOT_MATCHING || mode == TC_CLEAN_OLD) {
		for (i = x->next(x->ix, 0); i; i = x->next(x->ix, i)) {
			int keep = 1;

			if (!x->entry(x->ix, i)) {
				goto done;
			}
			for (k = 0; mode == TC_CLEAN_NOT_MATCHING && k < ntags && keep; k++) {
				if (refs[k] && x->carries(x->ix, i, refs[k])) {
					keep = 0;
				}
			}
			if (keep) {
				PUSH(i);
			}
		}
	} else if (mode == TC_CLEAN_MATCHING && ntags) {
		uint32_t best = 0, bestc = UINT32_MAX;

		for (k = 0; k < ntags; k++) {
			if (!refs[k]) {
				goto done;  /* nobody carries that tag: nobody carries all */
			}
			if (x->count(x->ix, refs[k]) < bestc) {
				best = refs[k];
				bestc = x->count(x->ix, refs[k]);
			}
		}
		for (i = 0; i < bestc; i++) {
			uint32_t id = x->member(x->ix, best, i);
			int all = 1;

			if (id == TC_MEMBER_SKIP) {
				continue;
			}
			if (!x->entry(x->ix, id)) {
				goto done;
			}
			for (k = 0; k < ntags && all; k++) {
				all = refs[k] == best || x->carries(x->ix, id, refs[k]);
			}
			if (all) {
				PUSH(id);
			}
		}
	} else if (mode == TC_CLEAN_MATCHING_ANY && ntags) {
		seen = calloc((x->nslots + 8) / 8, 1);
		if (!seen) {
			*oom = 1;
			goto done;
		}
		for (k = 0; k < ntags; k++) {
			uint32_t cnt;

			if (!refs[k]) {
				continue;
			}
			cnt = x->count(x->ix, refs[k]);
			for (i = 0; i < cnt; i++) {
				uint32_t id = x->member(x->ix, refs[k], i);

				if (id == TC_MEMBER_SKIP) {
					continue;
				}
				if (!x->entry(x->ix, id)) {
					goto done;
				}
				if (tc_bit_first(seen, id)) {
					PUSH(id);
				}
			}
		}
	}
#undef PUSH
done:
	free(refs);
	free(seen);
	if (*oom) {
		free(out.v);
		return NULL;
	}
	*n = out.n;
	return out.v;
}

void tc_report_add(tc_report *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int len;

	if (++r->n > 50 || !r->emit) {
		return;
	}
	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0) {
		return;
	}
	r->emit(r->ctx, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
}

/* ------------------------------------------------------------ stripes */

unsigned tc_stripe_no;

static void pick_stripe(void)
{
	tc_stripe_no = (unsigned)getpid() % TC_NSTRIPES;
}

/* Picks this process's stripe once; a forked child picks again in
 * tc_util_atfork_child(), which the module's one pthread_atfork() calls
 * (the C tests, which run without the module, register it themselves). */
void tc_stripe_init(void)
{
	static int picked;

	if (!picked) {
		pick_stripe();
		picked = 1;
	}
}

pid_t tc_pid_cached;

void tc_util_atfork_child(void)
{
	__atomic_store_n(&tc_pid_cached, 0, __ATOMIC_RELAXED);   /* tc_getpid() reads it again */
	pick_stripe();
}

void tc_stripes_sum(const tc_stripe *s, uint64_t *hits, uint64_t *misses)
{
	int i;

	*hits = 0;
	*misses = 0;
	for (i = 0; i < TC_NSTRIPES; i++) {
		*hits += __atomic_load_n(&s[i].hits, __ATOMIC_RELAXED);
		*misses += __atomic_load_n(&s[i].misses, __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------------------ tag names */

uint64_t tc_names_len(const tc_str *tags, size_t ntags)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < ntags; i++) {
		n += 2 + tags[i].len;
	}
	return n;
}

unsigned char *tc_names_put(unsigned char *w, const tc_str *tags, size_t ntags)
{
	size_t i;

	for (i = 0; i < ntags; i++) {
		uint16_t n = (uint16_t)tags[i].len;

		memcpy(w, &n, 2);
		memcpy(w + 2, tags[i].p, n);
		w += 2 + n;
	}
	return w;
}

int tc_names_ok(const unsigned char *w, uint64_t len, uint32_t ntags)
{
	const unsigned char *end = w + len;
	uint32_t j;

	for (j = 0; j < ntags; j++) {
		uint16_t n;

		if (end - w < 2) {
			return 0;
		}
		memcpy(&n, w, 2);
		if (n == 0 || n > TC_TAG_MAX || end - w - 2 < n) {
			return 0;
		}
		w += 2 + n;
	}
	return w == end;
}

uint64_t tc_random64(void)
{
	struct timespec ts;
	uint64_t r = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
			r = 0;
		}
		close(fd);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	r ^= ((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30) * UINT64_C(0x9e3779b97f4a7c15)
	     ^ (uint64_t)getpid() << 32;
	return r ? r : 1;
}

/* ------------------------------------------------------ files and locks */

void tc_deadline(struct timespec *ts, double t)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)t;
	ts->tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

void tc_mutex_init_shared(pthread_mutex_t *mx)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(mx, &a);
	pthread_mutexattr_destroy(&a);
}

int tc_flock_ex(int fd, int tries)
{
	struct timespec ts = {0, 2000000};
	int i;

	for (i = 0; i < tries; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			return 0;
		}
		if (errno != EWOULDBLOCK && errno != EINTR) {
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	errno = ETIMEDOUT;
	return -1;
}

int tc_reserve(int fd, uint64_t size)
{
#ifdef HAVE_POSIX_FALLOCATE
	return posix_fallocate(fd, 0, (off_t)size);
#else
	return ftruncate(fd, (off_t)size) == 0 ? 0 : errno;
#endif
}

#define TC_HUGE ((uintptr_t)2 << 20)

/* 1 when fd is a file in memory (tmpfs: /dev/shm), whose pages may be 2 MB
 * ones. A file on disk keeps 4 KB pages: a 2 MB page of its page cache
 * would be written back whole for one dirty byte. */
static int on_tmpfs(int fd)
{
#ifdef __linux__
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
#else
	(void)fd;
	return 0;
#endif
}

void *tc_mmap_shared(int fd, size_t size)
{
#ifdef __linux__
	/* A file in memory is mapped at a 2 MB boundary, so that its 2 MB
	 * pages (tc_huge_collapse()) are mapped whole: one page fault, one TLB
	 * entry and, under a hypervisor that shadows page tables, one first
	 * access per 2 MB instead of per 4 KB (TECHNOTES, "Huge pages"). */
	if (size >= TC_HUGE && on_tmpfs(fd)) {
		size_t span = size + TC_HUGE;
		unsigned char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r != MAP_FAILED) {
			unsigned char *a = (unsigned char *)(((uintptr_t)r + TC_HUGE - 1) & ~(TC_HUGE - 1));
			void *p = mmap(a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

			if (p == MAP_FAILED) {
				munmap(r, span);
			} else {
				if (a > r) {
					munmap(r, (size_t)(a - r));
				}
				if (a + size < r + span) {
					munmap(a + size, (size_t)(r + span - (a + size)));
				}
#ifdef MADV_HUGEPAGE
				(void)madvise(p, size, MADV_HUGEPAGE);
#endif
				return p;
			}
		}
	}
#endif
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

int tc_huge_collapse(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25   /* Linux 6.1; older kernels answer EINVAL */
#endif
	uintptr_t a = ((uintptr_t)p + TC_HUGE - 1) & ~(TC_HUGE - 1), e = ((uintptr_t)p + size) & ~(TC_HUGE - 1);
	int i;

	if (e <= a) {
		return EINVAL;
	}
	/* EAGAIN: a page was briefly held elsewhere (one just written, not
	 * yet on its LRU list, say: about one creation in eight here). The
	 * stretches already collapsed are skipped when it is asked again. */
	for (i = 0; i < 5; i++) {
		struct timespec ts = {0, 1000000};

		if (madvise((void *)a, (size_t)(e - a), MADV_COLLAPSE) == 0) {
			return 0;
		}
		if (errno != EAGAIN) {
			return errno;
		}
		nanosleep(&ts, NULL);
	}
	return EAGAIN;
#else
	(void)p;
	(void)size;
	return ENOSYS;
#endif
}

unsigned char *tc_map_file(int fd, uint64_t size, const char *what, char *err)
{
	unsigned char *base;
#ifdef HAVE_POSIX_FALLOCATE
	int rc = posix_fallocate(fd, 0, (off_t)size);

	if (rc != 0) {
		snprintf(err, TC_ERRBUF, "%s: cannot reserve %llu bytes: %s", what, (unsigned long long)size,
		         strerror(rc));
		return NULL;
	}
#endif
	base = tc_mmap_shared(fd, (size_t)size);
	if (base == MAP_FAILED) {
		snprintf(err, TC_ERRBUF, "%s: cannot map: %s", what, strerror(errno));
		return NULL;
	}
	return base;
}

/* 1 when gid is this process's effective or a supplementary group. */
static int in_group(gid_t gid)
{
	gid_t small[64], *g = small;
	int n, i, found = 0;

	if (gid == getegid()) {
		return 1;
	}
	n = getgroups(64, small);
	if (n < 0 && errno == EINVAL) {
		n = getgroups(0, NULL);
		if (n <= 0 || !(g = malloc((size_t)n * sizeof(gid_t)))) {
			return 0;
		}
		n = getgroups(n, g);
	}
	for (i = 0; i < n; i++) {
		if (g[i] == gid) {
			found = 1;
			break;
		}
	}
	if (g != small) {
		free(g);
	}
	return found;
}

int tc_check_owner(const struct stat *st, int mode, const char *what, char *err)
{
	if (st->st_uid == geteuid()) {
		return TC_OK;
	}
	if ((mode & 0070) && (st->st_mode & 0070) && in_group(st->st_gid)) {
		return TC_OK;  /* shared with a group of ours, as configured */
	}
	if (mode & 0070) {
		snprintf(err, TC_ERRBUF, "%s: owned by uid %u and group %u, neither this process's "
		         "(uid %u) nor one of its groups with the group bits of its mode (%04o) set; refused",
		         what, (unsigned)st->st_uid, (unsigned)st->st_gid, (unsigned)geteuid(),
		         (unsigned)(st->st_mode & 0777));
	} else {
		snprintf(err, TC_ERRBUF, "%s: owned by uid %u, not by this process (uid %u); refused "
		         "(a mode that grants the group, e.g. 0660, shares it with a group)", what,
		         (unsigned)st->st_uid, (unsigned)geteuid());
	}
	return TC_ERR;
}
