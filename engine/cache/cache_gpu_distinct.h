/*
** cache_gpu_distinct.h — gpu_query's DISTINCT aggregates on a GPU entry
** (cache_gpu_distinct.c says how, and why it is exact).
** cache_gpu_query.c asks ga_cgd_takes when it plans, and calls
** ga_cgd_value for each DISTINCT value once its plain states are back.
*/
#ifndef GA_CACHE_GPU_DISTINCT_H
#define GA_CACHE_GPU_DISTINCT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "gak.h"

/* Rule 1's static part: 1, or 0 with why (the entry declines). */
int ga_cgd_takes(const ga_centry *e, const ga_cquery *q, char *why,
                 size_t nwhy);

/* Where a DISTINCT value's rows are on the device (gak.h's positions). */
typedef struct ga_cgd_at {
  gak_ccol col;                    /* the value: a column, or a program's */
  const uint32_t *idx, *gid, *sel; /* device */
  int64_t m;                       /* positions */
  int64_t ngroups;                 /* group ids */
  const uint32_t *ids;             /* host: output group g's id */
  int64_t ngr;                     /* output groups */
} ga_cgd_at;

/* The output groups' ids (cache_gpu_query.c's slices): few groups, tagged
** by id; grouped, the groups with rows in id order; else 0. */
void ga_cgd_ids(int few, int grouped, const uint32_t *h_se, int64_t ngroups,
                const gak_cslice *h_sl, const gak_cgroup *h_gr, int64_t ngr,
                uint32_t *ids);

/* Value i's DISTINCT count (and sum, where a sum, total or avg reads it)
** into each output group's state st[0 .. at->ngr), over what the plain
** reduce left there.  GA_SCAN_OK; GA_CACHE_DECLINED with why; GA_SCAN_
** FALLBACK with why (a GPU step failed; nothing left in flight);
** GA_SCAN_NOMEM. */
int ga_cgd_value(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                 const ga_cgd_at *at, gak_cstate *st, char *why, size_t nwhy);

#endif
