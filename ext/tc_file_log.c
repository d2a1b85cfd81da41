/*
 * tc_file_log.c: the log files and their records: building, sealing and
 * checking a record, naming and creating a log, and mapping a log
 * read-only in this process.
 *
 * A record is immutable once its bytes are published (the index points at
 * it and its log's `end` covers it): nothing is ever written over it, and
 * a log is only ever truncated past its published end (the torn tail of a
 * writer that died). So a reader that found a record through a consistent
 * view of the index can copy it at leisure, and its checksum tells whether
 * the disk (or someone) changed it.
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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tc_file_defs.h"
#include "tc_hash.h"

#define SEED_PAY  UINT64_C(0x7061796c6f6164)
#define SEED_LOG  UINT64_C(0x6c6f67686472)
#define K_OFF     UINT64_C(0x9e3779b97f4a7c15)
#define MAP_MIN   ((size_t)4 << 20)

uint64_t tcf_random64(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v)) {
		return v;
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		return tc_hash(&ts, sizeof(ts), (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&v);
	}
}

uint64_t tcf_rec_size(uint64_t klen, uint64_t tnlen, uint64_t vlen)
{
	return tcf_align8(TCF_REC + klen + tnlen + vlen);
}

static uint64_t pcheck(const unsigned char *kt, size_t ktlen, const unsigned char *v, size_t vlen)
{
	return tc_hash(v, vlen, tc_hash(kt, ktlen, SEED_PAY));
}

/* Writes the record into buf (tcf_rec_size() bytes); the header check is
 * left for tcf_rec_seal(), once the record's offset is known. */
size_t tcf_rec_build(unsigned char *buf, int type, tc_str key, const tc_str *tags, size_t ntags,
                     const unsigned char *value, size_t vlen, int64_t expire, int64_t mtime)
{
	tcf_rec r;
	unsigned char *w = buf + TCF_REC;
	size_t tnlen = (size_t)tc_names_len(tags, ntags), size;

	size = (size_t)tcf_rec_size(key.len, tnlen, vlen);
	memset(&r, 0, sizeof(r));
	r.magic = TCF_RECMAGIC | (uint32_t)type;
	r.klen = (uint16_t)key.len;
	r.ntags = (uint16_t)ntags;
	r.tnlen = (uint32_t)tnlen;
	r.vlen = (uint32_t)vlen;
	r.expire = expire;
	r.mtime = mtime;
	memcpy(w, key.p, key.len);
	w = tc_names_put(w + key.len, tags, ntags);
	if (vlen) {
		memcpy(w, value, vlen);
	}
	w += vlen;
	memset(w, 0, (size_t)(buf + size - w));
	r.pcheck = pcheck(buf + TCF_REC, key.len + tnlen, buf + TCF_REC + key.len + tnlen, vlen);
	memcpy(buf, &r, sizeof(r));
	return size;
}

/* A DEL record of key (klen bytes) into buf: the same bytes as
 * tcf_rec_build(buf, TCF_DEL, key, NULL, 0, NULL, 0, 0, mtime), without
 * the tag and value steps (a clean writes one per entry). */
size_t tcf_rec_build_del(unsigned char *buf, const unsigned char *key, size_t klen, int64_t mtime)
{
	tcf_rec r;
	size_t size = (size_t)tcf_rec_size(klen, 0, 0);

	memset(&r, 0, sizeof(r));
	r.magic = TCF_RECMAGIC | (uint32_t)TCF_DEL;
	r.klen = (uint16_t)klen;
	r.mtime = mtime;
	memcpy(buf + TCF_REC, key, klen);
	memset(buf + TCF_REC + klen, 0, size - TCF_REC - klen);
	r.pcheck = pcheck(buf + TCF_REC, klen, buf + TCF_REC + klen, 0);
	memcpy(buf, &r, sizeof(r));
	return size;
}

static uint64_t hcheck(const unsigned char *rec, uint64_t salt, uint64_t off)
{
	return tc_hash(rec, offsetof(tcf_rec, hcheck), salt ^ (off * K_OFF));
}

void tcf_rec_seal(unsigned char *rec, uint64_t salt, uint64_t off)
{
	uint64_t c = hcheck(rec, salt, off);

	memcpy(rec + offsetof(tcf_rec, hcheck), &c, 8);
}

/* The record size when p holds a whole, well-formed record header for this
 * log and offset, within avail bytes; 0 otherwise. Lengths are checked
 * before anything trusts them. */
uint64_t tcf_rec_header_ok(const unsigned char *p, uint64_t avail, uint64_t salt, uint64_t off,
                           tcf_rec *out)
{
	tcf_rec r;
	uint32_t type;
	uint64_t size;

	if (avail < TCF_REC) {
		return 0;
	}
	memcpy(&r, p, sizeof(r));
	type = r.magic & 0xff;
	if ((r.magic & ~UINT32_C(0xff)) != TCF_RECMAGIC || type < TCF_PUT || type > TCF_TOUCH
	    || r.klen == 0 || r.klen > TC_ID_MAX || r.ntags > TC_TAGS_MAX
	    || (uint64_t)r.tnlen > (uint64_t)r.ntags * (2 + TC_TAG_MAX) || r.tnlen < 3u * r.ntags) {
		return 0;
	}
	if (type != TCF_PUT && (r.ntags || r.tnlen || r.vlen)) {
		return 0;
	}
	size = tcf_rec_size(r.klen, r.tnlen, r.vlen);
	if (size > avail || size > UINT32_MAX || r.hcheck != hcheck(p, salt, off)) {
		return 0;
	}
	if (out) {
		*out = r;
	}
	return size;
}

/* The payload checksum, with the value read from `value` (the record's own
 * bytes, or a copy of them). */
uint64_t tcf_rec_pcheck(const unsigned char *p, const tcf_rec *r, const unsigned char *value)
{
	return pcheck(p + TCF_REC, (size_t)r->klen + r->tnlen, value, r->vlen);
}

/* The tag names parse exactly and the payload checksum holds. */
int tcf_rec_body_ok(const unsigned char *p, const tcf_rec *r)
{
	return tc_names_ok(p + TCF_REC + r->klen, r->tnlen, r->ntags)
	       && tcf_rec_pcheck(p, r, p + TCF_REC + r->klen + r->tnlen) == r->pcheck;
}

/* ------------------------------------------------------------ log files */

void tcf_log_name(char *buf, size_t n, const char *prefix, uint32_t number)
{
	snprintf(buf, n, "%s.%08x.log", prefix, number);
}

/* 1 when name is "<prefix>.<8 lower-case hex>.log". */
int tcf_log_parse_name(const char *name, const char *prefix, uint32_t *number)
{
	size_t pl = strlen(prefix), i;
	uint32_t v = 0;

	if (strncmp(name, prefix, pl) != 0 || name[pl] != '.') {
		return 0;
	}
	name += pl + 1;
	for (i = 0; i < 8; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9') {
			v = (v << 4) | (uint32_t)(c - '0');
		} else if (c >= 'a' && c <= 'f') {
			v = (v << 4) | (uint32_t)(c - 'a' + 10);
		} else {
			return 0;
		}
	}
	if (strcmp(name + 8, ".log") != 0 || v == 0) {
		return 0;
	}
	*number = v;
	return 1;
}

static uint64_t loghdr_check(const tcf_loghdr *h)
{
	return tc_hash(h, offsetof(tcf_loghdr, check), SEED_LOG);
}

int tcf_log_header_ok(const tcf_loghdr *h, uint32_t number)
{
	return memcmp(h->magic, TCF_LOG_MAGIC, 8) == 0 && h->layout == TCF_LAYOUT
	       && h->number == number && h->base <= number && h->check == loghdr_check(h);
}

/* A header whose check fails by one flipped bit (in the checked bytes or
 * in the check itself) is put right in h: 1 then, 0 when it cannot be
 * (more damage than one bit: nothing in it can be trusted). A 64-bit check
 * makes a wrong correction about as likely as a forged header. */
/* The header is as it was written (whatever its layout or number). */
int tcf_log_header_intact(const tcf_loghdr *h)
{
	return h->check == loghdr_check(h);
}

int tcf_log_header_repair(tcf_loghdr *h, uint32_t number)
{
	unsigned char *p = (unsigned char *)h;
	uint64_t c = loghdr_check(h), d = c ^ h->check;
	size_t i;
	int b;

	if (tcf_log_header_ok(h, number)) {
		return 1;
	}
	if (d && (d & (d - 1)) == 0) {
		h->check = c;
		if (tcf_log_header_ok(h, number)) {
			return 1;
		}
		h->check ^= d;
	}
	for (i = 0; i < offsetof(tcf_loghdr, check); i++) {
		for (b = 0; b < 8; b++) {
			p[i] ^= (unsigned char)(1u << b);
			if (tcf_log_header_ok(h, number)) {
				return 1;
			}
			p[i] ^= (unsigned char)(1u << b);
		}
	}
	return 0;
}

/* Writes a header for log `number` with this salt and base over the
 * damaged one of fd (the records keep their checks: they are seeded with
 * the salt). */
int tcf_log_header_rewrite(int fd, uint32_t number, uint32_t base, uint64_t salt, int64_t created)
{
	tcf_loghdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TCF_LOG_MAGIC, 8);
	h.layout = TCF_LAYOUT;
	h.number = number;
	h.base = base;
	h.salt = salt;
	h.created = created;
	h.check = loghdr_check(&h);
	/* the obsolete mark after the check stays as it is */
	return pwrite(fd, &h, offsetof(tcf_loghdr, obsolete), 0) == (ssize_t)offsetof(tcf_loghdr, obsolete)
	       && fdatasync(fd) == 0 ? 0 : -1;
}

uint32_t tcf_log_obsolete(const tcf_loghdr *h)
{
	return h->obsolete == ~h->obsolete_inv ? h->obsolete : 0;
}

/* Creates log `number`: the fd open for appending, -2 if a file of that
 * name exists already (never opened, never followed: the caller picks
 * another number), -1 on error. */
int tcf_log_create(tcf_store *s, const tc_file *f, uint32_t number, uint32_t base, uint64_t *salt,
                   char *err)
{
	char name[TCF_PREFIXMAX + 32];

	tcf_log_name(name, sizeof(name), s->prefix, number);
	return tcf_log_create_as(s, f, name, number, base, salt, err);
}

/* The same under another name (a log being merged, renamed into place
 * later). */
int tcf_log_create_as(tcf_store *s, const tc_file *f, const char *name, uint32_t number, uint32_t base,
                      uint64_t *salt, char *err)
{
	tcf_loghdr h;
	int fd;
	ssize_t w;

	fd = openat(s->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->file_mode & 0777);
	if (fd < 0) {
		if (errno == EEXIST) {
			return -2;
		}
		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot create: %s", s->dir, name, strerror(errno));
		return -1;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TCF_LOG_MAGIC, 8);
	h.layout = TCF_LAYOUT;
	h.number = number;
	h.base = base;
	h.salt = tcf_random64();
	h.created = tc_now();
	h.check = loghdr_check(&h);
	/* obsolete 0, obsolete_inv 0: not complements, so no mark */
	errno = 0;
	if (fchmod(fd, (mode_t)(f->file_mode & 0777)) != 0
	    || (w = pwrite(fd, &h, sizeof(h), 0)) != (ssize_t)sizeof(h)
	    || (f->durability != TCF_NEVER && (fdatasync(fd) != 0 || fsync(s->dirfd) != 0))) {
		int e = errno ? errno : ENOSPC;

		snprintf(err, TC_ERRBUF, "%.3000s/%s: cannot write the log header: %s", s->dir, name, strerror(e));
		close(fd);
		unlinkat(s->dirfd, name, 0);
		return -1;
	}
	*salt = h.salt;
	return fd;
}

/* Marks logs up to `number` obsolete for a future rebuild: written in place
 * into the header of log `number`, which needs no new disk block. */
int tcf_log_mark_obsolete(tcf_store *s, uint32_t number)
{
	char name[TCF_PREFIXMAX + 32];
	uint32_t v[2] = {number, ~number};
	int fd, own = 0, rc;

	if (s->wfd >= 0 && s->wnum == number) {
		fd = s->wfd;
	} else {
		tcf_log_name(name, sizeof(name), s->prefix, number);
		fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			return -1;
		}
		own = 1;
	}
	rc = pwrite(fd, v, sizeof(v), offsetof(tcf_loghdr, obsolete)) == (ssize_t)sizeof(v) ? 0 : -1;
	if (own) {
		close(fd);
	}
	return rc;
}

/* ------------------------------------------------------------- mappings */

void tcf_lmap_drop(tcf_store *s, uint32_t number)
{
	tcf_lmap *m = &s->logs[number % TCF_MAXLOGS];

	if (m->base && m->number == number) {
		munmap(m->base, m->len);
		memset(m, 0, sizeof(*m));
	}
}

/* Unmaps the logs the index no longer lists: an unlinked log's disk space
 * is only given back once no process maps it. Runs when the index's
 * log_gen moved (a log was unlinked), at the start of an operation, never
 * while a pointer into a mapping is held. */
void tcf_lmap_prune(tcf_store *s)
{
	uint32_t gen = __atomic_load_n(&s->ix.hdr->log_gen, __ATOMIC_ACQUIRE), i;

	if (gen == s->log_gen) {
		return;
	}
	for (i = 0; i < TCF_MAXLOGS; i++) {
		tcf_lmap *m = &s->logs[i];
		tcf_logent *le;

		if (!m->base) {
			continue;
		}
		le = TCF_LOGENT(&s->ix, m->number);
		if (__atomic_load_n(&le->number, __ATOMIC_ACQUIRE) != m->number || le->salt != m->salt) {
			munmap(m->base, m->len);
			memset(m, 0, sizeof(*m));
		}
	}
	s->log_gen = gen;
}

/* This process's read-only mapping of log `number` covering at least
 * `need` bytes, made or remade as needed (a system call only then). The
 * log's header must carry `salt` (0: any, for a rebuild that reads it
 * first). NULL if the log cannot be mapped. */
unsigned char *tcf_lmap_get(tcf_store *s, uint32_t number, uint64_t salt, uint64_t need)
{
	tcf_lmap *m = &s->logs[number % TCF_MAXLOGS];
	char name[TCF_PREFIXMAX + 32];
	struct stat st;
	tcf_loghdr h;
	size_t len;
	void *p;
	int fd;
	char ebuf[TC_ERRBUF];

	if (m->base && m->number == number && (salt == 0 || m->salt == salt) && m->len >= need) {
		return m->base;
	}
	if (m->base) {
		munmap(m->base, m->len);
		memset(m, 0, sizeof(*m));
	}
	if (need > ((uint64_t)1 << 40)) {
		return NULL;
	}
	tcf_log_name(name, sizeof(name), s->prefix, number);
	fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	/* A file shorter than what the index says was published has been cut
	 * (by hand, or a disk): touching the missing pages would be a SIGBUS.
	 * Refused; the caller treats the log as unreadable and the index gets
	 * rebuilt from what is left. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
	    || tc_check_owner(&st, 0660, name, ebuf) != TC_OK  /* ours or our group's */
	    || (st.st_mode & 0002) || need > (uint64_t)st.st_size
	    || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)
	    || !tcf_log_header_ok(&h, number) || (salt && h.salt != salt)) {
		close(fd);
		return NULL;
	}
	len = MAP_MIN;
	while (len < need || len < (size_t)st.st_size) {
		len <<= 1;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		return NULL;
	}
	m->number = number;
	m->salt = h.salt;
	m->base = p;
	m->len = len;
	return m->base;
}
