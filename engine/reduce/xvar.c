/*
** xvar.c — exact variance and standard deviation (see xvar.h and its
** rules).
**
** The final step works on big integers of 32-bit digits (little-endian
** uint32 arrays): A = |Σx| * 2^1074 (at most 2^2161), B = Σx² * 2^2148
** (below 2^4260) and N = n*B - A².  Only the top bits of N matter once it
** is known: N * 2^k is cut to at most 256 bits (what is cut off sets the
** sticky bit), divided by D = a*b as two 64-bit divisions (floor(floor(M/a)
** /b) = floor(M/(ab)), and the quotient is exact iff both remainders are
** zero), and the quotient, with 64 bits or more, is rounded once.
*/
#include "xvar.h"

#include <math.h>
#include <string.h>

#include "xacc.h"

#define NSQ GA_XSQ_DIGITS
#define NDIG GA_XACC_DIGITS
#define MASK32 0xffffffffull
#define NA (NDIG + 4) /* digits of A (and room to carry) */
#define NN (NSQ + 4)  /* digits of n*B, A² and N */
#define NSMALL 10     /* digits of the cut N * 2^k (<= 256 bits + room) */

void ga_var_init(ga_var_partial *p) { memset(p, 0, sizeof(*p)); }

static void digits_normalize(int64_t *acc, int n) {
  int64_t c = 0;
  for (int k = 0; k < n - 1; k++) {
    int64_t v = acc[k] + c;
    c = v >> 32;
    acc[k] = v & (int64_t)MASK32;
  }
  acc[n - 1] += c;
}

void ga_var_normalize(ga_var_partial *p) {
  ga_sum_normalize(&p->sum);
  digits_normalize(p->sq, NSQ);
  p->adds = 0;
}

/* Rule 2's headroom (and ga_sum_partial's integer halves, 2^31). */
static inline void counted(ga_var_partial *p) {
  if (++p->adds >= GA_XACC_SAFE_ADDS / 4)
    ga_var_normalize(p);
}

void ga_var_add_real(ga_var_partial *p, double x, int sign) {
  ga_xacc_add_real(&p->sum, x, sign);
  uint64_t b = (uint64_t)ga_dbits(x);
  if (((b >> 52) & 0x7ff) != 0x7ff) /* infinities count in sum only */
    ga_xsq_add_real(p->sq, b, sign < 0);
  counted(p);
}

void ga_var_add_int(ga_var_partial *p, int64_t v, int sign) {
  ga_sum_add_int(&p->sum, v, sign);
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  ga_xsq_add_at(p->sq, (unsigned __int128)u * u, GA_XSQ_BIAS, sign < 0);
  counted(p);
}

void ga_var_merge(ga_var_partial *into, const ga_var_partial *from, int sign) {
  ga_var_normalize(into);
  ga_var_partial f = *from;
  ga_var_normalize(&f);
  if (sign < 0) {
    for (int k = 0; k < NDIG; k++)
      f.sum.acc[k] = -f.sum.acc[k];
    for (int k = 0; k < NSQ; k++)
      f.sq[k] = -f.sq[k];
    f.sum.ilo = -f.sum.ilo, f.sum.ihi = -f.sum.ihi, f.sum.itop = -f.sum.itop;
    f.sum.nint = -f.sum.nint, f.sum.nreal = -f.sum.nreal;
    f.sum.npinf = -f.sum.npinf, f.sum.nninf = -f.sum.nninf;
    f.sum.nnan = -f.sum.nnan;
  }
  ga_sum_merge(&into->sum, &f.sum);
  for (int k = 0; k < NSQ; k++)
    into->sq[k] += f.sq[k];
  digits_normalize(into->sq, NSQ);
  into->adds = 0;
}

/* ---- big integers: little-endian uint32 digits ---- */

static int big_len(const uint32_t *a, int n) { /* digits without top zeros */
  while (n > 0 && a[n - 1] == 0)
    n--;
  return n;
}

static int big_bits(const uint32_t *a, int n) {
  n = big_len(a, n);
  return n ? 32 * (n - 1) + 32 - __builtin_clz(a[n - 1]) : 0;
}

/* out[0..na+nb) = a * b (out zeroed here; low zero digits skipped). */
static void big_mul(const uint32_t *a, int na, const uint32_t *b, int nb,
                    uint32_t *out) {
  memset(out, 0, sizeof(uint32_t) * (size_t)(na + nb));
  int alo = 0, blo = 0;
  while (alo < na && a[alo] == 0)
    alo++;
  while (blo < nb && b[blo] == 0)
    blo++;
  for (int i = alo; i < na; i++) {
    uint64_t c = 0, ai = a[i];
    if (!ai)
      continue;
    for (int j = blo; j < nb; j++) {
      uint64_t t = ai * b[j] + out[i + j] + c; /* < 2^64 */
      out[i + j] = (uint32_t)t;
      c = t >> 32;
    }
    for (int k = i + nb; c; k++) {
      uint64_t t = (uint64_t)out[k] + c;
      out[k] = (uint32_t)t;
      c = t >> 32;
    }
  }
}

/* out[0..n+2) = a * m */
static void big_mul64(const uint32_t *a, int n, uint64_t m, uint32_t *out) {
  unsigned __int128 c = 0;
  for (int i = 0; i < n; i++) {
    c += (unsigned __int128)a[i] * m;
    out[i] = (uint32_t)c;
    c >>= 32;
  }
  out[n] = (uint32_t)c;
  out[n + 1] = (uint32_t)(c >> 32);
}

/* a -= b (n digits each); returns the borrow out (1: b > a). */
static int big_sub(uint32_t *a, const uint32_t *b, int n) {
  int64_t br = 0;
  for (int i = 0; i < n; i++) {
    int64_t t = (int64_t)a[i] - b[i] - br;
    br = t < 0;
    a[i] = (uint32_t)t;
  }
  return (int)br;
}

/* Digits of a non-negative normalised digit string (int64 holding 32 bits). */
static void to_u32(const int64_t *d, int n, uint32_t *out, int nout) {
  for (int k = 0; k < nout; k++)
    out[k] = k < n ? (uint32_t)d[k] : 0;
}

/* |Σx| * 2^1074 into a[NA]; the integers weigh bit 1074. */
static void exact_a(const ga_sum_partial *s, uint32_t *a) {
  int64_t d[NA];
  memset(d, 0, sizeof(d));
  memcpy(d, s->acc, sizeof(s->acc));
  const int64_t part[3] = {s->ilo, s->ihi, s->itop};
  for (int k = 0; k < 3; k++)
    ga_xacc_add_at(d, part[k] < 0 ? -(uint64_t)part[k] : (uint64_t)part[k],
                   GA_XACC_BIAS + 32 * k, part[k] < 0);
  digits_normalize(d, NA);
  if (d[NA - 1] < 0) {
    for (int k = 0; k < NA; k++)
      d[k] = -d[k];
    digits_normalize(d, NA);
  }
  to_u32(d, NA, a, NA);
}

/* N = n*B - A² into nv[NN]; 0 when negative (an inconsistent state). */
static int exact_n(const ga_var_partial *p, uint32_t *nv) {
  ga_var_partial q = *p;
  ga_var_normalize(&q);
  if (q.sq[NSQ - 1] < 0)
    return 0;
  uint32_t a[NA], b[NSQ], a2[2 * NA];
  exact_a(&q.sum, a);
  to_u32(q.sq, NSQ, b, NSQ);
  int na = big_len(a, NA);
  big_mul(a, na, a, na, a2);
  uint64_t n = (uint64_t)ga_var_count(&q);
  memset(nv, 0, sizeof(uint32_t) * NN);
  big_mul64(b, NSQ, n, nv); /* NSQ + 2 <= NN digits */
  uint32_t sub[NN];
  memset(sub, 0, sizeof(sub));
  memcpy(sub, a2, sizeof(uint32_t) * (size_t)(2 * na));
  return !big_sub(nv, sub, NN);
}

int ga_var_bounded(const ga_var_partial *p) {
  /* the bits from 2^2048 (bit 4196 = digit 131, bit 4) up, as an integer */
  unsigned __int128 above = 0;
  for (int k = 133; k >= 131; k--)
    above = (above << 32) | (uint64_t)p->sq[k];
  above >>= 4;
  return !p->sq[134] && !p->sq[135] &&
         above < (unsigned __int128)ga_var_count(p);
}

int ga_var_consistent(const ga_var_partial *p) {
  uint32_t nv[NN];
  return exact_n(p, nv);
}

/* floor(N * 2^k) into m[NSMALL] (it must fit); *sticky |= bits cut off. */
static void cut(const uint32_t *nv, int k, uint32_t *m, int *sticky) {
  for (int i = 0; i < NSMALL; i++) {
    /* digit i of the result holds bits [32i - k, 32i - k + 32) of N */
    int lo = 32 * i - k;
    uint64_t w = 0;
    for (int j = 1; j >= 0; j--) {
      int di = (lo >> 5) + j; /* floor division: lo may be negative */
      w = (w << 32) | (di >= 0 && di < NN ? nv[di] : 0);
    }
    int sh = lo & 31;
    m[i] = (uint32_t)(w >> sh);
  }
  if (k < 0) { /* bits below -k were cut */
    int lo = -k;
    for (int di = 0; di < (lo >> 5) && di < NN; di++)
      if (nv[di])
        *sticky = 1;
    if ((lo >> 5) < NN && (nv[lo >> 5] & ((1u << (lo & 31)) - 1)))
      *sticky = 1;
  }
}

/* m /= d (NSMALL digits); returns 1 when the remainder is not zero. */
static int div64(uint32_t *m, uint64_t d) {
  unsigned __int128 r = 0;
  for (int i = NSMALL - 1; i >= 0; i--) {
    unsigned __int128 cur = (r << 32) | m[i];
    m[i] = (uint32_t)(cur / d);
    r = cur % d;
  }
  return r != 0;
}

static unsigned __int128 low128(const uint32_t *m) {
  unsigned __int128 v = 0;
  for (int i = 3; i >= 0; i--)
    v = (v << 32) | m[i];
  return v;
}

static int bits128(unsigned __int128 q) {
  uint64_t hi = (uint64_t)(q >> 64), lo = (uint64_t)q;
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/* q * 2^e, plus something below q's last bit when sticky, rounded to the
** nearest double, ties to even.  q has 55 bits or more (or is 0), so the
** bits dropped are never fewer than two. */
static double round_q(unsigned __int128 q, int e, int sticky) {
  if (q == 0)
    return 0.0;
  int h = bits128(q);
  int shift = h - 53;
  if (e + shift < -1074) /* the subnormal grid */
    shift = -1074 - e;
  unsigned __int128 mant = shift >= 128 ? 0 : q >> shift;
  int rbit = shift - 1 < 128 ? (int)((q >> (shift - 1)) & 1) : 0;
  if (shift - 1 >= 128)
    sticky = 1; /* q != 0 lies wholly below the round bit */
  else if (shift - 1 > 0 &&
           (q & (((unsigned __int128)1 << (shift - 1)) - 1)) != 0)
    sticky = 1;
  if (rbit && (sticky || (mant & 1))) {
    mant++;
    if (mant == ((unsigned __int128)1 << 53)) {
      mant >>= 1;
      shift++;
    }
  }
  return ldexp((double)(uint64_t)mant, e + shift);
}

/* floor(sqrt(x)), and whether it is exact. */
static uint64_t isqrt128(unsigned __int128 x, int *exact) {
  unsigned __int128 r = 0, bit = (unsigned __int128)1 << 126;
  while (bit > x)
    bit >>= 2;
  while (bit) {
    if (x >= r + bit) {
      x -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  *exact = x == 0;
  return (uint64_t)r;
}

int ga_var_result(const ga_var_partial *p, int which, double *out) {
  int64_t n = ga_var_count(p);
  int samp = which == GA_VAR_SAMP || which == GA_SD_SAMP;
  if (n < (samp ? 2 : 1))
    return 0;
  if (p->sum.npinf || p->sum.nninf || p->sum.nnan)
    return 0;
  uint32_t nv[NN];
  if (!exact_n(p, nv))
    return 0;
  int ln = big_bits(nv, NN);
  if (ln == 0) {
    *out = 0.0;
    return 1;
  }
  uint64_t da = (uint64_t)n, db = (uint64_t)(samp ? n - 1 : n);
  int ld = bits128((unsigned __int128)da * db);
  uint32_t m[NSMALL];
  int sticky = 0;
  if (which == GA_VAR_SAMP || which == GA_VAR_POP) {
    /* q = floor(N 2^k / D) in [2^64, 2^67) */
    int k = 65 + ld - ln;
    cut(nv, k, m, &sticky);
    sticky |= div64(m, da);
    sticky |= div64(m, db);
    *out = round_q(low128(m), -GA_XSQ_BIAS - k, sticky);
    return 1;
  }
  /* Q = floor(N 4^j / D) in [2^124, 2^128); stddev = sqrt(Q) 2^(-1074-j) */
  int tj = 125 + ld - ln;
  if (tj & 1)
    tj++;
  cut(nv, tj, m, &sticky);
  sticky |= div64(m, da);
  sticky |= div64(m, db);
  int exact;
  uint64_t s = isqrt128(low128(m), &exact);
  *out = round_q(s, -GA_XACC_BIAS - tj / 2, sticky || !exact);
  return 1;
}
