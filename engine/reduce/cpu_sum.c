/*
** cpu_sum.c — the CPU's exact sum of doubles (see cpu_sum.h): exponent bins
** in front of the small superaccumulator, at about the speed of a plain
** `s += v[i]` loop on any data.
**
** Method (R. Neal's "large superaccumulator", arXiv 1505.05571, as in his
** xsum; our own code).  A finite double is m * 2^(e-1075) for its top 12 bits
** (sign, exponent field e) and its 53-bit mantissa m (the implicit bit
** included for e >= 1; e = 0 is zero or subnormal, weighing like e = 1).
** Values with the same top 12 bits are summed as plain integers:
**     bins[set][w >> 52] += m
** one load, four integer operations and one add to memory, no branch and no
** rounding.  A bin takes at most 2048 values below 2^53, so it cannot wrap
** (2048 * (2^53 - 1) < 2^64).  Value i goes to bin set i % 4: consecutive
** values of the same binade (the usual case) hit four different memory
** words, which keeps the chains of store-to-load forwarding short.
**
** Every BLOCK values the bins are flushed into the partial's digits (see
** "flush" below): exponents are visited 16 at a time from the top, each
** one's positive-minus-negative sum over the sets is gathered by Horner's
** rule, and each group of 16 is one add per 32-bit digit it touches.  Only
** the exponents the block used are visited: a range pass over each SUB
** values (their largest and smallest exponent, and whether any is zero or
** subnormal, or Inf or NaN) runs first, while the bins loop prefetches the
** next SUB values for it.  A sub-block holding an Inf or a NaN goes through
** the one-value-at-a-time reference, which counts them.
**
** The variants (cpu_sum.h) differ only in the range pass and in the bin
** differences of the flush, plain vector work that SIMD speeds up; the bins
** loop is scalar in all of them (a scatter of adds).
**
** Rules kept:
**  1. Same partial as the reference after ga_sum_normalize: bins and digits
**     are exact integers, so only the raw digits differ.
**  2. A digit grows by less than 2^33 per value added (ga_partial.h's
**     GA_XACC_SAFE_ADDS budget): one add of a flush puts less than 2^32
**     into a digit, and a block makes at most one add per value it holds
**     (a group of exponents adds only when one of its bins is not zero).
**  3. The bins are all zero between calls: a flush clears what it visits, and
**     it visits every bin the block touched.
**  4. Never an error: the bins live in a scratch of 192 KiB (calloc, not
**     sqlite3_malloc: it is the reducer's, like a stack; up to 16 are
**     cached for the whole process, one per thread summing at once); when
**     none can be allocated, the reference path is used.
*/
#include "cpu_sum.h"

#include <stdlib.h>
#include <string.h>

#include "xacc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GA_X86 1
#include <immintrin.h>
#else
#define GA_X86 0
#endif

#define NSETS 4
#define SET_VALUES 2048 /* per bin: 2048 * (2^53 - 1) < 2^64 */
#define BLOCK (NSETS * SET_VALUES)
#define SUB 2048   /* range pass and bins while the values are in L1 */
#define NBINS 4096 /* sign and exponent field: the top 12 bits */
/* A set's row is 3 cache lines longer than its bins: rows 32 KiB apart
** would put the same exponent of every set in the same L1 cache set (and
** alias their addresses modulo 4 KiB), which measured 6-16% slower. */
#define ROW (NBINS + 24)
#define M52 ((1ull << 52) - 1)
#define IMP (1ull << 52)
#define EXPBITS 0x7ff0000000000000ull

/* A scratch: the bins, and room for the reals of a mixed block. */
typedef struct ga_sum_scratch {
  uint64_t bins[NSETS][ROW]; /* all zero between uses (rule 3) */
  uint64_t buf[BLOCK];
} ga_sum_scratch;

/* Scratches are cached for the whole process, one a slot, so that threads
** summing at the same time (parallel scans) each find one and none is
** allocated per call; a thread takes a slot's scratch by swapping in NULL. */
#define SCRATCH_SLOTS 16
static ga_sum_scratch *scratch_cache[SCRATCH_SLOTS];

static ga_sum_scratch *scratch_get(void) {
  for (int i = 0; i < SCRATCH_SLOTS; i++) {
    ga_sum_scratch *s =
        __atomic_exchange_n(&scratch_cache[i], NULL, __ATOMIC_ACQUIRE);
    if (s)
      return s;
  }
  return calloc(1, sizeof(ga_sum_scratch));
}

/* Back into a free slot (or freed, when more threads than slots ran). */
static void scratch_put(ga_sum_scratch *s) {
  for (int i = 0; i < SCRATCH_SLOTS; i++) {
    ga_sum_scratch *none = NULL;
    if (__atomic_compare_exchange_n(&scratch_cache[i], &none, s, 0,
                                    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
      return;
  }
  free(s);
}

/* ------------------------------------------------------- the range pass */

/* Of a = the top 16 bits without the sign (exponent field * 16 + the top 4
** fraction bits): the largest, the smallest, and the smallest of
** (a - 16) & 0x7fff, which maps exponent field 0 above every other.  So
** amax >> 4 is the largest exponent field, amin < 16 says some value was zero
** or subnormal, and (kmin >> 4) + 1 is the smallest exponent field >= 1. */
typedef struct ga_range {
  int amax, amin, kmin;
} ga_range;

typedef void (*range_fn)(const uint64_t *v, int64_t n, ga_range *r);

static void range_more(const uint64_t *v, int64_t n, ga_range *r) {
  int amax = r->amax, amin = r->amin, kmin = r->kmin;
  for (int64_t i = 0; i < n; i++) {
    int a = (int)(v[i] >> 48) & 0x7fff, k = (a - 16) & 0x7fff;
    amax = a > amax ? a : amax;
    amin = a < amin ? a : amin;
    kmin = k < kmin ? k : kmin;
  }
  r->amax = amax;
  r->amin = amin;
  r->kmin = kmin;
}

static void range_scalar(const uint64_t *v, int64_t n, ga_range *r) {
  r->amax = 0;
  r->amin = r->kmin = 0x7fff;
  range_more(v, n, r);
}

#if GA_X86
/* Lanes of 16-bit a, k; the other lanes' contents do not matter to a max or
** a min, so shuffles and packs may leave the values in any order. */
static void range_lanes(const int16_t *mx, const int16_t *mn, const int16_t *k,
                        int lanes, ga_range *r) {
  r->amax = 0;
  r->amin = r->kmin = 0x7fff;
  for (int j = 0; j < lanes; j++) {
    r->amax = mx[j] > r->amax ? mx[j] : r->amax;
    r->amin = mn[j] < r->amin ? mn[j] : r->amin;
    r->kmin = k[j] < r->kmin ? k[j] : r->kmin;
  }
}

/* SSE2, the x86-64 baseline: 8 values an iteration.  The high 32-bit halves
** are gathered (shufps), shifted right by 16 with sign extension and packed
** to 16 bits without saturation. */
static void range_sse2(const uint64_t *v, int64_t n, ga_range *r) {
  const __m128i m7 = _mm_set1_epi16(0x7fff), s16 = _mm_set1_epi16(16);
  __m128i mx = _mm_setzero_si128(), mn = m7, mk = m7;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float *f = (const float *)(v + i);
    __m128 a0 = _mm_loadu_ps(f), a1 = _mm_loadu_ps(f + 4);
    __m128 a2 = _mm_loadu_ps(f + 8), a3 = _mm_loadu_ps(f + 12);
    __m128i h0 =
        _mm_srai_epi32(_mm_castps_si128(_mm_shuffle_ps(a0, a1, 0xdd)), 16);
    __m128i h1 =
        _mm_srai_epi32(_mm_castps_si128(_mm_shuffle_ps(a2, a3, 0xdd)), 16);
    __m128i a = _mm_and_si128(_mm_packs_epi32(h0, h1), m7);
    mx = _mm_max_epi16(mx, a);
    mn = _mm_min_epi16(mn, a);
    mk = _mm_min_epi16(mk, _mm_and_si128(_mm_sub_epi16(a, s16), m7));
  }
  int16_t x[8], y[8], z[8];
  _mm_storeu_si128((__m128i *)x, mx);
  _mm_storeu_si128((__m128i *)y, mn);
  _mm_storeu_si128((__m128i *)z, mk);
  range_lanes(x, y, z, 8, r);
  range_more(v + i, n - i, r);
}

/* AVX2: the same, 16 values an iteration (the shuffles and packs work within
** 128-bit lanes, which only reorders values). */
__attribute__((target("avx2"))) static void range_avx2(const uint64_t *v,
                                                       int64_t n, ga_range *r) {
  const __m256i m7 = _mm256_set1_epi16(0x7fff), s16 = _mm256_set1_epi16(16);
  __m256i mx = _mm256_setzero_si256(), mn = m7, mk = m7;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float *f = (const float *)(v + i);
    __m256 a0 = _mm256_loadu_ps(f), a1 = _mm256_loadu_ps(f + 8);
    __m256 a2 = _mm256_loadu_ps(f + 16), a3 = _mm256_loadu_ps(f + 24);
    __m256i h0 = _mm256_srai_epi32(
        _mm256_castps_si256(_mm256_shuffle_ps(a0, a1, 0xdd)), 16);
    __m256i h1 = _mm256_srai_epi32(
        _mm256_castps_si256(_mm256_shuffle_ps(a2, a3, 0xdd)), 16);
    __m256i a = _mm256_and_si256(_mm256_packs_epi32(h0, h1), m7);
    mx = _mm256_max_epi16(mx, a);
    mn = _mm256_min_epi16(mn, a);
    mk = _mm256_min_epi16(mk, _mm256_and_si256(_mm256_sub_epi16(a, s16), m7));
  }
  int16_t x[16], y[16], z[16];
  _mm256_storeu_si256((__m256i *)x, mx);
  _mm256_storeu_si256((__m256i *)y, mn);
  _mm256_storeu_si256((__m256i *)z, mk);
  range_lanes(x, y, z, 16, r);
  range_more(v + i, n - i, r);
}

/* AVX-512 (F for the shifts, BW for the 16-bit lanes): 32 values. */
__attribute__((target("avx512f,avx512bw"))) static void
range_avx512(const uint64_t *v, int64_t n, ga_range *r) {
  const __m512i m7 = _mm512_set1_epi16(0x7fff), s16 = _mm512_set1_epi16(16);
  __m512i mx = _mm512_setzero_si512(), mn = m7, mk = m7;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const float *f = (const float *)(v + i);
    __m512 a0 = _mm512_loadu_ps(f), a1 = _mm512_loadu_ps(f + 16);
    __m512 a2 = _mm512_loadu_ps(f + 32), a3 = _mm512_loadu_ps(f + 48);
    __m512i h0 = _mm512_srai_epi32(
        _mm512_castps_si512(_mm512_shuffle_ps(a0, a1, 0xdd)), 16);
    __m512i h1 = _mm512_srai_epi32(
        _mm512_castps_si512(_mm512_shuffle_ps(a2, a3, 0xdd)), 16);
    __m512i a = _mm512_and_si512(_mm512_packs_epi32(h0, h1), m7);
    mx = _mm512_max_epi16(mx, a);
    mn = _mm512_min_epi16(mn, a);
    mk = _mm512_min_epi16(mk, _mm512_and_si512(_mm512_sub_epi16(a, s16), m7));
  }
  int16_t x[32], y[32], z[32];
  _mm512_storeu_si512((void *)x, mx);
  _mm512_storeu_si512((void *)y, mn);
  _mm512_storeu_si512((void *)z, mk);
  range_lanes(x, y, z, 32, r);
  range_more(v + i, n - i, r);
}
#endif

/* -------------------------------------------------------------- bins */

/* Add n finite values to the bins, value i to set i % NSETS.  careful: some
** have exponent field 0 (zero or subnormal: no implicit bit).  next: the
** values to come (or v itself): one prefetch a cache line brings them in
** while these are summed, so the range pass that reads them next finds them
** in the cache instead of stalling on memory. */
#define BIN_ADD(s, w, mant) b[s][(w) >> 52] += mant(w)
#define MANT_FAST(w) (((w)&M52) | IMP)
#define MANT_CAREFUL(w) (((w)&M52) | ((uint64_t)(((w)&EXPBITS) != 0) << 52))
#define BINS_LOOP(mant)                                                        \
  for (; i + 8 <= n; i += 8) {                                                 \
    PREFETCH(next + i);                                                        \
    uint64_t w0 = v[i], w1 = v[i + 1], w2 = v[i + 2], w3 = v[i + 3];           \
    BIN_ADD(0, w0, mant);                                                      \
    BIN_ADD(1, w1, mant);                                                      \
    BIN_ADD(2, w2, mant);                                                      \
    BIN_ADD(3, w3, mant);                                                      \
    w0 = v[i + 4], w1 = v[i + 5], w2 = v[i + 6], w3 = v[i + 7];                \
    BIN_ADD(0, w0, mant);                                                      \
    BIN_ADD(1, w1, mant);                                                      \
    BIN_ADD(2, w2, mant);                                                      \
    BIN_ADD(3, w3, mant);                                                      \
  }
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

static void bins_add(uint64_t (*b)[ROW], const uint64_t *v, int64_t n,
                     int careful, const uint64_t *next) {
  int64_t i = 0;
  if (careful) {
    BINS_LOOP(MANT_CAREFUL)
  } else {
    BINS_LOOP(MANT_FAST)
  }
  for (; i < n; i++) /* i % 8 == i % NSETS here */
    BIN_ADD(i & 3, v[i], MANT_CAREFUL);
}

/* ------------------------------------------------------------- flush */

/* A flush visits the exponents of the block from the top down, 16 at a
** time.  For each exponent e it needs d(e) = (sum of the positive bins) -
** (sum of the negative bins) over the sets, up to 67 bits signed; the
** "diffs" step gives it as two 64-bit halves, dlo = the difference of the
** sums of the bins' low 32 bits and dhi = that of their high 32 bits (each
** below 2^34 in magnitude), and clears the bins.  That step is plain
** vector work over consecutive exponents, the part the variants speed up.
** Horner's rule over the 16 exponents then gathers
**     A = sum dlo(e) 2^(e - bot),  B = sum dhi(e) 2^(e - bot)
** (below 2^50) with two adds an exponent, and A + B 2^32 goes into the
** digits at position bot - 1, one add per digit touched (rule 2). */
#define M32 0xffffffffull
#define GROUP 16

typedef void (*diffs_fn)(uint64_t (*b)[ROW], int e, int cnt, int64_t *dlo,
                         int64_t *dhi);

/* Exponent field e (< 2047) of every set, both signs: dlo, dhi; cleared. */
static inline void diff1(uint64_t (*b)[ROW], int e, int64_t *dlo,
                         int64_t *dhi) {
  uint64_t plo = 0, phi = 0, nlo = 0, nhi = 0;
  for (int s = 0; s < NSETS; s++) {
    uint64_t x = b[s][e], y = b[s][e | 0x800];
    plo += x & M32;
    phi += x >> 32;
    nlo += y & M32;
    nhi += y >> 32;
    b[s][e] = b[s][e | 0x800] = 0;
  }
  *dlo = (int64_t)(plo - nlo);
  *dhi = (int64_t)(phi - nhi);
}

static void diffs_scalar(uint64_t (*b)[ROW], int e, int cnt, int64_t *dlo,
                         int64_t *dhi) {
  for (int j = 0; j < cnt; j++)
    diff1(b, e + j, dlo + j, dhi + j);
}

#if defined(__GNUC__) || defined(__clang__)
/* The same with vectors of W 64-bit lanes (GNU C vector extensions: SSE2
** by default, AVX2 / AVX-512 in the target-specific copies).  e + cnt <=
** 2047, so e + j + 0x800 is the negative bin of e + j, never past a row. */
#define DIFFS_VEC(name, W, attr)                                               \
  typedef uint64_t name##_v __attribute__((vector_size(8 * W)));               \
  attr static void name(uint64_t(*b)[ROW], int e, int cnt, int64_t *dlo,       \
                        int64_t *dhi) {                                        \
    const name##_v zero = {0};                                                 \
    int j = 0;                                                                 \
    for (; j + W <= cnt; j += W) {                                             \
      name##_v plo = zero, phi = zero, nlo = zero, nhi = zero, x, y;           \
      for (int s = 0; s < NSETS; s++) {                                        \
        memcpy(&x, &b[s][e + j], sizeof x);                                    \
        memcpy(&y, &b[s][e + j + 0x800], sizeof y);                            \
        plo += x & M32;                                                        \
        phi += x >> 32;                                                        \
        nlo += y & M32;                                                        \
        nhi += y >> 32;                                                        \
        memcpy(&b[s][e + j], &zero, sizeof zero);                              \
        memcpy(&b[s][e + j + 0x800], &zero, sizeof zero);                      \
      }                                                                        \
      x = plo - nlo;                                                           \
      y = phi - nhi;                                                           \
      memcpy(dlo + j, &x, sizeof x);                                           \
      memcpy(dhi + j, &y, sizeof y);                                           \
    }                                                                          \
    for (; j < cnt; j++)                                                       \
      diff1(b, e + j, dlo + j, dhi + j);                                       \
  }
#if GA_X86
DIFFS_VEC(diffs_v2, 2, )
DIFFS_VEC(diffs_v4, 4, __attribute__((target("avx2"))))
DIFFS_VEC(diffs_v8, 8, __attribute__((target("avx512f"))))
#endif
#endif

/* (A + B 2^32) * 2^(p - 1074) into the digits, |A|, |B| < 2^50: the value
** shifted by p & 31 is below 2^114, three unsigned 32-bit digits and a
** signed top. */
static void emit(int64_t *acc, int64_t A, int64_t B, int p) {
  unsigned __int128 t =
      ((unsigned __int128)(__int128)B << 32) + (unsigned __int128)(__int128)A;
  t <<= p & 31; /* unsigned: wraps as two's complement */
  uint64_t lo = (uint64_t)t, hi = (uint64_t)(t >> 64);
  int k = p >> 5;
  acc[k] += (int64_t)(lo & M32);
  acc[k + 1] += (int64_t)(lo >> 32);
  acc[k + 2] += (int64_t)(hi & M32);
  acc[k + 3] += (int64_t)hi >> 32;
}

/* Move exponent fields e0..e1 (1 <= e0, e1 <= 2046) of every set, both
** signs, into the digits, and clear them (rule 3).  e = 0 weighs like e = 1
** and has its own call, flush0. */
static void flush(diffs_fn diffs, uint64_t (*b)[ROW], int64_t *acc, int e0,
                  int e1) {
  int64_t dlo[GROUP], dhi[GROUP];
  for (int top = e1; top >= e0; top -= GROUP) {
    int bot = top - (GROUP - 1) < e0 ? e0 : top - (GROUP - 1);
    diffs(b, bot, top - bot + 1, dlo, dhi);
    int64_t A = 0, B = 0;
    for (int j = top - bot; j >= 0; j--) {
      A = 2 * A + dlo[j];
      B = 2 * B + dhi[j];
    }
    if (A | B)
      emit(acc, A, B, bot - 1);
  }
}

static void flush0(uint64_t (*b)[ROW], int64_t *acc) {
  int64_t A, B;
  diff1(b, 0, &A, &B);
  if (A | B)
    emit(acc, A, B, 0);
}

/* The reference: one value at a time into the digits (ga_xacc_add_real). */
static void ref_reals(const uint64_t *v, int64_t n, ga_sum_partial *p) {
  for (int64_t i = 0; i < n; i++)
    ga_xacc_add_real(p, ga_bitsd((int64_t)v[i]), 1);
}

static void bins_reals(range_fn range, diffs_fn diffs, ga_sum_scratch *s,
                       const uint64_t *v, int64_t n, ga_sum_partial *p) {
  for (int64_t b0 = 0; b0 < n; b0 += BLOCK) {
    int64_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
    int lo = 0x800, hi = 0, any0 = 0; /* exponents in the bins (rule 3) */
    for (int64_t j = 0; j < m; j += SUB) {
      const uint64_t *u = v + b0 + j;
      int64_t k = m - j < SUB ? m - j : SUB;
      ga_range r;
      range(u, k, &r);
      int emax = r.amax >> 4, emin = (r.kmin >> 4) + 1, z = r.amin < 16;
      if (emax == 0x7ff) { /* Inf or NaN: rare, counted by the reference */
        ref_reals(u, k, p);
        continue;
      }
      /* prefetch the next sub-block (if as long as this one) */
      bins_add(s->bins, u, k, z, n - (b0 + j + k) >= k ? u + k : u);
      p->nreal += k;
      any0 |= z;
      hi = emax > hi ? emax : hi;
      lo = emin < lo ? emin : lo;
    }
    if (any0)
      flush0(s->bins, p->acc);
    if (lo <= hi)
      flush(diffs, s->bins, p->acc, lo, hi);
  }
}

/* Mixed layout: the integers go into the halves, and a copy of the block
** with +0.0 in their places goes through bins_reals (which then counts them
** as reals: nreal is corrected at the end).  Branch-free on the bitmap, one
** bitmap word per 64 values; BLOCK is a multiple of 64. */
static void bins_mixed(range_fn range, diffs_fn diffs, ga_sum_scratch *s,
                       const uint64_t *v, const uint64_t *isint, int64_t n,
                       ga_sum_partial *p) {
  uint64_t lo = 0, hi = 0;
  int64_t nint = 0;
  for (int64_t b0 = 0; b0 < n; b0 += BLOCK) {
    int64_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
    for (int64_t i = 0; i < m; i += 64) {
      uint64_t word = isint[(b0 + i) >> 6];
      int k = m - i < 64 ? (int)(m - i) : 64;
      for (int j = 0; j < k; j++) {
        uint64_t w = v[b0 + i + j], mask = 0 - ((word >> j) & 1);
        lo += w & M32 & mask;
        hi += (uint64_t)((int64_t)w >> 32) & mask;
        nint -= (int64_t)mask;
        s->buf[i + j] = w & ~mask;
      }
    }
    bins_reals(range, diffs, s, s->buf, m, p);
  }
  p->nreal -= nint;
  p->ilo = (int64_t)((uint64_t)p->ilo + lo);
  p->ihi = (int64_t)((uint64_t)p->ihi + hi);
  p->nint += nint;
}

static void ref_sum(const uint64_t *v, const uint64_t *isint, int64_t n,
                    int layout, ga_sum_partial *p) {
  if (layout == GA_LAYOUT_REAL) {
    ref_reals(v, n, p);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    if ((isint[i >> 6] >> (i & 63)) & 1)
      ga_sum_add_int(p, (int64_t)v[i], 1);
    else
      ga_xacc_add_real(p, ga_bitsd((int64_t)v[i]), 1);
  }
}

/* ------------------------------------------------------------ variants */

#define NEED_NONE 0
#define NEED_AVX2 1
#define NEED_AVX512 2

static const struct {
  const char *name;
  range_fn range; /* NULL: the reference */
  diffs_fn diffs;
  int need;
} variants[] = {
    {"reference", NULL, NULL, NEED_NONE},
    {"bins", range_scalar, diffs_scalar, NEED_NONE},
#if GA_X86
    {"bins+sse2", range_sse2, diffs_v2, NEED_NONE},
    {"bins+avx512", range_avx512, diffs_v8, NEED_AVX512},
    {"bins+avx2", range_avx2, diffs_v4, NEED_AVX2},
#endif
};
#define NVARIANTS ((int)(sizeof(variants) / sizeof(variants[0])))

int ga_cpu_sum_nvariants(void) { return NVARIANTS; }

const char *ga_cpu_sum_variant_name(int v) {
  return v >= 0 && v < NVARIANTS ? variants[v].name : "?";
}

int ga_cpu_sum_variant_ok(int v) {
  if (v < 0 || v >= NVARIANTS)
    return 0;
#if GA_X86
  if (variants[v].need == NEED_AVX2)
    return __builtin_cpu_supports("avx2");
  if (variants[v].need == NEED_AVX512)
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw");
#endif
  return 1;
}

/* The default is the last variant in the table that this CPU runs: AVX2
** comes after AVX-512 because AVX-512 measured no faster here (Zen 4: the
** bins loop is scalar and the rest waits on memory; bench/RESULTS.md §1),
** and on some CPUs it lowers the clock. */
static int best_variant = -1;

int ga_cpu_sum_variant_best(void) {
  int b = __atomic_load_n(&best_variant, __ATOMIC_RELAXED);
  if (b < 0) {
    b = NVARIANTS - 1;
    while (b > 1 && !ga_cpu_sum_variant_ok(b))
      b--;
    __atomic_store_n(&best_variant, b, __ATOMIC_RELAXED);
  }
  return b;
}

void ga_cpu_sum_variant(int v, const uint64_t *vals, const uint64_t *isint,
                        int64_t n, int layout, ga_sum_partial *p) {
  ga_sum_scratch *s;
  if (n <= 0)
    return;
  if (v <= 0 || v >= NVARIANTS || !(s = scratch_get())) {
    ref_sum(vals, isint, n, layout, p);
    return;
  }
  if (layout == GA_LAYOUT_REAL)
    bins_reals(variants[v].range, variants[v].diffs, s, vals, n, p);
  else
    bins_mixed(variants[v].range, variants[v].diffs, s, vals, isint, n, p);
  scratch_put(s);
}

void ga_cpu_sum_reals(const uint64_t *vals, const uint64_t *isint, int64_t n,
                      int layout, ga_sum_partial *p) {
  ga_cpu_sum_variant(ga_cpu_sum_variant_best(), vals, isint, n, layout, p);
}
