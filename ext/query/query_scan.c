/*
** query_scan.c — gpu_query's parallel scan of one plan on its module's
** worker pools, and what last_scan reports of it: shared by the table
** (query_vtab.c, its rule 2) and by gpu_query_partial (partial_fns.c).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "dims.h"
#include "query_scan.h"

int ga_query_scan(ga_scan_module *m, sqlite3 *db, ga_plan *plan,
                  ga_scan_out *out, char *why, size_t n) {
  ga_scan_last *last = &m->conn->scan;
  ga_intr intr = {.db = db};
  /* a serial plan has no file to pool; a parallel one may turn serial when
  ** a worker compiles its text (ga_plan_verify) */
  if (plan->parallel) {
    plan->spec.pool =
        ga_scan_pool_hold(&m->pools, &m->npools, plan->vfs, plan->path,
                          plan->spec.immutable, plan->spec.readonly);
    if (plan->spec.pool && ga_plan_verify(plan, plan->spec.pool))
      return SQLITE_NOMEM;
  }
  if (!plan->parallel) {
    sqlite3_snprintf((int)n, why, "%s",
                     plan->why[0] ? plan->why : "the serial path");
    return SQLITE_OK;
  }
  plan->spec.interrupted = ga_intr_check;
  plan->spec.interrupted_arg = &intr;
  int src = !plan->spec.pool       ? GA_SCAN_NOMEM
            : ga_intr_check(&intr) ? GA_SCAN_INTERRUPT
                                   : ga_scan_run(&plan->spec, out);
  ga_intr_free(&intr);
  last->progress_probes = intr.progress_probes;
  last->snapshot_waits = out->snapshot_waits;
  if (src == GA_SCAN_INTERRUPT) {
    last->interrupted_in = out->interrupted_in;
    return SQLITE_INTERRUPT;
  }
  if (src == GA_SCAN_NOMEM)
    return SQLITE_NOMEM;
  if (src != GA_SCAN_OK) {
    sqlite3_snprintf((int)n, why, "%s",
                     out->why[0] ? out->why : "the parallel scan declined");
    ga_scan_out_free(out);
  }
  return SQLITE_OK;
}

void ga_query_last_parallel(ga_scan_last *last, const ga_scan_out *out,
                            const ga_plan *plan, int nvals) {
  last->path = "parallel";
  sqlite3_snprintf((int)sizeof last->why, last->why, "%s", plan->why);
  ga_scan_last_counters(last, out);
  last->values = nvals;
  size_t n = strlen(last->join);
  char *d = plan->dims ? ga_sd_json(plan->dims) : NULL; /* engine/scan/dims.h */
  if (d && n && last->join[n - 1] == '}' &&
      n + strlen(d) + 12 < sizeof last->join)
    sqlite3_snprintf((int)(sizeof last->join - n + 1), last->join + n - 1,
                     ",\"probe\":%s}", d);
  sqlite3_free(d);
}
