/*
 * fuzz_file_log.c: libFuzzer harness for what the File store reads from its
 * logs: the log header check (tc_file_log.c), the record header and payload
 * checks, and the rebuild that replays the logs into a new index
 * (tc_file_rebuild.c, tc_file_index.c).
 *
 * An input is
 *   byte 0   bits 0-1: number of logs - 1; bit 2: break the header check
 *            of the last log (one flipped bit, which the rebuild puts
 *            right: the log counts as written); bit 3: write afterwards (a
 *            save, a remove, a clean by tag); bit 4: then rebuild again from
 *            the logs; bit 5: also clean('old'), which sweeps and compacts
 *   bytes 1-8  a bit per record (in walk order, the first 64): leave its
 *            payload check as the input has it (a damaged record)
 *   per log  1 byte: the number's step from the previous log (1 + b % 8)
 *            1 byte: base (bits 0-1: 1, this number, the previous log's,
 *            this number - 1) and obsolete mark (bits 2-3: none, the
 *            previous log's number, this number, a mark whose complement
 *            is wrong)
 *            2 bytes (LE): the body's length, then the body
 * Every record-looking header of a body (a record magic and lengths that
 * fit) is sealed with the log's salt and offset, as the engine writes it,
 * so that mutations reach the replay instead of dying at the header check.
 * The logs are written into an empty directory, the store is opened (no
 * index: a rebuild) and checked against the model in filelib.h: verify()
 * clean, every id as its last record says, no listing of a removed id.
 *
 * TC_FUZZ_VERBOSE=1: say what each input holds.
 * TC_FUZZ_DIR: where the store's directory goes (default: /dev/shm)
 * TC_FUZZ_WRITE_SEEDS=dir: write seeds (logs the engine wrote) and exit.
 */
#include "filelib.h"
#define FZ_NAME "fuzz_file_log"
#include "fuzzlib.h"

#define MAXLOGS 4

static char dir[512];
static int verbose;  /* TC_FUZZ_VERBOSE=1: what each input holds */

static void cleanup(void)
{
	fl_empty_dir(dir);
	rmdir(dir);
}

/* ----------------------------------------------------------------- seeds */

/* The logs of dir (numbers 1..8), wrapped as one input. */
static void seed_from_dir(const char *out, const char *name, unsigned char flags)
{
	unsigned char *in = malloc(1 << 20);
	size_t n = 9;
	uint32_t num, prev = 0, nlogs = 0;
	char path[4200];

	if (!in) {
		abort();
	}
	memset(in, 0, 9);
	for (num = 1; num <= 8 && nlogs < MAXLOGS; num++) {
		size_t len;
		unsigned char *p;

		snprintf(path, sizeof(path), "%s/%s.%08x.log", dir, FL_PREFIX, num);
		p = read_whole(path, &len);
		if (!p) {
			continue;
		}
		if (len > TCF_LOGHDR + 60000) {
			len = TCF_LOGHDR + 60000;
		}
		in[n++] = (unsigned char)(num - prev - 1);
		in[n++] = 0;
		in[n++] = (unsigned char)((len - TCF_LOGHDR) & 0xff);
		in[n++] = (unsigned char)((len - TCF_LOGHDR) >> 8);
		memcpy(in + n, p + TCF_LOGHDR, len - TCF_LOGHDR);
		n += len - TCF_LOGHDR;
		free(p);
		prev = num;
		nlogs++;
	}
	in[0] = (unsigned char)(flags | (nlogs ? nlogs - 1 : 0));
	fz_seed(out, name, in, n);
	free(in);
}

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_file_log: seeds: %s failed\n", what);
		exit(1);
	}
}

static void write_seeds(const char *out)
{
	char err[TC_ERRBUF];
	void *st;
	int i;
	tc_str tags[3] = {{"red", 3}, {"green", 5}, {"blue", 4}};

	/* one log: entries with and without tags, a binary id, an empty value */
	fl_empty_dir(dir);
	st = fl_open(dir, err);
	must(st != NULL, err);
	for (i = 0; i < 6; i++) {
		char id[16], val[64];
		tc_str k, v;

		snprintf(id, sizeof(id), "id%d", i);
		snprintf(val, sizeof(val), "value %d of the seed", i);
		k.p = id;
		k.len = strlen(id);
		v.p = val;
		v.len = i == 5 ? 0 : strlen(val);
		must(FB->save(st, k, v, tags, (size_t)(i % 4), i == 2 ? 2000000000 : TC_EXPIRE_NEVER, err) == TC_OK, "save");
	}
	{
		tc_str k = {"bin\0id\xff", 7}, v = {"\0\1\2\3", 4};

		must(FB->save(st, k, v, NULL, 0, TC_EXPIRE_NEVER, err) == TC_OK, "save");
	}
	FB->close(st);
	tc_test_file_forget();
	seed_from_dir(out, "seed-puts", 0x18);

	/* then removes, a touch, a clean by tag, an overwrite */
	st = fl_open(dir, err);
	must(st != NULL, err);
	{
		tc_str k1 = {"id1", 3}, k3 = {"id3", 3}, k4 = {"id4", 3}, v = {"new value", 9};

		must(FB->remove(st, k1) == TC_OK, "remove");
		must(FB->touch(st, k3, 100) == TC_OK, "touch");
		must(FB->save(st, k4, v, &tags[1], 1, TC_EXPIRE_NEVER, err) == TC_OK, "save");
		must(FB->clean(st, TC_CLEAN_MATCHING_ANY, &tags[2], 1, err) == TC_OK, "clean");
	}
	FB->close(st);
	tc_test_file_forget();
	seed_from_dir(out, "seed-dels", 0x18);

	/* two logs: the second made by a rebuild */
	fl_unlink_index(dir);
	st = fl_open(dir, err);
	must(st != NULL, err);
	{
		tc_str k = {"id0", 3}, v = {"second log", 10};

		must(FB->save(st, k, v, tags, 2, TC_EXPIRE_NEVER, err) == TC_OK, "save");
	}
	FB->close(st);
	tc_test_file_forget();
	seed_from_dir(out, "seed-two-logs", 0x38);
	fl_empty_dir(dir);
}

/* ----------------------------------------------------------------- input */

static void model_save(fl_model *m, void *st, const char *key, const unsigned char *val, size_t vlen,
                       const char *tag)
{
	char err[TC_ERRBUF];
	size_t kl = strlen(key), tl = strlen(tag);
	unsigned char *own = malloc(kl + 2 + tl + vlen + 1);
	tc_str k = {key, kl}, v = {(const char *)val, vlen}, t = {tag, tl};
	fl_ent *e;
	uint16_t l16 = (uint16_t)tl;

	if (!own || m->nown == 8) {
		abort();
	}
	memcpy(own, key, kl);
	memcpy(own + kl, &l16, 2);
	memcpy(own + kl + 2, tag, tl);
	if (vlen) {
		memcpy(own + kl + 2 + tl, val, vlen);
	}
	m->own[m->nown++] = own;
	if (FB->save(st, k, v, &t, 1, TC_EXPIRE_NEVER, err) != TC_OK) {
		fl_fail("save() after the rebuild failed: %s", err);
		return;
	}
	e = fl_find(m, own, kl, 1);
	e->state = FL_PRESENT;
	e->tn = own + kl;
	e->tnlen = (uint32_t)(2 + tl);
	e->ntags = 1;
	e->val = own + kl + 2 + tl;
	e->vlen = (uint32_t)vlen;
	e->expire = TC_EXPIRE_NEVER;
	e->mtime = INT64_MIN;  /* the save's clock: not checked */
	fl_add_put(m, e->key, e->klen, e->val, e->vlen);
}

/* Does a present entry's record carry tag t? */
static int carries(const fl_ent *e, const unsigned char *t, uint16_t tl)
{
	const unsigned char *w = e->tn;
	uint16_t j;

	for (j = 0; j < e->ntags; j++) {
		uint16_t n;

		memcpy(&n, w, 2);
		if (n == tl && memcmp(w + 2, t, tl) == 0) {
			return 1;
		}
		w += 2 + n;
	}
	return 0;
}

static void writes(void *st, fl_model *m, const uint8_t *data, size_t size, int clean_old)
{
	char err[TC_ERRBUF];
	size_t i;
	int64_t now = tc_now();

	model_save(m, st, "fz:new", data, size < 200 ? size : 200, "fzt");
	for (i = 0; i < m->n && m->e[i].klen == 6 && memcmp(m->e[i].key, "fz:new", 6) == 0; i++) {
	}
	if (i < m->n) {
		tc_str k = {(const char *)m->e[i].key, m->e[i].klen};
		int rc = FB->remove(st, k);

		if (rc != TC_OK && rc != TC_MISS) {
			fl_fail("remove() after the rebuild gives %d", rc);
		}
		m->e[i].state = FL_ABSENT;
	}
	for (i = 0; i < m->n; i++) {
		if (m->e[i].state == FL_PRESENT && m->e[i].ntags) {
			const fl_ent *c = &m->e[i];
			uint16_t tl;
			tc_str t;
			size_t j;

			memcpy(&tl, c->tn, 2);
			t.p = (const char *)c->tn + 2;
			t.len = tl;
			if (FB->clean(st, TC_CLEAN_MATCHING_ANY, &t, 1, err) != TC_OK) {
				fl_fail("clean(matching any) after the rebuild failed: %s", err);
			}
			for (j = 0; j < m->n; j++) {
				if (j != i && m->e[j].state == FL_PRESENT && carries(&m->e[j], c->tn + 2, tl)) {
					m->e[j].state = FL_ABSENT;
				}
			}
			m->e[i].state = FL_ABSENT;
			break;
		}
	}
	if (clean_old) {
		for (i = 0; i < m->n; i++) {
			if (m->e[i].state == FL_PRESENT && m->e[i].expire <= now + 5) {
				m->e[i].state = m->e[i].expire < now - 5 ? FL_ABSENT : FL_UNSURE;
			}
		}
		if (FB->clean(st, TC_CLEAN_OLD, NULL, 0, err) != TC_OK) {
			fl_fail("clean(old) after the rebuild failed: %s", err);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tc_set_log_sink(fz_quiet);
	verbose = getenv("TC_FUZZ_VERBOSE") != NULL;
	fz_workdir(dir, sizeof(dir), "file-log");
	atexit(cleanup);
	fz_seeds(write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fl_log logs[MAXLOGS];
	fl_model m;
	size_t nlogs, i, pos = 9;
	uint64_t damage = 0;
	uint32_t number = 0;
	unsigned counter = 0;
	char err[TC_ERRBUF];
	void *st;
	unsigned flags;

	if (size < 9) {
		return 0;
	}
	flags = data[0];
	memcpy(&damage, data + 1, 8);
	nlogs = (flags & 3) + 1;
	fl_problems = 0;
	fl_report = fz_fail;
	memset(&m, 0, sizeof(m));
	fl_empty_dir(dir);
	for (i = 0; i < nlogs; i++) {
		uint32_t prev = number, base = 1, obs = 0, obs_inv = 0;
		size_t blen = 0;
		unsigned b = 0;

		if (pos + 4 <= size) {
			number += 1 + data[pos] % 8;
			b = data[pos + 1];
			blen = (size_t)data[pos + 2] | (size_t)data[pos + 3] << 8;
			pos += 4;
		} else {
			number += 1;
			pos = size;
		}
		if (blen > size - pos) {
			blen = size - pos;
		}
		switch (b & 3) {
		case 1: base = number; break;
		case 2: base = prev ? prev : 1; break;
		case 3: base = number > 1 ? number - 1 : 1; break;
		}
		switch (b >> 2 & 3) {
		case 1: obs = prev; obs_inv = ~prev; break;
		case 2: obs = number; obs_inv = ~number; break;
		case 3: obs = prev; obs_inv = prev; break;
		}
		fl_log_init(&logs[i], number, data + pos, blen);
		logs[i].bad_header = (flags & 4) && i == nlogs - 1;
		fl_header(&logs[i], base, obs, obs_inv);
		fl_seal(&logs[i], damage, &counter);
		if (fl_write_log(dir, &logs[i]) != 0) {
			fz_fail("cannot write a log");
		}
		pos += blen;
	}
	fl_model_logs(&m, logs, nlogs);
	if (verbose) {
		size_t k, np = 0, na = 0;

		for (k = 0; k < m.n; k++) {
			np += m.e[k].state == FL_PRESENT;
			na += m.e[k].state == FL_ABSENT;
		}
		fprintf(stderr, "fuzz_file_log: %zu logs, %u records sealed, %zu ids: %zu present, %zu removed, "
		        "%zu unsure\n", nlogs, counter, m.n, np, na, m.n - np - na);
	}

	st = fl_open(dir, err);
	if (!st) {
		fl_fail("open (a rebuild from the logs) failed: %s", err);
	}
	fl_check(st, &m, "after the rebuild");
	if (flags & 8) {
		writes(st, &m, data, size, flags & 32);
		fl_check(st, &m, "after writes");
	}
	FB->close(st);
	tc_test_file_forget();
	if (flags & 16) {
		fl_unlink_index(dir);
		st = fl_open(dir, err);
		if (!st) {
			fl_fail("open (a second rebuild) failed: %s", err);
		}
		fl_check(st, &m, "after a second rebuild");
		FB->close(st);
		tc_test_file_forget();
	}
	for (i = 0; i < nlogs; i++) {
		free(logs[i].img);
	}
	fl_model_free(&m);
	return 0;
}
