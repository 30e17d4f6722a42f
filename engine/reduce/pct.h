/*
** pct.h — the values of a median or percentile (issue 39, §2) and the
** selection that answers one: SQLite's percentile extension's semantics
** (3.47 and later), computed with a selection instead of a full sort.
** The rules are at the top of engine/reduce/pct.c.
*/
#ifndef GA_PCT_H
#define GA_PCT_H

#include <stddef.h>
#include <stdint.h>

/* Which function (the ga_fn_data's op of ext/aggregates/percentile.c). */
#define GA_PCT_MEDIAN 0     /* median(Y): fraction 0.5 */
#define GA_PCT_PERCENTILE 1 /* percentile(Y, P): P in 0..100 */
#define GA_PCT_CONT 2       /* percentile_cont(Y, P): P in 0..1 */
#define GA_PCT_DISC 3       /* percentile_disc(Y, P): P in 0..1, no blend */

/* Bytes a kept value costs (the memory cap, docs/aggregates.md). */
#define GA_PCT_VALUE_BYTES 8

/* The largest P of a function: 100 for percentile, 1 for the others. */
double ga_pct_max_p(int fn);

/* P scaled to a fraction as SQLite scales it (P / mx, one division).
** Returns 0 when P is out of range (the caller reports it); p_is_num:
** whether P's numeric type is INTEGER or REAL. */
int ga_pct_fraction(int fn, int p_is_num, double p, double *frac);

/* SQLite's "same" P: the two fractions differ by at most 0.001. */
int ga_pct_same(double a, double b);

/* The values of one aggregate (or window frame). */
typedef struct ga_pct {
  double *v;
  size_t n, cap;
  double frac;       /* the first row's fraction */
  int frac_set;      /* frac is set (median: at the first row too) */
  int64_t cap_bytes; /* the memory cap: v may not pass it (0: none) */
  /* pct.c rule 7: a selection made elsewhere (a GPU entry's sorted runs,
  ** engine/cache/cache_gpu_stat.c): v[0..n) are the order statistics of
  ** ranks at[0..n) (ascending, 0-based) of a set of `of` values, -0.0
  ** ranked before 0.0.  at NULL: v holds every value (of unused). */
  size_t *at;
  size_t of;
} ga_pct;

/* One median or percentile a query asks of a value (issue 39): fn
** (GA_PCT_*) at fraction frac (ga_pct_fraction's), of value val. */
typedef struct ga_pct_ask {
  int val, fn;
  double frac;
} ga_pct_ask;

/* Rule 2's ranks of fn at frac over n > 0 values: ix = frac * (n - 1),
** *i1 = (integer) ix, *i2 the other rank the blend reads (i1 itself for
** _disc, where ix is an integer, or i1 is the last). */
void ga_pct_ranks(int fn, double frac, size_t n, double *ix, size_t *i1,
                  size_t *i2);

/* Rule 2's answer from v1 and v2, the i1-th and i2-th smallest values
** (ga_pct_ranks): v1 for _disc, else v1 + (v2 - v1) * (ix - i1), never
** fused.  For _disc, v1 must already carry rule 4's sign of a zero. */
double ga_pct_blend(int fn, double ix, size_t i1, double v1, double v2);

/* Add y (finite).  GA_OK, GA_NOMEM, or GA_PCT_CAP when the values would
** pass cap_bytes.  Not on a selection made elsewhere (rule 7). */
#define GA_PCT_CAP 100
/* A value a percentile refuses, seen by the parallel scan
** (engine/scan/scan_group.h rule 6). */
#define GA_PCT_BAD 101
int ga_pct_push(ga_pct *p, double y);

/* Remove one value equal to y (the bit-identical one where present, else
** one that compares equal: 0.0 for -0.0).  Nothing when none is. */
void ga_pct_remove(ga_pct *p, double y);

/* The answer of fn over p's values into *out (p->n > 0): SQLite's
** index ix = frac * (n - 1) and blend v1 + (v2 - v1) * (ix - i1), or for
** _disc the value at floor(ix).  The values are reordered (a selection,
** not a sort).  stop(arg), when not NULL, is polled every 65,536 values
** visited: nonzero stops it with GA_INTERRUPTED.  GA_OK otherwise.
** A selection made elsewhere (p->at, rule 7) is read, not reordered:
** GA_PCT_BAD when it lacks a rank the answer reads. */
int ga_pct_answer(ga_pct *p, int fn, double *out, int (*stop)(void *),
                  void *arg);

/* The k-th smallest (0-based) of v[0..n) by <, v reordered so that
** v[k] holds it, v[0..k) no greater and v(k..n) no smaller.  Introselect:
** quickselect on a median-of-three pivot, and after 2 log2(n) rounds
** rounds (rounds < 0; else that many, for the tests), a heapsort of what
** is left (O(n log n) worst case).  GA_OK, or GA_INTERRUPTED. */
int ga_pct_select(double *v, size_t n, size_t k, int rounds,
                  int (*stop)(void *), void *arg);

void ga_pct_free(ga_pct *p);

#endif
