/*
 * tc_shm_seg.c: finding, creating, checking and mapping a named segment.
 *
 * A segment is a file (by default /dev/shm/tagcache.<name>) mapped
 * MAP_SHARED by every process that opens it. Creation and checks happen
 * under flock() on the file: flock is dropped by the kernel when its holder
 * dies, so a creator killed half-way leaves a segment that the next opener
 * formats again, and of 32 processes starting at once exactly one formats.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tc_shm_defs.h"
#include "tc_hash.h"

#define WHYBUF 256

static tc_shm_map *maps;

typedef struct {
	uint64_t off_slots, off_buckets, off_tagbuckets, off_heap;
	uint32_t nbuckets, ntagbuckets, heap_units;
} tc_layout;

static int compute_layout(uint64_t size, uint32_t nslots, tc_layout *L)
{
	uint64_t off = tc_align(sizeof(tc_shm_hdr), 64), units;

	if (nslots < 64 || (uint64_t)nslots > size / 64) {
		return -1;
	}
	L->nbuckets = tc_pow2(nslots);
	L->ntagbuckets = tc_pow2(nslots / 4 < 64 ? 64 : nslots / 4);
	L->off_slots = off;
	off = tc_align(off + (uint64_t)nslots * sizeof(tc_slot), 64);
	L->off_buckets = off;
	off = tc_align(off + (uint64_t)L->nbuckets * 4, 64);
	L->off_tagbuckets = off;
	off = tc_align(off + (uint64_t)L->ntagbuckets * 4, 64);
	L->off_heap = off;
	if (off >= size) {
		return -1;
	}
	units = (size - off) / TC_UNIT;
	if (units < 256 || units > UINT32_MAX - 1) {
		return -1;
	}
	L->heap_units = (uint32_t)units;
	return 0;
}

uint32_t tc_shm_abi(void)
{
	uint64_t v[] = {
		sizeof(tc_shm_hdr), sizeof(tc_slot), sizeof(tc_blk), sizeof(tc_entry),
		sizeof(tc_tag), sizeof(tc_link), sizeof(pthread_mutex_t), TC_NCLASSES,
		TC_UNIT, TC_SHM_LAYOUT, TC_NSTRIPES
	};
	return (uint32_t)tc_hash(v, sizeof(v), 0x7ca5);
}

static void bind_map(tc_shm_map *m, unsigned char *base, size_t size,
                     uint32_t nslots, const tc_layout *L)
{
	static uint64_t attaches;

	m->attach = ++attaches;
	m->base = base;
	m->size = size;
	m->hdr = (tc_shm_hdr *)base;
	m->slots = (tc_slot *)(base + L->off_slots);
	m->buckets = (uint32_t *)(base + L->off_buckets);
	m->tagbuckets = (uint32_t *)(base + L->off_tagbuckets);
	m->heap = base + L->off_heap;
	m->nslots = nslots;
	m->bmask = L->nbuckets - 1;
	m->tbmask = L->ntagbuckets - 1;
	m->heap_units = L->heap_units;
	m->tick_shift = 0;
	while ((nslots >> m->tick_shift) > 1024) {
		m->tick_shift++;
	}
	m->atime_slack = (nslots >> 10) >> m->tick_shift;
}

/* Empty slot table (all on the free list) and buckets. */
void tc_shm_index_reset(tc_shm_map *m)
{
	tc_shm_hdr *h = m->hdr;

	memset(m->slots, 0, (size_t)m->nslots * sizeof(tc_slot));
	memset(m->buckets, 0, (size_t)(m->bmask + 1) * 4);
	memset(m->tagbuckets, 0, (size_t)(m->tbmask + 1) * 4);
	tc_idlist_reset(TC_IDLIST(m->slots), m->nslots, &h->free_slot);
	h->entries = 0;
	h->tags = 0;
	h->clock = 0;
	__atomic_store_n(&h->tagset, h->tagset + 1, __ATOMIC_RELEASE);  /* tc_tag_pre */
}

void tc_shm_format(tc_shm_map *m)
{
	tc_shm_index_reset(m);
	tc_heap_reset(m);
}

static int init_segment(int fd, uint64_t size, uint32_t nslots, char *err)
{
	tc_layout L;
	unsigned char *base;
	tc_shm_hdr *h;
	tc_shm_map tmp;
	int rc;

	if (compute_layout(size, nslots, &L) != 0) {
		snprintf(err, WHYBUF, "size %llu is too small for %u entries",
		         (unsigned long long)size, nslots);
		return -1;
	}
	/* The magic goes in first, before any other byte: a file that is not
	 * empty and does not start with it is not ours (never formatted
	 * over), and a creator that dies from here on leaves one that is. */
	if (ftruncate(fd, 0) != 0 || pwrite(fd, TC_SHM_MAGIC, 8, 0) != 8) {
		snprintf(err, WHYBUF, "cannot truncate: %s", strerror(errno));
		return -1;
	}
	/* Reserve every page now: a full /dev/shm is an error here, not a
	 * SIGBUS on some later write. */
	rc = tc_reserve(fd, size);
	if (rc != 0) {
		int e = ftruncate(fd, 0);
		(void)e;
		snprintf(err, WHYBUF, "cannot reserve %llu bytes: %s",
		         (unsigned long long)size, strerror(rc));
		return -1;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		snprintf(err, WHYBUF, "cannot map %llu bytes: %s",
		         (unsigned long long)size, strerror(errno));
		return -1;
	}
	h = (tc_shm_hdr *)base;
	memset((char *)h + sizeof(h->magic), 0, sizeof(*h) - sizeof(h->magic));
	h->layout = TC_SHM_LAYOUT;
	h->abi = tc_shm_abi();
	h->size = size;
	h->nslots = nslots;
	h->nbuckets = L.nbuckets;
	h->ntagbuckets = L.ntagbuckets;
	h->off_slots = L.off_slots;
	h->off_buckets = L.off_buckets;
	h->off_tagbuckets = L.off_tagbuckets;
	h->off_heap = L.off_heap;
	h->heap_units = L.heap_units;
	tc_mutex_init_shared(&h->lock);
	memset(&tmp, 0, sizeof(tmp));
	bind_map(&tmp, base, size, nslots, &L);
	tc_shm_format(&tmp);
	__atomic_store_n(&h->ready, TC_SHM_READY, __ATOMIC_RELEASE);
	munmap(base, size);
	return 0;
}

/* 0: valid; 1: ours but unusable (recreate); sets *nslots. */
static int check_header(const tc_shm_hdr *h, uint64_t fsize, uint32_t *nslots)
{
	tc_layout L;

	if (memcmp(h->magic, TC_SHM_MAGIC, 8) != 0 || h->layout != TC_SHM_LAYOUT
	    || h->abi != tc_shm_abi() || h->ready != TC_SHM_READY || h->size != fsize
	    || compute_layout(fsize, h->nslots, &L) != 0
	    || L.off_slots != h->off_slots || L.off_buckets != h->off_buckets
	    || L.off_tagbuckets != h->off_tagbuckets || L.off_heap != h->off_heap
	    || L.heap_units != h->heap_units || L.nbuckets != h->nbuckets
	    || L.ntagbuckets != h->ntagbuckets) {
		return 1;
	}
	*nslots = h->nslots;
	return 0;
}

static int valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 100 || s[0] == '.') {
		return 0;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		      || c == '_' || c == '-' || c == '.')) {
			return 0;
		}
	}
	return 1;
}

/* Opens, checks (creating or recreating it if it is ours to make) and maps
 * the segment file at path: a new map, not yet listed. */
static int open_segment(const tc_shm_config *cfg, const char *path, tc_shm_map **out, char *err)
{
	char why[WHYBUF];
	struct stat st, st2;
	tc_shm_map *m;
	uint64_t size = (uint64_t)cfg->size;
	uint32_t nslots;
	int fd, attempt, bad;
	unsigned char *base;
	char magic[8];
	tc_layout L;

	nslots = cfg->max_entries > 0 ? (uint32_t)cfg->max_entries : (uint32_t)(size / 512);
	if (nslots < 64) {
		nslots = 64;
	}
	if (compute_layout(size, nslots, &L) != 0) {
		snprintf(err, TC_ERRBUF, "%s: size %llu cannot hold %u entries",
		         path, (unsigned long long)size, nslots);
		return TC_ERR;
	}

	for (attempt = 0; attempt < 8; attempt++) {
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, cfg->mode & 0777);
		if (fd < 0) {
			snprintf(err, TC_ERRBUF, "%s: cannot open: %s", path,
			         errno == ELOOP ? "it is a symbolic link" : strerror(errno));
			return TC_ERR;
		}
		if (tc_flock_ex(fd, 5000) != 0) {  /* 10 s */
			snprintf(err, TC_ERRBUF, "%s: cannot lock: %s", path, strerror(errno));
			close(fd);
			return TC_ERR;
		}
		/* The file we locked must still be the one the path names. */
		if (fstat(fd, &st) != 0 || lstat(path, &st2) != 0
		    || st.st_dev != st2.st_dev || st.st_ino != st2.st_ino) {
			close(fd);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, TC_ERRBUF, "%s: not a regular file", path);
			close(fd);
			return TC_ERR;
		}
		if (tc_check_owner(&st, cfg->mode, path, err) != TC_OK) {
			close(fd);
			return TC_ERR;
		}
		if (st.st_size == 0) {
			/* New (or left empty by a creator that died): ours to make.
			 * Only its owner can set its mode; a group member formats it
			 * as it is (its mode is checked below). */
			if ((st.st_uid == geteuid() && fchmod(fd, cfg->mode & 0777) != 0)
			    || init_segment(fd, size, nslots, why) != 0) {
				snprintf(err, TC_ERRBUF, "%.4000s: %s", path, why);
				close(fd);
				unlink(path);
				return TC_ERR;
			}
			st.st_size = (off_t)size;
			if (st.st_uid == geteuid()) {
				st.st_mode = (st.st_mode & ~07777) | (cfg->mode & 0777);
			}
		}
		if ((st.st_mode & 0777) & ~(cfg->mode & 0777)) {
			snprintf(err, TC_ERRBUF, "%s: mode %04o is more open than %04o; refused",
			         path, (unsigned)(st.st_mode & 0777), (unsigned)(cfg->mode & 0777));
			close(fd);
			return TC_ERR;
		}
		/* Someone else's file (any file `path` names) is never formatted
		 * over: only an empty one, or one that starts with our magic. */
		if (st.st_size < 8 || pread(fd, magic, 8, 0) != 8 || memcmp(magic, TC_SHM_MAGIC, 8) != 0) {
			snprintf(err, TC_ERRBUF, "%s: not a tagcache segment (a file of %llu bytes without "
			         "its header); refused: remove it or choose another path", path,
			         (unsigned long long)st.st_size);
			close(fd);
			return TC_ERR;
		}
		if ((uint64_t)st.st_size < sizeof(tc_shm_hdr)) {
			bad = 1;
			base = NULL;
		} else {
			/* An existing file may be sparse (a leftover, a copy): every
			 * page is reserved before any is touched. */
			base = tc_map_file(fd, (uint64_t)st.st_size, path, err);
			if (!base) {
				close(fd);
				return TC_ERR;
			}
			bad = check_header((tc_shm_hdr *)base, (uint64_t)st.st_size, &nslots);
		}
		if (bad) {
			/* Ours, but another layout, another build, a torn header or
			 * another size: never interpret it. Processes that still map
			 * the old file keep their inode; new openers get a fresh
			 * segment. */
			if (base) {
				munmap(base, (size_t)st.st_size);
			}
			tc_log("tagcache: %s: unknown or damaged segment header, recreating", path);
			if (unlink(path) != 0) {
				snprintf(err, TC_ERRBUF, "%s: damaged or of another build, and cannot be "
				         "replaced: %s", path, strerror(errno));
				close(fd);
				return TC_ERR;
			}
			close(fd);
			continue;
		}
		compute_layout((uint64_t)st.st_size, nslots, &L);
		m = calloc(1, sizeof(*m));
		if (!m || !(m->path = strdup(path))) {
			free(m);
			munmap(base, (size_t)st.st_size);
			close(fd);
			snprintf(err, TC_ERRBUF, "out of memory");
			return TC_ERR;
		}
		m->dev = st.st_dev;
		m->ino = st.st_ino;
		m->cfg = *cfg;
		bind_map(m, base, (size_t)st.st_size, nslots, &L);
		/* The mapping holds the open file description, and with it the
		 * flock: unlock explicitly, close() alone would not. The
		 * descriptor stays open: fstat() on it tells whether someone
		 * changed the file's size under the mapping (tc_shm_fresh). */
		flock(fd, LOCK_UN);
		m->fd = fd;
		{
			/* once per segment, by its creator (or, for a segment of an
			 * earlier build, by the first process of this one that maps
			 * it), while others may already use it: a process that maps
			 * it later finds 2 MB pages (or, where the kernel refuses,
			 * the 4 KB ones, as before). Not by a process whose
			 * huge_pages is off: it leaves the segment to the next one */
			tc_shm_hdr *H = (tc_shm_hdr *)base;
			uint32_t want = __atomic_load_n(&H->pages_2m, __ATOMIC_ACQUIRE);

			if (cfg->huge_pages && (want == 0 || (want != 3 && __atomic_load_n(&H->pages_2m_ino, __ATOMIC_RELAXED) != (uint64_t)st.st_ino))
			    && __atomic_compare_exchange_n(&H->pages_2m, &want, 3, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				uint32_t huge = tc_huge_collapse(base, (size_t)st.st_size) == 0 ? 1 : 2;

				__atomic_store_n(&H->pages_2m_ino, (uint64_t)st.st_ino, __ATOMIC_RELAXED);
				__atomic_store_n(&H->pages_2m, huge, __ATOMIC_RELEASE);
			}
		}
		*out = m;
		return TC_OK;
	}
	snprintf(err, TC_ERRBUF, "%s: the segment kept changing while it was opened", path);
	return TC_ERR;
}

int tc_shm_attach(const tc_shm_config *cfg, tc_shm_map **out, char *err)
{
	char path[TC_OPT_STRMAX + 128];
	struct stat st;
	tc_shm_map *m;

	tc_stripe_init();
	if (cfg->path[0]) {
		snprintf(path, sizeof(path), "%s", cfg->path);
	} else {
		if (!valid_name(cfg->segment)) {
			snprintf(err, TC_ERRBUF, "invalid segment name \"%.100s\": use 1 to 100 of A-Z a-z 0-9 _ - .", cfg->segment);
			return TC_ERR;
		}
		const char *dir = cfg->dir[0] ? cfg->dir : "/dev/shm";
		size_t dl = strlen(dir), sl = strlen(cfg->segment);

		if (dl + sl + sizeof("/tagcache.") > sizeof(path)) {
			snprintf(err, TC_ERRBUF, "segment directory path is too long");
			return TC_ERR;
		}
		memcpy(path, dir, dl);
		memcpy(path + dl, "/tagcache.", sizeof("/tagcache.") - 1);
		memcpy(path + dl + sizeof("/tagcache.") - 1, cfg->segment, sl + 1);
	}
	if (stat(path, &st) == 0) {
		for (m = maps; m; m = m->next) {
			if (strcmp(m->path, path) == 0 && m->dev == st.st_dev && m->ino == st.st_ino) {
				/* a new object: the mapping is checked before it is used */
				if (tc_shm_fresh(m, err) != TC_OK) {
					return TC_ERR;
				}
				*out = m;
				return TC_OK;
			}
		}
	}
	if (open_segment(cfg, path, &m, err) != TC_OK) {
		return TC_ERR;
	}
	m->next = maps;
	maps = m;
	*out = m;
	return TC_OK;
}

/* 1 when the file under the mapping no longer has the mapping's size
 * (another process truncated or extended it): touching a page past its
 * end would be a SIGBUS. */
static int size_changed(const tc_shm_map *m)
{
	struct stat st;

	return m->base && fstat(m->fd, &st) == 0 && (uint64_t)st.st_size != (uint64_t)m->size;
}

static void detach(tc_shm_map *m)
{
	if (m->base) {
		munmap(m->base, m->size);
	}
	m->base = NULL;
	m->hdr = NULL;
	m->slots = NULL;
	m->buckets = m->tagbuckets = NULL;
	m->heap = NULL;
	m->held = 0;  /* the lock lived in that mapping */
	m->tainted = 0;
	m->checked = 0;
}

int tc_shm_fresh(tc_shm_map *m, char *err)
{
	tc_shm_map *n;
	size_t was = m->size;

	if (m->base && !size_changed(m)) {
		return TC_OK;
	}
	if (m->base) {
		struct stat st;

		if (fstat(m->fd, &st) != 0) {
			st.st_size = 0;
		}
		detach(m);
		tc_log("tagcache: %s: the segment's size changed under this process (%llu bytes mapped, "
		       "%llu in the file): attaching again", m->path, (unsigned long long)was,
		       (unsigned long long)st.st_size);
	}
	if (open_segment(&m->cfg, m->path, &n, err) != TC_OK) {
		char why[TC_ERRBUF];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, TC_ERRBUF, "%s: the segment's size was changed by another process and "
		         "it cannot be attached again: %.3000s", m->path, why);
		return TC_ERR;
	}
	/* The same map, which every object of this process points to, now
	 * bound to the new mapping. */
	close(m->fd);
	free(m->path);
	n->next = m->next;
	*m = *n;
	free(n);
	return TC_OK;
}

void tc_shm_fresh_all(void)
{
	char err[TC_ERRBUF];
	tc_shm_map *m;

	for (m = maps; m; m = m->next) {
		if (size_changed(m)) {
			/* reattached now, or at the next operation that finds it
			 * detached (which says why it cannot) */
			(void)tc_shm_fresh(m, err);
		}
	}
}

/* After a bailout (hard timeout, fatal error) in the middle of a locked
 * section: the structure may be half-changed, so the next holder repairs. */
void tc_shm_release_held(void)
{
	tc_shm_map *m;

	for (m = maps; m; m = m->next) {
		if (m->held && !size_changed(m)) {
			m->hdr->needs_repair = 1;
			m->held = 0;
			pthread_mutex_unlock(&m->hdr->lock);
		}
	}
}
