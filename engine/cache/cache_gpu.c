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
**   5. An extension (issue 40 part 4, cache_append.h rule 5) takes an
**      entry's arrays back as a load's (ga_cgpu_adopt: rows placed = the
**      entry's rows, capacity = its d_cap, each bitmap's last partial word
**      read back as the carried word, masked to its rows), so the new rows
**      are placed exactly as a load places its blocks, and grown (a new
**      allocation, the old rows copied device to device) only when the
**      room is too small.  A failed step leaves the arrays with the
**      ga_cgpu (freed by its abort): the caller drops the entry.
**   6. ga_cache_gpu_fetch reads rows back (the proof's comparison of the
**      last leaves' rows, cache_append.h) on a stream of its own: the
**      arrays are never written while a caller holds a reference
**      (cache.h rule 6), so it may read them while queries run.
**   7. A column's group dictionary (d_dict, cache_gpu_query.c
**      dictionary()) is its distinct values: an extension forgets it
**      (ga_cache_gpu_forget_dicts: freed, dict_state 0, also where it was
**      -1, "cannot group": the new rows may change that), and the next
**      query builds it again from every row.
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

/* A stager of ncols columns on device dev, holding nothing yet: *out, or
** GA_NOMEM (why says so). */
static int cgpu_new(ga_cgpu **out, int ncols, int dev, char *why, size_t nwhy) {
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
  g->dev = dev;
  *out = g;
  return GA_OK;
}

int ga_cgpu_begin(ga_cgpu **out, int ncols, int64_t cap, char *why,
                  size_t nwhy) {
  int prev;
  /* the cache lives on the first usable device */
  int rc = cgpu_new(out, ncols, 0, why, nwhy);
  if (rc != GA_OK)
    return rc;
  ga_cgpu *g = *out;
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
  e->d_cap = g->cap;
  e->free_dev = ga_cache_gpu_free_entry; /* cache.c rule 4 */
  return GA_OK;
}

int64_t ga_cgpu_rows(const ga_cgpu *g) { return g->rows; }

/* Rule 5: the load's state of e's arrays, from the entry (stream first,
** then the carried words, then the arrays: a failure before the last step
** leaves e as it was). */
int ga_cgpu_adopt(ga_cgpu **out, ga_centry *e, char *why, size_t nwhy) {
  int prev, ok = 0;
  *out = NULL;
  if (e->where != GA_CACHE_GPU || e->d_cap < e->rows) {
    snprintf(why, nwhy, "not a GPU entry");
    return GA_CLOAD_EFAIL;
  }
  int rc = cgpu_new(out, e->ncols, e->dev, why, nwhy);
  if (rc != GA_OK)
    return rc;
  ga_cgpu *g = *out;
  uint64_t *carry = g->carry;
  int s = (int)(e->rows & 63);
  if (ga_dev_enter(g->dev, &prev)) {
    ok = ga_stream_new((void **)&g->stream);
    /* the last partial word of each bitmap, as a load carries it
    ** (ga_cgpu_place), masked to the rows it holds */
    for (int c = 0; ok && s && c < e->ncols; c++)
      ok = ga_cuda_ok(GA_STAGE_D2H,
                      gak_memcpy_d2h(&carry[2 * c],
                                     e->cols[c].d_isint + (e->rows >> 6), 8,
                                     g->stream)) &&
           ga_cuda_ok(GA_STAGE_D2H,
                      gak_memcpy_d2h(&carry[2 * c + 1],
                                     e->cols[c].d_notnull + (e->rows >> 6), 8,
                                     g->stream));
    if (ok)
      ok = ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(g->stream));
    if (!ok) {
      if (g->stream)
        gak_stream_sync(g->stream);
      gak_take_error();
    }
    ga_dev_leave(prev);
  }
  if (!ok) {
    snprintf(why, nwhy, "a copy from the GPU failed");
    return GA_CLOAD_EFAIL;
  }
  uint64_t mask = s ? ((uint64_t)1 << s) - 1 : 0;
  for (int c = 0; c < e->ncols; c++) {
    carry[2 * c] &= mask;
    carry[2 * c + 1] &= mask;
    g->vals[c] = e->cols[c].d_vals;
    g->isint[c] = e->cols[c].d_isint;
    g->notnull[c] = e->cols[c].d_notnull;
    e->cols[c].d_vals = e->cols[c].d_isint = e->cols[c].d_notnull = NULL;
  }
  g->cap = e->d_cap;
  g->rows = e->rows;
  return GA_OK;
}

/* Rule 6: rows [r0, r0 + n) of e's device columns into host block b,
** bitmaps shifted to start at row 0 (bits past n cleared). */
int ga_cache_gpu_fetch(const ga_centry *e, int64_t r0, int64_t n, ga_cblock *b,
                       char *why, size_t nwhy) {
  if (e->where != GA_CACHE_GPU || r0 < 0 || n < 1 || r0 + n > e->rows ||
      b->cap < n || b->ncols != e->ncols) {
    snprintf(why, nwhy, "rows outside the entry");
    return GA_CLOAD_EFAIL;
  }
  int64_t w0 = r0 >> 6, nsrc = ((r0 + n - 1) >> 6) - w0 + 1, nw = GA_BW(n);
  int s = (int)(r0 & 63);
  uint64_t *tmp =
      sqlite3_malloc64(sizeof(uint64_t) * 2 * (size_t)nsrc * (size_t)e->ncols);
  if (!tmp) {
    snprintf(why, nwhy, "out of memory");
    return GA_NOMEM;
  }
  int prev, ok = 0;
  void *stream = NULL;
  if (ga_dev_enter(e->dev, &prev)) {
    ok = ga_stream_new(&stream);
    for (int c = 0; ok && c < e->ncols; c++) {
      uint64_t *ti = tmp + (size_t)(2 * c) * (size_t)nsrc, *tn = ti + nsrc;
      ok =
          ga_cuda_ok(GA_STAGE_D2H,
                     gak_memcpy_d2h(ga_cb_vals(b, c), e->cols[c].d_vals + r0,
                                    (size_t)n * 8, stream)) &&
          ga_cuda_ok(GA_STAGE_D2H, gak_memcpy_d2h(ti, e->cols[c].d_isint + w0,
                                                  (size_t)nsrc * 8, stream)) &&
          ga_cuda_ok(GA_STAGE_D2H, gak_memcpy_d2h(tn, e->cols[c].d_notnull + w0,
                                                  (size_t)nsrc * 8, stream));
    }
    if (ok)
      ok = ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(stream));
    if (stream) {
      gak_stream_sync(stream);
      gak_stream_destroy(stream);
    }
    if (!ok)
      gak_take_error();
    ga_dev_leave(prev);
  }
  if (ok) {
    uint64_t last = (n & 63) ? ((uint64_t)1 << (n & 63)) - 1 : ~(uint64_t)0;
    for (int c = 0; c < e->ncols; c++) {
      const uint64_t *src[2] = {tmp + (size_t)(2 * c) * (size_t)nsrc,
                                tmp + (size_t)(2 * c + 1) * (size_t)nsrc};
      uint64_t *dst[2] = {ga_cb_isint(b, c), ga_cb_notnull(b, c)};
      for (int h = 0; h < 2; h++) {
        for (int64_t k = 0; k < nw; k++) {
          uint64_t w = src[h][k] >> s;
          if (s && k + 1 < nsrc)
            w |= src[h][k + 1] << (64 - s);
          dst[h][k] = w;
        }
        dst[h][nw - 1] &= last;
      }
    }
    b->n = n;
  } else {
    snprintf(why, nwhy, "a copy from the GPU failed");
  }
  sqlite3_free(tmp);
  return ok ? GA_OK : GA_CLOAD_EFAIL;
}

int64_t ga_cache_gpu_forget_dicts(ga_centry *e) {
  int64_t bytes = 0;
  int prev, entered = e->where == GA_CACHE_GPU && ga_dev_enter(e->dev, &prev);
  for (int c = 0; c < e->ncols; c++) {
    ga_ccol *k = &e->cols[c];
    if (k->dict_state == 1) /* counted in e->bytes (cache_gpu_query.c) */
      bytes += (k->ndict ? k->ndict : 1) * 8;
    if (entered)
      ga_cg_free(k->d_dict);
    k->d_dict = NULL;
    k->ndict = 0;
    k->dict_state = 0;
  }
  if (entered)
    ga_dev_leave(prev);
  return bytes;
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
