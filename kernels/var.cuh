/*
** var.cuh — the exact square's device pieces that kernels/var.cu (gak_var)
** and kernels/cache_stat.cu (gak_cache_sq, issue 39) share: 32-bit digits
** added with 64-bit atomics (shared or global memory), a double split into
** its integer mantissa and exponent, the exact square of a double or an
** int64, and the TwoSum cascade of an expansion with its overflow rule
** (gak_var_absorb).  var.cu's header says why
** each piece is exact (its rules 1 and 2).
*/
#ifndef GAK_VAR_CUH
#define GAK_VAR_CUH

#include <stdint.h>

#include "gak.h"

#define GAK_VAR_LEVELS 3

/* m * 2^pos (m < 2^64) into 32-bit digits acc[pos>>5 ..], exact; neg
** subtracts (two's complement atomics). */
__device__ __forceinline__ void gak_var_add64(unsigned long long *acc,
                                              uint64_t m, int pos, bool neg) {
  int k = pos >> 5, sh = pos & 31;
  uint64_t lo = (m & 0xffffffffull) << sh, hi = (m >> 32) << sh;
  uint64_t d[3] = {lo & 0xffffffffull, (lo >> 32) + (hi & 0xffffffffull),
                   hi >> 32};
#pragma unroll
  for (int i = 0; i < 3; i++)
    if (d[i])
      atomicAdd(acc + k + i, neg ? 0ull - d[i] : d[i]);
}

/* (mhi * 2^64 + mlo) * 2^pos into 32-bit digits, exact (5 digits). */
__device__ __forceinline__ void
gak_var_add128(unsigned long long *acc, uint64_t mlo, uint64_t mhi, int pos) {
  int k = pos >> 5, sh = pos & 31;
  uint64_t c[4] = {mlo & 0xffffffffull, mlo >> 32, mhi & 0xffffffffull,
                   mhi >> 32};
  uint64_t carry = 0;
#pragma unroll
  for (int j = 0; j < 4; j++) {
    uint64_t s = c[j] << sh; /* < 2^63 */
    uint64_t d = carry + (s & 0xffffffffull);
    carry = s >> 32;
    if (d)
      atomicAdd(acc + k + j, d);
  }
  if (carry)
    atomicAdd(acc + k + 4, carry);
}

/* A finite double x = m * 2^(p - 1074): m and p (p = biased exponent - 1,
** 0 for subnormals); false for +-0. */
__device__ __forceinline__ bool gak_var_split(double x, uint64_t &m, int &p) {
  uint64_t b = (uint64_t)__double_as_longlong(x);
  int e = (int)((b >> 52) & 0x7ff);
  m = b & ((1ull << 52) - 1);
  if (e == 0) {
    p = 0;
    return m != 0;
  }
  m |= 1ull << 52;
  p = e - 1;
  return true;
}

/* Finite x into Σx's digits (weight 2^-1074 at bit 0). */
__device__ __forceinline__ void gak_var_sacc(unsigned long long *acc,
                                             double x) {
  uint64_t m;
  int p;
  if (gak_var_split(x, m, p))
    gak_var_add64(acc, m, p, x < 0);
}

/* Finite double c (a part of Σx²) into Σx²'s digits: 2^-1074 is bit 1074
** of the 2^-2148 grid. */
__device__ __forceinline__ void gak_var_sqacc(unsigned long long *acc,
                                              double c) {
  uint64_t m;
  int p;
  if (gak_var_split(c, m, p))
    gak_var_add64(acc, m, p + (GA_XSQ_BIAS - GA_XACC_BIAS), c < 0);
}

/* x's exact square (m² at bit 2p) into Σx²'s digits. */
__device__ __forceinline__ void gak_var_sq_exact(unsigned long long *acc,
                                                 double x) {
  uint64_t m;
  int p;
  if (gak_var_split(x, m, p))
    gak_var_add128(acc, m * m, __umul64hi(m, m), 2 * p);
}

__device__ __forceinline__ bool gak_var_finite(double x) {
  return (((uint64_t)__double_as_longlong(x) >> 52) & 0x7ff) != 0x7ff;
}

/* TwoSum cascade; returns the residual (rule 1). */
__device__ __forceinline__ double gak_var_expand(double (&s)[GAK_VAR_LEVELS],
                                                 double x) {
#pragma unroll
  for (int l = 0; l < GAK_VAR_LEVELS; l++) {
    double t = __dadd_rn(s[l], x);
    double bb = __dsub_rn(t, s[l]);
    double e = __dadd_rn(__dsub_rn(s[l], __dsub_rn(t, bb)), __dsub_rn(x, bb));
    s[l] = t;
    x = e;
  }
  return x;
}

/* Finite c into expansion s (rule 1): returns what s cannot hold, for the
** caller's digits (0.0: nothing): the cascade's residual, or, where the
** residual or a component would not be finite, c itself with s as it was
** (var.cu and cache_stat.cu both add it exactly to their digits). */
__device__ __forceinline__ double gak_var_absorb(double (&s)[GAK_VAR_LEVELS],
                                                 double c) {
  double old[GAK_VAR_LEVELS];
#pragma unroll
  for (int l = 0; l < GAK_VAR_LEVELS; l++)
    old[l] = s[l];
  double r = gak_var_expand(s, c);
  if (r == 0.0)
    return 0.0;
  bool ok = gak_var_finite(r);
#pragma unroll
  for (int l = 0; l < GAK_VAR_LEVELS; l++)
    ok = ok && gak_var_finite(s[l]);
  if (!ok) {
#pragma unroll
    for (int l = 0; l < GAK_VAR_LEVELS; l++)
      s[l] = old[l];
    r = c;
  }
  return r;
}

#endif
