/*
 * tc_twolevel.c: the TwoLevel engine. The fast level is the Shm engine,
 * the slow level any engine with an invalidation journal, both called
 * through their vtables; this file has no Zend API.
 *
 * The rule: once save(), remove() or clean() returned on one node, no other
 * node serves the superseded copy more than max_staleness seconds later.
 * Every write through TwoLevel appends a record to the slow level's capped
 * journal after the slow write. A node (every process on one fast segment)
 * keeps in its node state the last journal seq it applied and when the sync
 * that applied it started. A fast hit needs no round trip while that sync
 * started at most max_staleness ago; otherwise one process (flock try-lock)
 * reads the journal since its seq, applies the records to the fast level
 * and moves the time on; the others read the slow level meanwhile. A gap
 * (records trimmed, the journal flushed or recreated) empties the fast
 * level. A failed sync means the node cannot prove it is current: reads go
 * to the slow level (or, for stale_if_error seconds, to the fast copy,
 * counted). TECHNOTES.md ("TwoLevel") has the argument and the costs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tc_hash.h"
#include "tc_twolevel.h"
#include "tc_util.h"
#include "tc_lease.h"

#define TL_PENDING 64

typedef struct {
	const tc_backend *fast, *slow;
	const tc_journal_ops *j;
	void *fst, *sst;
	tc_tl_nodeh node;
	int64_t max_ns, stale_ns, keep;
	/* journal records whose append failed, retried before the next write */
	char *pending[TL_PENDING];
	size_t plen[TL_PENDING];
	int npending, pending_all;
	char pause[512];       /* test hook: TAGCACHE_TEST_TWOLEVEL_PAUSE */
	/* counters of this object */
	int64_t fast_hits, slow_hits, misses, fills, fills_skipped, fills_undone, slow_reads,
		journal_errors, known_absent, tombstones_kept, fill_reads;
	/* the slow level's load_tags (NULL: load, then metadata for a fill;
	 * test hook TAGCACHE_TEST_TWOLEVEL_FILL=metadata forces that) */
	int (*load_tags)(void *st, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx, char **data,
	                 size_t *len, tc_meta *meta, tc_emit_fn emit, void *ectx);
} tl_state;

enum { CUR_OK = 0, CUR_BEHIND, CUR_FAILED };

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define LD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

/* ------------------------------------------------------------ records */

/* [kind][clean mode][8 bytes: unix ms][id | (u16 len, name)...]: kinds
 * 'i', 't', 'a' (earlier builds; still applied). This build writes 'I',
 * 'T', 'A': the same with [8 bytes: node id][8 bytes: nonce] after the
 * time, so a node knows its own records (and, for a save, mode REC_SAVE,
 * which one its fast copy came from). */
#define REC_HDR 10
#define REC_HDR2 26
#define REC_SAVE 's'
/* An 'I' record appended in the same atomic step as its write (arm()):
 * its place in the journal is its write's place in the slow level's
 * order. Builds before it read REC_SAVE_ATOMIC as a remove (a miss). */
#define REC_SAVE_ATOMIC 'S'
#define REC_REMOVE_ATOMIC 'R'
#define REC_IS_SAVE(m) ((m) == REC_SAVE || (m) == REC_SAVE_ATOMIC)
#define REC_ATOMIC(m) ((m) == REC_SAVE_ATOMIC || (m) == REC_REMOVE_ATOMIC)

static char *rec_build(char kind, int mode, const tc_str *items, size_t n, uint64_t node, uint64_t nonce,
                       size_t *outlen)
{
	size_t len = REC_HDR2, i;
	char *r, *w;
	int64_t ms = real_ms();

	if (kind == 'I') {
		len += items[0].len;
	} else if (kind == 'T') {
		for (i = 0; i < n; i++) {
			len += 2 + items[i].len;
		}
	}
	r = malloc(len);
	if (!r) {
		return NULL;
	}
	r[0] = kind;
	r[1] = (char)mode;
	memcpy(r + 2, &ms, 8);
	memcpy(r + 10, &node, 8);
	memcpy(r + 18, &nonce, 8);
	w = r + REC_HDR2;
	if (kind == 'I') {
		memcpy(w, items[0].p, items[0].len);
	} else if (kind == 'T') {
		for (i = 0; i < n; i++) {
			uint16_t l = (uint16_t)items[i].len;

			memcpy(w, &l, 2);
			memcpy(w + 2, items[i].p, l);
			w += 2 + l;
		}
	}
	*outlen = len;
	return r;
}

static void pending_drop(tl_state *s)
{
	int i;

	for (i = 0; i < s->npending; i++) {
		free(s->pending[i]);
	}
	s->npending = 0;
	s->pending_all = 0;
}

/* Earlier records whose append failed; TC_OK once none is left. */
static int pending_flush(tl_state *s)
{
	if (s->pending_all) {
		size_t len;
		/* not this node's own record: the queued writes' fast effects are
		 * done, but "all" is more than they did, so every node applies it */
		char *r = rec_build('A', TC_CLEAN_ALL, NULL, 0, 0, 0, &len);
		tc_str rec;

		if (!r) {
			return TC_ERR;
		}
		rec.p = r;
		rec.len = len;
		if (s->j->append(s->sst, rec, s->keep) != TC_OK) {
			free(r);
			return TC_ERR;
		}
		free(r);
		pending_drop(s);   /* "everything" covers the queued ids */
		return TC_OK;
	}
	while (s->npending) {
		tc_str rec = {s->pending[0], s->plen[0]};

		if (s->j->append(s->sst, rec, s->keep) != TC_OK) {
			return TC_ERR;
		}
		free(s->pending[0]);
		memmove(s->pending, s->pending + 1, (size_t)(s->npending - 1) * sizeof(char *));
		memmove(s->plen, s->plen + 1, (size_t)(s->npending - 1) * sizeof(size_t));
		s->npending--;
	}
	return TC_OK;
}

/* Appends a record after a slow write; TC_ERR when it could not (then it
 * waits in this object's queue for the next write). */
static int journal(tl_state *s, char kind, int mode, const tc_str *items, size_t n, uint64_t nonce)
{
	size_t len;
	char *r = rec_build(kind, mode, items, n, LD(s->node.n->node_id), nonce, &len);
	tc_str rec;

	if (!r) {
		s->pending_all = 1;
		return TC_ERR;
	}
	if (pending_flush(s) == TC_OK) {
		rec.p = r;
		rec.len = len;
		if (s->j->append(s->sst, rec, s->keep) == TC_OK) {
			free(r);
			return TC_OK;
		}
	}
	s->journal_errors++;
	if (s->npending < TL_PENDING && !s->pending_all) {
		s->pending[s->npending] = r;
		s->plen[s->npending++] = len;
	} else {
		free(r);
		s->pending_all = 1;
	}
	return TC_ERR;
}

/* Arms the slow engine to append the record within its next write (one
 * atomic step: a process killed in between cannot leave the other nodes
 * unaware); returns the record, to give to journal_disarm() after the
 * write, or NULL (no such hook, or earlier records still queued: they go
 * first, through journal()). *done: whether the write appended it. */
static char *journal_arm(tl_state *s, char kind, int mode, const tc_str *items, size_t n, uint64_t nonce, int *done)
{
	size_t len;
	char *r;
	tc_str rec;

	*done = 0;
	if (!s->j->arm || s->npending || s->pending_all) {
		return NULL;
	}
	if (kind == 'I') {
		mode = mode == REC_SAVE ? REC_SAVE_ATOMIC : REC_REMOVE_ATOMIC;   /* used only if the write appends it */
	}
	r = rec_build(kind, mode, items, n, LD(s->node.n->node_id), nonce, &len);
	if (!r) {
		return NULL;
	}
	rec.p = r;
	rec.len = len;
	if (s->j->arm(s->sst, &rec, s->keep, done) != TC_OK) {
		s->j->arm(s->sst, NULL, 0, NULL);
		free(r);
		return NULL;
	}
	return r;
}

static void journal_disarm(tl_state *s, char *r)
{
	if (r) {
		s->j->arm(s->sst, NULL, 0, NULL);
		free(r);
	}
}

/* --------------------------------------------------------------- sync */

/* A save's word: (node-wide nonce << 24) | (pid & 0xffffff) (pid_max is at
 * most 2^22), one 64-bit store in a mark. The copy of save `have` may stay
 * when this node replays the record of save `rec` if it is that save, or a
 * later save of the same process (whose slow write came after rec's, since
 * a process writes in order and takes its nonce after the slow write; a
 * reused pid belongs to a process that started after the dead one ended). */
#define WORD_PID 0xffffffu
/* In a mark, set while the save's fast write is under way (the pid needs
 * 22 bits at most): such a mark vouches for no copy, so a save killed
 * between its mark and its fast write (which leaves the previous copy)
 * does not keep that copy past its record. */
#define WORD_PENDING (UINT64_C(1) << 23)

static uint64_t save_word(tc_tl_node *n)
{
	uint64_t nonce = ADD(n->nonce, 1) & ((UINT64_C(1) << 40) - 1);

	return (nonce << 24) | ((uint64_t)tc_getpid() & (WORD_PID >> 1));
}

/* A pending mark (WORD_PENDING) never matches: its pid field differs from
 * every record's. */
static int mark_supersedes(uint64_t have, uint64_t rec)
{
	return have && (have == rec || ((have & WORD_PID) == (rec & WORD_PID) && (have >> 24) > (rec >> 24)));
}

static tc_tl_mark *mark_of(tl_state *s, tc_str id, uint64_t *h)
{
	*h = tc_hash(id.p, id.len, 0);
	return &s->node.marks[*h & (s->node.nmarks - 1)];
}

/* A copy that is not a save's own (a fill, which may have overwritten a
 * newer save's copy on this node): no record of a save may keep it. Also
 * ends a tombstone. */
static void mark_clear(tl_state *s, tc_str id)
{
	uint64_t h;
	tc_tl_mark *mk = mark_of(s, id, &h);

	if (LD(mk->h) == h) {
		ST(mk->nonce, 0);
	}
}

/* Tombstones: a mark that says the id is absent from the slow level since
 * this node removed or cleaned it there, so a fast miss while the node is
 * current needs no slow read (stat known_absent). Two kinds:
 *
 * - timed (pid field 0, CLOCK_MONOTONIC ms in the rest): put over any
 *   mark. It lasts max_staleness and any record of the id that this node
 *   applies ends it (the replay of its own earlier save too), since a save
 *   of the id whose record was applied before it was put (a sync racing
 *   the remove or clean) would otherwise stay hidden.
 * - kept (pid field TOMB_KEEP, the nonce of save W in the rest): put by a
 *   compare-and-swap over the final mark of this node's save W, read before
 *   the slow remove or clean (before the fast listing of a clean, which
 *   found W's copy under the clean's tags: the slow clean removed W's
 *   entry), and only if no sync began from before that read until after the
 *   swap (tomb_sync_snap()). W's slow write came before the remove or clean
 *   (its mark is final only after its fast write), so the replay of W's own
 *   record leaves it (stat tombstones_kept); any other record of the id
 *   ends it, as any save of the id on this node does (it takes the slot),
 *   a fill (mark_clear) and a gap (every slot cleared). It lasts as long
 *   as the node is current, like a fast copy: no time limit.
 *
 * Either only turns a read into a miss. Every store of a mark's hash is
 * preceded by a store of its word that no swap expects (the writer's
 * pending word, or the timed tombstone), so a swap that expected W
 * succeeds only while the slot still holds W's id. */
#define TOMB_KEEP (UINT64_C(1) << 22)   /* a pid field no pid has (pid_max <= 2^22) */
/* A provisional tombstone (pid field TOMB_PROV | the cleaner's pid, the
 * nonce of save W above it): put by a clean by tag, by a swap from W's
 * final word, on an id whose copy its first fast clean removed, and made
 * kept (or timed) once the slow clean is done; a read of the id meanwhile
 * is a miss with no slow read while the cleaner lives (tomb_is()). */
#define TOMB_PROV (TOMB_KEEP | WORD_PENDING)

static int word_final_save(uint64_t w)
{
	uint64_t pid = w & WORD_PID;

	return pid && !(pid & WORD_PENDING) && pid != TOMB_KEEP;
}

static uint64_t tomb_keep_word(uint64_t w)
{
	return (w & ~(uint64_t)WORD_PID) | TOMB_KEEP;
}

static int word_prov(uint64_t w)
{
	return (w & TOMB_PROV) == TOMB_PROV;
}

static void tomb_store(tc_tl_mark *mk, uint64_t h, uint64_t word)
{
	ST(mk->nonce, word);   /* first: a swap that expected the previous save's word fails */
	ST(mk->h, h);
	ST(mk->nonce, word);
}

/* The id's final own-save word if the slot holds one (read as word, hash,
 * word: the same final word twice means no store of the hash in between),
 * a kept tombstone's word, or 0. */
static uint64_t mark_word_of(tc_tl_mark *mk, uint64_t h)
{
	uint64_t w1 = LD(mk->nonce), hh = LD(mk->h), w2 = LD(mk->nonce);

	if (w1 != w2 || hh != h || !(word_final_save(w1) || (w1 & WORD_PID) == TOMB_KEEP)) {
		return 0;
	}
	return w1;
}

/* No sync may apply a record between this snapshot (before the slow write
 * and the fast listing) and the kept tombstones' swap: a record applied
 * then (of a save that the remove or clean did not supersede) would have
 * nothing to end. A sync makes gen odd, then counts itself (syncs or
 * sync_failures), then makes gen even: UINT64_MAX while one runs. */
static uint64_t tomb_sync_snap(tc_tl_node *n)
{
	uint64_t c = LD(n->syncs) + LD(n->sync_failures);

	return LD(n->gen) & 1 ? UINT64_MAX : c;
}

static int tomb_sync_same(tc_tl_node *n, uint64_t snap)
{
	uint64_t g = LD(n->gen);

	return snap != UINT64_MAX && !(g & 1) && LD(n->syncs) + LD(n->sync_failures) == snap;
}

/* Puts the tombstone of one id whose mark read w before the slow write:
 * kept if w is the id's final own-save word and the swap succeeds, else
 * timed. Returns whether it was kept (then *undo gets the kept word). */
static int tomb_put(tc_tl_mark *mk, uint64_t h, uint64_t w, uint64_t timed, uint64_t *kept)
{
	if (w && word_prov(w)) {
		/* this clean's provisional tombstone over W's final mark
		 * (tomb_emit()): the swap proves the slot unchanged since W's
		 * word was read, as the swap from W below does */
		uint64_t want = w, tw = tomb_keep_word(w);

		if (LD(mk->h) == h
		    && __atomic_compare_exchange_n(&mk->nonce, &want, tw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			*kept = tw;
			return 1;
		}
	} else if (w && (w & WORD_PID) == TOMB_KEEP) {
		if (LD(mk->nonce) == w && LD(mk->h) == h) {
			*kept = 0;   /* still there: absent since, and still absent */
			return 0;
		}
	} else if (w && word_final_save(w)) {
		uint64_t want = w, tw = tomb_keep_word(w);

		if (__atomic_compare_exchange_n(&mk->nonce, &want, tw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			*kept = tw;
			return 1;
		}
	}
	tomb_store(mk, h, timed);
	*kept = 0;
	return 0;
}

/* A sync began since the snapshot: a kept tombstone becomes timed. */
static void tomb_unkeep(tc_tl_mark *mk, uint64_t kept, uint64_t timed)
{
	uint64_t want = kept;

	__atomic_compare_exchange_n(&mk->nonce, &want, timed, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static int tomb_is(tl_state *s, tc_str id)
{
	uint64_t h, w, now;
	tc_tl_mark *mk = mark_of(s, id, &h);

	w = LD(mk->nonce);
	if (!w || LD(mk->h) != h) {
		return 0;
	}
	if ((w & WORD_PID) == TOMB_KEEP) {
		return 1;
	}
	if (word_prov(w)) {
		/* a clean of this node is between its first fast clean and its
		 * tombstones: a miss while the cleaner lives (a read concurrent
		 * with the clean); one killed there leaves a slot that reads
		 * ask the slow level for again */
		pid_t pid = (pid_t)(w & (TOMB_KEEP - 1));

		return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
	}
	if ((w & WORD_PID) != 0) {
		return 0;
	}
	now = (uint64_t)(mono_ns() / 1000000) & ((UINT64_C(1) << 40) - 1);
	return now >= (w >> 24) && (int64_t)(now - (w >> 24)) * 1000000 < s->max_ns;
}

/* The ids a fast listing emits (hash, and the mark's word then: see
 * tomb_put()), to put tombstones on once the slow clean has succeeded. */
typedef struct {
	tl_state *s;
	uint64_t *h, *w;
	size_t n, cap;
} tomb_ctx;

static void tomb_emit(void *cp, const char *p, size_t len)
{
	tomb_ctx *t = cp;
	uint64_t h = tc_hash(p, len, 0);

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		uint64_t *nh = realloc(t->h, cap * sizeof(uint64_t)), *nw;

		if (!nh) {
			return;   /* fewer tombstones: only reads that ask the slow level */
		}
		t->h = nh;
		nw = realloc(t->w, cap * sizeof(uint64_t));
		if (!nw) {
			return;
		}
		t->w = nw;
		t->cap = cap;
	}
	{
		tc_tl_mark *mk = &t->s->node.marks[h & (t->s->node.nmarks - 1)];
		uint64_t w = mark_word_of(mk, h);

		if (w && word_final_save(w)) {
			/* the copy of W is gone: until the slow clean is done and the
			 * tombstone put, a read of the id on this node is a miss
			 * rather than a slow read (TECHNOTES, "Tombstones") */
			uint64_t want = w, pw = (w & ~(uint64_t)WORD_PID) | TOMB_PROV | ((uint64_t)tc_getpid() & (TOMB_KEEP - 1));

			w = __atomic_compare_exchange_n(&mk->nonce, &want, pw, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ? pw : 0;
		}
		t->w[t->n] = w;
	}
	t->h[t->n++] = h;
}

/* A clean whose slow clean failed: its provisional tombstones go (the
 * entries may still be in the slow level); the slot keeps no mark. */
static void tomb_unprov(tl_state *s, tomb_ctx *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		uint64_t want = t->w[i];

		if (want && word_prov(want)) {
			__atomic_compare_exchange_n(&s->node.marks[t->h[i] & (s->node.nmarks - 1)].nonce, &want, 0, 0,
			                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		}
	}
}

/* The clean's tombstones; snap: tomb_sync_snap() before the listing. */
static void tomb_apply(tl_state *s, tomb_ctx *t, uint64_t timed, uint64_t snap)
{
	size_t i, nkept = 0;

	for (i = 0; i < t->n; i++) {
		tc_tl_mark *mk = &s->node.marks[t->h[i] & (s->node.nmarks - 1)];
		uint64_t kept;

		if (tomb_put(mk, t->h[i], snap == UINT64_MAX ? 0 : t->w[i], timed, &kept)) {
			t->w[nkept] = kept;   /* only the kept ones, for the check below */
			t->h[nkept++] = t->h[i];
		}
	}
	if (nkept && !tomb_sync_same(s->node.n, snap)) {
		for (i = 0; i < nkept; i++) {
			tomb_unkeep(&s->node.marks[t->h[i] & (s->node.nmarks - 1)], t->w[i], timed);
		}
	}
}

static uint64_t tomb_word(void)
{
	uint64_t ms = (uint64_t)(mono_ns() / 1000000) & ((UINT64_C(1) << 40) - 1);

	return (ms ? ms : 1) << 24;
}

/* A sync's records, kept until the whole batch is read: an id record ('I',
 * 'i') followed in the same batch by another record of the same id is not
 * applied (stat `superseded`), since the later one decides the copy the
 * same way: it removes whatever copy the mark does not vouch for as its
 * own save's (or a later one of its process), and any such copy is newer
 * than the earlier record's write too. Without this, two processes of a
 * node that save one id (refills after a clean) lose the copy: the first
 * record finds the other's mark, removes the copy and clears the mark, and
 * the second finds no mark. The batch is published only as a whole
 * (synced_ns after the last record), so the order of its effects is seen
 * by no read. */
typedef struct {
	size_t off, len;
	uint64_t h;     /* id records: the id's hash (odd); 0: no id */
	int atomic;     /* appended with its write (REC_ATOMIC) */
} batch_rec;

typedef struct {
	char *buf;
	size_t len, cap;
	batch_rec *recs;
	size_t n, ncap;
	int oom;
} batch;

static size_t rec_hdr_of(const char *p, size_t len)
{
	if (len >= REC_HDR2 && (p[0] == 'I' || p[0] == 'T' || p[0] == 'A')) {
		return REC_HDR2;
	}
	return len >= REC_HDR && (p[0] == 'i' || p[0] == 't' || p[0] == 'a') ? REC_HDR : 0;
}

/* Room for `need` more bytes after the `len` used in a growable buffer
 * (doubling, from `first`): 0, or -1 when out of memory (left as it was). */
static int buf_room(char **buf, size_t *cap, size_t len, size_t need, size_t first)
{
	size_t c;
	char *nb;

	if (len + need <= *cap) {
		return 0;
	}
	c = (*cap ? *cap * 2 : first) + need;
	nb = realloc(*buf, c);
	if (!nb) {
		return -1;
	}
	*buf = nb;
	*cap = c;
	return 0;
}

static void batch_emit(void *cp, uint64_t seq, const char *p, size_t len)
{
	batch *b = cp;
	size_t hdr;

	(void)seq;
	if (b->oom) {
		return;
	}
	if (buf_room(&b->buf, &b->cap, b->len, len, 16384) != 0) {
		b->oom = 1;
		return;
	}
	if (b->n == b->ncap) {
		size_t ncap = b->ncap ? b->ncap * 2 : 256;
		batch_rec *nr = realloc(b->recs, ncap * sizeof(batch_rec));

		if (!nr) {
			b->oom = 1;
			return;
		}
		b->recs = nr;
		b->ncap = ncap;
	}
	memcpy(b->buf + b->len, p, len);
	b->recs[b->n].off = b->len;
	b->recs[b->n].len = len;
	hdr = rec_hdr_of(p, len);
	b->recs[b->n].h = hdr && (p[0] == 'I' || p[0] == 'i') && len > hdr ? tc_hash(p + hdr, len - hdr, 0) | 1 : 0;
	b->recs[b->n].atomic = p[0] == 'I' && REC_ATOMIC(p[1]);
	b->len += len;
	b->n++;
}

/* later[k] = 1 when an atomic id record of the same id follows record k
 * in the batch (walking from the end, a table of the atomic id records
 * seen, by id hash, ids compared). Only an atomic one decides: an append
 * that followed its write may sit after the record of a write that came
 * later in the slow level. Two ids of one hash: the earlier records of
 * the second are applied. NULL: out of memory (every record applied). */
static int same_id(const batch *b, size_t x, size_t y)
{
	const char *p = b->buf + b->recs[x].off, *q = b->buf + b->recs[y].off;
	size_t hp = rec_hdr_of(p, b->recs[x].len), hq = rec_hdr_of(q, b->recs[y].len);

	return b->recs[x].len - hp == b->recs[y].len - hq && memcmp(p + hp, q + hq, b->recs[x].len - hp) == 0;
}

static unsigned char *batch_later(const batch *b)
{
	size_t cap = 64, k, *at;
	uint64_t *key;
	unsigned char *later;

	while (cap < b->n * 2) {
		cap <<= 1;
	}
	later = calloc(b->n ? b->n : 1, 1);
	key = calloc(cap, sizeof(uint64_t));
	at = malloc(cap * sizeof(size_t));
	if (!later || !key || !at) {
		free(key);
		free(at);
		free(later);
		return NULL;
	}
	for (k = b->n; k-- > 0;) {
		uint64_t h = b->recs[k].h;
		size_t i;

		if (!h) {
			continue;
		}
		for (i = (size_t)h & (cap - 1); key[i] && key[i] != h; i = (i + 1) & (cap - 1)) {
		}
		if (key[i] == h) {
			later[k] = same_id(b, k, at[i]);
		} else if (b->recs[k].atomic) {
			key[i] = h;
			at[i] = k;
		}
	}
	free(key);
	free(at);
	return later;
}

typedef struct {
	tl_state *s;
	int64_t now_ms;
	uint64_t node_id;
	int bad;
} apply_ctx;

static void apply_one(void *cp, uint64_t seq, const char *p, size_t len)
{
	apply_ctx *a = cp;
	tl_state *s = a->s;
	tc_tl_node *n = s->node.n;
	int64_t ms;

	size_t hdr = REC_HDR;
	char kind;

	(void)seq;
	tc_crash_point("twolevel_apply");   /* a syncer killed in its sync (tests) */
	if (len < REC_HDR) {
		a->bad = 1;
		return;
	}
	memcpy(&ms, p + 2, 8);
	ADD(n->invalidations, 1);
	ST(n->lag_ms_last, (uint64_t)(a->now_ms > ms ? a->now_ms - ms : 0));
	kind = p[0];
	if (kind == 'I' || kind == 'T' || kind == 'A') {
		uint64_t node, nonce;

		if (len < REC_HDR2) {
			a->bad = 1;
			return;
		}
		memcpy(&node, p + 10, 8);
		memcpy(&nonce, p + 18, 8);
		hdr = REC_HDR2;
		kind = (char)(kind - 'A' + 'a');
		if (node && node == a->node_id) {
			/* this node's own write: its fast level had that effect before
			 * the record was appended (TECHNOTES, "own writes"); a save's
			 * copy stays only if it is the copy of that very save */
			int skip = 1;

			if (kind == 'i' && REC_IS_SAVE(p[1])) {
				tc_str id = {p + hdr, len - hdr};
				uint64_t h = tc_hash(id.p, id.len, 0);
				tc_tl_mark *mk = &s->node.marks[h & (s->node.nmarks - 1)];

				uint64_t have = LD(mk->nonce);

				skip = LD(mk->h) == h && mark_supersedes(have, nonce);
				if (!skip && LD(mk->h) == h && (have & WORD_PID) == TOMB_KEEP && have >> 24 == nonce >> 24) {
					/* a kept tombstone of a remove or clean of this node
					 * that superseded this very save: it stays */
					skip = 1;
					s->tombstones_kept++;
				}
			}
			if (skip) {
				ADD(n->own_skipped, 1);
				return;
			}
		}
	}
	if (kind == 'i') {
		tc_str id = {p + hdr, len - hdr};

		if (id.len) {
			s->fast->remove(s->fst, id);
			mark_clear(s, id);
		}
	} else if (kind == 't') {
		tc_str tags[TC_TAGS_MAX];
		size_t k = 0, off = hdr;
		char err[TC_ERRBUF];
		int mode = (unsigned char)p[1];

		while (off + 2 <= len && k < TC_TAGS_MAX) {
			uint16_t l;

			memcpy(&l, p + off, 2);
			if (off + 2 + l > len) {
				break;
			}
			tags[k].p = p + off + 2;
			tags[k++].len = l;
			off += 2 + (size_t)l;
		}
		if (off != len || mode < TC_CLEAN_MATCHING || mode > TC_CLEAN_MATCHING_ANY) {
			a->bad = 1;
			return;
		}
		err[0] = '\0';
		s->fast->clean(s->fst, (tc_clean_mode)mode, tags, k, err);
	} else if (kind == 'a') {
		char err[TC_ERRBUF];

		err[0] = '\0';
		s->fast->clean(s->fst, TC_CLEAN_ALL, NULL, 0, err);
	} else {
		a->bad = 1;
	}
}

static int do_sync(tl_state *s)
{
	tc_tl_node *n = s->node.n;
	int64_t start = mono_ns();
	uint64_t applied = LD(n->applied), epoch = LD(n->epoch), head = 0, ep = 0;
	apply_ctx a = {s, real_ms(), LD(n->node_id), 0};
	int r;

	if (LD(n->gen) & 1) {
		/* odd while nobody else can be syncing (we hold the try-lock): a
		 * syncer died inside its sync (SIGKILL); even again, or every
		 * fill of the node would be skipped from now on */
		ADD(n->gen, 1);
	}
	{
		batch b = {0};
		unsigned char *later = NULL;
		size_t k;

		/* gen stays even during the journal read (the round trip, most of
		 * a sync's time): only applying records can remove a copy, so
		 * only the apply needs to be bracketed. A fill or save that read
		 * g0 before the odd bump below finds gen changed at its check
		 * (whatever the read returned), one that read it after the even
		 * bump began after every removal of this batch */
		r = s->j->read(s->sst, applied, batch_emit, &b, &head, &ep);
		if (r != TC_ERR && b.oom) {
			r = TC_ERR;   /* the batch could not be kept: a failed sync, retried */
		}
		if (r != TC_ERR && b.n) {
			later = batch_later(&b);   /* NULL: every record is applied */
		}
		ADD(n->gen, 1);   /* odd: fills and saves that read gen before now drop their copies */
		for (k = 0; r != TC_ERR && k < b.n; k++) {
			if (later && later[k]) {
				const char *p = b.buf + b.recs[k].off;
				int64_t ms;

				memcpy(&ms, p + 2, 8);
				ADD(n->invalidations, 1);
				ADD(n->superseded, 1);
				ST(n->lag_ms_last, (uint64_t)(a.now_ms > ms ? a.now_ms - ms : 0));
				continue;
			}
			apply_one(&a, 0, b.buf + b.recs[k].off, b.recs[k].len);
		}
		free(later);
		free(b.recs);
		free(b.buf);
	}
	if (r == TC_ERR) {
		ADD(n->sync_failures, 1);   /* before gen is even again (tomb_sync_snap) */
		ADD(n->gen, 1);
		if (!LD(n->fail_since_ns)) {
			ST(n->fail_since_ns, start);
		}
		return CUR_FAILED;
	}
	if (r == TC_MISS || a.bad || ep != epoch || head < applied) {
		char err[TC_ERRBUF];

		err[0] = '\0';
		s->fast->clean(s->fst, TC_CLEAN_ALL, NULL, 0, err);
		memset(s->node.marks, 0, s->node.nmarks * sizeof(tc_tl_mark));   /* tombstones we cannot vouch for */
		ADD(n->gaps, 1);
	}
	ST(n->applied, head);
	ST(n->epoch, ep);
	ADD(n->syncs, 1);   /* before gen is even again (tomb_sync_snap) */
	ADD(n->gen, 1);
	ST(n->fail_since_ns, 0);
	ST(n->synced_ns, start);
	return CUR_OK;
}

static int fresh(tl_state *s, int64_t now)
{
	int64_t synced = LD(s->node.n->synced_ns);

	return synced > 0 && synced <= now && now - synced < s->max_ns;
}

/* Whether a fast hit may be served now. The process that gets the node's
 * try-lock syncs once the last sync is half the bound old (refresh ahead):
 * the other processes go on serving fast hits meanwhile, since the copy is
 * still within the bound; only past the whole bound do they read the slow
 * level while one process syncs. */
static int current(tl_state *s)
{
	int64_t now = mono_ns(), synced = LD(s->node.n->synced_ns);
	int ok = synced > 0 && synced <= now && now - synced < s->max_ns, r;

	if (ok && now - synced < s->max_ns / 2) {
		return CUR_OK;
	}
	if (!tc_tl_node_trylock(&s->node)) {
		return ok ? CUR_OK : CUR_BEHIND;
	}
	now = mono_ns();
	synced = LD(s->node.n->synced_ns);
	if (s->max_ns > 0 && synced > 0 && synced <= now && now - synced < s->max_ns / 2) {
		r = CUR_OK;   /* another process synced while we waited */
	} else {
		r = do_sync(s);
		if (r == CUR_FAILED && fresh(s, mono_ns())) {
			r = CUR_OK;   /* failed ahead of time: the last good sync still covers this hit */
		}
	}
	tc_tl_node_unlock(&s->node);
	return r;
}

/* ------------------------------------------------------------- engine */

static void tl_close(void *sp);

static int tl_open(void **state, const void *config, char *err)
{
	const tc_twolevel_config *cfg = config;
	tl_state *s;
	tc_shm *fs;
	const char *pause;
	int r;

	if (!cfg->slow) {
		snprintf(err, TC_ERRBUF, "TwoLevel: no slow level (option \"slow_backend\")");
		return TC_ERR_CONFIG;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, TC_ERRBUF, "out of memory");
		return TC_ERR;
	}
	s->fast = &tc_backend_shm;
	s->slow = cfg->slow;
	s->j = tc_journal_for(cfg->slow);
	if (!s->j) {
		snprintf(err, TC_ERRBUF, "TwoLevel: the %s engine has no invalidation journal in this build",
		         cfg->slow->name);
		free(s);
		return TC_ERR_CONFIG;
	}
	s->max_ns = (int64_t)(cfg->max_staleness * 1e9);
	s->stale_ns = (int64_t)(cfg->stale_if_error * 1e9);
	s->keep = cfg->journal_size;
	s->load_tags = s->slow->load_tags;
	pause = getenv("TAGCACHE_TEST_TWOLEVEL_FILL");
	if (pause && strcmp(pause, "metadata") == 0) {
		s->load_tags = NULL;
	}
	pause = getenv("TAGCACHE_TEST_TWOLEVEL_PAUSE");
	if (pause && *pause) {
		snprintf(s->pause, sizeof(s->pause), "%s", pause);
	}
	r = s->fast->open(&s->fst, &cfg->fast_cfg, err);
	if (r != TC_OK) {
		char msg[TC_ERRBUF];

		snprintf(msg, sizeof(msg), "TwoLevel fast level: %s", err);
		memcpy(err, msg, TC_ERRBUF);
		s->fst = NULL;
		tl_close(s);
		return r;
	}
	r = s->slow->open(&s->sst, cfg->slow_cfg, err);
	if (r != TC_OK) {
		char msg[TC_ERRBUF];

		snprintf(msg, sizeof(msg), "TwoLevel slow level: %s", err);
		memcpy(err, msg, TC_ERRBUF);
		s->sst = NULL;
		tl_close(s);
		return r;
	}
	fs = s->fst;
	if (tc_tl_node_open(fs->m->path, (uint64_t)fs->m->ino, fs->m->nslots, cfg->fast_cfg.mode & 0777,
	                    cfg->fast_cfg.huge_pages, &s->node, err) != TC_OK) {
		tl_close(s);
		return TC_ERR;
	}
	*state = s;
	return TC_OK;
}

static void tl_close(void *sp)
{
	tl_state *s = sp;

	if (!s) {
		return;
	}
	if (s->npending || s->pending_all) {
		pending_flush(s);   /* a last try; what is left is lost (TECHNOTES) */
	}
	pending_drop(s);
	if (s->fst) {
		s->fast->close(s->fst);
	}
	if (s->sst) {
		s->slow->close(s->sst);
	}
	free(s);
}

/* test hook: wait between a slow read and its fill until told to go */
static void pause_point(tl_state *s)
{
	char ready[600], go[600];
	int i, fd;

	if (!s->pause[0]) {
		return;
	}
	snprintf(ready, sizeof(ready), "%s.ready", s->pause);
	snprintf(go, sizeof(go), "%s.go", s->pause);
	fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
	}
	for (i = 0; i < 1000 && access(go, F_OK) != 0; i++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	unlink(go);
}

typedef struct {
	char *buf;
	size_t len, cap;
	size_t n;
	int oom;
} tagbuf;

static void tag_collect(void *cp, const char *p, size_t len)
{
	tagbuf *b = cp;

	if (b->oom || len > 0xffff) {
		b->oom = 1;
		return;
	}
	if (buf_room(&b->buf, &b->cap, b->len, len + 2, 256) != 0) {
		b->oom = 1;
		return;
	}
	{
		uint16_t l = (uint16_t)len;

		memcpy(b->buf + b->len, &l, 2);
		memcpy(b->buf + b->len + 2, p, len);
	}
	b->len += 2 + len;
	b->n++;
}

/* A fill's word, put in the id's mark before its slow read: a pending
 * word (it vouches for no copy, and no swap expects it). A save of the id
 * on this node whose slow write comes after that read replaces it with
 * its own pending word before its fast write, and the fill's copy lands
 * only while the fill's word is still there (tc_shm_save_if: asked under
 * the fast level's write lock, which that save takes after its mark): so
 * a fill never lands over a newer save's copy, and one killed right after
 * its fast write leaves a word that vouches for nothing (with a plain
 * write and the mark cleared after it, such a fill left the newer save's
 * final mark vouching for its older copy). Also ends a tombstone of the
 * id, as a fill always did. */
typedef struct {
	tc_tl_node *n;
	tc_tl_mark *mk;
	uint64_t h, w, g0;
	uint64_t fin;   /* the word the mark gets once the copy landed (fill_unmark()) */
} fill_word;

static void fill_mark(tl_state *s, tc_str id, fill_word *fw)
{
	uint64_t w1, hh, w2, pid;

	fw->n = s->node.n;
	fw->mk = mark_of(s, id, &fw->h);
	w1 = LD(fw->mk->nonce);
	hh = LD(fw->mk->h);
	w2 = LD(fw->mk->nonce);
	fw->w = save_word(fw->n) | WORD_PENDING;
	fw->fin = fw->w & ~WORD_PENDING;
	pid = w1 & WORD_PID & ~WORD_PENDING;
	if (w1 == w2 && hh == fw->h && pid && !(w1 & TOMB_KEEP) && pid != (fw->w & WORD_PID & ~WORD_PENDING)) {
		/* another process's word of the id, pending or final (a save of it
		 * that dropped its copy, or a fill): taken after that process's
		 * earlier writes and stored after them (a save's after its own slow
		 * write too), so before this fill's slow read. Its final form
		 * vouches for the copy at the replay of that process's records up
		 * to that word, which are the ones likely still to come */
		fw->fin = w1 & ~WORD_PENDING;
	}
	ST(fw->mk->nonce, fw->w);   /* first: see "kept" tombstones (tomb_put) */
	ST(fw->mk->h, fw->h);
	ST(fw->mk->nonce, fw->w);
}

/* Under the fast level's lock: no save of the id took the mark since the
 * fill's word, and no invalidation was applied on this node since g0. */
static int fill_may_land(void *ctx)
{
	const fill_word *fw = ctx;

	return LD(fw->mk->h) == fw->h && LD(fw->mk->nonce) == fw->w && LD(fw->n->gen) == fw->g0;
}

/* After the copy landed (and no sync began since g0): the mark made final
 * (fw->fin: the fill's own word, or the word of another process that the
 * fill found there), if it still holds the fill's word (a save since has
 * its own), so the replay of the save records of that word's process up
 * to that word leaves the copy: the word was taken after every such
 * save's slow write had returned (one process writes in order; a save
 * takes its word before its slow write) and was in the slot before the
 * fill's slow read, so the copy is no older than any of them. Records of
 * other processes and nodes, and later saves of that process, still
 * remove it (mark_supersedes()). Not once a slow save of the node failed
 * (save_failed): a save that timed out may still run later, record
 * included, with a smaller word. final = 0: back to no word. */
static void fill_unmark(fill_word *fw, int final)
{
	uint64_t want = fw->w;

	if (LD(fw->mk->h) == fw->h) {
		__atomic_compare_exchange_n(&fw->mk->nonce, &want, final ? fw->fin : 0, 0, __ATOMIC_SEQ_CST,
		                            __ATOMIC_SEQ_CST);
	}
}

/* A slow hit installed in the fast level with the tags in tb (collected
 * by tag_collect) and the slow entry's expire and mtime (meta), unless an
 * invalidation was applied on this node since g0 (read before the slow
 * read) or a save of the id took the mark since the fill's word (fw, put
 * before the slow read). Frees tb. */
static void fill_tagged(tl_state *s, tc_str id, const char *data, size_t len, const tc_meta *meta, tagbuf *tb,
                        fill_word *fw)
{
	uint64_t g0 = fw->g0;
	tc_tl_node *n = s->node.n;
	tc_str *tags = NULL, val = {data, len};
	int64_t expire = meta->expire;
	size_t off, k;
	char err[TC_ERRBUF];
	int r;

	if (tb->oom) {
		free(tb->buf);
		s->fills_skipped++;
		return;
	}
	if (expire != TC_EXPIRE_NEVER && expire <= (int64_t)time(NULL)) {
		free(tb->buf);
		return;   /* expired (a load with allow_expired): not worth a copy */
	}
	pause_point(s);
	if (LD(n->gen) != g0) {
		free(tb->buf);
		s->fills_skipped++;
		return;
	}
	tags = malloc((tb->n ? tb->n : 1) * sizeof(tc_str));
	if (!tags) {
		free(tb->buf);
		return;
	}
	for (off = 0, k = 0; k < tb->n; k++) {
		uint16_t l;

		memcpy(&l, tb->buf + off, 2);
		tags[k].p = tb->buf + off + 2;
		tags[k].len = l;
		off += 2 + (size_t)l;
	}
	err[0] = '\0';
	/* the slow entry's mtime: test() of the copy says what getMetadatas() does */
	r = tc_shm_save_if(s->fst, id, val, tags, tb->n, expire, meta->mtime, fill_may_land, fw, err);
	if (r == TC_MISS) {
		s->fills_skipped++;   /* a save of the id, or an invalidation, since */
	} else if (r != TC_OK) {
		s->fast->remove(s->fst, id);
	} else if (tc_crash_point("twolevel_fill_written"),   /* a filler killed right after its fast write (tests) */
	           LD(n->gen) != g0) {
		/* a sync began between the check and the save: it may have removed
		 * this id before the copy landed */
		fill_unmark(fw, 0);
		s->fast->remove(s->fst, id);
		s->fills_undone++;
	} else {
		/* a sync that begins from here on applies what came after: a
		 * record of another process or node, or a later one of this
		 * process, removes the copy whether or not the word is final */
		fill_unmark(fw, !LD(n->save_failed));
		s->fills++;
	}
	free(tags);
	free(tb->buf);
}

/* A slow hit read by load() (a slow engine without load_tags): its tags
 * need one more read, metadata(), before the fill. */
static void fill(tl_state *s, tc_str id, const char *data, size_t len, const tc_meta *meta, fill_word *fw)
{
	uint64_t g0 = fw->g0;
	tagbuf tb = {0};
	tc_meta m2;
	int64_t expire = meta->expire;

	if (g0 & 1) {
		s->fills_skipped++;
		return;
	}
	/* the tags of the entry, so a clean by tag elsewhere reaches the copy */
	s->fill_reads++;
	if (s->slow->metadata(s->sst, id, &m2, tag_collect, &tb) != TC_OK) {
		free(tb.buf);
		s->fills_skipped++;
		return;
	}
	if (m2.expire < expire) {
		expire = m2.expire;
	}
	m2.expire = expire;
	m2.mtime = meta->mtime;
	fill_tagged(s, id, data, len, &m2, &tb, fw);
}

static int tl_load(void *sp, tc_str id, int allow_expired, tc_alloc_fn alloc, void *ctx, char **data,
                   size_t *len, tc_meta *meta)
{
	tl_state *s = sp;
	tc_tl_node *n = s->node.n;
	int cur = current(s), r;
	uint64_t g0;
	fill_word fw;

	if (cur == CUR_OK) {
		r = s->fast->load(s->fst, id, allow_expired, alloc, ctx, data, len, meta);
		if (r == TC_OK) {
			s->fast_hits++;
			return r;
		}
		if (!allow_expired && tomb_is(s, id)) {
			s->misses++;
			s->known_absent++;
			return TC_MISS;
		}
	} else {
		tc_meta fm;

		if (s->fast->load(s->fst, id, allow_expired, NULL, NULL, NULL, NULL, &fm) == TC_OK) {
			int64_t fail = LD(n->fail_since_ns), synced = LD(n->synced_ns), now = mono_ns();

			if (cur == CUR_FAILED && s->stale_ns > 0 && fail && synced > 0
			    && now - synced < s->max_ns + s->stale_ns) {
				r = s->fast->load(s->fst, id, allow_expired, alloc, ctx, data, len, meta);
				if (r == TC_OK) {
					char err[TC_ERRBUF];

					if (s->slow->failure) {
						s->slow->failure(s->sst, err);   /* served: logged, not raised */
					}
					ADD(n->stale_served, 1);
					return r;
				}
			}
			ADD(n->stale_refused, 1);
		}
		s->slow_reads++;
	}
	g0 = LD(n->gen);
	fw.g0 = g0;
	if (data && !(g0 & 1)) {
		fill_mark(s, id, &fw);   /* before the slow read */
	}
	if (data && s->load_tags && !(g0 & 1)) {
		/* the value and its tags in one read (one round trip) */
		tagbuf tb = {0};

		r = s->load_tags(s->sst, id, allow_expired, alloc, ctx, data, len, meta, tag_collect, &tb);
		if (r != TC_OK) {
			free(tb.buf);
			s->misses++;
			return r;
		}
		s->slow_hits++;
		fill_tagged(s, id, *data, *len, meta, &tb, &fw);
		return TC_OK;
	}
	r = s->slow->load(s->sst, id, allow_expired, alloc, ctx, data, len, meta);
	if (r != TC_OK) {
		s->misses++;
		return r;
	}
	s->slow_hits++;
	if (data) {
		fill(s, id, *data, *len, meta, &fw);
	}
	return TC_OK;
}

/* After a slow remove or clean, before the fast one: fills and saves of
 * this node that began before it drop their copies (their gen check), so
 * the node need not apply its own record again. +2 keeps the parity.
 * First it is noted in the node's ring (what it removed: an id, or a
 * clean mode and tags), so that a save that overlapped it drops its copy
 * only when it may concern the save's id (save_may_stand()). */
#define TL_LOCAL_ID 0xffu

#define TL_LOCAL_BUSY UINT64_MAX   /* a note's seq while its writer fills it in */

static void local_note(tl_state *s, uint64_t what, const tc_str *items, size_t n)
{
	tc_tl_node *nd = s->node.n;
	size_t i;
	int tries;

	if ((what & 0xff) != TL_LOCAL_ID && n > TC_TL_LRING_TAGS) {
		what = TC_CLEAN_ALL;   /* too many tags to note: as if it removed everything */
		n = 0;
	}
	/* a slot of its own (one that another writer is filling in is
	 * skipped): its writer alone fills it in, so a reader that finds the
	 * same seq before and after reading it read one note */
	for (tries = 0; tries < 4; tries++) {
		tc_tl_local *l = &nd->lring[ADD(nd->lring_head, 1) % TC_TL_LRING];
		uint64_t old = LD(l->seq);

		if (old == TL_LOCAL_BUSY
		    || !__atomic_compare_exchange_n(&l->seq, &old, TL_LOCAL_BUSY, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			continue;
		}
		ST(l->what, what | (uint64_t)n << 8);
		for (i = 0; i < n; i++) {
			ST(l->h[i], tc_hash(items[i].p, items[i].len, 0));
		}
		/* its number is the value of gen its own +2 makes */
		ST(l->seq, ADD(nd->gen, 2));
		return;
	}
	ADD(nd->gen, 2);   /* no note: the saves that overlap it drop their copies */
}

static void local_bump(tl_state *s, tc_clean_mode mode, const tc_str *tags, size_t ntags)
{
	local_note(s, (uint64_t)mode, tags, ntags);
}

static void local_bump_id(tl_state *s, tc_str id)
{
	local_note(s, TL_LOCAL_ID, &id, 1);
}

/* Whether local entry l (what, hashes) may have removed an entry with id
 * hash hid and tags (hashes th, nt of them): yes unless it provably did
 * not. A hash that two names share only makes it say yes. */
static int local_may_concern(uint64_t what, const uint64_t *lh, uint64_t hid, const uint64_t *th, size_t nt)
{
	size_t n = (size_t)(what >> 8), i, k, found = 0;
	unsigned mode = (unsigned)(what & 0xff);

	if (mode == TL_LOCAL_ID) {
		return n != 1 || lh[0] == hid;
	}
	if ((mode != TC_CLEAN_MATCHING && mode != TC_CLEAN_MATCHING_ANY) || n == 0 || n > TC_TL_LRING_TAGS) {
		return 1;   /* all, old, notMatching: may concern any entry */
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < nt && th[k] != lh[i]; k++) {
		}
		found += k < nt;
	}
	return mode == TC_CLEAN_MATCHING ? found == n : found > 0;
}

/* Whether a save's fast copy, written after g0 was read (before the slow
 * write), may stand. Every change of gen since g0 must be a noted remove
 * or clean of this node (+2 each, its note numbered with the gen value it
 * made): a sync (+1 twice), a syncer that died, or a remove or clean of a
 * build without notes leaves more change than the notes explain, and the
 * copy is dropped as before. Of the noted ones, none may concern the id
 * or its tags. Why that is enough: a remove or clean whose slow write came
 * before this save's is older (the copy is newer); one whose slow write
 * came after it made its +2 after g0. If the +2 came before the read of
 * gen here, its note (published right after it, before its second fast
 * step) is counted and examined, or, not yet published or overwritten, is
 * missing from the count (dropped); if after, its second fast step comes
 * after this fast write and removes the copy when it concerns it. */
static int save_may_stand(tl_state *s, uint64_t g0, tc_str id, const tc_str *tags, size_t ntags)
{
	tc_tl_node *n = s->node.n;
	uint64_t g = LD(n->gen), th[TC_TAGS_MAX], hid;
	size_t i, k, seen = 0;

	if (g == g0) {
		return 1;
	}
	if (((g0 | g) & 1) || g < g0 || g - g0 > 2 * TC_TL_LRING || ntags > TC_TAGS_MAX) {
		return 0;
	}
	hid = tc_hash(id.p, id.len, 0);
	for (i = 0; i < ntags; i++) {
		th[i] = tc_hash(tags[i].p, tags[i].len, 0);
	}
	for (k = 0; k < TC_TL_LRING; k++) {
		tc_tl_local *l = &n->lring[k];
		uint64_t e = LD(l->seq), what, lh[TC_TL_LRING_TAGS];
		size_t j, ln;

		if (e <= g0 || e > g) {
			continue;
		}
		what = LD(l->what);
		ln = (size_t)(what >> 8) < TC_TL_LRING_TAGS ? (size_t)(what >> 8) : TC_TL_LRING_TAGS;
		for (j = 0; j < ln; j++) {
			lh[j] = LD(l->h[j]);
		}
		if (LD(l->seq) != e || local_may_concern(what, lh, hid, th, ntags)) {
			return 0;
		}
		seen++;
	}
	return 2 * seen == g - g0;
}

static int tl_save(void *sp, tc_str id, tc_str data, const tc_str *tags, size_t ntags, int64_t expire,
                   char *err)
{
	tl_state *s = sp;
	tc_tl_node *n = s->node.n;
	uint64_t g0 = LD(n->gen), nonce, h;
	tc_tl_mark *mk;
	char ferr[TC_ERRBUF];
	int jdone, r;
	char *jr;

	/* the word before the slow write (so the record can go with it); one
	 * process still takes its words in the order of its slow writes */
	nonce = save_word(n);
	jr = journal_arm(s, 'I', REC_SAVE, &id, 1, nonce, &jdone);
	r = s->slow->save(s->sst, id, data, tags, ntags, expire, err);
	journal_disarm(s, jr);
	if (r != TC_OK) {
		if (!LD(n->save_failed)) {
			ST(n->save_failed, 1);   /* no fill makes its word final from now on (fill_unmark()) */
		}
		/* the slow level refused: whatever it holds, no copy here, and no
		 * tombstone either (it may have written the entry) */
		s->fast->remove(s->fst, id);
		mark_clear(s, id);
		return r;
	}
	if (!jdone && journal(s, 'I', REC_SAVE, &id, 1, nonce) != TC_OK) {
		s->fast->remove(s->fst, id);
		mark_clear(s, id);   /* the slow level holds it now: no tombstone */
		if (!*err) {
			snprintf(err, TC_ERRBUF, "TwoLevel: saved, but the invalidation journal could not be written");
		}
		return TC_ERR;
	}
	/* the mark first, pending: from now on no record keeps the id's copy
	 * (the previous one, until the fast write lands: a process killed in
	 * between leaves it, and the mark must not vouch for it), and a fill
	 * that lands after the fast write clears it (mark_clear) */
	tc_crash_point("twolevel_save_slow");   /* a saver killed after its slow write, before its mark (tests) */
	mk = mark_of(s, id, &h);
	ST(mk->nonce, nonce | WORD_PENDING);   /* first: see "kept" tombstones (tomb_put) */
	ST(mk->h, h);
	ST(mk->nonce, nonce | WORD_PENDING);
	tc_crash_point("twolevel_save_marked");   /* a saver killed between its mark and its fast write (tests) */
	ferr[0] = '\0';
	if ((g0 & 1) || s->fast->save(s->fst, id, data, tags, ntags, expire, ferr) != TC_OK
	    || !save_may_stand(s, g0, id, tags, ntags)) {
		/* a full fast level only costs a miss; a sync since g0, or a
		 * local remove or clean since that may concern the id or its
		 * tags, may have missed this copy, and so may a sync that was
		 * running at g0 (odd) and still is: it may have read the journal
		 * after the slow write and applied a later record of the id
		 * before this copy lands */
		s->fast->remove(s->fst, id);
	} else {
		/* this copy is the one of record `nonce`: that record, when this
		 * node replays it, leaves it; any other record of the id removes
		 * it. Only if the mark is still ours and pending: a fill that
		 * overwrote the copy since has cleared it (a plain store here
		 * would make the mark vouch for the fill's older value), as has
		 * a replay of a record of the id, and another save or a
		 * tombstone has taken the slot. */
		uint64_t want = nonce | WORD_PENDING;

		if (!__atomic_compare_exchange_n(&mk->nonce, &want, nonce, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			/* the slot changed since the pending mark: another save of
			 * this node took it (its fast write may have come before this
			 * one while its slow write came after: this copy would then
			 * be older than the slow level's, under a mark that vouches
			 * for it), or a fill, a replay or a tombstone cleared it */
			s->fast->remove(s->fst, id);
		}
	}
	return TC_OK;
}

static int tl_remove(void *sp, tc_str id)
{
	tl_state *s = sp;
	int jdone, r;
	char *jr;
	uint64_t snap, w, h, kept;
	tc_tl_mark *mk;

	/* fast first too: a process killed after the slow write leaves no copy
	 * on its own node (whose records of its own writes it skips) */
	s->fast->remove(s->fst, id);
	/* before the slow write: whose save the remove supersedes (tomb_put) */
	snap = tomb_sync_snap(s->node.n);
	mk = mark_of(s, id, &h);
	w = snap == UINT64_MAX ? 0 : mark_word_of(mk, h);
	jr = journal_arm(s, 'I', 0, &id, 1, 0, &jdone);
	r = s->slow->remove(s->sst, id);
	journal_disarm(s, jr);
	local_bump_id(s, id);
	if (r != TC_ERR) {
		uint64_t timed = tomb_word();

		if (tomb_put(mk, h, w, timed, &kept) && !tomb_sync_same(s->node.n, snap)) {
			tomb_unkeep(mk, kept, timed);
		}
	}
	s->fast->remove(s->fst, id);   /* a fill or save of this node in between */
	if (r == TC_ERR) {
		return r;
	}
	if (!jdone && journal(s, 'I', 0, &id, 1, 0) != TC_OK) {
		return TC_ERR;
	}
	return r;
}

static int tl_clean(void *sp, tc_clean_mode mode, const tc_str *tags, size_t ntags, char *err)
{
	tl_state *s = sp;
	char ferr[TC_ERRBUF];
	tomb_ctx t = {s, NULL, NULL, 0, 0};
	uint64_t snap = tomb_sync_snap(s->node.n);   /* before the listing (tomb_put) */
	char kind = mode == TC_CLEAN_ALL ? 'A' : 'T';
	int jdone = 0, r;
	char *jr = NULL;

	/* fast first too: a process killed after the slow clean leaves no copy
	 * on its own node (whose records of its own writes it skips). By tag,
	 * the same locked step hands back what it removed (the ids the fast
	 * level held under those tags, and their marks read then, before the
	 * slow write): tombstones once the slow clean worked */
	ferr[0] = '\0';
	if (ntags && (mode == TC_CLEAN_MATCHING || mode == TC_CLEAN_MATCHING_ANY)) {
		tc_shm_clean_ids(s->fst, mode, tags, ntags, tomb_emit, &t, ferr);
	} else {
		s->fast->clean(s->fst, mode, tags, ntags, ferr);
	}
	tc_crash_point("twolevel_clean_fast");   /* a cleaner killed or stopped before its slow clean (tests) */
	if (mode != TC_CLEAN_OLD) {
		jr = journal_arm(s, kind, (int)mode, tags, ntags, 0, &jdone);
	}
	r = s->slow->clean(s->sst, mode, tags, ntags, err);
	journal_disarm(s, jr);
	local_bump(s, mode, tags, ntags);
	if (r == TC_OK) {
		tomb_apply(s, &t, tomb_word(), snap);
	} else {
		tomb_unprov(s, &t);
	}
	free(t.h);
	free(t.w);
	ferr[0] = '\0';
	s->fast->clean(s->fst, mode, tags, ntags, ferr);   /* a fill or save of this node in between */
	if (r == TC_ERR || mode == TC_CLEAN_OLD) {
		/* old: a fast copy never outlives its slow entry, so every node's
		 * copies of what expired have expired too */
		return r;
	}
	if (!jdone && journal(s, kind, (int)mode, tags, ntags, 0) != TC_OK) {
		if (!*err) {
			snprintf(err, TC_ERRBUF, "TwoLevel: cleaned, but the invalidation journal could not be written");
		}
		return TC_ERR;
	}
	return r;
}

static int tl_ids(void *sp, tc_ids_mode mode, const tc_str *tags, size_t ntags, tc_emit_fn emit, void *ctx)
{
	tl_state *s = sp;

	return s->slow->ids(s->sst, mode, tags, ntags, emit, ctx);
}

static int tl_tags(void *sp, tc_emit_fn emit, void *ctx)
{
	tl_state *s = sp;

	return s->slow->tags(s->sst, emit, ctx);
}

static int tl_fill(void *sp)
{
	tl_state *s = sp;

	return s->slow->fill(s->sst);
}

static int tl_metadata(void *sp, tc_str id, tc_meta *meta, tc_emit_fn emit, void *ctx)
{
	tl_state *s = sp;

	return s->slow->metadata(s->sst, id, meta, emit, ctx);
}

static int tl_touch(void *sp, tc_str id, int64_t extra)
{
	tl_state *s = sp;

	/* the fast copy keeps its shorter expiry and is read again after it */
	return s->slow->touch(s->sst, id, extra);
}

static int tl_expire_now(void *sp, tc_str id)
{
	tl_state *s = sp;
	int r;

	s->fast->remove(s->fst, id);
	r = s->slow->expire_now(s->sst, id);
	local_bump_id(s, id);
	s->fast->remove(s->fst, id);
	if (r == TC_OK) {
		journal(s, 'I', 0, &id, 1, 0);
	}
	return r;
}

typedef struct {
	tc_stat_fn emit;
	void *ctx;
	const char *prefix;
} stat_prefix;

static void stat_pre(void *cp, const char *name, int64_t v)
{
	stat_prefix *p = cp;
	char buf[128];

	snprintf(buf, sizeof(buf), "%s%s", p->prefix, name);
	p->emit(p->ctx, buf, v);
}

static void tl_stats(void *sp, tc_stat_fn emit, void *ctx)
{
	tl_state *s = sp;
	tc_tl_node *n = s->node.n;
	int64_t synced = LD(n->synced_ns), now = mono_ns();
	stat_prefix fp = {emit, ctx, "fast."}, sp2 = {emit, ctx, "slow."};

	emit(ctx, "hits", s->fast_hits + s->slow_hits);
	emit(ctx, "fast_hits", s->fast_hits);
	emit(ctx, "slow_hits", s->slow_hits);
	emit(ctx, "misses", s->misses);
	emit(ctx, "fills", s->fills);
	emit(ctx, "fills_skipped", s->fills_skipped);
	emit(ctx, "fills_undone", s->fills_undone);
	emit(ctx, "fill_reads", s->fill_reads);
	emit(ctx, "slow_reads", s->slow_reads);
	emit(ctx, "known_absent", s->known_absent);
	emit(ctx, "tombstones_kept", s->tombstones_kept);
	emit(ctx, "journal_errors", s->journal_errors);
	emit(ctx, "journal_pending", s->npending + s->pending_all);
	emit(ctx, "node_syncs", (int64_t)LD(n->syncs));
	emit(ctx, "node_sync_failures", (int64_t)LD(n->sync_failures));
	emit(ctx, "node_gaps", (int64_t)LD(n->gaps));
	emit(ctx, "invalidations", (int64_t)LD(n->invalidations));
	emit(ctx, "own_skipped", (int64_t)LD(n->own_skipped));
	emit(ctx, "superseded", (int64_t)LD(n->superseded));
	emit(ctx, "invalidation_lag_ms", (int64_t)LD(n->lag_ms_last));
	emit(ctx, "stale_served", (int64_t)LD(n->stale_served));
	emit(ctx, "stale_refused", (int64_t)LD(n->stale_refused));
	emit(ctx, "journal_applied", (int64_t)LD(n->applied));
	emit(ctx, "last_sync_age_ms", synced > 0 && synced <= now ? (now - synced) / 1000000 : -1);
	emit(ctx, "sync_failing", LD(n->fail_since_ns) ? 1 : 0);
	emit(ctx, "max_staleness_ms", s->max_ns / 1000000);
	{
		uint32_t p2 = LD(n->pages_2m);   /* the node file's: as Shm's huge_pages */

		emit(ctx, "node_huge_pages", p2 == 1 ? 1 : p2 == 2 ? 0 : -1);
	}
	s->fast->stats(s->fst, stat_pre, &fp);
	s->slow->stats(s->sst, stat_pre, &sp2);
}

typedef struct {
	tc_emit_fn emit;
	void *ctx;
} verify_ctx;

static void verify_fast(void *cp, const char *p, size_t len)
{
	verify_ctx *v = cp;
	char buf[600];
	int n = snprintf(buf, sizeof(buf), "fast level: %.*s", (int)(len > 500 ? 500 : len), p);

	v->emit(v->ctx, buf, (size_t)(n < 0 ? 0 : n));
}

static int tl_verify(void *sp, tc_emit_fn emit, void *ctx)
{
	tl_state *s = sp;
	verify_ctx v = {emit, ctx};
	int a = s->fast->verify(s->fst, verify_fast, &v);
	int b = s->slow->verify(s->sst, emit, ctx);

	return a == TC_OK && b == TC_OK ? TC_OK : (a == TC_ERR || b == TC_ERR ? TC_ERR : TC_MISS);
}

static int tl_failure(void *sp, char *err)
{
	tl_state *s = sp;

	return s && s->slow->failure ? s->slow->failure(s->sst, err) : TC_FAIL_NONE;
}

/* The slow engine's: it holds every entry (the fast level a subset) and
 * answers every listing. */
static unsigned tl_caps_of(void *sp)
{
	tl_state *s = sp;

	return s->slow->caps;
}

static void tl_defaults(void *config)
{
	tc_twolevel_config *c = config;

	memset(c, 0, sizeof(*c));
	c->max_staleness = 1.0;
	c->stale_if_error = 0;
	c->journal_size = 100000;
	tc_stale_defaults(&c->stale);
	tc_backend_shm.defaults(&c->fast_cfg);
}

/* stampede protection (issue 14): the options here, the leases of the
 * slow level (tc_lease_ops_for) */
static const tc_stale_opts *tl_stale_opts(const void *config)
{
	return &((const tc_twolevel_config *)config)->stale;
}

static void tc_twolevel_slow(void *st, const tc_backend **be, void **sst)
{
	tl_state *s = st;

	*be = s->slow;
	*sst = s->sst;
}

static const tc_option_spec tl_options[] = {
	{"slow_backend", TC_OPT_STRING, offsetof(tc_twolevel_config, slow_backend), 0, 0, 1},
	{"remote_backend", TC_OPT_STRING, offsetof(tc_twolevel_config, slow_backend), 0, 0, 1},
	{"fast_backend", TC_OPT_STRING, offsetof(tc_twolevel_config, fast_backend), 0, 0, 1},
	{"max_staleness", TC_OPT_SECONDS, offsetof(tc_twolevel_config, max_staleness), 0, 0, 1},
	{"stale_if_error", TC_OPT_SECONDS, offsetof(tc_twolevel_config, stale_if_error), 0, 0, 1},
	{"journal_size", TC_OPT_INT, offsetof(tc_twolevel_config, journal_size), 16, 100000000, 1},
	TC_STALE_OPTION_ROWS(tc_twolevel_config, stale),
	/* parsed by tc_twolevel_opts.c with the sub-engine's own table */
	{"slow_backend_options", TC_OPT_IGNORED, 0, 0, 0, 1},
	{"fast_backend_options", TC_OPT_IGNORED, 0, 0, 0, 1},
	{"remote_backend_options", TC_OPT_IGNORED, 0, 0, 0, 1},
	{"local_backend_options", TC_OPT_IGNORED, 0, 0, 0, 1},
	/* Zend TwoLevels' and Magento L2's knobs that this design makes moot */
	{"auto_refresh_fast_cache", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"auto_fill_fast_cache", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"stats_update_factor", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"use_stale_cache", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"slow_backend_custom_naming", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"fast_backend_custom_naming", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"slow_backend_autoload", TC_OPT_IGNORED, 0, 0, 0, 0},
	{"fast_backend_autoload", TC_OPT_IGNORED, 0, 0, 0, 0},
	{NULL, 0, 0, 0, 0, 0}
};

const tc_journal_ops *tc_journal_for(const tc_backend *be)
{
#ifdef HAVE_TAGCACHE_REDIS
	if (be == tc_journal_redis.be) {
		return &tc_journal_redis;
	}
#endif
	if (be == tc_journal_file.be) {
		return &tc_journal_file;
	}
#ifdef HAVE_TAGCACHE_MEMCACHED
	if (be == tc_journal_memcached.be) {
		return &tc_journal_memcached;
	}
#endif
	(void)be;
	return NULL;
}

const tc_backend tc_backend_twolevel = {
	.name = "twolevel",
	.caps = TC_CAP_LISTINGS | TC_CAP_FOREVER,
	.options = tl_options,
	.config_size = sizeof(tc_twolevel_config),
	.defaults = tl_defaults,
	.open = tl_open,
	.close = tl_close,
	.load = tl_load,
	.save = tl_save,
	.remove = tl_remove,
	.clean = tl_clean,
	.ids = tl_ids,
	.tags = tl_tags,
	.fill = tl_fill,
	.metadata = tl_metadata,
	.touch = tl_touch,
	.expire_now = tl_expire_now,
	.stats = tl_stats,
	.verify = tl_verify,
	.failure = tl_failure,
	.mshutdown = tc_tl_node_shutdown,
	.caps_of = tl_caps_of,
	.stale_opts = tl_stale_opts,
	.lease_store = tc_twolevel_slow,
};
