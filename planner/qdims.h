/*
** qdims.h — gpu_query's star joins on the probe path (planner/qdims.c, its
** rules; issue 38, step 3.1): each dimension filtered and built once per
** call into a lookup (engine/scan/dims.h), the workers' texts reading the
** fact table alone and probing through gpuagg_dim_probe / gpuagg_dim_get.
*/
#ifndef GA_QDIMS_H
#define GA_QDIMS_H

#include "sqlite3ext.h"

#include "planner.h"
#include "qjoin.h"

struct ga_query;
typedef struct ga_qd ga_qd;

/* The probe plan of join j (of the text ztext, tokens ztok; emit writes
** the text's tokens, for the ON clauses) for q's workers' texts (q->keys,
** q->vals and the workers' filter, as planned): SQLITE_OK with *out set (its
*why not
** NULL: the workers keep SQLite's join, and why), or SQLITE_NOMEM. */
int ga_qd_plan(sqlite3 *db, const ga_qjoin *j, const struct ga_query *q,
               const char *ztext, const ga_qtok *ztok, ga_qj_emit emit,
               void *ectx, ga_qd **out);
const char *ga_qd_why(const ga_qd *qd);
void ga_qd_free(ga_qd *qd);

/* A parallel plan of parts p (whose texts are q's) gets the probe texts
** and the build (plan->dims, the scan's in_snapshot hook).  SQLITE_OK or
** SQLITE_NOMEM. */
int ga_qd_attach(const ga_qd *qd, const ga_target *t, const ga_parts *p,
                 const ga_parts *rows_parts, ga_plan *plan);

#endif
