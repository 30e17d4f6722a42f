/*
** cache_gpu_distinct.c — gpu_query's DISTINCT aggregates (count, sum,
** total, avg, min and max over DISTINCT e, FILTER included: issue 37) on
** a GPU entry of the column cache, as per-group bitmaps on the device
** (kernels/cache_distinct.cu).
**
** cache_gpu_query.c runs the query's plain states first (rows, first
** row, max and min: min and max of DISTINCT values are the plain ones,
** planner/query.c rule 9); then, for each DISTINCT value, this file sets
** one bit per (group, value) pair and replaces the group's count, and its
** sum where a sum, total or avg reads it, by those of its distinct values.
** A state without a set answers from its count and sum (engine/state/
** gstate.h rule 5), as cache_dbits.c's bitmap states do on a host entry.
**
** Rules:
**   1. Which values (SQLite's distinctness, exactly):
**      - TEXT (ga_cquery.vdict: dictionary codes, a bare column or a
**        FILTER's CASE over one) under BINARY: a code is a value (dict.h
**        rule 2), and only count reads it (planner/cache_shape.c).  Under
**        NOCASE or RTRIM, which join values of other codes, the entry
**        declines at planning (ga_cgd_takes): a host entry keeps sets of
**        the codes' bytes (cache_distinct.c rule 2).
**      - numbers: INTEGERs by their int64, over [lo, lo + range).  A bare
**        column of INTEGERs only (the load's counts) takes its bounds
**        from the load; any other value (a column with REALs, a program
**        such as FILTER's CASE WHEN c THEN e END) is measured first on
**        the device (gak_cdist_domain).  A REAL that is an integer is the
**        INTEGER's value (1 = 1.0, -0.0 = 0) and, when count alone reads
**        the value, sets the integer's bit (GAK_CDIST_FOLD).  Where a sum,
**        total or avg reads it, the first of equal values in rowid order
**        decides the type (sum(DISTINCT) over 1.0, 1 is 1.0), which a bit
**        does not keep: such a value declines, as does any REAL that is
**        not an integer.  With INTEGERs only, equal values are identical,
**        so which row is first cannot change a result.  NULL sets no bit.
**      A value that sets no bit on the device (gak.h's *d_miss) is a
**      failed step, never a smaller count.
**   2. Which method, by the domain: the bitmap, when ngroups x range bits
**      (ngroups: the query's dense group ids, cache_gpu_query.c rule 5)
**      stays within GA_CGD_BITS_PER_ROW bits a row of the entry plus
**      GA_CGD_FREE_BITS (so zeroing and counting cost a small multiple of
**      reading the column), range within 2^32, and the bytes within
**      group_bytes (rule 4).  The device sets the bits in shared memory
**      where every group's bitmap fits in GAK_CDIST_SMEM_WORDS words,
**      else in global memory (kernels/cache_distinct.cu rule 2).  A
**      domain past these declines with the sizes in last_scan.why: a
**      sort of (group, value) pairs or hash sets are not built on the GPU
**      (a host entry, loaded with device = 'cpu', keeps hash sets).
**   3. Counts are popcounts per group on the device; where a sum reads
**      the value, the output groups' bitmap rows come back and every set
**      bit's value is added, once, to an exact sum partial (ga_sum_add_int,
**      normalised every 2^28 values: GA_XACC_SAFE_ADDS), whose overflow
**      raises as sum()'s does.  The loop polls the caller's interrupt.
**   4. Memory: the device bitmap and counts (8 bytes a group id past the
**      bits), and the host copy where a sum reads it, are charged against
**      ga_cquery.dist_cap (group_bytes), one DISTINCT value at a time (each
**      is freed before the next); past it the entry declines and says so.
**   5. GPUAGG_CACHE_PROFILE: "dset-bitmap" (global memory) or
**      "dset-bitmap-smem" (shared memory) is the step's name, with its
**      time.
*/
#include "cache_gpu_distinct.h"

#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

/* Rule 2's bound on the bits: a small multiple of reading the column. */
#define GA_CGD_BITS_PER_ROW 16
#define GA_CGD_FREE_BITS ((int64_t)1 << 23)
/* Rule 3: sum partial normalised this often (below GA_XACC_SAFE_ADDS). */
#define GA_CGD_NORM_EVERY ((int64_t)1 << 28)

int ga_cgd_takes(const ga_centry *e, const ga_cquery *q, char *why,
                 size_t nwhy) {
  (void)e;
  for (int i = 0; i < q->nvals; i++)
    if (q->dist[i] && q->vdict[i] && q->dist[i] - 1 != GA_COLL_BINARY) {
      snprintf(why, nwhy,
               "DISTINCT under NOCASE or RTRIM on TEXT (the GPU's sets are "
               "bitmaps of BINARY codes; a host entry, loaded with device = "
               "'cpu', answers it)");
      return 0;
    }
  return 1;
}

void ga_cgd_ids(int few, int grouped, const uint32_t *h_se, int64_t ngroups,
                const gak_cslice *h_sl, const gak_cgroup *h_gr, int64_t ngr,
                uint32_t *ids) {
  int64_t g = 0;
  if (few) {
    for (; g < ngr; g++)
      ids[g] = h_sl[h_gr[g].first_slice].group;
  } else if (grouped) { /* cut_slices keeps the groups with rows, in order */
    for (int64_t id = 0; id < ngroups && g < ngr; id++)
      if (h_se[ngroups + id] > h_se[id])
        ids[g++] = (uint32_t)id;
  }
  for (; g < ngr; g++)
    ids[g] = 0;
}

static void gfree(void *p) {
  if (p && gak_free(p))
    gak_take_error();
}

#define STEP(stage, call)                                                      \
  do {                                                                         \
    if (!ga_cuda_ok(stage, call)) {                                            \
      snprintf(why, nwhy, "a GPU step failed (%s)", ga_stage_name(stage));     \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* cache_gpu_query.c's sync_or: 1, or 0 with why. */
static int sync_ok(ga_cache *c, char *why, size_t nwhy) {
  int err = gak_stream_sync(c->stream);
  int kernel = err && gak_error_class(err) == GAK_EKERNEL;
  if (ga_cuda_ok(GA_STAGE_KERNEL, kernel ? err : 0) &&
      ga_cuda_ok(GA_STAGE_SYNC, kernel ? 0 : err))
    return 1;
  snprintf(why, nwhy, "a GPU step failed (%s)", kernel ? "kernel" : "sync");
  return 0;
}

/* Rule 1: value i's domain [*lo, *lo + *range) and *fold, from the load
** or measured on the device (*dom: its 4 words, scratch).  GA_SCAN_OK,
** GA_CACHE_DECLINED (why) or GA_SCAN_FALLBACK (why). */
static int domain(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                  const ga_cgd_at *at, int64_t *d_dom, int64_t *lo,
                  uint64_t *range, int *fold, char *why, size_t nwhy) {
  int bc = ga_cx_bare(ga_cq_val(q, i));
  const ga_ccol *col = bc >= 0 ? &e->cols[bc] : NULL;
  *fold = 0;
  *lo = 0;
  if (q->vdict[i]) { /* BINARY codes (ga_cgd_takes) */
    *range = (uint64_t)ga_dict_count(q->vdict[i]);
    return GA_SCAN_OK;
  }
  if (col && !col->mixed && !col->ntext && !col->nreal) {
    *lo = col->imin;
    *range = col->nint ? (uint64_t)col->imax - (uint64_t)col->imin + 1 : 0;
    return GA_SCAN_OK;
  }
  int64_t h[4];
  STEP(GA_STAGE_LAUNCH,
       gak_cdist_domain(at->col, at->idx, at->sel, at->m, d_dom, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(h, d_dom, sizeof h, c->stream));
  if (!sync_ok(c, why, nwhy))
    goto fail;
  if (h[0]) {
    snprintf(why, nwhy,
             "DISTINCT over REAL values that are not integers (the GPU's "
             "sets are bitmaps of integers; a host entry, loaded with "
             "device = 'cpu', answers it)");
    return GA_CACHE_DECLINED;
  }
  if (h[1] && !q->best_only[i]) {
    snprintf(why, nwhy,
             "sum, total or avg of DISTINCT INTEGER and REAL values (the "
             "first in rowid order decides the type; a host entry, loaded "
             "with device = 'cpu', answers it)");
    return GA_CACHE_DECLINED;
  }
  *fold = h[1] != 0;
  *lo = h[2];
  *range = h[3] >= h[2] ? (uint64_t)h[3] - (uint64_t)h[2] + 1 : 0;
  return GA_SCAN_OK;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  return GA_SCAN_FALLBACK;
}

/* Rule 3: the distinct values of one bitmap row as an exact sum. */
static int sum_row(const ga_cquery *q, const uint64_t *w, int64_t words,
                   int64_t lo, ga_sum_partial *sum) {
  int64_t added = 0;
  ga_sum_init(sum);
  for (int64_t k = 0; k < words; k++) {
    if (!(k & 0xfffff) && k && q->interrupted &&
        q->interrupted(q->interrupted_arg))
      return GA_SCAN_INTERRUPT;
    for (uint64_t x = w[k]; x; x &= x - 1) {
      ga_sum_add_int(sum,
                     (int64_t)((uint64_t)lo + (uint64_t)k * 64 +
                               (uint64_t)__builtin_ctzll(x)),
                     1);
      if (++added % GA_CGD_NORM_EVERY == 0)
        ga_sum_normalize(sum);
    }
  }
  ga_sum_normalize(sum);
  return GA_SCAN_OK;
}

int ga_cgd_value(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                 const ga_cgd_at *at, gak_cstate *st, char *why, size_t nwhy) {
  double t0 = ga_cache_prof_ms();
  int64_t lo = 0, miss = 0, *h_cnt = NULL;
  uint64_t range = 0, *h_bits = NULL;
  int fold = 0, rc = GA_SCAN_FALLBACK;
  char *d = NULL;
  int sums = !q->best_only[i] && !q->vdict[i]; /* rule 3 */
  /* the domain's words first: a small allocation */
  if (!ga_dev_alloc((void **)&d, 64)) {
    snprintf(why, nwhy, "no GPU memory for the DISTINCT sets");
    return GA_SCAN_FALLBACK;
  }
  rc = domain(c, e, q, i, at, (int64_t *)d, &lo, &range, &fold, why, nwhy);
  gfree(d);
  d = NULL;
  if (rc != GA_SCAN_OK)
    return rc;
  rc = GA_SCAN_FALLBACK;
  /* rule 2: the bitmap's size */
  int64_t words = (int64_t)((range + 63) / 64);
  int64_t most_bits = e->rows * GA_CGD_BITS_PER_ROW + GA_CGD_FREE_BITS;
  if (range > ((uint64_t)1 << 32) ||
      at->ngroups > most_bits / 64 / (words ? words : 1)) {
    snprintf(why, nwhy,
             "DISTINCT over %llu values in %lld groups: past the GPU's "
             "bitmaps (%lld bits at most for this entry; a host entry, "
             "loaded with device = 'cpu', keeps hash sets)",
             (unsigned long long)range, (long long)at->ngroups,
             (long long)most_bits);
    return GA_CACHE_DECLINED;
  }
  size_t bbytes = (size_t)(at->ngroups * words) * 8 + 8;
  size_t cbytes = (size_t)at->ngroups * 8 + 8;
  int64_t charged = (int64_t)(bbytes + cbytes) * (sums ? 2 : 1); /* rule 4 */
  if (q->dist_cap > 0 && charged > q->dist_cap) {
    snprintf(why, nwhy,
             "DISTINCT's sets on the GPU would take %lld bytes, past "
             "group_bytes (%lld): raise it with gpuagg_config('group_bytes', "
             "n)",
             (long long)charged, (long long)q->dist_cap);
    return GA_CACHE_DECLINED;
  }
  if (!ga_dev_alloc((void **)&d, bbytes + cbytes + 256)) {
    snprintf(why, nwhy, "no GPU memory for the DISTINCT sets");
    return GA_SCAN_FALLBACK;
  }
  uint64_t *d_bits = (uint64_t *)d;
  int64_t *d_cnt = (int64_t *)(d + ((bbytes + 255) & ~(size_t)255));
  int64_t *d_miss = d_cnt + at->ngroups;
  h_cnt = sqlite3_malloc64((size_t)at->ngroups * 8);
  if (sums)
    h_bits = sqlite3_malloc64(bbytes);
  if (!h_cnt || (sums && !h_bits)) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
  STEP(GA_STAGE_LAUNCH,
       gak_cdist_bits(at->col, at->idx, at->gid, at->sel, at->m, lo,
                      (int64_t)range, at->ngroups, fold ? GAK_CDIST_FOLD : 0,
                      d_bits, d_miss, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cdist_count(d_bits, (int64_t)range, at->ngroups, d_cnt, c->stream));
  STEP(GA_STAGE_D2H,
       gak_memcpy_d2h(h_cnt, d_cnt, (size_t)at->ngroups * 8, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&miss, d_miss, 8, c->stream));
  if (sums)
    STEP(GA_STAGE_D2H, gak_memcpy_d2h(h_bits, d_bits, bbytes, c->stream));
  if (!sync_ok(c, why, nwhy))
    goto fail;
  if (miss) { /* rule 1: never a smaller count */
    snprintf(why, nwhy,
             "a GPU step failed (a DISTINCT value outside its "
             "domain)");
    goto done;
  }
  ga_cache_prof("cache_gpu",
                at->ngroups * words <= GAK_CDIST_SMEM_WORDS ? "dset-bitmap-smem"
                                                            : "dset-bitmap",
                &t0);
  rc = GA_SCAN_OK;
  for (int64_t g = 0; g < at->ngr && rc == GA_SCAN_OK; g++) {
    uint32_t id = at->ids[g];
    if ((int64_t)id >= at->ngroups) {
      snprintf(why, nwhy, "a GPU step failed (a group's id)");
      rc = GA_SCAN_FALLBACK;
      break;
    }
    st[g].count = h_cnt[id];
    if (sums)
      rc = sum_row(q, h_bits + (size_t)id * (size_t)words, words, lo,
                   &st[g].sum);
  }
  goto done;
fail:
  gak_stream_sync(c->stream);
  gak_take_error();
  rc = GA_SCAN_FALLBACK;
done:
  gfree(d);
  sqlite3_free(h_cnt);
  sqlite3_free(h_bits);
  return rc;
}
