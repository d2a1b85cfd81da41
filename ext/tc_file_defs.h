/*
 * tc_file_defs.h: the file store behind TagCache\File: its on-disk formats
 * and the declarations the engine's files share (tc_file.h is the engine
 * for code outside it). TECHNOTES.md ("File store") draws the same
 * pictures for newcomers.
 *
 * One directory holds:
 *   <prefix>.<8 hex>.log   append-only logs of checksummed records; the
 *                          truth. A few of them: the active one, and sealed
 *                          ones waiting to be compacted (oldest first).
 *   <prefix>.idx           the index, mapped MAP_SHARED by every process:
 *                          id -> (log, offset), tags -> ids. A cache of the
 *                          logs: rebuilt from them when missing or damaged.
 *   <prefix>.idx.<pid>.tmp an index being rebuilt (renamed over .idx).
 *
 * Readers take no lock: they follow the index under a seqlock and copy the
 * value out of the log through a read-only mapping, then check the
 * record's checksum. Writers take one robust mutex kept in the index.
 *
 * The engine's files form a stack, each using only those below it (the
 * declarations below go bottom up, as the files do):
 *
 *   tc_file.c          options, the operations (the vtable), clean('old')
 *   tc_file_store.c    attaching a store, the index opened or rebuilt, the
 *                      write lock (a dead holder: the tail cut, or a rebuild)
 *   tc_file_rebuild.c  a new index from the logs
 *   tc_file_compact.c  appending, rotation, tombstones, compaction, eviction
 *   tc_file_io.c       file checks, the directory lock, the writer's fd
 *   tc_file_index.c    the index: slots, chains, tags, its heap
 *   tc_file_log.c      records and log files, read-only log mappings
 *
 * (tc_file_stale.c: the stampede hooks, for the vtable.)
 */
#ifndef TC_FILE_DEFS_H
#define TC_FILE_DEFS_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "tc_backend.h"
#include "tc_util.h"

#define TC_FILE_LAYOUT_STR "1"

#define TCF_LOG_MAGIC  "TCFLOG01"
#define TCF_IDX_MAGIC  "TCFIDX01"
#define TCF_LAYOUT     1u            /* of the logs (and in the index's abi) */
#define TCF_IDX_LAYOUT 3u            /* of the index alone: 2, tag members removed
                                        lazily (tcf_tag.live); 3, a tag's change
                                        stamp (tcf_tag.gen); in tcf_abi(), so
                                        that an older index is rebuilt */
#define TCF_READY      0x52454459u   /* "REDY", written last */
#define TCF_MAXLOGS    64            /* log table entries (number % 64) */
#define TCF_LOGHDR     64            /* bytes before a log's first record */
#define TCF_REC        48            /* bytes of a record header */
#define TCF_RECMAGIC   0x54434600u   /* "\0FCT" | type in the low byte */
#define TCF_UNIT       8u            /* index heap unit */
#define TCF_NCLASSES   120
#define TCF_RSEQS      1024          /* readers' seqlocks, one per bucket stripe */
#define TCF_PREFIXMAX  64
#define TCF_MIN_SIZE   (1024 * 1024)

/* Record types. */
enum { TCF_PUT = 1, TCF_DEL = 2, TCF_TOUCH = 3 };
/* Log table entry states. */
enum { TCF_LOG_FREE = 0, TCF_LOG_ACTIVE = 1, TCF_LOG_SEALED = 2 };
/* Durability. */
enum { TCF_NEVER = 0, TCF_ALWAYS = 1, TCF_INTERVAL = 2 };
/* What ran out while a save reserved room in the index. */
enum { TCF_FULL_NONE = 0, TCF_FULL_SLOTS, TCF_FULL_TAGS, TCF_FULL_HEAP };

/* ------------------------------------------------------------ log files */

/* The first 64 bytes of a log file. Everything up to `check` is written
 * once, at creation; `obsolete` is set in place later (see tcf_tombstones,
 * tc_file_compact.c) and guarded by its complement instead. */
typedef struct {
	char magic[8];
	uint32_t layout;
	uint32_t number;
	uint32_t base;       /* logs numbered below this one are obsolete */
	uint32_t pad;
	uint64_t salt;       /* random: seeds every record header check */
	int64_t created;
	uint64_t check;      /* of the 40 bytes above */
	uint32_t obsolete;   /* logs numbered up to this lost a tombstone */
	uint32_t obsolete_inv;
	uint64_t reserved;
} tcf_loghdr;

/* A record: this header, then the key, the tag names (each a u16 length
 * and its bytes), the value, and zero padding to a multiple of 8 bytes.
 * hcheck covers the 40 bytes before it and is seeded with the log's salt
 * and the record's own offset, so that a record image copied anywhere
 * else (inside a value, say) never passes for a record; pcheck covers the
 * key, the tag names and the value. */
typedef struct {
	uint32_t magic;      /* TCF_RECMAGIC | type */
	uint16_t klen;
	uint16_t ntags;
	uint32_t tnlen;
	uint32_t vlen;
	int64_t expire;
	int64_t mtime;
	uint64_t pcheck;
	uint64_t hcheck;
} tcf_rec;

/* ---------------------------------------------------------------- index */

typedef struct {
	uint32_t number;     /* 0: unused */
	uint32_t state;
	uint64_t salt;
	uint64_t end;        /* bytes written and published: readers stop here */
	uint64_t live;       /* bytes of the records the index points at */
	uint64_t nlive;
} tcf_logent;

typedef struct {
	uint32_t hash;       /* low 32 bits of the key hash */
	uint32_t next;       /* bucket chain: slot + 1, or the free list */
	uint32_t log;        /* log number; 0: a free slot */
	uint32_t len;        /* record bytes, padding included */
	uint64_t off;        /* record offset in its log */
	int64_t expire;      /* may differ from the record's after touch() */
	int64_t mtime;
	uint32_t links;      /* heap ref of ntags tcf_link */
	uint32_t ntags;
} tcf_slot;

typedef struct {
	uint32_t tag;        /* tag + 1 */
	uint32_t pos;        /* this entry's index in the tag's member array */
} tcf_link;

typedef struct {
	uint32_t hash;
	uint32_t next;       /* tag bucket chain (tag + 1), or the free list */
	uint32_t count;      /* members, including ones that no longer hold */
	uint32_t cap;
	uint32_t arr;        /* heap ref: cap x u32 (slot + 1) */
	uint32_t name;       /* heap ref */
	uint32_t nlen;       /* 0: a free tag record */
	uint32_t live;       /* entries that carry the tag (0: it is dropped) */
	uint64_t gen;        /* change stamp: a fresh value of hdr->tgen, stored
	                        (release) after every change that adds a member
	                        or moves one (a link, a compaction, a new array)
	                        and at the record's creation; a lock-free
	                        selection (tcf_clean_pre) is kept only if it is
	                        unchanged */
	uint64_t born;       /* the stamp of the record's creation (0: free):
	                        a save's lock-free lookup (tcf_tag_find_nolock)
	                        is used under the lock only if it is the same */
} tcf_tag;

typedef struct {
	/* the first 64 bytes keep their place in every layout, so that any
	 * build can tell a foreign index and retire it */
	char magic[8];
	uint32_t layout, abi;
	uint32_t retired;        /* a newer index replaced this one: reopen */
	uint32_t ready;
	uint64_t boot;           /* hash of the kernel boot id it was made in */
	uint64_t size;
	uint32_t nslots, nbuckets, ntags, ntagbuckets;
	uint64_t off_slots, off_buckets, off_tags, off_tagbuckets, off_heap;
	uint32_t heap_units;
	uint32_t dirty;          /* the holder changed the index, not finished */
	char pad0[64];
	pthread_mutex_t lock;
	char pad1[64];
	uint64_t seq;            /* odd while the index changes (seqlock) */
	char pad2[56];
	/* below: written only under the lock */
	uint32_t base;           /* logs numbered below are obsolete */
	uint32_t next_log;       /* number of the next log to create */
	uint32_t first_log;      /* the oldest log: the next to compact */
	uint32_t active_log;     /* the one appended to */
	uint64_t cursor;         /* compaction position in first_log */
	uint64_t live_bytes;     /* bytes of the records of live entries */
	uint64_t log_bytes;      /* bytes of all logs */
	uint32_t entries, tags;
	uint32_t free_slot;      /* slot + 1 */
	uint32_t free_tag;       /* tag + 1 */
	uint32_t heap_top;       /* bump pointer, units */
	uint32_t heap_used;      /* units in allocated blocks */
	uint32_t must_rotate;    /* the active log is obsolete (a tombstone was lost) */
	uint32_t log_gen;        /* bumped when a log is unlinked */
	int64_t min_expire;      /* no entry expires before this */
	uint64_t tgen;           /* tag change stamps (tcf_tag.gen): only grows */
	uint64_t pre_kept;       /* one-tag cleans whose lock-free selection held */
	uint64_t pre_redone;     /* ... and those whose selection was made again */
	int64_t last_sync;
	uint64_t writes, copied, evictions, expirations, lock_recoveries, rebuilds,
	         corrupt, compactions;
	uint32_t free_heads[TCF_NCLASSES];
	tcf_logent logs[TCF_MAXLOGS];
	char pad4[64];
	tc_stripe stripes[TC_NSTRIPES];
	/* What lock-free readers check: one sequence per stripe of buckets
	 * (bucket % TCF_RSEQS), odd while a writer changes that bucket's chain
	 * or one of its slots. A reader retries only when a change touched
	 * its own stripe, so a writer inside a window (or preempted in one)
	 * holds up the readers of 1/1024 of the buckets, not all of them.
	 * (`seq` above still brackets each writer's batch; readers no longer
	 * read it.) */
	uint32_t rseq[TCF_RSEQS];
} tcf_hdr;

/* Capacities of an index file. */
typedef struct {
	uint32_t nslots, ntags, heap_units;
} tcf_caps;

/* --------------------------------------------------- process-side state */

/* A log mapped read-only in this process. */
typedef struct {
	uint32_t number;
	uint64_t salt;
	unsigned char *base;
	size_t len;          /* mapped bytes; may run past the end of the file */
} tcf_lmap;

/* An index file mapped in this process (the current one, or one being
 * built by a rebuild). */
typedef struct {
	unsigned char *base;
	size_t size;
	tcf_hdr *hdr;
	tcf_slot *slots;
	uint32_t *buckets;
	tcf_tag *tags;
	uint32_t *tagbuckets;
	unsigned char *heap;
	uint32_t nslots, bmask, ntags, tbmask, heap_units;
	int tainted;         /* an inconsistency was found: rebuild */
	int full;            /* TCF_FULL_*: what a reservation ran out of */
	uint64_t attach;     /* which mapping this is in this process (tcf_install) */
	dev_t dev;
	ino_t ino;
} tcf_idx;

/* One per directory and prefix per process, shared by every object. */
typedef struct tcf_store {
	struct tcf_store *next;
	char *dir;
	char prefix[TCF_PREFIXMAX + 1];
	dev_t dev;
	ino_t ino;
	int dirfd;
	tcf_idx ix;
	tcf_lmap logs[TCF_MAXLOGS];
	int wfd;             /* the active log, open for appending */
	uint32_t wnum;       /* its number */
	uint64_t wsalt;      /* and salt (numbers restart if the files are wiped) */
	uint32_t log_gen;    /* hdr->log_gen when our mappings were last pruned */
	int held;            /* this process holds ix's mutex */
	int flockfd;         /* >= 0 while this process holds the directory lock */
	int warned;          /* damage already logged once */
	uint64_t stuck_seq;  /* an odd sequence a read gave up on (a stopped writer) */
} tcf_store;

/* Per object: the options that shape how it writes. */
typedef struct {
	tcf_store *s;
	uint64_t max_size;
	uint64_t seg_size;   /* a log is sealed past this size */
	int durability;
	double interval;
	double lock_timeout;
	int file_mode, dir_mode;
} tc_file;

typedef struct {
	char cache_dir[TC_OPT_STRMAX];
	char prefix[TC_OPT_STRMAX];
	int64_t max_size;
	int file_mode;
	int dir_mode;
	char durability[TC_OPT_STRMAX];
	double fsync_interval;
	double lock_timeout;
	tc_stale_opts stale;  /* serve_stale, rebuild_timeout, early_rebuild */
} tc_file_config;

/* tc_file_stale.c: the stampede hooks (issue 14) */
const tc_stale_opts *tc_file_stale_opts(const void *config);
int tc_file_lease_home(void *st, char *path, size_t n, int *mode);

#define TCF_H(x, r)   ((x)->heap + (size_t)(r) * TCF_UNIT)
#define TCF_LOGENT_C(h, n) (&(h)->logs[(n) % TCF_MAXLOGS])
#define TCF_LOGENT(x, n) TCF_LOGENT_C((x)->hdr, n)

static inline uint64_t tcf_align8(uint64_t v)
{
	return (v + 7) & ~(uint64_t)7;
}

/* tc_file_log.c: records and log files */
uint64_t tcf_rec_size(uint64_t klen, uint64_t tnlen, uint64_t vlen);
size_t tcf_rec_build(unsigned char *buf, int type, tc_str key, const tc_str *tags, size_t ntags,
                     const unsigned char *value, size_t vlen, int64_t expire, int64_t mtime);
size_t tcf_rec_build_del(unsigned char *buf, const unsigned char *key, size_t klen, int64_t mtime);
void tcf_rec_seal(unsigned char *rec, uint64_t salt, uint64_t off);
uint64_t tcf_rec_header_ok(const unsigned char *p, uint64_t avail, uint64_t salt, uint64_t off,
                           tcf_rec *out);
int tcf_rec_body_ok(const unsigned char *p, const tcf_rec *r);
uint64_t tcf_rec_pcheck(const unsigned char *p, const tcf_rec *r, const unsigned char *value);
void tcf_log_name(char *buf, size_t n, const char *prefix, uint32_t number);
int tcf_log_parse_name(const char *name, const char *prefix, uint32_t *number);
int tcf_log_header_ok(const tcf_loghdr *h, uint32_t number);
uint32_t tcf_log_obsolete(const tcf_loghdr *h);
int tcf_log_create(tcf_store *s, const tc_file *f, uint32_t number, uint32_t base, uint64_t *salt,
                   char *err);
int tcf_log_create_as(tcf_store *s, const tc_file *f, const char *name, uint32_t number, uint32_t base,
                      uint64_t *salt, char *err);
int tcf_log_header_intact(const tcf_loghdr *h);
int tcf_log_header_repair(tcf_loghdr *h, uint32_t number);
int tcf_log_header_rewrite(int fd, uint32_t number, uint32_t base, uint64_t salt, int64_t created);
int tcf_log_mark_obsolete(tcf_store *s, uint32_t number);
unsigned char *tcf_lmap_get(tcf_store *s, uint32_t number, uint64_t salt, uint64_t need);
void tcf_lmap_drop(tcf_store *s, uint32_t number);
void tcf_lmap_prune(tcf_store *s);
uint64_t tcf_random64(void);
uint64_t tcf_key_hash64(const void *p, size_t n);

/* tc_file_index.c: the index; callers hold the lock (or own the index) */
int tcf_layout(const tcf_caps *c, tcf_hdr *h);
void tcf_bind(tcf_idx *x, unsigned char *base, size_t size);
void tcf_format(tcf_idx *x);
uint32_t tcf_key_hash(const unsigned char *p, size_t len);
uint32_t tcf_tag_hash(const unsigned char *p, size_t len);
uint32_t tcf_halloc(tcf_idx *x, uint32_t units);
void tcf_hfree(tcf_idx *x, uint32_t ref, uint32_t units);
const unsigned char *tcf_record(tcf_store *s, tcf_idx *x, uint32_t log, uint64_t off, uint32_t len);
uint32_t tcf_find(tcf_store *s, tcf_idx *x, const unsigned char *k, uint32_t klen, uint32_t h);
uint32_t tcf_tag_find(tcf_idx *x, const unsigned char *name, uint32_t len, uint32_t h);
int tcf_tag_ok(const tcf_idx *x, uint32_t t);
/* Without the lock, a reader's rules: tag + 1 of the tag named so and its
 * creation stamp (*born), or 0 (none, or a writer in the middle). */
uint32_t tcf_tag_find_nolock(const tcf_idx *x, const unsigned char *name, uint32_t len, uint32_t h,
                             uint64_t *born);
const unsigned char *tcf_tag_name(const tcf_idx *x, uint32_t t);
uint32_t tcf_member(tcf_idx *x, const tcf_tag *T, uint32_t i);
/* What tc_select() asks of member i of tag t: its slot if it holds,
 * TC_MEMBER_SKIP if it no longer does (lazy removal), a bad slot as is. */
uint32_t tcf_member_sel(tcf_idx *x, uint32_t t, uint32_t i);
uint32_t *tcf_tag_members(tcf_idx *x, uint32_t t, size_t *n, int *oom);
int tcf_slot_ok(const tcf_idx *x, uint32_t slot);
const unsigned char *tcf_slot_record(tcf_store *s, tcf_idx *x, uint32_t slot, tcf_rec *r);
void tcf_seq_begin(tcf_hdr *h);
void tcf_seq_end(tcf_hdr *h);
/* The readers' sequence of the stripe that holds bucket (hash & bmask). */
#define TCF_RSEQ(x, hash) (&(x)->hdr->rseq[(hash) & (x)->bmask & (TCF_RSEQS - 1)])
void tcf_rseq_begin(uint32_t *q);
void tcf_rseq_end(uint32_t *q);

/* A save's reservation: everything the index needs, taken before the
 * record is written, so that publishing cannot fail half-way. */
typedef struct {
	uint32_t old;        /* slot of the id, or 0 */
	uint32_t slot;       /* slot it will take */
	uint32_t links;      /* heap ref for the new links */
	uint32_t *trefs;     /* tag + 1 per tag */
	const uint32_t *thash; /* the tags' hashes, computed before the lock (or NULL) */
	/* the tags looked up before the lock (or NULL): tag + 1 or 0, and its
	 * record's creation stamp, in the mapping `attach` */
	const uint32_t *tpre;
	const uint64_t *tborn;
	uint64_t attach;
	size_t ntags;
} tcf_resv;

int tcf_reserve(tcf_store *s, tcf_idx *x, const unsigned char *key, uint32_t klen, uint32_t h,
                const tc_str *tags, size_t ntags, tcf_resv *r);
void tcf_unreserve(tcf_idx *x, const tc_str *tags, size_t ntags, tcf_resv *r);
void tcf_publish(tcf_idx *x, tcf_resv *r, uint32_t h, uint32_t log, uint64_t off, uint32_t len,
                 int64_t expire, int64_t mtime);
void tcf_relocate(tcf_idx *x, uint32_t slot, uint32_t log, uint64_t off, uint32_t len);
void tcf_remove(tcf_idx *x, uint32_t slot);
uint32_t tcf_remove_skip(tcf_idx *x, uint32_t slot, uint32_t skip);
void tcf_tag_drop_cleaned(tcf_idx *x, uint32_t t, uint32_t removed);
void tcf_remove_prefetch(tcf_idx *x, uint32_t slot, int links);
void tcf_account(tcf_idx *x, uint32_t log, int64_t bytes, int64_t n);

/* A one-tag clean's selection made without the lock (tcf_clean_pre), with
 * each selected entry's DEL record built (all but its seal), and used
 * under the lock if no member was added or moved since (tcf_clean_use). */
typedef struct {
	uint32_t slot, pos, link;  /* the entry, its member position, which of
	                              its links names the tag */
	uint32_t log, len;         /* where its record was (log 0: not read) */
	uint64_t off;
	uint64_t del;              /* its DEL's offset in buf, or UINT64_MAX: none
	                              (a record whose header check failed) */
} tcf_pre_ent;
typedef struct {
	uint64_t attach;           /* the mapping it was made in */
	uint32_t t;
	uint64_t gen;              /* the tag's stamp when it was read */
	uint32_t count;            /* its members then */
	size_t n;
	tcf_pre_ent *e;
	unsigned char *buf;        /* the DEL records, unsealed */
	uint64_t total;
} tcf_pre;
/* Lock-free, every offset bounds-checked like a reader's: 1 with a
 * selection in *p (tcf_pre_free), 0 when none could be made (no such tag,
 * anything inconsistent: a writer was in the middle; nothing is marked). */
int tcf_clean_pre(tcf_store *s, const unsigned char *name, uint32_t len, uint32_t h, int64_t now,
                  tcf_pre *p);
void tcf_pre_free(tcf_pre *p);
/* Under the lock, t found again: 1 if p still holds (same mapping, tag,
 * stamp and member count): p->e then holds only the entries that still
 * carry t by their link (*n of them), and p->buf their DELs (p->total
 * bytes; an entry whose record moved has its DEL built again). 0: p is
 * stale, make the selection again. -1: out of memory. */
int tcf_clean_use(tcf_store *s, uint32_t t, tcf_pre *p, int64_t now);
int tcf_check(tcf_store *s, tcf_idx *x, tc_emit_fn emit, void *ctx);

/* tc_file_io.c: the files under a store: checks, the directory lock, the
 * index mapping installed, the active log's descriptor and writes */
int tcf_check_file(int fd, int mode, const char *what, char *err);
int tcf_flock(tcf_store *s, char *err);
void tcf_funlock(tcf_store *s);
uint64_t tcf_boot(void);
uint32_t tcf_abi(void);
int tcf_install(tcf_store *s, tcf_idx *nx);
void tcf_dirty(tcf_store *s);
int tcf_writer_fd(tc_file *f, char *err);
/* pwrite() all of p at off, retrying EINTR; 0, or -1 with errno (ENOSPC
 * for a write that wrote nothing) */
int tcf_pwrite_all(int fd, const unsigned char *p, size_t len, uint64_t off);
int tcf_sync(tc_file *f, int force);

/* tc_file_compact.c: appending, rotation, compaction, eviction, expiry;
 * all under the write lock */
int tcf_prepare_append(tc_file *f, uint64_t len, uint64_t *off, uint64_t *salt, char *err);
int tcf_append(tc_file *f, const unsigned char *buf, size_t len, uint64_t off, char *err);
void tcf_set_end(tcf_idx *x, uint64_t end);
int tcf_rotate(tc_file *f, char *err);
int tcf_make_room(tc_file *f, uint64_t need, int64_t now, char *err);
void tcf_maybe_compact(tc_file *f, uint64_t need, int64_t now);
/* up to budget bytes of the oldest log: 1 progress, 0 nothing to do, -1 error */
int tcf_compact_step(tc_file *f, uint64_t budget, int64_t now);
int tcf_tombstones(tc_file *f, const uint32_t *slots, size_t n, int must, char *err);
/* The same for DEL records built already (tcf_clean_pre): sealed and
 * appended; buf is the caller's. */
int tcf_tombstones_built(tc_file *f, unsigned char *buf, uint64_t total, int must, char *err);
void tcf_remove_list(tc_file *f, const uint32_t *slots, size_t n, const char *crash);
/* The same for a clean of tag `skip`: its links left, then the tag dropped. */
void tcf_remove_list_tag(tc_file *f, const uint32_t *slots, size_t n, const char *crash, uint32_t skip);
int tcf_sweep_expired(tc_file *f, int64_t now, char *err);

/* tc_file_rebuild.c: a new index from the logs */
int tcf_rebuild(tc_file *f, const tcf_caps *want, int empty, const char *why, char *err);
void tcf_caps_default(tcf_caps *c);

/* tc_file_store.c: attaching a store (the process registry), the index
 * file opened or rebuilt, the write lock */
int tcf_attach(tc_file *f, const tc_file_config *c, char *err);
int tcf_reopen_index(tc_file *f, char *err);
int tcf_lock(tc_file *f, char *err);
int tcf_lock_nowait(tc_file *f, char *err);
/* how long a clean spins for the write lock before it sleeps on it */
#define TCF_CLEAN_SPIN_NS 50000
int tcf_lock_spin(tc_file *f, char *err);
void tcf_unlock(tc_file *f);
void tc_file_release_held(void);

#endif
