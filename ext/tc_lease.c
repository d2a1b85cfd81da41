/*
 * tc_lease.c: the per-machine rebuild lease table (issue 14).
 *
 * One file per store, mapped shared by every process of the machine:
 *
 *   [header: 64 B][slots: TC_LEASE_SLOTS x 64 B]
 *
 * An all-zero file is a valid empty table, so a new file needs no set-up
 * step that a crash could leave half done: whoever finds it empty (or
 * too short) extends it, and the magic is written once with a CAS. A slot
 * belongs to one id (a 64-bit hash of it; 16 probes from its home; when
 * all 16 are taken, an idle slot is reused). Everything in a slot is
 * changed with atomics; no lock is ever held, so no caller can be stuck
 * behind another and no callback runs under a lock.
 *
 * The lease word packs the owner's pid (22 bits: pid_max is at most 2^22)
 * and its deadline in ms of the realtime clock (42 bits, good until 2109).
 * A lease is free when the word is 0, its deadline has passed or its owner
 * is gone (kill(pid, 0) says ESRCH): the next caller takes it over with a
 * CAS. Waiters sleep on `gen` (FUTEX_WAIT on a shared mapping, so across
 * processes), which every end of a lease bumps before FUTEX_WAKE; the
 * sleep is bounded by the lease's deadline, and by one second so that a
 * waiter notices a holder that was killed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "tc_lease.h"
#include "tc_hash.h"
#include "tc_util.h"

#define TC_LEASE_MAGIC  UINT64_C(0x3153455341454c54)  /* "TLEASES1" */
#define TC_LEASE_SLOTS  4096u
#define TC_LEASE_PROBES 16u
#define SEED_LEASE      UINT64_C(0x6c65617365)
#define DL_BITS         42
#define DL_MASK         ((UINT64_C(1) << DL_BITS) - 1)
#define F_STALE         1u

typedef struct {
	uint64_t magic;
	uint32_t nslots, slot_size;
	uint64_t counters[TC_LS_N];
	char pad[64 - 16 - 8 * TC_LS_N];
} tc_lease_hdr;

typedef struct {
	uint64_t key;       /* hash of the id, never 0; 0: a free slot */
	uint64_t word;      /* pid << 42 | deadline ms; 0: no lease */
	uint64_t taken_ms;  /* when the current lease was taken */
	uint32_t gen;       /* the futex word: bumped at every end of a lease */
	uint32_t waiters;   /* processes sleeping on gen */
	uint32_t rebuild_ms;
	uint32_t flags;     /* F_STALE: a stale copy may exist... */
	uint64_t stale_until_ms;  /* ...until then */
	char pad[16];
} tc_lease_slot;

struct tc_lease_tab {
	struct tc_lease_tab *next;
	char *path;
	tc_lease_hdr *hdr;
	tc_lease_slot *slots;
};

#define TAB_BYTES (sizeof(tc_lease_hdr) + (size_t)TC_LEASE_SLOTS * sizeof(tc_lease_slot))

static tc_lease_tab *tabs;
static pthread_mutex_t tabs_mx = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

tc_lease_tab *tc_lease_open(const char *path, int mode, int create, char *err)
{
	tc_lease_tab *t;
	struct stat sb;
	void *p;
	int fd;
	uint64_t zero = 0;

	pthread_mutex_lock(&tabs_mx);
	for (t = tabs; t; t = t->next) {
		if (strcmp(t->path, path) == 0) {
			pthread_mutex_unlock(&tabs_mx);
			return t;
		}
	}
	mode &= 0666;
	fd = create ? open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_EXCL, mode) : -1;
	if (fd >= 0) {
		/* made here: the store's mode whatever the umask */
		if (fchmod(fd, (mode_t)mode) != 0) {
			if (err) {
				snprintf(err, TC_ERRBUF, "%.4000s: cannot set the mode of the lease table: %s", path,
				         strerror(errno));
			}
			goto fail;
		}
	} else if (!create || errno == EEXIST) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0) {
		pthread_mutex_unlock(&tabs_mx);
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: cannot open the lease table: %s", path, strerror(errno));
		}
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: the lease table is not a regular file", path);
		}
		goto fail;
	}
	/* as for the store: a stranger's file, or one more open than the
	 * store's mode, could be used to hold every lease: refused */
	{
		char why[TC_ERRBUF];

		if (tc_check_owner(&sb, mode, path, why) != TC_OK) {
			if (err) {
				snprintf(err, TC_ERRBUF, "lease table %.4500s", why);
			}
			goto fail;
		}
	}
	if (sb.st_mode & 0777 & ~(mode_t)mode) {
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: the lease table is more open than %04o; refused", path,
			         (unsigned)mode);
		}
		goto fail;
	}
	/* an empty (new) file grows to its size: zeros are an empty table;
	 * two processes doing it at once both write the same size. Any other
	 * size is another layout: never interpreted, never changed. */
	if (sb.st_size != 0 && (uint64_t)sb.st_size != TAB_BYTES) {
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: not a lease table of this build (size %lld)", path,
			         (long long)sb.st_size);
		}
		goto fail;
	}
	if (sb.st_size == 0 && ftruncate(fd, (off_t)TAB_BYTES) != 0) {
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: cannot size the lease table: %s", path, strerror(errno));
		}
		goto fail;
	}
	p = mmap(NULL, TAB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: cannot map the lease table: %s", path, strerror(errno));
		}
		goto fail;
	}
	close(fd);
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		munmap(p, TAB_BYTES);
		pthread_mutex_unlock(&tabs_mx);
		if (err) {
			snprintf(err, TC_ERRBUF, "out of memory");
		}
		return NULL;
	}
	t->hdr = p;
	t->slots = (tc_lease_slot *)((char *)p + sizeof(tc_lease_hdr));
	if (!__atomic_compare_exchange_n(&t->hdr->magic, &zero, TC_LEASE_MAGIC, 0,
	                                 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
	    && zero != TC_LEASE_MAGIC) {
		/* another layout: never interpreted */
		munmap(p, TAB_BYTES);
		free(t->path);
		free(t);
		pthread_mutex_unlock(&tabs_mx);
		if (err) {
			snprintf(err, TC_ERRBUF, "%.4000s: not a lease table of this build", path);
		}
		return NULL;
	}
	__atomic_store_n(&t->hdr->nslots, TC_LEASE_SLOTS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hdr->slot_size, (uint32_t)sizeof(tc_lease_slot), __ATOMIC_RELAXED);
	t->next = tabs;
	tabs = t;
	pthread_mutex_unlock(&tabs_mx);
	return t;
fail:
	close(fd);
	pthread_mutex_unlock(&tabs_mx);
	return NULL;
}

static uint64_t key_of(tc_str id)
{
	return tc_hash(id.p, id.len, SEED_LEASE) | 1;
}

/* The slot of id; with create, one is claimed if none is. NULL if none. */
static tc_lease_slot *slot_of(tc_lease_tab *t, tc_str id, int create)
{
	uint64_t k = key_of(id);
	uint32_t home = (uint32_t)(k >> 20), i;
	uint64_t now;

	for (i = 0; i < TC_LEASE_PROBES; i++) {
		tc_lease_slot *s = &t->slots[(home + i) % TC_LEASE_SLOTS];
		uint64_t cur = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (cur == k) {
			return s;
		}
		if (cur == 0) {
			if (!create) {
				return NULL;  /* claims fill probes in order: it is not further on */
			}
			if (__atomic_compare_exchange_n(&s->key, &cur, k, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
			    || cur == k) {
				return s;
			}
		}
	}
	if (!create) {
		return NULL;
	}
	/* All probes belong to other ids: reuse one that is idle (no lease,
	 * no stale copy, nobody waiting). The id it had loses its measured
	 * rebuild time, nothing else. */
	now = now_ms();
	for (i = 0; i < TC_LEASE_PROBES; i++) {
		tc_lease_slot *s = &t->slots[(home + i) % TC_LEASE_SLOTS];
		uint64_t cur = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&s->word, __ATOMIC_SEQ_CST) == 0
		    && (__atomic_load_n(&s->flags, __ATOMIC_SEQ_CST) == 0
		        || __atomic_load_n(&s->stale_until_ms, __ATOMIC_RELAXED) < now)
		    && __atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST) == 0
		    && __atomic_compare_exchange_n(&s->key, &cur, k, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->rebuild_ms, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&s->flags, 0, __ATOMIC_SEQ_CST);
			return s;
		}
	}
	return NULL;
}

static int alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The lease in w binds others: before its deadline, owner alive. A
 * deadline further off than the longest rebuild_timeout (86400 s) is no
 * lease of ours: it binds nobody. */
static int binding(uint64_t w, uint64_t now)
{
	uint64_t dl = w & DL_MASK;

	return w && now < dl && dl - now <= UINT64_C(86400000) + 1000 && alive((uint32_t)(w >> DL_BITS));
}

static void mt_count(void *h, int which)
{
	tc_lease_tab *t = h;

	__atomic_fetch_add(&t->hdr->counters[which], 1, __ATOMIC_RELAXED);
}

static int mt_take(void *h, tc_str id, double timeout, int serving)
{
	tc_lease_tab *t = h;
	tc_lease_slot *s = slot_of(t, id, 1);
	uint32_t me = (uint32_t)tc_getpid();
	int i;

	if (!s) {
		return TC_LEASE_NONE;
	}
	for (i = 0; i < 64; i++) {
		uint64_t w = __atomic_load_n(&s->word, __ATOMIC_SEQ_CST), now = now_ms(), nw;

		if (w && (uint32_t)(w >> DL_BITS) == me && now < (w & DL_MASK)) {
			return TC_LEASE_MINE;
		}
		if (binding(w, now)) {
			if (serving) {
				mt_count(t, TC_LS_STALE_SERVED);
			}
			return TC_LEASE_HELD;
		}
		nw = ((uint64_t)me << DL_BITS) | ((now + (uint64_t)(timeout * 1000) + 1) & DL_MASK);
		if (__atomic_compare_exchange_n(&s->word, &w, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->taken_ms, now, __ATOMIC_RELAXED);
			mt_count(t, TC_LS_LEASES_TAKEN);
			if (w) {
				mt_count(t, TC_LS_LEASE_TIMEOUTS);  /* taken over from a dead or late holder */
			}
			return TC_LEASE_TAKEN;
		}
	}
	if (serving) {
		mt_count(t, TC_LS_STALE_SERVED);
	}
	return TC_LEASE_HELD;
}

static void wake(tc_lease_slot *s)
{
	__atomic_fetch_add(&s->gen, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST)) {
		syscall(SYS_futex, &s->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

static int mt_clear_stale(tc_lease_tab *t, tc_str id)
{
	tc_lease_slot *s = slot_of(t, id, 0);

	return s && (__atomic_fetch_and(&s->flags, ~F_STALE, __ATOMIC_SEQ_CST) & F_STALE);
}

static void mt_end(void *h, tc_str id, uint32_t measured_ms, int *had_stale)
{
	tc_lease_tab *t = h;
	tc_lease_slot *s;
	uint64_t w;

	if (had_stale) {
		*had_stale = mt_clear_stale(t, id);
	}
	s = slot_of(t, id, 0);
	if (!s) {
		return;
	}
	w = __atomic_exchange_n(&s->word, 0, __ATOMIC_SEQ_CST);
	if (!w) {
		return;
	}
	if (measured_ms && (uint32_t)(w >> DL_BITS) == (uint32_t)tc_getpid()) {
		__atomic_store_n(&s->rebuild_ms, measured_ms, __ATOMIC_RELAXED);
	}
	wake(s);
}

/* Only this process's own lease: a CAS from the word it wrote. */
static void mt_release(void *h, tc_str id)
{
	tc_lease_slot *s = slot_of(h, id, 0);
	uint64_t w;

	if (!s) {
		return;
	}
	w = __atomic_load_n(&s->word, __ATOMIC_SEQ_CST);
	if (w && (uint32_t)(w >> DL_BITS) == (uint32_t)tc_getpid()
	    && __atomic_compare_exchange_n(&s->word, &w, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		wake(s);
	}
}

static void mt_wait(void *h, tc_str id, double max_s)
{
	tc_lease_tab *t = h;
	tc_lease_slot *s = slot_of(t, id, 0);
	uint64_t until = now_ms() + (uint64_t)(max_s * 1000), now;
	uint32_t me = (uint32_t)tc_getpid();

	if (!s) {
		return;
	}
	while ((now = now_ms()) < until) {
		uint32_t g = __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST);
		uint64_t w, dl, ms;
		struct timespec ts;

		__atomic_fetch_add(&s->waiters, 1, __ATOMIC_SEQ_CST);
		w = __atomic_load_n(&s->word, __ATOMIC_SEQ_CST);
		if (!binding(w, now) || (uint32_t)(w >> DL_BITS) == me) {
			__atomic_fetch_sub(&s->waiters, 1, __ATOMIC_SEQ_CST);
			return;
		}
		dl = w & DL_MASK;
		ms = (dl < until ? dl : until) - now;
		if (ms > 1000) {
			ms = 1000;  /* look at the holder again: it may have been killed */
		}
		ts.tv_sec = (time_t)(ms / 1000);
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		syscall(SYS_futex, &s->gen, FUTEX_WAIT, g, &ts, NULL, 0);
		__atomic_fetch_sub(&s->waiters, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) != g) {
			return;  /* the lease ended */
		}
	}
}

static uint32_t mt_rebuild_ms(void *h, tc_str id)
{
	tc_lease_slot *s = slot_of(h, id, 0);

	return s ? __atomic_load_n(&s->rebuild_ms, __ATOMIC_RELAXED) : 0;
}

static void mt_mark_stale(void *h, tc_str id, double secs)
{
	tc_lease_slot *s = slot_of(h, id, 1);

	if (s) {
		uint64_t until = now_ms() + (uint64_t)(secs * 1000) + 1000;

		if (until > __atomic_load_n(&s->stale_until_ms, __ATOMIC_RELAXED)) {
			__atomic_store_n(&s->stale_until_ms, until, __ATOMIC_RELAXED);
		}
		__atomic_fetch_or(&s->flags, F_STALE, __ATOMIC_SEQ_CST);
	}
}

static void mt_stats(void *h, tc_stat_fn emit, void *ctx)
{
	tc_lease_tab *t = h;
	int i;

	for (i = 0; i < TC_LS_N; i++) {
		emit(ctx, tc_lease_stat_names[i], (int64_t)__atomic_load_n(&t->hdr->counters[i], __ATOMIC_RELAXED));
	}
}

const tc_lease_ops tc_lease_machine = {
	"machine", mt_take, mt_end, mt_release, mt_wait, mt_rebuild_ms, mt_mark_stale, mt_count, mt_stats,
};

/* ------------------------------------------------ any store's leases */

const char *const tc_lease_stat_names[TC_LS_N] = {
	"stale_served", "leases_taken", "lease_timeouts", "early_rebuilds"
};

uint64_t tc_lease_now_ms(void)
{
	return now_ms();
}

const tc_lease_ops *tc_lease_ops_for(const tc_backend **be, void **st)
{
	if ((*be)->lease_store && *st) {
		(*be)->lease_store(*st, be, st);
	}
	return (*be)->lease_ops;
}

/* Per thread under ZTS: a lease is its request's, and a request is one
 * thread's. */
#if defined(_MSC_VER)
#define TC_TLS __declspec(thread)
#else
#define TC_TLS __thread
#endif

const char *tc_lease_token(size_t *len)
{
	static TC_TLS char tok[128];
	static TC_TLS size_t tlen;
	static TC_TLS pid_t owner;

	if (owner != tc_getpid()) {
		char host[64] = "";
		uint64_t r = tc_random64();

		owner = tc_getpid();
		gethostname(host, sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		r ^= (uint64_t)(uintptr_t)&tlen;  /* apart per thread */
		tlen = (size_t)snprintf(tok, sizeof(tok), "%.60s:%d:%016llx", host, (int)owner, (unsigned long long)r);
	}
	*len = tlen;
	return tok;
}

/* The leases this process took and has not ended: given back when their
 * object goes or the request ends (a fatal error, exit(), an uncaught
 * exception between the load() that took one and the save()). */
typedef struct {
	const tc_lease_ops *ops;
	void *h;
	const void *owner;
	char *id;
	size_t len;
	uint64_t taken_ms;
	pid_t pid;
} held_lease;

static TC_TLS held_lease *held;
static TC_TLS size_t nheld, capheld;

static held_lease *held_find(const tc_lease *l, tc_str id)
{
	size_t i;
	pid_t me = tc_getpid();

	for (i = 0; i < nheld; i++) {
		if (held[i].h == l->h && held[i].ops == l->ops && held[i].pid == me && held[i].len == id.len
		    && memcmp(held[i].id, id.p, id.len) == 0) {
			return &held[i];
		}
	}
	return NULL;
}

static void held_drop(held_lease *e)
{
	free(e->id);
	*e = held[--nheld];
	if (!nheld) {
		free(held);
		held = NULL;
		capheld = 0;
	}
}

static void held_add(const tc_lease *l, tc_str id)
{
	held_lease *e = held_find(l, id);

	if (e) {
		e->taken_ms = now_ms();
		e->owner = l->owner;
		return;
	}
	if (nheld == capheld) {
		size_t c = capheld ? capheld * 2 : 8;
		held_lease *n = realloc(held, c * sizeof(*n));

		if (!n) {
			return;  /* not remembered: the lease runs out on its own */
		}
		held = n;
		capheld = c;
	}
	e = &held[nheld];
	e->id = malloc(id.len ? id.len : 1);
	if (!e->id) {
		return;
	}
	memcpy(e->id, id.p, id.len);
	e->ops = l->ops;
	e->h = l->h;
	e->owner = l->owner;
	e->len = id.len;
	e->taken_ms = now_ms();
	e->pid = tc_getpid();
	nheld++;
}

int tc_lease_take(const tc_lease *l, tc_str id, double timeout, int serving)
{
	int r = l->ops->take(l->h, id, timeout, serving);

	if (r == TC_LEASE_TAKEN) {
		held_add(l, id);
	}
	return r;
}

void tc_lease_end(const tc_lease *l, tc_str id, int measured, int *had_stale)
{
	held_lease *e = held_find(l, id);
	uint32_t ms = 0;

	if (e) {
		if (measured) {
			uint64_t now = now_ms(), d = now > e->taken_ms ? now - e->taken_ms : 0;

			ms = (uint32_t)(d > UINT32_MAX ? UINT32_MAX : (d ? d : 1));
		}
		held_drop(e);
	}
	l->ops->end(l->h, id, ms, had_stale);
}

void tc_lease_release(const tc_lease *l, tc_str id)
{
	held_lease *e = held_find(l, id);

	if (e) {
		held_drop(e);
	}
	l->ops->release(l->h, id);
}

void tc_lease_wait(const tc_lease *l, tc_str id, double max_s)
{
	l->ops->wait(l->h, id, max_s);
}

uint32_t tc_lease_rebuild_ms(const tc_lease *l, tc_str id)
{
	return l->ops->rebuild_ms(l->h, id);
}

void tc_lease_mark_stale(const tc_lease *l, tc_str id, double secs)
{
	l->ops->mark_stale(l->h, id, secs);
}

void tc_lease_count(const tc_lease *l, int which)
{
	l->ops->count(l->h, which);
}

void tc_lease_stats(const tc_lease *l, tc_stat_fn emit, void *ctx)
{
	l->ops->stats(l->h, emit, ctx);
}

void tc_lease_stats_zero(tc_stat_fn emit, void *ctx)
{
	int i;

	for (i = 0; i < TC_LS_N; i++) {
		emit(ctx, tc_lease_stat_names[i], 0);
	}
}

static void release_where(const void *owner, int all)
{
	size_t i = 0;
	pid_t me = tc_getpid();

	while (i < nheld) {
		held_lease e = held[i];

		if (!all && e.owner != owner) {
			i++;
			continue;
		}
		held[i] = held[--nheld];
		if (e.pid == me) {
			/* the lease goes back: the next caller rebuilds at once */
			e.ops->release(e.h, (tc_str){e.id, e.len});
		}
		free(e.id);
	}
	if (!nheld) {
		free(held);
		held = NULL;
		capheld = 0;
	}
}

void tc_lease_release_owner(const void *owner)
{
	release_where(owner, 0);
}

void tc_lease_release_all(void)
{
	release_where(NULL, 1);
}
