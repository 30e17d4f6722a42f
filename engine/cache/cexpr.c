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

/* ---- a word at a time (rule 5) ---- */

static void lane_get(const ga_cx_word *w, int j, ga_value *v) {
  memset(v, 0, sizeof(*v));
  if (!((w->notnull >> j) & 1)) {
    v->type = GA_V_NULL;
  } else if ((w->isint >> j) & 1) {
    v->type = GA_V_INT;
    v->i = (int64_t)w->v[j];
  } else {
    v->type = GA_V_REAL;
    memcpy(&v->r, &w->v[j], 8);
  }
}

static void lane_set(ga_cx_word *w, int j, const ga_value *v) {
  uint64_t bit = 1ull << j;
  w->notnull &= ~bit;
  w->isint &= ~bit;
  w->v[j] = 0;
  if (v->type == GA_V_INT) {
    w->v[j] = (uint64_t)v->i;
    w->notnull |= bit;
    w->isint |= bit;
  } else if (v->type == GA_V_REAL) {
    memcpy(&w->v[j], &v->r, 8);
    w->notnull |= bit;
  }
}

/* a op b into a, lanes `slow` by ga_cx_binary. */
static void word_slow(int op, ga_cx_word *a, const ga_cx_word *b,
                      uint64_t slow) {
  while (slow) {
    int j = __builtin_ctzll(slow);
    slow &= slow - 1;
    ga_value x, y, r;
    lane_get(a, j, &x);
    lane_get(b, j, &y);
    ga_cx_binary(op, &x, &y, &r);
    lane_set(a, j, &r);
  }
}

static inline double bits_d(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}
static inline uint64_t d_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* a op b into a, 64 lanes (rule 5). */
static void word_binary(int op, ga_cx_word *a, const ga_cx_word *b) {
  uint64_t live = a->notnull & b->notnull;
  uint64_t ints = a->isint & b->isint & live;
  uint64_t reals = live & ~ints; /* a REAL operand: both as doubles */
  uint64_t slow;
  if (op == GA_CX_MOD) {
    slow = live;
  } else if (reals == live && live) {
    uint64_t nul = 0;
    for (int j = 0; j < 64; j++) {
      double x = (a->isint >> j) & 1 ? (double)(int64_t)a->v[j] : bits_d(a->v[j]);
      double y = (b->isint >> j) & 1 ? (double)(int64_t)b->v[j] : bits_d(b->v[j]);
      double r = op == GA_CX_ADD   ? x + y
                 : op == GA_CX_SUB ? x - y
                 : op == GA_CX_MUL ? x * y
                 : y != 0.0        ? x / y
                                   : 0.0;
      nul |= (uint64_t)(r != r || (op == GA_CX_DIV && y == 0.0)) << j;
      a->v[j] = d_bits(r);
    }
    a->notnull = live & ~nul; /* NaN (Inf - Inf) and x / 0.0: NULL */
    a->isint = 0;
    return;
  } else if (ints == live && live && op != GA_CX_DIV) {
    uint64_t over = 0, r[64];
    for (int j = 0; j < 64; j++) {
      int64_t x = (int64_t)a->v[j], y = (int64_t)b->v[j], z;
      int o = op == GA_CX_ADD   ? __builtin_add_overflow(x, y, &z)
              : op == GA_CX_SUB ? __builtin_sub_overflow(x, y, &z)
                                : __builtin_mul_overflow(x, y, &z);
      over |= (uint64_t)o << j;
      r[j] = (uint64_t)z;
    }
    slow = over & live; /* SQLite's (double)a op (double)b there */
    for (int j = 0; j < 64; j++)
      if (!((slow >> j) & 1)) /* an overflowed lane keeps its operand */
        a->v[j] = r[j];
    a->isint = live;
  } else {
    slow = live;
  }
  if (slow) {
    a->notnull &= live;
    word_slow(op, a, b, slow);
  }
  a->notnull &= live;
}

void ga_cexpr_eval_word(const ga_cexpr *x,
                        void (*load)(const void *arg, int col, ga_cx_word *w),
                        const void *arg, ga_cx_word *stack, ga_cx_word *out) {
  int sp = 0;
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    switch (in->op) {
    case GA_CX_COL:
      load(arg, in->col, &stack[sp++]);
      break;
    case GA_CX_LIT: {
      ga_cx_word *w = &stack[sp++];
      uint64_t bits = in->v.type == GA_V_INT    ? (uint64_t)in->v.i
                      : in->v.type == GA_V_REAL ? d_bits(in->v.r)
                                                : 0;
      for (int j = 0; j < 64; j++)
        w->v[j] = bits;
      w->notnull = in->v.type == GA_V_NULL ? 0 : ~0ull;
      w->isint = in->v.type == GA_V_INT ? ~0ull : 0;
      break;
    }
    case GA_CX_NEG: { /* rule 3: 0 - x */
      ga_cx_word *w = &stack[sp]; /* a free slot */
      for (int j = 0; j < 64; j++)
        w->v[j] = 0;
      w->notnull = w->isint = ~0ull;
      word_binary(GA_CX_SUB, w, &stack[sp - 1]);
      memcpy(&stack[sp - 1], w, sizeof(*w));
      break;
    }
    default:
      word_binary(in->op, &stack[sp - 2], &stack[sp - 1]);
      sp--;
    }
  }
  if (out != &stack[0])
    memcpy(out, &stack[0], sizeof(*out));
}
