/*
** gstate.h — the compact exact state that a group of the parallel scan
** holds (engine/scan/scan_group.h): the same answers as ga_xstate (state.h)
** in about a fifth of its memory.
**
** Why: a ga_xstate carries a whole superaccumulator (68 digits, 544 bytes)
** for its sum, whatever the values.  A scan with many groups (d2 of
** bench/RESULTS.md §11: three measures, rows/600 x 21 groups) holds one per
** group and measure, merges one per group and piece, and so spent more on
** moving and normalising digits than on reading rows; its groups passed the
** memory cap where SQLite's sorted GROUP BY did not.
**
** Rules:
**   1. Exactness: a ga_wsum holds the same digits as a ga_sum_partial
**      (xacc.h), only those of a window of GA_WSUM_DIGITS consecutive
**      digits; every other digit is zero.  Values of one column usually
**      span a few binary orders of magnitude, so the window holds them all.
**      A value outside the window moves the window when the digits in use
**      and the value fit in one; otherwise the state goes wide: the whole
**      accumulator is allocated and holds the digits from then on.  Either
**      way ga_wsum_expand gives the ga_sum_partial of the same value, so
**      every answer is ga_xstate's, bit for bit.
**   2. Headroom: the window's top digit only receives carries, never a
**      value's own bits (each add lands at most at the digit below it).  A
**      digit grows by less than 2^33 a value, as in xacc.h, and by less
**      than 2^33 a merged state's digit (normalised, or itself bounded so);
**      `adds` counts both since the digits were last normalised, and
**      reaching GA_WSUM_MAX_ADDS normalises them: every digit stays below
**      2^61.  A merge of two windows that line up is then eight additions.
**   3. Max and min, counts and the integer halves are ga_xstate's (the
**      same fields and the same update code), so their rules hold as
**      written in state.h.
**   4. A sum or total of REALs alone whose window holds a value of at
**      most 53 bits in two consecutive digits is that double exactly:
**      ga_gstate_result returns it without expanding the window (a post
**      query reads 200,000 groups' sums: issue 37), the same bits as the
**      correct rounding of rule 1's digits.
**   5. A DISTINCT aggregate's state (gpu_query, issue 37) counts its rows
**      as any state does (count(*) may read them) and keeps its non-NULL
**      values in set (dset.h) instead of count, sum, max and min, which
**      stay empty; ga_gstate_result and ga_gstate_count answer from the
**      set, merges unite the sets, and the set's bytes are heap bytes.
**   6. Blocks (cache_host.c rule 15): a caller may sum many values of one
**      scale as integers and add their total once (ga_wsum_add_fixed): the
**      digits then differ from adding each value, the value they hold does
**      not, and every answer and encoded state reads the value (normalised
**      digits are canonical; rule 4 reads the digits' value).  The add is
**      two of rule 2's (its 128 bits in two 64-bit halves), counted so.
**   7. A sum or total of INTEGERs alone (no REAL: the window holds no
**      digit) is read from the integer halves: ga_sum_result's integer
**      case (NULL, the INTEGER, or the overflow), and total()'s double
**      where the total is within 2^53 (exact, so correctly rounded);
**      ga_gstate_overflows says whether sum() would overflow, without
**      reading the window (cache_host.c rule 19 keeps such a group).
**   8. Squares (issue 39): a state that a variance reads also keeps Σx²
**      in sq (xvar.h rule 2's window, allocated at the first number and
**      counted in the heap bytes), stepped by the caller next to the sum
**      (ga_gstate_sq_step, sum()'s view of the value); Σx and the counts
**      are the sum's.  Merges add the windows (xvar.h rule 3), so
**      ga_gstate_result's GA_GSTATE_VAR ops give xvar.c's answer over the
**      same values, bit for bit, in any order of merges.
**   9. A DISTINCT variance (issue 39): its state keeps the set (rule 5)
**      and no Σx²; ga_gstate_result's GA_GSTATE_VAR ops step each of the
**      set's representatives (sum()'s view of the first in rowid order)
**      into a state of their own, Σx² included, and answer from it:
**      xvar.c's answer over the distinct values, whatever the order of
**      the set.
*/
#ifndef GA_GSTATE_H
#define GA_GSTATE_H

#include <stdint.h>

#include "dset.h"
#include "state.h"

#include "xvar.h"

#define GA_WSUM_DIGITS 8 /* 256 bits: 5 digits besides a value's 3 */
#define GA_WSUM_MAX_ADDS (1 << 27)

/* The exact sum, windowed (rule 1).  The integer fields are
** ga_sum_partial's. */
typedef struct ga_wsum {
  int64_t d[GA_WSUM_DIGITS]; /* digits lo .. lo + GA_WSUM_DIGITS - 1 */
  int32_t lo;                /* xacc digit index of d[0] */
  int32_t adds;              /* values and merges since normalised (rule 2) */
  ga_sum_partial *wide;      /* every digit once the window could not hold them;
                                only its acc is used (sqlite3_malloc64) */
  int64_t ilo, ihi, itop, nint, nreal, npinf, nninf, nnan;
} ga_wsum;

/* One group's state for one aggregate argument: ga_xstate with a ga_wsum.
** All zero is the empty state (ga_gstate_init): a window at digit 0 that
** moves at the first value above it. */
/* Rule 8: Σx² (xvar.h rule 2), adds since its digits were normalised. */
typedef struct ga_gsq {
  int64_t d[GA_XSQ_DIGITS];
  int64_t adds;
} ga_gsq;

typedef struct ga_gstate {
  int64_t rows, count;
  ga_wsum sum;
  ga_bval max, min;
  int enc;
  ga_dset *set; /* rule 5: a DISTINCT aggregate's values, else NULL */
  ga_gsq *sq;   /* rule 8: Σx² where a variance reads the state, else NULL */
} ga_gstate;

/* ga_gstate_result's ops for the variance (rule 8): GA_GSTATE_VAR + one of
** xvar.h's GA_VAR_SAMP, GA_VAR_POP, GA_SD_SAMP, GA_SD_POP. */
#define GA_GSTATE_VAR 12

/* Rule 8: the square of num (sum()'s view: GA_V_NULL adds nothing, INT,
** REAL; an infinity counts in the sum only) into s->sq.  The caller steps
** the sum itself.  GA_OK or GA_NOMEM (nothing added then). */
int ga_gstate_sq_step(ga_gstate *s, const ga_value *num);
/* Rule 8 with rule 6's blocks: add m * 2^(pos - 2148) (m < 2^128, a sum
** of squares of one scale; pos <= 32 * GA_XSQ_DIGITS - 160) to s->sq,
** counted as one add.  GA_OK or GA_NOMEM (nothing added then). */
int ga_gstate_sq_add(ga_gstate *s, unsigned __int128 m, int pos);
/* Rule 8: the exact (n, Σx, Σx²) of s into *out (s->sq NULL: Σx² = 0). */
void ga_gstate_var_view(const ga_gstate *s, ga_var_partial *out);

void ga_gstate_init(ga_gstate *s);
void ga_gstate_clear(ga_gstate *s); /* frees what it holds; s is empty */
/* Heap bytes s holds beyond itself (the wide accumulator, TEXT/BLOB
** bytes of max and min), for the scan's memory cap. */
int64_t ga_gstate_heap_bytes(const ga_gstate *s);

/* The slow half of adding a real (the value at xacc position pos, mantissa
** m, negative when neg): move the window or go wide.  GA_OK or GA_NOMEM
** (nothing added then). */
int ga_wsum_add_slow(ga_wsum *w, uint64_t m, int pos, int neg);
/* Rule 6: add s * 2^(pos - 1074) exactly (a block of values summed as
** integers of one scale), |s| < 2^126, pos <= GA_WSUM_FIXED_MAX_POS; counts
** two adds (rule 2), and no value (the caller counts nreal or nint).
** GA_OK or GA_NOMEM (then the caller gives the state up: part of s may be
** in it). */
#define GA_WSUM_FIXED_MAX_POS 1900
int ga_wsum_add_fixed(ga_wsum *w, __int128 s, int pos);
/* Carries: digits below the window's top end in [0, 2^32). */
void ga_wsum_normalize(ga_wsum *w);
/* The ga_sum_partial of the same value and counts (rule 1). */
void ga_wsum_expand(const ga_wsum *w, ga_sum_partial *out);

static inline __attribute__((always_inline)) int ga_wsum_add_real(ga_wsum *w,
                                                                  double x) {
  uint64_t b = (uint64_t)ga_dbits(x);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & ((1ull << 52) - 1);
  w->nreal++;
  if (e == 0x7ff) {
    if (m)
      w->nnan++;
    else if (b >> 63)
      w->nninf++;
    else
      w->npinf++;
    return GA_OK;
  }
  if (e == 0) {
    if (m == 0)
      return GA_OK; /* +-0 adds nothing */
  } else {
    m |= 1ull << 52;
    e -= 1;
  }
  int neg = (int)(b >> 63);
  if (w->wide) {
    ga_xacc_add_at(w->wide->acc, m, e, neg);
    return GA_OK;
  }
  /* digits k .. k+2, and k+3 as headroom (rule 2), inside the window */
  unsigned j = (unsigned)((e >> 5) - w->lo);
  if (j <= GA_WSUM_DIGITS - 4) {
    ga_xacc_add_at(w->d, m, e - 32 * w->lo, neg);
    return GA_OK;
  }
  int rc = ga_wsum_add_slow(w, m, e, neg);
  if (rc)
    w->nreal--;
  return rc;
}

static inline void ga_wsum_add_int(ga_wsum *w, int64_t v) {
  /* ga_sum_add_int's halves (xacc.c) */
  w->nint++;
  w->ilo = (int64_t)((uint64_t)w->ilo + ((uint64_t)v & 0xffffffffu));
  w->ihi = (int64_t)((uint64_t)w->ihi + (uint64_t)(v >> 32));
}

/* The row steps of state.h, for a ga_gstate.  GA_OK or GA_NOMEM (only a
** REAL that makes the state go wide allocates; the row is not counted
** then).  The _sum_ steps leave max and min alone: for a state that no
** min() or max() reads (the column cache's values, ga_cquery.best), they
** are most of a step's work. */
static inline void ga_gstate_step_sum_int(ga_gstate *s, int64_t v) {
  s->rows++;
  s->count++;
  ga_wsum_add_int(&s->sum, v);
  if (++s->sum.adds >= GA_WSUM_MAX_ADDS)
    ga_wsum_normalize(&s->sum);
}

static inline int ga_gstate_step_sum_real(ga_gstate *s, double v) {
  if (ga_wsum_add_real(&s->sum, v))
    return GA_NOMEM;
  s->rows++;
  s->count++;
  if (++s->sum.adds >= GA_WSUM_MAX_ADDS)
    ga_wsum_normalize(&s->sum);
  return GA_OK;
}

static inline int ga_gstate_step_int(ga_gstate *s, int64_t v) {
  ga_gstate_step_sum_int(s, v);
  ga_xstate_best_int(&s->max, v, 0);
  ga_xstate_best_int(&s->min, v, 1);
  return GA_OK;
}

static inline int ga_gstate_step_real(ga_gstate *s, double v) {
  if (ga_gstate_step_sum_real(s, v))
    return GA_NOMEM;
  ga_xstate_best_real(&s->max, v, 0);
  ga_xstate_best_real(&s->min, v, 1);
  return GA_OK;
}

static inline void ga_gstate_step_null(ga_gstate *s) { s->rows++; }

/* Any value: num is sum()'s classification (GA_V_NULL, INT or REAL), raw
** max()'s view (ga_xstate_step).  GA_OK or GA_NOMEM.  The sum's half
** alone (rows, count, sum) is ga_gstate_step_sum; max()'s and min()'s are
** ga_best_update on s->max and s->min. */
int ga_gstate_step(ga_gstate *s, const ga_value *num, const ga_value *raw);
int ga_gstate_step_sum(ga_gstate *s, const ga_value *num);

/* into += later, where later covers rows after into's: among equal max/min
** values into's wins (state.h rule 2).  GA_OK, GA_NOMEM or GA_BADSTATE (a
** merged count would leave int64, or a set of picked order statistics,
** dset.h rule 6, on either side); into is unchanged on failure, but for
** GA_INTERRUPTED (the sets' merge polled the interrupt: engine/state/
** dset.h rule 5), after which into's set holds part of later's and the
** caller fails the call. */
int ga_gstate_merge(ga_gstate *into, const ga_gstate *later);

/* A ga_xstate's contents into an empty s (x is left empty: its max and min
** move).  GA_OK or GA_NOMEM (x unchanged then). */
int ga_gstate_take(ga_gstate *s, ga_xstate *x);

/* max()'s (want_min 0) or min()'s step for a value v of rowid piece
** `piece` that may come after rows of later pieces (the scan's direct
** mode): *tag is the piece of the current best, and a tie goes to the
** earlier piece (within a piece, rows come in rowid order: the first
** stays).  GA_OK or GA_NOMEM. */
int ga_gstate_best_tagged(ga_bval *b, int64_t *tag, int64_t piece,
                          const ga_value *v, int want_min);

/* Direct mode's step of a number or NULL x (GA_V_NULL, INT or REAL) of
** rowid piece `piece`: the sum, and max and min by ga_gstate_best_tagged
** with tag[0] and tag[1].  GA_OK or GA_NOMEM. */
int ga_gstate_step_tagged(ga_gstate *s, int64_t *tag, int64_t piece,
                          const ga_value *x);

/* ga_xstate_result's answer for s (out->p may point into s); with a set
** (rule 5), the answer over its values, or GA_INTERRUPTED (dset.h rule 5:
** the loop over them polled the interrupt). */
int ga_gstate_result(const ga_gstate *s, int op, ga_value *out);
/* 1 when sum() over s raises "integer overflow" (INTEGERs alone whose total
** leaves int64: rule 7), else 0. */
int ga_gstate_overflows(const ga_gstate *s);
/* count(e) of s: its count, or its set's values (rule 5). */
int64_t ga_gstate_count(const ga_gstate *s);

/* A read-only ga_xstate view of s, for ga_xstate_result and
** ga_state_encode: out's max and min point into s (never clear out). */
void ga_gstate_view(const ga_gstate *s, ga_xstate *out);

#endif
