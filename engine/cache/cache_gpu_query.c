/*
** cache_gpu_query.c — queries on a GPU entry (cache.h), through the cache
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
**      device; only those states come back (and small arrays: the count of
**      passing rows, a grouped query's group bounds, the groups' keys).
**   4. The whole-column shape (no filter, no group, no NULL in x) runs the
**      same gak_sum / gak_best as gpu_sum, over the cached column itself.
**   5. Every other shape, gpu_aggregate's included (issue 20): keys that
**      are columns or derived
**      columns, combined into one group id (each key's dense id times the
**      product of the earlier keys' counts; at most GA_CQ_MANY_MAX_IDS
**      ids: rule 10); values that are columns or programs
*(kernels/cache_expr.cu
**      writes a program's value as a scratch column, then it reduces as a
**      column does).  One sort by group id, one reduce and merge per value.
**      The keys of a group are its first row's, gathered there and made on
**      the host by the key's program (a map lookup at most).
**   6. Few groups (at most GA_CQ_FEW_GROUPS with passing rows, counted on
**      the device first from every row's group id and the filter's bits):
**      no compaction and no sort.  Each group reduces over all rows in
**      place, keeping its own passing ones (cut_few); programs are
**      evaluated at every row (an error counts only at a passing one).
**      The states, first rows and ties are the sorted layout's, since both
**      visit a group's rows in row order.  A value that no min or max reads
**      takes up to GAK_CACHE_FEW groups in one pass instead
**      (gak_cache_reduce_groups: one read of the column, each row added
**      to its group's registers); the rows and first rows come from the
**      count (gak_cache_group_counts).
**   7. The merge runs a block a group, over the group's slices in turn: a
**      group of a thousand slices kept one block busy for a millisecond
**      (ncu, Q1 on the H200).  Past 2 * GA_CQ_MERGE_FAN slices it runs in
**      two levels (merge_levels): runs of GA_CQ_MERGE_FAN slices, then the
**      runs; sums, counts, first rows and best values merge the same in
**      any grouping.
**   8. A group key that is an expression of numbers (no IN list, no
**      derived column inside: key_prog_ok) is evaluated at every row first
**      into a column of its own, which gets a dictionary as a cached key
**      column does (eval_key); then it is a key like the others, and its
**      groups' keys are gathered from that column.  An error at any row
**      declines (the uncached path lets SQLite decide), as do REAL values
**      that are not integers.
**   9. Top k (gpu_query's rule 7, ga_cquery.topk_*): past GA_CACHE_MAX_GROUPS
**      key ids (up to GA_CQ_TOPK_MAX_IDS), or past GPUAGG_CACHE_TOPK_IDS
**      (tests), a query ordered by sum() or total() of a value with a
**      LIMIT takes the sorted layout, then each group's exact order value
**      on the device (gak_cache_group_order; count(*) or count() of a
**      value, ga_cquery.topk_count, issue 37: gak_cache_group_count, past
**      4,096 ids, cache_gpu_many.c rule 3), the groups among the first k
**      with ties (gak_cache_topk), and only those groups' states, as
**      rule 5 makes them: SQLite's post query orders them.  Not every
**      group's state then reaches SQLite, so the path is taken only where
**      no sum() of the query can overflow in any group (topk_mode: REAL
**      values, or INTEGER columns whose largest magnitude times the rows
**      stays below 2^63), the order value is of one kind (a REAL program of
**      the typed form, or a column of INTEGERs or of REALs), and at most
**      GA_CQ_TOPK_CAP groups tie for the limit; any value the device cannot
**      order exactly declines (gak.h).  A count orders exactly whatever
**      the values; the overflow condition above holds for it too.
**  10. Many groups (issue 37, cache_gpu_many.c): past GA_CACHE_MAX_GROUPS
**      key ids (GPUAGG_CACHE_MANY_IDS for tests), up to GA_CQ_MANY_MAX_IDS,
**      a query that is not rule 9's takes rule 5's sorted layout as any
**      other: a column's dictionary is kept up to as many ids.  Its arrays
**      of groups are sized by the groups that can have rows (at most a
**      row each), and what it holds on the device and then on the host is
**      charged to group_bytes (cache_gpu_many.c rule 2): past it, or where
**      the device has no room for its scratch, the cache declines (the
**      entry stays) and says so.  queries_many counts such queries.  Every
**      group's exact states come back: SQLite's post query applies HAVING
**      (d4 of bench/query_bench.py keeps 80% of its groups); a value of
**      sums and counts only, where the device proves it exact, comes back
**      as 32 bytes a group instead and is made exact on the host
**      (cache_gpu_many.c rule 6).
**  11. The groups that come back enter the shared groups (ga_gs_add: its
**      shards lock) from several threads in a many query (rule 10) of many
**      groups (cache_gpu_many.c rule 4): each group is its own key tuple,
**      made and added alone, so the groups are the same in any order.
**      What the groups take on the host, as they come back and in the
**      shared groups, is charged to group_bytes in every query, as rule
**      10's are (cache_gpu_many.c rule 2, without the device's part where
**      the query is not many): past it the cache declines and says so.
**  12. DISTINCT inside aggregates (issue 37): a DISTINCT value reduces as
**      any other (rows, first row, max and min, which DISTINCT does not
**      change), then cache_gpu_distinct.c replaces each group's count (and
**      sum, where read) by its distinct values', from per-group bitmaps on
**      the device; what it cannot do exactly declines with the reason.
**      No whole-column shape (rule 4) and no top k (rule 9) reads one.
**  13. Variances, medians and percentiles (issue 39): a value a variance
**      reads (q->sq) reduces as any other (its exact sum and counts), then
**      cache_gpu_stat.c sums each output group's Σx² on the device over
**      the same slices; a median's value (dist GA_DIST_PCT) gathers and
**      sorts each group's values there instead of rule 12's sets.  Both
**      reach the groups with the group (hand_group: ga_gs_add_sq).  No
**      whole-column shape (rule 4) reads one.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_reduce.h"
#include "gak.h"
#include "gpu.h"
#include "scan_group.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_step.h"

#include "cache.h"
#include "cache_gpu_distinct.h"
#include "cache_gpu_many.h"
#include "cache_gpu_stat.h"

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
  ga_cg_free(c->d_scratch);
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

/* A device state as the engine's (numbers only: nothing to allocate). */
static void xstate_of(ga_xstate *st, const gak_cstate *cs) {
  memset(st, 0, sizeof(*st));
  st->rows = cs->rows;
  st->count = cs->count;
  st->sum = cs->sum;
  ga_sum_normalize(&st->sum);
  bval_of(&st->max, &cs->max);
  bval_of(&st->min, &cs->min);
}

/* A group's answer into the output groups (piece 0: one state per group). */
static int add_group(ga_group_shards *gs, const gak_cstate *cs, int grouped) {
  ga_xstate st;
  ga_value key;
  int64_t bytes = 0;
  memset(&key, 0, sizeof(key));
  xstate_of(&st, cs);
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

#define STEP GA_CG_STEP

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
  if (!ga_cg_sync(c, why, nwhy))
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
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (nd < -1) {
    snprintf(why, nwhy, "a GPU step failed (the key column's NULL count)");
    goto fail;
  }
  if (nd < 0 || nd > GA_CQ_MANY_MAX_IDS) { /* rule 10 */
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
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  k->ndict = nd;
  k->dict_state = 1;
  pthread_mutex_lock(&c->mu);
  e->bytes += (int64_t)bytes; /* may pass the budget a little: see README */
  if (e->linked) /* unlinked meanwhile (or a join's own): used has it not */
    c->used += (int64_t)bytes;
  pthread_mutex_unlock(&c->mu);
  return 1;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  ga_cg_free(k->d_dict);
  k->d_dict = NULL;
  return -1;
}

static void prog_of(const ga_centry *e, const ga_cexpr *x,
                    const gak_cval *d_pool, void *const *d_mapv,
                    void *const *d_mapt, gak_cprog *p);

/* Rule 8: group key x evaluated at every row into a column of its own
** (*out, in one allocation at out->vals), and that column's dictionary of
** distinct keys (*d_dict, *nd), as dictionary() makes one for a cached
** column.  1; 0 (why: declined); -1 (why: a GPU step failed).  The caller
** frees out->vals and *d_dict whatever the result. */
static int eval_key(ga_cache *c, ga_centry *e, const ga_cexpr *x, gak_ccol *out,
                    int64_t **d_dict_out, int64_t *nd_out, char *why,
                    size_t nwhy) {
  int64_t n = e->rows, nn = 0, nd = 0;
  uint32_t err = 0;
  uint64_t *d_x = NULL;
  if (n > INT32_MAX) { /* CUB's item counts are int */
    snprintf(why, nwhy, "group_by on the GPU takes entries below 2^31 rows");
    return 0;
  }
  if (!ga_dev_alloc((void **)&d_x,
                    (size_t)n * 8 + 2 * (size_t)GA_BW(n) * 8 + 8)) {
    snprintf(why, nwhy, "no GPU memory for a group key");
    return -1;
  }
  out->vals = d_x;
  out->isint = d_x + n;
  out->notnull = d_x + n + GA_BW(n);
  arena a = {NULL, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      if (!scratch(c, a.off)) {
        snprintf(why, nwhy, "no GPU memory for a group key");
        return -1;
      }
      a.base = c->d_scratch;
      a.off = 0;
    }
    carve(&a, gak_cache_dict_scratch(n));
    carve(&a, (size_t)n * 8);
    carve(&a, 8);
    carve(&a, (size_t)n * 4);
    carve(&a, gak_cache_compact_scratch(n));
    carve(&a, 8);
    carve(&a, 4);
  }
  a.off = 0;
  void *d_sc = carve(&a, gak_cache_dict_scratch(n));
  int64_t *d_dict = carve(&a, (size_t)n * 8), *d_n = carve(&a, 8);
  uint32_t *d_idx = carve(&a, (size_t)n * 4);
  void *d_csc = carve(&a, gak_cache_compact_scratch(n));
  int64_t *d_cnt = carve(&a, 8);
  uint32_t *d_err = carve(&a, 4);
  gak_cprog p;
  prog_of(e, x, NULL, NULL, NULL, &p); /* key_prog_ok: no pool, no map */
  STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_err, &err, 4, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_eval(&p, n, NULL, NULL, d_x, (uint64_t *)out->isint,
                      (uint64_t *)out->notnull, d_err, c->stream));
  /* its non-NULL count, which the dictionary checks */
  STEP(GA_STAGE_LAUNCH, gak_cache_compact((const uint32_t *)out->notnull, n,
                                          d_idx, d_cnt, d_csc, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&err, d_err, 4, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&nn, d_cnt, 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (err) { /* at some row, perhaps one the filter drops: SQLite decides */
    snprintf(why, nwhy,
             "a group key raises an error on a row (abs of "
             "-9223372036854775808): SQLite reports it");
    return 0;
  }
  STEP(GA_STAGE_LAUNCH,
       gak_cache_dict(*out, n, nn, d_dict, d_n, d_sc, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&nd, d_n, 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (nd < -1 || nn < 0 || nn > n) {
    snprintf(why, nwhy, "a GPU step failed (a group key's NULL count)");
    return -1;
  }
  if (nd == -1) {
    snprintf(why, nwhy,
             "a group key of REAL values that are not integers "
             "stays uncached on the GPU");
    return 0;
  }
  if (nd > GA_CQ_MANY_MAX_IDS) { /* rule 10 */
    snprintf(why, nwhy, "more than %lld groups of keys on the GPU",
             (long long)GA_CQ_MANY_MAX_IDS);
    return 0;
  }
  if (!ga_dev_alloc((void **)d_dict_out, (size_t)(nd ? nd : 1) * 8)) {
    snprintf(why, nwhy, "no GPU memory for a group key");
    return -1;
  }
  STEP(GA_STAGE_H2D,
       gak_memcpy_d2d(*d_dict_out, d_dict, (size_t)nd * 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  *nd_out = nd;
  return 1;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  return -1;
}

static int bits_for(int64_t maxval) {
  int b = 1;
  while (b < 32 && ((int64_t)1 << b) <= maxval)
    b++;
  return b;
}

/* Slices of at most `step` positions over [s0, s1), tagged `tag`, appended
** at h_sl[*nsl].  1, or 0 with why past maxsl. */
static int add_slices(gak_cslice *h_sl, int64_t *nsl, int64_t maxsl,
                      uint32_t tag, int64_t s0, int64_t s1, int64_t step,
                      char *why, size_t nwhy) {
  for (int64_t p = s0; p < s1; p += step) {
    if (*nsl >= maxsl) {
      snprintf(why, nwhy, "a GPU step failed (too many slices)");
      return 0;
    }
    h_sl[*nsl].group = tag;
    h_sl[*nsl].start = (uint32_t)p;
    h_sl[*nsl].len = (uint32_t)(s1 - p < step ? s1 - p : step);
    h_sl[*nsl].pad = 0;
    (*nsl)++;
  }
  return 1;
}

/* The groups' slices from their bounds (h_se: starts, then ends; one
** group [0, m) when not grouped): at most `slice` rows each, groups without
** rows left out.  every: the groups hold every passing row (not rule 9's
** chosen few).  1, or 0 with why (bounds that do not add up to m). */
static int cut_slices(const uint32_t *h_se, int64_t ngroups, int grouped,
                      int64_t m, int64_t slice, int64_t maxsl, int every,
                      gak_cslice *h_sl, gak_cgroup *h_gr, int64_t *nsl_out,
                      int64_t *ngr_out, char *why, size_t nwhy) {
  int64_t nsl = 0, ngr = 0, total = 0;
  for (int64_t g = 0; g < ngroups; g++) {
    uint32_t s0 = h_se[g], s1 = grouped ? h_se[ngroups + g] : h_se[1];
    if (s1 <= s0)
      continue;
    if (s1 > m) {
      snprintf(why, nwhy, "a GPU step failed (bad group bounds)");
      return 0;
    }
    total += s1 - s0;
    if (total > m) { /* so ngr <= m too: h_gr holds a group a row */
      snprintf(why, nwhy, "a GPU step failed (group bounds overlap)");
      return 0;
    }
    h_gr[ngr].first_slice = (uint32_t)nsl;
    if (!add_slices(h_sl, &nsl, maxsl, (uint32_t)ngr, s0, s1, slice, why, nwhy))
      return 0;
    h_gr[ngr].nslices = (uint32_t)(nsl - h_gr[ngr].first_slice);
    ngr++;
  }
  if (every && total != m) { /* every passing row in exactly one group */
    snprintf(why, nwhy, "a GPU step failed (group bounds do not add up)");
    return 0;
  }
  *nsl_out = nsl;
  *ngr_out = ngr;
  return 1;
}

/* Few groups (rule 6): each group's slices cover every passing row, in
** row order, and the reduce counts only the group's own (gak_cache_reduce's
** d_gid).  A group then reads the value columns in order, once, where the
** sorted layout reads them through a group's scattered rows (a gather that
** brings a whole sector for one value); past a few groups the sort wins. */
#define GA_CQ_FEW_GROUPS 8

/* The few groups' slices over all n rows, from their row counts (cnt, by
** group id): slices of `slice` rows a group times the groups, so that the
** blocks are as many as one pass's.  1, or 0 with why. */
static int cut_few(const uint32_t *cnt, int64_t ngroups, int64_t n,
                   int64_t slice, int64_t maxsl, gak_cslice *h_sl,
                   gak_cgroup *h_gr, int64_t *nsl_out, int64_t *ngr_out,
                   char *why, size_t nwhy) {
  int64_t nsl = 0, ngr = 0, ne = 0;
  for (int64_t g = 0; g < ngroups; g++)
    ne += cnt[g] != 0;
  /* a multiple of 64: slices start on bitmap words and on the reduce's
  ** 4-row vectors (kernels/cache.cu, k_reduce_groups) */
  int64_t per = (slice * (ne ? ne : 1) + 63) & ~(int64_t)63;
  for (int64_t g = 0; g < ngroups; g++) {
    if (!cnt[g])
      continue;
    h_gr[ngr].first_slice = (uint32_t)nsl;
    /* tagged with the group's id: the one the reduce keeps */
    if (!add_slices(h_sl, &nsl, maxsl, (uint32_t)g, 0, n, per, why, nwhy))
      return 0;
    h_gr[ngr].nslices = (uint32_t)(nsl - h_gr[ngr].first_slice);
    ngr++;
  }
  *nsl_out = nsl;
  *ngr_out = ngr;
  return 1;
}

/* Rule 7: slices a first-level merge block takes (GPUAGG_CACHE_MERGE_FAN,
** 2 .. 1024, read at each query, sets it for tests: test_cache.py's
** merge_levels uses 2, so that 60,000 rows merge in two levels). */
#define GA_CQ_MERGE_FAN 32

static int64_t merge_fan(void) {
  const char *s = getenv("GPUAGG_CACHE_MERGE_FAN");
  int64_t f = s ? atoll(s) : GA_CQ_MERGE_FAN;
  return f >= 2 && f <= 1024 ? f : GA_CQ_MERGE_FAN;
}

/* The merge's two levels when a group has more than 2 * GA_CQ_MERGE_FAN
** slices: h_mgr, runs of at most GA_CQ_MERGE_FAN slices of one group, and
** h_gr2, each group's runs among them.  The count of runs (0: one level
** does), or -1 past cap. */
static int64_t merge_levels(const gak_cgroup *h_gr, int64_t ngr,
                            gak_cgroup *h_mgr, int64_t cap, gak_cgroup *h_gr2) {
  int64_t most = 0, nm = 0, fan = merge_fan();
  for (int64_t g = 0; g < ngr; g++)
    if (h_gr[g].nslices > most)
      most = h_gr[g].nslices;
  if (most <= 2 * fan)
    return 0;
  for (int64_t g = 0; g < ngr; g++) {
    h_gr2[g].first_slice = (uint32_t)nm;
    for (uint32_t k = 0; k < h_gr[g].nslices; k += (uint32_t)fan) {
      if (nm >= cap)
        return -1;
      h_mgr[nm].first_slice = h_gr[g].first_slice + k;
      h_mgr[nm].nslices = h_gr[g].nslices - k < (uint32_t)fan
                              ? h_gr[g].nslices - k
                              : (uint32_t)fan;
      nm++;
    }
    h_gr2[g].nslices = (uint32_t)(nm - h_gr2[g].first_slice);
  }
  return nm;
}

/* Rule 9's bounds: key ids (the sorted layout's arrays take 8 bytes an id
** and the order's 16), and groups handed over (k with ties). */
#define GA_CQ_TOPK_MAX_IDS ((int64_t)1 << 25)
#define GA_CQ_TOPK_CAP ((int64_t)1 << 16)

/* A program whose every value is a REAL or NULL: columns of no INTEGER
** (nor TEXT), literals, unary minus and + - * /, no operation of two
** INTEGER literals (kernels/cache_expr.cu's real_plan, on the host). */
static int real_only(const ga_centry *e, const ga_cexpr *x) {
  unsigned char isint[GA_CX_MAX + 1];
  int sp = 0;
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    const ga_ccol *c = in->op == GA_CX_COL ? &e->cols[in->col] : NULL;
    int lit = in->v.type == GA_V_INT    ? GA_CX_TINT
              : in->v.type == GA_V_REAL ? GA_CX_TREAL
                                        : GA_CX_TNULL;
    if (!ga_cx_real_step(in->op, lit, c && !c->nint && !c->ntext && !c->mixed,
                         isint, &sp, GA_CX_MAX))
      return 0;
  }
  return sp == 1 && !isint[0];
}

/* No group's sum() of value x can overflow: REALs only, or a column whose
** largest INTEGER magnitude times the entry's rows is below 2^63. */
static int sum_safe(const ga_centry *e, const ga_cexpr *x) {
  int bc = ga_cx_bare(x);
  if (bc < 0)
    return real_only(e, x);
  const ga_ccol *c = &e->cols[bc];
  if (!c->nint)
    return 1;
  if (c->imin == INT64_MIN)
    return 0;
  int64_t big = c->imax > -c->imin ? c->imax : -c->imin;
  return big == 0 || e->rows <= INT64_MAX / big;
}

/* Rule 9: the order value's GAK_ORDER_* mode, or -1 (not this path). */
static int topk_mode(const ga_centry *e, const ga_cquery *q) {
  if (q->topk_val < 0 || q->topk_val >= q->nvals || q->topk_k < 1 ||
      q->topk_k > GA_CQ_TOPK_CAP || q->nkeys == 0 || q->ndist)
    return -1;
  for (int i = 0; i < q->nvals; i++)
    if (q->val_sum[i] && !sum_safe(e, ga_cq_val(q, i)))
      return -1;
  if (q->topk_count) /* exact whatever the values (cache_gpu_many.c) */
    return GA_CQ_ORDER_COUNT;
  const ga_cexpr *x = ga_cq_val(q, q->topk_val);
  int bc = ga_cx_bare(x), mode;
  if (bc >= 0) {
    const ga_ccol *c = &e->cols[bc];
    if (c->mixed || c->ntext || (c->nint && c->nreal))
      return -1;
    mode = c->nreal ? GAK_ORDER_REAL : GAK_ORDER_INT;
  } else if (real_only(e, x)) {
    mode = GAK_ORDER_REAL;
  } else {
    return -1;
  }
  return mode | (q->topk_total ? GAK_ORDER_TOTAL : 0);
}

static int multi(ga_cache *c, ga_centry *e, const ga_cquery *q,
                 ga_group_shards *gs, char *why, size_t nwhy);

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
    c->release_dev = ga_cache_gpu_release; /* cache.c rule 4 */
    if (!ga_stream_new(&c->stream)) {
      ga_dev_leave(prev);
      snprintf(why, nwhy, "a GPU step failed (init)");
      return GA_SCAN_FALLBACK;
    }
  }
  int one = q->simple && q->xcol >= 0 && !q->has_fprog && !q->ndist && !q->nsq;
  out->shape = ga_gshape_one(GA_COLL_BINARY);
  if (!one) { /* rule 5 */
    out->shape.nk = q->nkeys ? q->nkeys : 1;
    out->shape.nc = q->ncarry;
    out->shape.ns = q->nvals;
  }
  out->groups = ga_gs_new(&out->shape);
  if (!out->groups) {
    ga_dev_leave(prev);
    return GA_SCAN_NOMEM;
  }
  const ga_ccol *x = one ? &e->cols[q->xcol] : NULL;
  if (one && q->gcol < 0 && q->filter.nterms == 0 && x->nnull == 0 &&
      !q->d_presel)
    rc = e->rows ? whole_column(c, e, x, out->groups, why, nwhy) : GA_SCAN_OK;
  else
    rc = multi(c, e, q, out->groups, why, nwhy);
  ga_dev_leave(prev);
  if (rc == GA_SCAN_OK && (q->any_order ? ga_gs_list : ga_gs_sorted)(
                              out->groups, &out->sorted, &out->n))
    rc = GA_SCAN_NOMEM;
  if (rc != GA_SCAN_OK)
    ga_scan_out_free(out);
  out->threads = 1;
  return rc;
}

/* ---- rule 5: gpu_query's shapes ---- */

/* GPUAGG_CACHE_PROFILE=1: each step's wall time (cache.h). */
static void prof(const char *what, double *t0) {
  ga_cache_prof("cache_gpu", what, t0);
}

/* Where a key or carried column of q comes from on the GPU: an entry
** column, through a derived column's map or not. */
typedef struct gsrc {
  int col; /* -1: prog */
  const ga_cx_map *map;
  int prog; /* a group key evaluated first (rule 8) */
} gsrc;

/* A group key of numbers that the GPU evaluates before the query (rule 8):
** no IN list and no derived column (their arrays go up with the query's). */
static int key_prog_ok(const ga_cquery *q, int k) {
  const ga_cexpr *x = ga_cq_key(q, k);
  if (k >= q->nkeys || q->kdict[k])
    return 0;
  for (int i = 0; i < x->n; i++)
    if (x->ins[i].op == GA_CX_IN || x->ins[i].op == GA_CX_MAP)
      return 0;
  return 1;
}

static int key_source(const ga_cquery *q, int k, gsrc *g) {
  const ga_cexpr *x = ga_cq_key(q, k);
  g->prog = 0;
  if (x->n < 1 || x->n > 2 || x->ins[0].op != GA_CX_COL ||
      (x->n == 2 && x->ins[1].op != GA_CX_MAP)) {
    g->col = -1;
    g->map = NULL;
    g->prog = key_prog_ok(q, k);
    return g->prog;
  }
  g->col = x->ins[0].col;
  g->map = x->n == 2 ? &x->env->maps[x->ins[1].a] : NULL;
  return 1;
}

/* The key's value from its source column's value (rule 5). */
static void key_value(const gsrc *g, const gak_cval *v, ga_value *out) {
  memset(out, 0, sizeof(*out));
  int t = v->type;
  uint64_t bits = (uint64_t)v->bits;
  if (g->map) {
    int64_t c = t == GA_CX_TNULL ? g->map->n : (int64_t)bits;
    if (c < 0 || c > g->map->n)
      c = g->map->n;
    t = g->map->type[c];
    bits = g->map->v[c];
  }
  out->type = t == GA_CX_TINT    ? GA_V_INT
              : t == GA_CX_TREAL ? GA_V_REAL
                                 : GA_V_NULL;
  out->i = (int64_t)bits;
  out->r = ga_bitsd((int64_t)bits);
}

/* Can the GPU run value program x (gak.h's limits)?  1, or 0 with why. */
static int prog_fits(const ga_cexpr *x, char *why, size_t nwhy) {
  int cols[GAK_CX_COLS], ncols = 0, maps = 0;
  if (x->depth > GAK_CX_DEPTH || x->n > GAK_CX_MAX) {
    snprintf(why, nwhy, "an expression deeper than the GPU takes");
    return 0;
  }
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    if (in->op == GA_CX_MAP && ++maps > GAK_CX_MAPS) {
      snprintf(why, nwhy, "more derived columns than the GPU takes");
      return 0;
    }
    if (in->op != GA_CX_COL)
      continue;
    int seen = 0;
    for (int i = 0; i < ncols; i++)
      seen |= cols[i] == in->col;
    if (!seen && ncols == GAK_CX_COLS) {
      snprintf(why, nwhy, "an expression of more columns than the GPU takes");
      return 0;
    }
    if (!seen)
      cols[ncols++] = in->col;
  }
  return 1;
}

/* Program x as the kernels take it: columns by slot, maps by slot (their
** device copies made, into the arena), the pool at d_pool. */
static void prog_of(const ga_centry *e, const ga_cexpr *x,
                    const gak_cval *d_pool, void *const *d_mapv,
                    void *const *d_mapt, gak_cprog *p) {
  int cols[GAK_CX_COLS], ncols = 0, nmaps = 0;
  memset(p, 0, sizeof(*p));
  p->n = x->n;
  p->depth = x->depth;
  p->pool = d_pool;
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    gak_cins *o = &p->ins[k];
    o->op = in->op;
    o->a = in->a;
    o->b = in->b;
    o->col = in->col;
    o->type = in->v.type == GA_V_INT    ? GA_CX_TINT
              : in->v.type == GA_V_REAL ? GA_CX_TREAL
                                        : GA_CX_TNULL;
    o->bits = in->v.type == GA_V_INT ? in->v.i : (int64_t)ga_cx_u(in->v.r);
    if (in->op == GA_CX_COL) {
      int slot = -1;
      for (int i = 0; i < ncols; i++)
        if (cols[i] == in->col)
          slot = i;
      if (slot < 0) {
        slot = ncols++;
        cols[slot] = in->col;
        p->cols[slot] = ccol(&e->cols[in->col]);
      }
      o->col = slot;
    } else if (in->op == GA_CX_MAP) {
      const ga_cx_map *m = &x->env->maps[in->a];
      p->maps[nmaps].v = d_mapv[in->a];
      p->maps[nmaps].type = d_mapt[in->a];
      p->maps[nmaps].n = m->n;
      o->a = nmaps++;
    }
  }
}

/* Can the GPU answer q (rule 5)?  1, or 0 with why. */
int ga_cache_gpu_takes(const ga_centry *e, const ga_cquery *q, char *why,
                       size_t nwhy) {
  (void)e;
  if (q->has_fprog && !prog_fits(&q->fprog, why, nwhy))
    return 0;
  if (q->nkeys > GAK_CACHE_MAX_KEYS) {
    snprintf(why, nwhy, "more than %d keys on the GPU", GAK_CACHE_MAX_KEYS);
    return 0;
  }
  for (int k = 0; k < q->nkeys + q->ncarry; k++) {
    gsrc g;
    if (!key_source(q, k, &g)) {
      snprintf(why, nwhy,
               "a group key that is an expression with IN or a derived "
               "column inside stays on host entries");
      return 0;
    }
    if (g.prog && !prog_fits(ga_cq_key(q, k), why, nwhy))
      return 0;
    if (k < q->nkeys && g.map && !q->kdict[k]) {
      snprintf(why, nwhy,
               "a derived group key of numbers stays on host "
               "entries");
      return 0;
    }
  }
  for (int i = 0; i < q->nvals; i++)
    if (!prog_fits(ga_cq_val(q, i), why, nwhy))
      return 0;
  return !q->ndist || ga_cgd_takes(e, q, why, nwhy); /* rule 12 */
}

/* Rule 9: the groups among the first q->topk_k by the order value (value
** q->topk_val, at the m passing rows rows_idx in group order; a program's
** into d_xv), ties kept: their bounds into h_se (starts, then ends) and
** their count into *ng.  1; 0 declined (why); -1 a GPU step failed (why). */
static int choose_topk(ga_cache *c, ga_centry *e, const ga_cquery *q, int mode,
                       int64_t ngroups, int64_t m, const uint32_t *rows_idx,
                       uint32_t *d_start, const gak_cval *d_pool,
                       void *const *d_mapv, void *const *d_mapt, uint64_t *d_xv,
                       uint32_t *d_err, uint64_t *d_key, uint32_t *d_ids,
                       uint32_t *d_bounds, int64_t *d_count, uint32_t *d_flag,
                       void *d_sc, int64_t cap, uint32_t *h_se, int64_t *ng,
                       char *why, size_t nwhy) {
  const ga_cexpr *x = ga_cq_val(q, q->topk_val);
  const uint32_t *vidx = rows_idx;
  uint32_t zero = 0, err = 0, flag = 0, *h_b = NULL;
  int64_t cnt = 0;
  gak_ccol col;
  int bc = ga_cx_bare(x);
  STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_err, &zero, 4, c->stream));
  STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_flag, &zero, 4, c->stream));
  if (q->topk_count == 1) { /* count(*): the bounds alone */
    memset(&col, 0, sizeof(col));
  } else if (bc >= 0) {
    col = ccol(&e->cols[bc]);
  } else { /* at the passing rows in group order, as rule 5's values */
    gak_cprog p;
    prog_of(e, x, d_pool, d_mapv, d_mapt, &p);
    col.vals = d_xv;
    col.isint = d_xv + m;
    col.notnull = d_xv + m + GA_BW(m);
    vidx = NULL;
    STEP(GA_STAGE_LAUNCH,
         gak_cache_eval(&p, m, rows_idx, NULL, d_xv, (uint64_t *)col.isint,
                        (uint64_t *)col.notnull, d_err, c->stream));
  }
  if (mode == GA_CQ_ORDER_COUNT)
    STEP(GA_STAGE_LAUNCH,
         gak_cache_group_count(col, vidx, d_start, d_start + ngroups, ngroups,
                               q->topk_desc, d_key, c->stream));
  else
    STEP(GA_STAGE_LAUNCH,
         gak_cache_group_order(col, vidx, d_start, d_start + ngroups, ngroups,
                               mode, q->topk_desc, d_key, d_flag, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_topk(d_key, d_start, d_start + ngroups, ngroups, q->topk_k,
                      cap, d_ids, d_bounds, d_count, d_sc, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&err, d_err, 4, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&flag, d_flag, 4, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&cnt, d_count, 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (err || flag) {
    snprintf(why, nwhy,
             err ? "an expression raises an error on a row (abs of "
                   "-9223372036854775808): SQLite reports it"
                 : "the GPU cannot order the groups by that sum exactly (an "
                   "infinity, a value of another type, a sum past the normal "
                   "doubles, or values 64 binades apart)");
    return 0;
  }
  if (cnt < 1 || cnt > ngroups) {
    snprintf(why, nwhy, "a GPU step failed (the top groups' count)");
    goto fail;
  }
  if (cnt > cap) {
    snprintf(why, nwhy,
             "more than %lld groups tie for the LIMIT of an ORDER BY on "
             "the GPU",
             (long long)cap);
    return 0;
  }
  h_b = sqlite3_malloc64((size_t)cnt * 8);
  if (!h_b) {
    snprintf(why, nwhy, "out of memory");
    return -1;
  }
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(h_b, d_bounds, (size_t)cnt * 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  for (int64_t g = 0; g < cnt; g++) {
    h_se[g] = h_b[2 * g];
    h_se[cnt + g] = h_b[2 * g + 1];
  }
  sqlite3_free(h_b);
  *ng = cnt;
  return 1;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  sqlite3_free(h_b);
  return -1;
}

/* Group g of the answer (its keys from h_kv, its states from h_st) into
** the shared groups (rule 5); sts: room for nv states.  GA_SCAN_OK or
** GA_SCAN_NOMEM.  Rule 11: threads call it, each for its own groups. */
typedef struct hand_ctx {
  ga_group_shards *gs;
  const gsrc *src;
  const gak_cval *h_kv;
  const gak_cstate *h_st;
  int64_t ngr;
  int nk, nkc, nv;
  ga_cgs *stat;          /* rule 13: Σx² windows and medians' values */
  const gak_cmany *h_cm; /* cache_gpu_many.c rule 6: values with cmp[i] */
  const uint32_t *h_cb;  /* and each group's bounds (its rows) */
  const unsigned char *cmp;
} hand_ctx;

static int hand_group(void *arg, int64_t g, ga_xstate *sts) {
  const hand_ctx *h = arg;
  ga_value kv[GA_MAX_KEYS];
  int64_t bytes = 0;
  memset(kv, 0, sizeof(kv));
  kv[0].type = GA_V_NULL;
  for (int k = 0; k < h->nkc; k++)
    key_value(&h->src[k], &h->h_kv[(size_t)k * (size_t)h->ngr + (size_t)g],
              &kv[k + (h->nk ? 0 : 1)]);
  for (int i = 0; i < h->nv; i++)
    if (h->cmp[i])
      ga_cq_compact_xstate(&sts[i],
                           &h->h_cm[(size_t)i * (size_t)h->ngr + (size_t)g],
                           h->h_cb[2 * g + 1] - h->h_cb[2 * g]);
    else
      xstate_of(&sts[i], &h->h_st[(size_t)i * (size_t)h->ngr + (size_t)g]);
  ga_gsq *sqs[GA_MAX_STATES];
  ga_dset *sets[GA_MAX_STATES];
  if (h->stat->ngr && ga_cgs_hand(h->stat, h->nv, g, sqs, sets))
    return GA_SCAN_NOMEM; /* rule 13 */
  return ga_gs_add_sq(h->gs, kv, sts, h->stat->ngr ? sets : NULL,
                      h->stat->ngr ? sqs : NULL, 0, &bytes)
             ? GA_SCAN_NOMEM
             : GA_SCAN_OK;
}

static int multi(ga_cache *c, ga_centry *e, const ga_cquery *q,
                 ga_group_shards *gs, char *why, size_t nwhy) {
  int64_t n = e->rows;
  int nk = q->nkeys, nkc = q->nkeys + q->ncarry, nv = q->nvals;
  uint32_t zero = 0, err = 0; /* rule 2: outlive any copy of a failed step */
  double t0 = ga_cache_prof_ms();
  const ga_cx_env *env = q->env;
  int nmaps = env ? env->nmaps : 0, npool = env ? env->npool : 0;
  gsrc src[GA_MAX_KEYS];
  gak_ckeys keys;
  int64_t card[GAK_CACHE_MAX_KEYS], ngroups = 1;
  uint32_t *h_se = NULL, **h_kmap = NULL;
  gak_cslice *h_sl = NULL;
  gak_cgroup *h_gr = NULL, *h_mgr = NULL, *h_gr2 = NULL; /* done: frees */
  gak_cstate *h_st = NULL;
  gak_cval *h_pool = NULL, *h_kv = NULL;
  uint32_t *h_rows = NULL, *h_ids = NULL;
  gak_cmany *h_cm = NULL; /* cache_gpu_many.c rule 6 */
  uint32_t *h_cb = NULL, *d_cb = NULL, *d_cfirst = NULL, *d_cflag = NULL;
  gak_cmany *d_cm = NULL;
  unsigned char cmp[GA_MAX_STATES];
  int ncmp = 0;
  int rc = GA_SCAN_FALLBACK;
  ga_cgs stat; /* rule 13 */
  memset(&stat, 0, sizeof(stat));
  gak_ccol xk[GAK_CACHE_MAX_KEYS]; /* rule 8: evaluated keys and dictionaries */
  int64_t *d_xkd[GAK_CACHE_MAX_KEYS], xknd[GAK_CACHE_MAX_KEYS];
  memset(xk, 0, sizeof(xk));
  memset(d_xkd, 0, sizeof(d_xkd));
  memset(&keys, 0, sizeof(keys));
  for (int k = 0; k < nkc; k++)
    key_source(q, k, &src[k]);
  const int tmode = topk_mode(e, q); /* rule 9 */
  const int64_t max_ids = tmode >= 0 ? GA_CQ_TOPK_MAX_IDS : GA_CQ_MANY_MAX_IDS;
  /* each key's ids (rule 5) */
  for (int k = 0; k < nk; k++) {
    if (src[k].prog) {
      int d = eval_key(c, e, ga_cq_key(q, k), &xk[k], &d_xkd[k], &xknd[k], why,
                       nwhy);
      if (d <= 0) {
        rc = d == 0 ? GA_CACHE_DECLINED : GA_SCAN_FALLBACK;
        goto done;
      }
      card[k] = xknd[k] + 1;
    } else if (src[k].map) {
      card[k] = ga_dict_count(q->kdict[k]) + 1; /* and NULL */
    } else {
      ga_ccol *kc = &e->cols[src[k].col];
      int d = dictionary(c, e, kc, why, nwhy);
      if (d <= 0) {
        rc = d == 0 ? GA_CACHE_DECLINED : GA_SCAN_FALLBACK;
        goto done;
      }
      card[k] = kc->ndict + 1;
    }
    if (card[k] > max_ids / ngroups) {
      snprintf(why, nwhy, "more than %lld groups of keys on the GPU",
               (long long)max_ids);
      rc = GA_CACHE_DECLINED;
      goto done;
    }
    ngroups *= card[k];
  }
  h_kmap = sqlite3_malloc64(sizeof(uint32_t *) * (size_t)(nk ? nk : 1));
  if (!h_kmap) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
  memset(h_kmap, 0, sizeof(uint32_t *) * (size_t)(nk ? nk : 1));
  for (int k = 0; k < nk; k++) /* a derived key: code -> its id */
    if (src[k].map) {
      const ga_cx_map *m = src[k].map;
      h_kmap[k] = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(m->n + 1));
      if (!h_kmap[k]) {
        rc = GA_SCAN_NOMEM;
        goto fail;
      }
      for (int64_t i = 0; i <= m->n; i++)
        h_kmap[k][i] = m->type[i] == GA_V_NULL ? (uint32_t)(card[k] - 1)
                                               : (uint32_t)m->v[i];
    }
  gak_cfilter f = q->filter;
  for (int t = 0; t < f.nterms; t++)
    f.cols[t] = ccol(&e->cols[f.terms[t].col]);
  for (int t = 0; t < f.nterms; t++)
    f.terms[t].col = t;
  int grouped = nk > 0, any_prog = 0;
  for (int i = 0; i < nv; i++)
    any_prog |= ga_cx_bare(ga_cq_val(q, i)) < 0;
  /* rule 9: the top-k path, whose groups are the chosen few (ngcap) */
  const int topk =
      tmode >= 0 && ngroups > ga_cq_topk_min_ids(tmode == GA_CQ_ORDER_COUNT);
  const int many = !topk && ngroups > ga_cq_many_ids(); /* rule 10 */
  int xv_of = -1; /* the value whose program d_xv holds (rule 9) */
  const int64_t ngcap =
      topk && ngroups > GA_CQ_TOPK_CAP ? GA_CQ_TOPK_CAP : ngroups;
  /* rule 10: the groups' arrays, at most a group a row whatever the ids */
  const int64_t ngst = ngcap > n && n > 0 ? n : ngcap;
  int64_t maxsl =
      (n / GA_CQ_MIN_SLICE + 1 < GA_CQ_MAX_SLICES ? n / GA_CQ_MIN_SLICE + 1
                                                  : GA_CQ_MAX_SLICES) +
      ngst + 1;
  arena a = {NULL, 0, 0};
  uint32_t *d_sel = NULL, *d_idx = NULL, *d_gid = NULL, *d_gid2 = NULL,
           *d_idx2 = NULL, *d_start = NULL, *d_err = NULL, *d_rows = NULL,
           *d_kmap[GAK_CACHE_MAX_KEYS];
  int64_t *d_count = NULL;
  void *d_csc = NULL, *d_ssc = NULL, *d_mapv[64], *d_mapt[64];
  gak_cslice *d_sl = NULL;
  gak_cstate *d_sst = NULL, *d_gst = NULL, *d_mst = NULL;
  gak_cgroup *d_gr = NULL, *d_mgr = NULL;
  int64_t nmax1 = maxsl / 2 + ngst + 1, nm1 = 0; /* a fan of 2 at least */
  gak_cval *d_pool = NULL, *d_kv = NULL;
  uint64_t *d_xv = NULL, *d_tkey = NULL; /* rule 9's */
  uint32_t *d_tids = NULL, *d_tbounds = NULL, *d_tflag = NULL;
  int64_t *d_tcount = NULL;
  void *d_tsc = NULL;
  if (nmaps > 64) {
    snprintf(why, nwhy, "more derived columns than the GPU takes");
    rc = GA_CACHE_DECLINED;
    goto fail;
  }
  for (int pass = 0; pass < 2; pass++) {
    if (pass && many &&
        !ga_cq_many_fits(q, ga_gs_shape(gs), (int64_t)a.off + ngroups * 8, 0,
                         why, nwhy)) {
      rc = GA_CACHE_DECLINED; /* rule 10's charge */
      goto fail;
    }
    if (pass) {
      if (!scratch(c, a.off)) {
        snprintf(why, nwhy, "no GPU memory for the query");
        rc = many ? GA_CACHE_DECLINED : GA_SCAN_FALLBACK; /* rule 10 */
        goto fail;
      }
      a.base = c->d_scratch;
      a.off = 0;
    }
    d_sel = carve(&a, (size_t)GA_BW(n) * 8);
    d_idx = carve(&a, (size_t)n * 4);
    d_count = carve(&a, 8);
    d_csc = carve(&a, gak_cache_compact_scratch(n));
    if (grouped) {
      d_gid = carve(&a, (size_t)n * 4 * 3);
      d_gid2 = d_gid ? d_gid + n : NULL;
      d_idx2 = d_gid ? d_gid + 2 * n : NULL;
      d_ssc = carve(&a, gak_cache_sort_scratch(n));
      d_start = carve(&a, (size_t)ngroups * 4 * 2);
    }
    if (topk) {
      d_tkey = carve(&a, (size_t)ngroups * 8);
      d_tids = carve(&a, (size_t)ngcap * 4);
      d_tbounds = carve(&a, (size_t)ngcap * 8);
      d_tcount = carve(&a, 8);
      d_tflag = carve(&a, 4);
      d_tsc = carve(&a, gak_cache_topk_scratch(ngroups));
    }
    d_sl = carve(&a, sizeof(gak_cslice) * (size_t)maxsl);
    d_sst = carve(&a, sizeof(gak_cstate) * (size_t)maxsl);
    d_gr = carve(&a, sizeof(gak_cgroup) * (size_t)ngst);
    d_gst = carve(&a, sizeof(gak_cstate) * (size_t)ngst);
    /* rule 7: the merge's first level */
    d_mgr = carve(&a, sizeof(gak_cgroup) * (size_t)nmax1);
    d_mst = carve(&a, sizeof(gak_cstate) * (size_t)nmax1);
    if (any_prog) /* a program's value at the passing rows, one at a time */
      d_xv = carve(&a, (size_t)n * 8 + 2 * (size_t)GA_BW(n) * 8);
    d_err = carve(&a, 4);
    d_pool = carve(&a, sizeof(gak_cval) * (size_t)(npool ? npool : 1));
    for (int i = 0; i < nmaps; i++) {
      d_mapv[i] = carve(&a, (size_t)(env->maps[i].n + 1) * 8);
      d_mapt[i] = carve(&a, (size_t)(env->maps[i].n + 1));
    }
    for (int k = 0; k < nk; k++)
      d_kmap[k] =
          src[k].map ? carve(&a, (size_t)(src[k].map->n + 1) * 4) : NULL;
    d_rows = carve(&a, (size_t)ngst * 4);
    d_kv = carve(&a, sizeof(gak_cval) * (size_t)ngst);
    if (many) { /* cache_gpu_many.c rule 6 */
      d_cb = carve(&a, (size_t)ngst * 8);
      d_cm = carve(&a, sizeof(gak_cmany) * (size_t)ngst);
      d_cfirst = carve(&a, (size_t)ngst * 4);
      d_cflag = carve(&a, 4);
    }
  }
  /* the query's small arrays */
  if (npool) {
    h_pool = sqlite3_malloc64(sizeof(gak_cval) * (size_t)npool);
    if (!h_pool) {
      rc = GA_SCAN_NOMEM;
      goto fail;
    }
    for (int i = 0; i < npool; i++) {
      const ga_value *v = &env->pool[i];
      h_pool[i].type = v->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL;
      h_pool[i].pad = 0;
      h_pool[i].bits = v->type == GA_V_INT ? v->i : (int64_t)ga_cx_u(v->r);
    }
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_pool, h_pool, sizeof(gak_cval) * (size_t)npool,
                        c->stream));
  }
  for (int i = 0; i < nmaps; i++) {
    const ga_cx_map *m = &env->maps[i];
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_mapv[i], m->v, (size_t)(m->n + 1) * 8, c->stream));
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_mapt[i], m->type, (size_t)(m->n + 1), c->stream));
  }
  keys.n = nk;
  for (int k = 0, stride = 1; k < nk; k++) {
    gak_ckey *kk = &keys.k[k];
    if (src[k].prog) { /* rule 8 */
      kk->col = xk[k];
      kk->dict = d_xkd[k];
      kk->ndict = xknd[k];
    } else if (src[k].map) {
      kk->col = ccol(&e->cols[src[k].col]);
      kk->map = d_kmap[k];
      kk->nmap = src[k].map->n + 1;
      STEP(GA_STAGE_H2D,
           gak_memcpy_h2d(d_kmap[k], h_kmap[k], (size_t)(src[k].map->n + 1) * 4,
                          c->stream));
    } else {
      const ga_ccol *kc = &e->cols[src[k].col];
      kk->col = ccol(kc);
      kk->dict = kc->d_dict;
      kk->ndict = kc->ndict;
    }
    kk->stride = (uint32_t)stride;
    stride *= (int)card[k];
  }

  int64_t m = 0;
  prof("setup", &t0);
  h_sl = sqlite3_malloc64(sizeof(gak_cslice) * (size_t)maxsl);
  h_gr = sqlite3_malloc64(sizeof(gak_cgroup) * (size_t)ngst);
  h_se = sqlite3_malloc64((size_t)ngcap * 4 * 2);
  if (!h_sl || !h_gr || !h_se) {
    rc = GA_SCAN_NOMEM;
    goto fail;
  }
  uint32_t ferr = 0;
  if (q->has_fprog) { /* a WHERE that is a program: true rows pass */
    gak_cprog fp;
    prog_of(e, &q->fprog, d_pool, d_mapv, d_mapt, &fp);
    STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_err, &ferr, 4, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_cache_eval_filter(&fp, n, d_sel, d_err, c->stream));
    STEP(GA_STAGE_D2H, gak_memcpy_d2h(&ferr, d_err, 4, c->stream));
  } else {
    STEP(GA_STAGE_LAUNCH, gak_cache_filter(&f, n, d_sel, c->stream));
  }
  if (q->d_presel) /* a star join's rows (cache_gpu_star.c rule 3) */
    STEP(GA_STAGE_LAUNCH, gak_cstar_and(d_sel, q->d_presel, n, c->stream));
  int few = 0;
  if (grouped && !topk &&
      ngroups <= GAK_CACHE_COUNT_MAX) { /* rule 6: groups with rows */
    int ne = 0;
    STEP(GA_STAGE_LAUNCH, gak_cache_key_ids(&keys, NULL, n, d_gid, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_cache_group_counts(d_gid, d_sel, n, ngroups, d_start,
                                d_start + ngroups, c->stream));
    STEP(GA_STAGE_D2H,
         gak_memcpy_d2h(h_se, d_start, (size_t)ngroups * 8, c->stream));
    if (!ga_cg_sync(c, why, nwhy))
      goto fail;
    for (int64_t g = 0; g < ngroups; g++) {
      ne += h_se[g] != 0;
      m += h_se[g];
    }
    few = ne <= GA_CQ_FEW_GROUPS;
    if (!few)
      m = 0;
  }
  if (!few) {
    STEP(GA_STAGE_LAUNCH,
         gak_cache_compact(d_sel, n, d_idx, d_count, d_csc, c->stream));
    STEP(GA_STAGE_D2H, gak_memcpy_d2h(&m, d_count, 8, c->stream));
    if (!ga_cg_sync(c, why, nwhy))
      goto fail;
  }
  prof("filter", &t0);
  if (ferr) { /* cexpr.h rule 5: SQLite evaluates the WHERE on every row */
    snprintf(why, nwhy,
             "an expression raises an error on a row (abs of "
             "-9223372036854775808): SQLite reports it");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  if (m < 0 || m > n) {
    snprintf(why, nwhy, "a GPU step failed (bad row count)");
    goto fail;
  }
  if (m == 0) { /* no group; ungrouped: the one empty row */
    rc = GA_SCAN_OK;
    goto done;
  }
  if (grouped && m > INT32_MAX) {
    snprintf(why, nwhy, "more than 2^31 rows to group on the GPU");
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  /* the rows the values are read at: the passing rows' positions, or (few
  ** groups) the rows themselves, with the filter's bits */
  const uint32_t *rows_idx = few ? NULL : d_idx;
  int64_t mv = few ? n : m;
  int64_t slice = mv / GA_CQ_MAX_SLICES + 1;
  if (slice < GA_CQ_MIN_SLICE)
    slice = GA_CQ_MIN_SLICE;
  if (grouped && !few) {
    STEP(GA_STAGE_LAUNCH, gak_cache_key_ids(&keys, d_idx, m, d_gid, c->stream));
    STEP(GA_STAGE_LAUNCH,
         gak_cache_sort(d_gid, d_idx, d_gid2, d_idx2, m, bits_for(ngroups - 1),
                        d_ssc, c->stream));
    STEP(GA_STAGE_LAUNCH, gak_cache_bounds(d_gid2, m, ngroups, d_start,
                                           d_start + ngroups, c->stream));
    rows_idx = d_idx2;
    if (!topk) {
      STEP(GA_STAGE_D2H,
           gak_memcpy_d2h(h_se, d_start, (size_t)ngroups * 8, c->stream));
      if (!ga_cg_sync(c, why, nwhy))
        goto fail;
    } else { /* rule 9: the chosen groups' bounds, as h_se */
      int d = choose_topk(c, e, q, tmode, ngroups, m, rows_idx, d_start, d_pool,
                          d_mapv, d_mapt, d_xv, d_err, d_tkey, d_tids,
                          d_tbounds, d_tcount, d_tflag, d_tsc, ngcap, h_se,
                          &ngroups, why, nwhy);
      if (d < 0)
        goto fail;
      if (d == 0) {
        rc = GA_CACHE_DECLINED;
        goto done;
      }
      if (ga_cx_bare(ga_cq_val(q, q->topk_val)) < 0 && q->topk_count != 1)
        xv_of = q->topk_val; /* choose_topk evaluated it into d_xv */
    }
    prof(topk ? "group topk" : many ? "group many" : "group", &t0);
  } else if (!grouped) {
    h_se[0] = 0;
    h_se[1] = (uint32_t)m;
  }
  int64_t nsl = 0, ngr = 0;
  if (few ? !cut_few(h_se, ngroups, n, slice, maxsl, h_sl, h_gr, &nsl, &ngr,
                     why, nwhy)
          : !cut_slices(h_se, ngroups, grouped, m, slice, maxsl, !topk, h_sl,
                        h_gr, &nsl, &ngr, why, nwhy))
    goto fail;
  /* rule 10's charge, the host's groups too; any other query's groups on
  ** the host (rule 11) */
  if (!ga_cq_many_fits(q, ga_gs_shape(gs),
                       many ? (int64_t)a.off + ngroups * 8 : 0, ngr, why,
                       nwhy)) {
    rc = GA_CACHE_DECLINED;
    goto done;
  }
  memset(cmp, 0, sizeof(cmp));
  for (int i = 0; i < nv; i++) /* cache_gpu_many.c rule 6 */
    ncmp += cmp[i] = many && grouped && !few && ga_cq_compact_on(q, i);
  if (ncmp) {
    h_cm = sqlite3_malloc64(sizeof(gak_cmany) * (size_t)ngr * (size_t)nv);
    h_cb = sqlite3_malloc64(sizeof(uint32_t) * 2 * (size_t)ngr);
    if (!h_cm || !h_cb) {
      rc = GA_SCAN_NOMEM;
      goto fail;
    }
    ga_cq_compact_bounds(h_sl, h_gr, ngr, h_cb);
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_cb, h_cb, sizeof(uint32_t) * 2 * (size_t)ngr,
                        c->stream));
  }
  if (ncmp < nv || nv == 0)
    h_st = sqlite3_malloc64(sizeof(gak_cstate) * (size_t)ngr *
                            (size_t)(nv ? nv : 1));
  h_ids = q->ndist ? sqlite3_malloc64(sizeof(uint32_t) * (size_t)ngr) : NULL;
  if (q->ndist && h_ids) /* rule 10: each output group's id */
    ga_cgd_ids(few, grouped, h_se, ngroups, h_sl, h_gr, ngr, h_ids);
  h_rows = sqlite3_malloc64(sizeof(uint32_t) * (size_t)ngr);
  h_kv = sqlite3_malloc64(sizeof(gak_cval) * (size_t)ngr *
                          (size_t)(nkc ? nkc : 1));
  if ((!h_st && !ncmp) || !h_rows || !h_kv || (q->ndist && !h_ids)) {
    rc = GA_SCAN_NOMEM;
    goto fail;
  }
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_sl, h_sl, sizeof(gak_cslice) * (size_t)nsl, c->stream));
  /* rule 7: groups of many slices merge in two levels */
  h_mgr = sqlite3_malloc64(sizeof(gak_cgroup) * (size_t)nmax1);
  h_gr2 = sqlite3_malloc64(sizeof(gak_cgroup) * (size_t)(ngr ? ngr : 1));
  if (!h_mgr || !h_gr2) {
    rc = GA_SCAN_NOMEM;
    goto fail;
  }
  nm1 = merge_levels(h_gr, ngr, h_mgr, nmax1, h_gr2);
  if (nm1 < 0) {
    snprintf(why, nwhy, "a GPU step failed (too many merges)");
    goto fail;
  }
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_gr, nm1 ? h_gr2 : h_gr,
                      sizeof(gak_cgroup) * (size_t)ngr, c->stream));
  if (nm1)
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_mgr, h_mgr, sizeof(gak_cgroup) * (size_t)nm1,
                        c->stream));
  gak_ccol none = {NULL, NULL, NULL};
  int first_pos = 0; /* value 0's first rows are positions in rows_idx */
  gak_cgids gids;    /* few groups: their ids, for gak_cache_reduce_groups */
  memset(&gids, 0, sizeof(gids));
  if (few && ngr <= GAK_CACHE_FEW) {
    gids.n = (uint32_t)ngr;
    for (int64_t g = 0; g < ngr; g++)
      gids.g[g] = h_sl[h_gr[g].first_slice].group;
  }
  for (int i = 0; i < nv; i++) {
    const ga_cexpr *x = ga_cq_val(q, i);
    int bc = ga_cx_bare(x);
    gak_ccol col;
    const uint32_t *vidx = rows_idx;
    if (bc >= 0) {
      col = ccol(&e->cols[bc]);
    } else {
      /* the program's value at the passing rows, in rows_idx's order, as a
      ** column of m rows (rule 5): the reduce reads it in place (positions
      ** keep rowid order within a group, so ties and first rows hold) */
      gak_cprog p;
      err = 0; /* zero, err: the function's, read by a copy in flight */
      prog_of(e, x, d_pool, d_mapv, d_mapt, &p);
      col.vals = d_xv;
      col.isint = d_xv + mv;
      col.notnull = d_xv + mv + GA_BW(mv);
      vidx = NULL;
      first_pos |= i == 0 && !few; /* few: positions are rows */
      if (i != xv_of) {            /* rule 9's order value is there already */
        STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_err, &zero, 4, c->stream));
        STEP(GA_STAGE_LAUNCH,
             gak_cache_eval(&p, mv, rows_idx, d_sel, d_xv,
                            (uint64_t *)col.isint, (uint64_t *)col.notnull,
                            d_err, c->stream));
        STEP(GA_STAGE_D2H, gak_memcpy_d2h(&err, d_err, 4, c->stream));
        if (!ga_cg_sync(c, why, nwhy))
          goto fail;
        xv_of = i;
        prof("eval", &t0);
      }
      if (err) { /* cexpr.h rule 5 */
        snprintf(why, nwhy,
                 "an expression raises an error on a row (abs of "
                 "-9223372036854775808): SQLite reports it");
        rc = GA_CACHE_DECLINED;
        goto done;
      }
    }
    if (cmp[i]) { /* cache_gpu_many.c rule 6 */
      uint32_t cflag = 0;
      STEP(GA_STAGE_H2D, gak_memcpy_h2d(d_cflag, &zero, 4, c->stream));
      STEP(GA_STAGE_LAUNCH, gak_cache_many_compact(col, vidx, d_cb, ngr, d_cm,
                                                   i == 0 ? d_cfirst : NULL,
                                                   d_cflag, c->stream));
      STEP(GA_STAGE_D2H, gak_memcpy_d2h(&cflag, d_cflag, 4, c->stream));
      if (!ga_cg_sync(c, why, nwhy))
        goto fail;
      if (!cflag) {
        STEP(GA_STAGE_D2H,
             gak_memcpy_d2h(h_cm + (size_t)i * (size_t)ngr, d_cm,
                            sizeof(gak_cmany) * (size_t)ngr, c->stream));
        if (i == 0)
          STEP(GA_STAGE_D2H,
               gak_memcpy_d2h(h_rows, d_cfirst, sizeof(uint32_t) * (size_t)ngr,
                              c->stream));
        if (!ga_cg_sync(c, why, nwhy))
          goto fail;
        prof("reduce compact", &t0);
        c->values_compact++;
        continue;
      }
      cmp[i] = 0; /* not provable: the exact states */
      ncmp--;
      c->values_compact_no++;
      if (!h_st && !(h_st = sqlite3_malloc64(sizeof(gak_cstate) * (size_t)ngr *
                                             (size_t)nv))) {
        rc = GA_SCAN_NOMEM;
        goto fail;
      }
    }
    if (gids.n && !q->best[i]) /* every group in one pass (rule 6) */
      STEP(GA_STAGE_LAUNCH,
           gak_cache_reduce_groups(col, d_gid, d_sel, d_sl, h_gr[0].nslices,
                                   &gids, d_sst, c->stream));
    else
      STEP(GA_STAGE_LAUNCH,
           gak_cache_reduce(col, vidx, few ? d_gid : NULL, few ? d_sel : NULL,
                            d_sl, nsl, d_sst, c->stream));
    STEP(GA_STAGE_LAUNCH,
         nm1 ? gak_cache_merge(d_sst, d_mgr, nm1, none, d_mst, c->stream)
             : gak_cache_merge(d_sst, d_gr, ngr, none, d_gst, c->stream));
    if (nm1)
      STEP(GA_STAGE_LAUNCH,
           gak_cache_merge(d_mst, d_gr, ngr, none, d_gst, c->stream));
    STEP(GA_STAGE_D2H,
         gak_memcpy_d2h(h_st + (size_t)i * (size_t)ngr, d_gst,
                        sizeof(gak_cstate) * (size_t)ngr, c->stream));
    if (!ga_cg_sync(c, why, nwhy)) /* d_xv is the next value's */
      goto fail;
    prof("reduce", &t0);
    if (q->sq[i] || q->dist[i] == GA_DIST_PCT) { /* rule 13 */
      ga_cgs_at at = {
          col,  vidx, few ? d_gid : NULL, few ? d_sel : NULL, d_sl, nsl,
          h_gr, ngr};
      rc = ga_cgs_value(c, q, i, &at, &stat, why, nwhy);
      if (rc == GA_SCAN_FALLBACK || rc == GA_SCAN_NOMEM)
        goto fail;
      if (rc != GA_SCAN_OK)
        goto done;
      rc = GA_SCAN_FALLBACK;
      prof(stat.method[i], &t0);
    }
    if (q->dist[i] && q->dist[i] != GA_DIST_PCT) { /* rule 12 */
      ga_cgd_at at = {col,
                      vidx,
                      few || !grouped ? d_gid : d_gid2,
                      few ? d_sel : NULL,
                      mv,
                      ngroups,
                      h_ids,
                      ngr};
      at.gid = grouped ? at.gid : NULL;
      rc = ga_cgd_value(c, e, q, i, &at, h_st + (size_t)i * (size_t)ngr, why,
                        nwhy);
      if (rc == GA_SCAN_FALLBACK || rc == GA_SCAN_NOMEM)
        goto fail;
      if (rc != GA_SCAN_OK)
        goto done;
      rc = GA_SCAN_FALLBACK;
      t0 = ga_cache_prof_ms();
    }
  }
  if (few) /* rule 6: every value's rows and first rows, counted */
    for (int64_t g = 0; g < ngr; g++) {
      uint32_t id = h_sl[h_gr[g].first_slice].group;
      for (int i = 0; i < nv; i++) {
        h_st[(size_t)i * (size_t)ngr + (size_t)g].rows = h_se[id];
        h_st[(size_t)i * (size_t)ngr + (size_t)g].first = h_se[ngroups + id];
      }
    }
  /* the groups' keys: their first rows' (rule 5) */
  for (int64_t g = 0; g < ngr; g++) {
    int64_t f = nv && cmp[0] ? (int64_t)h_rows[g] : h_st[g].first;
    if (f < 0 || f >= (first_pos ? m : n)) {
      snprintf(why, nwhy, "a GPU step failed (a group's first row)");
      goto fail;
    }
    h_rows[g] = (uint32_t)f;
  }
  if (nkc) {
    STEP(GA_STAGE_H2D,
         gak_memcpy_h2d(d_rows, h_rows, sizeof(uint32_t) * (size_t)ngr,
                        c->stream));
    for (int k = 0; k < nkc; k++) {
      STEP(GA_STAGE_LAUNCH,
           gak_cache_gather(src[k].prog ? xk[k] : ccol(&e->cols[src[k].col]),
                            d_rows, first_pos ? rows_idx : NULL, ngr, d_kv,
                            c->stream));
      STEP(GA_STAGE_D2H,
           gak_memcpy_d2h(h_kv + (size_t)k * (size_t)ngr, d_kv,
                          sizeof(gak_cval) * (size_t)ngr, c->stream));
      if (!ga_cg_sync(c, why, nwhy))
        goto fail;
    }
  }
  prof("keys", &t0);
  hand_ctx hc = {gs, src, h_kv, h_st, ngr, nk, nkc, nv, &stat, h_cm, h_cb, cmp};
  rc = ga_cq_hand_groups(q, ngr, nv, many, hand_group, &hc); /* rule 11 */
  prof(many ? "groups many" : "groups", &t0); /* rules 9 and 10 named */
  if (rc == GA_SCAN_OK && topk)
    c->queries_topk++;
  if (rc == GA_SCAN_OK && many)
    c->queries_many++;
  goto done;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
done:
  if (rc != GA_SCAN_OK) { /* rule 2: a decline leaves no copy in flight
                          ** from the host buffers freed below */
    gak_stream_sync(c->stream);
    gak_take_error();
  }
  ga_cgs_free(&stat);            /* rule 13 */
  for (int k = 0; k < nk; k++) { /* rule 8's */
    ga_cg_free((void *)xk[k].vals);
    ga_cg_free(d_xkd[k]);
  }
  for (int k = 0; h_kmap && k < nk; k++)
    sqlite3_free(h_kmap[k]);
  sqlite3_free(h_kmap);
  sqlite3_free(h_sl);
  sqlite3_free(h_gr);
  sqlite3_free(h_mgr);
  sqlite3_free(h_gr2);
  sqlite3_free(h_se);
  sqlite3_free(h_st);
  sqlite3_free(h_pool);
  sqlite3_free(h_rows);
  sqlite3_free(h_ids);
  sqlite3_free(h_kv);
  sqlite3_free(h_cm);
  sqlite3_free(h_cb);
  return rc;
}
