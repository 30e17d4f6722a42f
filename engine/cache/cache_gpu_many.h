/*
** cache_gpu_many.h — many groups on a GPU entry (cache_gpu_many.c, issue
** 37): the bounds and the charge of engine/cache/cache_gpu_query.c's rules
** 9 and 10.
*/
#ifndef GA_CACHE_GPU_MANY_H
#define GA_CACHE_GPU_MANY_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "gak.h"

/* Rule 10: the most key ids of a GPU query (the sorted layout's bounds take
** 8 bytes an id); a column's group dictionary is kept up to as many. */
#define GA_CQ_MANY_MAX_IDS ((int64_t)1 << 25)

/* Rule 9's order by count(*) or count() (ga_cquery.topk_count): a mode
** beside kernels/gak.h's GAK_ORDER_*, which gak_cache_group_count serves. */
#define GA_CQ_ORDER_COUNT 4

/* Rule 10: key ids past which a query is one of many groups
** (GPUAGG_CACHE_MANY_IDS, read at each query, sets it lower for tests). */
int64_t ga_cq_many_ids(void);

/* Rule 9: key ids past which a top-k query takes the path: sum() and
** total() past GA_CACHE_MAX_GROUPS, count past GA_CQ_TOPK_COUNT_IDS;
** GPUAGG_CACHE_TOPK_IDS sets both lower for tests. */
int64_t ga_cq_topk_min_ids(int count);

/* Rule 10's charge: a many query's device scratch (dev bytes) and, once its
** groups with rows are known (ngr; 0 before), what they take on the host
** (shape: the output groups'), against q->dist_cap (group_bytes).  1 when
** it fits; 0 with why (the cache declines). */
int ga_cq_many_fits(const ga_cquery *q, const ga_gshape *shape, int64_t dev,
                    int64_t ngr, char *why, size_t nwhy);

/* Rule 4: one(arg, g, sts) for every group g < ngr (sts: room for nv
** states, the calling thread's own), on several threads where par (a many
** query) and the groups are many; the caller's thread polls q's interrupt
** (rule 5).  GA_SCAN_OK; GA_SCAN_INTERRUPT; or GA_SCAN_NOMEM when a call
** or a thread's room failed. */
int ga_cq_hand_groups(const ga_cquery *q, int64_t ngr, int nv, int par,
                      int (*one)(void *arg, int64_t g, ga_xstate *sts),
                      void *arg);

/* Rule 5: whether value i of q may take the compact states (no min, max
** or DISTINCT reads it; GPUAGG_CACHE_MANY_COMPACT=0: never). */
int ga_cq_compact_on(const ga_cquery *q, int i);
/* Rule 5: each of the ngr groups' [start, end) in the sorted layout, from
** its slices, into bounds (2 * ngr). */
void ga_cq_compact_bounds(const gak_cslice *sl, const gak_cgroup *gr,
                          int64_t ngr, uint32_t *bounds);
/* Rule 5: a group's engine state from its compact state and its rows. */
void ga_cq_compact_xstate(ga_xstate *st, const gak_cmany *cm, int64_t rows);

#endif
