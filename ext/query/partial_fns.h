/*
** partial_fns.h — partials (partial_fns.c): one gpu_query text over many
** database files, for ext/init.c's table and gpu_query's gpuagg_partial
** column (query_vtab.c rule 9).
*/
#ifndef GA_PARTIAL_FNS_H
#define GA_PARTIAL_FNS_H

#include "sqlite3ext.h"

#include "config.h"
#include "query.h"
#include "scan.h"

/* gpu_query_partial(text, ...): user data a ga_scan_module;
** gpu_query_merge(a, ...) and gpu_query_partial_info(a): a ga_fn_data. */
void ga_query_partial_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_query_merge_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_query_partial_info_fn(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv);
/* What a partial of q with these parameter values records (partial_fns.c
** rule 3). */
uint64_t ga_query_sig(const ga_query *q, sqlite3_value *const *params, int np);
/* The groups of partial v into *out, for q with these parameter values on
** db: SQLITE_OK; SQLITE_NOMEM; SQLITE_INTERRUPT (db's interrupt or
** progress handler); SQLITE_ERROR with *err "gpu_query: ..." (not a
** partial, or one of another query, table, encoding, column declarations
** or key collations than here, or past group_bytes). */
int ga_query_from_partial(sqlite3 *db, sqlite3_value *v, const ga_query *q,
                          sqlite3_value *const *params, int np,
                          const ga_config *cfg, ga_scan_out *out, char **err);

#endif
