/*
** scan.h — gpu_aggregate's parallel path: worker threads with pooled
** read-only connections to one database file, each aggregating rowid pieces
** of one table inside its own SQL, on one snapshot, with the exact partial
** states merged in rowid order.  The locking design is at the top of
** engine/scan/scan.c; the SQL glue (what the workers run, and every condition
** that keeps a query on the serial path) is planner/path.c and
** ext/aggregate/aggregate_vtab.c.
*/
#ifndef GA_SCAN_H
#define GA_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "scan_group.h"
#include "scan_pool.h"

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_value sqlite3_value;

/* ---- one parallel scan ---- */

#define GA_SCAN_OK 0
#define GA_SCAN_NOMEM 1     /* GA_NOMEM */
#define GA_SCAN_FALLBACK 20 /* take the serial path; why says why */
#define GA_SCAN_INTERRUPT 21

/* The groups of one scan hold at most spec.max_group_bytes (the
** group_bytes knob, engine/core/config.h; past it, the serial path).  The
** workers share one set of groups, so this bounds groups, whatever the
** thread count: GA_GROUP_FIXED_BYTES + 32 bytes a group (376 with one
** key and one state), plus the bytes of TEXT and BLOB keys and max/min
** values, plus a worker's own table in hash mode (GA_SCAN_LOCAL_BYTES
** at most, scan.c).
**
** What a cursor keeps of a call's groups to replay them (gpu_aggregate's
** and gpu_query's memo) is bounded apart, by this: */
#define GA_SCAN_MEMO_BYTES ((int64_t)256 << 20)

/* SQLITE_LIMIT_LENGTH (0) .. SQLITE_LIMIT_WORKER_THREADS (11) */
#define GA_SCAN_NLIMITS 12

typedef struct ga_scan_spec {
  ga_scan_pool *pool;
  ga_scan_prep_fn prep;
  /* SQL the workers run, on their connection's "main" schema:
  **   piece:  rows of (shape.nk keys, shape.nc carried values, shape.ns
  **           fused state BLOBs) when grouped, else one row of (shape.ns
  **           state BLOBs), over rowids ?1..?2 (inclusive)
  **   bounds: SELECT min(rowid), max(rowid) FROM the table
  **   first:  the first rowid >= ?1;  kth: the GA_SCAN_PROBE_ROWS-th one */
  const char *sql_piece, *sql_bounds, *sql_first, *sql_kth;
  /* NULL, or the band of rowids that can pass the filter (planner/qindex.c:
  ** an indexed range): one row (exact, lo, hi), parameters 3.. as the
  ** piece's; worker 0 runs it once the snapshot is taken, and the pieces
  ** cover only [lo, hi] (exact 1: every row the filter passes is there;
  ** lo NULL: none is; exact 0: the whole table) */
  const char *sql_range;
  int grouped;
  /* the groups: keys (ungrouped: one NULL key) with their collations, and
  ** states, one per value column */
  ga_gshape shape;
  /* values bound to parameters 3.. of the piece and rows statements (the
  ** query's own parameters; ?1 and ?2 are the rowid bounds), read by each
  ** worker while it prepares */
  sqlite3_value *const *params;
  int nparams;
  /* Hash mode (grouped only; NULL: none): sql_rows returns the rows of
  ** (keys, values) that pass the filter over rowids ?1..?2, in rowid order,
  ** and each worker groups them in a hash table of its own, moved into the
  ** shared groups after each piece.  SQLite's GROUP BY sorts every row
  ** instead.  When a worker's table fills up (many groups), the scan goes
  ** on with sql_piece (engine/scan/scan.c, "Grouped scans").  Numbers are
  *stepped
  ** here; TEXT and BLOB values by step_other(state, value, type, enc),
  ** with enc the database's text encoding (GA_OK or GA_NOMEM).  Grouped
  ** scans hold TEXT keys in enc too (0: UTF-8; UTF-16 only under BINARY,
  ** scan_group.h rule 1). */
  const char *sql_rows;
  int (*step_other)(ga_gstate *s, int64_t *tag, int64_t piece, sqlite3_value *v,
                    int type, int enc);
  int enc;
  int threads;       /* >= 1 (1: worker 0 alone, on the caller's thread) */
  int wal;           /* the caller saw journal_mode = wal */
  int immutable;     /* the caller opened the file with immutable=1: its
                        workers open it so too (scan_pool.c rule 6) */
  int readonly;      /* the caller cannot write the file (sqlite3_db_readonly:
                        mode=ro, a read-only file, immutable=1): the snapshot
                        helper is read-only too (scan_pool.c rule 7), and a
                        WAL snapshot is checked, not locked (scan.c) */
  int ckpt_on_close; /* the caller may write and would checkpoint a WAL file
                        when it closes last (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE
                        off): its read-write helper, which may close after
                        it, does the same (scan_pool.c rule 7) */
  /* The caller's connection and the table's schema on it: after every
  ** worker has begun, SQLITE_FCNTL_HAS_MOVED of that schema and of each
  ** worker's "main" must be 0 (the path still names the file each one
  ** reads), else the serial path (scan.c, "One file"). */
  sqlite3 *caller;
  const char *caller_schema;
  int busy_ms;      /* the caller's busy timeout: the snapshot waits no longer
                       (and GA_SCAN_SNAPSHOT_TRIES at most) */
  int caller_reads; /* the caller holds a read transaction on the file (its
                       SHARED lock: see the design in scan.c) */
  int dqs;       /* the caller's SQLITE_DBCONFIG_DQS_DML, copied to workers */
  int any_order; /* ga_scan_out.sorted need not be in key order (gpu_query:
                    its post query's GROUP BY sorts the groups itself) */
  int64_t mmap_size; /* the caller's PRAGMA mmap_size of the table's schema:
                        the workers read the file as it does (bench/
                        RESULTS.md §11: a third less a row at 16 threads) */
  /* the caller's sqlite3_limit values (SQLITE_LIMIT_LENGTH ..
  ** SQLITE_LIMIT_WORKER_THREADS), set on every worker before it runs */
  int limits[GA_SCAN_NLIMITS];
  int64_t est_rows;        /* rows of the table, an upper estimate */
  int large_pieces;        /* each piece pays a setup (gpu_query's join: SQLite
                              builds its Bloom filters on the dimensions again):
                              from the first, pieces of the largest size;
                              2: one piece a worker (engine/scan/dims.h
                              rule 9: the Bloom filters once a worker) */
  int64_t schema_version;  /* the caller's PRAGMA schema_version when it
                              planned (the group key's collation): worker 0
                              must see the same in the snapshot */
  int64_t max_group_bytes; /* group_bytes, smaller in tests */
  /* pin: every worker thread pins pin_ms (engine/scan/pintime.h) around its
  ** steps, so that date and time functions over rows holding 'now' read
  ** the call's one time on connections opened through the shim VFS */
  int pin;
  int64_t pin_ms;
  /* pin_alone: the pinned time must not be read (the caller reads its own
  ** time apart, in gpu_query's post query): a scan in which any worker read
  ** it ('now' in a row) fails with GA_SCAN_FALLBACK */
  int pin_alone;
  /* Group terms over one column, evaluated once per distinct value of it in
  ** each worker (engine/scan/keymemo.h; hash mode only): key_memo[k] >= 0
  ** is the row position of key k's column in sql_rows, whose key k is that
  ** term under its guard; key_memo_n of them (0: none).  key_memo_bytes:
  ** a worker's memo at most (0: GA_KEYMEMO_BYTES). */
  int key_memo_n;
  signed char key_memo[GA_MAX_KEYS];
  int64_t key_memo_bytes;
  /* polled by the caller's thread while workers run: nonzero = the caller
  ** was interrupted */
  int (*interrupted)(void *arg);
  void *interrupted_arg;
  /* A piece consumer instead of the fused states (gpu_cache's load,
  ** engine/cache/cache_load.c), NULL for gpu_aggregate: piece_begin(arg, st,
  *no,
  ** lo, hi) runs after ?1 and ?2 are bound (it may bind more), the rows
  ** the statement returns are not read, then piece_end(arg, no, 1, &rows)
  ** gives the piece's row count.  A nonzero return of either fails the scan
  ** (GA_NOMEM: GA_SCAN_NOMEM, else GA_SCAN_FALLBACK; the consumer keeps its
  ** own reason). */
  int (*piece_begin)(void *arg, sqlite3_stmt *st, int64_t no, int64_t lo,
                     int64_t hi);
  int (*piece_end)(void *arg, int64_t no, int ok, int64_t *rows);
  void *piece_arg;
  /* NULL, or run on the caller's thread once every worker has begun,
  ** with the workers' connections (w[0] first; inside the snapshot, each
  ** read transaction open; what they write in TEMP goes with the ROLLBACK
  ** that ends them) and before any parameter is bound: gpu_query's
  ** subqueries (planner/qsubq.c), which fill params.  The caller's
  ** interrupt reaches it through worker 0's progress handler.  SQLITE_OK;
  ** SQLITE_NOMEM; SQLITE_INTERRUPT; else the serial path for the reason it
  ** wrote. */
  int (*in_snapshot)(void *arg, sqlite3 **w, int nw, char *why, size_t n);
  void *in_snapshot_arg;
} ga_scan_spec;

/* How long the snapshot waits for a busy lock (a writer): at most this
** many retries, GA_SCAN_SNAPSHOT_SLEEP_US apart (about 10 ms), and never
** past the caller's busy timeout; then the serial path, which in WAL mode
** reads while the writer works.  The caller's interrupt is polled at each
** retry (engine/scan/scan.c, "One snapshot"). */
#define GA_SCAN_SNAPSHOT_TRIES 40
#define GA_SCAN_SNAPSHOT_SLEEP_US 250

/* Rows a sparse-mode probe counts ahead (engine/scan/scan.c, "Pieces"). */
#define GA_SCAN_PROBE_ROWS 4096

typedef struct ga_scan_out {
  ga_group_shards *groups; /* owns the merged groups */
  ga_group **sorted;       /* them in key order (in any order with
                              spec.any_order): one NULL key when ungrouped,
                              none when no row was read */
  ga_gshape shape;         /* the spec's */
  int enc; /* a cache answer: its TEXT keys' encoding (SQLITE_UTF8 ...) */
  size_t n;
  int threads;            /* workers that ran */
  int64_t pieces;         /* rowid pieces handed out */
  int64_t hash_pieces;    /* of them in hash mode */
  int64_t hash_flushes;   /* worker tables full mid-piece, moved (scan.c) */
  int64_t direct_rows;    /* rows stepped straight into the shared groups */
  int64_t direct_batches; /* batches those rows went in (ga_gs_batch) */
  /* the workers' time, summed: in their pieces; of it, stepping direct
  ** mode's batches; of that, waiting for shards that others held */
  double worker_ms, flush_ms, lock_wait_ms;
  int64_t probes; /* sparse-mode probes */
  int64_t max_piece_rows, min_worker_rows, max_worker_rows; /* balance */
  int64_t snapshot_waits; /* retries of the snapshot on a busy lock */
  /* the key memo (spec.key_memo_n terms): rows whose terms came from it,
  ** rows that evaluated them (summed over terms and workers), and whether
  ** any worker's memo filled up */
  int64_t memo_hits, memo_misses;
  int memo_terms, memo_full;
  /* GA_SCAN_INTERRUPT: where the caller's thread noticed it: "snapshot"
  ** (waiting for a lock), "piece" (worker 0 inside a piece, its progress
  ** handler), "between" (worker 0 between pieces), "wait" (waiting for the
  ** other workers) */
  const char *interrupted_in;
  char why[256]; /* GA_SCAN_FALLBACK: the reason */
} ga_scan_out;

/* Run it.  GA_SCAN_OK (out->sorted filled), GA_SCAN_FALLBACK,
** GA_SCAN_INTERRUPT or GA_SCAN_NOMEM.  Always call ga_scan_out_free. */
int ga_scan_run(const ga_scan_spec *spec, ga_scan_out *out);
void ga_scan_out_free(ga_scan_out *out);

/* Process-wide gauges (gpuagg_info()'s "scans"; tests wait on them instead
** of on time): scans now waiting for a busy lock in their snapshot, and
** callers' threads now inside a piece with the interrupt poll set. */
int ga_scan_now_waiting(void);
int ga_scan_now_in_caller_piece(void);

/* ---- what gpuagg_info() reports as last_scan ---- */

typedef struct ga_scan_last {
  const char *path; /* "parallel", "serial", NULL before any */
  int threads;
  char why[256];
  int64_t rows; /* rows that passed the filter, over the whole table; -1
                   (JSON null) when the serial path's statement was not read
                   to its end (a LIMIT stopped it): those rows are counted as
                   the groups are read */
  double ms;
  int64_t pieces;
  int64_t hash_pieces;    /* of them grouped in the workers' hash tables */
  int64_t hash_flushes;   /* ga_scan_out's */
  int64_t direct_rows;    /* ga_scan_out's */
  int64_t direct_batches; /* ga_scan_out's */
  double worker_ms, flush_ms, lock_wait_ms; /* ga_scan_out's */
  const char *interrupt;      /* how the waiting thread sees the caller's
                                 interrupt: "sqlite3_is_interrupted" (3.41+) or
                                 "probe statement" (older SQLite) */
  const char *interrupted_in; /* interrupted: ga_scan_out's, or "serial" */
  int64_t snapshot_waits;     /* ga_scan_out's */
  int values; /* distinct aggregate arguments the workers computed (equal
                 ones share a state: gpu_query), 0 on the serial path */
  int64_t progress_probes; /* steps of the progress probe that runs the
                              caller's progress handler (parallel path) */
  char join[4096]; /* gpu_query's join (planner/qjoin.c): a JSON object, ""
                     for none (JSON null) */
  int memo_terms, memo_full;      /* ga_scan_out's: last_scan.key_memo */
  int64_t memo_hits, memo_misses; /* (0 on the serial path) */
  /* gpu_query's subqueries: answered from the column cache, evaluated by
  ** SQLite (planner/qsubq.c rule 7; "subqueries") */
  int subq_cache, subq_sqlite;
  /* gpu_query's rows over the groups: "sqlite" (the post query), "direct"
  ** (ext/query/qdirect.c), NULL (JSON null: none, the serial path) */
  const char *post;
} ga_scan_last;

/* The JSON object into buf (always terminated). */
void ga_scan_last_json(const ga_scan_last *l, char *buf, size_t n);
/* A parallel scan's threads and counters (pieces .. lock_wait_ms) into
** last: gpu_aggregate's and gpu_query's one copy of them. */
void ga_scan_last_counters(ga_scan_last *last, const ga_scan_out *out);

#endif
