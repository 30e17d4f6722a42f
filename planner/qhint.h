/*
** qhint.h — what gpu_query's refusals of a function point to
** (planner/qhint.c).
*/
#ifndef GA_QHINT_H
#define GA_QHINT_H

/* The rewrite that runs, or what exists, for a function name gpu_query
** does not run as an aggregate (median, variance, group_concat, ...), or
** NULL. */
const char *ga_qhint(const char *name);

#endif
