/*
** qpct.h — gpu_query's median and percentile calls (planner/qpct.c,
** issue 39 §2): where they stand in the text and the path they take.
*/
#ifndef GA_QPCT_H
#define GA_QPCT_H

#include "sqlite3ext.h"

#include "pct.h"
#include "qtok.h"

/* The reason in last_scan.why when the text holds one (query.c rule 15). */
extern const char *const ga_qpct_why;

/* The GA_PCT_* of the call named at t (ga_qpct_call said it is one). */
int ga_qpct_fn(const char *z, const ga_qtok *t);

/* Rule 2: P, tokens [a, b), as a constant fraction of function fn:
** SQLITE_OK with *frac; SQLITE_DONE where P is no constant (a column, a
** parameter, a function) or its fraction lies outside [0, 1] (the serial
** path: SQLite decides, row by row); SQLITE_NOMEM. */
int ga_qpct_frac(sqlite3 *db, const char *z, const ga_qtok *t, int a, int b,
                 int fn, double *frac);

/* When token i (of n, text z) starts a call of gpu_median,
** gpu_percentile, gpu_percentile_cont or gpu_percentile_disc as an
** aggregate (not a window function: OVER after it), the token after the
** call and its FILTER clause; else -1. */
int ga_qpct_call(const char *z, const ga_qtok *t, int n, int i);

#endif
