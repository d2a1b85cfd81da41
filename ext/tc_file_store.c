/*
 * tc_file_store.c: opening a store safely, and its locks.
 *
 * The directory is opened once, O_DIRECTORY | O_NOFOLLOW, and checked
 * (a directory, ours, not writable by anyone beyond dir_mode); every file
 * in it is then reached with openat() and O_NOFOLLOW from that descriptor,
 * so no symbolic link planted in it is ever followed and no name built
 * from user data is ever used (ids and tags are data inside the logs).
 *
 * Locks:
 * - the write lock: a robust, process-shared mutex in the index header.
 *   A holder that dies is detected by the next locker (EOWNERDEAD). Every
 *   change to the index is bracketed by the header's `dirty` flag, so the
 *   next locker knows whether the dead holder left the index half-changed
 *   (then it rebuilds the index from the logs) or only a torn tail in the
 *   active log (then it cuts the tail off).
 * - the directory lock (tc_file_io.c): flock() on the directory, taken on a descriptor
 *   of its own each time (flock belongs to the open file description,
 *   which fork() shares), around whatever creates, renames or lists
 *   files: creating the index, rebuilding it, creating a log. The kernel
 *   drops it when its holder dies.
 * A mutex left over from another boot (the index survives a reboot, its
 * mutex state does not make sense any more) is never used: an index made
 * in another boot is rebuilt, under the directory lock.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tc_file_defs.h"

static tcf_store *stores;

/* ------------------------------------------------------------ directory */

static int open_dir(const char *path, int dir_mode, char *err)
{
	struct stat st;
	int fd, made = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdir(path, (mode_t)(dir_mode & 0777)) == 0) {
			made = 1;
		} else if (errno != EEXIST) {
			snprintf(err, TC_ERRBUF, "cache_dir %s: cannot create: %s", path, strerror(errno));
			return -1;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		/* O_NOFOLLOW | O_DIRECTORY on a link says ENOTDIR or ELOOP */
		if (e == ELOOP || (e == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))) {
			snprintf(err, TC_ERRBUF, "cache_dir %s: it is a symbolic link; refused", path);
		} else {
			snprintf(err, TC_ERRBUF, "cache_dir %s: cannot open: %s", path,
			         e == ENOTDIR ? "not a directory" : strerror(e));
		}
		return -1;
	}
	if (made && fchmod(fd, (mode_t)(dir_mode & 0777)) != 0) {
		snprintf(err, TC_ERRBUF, "cache_dir %s: cannot set its mode: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, TC_ERRBUF, "cache_dir %s: not a directory", path);
		close(fd);
		return -1;
	}
	{
		char what[TC_OPT_STRMAX + 16];

		snprintf(what, sizeof(what), "cache_dir %s", path);
		if (tc_check_owner(&st, dir_mode, what, err) != TC_OK) {
			close(fd);
			return -1;
		}
	}
	if ((st.st_mode & 0022) & ~(mode_t)(dir_mode & 0777)) {
		snprintf(err, TC_ERRBUF, "cache_dir %s: mode %04o lets others write into it (dir_mode %04o); refused",
		         path, (unsigned)(st.st_mode & 07777), (unsigned)(dir_mode & 0777));
		close(fd);
		return -1;
	}
	return fd;
}

/* ------------------------------------------------------------- the index */

static void idx_name(const tcf_store *s, char *buf, size_t n)
{
	snprintf(buf, n, "%s.idx", s->prefix);
}

/* 0 when h is a usable index of this build and boot, for a file of fsize. */
static int idx_header_ok(const tcf_hdr *h, uint64_t fsize)
{
	tcf_hdr t;
	tcf_caps c;

	if (memcmp(h->magic, TCF_IDX_MAGIC, 8) != 0 || h->layout != TCF_LAYOUT || h->abi != tcf_abi()
	    || h->ready != TCF_READY || h->retired || h->size != fsize || h->boot != tcf_boot()) {
		return -1;
	}
	c.nslots = h->nslots;
	c.ntags = h->ntags;
	c.heap_units = h->heap_units;
	memset(&t, 0, sizeof(t));
	if (tcf_layout(&c, &t) != 0 || t.size != h->size || t.nbuckets != h->nbuckets
	    || t.ntagbuckets != h->ntagbuckets || t.off_slots != h->off_slots
	    || t.off_buckets != h->off_buckets || t.off_tags != h->off_tags
	    || t.off_tagbuckets != h->off_tagbuckets || t.off_heap != h->off_heap) {
		return -1;
	}
	if (h->active_log == 0 || h->first_log > h->active_log || h->active_log >= h->next_log
	    || TCF_LOGENT_C(h, h->active_log)->number != h->active_log) {
		return -1;
	}
	return 0;
}

/* Maps the current index file, rebuilding it from the logs (under the
 * directory lock) when it is missing, foreign, from another boot or
 * damaged. */
int tcf_reopen_index(tc_file *f, char *err)
{
	tcf_store *s = f->s;
	char name[TCF_PREFIXMAX + 16], what[TC_OPT_STRMAX + 96];
	int attempt, locked = 0;

	idx_name(s, name, sizeof(name));
	snprintf(what, sizeof(what), "%.3000s/%s", s->dir, name);
	for (attempt = 0; attempt < 8; attempt++) {
		const char *why = NULL;
		struct stat st;
		int fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0) {
			if (errno == ELOOP) {
				snprintf(err, TC_ERRBUF, "%s: is a symbolic link; refused", what);
				goto fail;
			}
			if (errno != ENOENT) {
				snprintf(err, TC_ERRBUF, "%s: cannot open: %s", what, strerror(errno));
				goto fail;
			}
			why = "no index";
		} else {
			if (tcf_check_file(fd, f->file_mode, what, err) != TC_OK) {
				close(fd);
				goto fail;
			}
			if (fstat(fd, &st) != 0) {
				snprintf(err, TC_ERRBUF, "%s: cannot stat: %s", what, strerror(errno));
				close(fd);
				goto fail;
			}
			if ((uint64_t)st.st_size < sizeof(tcf_hdr)) {
				why = "the index file is truncated";
			} else {
				/* a sparse copy would SIGBUS on a full disk: reserved first */
				unsigned char *base = tc_map_file(fd, (uint64_t)st.st_size, what, err);

				if (!base) {
					close(fd);
					goto fail;
				}
				if (idx_header_ok((tcf_hdr *)base, (uint64_t)st.st_size) == 0) {
					tcf_idx nx;

					memset(&nx, 0, sizeof(nx));
					tcf_bind(&nx, base, (size_t)st.st_size);
					nx.dev = st.st_dev;
					nx.ino = st.st_ino;
					close(fd);
					tcf_install(s, &nx);
					if (locked) {
						tcf_funlock(s);
					}
					return TC_OK;
				}
				why = ((tcf_hdr *)base)->boot != tcf_boot() && memcmp(base, TCF_IDX_MAGIC, 8) == 0
				      ? "the index was made before the last boot" : "the index is foreign or damaged";
				/* Whatever maps it comes back here before its next operation
				 * and finds the new one: `retired` has the same place in
				 * every layout, and a damaged header gets it too (the file
				 * is ours, checked above, and about to be replaced). */
				__atomic_store_n(&((tcf_hdr *)base)->retired, 1, __ATOMIC_RELEASE);
				munmap(base, (size_t)st.st_size);
			}
			close(fd);
		}
		if (!locked) {
			if (tcf_flock(s, err) != TC_OK) {
				return TC_ERR;
			}
			locked = 1;
			continue;  /* look again: another process may have made it */
		}
		/* Our current mapping (if any) is not the file's any more. */
		if (s->ix.base) {
			munmap(s->ix.base, s->ix.size);
			memset(&s->ix, 0, sizeof(s->ix));
		}
		s->held = 0;
		if (tcf_rebuild(f, NULL, 0, why, err) != TC_OK) {
			goto fail;
		}
		/* the rebuild leaves the new index's mutex held */
		s->ix.hdr->dirty = 0;
		s->held = 0;
		pthread_mutex_unlock(&s->ix.hdr->lock);
		tcf_funlock(s);
		return TC_OK;
	}
	snprintf(err, TC_ERRBUF, "%s: the index kept changing while it was opened", what);
fail:
	if (locked) {
		tcf_funlock(s);
	}
	return TC_ERR;
}

static int valid_prefix(const char *p)
{
	size_t n = strlen(p), i;

	if (n == 0 || n > TCF_PREFIXMAX) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		char c = p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
			return 0;
		}
	}
	return 1;
}

int tcf_attach(tc_file *f, const tc_file_config *c, char *err)
{
	char path[TC_OPT_STRMAX];
	size_t n;
	struct stat st;
	tcf_store *s;

	tc_stripe_init();
	if (!valid_prefix(c->prefix)) {
		snprintf(err, TC_ERRBUF, "file_name_prefix \"%.100s\": use 1 to %d of A-Z a-z 0-9 _", c->prefix,
		         TCF_PREFIXMAX);
		return TC_ERR;
	}
	snprintf(path, sizeof(path), "%s", c->cache_dir);
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/') {
		path[--n] = '\0';  /* "dir/" would follow a symlink named dir */
	}
	if (n == 0) {
		snprintf(err, TC_ERRBUF, "cache_dir is empty");
		return TC_ERR;
	}
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		for (s = stores; s; s = s->next) {
			if (s->dev == st.st_dev && s->ino == st.st_ino && strcmp(s->prefix, c->prefix) == 0
			    && strcmp(s->dir, path) == 0) {
				char name[TCF_PREFIXMAX + 16];
				char what[TC_OPT_STRMAX + TCF_PREFIXMAX + 16];
				struct stat ist;

				f->s = s;
				idx_name(s, name, sizeof(name));
				/* a new object checks that the index it maps is still the
				 * file's (deleted, replaced); readers check `retired` */
				if (!s->ix.base || s->ix.hdr->retired
				    || fstatat(s->dirfd, name, &ist, AT_SYMLINK_NOFOLLOW) != 0
				    || ist.st_ino != s->ix.ino || ist.st_dev != s->ix.dev) {
					return tcf_reopen_index(f, err);
				}
				/* the same checks as a first open, on what the stat says */
				snprintf(what, sizeof(what), "%.4000s/%s", s->dir, name);
				if (tc_check_owner(&ist, f->file_mode, what, err) != TC_OK) {
					return TC_ERR;
				}
				if ((ist.st_mode & 0777) & ~(mode_t)(f->file_mode & 0777)) {
					snprintf(err, TC_ERRBUF, "%.3000s/%s: owned by uid %u with mode %04o: not ours, or more "
					         "open than %04o; refused", s->dir, name, (unsigned)ist.st_uid,
					         (unsigned)(ist.st_mode & 0777), (unsigned)(f->file_mode & 0777));
					return TC_ERR;
				}
				return TC_OK;
			}
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->dir = strdup(path))) {
		free(s);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	snprintf(s->prefix, sizeof(s->prefix), "%.*s", (int)sizeof(s->prefix) - 1, c->prefix);
	s->wfd = -1;
	s->flockfd = -1;
	s->dirfd = open_dir(path, f->dir_mode, err);
	if (s->dirfd < 0 || fstat(s->dirfd, &st) != 0) {
		if (s->dirfd >= 0) {
			close(s->dirfd);
		}
		free(s->dir);
		free(s);
		return TC_ERR;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	f->s = s;
	if (tcf_reopen_index(f, err) != TC_OK) {
		close(s->dirfd);
		free(s->dir);
		free(s);
		f->s = NULL;
		return TC_ERR;
	}
	s->next = stores;
	stores = s;
	return TC_OK;
}

/* ----------------------------------------------------------------- locks */

/* The torn tail a dead writer may have left past the active log's end. */
static void cut_tail(tc_file *f)
{
	tcf_store *s = f->s;
	tcf_logent *le = TCF_LOGENT(&s->ix, s->ix.hdr->active_log);
	char err[TC_ERRBUF];
	struct stat st;

	if (le->number != s->ix.hdr->active_log || tcf_writer_fd(f, err) != TC_OK) {
		return;
	}
	if (fstat(s->wfd, &st) == 0 && (uint64_t)st.st_size > le->end) {
		if (ftruncate(s->wfd, (off_t)le->end) != 0) {
			tc_log("tagcache: %s: cannot cut a torn tail off log %u: %s", s->dir, le->number,
			       strerror(errno));
		}
	}
}

static int lock_index(tc_file *f, char *err, int wait);

int tcf_lock(tc_file *f, char *err)
{
	return lock_index(f, err, 1);
}

/* The lock, spun for first (tc_robust_lock_spin): for clean(), the rare
 * writer whose latency counts, where the holders are mostly saves that hold
 * it for a few microseconds. */
int tcf_lock_spin(tc_file *f, char *err)
{
	return lock_index(f, err, 2);
}

/* The lock if no one holds it (a holder that died counts as free); TC_ERR
 * at once otherwise. For readers, which never wait for a writer. */
int tcf_lock_nowait(tc_file *f, char *err)
{
	return lock_index(f, err, 0);
}

static int lock_index(tc_file *f, char *err, int wait)
{
	tcf_store *s = f->s;
	char ebuf[TC_ERRBUF];
	int tries;

	if (!err) {
		err = ebuf;
	}
	for (tries = 0; tries < 16; tries++) {
		double t = f->lock_timeout > 0 ? f->lock_timeout : 5.0;
		int r, owner_died;

		if (__atomic_load_n(&s->ix.hdr->retired, __ATOMIC_ACQUIRE) && tcf_reopen_index(f, err) != TC_OK) {
			return TC_ERR;
		}
		/* the robust lock shared with shm (tc_sync.h) */
		r = wait == 2 ? tc_robust_lock_spin(&s->ix.hdr->lock, t, TCF_CLEAN_SPIN_NS, &owner_died, s->dir, err, TC_ERRBUF)
		             : tc_robust_lock(&s->ix.hdr->lock, t, wait, &owner_died, s->dir, err, TC_ERRBUF);
		if (r != 0) {
			return TC_ERR;
		}
		if (owner_died) {
			pthread_mutex_consistent(&s->ix.hdr->lock);
		}
		s->held = 1;
		tcf_lmap_prune(s);
		if (s->ix.hdr->retired) {
			s->held = 0;
			pthread_mutex_unlock(&s->ix.hdr->lock);
			continue;
		}
		if (owner_died) {
			s->ix.hdr->lock_recoveries++;
			tc_log("tagcache: %s: a process died while holding the write lock; %s", s->dir,
			       s->ix.hdr->dirty ? "rebuilding the index from the logs" : "its torn write is cut off");
			if (!s->ix.hdr->dirty) {
				cut_tail(f);
			}
		}
		if (s->ix.hdr->dirty || s->ix.tainted) {
			const char *why = s->ix.tainted ? "an inconsistency was found in the index"
			                  : "a process stopped in the middle of changing the index";
			tcf_caps c = {s->ix.nslots, s->ix.ntags, s->ix.heap_units};

			if (tcf_rebuild(f, &c, 0, why, err) != TC_OK) {
				s->held = 0;
				pthread_mutex_unlock(&s->ix.hdr->lock);
				return TC_ERR;
			}
		}
		return TC_OK;
	}
	snprintf(err, TC_ERRBUF, "%.3000s: the index kept being replaced", s->dir);
	return TC_ERR;
}

void tcf_unlock(tc_file *f)
{
	tcf_store *s = f->s;

	if (s->ix.tainted) {
		char err[TC_ERRBUF];
		tcf_caps c = {s->ix.nslots, s->ix.ntags, s->ix.heap_units};

		if (tcf_rebuild(f, &c, 0, "an inconsistency was found in the index", err) != TC_OK) {
			tc_log("tagcache: %s", err);
		}
	}
	if (!s->ix.tainted) {
		s->ix.hdr->dirty = 0;
	}
	s->held = 0;
	pthread_mutex_unlock(&s->ix.hdr->lock);
}

/* After a bailout (hard timeout, fatal error) in the middle of a locked
 * section: unlock, and leave `dirty` set so that the next holder rebuilds
 * if the index was being changed. */
void tc_file_release_held(void)
{
	tcf_store *s;

	for (s = stores; s; s = s->next) {
		if (s->held) {
			s->held = 0;
			pthread_mutex_unlock(&s->ix.hdr->lock);
		}
		tcf_funlock(s);
	}
}
