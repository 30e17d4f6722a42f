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
**      group's bitmap fits in GAK_CDIST_SMEM_WORDS words (and the device
**      lends a block that much), a block sets them in dynamic shared memory and
*ORs its nonzero words into the global bitmap once
**      (few atomics on L2); otherwise it sets them in global memory, and a
**      bit already set (read first) costs no atomic: after the first rows
**      most values repeat.  Bits only go from 0 to 1, so a stale read
**      costs at most an atomic that changes nothing.
**   3. Counts and the domain's bounds are block reductions (cub::BlockReduce),
**      one atomic a block.
**   4. Every launch reports its own error (cudaGetLastError).
**   5. Sorted pairs (gak_cdist_sort), for values no bitmap takes: a key a
**      position, (group << 1 | class, the integer or the REAL's bits; a
**      position with no value sorts last), sorted with the positions by
**      one stable CUB radix sort over the bits the keys use (a decomposer
**      of the two words); the heads of equal keys are flagged and scanned
**      (cub::DeviceScan) into their slots, where each writes its group and
**      its first position's value, INTEGER or REAL as stored; a group's
**      count is the slots between its edges (two atomics a group).
*/
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <stdint.h>

#include "cx_ops.h"
#include "gak.h"

#define CT 256
#define MAX_GRID 65535

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

struct min_op {
  __device__ __forceinline__ long long operator()(long long a,
                                                  long long b) const {
    return b < a ? b : a;
  }
};
struct max_op {
  __device__ __forceinline__ long long operator()(long long a,
                                                  long long b) const {
    return b > a ? b : a;
  }
};

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
  long long c = R(tmp).Reduce(lo, min_op());
  __syncthreads();
  long long d = R(tmp).Reduce(hi, max_op());
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

/* gak_cdist_bits, rule 2: position j's bit, the same for both kernels
** below: 1 with its word among every group's words (*at) and its bit
** (*b); 0 for none (no value, a group out of range); -1 for a value the
** bitmaps miss (a REAL with a fraction, an integral REAL unless fold, out
** of the range), which the caller counts as lost. */
__device__ __forceinline__ int
bit_of(const gak_ccol &x, const uint32_t *idx, const uint32_t *gid,
       const uint32_t *sel, long long j, long long lo, unsigned long long range,
       long long words, long long ngroups, int fold, unsigned long long *at,
       unsigned long long *b) {
  long long v = 0;
  int k = value_at(x, idx, sel, j, &v);
  if (!k)
    return 0;
  unsigned long long g = gid ? gid[j] : 0;
  unsigned long long d = (unsigned long long)v - (unsigned long long)lo;
  if (g >= (unsigned long long)ngroups)
    return 0;
  if (k == 3 || (k == 2 && !fold) || d >= range)
    return -1;
  *at = g * words + (long long)(d >> 6);
  *b = 1ull << (d & 63);
  return 1;
}

/* gak_cdist_bits, rule 2: a block's bitmap in shared memory (words of
** every group: ngroups * words <= GAK_CDIST_SMEM_WORDS), flushed once. */
__global__ void __launch_bounds__(CT)
    k_bits_shared(gak_ccol x, const uint32_t *idx, const uint32_t *gid,
                  const uint32_t *sel, long long m, long long lo,
                  unsigned long long range, long long words, long long ngroups,
                  int fold, unsigned long long *bits, long long *miss) {
  typedef cub::BlockReduce<long long, CT> R;
  __shared__ typename R::TempStorage tmp;
  extern __shared__ unsigned long long sh[];
  long long all = ngroups * words, lost = 0;
  for (long long w = threadIdx.x; w < all; w += CT)
    sh[w] = 0;
  __syncthreads();
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    unsigned long long at = 0, b = 0;
    int r =
        bit_of(x, idx, gid, sel, j, lo, range, words, ngroups, fold, &at, &b);
    if (r < 0)
      lost++;
    else if (r)
      atomicOr(&sh[at], b);
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
  long long lost = 0;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    unsigned long long at = 0, b = 0;
    int r =
        bit_of(x, idx, gid, sel, j, lo, range, words, ngroups, fold, &at, &b);
    if (r < 0)
      lost++;
    else if (r && !(bits[at] & b))
      atomicOr(&bits[at], b);
  }
  long long t = R(tmp).Sum(lost);
  if (threadIdx.x == 0 && t)
    atomicAdd((unsigned long long *)miss, (unsigned long long)t);
}

/* Rule 2: may k_bits_shared take smem bytes of dynamic shared memory?
** Past the default 48 KiB a kernel must ask for it (once a device). */
static bool smem_ok(size_t smem) {
  int dev = 0, optin = 0;
  if (smem <= 48 * 1024)
    return true;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             dev) != cudaSuccess ||
      (size_t)optin < smem + 1024) {
    cudaGetLastError();
    return false;
  }
  if (cudaFuncSetAttribute(k_bits_shared,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           optin - 1024) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
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
  size_t smem = (size_t)(ngroups * words) * 8;
  if (ngroups * words <= GAK_CDIST_SMEM_WORDS && smem_ok(smem))
    k_bits_shared<<<flush_grid(m), CT, smem, s>>>(
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

/* ---- gak_cdist_sort (rule 5) ---- */

/* A pair's key: hi = group << 1 | class (0: an integer, 1: another REAL),
** or SORT_NONE (a position with no value: sorts last); v the integer
** (as unsigned) or the REAL's bits. */
#define SORT_NONE 0xffffffffu
struct pair_key {
  uint32_t hi, pad;
  uint64_t v;
};
struct pair_dec {
  __host__ __device__ ::cuda::std::tuple<uint32_t &, uint64_t &>
  operator()(pair_key &k) const {
    return {k.hi, k.v};
  }
};

static size_t al256(size_t n) { return (n + 255) & ~(size_t)255; }

static size_t cub_sort_bytes(long long m) {
  size_t b = 0;
  cub::DeviceRadixSort::SortPairs(NULL, b, (const pair_key *)NULL,
                                  (pair_key *)NULL, (const uint32_t *)NULL,
                                  (uint32_t *)NULL, (int)m, pair_dec(), 0, 96);
  return b;
}

static size_t cub_scan_bytes(long long m) {
  size_t b = 0;
  cub::DeviceScan::ExclusiveSum(NULL, b, (const uint32_t *)NULL,
                                (uint32_t *)NULL, (int)m);
  return b;
}

extern "C" size_t gak_cdist_sort_scratch(int64_t m) {
  size_t a = cub_sort_bytes(m), b = cub_scan_bytes(m + 1);
  return 2 * al256(sizeof(pair_key) * (size_t)m) + 2 * al256(4 * (size_t)m) +
         2 * al256(4 * (size_t)(m + 1)) + al256(a > b ? a : b);
}

__global__ void __launch_bounds__(CT)
    k_pairs(gak_ccol x, const uint32_t *idx, const uint32_t *gid,
            const uint32_t *sel, long long m, long long ngroups, pair_key *keys,
            uint32_t *pos) {
  long long v = 0;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    int k = value_at(x, idx, sel, j, &v);
    unsigned long long g = gid ? gid[j] : 0;
    pair_key p;
    p.pad = 0;
    if (!k || g >= (unsigned long long)ngroups) {
      p.hi = SORT_NONE;
      p.v = 0;
    } else if (k == 3) {
      p.hi = (uint32_t)(g << 1 | 1);
      p.v = x.vals[idx ? (long long)idx[j] : j];
    } else {
      p.hi = (uint32_t)(g << 1);
      p.v = (uint64_t)v;
    }
    keys[j] = p;
    pos[j] = (uint32_t)j;
  }
}

/* heads[j] = 1 where sorted pair j is the first of its (group, value). */
__global__ void __launch_bounds__(CT)
    k_heads(const pair_key *keys, long long m, uint32_t *heads) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j <= m;
       j += (long long)gridDim.x * CT) {
    uint32_t h = 0;
    if (j < m && keys[j].hi != SORT_NONE)
      h = j == 0 || keys[j].hi != keys[j - 1].hi || keys[j].v != keys[j - 1].v;
    heads[j] = h; /* heads[m] = 0: the scan's last is the total */
  }
}

/* The representatives into rgid and rval at their scan slots; a group's
** count is the slots between its first pair and past its last, added at
** its two edges (two atomics a group, none a pair). */
__global__ void __launch_bounds__(CT)
    k_emit(gak_ccol x, const uint32_t *idx, const pair_key *keys,
           const uint32_t *pos, const uint32_t *heads, const uint32_t *at,
           long long m, uint32_t *rgid, gak_cval *rval,
           unsigned long long *counts, long long *n) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    if (j == m - 1)
      *n = (long long)at[m]; /* heads[m] is 0 */
    uint32_t hi = keys[j].hi;
    if (hi == SORT_NONE)
      continue;
    uint32_t g = hi >> 1;
    if (j == 0 || keys[j - 1].hi >> 1 != g)
      atomicAdd(&counts[g], 0ull - (unsigned long long)at[j]);
    if (j == m - 1 || keys[j + 1].hi == SORT_NONE || keys[j + 1].hi >> 1 != g)
      atomicAdd(&counts[g], (unsigned long long)(at[j] + heads[j]));
    if (!heads[j])
      continue;
    long long r = idx ? (long long)idx[pos[j]] : (long long)pos[j];
    gak_cval c;
    c.type = bit64(x.isint, r) ? GA_CX_TINT : GA_CX_TREAL;
    c.pad = 0;
    c.bits = (long long)x.vals[r];
    rgid[at[j]] = g;
    rval[at[j]] = c;
  }
}

extern "C" int gak_cdist_sort(gak_ccol x, const uint32_t *d_idx,
                              const uint32_t *d_gid, const uint32_t *d_sel,
                              int64_t m, int64_t ngroups, uint32_t *d_rgid,
                              gak_cval *d_rval, int64_t *d_n, int64_t *d_counts,
                              void *d_scratch, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (m < 0 || m >= INT32_MAX || ngroups < 1 || ngroups > (1 << 30) || !d_n ||
      !d_counts || !d_scratch)
    return (int)cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(d_counts, 0, (size_t)ngroups * 8, s);
  if (err == cudaSuccess)
    err = cudaMemsetAsync(d_n, 0, 8, s);
  if (err != cudaSuccess || m == 0)
    return (int)err;
  char *p = (char *)d_scratch;
  pair_key *k0 = (pair_key *)p, *k1;
  p += al256(sizeof(pair_key) * (size_t)m);
  k1 = (pair_key *)p;
  p += al256(sizeof(pair_key) * (size_t)m);
  uint32_t *p0 = (uint32_t *)p;
  p += al256(4 * (size_t)m);
  uint32_t *p1 = (uint32_t *)p;
  p += al256(4 * (size_t)m);
  uint32_t *heads = (uint32_t *)p;
  p += al256(4 * (size_t)(m + 1));
  uint32_t *at = (uint32_t *)p;
  p += al256(4 * (size_t)(m + 1));
  void *tmp = p;
  size_t a = cub_sort_bytes(m), b = cub_scan_bytes(m + 1);
  size_t tb = a > b ? a : b;
  int gbits = 1;
  while (gbits < 31 && ((long long)1 << gbits) < ngroups + 1)
    gbits++;
  k_pairs<<<grid_for(m), CT, 0, s>>>(x, d_idx, d_gid, d_sel, m, ngroups, k0,
                                     p0);
  err = cudaGetLastError();
  /* the key's bits: the value's 64, the class and the group's gbits
  ** (ngroups < 2^gbits, so SORT_NONE's low bits, all ones, stay above
  ** every group's); a stable sort: positions ascend within a pair */
  if (err == cudaSuccess)
    err = cub::DeviceRadixSort::SortPairs(tmp, tb, k0, k1, p0, p1, (int)m,
                                          pair_dec(), 0, 64 + 1 + gbits, s);
  if (err == cudaSuccess) {
    k_heads<<<grid_for(m + 1), CT, 0, s>>>(k1, m, heads);
    err = cudaGetLastError();
  }
  tb = a > b ? a : b;
  if (err == cudaSuccess)
    err = cub::DeviceScan::ExclusiveSum(tmp, tb, heads, at, (int)(m + 1), s);
  if (err == cudaSuccess) {
    k_emit<<<grid_for(m), CT, 0, s>>>(x, d_idx, k1, p1, heads, at, m, d_rgid,
                                      d_rval, (unsigned long long *)d_counts,
                                      (long long *)d_n);
    err = cudaGetLastError();
  }
  return (int)err;
}
