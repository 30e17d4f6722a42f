/*
** cache_expr.cu — the column cache's expressions on the GPU (kernels/gak.h,
** "expressions and keys"): a program of engine/cache/cexpr.h run one row a
** thread, its value written as a cached column.
**
** Rules:
**   1. The row interpreter is kernels/cx_run.h (the fake backend runs the
**      same), its scalar rules base/cx_ops.h's, which the host's lanes run
**      too: the same value, bit for bit.  Doubles go through the _rn
**      intrinsics there, which nvcc never contracts into an FMA (the build
**      also passes --fmad=false to this file: two locks on one door).
**   2. NULL propagates, logic is three-valued, CASE and coalesce take the
**      first branch that holds (every branch is evaluated: none has side
**      effects), as cexpr.h rule 4.  A row that reaches abs(INT64_MIN)
**      anywhere in the program is an error row (cexpr.h rule 5): reported
**      through *err when the row is selected.
**   3. One thread per row; a warp's ballot is one 32-bit half of a bitmap
**      word (the loop bound is the same for a whole block).
**   4. Arithmetic of REALs runs typed (real_plan, real_run): a program of
**      columns, literals, unary minus and + - * / only, no operation with
**      two INTEGER literals, a stack of 4 or less, is run on doubles held
**      in registers, NULL carried as NaN.  Each step is ga_cx_arith's
**      own for a REAL operand (the same GA_CX_D* calls, an INTEGER literal
**      converted as it converts one), and NaN stands for NULL exactly:
**      SQLite's arithmetic gives NULL for NULL operands, for a NaN result
**      and for a division by zero, and a NaN operand gives NaN in IEEE.  A
**      row where a column holds an INTEGER runs the interpreter instead.
**      Why: the interpreter's dispatch and type tests took 1.2 and 1.9 ms
**      for Q1's two programs over 6e7 rows (ncu: issue bound at 24% of
**      DRAM bandwidth), about 4 times these programs' bandwidth bound.
*/
#include <stdint.h>

#include "cx_run.h"

#define CT 256
#define MAX_GRID 65535

/* Rule 4: can p run typed?  Every operation is known from the program
** alone: a stack slot is REAL, or an INTEGER literal. */
#define REAL_DEPTH 4
__host__ __device__ bool real_plan(const gak_cprog &p) {
  unsigned char isint[REAL_DEPTH + 1];
  int sp = 0;
  for (int k = 0; k < p.n; k++)
    if (!ga_cx_real_step(p.ins[k].op, p.ins[k].type, 1, isint, &sp, REAL_DEPTH))
      return false;
  return sp == 1 && !isint[0];
}

/* Rule 4 over all n rows (no row list): four consecutive rows a thread,
** each column's four values in one 32-byte load and its bitmaps' four bits
** in one word each, every column of an operation loaded before use; the
** stack is four slots of four rows, shifted on push and pop (registers).
** A row where a column holds an INTEGER runs the interpreter.  The bitmaps'
** 32-bit words gather eight threads' nibbles with shuffles. */
__global__ void __launch_bounds__(CT)
    k_eval_real(const gak_cprog p, long long n, uint64_t *vals, uint32_t *isint,
                uint32_t *notnull, uint32_t *err) {
  const double nan = __longlong_as_double(0x7ff8000000000000ll);
  const long long nq = (n + 3) / 4;
  const int lane = threadIdx.x & 31;
  for (long long qb = (long long)blockIdx.x * CT; qb < nq;
       qb += (long long)gridDim.x * CT) {
    const long long q = qb + threadIdx.x, i = 4 * q;
    const bool full = i + 4 <= n;
    double s[REAL_DEPTH][4];
#pragma unroll
    for (int d = 0; d < REAL_DEPTH; d++)
#pragma unroll
      for (int t = 0; t < 4; t++)
        s[d][t] = 0;
    unsigned bad = 0;
    for (int k = 0; q < nq && k < p.n; k++) {
      const gak_cins &in = p.ins[k];
      double x[4];
      if (in.op == GA_CX_COL || in.op == GA_CX_LIT) {
        if (in.op == GA_CX_COL) {
          const gak_ccol &c = p.cols[in.col];
          uint64_t u[4];
          if (full && ((uintptr_t)c.vals & 15) == 0) {
            const ulonglong2 *v2 =
                reinterpret_cast<const ulonglong2 *>(c.vals + i);
            ulonglong2 a = v2[0], b = v2[1];
            u[0] = a.x, u[1] = a.y, u[2] = b.x, u[3] = b.y;
          } else {
#pragma unroll
            for (int t = 0; t < 4; t++)
              u[t] = i + t < n ? c.vals[i + t] : 0;
          }
          unsigned nn = (unsigned)(c.notnull[i >> 6] >> (i & 63)) & 0xfu;
          bad |= (unsigned)(c.isint[i >> 6] >> (i & 63)) & 0xfu;
#pragma unroll
          for (int t = 0; t < 4; t++)
            x[t] = (nn >> t) & 1 ? ga_cx_d(u[t]) : nan;
        } else {
          double l = in.type == GA_CX_TINT ? (double)in.bits
                                           : ga_cx_d((uint64_t)in.bits);
#pragma unroll
          for (int t = 0; t < 4; t++)
            x[t] = l;
        }
#pragma unroll
        for (int t = 0; t < 4; t++)
          s[3][t] = s[2][t], s[2][t] = s[1][t], s[1][t] = s[0][t],
          s[0][t] = x[t];
      } else if (in.op == GA_CX_NEG) {
#pragma unroll
        for (int t = 0; t < 4; t++)
          s[0][t] = GA_CX_DSUB(0.0, s[0][t]);
      } else {
#pragma unroll
        for (int t = 0; t < 4; t++) {
          double a = s[1][t], b = s[0][t];
          s[0][t] = in.op == GA_CX_ADD   ? GA_CX_DADD(a, b)
                    : in.op == GA_CX_SUB ? GA_CX_DSUB(a, b)
                    : in.op == GA_CX_MUL ? GA_CX_DMUL(a, b)
                    : b == 0.0           ? nan
                                         : GA_CX_DDIV(a, b);
          s[1][t] = s[2][t], s[2][t] = s[3][t];
        }
      }
    }
    uint64_t out[4];
    unsigned nn4 = 0, ii4 = 0;
#pragma unroll
    for (int t = 0; t < 4; t++) {
      ga_cxr_v r = s[0][t] != s[0][t]
                       ? ga_cxr_mk(GA_CX_TNULL, 0)
                       : ga_cxr_mk(GA_CX_TREAL, ga_cx_u(s[0][t]));
      if (i + t < n && ((bad >> t) & 1)) { /* an INTEGER in a column */
        int e = 0;
        r = ga_cx_run(&p, i + t, &e);
        if (e)
          *err = 1; /* not reached: a typed program has no abs */
      }
      out[t] = r.v;
      nn4 |= (unsigned)(i + t < n && r.t != GA_CX_TNULL) << t;
      ii4 |= (unsigned)(i + t < n && r.t == GA_CX_TINT) << t;
    }
    if (q < nq) {
      if (full) {
        ulonglong2 *o2 = reinterpret_cast<ulonglong2 *>(vals + i);
        o2[0] = make_ulonglong2(out[0], out[1]);
        o2[1] = make_ulonglong2(out[2], out[3]);
      } else {
        for (int t = 0; t < 4 && i + t < n; t++)
          vals[i + t] = out[t];
      }
    }
    /* lanes 8w .. 8w + 7 hold the 32 rows of one 32-bit word */
    unsigned wn = nn4 << (4 * (lane & 7)), wi = ii4 << (4 * (lane & 7));
#pragma unroll
    for (int off = 1; off < 8; off <<= 1) {
      wn |= __shfl_xor_sync(0xffffffffu, wn, off);
      wi |= __shfl_xor_sync(0xffffffffu, wi, off);
    }
    if ((lane & 7) == 0 && q < nq) {
      notnull[q >> 3] = wn;
      isint[q >> 3] = wi;
    }
  }
}

/* Rule 4: p at row i on doubles, four registers shifted on push and pop.
** false where a column holds an INTEGER at row i (the interpreter's). */
__device__ __forceinline__ bool real_run(const gak_cprog &p, long long i,
                                         double *out) {
  const double nan = __longlong_as_double(0x7ff8000000000000ll);
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  bool bad = false;
  for (int k = 0; k < p.n; k++) {
    const gak_cins &in = p.ins[k];
    double x;
    switch (in.op) {
    case GA_CX_COL: {
      const gak_ccol &c = p.cols[in.col];
      bad |= ga_cxr_bit(c.isint, i);
      x = ga_cxr_bit(c.notnull, i) ? ga_cx_d(c.vals[i]) : nan;
      s3 = s2, s2 = s1, s1 = s0, s0 = x;
      break;
    }
    case GA_CX_LIT:
      x = in.type == GA_CX_TINT ? (double)in.bits : ga_cx_d((uint64_t)in.bits);
      s3 = s2, s2 = s1, s1 = s0, s0 = x;
      break;
    case GA_CX_NEG:
      s0 = GA_CX_DSUB(0.0, s0);
      break;
    default:
      x = in.op == GA_CX_ADD   ? GA_CX_DADD(s1, s0)
          : in.op == GA_CX_SUB ? GA_CX_DSUB(s1, s0)
          : in.op == GA_CX_MUL ? GA_CX_DMUL(s1, s0)
          : s0 == 0.0          ? nan
                               : GA_CX_DDIV(s1, s0);
      s0 = x, s1 = s2, s2 = s3;
      break;
    }
  }
  *out = s0;
  return !bad;
}

__global__ void __launch_bounds__(CT)
    k_eval(const gak_cprog p, long long n, const uint32_t *rows,
           const uint32_t *sel, uint64_t *vals, uint32_t *isint,
           uint32_t *notnull, uint32_t *err) {
  const bool typed = real_plan(p); /* the same in every thread */
  long long nw = (n + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long i = base + threadIdx.x;
    ga_cxr_v r = ga_cxr_mk(GA_CX_TNULL, 0);
    int e = 0;
    if (i < n) {
      long long row = rows ? (long long)rows[i] : i;
      double d;
      if (typed && real_run(p, row, &d))
        r = d != d ? ga_cxr_mk(GA_CX_TNULL, 0)
                   : ga_cxr_mk(GA_CX_TREAL, ga_cx_u(d));
      else
        r = ga_cx_run(&p, row, &e);
      vals[i] = r.v;
      if (e && (!sel || ((sel[row >> 5] >> (row & 31)) & 1)))
        *err = 1;
    }
    unsigned nn = __ballot_sync(0xffffffffu, r.t != GA_CX_TNULL);
    unsigned ii = __ballot_sync(0xffffffffu, r.t == GA_CX_TINT);
    if ((threadIdx.x & 31) == 0 && (i >> 5) < nw) {
      notnull[i >> 5] = nn;
      isint[i >> 5] = ii;
    }
  }
}

/* The filter form: the rows whose value is true, one bit a row. */
__global__ void __launch_bounds__(CT)
    k_eval_filter(const gak_cprog p, long long n, uint32_t *sel,
                  uint32_t *err) {
  long long nw = (n + 31) / 32;
  for (long long base = (long long)blockIdx.x * CT; base < nw * 32;
       base += (long long)gridDim.x * CT) {
    long long i = base + threadIdx.x;
    int e = 0, pass = 0;
    if (i < n) {
      ga_cxr_v r = ga_cx_run(&p, i, &e);
      pass = r.t != GA_CX_TNULL && ga_cx_true(r.t, r.v);
      if (e)
        *err = 1;
    }
    unsigned w = __ballot_sync(0xffffffffu, pass);
    if ((threadIdx.x & 31) == 0 && (i >> 5) < nw)
      sel[i >> 5] = w;
  }
}

extern "C" int gak_cache_eval_filter(const gak_cprog *p, int64_t n,
                                     uint32_t *d_sel, uint32_t *d_err,
                                     gak_stream s) {
  if (!p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 || p->n > GAK_CX_MAX)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  long long nw = (n + 31) / 32, g = (nw * 32 + CT - 1) / CT;
  int grid = g > MAX_GRID ? MAX_GRID : (int)(g < 1 ? 1 : g);
  k_eval_filter<<<grid, CT, 0, (cudaStream_t)s>>>(*p, n, d_sel, d_err);
  return (int)cudaGetLastError();
}

extern "C" int gak_cache_eval(const gak_cprog *p, int64_t n,
                              const uint32_t *d_rows, const uint32_t *d_sel,
                              uint64_t *d_vals, uint64_t *d_isint,
                              uint64_t *d_notnull, uint32_t *d_err,
                              gak_stream s) {
  if (!p || n < 0 || p->depth > GAK_CX_DEPTH || p->n < 1 || p->n > GAK_CX_MAX)
    return (int)cudaErrorInvalidValue;
  if (n == 0)
    return (int)cudaSuccess;
  long long nw = (n + 31) / 32, g = (nw * 32 + CT - 1) / CT;
  int grid = g > MAX_GRID ? MAX_GRID : (int)(g < 1 ? 1 : g);
  /* an odd count of 32-bit halves: the last 64-bit word's upper half */
  if (nw & 1)
    cudaMemsetAsync((uint32_t *)d_isint + nw, 0, 4, (cudaStream_t)s),
        cudaMemsetAsync((uint32_t *)d_notnull + nw, 0, 4, (cudaStream_t)s);
  if (!d_rows && ((uintptr_t)d_vals & 15) == 0 && real_plan(*p)) { /* rule 4 */
    long long nq = (n + 3) / 4, gq = (nq + CT - 1) / CT;
    int gridq = gq > MAX_GRID ? MAX_GRID : (int)(gq < 1 ? 1 : gq);
    k_eval_real<<<gridq, CT, 0, (cudaStream_t)s>>>(
        *p, n, d_vals, (uint32_t *)d_isint, (uint32_t *)d_notnull, d_err);
    return (int)cudaGetLastError();
  }
  k_eval<<<grid, CT, 0, (cudaStream_t)s>>>(*p, n, d_rows, d_sel, d_vals,
                                           (uint32_t *)d_isint,
                                           (uint32_t *)d_notnull, d_err);
  return (int)cudaGetLastError();
}
