/*
** dims.h — a star join's dimensions built once per call and shared
** read-only by the workers (issue 38, step 3.1; planned by
** planner/qdims.c).
**
** SQL interface (worker connections only, ext/workers/workers.c):
**   gpuagg_dim_probe(T, D, k1, ..., kn)  1 when dimension D of the build
**       registered under token T has a row whose key equals (k1..kn) as
**       SQLite's `=` of the text compares them (rule 2), else 0.
**   gpuagg_dim_get(T, D, I, k1, ..., kn)  attribute I of that row (a
**       value the build computed with SQLite); when none, NULL, or for a
**       LEFT JOIN's dimension the attribute as SQLite computes it over
**       the NULL row the join gives such a fact row.
**   Both DIRECTONLY and not deterministic: SQLite evaluates them where
**   the text has them, once a row.
**
** Rules:
**   1. One snapshot.  The build (ga_sd_build) is the scan's in_snapshot
**      hook: it runs each dimension's text on worker 0's connection inside
**      its read transaction, the workers' one snapshot, before any worker
**      prepares its statement; a retried begin builds again.
**   2. Exact keys.  A key is compared as SQLite compares two columns
**      (sqlite3CompareAffinity, 3.40): when either column's affinity is
**      numeric, numeric affinity (sqlite3_value_numeric_type, as OP_Eq
**      applies it) turns TEXT that reads as a number into one; INTEGER
**      and REAL then compare by exact value (1 = 1.0: a REAL that is an
**      integer in int64's range is that integer); TEXT under the left
**      operand's collation (BINARY; NOCASE folds ASCII; RTRIM drops
**      trailing spaces), BLOB by bytes; classes never equal; NULL never
**      matches.
**   3. One match.  Two rows of one key after rule 2 (SQL joins a fact row
**      to both) fail the build: the call keeps SQLite's join in every
**      worker (the texts planned before, which are exact), and says why.
**   4. Memory.  A dimension's structure (keys, attributes with their
**      bytes, the lookup) is charged to GA_SD_DIM_BYTES (GPUAGG_DIM_BYTES
**      in tests); past it, SQLite's join as in rule 3.  A build text that
**      fails (an error SQLite raises on a dimension's row) does the same,
**      so SQLite's join raises it or not, as it would.
**   5. Lookups: a dense array of row numbers when the keys are one
**      INTEGER column whose span is at most 4 slots a row (plus 1024) or
**      GA_SD_DENSE_SLOTS (1 MiB: yyyymmdd dates), else open addressing
**      over the keys' hash, at most half full.
**   6. Shared read-only.  Built on the caller's thread before the worker
**      threads start (pthread_create orders it before their reads); after
**      that the workers only read it; each worker's statement keeps its
**      own memo of the last key (auxdata) and counts its probes, added to
**      the dimension's counters (atomics) when the statement ends.
**      A worker connection remembers its statement's memo (the function's
**      user data, cleared by the memo's destructor), so a probe costs no
**      search of the statement's auxdata.
**   7. Rejection first.  Beside its lookup each dimension keeps one bit
**      per dense slot, or a bitmap of 4 bits per hash slot indexed by the
**      key's hash (a one-hash Bloom filter): a probe tests it before the
**      lookup, and a fact row whose key's bit is clear is rejected from a
**      structure 32 times smaller than the slots (it stays in the CPU's
**      caches where the slots do not: the rows a selective dimension
**      rejects cost no cache miss).  Charged to rule 4's cap.
**   8. A key range before any call.  Where planner/qdims.c rule 5 wrote
**      it (one key whose fact column has numeric affinity, an inner join),
**      the workers' filter holds `fk BETWEEN lo AND hi` ahead of every
**      probe, its numbers filled by the build: the least and greatest key
**      kept (every one an INTEGER after rule 2), so SQLite rejects, with
**      no function call, the fact rows out of it (a month of dates, a
**      region's run of keys).  The range holds every fact value that a
**      key equals under rule 2 (the column's own affinity converted any
**      TEXT that reads as a number when it was stored; TEXT, BLOB and NULL
**      fall outside), so it drops no joined row.  Where the kept keys span
**      more than half the table's keys (SQLite's min and max of the key
**      column), or some key is no INTEGER, the build writes `1` instead
**      (SQLite evaluates a constant term once, before the loop), and it
**      stays so in any later build of these texts (a retried snapshot:
**      no range is always exact).  No key kept: lo 1, hi 0 (no fact
**      row).
**   9. The choice, per call.  Once every dimension is built (an inner
**      star), the build weighs the probe texts against SQLite's join (the
**      texts planned before, exact too) from what it measured: each
**      dimension's kept share f = rows kept / the table's rows (the plan's
**      count), the share r a written range keeps of the key column's span,
**      and the fact's estimated rows N.  The probes cost a call a fact row
**      that reaches them, N * r * (1 + f1' + f1'f2' + ...) * GA_SD_NS_CALL
**      (f' = f / r within a range; the call against SQLite's inline Bloom
**      test); SQLite's join builds its Bloom filters again in each piece,
**      pieces * sum(table rows) * GA_SD_NS_ROW, and seeks each dimension's
**      B-tree for the rows that pass every filter, N * f1 f2 ... *
**      dimensions * GA_SD_NS_SEEK.  Where the join costs less (a selective
**      dimension and few fact rows passing: SSB Q2.2, Q3.2), the workers
**      run SQLite's join, one piece each (the Bloom filters built once per
**      worker), and last_scan.join.probe says why with both estimates.
**      A written range (rule 8: most fact rows dropped inline, before any
**      call, where SQLite's join tests a Bloom filter on each), a LEFT
**      JOIN, a dimension whose table's rows are not known, or
**      GPUAGG_DIM_CHOICE=probe keep the probes; GPUAGG_DIM_CHOICE=join
**      takes the join (A/B, tests).
**  10. The choice remembered.  The process keeps the last choice of each
**      (SQLite's join text, database file, workers) in GA_SD_MEMO slots
**      (under the registry's mutex; a full table replaces its oldest
**      slot): after a build chose SQLite's join, the next calls of that
**      text run it without building (the build is serial, before the
**      workers start), and every GA_SD_MEMO_CALLS-th call builds and
**      weighs again (the rows may have changed: the choice is a cost,
**      never a result).  GPUAGG_DIM_CHOICE neither reads nor writes it.
*/
#ifndef GA_DIMS_H
#define GA_DIMS_H

#include <stddef.h>
#include <stdint.h>

#include "scan.h"

typedef struct sqlite3_context sqlite3_context;

#define GA_SD_MAX_KEYS 8
#define GA_SD_DIM_BYTES ((int64_t)256 << 20)
#define GA_SD_DENSE_SLOTS 262144
/* rule 9's costs, ns (2 cores, SSB SF 1, bench/results/
** ssb_probe2_vm2_2026-12-06_s6.csv): a probe call beyond SQLite's Bloom
** test, a dimension row scanned for a Bloom filter, a B-tree seek */
#define GA_SD_NS_CALL 12.0
#define GA_SD_NS_ROW 50.0
#define GA_SD_NS_SEEK 400.0

typedef struct ga_sd_key {
  uint8_t cls; /* 1 integer, 2 real, 3 text, 4 blob */
  int32_t n;
  union {
    int64_t i;
    double r;
    const char *p;
  } u;
} ga_sd_key;

typedef struct ga_sd_cell {
  uint8_t type; /* SQLITE_INTEGER ... SQLITE_NULL */
  int32_t n;
  union {
    int64_t i;
    double r;
    const char *p;
  } u;
} ga_sd_cell;

typedef struct ga_sd_block ga_sd_block;

/* Rule 10 */
#define GA_SD_MEMO 64
#define GA_SD_MEMO_CALLS 8

typedef struct ga_sd_dim {
  /* planned: the build text (keys then attributes, worker 0's main) */
  char *sql;
  char *table;
  int nk, na;
  int left;       /* LEFT JOIN: a fact row it misses reads null_attrs */
  char *null_sql; /* LEFT JOIN: the attributes over no row (one row) */
  ga_sd_cell *null_attrs;
  int numeric[GA_SD_MAX_KEYS]; /* rule 2: numeric affinity applies */
  /* rule 8: the range condition in the probe texts (after "marker"),
  ** range_len bytes, its lo at range_lo and hi 25 bytes further; span_sql
  ** the key column's min and max over the whole table; NULL: none */
  char *span_sql;
  char marker[64];
  int range_len, range_lo, range_off;
  int range_on; /* last build: 1 set, 0 blank */
  int64_t range_lo_v, range_hi_v;
  double range_share; /* rule 9: the share of the key column's span */
  int64_t table_rows; /* rule 9: the table's rows (the plan's), 0 unknown */
  int coll[GA_SD_MAX_KEYS]; /* GA_COLL_* */
  /* built */
  int64_t rows, bytes;
  double ms;
  int kind; /* 0 none, 1 dense, 2 hash */
  ga_sd_key *keys;
  ga_sd_cell *attrs;
  uint32_t *slot; /* dense: span slots; hash: cap slots (1 + row, 0) */
  uint64_t *bits; /* rule 7: a key's bit (dense: its slot; hash: its hash
                     masked by nbits - 1), set for every row's key */
  uint64_t nbits;
  int64_t lo;
  uint64_t span, cap;
  ga_sd_block *blocks;
  int64_t probes, matches; /* rule 6 */
} ga_sd_dim;

typedef struct ga_sd {
  uint64_t token;
  int n;
  ga_sd_dim *d;
  int64_t cap_bytes;
  /* the spec whose texts the build chooses (rule 3): the probe texts, or
  ** SQLite's join */
  ga_scan_spec *spec;
  char *probe_piece, *probe_rows; /* owned */
  const char *join_piece, *join_rows;
  int used, builds;
  char why[400];
  /* rule 9: the fact's estimated rows; the choice (0 probes, 1 SQLite's
  ** join; forced by GPUAGG_DIM_CHOICE) and its estimates, ms */
  int64_t fact_rows;
  int choice, forced, chosen, remembered;
  double probe_ms, join_ms;
} ga_sd;

/* A runtime for n dimensions (sql, table, keys filled by the caller
** afterwards), registered under a fresh token.  NULL: no memory. */
ga_sd *ga_sd_new(int n);
void ga_sd_free(ga_sd *sd);

/* The in_snapshot hook (arg: ga_sd). */
int ga_sd_build(void *arg, sqlite3 **w, int nw, char *why, size_t n);

/* last_scan.join's "build" array (sqlite3_malloc'd, NULL: no memory). */
char *ga_sd_json(const ga_sd *sd);

/* The SQL functions on a worker connection. */
int ga_sd_register(sqlite3 *db);

#endif
