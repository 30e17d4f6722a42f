/*
** cache.cu — the column cache's device functions (kernels/gak.h, "the
** column cache"): filter, compaction, group dictionary, group ids, stable
** sort by group (CUB), group bounds, exact per-slice states, per-group
** merge.
**
** Rules:
**   1. Simple and checkable first: one thread per row (filter, ids,
**      bounds), one thread per 32 rows (compaction), one block per slice
**      (reduce) and per group (merge).  The fast whole-column shape is not
**      here: the engine runs gak_sum / gak_best on the cached column.
**   2. Exact: numbers compare exactly across INTEGER and REAL (gak_num_cmp, the
**      same rules as engine/reduce/xacc.c's ga_num_cmp); a REAL adds its
*mantissa
**      into ga_partial.h's digits with integer atomics (as reduce.cu's
**      gak_sacc_add); integers add their 32-bit halves.  A slice's digits
**      are carried into [0, 2^32) at its end (the top one signed), so the
**      merge's plain sums of at most 2^31 slices cannot overflow; the host
**      normalises the merged partial.
**   3. First occurrence: max/min keep (value, row) pairs and prefer the
**      smaller row among equal values, at every level, so the result is
**      the first row in rowid order whatever the thread interleaving.
**   4. Row numbers fit in uint32 (GA_CACHE_MAX_ROWS); counts in 64 bits.
**   5. Every launch reports its own error (cudaGetLastError); faults while
**      running surface at the engine's sync.
*/
#include <cub/device/device_radix_sort.cuh>
#include <limits.h>
#include <stdint.h>

#include "gak.h"
#include "reduce.cuh"

#define CT 256      /* threads of most kernels */
#define CHUNK 8192  /* rows per compaction block: CT threads x 32 rows */
#define SCAN_T 1024 /* threads of the one-block scan */
#define MAX_GRID 65535

static size_t al256(size_t n) { return (n + 255) & ~(size_t)255; }

static int grid_for(long long items, int per_block) {
  long long g = (items + per_block - 1) / per_block;
  if (g < 1)
    g = 1;
  return g > MAX_GRID ? MAX_GRID : (int)g;
}

/* ------------------------------------------------------------ numbers */

__device__ __forceinline__ bool bit64(const uint64_t *w, long long i) {
  return (w[i >> 6] >> (i & 63)) & 1;
}

/* ------------------------------------------------------------- filter */

__device__ bool term_pass(const gak_cfilter &f, const gak_cterm &t,
                          long long i) {
  const gak_ccol &c = f.cols[t.col];
  bool nn = bit64(c.notnull, i);
  if (t.op == GAK_CMP_ISNULL)
    return !nn;
  if (t.op == GAK_CMP_NOTNULL)
    return nn;
  if (!nn)
    return false;
  int kind = bit64(c.isint, i) ? GA_KIND_INT : GA_KIND_REAL;
  long long v = (long long)c.vals[i];
  if (t.op == GAK_CMP_IN) {
    for (int k = 0; k < t.nlit; k++)
      if (gak_num_cmp(kind, v, f.lits[t.lit + k].kind,
                      f.lits[t.lit + k].bits) == 0)
        return true;
    return false;
  }
  int r = gak_num_cmp(kind, v, f.lits[t.lit].kind, f.lits[t.lit].bits);
  switch (t.op) {
  case GAK_CMP_EQ:
    return r == 0;
  case GAK_CMP_NE:
    return r != 0;
  case GAK_CMP_LT:
    return r < 0;
  case GAK_CMP_LE:
    return r <= 0;
  case GAK_CMP_GT:
    return r > 0;
  case GAK_CMP_GE:
    return r >= 0;
  }
  return false;
}

/* One thread per row; a warp's ballot is one 32-bit word of the result.
** The loop bound is the same for a whole block (blockDim is a multiple of
** 32), so every ballot has all 32 lanes. */
__global__ void __launch_bounds__(CT)
    k_filter(const gak_cfilter f, long long n, uint32_t *sel) {
  long long nw = (n + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long i = base + threadIdx.x;
    bool pass = i < n;
    for (int t = 0; pass && t < f.nterms; t++)
      pass = term_pass(f, f.terms[t], i);
    unsigned w = __ballot_sync(0xffffffffu, pass);
    if ((threadIdx.x & 31) == 0 && (i >> 5) < nw)
      sel[i >> 5] = w;
  }
}

extern "C" int gak_cache_filter(const gak_cfilter *f, int64_t n,
                                uint32_t *d_sel, gak_stream s) {
  if (n < 0 || f->nterms < 0 || f->nterms > GAK_CACHE_MAX_TERMS)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  k_filter<<<grid_for((n + 31) / 32 * 32, CT), CT, 0, (cudaStream_t)s>>>(*f, n,
                                                                         d_sel);
  return (int)cudaGetLastError();
}

/* --------------------------------------------------------- compaction */

/* Block b's CHUNK rows are words [b*CT, b*CT + CT) of sel, one a thread. */
__device__ __forceinline__ unsigned block_excl_scan(unsigned v,
                                                    unsigned *total) {
  __shared__ unsigned wsum[CT / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned x = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    unsigned y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off)
      x += y;
  }
  if (lane == 31)
    wsum[warp] = x;
  __syncthreads();
  unsigned before = 0, all = 0;
  for (int k = 0; k < CT / 32; k++) {
    if (k < warp)
      before += wsum[k];
    all += wsum[k];
  }
  *total = all;
  return before + x - v;
}

__global__ void __launch_bounds__(CT)
    k_count(const uint32_t *sel, long long nw, unsigned long long *counts) {
  long long w = (long long)blockIdx.x * CT + threadIdx.x;
  unsigned total;
  block_excl_scan(w < nw ? __popc(sel[w]) : 0u, &total);
  if (threadIdx.x == 0)
    counts[blockIdx.x] = total;
}

/* One block: exclusive scan of nb counts in place; the sum into *total. */
__global__ void __launch_bounds__(SCAN_T)
    k_scan(unsigned long long *counts, long long nb, long long *total) {
  __shared__ unsigned long long part[SCAN_T];
  long long per = (nb + SCAN_T - 1) / SCAN_T;
  long long lo = threadIdx.x * per, hi = lo + per < nb ? lo + per : nb;
  unsigned long long sum = 0;
  for (long long k = lo; k < hi; k++)
    sum += counts[k];
  part[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long run = 0;
    for (int k = 0; k < SCAN_T; k++) {
      unsigned long long v = part[k];
      part[k] = run;
      run += v;
    }
    *total = (long long)run;
  }
  __syncthreads();
  unsigned long long run = part[threadIdx.x];
  for (long long k = lo; k < hi; k++) {
    unsigned long long v = counts[k];
    counts[k] = run;
    run += v;
  }
}

__global__ void __launch_bounds__(CT)
    k_scatter(const uint32_t *sel, long long nw, const unsigned long long *offs,
              uint32_t *idx) {
  long long w = (long long)blockIdx.x * CT + threadIdx.x;
  uint32_t word = w < nw ? sel[w] : 0u;
  unsigned total;
  unsigned long long pos =
      offs[blockIdx.x] + block_excl_scan(__popc(word), &total);
  while (word) {
    int b = __ffs(word) - 1;
    idx[pos++] = (uint32_t)(w * 32 + b);
    word &= word - 1;
  }
}

static long long compact_blocks(int64_t n) {
  long long nw = (n + 31) / 32;
  return (nw + CT - 1) / CT;
}

extern "C" size_t gak_cache_compact_scratch(int64_t n) {
  return al256((size_t)(compact_blocks(n) + 1) * 8);
}

extern "C" int gak_cache_compact(const uint32_t *d_sel, int64_t n,
                                 uint32_t *d_idx, int64_t *d_count,
                                 void *d_scratch, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (n < 0 || n > 0xffffffffll)
    return (int)cudaErrorInvalidValue;
  long long nw = (n + 31) / 32, nb = compact_blocks(n);
  if (nb == 0)
    return (int)cudaMemsetAsync(d_count, 0, 8, s);
  if (nb > 0x7fffffffll)
    return (int)cudaErrorInvalidValue;
  unsigned long long *counts = (unsigned long long *)d_scratch;
  k_count<<<(unsigned)nb, CT, 0, s>>>(d_sel, nw, counts);
  k_scan<<<1, SCAN_T, 0, s>>>(counts, nb, (long long *)d_count);
  k_scatter<<<(unsigned)nb, CT, 0, s>>>(d_sel, nw, counts, d_idx);
  return (int)cudaGetLastError();
}

/* --------------------------------------------------------- dictionary */

/* Keys as unsigned, in the order of their int64 values. */
__device__ __forceinline__ unsigned long long ordered(long long k) {
  return (unsigned long long)k ^ 0x8000000000000000ull;
}

/* The canonical key of a non-NULL value: true and *k, or false (a REAL
** that is not an integer in int64 range). */
__device__ bool canon(const gak_ccol &c, long long i, long long *k) {
  long long v = (long long)c.vals[i];
  if (bit64(c.isint, i)) {
    *k = v;
    return true;
  }
  double d = __longlong_as_double(v);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    return false;
  long long t = (long long)d;
  if ((double)t != d)
    return false;
  *k = t;
  return true;
}

__global__ void __launch_bounds__(CT)
    k_keys(const gak_ccol c, const uint32_t *idx, const long long *m,
           unsigned long long *keys, unsigned *bad) {
  long long cnt = *m;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < cnt;
       j += (long long)gridDim.x * CT) {
    long long k = 0;
    if (!canon(c, idx[j], &k))
      atomicOr(bad, 1u);
    keys[j] = ordered(k);
  }
}

__global__ void __launch_bounds__(CT)
    k_heads(const unsigned long long *sorted, long long m, uint32_t *sel) {
  long long nw = (m + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long j = base + threadIdx.x;
    bool head = j < m && (j == 0 || sorted[j] != sorted[j - 1]);
    unsigned w = __ballot_sync(0xffffffffu, head);
    if ((threadIdx.x & 31) == 0 && (j >> 5) < nw)
      sel[j >> 5] = w;
  }
}

__global__ void __launch_bounds__(CT)
    k_gather_dict(const unsigned long long *sorted, const uint32_t *heads,
                  const long long *nd, long long *dict) {
  long long cnt = *nd;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < cnt;
       j += (long long)gridDim.x * CT)
    dict[j] = (long long)(sorted[heads[j]] ^ 0x8000000000000000ull);
}

__global__ void k_dict_final(const long long *m, long long want,
                             const unsigned *bad, const long long *nd,
                             long long *out) {
  *out = *m != want ? -2 : *bad ? -1 : *nd;
}

/* Scratch: nn-row index list, counts, compaction scratch, keys, sorted
** keys, CUB's, the heads' bitmap and their index list, flags. */
static size_t dict_sort_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortKeys((void *)NULL, bytes,
                                 (unsigned long long *)NULL,
                                 (unsigned long long *)NULL, (int)n);
  return bytes;
}

extern "C" size_t gak_cache_dict_scratch(int64_t n) {
  if (n < 1)
    n = 1;
  return al256((size_t)n * 4) + 3 * 256 + gak_cache_compact_scratch(n) +
         2 * al256((size_t)n * 8) + al256(dict_sort_bytes(n)) +
         al256((size_t)(n + 31) / 32 * 4) + al256((size_t)n * 4);
}

extern "C" int gak_cache_dict(gak_ccol key, int64_t n, int64_t nn,
                              int64_t *d_dict, int64_t *d_ndict,
                              void *d_scratch, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (n < 0 || nn < 0 || nn > n || n > 0x7fffffffll)
    return (int)cudaErrorInvalidValue;
  char *p = (char *)d_scratch;
  int64_t n1 = n < 1 ? 1 : n;
  uint32_t *idx = (uint32_t *)p;
  p += al256((size_t)n1 * 4);
  long long *m = (long long *)p, *nd = m + 32;
  unsigned *bad = (unsigned *)(m + 64);
  p += 3 * 256;
  void *csc = p;
  p += gak_cache_compact_scratch(n1);
  unsigned long long *keys = (unsigned long long *)p;
  p += al256((size_t)n1 * 8);
  unsigned long long *sorted = (unsigned long long *)p;
  p += al256((size_t)n1 * 8);
  void *cub_tmp = p;
  size_t cub_bytes = dict_sort_bytes(n1);
  p += al256(cub_bytes);
  uint32_t *heads_sel = (uint32_t *)p;
  p += al256((size_t)(n1 + 31) / 32 * 4);
  uint32_t *heads = (uint32_t *)p;

  cudaError_t err = cudaMemsetAsync(bad, 0, 4, s);
  if (err != cudaSuccess)
    return (int)err;
  /* the non-NULL rows: the notnull bitmap read as 32-bit words (little
  ** endian: the same bit order) */
  int rc = gak_cache_compact((const uint32_t *)key.notnull, n, idx,
                             (int64_t *)m, csc, st);
  if (rc)
    return rc;
  k_keys<<<grid_for(nn, CT), CT, 0, s>>>(key, idx, m, keys, bad);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return (int)err;
  if (nn > 0) {
    err = cub::DeviceRadixSort::SortKeys(cub_tmp, cub_bytes, keys, sorted,
                                         (int)nn, 0, 64, s);
    if (err != cudaSuccess)
      return (int)err;
  }
  k_heads<<<grid_for((nn + 31) / 32 * 32, CT), CT, 0, s>>>(sorted, nn,
                                                           heads_sel);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return (int)err;
  rc = gak_cache_compact(heads_sel, nn, heads, (int64_t *)nd, csc, st);
  if (rc)
    return rc;
  k_gather_dict<<<grid_for(nn, CT), CT, 0, s>>>(sorted, heads, nd,
                                                (long long *)d_dict);
  k_dict_final<<<1, 1, 0, s>>>(m, nn, bad, nd, (long long *)d_ndict);
  return (int)cudaGetLastError();
}

/* -------------------------------------------------------------- groups */

/* Several keys (gak_cache_key_ids): one thread per row. */
__global__ void __launch_bounds__(CT)
    k_key_ids(const gak_ckeys ks, const uint32_t *idx, long long m,
              uint32_t *gid) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    long long i = idx ? idx[j] : j;
    uint32_t g = 0;
    for (int q = 0; q < ks.n && g != 0xffffffffu; q++) {
      const gak_ckey &kk = ks.k[q];
      long long id = -1, k;
      bool nn = bit64(kk.col.notnull, i);
      if (kk.map) {
        long long code = nn ? (long long)kk.col.vals[i] : kk.nmap - 1;
        if (code >= 0 && code < kk.nmap)
          id = kk.map[nn ? code : kk.nmap - 1];
      } else if (!nn) {
        id = kk.ndict;
      } else if (canon(kk.col, i, &k)) {
        long long lo = 0, hi = kk.ndict; /* first entry >= k */
        while (lo < hi) {
          long long mid = (lo + hi) >> 1;
          if (kk.dict[mid] < k)
            lo = mid + 1;
          else
            hi = mid;
        }
        if (lo < kk.ndict && kk.dict[lo] == k)
          id = lo;
      }
      g = id < 0 ? 0xffffffffu : g + (uint32_t)id * kk.stride;
    }
    gid[j] = g;
  }
}

extern "C" int gak_cache_key_ids(const gak_ckeys *k, const uint32_t *d_idx,
                                 int64_t m, uint32_t *d_gid, gak_stream s) {
  if (m < 0 || !k || k->n < 1 || k->n > GAK_CACHE_MAX_KEYS)
    return (int)cudaErrorInvalidValue;
  if (m == 0)
    return (int)cudaSuccess;
  k_key_ids<<<grid_for(m, CT), CT, 0, (cudaStream_t)s>>>(*k, d_idx, m, d_gid);
  return (int)cudaGetLastError();
}

__global__ void __launch_bounds__(CT)
    k_gather(const gak_ccol c, const uint32_t *rows, const uint32_t *through,
             long long n, gak_cval *out) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < n;
       j += (long long)gridDim.x * CT) {
    long long i = through ? through[rows[j]] : rows[j];
    gak_cval v;
    v.pad = 0;
    v.type = !bit64(c.notnull, i) ? 0 : bit64(c.isint, i) ? 1 : 2;
    v.bits = v.type ? (long long)c.vals[i] : 0;
    out[j] = v;
  }
}

extern "C" int gak_cache_gather(gak_ccol col, const uint32_t *d_rows,
                                const uint32_t *d_through, int64_t n,
                                gak_cval *d_out, gak_stream s) {
  if (n < 0)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  k_gather<<<grid_for(n, CT), CT, 0, (cudaStream_t)s>>>(col, d_rows, d_through,
                                                        n, d_out);
  return (int)cudaGetLastError();
}

extern "C" size_t gak_cache_sort_scratch(int64_t m) {
  size_t bytes = 0;
  if (m < 1)
    m = 1;
  cub::DeviceRadixSort::SortPairs((void *)NULL, bytes, (uint32_t *)NULL,
                                  (uint32_t *)NULL, (uint32_t *)NULL,
                                  (uint32_t *)NULL, (int)m);
  return al256(bytes);
}

extern "C" int gak_cache_sort(const uint32_t *d_gid, const uint32_t *d_idx,
                              uint32_t *d_gid_out, uint32_t *d_idx_out,
                              int64_t m, int bits, void *d_scratch,
                              gak_stream s) {
  if (m < 0 || m > 0x7fffffffll || bits < 1 || bits > 32)
    return (int)cudaErrorInvalidValue;
  if (m == 0)
    return (int)cudaSuccess;
  size_t bytes = gak_cache_sort_scratch(m);
  /* LSD radix sort: stable, so rows stay in rowid order within a group */
  return (int)cub::DeviceRadixSort::SortPairs(d_scratch, bytes, d_gid,
                                              d_gid_out, d_idx, d_idx_out,
                                              (int)m, 0, bits, (cudaStream_t)s);
}

__global__ void __launch_bounds__(CT)
    k_bounds(const uint32_t *gid, long long m, long long ng, uint32_t *start,
             uint32_t *end) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    uint32_t g = gid[j];
    if (g >= ng)
      continue; /* a row without group: the engine's count check fails */
    if (j == 0 || gid[j - 1] != g)
      start[g] = (uint32_t)j;
    if (j == m - 1 || gid[j + 1] != g)
      end[g] = (uint32_t)(j + 1);
  }
}

__global__ void k_remap(unsigned long long *vals,
                        const unsigned long long *notnull, long long n,
                        const uint32_t *map) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    if ((notnull[i >> 6] >> (i & 63)) & 1)
      vals[i] = map[vals[i]];
}

extern "C" int gak_cache_remap(uint64_t *d_vals, const uint64_t *d_notnull,
                               int64_t n, const uint32_t *d_map, int64_t nmap,
                               gak_stream st) {
  if (n < 0 || nmap < 0)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return 0;
  k_remap<<<grid_for(n, CT), CT, 0, (cudaStream_t)st>>>(
      (unsigned long long *)d_vals, (const unsigned long long *)d_notnull, n,
      d_map);
  return (int)cudaGetLastError();
}

extern "C" int gak_cache_bounds(const uint32_t *d_gid, int64_t m,
                                int64_t ngroups, uint32_t *d_start,
                                uint32_t *d_end, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (m < 0 || ngroups < 1)
    return (int)cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(d_start, 0, (size_t)ngroups * 4, s);
  if (err == cudaSuccess)
    err = cudaMemsetAsync(d_end, 0, (size_t)ngroups * 4, s);
  if (err != cudaSuccess || m == 0)
    return (int)err;
  k_bounds<<<grid_for(m, CT), CT, 0, s>>>(d_gid, m, ngroups, d_start, d_end);
  return (int)cudaGetLastError();
}

/* ----------------------------------------------------- exact states */

struct best {
  int kind;
  long long bits, idx;
};

/* a better than b (rule 3): a larger (smaller) value, or an equal one at
** an earlier row. */
__device__ __forceinline__ bool better(const best &a, const best &b,
                                       bool want_min) {
  if (a.kind == GA_KIND_NONE)
    return false;
  if (b.kind == GA_KIND_NONE)
    return true;
  int c = gak_num_cmp(a.kind, a.bits, b.kind, b.bits);
  if (want_min)
    c = -c;
  return c > 0 || (c == 0 && a.idx < b.idx);
}

__device__ __forceinline__ best shfl_best(const best &b, int off) {
  best o;
  o.kind = __shfl_down_sync(0xffffffffu, b.kind, off);
  o.bits = __shfl_down_sync(0xffffffffu, b.bits, off);
  o.idx = __shfl_down_sync(0xffffffffu, b.idx, off);
  return o;
}

__device__ __forceinline__ best warp_best(best b, bool want_min) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    best o = shfl_best(b, off);
    if (better(o, b, want_min))
      b = o;
  }
  return b;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

/* A finite double m * 2^(p - 1074) adds exactly into digits p>>5 .. +2
** (ga_partial.h) as 32-bit pieces of m << (p & 31).  A thread holds those
** three digits in registers while its values stay in one block of digits:
** a value adds to them, and only a value of another block (or the end)
** adds them to the shared digits, with three atomics instead of three a
** value.  The shared digits are sums mod 2^64
** either way, so the state is the same bit for bit; a register digit grows
** by under 2^32 a value, and a thread adds at most a slice's rows / CT. */
struct sbuf {
  int k;
  unsigned long long d[3];
};

__device__ __forceinline__ void sbuf_flush(unsigned long long *acc, sbuf &b) {
  if (b.k < 0)
    return;
#pragma unroll
  for (int i = 0; i < 3; i++)
    if (b.d[i])
      atomicAdd(acc + b.k + i, b.d[i]);
}

__device__ __forceinline__ void sbuf_add(unsigned long long *acc, sbuf &b,
                                         unsigned long long v) {
  int e = (int)((v >> 52) & 0x7ff);
  unsigned long long m = v & ((1ull << 52) - 1);
  if (e == 0) {
    if (m == 0)
      return; /* +-0 */
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  int k = e >> 5, sh = e & 31;
  unsigned long long lo = m << sh;
  unsigned long long d[3] = {lo & 0xffffffffull, lo >> 32,
                             sh ? (m >> (64 - sh)) : 0ull};
  bool neg = (v >> 63) != 0;
  if (k != b.k) {
    sbuf_flush(acc, b);
    b.k = k;
    b.d[0] = b.d[1] = b.d[2] = 0;
  }
#pragma unroll
  for (int i = 0; i < 3; i++)
    b.d[i] += neg ? 0ull - d[i] : d[i];
}

/* counters in the shared array: ilo, ihi, nint, nreal, npinf, nninf, nnan,
** count */
#define NCNT 8

/* At least 4 blocks an SM: the registers (128 a thread without a bound)
** held occupancy to 25% and the gathers' latency unhidden (ncu, H200). */
template <bool FEW>
__global__ void __launch_bounds__(CT, 4)
    k_reduce(const gak_ccol x, const uint32_t *idx, const uint32_t *gid,
             const uint32_t *sel, const gak_cslice *sl, gak_cstate *out) {
  __shared__ unsigned long long acc[GA_XACC_DIGITS];
  __shared__ unsigned long long cnt[NCNT + 1]; /* FEW: and the rows */
  __shared__ long long first_row;
  __shared__ best wmax[CT / 32], wmin[CT / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int d = threadIdx.x; d < GA_XACC_DIGITS; d += CT)
    acc[d] = 0;
  if (threadIdx.x <= NCNT)
    cnt[threadIdx.x] = 0;
  if (threadIdx.x == 0)
    first_row = LLONG_MAX;
  __syncthreads();
  const gak_cslice s = sl[blockIdx.x];
  unsigned long long c[NCNT] = {0, 0, 0, 0, 0, 0, 0, 0}, rows = 0;
  long long first = LLONG_MAX;
  best mx = {GA_KIND_NONE, 0, 0}, mn = {GA_KIND_NONE, 0, 0};
  sbuf sb;
  sb.k = -1;
  sb.d[0] = sb.d[1] = sb.d[2] = 0;
  for (unsigned p = threadIdx.x; p < s.len; p += CT) {
    if (FEW &&
        (gid[s.start + p] != s.group ||
         (sel && !((sel[(s.start + p) >> 5] >> ((s.start + p) & 31)) & 1))))
      continue;
    long long i = idx ? idx[s.start + p] : (long long)s.start + p;
    if (FEW) { /* positions rise with p, and rows with positions */
      rows++;
      if (first == LLONG_MAX)
        first = i;
    }
    if (!bit64(x.notnull, i))
      continue;
    unsigned long long v = x.vals[i];
    best cand;
    cand.bits = (long long)v;
    cand.idx = i;
    c[7]++;
    if (bit64(x.isint, i)) {
      cand.kind = GA_KIND_INT;
      c[0] += v & 0xffffffffull;
      c[1] += (unsigned long long)((long long)v >> 32);
      c[2]++;
    } else {
      cand.kind = GA_KIND_REAL;
      c[3]++;
      if (((v >> 52) & 0x7ff) == 0x7ff) {
        if (v & ((1ull << 52) - 1))
          c[6]++;
        else if (v >> 63)
          c[5]++;
        else
          c[4]++;
      } else {
        sbuf_add(acc, sb, v);
      }
    }
    if (better(cand, mx, false))
      mx = cand;
    if (better(cand, mn, true))
      mn = cand;
  }
  sbuf_flush(acc, sb);
#pragma unroll
  for (int k = 0; k < NCNT; k++) {
    unsigned long long t = warp_sum(c[k]);
    if (lane == 0 && t)
      atomicAdd(&cnt[k], t);
  }
  if (FEW) {
    unsigned long long t = warp_sum(rows);
    if (lane == 0 && t)
      atomicAdd(&cnt[NCNT], t);
    if (first != LLONG_MAX)
      atomicMin(&first_row, first);
  }
  mx = warp_best(mx, false);
  mn = warp_best(mn, true);
  if (lane == 0) {
    wmax[warp] = mx;
    wmin[warp] = mn;
  }
  __syncthreads();
  if (threadIdx.x != 0)
    return;
  for (int w = 1; w < CT / 32; w++) {
    if (better(wmax[w], wmax[0], false))
      wmax[0] = wmax[w];
    if (better(wmin[w], wmin[0], true))
      wmin[0] = wmin[w];
  }
  gak_cstate *o = &out[blockIdx.x];
  /* rule 2: digits into [0, 2^32), the top one signed */
  long long carry = 0;
  for (int d = 0; d < GA_XACC_DIGITS - 1; d++) {
    long long v = (long long)acc[d] + carry;
    carry = v >> 32;
    o->sum.acc[d] = v & 0xffffffffll;
  }
  o->sum.acc[GA_XACC_DIGITS - 1] = (long long)acc[GA_XACC_DIGITS - 1] + carry;
  long long ilo = (long long)cnt[0], ihi = (long long)cnt[1];
  ihi += ilo >> 32;
  o->sum.ilo = ilo & 0xffffffffll;
  o->sum.itop = ihi >> 32;
  o->sum.ihi = ihi & 0xffffffffll;
  o->sum.nint = (long long)cnt[2];
  o->sum.nreal = (long long)cnt[3];
  o->sum.npinf = (long long)cnt[4];
  o->sum.nninf = (long long)cnt[5];
  o->sum.nnan = (long long)cnt[6];
  o->count = (long long)cnt[7];
  if (FEW) { /* a slice without its group's rows: first stays the largest */
    o->rows = (long long)cnt[NCNT];
    o->first = first_row;
  } else {
    o->rows = s.len;
    o->first = !s.len ? 0 : idx ? idx[s.start] : s.start;
  }
  o->max.kind = wmax[0].kind;
  o->max.pad = 0;
  o->max.idx = wmax[0].idx;
  o->max.bits = wmax[0].bits;
  o->min.kind = wmin[0].kind;
  o->min.pad = 0;
  o->min.idx = wmin[0].idx;
  o->min.bits = wmin[0].bits;
  o->key_kind = GA_KIND_NONE;
  o->pad = 0;
  o->key_bits = 0;
}

extern "C" int gak_cache_reduce(gak_ccol x, const uint32_t *d_idx,
                                const uint32_t *d_gid, const uint32_t *d_sel,
                                const gak_cslice *d_slices, int64_t nslices,
                                gak_cstate *d_out, gak_stream s) {
  if (nslices < 0 || nslices > 0x7fffffffll)
    return (int)cudaErrorInvalidValue;
  if (nslices == 0)
    return (int)cudaSuccess;
  if (d_gid)
    k_reduce<true><<<(unsigned)nslices, CT, 0, (cudaStream_t)s>>>(
        x, d_idx, d_gid, d_sel, d_slices, d_out);
  else
    k_reduce<false><<<(unsigned)nslices, CT, 0, (cudaStream_t)s>>>(
        x, d_idx, NULL, NULL, d_slices, d_out);
  return (int)cudaGetLastError();
}

/* Rows a group (gak_cache_group_counts): a block's counts in shared
** memory, then one atomic a group it saw. */
__global__ void __launch_bounds__(CT)
    k_group_counts(const uint32_t *gid, const uint32_t *sel, long long m,
                   int ngroups, uint32_t *counts, uint32_t *firsts) {
  __shared__ uint32_t h[GAK_CACHE_COUNT_MAX], f[GAK_CACHE_COUNT_MAX];
  for (int g = threadIdx.x; g < ngroups; g += CT) {
    h[g] = 0;
    f[g] = 0xffffffffu;
  }
  __syncthreads();
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < m;
       j += (long long)gridDim.x * CT) {
    uint32_t g = gid[j];
    if (g < (uint32_t)ngroups && (!sel || ((sel[j >> 5] >> (j & 31)) & 1))) {
      atomicAdd(&h[g], 1u);
      if (firsts && f[g] > (uint32_t)j)
        atomicMin(&f[g], (uint32_t)j);
    }
  }
  __syncthreads();
  for (int g = threadIdx.x; g < ngroups; g += CT)
    if (h[g]) {
      atomicAdd(&counts[g], h[g]);
      if (firsts)
        atomicMin(&firsts[g], f[g]);
    }
}

extern "C" int gak_cache_group_counts(const uint32_t *d_gid,
                                      const uint32_t *d_sel, int64_t m,
                                      int64_t ngroups, uint32_t *d_counts,
                                      uint32_t *d_firsts, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (m < 0 || m > 0xffffffffll || ngroups < 1 || ngroups > GAK_CACHE_COUNT_MAX)
    return (int)cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(d_counts, 0, (size_t)ngroups * 4, s);
  if (err == cudaSuccess && d_firsts)
    err = cudaMemsetAsync(d_firsts, 0xff, (size_t)ngroups * 4, s);
  if (err != cudaSuccess || m == 0)
    return (int)err;
  int grid = grid_for(m, CT * 64); /* a block's bins pay for 64 rows a thread */
  k_group_counts<<<grid, CT, 0, s>>>(d_gid, d_sel, m, (int)ngroups, d_counts,
                                     d_firsts);
  return (int)cudaGetLastError();
}

/* Few groups at once (gak_cache_reduce_groups).  A row's value is taken
** apart once, then added to the registers of every group under a mask
** (branch-free: the lanes of a warp hold rows of different groups, and a
** branch per group would run each group's code for the whole warp).
**
** A REAL adds as a fixed-point int64 inside the warp's window: binades
** [wb, wb + WSPAN] of ga_partial.h's positions (a position p is a value
** m * 2^(p - 1074)), so m << (p - wb) fits 53 + WSPAN < 64 bits, and a
** group's register sum is a 128-bit integer in units of 2^(wb - 1074):
** one shift and one 128-bit add a value, where digits cost a split into
** three and three adds (ncu, Q1 on the H200: 112 registers, latency
** bound).  The window is the warp's own, taken from its first REALs: the
** largest position among them, less WSPAN - 1.  A value outside it, and
** the rare infinity or NaN, goes to the block's shared digits or counters
** with atomics.  The digits are sums mod 2^64 whatever the route, and a
** slice's digits are carried at its end (rule 2), so its state is the same
** bit for bit as value-by-value digits would give.  Integers add their
** 32-bit halves.  Bounds: a thread adds at most a slice's rows / CT
** values, each below 2^63, so its 128-bit sums cannot overflow; nor can
** a warp's (32 of them).  Four rows a thread an iteration, loaded before
** any is added; the loop is the same for every lane (warp votes pick the
** work). */
#define WSPAN 10

template <int G> struct gregs {
  unsigned long long flo[G], fhi[G]; /* the window's 128-bit sums */
  unsigned long long ilo[G], ihi[G];
  unsigned nint[G], count[G]; /* nreal is count - nint */
};

/* Value v's position and mantissa: false for +-0. */
__device__ __forceinline__ bool real_parts(unsigned long long v, int *pos,
                                           unsigned long long *m) {
  int e = (int)((v >> 52) & 0x7ff);
  unsigned long long mnt = v & ((1ull << 52) - 1);
  if (!e && !mnt)
    return false;
  *pos = e ? e - 1 : 0;
  *m = e ? mnt | (1ull << 52) : mnt;
  return true;
}

/* m * 2^pos (negated when neg) into shared digits, as sbuf_add's pieces
** (rare: kept out of line, off the registers of the loop that calls it). */
__device__ __noinline__ void digits_add(unsigned long long *acc, int pos,
                                        unsigned long long m, bool neg) {
  int k = pos >> 5, sh = pos & 31;
  unsigned long long l = m << sh;
  unsigned long long d[3] = {l & 0xffffffffull, l >> 32,
                             sh ? (m >> (64 - sh)) : 0ull};
#pragma unroll
  for (int i = 0; i < 3; i++)
    if (d[i])
      atomicAdd(acc + k + i, neg ? 0ull - d[i] : d[i]);
}

/* A warp's 128-bit window sum s (two's complement, hi:lo) times 2^wb into
** shared digits: its magnitude's 32-bit pieces shifted by wb & 31 (each
** piece below 2^33), at digits wb >> 5 .. + 4 (wb <= 2036: the last is
** digit 67 at most). */
__device__ __forceinline__ void window_add(unsigned long long *acc, int wb,
                                           unsigned long long lo,
                                           unsigned long long hi) {
  bool neg = (long long)hi < 0;
  if (neg) {
    lo = ~lo + 1;
    hi = ~hi + (lo == 0);
  }
  const int k = wb >> 5, sh = wb & 31;
  const unsigned long long w[4] = {lo & 0xffffffffull, lo >> 32,
                                   hi & 0xffffffffull, hi >> 32};
  unsigned long long below = 0;
#pragma unroll
  for (int j = 0; j < 5; j++) {
    unsigned long long x = j < 4 ? w[j] << sh : 0ull;
    unsigned long long piece = (x & 0xffffffffull) + below;
    below = x >> 32;
    if (piece)
      atomicAdd(acc + k + j, neg ? 0ull - piece : piece);
  }
}

__device__ __forceinline__ void add128(unsigned long long &lo,
                                       unsigned long long &hi, long long x) {
  unsigned long long n = lo + (unsigned long long)x;
  hi += (n < lo) + (unsigned long long)(x >> 63);
  lo = n;
}

/* One row (ok: passing and not NULL) of group g: its window value or
** integer halves into the registers, the rest into shared memory. */
template <int G>
__device__ __forceinline__ void
group_add(gregs<G> &r, unsigned long long (*acc)[GA_XACC_DIGITS],
          unsigned long long (*cnt)[NCNT], const gak_cgids &gs, uint32_t g,
          bool ok, bool isint, unsigned long long v, int wb, bool ints,
          bool reals) {
  long long fx = 0;
  unsigned long long lo = 0, hi = 0;
  if (ok && isint) {
    lo = v & 0xffffffffull;
    hi = (unsigned long long)((long long)v >> 32);
  } else if (ok && ((v >> 52) & 0x7ff) == 0x7ff) { /* rare */
    unsigned long long mnt = v & ((1ull << 52) - 1);
#pragma unroll
    for (int q = 0; q < G; q++)
      if (g == gs.g[q])
        atomicAdd(&cnt[q][mnt ? 6 : (v >> 63) ? 5 : 4], 1ull);
  } else if (ok) {
    int pos;
    unsigned long long m;
    if (real_parts(v, &pos, &m)) {
      unsigned sh = (unsigned)(pos - wb);
      if (wb >= 0 && sh <= WSPAN) {
        fx = (long long)(m << sh);
        if (v >> 63)
          fx = -fx;
      } else { /* outside the window: straight to the digits */
#pragma unroll
        for (int q = 0; q < G; q++)
          if (g == gs.g[q])
            digits_add(acc[q], pos, m, (v >> 63) != 0);
      }
    }
  }
#pragma unroll
  for (int q = 0; q < G; q++) {
    bool mq = ok && g == gs.g[q];
    r.count[q] += mq;
    if (ints) {
      r.nint[q] += mq && isint;
      r.ilo[q] += mq ? lo : 0ull;
      r.ihi[q] += mq ? hi : 0ull;
    }
    if (reals)
      add128(r.flo[q], r.fhi[q], mq ? fx : 0ll);
  }
}

/* Position of a finite nonzero REAL, or -1. */
__device__ __forceinline__ int window_pos(bool ok, bool isint,
                                          unsigned long long v) {
  int pos;
  unsigned long long m;
  if (!ok || isint || ((v >> 52) & 0x7ff) == 0x7ff || !real_parts(v, &pos, &m))
    return -1;
  return pos;
}

/* Three blocks an SM: Q1 on the H200 took 6.3 ms with three, 7.1 ms with
** two (side by side, 2026-12-02: bench/results/query_cache_h200_2026-12-02_quads_*),
** though ptxas then spills 136 to 188 bytes (on cold paths). */
template <int G>
__global__ void __launch_bounds__(CT, 3)
    k_reduce_groups(const gak_ccol x, const uint32_t *gid, const uint32_t *sel,
                    const gak_cslice *sl, const gak_cgids gs, unsigned nslices,
                    gak_cstate *out) {
  __shared__ unsigned long long acc[G][GA_XACC_DIGITS];
  __shared__ unsigned long long cnt[G][NCNT];
  for (int d = threadIdx.x; d < G * GA_XACC_DIGITS; d += CT)
    acc[d / GA_XACC_DIGITS][d % GA_XACC_DIGITS] = 0;
  for (int d = threadIdx.x; d < G * NCNT; d += CT)
    cnt[d / NCNT][d % NCNT] = 0;
  __syncthreads();
  const gak_cslice s = sl[blockIdx.x];
  const int lane = threadIdx.x & 31;
  gregs<G> r;
#pragma unroll
  for (int q = 0; q < G; q++) {
    r.flo[q] = r.fhi[q] = r.ilo[q] = r.ihi[q] = 0;
    r.nint[q] = r.count[q] = 0;
  }
  int wb = -1; /* the warp's window (the same in every lane), once set */
  /* rows in quads, a thread's four in one 32-byte load of values and one
  ** 16-byte load of ids where the slice's start and the arrays allow it:
  ** every load of an iteration is issued before any is used (the version
  ** with two rows a thread was latency bound: 1.2 ms a reduce for Q1) */
  const bool vec = (s.start & 3) == 0 && ((uintptr_t)x.vals & 15) == 0 &&
                   ((uintptr_t)gid & 15) == 0;
#pragma unroll 1
  for (unsigned base = 0; base < s.len; base += 4 * CT) {
    const unsigned p = base + 4 * threadIdx.x;
    const long long i = (long long)s.start + p;
    unsigned long long v[4] = {0, 0, 0, 0};
    uint32_t g[4] = {0, 0, 0, 0};
    bool ok[4], ii[4];
    if (vec && p + 4 <= s.len) { /* one word of each bitmap: i % 4 == 0 */
      const ulonglong2 *v2 = reinterpret_cast<const ulonglong2 *>(x.vals + i);
      ulonglong2 a = v2[0], b2 = v2[1];
      uint4 gg = *reinterpret_cast<const uint4 *>(gid + i);
      unsigned pass = (sel[i >> 5] >> (i & 31)) &
                      (unsigned)(x.notnull[i >> 6] >> (i & 63)) & 0xfu;
      unsigned ints = (unsigned)(x.isint[i >> 6] >> (i & 63));
      v[0] = a.x, v[1] = a.y, v[2] = b2.x, v[3] = b2.y;
      g[0] = gg.x, g[1] = gg.y, g[2] = gg.z, g[3] = gg.w;
#pragma unroll
      for (int t = 0; t < 4; t++) {
        ok[t] = (pass >> t) & 1;
        ii[t] = ok[t] && ((ints >> t) & 1);
      }
    } else {
#pragma unroll
      for (int t = 0; t < 4; t++) {
        long long k = i + t;
        bool in = p + t < s.len;
        g[t] = in ? gid[k] : 0;
        v[t] = in ? x.vals[k] : 0;
        ok[t] = in && ((sel[k >> 5] >> (k & 31)) & 1) && bit64(x.notnull, k);
        ii[t] = ok[t] && bit64(x.isint, k);
      }
    }
    bool anyi = false, anyr = false;
#pragma unroll
    for (int t = 0; t < 4; t++) {
      anyi |= ii[t];
      anyr |= ok[t] && !ii[t];
    }
    const bool ints = __any_sync(0xffffffffu, anyi);
    const bool reals = __any_sync(0xffffffffu, anyr);
    if (reals && wb < 0) {
      int top = -1;
#pragma unroll
      for (int t = 0; t < 4; t++) {
        int pt = window_pos(ok[t], ii[t], v[t]);
        top = pt > top ? pt : top;
      }
      top = __reduce_max_sync(0xffffffffu, top);
      if (top >= 0)
        wb = top > WSPAN - 1 ? top - (WSPAN - 1) : 0;
    }
#pragma unroll
    for (int t = 0; t < 4; t++)
      group_add<G>(r, acc, cnt, gs, g[t], ok[t], ii[t], ok[t] ? v[t] : 0ull, wb,
                   ints, reals);
  }
#pragma unroll
  for (int q = 0; q < G; q++) {
    unsigned long long flo = r.flo[q], fhi = r.fhi[q];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      unsigned long long olo = __shfl_down_sync(0xffffffffu, flo, off);
      unsigned long long ohi = __shfl_down_sync(0xffffffffu, fhi, off);
      unsigned long long n = flo + olo;
      fhi += ohi + (n < flo);
      flo = n;
    }
    if (lane == 0 && wb >= 0 && (flo | fhi))
      window_add(acc[q], wb, flo, fhi);
    unsigned long long t[4] = {r.ilo[q], r.ihi[q], r.nint[q], r.count[q]};
    const int at[4] = {0, 1, 2, 7};
#pragma unroll
    for (int c = 0; c < 4; c++) {
      unsigned long long w = warp_sum(t[c]);
      if (lane == 0 && w)
        atomicAdd(&cnt[q][at[c]], w);
    }
  }
  __syncthreads();
  if (threadIdx.x >= G)
    return;
  const int q = threadIdx.x;
  cnt[q][3] = cnt[q][7] - cnt[q][2]; /* nreal: the non-NULL that are not int */
  gak_cstate *o = &out[(size_t)q * nslices + blockIdx.x];
  long long carry = 0; /* rule 2 */
  for (int dd = 0; dd < GA_XACC_DIGITS - 1; dd++) {
    long long v = (long long)acc[q][dd] + carry;
    carry = v >> 32;
    o->sum.acc[dd] = v & 0xffffffffll;
  }
  o->sum.acc[GA_XACC_DIGITS - 1] =
      (long long)acc[q][GA_XACC_DIGITS - 1] + carry;
  long long lo = (long long)cnt[q][0], hi = (long long)cnt[q][1];
  hi += lo >> 32;
  o->sum.ilo = lo & 0xffffffffll;
  o->sum.itop = hi >> 32;
  o->sum.ihi = hi & 0xffffffffll;
  o->sum.nint = (long long)cnt[q][2];
  o->sum.nreal = (long long)cnt[q][3];
  o->sum.npinf = (long long)cnt[q][4];
  o->sum.nninf = (long long)cnt[q][5];
  o->sum.nnan = (long long)cnt[q][6];
  o->count = (long long)cnt[q][7];
  o->rows = 0;
  o->first = LLONG_MAX;
  o->max.kind = o->min.kind = GA_KIND_NONE;
  o->max.pad = o->min.pad = 0;
  o->max.idx = o->min.idx = 0;
  o->max.bits = o->min.bits = 0;
  o->key_kind = GA_KIND_NONE;
  o->pad = 0;
  o->key_bits = 0;
}

extern "C" int gak_cache_reduce_groups(gak_ccol x, const uint32_t *d_gid,
                                       const uint32_t *d_sel,
                                       const gak_cslice *d_slices,
                                       int64_t nslices, const gak_cgids *gids,
                                       gak_cstate *d_out, gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (nslices < 0 || nslices > 0x7fffffffll || !gids || gids->n < 1 ||
      gids->n > GAK_CACHE_FEW || !d_sel)
    return (int)cudaErrorInvalidValue;
  if (nslices == 0)
    return (int)cudaSuccess;
  unsigned ns = (unsigned)nslices;
#define RG(G)                                                                  \
  k_reduce_groups<G>                                                           \
      <<<ns, CT, 0, s>>>(x, d_gid, d_sel, d_slices, *gids, ns, d_out)
  switch (gids->n) {
  case 1:
    RG(1);
    break;
  case 2:
    RG(2);
    break;
  case 3:
    RG(3);
    break;
  default:
    RG(4);
    break;
  }
#undef RG
  return (int)cudaGetLastError();
}

/* One block per group: thread d sums digit d over the group's slices;
** threads past the digits sum one counter each; one more merges max/min
** and takes the first row and the key. */
#define MERGE_T 96

/* Counter t of a state: ilo, ihi, nint, nreal, npinf, nninf, nnan, itop,
** rows, count. */
__device__ __forceinline__ long long counter(const gak_cstate *q, int t) {
  switch (t) {
  case 0:
    return q->sum.ilo;
  case 1:
    return q->sum.ihi;
  case 2:
    return q->sum.nint;
  case 3:
    return q->sum.nreal;
  case 4:
    return q->sum.npinf;
  case 5:
    return q->sum.nninf;
  case 6:
    return q->sum.nnan;
  case 7:
    return q->sum.itop;
  case 8:
    return q->rows;
  default:
    return q->count;
  }
}

__global__ void __launch_bounds__(MERGE_T)
    k_merge(const gak_cstate *in, const gak_cgroup *groups, const gak_ccol key,
            gak_cstate *out) {
  const gak_cgroup g = groups[blockIdx.x];
  const gak_cstate *first = in + g.first_slice;
  gak_cstate *o = &out[blockIdx.x];
  int t = threadIdx.x;
  if (t < GA_XACC_DIGITS) {
    long long sum = 0;
    for (unsigned k = 0; k < g.nslices; k++)
      sum += first[k].sum.acc[t];
    o->sum.acc[t] = sum;
    return;
  }
  t -= GA_XACC_DIGITS;
  if (t < 10) {
    long long sum = 0;
    for (unsigned k = 0; k < g.nslices; k++)
      sum += counter(&first[k], t);
    switch (t) {
    case 0:
      o->sum.ilo = sum;
      break;
    case 1:
      o->sum.ihi = sum;
      break;
    case 2:
      o->sum.nint = sum;
      break;
    case 3:
      o->sum.nreal = sum;
      break;
    case 4:
      o->sum.npinf = sum;
      break;
    case 5:
      o->sum.nninf = sum;
      break;
    case 6:
      o->sum.nnan = sum;
      break;
    case 7:
      o->sum.itop = sum;
      break;
    case 8:
      o->rows = sum;
      break;
    case 9:
      o->count = sum;
      break;
    }
    return;
  }
  if (t != 10)
    return;
  best mx = {GA_KIND_NONE, 0, 0}, mn = {GA_KIND_NONE, 0, 0};
  long long row = g.nslices ? first[0].first : 0;
  for (unsigned k = 0; k < g.nslices; k++) {
    const gak_cstate *q = &first[k];
    best a = {q->max.kind, q->max.bits, q->max.idx};
    best b = {q->min.kind, q->min.bits, q->min.idx};
    if (better(a, mx, false))
      mx = a;
    if (better(b, mn, true))
      mn = b;
    if (q->first < row)
      row = q->first;
  }
  o->max.kind = mx.kind;
  o->max.pad = 0;
  o->max.idx = mx.idx;
  o->max.bits = mx.bits;
  o->min.kind = mn.kind;
  o->min.pad = 0;
  o->min.idx = mn.idx;
  o->min.bits = mn.bits;
  o->first = row;
  o->pad = 0;
  o->key_kind = GA_KIND_NONE;
  o->key_bits = 0;
  if (key.vals && bit64(key.notnull, row)) {
    o->key_kind = bit64(key.isint, row) ? GA_KIND_INT : GA_KIND_REAL;
    o->key_bits = (long long)key.vals[row];
  }
}

extern "C" int gak_cache_merge(const gak_cstate *d_slice_states,
                               const gak_cgroup *d_groups, int64_t ngroups,
                               gak_ccol key, gak_cstate *d_out, gak_stream s) {
  if (ngroups < 0 || ngroups > 0x7fffffffll)
    return (int)cudaErrorInvalidValue;
  if (ngroups == 0)
    return (int)cudaSuccess;
  k_merge<<<(unsigned)ngroups, MERGE_T, 0, (cudaStream_t)s>>>(
      d_slice_states, d_groups, key, d_out);
  return (int)cudaGetLastError();
}
