/*
** qvar.h — gpu_query and the exact variance (issue 39): which calls of a
** text are gpu_var_samp, gpu_var_pop, gpu_stddev_samp, gpu_stddev_pop,
** gpu_variance or gpu_stddev (qvar.c), and what such a call asks of the
** paths (query.c rule 15).
*/
#ifndef GA_QVAR_H
#define GA_QVAR_H

#include "gstate.h"
#include "query.h"

/* The groups table's op of a variance call (query.h's GA_Q_* space):
** GA_Q_VAR + xvar.h's GA_VAR_SAMP .. GA_SD_POP, ga_gstate_result's ops. */
#define GA_Q_VAR GA_GSTATE_VAR

/* Is the name z[0..len) one of the six (ASCII case-insensitive)?  0, or
** 1 + its form (xvar.h's GA_VAR_SAMP .. GA_SD_POP). */
int ga_qvar_is(const char *z, int len);

/* A variance call of q (dist: DISTINCT): what q's paths can do with it
** (qvar.c rules 2 to 4). */
void ga_qvar_mark(ga_query *q, int dist);

#endif
