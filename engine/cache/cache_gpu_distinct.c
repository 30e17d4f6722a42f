/*
** cache_gpu_distinct.c — gpu_query's DISTINCT aggregates (count, sum,
** total, avg, min and max over DISTINCT e, FILTER included: issue 37) on
** a GPU entry of the column cache: per-group bitmaps, or sorted (group,
** value) pairs, on the device (kernels/cache_distinct.cu).
**
** cache_gpu_query.c runs the query's plain states first (rows, first
** row, max and min: min and max of DISTINCT values are the plain ones
** where they compare under BINARY, planner/query.c rule 9); then, for each
** DISTINCT value, this file replaces each group's count, and its sum where
** a sum, total or avg reads it, by those of its distinct values.  A state
** without a set answers from its count and sum (engine/state/gstate.h rule
** 5), as cache_dbits.c's bitmap states do on a host entry.
**
** Rules:
**   1. Which values are one (SQLite's distinctness, exactly):
**      - TEXT (ga_cquery.vdict: dictionary codes, a bare column or a
**        FILTER's CASE over one; only count reads it, planner/
**        cache_shape.c): under BINARY a code is a value (dict.h rule 2);
**        under NOCASE or RTRIM each code becomes its class, the least code
**        of the values it equals under the collation (ga_coll_cmp, on the
**        host, once a query; a copy of the codes remapped on the device).
**        ga_cgd_takes declines min and max of such a value (they read
**        representatives, which no class keeps) and a UTF-16 entry's
**        (SQLite compares it in UTF-8: cache_distinct.c rule 4).
**      - numbers: an INTEGER by its int64; a REAL that is an integer
**        within int64 is that INTEGER's value (1 = 1.0, -0.0 = 0); any
**        other REAL by its bits.  Among equal values the first in rowid
**        order decides the type a sum sees (sum(DISTINCT) over 1.0, 1 is
**        1.0).  A bare column of INTEGERs only (the load's counts) takes
**        its bounds from the load; any other value (a column with REALs, a
**        program such as FILTER's CASE WHEN c THEN e END) is measured
**        first on the device (gak_cdist_domain).
**      NULL is no value.  A value that sets no bit on the device (gak.h's
**      *d_miss) is a failed step, never a smaller count.
**   2. Which method, by the domain, per DISTINCT value:
**      - bitmaps (one bit per group id and value of [lo, lo + range)),
**        where every value is an integer (REALs among them only where
**        count alone reads them: GAK_CDIST_FOLD), the group ids times the
**        range stay within GA_CGD_BITS_PER_ROW bits a row of the entry
**        plus GA_CGD_FREE_BITS (zeroing and counting cost a small multiple
**        of reading the column) and range within 2^32.  The device sets
**        the bits in shared memory where every group's fit in
**        GAK_CDIST_SMEM_WORDS words, else in global memory
**        (kernels/cache_distinct.cu rule 2).  With INTEGERs only, equal
**        values are identical, so which row is first cannot change a sum.
**      - sorted pairs otherwise (a REAL that is not an integer, REALs
**        beside INTEGERs under a sum, a range past the bitmaps): the
**        (group, class, value) keys sorted stably with their positions,
**        which are in rowid order within a group (cache_gpu_query.c's
**        sorted layout, or rows in place for few groups), so the first of
**        each key is its first row's value: the representative, its type
**        kept.  Past 2^31 passing rows (CUB's counts) the entry declines.
**   3. Counts are made on the device (popcounts; the pairs' heads).  Where
**      a sum reads the value, the bitmap rows or the representatives come
**      back, and each distinct value is added once to an exact sum partial
**      (ga_sum_add_int or ga_sum_add_real, normalised every 2^28 values:
**      GA_XACC_SAFE_ADDS), whose overflow raises as sum()'s does.  These
**      loops poll the caller's interrupt.
**   4. Memory: the device bitmap and counts (8 bytes a group id past the
**      bits), twice that where a sum reads them (the host copy); the
**      sorted pairs' keys, positions, scans, CUB scratch and
**      representatives (gak_cdist_sort_scratch, about 48 bytes a passing
**      row) and the representatives' host copy; the TEXT classes (12 bytes
**      a code, 8 a row).  Each is charged against ga_cquery.dist_cap
**      (group_bytes), one DISTINCT value at a time (each is freed before
**      the next); past it the entry declines and says so, as it does where
**      the device has not that much memory free (the entry stays: a
**      query's sets are no failed step).
**   5. GPUAGG_CACHE_PROFILE names each DISTINCT value's step by its method:
**      "dset-bitmap-smem", "dset-bitmap" or "dset-sort", with its time.
*/
#include "cache_gpu_distinct.h"

#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "scan_group.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_step.h"

/* Rule 2's bound on the bits: a small multiple of reading the column. */
#define GA_CGD_BITS_PER_ROW 16
#define GA_CGD_FREE_BITS ((int64_t)1 << 23)
/* Rule 3: sum partial normalised this often (below GA_XACC_SAFE_ADDS). */
#define GA_CGD_NORM_EVERY ((int64_t)1 << 28)

int ga_cgd_takes(const ga_centry *e, const ga_cquery *q, char *why,
                 size_t nwhy) {
  for (int i = 0; i < q->nvals; i++) {
    if (!q->dist[i] || !q->vdict[i] || q->dist[i] - 1 == GA_COLL_BINARY)
      continue;
    if (e->enc != SQLITE_UTF8) { /* rule 1: cache_distinct.c rule 4 */
      snprintf(why, nwhy,
               "DISTINCT under NOCASE or RTRIM on TEXT of a UTF-16 database "
               "(SQLite compares it in UTF-8)");
      return 0;
    }
    if (q->best[i]) {
      snprintf(why, nwhy,
               "min or max of DISTINCT TEXT under NOCASE or RTRIM (the GPU "
               "keeps no representatives of TEXT; a host entry, loaded with "
               "device = 'cpu', answers it)");
      return 0;
    }
  }
  return 1;
}

/* Rule 1: codes under NOCASE or RTRIM, sorted by that collation
** (a merge sort of code numbers: no qsort takes the dictionary). */
static void sort_codes(const ga_dict *d, int coll, uint32_t *a, uint32_t *tmp,
                       int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n,
              hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t x = lo, y = mid, k = lo;
      while (x < mid && y < hi) {
        const void *p, *q;
        int np, nq;
        ga_dict_value(d, a[x], &p, &np);
        ga_dict_value(d, a[y], &q, &nq);
        tmp[k++] = ga_coll_cmp(coll, p, np, q, nq) <= 0 ? a[x++] : a[y++];
      }
      while (x < mid)
        tmp[k++] = a[x++];
      while (y < hi)
        tmp[k++] = a[y++];
    }
    memcpy(a, tmp, sizeof(uint32_t) * (size_t)n);
  }
}

/* Rule 1: each code's class under coll (the least code of the values it
** equals), into map (n entries); charged as 12 bytes a code. */
static int code_classes(const ga_dict *d, int coll, uint32_t *map) {
  int64_t n = ga_dict_count(d);
  uint32_t *a = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(2 * n + 1));
  if (!a)
    return GA_SCAN_NOMEM;
  for (int64_t k = 0; k < n; k++)
    a[k] = (uint32_t)k;
  sort_codes(d, coll, a, a + n, n);
  uint32_t cls = 0; /* the run's least code */
  for (int64_t k = 0; k < n; k++) {
    const void *p, *q;
    int np, nq;
    ga_dict_value(d, a[k], &p, &np);
    if (k)
      ga_dict_value(d, a[k - 1], &q, &nq);
    if (!k || ga_coll_cmp(coll, q, nq, p, np)) {
      cls = a[k];
      for (int64_t j = k + 1; j < n; j++) { /* the run's least */
        const void *r;
        int nr;
        ga_dict_value(d, a[j], &r, &nr);
        if (ga_coll_cmp(coll, p, np, r, nr))
          break;
        cls = a[j] < cls ? a[j] : cls;
      }
    }
    map[a[k]] = cls;
  }
  sqlite3_free(a);
  return GA_SCAN_OK;
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

#define STEP GA_CG_STEP

/* A failed or declined step's end (cache_gpu_step.h rule 1 counted it): the
** stream drained, so that no copy is in flight from the buffers the caller
** frees next, and the error taken. */
static void drain(ga_cache *c) {
  gak_stream_sync(c->stream);
  gak_take_error();
}

/* Rule 1: value i's domain [*lo, *lo + *range) and *fold, from the load
** or measured on the device (d_dom: 4 words of scratch); *sort set where
** no bitmap is exact (a REAL that is not an integer; a REAL beside an
** INTEGER where a sum reads the value).  GA_SCAN_OK or GA_SCAN_FALLBACK
** (why). */
static int domain(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                  const ga_cgd_at *at, int64_t *lo, uint64_t *range, int *fold,
                  int *sort, char *why, size_t nwhy) {
  int bc = ga_cx_bare(ga_cq_val(q, i));
  const ga_ccol *col = bc >= 0 ? &e->cols[bc] : NULL;
  *fold = *sort = 0;
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
  int64_t h[4], *d_dom = NULL;
  if (!ga_dev_alloc((void **)&d_dom, sizeof h)) {
    snprintf(why, nwhy, "no GPU memory for the DISTINCT sets");
    return GA_SCAN_FALLBACK;
  }
  STEP(GA_STAGE_LAUNCH,
       gak_cdist_domain(at->col, at->idx, at->sel, at->m, d_dom, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(h, d_dom, sizeof h, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  ga_cg_free(d_dom);
  *sort = h[0] || (h[1] && !q->best_only[i]);
  *fold = h[1] != 0;
  *lo = h[2];
  *range = h[3] >= h[2] ? (uint64_t)h[3] - (uint64_t)h[2] + 1 : 0;
  return GA_SCAN_OK;
fail:
  drain(c);
  ga_cg_free(d_dom);
  return GA_SCAN_FALLBACK;
}

/* Rule 4: bytes past dist_cap decline.  1 within it. */
static int within(const ga_cquery *q, int64_t bytes, const char *what,
                  char *why, size_t nwhy) {
  if (q->dist_cap <= 0 || bytes <= q->dist_cap)
    return 1;
  snprintf(why, nwhy,
           "DISTINCT's %s on the GPU would take %lld bytes, past "
           "group_bytes (%lld): raise it with gpuagg_config('group_bytes', "
           "n)",
           what, (long long)bytes, (long long)q->dist_cap);
  return 0;
}

/* Rule 3: one distinct value into an exact sum partial. */
static void sum_add(ga_sum_partial *sum, int real, int64_t bits,
                    int64_t *added) {
  if (real)
    ga_sum_add_real(sum, ga_bitsd(bits), 1);
  else
    ga_sum_add_int(sum, bits, 1);
  if (++*added % GA_CGD_NORM_EVERY == 0)
    ga_sum_normalize(sum);
}

static int stop(const ga_cquery *q) {
  return q->interrupted && q->interrupted(q->interrupted_arg);
}

/* Rule 3: the distinct values of one bitmap row as an exact sum. */
static int sum_row(const ga_cquery *q, const uint64_t *w, int64_t words,
                   int64_t lo, ga_sum_partial *sum) {
  int64_t added = 0;
  ga_sum_init(sum);
  for (int64_t k = 0; k < words; k++) {
    if (!(k & 0xfffff) && k && stop(q))
      return GA_SCAN_INTERRUPT;
    for (uint64_t x = w[k]; x; x &= x - 1)
      sum_add(sum, 0,
              (int64_t)((uint64_t)lo + (uint64_t)k * 64 +
                        (uint64_t)__builtin_ctzll(x)),
              &added);
  }
  ga_sum_normalize(sum);
  return GA_SCAN_OK;
}

/* Rule 2, the bitmap method. */
static int by_bits(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                   const ga_cgd_at *at, int64_t lo, uint64_t range, int fold,
                   gak_cstate *st, char *why, size_t nwhy) {
  double t0 = ga_cache_prof_ms();
  int64_t miss = 0, *h_cnt = NULL;
  uint64_t *h_bits = NULL;
  int rc = GA_SCAN_FALLBACK;
  char *d = NULL;
  int sums = !q->best_only[i] && !q->vdict[i]; /* rule 3 */
  int64_t words = (int64_t)((range + 63) / 64);
  size_t bbytes = (size_t)(at->ngroups * words) * 8 + 8;
  size_t cbytes = (size_t)at->ngroups * 8 + 8;
  if (!within(q, (int64_t)(bbytes + cbytes) * (sums ? 2 : 1), "bitmaps", why,
              nwhy))
    return GA_CACHE_DECLINED;
  if (!ga_dev_alloc((void **)&d, bbytes + cbytes + 256)) { /* rule 4 */
    snprintf(why, nwhy, "no GPU memory for DISTINCT's bitmaps (%lld bytes)",
             (long long)(bbytes + cbytes));
    return GA_CACHE_DECLINED;
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
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (miss) { /* rule 1: never a smaller count */
    snprintf(why, nwhy,
             "a GPU step failed (a DISTINCT value outside its domain)");
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
  rc = GA_SCAN_FALLBACK; /* drained below */
done:
  (void)e;
  if (rc != GA_SCAN_OK)
    drain(c);
  ga_cg_free(d);
  sqlite3_free(h_cnt);
  sqlite3_free(h_bits);
  return rc;
}

/* Rule 2, the sort method. */
static int by_sort(ga_cache *c, const ga_cquery *q, int i, const ga_cgd_at *at,
                   gak_cstate *st, char *why, size_t nwhy) {
  double t0 = ga_cache_prof_ms();
  int64_t n = 0, *h_cnt = NULL, m = at->m ? at->m : 1;
  uint32_t *h_gid = NULL;
  gak_cval *h_val = NULL;
  int rc = GA_SCAN_FALLBACK;
  char *d = NULL;
  int sums = !q->best_only[i] && !q->vdict[i]; /* rule 3 */
  if (at->m >= INT32_MAX) {                    /* CUB's item counts are int */
    snprintf(why, nwhy, "DISTINCT on the GPU sorts fewer than 2^31 rows");
    return GA_CACHE_DECLINED;
  }
  size_t sc = (gak_cdist_sort_scratch(m) + 255) & ~(size_t)255;
  size_t rg = ((size_t)m * 4 + 255) & ~(size_t)255;
  size_t rv = ((size_t)m * sizeof(gak_cval) + 255) & ~(size_t)255;
  size_t cb = (size_t)at->ngroups * 8 + 8;
  if (!within(q, (int64_t)(sc + rg + rv + cb), "sorted pairs", why, nwhy))
    return GA_CACHE_DECLINED;
  if (!ga_dev_alloc((void **)&d, sc + rg + rv + cb)) { /* rule 4 */
    snprintf(why, nwhy,
             "no GPU memory for DISTINCT's sorted pairs (%lld bytes)",
             (long long)(sc + rg + rv + cb));
    return GA_CACHE_DECLINED;
  }
  uint32_t *d_gid = (uint32_t *)(d + sc);
  gak_cval *d_val = (gak_cval *)(d + sc + rg);
  int64_t *d_cnt = (int64_t *)(d + sc + rg + rv), *d_n = d_cnt + at->ngroups;
  h_cnt = sqlite3_malloc64((size_t)at->ngroups * 8);
  if (!h_cnt) {
    rc = GA_SCAN_NOMEM;
    goto done;
  }
  STEP(GA_STAGE_LAUNCH,
       gak_cdist_sort(at->col, at->idx, at->gid, at->sel, at->m, at->ngroups,
                      d_gid, d_val, d_n, d_cnt, d, c->stream));
  STEP(GA_STAGE_D2H,
       gak_memcpy_d2h(h_cnt, d_cnt, (size_t)at->ngroups * 8, c->stream));
  STEP(GA_STAGE_D2H, gak_memcpy_d2h(&n, d_n, 8, c->stream));
  if (!ga_cg_sync(c, why, nwhy))
    goto fail;
  if (n < 0 || n > at->m) {
    snprintf(why, nwhy, "a GPU step failed (DISTINCT's pair count)");
    goto done;
  }
  if (sums && n) { /* rule 3: the representatives come back */
    size_t hb = (size_t)n * (4 + sizeof(gak_cval));
    if (!within(q, (int64_t)(sc + rg + rv + cb + hb), "sorted pairs", why,
                nwhy)) {
      rc = GA_CACHE_DECLINED;
      goto done;
    }
    h_gid = sqlite3_malloc64((size_t)n * 4);
    h_val = sqlite3_malloc64((size_t)n * sizeof(gak_cval));
    if (!h_gid || !h_val) {
      rc = GA_SCAN_NOMEM;
      goto done;
    }
    STEP(GA_STAGE_D2H, gak_memcpy_d2h(h_gid, d_gid, (size_t)n * 4, c->stream));
    STEP(GA_STAGE_D2H,
         gak_memcpy_d2h(h_val, d_val, (size_t)n * sizeof(gak_cval), c->stream));
    if (!ga_cg_sync(c, why, nwhy))
      goto fail;
  }
  ga_cache_prof("cache_gpu", "dset-sort", &t0);
  rc = GA_SCAN_OK;
  int64_t r = 0, added = 0; /* the pairs are in group order, as ids are */
  for (int64_t g = 0; g < at->ngr && rc == GA_SCAN_OK; g++) {
    uint32_t id = at->ids[g];
    if ((int64_t)id >= at->ngroups) {
      snprintf(why, nwhy, "a GPU step failed (a group's id)");
      rc = GA_SCAN_FALLBACK;
      break;
    }
    st[g].count = h_cnt[id];
    if (!sums)
      continue;
    ga_sum_init(&st[g].sum);
    while (r < n && h_gid[r] < id)
      r++;
    for (; r < n && h_gid[r] == id; r++) {
      if (!(r & 0xfffff) && r && stop(q)) {
        rc = GA_SCAN_INTERRUPT;
        break;
      }
      sum_add(&st[g].sum, h_val[r].type == GA_CX_TREAL, h_val[r].bits, &added);
    }
    ga_sum_normalize(&st[g].sum);
  }
  goto done;
fail:
  rc = GA_SCAN_FALLBACK; /* drained below */
done:
  if (rc != GA_SCAN_OK)
    drain(c);
  ga_cg_free(d);
  sqlite3_free(h_cnt);
  sqlite3_free(h_gid);
  sqlite3_free(h_val);
  return rc;
}

/* Rule 1: a copy of TEXT value i's codes (*out, device) as their classes
** under its collation, into *dup (the caller's at with that column).
** GA_SCAN_OK, GA_CACHE_DECLINED, GA_SCAN_FALLBACK (why), GA_SCAN_NOMEM. */
static int classes(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                   const ga_cgd_at *at, ga_cgd_at *dup, char **out, char *why,
                   size_t nwhy) {
  const ga_dict *d = q->vdict[i];
  int64_t nd = ga_dict_count(d), rows = at->m;
  if (ga_cx_bare(ga_cq_val(q, i)) >= 0)
    rows = e->rows; /* read at the positions' rows */
  size_t vb = ((size_t)(rows ? rows : 1) * 8 + 255) & ~(size_t)255;
  if (!within(q, (int64_t)vb + nd * 12, "classes of TEXT", why, nwhy))
    return GA_CACHE_DECLINED;
  uint32_t *map = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(nd + 1));
  if (!map)
    return GA_SCAN_NOMEM;
  int rc = code_classes(d, q->dist[i] - 1, map);
  if (rc != GA_SCAN_OK) {
    sqlite3_free(map);
    return rc;
  }
  if (!ga_dev_alloc((void **)out, vb + (size_t)(nd + 1) * 4)) {
    sqlite3_free(map);
    snprintf(why, nwhy, "no GPU memory for the DISTINCT sets");
    return GA_SCAN_FALLBACK;
  }
  uint64_t *d_v = (uint64_t *)*out;
  uint32_t *d_map = (uint32_t *)(*out + vb);
  *dup = *at;
  dup->col.vals = d_v;
  STEP(GA_STAGE_H2D,
       gak_memcpy_d2d(d_v, at->col.vals, (size_t)rows * 8, c->stream));
  STEP(GA_STAGE_H2D,
       gak_memcpy_h2d(d_map, map, (size_t)(nd + 1) * 4, c->stream));
  STEP(GA_STAGE_LAUNCH,
       gak_cache_remap(d_v, at->col.notnull, rows, d_map, nd, c->stream));
  if (!ga_cg_sync(c, why, nwhy)) /* map is read until then */
    goto fail;
  sqlite3_free(map);
  return GA_SCAN_OK;
fail:
  drain(c);
  sqlite3_free(map);
  return GA_SCAN_FALLBACK;
}

int ga_cgd_value(ga_cache *c, const ga_centry *e, const ga_cquery *q, int i,
                 const ga_cgd_at *at, gak_cstate *st, char *why, size_t nwhy) {
  int64_t lo = 0;
  uint64_t range = 0;
  int fold = 0, sort = 0, rc;
  char *dc = NULL;
  ga_cgd_at dup;
  if (q->vdict[i] && q->dist[i] - 1 != GA_COLL_BINARY) { /* rule 1 */
    rc = classes(c, e, q, i, at, &dup, &dc, why, nwhy);
    if (rc != GA_SCAN_OK) {
      ga_cg_free(dc);
      return rc;
    }
    at = &dup;
  }
  rc = domain(c, e, q, i, at, &lo, &range, &fold, &sort, why, nwhy);
  if (rc == GA_SCAN_OK) {
    /* rule 2: the bitmap where its bits stay within the bound */
    int64_t words = (int64_t)((range + 63) / 64);
    int64_t most_bits = e->rows * GA_CGD_BITS_PER_ROW + GA_CGD_FREE_BITS;
    if (!sort && range <= ((uint64_t)1 << 32) &&
        at->ngroups <= most_bits / 64 / (words ? words : 1))
      rc = by_bits(c, e, q, i, at, lo, range, fold, st, why, nwhy);
    else
      rc = by_sort(c, q, i, at, st, why, nwhy);
  }
  ga_cg_free(dc);
  return rc;
}
