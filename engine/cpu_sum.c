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
** Every BLOCK values the bins are flushed into the partial's digits: for each
** exponent, the 128-bit difference of its positive and negative bins, shifted
** to its place and gathered per 32-bit digit, so the digits get one add per
** digit touched, not one per value.  Only the exponents seen are visited: a
** range pass (the max and min exponent of each SUB values, and whether any was
** zero/subnormal or Inf/NaN) runs first, while the values come into the cache;
** that pass is the part that SIMD speeds up, and the variants differ only
** there.  Sub-blocks holding an Inf or a NaN go through the one-value-at-a-time
** reference, which counts them.
**
** Rules kept:
**  1. Same partial as the reference after ga_sum_normalize: bins and digits
**     are exact integers, so only the raw digits differ.
**  2. A digit grows by less than 2^33 per value added (ga_partial.h's
**     GA_XACC_SAFE_ADDS budget): a flush adds less than 2^32 to a digit, and
**     a block flushes at most once per value it holds.
**  3. The bins are all zero between calls: a flush clears what it visits, and
**     it visits every bin the block touched.
**  4. Never an error: the bins live in a process-wide cached scratch; when it
**     cannot be allocated, the reference path is used.
*/
#include "cpu_sum.h"

#include <stdlib.h>

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
#define M52 ((1ull << 52) - 1)
#define IMP (1ull << 52)
#define EXPBITS 0x7ff0000000000000ull

/* A scratch: the bins, and room for the reals of a mixed block. */
typedef struct ga_sum_scratch {
  uint64_t bins[NSETS][NBINS]; /* all zero between uses (rule 3) */
  uint64_t buf[BLOCK];
} ga_sum_scratch;

static ga_sum_scratch *scratch_cache;

static ga_sum_scratch *scratch_get(void) {
  ga_sum_scratch *s =
      __atomic_exchange_n(&scratch_cache, NULL, __ATOMIC_ACQUIRE);
  return s ? s : calloc(1, sizeof(*s));
}

/* Keep one for the next call (another thread may have put one back first). */
static void scratch_put(ga_sum_scratch *s) {
  ga_sum_scratch *none = NULL;
  if (!__atomic_compare_exchange_n(&scratch_cache, &none, s, 0,
                                   __ATOMIC_RELEASE, __ATOMIC_RELAXED))
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

static void bins_add(uint64_t (*b)[NBINS], const uint64_t *v, int64_t n,
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

/* t * 2^(32k - 1074) into the digits: t is a 128-bit two's complement number
** below 2^103 in magnitude; three unsigned 32-bit digits and a signed top. */
static void emit(int64_t *acc, int k, unsigned __int128 t) {
  uint64_t lo = (uint64_t)t, hi = (uint64_t)(t >> 64);
  acc[k] += (int64_t)(lo & 0xffffffffu);
  acc[k + 1] += (int64_t)(lo >> 32);
  acc[k + 2] += (int64_t)(hi & 0xffffffffu);
  acc[k + 3] += (int64_t)hi >> 32;
}

/* Move exponent fields e0..e1 of every set (both signs) into the digits and
** clear them.  Exponents that share a digit (their position p = max(e-1, 0)
** has the same p >> 5) are gathered into one 128-bit t first: each
** difference is below 2^66, shifted by at most 31, at most 32 of them. */
static void flush(uint64_t (*b)[NBINS], int64_t *acc, int e0, int e1) {
  unsigned __int128 t = 0;
  int tk = -1;
  for (int e = e0; e <= e1; e++) {
    unsigned __int128 pos = 0, neg = 0;
    for (int s = 0; s < NSETS; s++) {
      pos += b[s][e];
      neg += b[s][e | 0x800];
      b[s][e] = 0;
      b[s][e | 0x800] = 0;
    }
    if (pos == neg)
      continue;
    int p = e ? e - 1 : 0;
    if (p >> 5 != tk) {
      if (tk >= 0)
        emit(acc, tk, t);
      t = 0;
      tk = p >> 5;
    }
    t += (pos - neg) << (p & 31); /* unsigned: wraps as two's complement */
  }
  if (tk >= 0)
    emit(acc, tk, t);
}

/* The reference: one value at a time into the digits (ga_xacc_add_real). */
static void ref_reals(const uint64_t *v, int64_t n, ga_sum_partial *p) {
  for (int64_t i = 0; i < n; i++)
    ga_xacc_add_real(p, ga_bitsd((int64_t)v[i]), 1);
}

static void bins_reals(range_fn range, ga_sum_scratch *s, const uint64_t *v,
                       int64_t n, ga_sum_partial *p) {
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
      flush(s->bins, p->acc, 0, 0);
    if (lo <= hi)
      flush(s->bins, p->acc, lo, hi);
  }
}

/* Mixed layout: integers into the halves as they come, reals gathered into
** the scratch and summed a block at a time; branch-free on the bitmap. */
static void bins_mixed(range_fn range, ga_sum_scratch *s, const uint64_t *v,
                       const uint64_t *isint, int64_t n, ga_sum_partial *p) {
  uint64_t lo = 0, hi = 0;
  int64_t nint = 0, nr = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t w = v[i], is = (isint[i >> 6] >> (i & 63)) & 1, mask = 0 - is;
    lo += w & 0xffffffffu & mask;
    hi += (uint64_t)((int64_t)w >> 32) & mask;
    nint += (int64_t)is;
    s->buf[nr] = w;
    nr += (int64_t)(1 - is);
    if (nr == BLOCK) {
      bins_reals(range, s, s->buf, nr, p);
      nr = 0;
    }
  }
  bins_reals(range, s, s->buf, nr, p);
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
  int need;
} variants[] = {
    {"reference", NULL, NEED_NONE},
    {"bins", range_scalar, NEED_NONE},
#if GA_X86
    {"bins+sse2", range_sse2, NEED_NONE},
    {"bins+avx2", range_avx2, NEED_AVX2},
    {"bins+avx512", range_avx512, NEED_AVX512},
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
    bins_reals(variants[v].range, s, vals, n, p);
  else
    bins_mixed(variants[v].range, s, vals, isint, n, p);
  scratch_put(s);
}

void ga_cpu_sum_reals(const uint64_t *vals, const uint64_t *isint, int64_t n,
                      int layout, ga_sum_partial *p) {
  ga_cpu_sum_variant(ga_cpu_sum_variant_best(), vals, isint, n, layout, p);
}
