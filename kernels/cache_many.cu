/*
** cache_many.cu — many groups on the column cache's sorted layout
** (kernels/gak.h, "many groups"; issue 37: bench/query_bench.py's d5, the
** top 10 of 100,000 suppliers by count(*) at 6e7 rows).
**
** Rules:
**   1. ORDER BY count(*) or count(x) ... LIMIT k: a group's count is its
**      key, exact in any case (an integer below 2^32 here: a sorted
**      layout's positions are 32-bit), so nothing declines; keys are those
**      of kernels/cache_topk.cu's rule 3 (0 for a group without rows, the
**      complement for ascending order), and gak_cache_topk chooses the
**      groups from them.
**   2. count(*) reads only the group's bounds; count(x) its rows' bits of
**      x.notnull, one thread a group (a group's rows are few where there
**      are many groups).
**   3. Every launch reports its own error (cudaGetLastError).
**   4. Compact states (gak_cache_many_compact, cache_gpu_many.c rule 6):
**      one thread a group sums its rows in row order into two int64s;
**      an add that would leave int64 is checked before it is made, so a
**      flagged query is only ever declined, never wrong.  A REAL is taken
**      only when it is an integer of magnitude below 2^53 (then (int64)v
**      is v exactly); anything else flags.
*/
#include <limits.h>
#include <stdint.h>

#include "gak.h"

#define CM 256
#define MAX_GRID 65535
#define TOP 0x8000000000000000ull

static int grid_for(long long items) {
  long long g = (items + CM - 1) / CM;
  return g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : (int)g;
}

__global__ void __launch_bounds__(CM)
    k_group_count(const uint64_t *notnull, const uint32_t *idx,
                  const uint32_t *start, const uint32_t *end, long long ng,
                  int desc, uint64_t *key) {
  for (long long g = (long long)blockIdx.x * CM + threadIdx.x; g < ng;
       g += (long long)gridDim.x * CM) {
    uint32_t a = start[g], b = end[g];
    if (a >= b) {
      key[g] = 0;
      continue;
    }
    unsigned long long n = b - a;
    if (notnull) { /* count(x): the rows whose value is not NULL */
      n = 0;
      for (uint32_t p = a; p < b; p++) {
        long long i = idx ? (long long)idx[p] : (long long)p;
        n += (notnull[i >> 6] >> (i & 63)) & 1;
      }
    }
    uint64_t k = TOP | n;
    key[g] = desc ? k : ~k;
  }
}

extern "C" int gak_cache_group_count(gak_ccol x, const uint32_t *d_idx,
                                     const uint32_t *d_start,
                                     const uint32_t *d_end, int64_t ngroups,
                                     int desc, uint64_t *d_key, gak_stream s) {
  if (ngroups < 0)
    return (int)cudaErrorInvalidValue;
  if (ngroups == 0)
    return (int)cudaSuccess;
  k_group_count<<<grid_for(ngroups), CM, 0, (cudaStream_t)s>>>(
      x.notnull, d_idx, d_start, d_end, ngroups, desc, d_key);
  return (int)cudaGetLastError();
}

/* rule 4: a + b, or flag (returns a) when the sum leaves int64 */
__device__ static long long add_ck(long long a, long long b, int *bad) {
  if ((b > 0 && a > LLONG_MAX - b) || (b < 0 && a < LLONG_MIN - b)) {
    *bad = 1;
    return a;
  }
  return a + b;
}

__global__ void __launch_bounds__(CM)
    k_many_compact(gak_ccol x, const uint32_t *idx, const uint32_t *bounds,
                   long long ngr, gak_cmany *out, uint32_t *first,
                   uint32_t *flag) {
  for (long long g = (long long)blockIdx.x * CM + threadIdx.x; g < ngr;
       g += (long long)gridDim.x * CM) {
    uint32_t a = bounds[2 * g], b = bounds[2 * g + 1];
    long long ni = 0, nr = 0, is = 0, rs = 0;
    int bad = 0;
    for (uint32_t p = a; p < b && !bad; p++) {
      long long i = idx ? (long long)idx[p] : (long long)p;
      if (!((x.notnull[i >> 6] >> (i & 63)) & 1))
        continue;
      long long v = (long long)x.vals[i];
      if ((x.isint[i >> 6] >> (i & 63)) & 1) {
        ni++;
        is = add_ck(is, v, &bad);
      } else {
        double d = __longlong_as_double(v);
        /* NaN fails the first test, an infinity the second */
        if (!(fabs(d) < 9007199254740992.0) || d != trunc(d)) {
          bad = 1;
          break;
        }
        nr++;
        rs = add_ck(rs, (long long)d, &bad);
      }
    }
    if (bad)
      atomicOr(flag, 1u);
    gak_cmany o = {ni, nr, is, rs};
    out[g] = o;
    if (first)
      first[g] = idx && a < b ? idx[a] : a;
  }
}

extern "C" int gak_cache_many_compact(gak_ccol x, const uint32_t *d_idx,
                                      const uint32_t *d_bounds, int64_t ngr,
                                      gak_cmany *d_out, uint32_t *d_first,
                                      uint32_t *d_flag, gak_stream s) {
  if (ngr < 0)
    return (int)cudaErrorInvalidValue;
  if (ngr == 0)
    return (int)cudaSuccess;
  k_many_compact<<<grid_for(ngr), CM, 0, (cudaStream_t)s>>>(
      x, d_idx, d_bounds, ngr, d_out, d_first, d_flag);
  return (int)cudaGetLastError();
}
