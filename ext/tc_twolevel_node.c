/*
 * tc_twolevel_node.c: TwoLevel's node state, a page-sized file mapped
 * shared beside the fast segment (<segment path>.twolevel), so every
 * process of the node (php-fpm workers, CLI, cron) sees one "applied
 * sequence" and one "last sync" time. One mapping per file per process;
 * the try-lock is flock() on a descriptor this process opened (reopened
 * after a fork, so a parent and its child never share the lock).
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
#include "tc_twolevel.h"
#include "tc_util.h"

#define TC_TL_MAGIC UINT64_C(0x324c564c4f575454) /* "TTWOLVL2": with node_id and the marks */
#define TC_TL_PAGE 4096
#define TC_TL_MARKS_MAX ((size_t)1 << 22)
/* marks per entry slot of the fast segment: 2 left 4 % of the benchmark's
 * ids sharing a slot (TECHNOTES, "Node state") */
#define TC_TL_MARKS_PER_ENTRY 8
#define TC_TL_SIZE(nmarks) (TC_TL_PAGE + (nmarks) * sizeof(tc_tl_mark))
_Static_assert(sizeof(tc_tl_node) <= TC_TL_PAGE, "the node state fits its page");

typedef struct tl_map {
	struct tl_map *next;
	char *path;
	tc_tl_node *n;
	size_t nmarks;
	int fd;
	int mode;
	pid_t pid;
} tl_map;

static tl_map *maps;

static int open_fd(const char *path, int mode)
{
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode);
}

/* The marks for a segment of `entries` slots: a power of two, at least
 * TC_TL_MARKS_PER_ENTRY times that, at least TC_TL_MARKS_MIN, at most TC_TL_MARKS_MAX (64 MB:
 * a gap clears them all; every process of a node computes
 * the same from the same segment; one that computed another, an older
 * build, only finds fewer of its marks: each holds the id's whole hash). */
static size_t marks_for(size_t entries)
{
	size_t n = TC_TL_MARKS_MIN;

	while (n < entries * TC_TL_MARKS_PER_ENTRY && n < TC_TL_MARKS_MAX) {
		n <<= 1;
	}
	return n;
}

int tc_tl_node_open(const char *segpath, uint64_t ino, size_t entries, int mode, int huge, tc_tl_nodeh *h,
                    char *err)
{
	size_t nmarks = marks_for(entries);
	char path[TC_OPT_STRMAX + 16];
	tl_map *m;
	struct stat sb;
	int fd, rc;
	void *p;

	snprintf(path, sizeof(path), "%s.twolevel", segpath);
	for (m = maps; m; m = m->next) {
		if (strcmp(m->path, path) == 0) {
			break;
		}
	}
	if (m && m->pid != tc_getpid()) {
		/* a forked child: its own descriptor, so flock() excludes the parent */
		fd = open_fd(path, m->mode);
		if (fd >= 0) {
			close(m->fd);
			m->fd = fd;
			m->pid = tc_getpid();
		}
	}
	if (!m) {
		fd = open_fd(path, mode);
		if (fd < 0) {
			snprintf(err, TC_ERRBUF, "cannot open the node state file %s: %s", path, strerror(errno));
			return TC_ERR;
		}
		if (fstat(fd, &sb) != 0) {
			snprintf(err, TC_ERRBUF, "cannot size the node state file %s: %s", path, strerror(errno));
			close(fd);
			return TC_ERR;
		}
		/* every page reserved, as a segment's: a mark page first touched
		 * on a full /dev/shm would be a SIGBUS */
		rc = tc_reserve(fd, TC_TL_SIZE(nmarks));
		if (rc != 0) {
			snprintf(err, TC_ERRBUF, "cannot reserve the node state file %s (%zu bytes): %s", path,
			         TC_TL_SIZE(nmarks), strerror(rc));
			close(fd);
			return TC_ERR;
		}
		p = tc_mmap_shared(fd, TC_TL_SIZE(nmarks));
		if (p == MAP_FAILED) {
			snprintf(err, TC_ERRBUF, "cannot map the node state file %s: %s", path, strerror(errno));
			close(fd);
			return TC_ERR;
		}
		m = calloc(1, sizeof(*m));
		if (!m || !(m->path = strdup(path))) {
			free(m);
			munmap(p, TC_TL_SIZE(nmarks));
			close(fd);
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		m->n = p;
		m->nmarks = nmarks;
		m->fd = fd;
		m->mode = mode;
		m->pid = tc_getpid();
		m->next = maps;
		maps = m;
	}
	h->n = m->n;
	h->marks = (tc_tl_mark *)(void *)((char *)m->n + TC_TL_PAGE);
	h->nmarks = m->nmarks;   /* a segment replaced by a larger one in this process: the first size */
	h->map = m;
	/* a new file, or one left by a segment that was since replaced: start
	 * over (applied 0 never matches a journal, so the first sync empties
	 * the fast level). Never waits on the lock for long: a syncing process
	 * that is stopped holds it; left as is, the state only claims entries
	 * that a new, empty segment does not have. */
	if (__atomic_load_n(&m->n->magic, __ATOMIC_ACQUIRE) != TC_TL_MAGIC
	    || __atomic_load_n(&m->n->ino, __ATOMIC_ACQUIRE) != ino) {
		int i, got = 0;

		for (i = 0; i < 200 && !(got = flock(m->fd, LOCK_EX | LOCK_NB) == 0); i++) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
		if (got) {
			if (m->n->magic != TC_TL_MAGIC || m->n->ino != ino) {
				memset(m->n, 0, sizeof(*m->n));
				memset(h->marks, 0, h->nmarks * sizeof(tc_tl_mark));
				m->n->ino = ino;
				m->n->node_id = tc_random64();
				__atomic_store_n(&m->n->magic, TC_TL_MAGIC, __ATOMIC_RELEASE);
			}
			flock(m->fd, LOCK_UN);
		}
	}
	{
		/* the marks are read at random: 2 MB pages spare a process a
		 * first access per 4 KB of them. Once per file, by the first
		 * process that finds it not tried (a new file, a reset, one of an
		 * earlier build): tc_huge_collapse(); not by one whose
		 * huge_pages is off */
		uint32_t want = 0;

		if (huge && __atomic_compare_exchange_n(&m->n->pages_2m, &want, 3, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			uint32_t got = tc_huge_collapse(m->n, TC_TL_SIZE(m->nmarks)) == 0 ? 1 : 2;

			__atomic_store_n(&m->n->pages_2m, got, __ATOMIC_RELAXED);
		}
	}
	return TC_OK;
}

int tc_tl_node_trylock(tc_tl_nodeh *h)
{
	tl_map *m = h->map;

	if (m->pid != tc_getpid()) {
		int fd = open_fd(m->path, m->mode);

		if (fd < 0) {
			return 0;
		}
		close(m->fd);
		m->fd = fd;
		m->pid = tc_getpid();
	}
	return flock(m->fd, LOCK_EX | LOCK_NB) == 0;
}

void tc_tl_node_unlock(tc_tl_nodeh *h)
{
	flock(((tl_map *)h->map)->fd, LOCK_UN);
}

void tc_tl_node_shutdown(void)
{
	while (maps) {
		tl_map *m = maps;

		maps = m->next;
		munmap(m->n, TC_TL_SIZE(m->nmarks));
		close(m->fd);
		free(m->path);
		free(m);
	}
}
