/*
** cache_glue.h — what the column cache's SQLite glue shares
** (ext/cache_fns.c, ext/cache_shape.c) with gpu_aggregate and gpuagg.c.
*/
#ifndef GA_CACHE_GLUE_H
#define GA_CACHE_GLUE_H

#include "sqlite3ext.h"

#include "aggregate.h"
#include "cache.h"
#include "gpuagg_ext.h"

/* gpu_cache, gpu_cache_drop and gpuagg_collect on a user's connection;
** taken back after a failed .load. */
int ga_cache_register(sqlite3 *db, ga_conn *conn);
void ga_cache_unregister(sqlite3 *db);
/* gpuagg_collect on a gpu_aggregate worker's connection. */
int ga_cache_register_worker(sqlite3 *db);

/* Does the entry e answer gpu_aggregate's arguments a on table t?  1 with
** the query in *q, 0 with the reason in why, or SQLITE_NOMEM
** (ext/cache_shape.c). */
int ga_cache_shape(sqlite3 *db, const ga_centry *e, const ga_target *t,
                   const ga_args *a, ga_cquery *q, char *why, size_t nwhy);

/* gpu_aggregate's cache step (aggregate_vtab.c), before it plans a scan:
** *hit = 1 with the groups in *out when the cache answered; *hit = 0 when
** it did not, with the reason in why ("" when the table has no entry).
** SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT. */
int ga_cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                    const ga_target *t, const ga_args *a, ga_scan_out *out,
                    int *hit, char *why, size_t nwhy);

/* gpuagg_info()'s "cache" object, sqlite3_malloc'd (NULL: no memory). */
char *ga_cache_json(ga_conn *conn, sqlite3 *db);

#endif
