/*
** scan.c — gpu_aggregate's parallel path (see scan.h).
**
** ======================= Locking design (on paper first) ==================
**
** Actors
**   caller    the user's connection; its thread runs xFilter, which calls
**             ga_scan_run, runs worker 0 itself and then waits there.
**   worker k  a private connection, opened READONLY | NOMUTEX with the
**             caller's VFS, pooled (scan_pool.c).  The caller's thread uses
**             it to start the snapshot, then thread k alone (worker 0: the
**             caller's thread), then (after pthread_join) the caller's
**             thread again to end it.  NOMUTEX is
**             safe because those uses never overlap, and join orders them.
**   helper    a private connection to the same file, pooled; WAL mode only.
**             READWRITE when the caller may write the file: it holds the
**             write lock for a moment and writes nothing.  READONLY when
**             the caller is read-only (sqlite3_db_readonly: mode=ro, a
**             read-only file): it only reads the data version.  No
**             connection here checkpoints on close (scan_pool.c rule 7):
**             a read-only caller's file keeps its bytes, -wal included.
**
** Preconditions, checked by the glue before it comes here (else serial):
** a file database, the caller in autocommit (sqlite3_get_autocommit) and
** without a write transaction on that schema (sqlite3_txn_state), locking
** mode NORMAL, a threadsafe SQLite.
**
** One snapshot (issue 10: a result mixing two commits is a wrong answer)
**   WAL: the helper runs BEGIN IMMEDIATE with the caller's busy timeout.
**     Holding the WAL write lock, no connection of any process can commit.
**     Each worker then runs BEGIN and its first read (the table's min and
**     max rowid): a WAL read transaction's snapshot is fixed by its first
**     read, so all workers see the last commit before the helper's lock.
**     The helper then ends its transaction (ROLLBACK; it wrote nothing).
**     No lock: BEGIN IMMEDIATE not had within the bounded wait (below), or
**     the file cannot be opened read-write -> serial path.
**   WAL, a read-only caller: a read-only connection cannot take the write
**     lock (and gpuagg opens none read-write for it), so the snapshot is
**     checked instead of held.  The helper reads PRAGMA data_version (its
**     pager counts each change of the WAL index header, which every commit
**     of any connection rewrites), then every worker runs BEGIN and its
**     first read, then the helper reads the data version again.  The same
**     number means no commit in between, so every worker read the same
**     last commit; another number ends every worker's transaction and the
**     whole begin is tried again within the bounded wait, then serial.  A
**     worker's open read transaction holds its WAL read mark, so no
**     checkpoint overwrites what it reads, as for any reader.
**   Rollback journal (DELETE, TRUNCATE, PERSIST, MEMORY, OFF): worker 0
**     runs BEGIN and its first read, taking a SHARED lock that its read
**     transaction holds to the end.  A commit needs EXCLUSIVE, which cannot
**     be had while any SHARED lock is held, so from that moment the file
**     cannot change until worker 0 ends; workers 1..n-1 begin the same way
**     and see the same state.  A writer that waits for EXCLUSIVE holds
**     PENDING, which refuses new SHARED locks: a worker's begin then fails
**     with SQLITE_BUSY at once (workers have no busy handler).  The caller
**     itself usually holds a SHARED lock on the file for its statement (it
**     read the schema in this call): then the writer waits for the caller,
**     and waiting for the writer would deadlock until a busy timeout ends
**     it, so the call goes to the serial path at once, where the caller
**     reads with the lock it has.  Otherwise every begun transaction is
**     ended (the writer may commit) and the whole begin is tried again
**     after a short sleep, within the bounded wait, and then serial.  Never
**     wait while holding a lock the writer waits for.
**   Immutable (the caller's URI has immutable=1): SQLite takes no lock and
**     reads no WAL on such a file, trusting the opener that nobody changes
**     it, and reports its journal_mode as DELETE; the workers open it the
**     same way (scan_pool.c rule 6) and begin as in rollback-journal mode,
**     where no lock is taken and nothing waits.  The caller's promise is
**     the snapshot.
**   The bounded wait (issue 22): both waits above retry at most
**     GA_SCAN_SNAPSHOT_TRIES times, GA_SCAN_SNAPSHOT_SLEEP_US apart (about
**     10 ms), and never past the caller's busy timeout.  A write
**     transaction can stay open for minutes; the serial path does not wait
**     for it in WAL mode (readers never block on the writer there), and in
**     rollback-journal mode it waits as any reader of the caller does, with
**     SQLite's own busy handler.  Each retry polls the caller's interrupt
**     first: an interrupt ends the call at once (GA_SCAN_INTERRUPT).
**   Checks: worker 0 must see the caller's schema_version of planning time
**     (the group key's collation and the columns were read from that
**     schema: a DROP and CREATE in between would change them), else
**     serial; the caller's own statement is re-prepared by SQLite.
**   Checks: every worker must read the same min and max rowid, and see the
**     journal mode the protocol assumed (switching between WAL and a
**     rollback journal needs an exclusive lock, so it happened before our
**     locks or waits until we are done); otherwise serial.
**   gpu_query's subqueries (spec.in_snapshot, planner/qsubq.c): once every
**     worker has begun (and before the read-only helper's second data
**     version), worker 0's connection evaluates them inside its read
**     transaction, the workers' snapshot, and fills the IN sets' TEMP
**     tables of every worker (the ROLLBACK that ends each drops them); its
**     progress handler polls the caller's interrupt meanwhile ("snapshot").
**   Inside the snapshot, readers need no further lock: the workers' scans
**     cannot block on anything but the dispenser mutex below.
**
** One file (issue 36)
**   Workers open the file by its path; the caller's connection reads the
**   file it opened.  A file renamed over that path (or deleted) while the
**   caller has it open leaves the caller on the old file and would give
**   the workers the new one.  The pool's own check (scan_pool.c rule 3)
**   compares the path with the file its idle connections were opened on,
**   not with the caller's file, and a rename can come after it.  So once
**   every worker has begun (its file and -wal are open from then on:
**   SQLite never opens them again), SQLITE_FCNTL_HAS_MOVED is asked of the
**   caller's schema and of each worker's main: any 1 (the path no longer
**   names that connection's file), or a VFS that cannot say, sends the
**   call to the serial path, which reads the caller's own file.
**
** Threads and shared memory
**   dispenser (mu): the next rowid, the piece size, the sparse flag and
**     the piece counter.  Sparse-mode probes run under mu on the claiming
**     worker's own connection (inside its read transaction: no lock wait).
**   done (mu + done_cv): workers still running; the caller's thread polls
**     the caller's interrupt while it runs pieces as worker 0 (a progress
**     handler on worker 0's connection, and between pieces), then
**     waits on done_cv with a 10 ms timeout to go on polling, and relays
**     an interrupt with sqlite3_interrupt (thread-safe) to the workers.
**     Every poll is caller_interrupted(), which records where the interrupt
**     was noticed (ga_scan_out.interrupted_in: tests assert on it, not on
**     time).
**   cancel, group_bytes: atomics.  The first failure is recorded under mu.
**   groups: one set shared by the workers, in 64 shards by hash, each with
**     its own mutex (scan_group.h); a worker holds one shard's mutex at a
**     time and waits on nothing while holding it but SQLite's own
**     allocator mutex (a long TEXT max in direct mode; SQLite never calls
**     us holding it, so no cycle).  A move of a worker's table takes each
**     shard once; direct mode takes a shard a row.  New groups of worker
**     tables and of direct mode come from the shards' arena: its mutex
**     guards only its block list, taken once per 256 groups, never while
**     holding it anything else.  The caller's thread reads the groups
**     after joining every worker.
**
** Pieces (balance on sparse and skewed rowids)
**   Pieces are rowid ranges handed out in increasing order and numbered in
**   that order, so piece numbers are rowid order (scan_group.h rule 2).
**   They cover the table's min..max rowid, or, with spec.sql_range (an
**   indexed range, planner/qindex.c), only the band of rowids that can pass
**   the filter: worker 0 runs that statement once every worker has begun,
**   inside their one snapshot, so the band is that snapshot's.  A
**   piece aims at `base` rows: in dense mode it spans base rowids (never
**   more rows than that).  After a piece with few rows (less than base/4
**   passed the filter) the next claim probes first: the first rowid at or
**   after the cursor (jumping any gap at once, e.g. 1..1e6 then 2^62) and
**   the position of the k-th row after it (k = min(base, 4096)), and sizes
**   the piece to hold about base rows at that density.  A dense cluster
**   hidden behind sparse rows inside one piece can still make it larger.
**   Grouped scans whose pieces return many groups per row take the largest
**   pieces, so that merging states stays small next to scanning (each
**   merge touches a group likely out of cache).
**
** Grouped scans: hash mode, or sorted mode
**   A grouped scan runs in hash mode (scan.h sql_rows): a worker groups
**   its piece's rows in a table of its own (no lock) and moves them into
**   the shared groups at the piece's end.  A table that reaches
**   local_groups groups is moved at once, mid-piece, and the piece goes on
**   in an empty table (the rows of one piece still reach the shared groups
**   in rowid order, all with that piece's number, so rule 2 of
**   scan_group.h holds).  Memory is then the shared groups plus a bounded
**   table per worker, and each row costs at most one merge of compact
**   states (engine/state/gstate.h): cheaper than SQLite's GROUP BY, which
**   sorts every row (bench/RESULTS.md §11, high-cardinality groups).
**   When a move finds fewer than two rows a group (many groups: each
**   would be moved for a row or two), the worker goes direct for the rest
**   of the scan: each row is stepped straight into its shared group under
**   the shard's lock, with rule 2 kept by the piece tags
**   (ga_gstate_best_tagged; ga_gs_hold_group gives keys to an earlier
**   piece).
**   Without sql_rows (a plan that cannot step values itself) every piece
**   runs sql_piece, SQLite's GROUP BY, and its groups are merged as they
**   come: sorted mode.
** ===========================================================================
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "keymemo.h"
#include "pintime.h"
#include "scan.h"

#define GA_SCAN_BASE_MAX 131072 /* rows of a piece, at most (see bench) */
#define GA_SCAN_BASE_MIN 64
/* Hash mode: a worker's table holds this many bytes of groups at most
** (GA_GROUP_FIXED_BYTES each, and its slot), then moves them into the
** shared groups: the fewer moves, the fewer merges (each touches a shared
** group likely out of cache), while 16 workers' tables stay at 512 MiB.
** d2 of bench/RESULTS.md §11 fits 35,000 groups, a 1-key 1-state scan
** 84,000. */
#define GA_SCAN_LOCAL_BYTES ((int64_t)32 << 20)
#define GA_SCAN_LOCAL_MIN 1024
/* A piece's table of at least this many groups, or a full one, can send
** its worker to direct mode (take_local). */
#define GA_SCAN_DIRECT_MIN 4096
/* Direct mode's rows a batch (ga_gs_batch): about 40 a shard, enough to
** prefetch ahead and to lock each shard once for many rows; the batch's
** arrays (64 bytes a value) stay in a core's L2 for d2's six values. */
#define GA_SCAN_DIRECT_BATCH 2560

typedef struct scan_shared scan_shared;

typedef struct worker {
  scan_shared *sh;
  sqlite3 *db;
  sqlite3_stmt *piece, *rows_st, *first, *kth;
  int64_t rows;
  int index; /* k of sh->w[k] */
  pthread_t th;
  int started;
  int caller;             /* worker 0 runs on the caller's thread and polls its
                             interrupt in and between pieces */
  ga_group_table local;   /* hash mode: this piece's groups */
  int64_t local_rows;     /* rows stepped into it since it was last moved */
  int direct;             /* rows go straight into the shared groups */
  int64_t direct_rows;    /* so taken */
  int64_t direct_batches; /* of them, stepped a batch at a time */
  double piece_ms;        /* in its pieces (last_scan.worker_ms) */
  double flush_ms;        /* stepping batches */
  int64_t wait_ns;        /* of it, blocked on shards */
  ga_gs_batch batch;      /* direct mode's rows, stepped a batch at a time */
  ga_keymemo memo;        /* spec.key_memo's terms (keymemo.h), this call's */
  ga_keymemo *memo_old;   /* the thread's memo before (memo entered) */
  int memo_in;
} worker;

struct scan_shared {
  const ga_scan_spec *spec;
  pthread_mutex_t mu;
  pthread_cond_t done_cv;
  int running;
  /* dispenser */
  int64_t next, max, base, base_max, npieces, nprobes, max_piece_rows;
  int64_t est; /* rows of the table, an upper estimate */
  int exhausted, sparse;
  int64_t nhash;        /* pieces claimed in hash mode */
  int64_t nflush;       /* worker tables moved mid-piece (atomic) */
  int64_t local_groups; /* from GA_SCAN_LOCAL_BYTES, smaller in tests */
  int batch_rows;       /* GA_SCAN_DIRECT_BATCH; tests: 0, row by row */
  /* failure */
  int cancel; /* atomic */
  int fail_rc;
  char why[256];
  const char *intr_in; /* GA_SCAN_INTERRUPT: where (ga_scan_out) */
  /* the snapshot's bounded wait */
  int64_t snap_waits, snap_tries;
  double deadline;
  int waiting;                  /* counted in the gauge now_waiting */
  int fault_busy, fault_schema; /* GPUAGG_SCAN_FAULT=busy, schema (tests) */
  int fault_commit;             /* GPUAGG_SCAN_FAULT=commit (tests) */
  const char *fault_rename;     /* GPUAGG_SCAN_FAULT=rename:SRC (tests) */
  ga_group_shards *groups;      /* shared by the workers (scan_group.h) */
  int64_t group_bytes;          /* atomic */
  int64_t fault_piece;          /* GPUAGG_SCAN_FAULT=piece:N, tests; -1 none */
  worker *w;
  int nw;
  int64_t time_reads; /* atomic: pinned times read (spec.pin_alone) */
};

static int exec(sqlite3 *db, const char *sql);
static double now_ms(void);

static int64_t sat_add(int64_t a, int64_t b) { /* b >= 0 */
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* The gauges of scan.h (atomics). */
static int now_waiting, now_in_caller_piece;

int ga_scan_now_waiting(void) {
  return __atomic_load_n(&now_waiting, __ATOMIC_RELAXED);
}

int ga_scan_now_in_caller_piece(void) {
  return __atomic_load_n(&now_in_caller_piece, __ATOMIC_RELAXED);
}

/* Record the first failure (an interrupt: where it was noticed) and stop
** everyone.  rc: GA_SCAN_FALLBACK, GA_SCAN_INTERRUPT or GA_SCAN_NOMEM. */
static void fail_in(scan_shared *sh, int rc, const char *where, const char *fmt,
                    const char *a) {
  pthread_mutex_lock(&sh->mu);
  if (!sh->fail_rc) {
    sh->fail_rc = rc;
    sh->intr_in = where;
    snprintf(sh->why, sizeof sh->why, fmt, a ? a : "");
  }
  pthread_mutex_unlock(&sh->mu);
  if (!__atomic_exchange_n(&sh->cancel, 1, __ATOMIC_ACQ_REL))
    for (int k = 0; k < sh->nw; k++)
      if (sh->w[k].db)
        sqlite3_interrupt(sh->w[k].db);
}

static void fail(scan_shared *sh, int rc, const char *fmt, const char *a) {
  fail_in(sh, rc, NULL, fmt, a);
}

static int cancelled(scan_shared *sh) {
  return __atomic_load_n(&sh->cancel, __ATOMIC_ACQUIRE);
}

/* The caller's interrupt, polled on the caller's thread only (worker 0,
** the snapshot, the wait for the workers): 1 when it was interrupted, and
** then the scan fails with GA_SCAN_INTERRUPT, noticed at where. */
static int caller_interrupted(scan_shared *sh, const char *where) {
  const ga_scan_spec *sp = sh->spec;
  if (!sp->interrupted || !sp->interrupted(sp->interrupted_arg))
    return 0;
  fail_in(sh, GA_SCAN_INTERRUPT, where, "interrupted%s", NULL);
  return 1;
}

/* A worker's SQLite error: interrupted by us (cancel), out of memory, or a
** reason for the serial path. */
static void fail_sql(worker *w, int rc) {
  scan_shared *sh = w->sh;
  if ((rc & 0xff) == SQLITE_INTERRUPT && cancelled(sh))
    return;
  if ((rc & 0xff) == SQLITE_NOMEM)
    fail(sh, GA_SCAN_NOMEM, "out of memory%s", NULL);
  else
    fail(sh, GA_SCAN_FALLBACK, "a worker failed: %s", sqlite3_errmsg(w->db));
}

static int prepare(worker *w, const char *sql, sqlite3_stmt **st) {
  if (*st)
    return SQLITE_OK;
  return sqlite3_prepare_v2(w->db, sql, -1, st, NULL);
}

/* One rowid from a probe statement: 1 found (*out), 0 none, -1 error. */
static int probe(worker *w, sqlite3_stmt *st, int64_t from, int64_t offset,
                 int64_t *out) {
  int rc;
  sqlite3_bind_int64(st, 1, from);
  if (sqlite3_bind_parameter_count(st) >= 2)
    sqlite3_bind_int64(st, 2, offset);
  rc = sqlite3_step(st);
  int found = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
  if (found)
    *out = sqlite3_column_int64(st, 0);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    rc = sqlite3_reset(st);
    fail_sql(w, rc);
    return -1;
  }
  sqlite3_reset(st);
  return found;
}

/* The next piece [*lo, *hi] (number *no) and its mode (*hash: hash mode,
** else SQLite's GROUP BY); 0 when none is left for this worker or on a
** failure. */
static int claim(worker *w, int64_t *lo, int64_t *hi, int64_t *no, int *hash) {
  scan_shared *sh = w->sh;
  const ga_scan_spec *sp = sh->spec;
  int got = 0;
  pthread_mutex_lock(&sh->mu);
  if (sh->exhausted || cancelled(sh))
    goto out;
  *hash = sp->sql_rows != NULL;
  sh->nhash += *hash;
  int64_t a = sh->next, b;
  if (sh->sparse) {
    int64_t r0, rk;
    int64_t k = sh->base < GA_SCAN_PROBE_ROWS ? sh->base : GA_SCAN_PROBE_ROWS;
    if (prepare(w, sp->sql_first, &w->first) ||
        prepare(w, sp->sql_kth, &w->kth)) {
      pthread_mutex_unlock(&sh->mu);
      fail_sql(w, sqlite3_errcode(w->db));
      return 0;
    }
    int f = probe(w, w->first, a, 0, &r0);
    if (f < 0)
      goto out;
    if (f == 0 || r0 > sh->max) {
      sh->exhausted = 1;
      goto out;
    }
    a = r0;
    f = probe(w, w->kth, a, k - 1, &rk);
    if (f < 0)
      goto out;
    sh->nprobes++;
    if (f == 0 || rk >= sh->max) {
      b = sh->max;
    } else {
      /* k rows over [a, rk]: base rows over about (rk - a + 1) * base / k */
      __int128 span = ((__int128)rk - a + 1) * sh->base / k;
      b = span >= (__int128)INT64_MAX ? INT64_MAX
                                      : sat_add(a, (int64_t)span - 1);
    }
  } else {
    b = sat_add(a, sh->base - 1);
  }
  if (b >= sh->max) {
    b = sh->max;
    sh->exhausted = 1;
  } else {
    sh->next = b + 1;
  }
  *lo = a;
  *hi = b;
  *no = sh->npieces++;
  got = 1;
out:
  pthread_mutex_unlock(&sh->mu);
  return got;
}

static void report(worker *w, int64_t rows, int64_t groups) {
  scan_shared *sh = w->sh;
  pthread_mutex_lock(&sh->mu);
  sh->sparse = rows < sh->base / 4;
  if (rows > sh->max_piece_rows)
    sh->max_piece_rows = rows;
  /* many groups a row: each (piece, group) costs a state merge into a
  ** group that is likely out of cache (~800 bytes), so take few, large
  ** pieces at once */
  if (sh->spec->grouped && groups * 8 > rows)
    sh->base = sh->base_max;
  pthread_mutex_unlock(&sh->mu);
}

/* A key column as a ga_value; TEXT in the database's encoding enc (0 or
** SQLITE_UTF8: as UTF-8), scan_group.h rule 1.  0 when SQLite could not
** make its text (out of memory). */
static int key_of(sqlite3_stmt *st, int col, int enc, ga_value *k) {
  memset(k, 0, sizeof(*k));
  switch (sqlite3_column_type(st, col)) {
  case SQLITE_INTEGER:
    k->type = GA_V_INT;
    k->i = sqlite3_column_int64(st, col);
    break;
  case SQLITE_FLOAT:
    k->type = GA_V_REAL;
    k->r = sqlite3_column_double(st, col);
    break;
  case SQLITE_TEXT: {
    sqlite3_value *v = sqlite3_column_value(st, col);
    k->type = GA_V_TEXT;
    /* the stored bytes: no conversion, so no two keys become one */
    if (enc == SQLITE_UTF16LE || enc == SQLITE_UTF16BE) {
      k->p = enc == SQLITE_UTF16LE ? sqlite3_value_text16le(v)
                                   : sqlite3_value_text16be(v);
      k->n = sqlite3_value_bytes16(v);
    } else if (enc != SQLITE_UTF8) { /* unknown: as UTF-8 */
      k->p = sqlite3_value_text(v);
      k->n = sqlite3_value_bytes(v);
    } else {
      /* UTF-8 as SQLite holds it, without the terminator that
      ** sqlite3_value_text would add to a computed value (substr(...)):
      ** that is an allocation a row, through SQLite's global allocator
      ** mutex, which 16 workers contend for (bench/RESULTS.md §11) */
      k->n = sqlite3_value_bytes(v);
      k->p = k->n ? sqlite3_value_blob(v) : (const void *)"";
    }
    break;
  }
  case SQLITE_BLOB:
    k->type = GA_V_BLOB;
    k->p = sqlite3_column_blob(st, col);
    k->n = sqlite3_column_bytes(st, col);
    break;
  default:
    k->type = GA_V_NULL;
  }
  /* NULL: the empty BLOB, or out of memory (TEXT is never NULL) */
  return k->p || k->type == GA_V_NULL || k->type == GA_V_INT ||
         k->type == GA_V_REAL || (k->type == GA_V_BLOB && k->n == 0);
}

/* One row of the piece statement into the groups; GA_* code. */
static int take_row(worker *w, int64_t no, int64_t *rows, int64_t *bytes,
                    const char **err) {
  sqlite3_stmt *st = w->piece;
  const ga_scan_spec *sp = w->sh->spec;
  const ga_gshape *shape = &sp->shape;
  int col = sp->grouped ? shape->nk + shape->nc : 0, rc = GA_OK;
  ga_value key[GA_MAX_KEYS];
  ga_xstate s[GA_MAX_STATES];
  if (sp->grouped) {
    for (int i = 0; i < shape->nk + shape->nc; i++)
      if (!key_of(st, i, sp->enc, &key[i]))
        return GA_NOMEM;
  } else
    memset(&key[0], 0, sizeof(key[0])); /* GA_V_NULL, n = 0: no group key */
  int n = 0;
  for (; n < shape->ns && rc == GA_OK; n++)
    rc = ga_state_decode(sqlite3_column_blob(st, col + n),
                         sqlite3_column_bytes(st, col + n), GA_STATE_FUSED,
                         &s[n], err);
  if (rc) { /* the failed one is empty (decode initialises it) */
    for (int i = 0; i < n; i++)
      ga_xstate_clear(&s[i]);
    return rc;
  }
  *rows += s[0].rows;
  return ga_gs_add(w->sh->groups, key, s, no, bytes); /* clears s */
}

/* Hash and direct modes: the row's keys and carried values (the first
** columns of sql_rows), the memo's terms taken from it (keymemo.h).  GA_OK,
** GA_NOMEM or GA_KEYMEMO_STEP. */
static int read_keys(worker *w, sqlite3_stmt *st, ga_value *key) {
  const ga_scan_spec *sp = w->sh->spec;
  for (int i = 0; i < sp->shape.nk + sp->shape.nc; i++)
    if (!key_of(st, i, sp->enc, &key[i]))
      return GA_NOMEM;
  return w->memo.terms ? ga_keymemo_take(&w->memo, key) : GA_OK;
}

/* A DISTINCT aggregate's value (scan_group.h rule 5) of rowid piece
** `piece`: the column's value as a key reads it (TEXT in the database's
** encoding; as UTF-8 under NOCASE and RTRIM, which SQLite registers for
** UTF-8 only and so compares converted), into the state's set.  A TEXT or
** BLOB that becomes a
** representative then gets sum()'s view of it (sqlite3_value_numeric_type,
** as the gpu_ aggregates classify it), read after the set copied its bytes,
** since that call may turn the value into a number.  GA_* code. */
static int step_distinct(const ga_scan_spec *sp, ga_gstate *s, int coll,
                         int64_t piece, sqlite3_stmt *st, int col) {
  ga_value raw;
  ga_dent *e = NULL;
  int enc = coll != GA_COLL_BINARY && sp->enc != SQLITE_UTF8 ? 0 : sp->enc;
  if (!key_of(st, col, enc, &raw))
    return GA_NOMEM;
  int rc = ga_distinct_step(s, coll, &raw, piece, &e);
  if (rc == GA_OK && e && (raw.type == GA_V_TEXT || raw.type == GA_V_BLOB)) {
    sqlite3_value *v = sqlite3_column_value(st, col);
    ga_value num;
    memset(&num, 0, sizeof(num));
    if (sqlite3_value_numeric_type(v) == SQLITE_INTEGER) {
      num.type = GA_V_INT;
      num.i = sqlite3_value_int64(v);
    } else {
      num.type = GA_V_REAL;
      num.r = sqlite3_value_double(v);
    }
    ga_dset_set_num(e, &num);
  }
  return rc;
}

/* The square of the column's value into state s (gstate.h rule 8), as
** sum() views the value (ext/aggregates/var.c rule 1): NULL adds nothing,
** INTEGER is exact, anything else is sqlite3_value_double's REAL.  GA_*
** code. */
static int step_square(ga_gstate *s, sqlite3_stmt *st, int col) {
  sqlite3_value *v = sqlite3_column_value(st, col);
  ga_value num;
  memset(&num, 0, sizeof(num));
  switch (sqlite3_value_numeric_type(v)) {
  case SQLITE_NULL:
    return GA_OK;
  case SQLITE_INTEGER:
    num.type = GA_V_INT;
    num.i = sqlite3_value_int64(v);
    break;
  default:
    num.type = GA_V_REAL;
    num.r = sqlite3_value_double(v);
  }
  return ga_gstate_sq_step(s, &num);
}

static int step_value_sum(const ga_scan_spec *sp, ga_gstate *s, int i,
                          int64_t piece, sqlite3_stmt *st, int col);

/* One value into state i (hash mode: rows of piece `piece`); GA_* code. */
/* scan_group.h rule 6: the column's value as a median keeps it. */
static int step_pct(ga_gstate *s, sqlite3_stmt *st, int col) {
  ga_value v;
  memset(&v, 0, sizeof v);
  switch (sqlite3_column_type(st, col)) {
  case SQLITE_NULL:
    break;
  case SQLITE_INTEGER:
    v.type = GA_V_INT;
    v.i = sqlite3_column_int64(st, col);
    break;
  case SQLITE_FLOAT:
    v.type = GA_V_REAL;
    v.r = sqlite3_column_double(st, col);
    break;
  default:
    v.type = GA_V_TEXT; /* refused: ga_pct_gstep reads the type only */
  }
  return ga_pct_gstep(s, &v);
}

static int step_value(const ga_scan_spec *sp, ga_gstate *s, int i,
                      int64_t piece, sqlite3_stmt *st, int col) {
  if (sp->shape.dist[i] == GA_DIST_PCT)
    return step_pct(s, st, col);
  int rc = step_value_sum(sp, s, i, piece, st, col);
  if (rc == GA_OK && sp->shape.sq[i]) /* issue 39 */
    rc = step_square(s, st, col);
  return rc;
}

static int step_value_sum(const ga_scan_spec *sp, ga_gstate *s, int i,
                          int64_t piece, sqlite3_stmt *st, int col) {
  if (sp->shape.dist[i])
    return step_distinct(sp, s, sp->shape.dist[i] - 1, piece, st, col);
  int type = sqlite3_column_type(st, col);
  switch (type) {
  case SQLITE_INTEGER:
    return ga_gstate_step_int(s, sqlite3_column_int64(st, col));
  case SQLITE_FLOAT:
    return ga_gstate_step_real(s, sqlite3_column_double(st, col));
  case SQLITE_NULL:
    ga_gstate_step_null(s);
    return GA_OK;
  default:
    return sp->step_other(s, NULL, 0, sqlite3_column_value(st, col), type,
                          sp->enc);
  }
}

/* Direct mode: one value into a shared group's state, rule 2 by its tags
** (tag: the state's two, piece: the row's); *extra grows by the TEXT or
** BLOB bytes the state kept.  GA_* code. */
static int step_value_direct(const ga_scan_spec *sp, ga_gstate *s, int i,
                             int64_t *tag, int64_t piece, sqlite3_stmt *st,
                             int col, int64_t *extra) {
  if (sp->shape.dist[i]) { /* the set's tags keep rule 2 */
    int64_t was = ga_gstate_heap_bytes(s);
    int rc = sp->shape.dist[i] == GA_DIST_PCT
                 ? step_pct(s, st, col)
                 : step_distinct(sp, s, sp->shape.dist[i] - 1, piece, st, col);
    *extra += ga_gstate_heap_bytes(s) - was;
    return rc;
  }
  int type = sqlite3_column_type(st, col);
  if (type == SQLITE_NULL) {
    ga_gstate_step_null(s);
    return GA_OK;
  }
  int64_t was = ga_gstate_heap_bytes(s); /* a TEXT max, a wide sum */
  int rc;
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
    ga_value x = {0};
    x.type = type == SQLITE_INTEGER ? GA_V_INT : GA_V_REAL;
    if (type == SQLITE_INTEGER)
      x.i = sqlite3_column_int64(st, col);
    else
      x.r = sqlite3_column_double(st, col);
    rc = ga_gstate_step_tagged(s, tag, piece, &x);
  } else {
    rc = sp->step_other(s, tag, piece, sqlite3_column_value(st, col), type,
                        sp->enc);
  }
  if (rc == GA_OK && sp->shape.sq[i]) /* issue 39 */
    rc = step_square(s, st, col);
  *extra += ga_gstate_heap_bytes(s) - was;
  return rc;
}

/* Hash mode: one row of the piece statement (keys, values) into the
** worker's own table, whose rows come in rowid order (rule 2 of
** scan_group.h); or in direct mode (w->direct: many groups, where a
** worker's table would hold each group for a row or two and moving it
** would cost more than the row) straight into the shared groups, under
** the shard's lock, rule 2 kept by the piece tags.  GA_* code. */
static int take_row_keys(worker *w, int64_t no, int64_t *rows, int64_t *bytes,
                         const ga_value *key) {
  sqlite3_stmt *st = w->rows_st;
  const ga_scan_spec *sp = w->sh->spec;
  const ga_gshape *shape = &sp->shape;
  uint64_t h = ga_keys_hash(key, shape);
  ga_gs_hold hold;
  ga_group *g = w->direct ? ga_gs_hold_group(w->sh->groups, key, h, no, &hold)
                          : ga_gt_get(&w->local, key, h, no);
  if (!g)
    return GA_NOMEM;
  (*rows)++;
  int rc = GA_OK;
  int64_t extra = 0;
  for (int i = 0; i < shape->ns && rc == GA_OK; i++) {
    int col = shape->nk + shape->nc + i;
    rc = w->direct ? step_value_direct(sp, &g->st[i], i, &g->tag[2 * i], no, st,
                                       col, &extra)
                   : step_value(sp, &g->st[i], i, no, st, col);
  }
  if (w->direct)
    ga_gs_release(w->sh->groups, &hold, extra, bytes);
  return rc;
}

/* The same, the row's keys read here (once a row: the memo's record of
** the row is consumed by reading them). */
static int take_row_hash(worker *w, int64_t no, int64_t *rows, int64_t *bytes) {
  ga_value key[GA_MAX_KEYS];
  int rc = read_keys(w, w->rows_st, key);
  return rc != GA_OK ? rc : take_row_keys(w, no, rows, bytes, key);
}

/* Direct mode: the worker's batch into the shared groups (emptied,
** whatever the outcome).  GA_* code. */
static int step_batch(worker *w, int64_t no, int64_t *bytes) {
  if (!w->batch.n)
    return GA_OK;
  w->direct_batches++;
  double t0 = now_ms();
  int rc =
      ga_gs_step_batch(w->sh->groups, &w->batch, no,
                       w->index * GA_GS_SHARDS / w->sh->nw, bytes, &w->wait_ns);
  w->flush_ms += now_ms() - t0;
  return rc;
}

/* Direct mode in batches (ga_gs_batch): the row's keys, hash and values
** into the worker's batch, stepped when it is full.  A row with a TEXT or
** BLOB value, or keys with too many bytes for a batch, steps the batch,
** then itself alone (take_row_hash): rows reach their groups in rowid
** order.  GA_* code. */
static int take_row_batch(worker *w, int64_t no, int64_t *rows,
                          int64_t *bytes) {
  sqlite3_stmt *st = w->rows_st;
  const ga_scan_spec *sp = w->sh->spec;
  const ga_gshape *shape = &sp->shape;
  int nkc = shape->nk + shape->nc, rc, have_keys = 0;
  ga_value key[GA_MAX_KEYS], val[GA_MAX_STATES];
  if (!w->batch.cap &&
      ga_gs_batch_init(&w->batch, shape, w->sh->batch_rows) != GA_OK)
    return GA_NOMEM;
  for (int i = 0; i < shape->ns; i++) {
    ga_value *x = &val[i];
    memset(x, 0, sizeof(*x));
    switch (sqlite3_column_type(st, nkc + i)) {
    case SQLITE_INTEGER:
      x->type = GA_V_INT;
      x->i = sqlite3_column_int64(st, nkc + i);
      break;
    case SQLITE_FLOAT:
      x->type = GA_V_REAL;
      x->r = sqlite3_column_double(st, nkc + i);
      break;
    case SQLITE_NULL:
      x->type = GA_V_NULL;
      break;
    default:
      goto alone;
    }
  }
  if ((rc = read_keys(w, st, key)) != GA_OK)
    return rc;
  have_keys = 1;
  size_t text = 0;
  for (int i = 0; i < nkc; i++)
    if (key[i].type == GA_V_TEXT || key[i].type == GA_V_BLOB)
      text += (size_t)key[i].n;
  if (!ga_gs_batch_room(&w->batch, text)) {
    if ((rc = step_batch(w, no, bytes)) != GA_OK)
      return rc;
    if (!ga_gs_batch_room(&w->batch, text))
      goto alone;
  }
  ga_gs_batch_add(&w->batch, key, val, ga_keys_hash(key, shape));
  (*rows)++;
  return GA_OK;
alone:
  if ((rc = step_batch(w, no, bytes)) != GA_OK)
    return rc;
  return have_keys ? take_row_keys(w, no, rows, bytes, key)
                   : take_row_hash(w, no, rows, bytes);
}

/* Hash mode: the worker's table into the shared groups (all tagged with
** piece no: rows of one piece reach the shared groups in rowid order, so a
** piece may be moved in several parts).  GA_* code. */
static int take_local(worker *w, int64_t no, int64_t *groups, int64_t *bytes,
                      int full) {
  int64_t n = (int64_t)w->local.n;
  *groups += n;
  /* fewer than two rows a group: the table saves less than moving its
  ** groups costs, so this worker goes direct for the rest of the scan (a
  ** full table, or a piece's worth of groups: not a few stray ones) */
  if ((full || n >= GA_SCAN_DIRECT_MIN) && n * 2 > w->local_rows)
    w->direct = 1;
  w->local_rows = 0;
  return ga_gs_take(w->sh->groups, &w->local, no, bytes);
}

/* A failed state step or merge (GA_NOMEM, or GA_BADSTATE with err, NULL
** when a merged count would leave int64). */
static void fail_groups(scan_shared *sh, int grc, const char *err) {
  if (grc == GA_NOMEM)
    fail(sh, GA_SCAN_NOMEM, "out of memory%s", NULL);
  else if (grc == GA_KEYMEMO_STEP)
    fail(sh, GA_SCAN_FALLBACK,
         "a worker's key memo lost track of its row (keymemo.h rule 2)%s",
         NULL);
  else if (grc == GA_PCT_BAD) /* scan_group.h rule 6 */
    fail(sh, GA_SCAN_FALLBACK,
         "a median's or percentile's input holds TEXT, a BLOB or an "
         "infinity: SQLite's own error, on the serial path%s",
         NULL);
  else
    fail(sh, GA_SCAN_FALLBACK, "a worker's state: %s",
         err ? err : "a count left int64");
}

/* One piece's rows; SQLITE_DONE, or the failure is recorded (fail) and
** something else returned. */
static int run_piece(worker *w, sqlite3_stmt *st, int hash, int64_t no,
                     int64_t *rows, int64_t *groups, int64_t *bytes) {
  scan_shared *sh = w->sh;
  const ga_scan_spec *sp = sh->spec;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *err = NULL;
    if (sp->piece_begin)
      continue; /* the consumer's statement: its rows are its own */
    int grc;
    if (!hash) {
      grc = take_row(w, no, rows, bytes, &err);
    } else if (w->direct) {
      grc = sh->batch_rows > 1 ? take_row_batch(w, no, rows, bytes)
                               : take_row_hash(w, no, rows, bytes);
      w->direct_rows++;
    } else {
      grc = take_row_hash(w, no, rows, bytes);
      w->local_rows++;
      if (grc == GA_OK && (int64_t)w->local.n >= sh->local_groups) {
        grc = take_local(w, no, groups, bytes, 1); /* the piece goes on */
        __atomic_add_fetch(&sh->nflush, 1, __ATOMIC_RELAXED);
      }
    }
    if (grc == GA_OK && (!hash || w->direct))
      (*groups)++; /* a group a row, at most */
    if (grc) {
      ga_gs_batch_drop(&w->batch); /* a failed scan: its rows go nowhere */
      sqlite3_reset(st);
      fail_groups(sh, grc, err);
      return SQLITE_ABORT;
    }
  }
  if (w->batch.n) { /* the piece's last rows; none, when it failed */
    int grc = rc == SQLITE_DONE ? step_batch(w, no, bytes) : GA_OK;
    ga_gs_batch_drop(&w->batch);
    if (grc) {
      sqlite3_reset(st);
      fail_groups(sh, grc, NULL);
      return SQLITE_ABORT;
    }
  }
  if (rc == SQLITE_DONE && hash && w->local.n) {
    int grc = take_local(w, no, groups, bytes, 0);
    if (grc) {
      sqlite3_reset(st);
      fail_groups(sh, grc, NULL);
      return SQLITE_ABORT;
    }
  }
  if (rc != SQLITE_DONE) {
    rc = sqlite3_reset(st);
    fail_sql(w, rc);
    return SQLITE_ABORT;
  }
  sqlite3_reset(st);
  return SQLITE_DONE;
}

/* Worker 0's progress handler: the caller's interrupt, polled inside a
** piece too (a piece can run for a long time: a slow expression, a large
** piece of a sparse table), not only between pieces.  It stops everyone,
** then fails its own statement with SQLITE_INTERRUPT. */
static int caller_progress(void *arg) {
  worker *w = arg;
  return cancelled(w->sh) || caller_interrupted(w->sh, "piece");
}

/* The same while worker 0 evaluates gpu_query's subqueries inside the
** snapshot (spec.in_snapshot): noticed in "snapshot". */
static int caller_progress_snap(void *arg) {
  worker *w = arg;
  return cancelled(w->sh) || caller_interrupted(w->sh, "snapshot");
}

/* VM instructions between two polls: a few hundred rows, tens of
** microseconds; sqlite3_is_interrupted is one load (the older SQLite's probe
** statement is a step, still small next to them). */
#define GA_SCAN_POLL_OPS 4096

/* The spec's parameter values into parameters 3.. of st (a NULL entry is
** an unbound parameter). */
static int bind_params(sqlite3_stmt *st, const ga_scan_spec *sp) {
  int n = sqlite3_bind_parameter_count(st);
  for (int i = 0; i < sp->nparams && i + 3 <= n; i++) {
    if (!sp->params[i])
      continue; /* unbound: NULL */
    int rc = sqlite3_bind_value(st, i + 3, sp->params[i]);
    if (rc != SQLITE_OK)
      return rc;
  }
  return SQLITE_OK;
}

/* The band of sql_range (scan.h), on worker 0 inside the snapshot, into
** [*mn, *mx] (the table's bounds, narrowed: the pieces cover only it), or
** *have = 0 when no row is in the range.  GA_SCAN_OK, or the failure is
** recorded. */
static int range_bounds(scan_shared *sh, int *have, int64_t *mn, int64_t *mx) {
  worker *w = &sh->w[0];
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(w->db, sh->spec->sql_range, -1, &st, NULL);
  if (rc == SQLITE_OK)
    rc = bind_params(st, sh->spec);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    if (sqlite3_column_int(st, 0)) { /* exact */
      if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
        *have = 0;
      } else {
        int64_t lo = sqlite3_column_int64(st, 1);
        int64_t hi = sqlite3_column_int64(st, 2);
        if (lo > *mn)
          *mn = lo;
        if (hi < *mx)
          *mx = hi;
        *have = *mn <= *mx;
      }
    }
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK; /* no row: the whole table */
  }
  if (rc != SQLITE_OK) {
    rc = sqlite3_finalize(st);
    st = NULL;
    fail_sql(w, rc ? rc : SQLITE_ERROR);
  }
  sqlite3_finalize(st);
  return sh->fail_rc;
}

/* engine/state/dset.h rule 5: a merge of DISTINCT sets (take_local) is as
** long as its input, so it stops once the scan is cancelled or, on the
** caller's thread, the caller is interrupted (noticed in "merge"). */
static int merge_poll(void *arg) {
  worker *w = arg;
  return cancelled(w->sh) || (w->caller && caller_interrupted(w->sh, "merge"));
}

static void *worker_main(void *arg) {
  worker *w = arg;
  scan_shared *sh = w->sh;
  const ga_scan_spec *sp = sh->spec;
  int64_t lo, hi, no;
  int hash;
  ga_pintime_saved pinned;
  ga_dset_poll poll = {merge_poll, w, 0}, *poll_was = ga_dset_poll_swap(&poll);
  /* the call's one time for every step of this thread (spec.pin; the
  ** thread may be the caller's: leave gives back what it had) */
  if (sp->pin)
    ga_pintime_enter(sp->pin_ms, &sh->time_reads, &pinned);
  if (prepare(w, sp->sql_piece, &w->piece) ||
      (sp->sql_rows && prepare(w, sp->sql_rows, &w->rows_st))) {
    fail_sql(w, sqlite3_errcode(w->db));
    goto done;
  }
  if (sp->key_memo_n && sp->sql_rows && !sp->piece_begin) { /* this call's */
    ga_keymemo_init(&w->memo, sp->shape.nk, sp->key_memo,
                    sp->key_memo_bytes ? sp->key_memo_bytes : GA_KEYMEMO_BYTES);
    ga_keymemo_enter(&w->memo, &w->memo_old);
    w->memo_in = 1;
  }
  if (sp->nparams) { /* the query's parameters, read one worker at a time */
    pthread_mutex_lock(&sh->mu);
    int brc = bind_params(w->piece, sp);
    if (brc == SQLITE_OK && w->rows_st)
      brc = bind_params(w->rows_st, sp);
    pthread_mutex_unlock(&sh->mu);
    if (brc != SQLITE_OK) {
      fail_sql(w, brc);
      goto done;
    }
  }
  while (!cancelled(sh) && claim(w, &lo, &hi, &no, &hash)) {
    int64_t rows = 0, groups = 0, bytes = 0;
    int rc;
    sqlite3_stmt *st = hash ? w->rows_st : w->piece;
    if (no == sh->fault_piece) {
      fail(sh, GA_SCAN_FALLBACK, "a worker failed: injected fault%s", NULL);
      goto done;
    }
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    if (sp->piece_begin &&
        (rc = sp->piece_begin(sp->piece_arg, st, no, lo, hi)) != 0) {
      fail(sh, rc == GA_NOMEM ? GA_SCAN_NOMEM : GA_SCAN_FALLBACK,
           "the piece consumer failed%s", NULL);
      goto done;
    }
    /* only around the piece's statement: the sparse probes run under mu,
    ** which caller_progress's fail() takes */
    if (w->caller && sp->interrupted) {
      sqlite3_progress_handler(w->db, GA_SCAN_POLL_OPS, caller_progress, w);
      __atomic_add_fetch(&now_in_caller_piece, 1, __ATOMIC_RELAXED);
    }
    double t0 = now_ms();
    rc = run_piece(w, st, hash, no, &rows, &groups, &bytes);
    w->piece_ms += now_ms() - t0;
    if (w->caller && sp->interrupted) {
      __atomic_sub_fetch(&now_in_caller_piece, 1, __ATOMIC_RELAXED);
      sqlite3_progress_handler(w->db, 0, NULL, NULL);
    }
    if (rc != SQLITE_DONE)
      goto done;
    if (sp->piece_end && (rc = sp->piece_end(sp->piece_arg, no, 1, &rows))) {
      fail(sh, rc == GA_NOMEM ? GA_SCAN_NOMEM : GA_SCAN_FALLBACK,
           "the piece consumer failed%s", NULL);
      goto done;
    }
    w->rows += rows;
    bytes += ga_keymemo_charge(&w->memo); /* keymemo.h rule 3 */
    report(w, rows, groups);
    if (w->caller && caller_interrupted(sh, "between"))
      goto done;
    if (__atomic_add_fetch(&sh->group_bytes, bytes, __ATOMIC_RELAXED) >
        sp->max_group_bytes) {
      int dist = 0, pct = 0; /* a DISTINCT aggregate's values count too */
      for (int k = 0; k < sp->shape.ns; k++) {
        dist |= sp->shape.dist[k] != 0 && sp->shape.dist[k] != GA_DIST_PCT;
        pct |= sp->shape.dist[k] == GA_DIST_PCT; /* scan_group.h rule 6 */
      }
      fail(sh, GA_SCAN_FALLBACK, "the groups passed the memory cap%s",
           dist  ? " (group_bytes; each distinct value of a DISTINCT aggregate "
                   "takes up to 171 bytes and its TEXT or BLOB)"
           : pct ? " (group_bytes; each value of a median or percentile takes "
                   "8 bytes)"
                 : "");
      goto done;
    }
  }
done:
  if (sp->pin)
    ga_pintime_leave(&pinned);
  if (w->memo_in)
    ga_keymemo_leave(w->memo_old);
  ga_keymemo_free(&w->memo); /* its counters stay */
  ga_dset_poll_swap(poll_was);
  ga_gt_free(&w->local);
  ga_gs_batch_free(&w->batch);
  pthread_mutex_lock(&sh->mu);
  sh->running--;
  pthread_cond_signal(&sh->done_cv);
  pthread_mutex_unlock(&sh->mu);
  return NULL;
}

/* ---- the snapshot ---- */

static int exec(sqlite3 *db, const char *sql) {
  return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One more retry of the snapshot's bounded wait (design above)?  Polls
** the caller's interrupt first (then 0, the scan failed with
** GA_SCAN_INTERRUPT), and sleeps GA_SCAN_SNAPSHOT_SLEEP_US before a retry. */
static int snap_retry(scan_shared *sh) {
  if (caller_interrupted(sh, "snapshot"))
    return 0;
  if (sh->snap_waits >= sh->snap_tries || now_ms() >= sh->deadline)
    return 0;
  if (!sh->waiting) {
    sh->waiting = 1;
    __atomic_add_fetch(&now_waiting, 1, __ATOMIC_RELAXED);
  }
  sh->snap_waits++;
  struct timespec ts = {0, GA_SCAN_SNAPSHOT_SLEEP_US * 1000L};
  nanosleep(&ts, NULL);
  return 1;
}

/* The helper's busy handler: snap_retry, every GA_SCAN_SNAPSHOT_SLEEP_US.
** SQLite's own backs off to 100 ms sleeps, loses the race to a writer that
** commits back to back, and does not see the caller's interrupt. */
static int helper_busy(void *arg, int n) {
  (void)n;
  return snap_retry(arg);
}

/* BEGIN and the first read on worker k: min and max rowid (have = 0 for an
** empty table).  SQLite result code. */
static int begin_worker(worker *w, const char *bounds, int *have, int64_t *mn,
                        int64_t *mx) {
  sqlite3_stmt *st = NULL;
  int rc = exec(w->db, "BEGIN");
  if (rc)
    return rc;
  rc = sqlite3_prepare_v2(w->db, bounds, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *have = sqlite3_column_type(st, 0) != SQLITE_NULL;
      *mn = sqlite3_column_int64(st, 0);
      *mx = sqlite3_column_int64(st, 1);
      rc = SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

/* An integer PRAGMA's value on db, -1 when it cannot be read:
**  - PRAGMA main.schema_version on a worker, inside its read transaction
**    (the snapshot's);
**  - PRAGMA main.data_version on the read-only helper, in a read
**    transaction of its own (autocommit): it moves when the helper's pager
**    finds that the WAL index header changed since its last read, that is
**    after any commit of another connection (SQLite counts every commit
**    there). */
static int64_t pragma_i64(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static int is_wal(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int wal = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA main.journal_mode", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(st, 0);
    wal = m && !sqlite3_stricmp(m, "wal");
  }
  sqlite3_finalize(st);
  return wal;
}

/* Give the helper back: a read-write one ends its BEGIN IMMEDIATE (it wrote
** nothing); a read-only one holds no transaction. */
static void helper_end(const ga_scan_spec *sp, sqlite3 *helper) {
  if (!helper)
    return;
  if (!sqlite3_get_autocommit(helper))
    exec(helper, "ROLLBACK");
  ga_scan_pool_put(sp->pool, helper, 1, 1);
}

/* GPUAGG_SCAN_FAULT=commit (tests): another connection commits (user_version
** + 1) after worker 0 has begun and before the others do, once a scan:
** the read-only WAL snapshot must see it and begin again. */
static void commit_fault(scan_shared *sh) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  sh->fault_commit = 0;
  if (sqlite3_open_v2(sqlite3_db_filename(sh->w[0].db, "main"), &db,
                      SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %lld",
             (long long)sqlite3_column_int64(st, 0) + 1);
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
    exec(db, sql);
  }
  sqlite3_finalize(st);
  sqlite3_close_v2(db);
}

/* End every worker's read transaction (those not in autocommit). */
static void end_all(scan_shared *sh) {
  for (int k = 0; k < sh->nw; k++) {
    worker *w = &sh->w[k];
    sqlite3_finalize(w->piece);
    sqlite3_finalize(w->rows_st);
    sqlite3_finalize(w->first);
    sqlite3_finalize(w->kth);
    w->piece = w->rows_st = w->first = w->kth = NULL;
    if (w->db && !sqlite3_get_autocommit(w->db))
      exec(w->db, "ROLLBACK");
  }
}

/* Begin every worker on one snapshot (design above).  GA_SCAN_OK with the
** table's bounds, or GA_SCAN_FALLBACK / GA_SCAN_NOMEM with sh->why. */
static int snapshot(scan_shared *sh, int *have, int64_t *mn, int64_t *mx) {
  const ga_scan_spec *sp = sh->spec;
  sqlite3 *helper = NULL;
  const char *err = NULL;
  int rc;
  /* a read-only caller in WAL mode: its helper is read-only and cannot
  ** take the write lock; it watches for commits instead (design above) */
  int watch = sp->wal && sp->readonly;
  int64_t dv0 = 0;
  sh->deadline = now_ms() + (sp->busy_ms > 0 ? sp->busy_ms : 0);
  if (sp->wal) {
    rc = ga_scan_pool_take(sp->pool, 1, NULL, &helper, &err);
    if (rc) {
      fail(sh, rc == SQLITE_NOMEM ? GA_SCAN_NOMEM : GA_SCAN_FALLBACK, "%s",
           err);
      return sh->fail_rc;
    }
  }
  /* the helper closes after the caller when the caller's connection
  ** closes first: it checkpoints then only as the caller's own close would
  ** have (scan_pool.c rule 7); never for a read-only caller */
  if (helper)
    sqlite3_db_config(helper, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                      !sp->ckpt_on_close, (int *)0);
  if (sp->wal && !watch) {
    sqlite3_busy_handler(helper, helper_busy, sh);
    rc = exec(helper, "BEGIN IMMEDIATE");
    sqlite3_busy_handler(helper, NULL, NULL);
    if (rc) {
      char why[160];
      snprintf(why, sizeof why,
               (rc & 0xff) == SQLITE_BUSY
                   ? "the WAL write lock is busy (a write transaction is "
                     "open; %lld retries)"
                   : "cannot take the WAL write lock",
               (long long)sh->snap_waits);
      ga_scan_pool_put(sp->pool, helper, 1, (rc & 0xff) == SQLITE_BUSY);
      fail(sh, GA_SCAN_FALLBACK, "no snapshot: %s", why);
      return sh->fail_rc; /* or GA_SCAN_INTERRUPT, recorded first */
    }
  }
  for (;;) {
    int k, busy = 0, committed = 0;
    rc = SQLITE_OK;
    if (watch)
      dv0 = pragma_i64(
          helper,
          "PRAGMA main.data_version"); /* before worker 0's first read */
    for (k = 0; k < sh->nw && rc == SQLITE_OK; k++) {
      int h = 0;
      int64_t a = 0, b = 0;
      rc = begin_worker(&sh->w[k], sp->sql_bounds, &h, &a, &b);
      if (rc == SQLITE_OK && k == 0 && sh->fault_busy)
        rc = SQLITE_BUSY; /* tests: as if a writer held PENDING */
      if (rc == SQLITE_OK && k == 0 && watch && sh->fault_commit)
        commit_fault(sh);
      if (rc == SQLITE_OK && k == 0) {
        *have = h, *mn = a, *mx = b;
        const char *changed =
            is_wal(sh->w[0].db) != (sp->wal != 0) ? "journal mode"
            : pragma_i64(sh->w[0].db, "PRAGMA main.schema_version") !=
                    sp->schema_version
                ? "schema"
                : NULL;
        if (changed) {
          end_all(sh);
          helper_end(sp, helper);
          fail(sh, GA_SCAN_FALLBACK, "the %s changed during the call", changed);
          return GA_SCAN_FALLBACK;
        }
      } else if (rc == SQLITE_OK &&
                 (h != *have || (h && (a != *mn || b != *mx)))) {
        rc = SQLITE_INTERNAL; /* cannot happen with the design above */
      }
    }
    /* gpu_query's subqueries, on worker 0: its read transaction is the
    ** snapshot (the caller's own may be older: its statement began before
    ** this call) */
    if (rc == SQLITE_OK && sp->in_snapshot) {
      char why[200] = "";
      worker *w0 = &sh->w[0];
      sqlite3_progress_handler(w0->db, GA_SCAN_POLL_OPS, caller_progress_snap,
                               w0);
      sqlite3 **dbs = sqlite3_malloc64(sizeof(*dbs) * (size_t)sh->nw);
      for (int i = 0; dbs && i < sh->nw; i++)
        dbs[i] = sh->w[i].db;
      /* under the workers' pinned time: a subquery that reads 'now' where
      ** its text does not show it (a view's date('now')) reads the time
      ** the rows' 'now' reads, as SQLite's one step reads one time */
      ga_pintime_saved pinned;
      if (sp->pin)
        ga_pintime_enter(sp->pin_ms, &sh->time_reads, &pinned);
      int src = dbs ? sp->in_snapshot(sp->in_snapshot_arg, dbs, sh->nw, why,
                                      sizeof why)
                    : SQLITE_NOMEM;
      if (sp->pin)
        ga_pintime_leave(&pinned);
      sqlite3_free(dbs);
      sqlite3_progress_handler(w0->db, 0, NULL, NULL);
      if (src != SQLITE_OK) {
        end_all(sh);
        helper_end(sp, helper);
        if (sh->fail_rc)
          ; /* the caller's interrupt, noticed by the progress handler */
        else if (src == SQLITE_NOMEM)
          fail(sh, GA_SCAN_NOMEM, "out of memory%s", NULL);
        else if (src == SQLITE_INTERRUPT)
          fail_in(sh, GA_SCAN_INTERRUPT, "snapshot", "interrupted%s", NULL);
        else
          fail(sh, GA_SCAN_FALLBACK, "%s", why);
        return sh->fail_rc;
      }
    }
    /* every worker began after dv0 was read and before this one is: the
    ** same data version means no commit in between, so one snapshot (one
    ** that cannot be read proves nothing: as a commit) */
    if (rc == SQLITE_OK && watch &&
        (dv0 < 0 || pragma_i64(helper, "PRAGMA main.data_version") != dv0)) {
      committed = 1;
      rc = SQLITE_BUSY;
    }
    if (rc == SQLITE_OK)
      break;
    busy = (rc & 0xff) == SQLITE_BUSY;
    const char *msg = committed ? "a commit" : sqlite3_errmsg(sh->w[k - 1].db);
    char copy[200];
    snprintf(copy, sizeof copy, "%s", msg ? msg : "?");
    end_all(sh);
    /* let the waiting writer commit (or the committer finish), then try
    ** again */
    if (busy && (committed || (!sp->wal && !sp->caller_reads)) &&
        snap_retry(sh))
      continue;
    helper_end(sp, helper);
    if (sh->fail_rc)
      ; /* interrupted while it waited */
    else if ((rc & 0xff) == SQLITE_NOMEM)
      fail(sh, GA_SCAN_NOMEM, "out of memory%s", NULL);
    else if (rc == SQLITE_INTERNAL)
      fail(sh, GA_SCAN_FALLBACK, "workers saw different tables%s", NULL);
    else if (committed) {
      snprintf(copy, sizeof copy, "%lld", (long long)sh->snap_waits);
      fail(sh, GA_SCAN_FALLBACK,
           "no snapshot: other connections committed while the workers "
           "began (a read-only connection cannot hold the WAL write lock; "
           "%s retries)",
           copy);
    } else if (busy && sp->caller_reads && !sp->wal)
      fail(sh, GA_SCAN_FALLBACK,
           "no snapshot: a writer waits for this connection's read lock to "
           "commit%s",
           NULL);
    else if (busy) {
      snprintf(copy, sizeof copy, "%lld", (long long)sh->snap_waits);
      fail(sh, GA_SCAN_FALLBACK,
           "no snapshot: the database is locked (a writer is committing; "
           "%s retries)",
           copy);
    } else
      fail(sh, GA_SCAN_FALLBACK, "a worker could not start: %s", copy);
    return sh->fail_rc;
  }
  helper_end(sp, helper); /* it wrote nothing */
  return GA_SCAN_OK;
}

/* ---- one file ---- */

/* "One file" (design above): NULL when the path still names the file that
** the caller's schema and every worker read, else the reason. */
static const char *file_moved(scan_shared *sh) {
  const ga_scan_spec *sp = sh->spec;
  int m = 0;
  if (sp->caller &&
      sqlite3_file_control(sp->caller, sp->caller_schema,
                           SQLITE_FCNTL_HAS_MOVED, &m) != SQLITE_OK)
    return "cannot tell whether the database file was moved (its VFS "
           "answers no SQLITE_FCNTL_HAS_MOVED)";
  if (m)
    return "the database file was renamed or deleted while the connection "
           "had it open: its path names another file, which the workers "
           "would read";
  for (int k = 0; k < sh->nw; k++) {
    m = 0;
    if (sqlite3_file_control(sh->w[k].db, "main", SQLITE_FCNTL_HAS_MOVED, &m) !=
        SQLITE_OK)
      return "cannot tell whether the database file was moved (its VFS "
             "answers no SQLITE_FCNTL_HAS_MOVED)";
    if (m)
      return "the database file was replaced while a worker opened it: a "
             "worker reads another file than the connection";
  }
  return NULL;
}

/* GPUAGG_SCAN_FAULT=schema (tests): a DDL commit by another connection
** between planning and the snapshot, through the helper (WAL, or no reader
** in the way).  Nonzero when it failed (the scan failed too). */
static int schema_fault(scan_shared *sh) {
  const ga_scan_spec *sp = sh->spec;
  sqlite3 *db = NULL;
  const char *err = NULL;
  int rc = ga_scan_pool_take(sp->pool, 1, NULL, &db, &err);
  if (rc == SQLITE_OK)
    rc = exec(db, "CREATE TABLE gpuagg_schema_fault(x);"
                  "DROP TABLE gpuagg_schema_fault");
  ga_scan_pool_put(sp->pool, db, 1, rc == SQLITE_OK);
  if (rc)
    fail(sh, GA_SCAN_FALLBACK, "the schema fault failed%s", NULL);
  return rc;
}

/* ---- the scan ---- */

int ga_scan_run(const ga_scan_spec *sp, ga_scan_out *out) {
  scan_shared sh;
  int rc = GA_SCAN_OK, have = 0;
  int64_t mn = 0, mx = 0;
  memset(out, 0, sizeof(*out));
  memset(&sh, 0, sizeof(sh));
  sh.spec = sp;
  sh.fault_piece = -1;
  sh.local_groups =
      GA_SCAN_LOCAL_BYTES / (GA_GROUP_FIXED_BYTES(&sp->shape) + 32);
  if (sh.local_groups < GA_SCAN_LOCAL_MIN)
    sh.local_groups = GA_SCAN_LOCAL_MIN;
  sh.batch_rows = GA_SCAN_DIRECT_BATCH;
  const char *db = getenv("GPUAGG_SCAN_DIRECT_BATCH"); /* tests, A/B */
  if (db)
    sh.batch_rows = atoi(db);
  const char *lg = getenv("GPUAGG_SCAN_LOCAL_GROUPS"); /* tests */
  if (lg && atoll(lg) > 0)
    sh.local_groups = atoll(lg);
  /* GPUAGG_SCAN_FAULT (tests, like GPUAGG_FAULT): piece:N fails the worker
  ** that claims piece N; begin fails the snapshot; busy: worker 0's begin
  ** always finds the file locked (as under a writer's PENDING lock); schema:
  ** another connection changes the schema after planning, before the
  ** snapshot; commit: another connection commits while the workers of a
  ** read-only WAL caller begin (commit_fault); rename:SRC: SRC is renamed
  ** over the database's path once every worker has begun ("One file") */
  const char *fault = getenv("GPUAGG_SCAN_FAULT");
  if (fault && !strncmp(fault, "piece:", 6))
    sh.fault_piece = strtoll(fault + 6, NULL, 10);
  sh.fault_busy = fault && !strcmp(fault, "busy");
  sh.fault_schema = fault && !strcmp(fault, "schema");
  sh.fault_commit = fault && !strcmp(fault, "commit");
  sh.fault_rename = fault && !strncmp(fault, "rename:", 7) ? fault + 7 : NULL;
  sh.snap_tries = GA_SCAN_SNAPSHOT_TRIES;
  const char *tries = getenv("GPUAGG_SCAN_SNAPSHOT_TRIES"); /* tests */
  if (tries && atoll(tries) > 0)
    sh.snap_tries = atoll(tries);
  pthread_mutex_init(&sh.mu, NULL);
  pthread_cond_init(&sh.done_cv, NULL);
  sh.w = sqlite3_malloc64(sizeof(worker) * (size_t)sp->threads);
  out->shape = sp->shape;
  sh.groups = out->groups = ga_gs_new(&sp->shape);
  if (!sh.w || !sh.groups) {
    rc = GA_SCAN_NOMEM;
    goto cleanup;
  }
  memset(sh.w, 0, sizeof(worker) * (size_t)sp->threads);
  sh.nw = sp->threads;
  for (int k = 0; k < sh.nw; k++) {
    const char *err = NULL;
    worker *w = &sh.w[k];
    w->sh = &sh;
    w->index = k;
    ga_gt_init(&w->local, &sp->shape);
    w->local.rot = 32; /* emptied into the shared tables: scan_group.c */
    w->local.arena = ga_gs_arena(sh.groups);
    int orc = ga_scan_pool_take(sp->pool, 0, sp->prep, &w->db, &err);
    if (orc) {
      fail(&sh, orc == SQLITE_NOMEM ? GA_SCAN_NOMEM : GA_SCAN_FALLBACK, "%s",
           err);
      goto finish;
    }
    sqlite3_busy_timeout(w->db, 0); /* design: begins fail fast */
    /* the caller's memory-mapped reads of the file (0: none, SQLite's
    ** default), set every time on a pooled connection */
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA mmap_size=%lld",
             (long long)sp->mmap_size);
    exec(w->db, pragma);
    sqlite3_db_config(w->db, SQLITE_DBCONFIG_DQS_DML, sp->dqs, (int *)0);
    /* the caller's limits (a pooled connection may carry another caller's:
    ** every one is set, every time) */
    for (int i = 0; i < GA_SCAN_NLIMITS; i++)
      if (sp->limits[i] >= 0)
        sqlite3_limit(w->db, i, sp->limits[i]);
  }
  if (fault && !strcmp(fault, "begin")) {
    fail(&sh, GA_SCAN_FALLBACK, "a worker could not start: injected fault%s",
         NULL);
    goto finish;
  }
  if (sh.fault_schema && schema_fault(&sh))
    goto finish;
  rc = snapshot(&sh, &have, &mn, &mx);
  if (sh.waiting)
    __atomic_sub_fetch(&now_waiting, 1, __ATOMIC_RELAXED);
  if (rc != GA_SCAN_OK)
    goto finish;
  /* tests: the path is renamed over after every worker has opened it */
  if (sh.fault_rename)
    rename(sh.fault_rename, sqlite3_db_filename(sh.w[0].db, "main"));
  const char *moved = file_moved(&sh);
  if (moved) {
    fail(&sh, GA_SCAN_FALLBACK, "%s", moved);
    goto finish;
  }
  if (!have)
    goto finish; /* an empty table: no piece, no group */
  /* an indexed range: only its band of rowids, read in this snapshot */
  if (sp->sql_range && (rc = range_bounds(&sh, &have, &mn, &mx)) != GA_SCAN_OK)
    goto finish;
  if (!have)
    goto finish; /* no row in the range */

  /* pieces: about 8 per worker, between the bounds */
  {
    uint64_t d = (uint64_t)mx - (uint64_t)mn; /* no signed overflow */
    int64_t span = d < (uint64_t)INT64_MAX ? (int64_t)d + 1 : INT64_MAX;
    int64_t est = sp->est_rows > 0 && sp->est_rows < span ? sp->est_rows : span;
    int64_t base = est / ((int64_t)sh.nw * 8);
    if (base < GA_SCAN_BASE_MIN)
      base = GA_SCAN_BASE_MIN;
    if (base > GA_SCAN_BASE_MAX)
      base = GA_SCAN_BASE_MAX;
    sh.base = base;
    sh.est = est;
    sh.base_max = est / ((int64_t)sh.nw * 2);
    if (sh.base_max < base)
      sh.base_max = base;
    if (sp->large_pieces)
      sh.base = sh.base_max;
    if (sp->large_pieces == 2) {  /* one piece a worker (dims.h rule 9): */
      int64_t per = span / sh.nw; /* of rowids, not rows (sparse ones) */
      sh.base = sh.base_max = per < INT64_MAX ? per + 1 : per;
    }
    /* tests: pieces of exactly N rowids (a long piece per worker) */
    const char *pr = getenv("GPUAGG_SCAN_PIECE_ROWS");
    if (pr && atoll(pr) > 0)
      sh.base = sh.base_max = atoll(pr);
    sh.next = mn;
    sh.max = mx;
  }

  /* workers 1..n-1 on threads of their own, worker 0 on this one (no
  ** thread to start for it, and the caller's core works instead of
  ** waiting; it polls the interrupt in and between its pieces) */
  sh.running = sh.nw;
  out->threads = 1;
  for (int k = 1; k < sh.nw; k++) {
    if (pthread_create(&sh.w[k].th, NULL, worker_main, &sh.w[k]) == 0) {
      sh.w[k].started = 1;
      out->threads++;
    } else {
      pthread_mutex_lock(&sh.mu);
      sh.running--;
      pthread_mutex_unlock(&sh.mu);
    }
  }
  sh.w[0].caller = 1;
  worker_main(&sh.w[0]);

  /* wait, relaying the caller's interrupt */
  pthread_mutex_lock(&sh.mu);
  while (sh.running > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&sh.done_cv, &sh.mu, &ts);
    if (sh.running > 0 && !cancelled(&sh)) {
      pthread_mutex_unlock(&sh.mu); /* caller_interrupted takes it */
      caller_interrupted(&sh, "wait");
      pthread_mutex_lock(&sh.mu);
    }
  }
  pthread_mutex_unlock(&sh.mu);
  for (int k = 0; k < sh.nw; k++)
    if (sh.w[k].started)
      pthread_join(sh.w[k].th, NULL);
  if (sp->pin_alone && __atomic_load_n(&sh.time_reads, __ATOMIC_RELAXED))
    fail(&sh, GA_SCAN_FALLBACK,
         "a row holds 'now' under a date and time function, which the "
         "caller's own part of the query also uses (its time is not the "
         "workers' pinned one)%s",
         NULL);

finish:
  end_all(&sh);
  rc = sh.fail_rc;
  if (rc == GA_SCAN_OK) {
    out->min_worker_rows = INT64_MAX;
    for (int k = 0; k < sh.nw; k++) {
      worker *w = &sh.w[k];
      if (w->rows < out->min_worker_rows)
        out->min_worker_rows = w->rows;
      if (w->rows > out->max_worker_rows)
        out->max_worker_rows = w->rows;
    }
    if ((sp->any_order ? ga_gs_list : ga_gs_sorted)(sh.groups, &out->sorted,
                                                    &out->n))
      rc = GA_SCAN_NOMEM;
  }
  out->pieces = sh.npieces;
  out->hash_pieces = sh.nhash;
  out->hash_flushes = sh.nflush;
  for (int k = 0; sh.w && k < sh.nw; k++) {
    out->direct_rows += sh.w[k].direct_rows;
    out->direct_batches += sh.w[k].direct_batches;
    out->worker_ms += sh.w[k].piece_ms;
    out->flush_ms += sh.w[k].flush_ms;
    out->lock_wait_ms += (double)sh.w[k].wait_ns / 1e6;
    const ga_keymemo *m = &sh.w[k].memo;
    for (int i = 0; i < m->nk; i++) {
      out->memo_hits += m->k[i].hits;
      out->memo_misses += m->k[i].misses;
    }
    out->memo_full |= m->full;
  }
  out->memo_terms = sp->sql_rows ? sp->key_memo_n : 0;
  out->probes = sh.nprobes;
  out->max_piece_rows = sh.max_piece_rows;
  out->snapshot_waits = sh.snap_waits;
  out->interrupted_in = rc == GA_SCAN_INTERRUPT ? sh.intr_in : NULL;
  snprintf(out->why, sizeof out->why, "%s", sh.why);
  for (int k = 0; k < sh.nw; k++) {
    worker *w = &sh.w[k];
    /* a connection interrupted or failed mid-way is closed, not pooled */
    ga_scan_pool_put(sp->pool, w->db, 0, rc == GA_SCAN_OK);
  }
cleanup:
  sqlite3_free(sh.w);
  pthread_cond_destroy(&sh.done_cv);
  pthread_mutex_destroy(&sh.mu);
  if (rc != GA_SCAN_OK)
    ga_scan_out_free(out);
  return rc;
}

void ga_scan_out_free(ga_scan_out *out) {
  sqlite3_free(out->sorted);
  ga_gs_free(out->groups);
  out->sorted = NULL;
  out->groups = NULL;
  out->n = 0;
}

/* ---- gpuagg_info()'s last_scan ---- */

void ga_scan_last_counters(ga_scan_last *last, const ga_scan_out *out) {
  last->threads = out->threads;
  last->pieces = out->pieces;
  last->hash_pieces = out->hash_pieces;
  last->hash_flushes = out->hash_flushes;
  last->direct_rows = out->direct_rows;
  last->direct_batches = out->direct_batches;
  last->worker_ms = out->worker_ms;
  last->flush_ms = out->flush_ms;
  last->lock_wait_ms = out->lock_wait_ms;
  last->memo_terms = out->memo_terms;
  last->memo_hits = out->memo_hits;
  last->memo_misses = out->memo_misses;
  last->memo_full = out->memo_full;
}

void ga_scan_last_json(const ga_scan_last *l, char *buf, size_t n) {
  char why[2 * sizeof l->why];
  size_t j = 0;
  for (const char *p = l->why; *p && j + 7 < sizeof why; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') {
      why[j++] = '\\';
      why[j++] = (char)c;
    } else if (c < 0x20) {
      j += (size_t)snprintf(why + j, sizeof why - j, "\\u%04x", c);
    } else {
      why[j++] = (char)c;
    }
  }
  why[j] = 0;
  char rows[24] = "null"; /* not counted to the end (ga_scan_last.rows) */
  if (l->rows >= 0)
    snprintf(rows, sizeof rows, "%lld", (long long)l->rows);
  snprintf(buf, n,
           "{\"path\":\"%s\",\"threads\":%d,\"why\":\"%s\",\"rows\":%s,"
           "\"ms\":%.3f,\"pieces\":%lld,\"hash_pieces\":%lld,"
           "\"hash_flushes\":%lld,\"direct_rows\":%lld,"
           "\"direct_batches\":%lld,\"worker_ms\":%.1f,\"flush_ms\":%.1f,"
           "\"lock_wait_ms\":%.1f,"
           "\"interrupt\":\"%s\",\"interrupted_in\":\"%s\","
           "\"snapshot_waits\":%lld,\"progress_probes\":%lld,\"values\":%d,"
           "\"key_memo\":{\"terms\":%d,\"hits\":%lld,\"misses\":%lld,"
           "\"full\":%d},\"subqueries\":{\"from_cache\":%d,\"by_sqlite\":%d},"
           "\"join\":%s,\"post\":%s%s%s}",
           l->path ? l->path : "none", l->threads, why, rows, l->ms,
           (long long)l->pieces, (long long)l->hash_pieces,
           (long long)l->hash_flushes, (long long)l->direct_rows,
           (long long)l->direct_batches, l->worker_ms, l->flush_ms,
           l->lock_wait_ms, l->interrupt ? l->interrupt : "",
           l->interrupted_in ? l->interrupted_in : "",
           (long long)l->snapshot_waits, (long long)l->progress_probes,
           l->values, l->memo_terms, (long long)l->memo_hits,
           (long long)l->memo_misses, l->memo_full, l->subq_cache,
           l->subq_sqlite, l->join[0] ? l->join : "null", l->post ? "\"" : "",
           l->post ? l->post : "null", l->post ? "\"" : "");
}
