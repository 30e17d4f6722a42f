/*
** reduce.cu — gak_scratch_bytes, gak_sum and gak_best (kernels/gak.h) on the
** framework of reduce.cuh, writing the partials of base/ga_partial.h.
**
** Exact f64 sum.  Each thread keeps a floating-point expansion of L doubles
** in registers: adding x runs a TwoSum cascade, s[0] += x, then the rounding
** error into s[1], and so on; whatever is left after s[L-1] is a residual r,
** and old sum + x == s[0] + ... + s[L-1] + r exactly.  When r == 0 (nearly
** always: level 1 catches the bits that fall off level 0 and has 53 bits of
** room for them) nothing else happens, so the hot loop is 6L DADDs and one
** compare per value, well under the FP64 rate needed at HBM speed.  A
** non-zero residual goes exactly into a per-block superaccumulator in shared
** memory (ga_partial.h's digits, 64-bit shared atomics).  An overflow or an
** Inf/NaN input makes r NaN, so the same single test catches it; that path
** restores the expansion and adds the input exactly (or counts it).  The
** hot loop tests a whole tile and redoes it carefully when any value of it
** failed, so the common case carries no per-value branch.  At the end the
** warp merges expansions by shuffles (the same careful add), lane 0 spills its
** components into the block's digits, and the block adds its non-zero
** digits to the output with global 64-bit atomics.  Digits are integers, so
** the result is independent of order and equals the CPU's after
** ga_sum_normalize.
*/
#include <cuda/atomic>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "gak.h"
#include "reduce.cuh"

/* Tuning (bench/kernels measures the alternatives; see bench/RESULTS). */
typedef gak_policy<256, 8, 4> gak_policy0;  /* default for every op */
typedef gak_policy<256, 8, 6> gak_policy1;  /* more resident warps */
typedef gak_policy<256, 16, 3> gak_policy2; /* more loads in flight */
#define GAK_REAL_LEVELS 2
/* The int64 sum and max/min use policy 2 (16 items per thread, 3 blocks
** per SM): on the H200 it was the fastest of the three at 1 GiB (within 1%)
** and at 1080x1920 (by 5-9% for max/min); the exact real sums use policy 0,
** whose 64-register budget their expansions need. */
#define GAK_INT_SUM_POLICY 2
#define GAK_BEST_POLICY 2

/* --------------------------------------------------- superaccumulator */

/* Add finite x exactly into digits acc[] (ga_partial.h's layout):
** m * 2^(p - 1074) goes into digits p>>5 .. (p>>5)+2 as 32-bit pieces of
** m << (p & 31); a negative x subtracts them (two's complement atomics). */
__device__ __forceinline__ void gak_sacc_add(unsigned long long *acc,
                                             double x) {
  uint64_t b = (uint64_t)__double_as_longlong(x);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & ((1ull << 52) - 1);
  if (e == 0) {
    if (m == 0)
      return; /* +-0 */
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  int k = e >> 5, sh = e & 31;
  uint64_t lo = m << sh;
  uint64_t d[3] = {lo & 0xffffffffull, lo >> 32, sh ? (m >> (64 - sh)) : 0};
  bool neg = (b >> 63) != 0;
#pragma unroll
  for (int i = 0; i < 3; i++)
    if (d[i])
      atomicAdd(acc + k + i, neg ? 0ull - d[i] : d[i]);
}

/* TwoSum cascade through the expansion; returns the residual.  __dadd_rn
** and __dsub_rn are never contracted or reassociated. */
template <int L>
__device__ __forceinline__ double gak_expand(double (&s)[L], double x) {
#pragma unroll
  for (int l = 0; l < L; l++) {
    double t = __dadd_rn(s[l], x);
    double bb = __dsub_rn(t, s[l]);
    double e = __dadd_rn(__dsub_rn(s[l], __dsub_rn(t, bb)), __dsub_rn(x, bb));
    s[l] = t;
    x = e;
  }
  return x;
}

__device__ __forceinline__ bool gak_finite(double x) {
  return (((uint64_t)__double_as_longlong(x) >> 52) & 0x7ff) != 0x7ff;
}

/* ------------------------------------------------------------- sum op */

struct gak_sum_shared {
  unsigned long long acc[GA_XACC_DIGITS];
  /* ilo, ihi, nint, nreal, npinf, nninf, nnan: ga_sum_partial's order */
  unsigned long long cnt[7];
  unsigned deferred; /* a warp of this block deferred a tile */
};

template <int LAYOUT, int L> struct gak_sum_op {
  ga_sum_partial *out;
  const uint64_t *isint;
  int64_t n;
  /* Deferred warp tiles (d_scratch; NULL: redo them here, value by value).
  ** Each warp of each block owns a list: the tile numbers it deferred, at
  ** lists[nlists + list * cap + i], and their count at lists[list] (list =
  ** block * WARPS + warp, written by every warp at its end, so nothing
  ** needs zeroing but *any, set by a block that deferred something).  No
  ** atomics and no stores per tile: wide data defers nearly every tile, and
  ** typical data none. */
  unsigned *any;
  unsigned *lists;
  long long cap; /* entries per list: ceil(tiles / grid) */

  struct thread_state {
    double s[L];           /* the expansion (reals) */
    unsigned long long lo; /* sum of low halves (ints) */
    long long hi;          /* sum of high halves */
    unsigned nint, nseen, npinf, nninf, nnan;
    unsigned ndef; /* warp tiles deferred (the same in every lane) */
  };
  typedef gak_sum_shared shared_state;

  __device__ __forceinline__ void init(thread_state &st,
                                       shared_state &sh) const {
#pragma unroll
    for (int l = 0; l < L; l++)
      st.s[l] = 0.0;
    st.lo = 0;
    st.hi = 0;
    st.nint = st.nseen = st.npinf = st.nninf = st.nnan = 0;
    st.ndef = 0;
    for (int i = threadIdx.x; i < GA_XACC_DIGITS; i += blockDim.x)
      sh.acc[i] = 0;
    if (threadIdx.x < 7)
      sh.cnt[threadIdx.x] = 0;
    if (threadIdx.x == 0)
      sh.deferred = 0;
    __syncthreads();
  }

  __device__ __forceinline__ void add_int(thread_state &st, uint64_t w) const {
    st.lo += (uint32_t)w;
    st.hi += (long long)w >> 32;
  }

  /* Exact add of one real, any value: the slow parts are rare. */
  __device__ __forceinline__ void add_real(thread_state &st, shared_state &sh,
                                           double x) const {
    double old[L];
#pragma unroll
    for (int l = 0; l < L; l++)
      old[l] = st.s[l];
    double r = gak_expand<L>(st.s, x);
    if (r != 0.0) { /* residual, overflow, or Inf/NaN input (r is NaN) */
      bool ok = gak_finite(r);
#pragma unroll
      for (int l = 0; l < L; l++)
        ok = ok && gak_finite(st.s[l]);
      if (ok) {
        gak_sacc_add(sh.acc, r);
      } else {
#pragma unroll
        for (int l = 0; l < L; l++)
          st.s[l] = old[l];
        uint64_t b = (uint64_t)__double_as_longlong(x);
        if (gak_finite(x))
          gak_sacc_add(sh.acc, x); /* the running sum overflowed */
        else if (b & ((1ull << 52) - 1))
          st.nnan++;
        else if (b >> 63)
          st.nninf++;
        else
          st.npinf++;
      }
    }
  }

  template <class P>
  __device__ __forceinline__ void tile(thread_state &st, shared_state &sh,
                                       const uint64_t (&w)[P::ITEMS],
                                       int64_t e0) const {
    if (LAYOUT == GA_LAYOUT_INT) {
#pragma unroll
      for (int k = 0; k < P::ITEMS; k++)
        add_int(st, w[k]);
    } else {
      double save[L];
#pragma unroll
      for (int l = 0; l < L; l++)
        save[l] = st.s[l];
      bool bad = false;
      unsigned bits = 0; /* bit k: word k is an int64 (mixed layout) */
      if (LAYOUT == GA_LAYOUT_MIXED) {
#pragma unroll
        for (int k = 0; k < P::ITEMS; k += 2) {
          /* a pair of words shares one bitmap word (a warp's 64 words are
          ** exactly one) unless the start was unaligned (head == 1) and
          ** the pair straddles two bitmap words */
          int64_t e = e0 + (int64_t)(k / 2) * 2 * P::BLOCK_THREADS;
          uint64_t bw = __ldg(isint + (e >> 6));
          unsigned b0 = (unsigned)(bw >> (e & 63)) & 1u;
          unsigned b1 = ((e + 1) & 63)
                            ? (unsigned)(bw >> ((e + 1) & 63)) & 1u
                            : (unsigned)__ldg(isint + ((e + 1) >> 6)) & 1u;
          bits |= (b0 | (b1 << 1)) << k;
        }
        st.nint += __popc(bits);
        st.nseen += P::ITEMS;
      }
#pragma unroll
      for (int k = 0; k < P::ITEMS; k++) {
        double x = __longlong_as_double((long long)w[k]);
        if (LAYOUT == GA_LAYOUT_MIXED) {
          /* branch-free: an int adds 0.0 to the reals, a real 0 to ints */
          bool isint = (bits >> k) & 1;
          add_int(st, isint ? w[k] : 0);
          x = isint ? 0.0 : x;
        }
        bad |= gak_expand<L>(st.s, x) != 0.0;
      }
      /* A residual, an overflow or an Inf/NaN somewhere in the warp's
      ** tile: the whole warp takes its reals back out and hands the warp
      ** tile to gak_wide_kernel (wide-range data fails here on most tiles,
      ** and value-by-value shared atomics would cost ~14x the read).  The
      ** vote is warp-uniform: every lane of every warp runs every tile. */
      if (lists && __any_sync(0xffffffffu, bad) && st.ndef < cap) {
        if ((threadIdx.x & 31) == 0) {
          /* e0 of lane 0 = head + t * TILE + 64 * warp, head <= 1 */
          long long list =
              (long long)blockIdx.x * P::WARPS + (threadIdx.x >> 5);
          lists[(long long)gridDim.x * P::WARPS + list * cap + st.ndef] =
              (unsigned)(e0 / P::TILE);
        }
        st.ndef++;
#pragma unroll
        for (int l = 0; l < L; l++)
          st.s[l] = save[l];
        bad = false;
      }
      if (bad) { /* rare: redo the tile's reals one by one, carefully */
#pragma unroll
        for (int l = 0; l < L; l++)
          st.s[l] = save[l];
#pragma unroll
        for (int k = 0; k < P::ITEMS; k++)
          if (LAYOUT != GA_LAYOUT_MIXED || !((bits >> k) & 1))
            add_real(st, sh, __longlong_as_double((long long)w[k]));
      }
    }
  }

  __device__ __forceinline__ void one(thread_state &st, shared_state &sh,
                                      uint64_t w, int64_t e) const {
    if (LAYOUT == GA_LAYOUT_INT) {
      add_int(st, w);
    } else if (LAYOUT == GA_LAYOUT_REAL) {
      add_real(st, sh, __longlong_as_double((long long)w));
    } else {
      st.nseen++;
      if (gak_isint_bit(isint, e)) {
        st.nint++;
        add_int(st, w);
      } else {
        add_real(st, sh, __longlong_as_double((long long)w));
      }
    }
  }

  template <class P>
  __device__ __forceinline__ void finish(thread_state &st,
                                         shared_state &sh) const {
    const int lane = threadIdx.x & 31;
    if (LAYOUT != GA_LAYOUT_INT) {
      /* warp level: merge expansions exactly (residuals go to shared) */
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        double o[L];
#pragma unroll
        for (int l = 0; l < L; l++)
          o[l] = __shfl_down_sync(0xffffffffu, st.s[l], off);
        if (lane < off) {
#pragma unroll
          for (int l = 0; l < L; l++)
            add_real(st, sh, o[l]);
        }
      }
      if (lane == 0) {
#pragma unroll
        for (int l = 0; l < L; l++)
          gak_sacc_add(sh.acc, st.s[l]);
      }
      unsigned any = st.npinf | st.nninf | st.nnan;
      if (__any_sync(0xffffffffu, any != 0) && any) {
        atomicAdd(&sh.cnt[4], (unsigned long long)st.npinf);
        atomicAdd(&sh.cnt[5], (unsigned long long)st.nninf);
        atomicAdd(&sh.cnt[6], (unsigned long long)st.nnan);
      }
    }
    if (LAYOUT != GA_LAYOUT_REAL) {
      unsigned long long lo = st.lo, hi = (unsigned long long)st.hi;
      unsigned nint = st.nint, nseen = st.nseen;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        lo += __shfl_down_sync(0xffffffffu, lo, off);
        hi += __shfl_down_sync(0xffffffffu, hi, off);
        nint += __shfl_down_sync(0xffffffffu, nint, off);
        nseen += __shfl_down_sync(0xffffffffu, nseen, off);
      }
      if (lane == 0) {
        if (lo)
          atomicAdd(&sh.cnt[0], lo);
        if (hi)
          atomicAdd(&sh.cnt[1], hi);
        if (LAYOUT == GA_LAYOUT_MIXED) {
          if (nint)
            atomicAdd(&sh.cnt[2], (unsigned long long)nint);
          if (nseen != nint)
            atomicAdd(&sh.cnt[3], (unsigned long long)(nseen - nint));
        }
      }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      if (LAYOUT == GA_LAYOUT_INT)
        atomicAdd(&sh.cnt[2], (unsigned long long)n);
      if (LAYOUT == GA_LAYOUT_REAL)
        atomicAdd(&sh.cnt[3], (unsigned long long)n);
    }
    if (lists && lane == 0) {
      lists[blockIdx.x * P::WARPS + (threadIdx.x >> 5)] = st.ndef;
      if (st.ndef)
        sh.deferred = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0 && sh.deferred)
      atomicOr(any, 1u);
    /* device level: integer atomics into the zeroed output */
    unsigned long long *oacc = reinterpret_cast<unsigned long long *>(out->acc);
    unsigned long long *ocnt =
        reinterpret_cast<unsigned long long *>(&out->ilo);
    for (int i = threadIdx.x; i < GA_XACC_DIGITS + 7; i += blockDim.x) {
      unsigned long long v =
          i < GA_XACC_DIGITS ? sh.acc[i] : sh.cnt[i - GA_XACC_DIGITS];
      if (v)
        atomicAdd(i < GA_XACC_DIGITS ? oacc + i : ocnt + (i - GA_XACC_DIGITS),
                  v);
    }
  }
};

/* ------------------------------------------------------------ best op */

struct gak_best_item {
  long long bits;
  long long idx; /* LLONG_MAX when kind is NONE */
  int kind;
  int pad;
};

/* The total order of ga_best_partial: better value first, then smaller idx,
** NONE last.  merge() keeps whichever comes first. */
template <bool MIN> struct gak_best_merge {
  __device__ __forceinline__ gak_best_item operator()(gak_best_item a,
                                                      gak_best_item b) const {
    if (b.kind == GA_KIND_NONE)
      return a;
    if (a.kind == GA_KIND_NONE)
      return b;
    int c = gak_num_cmp(a.kind, a.bits, b.kind, b.bits);
    if (MIN)
      c = -c;
    if (c > 0 || (c == 0 && a.idx < b.idx))
      return a;
    return b;
  }
};

struct gak_best_shared {
  gak_best_item slots[32];
  int is_last;
};

template <int LAYOUT, bool MIN> struct gak_best_op {
  ga_best_partial *out;
  const uint64_t *isint;
  longlong2 *blocks; /* d_scratch: one 16-byte slot per block */
  unsigned *counter; /* d_scratch: tickets (zeroed by the launcher) */

  /* For the int and real layouts the kind is implicit; idx < 0: none yet.
  ** The mixed layout keeps the best integer (bits, idx) and the best real
  ** (rbits, ridx) apart, so its hot loop compares like with like; the two
  ** meet once, exactly, in finish(). */
  struct thread_state {
    long long bits;
    long long idx;
    long long rbits, ridx;
  };
  typedef gak_best_shared shared_state;

  __device__ __forceinline__ void init(thread_state &st, shared_state &) const {
    st.bits = 0;
    st.idx = -1;
    st.rbits = 0;
    st.ridx = -1;
  }

  __device__ __forceinline__ static bool int_better(long long a, long long b) {
    return MIN ? a < b : a > b;
  }
  __device__ __forceinline__ static bool real_better(double a, double b) {
    return MIN ? a < b : a > b;
  }

  __device__ __forceinline__ void one(thread_state &st, shared_state &,
                                      uint64_t w, int64_t e) const {
    if (LAYOUT == GA_LAYOUT_INT) {
      if (st.idx < 0 || int_better((long long)w, st.bits)) {
        st.bits = (long long)w;
        st.idx = e;
      }
    } else if (LAYOUT == GA_LAYOUT_REAL) {
      if (st.idx < 0 || real_better(__longlong_as_double((long long)w),
                                    __longlong_as_double(st.bits))) {
        st.bits = (long long)w;
        st.idx = e;
      }
    } else if (gak_isint_bit(isint, e)) {
      if (st.idx < 0 || int_better((long long)w, st.bits)) {
        st.bits = (long long)w;
        st.idx = e;
      }
    } else if (st.ridx < 0 || real_better(__longlong_as_double((long long)w),
                                          __longlong_as_double(st.rbits))) {
      st.rbits = (long long)w;
      st.ridx = e;
    }
  }

  /* The tile's best value first (max/min only, no index bookkeeping); the
  ** position is searched only when the tile beats the thread's best, which
  ** for most data happens a few times per thread. */
  template <class P>
  __device__ __forceinline__ void tile(thread_state &st, shared_state &sh,
                                       const uint64_t (&w)[P::ITEMS],
                                       int64_t e0) const {
    if (LAYOUT == GA_LAYOUT_INT) {
      long long m = (long long)w[0];
#pragma unroll
      for (int k = 1; k < P::ITEMS; k++)
        m = MIN ? min(m, (long long)w[k]) : max(m, (long long)w[k]);
      if (st.idx < 0 || int_better(m, st.bits)) {
        int first = P::ITEMS - 1;
#pragma unroll
        for (int k = P::ITEMS - 1; k >= 0; k--)
          if ((long long)w[k] == m)
            first = k;
        st.bits = m;
        st.idx =
            e0 + (int64_t)(first >> 1) * 2 * P::BLOCK_THREADS + (first & 1);
      }
    } else if (LAYOUT == GA_LAYOUT_REAL) {
      double m = __longlong_as_double((long long)w[0]);
#pragma unroll
      for (int k = 1; k < P::ITEMS; k++) {
        double x = __longlong_as_double((long long)w[k]);
        m = MIN ? fmin(m, x) : fmax(m, x);
      }
      if (st.idx < 0 || real_better(m, __longlong_as_double(st.bits))) {
        /* first word equal in value (-0.0 == 0.0): keep its own bits */
        int first = P::ITEMS - 1;
#pragma unroll
        for (int k = P::ITEMS - 1; k >= 0; k--)
          if (__longlong_as_double((long long)w[k]) == m)
            first = k;
        long long b = (long long)w[0];
#pragma unroll
        for (int k = 1; k < P::ITEMS; k++)
          if (k == first)
            b = (long long)w[k];
        st.bits = b;
        st.idx =
            e0 + (int64_t)(first >> 1) * 2 * P::BLOCK_THREADS + (first & 1);
      }
    } else {
      /* Mixed: one bitmap load per pair (as the sum does); the tile's best
      ** integer and best real apart, each against the thread's best of its
      ** kind, with plain min/max (the other kind masked to a value that
      ** never wins); positions are searched only on an improvement. */
      unsigned bits = 0;
#pragma unroll
      for (int k = 0; k < P::ITEMS; k += 2) {
        int64_t e = e0 + (int64_t)(k / 2) * 2 * P::BLOCK_THREADS;
        uint64_t bw = __ldg(isint + (e >> 6));
        unsigned b0 = (unsigned)(bw >> (e & 63)) & 1u;
        unsigned b1 = ((e + 1) & 63)
                          ? (unsigned)(bw >> ((e + 1) & 63)) & 1u
                          : (unsigned)__ldg(isint + ((e + 1) >> 6)) & 1u;
        bits |= (b0 | (b1 << 1)) << k;
      }
      const unsigned all = (1u << P::ITEMS) - 1;
      if (bits) {
        long long mi = MIN ? LLONG_MAX : LLONG_MIN;
#pragma unroll
        for (int k = 0; k < P::ITEMS; k++) {
          long long iv = ((bits >> k) & 1) ? (long long)w[k] : mi;
          mi = MIN ? min(mi, iv) : max(mi, iv);
        }
        if (st.idx < 0 || int_better(mi, st.bits)) {
          int first = P::ITEMS - 1;
#pragma unroll
          for (int k = P::ITEMS - 1; k >= 0; k--)
            if (((bits >> k) & 1) && (long long)w[k] == mi)
              first = k;
          st.bits = mi;
          st.idx =
              e0 + (int64_t)(first >> 1) * 2 * P::BLOCK_THREADS + (first & 1);
        }
      }
      if (bits != all) {
        const double never =
            MIN ? __longlong_as_double(0x7ff0000000000000ll)
                : __longlong_as_double((long long)0xfff0000000000000ull);
        double mr = never;
#pragma unroll
        for (int k = 0; k < P::ITEMS; k++) {
          double rv =
              ((bits >> k) & 1) ? never : __longlong_as_double((long long)w[k]);
          mr = MIN ? fmin(mr, rv) : fmax(mr, rv);
        }
        if (st.ridx < 0 || real_better(mr, __longlong_as_double(st.rbits))) {
          /* first real equal in value (-0.0 == 0.0, and an Inf equal to the
          ** mask): keep its own bits */
          int first = -1;
#pragma unroll
          for (int k = P::ITEMS - 1; k >= 0; k--)
            if (!((bits >> k) & 1) &&
                __longlong_as_double((long long)w[k]) == mr)
              first = k;
          long long b = (long long)w[0];
#pragma unroll
          for (int k = 1; k < P::ITEMS; k++)
            if (k == first)
              b = (long long)w[k];
          st.rbits = b;
          st.ridx =
              e0 + (int64_t)(first >> 1) * 2 * P::BLOCK_THREADS + (first & 1);
        }
      }
    }
  }

  template <class P>
  __device__ __forceinline__ void finish(thread_state &st,
                                         shared_state &sh) const {
    gak_best_item it;
    it.bits = st.bits;
    it.pad = 0;
    it.kind = st.idx < 0
                  ? GA_KIND_NONE
                  : (LAYOUT == GA_LAYOUT_REAL ? GA_KIND_REAL : GA_KIND_INT);
    it.idx = it.kind == GA_KIND_NONE ? LLONG_MAX : st.idx;
    gak_best_merge<MIN> merge;
    if (LAYOUT == GA_LAYOUT_MIXED) { /* the best integer meets the best real */
      gak_best_item r;
      r.bits = st.rbits;
      r.pad = 0;
      r.kind = st.ridx < 0 ? GA_KIND_NONE : GA_KIND_REAL;
      r.idx = st.ridx < 0 ? LLONG_MAX : st.ridx;
      it = merge(it, r);
    }
    it = gak_block_reduce<P>(it, merge, sh.slots);
    /* device level: last block done.  The block's item is one 16-byte
    ** slot (kind in idx's top 2 bits; idx < 2^62), published by a release
    ** on the ticket counter; the holder of the last ticket acquires, and
    ** after the barrier its threads read every slot in one round trip
    ** (4 slots per thread in flight), so the serial tail is short. */
    if (threadIdx.x == 0) {
      longlong2 slot;
      slot.x = it.bits;
      slot.y =
          (it.kind == GA_KIND_NONE ? 0 : it.idx) | ((long long)it.kind << 62);
      __stcg(blocks + blockIdx.x, slot);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> ticket(*counter);
      sh.is_last =
          ticket.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();
    if (!sh.is_last)
      return;
    gak_best_item acc;
    acc.kind = GA_KIND_NONE;
    acc.idx = LLONG_MAX;
    acc.bits = 0;
    acc.pad = 0;
    for (int i0 = threadIdx.x; i0 < (int)gridDim.x;
         i0 += 4 * P::BLOCK_THREADS) {
      longlong2 v[4];
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int i = i0 + j * P::BLOCK_THREADS;
        if (i < (int)gridDim.x)
          v[j] = __ldcg(blocks + i);
        else
          v[j] = make_longlong2(0, 0); /* kind NONE */
      }
#pragma unroll
      for (int j = 0; j < 4; j++) {
        gak_best_item b;
        b.bits = v[j].x;
        b.kind = (int)((unsigned long long)v[j].y >> 62);
        b.idx =
            b.kind == GA_KIND_NONE ? LLONG_MAX : (v[j].y & ((1ll << 62) - 1));
        b.pad = 0;
        acc = merge(acc, b);
      }
    }
    acc = gak_block_reduce<P>(acc, merge, sh.slots);
    if (threadIdx.x == 0) {
      ga_best_partial r;
      r.kind = acc.kind;
      r.pad = 0;
      r.idx = acc.kind == GA_KIND_NONE ? 0 : acc.idx;
      r.bits = acc.kind == GA_KIND_NONE ? 0 : acc.bits;
      *out = r;
      *counter = 0; /* tidy; the next call zeroes it anyway */
    }
  }
};

/* ------------------------------------------------------------ launchers */

/* ------------------------------------------------- deferred warp tiles */

/* The wide kernel: warp tiles that failed the expansion (gak_sum_op::tile)
** are added value by value into per-THREAD superaccumulators in shared
** memory: 68 digits x 64 threads, digit-major so that a warp's accesses hit
** 32 different bank pairs whatever digits its lanes touch.  A thread owns
** its digits, so there are no atomics and no conflicts between lanes; each
** value costs its decomposition and three 64-bit read-add-writes.  Blocks
** of 64 threads keep the 34 KiB of digits per block affordable (6 blocks
** per SM).  A warp tile is VECS segments of 64 words, 2*BLOCK_THREADS words
** apart (the fast kernel's layout), read as 16-byte vectors. */
#define GAK_WIDE_THREADS 64
/* gak_sum defers failed tiles from this many values on (see gak_sum) */
#define GAK_DEFER_MIN ((int64_t)1 << 22)
#define GAK_WIDE_BLOCKS_PER_SM 6

__device__ __forceinline__ void gak_digits_add(unsigned long long *dig, int t,
                                               double x) {
  uint64_t b = (uint64_t)__double_as_longlong(x);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & ((1ull << 52) - 1);
  if (e == 0) {
    if (m == 0)
      return;
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  int k = e >> 5, sh = e & 31;
  uint64_t lo = m << sh;
  uint64_t d0 = lo & 0xffffffffull, d1 = lo >> 32,
           d2 = sh ? (m >> (64 - sh)) : 0;
  if (b >> 63) {
    d0 = 0ull - d0;
    d1 = 0ull - d1;
    d2 = 0ull - d2;
  }
  unsigned long long *p = dig + k * GAK_WIDE_THREADS + t;
  p[0] += d0;
  p[GAK_WIDE_THREADS] += d1;
  p[2 * GAK_WIDE_THREADS] += d2;
}

/* One warp tile's words for this lane: VECS 16-byte pairs, STRIDE apart. */
template <class P>
__device__ __forceinline__ void gak_wide_load(const uint64_t *__restrict__ v,
                                              long long base,
                                              uint64_t (&w)[P::ITEMS]) {
#pragma unroll
  for (int j = 0; j < P::VECS; j++) {
    ulonglong2 x = __ldg(reinterpret_cast<const ulonglong2 *>(
        v + base + (long long)j * 2 * P::BLOCK_THREADS));
    w[2 * j] = x.x;
    w[2 * j + 1] = x.y;
  }
}

template <class P, int LAYOUT>
__device__ __forceinline__ void
gak_wide_add(unsigned long long *dig, int t, const uint64_t *__restrict__ isint,
             long long base, const uint64_t (&w)[P::ITEMS], unsigned &npinf,
             unsigned &nninf, unsigned &nnan) {
#pragma unroll
  for (int k = 0; k < P::ITEMS; k++) {
    const long long e =
        base + (long long)(k >> 1) * 2 * P::BLOCK_THREADS + (k & 1);
    if (LAYOUT == GA_LAYOUT_MIXED && gak_isint_bit(isint, e))
      continue; /* integers were added by the fast kernel */
    double x = __longlong_as_double((long long)w[k]);
    if (gak_finite(x))
      gak_digits_add(dig, t, x);
    else if ((uint64_t)w[k] & ((1ull << 52) - 1))
      nnan++;
    else if (w[k] >> 63)
      nninf++;
    else
      npinf++;
  }
}

template <class P, int LAYOUT>
__global__ void __launch_bounds__(GAK_WIDE_THREADS, GAK_WIDE_BLOCKS_PER_SM)
    gak_wide_kernel(const uint64_t *__restrict__ v,
                    const uint64_t *__restrict__ isint, const unsigned *any,
                    const unsigned *__restrict__ lists, long long nlists,
                    long long cap, long long head, ga_sum_partial *out) {
  __shared__ unsigned long long dig[GA_XACC_DIGITS * GAK_WIDE_THREADS];
  __shared__ unsigned long long cnt[3];
  if (*(const volatile unsigned *)any == 0)
    return; /* the usual case: nothing was deferred */
  const int t = threadIdx.x, lane = t & 31;
  for (int d = 0; d < GA_XACC_DIGITS; d++)
    dig[d * GAK_WIDE_THREADS + t] = 0;
  if (t < 3)
    cnt[t] = 0;
  __syncthreads();
  unsigned npinf = 0, nninf = 0, nnan = 0;
  const long long warps = (long long)gridDim.x * (GAK_WIDE_THREADS / 32);
  /* a warp takes the fast kernel's lists one by one and runs their warp
  ** tiles two by two, both loaded before either is added */
  for (long long l = (long long)blockIdx.x * (GAK_WIDE_THREADS / 32) + (t >> 5);
       l < nlists; l += warps) {
    const long long count = lists[l];
    const unsigned *ent = lists + nlists + l * cap;
    const long long off = head + 64 * (l % P::WARPS) + 2 * lane;
    for (long long i = 0; i < count; i += 2) {
      const long long b1 = off + (long long)ent[i] * P::TILE;
      const bool two = i + 1 < count;
      const long long b2 = two ? off + (long long)ent[i + 1] * P::TILE : b1;
      uint64_t w1[P::ITEMS], w2[P::ITEMS];
      gak_wide_load<P>(v, b1, w1);
      if (two)
        gak_wide_load<P>(v, b2, w2);
      gak_wide_add<P, LAYOUT>(dig, t, isint, b1, w1, npinf, nninf, nnan);
      if (two)
        gak_wide_add<P, LAYOUT>(dig, t, isint, b2, w2, npinf, nninf, nnan);
    }
  }
  if (npinf | nninf | nnan) {
    atomicAdd(&cnt[0], (unsigned long long)npinf);
    atomicAdd(&cnt[1], (unsigned long long)nninf);
    atomicAdd(&cnt[2], (unsigned long long)nnan);
  }
  __syncthreads();
  /* column sums: a digit grew by < 2^33 per value, and the call adds at
  ** most 2^29 values (gak_sum's bound), so they cannot overflow */
  unsigned long long *oacc = reinterpret_cast<unsigned long long *>(out->acc);
  for (int d = t; d < GA_XACC_DIGITS; d += GAK_WIDE_THREADS) {
    unsigned long long s = 0;
    for (int j = 0; j < GAK_WIDE_THREADS; j++)
      s += dig[d * GAK_WIDE_THREADS + j];
    if (s)
      atomicAdd(oacc + d, s);
  }
  if (t < 3 && cnt[t])
    atomicAdd(reinterpret_cast<unsigned long long *>(&out->npinf) + t, cnt[t]);
}

template <class P, int LAYOUT, int L>
static cudaError_t gak_sum_run(const uint64_t *v, const uint64_t *isint,
                               int64_t n, ga_sum_partial *out, void *scratch,
                               cudaStream_t s) {
  gak_sum_op<LAYOUT, L> op;
  op.out = out;
  op.isint = isint;
  op.n = n;
  op.any = NULL;
  op.lists = NULL;
  op.cap = 0;
  const int grid = gak_grid_for<P>(n);
  long long head = ((uintptr_t)v & 15) ? 1 : 0;
  if (head > n)
    head = n;
  if (scratch && LAYOUT != GA_LAYOUT_INT) {
    op.any = (unsigned *)scratch;
    op.lists = (unsigned *)scratch + 4;
    op.cap = ((n - head) / P::TILE + grid - 1) / grid;
    cudaError_t err = cudaMemsetAsync(scratch, 0, 16, s);
    if (err != cudaSuccess)
      return err;
  }
  cudaError_t err = gak_launch<P>(op, v, n, s);
  if (err != cudaSuccess || !op.any)
    return err;
  if constexpr (LAYOUT != GA_LAYOUT_INT) {
    /* always launched: it returns at once when nothing was deferred */
    gak_wide_kernel<P, LAYOUT>
        <<<gak_sm_count() * GAK_WIDE_BLOCKS_PER_SM, GAK_WIDE_THREADS, 0, s>>>(
            v, isint, op.any, op.lists, (long long)grid * P::WARPS, op.cap,
            head, out);
    err = cudaGetLastError();
  }
  return err;
}

/* Only spill-free instantiations: the real layouts need 60-80 registers, so
** the 6-blocks-per-SM policy (40 registers) is not used for them and the
** mixed layout keeps 2 levels (3 spill at 64 registers) and 8 items; a
** request for an unfit combination runs policy 0. */
template <class P, bool REAL_OK, bool MIXED_OK>
static cudaError_t
gak_sum_policy(const uint64_t *v, const uint64_t *isint, int64_t n, int layout,
               int levels, ga_sum_partial *out, void *sc, cudaStream_t s) {
  typedef gak_policy0 P0;
  if (layout == GA_LAYOUT_INT)
    return gak_sum_run<P, GA_LAYOUT_INT, 2>(v, isint, n, out, sc, s);
  if (layout == GA_LAYOUT_MIXED) {
    if constexpr (MIXED_OK)
      return gak_sum_run<P, GA_LAYOUT_MIXED, 2>(v, isint, n, out, sc, s);
    else
      return gak_sum_run<P0, GA_LAYOUT_MIXED, 2>(v, isint, n, out, sc, s);
  }
  if constexpr (REAL_OK) {
    if (levels == 2)
      return gak_sum_run<P, GA_LAYOUT_REAL, 2>(v, isint, n, out, sc, s);
    if (levels == 3)
      return gak_sum_run<P, GA_LAYOUT_REAL, 3>(v, isint, n, out, sc, s);
  } else {
    if (levels == 2)
      return gak_sum_run<P0, GA_LAYOUT_REAL, 2>(v, isint, n, out, sc, s);
    if (levels == 3)
      return gak_sum_run<P0, GA_LAYOUT_REAL, 3>(v, isint, n, out, sc, s);
  }
  return cudaErrorInvalidValue;
}

/* The sum with a given policy and levels; scratch NULL: tiles that fail the
** expansion are redone value by value instead of by gak_wide_kernel. */
static int gak_sum_impl(const uint64_t *d_vals, const uint64_t *d_isint,
                        int64_t n, int layout, int levels, int policy,
                        ga_sum_partial *d_out, void *sc, cudaStream_t s) {
  if (n < 0 || !d_out)
    return (int)cudaErrorInvalidValue;
  if (layout < GA_LAYOUT_INT || layout > GA_LAYOUT_MIXED)
    return (int)cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(d_out, 0, sizeof(*d_out), s);
  if (err != cudaSuccess || n == 0)
    return (int)err; /* empty: all zero */
  switch (policy) {
  case 0:
    err = gak_sum_policy<gak_policy0, true, true>(d_vals, d_isint, n, layout,
                                                  levels, d_out, sc, s);
    break;
  case 1:
    err = gak_sum_policy<gak_policy1, false, false>(d_vals, d_isint, n, layout,
                                                    levels, d_out, sc, s);
    break;
  case 2:
    err = gak_sum_policy<gak_policy2, true, false>(d_vals, d_isint, n, layout,
                                                   levels, d_out, sc, s);
    break;
  default:
    err = cudaErrorInvalidValue;
  }
  return (int)err;
}

extern "C" int gak_sum_tuned(const uint64_t *d_vals, const uint64_t *d_isint,
                             int64_t n, int layout, int levels, int policy,
                             ga_sum_partial *d_out, void *d_scratch,
                             gak_stream stream) {
  return gak_sum_impl(d_vals, d_isint, n, layout, levels, policy, d_out,
                      d_scratch, (cudaStream_t)stream);
}

/* max/min: a ticket and one item per block (the grid is capped at
** GAK_MAX_GRID); sums: a flag, then per warp of the grid a count and a list
** of deferred tiles, ceil(tiles / grid) entries each (gak_sum_op::lists):
** at most (tiles + grid) * WARPS entries, and a warp tile has at least 256
** words (WARPS <= 16). */
extern "C" size_t gak_scratch_bytes(int64_t n) {
  size_t best = 256 + (size_t)GAK_MAX_GRID * sizeof(longlong2);
  size_t sum = 16 + 4 * ((size_t)n / 256 + 2 * (size_t)GAK_MAX_GRID * 16 + 64);
  return best > sum ? best : sum;
}

extern "C" int gak_sum(const uint64_t *d_vals, const uint64_t *d_isint,
                       int64_t n, int layout, ga_sum_partial *d_out,
                       void *d_scratch, gak_stream stream) {
  int policy = layout == GA_LAYOUT_INT ? GAK_INT_SUM_POLICY : 0;
  /* The wide kernel costs a launch (~4 us) even when nothing is deferred:
  ** 35% of a 2M-value sum, under 2% past GAK_DEFER_MIN values.  Below it,
  ** failed tiles are redone value by value (the engine's 8 MiB chunks are
  ** bound by PCIe, not by this kernel, whatever the data). */
  if (n < GAK_DEFER_MIN)
    d_scratch = NULL;
  return gak_sum_impl(d_vals, d_isint, n, layout, GAK_REAL_LEVELS, policy,
                      d_out, d_scratch, (cudaStream_t)stream);
}

template <class P, int LAYOUT, bool MIN>
static cudaError_t gak_best_run(const uint64_t *v, const uint64_t *isint,
                                int64_t n, ga_best_partial *out, void *scratch,
                                cudaStream_t s) {
  gak_best_op<LAYOUT, MIN> op;
  op.out = out;
  op.isint = isint;
  op.counter = (unsigned *)scratch;
  op.blocks = (longlong2 *)((char *)scratch + 256);
  return gak_launch<P>(op, v, n, s);
}

template <class P>
static cudaError_t gak_best_policy(const uint64_t *v, const uint64_t *isint,
                                   int64_t n, int layout, int want_min,
                                   ga_best_partial *out, void *scratch,
                                   cudaStream_t s) {
  switch (layout * 2 + (want_min != 0)) {
  case GA_LAYOUT_INT * 2:
    return gak_best_run<P, GA_LAYOUT_INT, false>(v, isint, n, out, scratch, s);
  case GA_LAYOUT_INT * 2 + 1:
    return gak_best_run<P, GA_LAYOUT_INT, true>(v, isint, n, out, scratch, s);
  case GA_LAYOUT_REAL * 2:
    return gak_best_run<P, GA_LAYOUT_REAL, false>(v, isint, n, out, scratch, s);
  case GA_LAYOUT_REAL * 2 + 1:
    return gak_best_run<P, GA_LAYOUT_REAL, true>(v, isint, n, out, scratch, s);
  case GA_LAYOUT_MIXED * 2:
    return gak_best_run<P, GA_LAYOUT_MIXED, false>(v, isint, n, out, scratch,
                                                   s);
  case GA_LAYOUT_MIXED * 2 + 1:
    return gak_best_run<P, GA_LAYOUT_MIXED, true>(v, isint, n, out, scratch, s);
  }
  return cudaErrorInvalidValue;
}

extern "C" int gak_best_tuned(const uint64_t *d_vals, const uint64_t *d_isint,
                              int64_t n, int layout, int want_min, int policy,
                              ga_best_partial *d_out, void *d_scratch,
                              gak_stream stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (n < 0 || !d_out)
    return (int)cudaErrorInvalidValue;
  if (layout < GA_LAYOUT_INT || layout > GA_LAYOUT_MIXED)
    return (int)cudaErrorInvalidValue;
  if (n == 0) /* kind GA_KIND_NONE is 0: an all-zero partial */
    return (int)cudaMemsetAsync(d_out, 0, sizeof(*d_out), s);
  if (!d_scratch)
    return (int)cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(d_scratch, 0, sizeof(unsigned), s);
  if (err != cudaSuccess)
    return (int)err;
  switch (policy) {
  case 0:
    return (int)gak_best_policy<gak_policy0>(d_vals, d_isint, n, layout,
                                             want_min, d_out, d_scratch, s);
  case 1: /* policy 1's 40 registers spill on sm_80/86: run policy 0 */
    return (int)gak_best_policy<gak_policy0>(d_vals, d_isint, n, layout,
                                             want_min, d_out, d_scratch, s);
  case 2:
    return (int)gak_best_policy<gak_policy2>(d_vals, d_isint, n, layout,
                                             want_min, d_out, d_scratch, s);
  }
  return (int)cudaErrorInvalidValue;
}

extern "C" int gak_best(const uint64_t *d_vals, const uint64_t *d_isint,
                        int64_t n, int layout, int want_min,
                        ga_best_partial *d_out, void *d_scratch,
                        gak_stream stream) {
  int policy = layout != GA_LAYOUT_MIXED ? GAK_BEST_POLICY : 0;
  return gak_best_tuned(d_vals, d_isint, n, layout, want_min, policy, d_out,
                        d_scratch, stream);
}
