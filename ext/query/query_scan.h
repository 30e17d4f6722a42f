/*
** query_scan.h — gpu_query's parallel scan (query_scan.c), for the table
** (query_vtab.c) and for partials (partial_fns.c).
*/
#ifndef GA_QUERY_SCAN_H
#define GA_QUERY_SCAN_H

#include "sqlite3ext.h"

#include "glue.h"
#include "planner.h"

/* The parallel scan of plan on the module's pools: SQLITE_OK with out
** filled; SQLITE_OK with *why set and out empty (the plan or the scan
** declined); SQLITE_NOMEM or SQLITE_INTERRUPT. */
int ga_query_scan(ga_scan_module *m, sqlite3 *db, ga_plan *plan,
                  ga_scan_out *out, char *why, size_t n);
/* last_scan after a parallel answer of out. */
void ga_query_last_parallel(ga_scan_last *last, const ga_scan_out *out,
                            const ga_plan *plan, int nvals);

#endif
