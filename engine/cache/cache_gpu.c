/*
** cache_gpu.c — the column cache on the GPU: a load's device arrays
** (cache_gpu.h) and an entry's arrays; the queries on a GPU entry are
** cache_gpu_query.c's.
**
** Rules:
**   1. Every device call goes through ga_cuda_ok (so GPUAGG_FAULT can fail
**      it, and it is counted); allocations through ga_dev_alloc; the
**      caller's current device is restored (ga_dev_enter / ga_dev_leave).
**   2. A failed step returns GA_SCAN_FALLBACK: the caller takes the
**      uncached path (same answer) and drops the entry; nothing is left in
**      flight (the stream is drained before returning).
**   3. A query's answer is the exact states of its groups, merged on the
**      device; only those states come back (and two small arrays: the
**      count of passing rows, a grouped query's group bounds).
**   4. The whole-column shape (no filter, no group, no NULL in x) runs the
**      same gak_sum / gak_best as gpu_sum, over the cached column itself.
*/
#include <stdio.h>
#include <string.h>

#include "cache_gpu.h"
#include "cpu_reduce.h"
#include "gak.h"
#include "gpu.h"
#include "scan_group.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_step.h"

int64_t ga_cache_gpu_bytes(int ncols, int64_t cap) {
  return (int64_t)ncols * (cap * 8 + 2 * GA_BW(cap) * 8);
}

/* ---- a load's arrays ---- */

struct ga_cgpu {
  int dev, ncols;
  gak_stream stream;
  int64_t cap, rows; /* rows placed so far (in row order) */
  uint64_t **vals, **isint, **notnull;
  uint64_t *carry; /* per column: isint, notnull bits of the partial word */
  char why[200];
};

static int arrays_alloc(int ncols, int64_t cap, uint64_t **v, uint64_t **i,
                        uint64_t **nn) {
  for (int c = 0; c < ncols; c++) {
    if (!ga_dev_alloc((void **)&v[c], (size_t)cap * 8) ||
        !ga_dev_alloc((void **)&i[c], (size_t)GA_BW(cap) * 8) ||
        !ga_dev_alloc((void **)&nn[c], (size_t)GA_BW(cap) * 8))
      return 0;
  }
  return 1; /* 1: allocated */
}

static void arrays_free(int ncols, uint64_t **v, uint64_t **i, uint64_t **nn) {
  for (int c = 0; c < ncols; c++) {
    ga_cg_free(v[c]);
    ga_cg_free(i[c]);
    ga_cg_free(nn[c]);
    v[c] = i[c] = nn[c] = NULL;
  }
}

int ga_cgpu_begin(ga_cgpu **out, int ncols, int64_t cap, char *why,
                  size_t nwhy) {
  int prev;
  *out = NULL;
  ga_cgpu *g = sqlite3_malloc64(sizeof(*g));
  uint64_t **p = sqlite3_malloc64(sizeof(uint64_t *) * 3 * (size_t)ncols);
  uint64_t *carry = sqlite3_malloc64(sizeof(uint64_t) * 2 * (size_t)ncols);
  if (!g || !p || !carry) {
    sqlite3_free(g);
    sqlite3_free(p);
    sqlite3_free(carry);
    snprintf(why, nwhy, "out of memory");
    return GA_NOMEM;
  }
  memset(g, 0, sizeof(*g));
  memset(p, 0, sizeof(uint64_t *) * 3 * (size_t)ncols);
  memset(carry, 0, sizeof(uint64_t) * 2 * (size_t)ncols);
  g->ncols = ncols;
  g->vals = p;
  g->isint = p + ncols;
  g->notnull = p + 2 * ncols;
  g->carry = carry;
  g->dev = 0; /* the cache lives on the first usable device */
  *out = g;
  if (!ga_dev_enter(g->dev, &prev)) {
    snprintf(why, nwhy, "cannot use the GPU");
    return GA_CLOAD_EFAIL;
  }
  int ok = ga_stream_new((void **)&g->stream);
  if (ok)
    ok = arrays_alloc(ncols, cap, g->vals, g->isint, g->notnull);
  ga_dev_leave(prev);
  if (!ok) {
    snprintf(why, nwhy, "GPU memory for %lld rows could not be allocated",
             (long long)cap);
    return GA_CLOAD_EFAIL;
  }
  g->cap = cap;
  return GA_OK;
}

int64_t ga_cgpu_cap(const ga_cgpu *g) { return g->cap; }
const char *ga_cgpu_why(const ga_cgpu *g) { return g->why; }

int ga_cgpu_sync(ga_cgpu *g) {
  int prev, ok = 0;
  if (!g->stream)
    return GA_CLOAD_EFAIL;
  if (ga_dev_enter(g->dev, &prev)) {
    ok = ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(g->stream));
    if (!ok)
      gak_take_error();
    ga_dev_leave(prev);
  }
  return ok ? GA_OK : GA_CLOAD_EFAIL;
}

/* Copy rows [0, rows) of the old arrays into the new ones (device current,
** stream drained). */
static int copy_rows(ga_cgpu *g, uint64_t **v, uint64_t **i, uint64_t **nn,
                     int64_t rows) {
  for (int c = 0; c < g->ncols; c++) {
    if (rows > 0 &&
        (!ga_cuda_ok(
             GA_STAGE_H2D,
             gak_memcpy_d2d(v[c], g->vals[c], (size_t)rows * 8, g->stream)) ||
         !ga_cuda_ok(GA_STAGE_H2D,
                     gak_memcpy_d2d(i[c], g->isint[c], (size_t)GA_BW(rows) * 8,
                                    g->stream)) ||
         !ga_cuda_ok(GA_STAGE_H2D,
                     gak_memcpy_d2d(nn[c], g->notnull[c],
                                    (size_t)GA_BW(rows) * 8, g->stream))))
      return 0;
  }
  return ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(g->stream));
}

/* Replace the arrays by ones of cap rows holding the rows placed. */
static int resize(ga_cgpu *g, int64_t cap) {
  int prev, ok = 0;
  size_t np = sizeof(uint64_t *) * 3 * (size_t)g->ncols;
  uint64_t **p = sqlite3_malloc64(np);
  if (!p) {
    snprintf(g->why, sizeof g->why, "out of memory");
    return GA_NOMEM;
  }
  memset(p, 0, np);
  uint64_t **v = p, **i = p + g->ncols, **nn = p + 2 * g->ncols;
  if (ga_dev_enter(g->dev, &prev)) {
    ok = ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(g->stream)) &&
         arrays_alloc(g->ncols, cap, v, i, nn) &&
         copy_rows(g, v, i, nn, g->rows);
    if (ok)
      arrays_free(g->ncols, g->vals, g->isint, g->notnull);
    else {
      gak_stream_sync(g->stream);
      gak_take_error();
      arrays_free(g->ncols, v, i, nn);
    }
    ga_dev_leave(prev);
  }
  if (!ok) {
    sqlite3_free(p);
    snprintf(g->why, sizeof g->why,
             "GPU memory for %lld rows could not be allocated", (long long)cap);
    return GA_CLOAD_EFAIL;
  }
  sqlite3_free(g->vals);
  g->vals = v;
  g->isint = i;
  g->notnull = nn;
  g->cap = cap;
  return GA_OK;
}

int ga_cgpu_grow(ga_cgpu *g, int64_t cap) {
  return cap <= g->cap ? GA_OK : resize(g, cap);
}

/* The bitmap of b's n rows shifted to start at bit s of a word, with the
** previous partial word's bits or'ed into word 0; returns the words. */
static int64_t shift_bits(const uint64_t *src, int64_t n, int s, uint64_t carry,
                          uint64_t *out) {
  int64_t nw = GA_BW(s + n), sw = GA_BW(n);
  for (int64_t k = 0; k < nw; k++) {
    uint64_t lo = k < sw ? src[k] : 0;
    uint64_t w = s ? lo << s : lo;
    if (s && k > 0 && k - 1 < sw)
      w |= src[k - 1] >> (64 - s);
    out[k] = w;
  }
  /* bits past n in src are 0 (blocks are zeroed), so nothing stray */
  out[0] |= carry;
  return nw;
}

int ga_cgpu_place(ga_cgpu *g, ga_cblock *b, int64_t at) {
  int prev, ok = 0;
  if (at != g->rows || at + b->n > g->cap) {
    snprintf(g->why, sizeof g->why, "rows placed out of order");
    return GA_CLOAD_EFAIL;
  }
  int s = (int)(at & 63);
  int64_t w0 = at >> 6, run = GA_BW(b->cap) + 2;
  uint64_t *stage = ga_cb_stage(b);
  if (ga_dev_enter(g->dev, &prev)) {
    ok = 1;
    for (int c = 0; ok && c < g->ncols; c++) {
      uint64_t *si = stage + (size_t)(2 * c) * (size_t)run;
      uint64_t *sn = si + run;
      int64_t nw = shift_bits(ga_cb_isint(b, c), b->n, s, g->carry[2 * c], si);
      shift_bits(ga_cb_notnull(b, c), b->n, s, g->carry[2 * c + 1], sn);
      ok =
          ga_cuda_ok(GA_STAGE_H2D,
                     gak_memcpy_h2d(g->vals[c] + at, ga_cb_vals(b, c),
                                    (size_t)b->n * 8, g->stream)) &&
          ga_cuda_ok(GA_STAGE_H2D, gak_memcpy_h2d(g->isint[c] + w0, si,
                                                  (size_t)nw * 8, g->stream)) &&
          ga_cuda_ok(GA_STAGE_H2D, gak_memcpy_h2d(g->notnull[c] + w0, sn,
                                                  (size_t)nw * 8, g->stream));
      /* the last word is partial unless the rows end on a word boundary */
      int full = ((s + b->n) & 63) == 0;
      g->carry[2 * c] = full ? 0 : si[nw - 1];
      g->carry[2 * c + 1] = full ? 0 : sn[nw - 1];
    }
    if (!ok) {
      gak_stream_sync(g->stream);
      gak_take_error();
    }
    ga_dev_leave(prev);
  }
  if (!ok) {
    snprintf(g->why, sizeof g->why, "a copy to the GPU failed");
    return GA_CLOAD_EFAIL;
  }
  g->rows = at + b->n;
  return GA_OK;
}

int ga_cgpu_remap(ga_cgpu *g, int col, const uint32_t *map, int64_t nmap) {
  if (ga_cgpu_sync(g))
    return GA_CLOAD_EFAIL;
  int prev, ok = 0;
  if (!ga_dev_enter(g->dev, &prev)) {
    snprintf(g->why, sizeof g->why, "the GPU cannot be selected");
    return GA_CLOAD_EFAIL;
  }
  void *d_map = NULL;
  size_t bytes = (size_t)(nmap ? nmap : 1) * 4;
  ok = ga_cuda_ok(GA_STAGE_DALLOC, gak_malloc(&d_map, bytes)) &&
       ga_cuda_ok(GA_STAGE_H2D,
                  gak_memcpy_h2d(d_map, map, (size_t)nmap * 4, g->stream)) &&
       ga_cuda_ok(GA_STAGE_LAUNCH,
                  gak_cache_remap(g->vals[col], g->notnull[col], g->rows, d_map,
                                  nmap, g->stream)) &&
       ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(g->stream));
  if (!ok) { /* drained: the caller frees map once this returns */
    gak_stream_sync(g->stream);
    gak_take_error();
    snprintf(g->why, sizeof g->why, "the codes of a TEXT column failed");
  }
  ga_cg_free(d_map);
  ga_dev_leave(prev);
  return ok ? GA_OK : GA_CLOAD_EFAIL;
}

int ga_cgpu_finish(ga_cgpu *g, ga_centry *e, int64_t rows, int64_t *freed) {
  *freed = 0;
  if (rows != g->rows || ga_cgpu_sync(g)) {
    snprintf(g->why, sizeof g->why, "a copy to the GPU failed");
    return GA_CLOAD_EFAIL;
  }
  int64_t cap = rows > 0 ? rows : 1;
  if (g->cap > cap + cap / 4 + 65536) { /* give back what is not used */
    int64_t before = ga_cache_gpu_bytes(g->ncols, g->cap);
    if (resize(g, cap) == GA_OK)
      *freed = before - ga_cache_gpu_bytes(g->ncols, g->cap);
  }
  for (int c = 0; c < g->ncols; c++) {
    e->cols[c].d_vals = g->vals[c];
    e->cols[c].d_isint = g->isint[c];
    e->cols[c].d_notnull = g->notnull[c];
    g->vals[c] = g->isint[c] = g->notnull[c] = NULL;
  }
  e->dev = g->dev;
  e->free_dev = ga_cache_gpu_free_entry; /* cache.c rule 4 */
  return GA_OK;
}

void ga_cgpu_abort(ga_cgpu *g) {
  if (!g)
    return;
  int prev;
  if (ga_dev_enter(g->dev, &prev)) {
    if (g->stream) {
      gak_stream_sync(g->stream);
      gak_stream_destroy(g->stream);
      gak_take_error();
    }
    arrays_free(g->ncols, g->vals, g->isint, g->notnull);
    ga_dev_leave(prev);
  }
  sqlite3_free(g->vals);
  sqlite3_free(g->carry);
  sqlite3_free(g);
}

/* ---- entries ---- */

void ga_cache_gpu_free_entry(ga_centry *e) {
  int prev;
  if (!ga_dev_enter(e->dev, &prev))
    return;
  for (int c = 0; c < e->ncols; c++) {
    ga_ccol *k = &e->cols[c];
    ga_cg_free(k->d_vals);
    ga_cg_free(k->d_isint);
    ga_cg_free(k->d_notnull);
    ga_cg_free(k->d_dict);
    k->d_vals = k->d_isint = k->d_notnull = NULL;
    k->d_dict = NULL;
  }
  ga_dev_leave(prev);
}

void ga_cache_gpu_release(ga_cache *c) {
  int prev;
  if (c->dev < 0)
    return;
  if (ga_dev_enter(c->dev, &prev)) {
    if (c->stream) {
      gak_stream_sync(c->stream);
      gak_stream_destroy(c->stream);
    }
    ga_cg_free(c->d_scratch);
    gak_take_error();
    ga_dev_leave(prev);
  }
  c->stream = NULL;
  c->d_scratch = NULL;
  c->scratch_bytes = 0;
  c->dev = -1;
}
