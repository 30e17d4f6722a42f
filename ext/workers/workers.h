/*
** workers.h — the functions that gpu_aggregate's and gpu_cache's worker
** connections run inside their own SQL (ext/workers/), also registered on
** every user connection for the serial paths (ext/init.c).
*/
#ifndef GA_WORKERS_H
#define GA_WORKERS_H

#include "sqlite3ext.h"

#include "gstate.h"

/* gpuagg_partial(X) (partial.c): xStep and xFinal; its user data is a
** ga_partial_data of the connection's own (ga_partial_data_new, freed with
** sqlite3_free). */
typedef struct ga_partial_data {
  int enc; /* the connection's encoding, 0 until the first text */
} ga_partial_data;
void *ga_partial_data_new(void);
void ga_partial_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_partial_final(sqlite3_context *ctx);
/* gpuagg_partial's step of a TEXT or BLOB value (type) into s, the text in
** the database's encoding enc: max()'s view, then sum()'s.  GA_OK or
** GA_NOMEM. */
int ga_fused_step_other(ga_xstate *s, sqlite3_value *v, int type, int enc);
/* The same into a group's compact state (engine/state/gstate.h): the step
** of gpu_aggregate's and gpu_query's hash-mode workers (ga_scan_spec).
** tag: NULL in a worker's own table (rows in rowid order); in the shared
** groups (direct mode) the group's two tags of s, and piece the row's. */
int ga_group_step_other(ga_gstate *s, int64_t *tag, int64_t piece,
                        sqlite3_value *v, int type, int enc);

/* gpuagg_collect (collect.c): xStep and xFinal, no user data. */
void ga_collect_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_collect_final(sqlite3_context *ctx);

/* Everything a worker connection runs, registered on it (workers.c): the
** ga_scan_spec's prep. */
int ga_worker_prep(sqlite3 *db);

#endif
