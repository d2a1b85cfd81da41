/*
 * fuzz_file_idx.c: libFuzzer harness for what the File store reads from its
 * index file (tc_file_index.c, tc_file_store.c): the header check at open,
 * and every reference followed afterwards (bucket chains, slots, the log
 * table, tag records, member arrays, links, heap free lists).
 *
 * The index is a cache of the logs, shared by every process through
 * MAP_SHARED: a disk, a bug or a hostile local process may change it. An
 * input is
 *   byte 0      number of patches (0..8)
 *   patches     region (1 byte: the header, the log table, slots, buckets,
 *               tag records, tag buckets, the heap), offset (2 bytes, taken
 *               modulo the region's used part), length (1 byte, 1..8), then
 *               that many bytes
 *   the rest    operations, 3 bytes each: opcode, id, argument
 * The patched index is written, with the template's logs, into an empty
 * directory; the store is opened and the operations run. Whatever the
 * damage, nothing may crash, hang or trip a sanitizer, and every value
 * served must be one that was saved for that id (testlib.h's
 * self-describing values). Then the index is deleted and the store rebuilt
 * from the logs: verify() must be clean, and an id whose last operation
 * was a successful save (with no clean after it) must have that value.
 *
 * The pthread mutex inside the header is never patched: glibc's opaque
 * state, and a lock word naming a live-looking owner can only end in a
 * lock timeout, which is not what this harness looks for.
 *
 * TC_FUZZ_DIR: where the directories go (default: /dev/shm)
 * TC_FUZZ_WRITE_SEEDS=dir: write a seed corpus there and exit.
 */
#include "filelib.h"
#include "testlib.h"
#define FZ_NAME "fuzz_file_idx"
#include "fuzzlib.h"

#define FIDS 24
#define FTAGS 4
#define MAXOPS 48
#define MAXVAL 3000

static char dir[512], tdir[600];
static unsigned char *idx_img;
static size_t idx_len;
static fl_log tlogs[8];
static size_t ntlogs;
static char id_buf[FIDS][8], tag_buf[FTAGS][8];
static tc_str ids[FIDS], tags[FTAGS];
static tcf_hdr th;   /* the template index's header */

static void cleanup(void)
{
	fl_empty_dir(dir);
	rmdir(dir);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *p = read_whole(path, len);

	if (!p) {
		fz_fail("cannot read the template");
	}
	return p;
}

static void put(void *st, uint32_t i, uint32_t gen, size_t len, int64_t expire)
{
	unsigned char *v = malloc(len ? len : 1);
	tc_str val;
	char err[TC_ERRBUF];

	fill_value(v, len, i, gen);
	val.p = (const char *)v;
	val.len = len;
	if (FB->save(st, ids[i], val, &tags[i % FTAGS], i % 3 == 0 && i % FTAGS != FTAGS - 1 ? 2 : 1, expire, err) != TC_OK) {
		fprintf(stderr, "fuzz_file_idx: template save: %s\n", err);
		abort();
	}
	free(v);
}

/* A store of FIDS entries with tags (two of them removed, one touched),
 * closed: its index file and logs are the template. */
static void make_template(void)
{
	char err[TC_ERRBUF], path[700];
	void *st;
	uint32_t i, num;

	snprintf(tdir, sizeof(tdir), "%s.t", dir);
	mkdir(tdir, 0700);
	fl_empty_dir(tdir);
	st = fl_open(tdir, err);
	if (!st) {
		fz_fail(err);
	}
	for (i = 0; i < FIDS; i++) {
		put(st, i, 0, 8 + (size_t)i * 37, i == 5 ? 2000000000 : TC_EXPIRE_NEVER);
	}
	FB->remove(st, ids[3]);
	FB->remove(st, ids[17]);
	FB->touch(st, ids[5], 50);
	FB->close(st);
	tc_test_file_forget();
	snprintf(path, sizeof(path), "%s/%s.idx", tdir, FL_PREFIX);
	idx_img = slurp(path, &idx_len);
	memcpy(&th, idx_img, sizeof(th));
	for (num = 1; num < 16 && ntlogs < 8; num++) {
		fl_log *L = &tlogs[ntlogs];

		snprintf(path, sizeof(path), "%s/%s.%08x.log", tdir, FL_PREFIX, num);
		if (access(path, F_OK) != 0) {
			continue;
		}
		memset(L, 0, sizeof(*L));
		L->number = num;
		L->img = slurp(path, &L->len);
		ntlogs++;
	}
	fl_empty_dir(tdir);
	rmdir(tdir);
}

static void write_seeds(const char *out)
{
	static const unsigned char s0[] = {0, 0, 1, 2, 1, 3, 0, 3, 5, 0, 1, 4, 9, 0, 5, 7, 0};
	static const unsigned char s1[] = {2, 2, 0x10, 0, 4, 0xff, 0xff, 0xff, 0xff, 5, 0x40, 0, 2, 1, 1,
	                                   0, 1, 1, 1, 2, 3, 0, 3, 4, 4, 0, 5, 0, 9, 1, 2};
	static const unsigned char s2[] = {1, 6, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 7, 9, 0, 7, 0};
	const unsigned char *s[3] = {s0, s1, s2};
	size_t n[3] = {sizeof(s0), sizeof(s1), sizeof(s2)}, i;
	char name[16];

	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "seed-%zu", i);
		fz_seed(out, name, s[i], n[i]);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int i;

	(void)argc;
	(void)argv;
	tc_set_log_sink(fz_quiet);
	for (i = 0; i < FIDS; i++) {
		snprintf(id_buf[i], sizeof(id_buf[i]), "k%02d", i);
		ids[i].p = id_buf[i];
		ids[i].len = strlen(id_buf[i]);
	}
	for (i = 0; i < FTAGS; i++) {
		snprintf(tag_buf[i], sizeof(tag_buf[i]), "t%d", i);
		tags[i].p = tag_buf[i];
		tags[i].len = strlen(tag_buf[i]);
	}
	fz_seeds(write_seeds);
	fz_workdir(dir, sizeof(dir), "file-idx");
	atexit(cleanup);
	make_template();
	return 0;
}

/* A region of the index: [*start, *start + *len), the part in use. */
static void region(unsigned r, size_t *start, size_t *len)
{
	size_t lock = offsetof(tcf_hdr, lock), after = lock + sizeof(pthread_mutex_t);

	switch (r % 7) {
	case 0:   /* the header, but for the mutex (see the top) */
		*start = 0;
		*len = lock;
		return;
	case 1:
		*start = after;
		*len = offsetof(tcf_hdr, logs) - after;
		return;
	case 2:
		*start = offsetof(tcf_hdr, logs);
		*len = sizeof(th.logs);
		return;
	case 3:
		*start = th.off_slots;
		*len = (size_t)(FIDS + 2) * sizeof(tcf_slot);
		return;
	case 4:
		*start = th.off_buckets;
		*len = (size_t)th.nbuckets * 4;
		return;
	case 5:
		*start = th.off_tags;
		*len = (size_t)(FTAGS + 2) * sizeof(tcf_tag);
		return;
	default:
		*start = th.off_heap;
		*len = (size_t)th.heap_top * TCF_UNIT + 64;
		return;
	}
}

static uint32_t gens[FIDS];
static int sure[FIDS];   /* the last operation was a save that succeeded */
static uint32_t last_gen[FIDS];
static size_t last_len[FIDS];

static void check_value(uint32_t i, const char *v, size_t len, const char *when)
{
	if (!value_ok(i, v, len, NULL)) {
		fl_fail("%s: id %u: %zu bytes served that no save of it wrote", when, i, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *img;
	size_t pos = 1, np, k, nops = 0;
	char err[TC_ERRBUF], path[700];
	void *st;
	uint32_t i;

	if (size < 1) {
		return 0;
	}
	fl_problems = 0;
	fl_report = fz_fail;
	img = malloc(idx_len);
	if (!img) {
		abort();
	}
	memcpy(img, idx_img, idx_len);
	np = data[0] % 9;
	for (k = 0; k < np && pos + 4 <= size; k++) {
		size_t start, rlen, off, len = (size_t)(data[pos + 3] % 8) + 1, j;

		region(data[pos], &start, &rlen);
		off = ((size_t)data[pos + 1] | (size_t)data[pos + 2] << 8) % rlen;
		pos += 4;
		for (j = 0; j < len && pos < size; j++, pos++) {
			size_t at = start + off + j;

			if (at < idx_len && (at < offsetof(tcf_hdr, lock)
			                     || at >= offsetof(tcf_hdr, lock) + sizeof(pthread_mutex_t))) {
				img[at] = data[pos];
			}
		}
	}
	fl_empty_dir(dir);
	for (k = 0; k < ntlogs; k++) {
		if (fl_write_log(dir, &tlogs[k]) != 0) {
			fz_fail("cannot write a log");
		}
	}
	snprintf(path, sizeof(path), "%s/%s.idx", dir, FL_PREFIX);
	if (write_whole(path, img, idx_len) != 0) {
		fz_fail("cannot write the index");
	}
	free(img);
	for (i = 0; i < FIDS; i++) {
		gens[i] = 0;
		sure[i] = 0;
	}

	st = fl_open(dir, err);
	if (!st) {
		fl_fail("open with a damaged index failed: %s", err);
	}
	for (; pos + 3 <= size && nops < MAXOPS; pos += 3, nops++) {
		uint32_t op = data[pos] % 6, id = data[pos + 1] % FIDS, arg = data[pos + 2];
		char *v = NULL;
		size_t len = 0;
		tc_meta meta;
		str_list l = {0};
		int rc;

		switch (op) {
		case 0:
			rc = FB->load(st, ids[id], arg & 1, fl_alloc, NULL, &v, &len, &meta);
			if (rc == TC_OK) {
				check_value(id, v, len, "load");
			}
			free(v);
			break;
		case 1: {
			unsigned char *b;
			tc_str val;

			len = (size_t)arg * (MAXVAL / 256);
			b = malloc(len ? len : 1);
			if (!b) {
				abort();
			}
			fill_value(b, len, id, ++gens[id]);
			val.p = (const char *)b;
			val.len = len;
			rc = FB->save(st, ids[id], val, &tags[arg % FTAGS], 1, TC_EXPIRE_NEVER, err);
			sure[id] = rc == TC_OK;
			last_gen[id] = gens[id];
			last_len[id] = len;
			free(b);
			break;
		}
		case 2:
			FB->remove(st, ids[id]);
			sure[id] = 0;
			break;
		case 3:
			FB->clean(st, TC_CLEAN_MATCHING_ANY, &tags[arg % FTAGS], 1, err);
			for (i = 0; i < FIDS; i++) {
				sure[i] = 0;
			}
			break;
		case 4:
			FB->touch(st, ids[id], arg);
			break;
		default:
			FB->ids(st, (tc_ids_mode)(arg % 5), &tags[arg % FTAGS], 1, str_list_add, &l);
			for (k = 0; k < l.n; k++) {
				for (i = 0; i < FIDS; i++) {
					if (l.len[k] == ids[i].len && memcmp(l.s[k], ids[i].p, ids[i].len) == 0) {
						break;
					}
				}
				if (i == FIDS) {
					fl_fail("ids() lists an id (%zu bytes) that was never saved", l.len[k]);
				}
			}
			str_list_free(&l);
			FB->tags(st, str_list_add, &l);
			str_list_free(&l);
			FB->metadata(st, ids[id], &meta, str_list_add, &l);
			str_list_free(&l);
			break;
		}
	}
	FB->close(st);
	tc_test_file_forget();

	/* the logs are the truth: a rebuild from them */
	fl_unlink_index(dir);
	st = fl_open(dir, err);
	if (!st) {
		fl_fail("open (a rebuild from the logs) failed: %s", err);
	}
	fl_verify(st, "after the rebuild");
	for (i = 0; i < FIDS; i++) {
		char *v = NULL;
		size_t len = 0;
		tc_meta meta;
		int rc = FB->load(st, ids[i], 1, fl_alloc, NULL, &v, &len, &meta);
		uint32_t g = 0;

		if (rc == TC_OK) {
			check_value(i, v, len, "after the rebuild");
			value_ok(i, v, len, &g);
		}
		if (sure[i] && (rc != TC_OK || len != last_len[i] || (len >= 8 && g != last_gen[i]))) {
			fl_fail("after the rebuild: id %u: %s, not the value its last save wrote", i,
			        rc == TC_OK ? "another value" : "a miss");
		}
		free(v);
	}
	FB->close(st);
	tc_test_file_forget();
	return 0;
}
