/*
** cache_star.cu — a star or snowflake join's probe on a GPU entry of the
** column cache (kernels/gak.h, "star joins from the GPU cache"; issue 38
** section 3.3).  The host side, which builds the lookups and answers the
** query over the joined rows, is engine/cache/cache_gpu_star.c;
** tests/fakegpu/fakegpu.c is the twin.
**
** Rules:
**   1. Written as Crystal's kernels are (Shanbhag, Madden, Yu, SIGMOD
**      2020): a block takes a tile of CT * CS_ITEMS fact rows, each thread
**      CS_ITEMS rows a warp's width apart (the block-wide load: every
**      column read coalesced), and runs the query's steps over them in
**      registers: for each dimension in turn a key load and a probe,
**      which clears the row's flag on a miss (later steps skip a cleared
**      row: no load, no probe), then the columns' gathers.  The steps are
**      the query's shape, read from the parameter (gak_cstar), not
**      templates: a query has its own dimensions and columns.
**   2. Exactness: a key is an int64 (gak.h: an INTEGER, a REAL's integral
**      value, or a TEXT code's id); the lookups are the host's own
**      (cache_star.c rule 2), with its hash, so a probe finds what the
**      host's finds.  Values are copied as words with their bits; nothing
**      is computed on them.
**   3. Bitmaps are written a warp's word at a time (__ballot_sync: 32
**      rows, one 32-bit half of a 64-bit word); tiles cover n rounded up
**      to 64, so the last word's bits past n are written as 0.
**   4. Counts (rows kept, non-NULL and INTEGER values, least and greatest
**      INTEGER) are a warp's shuffles, one atomic a warp.
**   5. Every launch reports its own error (cudaGetLastError).
*/
#include <stdint.h>

#include "gak.h"

#define CT 256
#define CS_ITEMS 4
#define MAX_GRID 65535

__device__ __forceinline__ bool bit64(const uint64_t *w, long long i) {
  return (w[i >> 6] >> (i & 63)) & 1;
}

/* cache_star.c's mix and hash_of (rule 2). */
__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* The fact row's key for dimension d: true with k. */
__device__ __forceinline__ bool key_at(const gak_cstar_dim &d, long long i,
                                       long long *k) {
  for (int c = 0; c < d.nkeys; c++) {
    const gak_ccol &col = d.key[c];
    if (!bit64(col.notnull, i))
      return false;
    uint64_t v = col.vals[i];
    if (d.map[c]) {
      if (v >= (uint64_t)d.nmap[c] || d.map[c][v] < 0)
        return false;
      k[c] = d.map[c][v];
    } else if (bit64(col.isint, i)) {
      k[c] = (long long)v;
    } else {
      double x = __longlong_as_double((long long)v);
      if (!(x >= -0x1p63 && x < 0x1p63) || (double)(long long)x != x)
        return false;
      k[c] = (long long)x;
    }
  }
  return true;
}

/* The slot's row for key k: the row, -1 (none) or -2 (drops the row). */
__device__ __forceinline__ int lookup(const gak_cstar_dim &d,
                                      const long long *k) {
  if (d.dense) {
    uint64_t o = (uint64_t)k[0] - (uint64_t)d.base;
    return o < (uint64_t)d.span ? d.slot[o] : -1;
  }
  uint64_t h = 0;
  for (int c = 0; c < d.nkeys; c++)
    h = mix(h ^ (uint64_t)k[c]) + (uint64_t)c;
  for (h &= d.hmask;; h = (h + 1) & d.hmask) {
    int r = d.slot[h];
    if (r == -1)
      return -1;
    const int64_t *at = d.hkey + h * (uint64_t)d.nkeys;
    bool eq = true;
    for (int c = 0; c < d.nkeys; c++)
      eq &= at[c] == k[c];
    if (eq)
      return r;
  }
}

__device__ __forceinline__ long long warp_sum(long long v) {
  for (int o = 16; o; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ long long warp_min(long long v) {
  for (int o = 16; o; o >>= 1) {
    long long x = __shfl_down_sync(0xffffffffu, v, o);
    v = x < v ? x : v;
  }
  return v;
}
__device__ __forceinline__ long long warp_max(long long v) {
  for (int o = 16; o; o >>= 1) {
    long long x = __shfl_down_sync(0xffffffffu, v, o);
    v = x > v ? x : v;
  }
  return v;
}

/* Rule 1: one tile of CT * CS_ITEMS rows a block, grid-stride. */
__global__ void k_star(gak_cstar p, long long n, long long n64, uint32_t *sel,
                       long long *stats) {
  const int lane = threadIdx.x & 31;
  long long kept = 0, nn[GAK_CSTAR_COLS], ni[GAK_CSTAR_COLS],
            lo[GAK_CSTAR_COLS], hi[GAK_CSTAR_COLS];
  for (int c = 0; c < p.ncols; c++) {
    nn[c] = ni[c] = 0;
    lo[c] = INT64_MAX;
    hi[c] = INT64_MIN;
  }
  const long long tile = (long long)CT * CS_ITEMS;
  for (long long t0 = (long long)blockIdx.x * tile; t0 < n64;
       t0 += (long long)gridDim.x * tile) {
    for (int it = 0; it < CS_ITEMS; it++) {
      long long i = t0 + (long long)it * CT + threadIdx.x;
      if (i - lane >= n64) /* the warp's word is past the bitmap */
        continue;
      bool in = i < n;
      int rows[GAK_CSTAR_DIMS];
      for (int d = 0; d < p.ndims; d++) {
        rows[d] = -1;
        if (!in)
          continue;
        long long k[GAK_CSTAR_KEYS];
        int r = key_at(p.dims[d], i, k) ? lookup(p.dims[d], k) : -1;
        if (r == -2 || (r < 0 && p.dims[d].miss_drops))
          in = false;
        rows[d] = r < 0 ? -1 : r;
      }
      unsigned m = __ballot_sync(0xffffffffu, in);
      if (lane == 0)
        sel[i >> 5] = m;
      kept += in;
      for (int c = 0; c < p.ncols; c++) {
        const gak_cstar_col &col = p.cols[c];
        int r = in ? rows[col.dim] : -1;
        uint8_t f = r >= 0 ? col.f[r] : 0;
        uint64_t v = (f & 2) ? col.v[r] : 0;
        if (i < n)
          col.vals[i] = v;
        unsigned mi = __ballot_sync(0xffffffffu, (f & 3) == 3);
        unsigned mn = __ballot_sync(0xffffffffu, (f & 2) != 0);
        if (lane == 0) {
          ((uint32_t *)col.isint)[i >> 5] = mi;
          ((uint32_t *)col.notnull)[i >> 5] = mn;
        }
        nn[c] += (f & 2) != 0;
        if ((f & 3) == 3) {
          ni[c]++;
          long long x = (long long)v;
          lo[c] = x < lo[c] ? x : lo[c];
          hi[c] = x > hi[c] ? x : hi[c];
        }
      }
    }
  }
  /* rule 4 */
  kept = warp_sum(kept);
  if (lane == 0 && kept)
    atomicAdd((unsigned long long *)&stats[0], (unsigned long long)kept);
  for (int c = 0; c < p.ncols; c++) {
    long long a = warp_sum(nn[c]), b = warp_sum(ni[c]);
    long long l = warp_min(lo[c]), h = warp_max(hi[c]);
    if (lane == 0 && a) {
      atomicAdd((unsigned long long *)&stats[1 + 4 * c], (unsigned long long)a);
      if (b) {
        atomicAdd((unsigned long long *)&stats[2 + 4 * c],
                  (unsigned long long)b);
        atomicMin(&stats[3 + 4 * c], l);
        atomicMax(&stats[4 + 4 * c], h);
      }
    }
  }
}

__global__ void k_and(uint32_t *sel, const uint32_t *and32, long long words) {
  for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       w < words; w += (long long)gridDim.x * blockDim.x)
    sel[w] &= and32[w];
}

extern "C" int gak_cstar_probe(const gak_cstar *p, int64_t n, uint64_t *d_sel,
                               int64_t *d_stats, gak_stream s) {
  if (!p || n < 0 || p->ndims < 0 || p->ndims > GAK_CSTAR_DIMS ||
      p->ncols < 0 || p->ncols > GAK_CSTAR_COLS)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return 0;
  long long n64 = (n + 63) / 64 * 64, tile = (long long)CT * CS_ITEMS;
  long long g = (n64 + tile - 1) / tile;
  k_star<<<(int)(g > MAX_GRID ? MAX_GRID : g), CT, 0, (cudaStream_t)s>>>(
      *p, n, n64, (uint32_t *)d_sel, (long long *)d_stats);
  return (int)cudaGetLastError(); /* rule 5 */
}

extern "C" int gak_cstar_and(uint32_t *d_sel, const uint64_t *d_and, int64_t n,
                             gak_stream s) {
  if (n < 0)
    return (int)cudaErrorInvalidValue;
  long long words = (n + 31) / 32;
  if (words == 0)
    return 0;
  long long g = (words + CT - 1) / CT;
  k_and<<<(int)(g > MAX_GRID ? MAX_GRID : g), CT, 0, (cudaStream_t)s>>>(
      d_sel, (const uint32_t *)d_and, words);
  return (int)cudaGetLastError();
}
