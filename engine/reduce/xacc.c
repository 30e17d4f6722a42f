/*
** xacc.c — exact sums and exact comparisons (see xacc.h, ga_partial.h).
**
** Nothing here rounds until ga_sum_round*: values are added as integers into
** the superaccumulator, so the result is the same for any order and any
** split of the input.  The final conversion rounds once, to nearest with
** ties to even, which is what "correctly rounded" means in README rule 2.
*/
#include "xacc.h"

#include <math.h>
#include <string.h>

#define NDIG GA_XACC_DIGITS
#define MASK32 0xffffffffull

void ga_sum_init(ga_sum_partial *p) { memset(p, 0, sizeof(*p)); }

void ga_sum_add_real(ga_sum_partial *p, double x, int sign) {
  ga_xacc_add_real(p, x, sign);
}

void ga_sum_add_int(ga_sum_partial *p, int64_t v, int sign) {
  int64_t lo = (int64_t)((uint64_t)v & MASK32);
  int64_t hi = v >> 32; /* arithmetic shift: v = hi * 2^32 + lo */
  p->nint += sign;
  /* unsigned arithmetic: no UB; between normalisations (every
  ** GA_XACC_SAFE_ADDS values at most) the halves stay far from wrapping */
  p->ilo = (int64_t)((uint64_t)p->ilo + (uint64_t)(sign * lo));
  p->ihi = (int64_t)((uint64_t)p->ihi + (uint64_t)(sign * hi));
}

static void digits_normalize(int64_t *acc, int n) {
  int64_t c = 0;
  for (int k = 0; k < n - 1; k++) {
    int64_t v = acc[k] + c;
    c = v >> 32;
    acc[k] = v & (int64_t)MASK32;
  }
  acc[n - 1] += c;
}

void ga_sum_normalize(ga_sum_partial *p) {
  digits_normalize(p->acc, NDIG);
  int64_t c = p->ilo >> 32;
  p->ilo &= (int64_t)MASK32;
  p->ihi = (int64_t)((uint64_t)p->ihi + (uint64_t)c);
  c = p->ihi >> 32;
  p->ihi &= (int64_t)MASK32;
  p->itop += c;
}

void ga_sum_merge(ga_sum_partial *into, const ga_sum_partial *from) {
  ga_sum_normalize(into);
  /* from may hold up to GA_XACC_SAFE_ADDS unnormalised adds; into is now
  ** normalised, so digit sums stay far below 2^63. */
  for (int k = 0; k < NDIG; k++)
    into->acc[k] += from->acc[k];
  into->ilo = (int64_t)((uint64_t)into->ilo + (uint64_t)from->ilo);
  into->ihi = (int64_t)((uint64_t)into->ihi + (uint64_t)from->ihi);
  into->itop += from->itop;
  into->nint += from->nint;
  into->nreal += from->nreal;
  into->npinf += from->npinf;
  into->nninf += from->nninf;
  into->nnan += from->nnan;
  ga_sum_normalize(into);
}

ga_i128 ga_sum_int_total(const ga_sum_partial *p) {
  return (ga_i128)p->itop * ((ga_i128)1 << 64) +
         (ga_i128)p->ihi * ((ga_i128)1 << 32) + (ga_i128)p->ilo;
}

void ga_sum_set_int_total(ga_sum_partial *p, ga_i128 t) {
  p->ilo = (int64_t)(t & (ga_i128)MASK32);
  p->ihi = (int64_t)((t >> 32) & (ga_i128)MASK32);
  p->itop = (int64_t)(t >> 64); /* arithmetic: floor, so ilo/ihi stay >= 0 */
}

/* Bits [lo, lo + 64) of a non-negative normalised digit string. */
static uint64_t bits_at(const int64_t *d, int n, int lo) {
  int k = lo >> 5;
  unsigned __int128 w = 0;
  for (int j = 2; j >= 0; j--) {
    w <<= 32;
    if (k + j < n && k + j >= 0)
      w |= (uint64_t)d[k + j];
  }
  return (uint64_t)(w >> (lo & 31));
}

/* Is any bit below position lo set? */
static int any_below(const int64_t *d, int lo) {
  int k = lo >> 5;
  for (int j = 0; j < k; j++)
    if (d[j])
      return 1;
  return ((uint64_t)d[k] & ((1ull << (lo & 31)) - 1)) != 0;
}

/* Round the non-negative normalised integer d (n digits) times
** 2^(-1074 - extra) to the nearest double, ties to even.  sticky says that
** some value below the lowest digit is also present (a division remainder).
** The 2^-1074 grid of subnormals is handled by never keeping bits below
** position `extra`. */
static double round_digits(const int64_t *d, int n, int extra, int sticky) {
  int t = n - 1;
  while (t >= 0 && d[t] == 0)
    t--;
  if (t < 0)
    return 0.0; /* zero, or (sticky) below half a subnormal: even */
  int h = 32 * t + (64 - __builtin_clzll((uint64_t)d[t])); /* bit length */
  int shift = h - 53;
  if (shift < extra)
    shift = extra;
  uint64_t mant;
  int rbit = 0;
  if (shift == 0) {
    mant = bits_at(d, n, 0);
  } else {
    mant = bits_at(d, n, shift);
    rbit = (int)((bits_at(d, n, shift - 1)) & 1);
    if (shift >= 2 && any_below(d, shift - 1))
      sticky = 1;
  }
  /* h < shift happens when a quotient lies below 2^-1075 (avg of tiny
  ** values): no bit is kept, and a shift by h - shift < 0 would be UB */
  mant &= (h - shift >= 64) ? ~0ull
          : (h <= shift)    ? 0
                            : ((1ull << (h - shift)) - 1);
  if (rbit && (sticky || (mant & 1))) {
    mant++;
    if (mant == (1ull << 53)) {
      mant >>= 1;
      shift++;
    }
  }
  return ldexp((double)mant, shift - extra - GA_XACC_BIAS);
}

/* Everything in p as one digit string (reals and integers); returns the sign
** (+1/-1) and leaves |value| normalised in out[NDIG]. */
static int exact_value(const ga_sum_partial *p, int64_t *out) {
  memcpy(out, p->acc, sizeof(p->acc));
  /* integers weigh 2^0 = bit 1074; ilo, ihi, itop are added as signed
  ** 64-bit values at bits 0, 32 and 64 of the integer part */
  const int64_t part[3] = {p->ilo, p->ihi, p->itop};
  for (int k = 0; k < 3; k++)
    ga_xacc_add_at(out, part[k] < 0 ? -(uint64_t)part[k] : (uint64_t)part[k],
                   GA_XACC_BIAS + 32 * k, part[k] < 0);
  digits_normalize(out, NDIG);
  if (out[NDIG - 1] >= 0)
    return 1;
  for (int k = 0; k < NDIG; k++)
    out[k] = -out[k];
  digits_normalize(out, NDIG);
  return -1;
}

static int nonfinite(const ga_sum_partial *p, double *r) {
  if (p->nnan > 0 || (p->npinf > 0 && p->nninf > 0)) {
    *r = NAN;
    return 1;
  }
  if (p->npinf > 0 || p->nninf > 0) {
    *r = p->npinf > 0 ? INFINITY : -INFINITY;
    return 1;
  }
  return 0;
}

double ga_sum_round(const ga_sum_partial *p) {
  double r;
  if (nonfinite(p, &r))
    return r;
  int64_t d[NDIG];
  int s = exact_value(p, d);
  r = round_digits(d, NDIG, 0, 0);
  return s < 0 ? -r : r;
}

double ga_sum_round_div(const ga_sum_partial *p, int64_t n) {
  double r;
  if (nonfinite(p, &r))
    return r;
  int64_t d[NDIG];
  int s = exact_value(p, d);
  /* 64 guard bits below 2^-1074, then long division by n digit by digit */
  int64_t q[NDIG + 2];
  unsigned __int128 rem = 0;
  uint64_t un = (uint64_t)(n < 0 ? -n : n);
  if (n < 0)
    s = -s;
  for (int k = NDIG + 1; k >= 0; k--) {
    uint64_t dig = k >= 2 ? (uint64_t)d[k - 2] : 0;
    unsigned __int128 cur = (rem << 32) | dig;
    q[k] = (int64_t)(uint64_t)(cur / un);
    rem = cur % un;
  }
  r = round_digits(q, NDIG + 2, 64, rem != 0);
  return s < 0 ? -r : r;
}

int ga_sum_result(const ga_sum_partial *p, int64_t *iv, double *rv) {
  if (p->nint + p->nreal == 0)
    return GA_SUM_NULL;
  if (p->nreal == 0) {
    ga_i128 t = ga_sum_int_total(p);
    if (t > INT64_MAX || t < INT64_MIN)
      return GA_SUM_OVERFLOW;
    *iv = (int64_t)t;
    return GA_SUM_INT;
  }
  *rv = ga_sum_round(p);
  return isnan(*rv) ? GA_SUM_NULL : GA_SUM_REAL;
}

static int cmp_int_real(int64_t i, double d) {
  if (d >= 0x1p63)
    return -1;
  if (d < -0x1p63)
    return 1;
  int64_t di = (int64_t)d; /* truncation is exact here */
  if (i != di)
    return i < di ? -1 : 1;
  double f = d - (double)di;
  return f > 0 ? -1 : (f < 0 ? 1 : 0);
}

int ga_num_cmp(int ka, int64_t a, int kb, int64_t b) {
  if (ka == GA_KIND_INT && kb == GA_KIND_INT)
    return (a > b) - (a < b);
  if (ka == GA_KIND_REAL && kb == GA_KIND_REAL) {
    double x = ga_bitsd(a), y = ga_bitsd(b);
    return (x > y) - (x < y);
  }
  if (ka == GA_KIND_INT)
    return cmp_int_real(a, ga_bitsd(b));
  return -cmp_int_real(b, ga_bitsd(a));
}

/* ---- the sum family's answer (xacc.h) ---- */

int ga_sum_value(const ga_sum_partial *p, int op, ga_value *out) {
  int64_t n = p->nint + p->nreal;
  out->type = GA_V_NULL;
  if (op == GA_AGG_TOTAL) { /* 0.0 when empty; NULL for +Inf with -Inf */
    double r = ga_sum_round(p);
    if (r == r)
      out->type = GA_V_REAL, out->r = r;
    return GA_OK;
  }
  if (op == GA_AGG_AVG) {
    if (n == 0)
      return GA_OK;
    double r = ga_sum_round_div(p, n);
    if (r == r)
      out->type = GA_V_REAL, out->r = r;
    return GA_OK;
  }
  int64_t iv = 0;
  double rv = 0;
  switch (ga_sum_result(p, &iv, &rv)) {
  case GA_SUM_INT:
    out->type = GA_V_INT;
    out->i = iv;
    break;
  case GA_SUM_REAL:
    out->type = GA_V_REAL;
    out->r = rv;
    break;
  case GA_SUM_OVERFLOW:
    return GA_OVERFLOW;
  }
  return GA_OK;
}
