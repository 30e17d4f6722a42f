/*
** cache_gpu_stat.h — gpu_query's variances, medians and percentiles on a
** GPU entry (issue 39; cache_gpu_stat.c says how, and why it is exact).
** cache_gpu_query.c calls ga_cgs_value for each value a variance or a
** median reads once its plain states are back, and ga_cgs_hand as it
** hands each group over.
*/
#ifndef GA_CACHE_GPU_STAT_H
#define GA_CACHE_GPU_STAT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "gak.h"
#include "scan_group.h"

/* Where a value's rows are on the device: the slices of the reduce
** (gak.h: gak_cache_reduce's positions), and on the host the output
** groups' slices (h_gr: group g's are first_slice .. + nslices). */
typedef struct ga_cgs_at {
  gak_ccol col;                    /* the value: a column, or a program's */
  const uint32_t *idx, *gid, *sel; /* device (gid, sel: few groups) */
  const gak_cslice *d_sl;          /* device */
  int64_t nsl;
  const gak_cgroup *h_gr; /* host */
  int64_t ngr;
} ga_cgs_at;

/* One query's results (zeroed before the first value; ga_cgs_free). */
typedef struct ga_cgs {
  int64_t ngr;
  uint32_t *d_slout;          /* device: each slice's output group (rule 1) */
  int64_t bytes;              /* host bytes charged to q->dist_cap (rule 4) */
  int64_t *sq[GA_MAX_STATES]; /* rule 2: ngr windows a value, normalised */
  double **pv[GA_MAX_STATES]; /* rule 3: each group's values (malloc) */
  int64_t *pn[GA_MAX_STATES]; /* and their counts, then ngr + 1 offsets */
  /* rule 3's selection: the picked values (sv), their places in the
  ** sorted runs (spos: group g's run starts at pn[i][ngr + 1 + g]), and
  ** group g's first pick (sfirst, ngr + 1 entries); NULL: pv instead */
  double *sv[GA_MAX_STATES];
  int64_t *spos[GA_MAX_STATES], *sfirst[GA_MAX_STATES];
  const char *method[GA_MAX_STATES]; /* what ran (GPUAGG_CACHE_PROFILE) */
} ga_cgs;

/* Value i of q (q->sq[i], or q->dist[i] == GA_DIST_PCT) over its groups'
** rows into st.  GA_SCAN_OK; GA_CACHE_DECLINED with why (past the cap, an
** infinity a median refuses); GA_SCAN_FALLBACK with why (a GPU step
** failed; nothing left in flight); GA_SCAN_NOMEM. */
int ga_cgs_value(ga_cache *c, const ga_cquery *q, int i, const ga_cgs_at *at,
                 ga_cgs *st, char *why, size_t nwhy);

/* Group g's Σx² windows and value sets for ga_gs_add_sq (nv values; NULL
** where the value keeps none): allocated here, owned by the callee.
** GA_SCAN_OK or GA_SCAN_NOMEM (nothing left allocated). */
int ga_cgs_hand(ga_cgs *st, int nv, int64_t g, ga_gsq **sqs, ga_dset **sets);

void ga_cgs_free(ga_cgs *st);

#endif
