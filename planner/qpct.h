/*
** qpct.h — gpu_query's median and percentile calls (planner/qpct.c,
** issue 39 §2): where they stand in the text and the path they take.
*/
#ifndef GA_QPCT_H
#define GA_QPCT_H

#include "qtok.h"

/* The reason in last_scan.why when the text holds one (query.c rule 15). */
extern const char *const ga_qpct_why;

/* When token i (of n, text z) starts a call of gpu_median,
** gpu_percentile, gpu_percentile_cont or gpu_percentile_disc as an
** aggregate (not a window function: OVER after it), the token after the
** call and its FILTER clause; else -1. */
int ga_qpct_call(const char *z, const ga_qtok *t, int n, int i);

#endif
