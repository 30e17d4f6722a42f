/*
** cpu_reduce.h — the CPU reducers: the small-input path, the no-GPU path,
** the fallback, and the reference the GPU is tested against.
*/
#ifndef GA_CPU_REDUCE_H
#define GA_CPU_REDUCE_H

#include <stdint.h>

#include "ga_partial.h"

/* Add n values (layout GA_LAYOUT_*) into p (n < GA_XACC_SAFE_ADDS). */
void ga_cpu_sum(const uint64_t *vals, const uint64_t *isint, int64_t n,
                int layout, ga_sum_partial *p);
/* Best (max, or min when want_min) of n values, idx relative to vals. */
void ga_cpu_best(const uint64_t *vals, const uint64_t *isint, int64_t n,
                 int layout, int want_min, ga_best_partial *out);
/* into = the better of into and from (equal values: the smaller idx). */
void ga_best_merge(ga_best_partial *into, const ga_best_partial *from,
                   int want_min);

#endif
