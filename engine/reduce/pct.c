/*
** pct.c — median and percentiles (issue 39, §2): the values of one group
** or window frame, and the selection that answers SQLite's percentile
** extension (ext/misc/percentile.c as of 3.47, sqlite.org/percentile.html)
** bit for bit.  SQLite-free: ext/aggregates/percentile.c is the glue.
**
** Rules this file keeps:
**   1. The fraction is P / mx with mx 100 for percentile and 1 for
**      percentile_cont/_disc (one division, as SQLite's), 0.5 for median,
**      and must lie in [0, 1]; a later row's fraction is "the same" when
**      the two differ by at most 0.001 (a - b, then two comparisons).
**   2. The answer: ix = frac * (n - 1); i1 = (integer) ix; i2 = i1 when ix
**      is i1 or i1 is the last index, else i1 + 1; the result is
**      v1 + (v2 - v1) * (ix - i1), three roundings in that order, never
**      fused: this file is compiled with -ffp-contract=off (Makefile), so
**      that no compiler or -march turns the multiply-add into an FMA.
**      _disc returns v[i1] itself.  v1 and v2 are the i1-th and i2-th
**      smallest values.
**   3. The i1-th smallest is found by a selection (introselect: quickselect
**      with a median-of-three pivot and a three-way partition, which makes
**      runs of equal values cost one round; past 2 log2(n) + 8 rounds, a
**      heapsort of what is left), O(n) expected and O(n log n) at worst,
**      not a full sort; v2 is then the smallest of the values above i1.
**   4. Values compare by <, so 0.0 and -0.0 are equal.  The blend of rule
**      2 gives +0.0 for either zero (v + (+0.0)), so only _disc can show
**      the sign: it orders -0.0 before 0.0 (the count of values with the
**      sign bit set decides), a rule of its own that does not depend on
**      the order of the rows, where SQLite's sort leaves it to the order
**      in which its quicksort met them.
**   5. The values cost GA_PCT_VALUE_BYTES each, counted on the allocated
**      capacity against cap_bytes: past it GA_PCT_CAP, never an
**      approximation.
**   6. Long loops poll stop() every 65,536 values visited.
**   7. Rule 2's ranks (ga_pct_ranks) and its arithmetic (ga_pct_blend) are
**      functions of their own, which every path calls: the selection here,
**      and a selection made elsewhere, where only the order statistics the
**      answers read were kept (p->at: a GPU entry sorts each group's
**      values and brings back those ranks alone, engine/cache/
**      cache_gpu_stat.c rule 3).  Such a set is read by rank: its v1 and
**      v2 are the values of ranks i1 and i2 of the sorted whole, which
**      compare equal to those the selection finds, and rule 2's blend of
**      equal values is the same bits (its zeros give +0.0 either way).
**      For _disc the sorted order itself puts -0.0 before 0.0, so the
**      value at rank i1 is rule 4's: -0.0 exactly when i1 is below the
**      count of values with the sign bit set.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pct.h"
#include "value.h"

double ga_pct_max_p(int fn) { return fn == GA_PCT_PERCENTILE ? 100.0 : 1.0; }

int ga_pct_fraction(int fn, int p_is_num, double p, double *frac) {
  if (fn == GA_PCT_MEDIAN) {
    *frac = 0.5;
    return 1;
  }
  double f = p / ga_pct_max_p(fn); /* rule 1: one division */
  if (!p_is_num || !(f >= 0.0 && f <= 1.0))
    return 0;
  *frac = f;
  return 1;
}

int ga_pct_same(double a, double b) {
  a -= b;
  return a >= -0.001 && a <= 0.001;
}

int ga_pct_push(ga_pct *p, double y) {
  if (p->n == p->cap) {
    size_t want = p->cap ? p->cap * 2 : 8; /* many groups: a few values each */
    if (p->cap_bytes > 0) { /* rule 5: the allocation stays under the cap */
      size_t most = (size_t)(p->cap_bytes / GA_PCT_VALUE_BYTES);
      if (want > most)
        want = most;
      if (want <= p->n)
        return GA_PCT_CAP;
    }
    double *v = realloc(p->v, want * sizeof(double));
    if (!v)
      return GA_NOMEM;
    p->v = v;
    p->cap = want;
  }
  p->v[p->n++] = y;
  return GA_OK;
}

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

void ga_pct_remove(ga_pct *p, double y) {
  size_t at = p->n;
  uint64_t b = bits(y);
  for (size_t i = 0; i < p->n; i++) {
    if (bits(p->v[i]) == b) {
      at = i;
      break;
    }
    if (at == p->n && p->v[i] == y)
      at = i; /* keep looking for the identical one */
  }
  if (at < p->n)
    p->v[at] = p->v[--p->n];
}

typedef struct poller {
  int (*stop)(void *);
  void *arg;
  uint64_t seen, next;
} poller;

/* Rule 6: 1 when the caller said stop. */
static int poll_after(poller *pl, size_t visited) {
  pl->seen += visited;
  if (!pl->stop || pl->seen < pl->next)
    return 0;
  pl->next = pl->seen + 65536;
  return pl->stop(pl->arg) != 0;
}

static void swap(double *a, double *b) {
  double t = *a;
  *a = *b;
  *b = t;
}

static void sift(double *v, size_t root, size_t n) {
  for (;;) {
    size_t c = 2 * root + 1;
    if (c >= n)
      return;
    if (c + 1 < n && v[c] < v[c + 1])
      c++;
    if (!(v[root] < v[c]))
      return;
    swap(&v[root], &v[c]);
    root = c;
  }
}

/* Rule 3's fallback: heapsort v[0..n). */
static int heapsort_range(double *v, size_t n, poller *pl) {
  for (size_t i = n / 2; i-- > 0;)
    sift(v, i, n);
  for (size_t end = n; end > 1; end--) {
    swap(&v[0], &v[end - 1]);
    sift(v, 0, end - 1);
    if ((end & 65535) == 0 && poll_after(pl, 65536))
      return GA_INTERRUPTED;
  }
  return GA_OK;
}

static int select_k(double *v, size_t n, size_t k, int budget, poller *pl) {
  size_t lo = 0, hi = n;
  if (budget < 0) {
    budget = 8;
    for (size_t m = n; m > 1; m >>= 1)
      budget += 2;
  }
  while (hi - lo > 16) {
    if (budget-- == 0)
      return heapsort_range(v + lo, hi - lo, pl);
    size_t mid = lo + (hi - lo) / 2;
    /* median of three into v[mid] */
    if (v[mid] < v[lo])
      swap(&v[mid], &v[lo]);
    if (v[hi - 1] < v[mid]) {
      swap(&v[hi - 1], &v[mid]);
      if (v[mid] < v[lo])
        swap(&v[mid], &v[lo]);
    }
    double pivot = v[mid];
    /* three-way: [lo, lt) < pivot, [lt, gt) == pivot, [gt, hi) > pivot */
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      if (v[i] < pivot)
        swap(&v[lt++], &v[i++]);
      else if (pivot < v[i])
        swap(&v[i], &v[--gt]);
      else
        i++;
    }
    if (poll_after(pl, hi - lo))
      return GA_INTERRUPTED;
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return GA_OK; /* v[k] is the pivot's value */
  }
  for (size_t i = lo + 1; i < hi; i++) { /* insertion sort of the rest */
    double x = v[i];
    size_t j = i;
    for (; j > lo && x < v[j - 1]; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
  return GA_OK;
}

int ga_pct_select(double *v, size_t n, size_t k, int rounds,
                  int (*stop)(void *), void *arg) {
  poller pl = {stop, arg, 0, 65536};
  return k < n ? select_k(v, n, k, rounds, &pl) : GA_OK;
}

void ga_pct_ranks(int fn, double frac, size_t n, double *ix, size_t *i1,
                  size_t *i2) {
  /* rule 2, as SQLite writes it: its index is an unsigned int of ix */
  *ix = frac * (double)(n - 1);
  *i1 = (size_t)*ix;
  *i2 = fn == GA_PCT_DISC || *ix == (double)*i1 || *i1 == n - 1 ? *i1 : *i1 + 1;
}

double ga_pct_blend(int fn, double ix, size_t i1, double v1, double v2) {
  if (fn == GA_PCT_DISC)
    return v1;
  /* rule 2: three roundings in SQLite's order, never fused */
  double d = v2 - v1;
  double f = ix - (double)i1;
  double m = d * f;
  return v1 + m;
}

/* Rule 7: the value of rank r in a selection made elsewhere; 0 when the
** selection lacks it. */
static int picked(const ga_pct *p, size_t r, double *out) {
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->at[mid] < r)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == p->n || p->at[lo] != r)
    return 0;
  *out = p->v[lo];
  return 1;
}

int ga_pct_answer(ga_pct *p, int fn, double *out, int (*stop)(void *),
                  void *arg) {
  double ix, v1, v2;
  size_t i1, i2;
  if (p->at) { /* rule 7 */
    if (!p->of)
      return GA_PCT_BAD;
    ga_pct_ranks(fn, p->frac, p->of, &ix, &i1, &i2);
    if (!picked(p, i1, &v1) || !picked(p, i2, &v2))
      return GA_PCT_BAD;
    *out = ga_pct_blend(fn, ix, i1, v1, v2);
    return GA_OK;
  }
  size_t n = p->n;
  double *v = p->v;
  poller pl = {stop, arg, 0, 65536};
  ga_pct_ranks(fn, p->frac, n, &ix, &i1, &i2);
  int rc = select_k(v, n, i1, -1, &pl);
  if (rc != GA_OK)
    return rc;
  v1 = v2 = v[i1];
  if (fn == GA_PCT_DISC && v1 == 0.0) { /* rule 4 */
    size_t neg = 0;
    for (size_t i = 0; i < n; i++)
      neg += signbit(v[i]) != 0;
    v1 = i1 < neg ? -0.0 : 0.0;
  }
  if (i2 != i1) { /* the smallest above i1 (rule 3) */
    v2 = v[i1 + 1];
    for (size_t i = i1 + 2; i < n; i++)
      if (v[i] < v2)
        v2 = v[i];
    if (poll_after(&pl, n - i1))
      return GA_INTERRUPTED;
  }
  *out = ga_pct_blend(fn, ix, i1, v1, v2);
  return GA_OK;
}

void ga_pct_free(ga_pct *p) {
  free(p->v);
  free(p->at);
  p->v = NULL;
  p->at = NULL;
  p->n = p->cap = p->of = 0;
}
