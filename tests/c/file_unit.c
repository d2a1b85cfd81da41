/*
 * file_unit.c: the File store's log and index code through its functions
 * and its vtable, without PHP, built with AddressSanitizer and
 * UndefinedBehaviorSanitizer (run.sh).
 *
 *   log header, log names, record header, record payload: the checks of
 *       ext/tc_file_log.c on valid and invalid input
 *   rebuild: the engine's own logs, a torn tail, a damaged header, random
 *       byte damage (trials), checked against the model in filelib.h
 *   index damage: a slot whose tag count runs past its links; a live-byte
 *       count too low (each failed before its fix in tc_file_index.c)
 *
 * The last line is "N passed, N failed, N skipped"; the exit status is 0
 * only when nothing failed.
 *   file_unit [--seed N] [--trials N] [-v]
 */
#include <time.h>
#include "filelib.h"
#include "testlib.h"
#include "unitlib.h"

#define NIDS 40

static char dir[256];
static int verbose, trials = 150;
static uint64_t rs = 20261201;
static char idb[NIDS][16];
static tc_str idv[NIDS];
static tc_str tagv[3] = {{"alpha", 5}, {"beta", 4}, {"gamma", 5}};

static void log_sink(const char *msg)
{
	if (verbose) {
		fprintf(stderr, "  log: %s\n", msg);
	}
}

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * UINT64_C(2685821657736338717);
}

static void report(const char *msg)
{
	EXPECT(0, "%s", msg);
}

static void save_id(void *st, uint32_t i, uint32_t gen, size_t len)
{
	unsigned char *v = malloc(len ? len : 1);
	char err[TC_ERRBUF];
	tc_str val;

	fill_value(v, len, i, gen);
	val.p = (const char *)v;
	val.len = len;
	EXPECT(FB->save(st, idv[i], val, &tagv[i % 3], i % 2 && i % 3 != 2 ? 2 : 1, TC_EXPIRE_NEVER, err) == TC_OK, "save %u: %s",
	       i, err);
	free(v);
}

/* A store of NIDS entries, some overwritten, removed, touched, cleaned by
 * tag; closed and forgotten, its files in dir. */
static void make_store(void)
{
	char err[TC_ERRBUF];
	void *st;
	uint32_t i;

	fl_empty_dir(dir);
	st = fl_open(dir, err);
	if (!EXPECT(st != NULL, "open: %s", err)) {
		return;
	}
	for (i = 0; i < NIDS; i++) {
		save_id(st, i, 1, 8 + (i * 97) % 700);
	}
	for (i = 0; i < NIDS; i += 5) {
		save_id(st, i, 2, 100 + i);
	}
	EXPECT(FB->remove(st, idv[6]) == TC_OK, "remove");
	EXPECT(FB->touch(st, idv[9], 1000) == TC_OK, "touch");
	EXPECT(FB->clean(st, TC_CLEAN_MATCHING_ANY, &tagv[2], 1, err) == TC_OK, "clean: %s", err);
	FB->close(st);
	tc_test_file_forget();
}

/* The logs of dir as images (numbers 1..32), headers read from the files. */
static size_t read_logs(fl_log *logs, size_t max)
{
	size_t n = 0;
	uint32_t num;

	for (num = 1; num <= 32 && n < max; num++) {
		char path[600];

		snprintf(path, sizeof(path), "%s/%s.%08x.log", dir, FL_PREFIX, num);
		if (access(path, F_OK) != 0) {
			continue;
		}
		memset(&logs[n], 0, sizeof(logs[n]));
		logs[n].number = num;
		logs[n].img = read_whole(path, &logs[n].len);
		if (!logs[n].img) {
			abort();
		}
		memcpy(&logs[n].h, logs[n].img, sizeof(logs[n].h));
		n++;
	}
	return n;
}

static void free_logs(fl_log *logs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(logs[i].img);
	}
}

/* Writes the images back, opens (a rebuild) and checks the model. */
static void rebuild_and_check(fl_log *logs, size_t n, const char *when)
{
	fl_model m;
	char err[TC_ERRBUF];
	void *st;
	size_t i;

	memset(&m, 0, sizeof(m));
	fl_empty_dir(dir);
	for (i = 0; i < n; i++) {
		EXPECT(fl_write_log(dir, &logs[i]) == 0, "write a log");
	}
	fl_model_logs(&m, logs, n);
	st = fl_open(dir, err);
	if (EXPECT(st != NULL, "%s: open: %s", when, err)) {
		fl_check(st, &m, when);
		FB->close(st);
	}
	tc_test_file_forget();
	fl_model_free(&m);
}

/* ------------------------------------------------------------ the cases */

static void test_log_header(void)
{
	fl_log L;

	u_begin("log header: valid, and each field wrong");
	fl_log_init(&L, 5, NULL, 0);
	fl_header(&L, 3, 0, 0);
	EXPECT(tcf_log_header_ok(&L.h, 5), "a header made as the tests make it is refused");
	EXPECT(!tcf_log_header_ok(&L.h, 6), "a header is accepted under another number");
	fl_header(&L, 6, 0, 0);
	EXPECT(!tcf_log_header_ok(&L.h, 5), "a base past the log's number is accepted");
	fl_header(&L, 1, 0, 0);
	L.h.layout++;
	EXPECT(!tcf_log_header_ok(&L.h, 5), "another layout is accepted");
	fl_header(&L, 1, 0, 0);
	L.h.magic[0] ^= 1;
	EXPECT(!tcf_log_header_ok(&L.h, 5), "another magic is accepted");
	fl_header(&L, 1, 0, 0);
	L.h.salt ^= 1;
	EXPECT(!tcf_log_header_ok(&L.h, 5), "a changed salt passes the check");
	fl_header(&L, 1, 4, ~UINT32_C(4));
	EXPECT(tcf_log_header_ok(&L.h, 5) && tcf_log_obsolete(&L.h) == 4, "an obsolete mark is not read");
	fl_header(&L, 1, 4, 4);
	EXPECT(tcf_log_obsolete(&L.h) == 0, "a mark without its complement is read");
	L.bad_header = 1;
	fl_header(&L, 1, 0, 0);
	EXPECT(!tcf_log_header_ok(&L.h, 5), "a broken check is accepted");
	free(L.img);
	u_end();
}

static void test_log_names(void)
{
	uint32_t n = 0;

	u_begin("log names: <prefix>.<8 hex>.log only");
	EXPECT(tcf_log_parse_name("fz.0000002a.log", "fz", &n) && n == 42, "a log name is not parsed");
	EXPECT(!tcf_log_parse_name("fz.00000000.log", "fz", &n), "log 0 is accepted");
	EXPECT(!tcf_log_parse_name("fz.0000002A.log", "fz", &n), "upper-case hex is accepted");
	EXPECT(!tcf_log_parse_name("fz.0000002a.log.tmp", "fz", &n), "a suffix is accepted");
	EXPECT(!tcf_log_parse_name("fz.000002a.log", "fz", &n), "7 digits are accepted");
	EXPECT(!tcf_log_parse_name("fzz.0000002a.log", "fz", &n), "another prefix is accepted");
	EXPECT(!tcf_log_parse_name("fz.idx", "fz", &n), "the index is taken for a log");
	EXPECT(!tcf_log_parse_name("fz", "fz", &n), "the bare prefix is accepted");
	u_end();
}

static void test_record(void)
{
	unsigned char buf[4096], copy[4096];
	tc_str key = {"the-key", 7}, tags[2] = {{"t1", 2}, {"tag-two", 7}};
	const unsigned char val[] = "some value";
	uint64_t salt = 0x1234567, off = 4096;
	size_t size = tcf_rec_build(buf, TCF_PUT, key, tags, 2, val, sizeof(val) - 1, 2000000000, 1700000000);
	tcf_rec r;

	u_begin("record header and payload: bounds, seal, checksums");
	EXPECT(size == tcf_rec_size(7, 2 + 2 + 2 + 7, sizeof(val) - 1) && size % 8 == 0, "record size %zu", size);
	tcf_rec_seal(buf, salt, off);
	EXPECT(tcf_rec_header_ok(buf, size, salt, off, &r) == size, "a sealed record is refused");
	EXPECT(r.klen == 7 && r.ntags == 2 && r.vlen == sizeof(val) - 1 && r.expire == 2000000000,
	       "the header reads back wrong");
	EXPECT(tcf_rec_body_ok(buf, &r), "a whole payload fails its check");
	EXPECT(!tcf_rec_header_ok(buf, size - 1, salt, off, NULL), "a record longer than the bytes is accepted");
	EXPECT(!tcf_rec_header_ok(buf, TCF_REC - 1, salt, off, NULL), "a short header is accepted");
	EXPECT(!tcf_rec_header_ok(buf, size, salt, off + 8, NULL), "a record is accepted at another offset");
	EXPECT(!tcf_rec_header_ok(buf, size, salt + 1, off, NULL), "a record is accepted in another log");
	memcpy(copy, buf, size);
	copy[size - 9] ^= 0x40;  /* the value's last byte (the padding follows) */
	EXPECT(tcf_rec_header_ok(copy, size, salt, off, &r) && !tcf_rec_body_ok(copy, &r),
	       "a flipped value byte passes the payload check");
	memcpy(copy, buf, size);
	copy[TCF_REC + 7] = 0;   /* the first tag name's length: 0 */
	copy[TCF_REC + 8] = 0;
	EXPECT(!tcf_rec_body_ok(copy, &r), "a tag name of length 0 passes");
	{
		/* each length out of range, resealed so only the bounds can refuse */
		struct {
			size_t at;
			uint32_t v;
			int bytes;
			const char *what;
		} bad[] = {
			{offsetof(tcf_rec, klen), 0, 2, "an empty key"},
			{offsetof(tcf_rec, klen), TC_ID_MAX + 1, 2, "a key over the limit"},
			{offsetof(tcf_rec, ntags), TC_TAGS_MAX + 1, 2, "too many tags"},
			{offsetof(tcf_rec, tnlen), 5, 4, "tag names shorter than 3 bytes per tag"},
			{offsetof(tcf_rec, tnlen), 2 * (2 + TC_TAG_MAX) + 1, 4, "tag names past the limit"},
			{offsetof(tcf_rec, vlen), 0xfffffff0u, 4, "a value past the bytes"},
			{offsetof(tcf_rec, magic), TCF_RECMAGIC | 4, 4, "record type 4"},
			{offsetof(tcf_rec, magic), TCF_RECMAGIC | TCF_DEL, 4, "a DEL with tags and a value"},
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(copy, buf, size);
			memcpy(copy + bad[i].at, &bad[i].v, (size_t)bad[i].bytes);
			tcf_rec_seal(copy, salt, off);
			EXPECT(!tcf_rec_header_ok(copy, sizeof(copy), salt, off, NULL), "%s is accepted", bad[i].what);
		}
	}
	{
		size_t dsize = tcf_rec_build(copy, TCF_DEL, key, NULL, 0, NULL, 0, 5, 6);

		tcf_rec_seal(copy, salt, off);
		EXPECT(dsize == tcf_rec_size(7, 0, 0) && tcf_rec_header_ok(copy, dsize, salt, off, &r) == dsize
		       && (r.magic & 0xff) == TCF_DEL, "a DEL record is refused");
	}
	{
		/* tombstones are built by tcf_rec_build_del: byte for byte a
		 * tcf_rec_build() DEL, padding zeroed over whatever was there */
		unsigned char kb[TC_ID_MAX];
		size_t klen, bad = 0;

		for (klen = 0; klen < sizeof(kb); klen++) {
			kb[klen] = (unsigned char)(klen * 37 + 11);
		}
		for (klen = 1; klen <= TC_ID_MAX; klen++) {
			tc_str k = {(const char *)kb, klen};
			size_t a, b;

			memset(buf, 0xa5, sizeof(buf));
			memset(copy, 0x5a, sizeof(copy));
			a = tcf_rec_build(buf, TCF_DEL, k, NULL, 0, NULL, 0, 0, (int64_t)klen * 1000003);
			b = tcf_rec_build_del(copy, kb, klen, (int64_t)klen * 1000003);
			if (a != b || memcmp(buf, copy, a) != 0) {
				bad++;
			}
		}
		EXPECT(bad == 0, "tcf_rec_build_del differs from tcf_rec_build for %zu key lengths", bad);
	}
	u_end();
}

/* Expected state of id i after make_store(). */
static int expected(uint32_t i, uint32_t *gen)
{
	*gen = i % 5 == 0 ? 2 : 1;
	/* tags: tagv[i % 3], and the next one for an odd i (but for i % 3 == 2);
	 * id 6 removed, gamma (tagv[2]) cleaned */
	return i != 6 && i % 3 != 2 && !(i % 2 && i % 3 == 1);
}

static void test_rebuild_own(void)
{
	char err[TC_ERRBUF];
	void *st;
	uint32_t i;

	u_begin("rebuild: the engine's own logs give back every entry");
	make_store();
	fl_unlink_index(dir);
	st = fl_open(dir, err);
	if (EXPECT(st != NULL, "open: %s", err)) {
		fl_verify(st, "after the rebuild");
		for (i = 0; i < NIDS; i++) {
			char *v = NULL;
			size_t len = 0;
			tc_meta meta;
			uint32_t g = 0, want;
			int present = expected(i, &want), rc = FB->load(st, idv[i], 0, fl_alloc, NULL, &v, &len, &meta);

			if (present) {
				EXPECT(rc == TC_OK && value_ok(i, v, len, &g) && (len < 8 || g == want),
				       "id %u: %d, not its last value", i, rc);
			} else {
				EXPECT(rc == TC_MISS, "id %u: removed, load() gives %d", i, rc);
			}
			if (i == 9 && rc == TC_OK) {
				EXPECT(meta.expire == TC_EXPIRE_NEVER + 1000, "the touch is lost: expire %lld",
				       (long long)meta.expire);
			}
			free(v);
		}
		FB->close(st);
	}
	tc_test_file_forget();
	u_end();
}

static void test_torn_tail(void)
{
	fl_log logs[8];
	size_t n, cut;

	u_begin("rebuild: a torn tail costs the record it cuts, nothing before it");
	make_store();
	n = read_logs(logs, 8);
	if (EXPECT(n >= 1, "no log")) {
		for (cut = 1; cut <= 40; cut += 13) {
			fl_log *L = &logs[n - 1];
			size_t keep = L->len;

			L->len = L->len > TCF_LOGHDR + cut ? L->len - cut : TCF_LOGHDR;
			fl_report = report;
			rebuild_and_check(logs, n, "a torn tail");
			fl_report = NULL;
			L->len = keep;
		}
	}
	free_logs(logs, n);
	u_end();
}

static void test_damage(const char *name, int header_only)
{
	fl_log logs[8];
	size_t n, k;
	int t;

	u_begin(name);
	make_store();
	n = read_logs(logs, 8);
	fl_report = report;
	for (t = 0; t < (header_only ? 20 : trials) && n && !u_case_fails; t++) {
		fl_log copy[8];
		int flips = 1 + (int)(rnd() % 4);

		for (k = 0; k < n; k++) {
			copy[k] = logs[k];
			copy[k].img = malloc(logs[k].len);
			if (!copy[k].img) {
				abort();
			}
			memcpy(copy[k].img, logs[k].img, logs[k].len);
		}
		while (flips--) {
			fl_log *L = &copy[rnd() % n];
			size_t at;

			if (L->len <= TCF_LOGHDR) {
				continue;
			}
			at = TCF_LOGHDR + (size_t)(rnd() % (L->len - TCF_LOGHDR));
			if (header_only) {
				at -= (at - TCF_LOGHDR) % 8;  /* the first 8 bytes of some 8-byte word */
			}
			L->img[at] ^= (unsigned char)(1u << (rnd() % 8));
		}
		rebuild_and_check(copy, n, name);
		for (k = 0; k < n; k++) {
			free(copy[k].img);
		}
	}
	fl_report = NULL;
	free_logs(logs, n);
	u_end();
}

/* Every live slot's tag count set past its links; then a save over an id,
 * a remove and a metadata read: each follows the slot's links. Before the
 * fix in tcf_find() (tc_file_index.c) the save read past the index mapping
 * (AddressSanitizer stops the run); now the lookup taints the index, the
 * holder rebuilds it from the logs. fuzz_file_idx found it. */
static void test_index_links(void)
{
	char path[600], err[TC_ERRBUF];
	unsigned char *img;
	size_t len;
	tcf_hdr h;
	uint32_t i, patched = 0;
	void *st;

	u_begin("index damage: a slot's tag count past its links (a save, a remove, metadata)");
	make_store();
	snprintf(path, sizeof(path), "%s/%s.idx", dir, FL_PREFIX);
	img = read_whole(path, &len);
	if (!EXPECT(img != NULL, "no index")) {
		u_end();
		return;
	}
	memcpy(&h, img, sizeof(h));
	for (i = 0; i < h.nslots; i++) {
		tcf_slot *sl = (tcf_slot *)(img + h.off_slots) + i;

		if (sl->log) {
			sl->ntags = 0xcece0000u | sl->ntags;
			patched++;
		}
	}
	EXPECT(write_whole(path, img, len) == 0, "cannot write the index");
	free(img);
	EXPECT(patched > 10, "only %u slots", patched);
	st = fl_open(dir, err);
	if (EXPECT(st != NULL, "open: %s", err)) {
		str_list l = {0};
		tc_meta meta;

		save_id(st, 0, 9, 64);
		EXPECT(FB->remove(st, idv[4]) == TC_OK, "remove");
		FB->metadata(st, idv[3], &meta, str_list_add, &l);
		str_list_free(&l);
		fl_verify(st, "after the repair");
		{
			char *v = NULL;
			size_t vl = 0;
			uint32_t g = 0;

			EXPECT(FB->load(st, idv[0], 0, fl_alloc, NULL, &v, &vl, &meta) == TC_OK && value_ok(0, v, vl, &g)
			       && g == 9, "the save over a damaged slot is lost");
			free(v);
			v = NULL;
			EXPECT(FB->load(st, idv[4], 0, fl_alloc, NULL, &v, &vl, &meta) == TC_MISS, "the removed id is back");
			free(v);
		}
		FB->close(st);
	}
	tc_test_file_forget();
	u_end();
}

/* The index's live-byte count damaged low (7): the next overwrite takes
 * its old record's bytes away and the count wraps to near 2^64; the save
 * after it found the store "over max_size" and tcf_make_room() evicted
 * the oldest logs whole, with every entry (their files unlinked: a
 * rebuild could not bring them back). Now tcf_account() (tc_file_index.c)
 * taints the index when it would take away more than was counted, and the
 * holder rebuilds it. fuzz_file_idx found it. */
static void test_index_live_bytes(void)
{
	char path[600], err[TC_ERRBUF];
	uint64_t low = 7;
	FILE *f;
	void *st;
	uint32_t i, lost = 0, want;

	u_begin("index damage: a live-byte count too low evicts nothing");
	make_store();
	snprintf(path, sizeof(path), "%s/%s.idx", dir, FL_PREFIX);
	f = fopen(path, "r+b");
	if (!EXPECT(f != NULL && fseek(f, (long)offsetof(tcf_hdr, live_bytes), SEEK_SET) == 0
	            && fwrite(&low, 8, 1, f) == 1 && fclose(f) == 0, "cannot patch the index")) {
		u_end();
		return;
	}
	st = fl_open(dir, err);
	if (EXPECT(st != NULL, "open: %s", err)) {
		save_id(st, 0, 5, 30);   /* overwrites: takes bytes away */
		save_id(st, 3, 5, 30);
		save_id(st, 9, 5, 30);
		fl_verify(st, "after the saves");
		FB->close(st);
	}
	tc_test_file_forget();
	fl_unlink_index(dir);
	st = fl_open(dir, err);
	if (EXPECT(st != NULL, "open: %s", err)) {
		for (i = 0; i < NIDS; i++) {
			char *v = NULL;
			size_t vl = 0;
			tc_meta meta;

			if (expected(i, &want) && FB->load(st, idv[i], 0, fl_alloc, NULL, &v, &vl, &meta) != TC_OK) {
				lost++;
			}
			free(v);
		}
		EXPECT(lost == 0, "%u entries lost", lost);
		FB->close(st);
	}
	tc_test_file_forget();
	u_end();
}

int main(int argc, char **argv)
{
	int i;
	const char *base = getenv("TC_FUZZ_DIR");

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			rs = strtoull(argv[++i], NULL, 10) | 1;
		} else if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc) {
			trials = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--seed N] [--trials N] [-v]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	tc_set_log_sink(log_sink);
	for (i = 0; i < NIDS; i++) {
		snprintf(idb[i], sizeof(idb[i]), "id-%02d", i);
		idv[i].p = idb[i];
		idv[i].len = strlen(idb[i]);
	}
	snprintf(dir, sizeof(dir), "%s/tc-funit.XXXXXX", base && *base ? base : "/dev/shm");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/tc-funit.XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 2;
		}
	}
	printf("file_unit: seed %llu, store in %s\n", (unsigned long long)rs, dir);
	test_log_header();
	test_log_names();
	test_record();
	test_rebuild_own();
	test_torn_tail();
	test_damage("rebuild: random bit flips in the logs (trials)", 0);
	test_damage("rebuild: bit flips in record headers", 1);
	test_index_links();
	test_index_live_bytes();
	fl_empty_dir(dir);
	rmdir(dir);
	return u_summary();
}
