/*
** cache_gpu_many.c — many groups on a GPU entry (issue 37: bench/
** query_bench.py's d4, 2e6 parts at 6e7 rows, and d5, the top 10 of
** 100,000 suppliers by count(*)): the bounds and the charge of
** engine/cache/cache_gpu_query.c's rules 9 and 10.
**
** Rules:
**   1. A GPU query of more than GA_CACHE_MAX_GROUPS key ids (the product of
**      its keys' dense ids, NULL included) is "many" (rule 10 there) up to
**      GA_CQ_MANY_MAX_IDS; GPUAGG_CACHE_MANY_IDS (read at each query, 1 ..
**      GA_CACHE_MAX_GROUPS) sets the bound lower, so that a test's small
**      table takes the same steps, counters and charges.
**   2. The charge (ga_cq_many_fits): a many query's scratch on the device
**      (every array carved for it: per row, per id, per group) with the
**      host's copy of the groups' bounds (8 bytes an id) and then,
**      once the groups with rows are known, what each such group takes on
**      the host while the answer is made: its exact states as they come
**      back (a gak_cstate a value), its keys (a gak_cval each), its first
**      row, and its group in the shared groups as gpu_query's scan counts
**      one (GA_GROUP_FIXED_BYTES plus 32 bytes of slot).  One tally
**      against group_bytes (ga_cquery.dist_cap, the cap of gpu_query's
**      scan over the same groups); past it the cache declines, and says
**      how many bytes and how to raise the cap.  0 or less: no cap.
**   3. Top k by count (rule 9 there, ga_cquery.topk_count): a count is
**      exact and cheap to order (kernels/cache_many.cu), so the path pays
**      from GA_CQ_TOPK_COUNT_IDS key ids on, where shipping every group's
**      states and letting SQLite order them (d5: 100,000 groups, two
**      values) costs more than one sort of the groups' keys.
*/
#include <stdio.h>
#include <stdlib.h>

#include "cache_gpu_many.h"
#include "gak.h"

/* Rule 3: key ids past which a top k by count takes rule 9's path. */
#define GA_CQ_TOPK_COUNT_IDS ((int64_t)4096)

static int64_t knob(const char *name, int64_t dflt) {
  const char *z = getenv(name);
  int64_t v = z ? atoll(z) : 0;
  return v >= 1 && v < dflt ? v : dflt;
}

int64_t ga_cq_many_ids(void) {
  return knob("GPUAGG_CACHE_MANY_IDS", GA_CACHE_MAX_GROUPS);
}

int64_t ga_cq_topk_min_ids(int count) {
  return knob("GPUAGG_CACHE_TOPK_IDS",
              count ? GA_CQ_TOPK_COUNT_IDS : GA_CACHE_MAX_GROUPS);
}

int ga_cq_many_fits(const ga_cquery *q, const ga_gshape *shape, int64_t dev,
                    int64_t ngr, char *why, size_t nwhy) {
  int nkc = q->nkeys + q->ncarry;
  int64_t one = (int64_t)q->nvals * (int64_t)sizeof(gak_cstate) +
                (int64_t)nkc * (int64_t)sizeof(gak_cval) + 4 +
                GA_GROUP_FIXED_BYTES(shape) + 32;
  int64_t cap = q->dist_cap;
  if (cap <= 0 || (dev <= cap && ngr <= (cap - dev) / one))
    return 1;
  double need = (double)dev + (double)ngr * (double)one;
  snprintf(why, nwhy,
           "%lld groups on the GPU would take %.0f bytes, past group_bytes "
           "(%lld): raise it (SELECT gpuagg_config('group_bytes', ...))",
           (long long)ngr, need, (long long)cap);
  return 0;
}
