/*
** qvar.c — gpu_query and the exact variance (qvar.h; query.c rule 14).
**
** Rules:
**   1. The six names are ext/aggregates/var.c's, with the gpu_ prefix only:
**      SQLite has no variance of its own to map onto them (sqlean's
**      stddev() and the like stay "other aggregates", planner/qhint.c).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qvar.h"

int ga_qvar_is(const char *z, int len) {
  static const char *const names[] = {"gpu_var_samp",    "gpu_var_pop",
                                      "gpu_stddev_samp", "gpu_stddev_pop",
                                      "gpu_variance",    "gpu_stddev"};
  for (int k = 0; k < 6; k++)
    if ((int)strlen(names[k]) == len && !sqlite3_strnicmp(z, names[k], len))
      return 1;
  return 0;
}
