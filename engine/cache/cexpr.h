/*
** cexpr.h — arithmetic over a cache entry's columns (issue 20, section 2):
** a small stack program that the host cache runs a row at a time, with
** SQLite's own semantics, bit for bit.
**
** Rules:
**   1. Values are NULL, INTEGER or REAL (a TEXT column is never an operand:
**      planner/cache_shape.c).  NULL in, NULL out.
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
**   4. One operation a statement, and the file is ISO C (-std=c11: GCC's
**      default there is -ffp-contract=off): no a*b + c is ever fused.
**   5. A word at a time (ga_cexpr_eval_word): 64 rows in the entries' own
**      layout (values, isint and notnull masks).  Lanes whose operands are
**      all REAL, or all INTEGER without overflow, run as plain loops; any
**      other lane takes ga_cx_binary, so every lane is rule 2's value.
*/
#ifndef GA_CEXPR_H
#define GA_CEXPR_H

#include <stdint.h>

#include "value.h"

#define GA_CX_MAX 48 /* instructions of one program */

enum {
  GA_CX_COL,
  GA_CX_LIT,
  GA_CX_NEG,
  GA_CX_ADD,
  GA_CX_SUB,
  GA_CX_MUL,
  GA_CX_DIV,
  GA_CX_MOD
};

typedef struct ga_cx_ins {
  int op;
  int col;    /* GA_CX_COL: the entry column */
  ga_value v; /* GA_CX_LIT: the literal (NULL, INT or REAL) */
} ga_cx_ins;

typedef struct ga_cexpr {
  int n;
  ga_cx_ins ins[GA_CX_MAX];
} ga_cexpr;

/* SQLite's `a op b` (rule 2; op GA_CX_ADD .. GA_CX_MOD) into *out. */
void ga_cx_binary(int op, const ga_value *a, const ga_value *b, ga_value *out);

/* Run x on one row: fetch(arg, col, &v) gives column col's value there.
** Programs are made valid by their parser (every operand present). */
void ga_cexpr_eval(const ga_cexpr *x,
                   void (*fetch)(const void *arg, int col, ga_value *v),
                   const void *arg, ga_value *out);

/* 64 rows of a value (rule 5): v[j] is lane j's int64 or double bits,
** bit j of isint / notnull as in an entry's bitmaps. */
typedef struct ga_cx_word {
  uint64_t v[64];
  uint64_t isint, notnull;
} ga_cx_word;

/* Run x on 64 rows: load(arg, col, &w) gives column col's word.  stack has
** room for GA_CX_MAX words; the value lands in *out (which may be
** stack[0]).  Lanes past the rows the caller has are computed from
** whatever load gave them, harmlessly. */
void ga_cexpr_eval_word(const ga_cexpr *x,
                        void (*load)(const void *arg, int col, ga_cx_word *w),
                        const void *arg, ga_cx_word *stack, ga_cx_word *out);

#endif
