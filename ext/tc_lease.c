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

void tc_lease_count(tc_lease_tab *t, int which)
{
	__atomic_fetch_add(&t->hdr->counters[which], 1, __ATOMIC_RELAXED);
}

int tc_lease_take(tc_lease_tab *t, tc_str id, double timeout)
{
	tc_lease_slot *s = slot_of(t, id, 1);
	uint32_t me = (uint32_t)getpid();
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
			return TC_LEASE_HELD;
		}
		nw = ((uint64_t)me << DL_BITS) | ((now + (uint64_t)(timeout * 1000) + 1) & DL_MASK);
		if (__atomic_compare_exchange_n(&s->word, &w, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->taken_ms, now, __ATOMIC_RELAXED);
			tc_lease_count(t, TC_LS_LEASES_TAKEN);
			if (w) {
				tc_lease_count(t, TC_LS_LEASE_TIMEOUTS);  /* taken over from a dead or late holder */
			}
			return TC_LEASE_TAKEN;
		}
	}
	return TC_LEASE_HELD;
}

void tc_lease_end(tc_lease_tab *t, tc_str id, int measured)
{
	tc_lease_slot *s = slot_of(t, id, 0);
	uint64_t w;

	if (!s) {
		return;
	}
	w = __atomic_exchange_n(&s->word, 0, __ATOMIC_SEQ_CST);
	if (!w) {
		return;
	}
	if (measured && (uint32_t)(w >> DL_BITS) == (uint32_t)getpid()) {
		uint64_t took = __atomic_load_n(&s->taken_ms, __ATOMIC_RELAXED), now = now_ms();
		uint64_t d = now > took ? now - took : 0;

		__atomic_store_n(&s->rebuild_ms, (uint32_t)(d > UINT32_MAX ? UINT32_MAX : (d ? d : 1)),
		                 __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&s->gen, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST)) {
		syscall(SYS_futex, &s->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

void tc_lease_wait(tc_lease_tab *t, tc_str id, double max_s)
{
	tc_lease_slot *s = slot_of(t, id, 0);
	uint64_t until = now_ms() + (uint64_t)(max_s * 1000), now;
	uint32_t me = (uint32_t)getpid();

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

uint32_t tc_lease_rebuild_ms(tc_lease_tab *t, tc_str id)
{
	tc_lease_slot *s = slot_of(t, id, 0);

	return s ? __atomic_load_n(&s->rebuild_ms, __ATOMIC_RELAXED) : 0;
}

void tc_lease_mark_stale(tc_lease_tab *t, tc_str id, double secs)
{
	tc_lease_slot *s = slot_of(t, id, 1);

	if (s) {
		uint64_t until = now_ms() + (uint64_t)(secs * 1000) + 1000;

		if (until > __atomic_load_n(&s->stale_until_ms, __ATOMIC_RELAXED)) {
			__atomic_store_n(&s->stale_until_ms, until, __ATOMIC_RELAXED);
		}
		__atomic_fetch_or(&s->flags, F_STALE, __ATOMIC_SEQ_CST);
	}
}

int tc_lease_clear_stale(tc_lease_tab *t, tc_str id)
{
	tc_lease_slot *s = slot_of(t, id, 0);

	return s && (__atomic_fetch_and(&s->flags, ~F_STALE, __ATOMIC_SEQ_CST) & F_STALE);
}

void tc_lease_stats(tc_lease_tab *t, tc_stat_fn emit, void *ctx)
{
	static const char *const names[TC_LS_N] = {
		"stale_served", "leases_taken", "lease_timeouts", "early_rebuilds"
	};
	int i;

	for (i = 0; i < TC_LS_N; i++) {
		emit(ctx, names[i], t ? (int64_t)__atomic_load_n(&t->hdr->counters[i], __ATOMIC_RELAXED) : 0);
	}
}
