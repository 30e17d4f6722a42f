/*
** qpartial_pct.c — a median's or percentile's values in a query partial
** (issue 39; engine/scan/qpartial.h rule 9): gpu_query_partial carries
** every value of each group, so that partials merged in any grouping give
** the one-pass answer bit for bit (the selection reads the values, never
** their order: engine/reduce/pct.c rules 3 and 4), and past the caps an
** error, never an approximation.
**
** Rules:
**   1. The state byte of such a value is GA_QPART_PCT (0x40, alone: no
**      DISTINCT collation, no Σx² flag).  Its bytes follow the group's
**      DISTINCT sets in the sets' place: u64 n, then the n values as
**      binary64, little-endian, in engine/state/pct_state.c rule 2's order
**      (ascending, -0.0 before 0.0): one multiset, one encoding.  The sort
**      polls the writer's stop (pct_state.c rule 5).
**   2. Reading checks everything before a value is used: n fits the bytes
**      left, n is at most the fused state's rows (each value was a row;
**      the state's own sum, count, max and min are empty, since the values
**      keep the numbers: ga_pct_gstep), every value is finite (SQLite's
**      percentile refuses an infinity, and NaN is NULL) and the order is
**      rule 1's.  Anything else is a damaged partial.
**   3. Memory: n values take GA_PCT_VALUE_BYTES each; past the reader's
**      budget (group_bytes less what the groups hold) GA_QPART_CAP, before
**      the values are allocated.  The stop is polled every 65,536 values.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "pct_state.h"
#include "qpartial.h"
#include "qpartial_pct.h"
#include "value.h"

static uint64_t get64(const unsigned char *o) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)o[i] << (8 * i);
  return v;
}

static void put64(unsigned char *o, uint64_t v) {
  for (int i = 0; i < 8; i++)
    o[i] = (unsigned char)(v >> (8 * i));
}

int ga_qpp_encode(ga_dset *set, int (*stop)(void *), void *arg,
                  unsigned char **out, int64_t *n) {
  size_t cnt = set ? set->pct.n : 0;
  if (cnt) {
    int rc = ga_pct_sort(set->pct.v, cnt, stop, arg); /* rule 1 */
    if (rc != GA_OK)
      return rc;
  }
  unsigned char *o = sqlite3_malloc64(8 + 8 * (uint64_t)cnt);
  if (!o)
    return GA_NOMEM;
  put64(o, (uint64_t)cnt);
  for (size_t i = 0; i < cnt; i++) {
    uint64_t u;
    memcpy(&u, &set->pct.v[i], 8);
    put64(o + 8 + 8 * i, u);
  }
  *out = o;
  *n = 8 + 8 * (int64_t)cnt;
  return GA_OK;
}

/* Rule 1's order: by value, -0.0 before 0.0. */
static int before(double a, double b) {
  return a < b || (a == b && signbit(a) && !signbit(b));
}

int ga_qpp_decode(const unsigned char *p, int64_t avail, int64_t *used,
                  int64_t rows, int64_t budget, int (*stop)(void *), void *arg,
                  ga_dset **out, const char **err) {
  *out = NULL;
  *err = "a damaged partial (a median's or percentile's values)";
  if (avail < 8)
    return GA_BADSTATE;
  uint64_t n = get64(p);
  if (n > (uint64_t)(avail - 8) / 8 || rows < 0 || n > (uint64_t)rows)
    return GA_BADSTATE;
  *used = 8 + 8 * (int64_t)n;
  if (!n)
    return GA_OK;
  double prev = 0;
  for (uint64_t i = 0; i < n; i++) { /* rule 2, before any use */
    uint64_t u = get64(p + 8 + 8 * i);
    double d;
    memcpy(&d, &u, 8);
    if (!isfinite(d) || (i && before(d, prev)))
      return GA_BADSTATE;
    prev = d;
    if ((i & 0xffff) == 0xffff && stop && stop(arg))
      return GA_QPART_STOP;
  }
  if (budget >= 0 && (int64_t)n > budget / GA_PCT_VALUE_BYTES) /* rule 3 */
    return GA_QPART_CAP;
  if (ga_dset_pct_push(out, 0.0) != GA_OK) /* makes the set */
    return GA_NOMEM;
  ga_pct *v = &(*out)->pct;
  if (v->cap < n) {
    double *nv = realloc(v->v, n * sizeof(double));
    if (!nv) {
      ga_dset_free(*out);
      *out = NULL;
      return GA_NOMEM;
    }
    v->v = nv;
    v->cap = n;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t u = get64(p + 8 + 8 * i);
    memcpy(&v->v[i], &u, 8);
  }
  v->n = n;
  return GA_OK;
}
