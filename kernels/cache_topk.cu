/*
** cache_topk.cu — ORDER BY an aggregate ... LIMIT k over many groups, on
** the column cache's sorted layout (kernels/gak.h, "ORDER BY an aggregate
** ... LIMIT k"; issue 20: bench/query_bench.py's d2, 2.1 million groups).
**
** Rules:
**   1. Only the order: each group's finished sum or total is computed to
**      choose the groups, never returned.  The groups chosen get their
**      full exact states from gak_cache_reduce afterwards, and SQLite
**      orders them, so a key only has to order as SQLite's value does:
**      a correctly rounded value does (rounding is monotonic), and so do
**      ties, which the choice keeps whole.
**   2. Exact: a group's REALs add as 128-bit fixed-point integers into a
**      192-bit sum, in units of 2^(wb - 1074) with wb 63 binades below the
**      group's largest position (ga_partial.h's positions), one thread a
**      group; the sum is rounded once, to nearest even, with a sticky
**      bit.  INTEGERs add as int64.  What this cannot do exactly is
**      declined, never approximated (gak.h lists it): the host then takes
**      another path.
**   3. Keys: 0 for a group without rows, 1 for a NULL sum, then numbers
**      as unsigned 64-bit keys in their order (+0.0 for -0.0: SQLite
**      finds them equal); ascending queries complement the keys of groups
**      with rows, so one descending radix sort (CUB) serves both.
**   4. Every launch reports its own error (cudaGetLastError).
*/
#include <cub/device/device_radix_sort.cuh>
#include <stdint.h>

#include "gak.h"

#define CT 256
#define MAX_GRID 65535
#define TOP 0x8000000000000000ull

static size_t al256(size_t n) { return (n + 255) & ~(size_t)255; }

static int grid_for(long long items) {
  long long g = (items + CT - 1) / CT;
  return g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : (int)g;
}

__device__ __forceinline__ bool bit_of(const uint64_t *w, long long i) {
  return (w[i >> 6] >> (i & 63)) & 1;
}

/* Rule 3: a double's key (d not NaN). */
__device__ __forceinline__ uint64_t real_key(double d) {
  uint64_t u = (uint64_t)__double_as_longlong(d == 0.0 ? 0.0 : d);
  return (u & TOP) ? ~u : (u | TOP);
}

/* 192-bit two's complement: s += x (128-bit, shifted m), negated when neg */
__device__ __forceinline__ void add192(uint64_t s[3], uint64_t lo, uint64_t hi,
                                       bool neg) {
  uint64_t x2 = 0;
  if (neg) { /* -(hi:lo) over 192 bits */
    lo = ~lo + 1;
    hi = ~hi + (lo == 0);
    x2 = ~0ull + (lo == 0 && hi == 0);
  }
  uint64_t n0 = s[0] + lo;
  uint64_t c0 = n0 < lo;
  uint64_t n1 = s[1] + hi;
  uint64_t c1 = n1 < hi;
  n1 += c0;
  c1 += n1 < c0;
  s[0] = n0;
  s[1] = n1;
  s[2] += x2 + c1;
}

/* Rule 2: |s| * 2^(wb - 1074), rounded to nearest even; false when the
** result is not a normal double (subnormal, or past the largest). */
__device__ bool round192(const uint64_t s_in[3], int wb, double *out) {
  uint64_t s[3] = {s_in[0], s_in[1], s_in[2]};
  bool neg = (long long)s[2] < 0;
  if (neg) {
    s[0] = ~s[0] + 1;
    uint64_t c = s[0] == 0;
    s[1] = ~s[1] + c;
    c = c && s[1] == 0;
    s[2] = ~s[2] + c;
  }
  int w = s[2] ? 2 : s[1] ? 1 : s[0] ? 0 : -1;
  if (w < 0) {
    *out = 0.0;
    return true;
  }
  int h = 64 * w + 63 - __clzll((long long)s[w]); /* the top bit */
  uint64_t t;
  int shift = h > 63 ? h - 63 : 0;
  if (!shift) {
    t = s[0];
  } else { /* 64 bits from the top one down, lower ones as a sticky bit */
    int q = shift >> 6, r = shift & 63;
    uint64_t a = s[q], b = q + 1 < 3 ? s[q + 1] : 0;
    t = r ? (a >> r) | (b << (64 - r)) : a;
    bool sticky = r && (a & ((1ull << r) - 1));
    for (int k = 0; k < q; k++)
      sticky |= s[k] != 0;
    t |= sticky;
  }
  double d = __ull2double_rn(t); /* 64 > 53 + 2 bits: one correct rounding */
  int e = shift + wb - 1074;
  /* d * 2^e is exact unless it leaves the normal range: d < 2^64 */
  int de;
  frexp(d, &de); /* d = f * 2^de, f in [0.5, 1) */
  if (de + e > 1024 || de + e < -1021)
    return false;
  d = ldexp(d, e);
  *out = neg ? -d : d;
  return true;
}

__global__ void __launch_bounds__(CT)
    k_group_order(const gak_ccol x, const uint32_t *idx, const uint32_t *start,
                  const uint32_t *end, long long ng, int mode, int desc,
                  uint64_t *key, uint32_t *flag) {
  const bool want_int = (mode & GAK_ORDER_REAL) == 0;
  const bool total = (mode & GAK_ORDER_TOTAL) != 0;
  for (long long g = (long long)blockIdx.x * CT + threadIdx.x; g < ng;
       g += (long long)gridDim.x * CT) {
    uint32_t a = start[g], b = end[g];
    if (a >= b) {
      key[g] = 0;
      continue;
    }
    bool bad = false;
    long long isum = 0;
    int top = -1;
    unsigned nn = 0;
    for (uint32_t p = a; p < b; p++) { /* kinds, the int sum, the top */
      long long i = idx ? (long long)idx[p] : (long long)p;
      if (!bit_of(x.notnull, i))
        continue;
      nn++;
      uint64_t v = x.vals[i];
      if (bit_of(x.isint, i) != want_int) {
        bad = true;
      } else if (want_int) {
        /* wraps past 2^63 (unsigned): then outside 2^62 either way */
        isum = (long long)((uint64_t)isum + v);
        long long y = (long long)v;
        if (y > (1ll << 62) || y < -(1ll << 62) || isum > (1ll << 62) ||
            isum < -(1ll << 62))
          bad = true;
      } else {
        int e = (int)((v >> 52) & 0x7ff);
        uint64_t m = v & ((1ull << 52) - 1);
        if (e == 0x7ff)
          bad = true;
        else if (e || m)
          top = max(top, e ? e - 1 : 0);
      }
    }
    double d = 0.0;
    bool null = nn == 0 && !total;
    if (!bad && !null && want_int) {
      d = __ll2double_rn(isum);
    } else if (!bad && !null && top >= 0) {
      int wb = top > 63 ? top - 63 : 0;
      uint64_t s[3] = {0, 0, 0};
      for (uint32_t p = a; p < b; p++) {
        long long i = idx ? (long long)idx[p] : (long long)p;
        if (!bit_of(x.notnull, i))
          continue;
        uint64_t v = x.vals[i];
        int e = (int)((v >> 52) & 0x7ff);
        uint64_t m = v & ((1ull << 52) - 1);
        if (!e && !m)
          continue;
        int pos = e ? e - 1 : 0;
        if (e)
          m |= 1ull << 52;
        int sh = pos - wb;
        if (sh < 0) {
          bad = true; /* more than 64 binades below the top */
          break;
        }
        uint64_t lo = m << sh, hi = sh ? m >> (64 - sh) : 0;
        add192(s, lo, hi, (v >> 63) != 0);
      }
      if (!bad && !round192(s, wb, &d))
        bad = true;
    }
    if (bad) {
      atomicOr(flag, 1u);
      key[g] = 0;
      continue;
    }
    uint64_t k = null                 ? 1ull
                 : want_int && !total ? ((uint64_t)isum ^ TOP)
                                      : real_key(d);
    key[g] = desc ? k : ~k;
  }
}

extern "C" int gak_cache_group_order(gak_ccol x, const uint32_t *d_idx,
                                     const uint32_t *d_start,
                                     const uint32_t *d_end, int64_t ngroups,
                                     int mode, int desc, uint64_t *d_key,
                                     uint32_t *d_flag, gak_stream s) {
  if (ngroups < 0 || mode < 0 || mode > (GAK_ORDER_REAL | GAK_ORDER_TOTAL))
    return (int)cudaErrorInvalidValue;
  if (ngroups == 0)
    return (int)cudaSuccess;
  k_group_order<<<grid_for(ngroups), CT, 0, (cudaStream_t)s>>>(
      x, d_idx, d_start, d_end, ngroups, mode, desc, d_key, d_flag);
  return (int)cudaGetLastError();
}

/* ---- the choice ---- */

__global__ void k_iota(uint32_t *ids, long long n) {
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < n;
       j += (long long)gridDim.x * CT)
    ids[j] = (uint32_t)j;
}

/* One thread: how many sorted keys are at least the k-th (at least 1: the
** groups with rows), by binary search over the descending keys. */
__global__ void k_count_top(const uint64_t *sorted, long long n, long long k,
                            long long *count) {
  uint64_t t = sorted[(k < n ? k : n) - 1];
  if (t == 0)
    t = 1;
  long long lo = 0, hi = n; /* the first position with a key below t */
  while (lo < hi) {
    long long mid = (lo + hi) >> 1;
    if (sorted[mid] >= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  *count = lo;
}

__global__ void k_take_top(const uint32_t *ids_sorted, const uint32_t *start,
                           const uint32_t *end, const long long *count,
                           long long cap, uint32_t *ids, uint32_t *bounds) {
  long long c = *count < cap ? *count : cap;
  for (long long j = (long long)blockIdx.x * CT + threadIdx.x; j < c;
       j += (long long)gridDim.x * CT) {
    uint32_t g = ids_sorted[j];
    ids[j] = g;
    bounds[2 * j] = start[g];
    bounds[2 * j + 1] = end[g];
  }
}

static size_t sort_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairsDescending(
      (void *)NULL, bytes, (const uint64_t *)NULL, (uint64_t *)NULL,
      (const uint32_t *)NULL, (uint32_t *)NULL, (int)n);
  return bytes;
}

extern "C" size_t gak_cache_topk_scratch(int64_t ngroups) {
  int64_t n = ngroups < 1 ? 1 : ngroups;
  return al256((size_t)n * 8) + 2 * al256((size_t)n * 4) + al256(sort_bytes(n));
}

extern "C" int gak_cache_topk(const uint64_t *d_key, const uint32_t *d_start,
                              const uint32_t *d_end, int64_t ngroups, int64_t k,
                              int64_t cap, uint32_t *d_ids, uint32_t *d_bounds,
                              int64_t *d_count, void *d_scratch,
                              gak_stream st) {
  cudaStream_t s = (cudaStream_t)st;
  if (ngroups < 1 || ngroups > 0x7fffffffll || k < 1 || cap < 0)
    return (int)cudaErrorInvalidValue;
  char *p = (char *)d_scratch;
  uint64_t *keys = (uint64_t *)p;
  p += al256((size_t)ngroups * 8);
  uint32_t *ids_in = (uint32_t *)p;
  p += al256((size_t)ngroups * 4);
  uint32_t *ids_sorted = (uint32_t *)p;
  p += al256((size_t)ngroups * 4);
  size_t bytes = sort_bytes(ngroups);
  k_iota<<<grid_for(ngroups), CT, 0, s>>>(ids_in, ngroups);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return (int)err;
  err = cub::DeviceRadixSort::SortPairsDescending(
      p, bytes, d_key, keys, ids_in, ids_sorted, (int)ngroups, 0, 64, s);
  if (err != cudaSuccess)
    return (int)err;
  k_count_top<<<1, 1, 0, s>>>(keys, ngroups, k, (long long *)d_count);
  k_take_top<<<grid_for(cap < ngroups ? cap : ngroups), CT, 0, s>>>(
      ids_sorted, d_start, d_end, (const long long *)d_count, cap, d_ids,
      d_bounds);
  return (int)cudaGetLastError();
}
