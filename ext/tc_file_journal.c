/*
 * tc_file_journal.c: TwoLevel's invalidation journal beside a File store:
 * <cache_dir>/<prefix>.twolevel.journal, under its own flock().
 *
 *   [header: magic, epoch, first seq, head seq][records: u32 len, u64 seq, bytes]...
 *
 * Appends go to the end under LOCK_EX. Past 2 x keep records the newest
 * `keep` are copied to a new file renamed over the old one (same epoch,
 * first moves on); a writer that locked a replaced file reopens. Readers
 * map the file under LOCK_SH and walk it. A deleted journal (a wiped
 * directory) comes back with a new epoch: a gap for every node.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tc_file.h"
#include "tc_twolevel.h"

#define FJ_MAGIC "TCJRNL01"
#define FJ_HDR 32
#define FJ_RHDR 12

typedef struct {
	char magic[8];
	uint64_t epoch, first, head;
} fj_hdr;

static void fj_name(const tc_file *f, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s.twolevel.journal", f->s->prefix);
}

/* flock(op) within a bound: a holder that is stopped (SIGSTOP) or hung
 * inside its few-microsecond section must not hang every writer and every
 * node's sync. Appends wait up to the store's lock_timeout (as a save
 * does), syncs at most 1 s (then the sync fails: reads go to the slow
 * level, never to an unproven fast copy). */
static int fj_lock(const tc_file *f, int fd, int op)
{
	double bound = f->lock_timeout > 0 ? f->lock_timeout : 5.0;
	struct timespec t0, now, ts = {0, 1000000};

	if (op != LOCK_EX && bound > 1.0) {
		bound = 1.0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0) {
			return 0;
		}
		if (errno != EWOULDBLOCK && errno != EINTR) {
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= bound) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

/* The journal open and locked (op: LOCK_EX / LOCK_SH), created if missing;
 * -1 on failure. Retries when the file was replaced while we waited. */
static int fj_open(tc_file *f, int op, fj_hdr *h)
{
	char name[TCF_PREFIXMAX + 32];
	int i;

	fj_name(f, name, sizeof(name));
	for (i = 0; i < 8; i++) {
		struct stat a, b;
		int fd = openat(f->s->dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC, f->file_mode ? f->file_mode : 0600);

		if (fd < 0) {
			return -1;
		}
		if (fj_lock(f, fd, op) != 0 || fstat(fd, &a) != 0) {
			close(fd);
			return -1;
		}
		if (fstatat(f->s->dirfd, name, &b, 0) != 0 || a.st_ino != b.st_ino) {
			close(fd);   /* replaced by a compaction: the new one */
			continue;
		}
		if (a.st_size < FJ_HDR) {
			if (op != LOCK_EX) {
				close(fd);
				op = LOCK_EX;   /* new: its header is written under LOCK_EX */
				i--;
				continue;
			}
			memset(h, 0, sizeof(*h));
			memcpy(h->magic, FJ_MAGIC, 8);
			h->epoch = tc_random64();
			h->first = 1;
			h->head = 0;
			if (ftruncate(fd, 0) != 0 || pwrite(fd, h, FJ_HDR, 0) != FJ_HDR) {
				close(fd);
				return -1;
			}
			return fd;
		}
		if (pread(fd, h, FJ_HDR, 0) != FJ_HDR || memcmp(h->magic, FJ_MAGIC, 8) != 0) {
			close(fd);
			return -1;
		}
		return fd;
	}
	return -1;
}

/* Keeps the newest `keep` records: a new file renamed over the old one. */
static void fj_compact(tc_file *f, int fd, fj_hdr *h, int64_t keep)
{
	char name[TCF_PREFIXMAX + 32], tmp[TCF_PREFIXMAX + 48];
	struct stat sb;
	unsigned char *p;
	uint64_t off = FJ_HDR, from = h->head - (uint64_t)keep + 1;
	int nfd;
	fj_hdr nh = *h;

	if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < FJ_HDR) {
		return;
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		return;
	}
	while (off + FJ_RHDR <= (uint64_t)sb.st_size) {
		uint32_t len;
		uint64_t seq;

		memcpy(&len, p + off, 4);
		memcpy(&seq, p + off + 4, 8);
		if (seq >= from) {
			break;
		}
		off += FJ_RHDR + len;
	}
	fj_name(f, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.%d", name, (int)getpid());
	nfd = openat(f->s->dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, f->file_mode ? f->file_mode : 0600);
	if (nfd >= 0) {
		nh.first = from;
		if (off <= (uint64_t)sb.st_size && pwrite(nfd, &nh, FJ_HDR, 0) == FJ_HDR
		    && pwrite(nfd, p + off, (size_t)((uint64_t)sb.st_size - off), FJ_HDR) == (ssize_t)((uint64_t)sb.st_size - off)
		    && renameat(f->s->dirfd, tmp, f->s->dirfd, name) == 0) {
			*h = nh;
		} else {
			unlinkat(f->s->dirfd, tmp, 0);
		}
		close(nfd);
	}
	munmap(p, (size_t)sb.st_size);
}

static int fj_append(void *sp, tc_str rec, int64_t keep)
{
	tc_file *f = sp;
	fj_hdr h;
	struct stat sb;
	unsigned char rh[FJ_RHDR];
	uint32_t len = (uint32_t)rec.len;
	uint64_t seq;
	int fd = fj_open(f, LOCK_EX, &h);
	int ok;

	if (fd < 0) {
		return TC_ERR;
	}
	tc_crash_point("file_journal_locked");   /* a writer stopped holding the journal (tests) */
	seq = h.head + 1;
	memcpy(rh, &len, 4);
	memcpy(rh + 4, &seq, 8);
	ok = fstat(fd, &sb) == 0 && pwrite(fd, rh, FJ_RHDR, sb.st_size) == FJ_RHDR
	     && pwrite(fd, rec.p, rec.len, sb.st_size + FJ_RHDR) == (ssize_t)rec.len;
	if (ok) {
		h.head = seq;
		ok = pwrite(fd, &h, FJ_HDR, 0) == FJ_HDR;
	}
	if (ok && h.head - h.first + 1 > (uint64_t)keep * 2) {
		fj_compact(f, fd, &h, keep);
	}
	close(fd);   /* and the lock */
	return ok ? TC_OK : TC_ERR;
}

static int fj_read(void *sp, uint64_t since, tc_journal_fn emit, void *ctx, uint64_t *head, uint64_t *epoch)
{
	tc_file *f = sp;
	fj_hdr h;
	struct stat sb;
	unsigned char *p;
	uint64_t off = FJ_HDR;
	int fd = fj_open(f, LOCK_SH, &h), r = TC_OK;

	if (fd < 0) {
		return TC_ERR;
	}
	*head = h.head;
	*epoch = h.epoch;
	if (since > h.head || (since < h.head && since + 1 < h.first)) {
		close(fd);
		return TC_MISS;
	}
	if (since == h.head || fstat(fd, &sb) != 0 || (size_t)sb.st_size <= FJ_HDR) {
		close(fd);
		return TC_OK;
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return TC_ERR;
	}
	while (off + FJ_RHDR <= (uint64_t)sb.st_size) {
		uint32_t len;
		uint64_t seq;

		memcpy(&len, p + off, 4);
		memcpy(&seq, p + off + 4, 8);
		if (off + FJ_RHDR + len > (uint64_t)sb.st_size) {
			r = TC_MISS;   /* torn: treat as a gap */
			break;
		}
		if (seq > since) {
			emit(ctx, seq, (const char *)p + off + FJ_RHDR, len);
		}
		off += FJ_RHDR + len;
	}
	munmap(p, (size_t)sb.st_size);
	close(fd);
	return r;
}

const tc_journal_ops tc_journal_file = {
	&tc_backend_file,
	fj_append,
	fj_read,
	NULL,   /* arm: appends come after the write */
};
