/*
** ga_partial.h — the mergeable partial results that every reducer produces.
**
** The CPU reducer (engine/reduce/cpu_reduce.c) and the CUDA kernels (kernels/)
** both write these structs, and the engine merges them in any order.  Every
** field is an integer, and merging is integer addition (sum) or a total order
** (max/min), so the merged result does not depend on how the input was cut
** into chunks, which device reduced which chunk, or in which order partials
** came back.  That is what makes gpu_sum bit-identical on every path.
**
** This header is plain C and is included by C11 host code and by CUDA code.
*/
#ifndef GA_PARTIAL_H
#define GA_PARTIAL_H

#include <stdint.h>

/*
** Exact real sums: a "small superaccumulator" (after R. Neal, arXiv
*1505.05571).
**
** A finite double is m * 2^(p - 1074) with an integer mantissa m < 2^53 and
** p = biased exponent - 1 (p = 0 for subnormals), 0 <= p <= 2045.  The
** accumulator is a little-endian array of signed 64-bit digits, digit k
** weighing 2^(32k - 1074).  Adding m at position p adds (m << (p & 31)) into
** digits p>>5 .. (p>>5)+2, about 32 bits to a digit, so each digit grows by
** less than 2^33 per value: 2^29 values can be added before any carry must be
** propagated.
** The top digit is signed and holds the carries; 68 digits cover
** 2^-1074 .. 2^1102, room for 2^64 values near DBL_MAX.
*/
#define GA_XACC_DIGITS 68
#define GA_XACC_DIGIT_BITS 32
#define GA_XACC_BIAS 1074 /* digit 0, bit 0 weighs 2^-1074 */
/* values that may be added to a partial before it must be normalised */
#define GA_XACC_SAFE_ADDS (1 << 29)

/* The sum partial.  Integers are kept apart from reals: their total is exact
** and decides the result type.  An int64 v is split as v = hi*2^32 + lo with
** lo = v & 0xffffffff (unsigned) and hi = v >> 32 (arithmetic), and ilo/ihi
** sum those halves, so 2^31 integers fit before a carry is needed and the
** GPU can merge with plain 64-bit atomics.  Normalising carries ilo into ihi
** and ihi into itop, so the integer total
**     itop * 2^64 + ihi * 2^32 + ilo
** is exact for any count of int64 values below 2^62 (|total| < 2^126):
** nothing wraps, and an overflow is judged on the exact total only, never on
** a running prefix, so it cannot depend on order or chunking.  A normalised
** partial has ilo and ihi in [0, 2^32) and a signed itop: equal totals give
** equal fields.  itop comes last so that reducers that only add halves (the
** GPU kernels, the CPU reducer) leave it alone (zeroed output). */
typedef struct ga_sum_partial {
  int64_t acc[GA_XACC_DIGITS]; /* reals, superaccumulator digits */
  int64_t ilo;                 /* sum of low 32-bit halves (each 0..2^32-1) */
  int64_t ihi;                 /* sum of high halves (signed) */
  int64_t nint;                /* integers seen */
  int64_t nreal;               /* reals seen (Inf and NaN included) */
  int64_t npinf;               /* +Inf seen */
  int64_t nninf;               /* -Inf seen */
  int64_t nnan;                /* NaN seen */
  int64_t itop;                /* integer carries out of ihi (2^64 each) */
} ga_sum_partial;

/* Σx² of the exact variance (issue 39; engine/reduce/xvar.h, kernels/var.cu):
** signed 64-bit digits of 32 bits, digit k weighing 2^(32k - 2148), so a
** double's exact square m² * 2^(2p - 2148) (m < 2^53) lands at bit 2p and
** an int64's at bit 2148; 136 digits reach n * 2^2048 with room. */
#define GA_XSQ_DIGITS 136
#define GA_XSQ_BIAS 2148

/* Kinds of value in the numeric stream. */
#define GA_KIND_NONE 0
#define GA_KIND_INT 1
#define GA_KIND_REAL 2

/* The max/min partial over numbers: the best value and the position of its
** first occurrence in the numeric stream.  Values compare exactly across
** kinds (int64 vs double, no rounding); equal values keep the smaller idx,
** which gives max()'s rule that the first value seen wins a tie.  The order
** (value, then idx) is total, so any reduction order gives the same result. */
typedef struct ga_best_partial {
  int32_t kind; /* GA_KIND_NONE when the input was empty */
  int32_t pad;
  int64_t idx;  /* position in the numeric stream */
  int64_t bits; /* the int64, or the double's bits */
} ga_best_partial;

/* Layout of a chunk of numeric values handed to a reducer: 64-bit words that
** are all int64, all doubles, or mixed with a bitmap (bit i of word i/64 set
** means value i is an int64). */
#define GA_LAYOUT_INT 0
#define GA_LAYOUT_REAL 1
#define GA_LAYOUT_MIXED 2

#endif
