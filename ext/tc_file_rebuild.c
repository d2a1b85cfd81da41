/*
 * tc_file_rebuild.c: making a new index from the logs.
 *
 * The logs are the truth; the index is a cache of them, rebuilt
 *  - when it is missing, foreign (another layout or build), truncated, or
 *    was made before the last boot (its mutex means nothing any more and
 *    its pages may not all have reached the disk);
 *  - when a process died or bailed out in the middle of changing it
 *    (`dirty`), or an inconsistency was found in it (`tainted`);
 *  - to grow it (more slots, tags or heap), and to empty it (clean('all')).
 *
 * A rebuild holds the directory lock (and the old index's mutex when
 * there is a usable old index), writes a new index file under a temporary
 * name, replays every log into it in order, goes on with the newest log
 * as the active one (or creates one when something untrusted lies past its
 * last record, or for clean('all')), and renames the new index over the
 * old one. Then it marks the old index
 * `retired`: every process that maps it reopens the new one before its
 * next operation. Readers are never stopped: until then they read the old
 * index, whose records are still there.
 *
 * Replay, log after log in number order, record after record: a PUT
 * (re)places its id, a DEL removes it, a TOUCH changes its expiry. The
 * last record of an id wins; that is right because records only ever go
 * at the end of the newest log (compaction copies live records there
 * too), and compaction takes the oldest log first, so dropping a DEL with
 * its log never uncovers an older PUT. A record whose header check fails
 * is skipped 8 bytes at a time until a valid header is found again (the
 * check is seeded with the log's random salt and the offset, so bytes
 * inside a value never pass for a record); a PUT whose payload check
 * fails is counted as corrupt and taken as the deletion of the key it
 * names, so that an older record of that id cannot count again.
 *
 * No log that may hold live entries is dropped: only logs made obsolete
 * (a base, an obsolete mark, or a newer log that cannot be trusted). When
 * the log table cannot hold them all, the oldest are merged into one.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tc_file_defs.h"

#define MAXFOUND 4096

typedef struct {
	uint32_t number;
	uint32_t base;
	uint32_t obsolete;
	uint64_t size;
	uint64_t salt;
	uint64_t end;
	int damaged;         /* a header beyond repair: never replayed */
} found_log;

void tcf_caps_default(tcf_caps *c)
{
	c->nslots = 1024;
	c->ntags = 512;
	c->heap_units = 16384;  /* 128 KB */
}

static int cmp_found(const void *a, const void *b)
{
	uint32_t x = ((const found_log *)a)->number, y = ((const found_log *)b)->number;

	return x < y ? -1 : x > y;
}

static int is_tmp_index(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix), n = strlen(name);

	return strncmp(name, prefix, pl) == 0 && strncmp(name + pl, ".idx.", 5) == 0 && n > pl + 9
	       && strcmp(name + n - 4, ".tmp") == 0;
}

static int is_tmp_merge(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix), n = strlen(name);

	return strncmp(name, prefix, pl) == 0 && strncmp(name + pl, ".mrg.", 5) == 0 && n > pl + 9
	       && strcmp(name + n - 4, ".tmp") == 0;
}

/* The first valid record header of a log with this salt: the proof that
 * the salt is right. */
static int has_record(int fd, uint64_t size, uint64_t salt)
{
	unsigned char *p;
	uint64_t off;
	int found = 0;

	if (size < TCF_LOGHDR + TCF_REC || size > ((uint64_t)1 << 40)) {
		return 0;
	}
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		return 0;
	}
	for (off = TCF_LOGHDR; off + TCF_REC <= size && !found; off += 8) {
		found = tcf_rec_header_ok(p + off, size - off, salt, off, NULL) != 0;
	}
	munmap(p, (size_t)size);
	return found;
}

/* A log header that fails its check: one flipped bit is put right; when
 * more is damaged but the salt still validates its records, the log is
 * kept with base = its own number (what was its base is not known: no
 * older log may count). The repaired header is written back, so that
 * readers can map the log. 1 when the log is usable, -1 when it is whole
 * but of another layout. */
static int repair_header(tcf_store *s, const char *fname, int fd, const struct stat *st, uint32_t num,
                         tcf_loghdr *h)
{
	tcf_loghdr c = *h;
	uint32_t base;
	int wfd, ok;

	if (tcf_log_header_intact(h)) {
		return -1;  /* whole, but another layout or number: not ours to interpret */
	}
	if (tcf_log_header_repair(&c, num)) {
		base = c.base;
	} else if (has_record(fd, (uint64_t)st->st_size, h->salt)) {
		c = *h;
		base = num;
	} else {
		return 0;
	}
	wfd = openat(s->dirfd, fname, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	ok = wfd >= 0 && tcf_log_header_rewrite(wfd, num, base, c.salt, c.created) == 0;
	if (wfd >= 0) {
		close(wfd);
	}
	if (!ok || pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) || !tcf_log_header_ok(h, num)) {
		return 0;
	}
	tc_log("tagcache: %s/%s: a damaged log header was repaired%s", s->dir, fname,
	       base == num && c.base != num ? " (the logs before it are dropped)" : "");
	return 1;
}

static void drop_log(tcf_store *s, uint32_t number)
{
	char name[TCF_PREFIXMAX + 32];

	tcf_lmap_drop(s, number);
	tcf_log_name(name, sizeof(name), s->prefix, number);
	unlinkat(s->dirfd, name, 0);
}

/* The logs of the directory with a valid header. Removes temporary index
 * files (no rebuild runs: we hold the directory lock), leftovers of a log
 * creation that died before its header was written, and logs of another
 * layout; leaves alone anything it does not own. */
static int list_logs(tc_file *f, found_log **out, size_t *n, char *err)
{
	tcf_store *s = f->s;
	found_log *v;
	size_t cnt = 0;
	struct dirent *e;
	DIR *d;
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd))) {
		snprintf(err, TC_ERRBUF, "%.3000s: cannot list: %s", s->dir, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return TC_ERR;
	}
	v = malloc(MAXFOUND * sizeof(*v));
	if (!v) {
		closedir(d);
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	while ((e = readdir(d)) != NULL) {
		uint32_t num;
		int lfd;
		struct stat st;
		tcf_loghdr h;
		char what[TC_OPT_STRMAX + 300], ebuf[TC_ERRBUF];
		int damaged = 0;

		if (is_tmp_index(e->d_name, s->prefix) || is_tmp_merge(e->d_name, s->prefix)) {
			unlinkat(s->dirfd, e->d_name, 0);
			continue;
		}
		if (!tcf_log_parse_name(e->d_name, s->prefix, &num) || cnt == MAXFOUND) {
			continue;
		}
		snprintf(what, sizeof(what), "%.3000s/%.255s", s->dir, e->d_name);
		lfd = openat(s->dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lfd < 0) {
			tc_log("tagcache: %s: %s; ignored", what, errno == ELOOP ? "a symbolic link" : strerror(errno));
			continue;
		}
		if (tcf_check_file(lfd, f->file_mode | 0600, what, ebuf) != TC_OK || fstat(lfd, &st) != 0) {
			tc_log("tagcache: %s; ignored", ebuf);
			close(lfd);
			continue;
		}
		if (pread(lfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || !tcf_log_header_ok(&h, num)) {
			int fixed = (uint64_t)st.st_size >= sizeof(h) ? repair_header(s, e->d_name, lfd, &st, num, &h) : 0;

			close(lfd);
			if (fixed < 0) {
				tc_log("tagcache: %s: a log of another version; removed", what);
				unlinkat(s->dirfd, e->d_name, 0);
				continue;
			}
			if (!fixed) {
				if ((uint64_t)st.st_size <= TCF_LOGHDR) {
					/* ours by name and owner, no record in it: a log whose
					 * creation died. Nothing is lost with it. */
					tc_log("tagcache: %s: an empty log with no valid header; removed", what);
					unlinkat(s->dirfd, e->d_name, 0);
					continue;
				}
				/* Records we cannot read, tombstones among them perhaps: no
				 * older record may count again. It and every older log are
				 * dropped (the rebuild's base passes it); it goes last. */
				tc_log("tagcache: %s: its header is damaged beyond repair; it and every older log are "
				       "dropped", what);
				memset(&h, 0, sizeof(h));
				damaged = 1;
			}
		} else {
			close(lfd);
		}
		v[cnt].number = num;
		v[cnt].base = h.base;
		v[cnt].obsolete = tcf_log_obsolete(&h);
		v[cnt].size = (uint64_t)st.st_size;
		v[cnt].salt = h.salt;
		v[cnt].end = TCF_LOGHDR;
		v[cnt].damaged = damaged;
		cnt++;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_found);
	*out = v;
	*n = cnt;
	return TC_OK;
}

static void destroy_tmp(tcf_store *s, tcf_idx *x, const char *name)
{
	if (x->base) {
		munmap(x->base, x->size);
		x->base = NULL;
	}
	unlinkat(s->dirfd, name, 0);
}

static int create_tmp(tc_file *f, const tcf_caps *c, tcf_idx *x, char *name, size_t nn, char *err)
{
	static unsigned counter;
	tcf_store *s = f->s;
	tcf_hdr t;
	tcf_hdr *H;
	struct stat st;
	unsigned char *base;
	int fd, rc;

	memset(&t, 0, sizeof(t));
	memset(x, 0, sizeof(*x));
	if (tcf_layout(c, &t) != 0) {
		snprintf(err, TC_ERRBUF, "%.3000s: index capacities out of range (%u slots, %u tags, %u heap units)",
		         s->dir, c->nslots, c->ntags, c->heap_units);
		return TC_ERR;
	}
	snprintf(name, nn, "%s.idx.%ld.%u.tmp", s->prefix, (long)getpid(), counter++);
	fd = openat(s->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->file_mode & 0777);
	if (fd < 0) {
		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot create: %s", s->dir, name, strerror(errno));
		return TC_ERR;
	}
	if (fchmod(fd, (mode_t)(f->file_mode & 0777)) != 0) {
		rc = errno;
		goto fail;
	}
	/* Every page reserved now: an index page must never be a hole that a
	 * full disk turns into a SIGBUS. */
	rc = tc_reserve(fd, t.size);
	if (rc != 0 || fstat(fd, &st) != 0) {
		rc = rc ? rc : errno;
		goto fail;
	}
	base = mmap(NULL, (size_t)t.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		rc = errno;
		goto fail;
	}
	close(fd);
	H = (tcf_hdr *)base;
	memset(H, 0, sizeof(*H));
	memcpy(H->magic, TCF_IDX_MAGIC, 8);
	H->layout = TCF_LAYOUT;
	H->abi = tcf_abi();
	H->boot = tcf_boot();
	H->size = t.size;
	H->nslots = t.nslots;
	H->nbuckets = t.nbuckets;
	H->ntags = t.ntags;
	H->ntagbuckets = t.ntagbuckets;
	H->off_slots = t.off_slots;
	H->off_buckets = t.off_buckets;
	H->off_tags = t.off_tags;
	H->off_tagbuckets = t.off_tagbuckets;
	H->off_heap = t.off_heap;
	H->heap_units = t.heap_units;
	tc_mutex_init_shared(&H->lock);
	tcf_bind(x, base, (size_t)t.size);
	x->dev = st.st_dev;
	x->ino = st.st_ino;
	tcf_format(x);
	return TC_OK;
fail:
	close(fd);
	unlinkat(s->dirfd, name, 0);
	snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot make an index of %llu bytes: %s", s->dir, name,
	         (unsigned long long)t.size, strerror(rc));
	return TC_ERR;
}

#define REPLAY_UNREADABLE 2

/* Replays one log into x. TC_OK, TC_MISS when x ran out of room (x->full
 * says what), REPLAY_UNREADABLE, TC_ERR. */
static int replay(tc_file *f, tcf_idx *x, found_log *L, tc_str *tg, uint32_t *trefs, uint64_t *corrupt)
{
	tcf_store *s = f->s;
	const unsigned char *base = tcf_lmap_get(s, L->number, L->salt, L->size);
	uint64_t off = TCF_LOGHDR;

	L->end = TCF_LOGHDR;
	if (!base) {
		/* vanished or unreadable since it was listed: its tombstones with
		 * it, so no older log may count either */
		return REPLAY_UNREADABLE;
	}
	while (L->size - off >= TCF_REC) {
		const unsigned char *rec = base + off;
		tcf_rec r;
		uint64_t n = tcf_rec_header_ok(rec, L->size - off, L->salt, off, &r);
		int type = (int)(r.magic & 0xff);

		if (!n) {
			off += 8;  /* resynchronise on the next valid header */
			continue;
		}
		if (type == TCF_PUT && !tcf_rec_body_ok(rec, &r)) {
			/* A damaged record of a key it names: that key's deletion, so
			 * that an older record of it cannot count again. (A damaged
			 * byte may be in the key itself: then the id it was written
			 * for cannot be known; see TECHNOTES.) */
			uint32_t slot = tcf_find(s, x, rec + TCF_REC, r.klen, tcf_key_hash(rec + TCF_REC, r.klen));

			(*corrupt)++;
			if (slot) {
				tcf_remove(x, slot);
			}
		} else if (type == TCF_PUT) {
			{
				const unsigned char *w = rec + TCF_REC + r.klen;
				uint32_t h = tcf_key_hash(rec + TCF_REC, r.klen), j;
				tcf_resv rv;

				for (j = 0; j < r.ntags; j++) {
					uint16_t tl;

					memcpy(&tl, w, 2);
					tg[j].p = (const char *)w + 2;
					tg[j].len = tl;
					w += 2 + tl;
				}
				rv.trefs = trefs;
				rv.thash = NULL;
				rv.tpre = NULL;
				rv.tborn = NULL;
				if (tcf_reserve(s, x, rec + TCF_REC, r.klen, h, tg, r.ntags, &rv) != 0) {
					if (x->full) {
						return TC_MISS;
					}
					return TC_ERR;
				}
				tcf_publish(x, &rv, h, L->number, off, (uint32_t)n, r.expire, r.mtime);
			}
		} else {
			uint32_t slot = tcf_find(s, x, rec + TCF_REC, r.klen, tcf_key_hash(rec + TCF_REC, r.klen));

			if (slot && type == TCF_DEL) {
				tcf_remove(x, slot);
			} else if (slot) {
				x->slots[slot - 1].expire = r.expire;
				x->slots[slot - 1].mtime = r.mtime;
				if (r.expire < x->hdr->min_expire) {
					x->hdr->min_expire = r.expire;
				}
			}
		}
		if (x->tainted) {
			return TC_ERR;
		}
		off += n;
		L->end = off;
	}
	return TC_OK;
}

/* The oldest log of the longest run of newest logs that the log table
 * can hold with a new active log and a free entry besides: at most
 * TCF_MAXLOGS - 2 of them, no two sharing an entry. */
static size_t window_start(const found_log *v, size_t first, size_t n)
{
	unsigned char used[TCF_MAXLOGS];
	size_t k = n, cnt = 0;

	memset(used, 0, sizeof(used));
	while (k > first && cnt < TCF_MAXLOGS - 2 && !used[v[k - 1].number % TCF_MAXLOGS]) {
		used[v[k - 1].number % TCF_MAXLOGS] = 1;
		cnt++;
		k--;
	}
	return k;
}

/* Merges logs[from..to] into one log that takes the place (and number) of
 * logs[to]: every valid record, in order, re-sealed for its new offset (a
 * damaged one as its key's deletion), then renamed over logs[to], then the
 * older ones unlinked. A crash at any point leaves logs whose replay gives
 * the same index: before the rename nothing changed; after it, the merged
 * log repeats, in order, everything the logs still there before it say. */
static int merge_logs(tc_file *f, found_log *logs, size_t from, size_t to, uint32_t base, char *err)
{
	static unsigned counter;
	tcf_store *s = f->s;
	char tmp[TCF_PREFIXMAX + 64], name[TCF_PREFIXMAX + 32];
	uint64_t salt = 0, out = TCF_LOGHDR;
	size_t i;
	int fd, rc = TC_ERR;

	snprintf(tmp, sizeof(tmp), "%s.mrg.%ld.%u.tmp", s->prefix, (long)getpid(), counter++);
	fd = tcf_log_create_as(s, f, tmp, logs[to].number, base, &salt, err);
	if (fd < 0) {
		if (fd == -2) {
			snprintf(err, TC_ERRBUF, "%.3000s/%s: exists", s->dir, tmp);
		}
		return TC_ERR;
	}
	for (i = from; i <= to; i++) {
		found_log *L = &logs[i];
		const unsigned char *b = L->damaged ? NULL : tcf_lmap_get(s, L->number, L->salt, L->size);
		uint64_t off = TCF_LOGHDR;

		if (!b) {
			/* unreadable: nothing before it may count (see replay) */
			snprintf(err, TC_ERRBUF, "%.3000s: log %u cannot be read for a merge", s->dir, L->number);
			goto fail;
		}
		while (L->size - off >= TCF_REC) {
			tcf_rec r;
			uint64_t n = tcf_rec_header_ok(b + off, L->size - off, L->salt, off, &r);
			unsigned char *rec;
			size_t len;

			if (!n) {
				off += 8;
				continue;
			}
			if ((r.magic & 0xff) == TCF_PUT && !tcf_rec_body_ok(b + off, &r)) {
				tc_str key = {(const char *)b + off + TCF_REC, r.klen};

				len = (size_t)tcf_rec_size(r.klen, 0, 0);
				if (!(rec = malloc(len))) {
					goto oom;
				}
				tcf_rec_build(rec, TCF_DEL, key, NULL, 0, NULL, 0, 0, r.mtime);
			} else {
				len = (size_t)n;
				if (!(rec = malloc(len))) {
					goto oom;
				}
				memcpy(rec, b + off, len);
			}
			tcf_rec_seal(rec, salt, out);
			if (tcf_pwrite_all(fd, rec, len, out) != 0) {
				snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot write: %s", s->dir, tmp, strerror(errno));
				free(rec);
				goto fail;
			}
			free(rec);
			out += len;
			off += n;
		}
	}
	if ((f->durability != TCF_NEVER && fdatasync(fd) != 0)) {
		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot sync: %s", s->dir, tmp, strerror(errno));
		goto fail;
	}
	tcf_log_name(name, sizeof(name), s->prefix, logs[to].number);
	if (renameat(s->dirfd, tmp, s->dirfd, name) != 0) {
		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot rename into place: %s", s->dir, name, strerror(errno));
		goto fail;
	}
	if (f->durability != TCF_NEVER) {
		fsync(s->dirfd);
	}
	tc_crash_point("file_merge");
	for (i = from; i < to; i++) {
		drop_log(s, logs[i].number);
	}
	tcf_lmap_drop(s, logs[to].number);  /* the file it mapped is gone */
	tc_log("tagcache: %s: logs %u to %u merged into one (the log table holds %d)", s->dir,
	       logs[from].number, logs[to].number, TCF_MAXLOGS);
	logs[to].salt = salt;
	logs[to].size = out;
	logs[to].base = base;
	logs[to].end = TCF_LOGHDR;
	close(fd);
	return TC_OK;
oom:
	snprintf(err, TC_ERRBUF, "out of memory");
fail:
	close(fd);
	unlinkat(s->dirfd, tmp, 0);
	return rc;
}

/* After a replay, with the old index at hand: an id whose last record
 * (the one the old index points at) has a damaged key was deleted under
 * the damaged key, not under its own, and an older record of it may have
 * been replayed. The old slot's hash names the id: every entry of the new
 * index with that hash is collected in `out` (another id of the same
 * 32-bit hash at worst becomes a miss), to be removed with a tombstone
 * once the new index is in place, so that later rebuilds agree. */
static void find_damaged_keys(tcf_store *s, const tcf_idx *old, tcf_idx *nx, const found_log *logs,
                              size_t first, size_t n, tc_ids *out)
{
	const found_log *bynum[TCF_MAXLOGS];
	uint32_t i;
	size_t k;

	memset(bynum, 0, sizeof(bynum));
	for (k = first; k < n; k++) {
		bynum[logs[k].number % TCF_MAXLOGS] = &logs[k];
	}
	for (i = 1; i <= old->nslots; i++) {
		const tcf_slot *sl = &old->slots[i - 1];
		const found_log *L = bynum[sl->log % TCF_MAXLOGS];
		const unsigned char *b;
		uint32_t j, h = sl->hash, steps = 0;
		tcf_rec r;

		if (!sl->log || !L || L->number != sl->log || TCF_LOGENT_C(old->hdr, sl->log)->salt != L->salt
		    || sl->off < TCF_LOGHDR || sl->len < TCF_REC || sl->off > L->size || sl->len > L->size - sl->off
		    || !(b = tcf_lmap_get(s, L->number, L->salt, L->size))
		    || !tcf_rec_header_ok(b + sl->off, sl->len, L->salt, sl->off, &r) || (r.magic & 0xff) != TCF_PUT
		    || tcf_key_hash(b + sl->off + TCF_REC, r.klen) == h) {
			continue;  /* no record there that we read, or its key is whole */
		}
		j = nx->buckets[h & nx->bmask];
		while (j && j <= nx->nslots && ++steps <= nx->nslots) {
			uint32_t next = nx->slots[j - 1].next;

			if (nx->slots[j - 1].log && nx->slots[j - 1].hash == h && tc_ids_push(out, j) != 0) {
				return;
			}
			j = next;
		}
	}
}

int tcf_rebuild(tc_file *f, const tcf_caps *want, int empty, const char *why, char *err)
{
	tcf_store *s = f->s;
	tcf_hdr *old = s->ix.base ? s->ix.hdr : NULL;
	found_log *logs = NULL;
	size_t nlogs = 0, i, first = 0;
	uint32_t base = 1, maxnum = 0, number;
	uint64_t corrupt = 0, log_bytes = 0, salt = 0;
	tc_str *tg = NULL;
	uint32_t *trefs = NULL;
	tcf_caps c;
	tcf_idx nx;
	char tmp[TCF_PREFIXMAX + 64], idxn[TCF_PREFIXMAX + 16];
	int took = 0, rc = TC_ERR, attempt, fd = -1, ours_old, reuse = 0;
	tc_ids damaged = {0};

	memset(&nx, 0, sizeof(nx));
	tmp[0] = '\0';
	ours_old = old && memcmp(old->magic, TCF_IDX_MAGIC, 8) == 0 && old->abi == tcf_abi();
	if (s->flockfd < 0) {
		if (tcf_flock(s, err) != TC_OK) {
			return TC_ERR;
		}
		took = 1;
	}
	if (old && s->held && __atomic_load_n(&old->retired, __ATOMIC_ACQUIRE)) {
		snprintf(err, TC_ERRBUF, "%.3000s: the index was replaced meanwhile; try again", s->dir);
		goto out;
	}
	if (list_logs(f, &logs, &nlogs, err) != TC_OK) {
		goto out;
	}
	tg = malloc(TC_TAGS_MAX * sizeof(tc_str));
	trefs = malloc(TC_TAGS_MAX * sizeof(uint32_t));
	if (!tg || !trefs) {
		snprintf(err, TC_ERRBUF, "out of memory");
		goto out;
	}
	for (i = 0; i < nlogs; i++) {
		if (logs[i].base > base) {
			base = logs[i].base;
		}
		if (logs[i].obsolete && logs[i].obsolete + 1 > base && logs[i].obsolete < UINT32_MAX) {
			base = logs[i].obsolete + 1;
		}
		if (logs[i].damaged && logs[i].number + 1 > base) {
			base = logs[i].number + 1;
		}
		if (logs[i].number > maxnum) {
			maxnum = logs[i].number;
		}
	}
	if (ours_old && old->next_log > maxnum + 1 && old->next_log < (UINT32_C(1) << 31)) {
		maxnum = old->next_log - 1;
	}
	if (empty) {
		base = maxnum + 1;
	}
	/* Obsolete logs go, oldest first: a log whose mark (or damage) makes
	 * the older ones obsolete goes last, so that a rebuild that dies half
	 * way still sees it. */
	for (i = 0; i < nlogs && logs[i].number < base; i++) {
		drop_log(s, logs[i].number);
	}
	first = i;
	/* Every other log holds records that may be live: none is dropped.
	 * When the log table cannot hold them all (too many, or two sharing
	 * an entry), the oldest are merged into one first. */
	{
		size_t k = window_start(logs, first, nlogs);

		if (k > first) {
			if (merge_logs(f, logs, first, k, base, err) != TC_OK) {
				goto out;
			}
			first = k;
		}
	}

	if (want) {
		c = *want;
	} else if (ours_old && old->nslots >= 64 && old->ntags >= 64 && old->heap_units >= 1024) {
		c.nslots = old->nslots;
		c.ntags = old->ntags;
		c.heap_units = old->heap_units;
	} else {
		tcf_caps_default(&c);
	}
	if (empty) {
		tcf_caps_default(&c);
	}
	for (attempt = 0;; attempt++) {
		int r = TC_OK;

		if (attempt == 24) {
			snprintf(err, TC_ERRBUF, "%.3000s: the index would not fit the logs", s->dir);
			goto out;
		}
		if (create_tmp(f, &c, &nx, tmp, sizeof(tmp), err) != TC_OK) {
			tmp[0] = '\0';
			goto out;
		}
		nx.hdr->base = base;
		for (i = first; i < nlogs; i++) {
			tcf_logent *le = TCF_LOGENT(&nx, logs[i].number);

			le->number = logs[i].number;
			le->state = TCF_LOG_SEALED;
			le->salt = logs[i].salt;
			le->end = logs[i].size;
		}
		for (i = first; i < nlogs && r == TC_OK; i++) {
			r = replay(f, &nx, &logs[i], tg, trefs, &corrupt);
			TCF_LOGENT(&nx, logs[i].number)->end = logs[i].end;
			if (i == first) {
				tc_crash_point("file_rebuild");
			}
		}
		if (r == TC_OK) {
			break;
		}
		if (r == TC_ERR) {
			snprintf(err, TC_ERRBUF, "%.3000s: the logs could not be replayed", s->dir);
			goto out;
		}
		if (r == REPLAY_UNREADABLE) {
			/* log i - 1 could not be read: it and every older log go */
			size_t bad = i - 1, j;

			tc_log("tagcache: %s: log %u cannot be read; it and every older log are dropped", s->dir,
			       logs[bad].number);
			for (j = first; j <= bad; j++) {
				drop_log(s, logs[j].number);
			}
			base = logs[bad].number + 1;
			first = bad + 1;
			destroy_tmp(s, &nx, tmp);
			tmp[0] = '\0';
			corrupt = 0;
			continue;
		}
		/* out of room: grow what ran out and start again */
		if (nx.full == TCF_FULL_SLOTS && c.nslots <= (1u << 29)) {
			c.nslots *= 2;
		} else if (nx.full == TCF_FULL_TAGS && c.ntags <= (1u << 29)) {
			c.ntags *= 2;
		} else if (nx.full == TCF_FULL_HEAP && c.heap_units <= UINT32_MAX / 2) {
			c.heap_units *= 2;
		} else {
			snprintf(err, TC_ERRBUF, "%.3000s: the index cannot grow any more", s->dir);
			goto out;
		}
		destroy_tmp(s, &nx, tmp);
		tmp[0] = '\0';
		corrupt = 0;
	}

	if (ours_old && s->ix.base && s->ix.hdr == old && old->nslots == s->ix.nslots) {
		find_damaged_keys(s, &s->ix, &nx, logs, first, nlogs, &damaged);
	}

	/* The log the old index was appending to may end with the torn write
	 * of a process that died: cut it off, when the old index proves that
	 * nothing past the valid records was ever published (so no reader can
	 * be reading there). */
	if (ours_old && first < nlogs && logs[nlogs - 1].size > logs[nlogs - 1].end) {
		found_log *L = &logs[nlogs - 1];
		tcf_logent *ole = TCF_LOGENT_C(old, L->number);

		if (old->active_log == L->number && ole->number == L->number && ole->end <= L->end
		    && L->size > L->end) {
			char name[TCF_PREFIXMAX + 32];
			int tfd;

			tcf_log_name(name, sizeof(name), s->prefix, L->number);
			tfd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
			if (tfd >= 0) {
				if (ftruncate(tfd, (off_t)L->end) != 0) {
					tc_log("tagcache: %s/%s: cannot cut a torn tail: %s", s->dir, name, strerror(errno));
				} else {
					L->size = L->end;
				}
				close(tfd);
			}
		}
	}

	/* The active log: the newest one goes on being appended to when
	 * nothing lies past its last valid record (so a rebuild, however
	 * often, adds no log); a new one otherwise, and after clean('all'). */
	if (!empty && first < nlogs && logs[nlogs - 1].size == logs[nlogs - 1].end) {
		reuse = 1;
		number = logs[nlogs - 1].number;
		salt = logs[nlogs - 1].salt;
	} else {
		number = maxnum + 1;
		for (i = 0; i < 2 * TCF_MAXLOGS; i++, number++) {
			if (TCF_LOGENT(&nx, number)->number) {
				continue;
			}
			fd = tcf_log_create(s, f, number, base, &salt, err);
			if (fd != -2) {
				break;
			}
		}
		if (fd < 0) {
			if (fd == -2) {
				snprintf(err, TC_ERRBUF, "%.3000s: no free log name", s->dir);
			}
			goto out;
		}
	}
	{
		tcf_hdr *H = nx.hdr;
		tcf_logent *le = TCF_LOGENT(&nx, number);

		le->state = TCF_LOG_ACTIVE;
		if (!reuse) {
			le->number = number;
			le->salt = salt;
			le->end = TCF_LOGHDR;
			le->live = 0;
			le->nlive = 0;
		}
		H->active_log = number;
		H->next_log = (number > maxnum ? number : maxnum) + 1;
		H->first_log = first < nlogs ? logs[first].number : number;
		H->cursor = TCF_LOGHDR;
		for (i = first; i < nlogs; i++) {
			log_bytes += logs[i].end;
		}
		H->log_bytes = log_bytes + (reuse ? 0 : TCF_LOGHDR);
		H->last_sync = tc_now();
		if (ours_old) {
			H->writes = old->writes;
			H->copied = old->copied;
			H->evictions = old->evictions;
			H->expirations = old->expirations;
			H->lock_recoveries = old->lock_recoveries;
			H->rebuilds = old->rebuilds;
			H->corrupt = old->corrupt;
			H->compactions = old->compactions;
			H->pre_kept = old->pre_kept;
			H->pre_redone = old->pre_redone;
			memcpy(H->stripes, old->stripes, sizeof(H->stripes));
		}
		H->rebuilds++;
		H->corrupt += corrupt;
		pthread_mutex_lock(&H->lock);  /* new: ours at once */
		__atomic_store_n(&H->ready, TCF_READY, __ATOMIC_RELEASE);
	}
	snprintf(idxn, sizeof(idxn), "%s.idx", s->prefix);
	if (renameat(s->dirfd, tmp, s->dirfd, idxn) != 0) {
		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot rename into place: %s", s->dir, idxn, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		goto out;
	}
	tmp[0] = '\0';
	if (f->durability != TCF_NEVER) {
		fsync(s->dirfd);
	}
	if (old) {
		__atomic_store_n(&old->retired, 1, __ATOMIC_RELEASE);
		if (s->held) {
			pthread_mutex_unlock(&old->lock);
		}
	}
	tcf_install(s, &nx);
	nx.base = NULL;
	s->held = 1;
	if (s->wfd >= 0) {
		close(s->wfd);
	}
	/* a reused log is opened by the first append (tcf_writer_fd) */
	s->wfd = fd;
	s->wnum = fd >= 0 ? number : 0;
	s->wsalt = fd >= 0 ? salt : 0;
	if (damaged.n) {
		/* in the new index now, which this process holds */
		char terr[TC_ERRBUF];

		tcf_tombstones(f, damaged.v, damaged.n, 0, terr);
		tcf_remove_list(f, damaged.v, damaged.n, NULL);
		tc_log("tagcache: %s: %zu entries whose last record has a damaged key removed", s->dir, damaged.n);
	}
	if (why && nlogs > first) {
		tc_log("tagcache: %s: index rebuilt from %zu logs (%s): %u entries, %llu damaged records skipped",
		       s->dir, nlogs - first, why, s->ix.hdr->entries, (unsigned long long)corrupt);
	}
	rc = TC_OK;
out:
	if (tmp[0]) {
		destroy_tmp(s, &nx, tmp);
	}
	free(logs);
	free(tg);
	free(trefs);
	free(damaged.v);
	if (took) {
		tcf_funlock(s);
	}
	return rc;
}
