/*
 * tc_file_compact.c: where bytes go in the logs, and how they come back.
 *
 * Appending: every change is one pwrite() at the active log's end (a save
 * one record, a clean by tag one buffer of tombstones); only after it
 * succeeded does the index publish the new end and point at the new
 * bytes. A failed or short write is cut off again (ftruncate), so a full
 * disk leaves the log exactly as it was.
 *
 * Rotation: past seg_size (max_size / 8) the active log is sealed and a new
 * one begins. Logs are numbered; the index's log table has 64 entries
 * (number % 64).
 *
 * Compaction is FIFO, in small steps: the oldest log is read from a cursor,
 * and each record the index still points at is copied to the end of the
 * active log (with its current expiry) in one append per step, then the
 * index is pointed at the copies. A log fully passed is unlinked. Steps run
 * inside saves once dead bytes exceed half the live bytes (so the logs stay
 * under ~1.5x the live data), a few hundred KB at a time, so no writer
 * waits long; readers never wait at all (they read the old copy until the
 * index points at the new one, and an unlinked log stays readable through
 * the mappings that exist). clean('old') compacts everything, in steps that
 * release the lock in between (tc_file.c, which takes the lock).
 *
 * Eviction (the live bytes would pass max_size): expired entries first,
 * then the whole oldest log, FIFO. A full log table alone evicts nothing:
 * the oldest log is compacted instead (eviction only when that cannot
 * run, on a full disk). Evicting a whole log needs no tombstone:
 * its records go with it, and no older log can hold a record of its ids.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tc_file_defs.h"

#define BATCH 32  /* removals per odd window, so readers get through */

void tcf_set_end(tcf_idx *x, uint64_t end)
{
	tcf_logent *le = TCF_LOGENT(x, x->hdr->active_log);

	x->hdr->log_bytes += end - le->end;
	__atomic_store_n(&le->end, end, __ATOMIC_RELEASE);
}

static int table_room(tcf_idx *x)
{
	return TCF_LOGENT(x, x->hdr->next_log)->number == 0;
}

/* Seals the active log and starts the next one. */
int tcf_rotate(tc_file *f, char *err)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	tcf_hdr *H = x->hdr;
	uint64_t salt = 0;
	uint32_t number = H->next_log, i;
	int fd = -2;

	if (tcf_flock(s, err) != TC_OK) {
		return TC_ERR;
	}
	if (__atomic_load_n(&H->retired, __ATOMIC_ACQUIRE)) {
		/* another process replaced this index while we waited (it found
		 * the file damaged or gone): nothing more goes through it */
		tcf_funlock(s);
		snprintf(err, TC_ERRBUF, "%.3000s: the index was replaced meanwhile; try again", s->dir);
		return TC_ERR;
	}
	for (i = 0; i < TCF_MAXLOGS && fd == -2; i++, number++) {
		if (TCF_LOGENT(x, number)->number) {
			break;
		}
		fd = tcf_log_create(s, f, number, H->base, &salt, err);
	}
	tcf_funlock(s);
	if (fd < 0) {
		if (fd == -2) {
			snprintf(err, TC_ERRBUF, "%.3000s: no free entry in the log table", s->dir);
		}
		return TC_ERR;
	}
	number--;
	if (s->wfd >= 0 && f->durability != TCF_NEVER) {
		fdatasync(s->wfd);
	}
	tcf_dirty(s);
	tcf_seq_begin(H);
	{
		tcf_logent *le = TCF_LOGENT(x, number);

		TCF_LOGENT(x, H->active_log)->state = TCF_LOG_SEALED;
		le->salt = salt;
		le->end = TCF_LOGHDR;
		le->live = 0;
		le->nlive = 0;
		le->state = TCF_LOG_ACTIVE;
		__atomic_store_n(&le->number, number, __ATOMIC_RELEASE);
		H->active_log = number;
		H->next_log = number + 1;
		H->log_bytes += TCF_LOGHDR;
		H->must_rotate = 0;
	}
	tcf_seq_end(H);
	if (s->wfd >= 0) {
		close(s->wfd);
	}
	s->wfd = fd;
	s->wnum = number;
	s->wsalt = salt;
	return TC_OK;
}

/* Where the next len bytes go: rotates first when the active log is full
 * (and the log table has room) or obsolete. */
int tcf_prepare_append(tc_file *f, uint64_t len, uint64_t *off, uint64_t *salt, char *err)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	tcf_hdr *H = x->hdr;
	tcf_logent *le = TCF_LOGENT(x, H->active_log);

	if (le->number != H->active_log) {
		x->tainted = 1;
		snprintf(err, TC_ERRBUF, "%.3000s: the index has no active log", s->dir);
		return TC_ERR;
	}
	if (H->must_rotate || (le->end > TCF_LOGHDR && le->end + len > f->seg_size && table_room(x))) {
		if (tcf_rotate(f, err) != TC_OK) {
			return TC_ERR;
		}
		le = TCF_LOGENT(x, H->active_log);
	}
	if (tcf_writer_fd(f, err) != TC_OK) {
		return TC_ERR;
	}
	*off = le->end;
	*salt = le->salt;
	return TC_OK;
}

/* Writes len bytes at off in the active log (its end), then syncs as the
 * durability option says. On failure the log is cut back to off. */
int tcf_append(tc_file *f, const unsigned char *buf, size_t len, uint64_t off, char *err)
{
	static int torn = -1;
	tcf_store *s = f->s;
	size_t half = 0;

	if (torn < 0) {
		const char *p = getenv("TAGCACHE_TEST_CRASH");

		torn = p && strcmp(p, "file_write_torn") == 0;
	}
	if (torn && len > 64) {
		/* test hook: half a record on disk when the process dies */
		half = len / 2;
		if (tcf_pwrite_all(s->wfd, buf, half, off) == 0) {
			tc_crash_point("file_write_torn");
		}
	}
	if (tcf_pwrite_all(s->wfd, buf + half, len - half, off + half) != 0 || tcf_sync(f, 0) != 0) {
		int e = errno;

		if (ftruncate(s->wfd, (off_t)off) != 0) {
			s->ix.tainted = 1;
		}
		snprintf(err, TC_ERRBUF, "%.3000s: cannot append %zu bytes to log %u: %s", s->dir, len, s->wnum,
		         strerror(e));
		return TC_ERR;
	}
	return TC_OK;
}

/* ----------------------------------------------------------- removals */

void tcf_remove_list(tc_file *f, const uint32_t *slots, size_t n, const char *crash)
{
	tcf_remove_list_tag(f, slots, n, crash, 0);
}

/* skip (not 0): every entry in the list carries tag skip and they are all
 * of its entries (a clean of that one tag): their links to it are left
 * alone (no swap-with-last in an array about to go) and the tag is dropped
 * after the last one. */
void tcf_remove_list_tag(tc_file *f, const uint32_t *slots, size_t n, const char *crash, uint32_t skip)
{
	tcf_idx *x = &f->s->ix;
	size_t i;
	uint32_t skipped = 0;

	if (!n) {
		return;
	}
	tcf_dirty(f->s);
	for (i = 0; i < n; i++) {
		if (i % BATCH == 0) {
			if (i) {
				tcf_seq_end(x->hdr);
			}
			tcf_seq_begin(x->hdr);
		}
		if (x->tainted) {
			break;
		}
		/* the next entries' slot and links, while this one goes */
		if (i + 2 < n) {
			tcf_remove_prefetch(x, slots[i + 2], 0);
		}
		if (i + 1 < n) {
			tcf_remove_prefetch(x, slots[i + 1], 1);
		}
		if (tcf_slot_ok(x, slots[i])) {
			skipped += tcf_remove_skip(x, slots[i], skip);
		}
		if (i == 0 && crash) {
			tc_crash_point(crash);
		}
	}
	if (skip && !x->tainted) {
		tcf_tag_drop_cleaned(x, skip, skipped);
	}
	tcf_seq_end(x->hdr);
}

/* Appends a DEL record for each slot's id, in one write, so that a future
 * rebuild does not bring them back. When it cannot (a full disk) and the
 * removal must happen anyway (`must`: the user asked for it), the logs up
 * to the active one are marked obsolete in place: a rebuild then drops
 * them instead of replaying them, and the next append starts a new log. */
static int lost(tc_file *f, int must, char *err);

int tcf_tombstones(tc_file *f, const uint32_t *slots, size_t n, int must, char *err)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	uint64_t total = 0;
	unsigned char *buf = NULL;
	size_t cap = 0, i;
	int64_t now = tc_now();

	/* One pass over the records: each DEL is built from the key of the
	 * record its header check just passed (a record whose header is
	 * damaged gets no tombstone: its key cannot be trusted, and a rebuild
	 * skips it anyway). Only the seal, which needs the offset, waits for
	 * tcf_prepare_append(); it reads nothing but this buffer. */
	for (i = 0; i < n; i++) {
		const unsigned char *rec;
		tcf_rec r;
		size_t len;

		/* (its links do not matter here: tcf_slot_record checks the
		 * rest, a free slot included) */
		if (slots[i] < 1 || slots[i] > x->nslots || !(rec = tcf_slot_record(s, x, slots[i], &r))) {
			continue;
		}
		len = (size_t)tcf_rec_size(r.klen, 0, 0);
		if (total + len > cap) {
			/* room for the rest at this size, at least twice as much */
			size_t want = (size_t)total + len * (n - i), ncap = cap ? cap * 2 : want;
			unsigned char *nb;

			if (ncap < want) {
				ncap = want;
			}
			if (!(nb = realloc(buf, ncap))) {
				free(buf);
				snprintf(err, TC_ERRBUF, "out of memory");
				goto failed;
			}
			buf = nb;
			cap = ncap;
		}
		total += tcf_rec_build_del(buf + total, rec + TCF_REC, r.klen, now);
	}
	{
		int rc = tcf_tombstones_built(f, buf, total, must, err);

		free(buf);
		return rc;
	}
failed:
	return lost(f, must, err);
}

/* The DEL records in buf (built, not sealed) appended in one write. */
int tcf_tombstones_built(tc_file *f, unsigned char *buf, uint64_t total, int must, char *err)
{
	tcf_idx *x = &f->s->ix;
	uint64_t off, salt, pos;

	if (!total) {
		return TC_OK;
	}
	if (tcf_prepare_append(f, total, &off, &salt, err) != TC_OK) {
		return lost(f, must, err);
	}
	for (pos = 0; pos < total; ) {
		uint16_t klen;

		memcpy(&klen, buf + pos + offsetof(tcf_rec, klen), sizeof(klen));
		tcf_rec_seal(buf + pos, salt, off + pos);
		pos += tcf_rec_size(klen, 0, 0);
	}
	if (tcf_append(f, buf, (size_t)total, off, err) != TC_OK) {
		return lost(f, must, err);
	}
	tcf_seq_begin(x->hdr);
	tcf_set_end(x, off + total);
	tcf_seq_end(x->hdr);
	return TC_OK;
}

/* A tombstone that could not be written: when the removal must happen
 * anyway, the logs up to the active one are marked obsolete. */
static int lost(tc_file *f, int must, char *err)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;

	if (must) {
		uint32_t a = x->hdr->active_log;

		if (tcf_log_mark_obsolete(s, a) != 0) {
			tc_log("tagcache: %s: a removal could not be logged and log %u could not be marked: "
			       "a removed entry may come back if the index is rebuilt", s->dir, a);
		} else if (!s->warned) {
			s->warned = 1;
			tc_log("tagcache: %s: a removal could not be logged (%s); logs up to %u will not be "
			       "replayed by a rebuild", s->dir, err, a);
		}
		x->hdr->must_rotate = 1;
	}
	return TC_ERR;
}

/* Removes every expired entry (tombstones first), and sets min_expire. */
int tcf_sweep_expired(tc_file *f, int64_t now, char *err)
{
	tcf_idx *x = &f->s->ix;
	uint32_t i;
	tc_ids ids = {0};
	int64_t next = TC_EXPIRE_NEVER;
	int rc = TC_OK;

	if (tc_ids_grow(&ids, 256) != 0) {
		return TC_ERR;
	}
	for (i = 1; i <= x->nslots; i++) {
		tcf_slot *sl = &x->slots[i - 1];

		if (!sl->log) {
			continue;
		}
		if (sl->expire < now) {
			if (tc_ids_push(&ids, i) != 0) {
				rc = TC_ERR;
				break;
			}
		} else if (sl->expire < next) {
			next = sl->expire;
		}
	}
	if (rc == TC_OK && ids.n) {
		char ebuf[TC_ERRBUF];

		rc = tcf_tombstones(f, ids.v, ids.n, 0, err ? err : ebuf);
		if (rc == TC_OK) {
			tcf_remove_list(f, ids.v, ids.n, NULL);
			x->hdr->expirations += ids.n;
		}
	}
	if (rc == TC_OK) {
		x->hdr->min_expire = next;
	}
	free(ids.v);
	return rc;
}

/* ---------------------------------------------------------- the oldest */

/* Removes from the index every entry whose record is in log v. */
static void remove_all_in(tc_file *f, uint32_t v, int evicting)
{
	tcf_idx *x = &f->s->ix;
	uint32_t i, n = 0;

	if (!TCF_LOGENT(x, v)->nlive) {
		return;
	}
	tcf_dirty(f->s);
	tcf_seq_begin(x->hdr);
	for (i = 1; i <= x->nslots; i++) {
		if (x->slots[i - 1].log == v && tcf_slot_ok(x, i)) {
			tcf_remove(x, i);
			if (++n % BATCH == 0) {
				tcf_seq_end(x->hdr);
				tcf_seq_begin(x->hdr);
			}
		}
	}
	tcf_seq_end(x->hdr);
	if (evicting) {
		x->hdr->evictions += n;
	}
}

/* Log v (the oldest) holds nothing the index needs any more: forget it,
 * move first_log on, unlink it. */
static void retire_log(tc_file *f, uint32_t v)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	tcf_hdr *H = x->hdr;
	tcf_logent *le = TCF_LOGENT(x, v);
	uint32_t next = H->active_log, i;
	char name[TCF_PREFIXMAX + 32];

	for (i = 0; i < TCF_MAXLOGS; i++) {
		uint32_t n = H->logs[i].number;

		if (n > v && n < next) {
			next = n;
		}
	}
	if (f->durability != TCF_NEVER) {
		tcf_sync(f, 1);  /* the copies are on disk before the originals go */
	}
	tcf_dirty(s);
	tcf_seq_begin(H);
	H->log_bytes -= le->end <= H->log_bytes ? le->end : H->log_bytes;
	__atomic_store_n(&le->number, 0, __ATOMIC_RELEASE);
	le->state = TCF_LOG_FREE;
	le->end = 0;
	le->live = 0;
	le->nlive = 0;
	H->first_log = next;
	H->cursor = TCF_LOGHDR;
	H->log_gen++;
	tcf_seq_end(H);
	tcf_lmap_drop(s, v);
	tcf_log_name(name, sizeof(name), s->prefix, v);
	unlinkat(s->dirfd, name, 0);
}

/* Evicts the oldest log whole. 0 when there is nothing to evict. */
static int drop_oldest(tc_file *f)
{
	tcf_hdr *H = f->s->ix.hdr;
	char err[TC_ERRBUF];

	if (H->first_log == H->active_log) {
		if (!TCF_LOGENT(&f->s->ix, H->active_log)->nlive || tcf_rotate(f, err) != TC_OK) {
			return 0;
		}
	}
	remove_all_in(f, H->first_log, 1);
	retire_log(f, H->first_log);
	return 1;
}

/* Room for a record of `need` bytes: the live bytes stay within max_size
 * and the log table keeps an entry free for the next log. */
int tcf_make_room(tc_file *f, uint64_t need, int64_t now, char *err)
{
	tcf_idx *x = &f->s->ix;
	tcf_hdr *H = x->hdr;
	int i, swept = 0;

	for (i = 0; i < 4 * TCF_MAXLOGS && !x->tainted; i++) {
		if (H->live_bytes + need <= f->max_size && (table_room(x) || H->first_log == H->active_log)) {
			return TC_OK;
		}
		if (!swept && H->min_expire < now && H->entries && H->live_bytes + need > f->max_size) {
			uint64_t before = H->live_bytes;

			swept = 1;
			if (tcf_sweep_expired(f, now, NULL) == TC_OK && H->live_bytes < before) {
				continue;
			}
		}
		if (H->live_bytes + need <= f->max_size && H->first_log != H->active_log) {
			/* Only the log table is full: the oldest log is compacted
			 * (its live records copied forward), never evicted for that;
			 * eviction is for a compaction that cannot run (a full disk). */
			uint32_t v = H->first_log;
			int k;

			for (k = 0; k < 1 << 16 && H->first_log == v && !x->tainted; k++) {
				if (tcf_compact_step(f, 1024 * 1024, now) <= 0) {
					break;
				}
			}
			if (H->first_log != v) {
				continue;
			}
		}
		if (!drop_oldest(f)) {
			break;
		}
	}
	if (H->live_bytes + need <= f->max_size) {
		return TC_OK;
	}
	snprintf(err, TC_ERRBUF, "%.3000s: no room for a record of %llu bytes (max_size %llu)", f->s->dir,
	         (unsigned long long)need, (unsigned long long)f->max_size);
	return TC_ERR;
}

/* ---------------------------------------------------------- compaction */

typedef struct {
	uint32_t slot;
	uint32_t len;
	uint64_t off;
} move;

/* One step: up to `budget` bytes of the oldest log. 1 when it made
 * progress, 0 when there is nothing to compact, -1 on error. */
int tcf_compact_step(tc_file *f, uint64_t budget, int64_t now)
{
	tcf_store *s = f->s;
	tcf_idx *x = &s->ix;
	tcf_hdr *H = x->hdr;
	uint32_t v = H->first_log;
	tcf_logent *le = TCF_LOGENT(x, v);
	const unsigned char *base;
	move *moves = NULL;
	tc_ids drops = {0};
	size_t nm = 0, cm = 0, i;
	uint64_t off, scanned = 0, total = 0, dst = 0, salt = 0;
	unsigned char *buf = NULL;
	char err[TC_ERRBUF];
	int rc = -1;

	if (v == H->active_log) {
		return 0;
	}
	if (le->number != v) {
		x->tainted = 1;
		return -1;
	}
	base = tcf_lmap_get(s, v, le->salt, le->end);
	if (!base) {
		/* unreadable: what it held is lost (a miss), the rest goes on */
		remove_all_in(f, v, 1);
		retire_log(f, v);
		return 1;
	}
	off = H->cursor < TCF_LOGHDR ? TCF_LOGHDR : H->cursor;
	while (off < le->end && (scanned < budget || nm + drops.n == 0)) {
		tcf_rec r;
		uint64_t n = tcf_rec_header_ok(base + off, le->end - off, le->salt, off, &r);
		uint32_t slot;

		if (!n) {
			off += 8;
			scanned += 8;
			continue;
		}
		if ((r.magic & 0xff) == TCF_PUT) {
			slot = tcf_find(s, x, base + off + TCF_REC, r.klen, tcf_key_hash(base + off + TCF_REC, r.klen));
			if (x->tainted) {
				goto out;
			}
			if (slot && x->slots[slot - 1].log == v && x->slots[slot - 1].off == off) {
				if (x->slots[slot - 1].expire < now) {
					if (tc_ids_push(&drops, slot) != 0) {
						goto out;
					}
				} else {
					if (nm == cm) {
						move *np = realloc(moves, (cm = cm ? cm * 2 : 64) * sizeof(move));

						if (!np) {
							goto out;
						}
						moves = np;
					}
					moves[nm].slot = slot;
					moves[nm].len = (uint32_t)n;
					moves[nm].off = off;
					nm++;
					total += n;
				}
			}
		}
		off += n;
		scanned += n;
	}
	if (nm) {
		if (H->must_rotate || !(buf = malloc(total))
		    || tcf_prepare_append(f, total, &dst, &salt, err) != TC_OK) {
			goto out;
		}
		{
			uint64_t pos = 0;

			for (i = 0; i < nm; i++) {
				tcf_slot *sl = &x->slots[moves[i].slot - 1];

				memcpy(buf + pos, base + moves[i].off, moves[i].len);
				/* the copy carries the entry's current expiry (touch) */
				memcpy(buf + pos + offsetof(tcf_rec, expire), &sl->expire, 8);
				memcpy(buf + pos + offsetof(tcf_rec, mtime), &sl->mtime, 8);
				tcf_rec_seal(buf + pos, salt, dst + pos);
				pos += moves[i].len;
			}
		}
		if (tcf_append(f, buf, (size_t)total, dst, err) != TC_OK) {
			goto out;
		}
		tc_crash_point("file_compact");
	}
	tcf_dirty(s);
	tcf_seq_begin(H);
	if (nm) {
		uint64_t pos = 0;

		tcf_set_end(x, dst + total);
		for (i = 0; i < nm; i++) {
			tcf_relocate(x, moves[i].slot, H->active_log, dst + pos, moves[i].len);
			pos += moves[i].len;
			if (i % 64 == 63) {
				tcf_seq_end(H);
				tcf_seq_begin(H);
			}
		}
	}
	tcf_seq_end(H);
	tcf_remove_list(f, drops.v, drops.n, NULL);
	H->expirations += drops.n;
	H->copied += nm;
	H->cursor = off;
	if (off >= le->end) {
		remove_all_in(f, v, 0);  /* records the scan could not read */
		retire_log(f, v);
		H->compactions++;
	}
	rc = 1;
out:
	free(buf);
	free(moves);
	free(drops.v);
	return rc;
}

/* Inside a save: one step when the dead bytes pass half the live bytes
 * (and a log's worth). */
void tcf_maybe_compact(tc_file *f, uint64_t need, int64_t now)
{
	tcf_hdr *H = f->s->ix.hdr;
	uint64_t dead = H->log_bytes > H->live_bytes ? H->log_bytes - H->live_bytes : 0;
	uint64_t budget = need * 4 > 256 * 1024 ? need * 4 : 256 * 1024;

	if (H->first_log == H->active_log || dead < f->seg_size || dead < H->live_bytes / 2
	    || f->s->ix.tainted) {
		return;
	}
	tcf_compact_step(f, budget, now);
}
