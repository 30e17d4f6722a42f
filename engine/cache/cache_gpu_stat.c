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
**      per group on the device (gak_cache_pct_sort: ascending, -0.0 before
**      0.0).  Then only the order statistics the query's medians and
**      percentiles read come back: from each group's count the host
**      computes the ranks each ask (ga_cquery.pct_ask: its function and
**      constant fraction) reads with pct.c's own ga_pct_ranks (i1, and
**      i2 for a blend; one for _disc), a kernel copies the values at
**      those places (gak_cache_pct_pick), and the group's set holds them
**      with their ranks (pct.c rule 7): the groups table answers with
**      pct.c's ga_pct_blend, so every answer is the uncached path's, bit
**      for bit (the sorted order is rule 4's order of zeros).  A 4-group
**      median brings back at most 8 values, not the column.  The whole
**      runs come back instead (into the group's set, dset.h rule 6,
**      where the selection runs on the host) where the picks serve no
**      better: a value without asks (no gpu_query aggregate names it),
**      or no fewer places than values (groups of one or two values).
**      gpuagg_info's cache.pct_values_back counts the values that came
**      back, pct_selected the values answered by the picks.  An infinity
**      among the values declines: SQLite's percentile raises an error,
**      which the uncached path gives.
**   4. Memory: the host bytes that come back are charged to q->dist_cap
**      (group_bytes) before anything is allocated: 32 a pick (its value
**      and place, then the group's value and rank) and 8 a group, or 8 a
**      value where the runs come back whole; sizeof(ga_gsq) a group's
**      window.  Past it the entry declines and says so (the workers
**      answer, under the same cap).  The device arrays are the query's
**      own (ga_dev_alloc), freed before returning; no room declines too.
**      Values past 2^31 decline (CUB's item counts).
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

/* Rule 3: r[0..k) := the ranks (0-based, ascending, distinct) that value
** i's medians and percentiles read in a group of n > 0 values (pct.c's
** ga_pct_ranks, the uncached path's own); k, or -1 when there is no ask
** or a rank falls outside the group (the whole run serves then). */
static int ranks_of(const ga_cquery *q, int i, int64_t n, int64_t *r) {
  int k = 0;
  for (int a = 0; a < q->npct_ask; a++) {
    const ga_pct_ask *w = &q->pct_ask[a];
    if (w->val != i)
      continue;
    double ix;
    size_t rk[2];
    ga_pct_ranks(w->fn, w->frac, (size_t)n, &ix, &rk[0], &rk[1]);
    for (int t = 0; t < (rk[1] != rk[0] ? 2 : 1); t++) {
      if (rk[t] >= (size_t)n)
        return -1;
      int at = k;
      while (at > 0 && r[at - 1] > (int64_t)rk[t])
        at--;
      if (at > 0 && r[at - 1] == (int64_t)rk[t])
        continue; /* asked already */
      memmove(r + at + 1, r + at, sizeof(int64_t) * (size_t)(k - at));
      r[at] = (int64_t)rk[t];
      k++;
    }
  }
  return k ? k : -1;
}

/* Rule 3: the places (in the sorted runs) value i's asks read, over every
** group: their count, or -1 where the whole runs serve (no ask, a rank
** outside a group, or no fewer places than values).  pos, first not NULL:
** the places and each group's first, written. */
static int64_t places(const ga_cquery *q, int i, const int64_t *cnt,
                      const int64_t *off, int64_t ngr, int64_t total,
                      int64_t *pos, int64_t *first) {
  int64_t r[2 * GA_CQ_MAX_PCT_ASKS], npos = 0;
  for (int64_t g = 0; g < ngr; g++) {
    if (first)
      first[g] = npos;
    if (!cnt[g])
      continue;
    int k = ranks_of(q, i, cnt[g], r);
    if (k < 0)
      return -1;
    for (int t = 0; pos && t < k; t++)
      pos[npos + t] = off[g] + r[t];
    npos += k;
  }
  if (first)
    first[ngr] = npos;
  return npos < total ? npos : -1;
}

/* Rule 3. */
static int pct_value(ga_cache *c, const ga_cquery *q, int i,
                     const ga_cgs_at *at, ga_cgs *st, char *why, size_t nwhy) {
  int64_t ngr = at->ngr, total = 0;
  int64_t *h_cnt = NULL, *h_off = NULL, *d_cnt = NULL, *d_cur = NULL;
  int64_t *h_pos = NULL, *h_first = NULL, *d_pos = NULL;
  double *d_v = NULL, *d_t = NULL, **pv = NULL, *h_sv = NULL;
  void *d_sc = NULL;
  int rc = GA_SCAN_FALLBACK;
  h_cnt = sqlite3_malloc64(sizeof(int64_t) * (size_t)(ngr + 1) * 2);
  if (!h_cnt) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
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
  /* rule 3: the order statistics alone, where they are fewer */
  int64_t npos = places(q, i, h_cnt, h_off, ngr, total, NULL, NULL);
  int64_t back = npos >= 0 ? npos * 32 + (ngr + 1) * 8 : total * 8;
  if (!charge(st, q, back, "a median or percentile", why, nwhy)) {
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  if (npos >= 0) {
    h_pos = sqlite3_malloc64(sizeof(int64_t) * (size_t)(npos ? npos : 1));
    h_first = sqlite3_malloc64(sizeof(int64_t) * (size_t)(ngr + 1));
    h_sv = sqlite3_malloc64(sizeof(double) * (size_t)(npos ? npos : 1));
  } else {
    pv = sqlite3_malloc64(sizeof(double *) * (size_t)(ngr ? ngr : 1));
    if (pv)
      memset(pv, 0, sizeof(double *) * (size_t)(ngr ? ngr : 1));
  }
  if (npos >= 0 ? !h_pos || !h_first || !h_sv : !pv) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
  size_t scb = gak_cache_pct_sort_scratch(total, ngr);
  size_t vb = ((size_t)(total ? total : 1) * 16 + 255) & ~(size_t)255;
  size_t pb =
      npos >= 0 ? ((size_t)(npos ? npos : 1) * 8 + 255) & ~(size_t)255 : 0;
  if (!ga_dev_alloc((void **)&d_v, vb + pb + scb)) {
    snprintf(why, nwhy, "no GPU memory for a median's values");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  d_t = d_v + (total ? total : 1);
  d_pos = npos >= 0 ? (int64_t *)((char *)d_v + vb) : NULL;
  d_sc = (char *)d_v + vb + pb; /* 256-aligned, as CUB's scratch wants */
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
  if (npos >= 0) { /* rule 3: the picks, into d_t (free after the sort) */
    places(q, i, h_cnt, h_off, ngr, total, h_pos, h_first);
    if (npos) {
      STEP(GA_STAGE_H2D,
           gak_memcpy_h2d(d_pos, h_pos, sizeof(int64_t) * (size_t)npos,
                          c->stream));
      STEP(GA_STAGE_LAUNCH,
           gak_cache_pct_pick(d_v, total, d_pos, npos, d_t, c->stream));
      STEP(GA_STAGE_D2H,
           gak_memcpy_d2h(h_sv, d_t, sizeof(double) * (size_t)npos, c->stream));
    }
  } else {
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
  }
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  st->pn[i] = h_cnt;
  h_cnt = NULL;
  if (npos >= 0) {
    st->sv[i] = h_sv;
    st->spos[i] = h_pos;
    st->sfirst[i] = h_first;
    h_sv = NULL;
    h_pos = h_first = NULL;
    c->pct_selected++; /* gpuagg_info (tests) */
  } else {
    st->pv[i] = pv;
    pv = NULL;
  }
  c->pct_values_back += npos >= 0 ? npos : total;
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
  sqlite3_free(h_pos);
  sqlite3_free(h_first);
  sqlite3_free(h_sv);
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
    if (st->sv[i] && st->pn[i][g]) { /* rule 3: the picks (pct.c rule 7) */
      int64_t a = st->sfirst[i][g], k = st->sfirst[i][g + 1] - a;
      int64_t run = st->pn[i][st->ngr + 1 + g];
      double *v = malloc(sizeof(double) * (size_t)(k ? k : 1));
      size_t *rk = malloc(sizeof(size_t) * (size_t)(k ? k : 1));
      if (!v || !rk || ga_dset_pct_push(&sets[i], st->sv[i][a])) {
        free(v);
        free(rk);
        goto nomem;
      }
      for (int64_t t = 0; t < k; t++) {
        v[t] = st->sv[i][a + t];
        rk[t] = (size_t)(st->spos[i][a + t] - run);
      }
      ga_pct *p = &sets[i]->pct;
      free(p->v);
      p->v = v;
      p->at = rk;
      p->n = p->cap = (size_t)k;
      p->of = (size_t)st->pn[i][g];
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
    sqlite3_free(st->sv[i]);
    sqlite3_free(st->spos[i]);
    sqlite3_free(st->sfirst[i]);
  }
  memset(st, 0, sizeof(*st));
}
