/*
** agg.h — the aggregate engine behind gpu_sum, gpu_total, gpu_avg,
** gpu_max and gpu_min.
**
** The SQLite glue turns each argument into a ga_value and calls
** ga_agg_step / ga_agg_inverse / ga_agg_value / ga_agg_final.  The engine
** buffers numbers into chunks, reduces full chunks as they fill (CPU, or
** queued on the GPU), merges the partials, and answers.  It knows nothing of
** SQLite beyond sqlite3_malloc64.
*/
#ifndef GA_AGG_H
#define GA_AGG_H

#include <stdint.h>

#include "config.h"
#include "value.h"

/* What the last aggregate did, for gpuagg_info(). */
typedef struct ga_last {
  const char *path; /* "cpu", "gpu" or "mixed" ("none" before any) */
  int64_t rows;     /* non-NULL values */
  int64_t chunks_cpu, chunks_gpu;
  double h2d_ms, kernel_ms; /* summed over GPU chunks, device time */
  double finalize_ms, total_ms;
  int64_t fallbacks;
} ga_last;

typedef struct ga_agg ga_agg;

ga_agg *ga_agg_new(int op, const ga_config *cfg, ga_last *last);
void ga_agg_free(ga_agg *a);
int ga_agg_op(const ga_agg *a); /* GA_AGG_* */
int ga_agg_step(ga_agg *a, const ga_value *v);
/* The sum family's per-row calls (gpu_sum, gpu_total, gpu_avg only). */
int ga_agg_push_int(ga_agg *a, int64_t v);
int ga_agg_push_real(ga_agg *a, double v);
/* gpu_max/gpu_min's per-row call for a number (kind GA_KIND_INT/REAL,
** bits: the int64 or the double's bits). */
int ga_agg_best_num(ga_agg *a, uint64_t bits, int kind);
int ga_agg_inverse(ga_agg *a, const ga_value *v);
/* Current (window) or final result.  out->p, when set, stays valid until
** the next call on a.  ga_agg_final does the last reductions; call
** ga_agg_free after it. */
int ga_agg_value(ga_agg *a, ga_value *out);
int ga_agg_final(ga_agg *a, ga_value *out);

/* Rows of history kept for max/min so that a window can slide (README). */
#define GA_HISTORY_MAX ((int64_t)1 << 20)
#define GA_HISTORY_TEXT_BYTES ((int64_t)16 << 20)

#endif
