/*
** cache_distinct.cu — DISTINCT inside aggregates on a GPU entry of the
** column cache (kernels/gak.h, "DISTINCT inside aggregates"; issue 37):
** each group's set of INTEGER values as a bitmap.  The host side, which
** decides the domain and reads the counts, is
** engine/cache/cache_gpu_distinct.c; tests/fakegpu/fakegpu.c is the twin.
**
** Rules:
**   1. Exactness: two INTEGERs are one DISTINCT value exactly when their
**      int64s are equal, and a REAL that is an integer within int64 equals
**      that INTEGER (SQLite compares them by value: 1 = 1.0, -0.0 = 0).
**      A value's bit is v - lo; a value that sets no bit (a REAL not folded,
**      a value out of the range) is counted in *d_miss, never dropped
**      silently: the host declines.
**   2. Block-wide steps (Crystal): a block takes a tile of positions, each
**      thread classifies its values (NULL, INTEGER, integral REAL, other
**      REAL) from the column's bitmaps, then sets bits.  Where every
**      group's bitmap fits in GA_CD_SMEM_WORDS words, a block sets them in
**      shared memory and ORs its nonzero words into the global bitmap once
**      (few atomics on L2); otherwise it sets them in global memory, and a
**      bit already set (read first) costs no atomic: after the first rows
**      most values repeat.  Bits only go from 0 to 1, so a stale read
**      costs at most an atomic that changes nothing.
**   3. Counts and the domain's bounds are block reductions (cub::BlockReduce),
**      one atomic a block.
**   4. Every launch reports its own error (cudaGetLastError).
*/
#include <cub/block/block_reduce.cuh>
#include <stdint.h>

#include "gak.h"

#define CT 256
#define MAX_GRID 65535
#define GA_CD_SMEM_WORDS GAK_CDIST_SMEM_WORDS /* 48 KiB: a block's default */

static int grid_for(long long items) {
  long long g = (items + CT - 1) / CT;
  return g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : (int)g;
}

/* Rule 2: the blocks that share a shared-memory bitmap's flush: a few a
** multiprocessor. */
static int flush_grid(long long items) {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess ||
      sms < 1)
    sms = 132;
  int g = grid_for(items);
  return g < 4 * sms ? g : 4 * sms;
}

__device__ __forceinline__ bool bit64(const uint64_t *w, long long i) {
  return (w[i >> 6] >> (i & 63)) & 1;
}

/* Rule 1: the value at position j: 0 none (not selected, NULL), 1 an
** INTEGER, 2 a REAL that is an integer within int64, 3 another REAL; *v
** its integer (1 and 2). */
__device__ __forceinline__ int value_at(const gak_ccol &x, const uint32_t *idx,
                                        const uint32_t *sel, long long j,
                                        long long *v) {
  if (sel && !((sel[j >> 5] >> (j & 31)) & 1))
    return 0;
  long long r = idx ? (long long)idx[j] : j;
  if (!bit64(x.notnull, r))
    return 0;
  uint64_t w = x.vals[r];
  if (bit64(x.isint, r)) {
    *v = (long long)w;
    return 1;
  }
  double d = __longlong_as_double((long long)w);
  /* -2^63 <= d < 2^63 and no fraction (NaN and infinities fail) */
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
      d == trunc(d)) {
    *v = (long long)d;
    return 2;
  }
  return 3;
}

__global__ void k_domain_init(long long *out) {
  out[0] = 0;
  out[1] = 0;
  out[2] = INT64_MAX;
  out[3] = INT64_MIN;
}

/* gak_cdist_domain (rule 3). */
__global__ void __launch_bounds__(CT)
    k_domain(gak_ccol x, const uint32_t *idx, const uint32_t *sel, long long m,
             long long *out) {
  typedef cub::BlockReduce<long long, CT> R;
  __shared__ typename R::TempStorage tmp;
  long long other = 0, folded = 0, lo = INT64_MAX, hi = INT64_MIN, v = 0;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    int k = value_at(x, idx, sel, j, &v);
    other += k == 3;
    folded += k == 2;
    if (k == 1 || k == 2) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  }
  long long a = R(tmp).Sum(other);
  __syncthreads();
  long long b = R(tmp).Sum(folded);
  __syncthreads();
  long long c = R(tmp).Reduce(lo, cub::Min());
  __syncthreads();
  long long d = R(tmp).Reduce(hi, cub::Max());
  if (threadIdx.x == 0) {
    if (a)
      atomicAdd((unsigned long long *)&out[0], (unsigned long long)a);
    if (b)
      atomicAdd((unsigned long long *)&out[1], (unsigned long long)b);
    atomicMin(&out[2], c);
    atomicMax(&out[3], d);
  }
}

extern "C" int gak_cdist_domain(gak_ccol x, const uint32_t *d_idx,
                                const uint32_t *d_sel, int64_t m,
                                int64_t *d_out, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (m < 0 || !d_out)
    return (int)cudaErrorInvalidValue;
  k_domain_init<<<1, 1, 0, s>>>((long long *)d_out);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || m == 0)
    return (int)err;
  k_domain<<<grid_for(m), CT, 0, s>>>(x, d_idx, d_sel, m, (long long *)d_out);
  return (int)cudaGetLastError();
}

/* gak_cdist_bits, rule 2: a block's bitmap in shared memory (words of
** every group: ngroups * words <= GA_CD_SMEM_WORDS), flushed once. */
__global__ void __launch_bounds__(CT)
    k_bits_shared(gak_ccol x, const uint32_t *idx, const uint32_t *gid,
                  const uint32_t *sel, long long m, long long lo,
                  unsigned long long range, long long words, long long ngroups,
                  int fold, unsigned long long *bits, long long *miss) {
  typedef cub::BlockReduce<long long, CT> R;
  __shared__ typename R::TempStorage tmp;
  __shared__ unsigned long long sh[GA_CD_SMEM_WORDS];
  long long all = ngroups * words, lost = 0, v = 0;
  for (long long w = threadIdx.x; w < all; w += CT)
    sh[w] = 0;
  __syncthreads();
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    int k = value_at(x, idx, sel, j, &v);
    if (!k)
      continue;
    unsigned long long g = gid ? gid[j] : 0;
    unsigned long long d = (unsigned long long)v - (unsigned long long)lo;
    if (g >= (unsigned long long)ngroups)
      continue;
    if (k == 3 || (k == 2 && !fold) || d >= range) {
      lost++;
      continue;
    }
    atomicOr(&sh[g * words + (long long)(d >> 6)], 1ull << (d & 63));
  }
  __syncthreads();
  for (long long w = threadIdx.x; w < all; w += CT)
    if (sh[w])
      atomicOr(&bits[w], sh[w]);
  long long t = R(tmp).Sum(lost);
  if (threadIdx.x == 0 && t)
    atomicAdd((unsigned long long *)miss, (unsigned long long)t);
}

/* gak_cdist_bits, rule 2: in global memory, a bit already set read first. */
__global__ void __launch_bounds__(CT)
    k_bits_global(gak_ccol x, const uint32_t *idx, const uint32_t *gid,
                  const uint32_t *sel, long long m, long long lo,
                  unsigned long long range, long long words, long long ngroups,
                  int fold, unsigned long long *bits, long long *miss) {
  typedef cub::BlockReduce<long long, CT> R;
  __shared__ typename R::TempStorage tmp;
  long long lost = 0, v = 0;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    int k = value_at(x, idx, sel, j, &v);
    if (!k)
      continue;
    unsigned long long g = gid ? gid[j] : 0;
    unsigned long long d = (unsigned long long)v - (unsigned long long)lo;
    if (g >= (unsigned long long)ngroups)
      continue;
    if (k == 3 || (k == 2 && !fold) || d >= range) {
      lost++;
      continue;
    }
    unsigned long long *w = &bits[g * words + (long long)(d >> 6)];
    unsigned long long b = 1ull << (d & 63);
    if (!(*w & b))
      atomicOr(w, b);
  }
  long long t = R(tmp).Sum(lost);
  if (threadIdx.x == 0 && t)
    atomicAdd((unsigned long long *)miss, (unsigned long long)t);
}

extern "C" int gak_cdist_bits(gak_ccol x, const uint32_t *d_idx,
                              const uint32_t *d_gid, const uint32_t *d_sel,
                              int64_t m, int64_t lo, int64_t range,
                              int64_t ngroups, int flags, uint64_t *d_bits,
                              int64_t *d_miss, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (m < 0 || range < 0 || range > ((int64_t)1 << 32) || ngroups < 1 ||
      !d_bits || !d_miss)
    return (int)cudaErrorInvalidValue;
  long long words = (range + 63) / 64;
  cudaError_t err =
      cudaMemsetAsync(d_bits, 0, (size_t)(ngroups * words) * 8 + 8, s);
  if (err == cudaSuccess)
    err = cudaMemsetAsync(d_miss, 0, 8, s);
  if (err != cudaSuccess || m == 0)
    return (int)err;
  int fold = (flags & GAK_CDIST_FOLD) != 0;
  if (ngroups * words <= GA_CD_SMEM_WORDS)
    k_bits_shared<<<flush_grid(m), CT, 0, s>>>(
        x, d_idx, d_gid, d_sel, m, lo, (unsigned long long)range, words,
        ngroups, fold, (unsigned long long *)d_bits, (long long *)d_miss);
  else
    k_bits_global<<<grid_for(m), CT, 0, s>>>(
        x, d_idx, d_gid, d_sel, m, lo, (unsigned long long)range, words,
        ngroups, fold, (unsigned long long *)d_bits, (long long *)d_miss);
  return (int)cudaGetLastError();
}

/* gak_cdist_count: a block a group's row (rule 3). */
__global__ void __launch_bounds__(CT)
    k_count(const uint64_t *bits, long long words, long long ngroups,
            long long *counts) {
  typedef cub::BlockReduce<long long, CT> R;
  __shared__ typename R::TempStorage tmp;
  for (long long g = blockIdx.x; g < ngroups; g += gridDim.x) {
    long long n = 0;
    for (long long w = threadIdx.x; w < words; w += CT)
      n += __popcll(bits[g * words + w]);
    long long t = R(tmp).Sum(n);
    if (threadIdx.x == 0)
      counts[g] = t;
    __syncthreads(); /* tmp is the next row's */
  }
}

extern "C" int gak_cdist_count(const uint64_t *d_bits, int64_t range,
                               int64_t ngroups, int64_t *d_counts,
                               gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (range < 0 || range > ((int64_t)1 << 32) || ngroups < 1 || !d_counts)
    return (int)cudaErrorInvalidValue;
  long long words = (range + 63) / 64;
  int grid = ngroups < MAX_GRID ? (int)ngroups : MAX_GRID;
  k_count<<<grid, CT, 0, s>>>(d_bits, words, ngroups, (long long *)d_counts);
  return (int)cudaGetLastError();
}
