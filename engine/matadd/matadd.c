/*
** matadd.c — the engine of gpu_matadd (see matadd.h).
**
** Rules this file keeps:
**   1. Memory is bounded by the inputs plus the output, never by the shape:
**      the dense path is taken only when the bounding box holds at most
**      GA_MATADD_DENSE_FILL cells per input entry (plus a small slack);
**      otherwise the sorted entries are merged (sparse path).
**   2. The dense box is the bounding box of both inputs, not [0, max i] x
**      [0, max j]: a band read through a WHERE i = ... pushdown, or a block
**      far from the origin, is dense in its own box.
**   3. Every path gives the same values: v = A[i,j] + B[i,j] rounded once in
**      double precision, a missing entry being +0.0.
**   4. The GPU path (dense, above cfg->cpu_max_rows, or always with
**      device = gpu) copies row bands from pinned memory over several
**      streams: H2D a, H2D b, kernel, D2H c per band, so one band's copy
**      back overlaps the next bands' copies in.  The inputs stay intact in
**      their own buffers, so any CUDA failure (checked through ga_cuda_ok,
**      which also injects faults) is answered by the CPU from them.
**   5. Counters: matadd_gpu / matadd_cpu count finished computations by the
**      path that produced the numbers; fallbacks counts GPU failures.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "matadd.h"

#include <stdlib.h>
#include <string.h>

#include "gak.h"
#include "gpu.h"

#define GA_MATADD_MAX_STREAMS 16
#define GA_MATADD_MIN_BAND ((int64_t)1 << 17) /* 1 MiB of doubles */
#define GA_MATADD_MAX_BAND ((int64_t)1 << 23) /* 64 MiB of doubles */

int ga_matadd_input_push(ga_matadd_input *in, int64_t i, int64_t j, double v) {
  if (in->n == in->cap) {
    int64_t cap = in->cap ? in->cap * 2 : 1024;
    ga_matadd_entry *e =
        sqlite3_realloc64(in->e, (sqlite3_uint64)cap * sizeof(*e));
    if (!e)
      return SQLITE_NOMEM;
    in->e = e;
    in->cap = cap;
  }
  if (in->n == 0) {
    in->imin = in->imax = i;
    in->jmin = in->jmax = j;
  } else {
    if (i < in->imin)
      in->imin = i;
    if (i > in->imax)
      in->imax = i;
    if (j < in->jmin)
      in->jmin = j;
    if (j > in->jmax)
      in->jmax = j;
  }
  in->e[in->n].i = i;
  in->e[in->n].j = j;
  in->e[in->n].v = v;
  in->n++;
  return SQLITE_OK;
}

void ga_matadd_input_free(ga_matadd_input *in) {
  sqlite3_free(in->e);
  memset(in, 0, sizeof(*in));
}

const char *ga_matadd_path_name(int path) {
  switch (path) {
  case GA_MATADD_DENSE_CPU:
    return "dense-cpu";
  case GA_MATADD_DENSE_GPU:
    return "dense-gpu";
  case GA_MATADD_SPARSE:
    return "sparse";
  default:
    return "empty";
  }
}

int64_t ga_matadd_band(int64_t n, int64_t cols, const ga_config *cfg) {
  int s = cfg->streams < 1 ? 1 : cfg->streams;
  int64_t hi = cfg->chunk_bytes > 0 ? cfg->chunk_bytes / 8 : GA_MATADD_MAX_BAND;
  if (hi > GA_MATADD_MAX_BAND)
    hi = GA_MATADD_MAX_BAND;
  /* Several bands per stream, so that copies in and out overlap for most of
  ** the run and only the first band in and the last band out are exposed. */
  int64_t band = (n + 4 * s - 1) / (4 * s);
  if (band < GA_MATADD_MIN_BAND)
    band = GA_MATADD_MIN_BAND;
  if (band > hi)
    band = hi;
  if (band < 1)
    band = 1;
  if (cols > 0 && cols <= band)
    band = band / cols * cols; /* whole rows */
  if (band > n)
    band = n;
  return band;
}

/* ---- GPU pipeline ---- */

int ga_matadd_gpu(const double *a, const double *b, double *c, int64_t n,
                  int64_t band, int nstreams, int *nbands) {
  gak_stream st[GA_MATADD_MAX_STREAMS] = {0};
  void *da[GA_MATADD_MAX_STREAMS] = {0}, *db[GA_MATADD_MAX_STREAMS] = {0};
  void *dc[GA_MATADD_MAX_STREAMS] = {0};
  int ok = 0, ns = 0, k, prev;
  int64_t nb;

  *nbands = 0;
  if (n <= 0)
    return 1;
  if (ga_gpu_init(NULL) <= 0 || !ga_dev_enter(0, &prev))
    return 0;
  if (band <= 0 || band > n)
    band = n;
  nb = (n + band - 1) / band;
  ns = nstreams < 1 ? 1 : nstreams;
  if (ns > GA_MATADD_MAX_STREAMS)
    ns = GA_MATADD_MAX_STREAMS;
  if (ns > nb)
    ns = (int)nb;

  /* Device band buffers a, b, c per stream: band k uses slot k % ns, and as
  ** all of a slot's work is on its own stream, band k + ns cannot overwrite
  ** band k's buffers before its copy back has finished.  c is its own buffer
  ** because the kernel's pointers are __restrict__. */
  size_t band_bytes = (size_t)band * sizeof(double);
  for (k = 0; k < ns; k++) {
    if (!ga_stream_new((void **)&st[k]) || !ga_dev_alloc(&da[k], band_bytes) ||
        !ga_dev_alloc(&db[k], band_bytes) || !ga_dev_alloc(&dc[k], band_bytes))
      goto cleanup;
  }
  for (int64_t q = 0; q < nb; q++) {
    int s = (int)(q % ns);
    int64_t off = q * band, len = n - off < band ? n - off : band;
    size_t bytes = (size_t)len * sizeof(double);
    if (!ga_cuda_ok(GA_STAGE_H2D, gak_memcpy_h2d(da[s], a + off, bytes, st[s])))
      goto cleanup;
    if (!ga_cuda_ok(GA_STAGE_H2D, gak_memcpy_h2d(db[s], b + off, bytes, st[s])))
      goto cleanup;
    if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                    gak_matadd(da[s], db[s], dc[s], len, st[s])))
      goto cleanup;
    if (!ga_cuda_ok(GA_STAGE_D2H, gak_memcpy_d2h(c + off, dc[s], bytes, st[s])))
      goto cleanup;
  }
  /* A kernel that failed while it ran shows up at the sync: counted under
  ** "kernel", any other failure of the sync under "sync". */
  for (k = 0; k < ns; k++) {
    int err = gak_stream_sync(st[k]);
    int kernel = err && gak_error_class(err) == GAK_EKERNEL;
    if (!ga_cuda_ok(GA_STAGE_KERNEL, kernel ? err : 0) ||
        !ga_cuda_ok(GA_STAGE_SYNC, kernel ? 0 : err))
      goto cleanup;
  }
  *nbands = (int)(nb > 0x7fffffff ? 0x7fffffff : nb);
  ok = 1;

cleanup:
  /* On a failure, work already queued must drain before its buffers are
  ** freed; those results are not checked again: the failure is already
  ** counted and the caller recomputes everything on the CPU. */
  for (k = 0; k < ns; k++) {
    if (st[k])
      gak_stream_sync(st[k]);
    gak_free(da[k]);
    gak_free(db[k]);
    gak_free(dc[k]);
    if (st[k])
      gak_stream_destroy(st[k]);
  }
  if (!ok)
    gak_take_error(); /* clear a non-sticky error for later calls */
  ga_dev_leave(prev);
  return ok;
}

/* ---- helpers ---- */

static void host_free(void *p, int pinned) {
  if (!p)
    return;
  if (pinned)
    ga_gpu_host_free(p);
  else
    sqlite3_free(p);
}

void ga_matadd_result_free(ga_matadd_result *r) {
  if (r->b != r->a)
    host_free(r->b, r->ab_pinned);
  if (r->a != r->c)
    host_free(r->a, r->ab_pinned);
  host_free(r->c, r->c_pinned);
  sqlite3_free(r->present);
  sqlite3_free(r->out);
  memset(r, 0, sizeof(*r));
}

static int entry_cmp(const void *x, const void *y) {
  const ga_matadd_entry *p = x, *q = y;
  if (p->i != q->i)
    return p->i < q->i ? -1 : 1;
  if (p->j != q->j)
    return p->j < q->j ? -1 : 1;
  return 0;
}

/* Sort by (i, j) (skipped when already in order, as tables filled in order
** usually are) and find the first duplicate coordinate. */
static int sort_check(ga_matadd_input *in, int which, ga_matadd_dup *dup) {
  int64_t k, sorted = 1;
  for (k = 1; k < in->n && sorted; k++)
    if (entry_cmp(&in->e[k - 1], &in->e[k]) >= 0)
      sorted = 0;
  if (!sorted)
    qsort(in->e, (size_t)in->n, sizeof(in->e[0]), entry_cmp);
  for (k = 1; k < in->n; k++) {
    if (in->e[k - 1].i == in->e[k].i && in->e[k - 1].j == in->e[k].j) {
      dup->which = which;
      dup->i = in->e[k].i;
      dup->j = in->e[k].j;
      return GA_MATADD_DUPLICATE;
    }
  }
  return SQLITE_OK;
}

static int compute_sparse(ga_matadd_input *a, ga_matadd_input *b,
                          ga_matadd_result *r, ga_matadd_dup *dup) {
  int rc;
  int64_t p = 0, q = 0, n = 0;
  if ((rc = sort_check(a, 0, dup)) != SQLITE_OK)
    return rc;
  if ((rc = sort_check(b, 1, dup)) != SQLITE_OK)
    return rc;
  r->out = sqlite3_malloc64((sqlite3_uint64)(a->n + b->n) * sizeof(*r->out));
  if (!r->out)
    return SQLITE_NOMEM;
  while (p < a->n || q < b->n) {
    int c = p == a->n ? 1 : q == b->n ? -1 : entry_cmp(&a->e[p], &b->e[q]);
    if (c < 0) {
      r->out[n] = a->e[p++];
      r->out[n].v += 0.0; /* as on the dense path: -0.0 + +0.0 */
    } else if (c > 0) {
      r->out[n] = b->e[q++];
      r->out[n].v = 0.0 + r->out[n].v;
    } else {
      r->out[n] = a->e[p];
      r->out[n].v = a->e[p++].v + b->e[q++].v;
    }
    n++;
  }
  r->nout = n;
  r->path = GA_MATADD_SPARSE;
  ga_counter_add(&ga_counters_global()->matadd_cpu, 1);
  return SQLITE_OK;
}

/* Scatter one input into the dense array x; `seen` marks its cells so that a
** second entry for one cell is caught. */
static int scatter(const ga_matadd_input *in, int which, ga_matadd_result *r,
                   double *x, uint64_t *seen, ga_matadd_dup *dup) {
  for (int64_t k = 0; k < in->n; k++) {
    const ga_matadd_entry *e = &in->e[k];
    int64_t cell = (e->i - r->imin) * r->cols + (e->j - r->jmin);
    uint64_t bit = (uint64_t)1 << (cell & 63);
    if (seen[cell >> 6] & bit) {
      dup->which = which;
      dup->i = e->i;
      dup->j = e->j;
      return GA_MATADD_DUPLICATE;
    }
    seen[cell >> 6] |= bit;
    x[cell] = e->v;
  }
  return SQLITE_OK;
}

static int compute_dense(ga_matadd_input *a, ga_matadd_input *b,
                         const ga_config *cfg, ga_matadd_result *r,
                         ga_matadd_dup *dup) {
  int64_t n = r->rows * r->cols, k;
  int64_t words = (n + 63) / 64;
  size_t bytes = (size_t)n * sizeof(double);
  uint64_t *seen_b = NULL;
  int rc = SQLITE_NOMEM, use_gpu;

  /* The GPU is worth its copies only for big matrices (cpu_max_rows, and
  ** gpu_start_rows while this process has not started CUDA), unless the user
  ** forces it; device = cpu never touches CUDA.  Same rule as the
  ** aggregates (engine/reduce/agg.c, wants_gpu). */
  use_gpu =
      cfg->device != GA_DEVICE_CPU &&
      (cfg->device == GA_DEVICE_GPU ||
       (n > cfg->cpu_max_rows && (n > cfg->gpu_start_rows || ga_gpu_warm()))) &&
      ga_gpu_compiled() && ga_gpu_ndev(cfg) > 0;
  if (use_gpu) {
    r->a = ga_gpu_host_alloc(bytes);
    r->b = r->a ? ga_gpu_host_alloc(bytes) : NULL;
    r->c = r->b ? ga_gpu_host_alloc(bytes) : NULL;
    if (!r->c) {
      /* Pinned memory refused (counted by ga_cuda_ok): the CPU takes over
      ** with ordinary memory. */
      if (r->b)
        ga_gpu_host_free(r->b);
      if (r->a)
        ga_gpu_host_free(r->a);
      r->a = r->b = NULL;
      r->fallback = 1;
      ga_counter_add(&ga_counters_global()->fallbacks, 1);
      use_gpu = 0;
    } else {
      r->ab_pinned = r->c_pinned = 1;
    }
  }
  if (!use_gpu) {
    r->a = sqlite3_malloc64(bytes);
    r->b = sqlite3_malloc64(bytes);
    if (!r->a || !r->b)
      goto cleanup;
    r->c = r->a; /* the CPU adds in place */
  }
  r->present = sqlite3_malloc64((sqlite3_uint64)words * 8);
  seen_b = sqlite3_malloc64((sqlite3_uint64)words * 8);
  if (!r->present || !seen_b)
    goto cleanup;
  memset(r->present, 0, (size_t)words * 8);
  memset(seen_b, 0, (size_t)words * 8);
  memset(r->a, 0, bytes);
  memset(r->b, 0, bytes);
  if ((rc = scatter(a, 0, r, r->a, r->present, dup)) != SQLITE_OK)
    goto cleanup;
  if ((rc = scatter(b, 1, r, r->b, seen_b, dup)) != SQLITE_OK)
    goto cleanup;
  for (k = 0; k < words; k++)
    r->present[k] |= seen_b[k];

  if (use_gpu) {
    int nb = 0;
    r->streams = cfg->streams;
    if (ga_matadd_gpu(r->a, r->b, r->c, n, ga_matadd_band(n, r->cols, cfg),
                      cfg->streams, &nb)) {
      r->bands = nb;
      r->path = GA_MATADD_DENSE_GPU;
      ga_counter_add(&ga_counters_global()->matadd_gpu, 1);
    } else {
      r->fallback = 1;
      r->streams = 0;
      ga_counter_add(&ga_counters_global()->fallbacks, 1);
      use_gpu = 0;
    }
  }
  if (!use_gpu) {
    for (k = 0; k < n; k++)
      r->c[k] = r->a[k] + r->b[k];
    r->path = GA_MATADD_DENSE_CPU;
    ga_counter_add(&ga_counters_global()->matadd_cpu, 1);
  }
  /* Only c and the bitmap are needed from here on. */
  if (r->b != r->c)
    host_free(r->b, r->ab_pinned);
  if (r->a != r->c)
    host_free(r->a, r->ab_pinned);
  r->a = r->b = NULL;
  rc = SQLITE_OK;

cleanup:
  sqlite3_free(seen_b);
  return rc;
}

int ga_matadd_compute(ga_matadd_input *a, ga_matadd_input *b,
                      const ga_config *cfg, ga_matadd_result *r,
                      ga_matadd_dup *dup) {
  int64_t imin, imax, jmin, jmax;
  unsigned __int128 cells;
  int rc;

  r->pos = 0;
  r->eof = 0;
  if (a->n + b->n == 0) {
    r->path = GA_MATADD_EMPTY;
    ga_counter_add(&ga_counters_global()->matadd_cpu, 1);
    return SQLITE_OK;
  }
  if (a->n == 0) {
    imin = b->imin, imax = b->imax, jmin = b->jmin, jmax = b->jmax;
  } else {
    imin = a->imin, imax = a->imax, jmin = a->jmin, jmax = a->jmax;
    if (b->n) {
      if (b->imin < imin)
        imin = b->imin;
      if (b->imax > imax)
        imax = b->imax;
      if (b->jmin < jmin)
        jmin = b->jmin;
      if (b->jmax > jmax)
        jmax = b->jmax;
    }
  }
  /* Indices are >= 0, so the differences fit; the product may not. */
  cells = (unsigned __int128)((uint64_t)(imax - imin) + 1) *
          ((uint64_t)(jmax - jmin) + 1);
  if (cells <=
      (unsigned __int128)GA_MATADD_DENSE_FILL * (uint64_t)(a->n + b->n) +
          GA_MATADD_DENSE_SLACK) {
    r->imin = imin;
    r->jmin = jmin;
    r->rows = imax - imin + 1;
    r->cols = jmax - jmin + 1;
    rc = compute_dense(a, b, cfg, r, dup);
  } else {
    rc = compute_sparse(a, b, r, dup);
  }
  if (rc != SQLITE_OK) {
    int f = r->fallback;
    ga_matadd_result_free(r);
    r->fallback = f;
  }
  return rc;
}

int ga_matadd_result_next(ga_matadd_result *r) {
  if (r->path == GA_MATADD_SPARSE) {
    if (r->pos < r->nout) {
      r->i = r->out[r->pos].i;
      r->j = r->out[r->pos].j;
      r->v = r->out[r->pos].v;
      r->pos++;
      return 1;
    }
  } else if (r->path == GA_MATADD_DENSE_CPU || r->path == GA_MATADD_DENSE_GPU) {
    int64_t n = r->rows * r->cols;
    /* Next set bit of the bitmap at or after pos, a word at a time. */
    while (r->pos < n) {
      uint64_t w = r->present[r->pos >> 6] >> (r->pos & 63);
      if (w) {
        int64_t cell = r->pos + __builtin_ctzll(w);
        r->i = r->imin + cell / r->cols;
        r->j = r->jmin + cell % r->cols;
        r->v = r->c[cell];
        r->pos = cell + 1;
        return 1;
      }
      r->pos = (r->pos | 63) + 1;
    }
  }
  r->eof = 1;
  return 0;
}
