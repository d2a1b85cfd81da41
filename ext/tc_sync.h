/*
 * tc_sync.h: the primitives the shm and file engines share (plain C,
 * header only): the seqlock writer and reader, the readers' retry policy,
 * the robust process-shared write lock, and the slot free list.
 *
 * Seqlock memory order (TECHNOTES "Reading without a lock" gives the
 * argument): the writer stores the odd value (relaxed), then a release
 * fence, then its changes, and ends with a release store of the even
 * value; the reader loads the sequence with acquire, reads the data,
 * issues an acquire fence and loads the sequence again. A data load that
 * saw a store made after the writer's fence makes that fence synchronize
 * with the reader's, so the second load sees the odd value or a later one.
 */
#ifndef TC_SYNC_H
#define TC_SYNC_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- seqlock */

static inline void tc_seq_begin(uint64_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void tc_seq_end(uint64_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* The same on a 32-bit sequence (the file index's stripes). */
static inline void tc_seq32_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void tc_seq32_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* The reader's side: after reading the sequence (acquire) and what it
 * guards, 1 when a writer has been at work meanwhile. */
static inline int tc_seq_changed(const uint64_t *seq, uint64_t s1)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != s1;
}

static inline int tc_seq32_changed(const uint32_t *seq, uint32_t s1)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != s1;
}

/* How long a reader waits for a writer's window to close: TC_READ_TRIES
 * attempts with tc_backoff() (some tens of milliseconds in all), then it
 * gives up (a miss, or the try-lock slow path); TC_STUCK_TRIES when this
 * process already saw the same window stay open. */
#define TC_READ_TRIES  1000
#define TC_STUCK_TRIES 8

/* A reader's wait after it met a writer's odd sequence: spin, then yield,
 * then sleep. */
static inline void tc_backoff(int attempt)
{
	if (attempt < 8) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else if (attempt < 64) {
		sched_yield();
	} else {
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

/* ---------------------------------------------------------- robust lock */

/* now + t seconds on the realtime clock (tc_util.c) */
void tc_deadline(struct timespec *ts, double t);

/* The robust process-shared write lock: tried first, then (wait) waited
 * for up to timeout seconds. 0: held; 0 with *owner_died: held, from a
 * holder that died (EOWNERDEAD): the caller recovers what it left, then
 * calls pthread_mutex_consistent(); EBUSY (not wait), ETIMEDOUT or another
 * error number: not held, and err (TC_ERRBUF bytes, may be NULL) says why
 * for `what`. */
static inline int tc_robust_lock(pthread_mutex_t *mu, double timeout, int wait, int *owner_died,
                                 const char *what, char *err, size_t errlen)
{
	int r = pthread_mutex_trylock(mu);

	*owner_died = 0;
	if (r == EBUSY && wait) {
		struct timespec ts;

		tc_deadline(&ts, timeout);
		r = pthread_mutex_timedlock(mu, &ts);
	}
	if (r == EOWNERDEAD) {
		*owner_died = 1;
		return 0;
	}
	if (r != 0 && err) {
		if (r == ETIMEDOUT) {
			snprintf(err, errlen, "%.3000s: write lock not acquired within %.3g s", what, timeout);
		} else if (r == EBUSY) {
			snprintf(err, errlen, "%.3000s: the write lock is held", what);
		} else {
			snprintf(err, errlen, "%.3000s: write lock: %s", what, strerror(r));
		}
	}
	return r;
}

/* The same lock for a caller that would rather spin than sleep: tried
 * every few pauses for up to spin_ns nanoseconds (CLOCK_MONOTONIC, a vDSO
 * read), then waited for as tc_robust_lock() does. A waiter asleep on the
 * futex is woken when the holder lets go, but must then wait for a CPU,
 * and on a busy machine the lock is usually taken again by then: others
 * take it while it sleeps (they try it before sleeping; the mutex has no
 * queue). For a rare, latency-bound caller (the file store's clean) whose
 * holders hold it for microseconds. */
static inline int tc_robust_lock_spin(pthread_mutex_t *mu, double timeout, uint64_t spin_ns, int *owner_died,
                                      const char *what, char *err, size_t errlen)
{
	struct timespec ts;
	uint64_t end = 0, now;
	int r, i;

	for (;;) {
#ifdef __GLIBC__
		/* a plain read of the word first: a failed trylock takes the
		 * holder's cache line away (glibc's layout: the owner's tid in
		 * the low 30 bits, FUTEX_TID_MASK; none when free or when the
		 * kernel found the owner dead) */
		if (!end || (__atomic_load_n(&mu->__data.__lock, __ATOMIC_RELAXED) & 0x3fffffff) == 0)
#endif
		{
			r = pthread_mutex_trylock(mu);
			if (r == 0 || r == EOWNERDEAD) {
				*owner_died = r == EOWNERDEAD;
				return 0;
			}
			if (r != EBUSY) {
				break;  /* its error comes from tc_robust_lock() */
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (!end) {
			end = now + spin_ns;
		} else if (now >= end) {
			break;
		}
		for (i = 0; i < 16; i++) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#else
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
		}
	}
	return tc_robust_lock(mu, timeout, 1, owner_died, what, err, errlen);
}

/* ------------------------------------------------------ slot free list */

/* A table of fixed-size records (shm and file slots, file tag records)
 * whose free ones form a list through a u32 link field: ids are index + 1,
 * 0 ends the list, the head lives in the segment's header. TC_IDLIST(a)
 * names the table a (a typed pointer whose records have a `next` link) for
 * the functions below. The caller checks that the list is not empty and a
 * popped id against the table's size (a damaged head). */
#define TC_IDLIST(a) (void *)(a), sizeof(*(a)), offsetof(__typeof__(*(a)), next)

static inline uint32_t *tc_idlist_link(void *a, size_t stride, size_t off, uint32_t id)
{
	return (uint32_t *)((char *)a + (size_t)(id - 1) * stride + off);
}

/* Every record of n on the list, in order (the lowest id first). */
static inline void tc_idlist_reset(void *a, size_t stride, size_t off, uint32_t n, uint32_t *head)
{
	uint32_t i;

	for (i = 1; i <= n; i++) {
		*tc_idlist_link(a, stride, off, i) = i < n ? i + 1 : 0;
	}
	*head = n ? 1 : 0;
}

/* Takes the head (not 0) off the list; returns it. */
static inline uint32_t tc_idlist_pop(void *a, size_t stride, size_t off, uint32_t *head)
{
	uint32_t id = *head;

	*head = *tc_idlist_link(a, stride, off, id);
	return id;
}

static inline void tc_idlist_push(void *a, size_t stride, size_t off, uint32_t *head, uint32_t id)
{
	*tc_idlist_link(a, stride, off, id) = *head;
	*head = id;
}

/* The id after id on the list (a verifier's walk). */
static inline uint32_t tc_idlist_next(void *a, size_t stride, size_t off, uint32_t id)
{
	return *tc_idlist_link(a, stride, off, id);
}

#endif
