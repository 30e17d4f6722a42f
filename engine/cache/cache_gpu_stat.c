/*
** cache_gpu_stat.c — gpu_query's variances, medians and percentiles on a
** GPU entry (issue 39), through kernels/cache_stat.cu.
**
** SQL interface: gpu_var_samp/_pop, gpu_stddev_samp/_pop, gpu_variance,
** gpu_stddev, gpu_median and gpu_percentile[_cont|_disc] (constant P) in a
** gpu_query text whose table has a GPU entry (gpu_cache(..., 'gpu')): the
** entry answers them, grouped or not, with a WHERE and FILTER as its other
** aggregates (cache_gpu_query.c rule 13).
**
** Rules:
**   1. A value is read as cache_gpu_query.c's reduce reads it: over the
**      same slices (sorted layout, or few groups in place with their ids
**      and the filter's bits), each slice one output group's (d_slout,
**      made here from the groups' slices once a query).
**   2. Variance: Σx and the counts are the value's plain state (the
**      reduce's exact sum); gak_cache_sq adds Σx² (xvar.h rule 2's window)
**      of each group on the device, exactly; the host normalises it
**      (ga_var_normalize) into the group's ga_gsq (gstate.h rule 8), so
**      the groups table answers with xvar.c's one rounding: the same bits
**      as every other path.  Each group's window costs sizeof(ga_gsq) on
**      the host and GA_XSQ_DIGITS * 8 bytes on the device.
**   3. Medians and percentiles: each group's non-NULL values, counted
**      (gak_cache_pct_count), gathered as doubles (an INTEGER as C's
**      (double), as engine/scan/scan_group.c's ga_pct_gstep) and sorted
**      per group on the device (gak_cache_pct_sort), come back whole into
**      the group's set (dset.h rule 6): the groups table selects over them
**      with SQLite's interpolation (engine/reduce/pct.c), so every answer
**      is the uncached path's, bit for bit.  An infinity among them
**      declines: SQLite's percentile raises an error, which the uncached
**      path gives.
**   4. Memory: the host bytes that come back (8 a value, sizeof(ga_gsq) a
**      group's window) are charged to q->dist_cap (group_bytes) before
**      anything is allocated; past it the entry declines and says so (the
**      workers answer, under the same cap).  The device arrays are the
**      query's own (ga_dev_alloc), freed before returning; no room
**      declines too.  Values past 2^31 decline (CUB's item counts).
**   5. A failed step drains the stream before any host buffer a copy
**      reads is freed (cache_gpu_query.c rule 2).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gak.h"
#include "gpu.h"
#include "sqlite3ext.h"
#include "xvar.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_step.h"

#include "cache.h"
#include "cache_gpu_stat.h"

#define STEP GA_CG_STEP

/* Rule 4: 1 when bytes more fit under the cap, else 0 with why. */
static int charge(ga_cgs *st, const ga_cquery *q, int64_t bytes,
                  const char *what, char *why, size_t nwhy) {
  if (q->dist_cap <= 0 || st->bytes + bytes <= q->dist_cap) {
    st->bytes += bytes;
    return 1;
  }
  snprintf(why, nwhy,
           "%s on the GPU entry would keep %lld bytes, past group_bytes "
           "(%lld): the workers answer it",
           what, (long long)(st->bytes + bytes), (long long)q->dist_cap);
  return 0;
}

/* Rule 1: each slice's output group, on the device. */
static int slout(ga_cache *c, const ga_cgs_at *at, ga_cgs *st, char *why,
                 size_t nwhy) {
  uint32_t *h = NULL;
  if (st->d_slout)
    return GA_SCAN_OK;
  st->ngr = at->ngr;
  h = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(at->nsl ? at->nsl : 1));
  if (!h)
    return GA_SCAN_NOMEM;
  for (int64_t g = 0; g < at->ngr; g++)
    for (uint32_t k = 0; k < at->h_gr[g].nslices; k++) {
      int64_t j = (int64_t)at->h_gr[g].first_slice + k;
      if (j >= 0 && j < at->nsl)
        h[j] = (uint32_t)g;
    }
  if (!ga_dev_alloc((void **)&st->d_slout,
                    sizeof(uint32_t) * (size_t)(at->nsl ? at->nsl : 1))) {
    sqlite3_free(h);
    snprintf(why, nwhy, "no GPU memory for a variance or median");
    return GA_CACHE_DECLINED;
  }
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(st->d_slout, h, sizeof(uint32_t) * (size_t)at->nsl,
                      c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  sqlite3_free(h);
  return GA_SCAN_OK;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  sqlite3_free(h);
  return GA_SCAN_FALLBACK;
}

/* Rule 2. */
static int sq_value(ga_cache *c, const ga_cquery *q, int i, const ga_cgs_at *at,
                    ga_cgs *st, char *why, size_t nwhy) {
  size_t win = sizeof(int64_t) * GA_XSQ_DIGITS * (size_t)at->ngr;
  int64_t *d = NULL, *h = NULL;
  static ga_var_partial zero;
  if (!charge(st, q, (int64_t)sizeof(ga_gsq) * at->ngr, "a variance", why,
              nwhy))
    return GA_CACHE_DECLINED;
  h = sqlite3_malloc64(win ? win : 8);
  if (!h)
    return GA_SCAN_NOMEM;
  if (!ga_dev_alloc((void **)&d, win ? win : 8)) {
    sqlite3_free(h);
    snprintf(why, nwhy, "no GPU memory for a variance's sums of squares");
    return GA_CACHE_DECLINED;
  }
  STEP(GA_STAGE_LAUNCH,
       gak_cache_sq(at->col, at->idx, at->gid, at->sel, at->d_sl, st->d_slout,
                    at->nsl, at->ngr, d, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(h, d, win, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  ga_cg_free(d);
  for (int64_t g = 0; g < at->ngr; g++) { /* the host's normal form */
    ga_var_partial p = zero;
    int64_t *w = h + (size_t)g * GA_XSQ_DIGITS;
    memcpy(p.sq, w, sizeof(p.sq));
    ga_var_normalize(&p);
    memcpy(w, p.sq, sizeof(p.sq));
  }
  st->sq[i] = h;
  st->method[i] = "stat-sq";
  return GA_SCAN_OK;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  ga_cg_free(d);
  sqlite3_free(h);
  return GA_SCAN_FALLBACK;
}

/* Rule 3. */
static int pct_value(ga_cache *c, const ga_cquery *q, int i,
                     const ga_cgs_at *at, ga_cgs *st, char *why, size_t nwhy) {
  int64_t ngr = at->ngr, total = 0;
  int64_t *h_cnt = NULL, *h_off = NULL, *d_cnt = NULL, *d_cur = NULL;
  double *d_v = NULL, *d_t = NULL, **pv = NULL;
  void *d_sc = NULL;
  int rc = GA_SCAN_FALLBACK;
  h_cnt = sqlite3_malloc64(sizeof(int64_t) * (size_t)(ngr + 1) * 2);
  pv = sqlite3_malloc64(sizeof(double *) * (size_t)(ngr ? ngr : 1));
  if (!h_cnt || !pv) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
  memset(pv, 0, sizeof(double *) * (size_t)(ngr ? ngr : 1));
  h_off = h_cnt + ngr + 1;
  if (!ga_dev_alloc((void **)&d_cnt, sizeof(int64_t) * (size_t)(ngr + 1) * 3)) {
    snprintf(why, nwhy, "no GPU memory for a median's values");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  d_cur = d_cnt + 2 * (ngr + 1);
  STEP(GA_STAGE_LAUNCH,
       gak_cache_pct_count(at->col, at->idx, at->gid, at->sel, at->d_sl,
                           st->d_slout, at->nsl, ngr, d_cnt, c->stream));
  STEP(GA_STAGE_D2H,
       gak_memcpy_d2h(h_cnt, d_cnt, sizeof(int64_t) * (size_t)(ngr + 1),
                      c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  for (int64_t g = 0; g <= ngr; g++) {
    if (h_cnt[g] < 0 || total > INT64_MAX - h_cnt[g]) {
      snprintf(why, nwhy, "a GPU step failed (a median's count)");
      goto fail;
    }
    h_off[g] = total;
    total += g < ngr ? h_cnt[g] : 0;
  }
  if (h_cnt[ngr]) { /* rule 3: SQLite's percentile raises an error */
    snprintf(why, nwhy,
             "a median or percentile over an infinity: SQLite reports it");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  if (total > INT32_MAX) {
    snprintf(why, nwhy, "a median over more than 2^31 values on the GPU");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  if (!charge(st, q, total * 8, "a median or percentile", why, nwhy)) {
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  size_t scb = gak_cache_pct_sort_scratch(total, ngr);
  size_t vb = ((size_t)(total ? total : 1) * 16 + 255) & ~(size_t)255;
  if (!ga_dev_alloc((void **)&d_v, vb + scb)) {
    snprintf(why, nwhy, "no GPU memory for a median's values");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  d_t = d_v + (total ? total : 1);
  d_sc = (char *)d_v + vb; /* 256-aligned, as CUB's scratch wants */
  int64_t *d_off = d_cnt + ngr + 1;
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_off, h_off, sizeof(int64_t) * (size_t)(ngr + 1),
                      c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_pct_gather(at->col, at->idx, at->gid, at->sel, at->d_sl,
                            st->d_slout, at->nsl, ngr, d_off, d_cur, d_v,
                            c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_pct_sort(d_v, d_t, d_off, h_off, ngr, total, d_sc, c->stream));
  for (int64_t g = 0; g < ngr; g++) {
    if (!h_cnt[g])
      continue;
    pv[g] = malloc(sizeof(double) * (size_t)h_cnt[g]); /* ga_pct's own */
    if (!pv[g]) {
      rc = GA_SCAN_NOMEM;
      goto fail;
    }
    STEP(GA_STAGE_D2H,
         gak_memcpy_d2h(pv[g], d_v + h_off[g],
                        sizeof(double) * (size_t)h_cnt[g], c->stream));
  }
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  st->pv[i] = pv;
  st->pn[i] = h_cnt;
  pv = NULL;
  h_cnt = NULL;
  st->method[i] =
      ngr > GAK_PCT_SORT_EACH ? "stat-pct-segsort" : "stat-pct-sort";
  rc = GA_SCAN_OK;
  goto done;
fail:
  gak_stream_sync(c->stream); /* rule 5 */
  gak_take_error();
done:
  ga_cg_free(d_cnt);
  ga_cg_free(d_v);
  for (int64_t g = 0; pv && g < ngr; g++)
    free(pv[g]);
  sqlite3_free(pv);
  sqlite3_free(h_cnt);
  return rc;
}

int ga_cgs_value(ga_cache *c, const ga_cquery *q, int i, const ga_cgs_at *at,
                 ga_cgs *st, char *why, size_t nwhy) {
  int rc = slout(c, at, st, why, nwhy);
  if (rc != GA_SCAN_OK)
    return rc;
  if (q->dist[i] == GA_DIST_PCT)
    return pct_value(c, q, i, at, st, why, nwhy);
  return q->sq[i] ? sq_value(c, q, i, at, st, why, nwhy) : GA_SCAN_OK;
}

int ga_cgs_hand(ga_cgs *st, int nv, int64_t g, ga_gsq **sqs, ga_dset **sets) {
  for (int i = 0; i < nv; i++) {
    sqs[i] = NULL;
    sets[i] = NULL;
  }
  for (int i = 0; i < nv; i++) {
    if (st->sq[i]) {
      if (!(sqs[i] = sqlite3_malloc64(sizeof(ga_gsq))))
        goto nomem;
      memcpy(sqs[i]->d, st->sq[i] + (size_t)g * GA_XSQ_DIGITS,
             sizeof(sqs[i]->d));
      sqs[i]->adds = 0; /* normalised */
    }
    if (st->pv[i] && st->pn[i][g]) { /* dset.h rule 6: the values move */
      if (ga_dset_pct_push(&sets[i], st->pv[i][g][0]))
        goto nomem;
      ga_pct *p = &sets[i]->pct;
      free(p->v);
      p->v = st->pv[i][g];
      p->n = p->cap = (size_t)st->pn[i][g];
      st->pv[i][g] = NULL;
    }
  }
  return GA_SCAN_OK;
nomem:
  for (int i = 0; i < nv; i++) {
    sqlite3_free(sqs[i]);
    ga_dset_free(sets[i]);
    sqs[i] = NULL;
    sets[i] = NULL;
  }
  return GA_SCAN_NOMEM;
}

void ga_cgs_free(ga_cgs *st) {
  ga_cg_free(st->d_slout);
  for (int i = 0; i < GA_MAX_STATES; i++) {
    sqlite3_free(st->sq[i]);
    for (int64_t g = 0; st->pv[i] && g < st->ngr; g++)
      free(st->pv[i][g]);
    sqlite3_free(st->pv[i]);
    sqlite3_free(st->pn[i]);
  }
  memset(st, 0, sizeof(*st));
}
