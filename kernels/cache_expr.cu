/*
** cache_expr.cu — the column cache's expressions on the GPU (kernels/gak.h,
** "expressions and keys"): a program of engine/cache/cexpr.h run one row a
** thread, its value written as a cached column.
**
** Rules:
**   1. The row interpreter is kernels/cx_run.h (the fake backend runs the
**      same), its scalar rules base/cx_ops.h's, which the host's lanes run
**      too: the same value, bit for bit.  Doubles go through the _rn
**      intrinsics there, which nvcc never contracts into an FMA (the build
**      also passes --fmad=false to this file: two locks on one door).
**   2. NULL propagates, logic is three-valued, CASE and coalesce take the
**      first branch that holds (every branch is evaluated: none has side
**      effects), as cexpr.h rule 4.  A row that reaches abs(INT64_MIN)
**      anywhere in the program is an error row (cexpr.h rule 5): reported
**      through *err when the row is selected.
**   3. One thread per row; a warp's ballot is one 32-bit half of a bitmap
**      word (the loop bound is the same for a whole block).
*/
#include <stdint.h>

#include "cx_run.h"

#define CT 256
#define MAX_GRID 65535

__global__ void __launch_bounds__(CT)
    k_eval(const gak_cprog p, long long n, const uint32_t *rows,
           const uint32_t *sel, uint64_t *vals, uint32_t *isint,
           uint32_t *notnull, uint32_t *err) {
  long long nw = (n + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long i = base + threadIdx.x;
    ga_cxr_v r = ga_cxr_mk(GA_CX_TNULL, 0);
    int e = 0;
    if (i < n) {
      long long row = rows ? (long long)rows[i] : i;
      r = ga_cx_run(&p, row, &e);
      vals[i] = r.v;
      if (e && (!sel || ((sel[row >> 5] >> (row & 31)) & 1)))
        *err = 1;
    }
    unsigned nn = __ballot_sync(0xffffffffu, r.t != GA_CX_TNULL);
    unsigned ii = __ballot_sync(0xffffffffu, r.t == GA_CX_TINT);
    if ((threadIdx.x & 31) == 0 && (i >> 5) < nw) {
      notnull[i >> 5] = nn;
      isint[i >> 5] = ii;
    }
  }
}

/* The filter form: the rows whose value is true, one bit a row. */
__global__ void __launch_bounds__(CT)
    k_eval_filter(const gak_cprog p, long long n, uint32_t *sel,
                  uint32_t *err) {
  long long nw = (n + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long i = base + threadIdx.x;
    int e = 0, pass = 0;
    if (i < n) {
      ga_cxr_v r = ga_cx_run(&p, i, &e);
      pass = r.t != GA_CX_TNULL && ga_cx_true(r.t, r.v);
      if (e)
        *err = 1;
    }
    unsigned w = __ballot_sync(0xffffffffu, pass);
    if ((threadIdx.x & 31) == 0 && (i >> 5) < nw)
      sel[i >> 5] = w;
  }
}

extern "C" int gak_cache_eval_filter(const gak_cprog *p, int64_t n,
                                     uint32_t *d_sel, uint32_t *d_err,
                                     gak_stream s) {
  if (!p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 || p->n > GAK_CX_MAX)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  long long nw = (n + 31) / 32, g = (nw * 32 + CT - 1) / CT;
  int grid = g > MAX_GRID ? MAX_GRID : (int)(g < 1 ? 1 : g);
  k_eval_filter<<<grid, CT, 0, (cudaStream_t)s>>>(*p, n, d_sel, d_err);
  return (int)cudaGetLastError();
}

extern "C" int gak_cache_eval(const gak_cprog *p, int64_t n,
                              const uint32_t *d_rows, const uint32_t *d_sel,
                              uint64_t *d_vals, uint64_t *d_isint,
                              uint64_t *d_notnull, uint32_t *d_err,
                              gak_stream s) {
  if (!p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 || p->n > GAK_CX_MAX)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  long long nw = (n + 31) / 32, g = (nw * 32 + CT - 1) / CT;
  int grid = g > MAX_GRID ? MAX_GRID : (int)(g < 1 ? 1 : g);
  /* an odd count of 32-bit halves: the last 64-bit word's upper half */
  if (nw & 1)
    cudaMemsetAsync((uint32_t *)d_isint + nw, 0, 4, (cudaStream_t)s),
        cudaMemsetAsync((uint32_t *)d_notnull + nw, 0, 4, (cudaStream_t)s);
  k_eval<<<grid, CT, 0, (cudaStream_t)s>>>(*p, n, d_rows, d_sel, d_vals,
                                           (uint32_t *)d_isint,
                                           (uint32_t *)d_notnull, d_err);
  return (int)cudaGetLastError();
}
