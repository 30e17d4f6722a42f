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

/* Column col of the groups table for group g (NULL: the ungrouped query's
** empty row) as ctx's result (groups_vtab.c; qdirect.c reads it too). */
int ga_groups_cell(sqlite3_context *ctx, const ga_qgroups *gs,
                   const ga_group *g, int col);

/* gpu_query's data is a ga_scan_module (glue.h); the groups table has
** none. */
extern const sqlite3_module ga_query_methods;
extern const sqlite3_module ga_groups_methods;

/* gpu_query_json (query_json.c), eponymous; its data is a ga_scan_module
** (for its ga_conn).  The parameters it binds (hidden columns p1 ..), and
** per connection the texts it keeps with their tables and statements, and
** the bytes of those texts together (its rules 2 and 3). */
#define GA_QJSON_MAX_PARAMS 32
#define GA_QJSON_KEEP 16
#define GA_QJSON_KEEP_BYTES (1 << 20)
extern const sqlite3_module ga_query_json_methods;

/* gpuagg_pick(X): an aggregate, X of the group's one row (groups_vtab.c
** rule 3). */
void ga_pick_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_pick_final(sqlite3_context *ctx);
/* gpuagg_value(X): X; gpuagg_check(X, ...): 1 or the overflow error
 * (groups_vtab.c rule 6). */
void ga_value_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_check_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
