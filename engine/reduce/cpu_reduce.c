/*
** cpu_reduce.c — CPU reducers over a chunk (see cpu_reduce.h).
**
** Integers: the 32-bit halves are summed separately (ga_partial.h), a loop
** the compiler vectorises.  Reals and mixed chunks: engine/reduce/cpu_sum.c
** (exponent bins in front of the superaccumulator, no rounding anywhere).
*/
#include "cpu_reduce.h"

#include "cpu_sum.h"
#include "xacc.h"

static inline int is_int(const uint64_t *isint, int64_t i) {
  return (int)((isint[i >> 6] >> (i & 63)) & 1);
}

void ga_cpu_sum(const uint64_t *vals, const uint64_t *isint, int64_t n,
                int layout, ga_sum_partial *p) {
  if (layout == GA_LAYOUT_INT) {
    int64_t lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      lo += (int64_t)(vals[i] & 0xffffffffu);
      hi += (int64_t)vals[i] >> 32;
    }
    p->ilo = (int64_t)((uint64_t)p->ilo + (uint64_t)lo);
    p->ihi = (int64_t)((uint64_t)p->ihi + (uint64_t)hi);
    p->nint += n;
  } else {
    ga_cpu_sum_reals(vals, isint, n, layout, p);
  }
}

void ga_best_merge(ga_best_partial *into, const ga_best_partial *from,
                   int want_min) {
  if (from->kind == GA_KIND_NONE)
    return;
  if (into->kind != GA_KIND_NONE) {
    int c = ga_num_cmp(from->kind, from->bits, into->kind, into->bits);
    if (want_min)
      c = -c;
    if (c < 0 || (c == 0 && from->idx >= into->idx))
      return;
  }
  *into = *from;
}

void ga_cpu_best(const uint64_t *vals, const uint64_t *isint, int64_t n,
                 int layout, int want_min, ga_best_partial *out) {
  out->kind = GA_KIND_NONE;
  out->pad = 0;
  out->idx = 0;
  out->bits = 0;
  if (n <= 0)
    return;
  if (layout == GA_LAYOUT_INT) {
    int64_t b = (int64_t)vals[0], bi = 0;
    for (int64_t i = 1; i < n; i++) {
      int64_t v = (int64_t)vals[i];
      if (want_min ? v < b : v > b)
        b = v, bi = i;
    }
    out->kind = GA_KIND_INT;
    out->bits = b;
    out->idx = bi;
  } else if (layout == GA_LAYOUT_REAL) {
    double b = ga_bitsd((int64_t)vals[0]);
    int64_t bi = 0;
    for (int64_t i = 1; i < n; i++) {
      double v = ga_bitsd((int64_t)vals[i]);
      if (want_min ? v < b : v > b)
        b = v, bi = i;
    }
    out->kind = GA_KIND_REAL;
    out->bits = (int64_t)vals[bi];
    out->idx = bi;
  } else {
    for (int64_t i = 0; i < n; i++) {
      ga_best_partial v = {is_int(isint, i) ? GA_KIND_INT : GA_KIND_REAL, 0, i,
                           (int64_t)vals[i]};
      ga_best_merge(out, &v, want_min);
    }
  }
}
