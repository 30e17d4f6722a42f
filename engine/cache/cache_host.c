/*
** cache_host.c — queries on a host entry (cache.h), with all cores.
**
** Rules:
**   1. The entry's segments are cut into `threads` contiguous runs of about
**      equal rows; each thread walks its run in row order and keeps one
**      exact state per group (ungrouped: one).  Runs are numbered in row
**      order and handed to the group merge of gpu_aggregate's parallel path
**      (ga_gs_add, engine/scan/scan_group.h) as piece numbers, so the group's
**      representative key and max/min ties are the first row's in rowid
**      order, as on every other path.
**   2. A row's value is stepped with the same ga_xstate_step_* that the
**      workers' fused aggregate uses, so a cached answer is the uncached
**      one.  The whole-column shape (no filter, no group, no NULL) sums with
**      ga_cpu_sum and ga_cpu_best in L1-sized blocks instead: exact, and
**      equal by construction (integer digits; first occurrence).
**   3. Group keys: NULL is one group; numbers are one group when equal
**      (1 = 1.0, 0 = -0.0), found through a canonical key: an integer for
**      every INTEGER and every REAL with an integral value in int64 range,
**      else the REAL's bits.
**   4. Filter terms compare exactly (ga_num_cmp); NULL passes only IS NULL.
**   5. An expression (cexpr.h) is evaluated with SQLite's semantics, then
**      stepped as a column's value would be.  A row that passes and reads
**      a lane marked as an error (cexpr.h rule 5) declines the answer: the
**      uncached path lets SQLite raise it.
**   6. Expressions and gpu_query's shapes (several keys, carried columns,
**      many values, a key that is an expression, a filter that is a
**      program): every program runs a word (64 rows) at
**      a time (ga_cexpr_eval_word), and each passing row, in row order,
**      finds its group by its key tuple in the run's own table (ga_gt_get,
**      the workers' tables of engine/scan/scan_group.h, so keys compare
**      as GROUP BY compares them), then steps each value into its state.
**      The run's table then moves into the shared groups (ga_gs_take) under
**      its run number, as in rule 1.
**   7. Many groups: where a run's first 65,536 passing rows make more than
**      one group in 8 and rule 9 does not apply, the cache declines (why
**      says so), and gpu_query's parallel scan, whose direct mode steps
**      such groups in prefetched batches, answers: measured on 2 cores, d2
**      of bench/query_bench.py (210,000 groups in 6e6 rows) took 3.6 s
**      from the host cache against 1.8 s for the scan (bench/RESULTS.md
**      §13).  Rule 8's direct index does not change that: d2 through it
**      took 4 to 5 s, each row waiting on three cache misses (its slot, its
**      group, its state).
**   8. Keys that are all bare TEXT columns (codes, BINARY) or columns of
**      INTEGER values only (the value less the column's least), whose ids
**      and NULL make at most GA_CH_DENSE combinations: a row's id, combined
**      as the GPU combines them, indexes the run's groups directly, and
**      the table's hash runs once a group.  A bare column's word is read
**      from its block in place.  Profiled on Q1 (2 cores), the hash
**      lookups were 28% of the time and the words' copies 13%.
**   9. Many groups over rule 8's ids: the entry's first 65,536 passing rows
**      are probed once, before the runs start, and where they make more
**      than one group in 8 (and the query carries no column, and has at
**      most 16 values), each run writes its passing rows as records (id,
**      values: engine/cache/idrows.h) and sorts them by id, stably.  Then
**      each thread builds the groups of its own range of ids, one at a
**      time: the records of that id from every run, runs in row order, so
**      every state is stepped in rowid order (rule 1's ties) with no merge,
**      and the group is written once.  Nothing waits on a cache miss a row.
**      d2 on 2 cores: 2.7 s (the scan) to 0.5-0.7 s (bench/RESULTS.md §13).
**      Rule 7's probe and this one apply only to an id space of more than
**      GA_CH_NEAR_IDS ids: a smaller one keeps rule 8's index (or rule
**      11's array), whose states stay in the caches however few rows a
**      group has (d5 of bench/query_bench.py: 10,000 suppliers).
**  10. A query of rule 2's shape (one value, one bare key column) whose key
**      has rule 8's dense ids takes rule 6's loop with rules 8, 9 and 11
**      (issue 37): rule 2's per-run table holds a whole ga_xstate a group
**      (a superaccumulator each), and hands every group to the shared
**      groups one lock at a time; d4 of bench/query_bench.py (200,000
**      parts, one year) spent most of its time there.  The answer is the
**      same: each value is stepped in row order into a ga_gstate, which
**      gives ga_xstate's answers (gstate.h rule 1), and the keys are the
**      ids' values.
**  11. An id space whose states (ids x values x sizeof(ga_gstate)) take
**      GA_CH_FLAT_MIN_BYTES to GA_CH_FLAT_BYTES, without rule 9, keeps
**      them in one zeroed array a run indexed by id instead of a group
**      each: a word's passing rows first compute their ids and fetch their
**      states ahead (no pointer to follow, several misses in flight), then
**      step them in row order.  At the end each id seen becomes its group
**      (its key tuple from the id: codes, or the value less base), tagged
**      with the run's number and given the id's states, as rule 9 does.
**      d5 on 2 cores: half the CPU time of rule 8's index.  Smaller, the
**      states stay in L2 and rule 8's loop is faster (Q1 and d6).
**  12. last_scan (gpuagg_info) says which way ran: direct_rows counts the
**      passing rows whose group was found by id (rules 8, 9 and 11; 0:
**      hashed, rule 17's fallback included), direct_batches the runs that
**      used rule 11's array.
**  13. A value that only min, max and count read (ga_cquery.best_only:
**      gpu_query's max(l_discount), a TEXT column's codes) keeps no sum:
**      rows rule 6 steps count it and update its max and min exactly as
**      ga_gstate_step_int/real do, and nothing reads its (empty) sum.  d6
**      of bench/query_bench.py: 0.83 of the CPU time.
**  14. DISTINCT values (ga_cquery.dist, issue 37) run in rule 6's loop,
**      hashed or through rule 8's index, never rule 2's, 9's or 11's: each
**      keeps its group's set of values (cache_distinct.c, whose rules say
**      why that is exact and how its memory and the interrupt are kept),
**      or, for an INTEGER column or BINARY codes, sets a bit of its run's
**      bitmap (cache_dbits.c: a row a group, its rule 8 id or one the run
**      gives it), and the groups' states are filled from the united
**      bitmaps once listed.
**  15. Few groups (rule 8's ids, at most GA_CH_FEW_IDS, no DISTINCT): a
**      word's passing rows are stepped a group at a time, not a row at a
**      time.  The word's groups are made in row order (rule 1's key), then
**      each value's states take the word's lanes of their id at once: rows
**      and counts by popcount; INTEGERs summed in an int128 into the
**      integer halves; max and min as the word's first of equals in row
**      order (a compare chain, then one ga_xstate_best_* step: the same as
**      stepping each row; a NaN among them steps each row); and REALs as
**      integers of one scale (fixed_lanes: y = x * 2^(1074 - pos), exact,
**      |y| < 2^63, checked by converting back), summed in an int128 and
**      kept pending per group and value while the scale holds, then folded
**      into the exact state once (gstate.h rule 6) when it changes and at
**      the run's end.  A lane that its word's scale does not hold exactly
**      (bits below it, an infinity, a value of 2^63 or more, a word whose
**      largest value is under 2^-960) is added as a double, as before.
**      Exact: every value lands in the same digits, in fewer adds.  The
**      scale is the last word's, set again from a word's largest exponent
**      (its top bit at 2^62) when a lane misses it.  A word of more than
**      GA_CH_FEW_WORD groups is stepped row by row (after its groups were
**      made), and so are the GA_CH_FEW_SKIP words after it: 63 groups at
**      random took 1.3 to 1.5 times the row loop's CPU time a group at a
**      time.  d6 of bench/query_bench.py (7 groups): 0.48 of the CPU time;
**      Q1 0.67.
**  16. Rule 11's array keeps, per id and value of sum only (no max or min),
**      a 32-byte pending sum of rule 15's integers and its count: a row
**      touches one line, not its state's three, and a word whose every
**      passing lane goes there takes a loop of its own (flat_pending: the
**      ids are marked seen when their sums are folded).  The scale of a
**      value only grows there (the pending sums folded first, at most
**      GA_CH_FLAT_SCALES times a run); a lane with bits below it is stepped
**      into its state as a double.  At the run's end every pending sum is
**      folded, before the states become groups.  d5 (10,000 suppliers):
**      0.49 of the CPU time.
**  17. Memory (issue 37): what a query allocates in proportion to the ids,
**      the groups or the values is charged to group_bytes
**      (ga_cquery.dist_cap), on one tally with rule 14's sets: rule 11's
**      array with rule 16's pending sums (every run's, before the runs
**      start), rule 8's index and rule 15's pending sums (each run, as it
**      allocates them), rule 2's groups, slots and small-key table as they
**      grow, the run's table of groups after each word (rules 6 and 11) or
**      every list growth (rule 9), the shared groups' growth as a run's
**      table moves in (the run's charge released then: the groups moved),
**      and the final list of groups.  A run's own arrays are released by
**      run_free.  Past the cap, the way that needs less memory: rule 11's
**      array gives way to rule 8's index (8 bytes an id), a run's index to
**      hashing its keys (rule 6's table), rule 15's steps to the row loop;
**      else (the groups themselves) the cache declines (why says so, and
**      how to raise group_bytes) and gpu_query's scan answers under the same
**      cap.  GPUAGG_CACHE_PROFILE names each fallback (cap:array>index,
**      cap:index>hash, cap:few>rows).  Rule 9's records are charged as
**      they are written (GA_CH_CHARGE_ROWS at a time), and their sort's
**      copy while it lasts; they keep their own cap too (GA_IDR_MAX_BYTES
**      a run).  Fixed bounds, not charged: rule 7's probe bitmap (ids / 8
**      bytes, at most 128 KiB) and the word buffers (the values and the
**      programs' depth).
**  18. Rule 9's groups where gpu_query reads them in any order
**      (ga_cquery.any_order): each id's group is made (ga_gt_make, from the
**      shared groups' arena) before its records are stepped, straight into
**      its states, and listed; it goes into no table at all, since no
**      other thread or run can hold its key, and the shared groups adopt
**      the list (ga_gs_adopt: freed with them) instead of a run's table
**      moving in group by group (ga_gs_take, a hash and a probe each).  Its
**      bytes are charged as the shared tables' growth was (rule 17).  d4
**      of bench/query_bench.py: 0.65 to 0.74 of the CPU time.  A list
**      whose every group lies in the arena and holds nothing out of line
**      (states_heap 0, keys_inline) is adopted plain: the groups go with
**      the arena's blocks, unwalked (ga_gs_adopt; d4 cleared 70 MB of
**      groups at every call to free nothing).
**  19. Top k (gpu_query's rule 7, ga_cquery.topk_*, LIMIT plus OFFSET at
**      most GA_CH_TOPK_MAX) over rule 18's groups: a group, once built
**      exactly, is kept only when its order value (the sum() or total()
**      that ga_gstate_result gives the post query; or its count(*) or
**      count(): ga_cquery.topk_count) comes before the k-th
**      of the thread's heap of the first k so far, or ties with it (SQLite
**      ranks the ties by the later ORDER BY terms), or when any sum() of
**      it overflows (the post query raises that for any group); else its
**      states are emptied and no group is made.  The union of the
**      threads' kept groups holds the answer's, so SQLite's ORDER BY and
**      LIMIT over them answer as over every group.  The kept list is
**      compacted, its groups behind the k-th made spares again, once it
**      holds more than twice k plus 1,024.  The heap, and each kept
**      group's order value, are charged with the list (rule 17).
**      queries_topk counts the
**      query; GPUAGG_CACHE_PROFILE says `topk`.  d2 of bench/query_bench.py
**      (210,000 groups, LIMIT 10): 0.43 of the CPU time.
**  20. Variances (ga_cquery.sq, issue 39) run in rule 6's loop, hashed or
**      through rule 8's index (rule 15's steps included), never rule 2's,
**      9's or 11's: each passing row's value is stepped as rule 6 steps
**      it, then its exact square goes into the state's second fixed-point
**      window (Σx², gstate.h rule 8), as the parallel scan steps it.  Rule
**      15's lanes of one scale (y = x 2^(1074 - pos), |y| < 2^63) square
**      exactly as integers (y² < 2^126), summed in 192 bits pending with
**      the sum's int128 and folded with it at Σx²'s bit 2 pos (x² = y²
**      2^(2 pos - 2148)); the other lanes square one by one.  Exact: the
**      same value in the window, in fewer adds.  A window's bytes are the
**      table's when made (rule 17).
**  21. Medians and percentiles (ga_cquery.dist GA_DIST_PCT, issue 39) run
**      in rule 14's loop, hashed or through rule 8's index: each passing
**      row's value is kept in its group's array of values
**      (engine/cache/cache_pct.c, whose rules say why that is exact), on
**      rule 14's tally and polls.
**  22. Compact sums (issue 37, session 7: d4 of bench/query_bench.py, its
**      rows' records, their sort and their steps about a quarter of the
**      engine's time).  Under rule 9, where every value is read by sums
**      only (step_modes 0: no max or min; rule 9 has no DISTINCT or
**      squares) and there are at most GA_CH_CSUM_VALS values, each run
**      keeps an array of ids x values of csum (16 bytes: the REALs' total
**      as an int64, their count, the id's rows), zeroed, charged to
**      group_bytes (rule 17; past it the run writes records alone).  A
**      passing row whose every value is NULL or a REAL of integral value
**      below 2^53 in magnitude, whose add leaves each total in int64, is
**      added there (csum_word: the word's ids first and their slots
**      fetched ahead, as rule 11 does); any other row (an INTEGER, a
**      fraction, 2^53 and up, an infinity, an add past int64) is rule 9's
**      record, as before.  Each id's group then takes the runs' sums
**      first: rows, counts (nreal) and the runs' totals added in 128 bits,
**      into the window at the units' digit (ga_wsum_add_fixed, gstate.h
**      rule 6), then its records stepped.  Exact: every value is an
**      integer of the units' scale, the totals hold them without rounding,
**      and the fold lands the same value in the digits; only sums read the
**      state, and a sum reads the value, the counts and nint/nreal
**      (typeof), all equal.  The group's run (rule 1's tag) is the first
**      run holding the id in its sums or its records.  queries_csum counts
**      the queries that kept them; GPUAGG_CACHE_CSUM=0 turns them off
**      (tests compare both); GPUAGG_CACHE_PROFILE says `csum`.
*/
#include <math.h>
#include <pthread.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigmem.h"
#include "cache.h"
#include "cache_dbits.h"
#include "cache_pct.h"
#include "cpu_reduce.h"
#include "idrows.h"
#include "scan_group.h"
#include "sqlite3ext.h"
#include "state.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

/* Values a whole-column block sums at once (32 KiB: L1). */
/* Rule 7: after this many passing rows, a run with more than one group
** per GA_CH_PROBE_RATIO rows declines (GA_CACHE_MANY). */
#define GA_CH_PROBE_ROWS 65536
#define GA_CH_PROBE_RATIO 8
#define GA_CACHE_MANY 41
/* Rule 9: a run's records would pass GA_IDR_MAX_BYTES. */
#define GA_CACHE_SORT_FULL 42
/* Rule 14: the DISTINCT sets passed dist_cap; a value outside its bitmap. */
#define GA_CACHE_DSET_CAP 43
#define GA_CACHE_DBITS 44
/* Rules 14 and 21: the groups' sets of values would pass group_bytes. */
static void sets_cap_why(const ga_cquery *q, char *why, size_t nwhy) {
  snprintf(why, nwhy,
           "the DISTINCT aggregates' sets of values or the medians' values "
           "would pass group_bytes (%lld bytes)",
           (long long)q->dist_cap);
}

/* Rule 17: the query's groups and arrays would pass group_bytes. */
#define GA_CACHE_GROUP_CAP 45
#define GA_CH_BLOCK 4096
/* Rule 8: the most ids of a dense key space (a pointer each, per run: 8
** MiB), and at most 65,536 more than the entry's rows. */
#define GA_CH_DENSE ((int64_t)1 << 20)

/* Rule 10: a dense id space this small keeps the direct index (its
** states stay in the caches), however few rows a group has. */
#define GA_CH_NEAR_IDS ((int64_t)1 << 16)

/* Rule 11: the most bytes of a run's array of states (ids x values). */
#define GA_CH_FLAT_BYTES ((int64_t)16 << 20)
/* ... and the least: smaller, the groups' states stay in L2 anyway, and
** rule 8's loop has less to do a row (Q1 and d6 of bench/query_bench.py
** took 1.2 to 1.5 times as long through this one) */
#define GA_CH_FLAT_MIN_BYTES ((int64_t)256 << 10)

/* Rule 9: the most runs whose records one group's build walks. */
#define GA_CH_MAX_RUNS 256

/* Rule 17: rule 9's records are charged this many at a time. */
#define GA_CH_CHARGE_ROWS 4096

/* Rule 19: the largest LIMIT (with OFFSET) whose top k a run keeps. */
#define GA_CH_TOPK_MAX 4096

/* What every run of one query shares (rules 8 and 9). */
typedef struct hplan {
  int64_t ids; /* the dense id space (rule 8); 0: none */
  int64_t card[GA_MAX_KEYS], base[GA_MAX_KEYS];
  int sorted;  /* rule 9: records sorted by id, groups built from them */
  int topk;    /* rule 19: each thread keeps only its first k groups */
  int general; /* rule 6's row loop (general()), else rule 2's */
  int flat;    /* rule 11: states in an array indexed by id */
  int csum;    /* rule 22: each run's compact sums of integral REALs by id */
  int64_t *dset_bytes; /* rules 14 and 17: every run's charged bytes */
  int64_t cap;         /* rule 17: group_bytes (ga_cquery.dist_cap) */
  int flat_capped;     /* rule 17: rule 11's array gave way to rule 8's */
  int *stop;           /* rule 14: the caller was interrupted */
  ga_cdbits db;        /* rule 14: values on bitmaps (cache_dbits.c) */
} hplan;

typedef struct hgroup {
  int64_t ck;   /* canonical key */
  int cls;      /* 0 NULL, 1 integer key, 2 REAL bits key */
  ga_value key; /* the first row's value (number or NULL) */
  ga_xstate st;
} hgroup;

typedef struct hrun {
  const ga_centry *e;
  const ga_cquery *q;
  int64_t s0, s1; /* segments [s0, s1) */
  int no;         /* run number, in row order */
  ga_group_shards *gs;
  /* grouped: open addressing */
  hgroup *g;
  int64_t *slot; /* index into g, -1 empty */
  int64_t ng, capg, nslot;
  int32_t *dense; /* index + 1 into g of keys 0 .. GA_DENSE_KEYS-1 */
  ga_xstate st;   /* ungrouped */
  const hplan *p;
  ga_idrows rows;   /* rule 9: this run's passing rows, sorted by id */
  struct csum *cs;  /* rule 22: ids x nvals compact sums, or NULL */
  int64_t cs_bytes; /* rule 22: cs's mapping */
  int phase;        /* 2: rule 9's group building */
  struct hrun *all; /* phase 2: every run, and how many */
  int nruns;
  int64_t lo, hi;  /* phase 2: this thread's ids */
  int64_t made;    /* phase 2: groups made */
  int64_t idrows;  /* rule 12: passing rows whose group was found by id */
  int64_t held;    /* rule 17: bytes of this run's own charged (released) */
  int hashed;      /* rule 17: rule 8's index past the cap: hashed */
  int nofew;       /* rule 17: rule 15's pending sums past the cap */
  ga_group **list; /* phase 2: them, in id order (made of them) */
  int64_t cap;
  int rc;
  pthread_t th;
  int started;
} hrun;

/* GPUAGG_CACHE_PROFILE=1: each step's wall time (cache.h). */
static void prof(const char *what, double *t0) {
  ga_cache_prof("cache_host", what, t0);
}

/* Rule 17: add n bytes to the query's tally (shared with rule 14's sets);
** 1 when it then passes group_bytes. */
static int charge(const hplan *p, int64_t n) {
  return ga_cdist_charge(p->dset_bytes, n, p->cap);
}
static void release(const hplan *p, int64_t n) {
  __atomic_sub_fetch(p->dset_bytes, n, __ATOMIC_RELAXED);
}
/* A run's own arrays: charged, and released by run_free; 0, or
** GA_CACHE_GROUP_CAP past the cap. */
static int hold(hrun *r, int64_t n) {
  r->held += n;
  return charge(r->p, n) ? GA_CACHE_GROUP_CAP : 0;
}

/* ---- filter ---- */

/* v (kind) against literal l: <0, 0, >0, exactly.  INTEGER with INTEGER and
** REAL with REAL compare inline (no NaN in SQLite); mixed, ga_num_cmp. */
static inline int lit_cmp(int kind, int64_t v, const gak_clit *l) {
  if (kind == l->kind) {
    if (kind == GA_KIND_INT)
      return (v > l->bits) - (v < l->bits);
    double x = ga_bitsd(v), y = ga_bitsd(l->bits);
    return (x > y) - (x < y);
  }
  return ga_num_cmp(kind, v, l->kind, l->bits);
}

/* The lanes 0 .. n-1 of v, all INTEGER (REAL), whose value is `op` the
** literal l: the same comparison as lit_cmp of one kind, a word of lanes
** at a time with no branch a lane. */
#define GA_CH_CMP_WORD(name, type, load)                                       \
  static uint64_t name(int op, const uint64_t *v, int n, type l) {             \
    uint64_t ok = 0;                                                           \
    switch (op) {                                                              \
    case GAK_CMP_EQ:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) == l) << j;                                \
      break;                                                                   \
    case GAK_CMP_NE:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) != l) << j;                                \
      break;                                                                   \
    case GAK_CMP_LT:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) < l) << j;                                 \
      break;                                                                   \
    case GAK_CMP_LE:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) <= l) << j;                                \
      break;                                                                   \
    case GAK_CMP_GT:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) > l) << j;                                 \
      break;                                                                   \
    case GAK_CMP_GE:                                                           \
      for (int j = 0; j < n; j++)                                              \
        ok |= (uint64_t)(load(v[j]) >= l) << j;                                \
      break;                                                                   \
    }                                                                          \
    return ok;                                                                 \
  }
#define GA_CH_LOAD_INT(x) ((int64_t)(x))
#define GA_CH_LOAD_REAL(x) ga_bitsd((int64_t)(x))
GA_CH_CMP_WORD(cmp_word_int, int64_t, GA_CH_LOAD_INT)
GA_CH_CMP_WORD(cmp_word_real, double, GA_CH_LOAD_REAL)

/* The rows of word w of block b (rows 64w .. 64w+63, those below b->n) that
** pass every term, as a mask; a term is tested only on the rows still in
** (NULL passes only IS NULL; numbers compare exactly, rule 4). */
static uint64_t word_pass(const gak_cfilter *f, const ga_cblock *b, int64_t w) {
  int64_t i0 = w * 64, cnt = b->n - i0 < 64 ? b->n - i0 : 64;
  uint64_t m = cnt == 64 ? ~0ull : (1ull << cnt) - 1;
  for (int t = 0; t < f->nterms && m; t++) {
    const gak_cterm *tm = &f->terms[t];
    int c = tm->col;
    uint64_t nn = ga_cb_notnull(b, c)[w], ii = ga_cb_isint(b, c)[w];
    if (tm->op == GAK_CMP_ISNULL) {
      m &= ~nn;
      continue;
    }
    if (tm->op == GAK_CMP_NOTNULL) {
      m &= nn;
      continue;
    }
    const uint64_t *v = ga_cb_vals(b, c) + i0;
    uint64_t in = m & nn, ok = 0;
    if (tm->op != GAK_CMP_IN && in) {
      /* rule 4's fast case: every lane in and the literal of one kind */
      const gak_clit *l = &f->lits[tm->lit];
      if (l->kind == GA_KIND_INT && (ii & in) == in) {
        m &= in & cmp_word_int(tm->op, v, (int)cnt, l->bits);
        continue;
      }
      if (l->kind == GA_KIND_REAL && !(ii & in)) {
        m &= in & cmp_word_real(tm->op, v, (int)cnt, ga_bitsd(l->bits));
        continue;
      }
    }
    while (in) {
      int j = __builtin_ctzll(in);
      int kind = (ii >> j) & 1 ? GA_KIND_INT : GA_KIND_REAL;
      int pass = 0;
      if (tm->op == GAK_CMP_IN) {
        for (int k = 0; k < tm->nlit && !pass; k++)
          pass = lit_cmp(kind, (int64_t)v[j], &f->lits[tm->lit + k]) == 0;
      } else {
        int r = lit_cmp(kind, (int64_t)v[j], &f->lits[tm->lit]);
        switch (tm->op) {
        case GAK_CMP_EQ:
          pass = r == 0;
          break;
        case GAK_CMP_NE:
          pass = r != 0;
          break;
        case GAK_CMP_LT:
          pass = r < 0;
          break;
        case GAK_CMP_LE:
          pass = r <= 0;
          break;
        case GAK_CMP_GT:
          pass = r > 0;
          break;
        case GAK_CMP_GE:
          pass = r >= 0;
          break;
        }
      }
      ok |= (uint64_t)pass << j;
      in &= in - 1;
    }
    m &= ok;
  }
  return m;
}

/* The rows of word w of block b that pass f's terms (every row there
** without terms). */
static uint64_t word_mask(const gak_cfilter *f, const ga_cblock *b, int64_t w) {
  if (f->nterms)
    return word_pass(f, b, w);
  return b->n - w * 64 >= 64 ? ~0ull : (1ull << (b->n - w * 64)) - 1;
}

/* ---- groups ---- */

static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Rule 3's canonical key of a value of column c, row i. */
static void canon(const ga_cblock *b, int c, int64_t i, int *cls, int64_t *ck,
                  ga_value *raw) {
  memset(raw, 0, sizeof(*raw));
  if (!ga_bit(ga_cb_notnull(b, c), i)) {
    *cls = 0;
    *ck = 0;
    raw->type = GA_V_NULL;
    return;
  }
  int64_t v = (int64_t)ga_cb_vals(b, c)[i];
  if (ga_bit(ga_cb_isint(b, c), i)) {
    *cls = 1;
    *ck = v;
    raw->type = GA_V_INT;
    raw->i = v;
    return;
  }
  double r = ga_bitsd(v);
  raw->type = GA_V_REAL;
  raw->r = r;
  if (r >= -0x1p63 && r < 0x1p63 && r == trunc(r)) {
    *cls = 1;
    *ck = (int64_t)r;
  } else {
    *cls = 2;
    *ck = v;
  }
}

static int grow(hrun *r) {
  int64_t nslot = r->nslot ? r->nslot * 2 : 64;
  if ((r->rc = hold(r, 8 * (nslot - r->nslot)))) /* rule 17 */
    return 0;
  int64_t *slot = sqlite3_malloc64(sizeof(int64_t) * (size_t)nslot);
  if (!slot)
    return 0;
  for (int64_t k = 0; k < nslot; k++)
    slot[k] = -1;
  for (int64_t j = 0; j < r->ng; j++) {
    uint64_t h = mix((uint64_t)r->g[j].ck * 3 + (uint64_t)r->g[j].cls);
    int64_t k = (int64_t)(h & (uint64_t)(nslot - 1));
    while (slot[k] >= 0)
      k = (k + 1) & (nslot - 1);
    slot[k] = j;
  }
  sqlite3_free(r->slot);
  r->slot = slot;
  r->nslot = nslot;
  return 1;
}

/* The index in r->g of the group of (cls, ck); raw is the row's key value.
** -1: out of memory or too many groups (r->rc set). */
static int64_t group_of(hrun *r, int cls, int64_t ck, const ga_value *raw) {
  if (r->ng * 2 >= r->nslot && !grow(r)) {
    if (!r->rc)
      r->rc = GA_SCAN_NOMEM;
    return -1;
  }
  uint64_t h = mix((uint64_t)ck * 3 + (uint64_t)cls);
  int64_t k = (int64_t)(h & (uint64_t)(r->nslot - 1));
  for (;;) {
    int64_t j = r->slot[k];
    if (j < 0)
      break;
    if (r->g[j].cls == cls && r->g[j].ck == ck)
      return j;
    k = (k + 1) & (r->nslot - 1);
  }
  if (r->ng >= GA_CACHE_MAX_GROUPS) {
    r->rc = GA_SCAN_FALLBACK;
    return -1;
  }
  if (r->ng == r->capg) {
    int64_t cap = r->capg ? r->capg * 2 : 16;
    if ((r->rc = hold(r, (int64_t)sizeof(hgroup) * (cap - r->capg))))
      return -1; /* rule 17 */
    hgroup *g = sqlite3_realloc64(r->g, sizeof(hgroup) * (size_t)cap);
    if (!g) {
      r->rc = GA_SCAN_NOMEM;
      return -1;
    }
    r->g = g;
    r->capg = cap;
  }
  hgroup *g = &r->g[r->ng];
  memset(g, 0, sizeof(*g));
  g->cls = cls;
  g->ck = ck;
  g->key = *raw; /* the first row of the run wins (rule 1) */
  r->slot[k] = r->ng;
  return r->ng++;
}

/* The group of row i's key (column gc).  Small non-negative integer keys
** (the usual group_by column) index a dense table first; others hash. */
#define GA_DENSE_KEYS 65536
static ga_xstate *group_at(hrun *r, const ga_cblock *b, int gc, int64_t i) {
  int cls;
  int64_t ck;
  ga_value raw;
  canon(b, gc, i, &cls, &ck, &raw);
  int dense = cls == 1 && ck >= 0 && ck < GA_DENSE_KEYS;
  if (dense && r->dense && r->dense[ck])
    return &r->g[r->dense[ck] - 1].st;
  if (dense && !r->dense) {
    if ((r->rc = hold(r, (int64_t)sizeof(int32_t) * GA_DENSE_KEYS)))
      return NULL; /* rule 17 */
    r->dense = sqlite3_malloc64(sizeof(int32_t) * GA_DENSE_KEYS);
    if (!r->dense) {
      r->rc = GA_SCAN_NOMEM;
      return NULL;
    }
    memset(r->dense, 0, sizeof(int32_t) * GA_DENSE_KEYS);
  }
  int64_t j = group_of(r, cls, ck, &raw);
  if (j < 0)
    return NULL;
  if (dense)
    r->dense[ck] = (int32_t)j + 1;
  return &r->g[j].st;
}

/* ---- one run ---- */

static void step_x(ga_xstate *st, const ga_cblock *b, int xc, int64_t i) {
  if (!ga_bit(ga_cb_notnull(b, xc), i)) {
    ga_xstate_step_null(st);
    return;
  }
  uint64_t v = ga_cb_vals(b, xc)[i];
  if (ga_bit(ga_cb_isint(b, xc), i))
    ga_xstate_step_int(st, (int64_t)v);
  else
    ga_xstate_step_real(st, ga_bitsd((int64_t)v));
}

/* The largest and smallest of n > 0 doubles (no NaN: SQLite has none),
** two lanes of SSE2 at a time (the x86-64 baseline).  Which zero of +-0
** comes back does not matter: the caller looks for the first value equal to
** it, and +0 == -0. */
static void minmax_real(const uint64_t *v, int64_t n, double *mx, double *mn) {
  int64_t i = 0;
#if defined(__SSE2__)
  if (n >= 8) {
    __m128d a0 = _mm_loadu_pd((const double *)v), a1 = a0, a2 = a0, a3 = a0;
    __m128d b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (; i + 8 <= n; i += 8) {
      const double *p = (const double *)(v + i);
      __m128d x0 = _mm_loadu_pd(p), x1 = _mm_loadu_pd(p + 2);
      __m128d x2 = _mm_loadu_pd(p + 4), x3 = _mm_loadu_pd(p + 6);
      a0 = _mm_max_pd(a0, x0), a1 = _mm_max_pd(a1, x1);
      a2 = _mm_max_pd(a2, x2), a3 = _mm_max_pd(a3, x3);
      b0 = _mm_min_pd(b0, x0), b1 = _mm_min_pd(b1, x1);
      b2 = _mm_min_pd(b2, x2), b3 = _mm_min_pd(b3, x3);
    }
    a0 = _mm_max_pd(_mm_max_pd(a0, a1), _mm_max_pd(a2, a3));
    b0 = _mm_min_pd(_mm_min_pd(b0, b1), _mm_min_pd(b2, b3));
    double m[2], k[2];
    _mm_storeu_pd(m, a0);
    _mm_storeu_pd(k, b0);
    *mx = m[0] > m[1] ? m[0] : m[1];
    *mn = k[0] < k[1] ? k[0] : k[1];
  } else
#endif
  {
    *mx = *mn = ga_bitsd((int64_t)v[0]);
  }
  for (; i < n; i++) {
    double x = ga_bitsd((int64_t)v[i]);
    if (x > *mx)
      *mx = x;
    if (x < *mn)
      *mn = x;
  }
}

/* Fold a REAL block's max or min (value m, first found at or after row 0
** of the block, whose first row is `pos` in the run) into best: a strictly
** better value replaces it, an equal one does not (the earlier row wins). */
static void fold_real(ga_best_partial *best, const uint64_t *v, int64_t n,
                      double m, int64_t pos, int want_min) {
  if (best->kind == GA_KIND_REAL) {
    double b = ga_bitsd(best->bits);
    if (want_min ? !(m < b) : !(m > b))
      return;
  }
  for (int64_t i = 0; i < n; i++)
    if (ga_bitsd((int64_t)v[i]) == m) { /* the first row holding it */
      best->kind = GA_KIND_REAL;
      best->bits = (int64_t)v[i];
      best->idx = pos + i;
      return;
    }
}

/* Rule 2's whole-column blocks, for a run without NULL or filter. */
static void whole(hrun *r) {
  const ga_centry *e = r->e;
  int xc = r->q->xcol;
  ga_best_partial mx = {GA_KIND_NONE, 0, 0, 0}, mn = mx;
  int64_t pos = 0, since = 0; /* row of the run; values since a normalise */
  for (int64_t s = r->s0; s < r->s1; s++) {
    const ga_cblock *b = e->segs[s];
    const ga_ccol *k = &e->cols[xc];
    int layout = k->nint == e->rows    ? GA_LAYOUT_INT
                 : k->nreal == e->rows ? GA_LAYOUT_REAL
                                       : GA_LAYOUT_MIXED;
    for (int64_t o = 0; o < b->n; o += GA_CH_BLOCK) {
      int64_t n = b->n - o < GA_CH_BLOCK ? b->n - o : GA_CH_BLOCK;
      const uint64_t *v = ga_cb_vals(b, xc) + o;
      const uint64_t *bits = ga_cb_isint(b, xc) + o / 64;
      ga_best_partial p;
      ga_cpu_sum(v, bits, n, layout, &r->st.sum);
      if (layout == GA_LAYOUT_REAL) { /* one pass for both, vectorised */
        double hi, lo;
        minmax_real(v, n, &hi, &lo);
        fold_real(&mx, v, n, hi, pos, 0);
        fold_real(&mn, v, n, lo, pos, 1);
      } else {
        ga_cpu_best(v, bits, n, layout, 0, &p);
        p.idx += pos;
        ga_best_merge(&mx, &p, 0);
        ga_cpu_best(v, bits, n, layout, 1, &p);
        p.idx += pos;
        ga_best_merge(&mn, &p, 1);
      }
      pos += n;
      since += n;
      if (since > GA_STATE_NORM_MASK) { /* ga_cpu_sum's bound per partial */
        ga_sum_normalize(&r->st.sum);
        since = 0;
      }
    }
  }
  r->st.rows = r->st.count = pos;
  if (pos) {
    ga_value v;
    memset(&v, 0, sizeof(v));
    v.type = mx.kind == GA_KIND_INT ? GA_V_INT : GA_V_REAL;
    v.i = mx.bits;
    v.r = ga_bitsd(mx.bits);
    ga_bval_set(&r->st.max, &v); /* numbers: nothing to allocate */
    v.type = mn.kind == GA_KIND_INT ? GA_V_INT : GA_V_REAL;
    v.i = mn.bits;
    v.r = ga_bitsd(mn.bits);
    ga_bval_set(&r->st.min, &v);
  }
}

/* ---- rule 6: several keys and values ---- */

typedef struct wsrc {
  const ga_cblock *b;
  int64_t w;
} wsrc;

/* Column c's word w of block b (cexpr.h's load). */
static void load_word(const void *arg, int c, ga_cx_word *out) {
  const wsrc *s = arg;
  int64_t i0 = s->w * 64, cnt = s->b->n - i0 < 64 ? s->b->n - i0 : 64;
  memcpy(out->v, ga_cb_vals(s->b, c) + i0, sizeof(uint64_t) * (size_t)cnt);
  for (int64_t j = cnt; j < 64; j++)
    out->v[j] = 0;
  out->isint = ga_cb_isint(s->b, c)[s->w];
  out->notnull = ga_cb_notnull(s->b, c)[s->w];
}

/* A program's word as the row loop reads it: a bare column's straight
** from its block (no copy), any other's from its evaluated word. */
typedef struct wview {
  const uint64_t *v;
  uint64_t isint, notnull;
} wview;

/* Rule 8: the dense id space of keys that are all bare TEXT columns or
** INTEGER-only columns (a key's id: its code, or its value less base), or 0
** (then the table's hash finds each row's group). */
static int64_t dense_ids(const ga_centry *e, const ga_cquery *q, int64_t *card,
                         int64_t *base) {
  int64_t ids = q->nkeys ? 1 : 0;
  int64_t most = e->rows < GA_CH_DENSE - 65536 ? e->rows + 65536 : GA_CH_DENSE;
  for (int k = 0; k < q->nkeys; k++) {
    int c = ga_cx_bare(ga_cq_key(q, k));
    const ga_ccol *col = c < 0 ? NULL : &e->cols[c];
    if (!col || col->mixed)
      return 0;
    base[k] = 0;
    if (col->dict) {
      card[k] = ga_dict_count(col->dict) + 1; /* and NULL */
    } else if (col->nint && !col->nreal && !col->ntext &&
               (uint64_t)col->imax - (uint64_t)col->imin < (uint64_t)most) {
      base[k] = col->imin;
      card[k] = col->imax - col->imin + 2; /* and NULL */
    } else {
      return 0;
    }
    if (card[k] > most / ids)
      return 0;
    ids *= card[k];
  }
  return ids;
}

/* Bare column c's word w of block b, read in place (lanes past the block's
** rows never pass). */
static void bare_view(const ga_cblock *b, int c, int64_t w, wview *v) {
  v->v = ga_cb_vals(b, c) + w * 64;
  v->isint = ga_cb_isint(b, c)[w];
  v->notnull = ga_cb_notnull(b, c)[w];
}

/* Rule 8's id of lane j of the key words kv (codes, NULL the last id of each
** key), or -1 (never: a code's range). */
static inline __attribute__((always_inline)) int64_t
lane_id(const hplan *p, const wview *kv, int nkeys, int j) {
  int64_t id = 0, stride = 1;
  for (int k = 0; k < nkeys; k++) {
    int64_t code = (kv[k].notnull >> j) & 1
                       ? (int64_t)(kv[k].v[j] - (uint64_t)p->base[k])
                       : p->card[k] - 1;
    if (code < 0 || code >= p->card[k])
      return -1;
    id += code * stride;
    stride *= p->card[k];
  }
  return id;
}

/* The rows of word w of block b that pass the filter: its terms, then the
** filter program's true lanes (cexpr.h rule 4), evaluated on stack (room for
** its depth) into *fw.  0 with *rc = GA_CACHE_DECLINED when a row that the
** terms pass raises an error there (rule 5). */
static uint64_t pass_word(const ga_cquery *q, const ga_cblock *b, int64_t w,
                          ga_cx_word *stack, ga_cx_word *fw, int *rc) {
  uint64_t m = word_mask(&q->filter, b, w);
  if (!m || !q->has_fprog)
    return m;
  wsrc src = {b, w};
  ga_cexpr_eval_word(&q->fprog, load_word, &src, stack, fw);
  uint64_t t = fw->notnull;
  for (uint64_t k = t; k; k &= k - 1) {
    int j = __builtin_ctzll(k);
    if ((fw->isint >> j) & 1 ? fw->v[j] == 0
                             : ga_bitsd((int64_t)fw->v[j]) == 0.0)
      t &= ~(1ull << j);
  }
  if (fw->err & m) {
    *rc = GA_CACHE_DECLINED;
    return 0;
  }
  return m & t;
}

uint64_t ga_cache_pass_word(const ga_cquery *q, const ga_cblock *b, int64_t w,
                            ga_cx_word *stack, ga_cx_word *fw, int *rc) {
  return pass_word(q, b, w, stack, fw, rc);
}

/* Rule 9's probe: whether the entry's first GA_CH_PROBE_ROWS passing rows
** make more than one group in GA_CH_PROBE_RATIO, counted on their ids.
** 1, 0, or -1 when out of memory. */
static int many_groups(const ga_centry *e, const ga_cquery *q, const hplan *p) {
  int depth = q->has_fprog ? q->fprog.depth : 1;
  uint64_t *seen_id =
      sqlite3_malloc64(sizeof(uint64_t) * (size_t)GA_BW(p->ids));
  ga_cx_word *wd = sqlite3_malloc64(sizeof(ga_cx_word) * (size_t)(1 + depth));
  if (!seen_id || !wd) {
    sqlite3_free(seen_id);
    sqlite3_free(wd);
    return -1;
  }
  memset(seen_id, 0, sizeof(uint64_t) * (size_t)GA_BW(p->ids));
  wview kv[GA_MAX_KEYS];
  int64_t seen = 0, groups = 0;
  int rc = 0;
  for (int64_t s = 0; s < e->nsegs && seen < GA_CH_PROBE_ROWS && !rc; s++) {
    const ga_cblock *b = e->segs[s];
    for (int64_t w = 0; w < GA_BW(b->n) && seen < GA_CH_PROBE_ROWS; w++) {
      uint64_t m = pass_word(q, b, w, wd + 1, wd, &rc);
      if (rc)
        break;
      for (int k = 0; m && k < q->nkeys; k++)
        bare_view(b, ga_cx_bare(ga_cq_key(q, k)), w, &kv[k]);
      for (; m; m &= m - 1, seen++) {
        int64_t id = lane_id(p, kv, q->nkeys, __builtin_ctzll(m));
        if (id >= 0 && !ga_bit(seen_id, id)) {
          seen_id[id / 64] |= 1ull << (id % 64);
          groups++;
        }
      }
    }
  }
  sqlite3_free(seen_id);
  sqlite3_free(wd);
  return seen >= GA_CH_PROBE_ROWS && groups * GA_CH_PROBE_RATIO > seen;
}

/* The class of lane j of v: GA_IDR_NULL, GA_IDR_INT or GA_IDR_REAL. */
static inline int lane_cls(const wview *v, int j) {
  return !((v->notnull >> j) & 1) ? GA_IDR_NULL
         : (v->isint >> j) & 1    ? GA_IDR_INT
                                  : GA_IDR_REAL;
}

/* Rule 9: the passing row's record (its id and values) in r->rows. */
static int push_row(hrun *r, int64_t id, const wview *vv, int nvals, int j) {
  int rc = ga_idrows_reserve(&r->rows);
  if (rc)
    return rc == GA_NOMEM ? GA_SCAN_NOMEM : GA_CACHE_SORT_FULL;
  uint64_t *rec = ga_idrows_push(&r->rows), flags = 0;
  for (int i = 0; i < nvals; i++) {
    int cls = lane_cls(&vv[i], j);
    flags |= (uint64_t)cls << (2 * i);
    rec[1 + i] = vv[i].v[j];
  }
  rec[0] = (uint64_t)id | flags << 32;
  return 0;
}

/* step_lane's best of each value of q (rule 13). */
static void step_modes(const ga_cquery *q, unsigned char *mode) {
  for (int i = 0; i < q->nvals; i++)
    mode[i] = q->best_only[i] ? 2 : q->best[i];
}

/* One value into a group's state, as rule 6 steps it; without max and min
** where no aggregate reads them (best 0: ga_cquery.best, as on the GPU),
** without the sum where only they and count do (best 2: rule 13).
** GA_OK or GA_SCAN_NOMEM. */
static inline __attribute__((always_inline)) int
step_lane(ga_gstate *st, int cls, uint64_t v, int best) {
  if (cls == GA_IDR_NULL) {
    ga_gstate_step_null(st);
  } else if (best == 2) { /* rule 13: counts, max and min */
    st->rows++;
    st->count++;
    if (cls == GA_IDR_INT) {
      ga_xstate_best_int(&st->max, (int64_t)v, 0);
      ga_xstate_best_int(&st->min, (int64_t)v, 1);
    } else {
      ga_xstate_best_real(&st->max, ga_bitsd((int64_t)v), 0);
      ga_xstate_best_real(&st->min, ga_bitsd((int64_t)v), 1);
    }
  } else if (cls == GA_IDR_INT && best)
    ga_gstate_step_int(st, (int64_t)v);
  else if (cls == GA_IDR_INT)
    ga_gstate_step_sum_int(st, (int64_t)v);
  else if (best ? ga_gstate_step_real(st, ga_bitsd((int64_t)v))
                : ga_gstate_step_sum_real(st, ga_bitsd((int64_t)v)))
    return GA_SCAN_NOMEM;
  return 0;
}

/* Rule 20: the square of a lane into st's Σx² (t_bytes grows by the
** window's bytes when it is made).  GA_OK or GA_SCAN_NOMEM. */
static int sq_lane(ga_gstate *st, int cls, uint64_t v, int64_t *t_bytes) {
  if (cls == GA_IDR_NULL)
    return 0;
  ga_value num;
  memset(&num, 0, sizeof(num));
  num.type = cls == GA_IDR_INT ? GA_V_INT : GA_V_REAL;
  if (cls == GA_IDR_INT)
    num.i = (int64_t)v;
  else
    num.r = ga_bitsd((int64_t)v);
  int had = st->sq != NULL;
  if (ga_gstate_sq_step(st, &num))
    return GA_SCAN_NOMEM;
  if (!had)
    *t_bytes += (int64_t)sizeof(ga_gsq);
  return 0;
}

/* The key tuple of rule 8's id: per key, NULL (the last code) or its
** code plus base, an INTEGER, as a lane of the key's word gives it (TEXT
** codes become their values in ga_cache_decode_keys); rule 9 turns codes
** into TEXT itself (text = 1). */
static void id_keys(const ga_cquery *q, const hplan *p, int64_t id,
                    ga_value *key, int text) {
  memset(key, 0, sizeof(ga_value) * (size_t)q->nkeys);
  for (int64_t k = 0, rest = id; k < q->nkeys; k++) {
    int64_t code = rest % p->card[k];
    rest /= p->card[k];
    if (code == p->card[k] - 1) {
      key[k].type = GA_V_NULL;
    } else if (q->kdict[k] && text) {
      key[k].type = GA_V_TEXT;
      ga_dict_value(q->kdict[k], (uint32_t)code, &key[k].p, &key[k].n);
    } else {
      key[k].type = GA_V_INT;
      key[k].i = code + p->base[k];
    }
  }
}

/* Rule 11: each id seen gets its group in t (new: one id, one key tuple),
** tagged with the run's number, and takes the id's states; an id's bit
** is cleared once they moved (general() clears the others). */
static void flat_groups(hrun *r, ga_group_table *t, ga_gstate *fst,
                        uint64_t *fseen) {
  const ga_cquery *q = r->q;
  ga_value key[GA_MAX_KEYS];
  for (int64_t w = 0; w < GA_BW(r->p->ids) && !r->rc; w++) {
    while (fseen[w] && !r->rc) {
      int64_t id = w * 64 + __builtin_ctzll(fseen[w]);
      id_keys(q, r->p, id, key, 0);
      ga_group *g = ga_gt_get(t, key, ga_keys_hash(key, &t->shape), r->no);
      if (!g) {
        r->rc = GA_SCAN_NOMEM;
        break;
      }
      for (int i = 0; i < q->nvals; i++) { /* new: its states are empty */
        g->st[i] = fst[id * q->nvals + i];
        t->bytes += ga_gstate_heap_bytes(&g->st[i]);
      }
      fseen[w] &= fseen[w] - 1;
    }
  }
}

/* Rule 14, after word w: the sets' growth charged to the shared tally
** (GA_CACHE_DSET_CAP past the cap), and every 64 words the caller's
** interrupt (run 0, the caller's thread) or its stop (GA_SCAN_INTERRUPT). */
static int dist_poll(hrun *r, int64_t w, int64_t *dbytes) {
  const ga_cquery *q = r->q;
  if (*dbytes && ga_cdist_charge(r->p->dset_bytes, *dbytes, q->dist_cap))
    return GA_CACHE_DSET_CAP;
  *dbytes = 0;
  if (w & 63)
    return 0;
  if (r->no == 0 && q->interrupted && q->interrupted(q->interrupted_arg))
    __atomic_store_n(r->p->stop, 1, __ATOMIC_RELAXED);
  return __atomic_load_n(r->p->stop, __ATOMIC_RELAXED) ? GA_SCAN_INTERRUPT : 0;
}

/* Rule 15: the bits set in x, inline (without -mpopcnt the builtin is a
** call into libgcc, which was 7% of d6's samples). */
static inline int popc(uint64_t x) {
#if defined(__POPCNT__)
  return __builtin_popcountll(x);
#else
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (int)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Rule 15: the most ids whose groups take the word-at-a-time steps; a
** word of more groups than GA_CH_FEW_WORD is stepped row by row, and so are
** the GA_CH_FEW_SKIP words after it (63 groups at random, each word's
** rows a group at a time: 1.3 to 1.5 times the row loop's CPU time) */
#define GA_CH_FEW_IDS 64
#define GA_CH_FEW_WORD 16
#define GA_CH_FEW_SKIP 15

/* Rule 15: the first nl lanes of v as integers of the scale of xacc
** position pos (xacc.h: 2^(pos - 1074), pos <= 1074 so that no product
** underflows), y[j] = x * 2^(1074 - pos), exactly for each lane of the mask
** returned: those whose value has no bit below the scale, and stays below
** 2^63 in it.  Lanes that hold no REAL give garbage, and are masked out by
** the caller.  Branch-free. */
static uint64_t fixed_try(const uint64_t *v, int nl, int pos, int64_t *y) {
  double scale = ga_bitsd((int64_t)(1074 - pos + 1023) << 52);
  uint64_t ok = 0;
  int j = 0;
#if defined(__SSE2__) && defined(__x86_64__)
  /* two lanes at once; cvttsd2si gives INT64_MIN for what does not fit
  ** (NaN, infinities, |f| >= 2^63), which then differs from f unless f is
  ** -2^63, which it is exactly; -0.0 compares equal to 0 here */
  __m128d sc = _mm_set1_pd(scale);
  for (; j + 2 <= nl; j += 2) {
    __m128d f = _mm_mul_pd(_mm_loadu_pd((const double *)(v + j)), sc);
    int64_t i0 = _mm_cvttsd_si64(f);
    int64_t i1 = _mm_cvttsd_si64(_mm_unpackhi_pd(f, f));
    y[j] = i0;
    y[j + 1] = i1;
    __m128d b = _mm_unpacklo_pd(_mm_cvtsi64_sd(f, i0), _mm_cvtsi64_sd(f, i1));
    ok |= (uint64_t)_mm_movemask_pd(_mm_cmpeq_pd(f, b)) << j;
  }
#endif
  for (; j < nl; j++) {
    uint64_t fb = (uint64_t)ga_dbits(ga_bitsd((int64_t)v[j]) * scale);
    /* |f| < 2^63 (NaN and infinities not), else 0 */
    uint64_t in = (fb & 0x7fffffffffffffffull) < 0x43e0000000000000ull;
    double f = ga_bitsd((int64_t)(fb & (uint64_t) - (int64_t)in));
    int64_t i = (int64_t)f;
    y[j] = i;
    ok |= (in & ((uint64_t)ga_dbits((double)i) == (uint64_t)ga_dbits(f))) << j;
  }
  return ok;
}

/* Rule 15: the REAL lanes `reals` of v as integers of one scale (fixed_try),
** *pos the scale of the value's last word: kept while every lane fits it,
** else set by this word's largest exponent (its top bit at 2^62, so that
** |y| < 2^63 and 64 of them sum in an int128).  Lanes outside the mask
** returned (a value with bits below the scale; every lane when the word
** holds an infinity or a value of 2^63 or more) are added as doubles. */
static uint64_t fixed_lanes(const uint64_t *v, uint64_t reals, int nl,
                            int64_t *y, int *pos) {
  uint64_t ok = *pos ? fixed_try(v, nl, *pos, y) & reals : 0;
  if (ok == reals)
    return ok;
  uint64_t emax = 0;
  for (uint64_t k = reals; k; k &= k - 1) {
    uint64_t e = (v[__builtin_ctzll(k)] >> 52) & 0x7ff;
    emax = e > emax ? e : emax;
  }
  /* biased exponent E: bits at xacc positions E - 1 .. E + 51 (xacc.h) */
  if (emax < 62 || emax > 1085 || (int)emax - 11 == *pos)
    return ok; /* no double scale, or the same */
  *pos = (int)emax - 11;
  return fixed_try(v, nl, *pos, y) & reals;
}

/* step_lane's max and min of the non-NULL lanes nn of v, in row order. */
static void few_best(ga_gstate *st, const wview *v, uint64_t nn) {
  if (!(nn & v->isint)) { /* REALs alone: the word's first max and min */
    double mx = ga_bitsd((int64_t)v->v[__builtin_ctzll(nn)]), mn = mx;
    int nan = mx != mx;
    for (uint64_t k = nn & (nn - 1); k; k &= k - 1) {
      double x = ga_bitsd((int64_t)v->v[__builtin_ctzll(k)]);
      mx = x > mx ? x : mx; /* strictly greater: the first of equals */
      mn = x < mn ? x : mn;
      nan |= x != x;
    }
    if (!nan) { /* (a NaN would not compare as one row after another) */
      ga_xstate_best_real(&st->max, mx, 0);
      ga_xstate_best_real(&st->min, mn, 1);
      return;
    }
  }
  for (; nn; nn &= nn - 1) {
    int j = __builtin_ctzll(nn);
    if ((v->isint >> j) & 1) {
      ga_xstate_best_int(&st->max, (int64_t)v->v[j], 0);
      ga_xstate_best_int(&st->min, (int64_t)v->v[j], 1);
    } else {
      ga_xstate_best_real(&st->max, ga_bitsd((int64_t)v->v[j]), 0);
      ga_xstate_best_real(&st->min, ga_bitsd((int64_t)v->v[j]), 1);
    }
  }
}

/* Rule 15: a group's value's REAL lanes summed as integers of the scale
** pos, word after word, not yet in its state: folded (gstate.h rule 6)
** when the scale changes and when the run ends.  A word adds less than
** 64 * 2^63 = 2^69, so the int128 holds 2^57 words (a run has fewer). */
typedef __int128 fp_i128 __attribute__((aligned(8))); /* sqlite3_malloc's */
typedef struct fpend {
  fp_i128 s;
  int pos; /* 0: none */
  /* rule 20: a variance's Σy² of the same lanes, 192 bits (q0 low) */
  uint64_t q0, q1, q2;
} fpend;

static int few_fold(ga_gstate *st, fpend *pd) {
  int rc = pd->s ? ga_wsum_add_fixed(&st->sum, pd->s, pd->pos) : GA_OK;
  /* rule 20: x = y 2^(pos - 1074), so x² = y² 2^(2 pos - 2148): Σy² lands
  ** at Σx²'s bit 2 pos (xvar.h rule 2), its top 64 bits 128 above */
  if (rc == GA_OK && (pd->q0 | pd->q1))
    rc = ga_gstate_sq_add(st, (unsigned __int128)pd->q1 << 64 | pd->q0,
                          2 * pd->pos);
  if (rc == GA_OK && pd->q2)
    rc = ga_gstate_sq_add(st, pd->q2, 2 * pd->pos + 128);
  pd->s = 0;
  pd->pos = 0;
  pd->q0 = pd->q1 = pd->q2 = 0;
  return rc == GA_OK ? 0 : GA_SCAN_NOMEM;
}

/* Rule 20: few_step's squares of value v's lanes nn (fr: those pending
** as y at pd's scale, the others one by one) into st's Σx², *tb growing
** by the window's bytes when it is made.  GA_OK or GA_SCAN_NOMEM. */
static int few_squares(ga_gstate *st, fpend *pd, const wview *v, uint64_t nn,
                       uint64_t fr, const int64_t *y, int64_t *tb) {
  int had = st->sq != NULL;
  for (uint64_t k = fr; k; k &= k - 1) {
    int64_t a = y[__builtin_ctzll(k)];
    uint64_t u = a < 0 ? -(uint64_t)a : (uint64_t)a;
    unsigned __int128 q = (unsigned __int128)u * u; /* < 2^126 */
    uint64_t lo = pd->q0 + (uint64_t)q;
    unsigned __int128 mid =
        (unsigned __int128)pd->q1 + (uint64_t)(q >> 64) + (lo < pd->q0);
    pd->q0 = lo;
    pd->q1 = (uint64_t)mid;
    pd->q2 += (uint64_t)(mid >> 64);
  }
  for (uint64_t k = nn & ~fr; k; k &= k - 1) {
    int j = __builtin_ctzll(k);
    ga_value num;
    memset(&num, 0, sizeof(num));
    num.type = (v->isint >> j) & 1 ? GA_V_INT : GA_V_REAL;
    if (num.type == GA_V_INT)
      num.i = (int64_t)v->v[j];
    else
      num.r = ga_bitsd((int64_t)v->v[j]);
    if (ga_gstate_sq_step(st, &num))
      return GA_SCAN_NOMEM;
  }
  if (!had && st->sq)
    *tb += (int64_t)sizeof(ga_gsq);
  return 0;
}

/* Rule 15: value v's passing lanes of one group (sub, nsub of them)
** stepped into st at once, as step_lane would step them one by one:
** counts by popcount, the INTEGER lanes' sum in an int128 into the halves,
** the REAL lanes that fixed_lanes made integers (fix, at xacc position pos)
** into the pending sum pd, the others one by one.  GA_OK or
** GA_SCAN_NOMEM. */
static int few_step(ga_gstate *st, fpend *pd, const wview *v, uint64_t sub,
                    int nsub, int best, const int64_t *y, uint64_t fix, int pos,
                    int64_t *sq_bytes) {
  uint64_t nn = sub & v->notnull;
  st->rows += nsub;
  if (!nn)
    return 0;
  st->count += nn == sub ? nsub : popc(nn);
  if (best) /* 1: and the sum; 2 (rule 13): only them */
    few_best(st, v, nn);
  if (best == 2)
    return 0;
  ga_wsum *w = &st->sum;
  uint64_t in = nn & v->isint, fr = nn & fix, sl = nn & ~v->isint & ~fix;
  if (in) { /* ga_wsum_add_int's halves, a word's worth (rule 2 of gstate.h) */
    __int128 s = 0;
    int n = 0;
    for (uint64_t k = in; k; k &= k - 1, n++)
      s += (int64_t)v->v[__builtin_ctzll(k)];
    w->nint += n;
    w->ilo = (int64_t)((uint64_t)w->ilo + ((uint64_t)s & 0xffffffffu));
    w->ihi = (int64_t)((uint64_t)w->ihi + (uint64_t)(int64_t)(s >> 32));
    w->adds += n;
    if (w->adds >= GA_WSUM_MAX_ADDS)
      ga_wsum_normalize(w);
  }
  if (fr) {
    __int128 s = 0;
    int n = 0;
    for (uint64_t k = fr; k; k &= k - 1, n++)
      s += y[__builtin_ctzll(k)];
    w->nreal += n;
    if (pd->pos != pos) {
      int rc = few_fold(st, pd);
      if (rc)
        return rc;
      pd->pos = pos;
    }
    pd->s += s;
  }
  if (sq_bytes) { /* rule 20: a variance's (pd at pos now, where fr) */
    int rc = few_squares(st, pd, v, nn, fr, y, sq_bytes);
    if (rc)
      return rc;
  }
  for (; sl; sl &= sl - 1) {
    if (ga_wsum_add_real(w, ga_bitsd((int64_t)v->v[__builtin_ctzll(sl)])))
      return GA_SCAN_NOMEM;
    if (++w->adds >= GA_WSUM_MAX_ADDS)
      ga_wsum_normalize(w);
  }
  return 0;
}

/* Rule 16: a group's value's REAL lanes of rule 11's array, pending as
** integers of the value's scale (fpos) and their count; 32 bytes, so that
** a row touches one line, not its state's three. */
typedef struct fflat {
  fp_i128 s;
  int64_t n, pad;
} fflat;

/* Rule 16: f's rows into st (each a REAL that step_lane's sum would have
** counted and added), its sum folded at pos (gstate.h rule 6). */
static int flat_fold(ga_gstate *st, fflat *f, int pos) {
  st->rows += f->n;
  st->count += f->n;
  st->sum.nreal += f->n;
  int rc = f->s ? ga_wsum_add_fixed(&st->sum, f->s, pos) : GA_OK;
  f->s = 0;
  f->n = 0;
  return rc == GA_OK ? 0 : GA_SCAN_NOMEM;
}

/* Rule 16: value i's pending sums into the states fst (ids x nv), each
** id that has one marked seen (flat_pending does not mark them). */
static int flat_flush(fflat *ffl, ga_gstate *fst, uint64_t *fseen, int64_t ids,
                      int nv, int i, int pos) {
  int rc = 0;
  for (int64_t id = 0; id < ids && !rc; id++)
    if (ffl[id * nv + i].n) {
      fseen[id / 64] |= 1ull << (id % 64);
      rc = flat_fold(&fst[id * nv + i], &ffl[id * nv + i], pos);
    }
  return rc;
}

/* Rule 16: a word whose every passing lane of every value goes to the
** pending sums (lane[k] of id lid[k], the values' integers fyv). */
static void flat_pending(fflat *ffl, int nv, const int64_t *lid,
                         const int *lane, int nl, const int64_t *fyv) {
  if (nv == 1) {
    for (int k = 0; k < nl; k++) {
      fflat *f = ffl + lid[k];
      f->s += fyv[lane[k]];
      f->n++;
    }
    return;
  }
  for (int k = 0; k < nl; k++)
    for (int i = 0; i < nv; i++) {
      fflat *f = ffl + lid[k] * nv + i;
      f->s += fyv[64 * i + lane[k]];
      f->n++;
    }
}

/* Rule 16: fixed_lanes for rule 11's array, whose pending sums keep one
** scale a value: it only grows (the pending sums folded first, at most
** GA_CH_FLAT_SCALES times a run), and a lane with bits below it is
** stepped as a double.  *rc: GA_SCAN_NOMEM from a fold. */
#define GA_CH_FLAT_SCALES 4
static uint64_t flat_lanes(const uint64_t *v, uint64_t reals, int nl,
                           int64_t *y, int *pos, int *grown, fflat *ffl,
                           ga_gstate *fst, uint64_t *fseen, int64_t ids, int nv,
                           int i, int *rc) {
  uint64_t ok = *pos ? fixed_try(v, nl, *pos, y) & reals : 0;
  if (ok == reals || *grown >= GA_CH_FLAT_SCALES)
    return ok;
  uint64_t emax = 0;
  for (uint64_t k = reals & ~ok; k; k &= k - 1) {
    uint64_t e = (v[__builtin_ctzll(k)] >> 52) & 0x7ff;
    emax = e > emax ? e : emax;
  }
  if (emax < 62 || emax > 1085 || (int)emax - 11 <= *pos)
    return ok; /* no double scale, or none coarser */
  if (*pos && (*rc = flat_flush(ffl, fst, fseen, ids, nv, i, *pos)))
    return 0;
  *pos = (int)emax - 11;
  ++*grown;
  return fixed_try(v, nl, *pos, y) & reals;
}

/* Rule 17: a run's bytes of rule 11's array, its seen ids, rule 16's
** pending sums and their scaled lanes (general's allocations). */
static int64_t flat_bytes(int64_t ids, int nv) {
  return (int64_t)(sizeof(ga_gstate) + sizeof(fflat)) * ids * nv +
         8 * GA_BW(ids) + 32 + 8 * 64 * (int64_t)(nv + 1);
}

/* Rule 17: give back n bytes that hold() charged to run r. */
static void unhold(hrun *r, int64_t n) {
  r->held -= n;
  release(r->p, n);
}

/* Rule 22: one id's sum of one value, compact: the REALs' total as an
** integer, their count, and (in the id's first value) the id's rows. */
typedef struct csum {
  int64_t rs;
  uint32_t nreal, rows;
} csum;

#define GA_CH_CSUM_VALS 4

/* Rule 22: whether q's values take the compact sums (sum only: no max or
** min, no DISTINCT or squares, which rule 9 excludes anyway). */
static int csum_fits(const ga_cquery *q) {
  const char *env = getenv("GPUAGG_CACHE_CSUM");
  if ((env && !strcmp(env, "0")) || q->nvals < 1 || q->nvals > GA_CH_CSUM_VALS)
    return 0;
  unsigned char mode[GA_MAX_STATES];
  step_modes(q, mode);
  for (int i = 0; i < q->nvals; i++)
    if (mode[i])
      return 0;
  return 1;
}

/* Rule 22: lane j's values into the id's compact sums f (nv values), when
** every one is NULL or a REAL of integral value below 2^53 in magnitude
** whose add leaves the total in int64: 1.  Else 0 and f unchanged (the
** row becomes a record). */
static inline int csum_lane(csum *f, const wview *vv, int nv, int j) {
  int64_t y[GA_CH_CSUM_VALS];
  uint64_t nn = 0;
  for (int i = 0; i < nv; i++) {
    if (!((vv[i].notnull >> j) & 1))
      continue;
    if ((vv[i].isint >> j) & 1)
      return 0;
    double x = ga_bitsd((int64_t)vv[i].v[j]);
    if (!(fabs(x) < 9007199254740992.0)) /* NaN, infinities, 2^53 up */
      return 0;
    int64_t t = (int64_t)x;
    if ((double)t != x || __builtin_add_overflow(f[i].rs, t, &y[i]))
      return 0;
    nn |= 1ull << i;
  }
  for (int i = 0; i < nv; i++)
    if ((nn >> i) & 1) {
      f[i].rs = y[i];
      f[i].nreal++;
    }
  f[0].rows++;
  return 1;
}

/* Rule 22: the compact sums of every run for id, folded into the states
** to (ns of them): rows, counts, and the REALs' exact total at the units'
** digit (gstate.h rule 6); nothing where no run had rows of id
** (csum_first finds the first that had).  GA_OK or GA_SCAN_NOMEM. */
static int csum_fold(const hrun *all, int nruns, int64_t id, int ns,
                     ga_gstate *to) {
  uint64_t rows = 0;
  for (int k = 0; k < nruns; k++)
    if (all[k].cs)
      rows += all[k].cs[id * ns].rows;
  if (!rows)
    return GA_OK;
  for (int i = 0; i < ns; i++) {
    __int128 tot = 0;
    uint64_t nreal = 0;
    for (int k = 0; k < nruns; k++) {
      if (!all[k].cs)
        continue;
      const csum *f = &all[k].cs[id * ns + i];
      tot += f->rs;
      nreal += f->nreal;
    }
    to[i].rows += (int64_t)rows;
    to[i].count += (int64_t)nreal;
    to[i].sum.nreal += (int64_t)nreal;
    if (tot && ga_wsum_add_fixed(&to[i].sum, tot, 1074))
      return GA_SCAN_NOMEM;
  }
  return GA_OK;
}

/* Rule 22: the first run holding rows of id in its compact sums, or nruns. */
static int csum_first(const hrun *all, int nruns, int64_t id, int ns) {
  for (int k = 0; k < nruns; k++)
    if (all[k].cs && all[k].cs[id * ns].rows)
      return k;
  return nruns;
}

/* Rule 22: word's passing rows m into the compact sums, ids first and
** their slots fetched ahead (rule 11's way: several misses in flight), then
** each row in row order, a record where csum_lane declines it.  The rows
** left to the caller's loop: none, or all of m where an id is out of range
** (it says so). */
static uint64_t csum_word(hrun *r, const wview *wv, int nkc, uint64_t m) {
  const hplan *p = r->p;
  int nv = r->q->nvals, lane[64], nl = 0;
  int64_t lid[64];
  for (uint64_t k = m; k; k &= k - 1) {
    int j = __builtin_ctzll(k);
    int64_t id = lane_id(p, wv, r->q->nkeys, j);
    if (id < 0)
      return m;
    __builtin_prefetch(r->cs + id * nv, 1);
    lane[nl] = j;
    lid[nl++] = id;
  }
  for (int k = 0; k < nl && !r->rc; k++)
    if (!csum_lane(r->cs + lid[k] * nv, wv + nkc, nv, lane[k]))
      r->rc = push_row(r, lid[k], wv + nkc, nv, lane[k]);
  return 0;
}

static void general(hrun *r) {
  const ga_centry *e = r->e;
  const ga_cquery *q = r->q;
  const hplan *p = r->p;
  int nkc = q->nkeys + q->ncarry, np = nkc + q->nvals, nv = q->nvals;
  unsigned char mode[GA_MAX_STATES]; /* step_lane's best */
  step_modes(q, mode);
  ga_gshape shape;
  memset(&shape, 0, sizeof(shape));
  shape.nk = q->nkeys ? q->nkeys : 1; /* ungrouped: one NULL key */
  shape.nc = q->ncarry;
  shape.ns = q->nvals; /* collations: BINARY (codes and numbers) */
  memcpy(shape.dist, q->dist, sizeof(shape.dist)); /* rule 14 */
  memcpy(shape.sq, q->sq, sizeof(shape.sq));       /* rule 20 */
  /* rule 17: t's bytes charged (tch), rule 9's records charged (rch) */
  int64_t dbytes = 0, tch = 0, rch = 0;
  const int64_t rbytes = 8 * (int64_t)r->rows.stride; /* a record's */
  ga_group_table t;
  ga_gt_init(&t, &shape);
  /* the programs' words, the filter's, then the deepest program's stack */
  int depth = q->has_fprog ? q->fprog.depth : 1;
  for (int k = 0; k < np; k++)
    if (q->prog[k].depth > depth)
      depth = q->prog[k].depth;
  ga_cx_word *wd =
      sqlite3_malloc64(sizeof(ga_cx_word) * (size_t)(np + 1 + depth));
  wview *wv = sqlite3_malloc64(sizeof(wview) * (size_t)(np ? np : 1));
  int *bare = sqlite3_malloc64(sizeof(int) * (size_t)(np ? np : 1));
  int direct = p->ids && !p->sorted && !p->flat;
  int64_t dbytes_ix = (int64_t)sizeof(ga_group *) * p->ids;
  if (direct && hold(r, dbytes_ix)) { /* rule 17: hashed instead */
    unhold(r, dbytes_ix);
    direct = 0;
    r->hashed = 1;
  }
  ga_group **dense =
      direct ? sqlite3_malloc64(sizeof(ga_group *) * (size_t)p->ids) : NULL;
  /* rule 11: every id's states (all zero: empty), and the ids seen */
  size_t fbytes = p->flat ? sizeof(ga_gstate) * (size_t)(p->ids * q->nvals) : 0;
  ga_gstate *fst = p->flat ? sqlite3_malloc64(fbytes) : NULL;
  uint64_t *fseen =
      p->flat ? sqlite3_malloc64(8 * (size_t)GA_BW(p->ids)) : NULL;
  /* rule 15: few ids, no DISTINCT; each id's values' pending sums */
  int few = direct && p->ids <= GA_CH_FEW_IDS && !q->ndist;
  int64_t fpbytes = (int64_t)sizeof(fpend) * (p->ids * nv + 1);
  if (few && hold(r, fpbytes)) { /* rule 17: the row loop instead */
    unhold(r, fpbytes);
    few = 0;
    r->nofew = 1;
  }
  fpend *fpd =
      few ? sqlite3_malloc64(sizeof(fpend) * (size_t)(p->ids * nv + 1)) : NULL;
  /* rule 16: rule 11's pending sums (32-byte aligned), values' integers */
  size_t flbytes = p->flat ? sizeof(fflat) * (size_t)(p->ids * nv) : 0;
  char *flmem = p->flat ? sqlite3_malloc64(flbytes + 32) : NULL;
  fflat *ffl = flmem ? (fflat *)(flmem + (32 - (uintptr_t)flmem % 32)) : NULL;
  int64_t *fyv = p->flat
                     ? sqlite3_malloc64(sizeof(int64_t) * 64 * (size_t)(nv + 1))
                     : NULL;
  int fgrown[GA_MAX_STATES]; /* rule 16: scales grown */
  memset(fgrown, 0, sizeof(fgrown));
  if (ffl)
    memset(ffl, 0, flbytes);
  if (!wd || !wv || !bare || (direct && !dense) || (few && !fpd) ||
      (p->flat && (!fst || !fseen || !ffl || !fyv))) {
    r->rc = GA_SCAN_NOMEM;
    goto done;
  }
  if (dense)
    memset(dense, 0, sizeof(ga_group *) * (size_t)p->ids);
  if (p->csum) { /* rule 22, charged (rule 17): past the cap, records only */
    int64_t cb = (int64_t)sizeof(csum) * p->ids * nv;
    if (hold(r, cb)) {
      unhold(r, cb);
    } else if ((r->cs = ga_big_alloc((size_t)cb)) != NULL) {
      r->cs_bytes = cb;
      memset(r->cs, 0, (size_t)cb);
    } else {
      unhold(r, cb);
    }
  }
  /* rule 15: each word's lanes of an id (idm), a value's REAL lanes as
  ** integers of one scale (fy) */
  uint64_t idm[GA_CH_FEW_IDS];
  int64_t fy[64];
  int fpos[GA_MAX_STATES]; /* each value's last scale (0: none yet) */
  int nid[GA_CH_FEW_IDS];  /* popc(idm[id]) */
  int few_skip = 0;        /* words left to step row by row */
  if (fpd)
    memset(fpd, 0, sizeof(fpend) * (size_t)(p->ids * nv));
  memset(idm, 0, sizeof(idm));
  memset(fpos, 0, sizeof(fpos));
  if (p->flat) {
    memset(fst, 0, fbytes);
    memset(fseen, 0, 8 * (size_t)GA_BW(p->ids));
  }
  for (int k = 0; k < np; k++)
    bare[k] = ga_cx_bare(&q->prog[k]);
  ga_cx_word *stack = wd + np + 1;
  ga_value key[GA_MAX_KEYS];
  int skip = q->nkeys ? 0 : 1; /* the NULL key's slot */
  int64_t seen = 0;            /* passing rows so far (rule 7) */
  /* rule 7 probes a hashed key, or a direct index too large for the
  ** caches (rule 10) */
  int probed = !q->nkeys || p->sorted || (p->ids && p->ids <= GA_CH_NEAR_IDS);
  memset(key, 0, sizeof(key));
  key[0].type = GA_V_NULL;
  for (int64_t s = r->s0; s < r->s1 && !r->rc; s++) {
    const ga_cblock *b = e->segs[s];
    for (int64_t w = 0; w < GA_BW(b->n) && !r->rc; w++) {
      uint64_t m = pass_word(q, b, w, stack, &wd[np], &r->rc);
      if (!m)
        continue;
      wsrc src = {b, w};
      uint64_t err = 0;
      for (int k = 0; k < np; k++) {
        if (bare[k] >= 0) {
          bare_view(b, bare[k], w, &wv[k]);
          continue;
        }
        ga_cexpr_eval_word(&q->prog[k], load_word, &src, stack, &wd[k]);
        err |= wd[k].err;
        wv[k].v = wd[k].v;
        wv[k].isint = wd[k].isint;
        wv[k].notnull = wd[k].notnull;
      }
      if (err & m) { /* rule 5 */
        r->rc = GA_CACHE_DECLINED;
        break;
      }
      uint64_t pass0 = m;
      if (p->flat) { /* rule 11: the word's ids, their states fetched ahead */
        int lane[64], nl = 0;
        int64_t lid[64];
        /* rule 16: each value's lanes that go to its pending sums */
        uint64_t fixm[GA_MAX_STATES], all = m;
        int wl = b->n - w * 64 < 64 ? (int)(b->n - w * 64) : 64;
        for (int i = 0; i < nv && !r->rc; i++) {
          const wview *v = &wv[nkc + i];
          uint64_t reals = m & v->notnull & ~v->isint;
          fixm[i] = mode[i] || !reals
                        ? 0
                        : flat_lanes(v->v, reals, wl, fyv + 64 * i, &fpos[i],
                                     &fgrown[i], ffl, fst, fseen, p->ids, nv, i,
                                     &r->rc);
          all &= fixm[i];
        }
        for (uint64_t k = m; k && !r->rc; k &= k - 1) {
          int j = __builtin_ctzll(k);
          int64_t id = lane_id(p, wv, q->nkeys, j);
          if (id < 0) {
            r->rc = GA_SCAN_FALLBACK;
            break;
          }
          if (all == m) { /* rule 16: only the pending sums */
            __builtin_prefetch(ffl + id * nv, 1);
          } else {
            const char *at = (const char *)(fst + id * q->nvals);
            __builtin_prefetch(at, 1);
            __builtin_prefetch(at + 64, 1);
            __builtin_prefetch(at + 128, 1);
          }
          lane[nl] = j;
          lid[nl++] = id;
        }
        if (all == m && !r->rc) {
          flat_pending(ffl, nv, lid, lane, nl, fyv);
          nl = 0;
        }
        for (int k = 0; k < nl && !r->rc; k++) { /* in row order */
          int j = lane[k];
          ga_gstate *st = fst + lid[k] * q->nvals;
          fflat *f = ffl + lid[k] * nv;
          fseen[lid[k] / 64] |= 1ull << (lid[k] % 64);
          int rc = 0; /* a local: r->rc would be stored every value */
          for (int i = 0; i < nv && !rc; i++) {
            const wview *v = &wv[nkc + i];
            if ((fixm[i] >> j) & 1) { /* rule 16 */
              f[i].s += fyv[64 * i + j];
              f[i].n++;
              continue;
            }
            rc = step_lane(&st[i], lane_cls(v, j), v->v[j], mode[i]);
          }
          if (rc)
            r->rc = rc;
        }
        m = 0;
      }
      if (few && m && few_skip > 0) {
        few_skip--; /* rule 15: words of many groups lately: row by row */
      } else if (few && m) { /* rule 15: a word's rows a group at a time */
        uint64_t pres = 0;
        for (uint64_t k = m; k; k &= k - 1) { /* groups made in row order */
          int j = __builtin_ctzll(k);
          int64_t id = lane_id(p, wv, q->nkeys, j);
          if (id < 0) {
            r->rc = GA_SCAN_FALLBACK;
            break;
          }
          if (!dense[id]) {
            for (int c = 0; c < nkc; c++)
              ga_cx_lane_of(wv[c].v, wv[c].isint, wv[c].notnull, j,
                            &key[c + skip]);
            ga_group *g = ga_gt_get(&t, key, ga_keys_hash(key, &shape), r->no);
            if (!g) {
              r->rc = GA_SCAN_NOMEM;
              break;
            }
            dense[id] = g;
          }
          idm[id] |= 1ull << j;
          pres |= 1ull << id;
        }
        if (popc(pres) > GA_CH_FEW_WORD) { /* the row loop below, for a while */
          for (uint64_t k = pres; k; k &= k - 1)
            idm[__builtin_ctzll(k)] = 0;
          few_skip = GA_CH_FEW_SKIP;
          goto rows;
        }
        for (uint64_t k = pres; k; k &= k - 1)
          nid[__builtin_ctzll(k)] = popc(idm[__builtin_ctzll(k)]);
        int nl = b->n - w * 64 < 64 ? (int)(b->n - w * 64) : 64;
        for (int i = 0; i < nv && !r->rc; i++) {
          const wview *v = &wv[nkc + i];
          uint64_t fix = 0, reals = m & v->notnull & ~v->isint;
          if (mode[i] != 2 && reals)
            fix = fixed_lanes(v->v, reals, nl, fy, &fpos[i]);
          for (uint64_t k = pres; k && !r->rc; k &= k - 1) {
            int id = __builtin_ctzll(k);
            r->rc = few_step(&dense[id]->st[i], &fpd[id * nv + i], v, idm[id],
                             nid[id], mode[i], fy, fix, fpos[i],
                             q->sq[i] ? &t.bytes : NULL);
          }
        }
        for (uint64_t k = pres; k; k &= k - 1)
          idm[__builtin_ctzll(k)] = 0;
        m = 0;
      }
      if (m && r->cs) /* rule 22: the word's slots fetched ahead */
        m = csum_word(r, wv, nkc, m);
    rows:
      while (m && !r->rc) { /* the passing rows, in row order */
        int j = __builtin_ctzll(m);
        m &= m - 1;
        ga_group *g = NULL;
        int64_t id = 0;
        if (p->ids) {
          id = lane_id(p, wv, q->nkeys, j);
          if (id < 0) {
            r->rc = GA_SCAN_FALLBACK;
            break;
          }
          if (p->sorted) { /* rule 9: the record, stepped later */
            if (!r->cs || !csum_lane(r->cs + id * nv, wv + nkc, nv, j))
              r->rc = push_row(r, id, wv + nkc, q->nvals, j); /* rule 22 */
            continue;
          }
          g = dense ? dense[id] : NULL; /* rule 17: hashed */
        }
        if (!g) {
          for (int k = 0; k < nkc; k++)
            ga_cx_lane_of(wv[k].v, wv[k].isint, wv[k].notnull, j,
                          &key[k + skip]);
          g = ga_gt_get(&t, key, ga_keys_hash(key, &shape), r->no);
          if (!g) {
            r->rc = GA_SCAN_NOMEM;
            break;
          }
          if ((int64_t)t.n > GA_CACHE_MAX_GROUPS) {
            r->rc = GA_SCAN_FALLBACK;
            break;
          }
          if (dense)
            dense[id] = g;
        }
        int rc = 0; /* a local: r->rc would be stored every value */
        for (int i = 0; i < nv && !rc; i++) {
          const wview *v = &wv[nkc + i];
          int64_t row =
              p->db.on[i] ? ga_cdbits_row(&p->db, r->no, id, &g->st[p->db.home])
                          : -1;
          if (row >= 0) { /* rule 14: a bit (cache_dbits.c rule 2) */
            g->st[i].rows++;
            if (((v->notnull >> j) & 1) &&
                ga_cdbits_set(&p->db, r->no, i, row, v->v[j]))
              rc = GA_CACHE_DBITS;
            continue;
          }
          if (q->dist[i] == GA_DIST_PCT) { /* rule 21 */
            rc = ga_cpct_step(&g->st[i], lane_cls(v, j), v->v[j], &dbytes);
            continue;
          }
          if (q->dist[i]) { /* rule 14 */
            rc = ga_cdist_step(&g->st[i], q->dist[i], lane_cls(v, j), v->v[j],
                               q->vdict[i], r->no, &dbytes);
            continue;
          }
          rc = step_lane(&g->st[i], lane_cls(v, j), v->v[j], mode[i]);
          if (q->sq[i] && !rc) /* rule 20 */
            rc = sq_lane(&g->st[i], lane_cls(v, j), v->v[j], &t.bytes);
        }
        if (rc)
          r->rc = rc;
      }
      if (t.bytes != tch && !r->rc) { /* rule 17: the groups made */
        r->rc = hold(r, t.bytes - tch);
        tch = t.bytes;
      }
      if (r->rows.n - rch >= GA_CH_CHARGE_ROWS && !r->rc) { /* rule 17 */
        r->rc = hold(r, (r->rows.n - rch) * rbytes);
        rch = r->rows.n;
      }
      if (q->ndist && !r->rc) /* rule 14 */
        r->rc = dist_poll(r, w, &dbytes);
      seen += __builtin_popcountll(pass0);
      if (p->ids && !r->hashed) /* rule 12 */
        r->idrows += __builtin_popcountll(pass0);
      /* rule 7: a group every few rows after the first ones: the parallel
      ** scan's direct mode (batched, prefetched) is the faster path */
      if (seen >= GA_CH_PROBE_ROWS && !probed) {
        probed = 1;
        if ((int64_t)t.n * GA_CH_PROBE_RATIO > seen && !r->rc)
          r->rc = GA_CACHE_MANY;
      }
    }
  }
  for (int64_t id = 0; fpd && id < p->ids; id++) /* rule 15's pending sums */
    for (int i = 0; i < nv && dense[id]; i++)
      if (fpd[id * nv + i].pos && !r->rc)
        r->rc = few_fold(&dense[id]->st[i], &fpd[id * nv + i]);
  for (int i = 0; ffl && i < nv && !r->rc; i++) /* rule 16 */
    if (fpos[i])
      r->rc = flat_flush(ffl, fst, fseen, p->ids, nv, i, fpos[i]);
  int64_t bytes = 0;
  if (p->flat && !r->rc) /* rule 11: the groups of the ids seen, in t */
    flat_groups(r, &t, fst, fseen);
  if (!r->rc && p->sorted) {
    /* rule 17: the records left, and the sort's copy of them (freed) */
    int64_t copy = r->rows.n * rbytes;
    r->rc = hold(r, (r->rows.n - rch) * rbytes + copy);
    rch = r->rows.n;
    if (!r->rc && ga_idrows_sort(&r->rows, p->ids))
      r->rc = GA_SCAN_NOMEM;
    unhold(r, copy);
  } else if (!r->rc) {
    int rc = ga_cdbits_run_end(&p->db, r->no, &t); /* rule 14 */
    if (rc == GA_OK && t.bytes != tch) { /* rule 17: rules 11, 14's groups */
      rc = hold(r, t.bytes - tch) ? GA_CACHE_GROUP_CAP : GA_OK;
      tch = t.bytes;
    }
    if (rc == GA_OK)
      rc = ga_gs_take(r->gs, &t, r->no, &bytes);
    /* rule 17: t's groups moved into the shared ones, which grew by bytes */
    unhold(r, tch);
    tch = 0;
    if (rc == GA_OK && charge(p, bytes))
      rc = GA_CACHE_GROUP_CAP;
    r->rc = rc == GA_OK                ? 0
            : rc == GA_CACHE_GROUP_CAP ? rc
            : rc == GA_NOMEM           ? GA_SCAN_NOMEM
                                       : GA_SCAN_FALLBACK;
  }
done:
  unhold(r, tch); /* rule 17: t is empty (taken), or freed here */
  ga_gt_free(&t);
  sqlite3_free(wd);
  sqlite3_free(wv);
  sqlite3_free(bare);
  sqlite3_free(dense);
  sqlite3_free(fpd);
  sqlite3_free(flmem);
  sqlite3_free(fyv);
  for (int64_t w = 0; fst && fseen && w < GA_BW(p->ids); w++)
    for (uint64_t k = fseen[w]; k; k &= k - 1) /* not moved into a group */
      for (int i = 0; i < q->nvals; i++)
        ga_gstate_clear(&fst[(w * 64 + __builtin_ctzll(k)) * q->nvals + i]);
  sqlite3_free(fst);
  sqlite3_free(fseen);
}

/* Rule 9, the second phase: the groups of ids [r->lo, r->hi), each built
** from every run's records of its id, runs in row order, in a table of
** this thread's (its groups from the shared arena: large blocks), which
** then moves into the shared groups.  The ids of two threads never meet,
** so no group is merged there; TEXT keys take their value here, on all
** threads (ga_cache_decode_keys leaves them). */
/* Rule 18: heap bytes of a group's states (ga_gstate_heap_bytes), without
** the call for states that hold none, as most do. */
static inline int64_t states_heap(const ga_gstate *st, int ns) {
  int64_t n = 0;
  for (int i = 0; i < ns; i++)
    if (st[i].sum.wide || st[i].max.p || st[i].min.p || st[i].set)
      n += ga_gstate_heap_bytes(&st[i]);
  return n;
}

/* Rule 18: whether g's n keys live in the group itself (no TEXT or BLOB
** out of line): then, with states_heap 0, freeing it frees nothing. */
static inline int keys_inline(const ga_group *g, int n) {
  for (int k = 0; k < n; k++)
    if (g->key[k].p)
      return 0;
  return 1;
}

/* Rule 19: <0 when order value a comes before b in the post query's ORDER
** BY (SQLite's order of NULL and numbers: ga_value_cmp), 0 when tied. */
static inline int tk_cmp(const ga_value *a, const ga_value *b, int desc) {
  int c = ga_value_cmp(a, b);
  return desc ? -c : c;
}

/* Rule 19: the heap of the k first order values so far, the last of them
** at h[0]; v replaces h[0] and sinks. */
static void tk_sink(ga_value *h, int64_t n, const ga_value *v, int desc) {
  int64_t i = 0;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && tk_cmp(&h[c + 1], &h[c], desc) > 0)
      c++;
    if (tk_cmp(&h[c], v, desc) <= 0)
      break;
    h[i] = h[c];
    i = c;
  }
  h[i] = *v;
}

static void tk_push(ga_value *h, int64_t n, const ga_value *v, int desc) {
  int64_t i = n;
  while (i > 0 && tk_cmp(&h[(i - 1) / 2], v, desc) < 0) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = *v;
}

/* Rule 19: whether group states st may be among the first k: an order
** value before the k-th's or tied with it, or a sum() that overflows (the
** post query raises it for any group); h and *nh follow. */
static int tk_keep(const ga_cquery *q, const ga_gstate *st, ga_value *h,
                   int64_t *nh, ga_value *v) {
  for (int i = 0; i < q->nvals; i++)
    if (q->val_sum[i] && ga_gstate_overflows(&st[i]))
      return 2;
  if (q->topk_count) { /* count(*): the rows; count(): the value's count */
    memset(v, 0, sizeof(*v));
    v->type = GA_V_INT;
    v->i = q->topk_count == 1 ? st[q->topk_val].rows
                              : ga_gstate_count(&st[q->topk_val]);
  } else if (ga_gstate_result(&st[q->topk_val],
                              q->topk_total ? GA_AGG_TOTAL : GA_AGG_SUM,
                              v) != GA_OK) {
    return 2; /* no order value: kept, the post query decides */
  }
  if (*nh < q->topk_k) {
    tk_push(h, (*nh)++, v, q->topk_desc);
    return 1;
  }
  int c = tk_cmp(v, &h[0], q->topk_desc);
  if (c < 0)
    tk_sink(h, *nh, v, q->topk_desc);
  return c <= 0;
}

/* Rule 18: whether ga_cache_decode_keys will write TEXT into the groups (a
** key or a max/min read through a dictionary's codes). */
static int decodes_text(const ga_cquery *q) {
  for (int k = 0; k < q->nkeys + q->ncarry; k++)
    if (q->kdict[k])
      return 1;
  for (int i = 0; i < q->nvals; i++)
    if (q->vdict[i])
      return 1;
  return 0;
}
/* Rule 9's second phase: the groups of ids [r->lo, r->hi), one at a time
** from every run's sorted records.  Rule 18: into groups of no table,
** adopted by the shared groups, where the caller lists them itself (any
** order); else through a table of the thread's own, moved into the shared
** groups at the end. */
static void sorted_groups(hrun *r) {
  const ga_cquery *q = r->q;
  const hplan *p = r->p;
  int nruns = r->nruns, ns = q->nvals, direct = q->any_order;
  int tk = direct && p->topk; /* rule 19 */
  int64_t cur[GA_CH_MAX_RUNS], end[GA_CH_MAX_RUNS], bytes = 0, tch = 0;
  ga_gstate st[GA_IDR_MAX_VALS];
  unsigned char mode[GA_MAX_STATES]; /* step_lane's best */
  step_modes(q, mode);
  ga_gshape shape;
  memset(&shape, 0, sizeof(shape));
  shape.nk = q->nkeys;
  shape.ns = ns;
  ga_group_table t;
  ga_gt_init(&t, &shape);
  t.rot = 32; /* emptied into the shared tables (scan_group.c) */
  t.arena = ga_gs_arena(r->gs);
  /* rule 18: a group's bytes as the shared tables count them (slot too) */
  int64_t one = GA_GROUP_FIXED_BYTES(&shape) + 32;
  ga_group *head = NULL, *tail = NULL;
  /* rule 18: no group holds anything beyond its bytes, now or after
  ** ga_cache_decode_keys writes the TEXT of a coded key or max/min (out of
  ** line past 15 bytes: those groups must be walked when freed) */
  int plain = !tk && !decodes_text(q);
  /* rule 19: the heap of the first k order values, and each kept group's
  ** order value (kv) and whether it is kept whatever (km) */
  ga_value *hp = NULL, *kv = NULL;
  unsigned char *km = NULL;
  int64_t nh = 0, next = 2 * q->topk_k + 1024, entry = 8;
  if (tk) {
    entry += (int64_t)(sizeof(ga_value) + 1);
    if ((r->rc = hold(r, (int64_t)sizeof(ga_value) * q->topk_k)))
      return;
    if (!(hp = sqlite3_malloc64(sizeof(ga_value) * (size_t)q->topk_k))) {
      r->rc = GA_SCAN_NOMEM;
      return;
    }
  }
  for (int k = 0; k < nruns; k++) {
    cur[k] = ga_idrows_lower(&r->all[k].rows, r->lo);
    end[k] = ga_idrows_lower(&r->all[k].rows, r->hi);
  }
  memset(st, 0, sizeof(ga_gstate) * (size_t)ns); /* ga_gstate_init */
  int csm = 0; /* rule 22: some run kept compact sums */
  for (int k = 0; k < nruns; k++)
    csm |= r->all[k].cs != NULL;
  int64_t cid = r->lo; /* rule 22: ids below it have no compact rows left */
  while (!r->rc) {
    int64_t id = r->hi;
    int first = -1;
    for (int k = 0; k < nruns; k++)
      if (cur[k] < end[k] && ga_idrows_id(&r->all[k].rows, cur[k]) < id) {
        id = ga_idrows_id(&r->all[k].rows, cur[k]);
        first = k; /* the first run holding id: its rows come first */
      }
    if (csm) { /* rule 22: the next id of the compact sums, if before */
      int fc = nruns;
      while (cid < r->hi && cid <= id &&
             (fc = csum_first(r->all, nruns, cid, ns)) == nruns)
        cid++;
      if (cid < id && fc < nruns) {
        id = cid;
        first = fc;
      } else if (cid == id && fc < first) {
        first = fc;
      }
      if (cid == id)
        cid++;
    }
    if (id >= r->hi)
      break;
    if (r->made == r->cap) {
      int64_t cap = r->cap ? 2 * r->cap : 1024;
      /* rule 17: the groups so far, and the list's growth */
      if ((r->rc = hold(r, t.bytes - tch + entry * (cap - r->cap)))) {
        tch = t.bytes;
        break;
      }
      tch = t.bytes;
      ga_group **list = sqlite3_realloc64(r->list, sizeof(*list) * (size_t)cap);
      if (list)
        r->list = list;
      if (list && tk) {
        ga_value *v = sqlite3_realloc64(kv, sizeof(*kv) * (size_t)cap);
        if (v)
          kv = v;
        unsigned char *m = v ? sqlite3_realloc64(km, (size_t)cap) : NULL;
        if (m)
          km = m;
        else
          list = NULL;
      }
      if (!list) {
        r->rc = GA_SCAN_NOMEM;
        break;
      }
      r->cap = cap;
    }
    /* the keys, from the id (all its rows have the same) */
    ga_value key[GA_MAX_KEYS];
    id_keys(q, p, id, key, 1);
    ga_gstate *to = st;
    ga_group *g = NULL;
    if (direct && !tk) { /* rule 18: stepped in place, listed, adopted */
      if (!(g = ga_gt_make(&t, key, 0, first))) {
        r->rc = GA_SCAN_NOMEM;
        break;
      }
      if (tail)
        tail->next_spare = g;
      else
        head = g;
      tail = g;
      r->list[r->made++] = g;
      to = g->st;
    }
    if (csm) /* rule 22 */
      r->rc = csum_fold(r->all, nruns, id, ns, to);
    for (int k = first; k < nruns; k++) {
      const ga_idrows *rows = &r->all[k].rows;
      for (; cur[k] < end[k] && ga_idrows_id(rows, cur[k]) == id; cur[k]++) {
        const uint64_t *rec = rows->rec + cur[k] * rows->stride;
        for (int i = 0; i < ns && !r->rc; i++)
          r->rc = step_lane(&to[i], (int)(rec[0] >> (32 + 2 * i)) & 3,
                            rec[1 + i], mode[i]);
      }
    }
    if (direct && !tk) {
      int64_t heap = states_heap(to, ns);
      t.bytes += one + heap;
      plain = plain && !heap && g->in_arena && keys_inline(g, q->nkeys);
      continue;
    }
    if (r->rc)
      break;
    ga_value v;
    int keep = tk ? tk_keep(q, st, hp, &nh, &v) : 1;
    if (!keep) { /* rule 19: not among the first k */
      for (int i = 0; i < ns; i++)
        ga_gstate_clear(&st[i]);
      continue;
    }
    g = tk ? ga_gt_make(&t, key, 0, first)
           : ga_gt_get(&t, key, ga_keys_hash(key, &shape), first);
    if (!g) {
      r->rc = GA_SCAN_NOMEM;
      break;
    }
    /* new: its states are empty, and take the built ones */
    memcpy(g->st, st, sizeof(ga_gstate) * (size_t)ns);
    t.bytes += (tk ? one : 0) + states_heap(st, ns);
    memset(st, 0, sizeof(ga_gstate) * (size_t)ns);
    if (tk) {
      kv[r->made] = v;
      km[r->made] = keep == 2;
    }
    r->list[r->made++] = g;
    if (tk && r->made >= next && nh == q->topk_k) {
      /* rule 19: the groups now behind the k-th give their room back */
      int64_t j = 0;
      for (int64_t i = 0; i < r->made; i++) {
        ga_group *o = r->list[i];
        if (km[i] || tk_cmp(&kv[i], &hp[0], q->topk_desc) <= 0) {
          r->list[j] = o;
          kv[j] = kv[i];
          km[j++] = km[i];
        } else {
          t.bytes -= one + states_heap(o->st, ns);
          ga_group_free(o, &shape); /* an arena's: emptied, made again */
          if (o->in_arena) {
            o->next_spare = t.spare;
            t.spare = o;
          }
        }
      }
      r->made = j;
      next = 2 * j > next ? 2 * j : next;
    }
  }
  for (int i = 0; i < ns; i++)
    ga_gstate_clear(&st[i]);
  if (tk) { /* rule 19: the kept groups, linked for ga_gs_adopt */
    for (int64_t i = 0; i + 1 < r->made; i++)
      r->list[i]->next_spare = r->list[i + 1];
    if (r->made) {
      head = r->list[0];
      tail = r->list[r->made - 1];
      tail->next_spare = NULL;
    }
  }
  sqlite3_free(hp);
  sqlite3_free(kv);
  sqlite3_free(km);
  /* rule 18: the groups are the shared groups' to free, whatever happened */
  ga_gs_adopt(r->gs, head, tail, plain);
  if (direct && !r->rc) {
    if (hold(r, t.bytes - tch)) /* rule 17 */
      r->rc = GA_CACHE_GROUP_CAP;
    else
      r->held -= t.bytes; /* charged on: the groups outlive the run */
    tch = 0;
  }
  if (!direct && !r->rc && r->made <= GA_CACHE_MAX_GROUPS) {
    int rc = hold(r, t.bytes - tch) ? GA_CACHE_GROUP_CAP : GA_OK; /* 17 */
    tch = t.bytes;
    if (rc == GA_OK)
      rc = ga_gs_take(r->gs, &t, 0, &bytes);
    unhold(r, tch); /* rule 17: t's groups moved into the shared ones */
    tch = 0;
    if (rc == GA_OK && charge(r->p, bytes))
      rc = GA_CACHE_GROUP_CAP;
    r->rc = rc == GA_OK                ? 0
            : rc == GA_CACHE_GROUP_CAP ? rc
            : rc == GA_NOMEM           ? GA_SCAN_NOMEM
                                       : GA_SCAN_FALLBACK;
  }
  if (!direct)
    unhold(r, tch); /* rule 17: t's groups taken, or freed here */
  ga_gt_free(&t);
}

/* Rule 6's shapes, and a single value that is an expression or is
** filtered by a program. */
static int takes_general(const ga_cquery *q) {
  return !q->simple || q->xcol < 0 || q->has_fprog;
}

static void *run_main(void *arg) {
  hrun *r = arg;
  const ga_centry *e = r->e;
  const ga_cquery *q = r->q;
  int xc = q->xcol, gc = q->gcol;
  int64_t bytes = 0;
  if (r->phase == 2) {
    sorted_groups(r);
    return NULL;
  }
  if (r->p->general) {
    general(r);
    return NULL;
  }
  if (gc < 0 && q->filter.nterms == 0 && xc >= 0 && e->cols[xc].nnull == 0) {
    whole(r);
  } else {
    for (int64_t s = r->s0; s < r->s1 && !r->rc; s++) {
      const ga_cblock *b = e->segs[s];
      for (int64_t w = 0; w < GA_BW(b->n) && !r->rc; w++) {
        uint64_t m = word_mask(&q->filter, b, w);
        while (m) { /* the passing rows, in row order */
          int64_t i = w * 64 + __builtin_ctzll(m);
          m &= m - 1;
          ga_xstate *st = &r->st;
          if (gc >= 0 && !(st = group_at(r, b, gc, i)))
            break;
          step_x(st, b, xc, i);
        }
      }
    }
  }
  if (r->rc)
    return NULL;
  /* hand the run's groups over (piece number = run number, rule 1) */
  if (gc < 0) {
    if (r->st.rows > 0) {
      ga_value none;
      memset(&none, 0, sizeof(none));
      none.type = GA_V_NULL;
      if (ga_gs_add(r->gs, &none, &r->st, r->no, &bytes))
        r->rc = GA_SCAN_NOMEM;
    }
  } else {
    for (int64_t j = 0; j < r->ng && !r->rc; j++)
      if (ga_gs_add(r->gs, &r->g[j].key, &r->g[j].st, r->no, &bytes))
        r->rc = GA_SCAN_NOMEM;
  }
  if (!r->rc && charge(r->p, bytes)) /* rule 17: the shared groups grew */
    r->rc = GA_CACHE_GROUP_CAP;
  return NULL;
}

static void run_free(hrun *r) {
  if (r->p) /* rule 17: its arrays' charge (rule 11's, rule 2's) */
    release(r->p, r->held);
  r->held = 0;
  for (int64_t j = 0; j < r->ng; j++)
    ga_xstate_clear(&r->g[j].st);
  sqlite3_free(r->g);
  sqlite3_free(r->slot);
  sqlite3_free(r->dense);
  ga_xstate_clear(&r->st);
  ga_idrows_free(&r->rows);
  ga_big_free(r->cs, (size_t)r->cs_bytes); /* rule 22 */
  r->cs = NULL;
}

/* run_main on every run: runs[1..] on threads of their own, runs[0] on
** this one (and any run whose thread did not start). */
static void run_all(hrun *runs, int n) {
  for (int t = 1; t < n; t++)
    runs[t].started =
        pthread_create(&runs[t].th, NULL, run_main, &runs[t]) == 0;
  run_main(&runs[0]);
  for (int t = 1; t < n; t++) {
    if (runs[t].started)
      pthread_join(runs[t].th, NULL);
    else
      run_main(&runs[t]); /* no thread: this one does it */
  }
}

int ga_cache_query_host(ga_cache *c, ga_centry *e, const ga_cquery *q,
                        int threads, ga_scan_out *out, char *why, size_t nwhy) {
  double t0 = ga_cache_prof_ms();
  memset(out, 0, sizeof(*out));
  if (threads < 1)
    threads = 1;
  if (threads > e->nsegs)
    threads = e->nsegs > 0 ? (int)e->nsegs : 1;
  if (q->ndist && !ga_cdist_takes(e, q, why, nwhy))
    return GA_CACHE_DECLINED; /* rule 14 */
  out->shape = ga_gshape_one(GA_COLL_BINARY);
  if (!q->simple) { /* rule 6 */
    out->shape.nk = q->nkeys ? q->nkeys : 1;
    out->shape.nc = q->ncarry;
    out->shape.ns = q->nvals;
  }
  memcpy(out->shape.dist, q->dist, sizeof(out->shape.dist)); /* rule 14 */
  memcpy(out->shape.sq, q->sq, sizeof(out->shape.sq));       /* rule 20 */
  out->groups = ga_gs_new(&out->shape);
  hrun *runs = sqlite3_malloc64(sizeof(hrun) * (size_t)threads);
  if (!out->groups || !runs) {
    sqlite3_free(runs);
    ga_scan_out_free(out);
    return GA_SCAN_NOMEM;
  }
  memset(runs, 0, sizeof(hrun) * (size_t)threads);
  hplan plan;
  memset(&plan, 0, sizeof(plan));
  int64_t dset_bytes = 0;
  int stop = 0;
  plan.dset_bytes = &dset_bytes;
  plan.cap = q->dist_cap;
  plan.stop = &stop;
  plan.general = takes_general(q) || q->ndist || q->nsq; /* rules 14, 20 */
  if (plan.general || q->gcol >= 0) {
    plan.ids = dense_ids(e, q, plan.card, plan.base);
    /* rule 10: one bare key over a dense id space takes rules 8 and 9 */
    plan.general = plan.general || plan.ids > 0;
  }
  if (plan.general) {
    /* rule 9: records carry no carried values, and two bits a value; a
    ** key space too small to hold many groups is not probed */
    if (plan.ids && !q->ncarry && !q->ndist && !q->nsq &&
        q->nvals <= GA_IDR_MAX_VALS && threads <= GA_CH_MAX_RUNS &&
        plan.ids > GA_CH_NEAR_IDS) {
      int many = many_groups(e, q, &plan);
      if (many < 0) {
        sqlite3_free(runs);
        ga_scan_out_free(out);
        return GA_SCAN_NOMEM;
      }
      plan.sorted = many;
    }
    /* rule 19: a top k that the post query's ORDER BY ... LIMIT reads */
    plan.csum = plan.sorted && csum_fits(q); /* rule 22 */
    plan.topk = plan.sorted && q->any_order && q->topk_val >= 0 &&
                q->topk_val < q->nvals && q->topk_k >= 1 &&
                q->topk_k <= GA_CH_TOPK_MAX && q->nkeys > 0;
    /* rule 11: a small dense id space's states in one array */
    int64_t fb = plan.ids * q->nvals * (int64_t)sizeof(ga_gstate);
    plan.flat = plan.ids && !plan.sorted && !q->ncarry && !q->ndist &&
                !q->nsq && q->nvals > 0 && fb >= GA_CH_FLAT_MIN_BYTES &&
                fb <= GA_CH_FLAT_BYTES;
    /* rule 17: every run's array charged now; past group_bytes, rule 8's
    ** index (8 bytes an id), charged by each run (general()) */
    int64_t fl = flat_bytes(plan.ids, q->nvals) * threads;
    if (plan.flat && charge(&plan, fl)) {
      release(&plan, fl);
      plan.flat = 0;
      plan.flat_capped = 1;
    }
  }
  if (q->ndist && ga_cdbits_plan(&plan.db, e, q, plan.ids, threads,
                                 &dset_bytes) < 0) { /* rule 14 */
    sqlite3_free(runs);
    ga_scan_out_free(out);
    return GA_SCAN_NOMEM;
  }
  prof("plan", &t0);
  /* contiguous runs of about rows / threads rows */
  int64_t s = 0;
  for (int t = 0; t < threads; t++) {
    hrun *r = &runs[t];
    r->e = e;
    r->q = q;
    r->no = t;
    r->gs = out->groups;
    r->p = &plan;
    r->s0 = s;
    int64_t goal = e->rows * (t + 1) / threads;
    while (s < e->nsegs &&
           (t == threads - 1 || e->seg_base[s] + e->segs[s]->n <= goal ||
            s == r->s0))
      s++;
    r->s1 = s;
    int64_t most = 0; /* the run's rows: the most records it can push */
    for (int64_t k = r->s0; k < r->s1; k++)
      most += e->segs[k]->n;
    ga_idrows_init(&r->rows, q->nvals, most);
    r->held = plan.flat ? flat_bytes(plan.ids, q->nvals) : 0; /* rule 17 */
  }
  run_all(runs, threads);
  prof(plan.sorted ? "records"
       : q->ndist  ? ga_cdbits_word(&plan.db, q->ndist)
                   : "runs",
       &t0);
  int hashed = 0, nofew = 0; /* rule 17: what gave way to group_bytes */
  for (int t = 0; t < threads; t++) {
    hashed += runs[t].hashed;
    nofew += runs[t].nofew;
  }
  if (plan.flat_capped)
    prof("cap:array>index", &t0);
  if (hashed)
    prof("cap:index>hash", &t0);
  if (nofew)
    prof("cap:few>rows", &t0);
  int rc = GA_SCAN_OK;
  for (int t = 0; t < threads; t++)
    if (runs[t].rc && rc == GA_SCAN_OK)
      rc = runs[t].rc;
  if (rc == GA_SCAN_OK && plan.sorted) { /* rule 9's second phase */
    int64_t made = 0;
    for (int t = 0; t < threads; t++) {
      runs[t].phase = 2;
      runs[t].all = runs;
      runs[t].nruns = threads;
      runs[t].lo = plan.ids * t / threads;
      runs[t].hi = plan.ids * (t + 1) / threads;
    }
    run_all(runs, threads);
    prof("groups", &t0);
    for (int t = 0; t < threads; t++) {
      if (runs[t].rc && rc == GA_SCAN_OK)
        rc = runs[t].rc;
      made += runs[t].made;
    }
    if (rc == GA_SCAN_OK && made > GA_CACHE_MAX_GROUPS)
      rc = GA_SCAN_FALLBACK;
    if (rc == GA_SCAN_OK && plan.topk) { /* rule 19 */
      prof("topk", &t0);
      c->queries_topk++;
    }
    int csummed = 0; /* rule 22: some run kept compact sums */
    for (int t = 0; t < threads; t++)
      csummed |= runs[t].cs != NULL;
    if (rc == GA_SCAN_OK && csummed) {
      prof("csum", &t0);
      c->queries_csum++;
    }
  }
  for (int t = 0; t < threads; t++)
    run_free(&runs[t]); /* not the lists of rule 9's groups: below */
  rc = ga_cpct_decline(rc, why, nwhy); /* rule 21 */
  /* rules 14, 17 and 21: where the groups keep sets of values, the runs'
  ** sets and arrays share one tally, and which run crossed group_bytes
  ** first (its sets or its arrays) is the threads' timing: one reason */
  if (rc == GA_CACHE_GROUP_CAP && q->ndist)
    rc = GA_CACHE_DSET_CAP;
  if (rc == GA_SCAN_FALLBACK)
    snprintf(why, nwhy, "more than %lld groups",
             (long long)GA_CACHE_MAX_GROUPS);
  if (rc == GA_CACHE_SORT_FULL) {
    snprintf(why, nwhy,
             "many groups, and a thread's rows sorted by group would take "
             "more than %lld MiB",
             (long long)(GA_IDR_MAX_BYTES >> 20));
    rc = GA_CACHE_DECLINED;
  } else if (rc == GA_CACHE_DBITS) {
    snprintf(why, nwhy, "a DISTINCT value outside its column's range");
    rc = GA_CACHE_DECLINED;
  } else if (rc == GA_CACHE_DSET_CAP) { /* rules 14 and 21 */
    sets_cap_why(q, why, nwhy);
    rc = GA_CACHE_DECLINED;
  } else if (rc == GA_CACHE_MANY) {
    snprintf(why, nwhy,
             "a group every %d rows or fewer: the parallel scan groups as "
             "fast",
             GA_CH_PROBE_RATIO);
    rc = GA_CACHE_DECLINED;
  } else if (rc == GA_CACHE_DECLINED)
    snprintf(why, nwhy,
             "an expression raises an error on a row (abs of "
             "-9223372036854775808): SQLite reports it");
  if (rc == GA_SCAN_OK && plan.sorted && q->any_order) {
    /* rule 9: the groups in id order, which is the order of their memory:
    ** the post query reads them ahead of need (ga_gs_list's slot order
    ** would send it all over memory) */
    size_t n = 0;
    for (int t = 0; t < threads; t++)
      n += (size_t)runs[t].made;
    out->sorted = sqlite3_malloc64(sizeof(ga_group *) * (n ? n : 1));
    if (!out->sorted)
      rc = GA_SCAN_NOMEM;
    for (int t = 0; t < threads && out->sorted; t++) {
      if (runs[t].made)
        memcpy(out->sorted + out->n, runs[t].list,
               sizeof(ga_group *) * (size_t)runs[t].made);
      out->n += (size_t)runs[t].made;
    }
  } else if (rc == GA_SCAN_OK && (q->any_order ? ga_gs_list : ga_gs_sorted)(
                                     out->groups, &out->sorted, &out->n)) {
    rc = GA_SCAN_NOMEM;
  }
  if (rc == GA_SCAN_OK && charge(&plan, 8 * (int64_t)out->n)) /* rule 17 */
    rc = GA_CACHE_GROUP_CAP;
  if (rc == GA_CACHE_GROUP_CAP && q->ndist) { /* as above: one reason */
    sets_cap_why(q, why, nwhy);
    rc = GA_CACHE_DECLINED;
  } else if (rc == GA_CACHE_GROUP_CAP) {
    snprintf(why, nwhy,
             "the host cache's groups and arrays would pass group_bytes "
             "(%lld bytes); raise it with gpuagg_config('group_bytes', ...)",
             (long long)q->dist_cap);
    rc = GA_CACHE_DECLINED;
  }
  for (int t = 0; t < threads; t++)
    sqlite3_free(runs[t].list);
  int frc = rc == GA_SCAN_OK && plan.db.non /* rule 14: bitmaps' states */
                ? ga_cdbits_fill(&plan.db, q, plan.card, plan.base, out->sorted,
                                 out->n)
                : GA_OK;
  if (frc)
    rc = frc == GA_CDBITS_FULL ? GA_CACHE_DECLINED : GA_SCAN_NOMEM;
  if (frc == GA_CDBITS_FULL)
    snprintf(why, nwhy,
             "the DISTINCT aggregates' sets of values would pass "
             "group_bytes (%lld bytes)",
             (long long)q->dist_cap);
  ga_cdbits_free(&plan.db);
  prof("list", &t0);
  if (rc != GA_SCAN_OK)
    ga_scan_out_free(out);
  out->threads = threads;
  for (int t = 0; t < threads && rc == GA_SCAN_OK; t++) { /* rule 12 */
    out->direct_rows += runs[t].idrows;
    out->direct_batches += plan.flat;
  }
  sqlite3_free(runs);
  return rc;
}
