/*
** cache.h — gpu_cache's column cache: a connection's copies of table
** columns, in rowid order, in GPU memory or in host memory, and the
** answers gpu_aggregate takes from them.
**
**   cache.c        entries, the byte budget, least-recently-used eviction
**   cache_load.c   loading: sinks that gpu_aggregate's workers fill inside
**                  their own SQL (gpuagg_collect), pieces placed in rowid
**                  order, streamed to the device through pinned blocks
**   cache_host.c   queries on a host entry, with all cores
**   cache_gpu.c    device arrays, their growth, and queries on the device
**                  (kernels/cache.cu behind kernels/gak.h)
**
** The SQLite side (the SQL functions, the staleness stamps, which shapes are
** eligible) is ext/cache/cache_fns.c and planner/cache_shape.c.
**
** Rules:
**   1. An entry holds INTEGER, REAL and NULL values, as SQL read them
**      (after the column's affinity), in rowid order: row i of every column
**      of an entry is the same table row.  A column whose values are TEXT
**      (and NULL) holds codes instead, with its dictionary (dict.h, issue
**      20): a code is an INTEGER word, the value's rank in BINARY order,
**      in host and GPU entries alike (the dictionary stays in host memory).
**      TEXT mixed with numbers in one column, and BLOB, are not cached.
**   2. A value is a 64-bit word (int64, or the double's bits; 0 for NULL)
**      with two bits: isint and notnull.  Host segments and device arrays
**      use the same words and bitmaps (64-bit words, bit i of word i/64).
**   3. Answers are exact ga_xstate states, merged in rowid order where the
**      contract cares (first row's group key, max/min ties), so a cached
**      answer is bit-identical to the uncached one.
**   4. The budget counts every byte an entry holds (values, bitmaps, group
**      dictionaries), wherever it lives.  Query scratch on the device is
**      reported apart (it is freed with the last entry).
**   5. One cache per process (issue 40), shared by every connection that
**      loads gpuagg: entries, the byte budget, LRU eviction and the GPU's
**      stream and scratch.  An entry of a file (main or attached, not
**      temp, not in memory) is keyed by the file's identity (device and
**      inode) and the table, and answers any connection whose own stamp
**      proves it current (planner/cache_plan.c rule 7); the others
**      (temp, in memory, unprovable) are their owner's alone, dropped
**      when it closes.  The cache outlives the process's last connection
**      (cache_keep, cache.c rule 7): a connection opened later reads the
**      entries that a closed one loaded, under the same proof.  The
**      locking (cache.c's header): mu guards the
**      list, used, refs; qmu serializes the queries on entries (the GPU
**      stream, scratch, lazily built structures, counters); references
**      keep an entry alive while a caller uses it.  No answer is ever
**      taken from an entry marked stale.
**   6. An entry grows only by appends proven to be the only change since
**      its state (issue 40 part 4, cache_append.h), out of the list while
**      no other caller holds it (ga_cache_unlink_sole); otherwise it never
**      changes after it is linked.
*/
#ifndef GA_CACHE_H
#define GA_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cexpr.h"
#include "dict.h"
#include "fstamp.h"
#include "gak.h"
#include "pct.h"
#include "scan.h"

#define GA_CACHE_HOST 0
#define GA_CACHE_GPU 1

/* Columns of one entry, at most; rows, below 2^32 (device row numbers). */
#define GA_CACHE_MAX_COLS 64
#define GA_CACHE_MAX_ROWS ((int64_t)0xffffffffu - 1)
/* Groups a cached GROUP BY may have (past it: the uncached path, whose
** group memory cap is of the same order, engine/scan/scan.h). */
#define GA_CACHE_MAX_GROUPS ((int64_t)1 << 18)

/* Column affinities (SQLite's rules on the declared type). */
#define GA_AFF_BLOB 0
#define GA_AFF_TEXT 1
#define GA_AFF_NUMERIC 2
#define GA_AFF_INTEGER 3
#define GA_AFF_REAL 4

/* Words of a bitmap of n bits. */
#define GA_BW(n) (((n) + 63) / 64)

/* A block of rows of every column of an entry: what a load's sink fills,
** and, for a host entry, what it keeps (its segments, in rowid order).
** One allocation: vals of column c at mem + c*cap, then per column the
** isint and notnull bitmaps (GA_BW(cap) words each), then, for the GPU,
** room to shift those bitmaps to the block's row offset (cache_gpu.c). */
typedef struct ga_cblock {
  struct ga_cblock *next;
  int64_t n, cap; /* rows held, rows it has room for */
  int ncols;
  int pinned; /* from ga_gpu_host_alloc (a GPU load's staging) */
  int mapped; /* mem is in its entry's mapped file (cache_file.h rule 5) */
  uint64_t *mem;
  int64_t bytes;
} ga_cblock;

static inline uint64_t *ga_cb_vals(const ga_cblock *b, int c) {
  return b->mem + (size_t)c * (size_t)b->cap;
}
static inline uint64_t *ga_cb_isint(const ga_cblock *b, int c) {
  return b->mem + (size_t)b->ncols * (size_t)b->cap +
         (size_t)c * 2 * (size_t)GA_BW(b->cap);
}
static inline uint64_t *ga_cb_notnull(const ga_cblock *b, int c) {
  return ga_cb_isint(b, c) + GA_BW(b->cap);
}
/* The GPU's shift room: 2 * ncols runs of GA_BW(cap) + 2 words. */
static inline uint64_t *ga_cb_stage(const ga_cblock *b) {
  return b->mem + (size_t)b->ncols * (size_t)b->cap +
         (size_t)b->ncols * 2 * (size_t)GA_BW(b->cap);
}
static inline int ga_bit(const uint64_t *bits, int64_t i) {
  return (int)((bits[i >> 6] >> (i & 63)) & 1);
}

/* A block of cap rows for ncols columns (pinned: in page-locked memory for a
** GPU load); bitmaps zeroed.  NULL when out of memory. */
ga_cblock *ga_cb_new(int ncols, int64_t cap, int pinned);
void ga_cb_free(ga_cblock *b);

/* One cached column. */
typedef struct ga_ccol {
  char *name;
  int aff;                    /* GA_AFF_* of its declared type */
  int64_t nnull, nint, nreal; /* what it holds */
  int64_t ntext;              /* TEXT values: then the words are codes */
  int64_t nnow; /* of them, 'now' in any case (cache_load.c rule 9) */
  int mixed;    /* TEXT and numbers: no query reads it (cache_load.c rule 8) */
  int64_t imin, imax; /* the least and greatest INTEGER (when nint > 0) */
  ga_dict *dict;      /* the codes' values (rule 1), or NULL */
  /* GPU entry: n values, the bitmaps, and the group dictionary */
  uint64_t *d_vals, *d_isint, *d_notnull;
  int64_t *d_dict;
  int64_t ndict;  /* keys in d_dict */
  int dict_state; /* 0 not built, 1 built, -1 cannot group on the GPU */
  /* a star join's column (cache_star.c): the table column it copies, for
  ** its declaration and collation; NULL: the entry's own table's, name */
  const char *src_schema, *src_table, *src_name;
} ga_ccol;

/* The SQLite state an entry was loaded from (planner/cache_plan.c rule 2),
** as its loading connection (the owner) sees it: an answer to the owner is
** taken only while every field is the same as now.  Another connection
** compares fs alone (rule 5, planner/cache_plan.c rule 7). */
typedef struct ga_cstamp {
  int64_t data_version;   /* PRAGMA s.data_version: other connections */
  int64_t total_changes;  /* sqlite3_total_changes64: this connection */
  int64_t schema_version; /* PRAGMA s.schema_version: DDL, drop+recreate */
  /* SQLITE_FCNTL_DATA_VERSION of the schema's pager: every commit, this
  ** connection's included, even one that no statement counts
  ** (sqlite3_blob_write) */
  unsigned int pager_version;
  char *file;    /* sqlite3_db_filename of the schema */
  void *fileobj; /* its sqlite3_file (SQLITE_FCNTL_FILE_POINTER) */
  /* temp: total_changes counts (the connection's own writes to temp);
  ** any other schema: it does not (a TEMP insert moves it, not main's
  ** pager; issue 40) */
  int temp;
  /* An attached schema's file as it is on disk, read under the read lock
  ** (cache_plan.c rule 2): a DETACH and ATTACH of the same file opens a new
  ** pager whose data_version starts again, often at the same address, so
  ** only the file can prove the state.  attached = 0 for main and temp,
  ** which cannot be detached.  fs is read for main too (the shared
  ** entries' stamp, fstamp.h); the owner compares it only when attached. */
  int attached;
  /* WAL mode without a committed frame: nothing on disk proves the state;
  ** the entry's own connection to the file (ga_centry.watch) proves it
  ** instead: its data_version (every commit of any connection, the
  ** owner's included) and whether the path still names its file */
  int unprovable;
  int watched, moved;
  int64_t watch_version;
  ga_fstamp fs; /* the file (fstamp.h): identity, header, WAL */
} ga_cstamp;

typedef struct ga_centry {
  struct ga_centry *next;
  char *schema, *table; /* as ga_target_resolve names them */
  int where;            /* GA_CACHE_HOST or GA_CACHE_GPU */
  int dev;              /* GPU entry: the engine's device index */
  /* GPU entry: frees its device arrays, set by cache_gpu.c where they
  ** become the entry's (ga_centry_free calls it: cache.c rule 4) */
  void (*free_dev)(struct ga_centry *e);
  /* a host entry mapped from a cache file (cache_file.h rule 5): the
  ** mapping its segments point into, and its unmap (ga_centry_free) */
  void *map;
  size_t map_len;
  void (*free_map)(struct ga_centry *e);
  int from_file; /* mapped from a cache file (on the GPU since, or not) */
  int enc;       /* the database's encoding: its TEXT values' bytes */
  int ncols;
  ga_ccol *cols;
  int64_t rows, bytes;
  /* GPU entry: the rows its device arrays have room for (rows at least;
  ** the room past rows is counted in bytes: an extension appends there in
  ** place, cache_append.h rule 5) */
  int64_t d_cap;
  /* host entry: its blocks in rowid order, and where each starts */
  ga_cblock **segs;
  int64_t *seg_base;
  int64_t nsegs;
  ga_cstamp stamp;
  /* the caller's program of SELECT <the columns> at the load (ext/
  ** planner/path.c ga_program_sig): an authorizer set or changed since
  ** compiles it otherwise, and the entry does not answer */
  char *auth_sig;
  /* an attached WAL file whose stamp is unprovable (ga_cstamp): a
  ** connection of the entry's own to it (the caller's access), held while
  ** the entry lives and is not stale (planner/cache_plan.c rule 2), and at
  ** most GA_CACHE_WATCHERS of them per connection; else NULL */
  sqlite3 *watch;
  int stale; /* an answer was refused for staleness: never used again */
  int64_t hits, lru;
  /* rule 5: the sharing.  refs: the list's one while linked, plus one per
  ** caller using it (ga_cache_get); freed at 0 once unlinked.  owner: the
  ** connection (sqlite3 *) that loaded it, NULL once it closed.  shareable:
  ** fs proves its state (ga_fstamp.ok) and it was loaded outside a read
  ** transaction on a WAL schema; its key is then (fdev, fino, table) */
  int refs, linked;
  const void *owner;
  int shareable;
  uint64_t fdev, fino;
  int64_t shared_hits; /* answers to connections other than the owner
                          (hits and shared_hits: atomic, gpuagg_info reads
                          them without the query lock) */
  /* cache.c rule 7: it outlived a moment with no connection open (under
  ** mu; set once) */
  int kept;
  ga_fstamp fs;
  int64_t seq; /* ga_cache_seq_now when it was linked (rule 7's idle) */
  /* appends (issue 40 part 4, cache_append.h): the pages and right-edge
  ** leaf its extension's proof needs (NULL: none recorded), or why not */
  struct ga_cappend *app;
  void (*app_free)(struct ga_cappend *); /* frees app: set with it, so the
                                            entry's free needs no part 4 */
  const char *app_no;                    /* static text */
  double load_ms;
  char note[128]; /* how it was loaded (parallel/serial, GPU fallback) */
} ga_centry;

typedef struct ga_cache {
  pthread_mutex_t mu;
  /* rule 5: one ga_cache per process (ga_cache_shared), nconn connections
  ** on it (g_mu in cache.c); qmu: one query on the entries at a time
  ** (ga_cache_qlock) */
  int nconn;
  pthread_mutex_t qmu;
  int64_t loads; /* gpu_cache loads that made an entry (under mu) */
  /* cache.c rule 7: entries kept when the last connection closed, each
  ** counted once (under mu) */
  int64_t kept;

  ga_centry *entries;
  int64_t used; /* bytes of every entry, and of a load under way */
  int64_t tick; /* LRU clock */
  /* the GPU: a stream and the query scratch of the device entries use;
  ** release_dev frees them, set by the GPU side with them (cache.c rule
  ** 4) */
  int dev;
  void *stream;
  void *d_scratch;
  void (*release_dev)(struct ga_cache *c);
  size_t scratch_bytes;
  int64_t queries_gpu, queries_host, fallbacks;
  int64_t queries_topk; /* cache_gpu_query.c rule 9's, cache_host.c 19's */
  int64_t queries_many; /* cache_gpu_query.c rule 10's (issue 37) */
  int64_t queries_csum; /* cache_host.c rule 22's (issue 37) */
  /* cache_gpu_many.c rule 6: values reduced to compact states, and values
  ** it was tried on that the device could not prove (the exact reduce) */
  int64_t values_compact, values_compact_no;
  /* cache_gpu_stat.c rule 3 (issue 39): the values of medians and
  ** percentiles that came back from the device (each group's selected
  ** order statistics, or its whole run), and the medians' values answered
  ** by the device's selection */
  int64_t pct_values_back, pct_selected;
  /* extensions of GPU entries (issue 40 part 4, cache_append.h rule 5):
  ** the new rows copied into the device arrays' room in place, or the
  ** arrays re-allocated larger and the old rows copied device to device
  ** (under mu) */
  int64_t gpu_append_inplace, gpu_append_copied;
  /* cache files (ext/cache/cache_persist.c): entries mapped from one and
  ** files written, and the outcome of the last map and of the last write
  ** (gpuagg_info) */
  int64_t file_maps, file_writes;
  char file_map[400], file_write[400];
} ga_cache;

ga_cache *ga_cache_new(void);
void ga_cache_free(ga_cache *c);
/* Rule 5: the process's cache, one more connection on it (NULL: out of
** memory); ga_cache_release: that connection (owner) closed: its own
** entries go, its shared ones stay (owner NULL); when it was the last,
** keep (its cache_keep knob) keeps the cache and its entries for the
** connections opened later (cache.c rule 7), else (or with no entry left)
** it is freed.  ga_cache_set_pin: what keeps the code mapped while a kept
** cache holds anything (ext/init.c; called as the last connection keeps
** entries). */
ga_cache *ga_cache_shared(void);
void ga_cache_release(ga_cache *c, const void *owner, int keep);
void ga_cache_set_pin(void (*pin)(void));
/* how many connections hold the process's cache (read under g_mu, which
** guards nconn: never under c->mu alone) */
int ga_cache_nconn(ga_cache *c);

/* The entry a connection (owner) reads for schema.table, referenced (give
** it back with ga_centry_put), or NULL: its own entry of that schema name
** first, else a shared one of the file (has_ident: dev, ino) not stale,
** else its own stale one. */
ga_centry *ga_cache_get(ga_cache *c, const void *owner, const char *schema,
                        int has_ident, uint64_t dev, uint64_t ino,
                        const char *table);
void ga_centry_put(ga_cache *c, ga_centry *e);
/* A new entry (from ga_cload_finish, its bytes in used) into the list. */
void ga_cache_link(ga_cache *c, ga_centry *e);
/* Unlink one entry (its bytes leave c->used) and give back the caller's
** reference (the caller holds one). */
void ga_cache_drop(ga_cache *c, ga_centry *e);
void ga_cache_drop_all(ga_cache *c);
/* planner/cache_plan.c rule 7's clock: a process-wide counter that
** ga_cache_link moves (sequentially consistent); note_idle records that
** connection db had no transaction open on schema at a moment after the
** clock read seq (read it BEFORE looking at sqlite3_txn_state); idle_seq:
** the last such seq, or -1: the last of each (db, schema name), at most
** GA_CACHE_IDLE of them (the oldest goes), forgotten when db closes
** (ga_cache_release). */
#define GA_CACHE_IDLE 1024
int64_t ga_cache_seq_now(void);
void ga_cache_note_idle(const void *db, const char *schema, int64_t seq);
int64_t ga_cache_idle_seq(const void *db, const char *schema);
/* Rule 5's query lock (re-entrant on one thread). */
void ga_cache_qlock(ga_cache *c);
void ga_cache_qunlock(ga_cache *c);
void ga_centry_free(ga_centry *e); /* an entry in no list */
/* A reload's old entry (ext/cache/cache_fns.c rule 7), which the caller
** holds a reference to: out of the list and its bytes out of `used` while
** the new one loads; back as it was when the load fails (and the caller's
** reference given back: ga_centry_put); given back (freed with the GPU's
** scratch when no GPU entry is left, unless another caller uses it) when
** it succeeds. */
/* ga_cache_unlink: 1 when it was in the list (else another thread took
** it out: nothing to relink). */
int ga_cache_unlink(ga_cache *c, ga_centry *e);
void ga_cache_relink(ga_cache *c, ga_centry *e);
/* An extension (cache_append.h rule 3): unlink e when the list and the
** caller hold the only references (1), else 0 and e stays as it is;
** ga_cache_relink_moved puts it back as a new state (its seq moves, as a
** new link's: planner/cache_plan.c rule 7's idle proof). */
int ga_cache_unlink_sole(ga_cache *c, ga_centry *e);
void ga_cache_relink_moved(ga_cache *c, ga_centry *e);
void ga_cache_free_unlinked(ga_cache *c, ga_centry *e);
/* Make room for `more` bytes within budget by evicting least recently used
** entries (stale ones first), never `keep`.  1 when it fits (c->used +
** more <= budget), 0 when it cannot.  Takes c->mu. */
int ga_cache_reserve(ga_cache *c, int64_t budget, int64_t more,
                     const ga_centry *keep);
/* Evict until c->used <= budget (a lowered cache_bytes). */
void ga_cache_fit(ga_cache *c, int64_t budget);
/* A new entry's LRU tick (most recent). */
int64_t ga_cache_touch(ga_cache *c);

/* ---- a query on an entry (cache_host.c, cache_gpu.c) ---- */

/* The shape planner/cache_shape.c accepts: gpu_aggregate's or gpu_query's
** parts (planner.h's ga_parts) over entry columns.  Every key, carried
** column and value is a program (cexpr.h: a bare column is one GA_CX_COL);
** a TEXT column's program gives its codes (rule 1), which
** ga_cache_decode_keys turns into the values for keys and carried columns.
** The filter is an AND of terms over entry columns (filter.cols unused
** here: terms name entry columns). */
/* ga_cquery.pct_ask's room: gpu_query's aggregate calls at most
** (planner/query.h GA_Q_MAX_AGGS) */
#define GA_CQ_MAX_PCT_ASKS 128

typedef struct ga_cquery {
  int nkeys, ncarry, nvals; /* as the parts' (nkeys 0: ungrouped) */
  ga_cexpr *prog;           /* nkeys + ncarry programs, then nvals */
  /* the dictionary of each key's and carried column's codes (a TEXT column
  ** or a derived one), NULL for numbers */
  const ga_dict *kdict[GA_MAX_KEYS];
  /* the dictionary of each value that is TEXT (only min, max and count
  ** read it: ga_parts.val_minmax): its max and min are codes until
  ** ga_cache_decode_keys */
  const ga_dict *vdict[GA_MAX_STATES];
  gak_cfilter filter;
  /* a filter that is no AND of terms: a program, true where a row passes
  ** (host entries); has_fprog 0: filter's terms */
  int has_fprog;
  ga_cexpr fprog;
  ga_cx_env *env;  /* the programs' IN lists and maps */
  ga_dict **owned; /* derived dictionaries, freed with the query */
  int nowned;
  /* the one-value shapes (gpu_aggregate's, and the GPU's today): xcol is
  ** value 0's bare column when nvals = 1 (else -1), gcol key 0's when
  ** nkeys = 1 and ncarry = 0 (else -1); simple when nvals = 1, ncarry = 0
  ** and the key, if any, is a bare column */
  int xcol, gcol, simple;
  /* per value, 1 when a min or max reads it (ga_parts.val_best) */
  unsigned char best[GA_MAX_STATES];
  /* per value, 1 when only min, max and count read it (ga_parts.val_minmax):
  ** a host entry keeps no sum of it (cache_host.c rule 13) */
  unsigned char best_only[GA_MAX_STATES];
  /* out->sorted may come in any order (ga_parts.any_order: gpu_query's
  ** post query groups them again); else in key order */
  int any_order;
  /* ga_parts.topk_*: a GPU entry may hand over only the groups among the
  ** first topk_k (cache_gpu_query.c rule 9); topk_val -1: every group */
  int topk_val, topk_total, topk_desc;
  int64_t topk_k;
  int topk_count; /* ga_parts.topk_count: count(*) 1, count() 2 (issue 37) */
  unsigned char val_sum[GA_MAX_STATES]; /* ga_parts.val_sum */
  /* gpu_query's DISTINCT aggregates (ga_parts.val_dist, issue 37): per
  ** value 0, or 1 + the GA_COLL_* of its argument; a host entry keeps each
  ** group's set of values (cache_distinct.c), a GPU entry declines.
  ** dist_cap: the sets' bytes at most (group_bytes); interrupted: the
  ** caller's interrupt, polled on its own thread (NULL: none) */
  unsigned char dist[GA_MAX_STATES];
  int ndist;
  /* gpu_query's variances (ga_parts.val_sq, issue 39): per value 1 when
  ** its state keeps Σx² too (gstate.h rule 8); a host entry steps it in
  ** rule 6's loop (cache_host.c rule 20), a GPU entry sums it on the
  ** device (cache_gpu_stat.c) */
  unsigned char sq[GA_MAX_STATES];
  int nsq;
  /* gpu_query's medians and percentiles (ga_parts.aggs, issue 39): the
  ** fraction each asks of its GA_DIST_PCT value; a GPU entry brings back
  ** only the order statistics they read (cache_gpu_stat.c rule 3).  None:
  ** every value comes back */
  ga_pct_ask pct_ask[GA_CQ_MAX_PCT_ASKS];
  int npct_ask;
  int64_t dist_cap;
  /* a GPU entry's rows that exist (device bitmap, 64-bit words; NULL:
  ** every row): a star join's (cache_gpu_star.c rule 3) */
  const uint64_t *d_presel;
  int (*interrupted)(void *arg);
  void *interrupted_arg;
} ga_cquery;

/* The program of value i, of key or carried column k. */
static inline const ga_cexpr *ga_cq_val(const ga_cquery *q, int i) {
  return &q->prog[q->nkeys + q->ncarry + i];
}
static inline const ga_cexpr *ga_cq_key(const ga_cquery *q, int k) {
  return &q->prog[k];
}
/* A program's bare column, or -1. */
static inline int ga_cx_bare(const ga_cexpr *x) {
  return x->n == 1 && x->ins[0].op == GA_CX_COL ? x->ins[0].col : -1;
}
void ga_cquery_free(ga_cquery *q);

/* Answer q from e: the groups (ungrouped: one NULL key, or none when no row
** passed) into out->groups / out->sorted / out->n, as ga_scan_run would.
** GA_SCAN_OK; GA_SCAN_NOMEM; GA_CACHE_DECLINED with why (the entry cannot
** answer this shape: too many groups, group keys the GPU does not take);
** GA_SCAN_FALLBACK with why (a GPU step failed: drop the entry). */
#define GA_CACHE_DECLINED 40
int ga_cache_query_host(ga_cache *c, ga_centry *e, const ga_cquery *q,
                        int threads, ga_scan_out *out, char *why, size_t nwhy);
int ga_cache_query_gpu(ga_cache *c, ga_centry *e, const ga_cquery *q,
                       ga_scan_out *out, char *why, size_t nwhy);

/* The rows of word w of host block b that pass q's filter (its terms and
** program: cache_host.c), evaluated on stack (room for the program's
** depth) into *fw; 0 with *rc = GA_CACHE_DECLINED where a passing row
** raises an error (cexpr.h rule 5).  Star joins' filters (cache_star.c). */
uint64_t ga_cache_pass_word(const ga_cquery *q, const ga_cblock *b, int64_t w,
                            ga_cx_word *stack, ga_cx_word *fw, int *rc);

/* ---- DISTINCT aggregates on a host entry (cache_distinct.c) ---- */

/* Whether a host entry answers q's DISTINCT values (cache_distinct.c rule
** 4): 1, or 0 with why. */
int ga_cdist_takes(const ga_centry *e, const ga_cquery *q, char *why,
                   size_t nwhy);
/* One row's value (class cls: GA_IDR_*, word v; a code of d where d is
** not NULL) of a DISTINCT value (dist: 1 + its collation) into st, tagged
** piece (the run's number); *bytes grows by what the set grew.  GA_OK or
** GA_NOMEM. */
int ga_cdist_step(ga_gstate *st, int dist, int cls, uint64_t v,
                  const ga_dict *d, int64_t piece, int64_t *bytes);
/* The shared tally of the sets' bytes: 1 when adding delta passes cap. */
int ga_cdist_charge(int64_t *shared, int64_t delta, int64_t cap);

/* Can a GPU entry answer q (cache_gpu_query.c rule 5: keys that are columns
** or derived columns, values within the kernels' limits, an AND of terms)?
** 1, or 0 with why. */
int ga_cache_gpu_takes(const ga_centry *e, const ga_cquery *q, char *why,
                       size_t nwhy);

/* TEXT key and carried columns (rule 1): each group's code becomes its
** value (the codes' order is the values' BINARY order, so out->sorted
** stays sorted), in the entry's encoding (out->enc); so do the max and min
** of TEXT values.  GA_OK or GA_NOMEM. */
int ga_cache_decode_keys(const ga_centry *e, const ga_cquery *q,
                         ga_scan_out *out);

/* ---- GPU storage (cache_gpu.c) ---- */

/* Free a GPU entry's device arrays (its free_dev: ga_cgpu_finish sets it,
** ga_centry_free calls it). */
void ga_cache_gpu_free_entry(ga_centry *e);
/* Free the query scratch and the stream (the cache's release_dev, set
** with them: the last entry went). */
void ga_cache_gpu_release(ga_cache *c);

/* ---- loading (cache_load.c) ---- */

typedef struct ga_cload ga_cload;

/* Start loading ncols columns into a new entry (not yet in the cache),
** where = GA_CACHE_GPU or GA_CACHE_HOST, within budget bytes (evicting
** other entries of c as it grows).  NULL when out of memory. */
ga_cload *ga_cload_new(ga_cache *c, int where, int ncols, int64_t est_rows,
                       int64_t budget);
/* The collector's text over the rowids ?1 .. ?2 (rowid: the name that
** reads it), the n columns named (quoted here): the one text a load's
** pieces and an extension's new rows (planner/cache_extend.c) both run.
** sqlite3_malloc'd; NULL when out of memory. */
char *ga_cload_sql(const char *schema, const char *table, const char *rowid,
                   const char *const *names, int n);
/* The scan hooks (scan.h's piece_begin / piece_end), arg = the load; the
** piece statement's ?3 gets the piece's sink (gpuagg_collect's pointer). */
int ga_cload_piece_begin(void *load, sqlite3_stmt *st, int64_t no, int64_t lo,
                         int64_t hi);
int ga_cload_piece_end(void *load, int64_t no, int ok, int64_t *rows);
/* Forget every piece (a failed parallel scan, before a serial retry). */
void ga_cload_reset(ga_cload *l);
/* The load's failure: GA_OK; GA_NOMEM; GA_CLOAD_ETYPE (column *col holds a
** value of type *type, GA_V_TEXT or GA_V_BLOB); GA_CLOAD_EBUDGET (it does
** not fit in the budget); GA_CLOAD_EFAIL with why (too many rows, a GPU
** step: *gpu_failed set). */
#define GA_CLOAD_EFAIL 30
#define GA_CLOAD_ETYPE 31
#define GA_CLOAD_EBUDGET 32
#define GA_CLOAD_EDICT 34 /* column *col has too many distinct values */
int ga_cload_error(const ga_cload *l, char *why, size_t nwhy, int *gpu_failed,
                   int *col, int *type);
/* Rows placed or collected so far (after finish: the entry's rows). */
int64_t ga_cload_rows(const ga_cload *l);
/* Finish: the entry (columns without names, stamps unset; l is freed), or
** NULL with ga_cload_error set (then ga_cload_abort). */
ga_centry *ga_cload_finish(ga_cload *l);
void ga_cload_abort(ga_cload *l);

/* The pointer type gpuagg_collect takes (sqlite3_bind_pointer). */
#define GA_CLOAD_SINK "gpuagg_cache_sink"

/* One row into a sink: its values (types GA_V_NULL/INT/REAL; GA_V_TEXT with
** its bytes in the database's encoding, text[c] and tlen[c]; a BLOB names
** the offending column: the load then fails).  GA_OK or an error. */
typedef struct ga_csink ga_csink;
/* The database's text encoding (SQLITE_UTF8, SQLITE_UTF16LE or BE): the
** bytes TEXT values arrive in (ga_csink_row), set before the first piece. */
void ga_cload_set_enc(ga_cload *l, int enc);
int ga_csink_enc(const ga_csink *s);
int ga_csink_row(ga_csink *s, const int *types, const int64_t *words,
                 const void *const *text, const int *tlen, int ncols);

/* Where a new entry lives under cfg (GA_CACHE_GPU when a GPU is usable
** and device is not 'cpu'), and the budget there: cache_bytes, or a quarter
** of the GPU's memory or of the host's physical memory (README
** "gpu_cache"). */
int ga_cache_where(const ga_config *cfg);
int64_t ga_cache_budget(const ga_config *cfg, int where);

/* GPUAGG_CACHE_PROFILE=1 (bench/cache_profile.py): the wall time since
** *t0 of the step `what` of `who` (cache_host, cache_gpu) to stderr, and
** *t0 moved to now; nothing otherwise.  ga_cache_prof_ms: the clock. */
double ga_cache_prof_ms(void);
void ga_cache_prof(const char *who, const char *what, double *t0);

#endif
