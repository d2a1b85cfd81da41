/*
 * fuzz_shm.c: libFuzzer harness for everything the shared-memory engine
 * reads from a segment file: the header, the slot table, the hash and tag
 * buckets, heap block headers, entries, tag records and member arrays.
 *
 * An input is
 *   byte 0      which template image (formatted and filled at start-up);
 *               bit 7: "live" damage, see below
 *   byte 1      number of patches (0..8)
 *   patches     region (1 byte), offset (2 bytes), length (1 byte, 1..8),
 *               then that many bytes written at the chosen place
 *   the rest    operations, 4 bytes each: opcode, id, arg, tags
 * The patched image becomes a segment file that nobody has mapped; the
 * engine opens it (its first attach walks the segment and repairs what it
 * must), runs the operations, and must then pass verify() and list no id
 * twice. Values read back for ids saved during the run must be exactly the
 * last value saved (older ones are not checked: a patch can forge a valid
 * checksum, and then the engine rightly serves the bytes). After
 * each input every mapping is forgotten (seg_hooks.c), so the next open maps
 * and checks afresh, as a new process would.
 *
 * Live damage (bit 7 of byte 0): the image is opened intact and the
 * patches are written into the mapping afterwards, as if another process
 * scribbled on it; then the operations are all load()/test(), whose
 * lock-free reader promises to bounds-check whatever it follows, falling
 * back to the lock (which repairs what it notices); then the segment is
 * opened again as by a new process, whose first attach must leave it
 * whole. With TC_FUZZ_LIVE_WRITES=1 every operation is allowed after live
 * damage: writers defend only some paths (an exploration, not a gate).
 *
 * The pthread mutex inside the header is never patched: it is glibc's
 * opaque state, and a lock word naming a live-looking owner can only end
 * in a lock timeout, which is not what this harness looks for.
 *
 * TC_FUZZ_DIR: where segment files go (default: /dev/shm), in fuzz-shm.<pid>
 * TC_FUZZ_WRITE_SEEDS=dir: write a seed corpus there and exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../../ext/tc_backend.h"
#include "../../ext/tc_shm.h"
#include "../../ext/tc_util.h"
#include "seg_hooks.h"
#include "testlib.h"
#define FZ_NAME "fuzz_shm"
#include "fuzzlib.h"

#define SEG_SIZE (64 * 1024)
#define NVAR 3
#define FIDS 24
#define FTAGS 8
#define MAXOPS 64
#define MAXLEN 6000

typedef struct {
	unsigned char *img;
	size_t size;
	tc_shm_hdr h;
	uint32_t nblocks, blocks[SEG_SIZE / TC_UNIT];
	uint32_t nentries, entries[SEG_SIZE / TC_UNIT];
} image;

static const tc_backend *B = &tc_backend_shm;
static image imgs[NVAR];
static char dir[256], seg[300];
static char id_buf[FIDS][8], tag_buf[FTAGS][8];
static tc_str ids[FIDS], tags[FTAGS];
static int made_dir;
static int live_writes;  /* TC_FUZZ_LIVE_WRITES=1: see the top of the file */
static int live_damage;  /* this input damages the segment while mapped */

/* 1 when the file at path starts with the segment magic: a file that
 * does not is not ours, and its open must be refused (never formatted
 * over: issue 11 item 7). */
static int has_magic(const char *path)
{
	char m[8];
	int fd = open(path, O_RDONLY), ok;

	if (fd < 0) {
		return 0;
	}
	ok = pread(fd, m, 8, 0) == 8 && memcmp(m, TC_SHM_MAGIC, 8) == 0;
	close(fd);
	return ok;
}

static void *open_path(const char *path)
{
	static tc_shm_config cfg;
	char err[TC_ERRBUF];
	void *st = NULL;

	B->defaults(&cfg);
	snprintf(cfg.path, sizeof(cfg.path), "%s", path);
	cfg.size = SEG_SIZE;
	cfg.max_entries = 64;
	cfg.lock_timeout = 2;
	err[0] = '\0';
	if (B->open(&st, &cfg, err) != TC_OK) {
		fprintf(stderr, "fuzz_shm: open: %s\n", err);
		return NULL;
	}
	return st;
}

static size_t tag_array(uint32_t mask, tc_str *out)
{
	return tags_in_mask(mask, tags, FTAGS, out);
}

static int save(void *st, uint32_t idx, uint32_t len, uint32_t gen, uint32_t mask, int64_t expire)
{
	unsigned char *v = malloc(len ? len : 1);
	char err[TC_ERRBUF];
	tc_str t[FTAGS], d;
	int rc;

	if (!v) {
		fz_fail("out of memory");
	}
	fill_value(v, len, idx, gen);
	d.p = (const char *)v;
	d.len = len;
	rc = B->save(st, ids[idx], d, t, tag_array(mask, t), expire, err);
	free(v);
	return rc;
}

typedef struct {
	size_t n;
	char first[256];
} problems;

static void collect(void *ctx, const char *p, size_t len)
{
	problems *pr = ctx;

	if (pr->n++ == 0) {
		snprintf(pr->first, sizeof(pr->first), "%.*s", (int)len, p);
	}
}

static void must_verify(void *st, const char *when)
{
	problems pr = {0, ""};
	int rc = B->verify(st, collect, &pr);

	if (rc != TC_OK || pr.n) {
		fprintf(stderr, "fuzz_shm: verify() %s: rc %d, %zu problems, first: %s\n", when, rc,
		        pr.n, pr.first);
		abort();
	}
}

/* ids(): every id at most once (whatever verify() thinks of the index).
 * Ids here are short: compared on their first 16 bytes and length. */
typedef struct {
	size_t n;
	char id[128][16];
	size_t len[128];
} idset;

static void ids_cb(void *ctx, const char *p, size_t len)
{
	idset *s = ctx;
	size_t i, k = len < 16 ? len : 16;

	for (i = 0; i < s->n; i++) {
		if (s->len[i] == len && memcmp(s->id[i], p, k) == 0) {
			fprintf(stderr, "fuzz_shm: ids() lists %.*s twice\n", (int)k, p);
			abort();
		}
	}
	if (s->n < 128) {
		memcpy(s->id[s->n], p, k);
		s->len[s->n++] = len;
	}
}

static void count_cb(void *ctx, const char *p, size_t len)
{
	(void)p;
	(void)len;
	++*(size_t *)ctx;
}

static void stat_cb(void *ctx, const char *name, int64_t v)
{
	(void)name;
	(void)v;
	++*(int *)ctx;
}

static char *alloc_cb(void *ctx, size_t len)
{
	char **b = ctx;

	free(*b);
	*b = malloc(len ? len : 1);
	return *b;
}

/* ----------------------------------------------------------- templates */

static void index_blocks(image *I)
{
	const unsigned char *heap;
	uint32_t r, end;

	memcpy(&I->h, I->img, sizeof(I->h));
	heap = I->img + I->h.off_heap;
	end = I->h.heap_units - 1;
	I->nblocks = I->nentries = 0;
	for (r = 1; r < end;) {
		tc_blk b;

		memcpy(&b, heap + (size_t)r * TC_UNIT, sizeof(b));
		if (b.size < 2) {
			fz_fail("template heap walk");
		}
		I->blocks[I->nblocks++] = r;
		if (b.type == TC_B_ENTRY) {
			I->entries[I->nentries++] = r;
		}
		r += b.size;
	}
}

/* 0: tagged entries with holes; 1: a heap filled by eviction; 2: every
 * slot used, one tag on all of them (Magento's MAGE). */
static void make_template(int v)
{
	char path[320], err[TC_ERRBUF];
	void *st;
	uint32_t i, g = 1;
	int64_t now = (int64_t)time(NULL);

	snprintf(path, sizeof(path), "%s/template-%d", dir, v);
	unlink(path);
	st = open_path(path);
	if (!st) {
		fz_fail("cannot create a template");
	}
	if (v == 0) {
		for (i = 0; i < FIDS; i++) {
			save(st, i, (i * 97) % 1500, g, (i * 37) & 0xff, i % 7 == 3 ? now - 100 : TC_EXPIRE_NEVER);
		}
		for (i = 2; i < FIDS; i += 5) {
			B->remove(st, ids[i]);
		}
	} else if (v == 1) {
		for (i = 0; i < 60; i++) {
			save(st, i % FIDS, 800 + (i * 331) % 5000, g++, (i * 13) & 0xff, TC_EXPIRE_NEVER);
		}
	} else {
		tc_str t = tags[0];

		B->clean(st, TC_CLEAN_ALL, NULL, 0, err);
		for (i = 0; i < 64; i++) {
			unsigned char v8[8];
			char id[8];
			tc_str k = {id, (size_t)snprintf(id, sizeof(id), "m%u", i)}, d = {(char *)v8, 8};

			memcpy(v8, &i, 4);
			memset(v8 + 4, 0x5a, 4);
			if (B->save(st, k, d, &t, 1, TC_EXPIRE_NEVER, err) != TC_OK) {
				fz_fail(err);
			}
		}
	}
	must_verify(st, "on a template");
	B->close(st);
	if ((imgs[v].img = read_whole(path, &imgs[v].size)) == NULL) {
		fz_fail("cannot read a template");
	}
	index_blocks(&imgs[v]);
	tc_test_forget_maps();
	unlink(path);
}

static void rm_dir(void)
{
	if (made_dir) {
		unlink(seg);
		rmdir(dir);
	}
}

static void write_seeds(const char *out);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int i;

	(void)argc;
	(void)argv;
	tc_set_log_sink(fz_quiet);
	live_writes = getenv("TC_FUZZ_LIVE_WRITES") && atoi(getenv("TC_FUZZ_LIVE_WRITES")) > 0;
	for (i = 0; i < FIDS; i++) {
		ids[i].p = id_buf[i];
		ids[i].len = (size_t)snprintf(id_buf[i], sizeof(id_buf[i]), "k%d", i);
	}
	for (i = 0; i < FTAGS; i++) {
		tags[i].p = tag_buf[i];
		tags[i].len = (size_t)snprintf(tag_buf[i], sizeof(tag_buf[i]), "g%d", i);
	}
	fz_workdir(dir, sizeof(dir), "fuzz-shm");
	made_dir = 1;
	atexit(rm_dir);
	snprintf(seg, sizeof(seg), "%s/seg", dir);
	for (i = 0; i < NVAR; i++) {
		make_template(i);
	}
	fz_seeds(write_seeds);
	return 0;
}

/* -------------------------------------------------------------- patches */

typedef struct {
	const uint8_t *p;
	size_t n;
} input;

static int take(input *in, size_t k, const uint8_t **out)
{
	if (in->n < k) {
		return 0;
	}
	*out = in->p;
	in->p += k;
	in->n -= k;
	return 1;
}

/* Where a patch lands: region, then an offset inside it. */
static size_t patch_offset(const image *I, unsigned region, unsigned off, size_t len)
{
	const tc_shm_hdr *h = &I->h;
	size_t lo = offsetof(tc_shm_hdr, lock), hi = lo + sizeof(pthread_mutex_t), o;

	switch (region % 8) {
	case 0:  /* anywhere in the header but the mutex */
		o = off % sizeof(tc_shm_hdr);
		if (o + len > lo && o < hi) {
			o = hi + (o % 64);
		}
		return o;
	case 1:
		return h->off_slots + off % ((size_t)h->nslots * sizeof(tc_slot));
	case 2:
		return h->off_buckets + off % ((size_t)h->nbuckets * 4);
	case 3:
		return h->off_tagbuckets + off % ((size_t)h->ntagbuckets * 4);
	case 4:  /* anywhere in the heap */
		return h->off_heap + off % ((size_t)h->heap_units * TC_UNIT);
	case 5:  /* near the start of a block: its header, an entry's fields */
		return h->off_heap + (size_t)I->blocks[(off >> 7) % I->nblocks] * TC_UNIT + (off & 127);
	case 6:  /* the links, key and names of an entry */
		if (!I->nentries) {
			return h->off_heap + off % ((size_t)h->heap_units * TC_UNIT);
		}
		return h->off_heap + (size_t)I->entries[(off >> 8) % I->nentries] * TC_UNIT
		       + sizeof(tc_blk) + sizeof(tc_entry) + (off & 255);
	default: /* the counters, free slot and free list heads */
		return offsetof(tc_shm_hdr, version)
		       + off % (offsetof(tc_shm_hdr, stripes) - offsetof(tc_shm_hdr, version));
	}
}

/* ------------------------------------------------------------ operations */

static uint32_t last_gen[FIDS];  /* generation saved during this run, 0: none */
static uint32_t last_len[FIDS];

static void check_load(uint32_t i, int rc, const char *data, size_t len)
{
	uint32_t g = 0;

	if (rc == TC_OK && last_gen[i]) {
		if (len != last_len[i] || !value_ok(i, data, len, &g) || (len >= 8 && g != last_gen[i])) {
			fprintf(stderr, "fuzz_shm: load(k%u): %zu bytes, gen %u; saved %u bytes gen %u\n", i,
			        len, g, last_len[i], last_gen[i]);
			abort();
		}
	}
}

static void run_op(void *st, const uint8_t *o, uint32_t *gen)
{
	uint32_t i = o[1] % FIDS, mask = o[3];
	tc_str t[FTAGS];
	size_t nt = tag_array(mask, t), cnt = 0;
	char err[TC_ERRBUF], *buf = NULL, *data = NULL;
	size_t len = 0;
	tc_meta meta;
	int64_t now = (int64_t)time(NULL);
	int rc, n = 0;

	switch (o[0] % 13) {
	case 0:
	case 1: {
		uint32_t l = (uint32_t)o[2] * o[2] % MAXLEN;
		int64_t exp = o[0] & 0x80 ? now - 5 : TC_EXPIRE_NEVER;

		rc = save(st, i, l, ++*gen, mask, exp);
		if (rc == TC_OK) {
			last_gen[i] = *gen;
			last_len[i] = l;
		} else {
			last_gen[i] = 0;  /* old value or none: not tracked */
		}
		break;
	}
	case 2:
		rc = B->load(st, ids[i], o[2] & 1, alloc_cb, &buf, &data, &len, &meta);
		check_load(i, rc, data, len);
		free(buf);
		break;
	case 3:
		B->load(st, ids[i], o[2] & 1, NULL, NULL, NULL, NULL, &meta);
		break;
	case 4:
		B->remove(st, ids[i]);
		break;
	case 5: {
		tc_clean_mode m = (tc_clean_mode)(o[2] % 5);

		if (m >= TC_CLEAN_MATCHING && !nt) {
			break;  /* the PHP layer never asks that */
		}
		if (B->clean(st, m, t, nt, err) != TC_OK) {
			fprintf(stderr, "fuzz_shm: clean(%d) failed: %s\n", m, err);
			abort();
		}
		if (m == TC_CLEAN_ALL) {
			memset(last_gen, 0, sizeof(last_gen));
		}
		break;
	}
	case 6:
		B->ids(st, (tc_ids_mode)(o[2] % 5), t, nt, count_cb, &cnt);
		break;
	case 7:
		B->tags(st, count_cb, &cnt);
		break;
	case 8:
		B->metadata(st, ids[i], &meta, count_cb, &cnt);
		break;
	case 9: {
		static const int64_t extras[] = {0, 1, -1, 3600, -3600, 100LL * 365 * 86400,
		                                 -100LL * 365 * 86400, 86400};

		B->touch(st, ids[i], extras[o[2] % 8]);
		break;
	}
	case 10:
		B->expire_now(st, ids[i]);
		break;
	case 11:
		B->stats(st, stat_cb, &n);
		rc = B->fill(st);
		if (rc < 0 || rc > 100) {
			fz_fail("fill() out of range");
		}
		break;
	default:
		if (live_damage) {
			/* damage made while mapped is reported, not repaired */
			B->verify(st, count_cb, &cnt);
		} else {
			must_verify(st, "between operations");
		}
		break;
	}
}

/* The segment file opened as a new process opens it. NULL when the file
 * has no segment magic: then the open must have been refused, and the file
 * is removed. A file with the magic must open, however damaged (else
 * what). */
static void *attach(const char *what)
{
	void *st = open_path(seg);

	if (!has_magic(seg)) {
		if (st) {
			fz_fail("a file without the segment magic was used");
		}
		tc_test_forget_maps();
		unlink(seg);
		return NULL;
	}
	if (!st) {
		fz_fail(what);
	}
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input in = {data, size};
	const uint8_t *b, *p;
	const image *I;
	unsigned char *img, *base;
	unsigned np, k, nops;
	uint32_t gen = 1000;
	void *st;
	int live;
	struct {
		size_t off, len;
		const uint8_t *bytes;
	} patch[8];

	if (!take(&in, 2, &b)) {
		return 0;
	}
	I = &imgs[b[0] % NVAR];
	live = live_damage = (b[0] & 0x80) != 0;
	np = b[1] % 9;
	for (k = 0; k < np; k++) {
		if (!take(&in, 4, &p)) {
			break;
		}
		patch[k].len = (size_t)(p[3] % 8) + 1;
		patch[k].off = patch_offset(I, p[0], (unsigned)p[1] | (unsigned)p[2] << 8, patch[k].len);
		if (!take(&in, patch[k].len, &patch[k].bytes) || patch[k].off + patch[k].len > I->size) {
			break;
		}
	}
	np = k;
	img = malloc(I->size);
	if (!img) {
		fz_fail("out of memory");
	}
	memcpy(img, I->img, I->size);
	for (k = 0; k < np && !live; k++) {
		memcpy(img + patch[k].off, patch[k].bytes, patch[k].len);
	}
	if (write_whole(seg, img, I->size) != 0) {
		fz_fail("cannot write the segment file");
	}
	free(img);
	st = attach("a damaged segment could not be opened");
	if (!st) {
		return 0;
	}
	must_verify(st, "after the first attach");
	memset(last_gen, 0, sizeof(last_gen));
	if (live) {
		/* Damage while mapped: the lock-free reader must bounds-check
		 * whatever it finds, and the lock path repair what it notices. */
		base = ((tc_shm *)st)->m->base;
		for (k = 0; k < np; k++) {
			memcpy(base + patch[k].off, patch[k].bytes, patch[k].len);
		}
		/* few: a damaged odd sequence costs each read its 200 tries */
		for (nops = 0; nops < (live_writes ? MAXOPS : 8) && take(&in, 4, &p); nops++) {
			uint8_t o[4] = {(uint8_t)(2 + (p[0] & 1)), p[1], p[2], p[3]};

			run_op(st, live_writes ? p : o, &gen);
		}
		/* The next process's first attach walks the segment and repairs
		 * it: then it must be whole. */
		B->close(st);
		tc_test_forget_maps();
		st = attach("a damaged segment could not be opened again");
		if (!st) {
			return 0;
		}
		must_verify(st, "after a new attach");
	} else {
		for (nops = 0; nops < MAXOPS && take(&in, 4, &p); nops++) {
			run_op(st, p, &gen);
		}
		must_verify(st, "after the operations");
	}
	{
		idset seen;

		memset(&seen, 0, sizeof(seen));
		B->ids(st, TC_CLEAN_ALL, NULL, 0, ids_cb, &seen);
	}
	B->close(st);
	tc_test_forget_maps();
	unlink(seg);
	return 0;
}

/* ---------------------------------------------------------------- seeds */

static void seed_file(const char *out, int n, const uint8_t *p, size_t len)
{
	char name[16];

	snprintf(name, sizeof(name), "seed-%02d", n);
	fz_seed(out, name, p, len);
}

/* A few inputs that reach each region and every operation. */
static void write_seeds(const char *out)
{
	static const uint8_t ops[] = {
		0, 1, 40, 3,   2, 1, 0, 0,    3, 5, 1, 0,    8, 1, 0, 0,    6, 0, 2, 3,
		7, 0, 0, 0,    9, 1, 3, 0,    10, 4, 0, 0,   11, 0, 0, 0,   5, 0, 2, 1,
		0, 9, 200, 0x81, 4, 9, 0, 0,  5, 0, 4, 6,    5, 0, 3, 2,    5, 0, 1, 0,
		2, 9, 1, 0,    12, 0, 0, 0,   5, 0, 0, 0,    2, 1, 0, 0,    12, 0, 0, 0,
	};
	uint8_t buf[512];
	int n = 0;
	unsigned v, r;

	for (v = 0; v < NVAR; v++) {
		/* no patch: operations on an intact image */
		buf[0] = (uint8_t)v;
		buf[1] = 0;
		memcpy(buf + 2, ops, sizeof(ops));
		seed_file(out, n++, buf, 2 + sizeof(ops));
		/* one patch in each region, then the operations */
		for (r = 0; r < 8; r++) {
			size_t len = 0;

			buf[len++] = (uint8_t)v;
			buf[len++] = 1;
			buf[len++] = (uint8_t)r;
			buf[len++] = (uint8_t)(17 * r + v);
			buf[len++] = (uint8_t)r;
			buf[len++] = 3;           /* 4 bytes */
			buf[len++] = (uint8_t)(r & 1 ? 0xff : 0x01);
			buf[len++] = 0;
			buf[len++] = (uint8_t)(r & 2 ? 0x7f : 0);
			buf[len++] = 0;
			memcpy(buf + len, ops, 40);
			len += 40;
			seed_file(out, n++, buf, len);
			buf[0] |= 0x80;  /* the same damage, made while mapped */
			seed_file(out, n++, buf, len);
		}
	}
	/* while mapped, a length field of the first entry (k0's, of variant 0,
	 * and k0's of variant 1's first block) or its block size made huge,
	 * then reads: the lock-free reader must bounds-check them */
	for (v = 0; v < 2; v++) {
		static const uint8_t fields[] = {0, 40, 44, 48, 52};
		static const uint8_t reads[] = {2, 0, 0, 0, 3, 0, 0, 0, 2, 0, 1, 0, 2, 1, 0, 0};

		for (r = 0; r < sizeof(fields); r++) {
			size_t len = 0;

			buf[len++] = (uint8_t)(0x80 | v);
			buf[len++] = 1;
			buf[len++] = 5;              /* near the start of a block */
			buf[len++] = fields[r];      /* block 0, this offset */
			buf[len++] = 0;
			buf[len++] = 3;              /* 4 bytes */
			buf[len++] = 0xf0;
			buf[len++] = 0xff;
			buf[len++] = 0xff;
			buf[len++] = 0x0f;
			memcpy(buf + len, reads, sizeof(reads));
			len += sizeof(reads);
			seed_file(out, n++, buf, len);
		}
	}
	/* regression, as fuzz_shm found it: patches that damage a tag-name
	 * length; the walk at attach followed it off the end of the mapping */
	{
		static const uint8_t names[] = {
			0x00, 0x28, 0xff, 0xff, 0x28, 0x00, 0x00, 0x4f, 0x01, 0x00, 0x20, 0x60,
			0x04, 0x00, 0xff, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda,
			0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda,
			0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xda, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03, 0x05, 0x01, 0x00,
			0x42, 0x01, 0x02, 0x01,
		};

		seed_file(out, n++, names, sizeof(names));
	}
	/* regression: the first entry's expiry (block offset 24) set to
	 * INT64_MAX, then touch(+100 years) overflowed before it saturated */
	{
		static const uint8_t touch_max[] = {0, 1, 5, 24, 0, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		                                    0xff, 0x7f, 9, 0, 5, 0};

		seed_file(out, n++, touch_max, sizeof(touch_max));
	}
}
