/*
** query_vtab.h — gpu_query (query_vtab.c) and the table of its groups
** (groups_vtab.c), for ext/init.c's table.
*/
#ifndef GA_QUERY_VTAB_H
#define GA_QUERY_VTAB_H

#include "sqlite3ext.h"

#include "glue.h"
#include "query.h"

/* The merged groups of one call, which the groups table's rows show (its
** handle, bound as a pointer of type "gpuagg_groups"). */
typedef struct ga_qgroups {
  const ga_query *q;
  ga_group **g;
  size_t n;
  int ungrouped; /* one row even without a group */
  int enc;       /* TEXT keys' encoding (0: UTF-8) */
} ga_qgroups;

/* gpu_query's data is a ga_scan_module (glue.h); the groups table has
** none. */
extern const sqlite3_module ga_query_methods;
extern const sqlite3_module ga_groups_methods;

/* gpuagg_pick(X): an aggregate, X of the group's one row (groups_vtab.c
** rule 3). */
void ga_pick_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_pick_final(sqlite3_context *ctx);
/* gpuagg_value(X): X; gpuagg_check(X, ...): 1 or the overflow error
 * (groups_vtab.c rule 6). */
void ga_value_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_check_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* gpu_query's parallel scan of plan on the module's pools (query_vtab.c):
** SQLITE_OK with out filled; SQLITE_OK with *why set and out empty (the
** plan or the scan declined); SQLITE_NOMEM or SQLITE_INTERRUPT. */
int ga_query_scan(ga_scan_module *m, sqlite3 *db, ga_plan *plan,
                  ga_scan_out *out, char *why, size_t n);
/* last_scan after a parallel answer of out. */
void ga_query_last_parallel(ga_scan_last *last, const ga_scan_out *out,
                            const ga_plan *plan, int nvals);

/* ---- partials (partial_fns.c) ---- */

/* gpu_query_partial(text, ...): user data a ga_scan_module;
** gpu_query_merge(a, ...) and gpu_query_partial_info(a): a ga_fn_data. */
void ga_query_partial_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_query_merge_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_query_partial_info_fn(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv);
/* What a partial of q with these parameter values records (partial_fns.c
** rule 3). */
uint64_t ga_query_sig(const ga_query *q, sqlite3_value *const *params, int np);
/* The groups of partial v into *out, for q with these parameter values:
** SQLITE_OK; SQLITE_NOMEM; SQLITE_ERROR with *err "gpu_query: ..." (not a
** partial, or one of another query, or past group_bytes). */
int ga_query_from_partial(sqlite3_value *v, const ga_query *q,
                          sqlite3_value *const *params, int np,
                          const ga_config *cfg, ga_scan_out *out, char **err);

#endif
