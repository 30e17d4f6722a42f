/*
** cexpr.c — arithmetic over a cache entry's columns (cexpr.h): SQLite's
** OP_Add ... OP_Remainder, one row at a time.
*/
#include "cexpr.h"

#include <math.h>
#include <string.h>

/* SQLite's doubleToInt64: saturating, for % with a REAL operand. */
static int64_t to_int64(double r) {
  if (r <= -9223372036854775808.0)
    return INT64_MIN;
  if (r >= 9223372036854775808.0)
    return INT64_MAX;
  return (int64_t)r;
}

static double as_double(const ga_value *v) {
  return v->type == GA_V_INT ? (double)v->i : v->r;
}

static void set_null(ga_value *out) {
  memset(out, 0, sizeof(*out));
  out->type = GA_V_NULL;
}

static void set_real(ga_value *out, double r) {
  if (isnan(r)) { /* rule 2: Inf - Inf */
    set_null(out);
    return;
  }
  memset(out, 0, sizeof(*out));
  out->type = GA_V_REAL;
  out->r = r;
}

/* Rule 2 with a REAL operand (or an INTEGER overflow: fp_math). */
static void fp_math(int op, const ga_value *a, const ga_value *b,
                    ga_value *out) {
  double ra = as_double(a), rb = as_double(b), r;
  switch (op) {
  case GA_CX_ADD:
    r = ra + rb;
    break;
  case GA_CX_SUB:
    r = ra - rb;
    break;
  case GA_CX_MUL:
    r = ra * rb;
    break;
  case GA_CX_DIV:
    if (rb == 0.0) {
      set_null(out);
      return;
    }
    r = ra / rb;
    break;
  default: { /* %: both as int64, the result REAL */
    int64_t ia = a->type == GA_V_INT ? a->i : to_int64(a->r);
    int64_t ib = b->type == GA_V_INT ? b->i : to_int64(b->r);
    if (ib == 0) {
      set_null(out);
      return;
    }
    if (ib == -1)
      ib = 1;
    r = (double)(ia % ib);
  }
  }
  set_real(out, r);
}

void ga_cx_binary(int op, const ga_value *a, const ga_value *b, ga_value *out) {
  if (a->type == GA_V_NULL || b->type == GA_V_NULL) {
    set_null(out);
    return;
  }
  if (a->type != GA_V_INT || b->type != GA_V_INT) {
    fp_math(op, a, b, out);
    return;
  }
  int64_t x = a->i, y = b->i, r;
  switch (op) {
  case GA_CX_ADD:
  case GA_CX_SUB:
  case GA_CX_MUL: {
    int over = op == GA_CX_ADD   ? __builtin_add_overflow(x, y, &r)
               : op == GA_CX_SUB ? __builtin_sub_overflow(x, y, &r)
                                 : __builtin_mul_overflow(x, y, &r);
    if (over) { /* SQLite's fp_math: (double)a op (double)b */
      fp_math(op, a, b, out);
      return;
    }
    break;
  }
  case GA_CX_DIV:
    if (y == 0) {
      set_null(out);
      return;
    }
    if (y == -1 && x == INT64_MIN) {
      fp_math(op, a, b, out);
      return;
    }
    r = x / y;
    break;
  default:
    if (y == 0) {
      set_null(out);
      return;
    }
    r = y == -1 ? 0 : x % y;
  }
  memset(out, 0, sizeof(*out));
  out->type = GA_V_INT;
  out->i = r;
}

void ga_cexpr_eval(const ga_cexpr *x,
                   void (*fetch)(const void *arg, int col, ga_value *v),
                   const void *arg, ga_value *out) {
  ga_value st[GA_CX_MAX];
  int sp = 0;
  static const ga_value zero = {GA_V_INT, 0, 0, 0.0, 0};
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    switch (in->op) {
    case GA_CX_COL:
      fetch(arg, in->col, &st[sp++]);
      break;
    case GA_CX_LIT:
      st[sp++] = in->v;
      break;
    case GA_CX_NEG: { /* rule 3: 0 - x */
      ga_value v = st[sp - 1];
      ga_cx_binary(GA_CX_SUB, &zero, &v, &st[sp - 1]);
      break;
    }
    default: {
      ga_value a = st[sp - 2], b = st[sp - 1];
      ga_cx_binary(in->op, &a, &b, &st[sp - 2]);
      sp--;
    }
    }
  }
  *out = st[0];
}
