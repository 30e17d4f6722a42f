/*
** qvar.c — gpu_query and the exact variance (qvar.h; query.c rule 15).
**
** Rules:
**   1. The six names are ext/aggregates/var.c's, with the gpu_ prefix only:
**      SQLite has no variance of its own to map onto them (sqlean's
**      stddev() and the like stay "other aggregates", planner/qhint.c).
**   2. A variance's value keeps Σx² in its group state (ga_parts.val_sq,
**      engine/state/gstate.h rule 8) on the parallel path; the groups
**      table gives ga_gstate_result's GA_Q_VAR + form, xvar.c's answer.
**   3. DISTINCT: the value keeps its set of distinct values, as any
**      DISTINCT aggregate's (query.c rule 9), and the variance is the
**      set's (engine/state/gstate.h rule 9): the parallel path, partials
**      (the set, qpartial.h rule 6) and a host entry's sets.
**   4. Partials carry Σx² (engine/scan/qpartial.h rule 7).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qvar.h"
#include "xvar.h"

int ga_qvar_is(const char *z, int len) {
  static const char *const names[] = {"gpu_var_samp",    "gpu_var_pop",
                                      "gpu_stddev_samp", "gpu_stddev_pop",
                                      "gpu_variance",    "gpu_stddev"};
  static const int form[] = {GA_VAR_SAMP, GA_VAR_POP,  GA_SD_SAMP,
                             GA_SD_POP,   GA_VAR_SAMP, GA_SD_SAMP};
  for (int k = 0; k < 6; k++)
    if ((int)strlen(names[k]) == len && !sqlite3_strnicmp(z, names[k], len))
      return 1 + form[k];
  return 0;
}

void ga_qvar_mark(ga_query *q, int dist) {
  (void)q; /* rule 3: DISTINCT runs where the sets run */
  (void)dist;
}
