/*
** cexpr.h — expressions over a cache entry's columns (issue 20, section 2):
** a small stack program that the host cache runs 64 rows at a time, with
** SQLite's own semantics, bit for bit.  planner/cache_shape.c writes the
** programs; kernels/cache_expr.cu runs the same ones on the GPU.
**
** Rules:
**   1. Values are NULL, INTEGER or REAL.  A TEXT column's value is its code
**      (engine/cache/dict.h: the value's rank in BINARY order), an INTEGER
**      the planner only compares with codes of the same dictionary, or with
**      a TEXT literal's insertion point, or maps (GA_CX_MAP).  NULL in, NULL
**      out, but for IS, IS NULL, CASE, coalesce and the logic of AND / OR.
**   2. `a op b` is SQLite's OP_Add, OP_Subtract, OP_Multiply, OP_Divide,
**      OP_Remainder:
**      - both INTEGER: + - * exactly, and on overflow (double)a op (double)b
**        (9223372036854775807 + 1025 is 9.223372036854778e18); / and %
**        truncate; x / 0 and x % 0 are NULL; -9223372036854775808 / -1 is
**        REAL; x % -1 is 0;
**      - a REAL operand: both as doubles; x / 0.0 is NULL; % turns both into
**        int64 (saturating), is NULL for a zero divisor and is REAL
**        (5.5 % 0.5 is NULL, 1e20 % 3 is 1.0);
**      - a REAL result that is NaN (Inf - Inf) is NULL.
**   3. -x is SQLite's 0 - x (so -(-9223372036854775808) is REAL and -0.0
**      is 0.0); +x is x.
**   4. Comparisons of numbers are exact across INTEGER and REAL (1 = 1.0);
**      the result is 1, 0 or NULL.  A value is true when it is a number
**      other than 0 (0.0 and -0.0 are false).  AND, OR and NOT are SQLite's
**      three-valued logic; x IN (list) is 1 on a match, else NULL when x or
**      an element is NULL, else 0; x BETWEEN a AND b is x >= a AND x <= b
**      with x read once; IS / IS NOT compare with NULL equal to NULL.
**      CASE takes the first true WHEN's THEN (else ELSE, else NULL);
**      coalesce the first non-NULL argument; abs(x) of an INTEGER is an
**      INTEGER, of a REAL a REAL negated when below 0 (abs(-0.0) is -0.0,
**      as SQLite's).
**   5. Errors: abs(-9223372036854775808) is an error in SQLite.  A lane
**      that may raise one is marked (ga_cx_word.err) wherever it flows, and
**      the caller takes the uncached path when a row it reads is marked,
**      so SQLite reports it (or not, where it would not evaluate it).
**   6. One operation a statement, and the file is ISO C (-std=c11: GCC's
**      default there is -ffp-contract=off): no a*b + c is ever fused.
**   7. A word at a time: 64 rows in the entries' own layout (values, isint
**      and notnull masks).  Lanes whose operands are all REAL (or INTEGER
**      with REAL), or all INTEGER without overflow, run as plain loops; any
**      other lane takes the scalar rule, so every lane is rules 2-4's value.
**   8. x IN a set (GA_CX_INSET: an IN subquery's rows, planner/cache_expr.c
**      rule 4): the set is a map of n numbers (or codes) in ascending order
**      (ga_cx_cmp's, exact across INTEGER and REAL, no two equal), found by
**      binary search; where every element is an INTEGER, a bitmap over
**      [base, base + 64 * words) answers an INTEGER lane.  1 on a match,
**      else NULL when x is NULL or the set holds a NULL, else 0; the empty
**      set gives 0 even for a NULL x (rule 4's IN ()).  The host runs it;
**      the GPU cache declines programs with a set (planner/cache_plan.c).
*/
#ifndef GA_CEXPR_H
#define GA_CEXPR_H

#include <stdint.h>

#include "cx_ops.h" /* the instructions, the scalar rules */
#include "value.h"

#define GA_CX_MAX 64 /* instructions of one program */

typedef struct ga_cx_ins {
  int op;
  int col, a, b;
  ga_value v;
} ga_cx_ins;

/* A derived column (planner/cache_derive.c): the value SQLite computed for
** each code of one TEXT column's dictionary, as words (code n: the value
** for a NULL column value).  Also rule 8's set (n elements, v and type)
** and its bitmap (n words in v, type NULL). */
typedef struct ga_cx_map {
  int64_t n; /* codes (n + 1 entries with the NULL one) */
  uint64_t *v;
  uint8_t *type; /* GA_V_NULL, GA_V_INT or GA_V_REAL (= GA_CX_T*) */
  /* on the GPU (engine/cache/cache_gpu.c): copies, made once a query */
  void *d_v, *d_type;
} ga_cx_map;

/* Literals of IN lists, and the maps, shared by one query's programs. */
#define GA_CX_POOL 256
typedef struct ga_cx_env {
  int npool;
  ga_value pool[GA_CX_POOL];
  int nmaps;
  ga_cx_map *maps;
} ga_cx_env;

typedef struct ga_cexpr {
  int n;
  int depth; /* the stack it needs */
  ga_cx_ins ins[GA_CX_MAX];
  const ga_cx_env *env;
} ga_cexpr;

/* SQLite's `a op b` (rule 2; op GA_CX_ADD .. GA_CX_MOD) into *out. */
void ga_cx_binary(int op, const ga_value *a, const ga_value *b, ga_value *out);

/* 64 rows of a value (rule 7): v[j] is lane j's int64 or double bits, bit
** j of isint / notnull as in an entry's bitmaps; err marks rule 5's
** lanes. */
typedef struct ga_cx_word {
  uint64_t v[64];
  uint64_t isint, notnull, err;
} ga_cx_word;

/* Lane j of a word (its values, isint and notnull bits) as a value (NULL,
** INT or REAL). */
static inline void ga_cx_lane_of(const uint64_t *vals, uint64_t isint,
                                 uint64_t notnull, int j, ga_value *v) {
  uint64_t u = vals[j];
  v->type = !((notnull >> j) & 1) ? GA_V_NULL
            : (isint >> j) & 1    ? GA_V_INT
                                  : GA_V_REAL;
  v->n = 0;
  v->p = 0;
  v->i = v->type == GA_V_INT ? (int64_t)u : 0;
  v->r = v->type == GA_V_REAL ? ga_cx_d(u) : 0.0;
}
static inline void ga_cx_lane(const ga_cx_word *w, int j, ga_value *v) {
  ga_cx_lane_of(w->v, w->isint, w->notnull, j, v);
}

/* Run x on 64 rows: load(arg, col, &w) gives column col's word.  stack has
** room for x->depth words; the value lands in *out.  Lanes past the rows
** the caller has are computed from whatever load gave them, harmlessly. */
void ga_cexpr_eval_word(const ga_cexpr *x,
                        void (*load)(const void *arg, int col, ga_cx_word *w),
                        const void *arg, ga_cx_word *stack, ga_cx_word *out);

#endif
