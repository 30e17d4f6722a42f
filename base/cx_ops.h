/*
** cx_ops.h — the scalar rules of the column cache's expressions
** (engine/cache/cexpr.h rules 2-4), one definition for the host
** (engine/cache/cexpr.c) and the GPU (kernels/cache_expr.cu).
**
** A value is (type, bits): GA_CX_TNULL, GA_CX_TINT (bits: the int64) or
** GA_CX_TREAL (bits: the double's).  Every double operation goes through
** GA_CX_DADD .. GA_CX_DDIV: on the device the _rn intrinsics, which nvcc
** never fuses into an FMA whatever --fmad says; on the host plain
** operators in ISO C, which GCC does not contract (-std=c11:
** -ffp-contract=off).  So `a*b + c` rounds twice on both, as SQLite does.
**
** This header is plain C and is included by C11 host code and by CUDA code.
*/
#ifndef GA_CX_OPS_H
#define GA_CX_OPS_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define GA_CX_HD static __host__ __device__ __forceinline__
#else
#define GA_CX_HD static inline
#endif

#define GA_CX_TNULL 0
#define GA_CX_TINT 1
#define GA_CX_TREAL 2

/* The instructions (engine/cache/cexpr.h says what each does). */
enum {
  GA_CX_COL, /* col: the entry column (on the GPU: a slot of cols) */
  GA_CX_LIT, /* the literal (NULL, INT or REAL) */
  GA_CX_NEG,
  GA_CX_ADD,
  GA_CX_SUB,
  GA_CX_MUL,
  GA_CX_DIV,
  GA_CX_MOD,
  GA_CX_CMP,      /* a: GAK_CMP_EQ .. GAK_CMP_GE; pops b then a */
  GA_CX_IS,       /* a: 0 IS, 1 IS NOT */
  GA_CX_ISNULL,   /* a: 0 IS NULL, 1 NOT NULL */
  GA_CX_NOT,      /* */
  GA_CX_AND,      /* */
  GA_CX_OR,       /* */
  GA_CX_IN,       /* x IN the pool's a .. a + b - 1 (col: 1 when a NULL
                     element was written) */
  GA_CX_BETWEEN,  /* pops hi, lo, x: x a' lo AND x b' hi, a and b are the
                     comparisons (GAK_CMP_GE/GT, GAK_CMP_LE/LT) */
  GA_CX_CASE,     /* a WHEN/THEN pairs then b (0/1) ELSE, all pushed */
  GA_CX_COALESCE, /* a arguments, all pushed */
  GA_CX_ABS,      /* */
  GA_CX_MAP,      /* a: the map; pops a code, pushes its mapped value */
  GA_CX_INSET     /* x IN a set (engine/cache/cexpr.h rule 8; host only):
                     a: the set's map, b: its bitmap's map or -1, col: 1
                     when the set holds a NULL, v.i: the bitmap's base */
};

/* The operations of engine/cache/cexpr.h's GA_CX_ADD .. GA_CX_MOD, by
** offset from GA_CX_ADD. */
#define GA_CX_OP_ADD 0
#define GA_CX_OP_SUB 1
#define GA_CX_OP_MUL 2
#define GA_CX_OP_DIV 3
#define GA_CX_OP_MOD 4

#if defined(__CUDA_ARCH__)
#define GA_CX_DADD(a, b) __dadd_rn(a, b)
#define GA_CX_DSUB(a, b) __dsub_rn(a, b)
#define GA_CX_DMUL(a, b) __dmul_rn(a, b)
#define GA_CX_DDIV(a, b) __ddiv_rn(a, b)
#else
#define GA_CX_DADD(a, b) ((a) + (b))
#define GA_CX_DSUB(a, b) ((a) - (b))
#define GA_CX_DMUL(a, b) ((a) * (b))
#define GA_CX_DDIV(a, b) ((a) / (b))
#endif

GA_CX_HD double ga_cx_d(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}
GA_CX_HD uint64_t ga_cx_u(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* SQLite's doubleToInt64: saturating (% with a REAL operand). */
GA_CX_HD int64_t ga_cx_to_int64(double r) {
  if (r <= -9223372036854775808.0)
    return INT64_MIN;
  if (r >= 9223372036854775808.0)
    return INT64_MAX;
  return (int64_t)r;
}

/* int64 a op b without overflow: 1 with *r, 0 on overflow (two's
** complement arithmetic on uint64, checked by signs; * by its high half). */
GA_CX_HD int ga_cx_iop(int op, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b, u;
  if (op == GA_CX_OP_ADD) {
    u = ua + ub;
    *r = (int64_t)u;
    return (int64_t)((ua ^ u) & (ub ^ u)) >= 0;
  }
  if (op == GA_CX_OP_SUB) {
    u = ua - ub;
    *r = (int64_t)u;
    return (int64_t)((ua ^ ub) & (ua ^ u)) >= 0;
  }
#if defined(__CUDA_ARCH__)
  int64_t hi = (int64_t)__mul64hi((long long)a, (long long)b);
  u = ua * ub;
  *r = (int64_t)u;
  return hi == ((int64_t)u >> 63);
#else
  return !__builtin_mul_overflow(a, b, r);
#endif
}

/* SQLite's `a op b` (cexpr.h rule 2) of two non-NULL values; *rt, *rb the
** result (GA_CX_TNULL for a NULL one). */
GA_CX_HD void ga_cx_arith(int op, int ta, uint64_t a, int tb, uint64_t b,
                          int *rt, uint64_t *rb) {
  if (ta == GA_CX_TINT && tb == GA_CX_TINT) {
    int64_t x = (int64_t)a, y = (int64_t)b, z = 0;
    int exact = 1;
    if (op <= GA_CX_OP_MUL) {
      exact = ga_cx_iop(op, x, y, &z);
    } else if (y == 0) {
      *rt = GA_CX_TNULL, *rb = 0;
      return;
    } else if (op == GA_CX_OP_DIV) {
      exact = !(y == -1 && x == INT64_MIN);
      if (exact)
        z = x / y;
    } else {
      z = y == -1 ? 0 : x % y;
    }
    if (exact) {
      *rt = GA_CX_TINT, *rb = (uint64_t)z;
      return;
    }
  }
  /* a REAL operand, or an INTEGER overflow: both as doubles */
  double x = ta == GA_CX_TINT ? (double)(int64_t)a : ga_cx_d(a);
  double y = tb == GA_CX_TINT ? (double)(int64_t)b : ga_cx_d(b), r;
  switch (op) {
  case GA_CX_OP_ADD:
    r = GA_CX_DADD(x, y);
    break;
  case GA_CX_OP_SUB:
    r = GA_CX_DSUB(x, y);
    break;
  case GA_CX_OP_MUL:
    r = GA_CX_DMUL(x, y);
    break;
  case GA_CX_OP_DIV:
    if (y == 0.0) {
      *rt = GA_CX_TNULL, *rb = 0;
      return;
    }
    r = GA_CX_DDIV(x, y);
    break;
  default: { /* %: both as int64, the result REAL */
    int64_t ia = ta == GA_CX_TINT ? (int64_t)a : ga_cx_to_int64(x);
    int64_t ib = tb == GA_CX_TINT ? (int64_t)b : ga_cx_to_int64(y);
    if (ib == 0) {
      *rt = GA_CX_TNULL, *rb = 0;
      return;
    }
    r = (double)(ib == -1 ? 0 : ia % ib);
  }
  }
  if (r != r) { /* NaN (Inf - Inf): NULL */
    *rt = GA_CX_TNULL, *rb = 0;
    return;
  }
  *rt = GA_CX_TREAL, *rb = ga_cx_u(r);
}

/* The typed form of REAL arithmetic (kernels/cache_expr.cu rule 4; the GPU
** cache's top k, engine/cache/cache_gpu_query.c rule 9): a program of
** columns that hold no INTEGER, INTEGER or REAL literals, unary minus and
** + - * /, with no operation of two INTEGER literals, gives a REAL or NULL
** at every row.  One instruction's step over a stack of "an INTEGER
** literal" flags (at most depth deep): 0 when the instruction leaves the
** form.  lit: a literal's GA_CX_T* type; col_ok: a column holds no INTEGER.
** The program is in the form when every step holds and it ends with one
** slot that is no INTEGER literal. */
GA_CX_HD int ga_cx_real_step(int op, int lit, int col_ok, unsigned char *isint,
                             int *sp, int depth) {
  switch (op) {
  case GA_CX_COL:
  case GA_CX_LIT:
    if (*sp == depth ||
        (op == GA_CX_COL ? !col_ok : lit != GA_CX_TINT && lit != GA_CX_TREAL))
      return 0;
    isint[(*sp)++] = op == GA_CX_LIT && lit == GA_CX_TINT;
    return 1;
  case GA_CX_NEG: /* 0 - x: two INTEGERs when x is one */
    return *sp >= 1 && !isint[*sp - 1];
  case GA_CX_ADD:
  case GA_CX_SUB:
  case GA_CX_MUL:
  case GA_CX_DIV:
    if (*sp < 2 || (isint[*sp - 2] && isint[*sp - 1]))
      return 0;
    isint[*sp - 2] = 0;
    (*sp)--;
    return 1;
  default:
    return 0;
  }
}

/* An int64 against a double, exactly: <0, 0, >0 (no NaN). */
GA_CX_HD int ga_cx_cmp_ir(int64_t i, double r) {
  if (r >= 9223372036854775808.0)
    return -1;
  if (r < -9223372036854775808.0)
    return 1;
  int64_t t = (int64_t)r; /* r's integer part, exact */
  if (i != t)
    return i < t ? -1 : 1;
  double f = r - (double)t; /* r's fraction, exact */
  return f > 0.0 ? -1 : f < 0.0 ? 1 : 0;
}

/* Two non-NULL numbers, exactly (cexpr.h rule 4): <0, 0, >0. */
GA_CX_HD int ga_cx_cmp(int ta, uint64_t a, int tb, uint64_t b) {
  if (ta == GA_CX_TINT && tb == GA_CX_TINT)
    return ((int64_t)a > (int64_t)b) - ((int64_t)a < (int64_t)b);
  if (ta == GA_CX_TREAL && tb == GA_CX_TREAL) {
    double x = ga_cx_d(a), y = ga_cx_d(b);
    return (x > y) - (x < y);
  }
  if (ta == GA_CX_TINT)
    return ga_cx_cmp_ir((int64_t)a, ga_cx_d(b));
  return -ga_cx_cmp_ir((int64_t)b, ga_cx_d(a));
}

/* Does comparison op (GAK_CMP_EQ .. GAK_CMP_GE: 0 .. 5) hold for c? */
GA_CX_HD int ga_cx_holds(int op, int c) {
  switch (op) {
  case 0:
    return c == 0;
  case 1:
    return c != 0;
  case 2:
    return c < 0;
  case 3:
    return c <= 0;
  case 4:
    return c > 0;
  default:
    return c >= 0;
  }
}

/* A number's truth (rule 4): 1 true, 0 false. */
GA_CX_HD int ga_cx_true(int t, uint64_t v) {
  return t == GA_CX_TINT ? v != 0 : ga_cx_d(v) != 0.0;
}

#endif
