/*
** cache_gpu_star.c — gpu_query's star and snowflake joins from a GPU entry
** of the fact table (cache_gpu_star.h; issue 38 section 3.3).
** planner/cache_join.c reads the join and builds each dimension's lookup
** on the host (cache_star.c rules 1 and 2, unchanged: the same keys, the
** same conditions, the same snowflake rows); this file sends them to the
** device, probes the fact's rows there with one fused kernel
** (kernels/cache_star.cu) and hands the joined rows to cache_gpu_query.c.
**
** Rules:
**   1. Dimensions.  A dimension's entry may be a host entry or a GPU entry;
**      a GPU entry is copied back to the host for the build
**      (ga_cgstar_mirror: every column, one block; the dimensions are the
**      small tables), a copy of this call only.
**   2. The lookups on the device.  Each dimension joined to the fact
**      (parent -1) goes up as cache_star.c built it: its dense array, or
**      its hash table's slots and keys (the kernel hashes as cache_star.c
**      does), with a TEXT key's code map; a row whose snowflake below it
**      drops the fact row (an inner join under it misses: cache_star.c
**      rule 3) is marked -2 in its slot, and miss_drops says whether a
**      miss drops the row (an inner join, or an inner join below a LEFT
**      JOIN) or keeps it with NULLs.  The columns the query reads of a
**      dimension (or of a snowflake's, read through its parents' rows) go
**      up laid out by the top dimension's row (value, flags): the kernel
**      gathers them at a fact row from its top dimension's row.  Several
**      rows of one key (cache_star.c rule 2's multi-match dimension)
**      decline: a fact row would become several, and the GPU entry's rows
**      are the fact's.
**   3. The joined rows.  The kernel writes, for every fact row, whether it
**      joins (d_sel) and each gathered column's value there (NULL where it
**      does not, or at a LEFT JOIN's miss), with the counts a load keeps
**      (cache.h's ga_ccol: NULLs, INTEGERs, REALs or TEXT codes, the least
**      and greatest INTEGER).  The join entry (*virt) is a GPU entry of the
**      fact's rows: the fact's columns are its own device arrays (their
**      counts the fact's: every row), the gathered ones are this call's;
**      each keeps its table column's declaration, collation and dictionary
**      (ga_ccol.src_*, as cache_star.c rule 5).  cache_gpu_query.c answers
**      the query over it with d_sel ANDed into its filter's rows
**      (ga_cquery.d_presel), so a row that does not join is in no group;
**      the fact's own conditions and every term after the probe are that
**      query's WHERE (planner/cache_join.c rule 4).
**   4. Memory: the mirrors, the device lookups and laid-out columns, the
**      gathered columns and the bitmap are charged to s->cap (group_bytes,
**      with the build's lookups); past it the join declines with why.  A
**      group dictionary the query builds on a fact column is that
**      column's own (over the same rows) and stays with the fact entry,
**      counted in its bytes, as a one-table query leaves it; one on a
**      gathered column is freed with the call.
**   5. A failed device step returns GA_SCAN_FALLBACK (the caller drops
**      the fact's entry, as cache_plan.c does), with nothing left in
**      flight.
*/
#include "cache_gpu_star.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_step.h"

static double ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The device of dev current and the cache's stream on it (as
** cache_gpu_query.c's ga_cache_query_gpu).  1, or 0 with why. */
static int enter(ga_cache *c, int dev, int *prev, char *why, size_t nwhy) {
  if (!ga_dev_enter(dev, prev)) {
    snprintf(why, nwhy, "cannot use the GPU");
    return 0;
  }
  if (c->dev != dev || !c->stream) {
    ga_dev_leave(*prev);
    ga_cache_gpu_release(c);
    if (!ga_dev_enter(dev, prev)) {
      snprintf(why, nwhy, "cannot use the GPU");
      return 0;
    }
    c->dev = dev;
    c->release_dev = ga_cache_gpu_release; /* cache.c rule 4 */
    if (!ga_stream_new(&c->stream)) {
      ga_dev_leave(*prev);
      snprintf(why, nwhy, "a GPU step failed (init)");
      return 0;
    }
  }
  return 1;
}

/* ---- rule 1: a GPU dimension's host copy ---- */

int ga_cgstar_mirror(ga_cache *c, const ga_centry *e, ga_centry *out,
                     int64_t *bytes, char *why, size_t nwhy) {
  int prev;
  memset(out, 0, sizeof(*out));
  *bytes = 0;
  int64_t n = e->rows;
  ga_cblock *b = ga_cb_new(e->ncols ? e->ncols : 1, n ? n : 1, 0);
  out->cols = sqlite3_malloc64(sizeof(ga_ccol) * (size_t)(e->ncols + 1));
  out->segs = sqlite3_malloc64(sizeof(ga_cblock *));
  out->seg_base = sqlite3_malloc64(sizeof(int64_t));
  if (!b || !out->cols || !out->segs || !out->seg_base) {
    ga_cb_free(b);
    ga_cgstar_mirror_free(out);
    return GA_NOMEM;
  }
  out->segs[0] = b;
  out->seg_base[0] = 0;
  out->nsegs = n ? 1 : 0;
  b->n = n;
  if (!n)
    ga_cb_free(b), out->segs[0] = NULL;
  out->schema = e->schema;
  out->table = e->table;
  out->where = GA_CACHE_HOST;
  out->enc = e->enc;
  out->ncols = e->ncols;
  out->rows = n;
  memcpy(out->cols, e->cols, sizeof(ga_ccol) * (size_t)e->ncols);
  for (int k = 0; k < e->ncols; k++) {
    ga_ccol *x = &out->cols[k];
    x->d_vals = x->d_isint = x->d_notnull = NULL;
    x->d_dict = NULL;
    x->dict_state = 0;
  }
  *bytes = n ? b->bytes : 0;
  if (!n)
    return GA_OK;
  if (!enter(c, e->dev, &prev, why, nwhy))
    goto fail0;
  for (int k = 0; k < e->ncols; k++) {
    const ga_ccol *x = &e->cols[k];
    GA_CG_STEP(GA_STAGE_D2H, gak_memcpy_d2h(ga_cb_vals(b, k), x->d_vals,
                                            (size_t)n * 8, c->stream));
    GA_CG_STEP(GA_STAGE_D2H, gak_memcpy_d2h(ga_cb_isint(b, k), x->d_isint,
                                            (size_t)GA_BW(n) * 8, c->stream));
    GA_CG_STEP(GA_STAGE_D2H, gak_memcpy_d2h(ga_cb_notnull(b, k), x->d_notnull,
                                            (size_t)GA_BW(n) * 8, c->stream));
  }
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  ga_dev_leave(prev);
  return GA_OK;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  ga_dev_leave(prev);
fail0:
  ga_cgstar_mirror_free(out);
  return GA_SCAN_FALLBACK;
}

void ga_cgstar_mirror_free(ga_centry *out) {
  for (int64_t i = 0; out->segs && i < out->nsegs; i++)
    ga_cb_free(out->segs[i]);
  sqlite3_free(out->segs);
  sqlite3_free(out->seg_base);
  sqlite3_free(out->cols);
  memset(out, 0, sizeof(*out));
}

/* ---- rule 2: the lookups and the laid-out columns ---- */

/* Row r's value of column c of host entry e as (v, flags 1 isint 2
** notnull), through cache_star.c's reader; *seg the segment hint. */
static void value_at(const ga_centry *e, int c, int64_t r, int64_t *seg,
                     uint64_t *v, uint8_t *f) {
  int isint, notnull;
  ga_cstar_value_at(e, c, r, seg, v, &isint, &notnull);
  *f = (uint8_t)(isint | notnull << 1);
}

/* The top dimension (parent -1) above dimension d. */
static int top_of(const ga_cstar *s, int d) {
  while (s->dims[d].parent >= 0)
    d = s->dims[d].parent;
  return d;
}

/* Dimension d's row for top dimension row t (-1: none), through the
** snowflake's rows (`via`). */
static int32_t row_through(const ga_cstar *s, int d, int32_t t) {
  if (s->dims[d].parent < 0)
    return t;
  int32_t pr = row_through(s, s->dims[d].parent, t);
  return pr < 0 ? -1 : s->dims[d].via[pr];
}

/* Does top row t (-1: a miss) drop the fact row through an inner join
** below top dimension `top` (cache_star.c rule 3)? */
static int drops(const ga_cstar *s, int top, int32_t t) {
  for (int d = 0; d < s->ndims; d++)
    if (d != top && top_of(s, d) == top && !s->dims[d].left &&
        row_through(s, d, t) < 0)
      return 1;
  return 0;
}

static int charge(ga_cstar *s, int64_t n) {
  s->used += n;
  return s->used > s->cap;
}

/* Device memory of the call, freed with it. */
static void *dalloc(ga_cgstar *g, size_t bytes) {
  void *p = NULL;
  if (g->nmem >= (int)(sizeof g->mem / sizeof g->mem[0]) ||
      !ga_dev_alloc(&p, bytes ? bytes : 8))
    return NULL;
  g->mem[g->nmem++] = p;
  g->dev_bytes += (int64_t)bytes;
  return p;
}

int ga_cgstar_probe(ga_cache *c, ga_cstar *s, const char *const *names,
                    ga_cgstar *g, ga_centry *virt, char *why, size_t nwhy) {
  ga_centry *f = (ga_centry *)s->fact;
  int64_t n = f->rows;
  int rc = GA_SCAN_FALLBACK, prev = 0;
  double t0 = ms_now();
  memset(g, 0, sizeof(*g));
  memset(virt, 0, sizeof(*virt));
  g->c = c;
  g->fact = f;
  g->dev = f->dev;
  gak_cstar p;
  memset(&p, 0, sizeof(p));
  int32_t *h_slot = NULL;
  uint64_t *h_v = NULL;
  uint8_t *h_f = NULL;
  int64_t *stats = NULL;
  int pos[GA_CSTAR_MAX]; /* a top dimension's index in p.dims */
  /* rule 2: one row a key; the kernel's limits */
  if (s->multi >= 0) {
    snprintf(why, nwhy,
             "%s has several rows of one key (the GPU cache's join keeps "
             "the fact's rows: one row a key; a host entry, loaded with "
             "device = 'cpu', answers it)",
             s->dims[s->multi].e->table);
    return GA_CACHE_DECLINED;
  }
  int ncd = 0;
  for (int k = 0; k < s->ncols; k++)
    ncd += s->cols[k].tab >= 0;
  if (ncd > GAK_CSTAR_COLS) {
    snprintf(why, nwhy,
             "the query reads more than %d columns of the dimensions on "
             "the GPU",
             GAK_CSTAR_COLS);
    return GA_CACHE_DECLINED;
  }
  if (n > GA_CACHE_MAX_ROWS) {
    snprintf(why, nwhy, "the fact has too many rows for the GPU's join");
    return GA_CACHE_DECLINED;
  }
  /* the top dimensions in the host's probe order: fewest kept first */
  int top[GA_CSTAR_MAX], ntop = 0;
  for (int d = 0; d < s->ndims; d++)
    if (s->dims[d].parent < 0)
      top[ntop++] = d;
  for (int i = 1; i < ntop; i++)
    for (int k = i; k > 0; k--) {
      const ga_cstar_dim *a = &s->dims[top[k - 1]], *b = &s->dims[top[k]];
      double fa = (double)a->keys / (double)(a->e->rows ? a->e->rows : 1);
      double fb = (double)b->keys / (double)(b->e->rows ? b->e->rows : 1);
      if (fb < fa) {
        int t = top[k];
        top[k] = top[k - 1];
        top[k - 1] = t;
      }
    }
  /* rule 4: what goes up, charged first */
  {
    int64_t need = (int64_t)GA_BW(n) * 8 + (1 + 4 * (int64_t)ncd) * 8;
    for (int i = 0; i < ntop; i++) {
      const ga_cstar_dim *d = &s->dims[top[i]];
      need +=
          d->dense ? d->span * 4 : (int64_t)(d->hmask + 1) * (4 + 8 * d->nkeys);
      for (int k = 0; k < d->nkeys; k++)
        need += d->pmap[k] ? d->npmap[k] * 8 : 0;
    }
    for (int k = 0; k < s->ncols; k++)
      if (s->cols[k].tab >= 0)
        need += s->dims[top_of(s, s->cols[k].tab)].e->rows * 9 + n * 8 +
                2 * (int64_t)GA_BW(n) * 8;
    if (charge(s, need)) {
      snprintf(why, nwhy,
               "the join on the GPU needs more than group_bytes (%lld "
               "bytes; raise it with gpuagg_config)",
               (long long)s->used);
      return GA_CACHE_DECLINED;
    }
  }
  if (!enter(c, f->dev, &prev, why, nwhy))
    return GA_SCAN_FALLBACK;
  g->entered = 1;
  g->prev = prev;
  p.ndims = ntop;
  for (int i = 0; i < ntop; i++) {
    const ga_cstar_dim *d = &s->dims[top[i]];
    gak_cstar_dim *x = &p.dims[i];
    int64_t before = g->dev_bytes;
    pos[top[i]] = i;
    x->nkeys = d->nkeys;
    x->dense = d->dense;
    x->miss_drops = !d->left || drops(s, top[i], -1);
    x->base = d->base;
    x->span = d->span;
    x->hmask = d->hmask;
    int64_t nslot = d->dense ? d->span : (int64_t)d->hmask + 1;
    h_slot = sqlite3_malloc64(sizeof(int32_t) * (size_t)(nslot ? nslot : 1));
    if (!h_slot) {
      rc = GA_NOMEM;
      goto fail;
    }
    int deep = 0; /* a snowflake below it */
    for (int e = 0; e < s->ndims; e++)
      deep |= e != top[i] && top_of(s, e) == top[i];
    for (int64_t k = 0; k < nslot; k++) { /* rule 2's -2 */
      int32_t t = d->slot[k];
      h_slot[k] = deep && t >= 0 && drops(s, top[i], t) ? -2 : t;
    }
    int32_t *d_slot = dalloc(g, sizeof(int32_t) * (size_t)nslot);
    if (!d_slot) {
      snprintf(why, nwhy, "no GPU memory for the join's lookups");
      goto fail;
    }
    GA_CG_STEP(GA_STAGE_H2D,
               gak_memcpy_h2d(d_slot, h_slot, sizeof(int32_t) * (size_t)nslot,
                              c->stream));
    x->slot = d_slot;
    if (!d->dense) {
      size_t hb = sizeof(int64_t) * (size_t)nslot * (size_t)d->nkeys;
      int64_t *d_hkey = dalloc(g, hb);
      if (!d_hkey) {
        snprintf(why, nwhy, "no GPU memory for the join's lookups");
        goto fail;
      }
      GA_CG_STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_hkey, d->hkey, hb, c->stream));
      x->hkey = d_hkey;
    }
    if (!ga_cg_sync(c, why, nwhy)) /* h_slot is the next dimension's */
      goto fail;
    sqlite3_free(h_slot);
    h_slot = NULL;
    for (int k = 0; k < d->nkeys; k++) {
      const ga_ccol *kc = &f->cols[d->pcol[k]];
      x->key[k].vals = kc->d_vals;
      x->key[k].isint = kc->d_isint;
      x->key[k].notnull = kc->d_notnull;
      if (!d->pmap[k])
        continue;
      int64_t *d_map = dalloc(g, sizeof(int64_t) * (size_t)d->npmap[k]);
      if (!d_map) {
        snprintf(why, nwhy, "no GPU memory for the join's lookups");
        goto fail;
      }
      GA_CG_STEP(GA_STAGE_H2D,
                 gak_memcpy_h2d(d_map, d->pmap[k],
                                sizeof(int64_t) * (size_t)d->npmap[k],
                                c->stream));
      x->map[k] = d_map;
      x->nmap[k] = d->npmap[k];
    }
    g->dim_bytes[top[i]] = g->dev_bytes - before;
  }
  /* the gathered columns: laid out by the top dimension's row */
  int cidx[GA_CACHE_MAX_COLS];
  for (int k = 0; k < s->ncols; k++) {
    cidx[k] = -1;
    if (s->cols[k].tab < 0)
      continue;
    int d = s->cols[k].tab, t = top_of(s, d);
    const ga_centry *te = s->dims[t].e, *de = s->dims[d].e;
    int64_t tr = te->rows ? te->rows : 1, seg = 0;
    gak_cstar_col *o = &p.cols[p.ncols];
    cidx[k] = p.ncols++;
    o->dim = pos[t];
    h_v = sqlite3_malloc64(sizeof(uint64_t) * (size_t)tr);
    h_f = sqlite3_malloc64((size_t)tr);
    if (!h_v || !h_f) {
      rc = GA_NOMEM;
      goto fail;
    }
    for (int64_t r = 0; r < te->rows; r++) {
      int32_t dr = row_through(s, d, (int32_t)r);
      h_v[r] = 0;
      h_f[r] = 0;
      if (dr >= 0)
        value_at(de, s->cols[k].col, dr, &seg, &h_v[r], &h_f[r]);
    }
    uint64_t *d_v = dalloc(g, sizeof(uint64_t) * (size_t)tr);
    uint8_t *d_f = dalloc(g, (size_t)tr);
    uint64_t *d_out = dalloc(g, (size_t)n * 8 + 2 * (size_t)GA_BW(n) * 8);
    if (!d_v || !d_f || !d_out) {
      snprintf(why, nwhy, "no GPU memory for the join's columns");
      goto fail;
    }
    GA_CG_STEP(
        GA_STAGE_H2D,
        gak_memcpy_h2d(d_v, h_v, sizeof(uint64_t) * (size_t)tr, c->stream));
    GA_CG_STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_f, h_f, (size_t)tr, c->stream));
    if (!ga_cg_sync(c, why, nwhy))
      goto fail;
    sqlite3_free(h_v);
    sqlite3_free(h_f);
    h_v = NULL;
    h_f = NULL;
    o->v = d_v;
    o->f = d_f;
    o->vals = d_out;
    o->isint = d_out + n;
    o->notnull = d_out + n + GA_BW(n);
  }
  /* rule 3: the probe */
  g->d_sel = dalloc(g, (size_t)GA_BW(n) * 8);
  int64_t *d_stats = dalloc(g, (size_t)(1 + 4 * p.ncols) * 8);
  stats = sqlite3_malloc64((size_t)(1 + 4 * p.ncols) * 8);
  if (!stats) {
    rc = GA_NOMEM;
    goto fail;
  }
  if (!g->d_sel || !d_stats) {
    snprintf(why, nwhy, "no GPU memory for the join's rows");
    goto fail;
  }
  memset(stats, 0, (size_t)(1 + 4 * p.ncols) * 8);
  for (int k = 0; k < p.ncols; k++) {
    stats[3 + 4 * k] = INT64_MAX;
    stats[4 + 4 * k] = INT64_MIN;
  }
  GA_CG_STEP(
      GA_STAGE_H2D,
      gak_memcpy_h2d(d_stats, stats, (size_t)(1 + 4 * p.ncols) * 8, c->stream));
  GA_CG_STEP(GA_STAGE_LAUNCH,
             gak_cstar_probe(&p, n, g->d_sel, d_stats, c->stream));
  GA_CG_STEP(
      GA_STAGE_D2H,
      gak_memcpy_d2h(stats, d_stats, (size_t)(1 + 4 * p.ncols) * 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (stats[0] < 0 || stats[0] > n) {
    snprintf(why, nwhy, "a GPU step failed (the joined rows' count)");
    goto fail;
  }
  g->joined = stats[0];
  s->probed = n;
  s->matched = stats[0];
  /* the join entry (rule 3) */
  virt->cols = sqlite3_malloc64(sizeof(ga_ccol) * (size_t)(s->ncols + 1));
  if (!virt->cols) {
    rc = GA_NOMEM;
    goto fail;
  }
  memset(virt->cols, 0, sizeof(ga_ccol) * (size_t)(s->ncols + 1));
  virt->schema = f->schema;
  virt->table = f->table;
  virt->where = GA_CACHE_GPU;
  virt->dev = f->dev;
  virt->enc = f->enc;
  virt->rows = n;
  virt->ncols = s->ncols;
  for (int k = 0; k < s->ncols; k++) {
    const ga_cstar_col *sc = &s->cols[k];
    const ga_centry *e = sc->tab < 0 ? f : s->dims[sc->tab].e;
    const ga_ccol *src = &e->cols[sc->col];
    ga_ccol *col = &virt->cols[k];
    if (sc->tab < 0) {
      *col = *src; /* the fact's own arrays, counts and dictionary */
    } else {
      const int64_t *st = stats + 1 + 4 * cidx[k];
      const gak_cstar_col *o = &p.cols[cidx[k]];
      if (st[0] < 0 || st[0] > stats[0] || st[1] < 0 || st[1] > st[0]) {
        snprintf(why, nwhy, "a GPU step failed (a column's counts)");
        goto fail;
      }
      col->aff = src->aff;
      col->dict = src->dict;
      col->nnow = src->nnow;
      col->mixed = src->mixed;
      col->nnull = n - st[0];
      if (src->dict) {
        col->ntext = st[0];
      } else {
        col->nint = st[1];
        col->nreal = st[0] - st[1];
        col->imin = st[1] ? st[2] : 0;
        col->imax = st[1] ? st[3] : 0;
      }
      col->d_vals = o->vals;
      col->d_isint = o->isint;
      col->d_notnull = o->notnull;
    }
    col->name = (char *)names[k];
    col->src_schema = e->schema;
    col->src_table = e->table;
    col->src_name = src->name;
  }
  sqlite3_free(stats);
  ga_dev_leave(prev);
  g->entered = 0;
  g->probe_ms = ms_now() - t0;
  return GA_OK;
fail:
  gak_stream_sync(c->stream); /* rule 5: nothing in flight */
  gak_take_error();
  sqlite3_free(h_slot);
  sqlite3_free(h_v);
  sqlite3_free(h_f);
  sqlite3_free(stats);
  ga_dev_leave(prev);
  g->entered = 0;
  return rc;
}

int ga_cgstar_query(ga_cgstar *g, ga_centry *virt, ga_cquery *q,
                    ga_scan_out *out, char *why, size_t nwhy) {
  q->d_presel = g->d_sel;
  int rc = ga_cache_query_gpu(g->c, virt, q, out, why, nwhy);
  q->d_presel = NULL;
  return rc;
}

void ga_cgstar_free(ga_cgstar *g, ga_centry *virt) {
  ga_cache *c = g->c;
  ga_centry *f = g->fact;
  int prev;
  if (!c)
    return;
  int in = ga_dev_enter(g->dev, &prev);
  for (int k = 0; virt->cols && k < virt->ncols; k++) {
    ga_ccol *col = &virt->cols[k];
    const ga_ccol *fc = NULL;
    for (int i = 0; i < f->ncols && !fc; i++) /* a fact column? */
      if (f->cols[i].d_vals == col->d_vals && col->d_vals)
        fc = &f->cols[i];
    if (fc && col->dict_state != fc->dict_state) { /* rule 4: the fact's */
      ga_ccol *w = (ga_ccol *)fc;
      w->d_dict = col->d_dict;
      w->ndict = col->ndict;
      w->dict_state = col->dict_state;
      if (col->dict_state == 1) { /* used counts linked entries' bytes */
        pthread_mutex_lock(&c->mu);
        f->bytes += (col->ndict ? col->ndict : 1) * 8;
        if (f->linked)
          c->used += (col->ndict ? col->ndict : 1) * 8;
        pthread_mutex_unlock(&c->mu);
      }
    } else if (!fc && col->d_dict) { /* the join's own: never in used */
      if (in)
        ga_cg_free(col->d_dict);
    }
    col->d_dict = NULL;
  }
  if (in) {
    if (c->stream) {
      gak_stream_sync(c->stream);
      gak_take_error();
    }
    for (int i = 0; i < g->nmem; i++)
      ga_cg_free(g->mem[i]);
    ga_dev_leave(prev);
  }
  g->nmem = 0;
  sqlite3_free(virt->cols);
  memset(virt, 0, sizeof(*virt));
  g->c = NULL;
}
