/*
** qhint.c — what a refusal of a function points to (qhint.h).
**
** gpu_query runs the aggregates count, sum, total, avg, min and max (and
** gpu_sum ... gpu_max).  An analyst reaching for another one gets the name
** of what exists: a rewrite over those aggregates where one runs (the
** variance from exact sums), the two-step form (group in gpu_query, then
** aggregate its rows in SQLite) for string and JSON aggregates, the
** gpu_ spellings for medians and percentiles (issue 39), and a plain "none"
** for modes and approximate quantiles.  Names compare in ASCII
** case, as SQLite's function names do; any other name has no hint (NULL).
*/
#include <stddef.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qhint.h"

static const char *const variance[] = {"variance",   "var_samp", "var_pop",
                                       "stddev",     "stdev",    "stddev_samp",
                                       "stddev_pop", "std",      NULL};
static const char *const median[] = {
    "median", "percentile", "percentile_cont", "percentile_disc",
    "mode",   "quantile",   "approx_quantile", NULL};
static const char *const strings[] = {"group_concat",
                                      "string_agg",
                                      "json_group_array",
                                      "json_group_object",
                                      "array_agg",
                                      "listagg",
                                      NULL};

static int in(const char *name, const char *const *list) {
  for (int k = 0; list[k]; k++)
    if (!sqlite3_stricmp(name, list[k]))
      return 1;
  return 0;
}

const char *ga_qhint(const char *name) {
  if (name && in(name, variance))
    return "gpu_var_samp(x), gpu_var_pop(x), gpu_stddev_samp(x) and "
           "gpu_stddev_pop(x) give it correctly rounded, on every path "
           "(docs/aggregates.md)";
  if (name && in(name, median)) /* the first four: issue 39 */
    return in(name, median + 4)
               ? "gpuagg has no mode or approximate quantile: run this query "
                 "on SQLite itself"
               : "write it gpu_median(y), gpu_percentile(y, p), "
                 "gpu_percentile_cont(y, p) or gpu_percentile_disc(y, p): "
                 "SQLite's percentile extension, exact (docs/aggregates.md)";
  if (name && in(name, strings))
    return "gpuagg has no string or JSON aggregate: add its argument to "
           "gpu_query's GROUP BY, then aggregate the result table's rows in "
           "SQLite (SELECT k, group_concat(v) FROM q GROUP BY k)";
  return NULL;
}
