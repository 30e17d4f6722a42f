/*
** workers.c — what a worker connection of gpu_aggregate and gpu_cache gets
** when it is opened (ga_scan_spec.prep): gpuagg_partial and gpuagg_collect.
** User connections get the same two from ext/init.c's table.  Workers alone
** get gpuagg_keymemo_miss (engine/scan/keymemo.h): only their texts use it.
*/
#include <stddef.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "dims.h"
#include "keymemo.h"
#include "workers.h"

int ga_worker_prep(sqlite3 *db) {
  void *pd = ga_partial_data_new();
  if (!pd)
    return SQLITE_NOMEM;
  int rc = sqlite3_create_function_v2(
      db, "gpuagg_partial", 1,
      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, pd, NULL,
      ga_partial_step, ga_partial_final, sqlite3_free);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "gpuagg_collect", -1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, NULL,
                                 ga_collect_step, ga_collect_final);
  if (rc == SQLITE_OK)
    rc = ga_keymemo_register(db);
  if (rc == SQLITE_OK) /* a join's probes (engine/scan/dims.h) */
    rc = ga_sd_register(db);
  return rc;
}
