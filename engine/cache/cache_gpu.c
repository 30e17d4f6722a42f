/*
** cache_gpu.c — the column cache on the GPU: a load's device arrays
** (cache_gpu.h) and queries on a GPU entry (cache.h), through the cache
** kernels of kernels/gak.h.
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

static void gfree(void *p) {
  if (p && gak_free(p))
    gak_take_error();
}

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
    gfree(v[c]);
    gfree(i[c]);
    gfree(nn[c]);
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
  if (!ok) {
    gak_take_error();
    snprintf(g->why, sizeof g->why, "the codes of a TEXT column failed");
  }
  gfree(d_map);
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
    gfree(k->d_vals);
    gfree(k->d_isint);
    gfree(k->d_notnull);
    gfree(k->d_dict);
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
    gfree(c->d_scratch);
    gak_take_error();
    ga_dev_leave(prev);
  }
  c->stream = NULL;
  c->d_scratch = NULL;
  c->scratch_bytes = 0;
  c->dev = -1;
}

/* ---- queries ---- */

/* Slices of a group's rows: at most 4096 per group plus one per group. */
#define GA_CQ_MIN_SLICE 4096
#define GA_CQ_MAX_SLICES 4096
/* gak_sum's bound per call (GA_XACC_SAFE_ADDS), a multiple of 64 so that
** the bitmap of a chunk starts on a word */
#define GA_CQ_SUM_CHUNK ((int64_t)1 << 28)

/* A scratch arena of the cache's device: carved in order, 256-aligned. */
typedef struct arena {
  char *base;
  size_t off, cap;
} arena;

static size_t al(size_t n) { return (n + 255) & ~(size_t)255; }

static void *carve(arena *a, size_t n) {
  void *p = a->base ? a->base + a->off : NULL;
  a->off += al(n ? n : 1);
  return p;
}

/* The query scratch of at least `bytes` (device current). */
static int scratch(ga_cache *c, size_t bytes) {
  if (c->scratch_bytes >= bytes)
    return 1;
  gak_stream_sync(c->stream);
  gfree(c->d_scratch);
  c->d_scratch = NULL;
  c->scratch_bytes = 0;
  bytes += bytes / 8; /* room for the next, slightly larger query */
  if (!ga_dev_alloc(&c->d_scratch, bytes))
    return 0;
  c->scratch_bytes = bytes;
  return 1;
}

static gak_ccol ccol(const ga_ccol *k) {
  gak_ccol g = {k->d_vals, k->d_isint, k->d_notnull};
  return g;
}

static void bval_of(ga_bval *b, const ga_best_partial *p) {
  memset(b, 0, sizeof(*b));
  if (p->kind == GA_KIND_INT) {
    b->type = GA_V_INT;
    b->i = p->bits;
  } else if (p->kind == GA_KIND_REAL) {
    b->type = GA_V_REAL;
    b->r = ga_bitsd(p->bits);
  }
}

/* A group's answer into the output groups (piece 0: one state per group). */
static int add_group(ga_group_shards *gs, const gak_cstate *cs, int grouped) {
  ga_xstate st;
  ga_value key;
  int64_t bytes = 0;
  memset(&st, 0, sizeof(st));
  memset(&key, 0, sizeof(key));
  st.rows = cs->rows;
  st.count = cs->count;
  st.sum = cs->sum;
  ga_sum_normalize(&st.sum);
  bval_of(&st.max, &cs->max);
  bval_of(&st.min, &cs->min);
  key.type = GA_V_NULL;
  if (grouped && cs->key_kind == GA_KIND_INT) {
    key.type = GA_V_INT;
    key.i = cs->key_bits;
  } else if (grouped && cs->key_kind == GA_KIND_REAL) {
    key.type = GA_V_REAL;
    key.r = ga_bitsd(cs->key_bits);
  }
  return ga_gs_add(gs, &key, &st, 0, &bytes);
}

#define STEP(stage, call)                                                      \
  do {                                                                         \
    if (!ga_cuda_ok(stage, call)) {                                            \
      snprintf(why, nwhy, "a GPU step failed (%s)", ga_stage_name(stage));     \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

static int sync_or(ga_cache *c, char *why, size_t nwhy) {
  int err = gak_stream_sync(c->stream);
  int kernel = err && gak_error_class(err) == GAK_EKERNEL;
  if (ga_cuda_ok(GA_STAGE_KERNEL, kernel ? err : 0) &&
      ga_cuda_ok(GA_STAGE_SYNC, kernel ? 0 : err))
    return 1;
  snprintf(why, nwhy, "a GPU step failed (%s)", kernel ? "kernel" : "sync");
  return 0;
}

/* The whole-column shape (rule 4). */
static int whole_column(ga_cache *c, ga_centry *e, const ga_ccol *x,
                        ga_group_shards *gs, char *why, size_t nwhy) {
  int64_t n = e->rows;
  int layout = x->nint == n    ? GA_LAYOUT_INT
               : x->nreal == n ? GA_LAYOUT_REAL
                               : GA_LAYOUT_MIXED;
  int64_t nch = (n + GA_CQ_SUM_CHUNK - 1) / GA_CQ_SUM_CHUNK;
  int64_t ch = n < GA_CQ_SUM_CHUNK ? n : GA_CQ_SUM_CHUNK;
  size_t outb = sizeof(ga_sum_partial) + 2 * sizeof(ga_best_partial);
  arena a = {NULL, 0, 0};
  carve(&a, gak_scratch_bytes(ch));
  carve(&a, outb * (size_t)nch);
  if (!scratch(c, a.off)) {
    snprintf(why, nwhy, "no GPU memory for the query");
    return GA_SCAN_FALLBACK;
  }
  a.base = c->d_scratch;
  a.off = 0;
  void *d_sc = carve(&a, gak_scratch_bytes(ch));
  char *d_out = carve(&a, outb * (size_t)nch);
  char *h = sqlite3_malloc64(outb * (size_t)nch);
  if (!h)
    return GA_SCAN_NOMEM;
  for (int64_t k = 0; k < nch; k++) {
    int64_t off = k * GA_CQ_SUM_CHUNK, len = n - off < ch ? n - off : ch;
    const uint64_t *v = x->d_vals + off, *bits = x->d_isint + off / 64;
    char *o = d_out + outb * (size_t)k;
    ga_best_partial *bo = (ga_best_partial *)(o + sizeof(ga_sum_partial));
    STEP(GA_STAGE_LAUNCH,
         gak_sum(v, bits, len, layout, (ga_sum_partial *)o, d_sc, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_best(v, bits, len, layout, 0, bo, d_sc, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_best(v, bits, len, layout, 1, bo + 1, d_sc, c->stream));
  }
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(h, d_out, outb * (size_t)nch, c->stream));
  if (!sync_or(c, why, nwhy))
    goto fail;
  gak_cstate cs;
  memset(&cs, 0, sizeof(cs));
  for (int64_t k = 0; k < nch; k++) {
    const char *o = h + outb * (size_t)k;
    ga_sum_partial p;
    ga_best_partial b[2];
    memcpy(&p, o, sizeof p);
    memcpy(b, o + sizeof p, sizeof b);
    ga_sum_merge(&cs.sum, &p);
    for (int j = 0; j < 2; j++) {
      b[j].idx += k * GA_CQ_SUM_CHUNK;
      ga_best_merge(j ? &cs.min : &cs.max, &b[j], j);
    }
  }
  cs.rows = cs.count = n;
  sqlite3_free(h);
  return add_group(gs, &cs, 0) ? GA_SCAN_NOMEM : GA_SCAN_OK;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  sqlite3_free(h);
  return GA_SCAN_FALLBACK;
}

/* The group dictionary of column k (built once, kept with the entry and
** counted in its bytes).  1 ready, 0 not groupable (why), -1 failed. */
static int dictionary(ga_cache *c, ga_centry *e, ga_ccol *k, char *why,
                      size_t nwhy) {
  if (k->dict_state == 1)
    return 1;
  if (k->dict_state < 0) {
    snprintf(why, nwhy, "group_by %s: %s", k->name,
             k->ndict < 0 ? "REAL keys that are not integers stay uncached "
                            "on the GPU"
                          : "too many groups");
    return 0;
  }
  int64_t n = e->rows;
  if (n > INT32_MAX) { /* CUB's item counts are int */
    snprintf(why, nwhy, "group_by on the GPU takes entries below 2^31 rows");
    return 0;
  }
  arena a = {NULL, 0, 0};
  carve(&a, gak_cache_dict_scratch(n));
  carve(&a, (size_t)n * 8);
  carve(&a, 8);
  if (!scratch(c, a.off)) {
    snprintf(why, nwhy, "no GPU memory for the group dictionary");
    return -1;
  }
  a.base = c->d_scratch;
  a.off = 0;
  void *d_sc = carve(&a, gak_cache_dict_scratch(n));
  int64_t *d_dict = carve(&a, (size_t)n * 8);
  int64_t *d_n = carve(&a, 8), nd = 0;
  STEP(GA_STAGE_LAUNCH,
       gak_cache_dict(ccol(k), n, n - k->nnull, d_dict, d_n, d_sc, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&nd, d_n, 8, c->stream));
  if (!sync_or(c, why, nwhy))
    goto fail;
  if (nd < -1) {
    snprintf(why, nwhy, "a GPU step failed (the key column's NULL count)");
    goto fail;
  }
  if (nd < 0 || nd > GA_CACHE_MAX_GROUPS) {
    k->dict_state = -1;
    k->ndict = nd < 0 ? -1 : nd;
    return dictionary(c, e, k, why, nwhy);
  }
  size_t bytes = (size_t)(nd ? nd : 1) * 8;
  if (!ga_dev_alloc((void **)&k->d_dict, bytes)) {
    snprintf(why, nwhy, "no GPU memory for the group dictionary");
    return -1;
  }
  STEP(GA_STAGE_H2D,
       gak_memcpy_d2d(k->d_dict, d_dict, (size_t)nd * 8, c->stream));
  if (!sync_or(c, why, nwhy))
    goto fail;
  k->ndict = nd;
  k->dict_state = 1;
  pthread_mutex_lock(&c->mu);
  e->bytes += (int64_t)bytes; /* may pass the budget a little: see README */
  c->used += (int64_t)bytes;
  pthread_mutex_unlock(&c->mu);
  return 1;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  gfree(k->d_dict);
  k->d_dict = NULL;
  return -1;
}

static int bits_for(int64_t maxval) {
  int b = 1;
  while (b < 32 && ((int64_t)1 << b) <= maxval)
    b++;
  return b;
}

/* The general shape: filter, compact, [group], reduce, merge. */
static int general(ga_cache *c, ga_centry *e, const ga_cquery *q,
                   ga_group_shards *gs, char *why, size_t nwhy) {
  int64_t n = e->rows;
  const ga_ccol *x = &e->cols[q->xcol];
  ga_ccol *kc = q->gcol >= 0 ? &e->cols[q->gcol] : NULL;
  int64_t ngroups = 1;
  uint32_t *h_se = NULL;
  gak_cslice *h_sl = NULL;
  gak_cgroup *h_gr = NULL;
  gak_cstate *h_st = NULL;
  int rc = GA_SCAN_FALLBACK;
  if (kc) {
    int d = dictionary(c, e, kc, why, nwhy);
    if (d <= 0)
      return d == 0 ? GA_CACHE_DECLINED : GA_SCAN_FALLBACK;
    ngroups = kc->ndict + 1; /* and the NULL group */
  }
  gak_cfilter f = q->filter;
  for (int t = 0; t < f.nterms; t++)
    f.cols[t] = ccol(&e->cols[f.terms[t].col]);
  for (int t = 0; t < f.nterms; t++)
    f.terms[t].col = t; /* the kernel reads cols[t] for term t */

  /* phase 1: sized by n and the groups */
  /* slices: at most ceil(m / slice) + one per group, slice >= 4096 rows */
  int64_t maxsl =
      (n / GA_CQ_MIN_SLICE + 1 < GA_CQ_MAX_SLICES ? n / GA_CQ_MIN_SLICE + 1
                                                  : GA_CQ_MAX_SLICES) +
      ngroups + 1;
  arena a = {NULL, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      if (!scratch(c, a.off)) {
        snprintf(why, nwhy, "no GPU memory for the query");
        return GA_SCAN_FALLBACK;
      }
      a.base = c->d_scratch;
      a.off = 0;
    }
    carve(&a, (size_t)GA_BW(n) * 8);         /* sel */
    carve(&a, (size_t)n * 4);                /* idx */
    carve(&a, 8);                            /* count */
    carve(&a, gak_cache_compact_scratch(n)); /* compact */
    if (kc) {
      carve(&a, (size_t)n * 4 * 3); /* gid, gid_out, idx_out */
      carve(&a, gak_cache_sort_scratch(n));
      carve(&a, (size_t)ngroups * 4 * 2); /* start, end */
    }
    carve(&a, sizeof(gak_cslice) * (size_t)maxsl);
    carve(&a, sizeof(gak_cstate) * (size_t)maxsl);
    carve(&a, sizeof(gak_cgroup) * (size_t)ngroups);
    carve(&a, sizeof(gak_cstate) * (size_t)ngroups);
  }
  a.off = 0;
  uint32_t *d_sel = carve(&a, (size_t)GA_BW(n) * 8);
  uint32_t *d_idx = carve(&a, (size_t)n * 4);
  int64_t *d_count = carve(&a, 8);
  void *d_csc = carve(&a, gak_cache_compact_scratch(n));
  uint32_t *d_gid = NULL, *d_gid2 = NULL, *d_idx2 = NULL, *d_start = NULL;
  void *d_ssc = NULL;
  if (kc) {
    d_gid = carve(&a, (size_t)n * 4 * 3);
    d_gid2 = d_gid + n;
    d_idx2 = d_gid + 2 * n;
    d_ssc = carve(&a, gak_cache_sort_scratch(n));
    d_start = carve(&a, (size_t)ngroups * 4 * 2);
  }
  gak_cslice *d_sl = carve(&a, sizeof(gak_cslice) * (size_t)maxsl);
  gak_cstate *d_sst = carve(&a, sizeof(gak_cstate) * (size_t)maxsl);
  gak_cgroup *d_gr = carve(&a, sizeof(gak_cgroup) * (size_t)ngroups);
  gak_cstate *d_gst = carve(&a, sizeof(gak_cstate) * (size_t)ngroups);

  int64_t m = 0;
  STEP(GA_STAGE_LAUNCH, gak_cache_filter(&f, n, d_sel, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_compact(d_sel, n, d_idx, d_count, d_csc, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&m, d_count, 8, c->stream));
  if (!sync_or(c, why, nwhy))
    goto fail;
  if (m < 0 || m > n) {
    snprintf(why, nwhy, "a GPU step failed (bad row count)");
    goto fail;
  }
  if (m == 0)
    return GA_SCAN_OK;       /* no group; ungrouped: the one empty row */
  if (kc && m > INT32_MAX) { /* CUB's sort counts items in an int */
    snprintf(why, nwhy, "more than 2^31 rows to group on the GPU");
    return GA_CACHE_DECLINED;
  }
  const uint32_t *rows_idx = d_idx;
  int64_t slice = m / GA_CQ_MAX_SLICES + 1;
  if (slice < GA_CQ_MIN_SLICE)
    slice = GA_CQ_MIN_SLICE;
  h_sl = sqlite3_malloc64(sizeof(gak_cslice) * (size_t)maxsl);
  h_gr = sqlite3_malloc64(sizeof(gak_cgroup) * (size_t)ngroups);
  h_se = sqlite3_malloc64((size_t)ngroups * 4 * 2);
  if (!h_sl || !h_gr || !h_se) {
    rc = GA_SCAN_NOMEM;
    goto fail;
  }
  if (kc) {
    STEP(GA_STAGE_LAUNCH, gak_cache_group_ids(ccol(kc), kc->d_dict, kc->ndict,
                                              d_idx, m, d_gid, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_cache_sort(d_gid, d_idx, d_gid2, d_idx2, m, bits_for(ngroups - 1),
                        d_ssc, c->stream));
    STEP(GA_STAGE_LAUNCH, gak_cache_bounds(d_gid2, m, ngroups, d_start,
                                           d_start + ngroups, c->stream));
    STEP(GA_STAGE_D2H,
         gak_memcpy_d2h(h_se, d_start, (size_t)ngroups * 8, c->stream));
    if (!sync_or(c, why, nwhy))
      goto fail;
    rows_idx = d_idx2;
  } else {
    h_se[0] = 0;
    h_se[1] = (uint32_t)m;
  }
  int64_t nsl = 0, ngr = 0, total = 0;
  for (int64_t g = 0; g < ngroups; g++) {
    uint32_t s0 = h_se[g], s1 = kc ? h_se[ngroups + g] : h_se[1];
    if (s1 <= s0)
      continue;
    if (s1 > m) {
      snprintf(why, nwhy, "a GPU step failed (bad group bounds)");
      goto fail;
    }
    total += s1 - s0;
    h_gr[ngr].first_slice = (uint32_t)nsl;
    for (int64_t p = s0; p < s1; p += slice) {
      if (nsl >= maxsl) {
        snprintf(why, nwhy, "a GPU step failed (too many slices)");
        goto fail;
      }
      h_sl[nsl].group = (uint32_t)ngr;
      h_sl[nsl].start = (uint32_t)p;
      h_sl[nsl].len = (uint32_t)(s1 - p < slice ? s1 - p : slice);
      h_sl[nsl].pad = 0;
      nsl++;
    }
    h_gr[ngr].nslices = (uint32_t)(nsl - h_gr[ngr].first_slice);
    ngr++;
  }
  if (total != m) { /* every passing row in exactly one group */
    snprintf(why, nwhy, "a GPU step failed (group bounds do not add up)");
    goto fail;
  }
  h_st = sqlite3_malloc64(sizeof(gak_cstate) * (size_t)ngr);
  if (!h_st) {
    rc = GA_SCAN_NOMEM;
    goto fail;
  }
  gak_ccol key = {NULL, NULL, NULL};
  if (kc)
    key = ccol(kc);
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_sl, h_sl, sizeof(gak_cslice) * (size_t)nsl, c->stream));
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_gr, h_gr, sizeof(gak_cgroup) * (size_t)ngr, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_reduce(ccol(x), rows_idx, d_sl, nsl, d_sst, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_merge(d_sst, d_gr, ngr, key, d_gst, c->stream));
  STEP(
      GA_STAGE_D2H,
      gak_memcpy_d2h(h_st, d_gst, sizeof(gak_cstate) * (size_t)ngr, c->stream));
  if (!sync_or(c, why, nwhy))
    goto fail;
  rc = GA_SCAN_OK;
  for (int64_t g = 0; g < ngr && rc == GA_SCAN_OK; g++)
    if (add_group(gs, &h_st[g], kc != NULL))
      rc = GA_SCAN_NOMEM;
  sqlite3_free(h_sl);
  sqlite3_free(h_gr);
  sqlite3_free(h_se);
  sqlite3_free(h_st);
  return rc;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  sqlite3_free(h_sl);
  sqlite3_free(h_gr);
  sqlite3_free(h_se);
  sqlite3_free(h_st);
  return rc;
}

int ga_cache_query_gpu(ga_cache *c, ga_centry *e, const ga_cquery *q,
                       ga_scan_out *out, char *why, size_t nwhy) {
  int prev, rc;
  memset(out, 0, sizeof(*out));
  if (!ga_dev_enter(e->dev, &prev)) {
    snprintf(why, nwhy, "cannot use the GPU");
    return GA_SCAN_FALLBACK;
  }
  if (c->dev != e->dev || !c->stream) {
    ga_dev_leave(prev);
    ga_cache_gpu_release(c);
    if (!ga_dev_enter(e->dev, &prev)) {
      snprintf(why, nwhy, "cannot use the GPU");
      return GA_SCAN_FALLBACK;
    }
    c->dev = e->dev;
    if (!ga_stream_new(&c->stream)) {
      ga_dev_leave(prev);
      snprintf(why, nwhy, "a GPU step failed (init)");
      return GA_SCAN_FALLBACK;
    }
  }
  out->shape = ga_gshape_one(GA_COLL_BINARY);
  out->groups = ga_gs_new(&out->shape);
  if (!out->groups) {
    ga_dev_leave(prev);
    return GA_SCAN_NOMEM;
  }
  const ga_ccol *x = &e->cols[q->xcol];
  if (q->gcol < 0 && q->filter.nterms == 0 && x->nnull == 0)
    rc = e->rows ? whole_column(c, e, x, out->groups, why, nwhy) : GA_SCAN_OK;
  else
    rc = general(c, e, q, out->groups, why, nwhy);
  ga_dev_leave(prev);
  if (rc == GA_SCAN_OK && ga_gs_sorted(out->groups, &out->sorted, &out->n))
    rc = GA_SCAN_NOMEM;
  if (rc != GA_SCAN_OK)
    ga_scan_out_free(out);
  out->threads = 1;
  return rc;
}
