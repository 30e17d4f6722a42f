/*
** var.cu — gak_var (kernels/gak.h, issue 39): the exact (n, Σx, Σx²) of a
** column for the variance, written as gak_sum's partial plus Σx²'s digits
** (base/ga_partial.h, GA_XSQ_*).
**
** Each thread keeps two floating-point expansions in registers, as gak_sum
** does (reduce.cu): s1 for Σx and s2 for Σx².  A square enters s2 as the
** error-free product hi = x*x, lo = fma(x, x, -hi), which is exact while
** 2^-480 <= |x| < 2^500 (lo is a multiple of 2^-1064, hi below 2^1000);
** any other x, and every int64, is squared as a 128-bit integer and added
** exactly into the block's Σx² digits in shared memory (the window
** 2^-2148 .. that a double-double cannot reach).  A TwoSum cascade's
** residual (the bits the expansion cannot hold) goes exactly into the
** block's digits too; an overflow of an expansion (r or a component
** non-finite) restores it and adds the value exactly instead.  At the end
** warps merge their expansions by shuffles with the same careful adds,
** lane 0 spills the components into the digits, and each block adds its
** non-zero digits to the zeroed output with 64-bit atomics.  Digits are
** integers, so the result does not depend on the order, and after
** normalisation equals engine/reduce/xvar.c's ga_var_add_* over the same
** values (tests: bench/var_kernel.cu --test).
**
** Rules:
**   1. No contraction: __dadd_rn/__dsub_rn/__dmul_rn everywhere, and the
**      one fused operation is the explicit __fma_rn of the exact product.
**   2. Every per-value digit add is below 2^33 per digit (xacc.h), so
**      GA_XACC_SAFE_ADDS values fit in one call.
*/
#include <stdint.h>

#include "gak.h"
#include "var.cuh"

#define GAK_VAR_THREADS 256
#define GAK_VAR_MAX_GRID 2048
/* Values loaded per thread before the first is added (tuning only). */
#define GAK_VAR_ILP 4

struct gak_var_shared {
  unsigned long long sacc[GA_XACC_DIGITS];
  unsigned long long sq[GA_XSQ_DIGITS];
  /* ilo, ihi, nint, nreal, npinf, nninf, nnan: ga_sum_partial's order */
  unsigned long long cnt[7];
};

/* Add finite c to expansion s exactly: the residual into digits (into the
** Σx digits when sq is false, else Σx²'s); on overflow s stays and c goes
** into the digits whole. */
__device__ __forceinline__ void gak_var_part(double (&s)[GAK_VAR_LEVELS],
                                             gak_var_shared &sh, double c,
                                             bool sq) {
  double r = gak_var_absorb(s, c);
  if (r == 0.0)
    return;
  if (sq)
    gak_var_sqacc(sh.sq, r);
  else
    gak_var_sacc(sh.sacc, r);
}

struct gak_var_thread {
  double s1[GAK_VAR_LEVELS], s2[GAK_VAR_LEVELS];
  unsigned long long lo;
  long long hi;
  unsigned nint, npinf, nninf, nnan;
};

__device__ __forceinline__ void gak_var_real(gak_var_thread &t,
                                             gak_var_shared &sh, double x) {
  uint64_t b = (uint64_t)__double_as_longlong(x);
  int e = (int)((b >> 52) & 0x7ff);
  if (e == 0x7ff) {
    if (b & ((1ull << 52) - 1))
      t.nnan++;
    else if (b >> 63)
      t.nninf++;
    else
      t.npinf++;
    return;
  }
  gak_var_part(t.s1, sh, x, false);
  if (e >= 1023 - 480 && e < 1023 + 500) { /* the exact product holds */
    double hi = __dmul_rn(x, x);
    double lo = __fma_rn(x, x, -hi);
    gak_var_part(t.s2, sh, hi, true);
    gak_var_part(t.s2, sh, lo, true);
  } else {
    gak_var_sq_exact(sh.sq, x);
  }
}

__device__ __forceinline__ void gak_var_int(gak_var_thread &t,
                                            gak_var_shared &sh, uint64_t w) {
  t.nint++;
  t.lo += (uint32_t)w;
  t.hi += (long long)w >> 32;
  long long v = (long long)w;
  uint64_t u = v < 0 ? 0ull - (uint64_t)v : (uint64_t)v;
  gak_var_add128(sh.sq, u * u, __umul64hi(u, u), GA_XSQ_BIAS);
}

/* Whether value i is an int64 in the layout (kernels/gak.h). */
template <int LAYOUT>
__device__ __forceinline__ bool
gak_var_isint(const uint64_t *__restrict__ isint, int64_t i) {
  return LAYOUT == GA_LAYOUT_INT ||
         (LAYOUT == GA_LAYOUT_MIXED &&
          ((__ldg(isint + (i >> 6)) >> (i & 63)) & 1));
}

template <int LAYOUT>
__global__ void __launch_bounds__(GAK_VAR_THREADS)
    gak_var_kernel(const uint64_t *__restrict__ v,
                   const uint64_t *__restrict__ isint, int64_t n,
                   ga_sum_partial *out, unsigned long long *osq) {
  __shared__ gak_var_shared sh;
  for (int i = threadIdx.x; i < GA_XACC_DIGITS; i += blockDim.x)
    sh.sacc[i] = 0;
  for (int i = threadIdx.x; i < GA_XSQ_DIGITS; i += blockDim.x)
    sh.sq[i] = 0;
  if (threadIdx.x < 7)
    sh.cnt[threadIdx.x] = 0;
  __syncthreads();
  gak_var_thread t;
#pragma unroll
  for (int l = 0; l < GAK_VAR_LEVELS; l++)
    t.s1[l] = t.s2[l] = 0.0;
  t.lo = 0;
  t.hi = 0;
  t.nint = t.npinf = t.nninf = t.nnan = 0;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  /* GAK_VAR_ILP loads issued before any of their values is used: the
  ** expansions' dependent adds are long, and one load in flight per
  ** thread left the kernel latency-bound at 40% of CUB's sum of squares
  ** (bench/RESULTS.md §26).  The order of the adds does not matter: every
  ** residual lands in integer digits. */
  for (; i + (GAK_VAR_ILP - 1) * stride < n; i += GAK_VAR_ILP * stride) {
    uint64_t w[GAK_VAR_ILP];
    bool is_int[GAK_VAR_ILP];
#pragma unroll
    for (int k = 0; k < GAK_VAR_ILP; k++)
      w[k] = __ldg(v + i + k * stride);
#pragma unroll
    for (int k = 0; k < GAK_VAR_ILP; k++)
      is_int[k] = gak_var_isint<LAYOUT>(isint, i + k * stride);
#pragma unroll
    for (int k = 0; k < GAK_VAR_ILP; k++) {
      if (is_int[k])
        gak_var_int(t, sh, w[k]);
      else
        gak_var_real(t, sh, __longlong_as_double((long long)w[k]));
    }
  }
  for (; i < n; i += stride) {
    uint64_t w = __ldg(v + i);
    if (gak_var_isint<LAYOUT>(isint, i))
      gak_var_int(t, sh, w);
    else
      gak_var_real(t, sh, __longlong_as_double((long long)w));
  }
  /* warp level: merge the expansions exactly */
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    double o1[GAK_VAR_LEVELS], o2[GAK_VAR_LEVELS];
#pragma unroll
    for (int l = 0; l < GAK_VAR_LEVELS; l++) {
      o1[l] = __shfl_down_sync(0xffffffffu, t.s1[l], off);
      o2[l] = __shfl_down_sync(0xffffffffu, t.s2[l], off);
    }
    if (lane < off) {
#pragma unroll
      for (int l = 0; l < GAK_VAR_LEVELS; l++) {
        gak_var_part(t.s1, sh, o1[l], false);
        gak_var_part(t.s2, sh, o2[l], true);
      }
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int l = 0; l < GAK_VAR_LEVELS; l++) {
      gak_var_sacc(sh.sacc, t.s1[l]);
      gak_var_sqacc(sh.sq, t.s2[l]);
    }
  }
  unsigned long long c[7] = {
      t.lo, (unsigned long long)t.hi, t.nint, 0, t.npinf, t.nninf, t.nnan};
#pragma unroll
  for (int k = 0; k < 7; k++)
    if (k != 3 && c[k])
      atomicAdd(&sh.cnt[k], c[k]);
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    /* nreal: every value that is not an int64 (Inf included) */
    if (LAYOUT == GA_LAYOUT_REAL)
      atomicAdd(&sh.cnt[3], (unsigned long long)n);
    else if (LAYOUT == GA_LAYOUT_MIXED)
      atomicAdd(&sh.cnt[3], (unsigned long long)n);
  }
  __syncthreads();
  /* nreal of the mixed layout is n - nint over the whole grid: block 0
  ** added n, each block subtracts its integers */
  if (LAYOUT == GA_LAYOUT_MIXED && threadIdx.x == 0 && sh.cnt[2])
    atomicAdd(&sh.cnt[3], 0ull - sh.cnt[2]);
  __syncthreads();
  unsigned long long *oacc = reinterpret_cast<unsigned long long *>(out->acc);
  unsigned long long *ocnt = reinterpret_cast<unsigned long long *>(&out->ilo);
  for (int i = threadIdx.x; i < GA_XACC_DIGITS + 7 + GA_XSQ_DIGITS;
       i += blockDim.x) {
    if (i < GA_XACC_DIGITS) {
      if (sh.sacc[i])
        atomicAdd(oacc + i, sh.sacc[i]);
    } else if (i < GA_XACC_DIGITS + 7) {
      unsigned long long x = sh.cnt[i - GA_XACC_DIGITS];
      if (x)
        atomicAdd(ocnt + (i - GA_XACC_DIGITS), x);
    } else {
      unsigned long long x = sh.sq[i - GA_XACC_DIGITS - 7];
      if (x)
        atomicAdd(osq + (i - GA_XACC_DIGITS - 7), x);
    }
  }
}

int gak_var(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_sum, int64_t *d_sq,
            gak_stream stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (n < 0 || n > GA_XACC_SAFE_ADDS || layout < GA_LAYOUT_INT ||
      layout > GA_LAYOUT_MIXED)
    return (int)cudaErrorInvalidValue;
  cudaError_t e = cudaMemsetAsync(d_sum, 0, sizeof(ga_sum_partial), s);
  if (e == cudaSuccess)
    e = cudaMemsetAsync(d_sq, 0, sizeof(int64_t) * GA_XSQ_DIGITS, s);
  if (e != cudaSuccess || n == 0)
    return (int)e;
  int dev = 0, sms = 1;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess)
    sms = 1;
  int64_t g = (int64_t)sms * 4;
  int64_t need = (n + GAK_VAR_THREADS * 8 - 1) / (GAK_VAR_THREADS * 8);
  if (g > need)
    g = need;
  if (g > GAK_VAR_MAX_GRID)
    g = GAK_VAR_MAX_GRID;
  if (g < 1)
    g = 1;
  unsigned long long *osq = reinterpret_cast<unsigned long long *>(d_sq);
  if (layout == GA_LAYOUT_INT)
    gak_var_kernel<GA_LAYOUT_INT>
        <<<(int)g, GAK_VAR_THREADS, 0, s>>>(d_vals, d_isint, n, d_sum, osq);
  else if (layout == GA_LAYOUT_REAL)
    gak_var_kernel<GA_LAYOUT_REAL>
        <<<(int)g, GAK_VAR_THREADS, 0, s>>>(d_vals, d_isint, n, d_sum, osq);
  else
    gak_var_kernel<GA_LAYOUT_MIXED>
        <<<(int)g, GAK_VAR_THREADS, 0, s>>>(d_vals, d_isint, n, d_sum, osq);
  return (int)cudaGetLastError();
}
