/*
** cpu_sum.h — the CPU's exact sum of doubles: ga_cpu_sum's REAL and MIXED
** layouts (engine/reduce/cpu_sum.c), and its variants for tests and benchmarks.
**
** Every variant gives the same partial after ga_sum_normalize as adding the
** values one at a time with ga_xacc_add_real (variant 0, the reference);
** they differ only in speed.  Which variants exist depends on the CPU.
*/
#ifndef GA_CPU_SUM_H
#define GA_CPU_SUM_H

#include <stdint.h>

#include "ga_partial.h"

/* Add n values, GA_LAYOUT_REAL or GA_LAYOUT_MIXED (isint: ga_partial.h's
** bitmap), into p with the fastest variant this CPU runs.  n and p keep
** ga_cpu_sum's contract (cpu_reduce.h). */
void ga_cpu_sum_reals(const uint64_t *vals, const uint64_t *isint, int64_t n,
                      int layout, ga_sum_partial *p);

/* Variants, numbered 0 .. ga_cpu_sum_nvariants()-1: 0 is the reference (one
** value at a time), 1 the portable exponent bins (plain C), then the same
** bins with a SIMD range pass and flush (sse2, avx512, avx2) on x86-64. */
int ga_cpu_sum_nvariants(void);
const char *ga_cpu_sum_variant_name(int v);
/* Does this CPU run variant v? */
int ga_cpu_sum_variant_ok(int v);
/* The variant ga_cpu_sum_reals uses here (the last one that runs). */
int ga_cpu_sum_variant_best(void);
/* ga_cpu_sum_reals with variant v (which must run here). */
void ga_cpu_sum_variant(int v, const uint64_t *vals, const uint64_t *isint,
                        int64_t n, int layout, ga_sum_partial *p);

#endif
