/*
 * tc_file_io.c: the files under a store, as the layers above it use them:
 * checking a file we open, the directory lock, this process's mapping of
 * the index (installed, and the index's identity: ABI, boot), and the
 * active log's descriptor with its writes and syncs. No policy here: what
 * to do when a file is missing or damaged is decided above (rebuild,
 * store).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tc_file_defs.h"
#include "tc_hash.h"

/* ---------------------------------------------------------------- files */

/* A regular file, ours (or our group's when mode shares it with the
 * group: tc_check_owner), with no permission bit beyond mode. */
int tcf_check_file(int fd, int mode, const char *what, char *err)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		snprintf(err, TC_ERRBUF, "%s: cannot stat: %s", what, strerror(errno));
		return TC_ERR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, TC_ERRBUF, "%s: not a regular file; refused", what);
		return TC_ERR;
	}
	if (tc_check_owner(&st, mode, what, err) != TC_OK) {
		return TC_ERR;
	}
	if ((st.st_mode & 0777) & ~(mode_t)(mode & 0777)) {
		snprintf(err, TC_ERRBUF, "%s: mode %04o is more open than %04o; refused", what,
		         (unsigned)(st.st_mode & 0777), (unsigned)(mode & 0777));
		return TC_ERR;
	}
	return TC_OK;
}

int tcf_flock(tcf_store *s, char *err)
{
	int fd;

	if (s->flockfd >= 0) {
		return TC_OK;
	}
	fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, TC_ERRBUF, "%.3000s: cannot open for locking: %s", s->dir, strerror(errno));
		return TC_ERR;
	}
	if (tc_flock_ex(fd, 15000) == 0) {
		s->flockfd = fd;
		return TC_OK;
	}
	snprintf(err, TC_ERRBUF, "%.3000s: directory lock: %s", s->dir,
	         errno == ETIMEDOUT ? "not acquired within 30 s" : strerror(errno));
	close(fd);
	return TC_ERR;
}

void tcf_funlock(tcf_store *s)
{
	if (s->flockfd >= 0) {
		flock(s->flockfd, LOCK_UN);
		close(s->flockfd);
		s->flockfd = -1;
	}
}

/* ---------------------------------------------------------------- index */

uint64_t tcf_boot(void)
{
	static uint64_t boot;
	static int done;

	if (!done) {
		char buf[64];
		int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

		if (fd >= 0) {
			close(fd);
		}
		boot = n > 0 ? tc_hash(buf, (size_t)n, 0x626f6f74) : 0;
		done = 1;
	}
	return boot;
}

uint32_t tcf_abi(void)
{
	uint64_t v[] = {
		sizeof(tcf_hdr), sizeof(tcf_slot), sizeof(tcf_tag), sizeof(tcf_link), sizeof(tcf_logent),
		sizeof(tcf_rec), sizeof(tcf_loghdr), sizeof(pthread_mutex_t), TCF_MAXLOGS, TCF_NCLASSES,
		TCF_UNIT, TCF_LAYOUT, TC_NSTRIPES, TCF_IDX_LAYOUT
	};
	return (uint32_t)tc_hash(v, sizeof(v), 0x66696c65);
}

/* Replaces this process's mapping of the index by nx. */
int tcf_install(tcf_store *s, tcf_idx *nx)
{
	static uint64_t attaches;  /* tcf_idx.attach: which mapping (tcf_clean_pre) */

	if (s->ix.base && s->ix.base != nx->base) {
		munmap(s->ix.base, s->ix.size);
	}
	s->ix = *nx;
	s->ix.attach = ++attaches;
	s->stuck_seq = 0;
	s->log_gen = ~nx->hdr->log_gen;  /* prune against the new index's log table */
	tcf_lmap_prune(s);
	return TC_OK;
}

void tcf_dirty(tcf_store *s)
{
	if (!s->ix.hdr->dirty) {
		s->ix.hdr->dirty = 1;
	}
}

/* ----------------------------------------------------------- the writer */

/* The active log, open for appending (under the write lock). */
int tcf_writer_fd(tc_file *f, char *err)
{
	tcf_store *s = f->s;
	tcf_hdr *H = s->ix.hdr;
	tcf_logent *le = TCF_LOGENT(&s->ix, H->active_log);
	char name[TCF_PREFIXMAX + 32], what[TC_OPT_STRMAX + 96];
	tcf_loghdr lh;
	int fd;

	if (s->wfd >= 0 && s->wnum == H->active_log && s->wsalt == le->salt) {
		return TC_OK;
	}
	if (s->wfd >= 0) {
		close(s->wfd);
		s->wfd = -1;
	}
	tcf_log_name(name, sizeof(name), s->prefix, H->active_log);
	snprintf(what, sizeof(what), "%.3000s/%s", s->dir, name);
	fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, TC_ERRBUF, "%s: cannot open: %s", what,
		         errno == ELOOP ? "it is a symbolic link; refused" : strerror(errno));
		s->ix.tainted = errno == ENOENT;
		return TC_ERR;
	}
	if (tcf_check_file(fd, f->file_mode | 0600, what, err) != TC_OK) {
		close(fd);
		return TC_ERR;
	}
	if (pread(fd, &lh, sizeof(lh), 0) != (ssize_t)sizeof(lh) || !tcf_log_header_ok(&lh, H->active_log)
	    || lh.salt != le->salt) {
		snprintf(err, TC_ERRBUF, "%s: not the log the index expects", what);
		s->ix.tainted = 1;
		close(fd);
		return TC_ERR;
	}
	s->wfd = fd;
	s->wnum = H->active_log;
	s->wsalt = le->salt;
	return TC_OK;
}

/* pwrite() all of p at off (EINTR retried; a write of 0 bytes is ENOSPC). */
int tcf_pwrite_all(int fd, const unsigned char *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, p, len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len, (off_t)off);

		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Durability after an append: always, or once per interval. */
int tcf_sync(tc_file *f, int force)
{
	tcf_store *s = f->s;
	tcf_hdr *H = s->ix.hdr;

	if (s->wfd < 0) {
		return 0;
	}
	if (force || f->durability == TCF_ALWAYS) {
		return fdatasync(s->wfd);
	}
	if (f->durability == TCF_INTERVAL) {
		int64_t now = tc_now();

		if ((double)(now - H->last_sync) >= f->interval) {
			H->last_sync = now;
			return fdatasync(s->wfd);
		}
	}
	return 0;
}
