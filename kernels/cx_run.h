/*
** cx_run.h — one row of a gak_cprog (kernels/gak.h): the interpreter that
** kernels/cache_expr.cu runs one thread a row, and that the fake backend
** (tests/fakegpu/fakegpu.c) runs on the CPU, one definition for both.
**
** Rules (engine/cache/cexpr.h's): the scalar rules are base/cx_ops.h's;
** NULL propagates; logic is three-valued; CASE and coalesce take the
** first branch that holds (every branch is evaluated: none has side
** effects); a row that reaches abs(INT64_MIN) anywhere sets *err.
**
** Plain C, included by C11 host code and by CUDA code.
*/
#ifndef GA_CX_RUN_H
#define GA_CX_RUN_H

#include "cx_ops.h"
#include "gak.h"

GA_CX_HD int ga_cxr_bit(const uint64_t *w, long long i) {
  return (int)((w[i >> 6] >> (i & 63)) & 1);
}

/* (type, bits) of a stack slot */
typedef struct ga_cxr_v {
  int t;
  uint64_t v;
} ga_cxr_v;

GA_CX_HD ga_cxr_v ga_cxr_mk(int t, uint64_t v) {
  ga_cxr_v r;
  r.t = t;
  r.v = t == GA_CX_TNULL ? 0 : v;
  return r;
}

GA_CX_HD ga_cxr_v ga_cxr_bool(int b) { return ga_cxr_mk(GA_CX_TINT, b != 0); }

/* three-valued truth: 1 true, 0 false, -1 NULL */
GA_CX_HD int ga_cxr_tv(ga_cxr_v x) {
  return x.t == GA_CX_TNULL ? -1 : ga_cx_true(x.t, x.v);
}

GA_CX_HD ga_cxr_v ga_cxr_cmp(int op, ga_cxr_v a, ga_cxr_v b) {
  if (a.t == GA_CX_TNULL || b.t == GA_CX_TNULL)
    return ga_cxr_mk(GA_CX_TNULL, 0);
  return ga_cxr_bool(ga_cx_holds(op, ga_cx_cmp(a.t, a.v, b.t, b.v)));
}

GA_CX_HD ga_cxr_v ga_cxr_and(int a, int b) {
  if (a == 0 || b == 0)
    return ga_cxr_bool(0);
  if (a == 1 && b == 1)
    return ga_cxr_bool(1);
  return ga_cxr_mk(GA_CX_TNULL, 0);
}

/* p's value at row i (p->depth <= GAK_CX_DEPTH: gak_cache_eval checks). */
GA_CX_HD ga_cxr_v ga_cx_run(const gak_cprog *p, long long i, int *err) {
  ga_cxr_v st[GAK_CX_DEPTH];
  int sp = 0;
  for (int k = 0; k < p->n; k++) {
    const gak_cins *in = &p->ins[k];
    ga_cxr_v *top = &st[sp > 0 ? sp - 1 : 0];
    switch (in->op) {
    case GA_CX_COL: {
      const gak_ccol *c = &p->cols[in->col];
      int t = !ga_cxr_bit(c->notnull, i) ? GA_CX_TNULL
              : ga_cxr_bit(c->isint, i)  ? GA_CX_TINT
                                         : GA_CX_TREAL;
      st[sp++] = ga_cxr_mk(t, c->vals[i]);
      break;
    }
    case GA_CX_LIT:
      st[sp++] = ga_cxr_mk(in->type, (uint64_t)in->bits);
      break;
    case GA_CX_NEG: /* 0 - x */
      if (top->t != GA_CX_TNULL) {
        int t;
        uint64_t v;
        ga_cx_arith(GA_CX_OP_SUB, GA_CX_TINT, 0, top->t, top->v, &t, &v);
        *top = ga_cxr_mk(t, v);
      }
      break;
    case GA_CX_ADD:
    case GA_CX_SUB:
    case GA_CX_MUL:
    case GA_CX_DIV:
    case GA_CX_MOD: {
      ga_cxr_v *a = &st[sp - 2], b = st[sp - 1];
      sp--;
      if (a->t == GA_CX_TNULL || b.t == GA_CX_TNULL) {
        *a = ga_cxr_mk(GA_CX_TNULL, 0);
      } else {
        int t;
        uint64_t v;
        ga_cx_arith(in->op - GA_CX_ADD, a->t, a->v, b.t, b.v, &t, &v);
        *a = ga_cxr_mk(t, v);
      }
      break;
    }
    case GA_CX_CMP:
      st[sp - 2] = ga_cxr_cmp(in->a, st[sp - 2], st[sp - 1]);
      sp--;
      break;
    case GA_CX_IS: {
      ga_cxr_v a = st[sp - 2], b = st[sp - 1];
      int same = a.t == GA_CX_TNULL || b.t == GA_CX_TNULL
                     ? a.t == b.t
                     : ga_cx_cmp(a.t, a.v, b.t, b.v) == 0;
      st[sp - 2] = ga_cxr_bool(in->a ? !same : same);
      sp--;
      break;
    }
    case GA_CX_ISNULL: {
      int nul = top->t == GA_CX_TNULL;
      *top = ga_cxr_bool(in->a ? !nul : nul);
      break;
    }
    case GA_CX_NOT: {
      int t = ga_cxr_tv(*top);
      *top = t < 0 ? ga_cxr_mk(GA_CX_TNULL, 0) : ga_cxr_bool(!t);
      break;
    }
    case GA_CX_AND:
      st[sp - 2] = ga_cxr_and(ga_cxr_tv(st[sp - 2]), ga_cxr_tv(st[sp - 1]));
      sp--;
      break;
    case GA_CX_OR: {
      int a = ga_cxr_tv(st[sp - 2]), b = ga_cxr_tv(st[sp - 1]);
      st[sp - 2] = a == 1 || b == 1   ? ga_cxr_bool(1)
                   : a == 0 && b == 0 ? ga_cxr_bool(0)
                                      : ga_cxr_mk(GA_CX_TNULL, 0);
      sp--;
      break;
    }
    case GA_CX_IN: {
      if (in->b == 0 && !in->col) {
        *top = ga_cxr_bool(0); /* x IN (): 0, even for NULL */
        break;
      }
      if (top->t == GA_CX_TNULL)
        break;
      int hit = 0;
      for (int q = 0; q < in->b && !hit; q++) {
        const gak_cval *l = &p->pool[in->a + q];
        hit = ga_cx_cmp(top->t, top->v, l->type, (uint64_t)l->bits) == 0;
      }
      *top = hit       ? ga_cxr_bool(1)
             : in->col ? ga_cxr_mk(GA_CX_TNULL, 0)
                       : ga_cxr_bool(0);
      break;
    }
    case GA_CX_BETWEEN: {
      ga_cxr_v x = st[sp - 3];
      ga_cxr_v lo = ga_cxr_cmp(in->a, x, st[sp - 2]);
      ga_cxr_v hi = ga_cxr_cmp(in->b, x, st[sp - 1]);
      st[sp - 3] = ga_cxr_and(ga_cxr_tv(lo), ga_cxr_tv(hi));
      sp -= 2;
      break;
    }
    case GA_CX_CASE: {
      int base = sp - (2 * in->a + in->b), done = 0;
      ga_cxr_v r = ga_cxr_mk(GA_CX_TNULL, 0);
      for (int q = 0; q < in->a && !done; q++)
        if (ga_cxr_tv(st[base + 2 * q]) == 1)
          r = st[base + 2 * q + 1], done = 1;
      if (!done && in->b)
        r = st[base + 2 * in->a];
      st[base] = r;
      sp = base + 1;
      break;
    }
    case GA_CX_COALESCE: {
      int base = sp - in->a;
      ga_cxr_v r = ga_cxr_mk(GA_CX_TNULL, 0);
      for (int q = 0; q < in->a && r.t == GA_CX_TNULL; q++)
        r = st[base + q];
      st[base] = r;
      sp = base + 1;
      break;
    }
    case GA_CX_ABS:
      if (top->t == GA_CX_TINT) {
        if ((int64_t)top->v == INT64_MIN)
          *err = 1; /* SQLite: integer overflow */
        else if ((int64_t)top->v < 0)
          top->v = (uint64_t)(-(int64_t)top->v);
      } else if (top->t == GA_CX_TREAL && ga_cx_d(top->v) < 0.0) {
        top->v = ga_cx_u(-ga_cx_d(top->v)); /* abs(-0.0) stays -0.0 */
      }
      break;
    case GA_CX_MAP: {
      const gak_cmap *m = &p->maps[in->a];
      long long c = top->t == GA_CX_TNULL ? m->n : (long long)top->v;
      if (c < 0 || c > m->n)
        c = m->n;
      *top = ga_cxr_mk(m->type[c], m->v[c]);
      break;
    }
    }
  }
  return st[0];
}

#endif
