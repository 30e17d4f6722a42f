/*
** cache_stat.cu — variance and medians on a GPU entry (kernels/gak.h,
** issue 39; engine/cache/cache_gpu_stat.c drives them): the exact Σx² of
** each output group, and each group's values, gathered and sorted, and
** the few of them a median reads, picked.
**
** Rules:
**   1. One block a slice, as gak_cache_reduce (cache.cu): a slice belongs
**      to one output group (d_slout), so a block adds into one group's
**      digits or one group's run of values.
**   2. Σx² is exact (var.cu's pieces, kernels/var.cuh): a REAL whose
**      square's error-free product holds (2^-480 <= |x| < 2^500) enters
**      a thread's expansion as hi = x*x, lo = fma(x, x, -hi); the
**      expansion's residuals, every other REAL and every INTEGER (a 128-bit
**      square) go exactly into the block's digits in shared memory.  Warps
**      merge their expansions by shuffles with the same exact adds; lane 0
**      spills the components.  Thread 0 then carries the block's digits
**      into [0, 2^32) (their value is a sum of squares, so never negative),
**      and the block adds its non-zero digits to its group's with 64-bit
**      atomics: at most 2^31 blocks a group cannot overflow a digit.  The
**      digits are integers: the result does not depend on the order.
**   3. No contraction: __dadd_rn/__dsub_rn/__dmul_rn, and the one fused
**      operation is the explicit __fma_rn of the exact product.
**   4. The values of a median: counted a block at a time (one atomic a
**      block for its group), then written by chunks of the block's
**      threads, each chunk's place taken with one atomic on its group's
**      cursor; an INTEGER becomes a double by __ll2double_rn (C's cast).
**      Their order within a run is the interleaving's, so the sort that
**      follows (CUB's radix sort of order-preserving keys, -0.0 before
**      0.0) makes it canonical: equal runs whatever the interleaving.
**   5. Every launch reports its own error (cudaGetLastError); faults while
**      running surface at the engine's sync.
**   6. A median's selection (gak_cache_pct_pick): after the sort, one
**      thread an order statistic copies the value at the place the host
**      computed (engine/reduce/pct.c's ranks of each group's count), so
**      only those values cross to the host, not the runs.
*/
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <stdint.h>

#include "gak.h"
#include "var.cuh"

#define ST 256 /* threads a block */
__device__ __forceinline__ bool st_bit64(const uint64_t *w, long long i) {
  return (w[i >> 6] >> (i & 63)) & 1;
}

/* Position p of slice s: its row, or -1 when the slice does not keep it. */
__device__ __forceinline__ long long st_row(const uint32_t *idx,
                                            const uint32_t *gid,
                                            const uint32_t *sel,
                                            const gak_cslice &s, unsigned p) {
  unsigned q = s.start + p;
  if (gid && (gid[q] != s.group || (sel && !((sel[q >> 5] >> (q & 31)) & 1))))
    return -1;
  return idx ? (long long)idx[q] : (long long)q;
}

/* Finite c (a part of Σx²) into the digits: its residual when the
** expansion cannot hold it (rule 2). */
__device__ __forceinline__ void st_part(double (&s)[GAK_VAR_LEVELS],
                                        unsigned long long *sq, double c) {
  double r = gak_var_absorb(s, c);
  if (r != 0.0)
    gak_var_sqacc(sq, r);
}

__global__ void __launch_bounds__(ST)
    k_cache_sq(const gak_ccol x, const uint32_t *idx, const uint32_t *gid,
               const uint32_t *sel, const gak_cslice *sl, const uint32_t *slout,
               unsigned long long *out) {
  __shared__ unsigned long long sq[GA_XSQ_DIGITS];
  for (int d = threadIdx.x; d < GA_XSQ_DIGITS; d += ST)
    sq[d] = 0;
  __syncthreads();
  const gak_cslice s = sl[blockIdx.x];
  double e[GAK_VAR_LEVELS];
#pragma unroll
  for (int l = 0; l < GAK_VAR_LEVELS; l++)
    e[l] = 0.0;
  for (unsigned p = threadIdx.x; p < s.len; p += ST) {
    long long i = st_row(idx, gid, sel, s, p);
    if (i < 0 || !st_bit64(x.notnull, i))
      continue;
    uint64_t w = x.vals[i];
    if (st_bit64(x.isint, i)) { /* the 128-bit square at 2^0 */
      long long v = (long long)w;
      uint64_t u = v < 0 ? 0ull - (uint64_t)v : (uint64_t)v;
      gak_var_add128(sq, u * u, __umul64hi(u, u), GA_XSQ_BIAS);
      continue;
    }
    int ex = (int)((w >> 52) & 0x7ff);
    if (ex == 0x7ff) /* Inf, NaN: the sum's counts decide */
      continue;
    double v = __longlong_as_double((long long)w);
    if (ex >= 1023 - 480 && ex < 1023 + 500) { /* the exact product holds */
      double hi = __dmul_rn(v, v);
      double lo = __fma_rn(v, v, -hi);
      st_part(e, sq, hi);
      st_part(e, sq, lo);
    } else {
      gak_var_sq_exact(sq, v);
    }
  }
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    double o[GAK_VAR_LEVELS];
#pragma unroll
    for (int l = 0; l < GAK_VAR_LEVELS; l++)
      o[l] = __shfl_down_sync(0xffffffffu, e[l], off);
    if (lane < off) {
#pragma unroll
      for (int l = 0; l < GAK_VAR_LEVELS; l++)
        st_part(e, sq, o[l]);
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int l = 0; l < GAK_VAR_LEVELS; l++)
      gak_var_sqacc(sq, e[l]);
  }
  __syncthreads();
  if (threadIdx.x == 0) { /* rule 2: carried, the top digit signed */
    long long carry = 0;
    for (int d = 0; d < GA_XSQ_DIGITS - 1; d++) {
      long long v = (long long)sq[d] + carry;
      carry = v >> 32;
      sq[d] = (unsigned long long)(v & 0xffffffffll);
    }
    sq[GA_XSQ_DIGITS - 1] += (unsigned long long)carry;
  }
  __syncthreads();
  unsigned long long *o = out + (size_t)slout[blockIdx.x] * GA_XSQ_DIGITS;
  for (int d = threadIdx.x; d < GA_XSQ_DIGITS; d += ST)
    if (sq[d])
      atomicAdd(o + d, sq[d]);
}

extern "C" int gak_cache_sq(gak_ccol x, const uint32_t *d_idx,
                            const uint32_t *d_gid, const uint32_t *d_sel,
                            const gak_cslice *d_slices, const uint32_t *d_slout,
                            int64_t nslices, int64_t ngr, int64_t *d_sq,
                            gak_stream s) {
  cudaStream_t st = (cudaStream_t)s;
  if (nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return (int)cudaErrorInvalidValue;
  cudaError_t e = cudaMemsetAsync(
      d_sq, 0, sizeof(int64_t) * GA_XSQ_DIGITS * (size_t)ngr, st);
  if (e != cudaSuccess || nslices == 0)
    return (int)e;
  k_cache_sq<<<(unsigned)nslices, ST, 0, st>>>(
      x, d_idx, d_gid, d_sel, d_slices, d_slout, (unsigned long long *)d_sq);
  return (int)cudaGetLastError();
}

/* ------------------------------------------------------------ medians */

/* Rule 4's count: the block's values and infinities, one atomic each. */
__global__ void __launch_bounds__(ST)
    k_pct_count(const gak_ccol x, const uint32_t *idx, const uint32_t *gid,
                const uint32_t *sel, const gak_cslice *sl,
                const uint32_t *slout, long long ngr,
                unsigned long long *counts) {
  __shared__ unsigned long long c[2];
  if (threadIdx.x < 2)
    c[threadIdx.x] = 0;
  __syncthreads();
  const gak_cslice s = sl[blockIdx.x];
  unsigned long long k = 0, inf = 0;
  for (unsigned p = threadIdx.x; p < s.len; p += ST) {
    long long i = st_row(idx, gid, sel, s, p);
    if (i < 0 || !st_bit64(x.notnull, i))
      continue;
    k++;
    uint64_t w = x.vals[i];
    inf += !st_bit64(x.isint, i) && ((w >> 52) & 0x7ff) == 0x7ff;
  }
  if (k)
    atomicAdd(&c[0], k);
  if (inf)
    atomicAdd(&c[1], inf);
  __syncthreads();
  if (threadIdx.x == 0 && c[0])
    atomicAdd(counts + slout[blockIdx.x], c[0]);
  if (threadIdx.x == 0 && c[1])
    atomicAdd(counts + ngr, c[1]);
}

__global__ void __launch_bounds__(ST)
    k_pct_gather(const gak_ccol x, const uint32_t *idx, const uint32_t *gid,
                 const uint32_t *sel, const gak_cslice *sl,
                 const uint32_t *slout, const long long *offs,
                 unsigned long long *cursor, double *out) {
  __shared__ unsigned warp_n[ST / 32];
  __shared__ unsigned long long base;
  const gak_cslice s = sl[blockIdx.x];
  const unsigned g = slout[blockIdx.x];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (unsigned p0 = 0; p0 < s.len; p0 += ST) { /* a chunk of ST positions */
    unsigned p = p0 + threadIdx.x;
    long long i = p < s.len ? st_row(idx, gid, sel, s, p) : -1;
    bool keep = i >= 0 && st_bit64(x.notnull, i);
    unsigned b = __ballot_sync(0xffffffffu, keep);
    if (lane == 0)
      warp_n[warp] = __popc(b);
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long t = 0;
      for (int w = 0; w < ST / 32; w++) {
        unsigned n = warp_n[w];
        warp_n[w] = (unsigned)t;
        t += n;
      }
      base = t ? atomicAdd(cursor + g, t) : 0;
    }
    __syncthreads();
    if (keep) {
      uint64_t w = x.vals[i];
      double v = st_bit64(x.isint, i) ? __ll2double_rn((long long)w)
                                      : __longlong_as_double((long long)w);
      unsigned before = __popc(b & ((1u << lane) - 1u));
      out[offs[g] + (long long)base + warp_n[warp] + before] = v;
    }
    __syncthreads();
  }
}

extern "C" int gak_cache_pct_count(gak_ccol x, const uint32_t *d_idx,
                                   const uint32_t *d_gid, const uint32_t *d_sel,
                                   const gak_cslice *d_slices,
                                   const uint32_t *d_slout, int64_t nslices,
                                   int64_t ngr, int64_t *d_counts,
                                   gak_stream s) {
  cudaStream_t st = (cudaStream_t)s;
  if (nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return (int)cudaErrorInvalidValue;
  cudaError_t e =
      cudaMemsetAsync(d_counts, 0, sizeof(int64_t) * (size_t)(ngr + 1), st);
  if (e != cudaSuccess || nslices == 0)
    return (int)e;
  k_pct_count<<<(unsigned)nslices, ST, 0, st>>>(
      x, d_idx, d_gid, d_sel, d_slices, d_slout, (long long)ngr,
      (unsigned long long *)d_counts);
  return (int)cudaGetLastError();
}

extern "C" int
gak_cache_pct_gather(gak_ccol x, const uint32_t *d_idx, const uint32_t *d_gid,
                     const uint32_t *d_sel, const gak_cslice *d_slices,
                     const uint32_t *d_slout, int64_t nslices, int64_t ngr,
                     const int64_t *d_offs, int64_t *d_cursor, double *d_out,
                     gak_stream s) {
  cudaStream_t st = (cudaStream_t)s;
  if (nslices < 0 || nslices > INT32_MAX || ngr < 0)
    return (int)cudaErrorInvalidValue;
  cudaError_t e = cudaMemsetAsync(
      d_cursor, 0, sizeof(int64_t) * (size_t)(ngr ? ngr : 1), st);
  if (e != cudaSuccess || nslices == 0)
    return (int)e;
  k_pct_gather<<<(unsigned)nslices, ST, 0, st>>>(
      x, d_idx, d_gid, d_sel, d_slices, d_slout, (const long long *)d_offs,
      (unsigned long long *)d_cursor, d_out);
  return (int)cudaGetLastError();
}

/* Rule 6: the order statistics the medians read, from the sorted runs. */
__global__ void k_pct_pick(const double *vals, long long nvals,
                           const long long *pos, long long npos, double *out) {
  for (long long j = (long long)blockIdx.x * ST + threadIdx.x; j < npos;
       j += (long long)gridDim.x * ST) {
    long long p = pos[j]; /* the host's place: never outside the values */
    out[j] = p >= 0 && p < nvals ? vals[p]
                                 : __longlong_as_double(0x7ff8000000000000ll);
  }
}

/* A double's order-preserving key (rule 4) and back. */
__global__ void k_pct_key(const uint64_t *in, uint64_t *out, long long n,
                          int back) {
  for (long long i = (long long)blockIdx.x * ST + threadIdx.x; i < n;
       i += (long long)gridDim.x * ST) {
    uint64_t w = in[i];
    if (!back)
      out[i] = w >> 63 ? ~w : w | 0x8000000000000000ull;
    else
      out[i] = w >> 63 ? w & 0x7fffffffffffffffull : ~w;
  }
}

static int st_grid(long long n) {
  long long g = (n + ST - 1) / ST;
  return g < 1 ? 1 : g > 65535 ? 65535 : (int)g;
}

extern "C" size_t gak_cache_pct_sort_scratch(int64_t total, int64_t ngr) {
  size_t a = 0, b = 0;
  int n = total > INT32_MAX ? INT32_MAX : (int)total;
  cub::DeviceRadixSort::SortKeys((void *)NULL, a, (const uint64_t *)NULL,
                                 (uint64_t *)NULL, n);
  if (ngr > GAK_PCT_SORT_EACH)
    cub::DeviceSegmentedRadixSort::SortKeys(
        (void *)NULL, b, (const uint64_t *)NULL, (uint64_t *)NULL, n, (int)ngr,
        (const int64_t *)NULL, (const int64_t *)NULL);
  return (a > b ? a : b) + 256;
}

extern "C" int gak_cache_pct_sort(double *d_vals, double *d_tmp,
                                  const int64_t *d_offs, const int64_t *h_offs,
                                  int64_t ngr, int64_t total, void *d_scratch,
                                  gak_stream s) {
  cudaStream_t st = (cudaStream_t)s;
  if (total < 0 || total > INT32_MAX || ngr < 0 || ngr > INT32_MAX)
    return (int)cudaErrorInvalidValue;
  if (total == 0)
    return 0;
  uint64_t *v = (uint64_t *)d_vals, *t = (uint64_t *)d_tmp;
  size_t bytes = gak_cache_pct_sort_scratch(total, ngr);
  k_pct_key<<<st_grid(total), ST, 0, st>>>(v, t, total, 0);
  cudaError_t e = cudaGetLastError();
  if (ngr > GAK_PCT_SORT_EACH) {
    if (e == cudaSuccess)
      e = cub::DeviceSegmentedRadixSort::SortKeys(d_scratch, bytes, t, v,
                                                  (int)total, (int)ngr, d_offs,
                                                  d_offs + 1, 0, 64, st);
  } else {
    const int64_t *h = h_offs;
    for (int64_t g = 0; g < ngr && e == cudaSuccess; g++) {
      int64_t a = h[g], n = h[g + 1] - h[g];
      if (a < 0 || n < 0 || a + n > total)
        return (int)cudaErrorInvalidValue;
      if (n > 1) {
        size_t b = bytes;
        e = cub::DeviceRadixSort::SortKeys(d_scratch, b, t + a, v + a, (int)n,
                                           0, 64, st);
      } else if (n == 1) {
        e = cudaMemcpyAsync(v + a, t + a, 8, cudaMemcpyDeviceToDevice, st);
      }
    }
  }
  if (e != cudaSuccess)
    return (int)e;
  k_pct_key<<<st_grid(total), ST, 0, st>>>(v, v, total, 1);
  return (int)cudaGetLastError();
}

extern "C" int gak_cache_pct_pick(const double *d_vals, int64_t nvals,
                                  const int64_t *d_pos, int64_t npos,
                                  double *d_out, gak_stream s) {
  cudaStream_t st = (cudaStream_t)s;
  if (npos < 0)
    return (int)cudaErrorInvalidValue;
  if (npos == 0)
    return 0;
  k_pct_pick<<<st_grid(npos), ST, 0, st>>>(d_vals, (long long)nvals,
                                           (const long long *)d_pos,
                                           (long long)npos, d_out);
  return (int)cudaGetLastError();
}
