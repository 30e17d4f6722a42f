/*
** xvar.h — exact variance and standard deviation (issue 39): n, Σx and Σx²
** kept exactly, the variance rounded once, the standard deviation the
** square root of the exact variance, rounded once.
**
** Rules:
**   1. Σx is gpu_sum's partial (ga_sum_partial, xacc.h): its counts are the
**      variance's too (n = nint + nreal; npinf, nninf, nnan).
**   2. Σx² is a second fixed-point window, digit k weighing 2^(32k - 2148):
**      a finite double x = m * 2^(p - 1074) (m < 2^53) squares exactly to
**      m² * 2^(2p - 2148), m² < 2^106 added at bit 2p; an int64 v squares to
**      v² < 2^127 (as a 128-bit integer) added at bit 2148.  No double-double:
**      its low part is not representable below about 2^-485, and x²
**      overflows at 2^512.  A digit grows by less than 2^33 an add, as in
**      xacc.h, so GA_XACC_SAFE_ADDS adds fit between normalisations.
**   3. Merging is integer addition of both windows and the counts, in any
**      order; removal (window xInverse) is the same with the sign flipped,
**      so a normalised state stepped back equals the recomputed one bit for
**      bit (normalised digits are canonical).
**   4. The result: with A = Σx * 2^1074 and B = Σx² * 2^2148 (integers),
**      N = n*B - A² >= 0, and the variance is N / (D * 2^2148) with
**      D = n(n-1) (samp) or n² (pop), rounded once to nearest, ties to
**      even, subnormals on their grid, beyond DBL_MAX +Inf.  The standard
**      deviation is sqrt(N / D) * 2^-1074, from an integer square root of
**      N * 4^j / D with j chosen so that 62 bits or more are kept, and its
**      exactness (remainder zero) decides ties.  Nothing is rounded before.
**   5. NULL: samp forms for n < 2, pop forms for n = 0, and any infinity
**      (or NaN) among the values (the variance of a set holding an
**      infinity has no finite value; SQLite has no NaN to give).
*/
#ifndef GA_XVAR_H
#define GA_XVAR_H

#include <stdint.h>

#include "ga_partial.h"

/* GA_XSQ_DIGITS, GA_XSQ_BIAS: ga_partial.h (the kernels write them too) */

/* The four results (rule 4). */
#define GA_VAR_SAMP 0
#define GA_VAR_POP 1
#define GA_SD_SAMP 2
#define GA_SD_POP 3

typedef struct ga_var_partial {
  ga_sum_partial sum;        /* Σx and the counts (rule 1) */
  int64_t sq[GA_XSQ_DIGITS]; /* Σx² (rule 2) */
  int64_t adds;              /* adds since the digits were normalised */
} ga_var_partial;

/* An all-zero ga_var_partial is the empty state. */
void ga_var_init(ga_var_partial *p);
/* Add (sign +1) or remove (sign -1) one value. */
void ga_var_add_real(ga_var_partial *p, double x, int sign);
void ga_var_add_int(ga_var_partial *p, int64_t v, int sign);
/* into += sign * from (rule 3); the result is normalised. */
void ga_var_merge(ga_var_partial *into, const ga_var_partial *from, int sign);
/* Propagate carries (canonical form: digits 0..N-2 in [0, 2^32)). */
void ga_var_normalize(ga_var_partial *p);
/* n of the state. */
static inline int64_t ga_var_count(const ga_var_partial *p) {
  return p->sum.nint + p->sum.nreal;
}
/* The result `which` (GA_VAR_* / GA_SD_*): 1 with *out set, or 0 for NULL
** (rule 5; also a state whose n*Σx² < (Σx)², which no values give). */
int ga_var_result(const ga_var_partial *p, int which, double *out);
/* Is n*Σx² >= (Σx)² and Σx² >= 0 (a state that values can give)? */
int ga_var_consistent(const ga_var_partial *p);
/* Is Σx² (normalised 32-bit digits) below n * 2^2048, as n values give
** (each x² < 2^2048, an int64's < 2^127), with no digit from 2^4224 up?
** A decoder refuses a state that fails it (vstate.c, qpartial.c). */
int ga_var_bounded(const ga_var_partial *p);

/* Add m * 2^(pos - 2148) (m < 2^128) to Σx²'s digits; neg subtracts. */
static inline void ga_xsq_add_at(int64_t *sq, unsigned __int128 m, int pos,
                                 int neg) {
  int k = pos >> 5, sh = pos & 31;
  int64_t flip = -(int64_t)neg;
  int64_t carry = 0;
  for (int j = 0; j < 4; j++) {
    uint64_t c = (uint64_t)(m >> (32 * j)) & 0xffffffffu;
    uint64_t s = c << sh;                           /* < 2^63 */
    int64_t d = carry + (int64_t)(s & 0xffffffffu); /* < 2^33 */
    carry = (int64_t)(s >> 32);
    sq[k + j] += (d ^ flip) - flip;
  }
  sq[k + 4] += (carry ^ flip) - flip;
}

/* The body of ga_var_add_real's square, for reducers' loops: x finite. */
static inline void ga_xsq_add_real(int64_t *sq, uint64_t bits, int neg) {
  int e = (int)((bits >> 52) & 0x7ff);
  uint64_t m = bits & ((1ull << 52) - 1);
  if (e == 0) {
    if (m == 0)
      return;
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  ga_xsq_add_at(sq, (unsigned __int128)m * m, 2 * e, neg);
}

#endif
