/*
** xacc.h — exact summation and exact comparison on ga_partial.h's formats.
**
** ga_sum_* operate on a ga_sum_partial: adding values, merging partials,
** normalising carries, and the final conversion (int64 with overflow check,
** or one correct rounding to double).  ga_num_cmp compares an int64 or a
** double with another, exactly.
*/
#ifndef GA_XACC_H
#define GA_XACC_H

#include <stdint.h>

#include "ga_partial.h"
#include "value.h"

typedef __int128 ga_i128;

void ga_sum_init(ga_sum_partial *p);
/* Add (sign = +1) or remove (sign = -1, for window xInverse) one value. */
void ga_sum_add_real(ga_sum_partial *p, double x, int sign);
void ga_sum_add_int(ga_sum_partial *p, int64_t v, int sign);
/* into += from, exactly.  Both may be in any (unnormalised) state that
** respects GA_XACC_SAFE_ADDS; the result is normalised. */
void ga_sum_merge(ga_sum_partial *into, const ga_sum_partial *from);
/* Propagate carries: digits 0..N-2 end in [0, 2^32), the top one signed.
** The represented value is unchanged; the normalised form is canonical. */
void ga_sum_normalize(ga_sum_partial *p);
/* Exact integer total of the integers (ilo/ihi/itop), |t| < 2^126. */
ga_i128 ga_sum_int_total(const ga_sum_partial *p);
/* Replace the integer total by t, in normalised form (nint is left as is). */
void ga_sum_set_int_total(ga_sum_partial *p, ga_i128 t);

/* Results.  nvalues = nint + nreal. */
#define GA_SUM_NULL 0 /* no value, or +Inf with -Inf, or NaN: SQL NULL */
#define GA_SUM_INT 1
#define GA_SUM_REAL 2
#define GA_SUM_OVERFLOW 3 /* integers only, total outside int64 */
/* Result of sum() semantics (README rules 1-3): kind and value. */
int ga_sum_result(const ga_sum_partial *p, int64_t *iv, double *rv);
/* The correctly rounded value of everything in p, integers included
** (total() semantics: 0.0 when empty, never an overflow). NaN when +Inf
** and -Inf (or a NaN) were added. */
double ga_sum_round(const ga_sum_partial *p);
/* The correctly rounded value of (everything in p) / n, for avg(). */
double ga_sum_round_div(const ga_sum_partial *p, int64_t n);

/* Exact three-way comparison of two numbers given as (kind, bits). */
int ga_num_cmp(int ka, int64_t a, int kb, int64_t b);

static inline int64_t ga_dbits(double d) {
  union {
    double d;
    int64_t i;
  } u;
  u.d = d;
  return u.i;
}
static inline double ga_bitsd(int64_t i) {
  union {
    double d;
    int64_t i;
  } u;
  u.i = i;
  return u.d;
}

/* Add (or subtract) m * 2^(pos - 1074), m < 2^64: at most 3 digits, each
** growing by less than 2^33. */
static inline void ga_xacc_add_at(int64_t *acc, uint64_t m, int pos, int neg) {
  int k = pos >> 5, sh = pos & 31;
  /* m = hi*2^32 + lo; each half shifted stays below 2^63, so no 128-bit
  ** shift is needed */
  uint64_t lo = (m & 0xffffffffu) << sh, hi = (m >> 32) << sh;
  int64_t d0 = (int64_t)(lo & 0xffffffffu);
  int64_t d1 = (int64_t)((lo >> 32) + (hi & 0xffffffffu));
  int64_t d2 = (int64_t)(hi >> 32);
  int64_t flip = -(int64_t)neg; /* branch-free: signs are data, unpredictable */
  d0 = (d0 ^ flip) - flip;
  d1 = (d1 ^ flip) - flip;
  d2 = (d2 ^ flip) - flip;
  acc[k] += d0;
  acc[k + 1] += d1;
  acc[k + 2] += d2;
}

/* The body of ga_sum_add_real, inline for the reducers' loops. */
static inline void ga_xacc_add_real(ga_sum_partial *p, double x, int sign) {
  uint64_t b = (uint64_t)ga_dbits(x);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & ((1ull << 52) - 1);
  p->nreal += sign;
  if (e == 0x7ff) {
    if (m)
      p->nnan += sign;
    else if (b >> 63)
      p->nninf += sign;
    else
      p->npinf += sign;
    return;
  }
  if (e == 0) {
    if (m == 0)
      return; /* +-0 adds nothing */
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  ga_xacc_add_at(p->acc, m, e, (int)(b >> 63) ^ (sign < 0));
}

/* What gpu_sum / gpu_total / gpu_avg (op = GA_AGG_*) give over the values
** behind partial p: value and type (the aggregates' answer, agg.c, and the
** states', engine/state/).  GA_OK or GA_OVERFLOW (gpu_sum's 'integer
** overflow'). */
int ga_sum_value(const ga_sum_partial *p, int op, ga_value *out);

#endif
