/*
** cache_pct.c — gpu_query's medians and percentiles (gpu_median,
** gpu_percentile, gpu_percentile_cont, gpu_percentile_disc with a constant
** P: planner/query.c rule 14) on a host entry of the column cache (issue
** 39): each group's state keeps every value of its group, the very array
** (engine/state/dset.h rule 6) that the parallel scan keeps, and the
** groups' answers are the scan's selection (engine/reduce/pct.c) over it
** (ext/query/groups_vtab.c), so a cached answer is the scan's, bit for bit.
**
** Rules:
**   1. A row's value steps as ga_pct_gstep steps the scan's: rows counts
**      every passing row, NULL adds nothing, an INTEGER becomes the double
**      sqlite3_value_double makes of it ((double)i), a REAL is kept as its
**      bits.  An infinity (SQLite's percentile raises "Inf input to F()")
**      declines the answer (GA_PCT_BAD): the uncached path raises it.  A
**      TEXT value never gets here: planner/cache_shape.c declines an
**      argument that holds TEXT (SQLite raises "not numeric").
**   2. The answer does not depend on the order of the values: the
**      selection finds the k-th smallest by <, and _disc's -0.0 or 0.0 is
**      decided by counting the values with the sign bit set (pct.c rules
**      3 and 4).  So cache_host.c's runs may append their values in any
**      order (dset.c's merge appends the later run's), and it takes rule
**      6's row loop (hashed, or by rule 8's dense index), as DISTINCT
**      values do (cache_host.c rule 14), never rule 2's, 9's, 11's or 15's
**      ways, which keep no values.
**   3. Memory: GA_PCT_VALUE_BYTES a value of the arrays' capacity, added
**      to the run's tally of DISTINCT sets (ga_cdist_charge against
**      ga_cquery.dist_cap, group_bytes): past it the cache declines and
**      gpu_query's scan answers under the same cap or raises its error.
**      The caller's interrupt is polled as the sets' is (cache_distinct.c
**      rule 5); the selection polls it too (groups_vtab.c).
**   4. A GPU entry declines (planner/cache_plan.c): the GPU cache keeps no
**      group's values.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "cache_pct.h"
#include "idrows.h"
#include "pct.h"
#include "value.h"
#include "xacc.h"

int ga_cpct_step(ga_gstate *st, int cls, uint64_t v, int64_t *bytes) {
  ga_value raw; /* rule 1: the scan's own step */
  raw.type = cls == GA_IDR_NULL  ? GA_V_NULL
             : cls == GA_IDR_INT ? GA_V_INT
                                 : GA_V_REAL;
  raw.i = (int64_t)v;
  raw.r = ga_bitsd((int64_t)v);
  int64_t was = ga_dset_bytes(st->set); /* rule 3 */
  int rc = ga_pct_gstep(st, &raw);
  *bytes += ga_dset_bytes(st->set) - was;
  return rc;
}

int ga_cpct_decline(int rc, char *why, size_t nwhy) {
  if (rc != GA_PCT_BAD)
    return rc;
  snprintf(why, nwhy,
           "a median's or percentile's input holds an infinity: SQLite "
           "reports it");
  return GA_CACHE_DECLINED;
}
