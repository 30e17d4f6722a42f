/*
** cexpr.c — expressions over a cache entry's columns (cexpr.h), 64 rows at
** a time: SQLite's OP_Add ... OP_Remainder, comparisons, logic, CASE,
** coalesce, abs and the derived columns' maps.
*/
#include "cexpr.h"

#include <string.h>

#include "cx_ops.h"
#include "gak.h"

void ga_cx_binary(int op, const ga_value *a, const ga_value *b, ga_value *out) {
  memset(out, 0, sizeof(*out));
  out->type = GA_V_NULL;
  if (a->type == GA_V_NULL || b->type == GA_V_NULL)
    return;
  int rt;
  uint64_t rb;
  ga_cx_arith(op - GA_CX_ADD, a->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
              a->type == GA_V_INT ? (uint64_t)a->i : ga_cx_u(a->r),
              b->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
              b->type == GA_V_INT ? (uint64_t)b->i : ga_cx_u(b->r), &rt, &rb);
  if (rt == GA_CX_TINT) {
    out->type = GA_V_INT;
    out->i = (int64_t)rb;
  } else if (rt == GA_CX_TREAL) {
    out->type = GA_V_REAL;
    out->r = ga_cx_d(rb);
  }
}

/* ---- a word at a time (rule 7) ---- */

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
    ga_cx_lane(a, j, &x);
    ga_cx_lane(b, j, &y);
    ga_cx_binary(op, &x, &y, &r);
    lane_set(a, j, &r);
  }
}

/* a op b into a, 64 lanes (rules 2, 7). */
static void word_binary(int op, ga_cx_word *a, const ga_cx_word *b) {
  uint64_t live = a->notnull & b->notnull;
  uint64_t ints = a->isint & b->isint & live;
  uint64_t reals = live & ~ints; /* a REAL operand: both as doubles */
  uint64_t slow;
  a->err |= b->err;
  if (op == GA_CX_MOD) {
    slow = live;
  } else if (reals == live && live) {
    uint64_t nul = 0;
    for (int j = 0; j < 64; j++) {
      double x =
          (a->isint >> j) & 1 ? (double)(int64_t)a->v[j] : ga_cx_d(a->v[j]);
      double y =
          (b->isint >> j) & 1 ? (double)(int64_t)b->v[j] : ga_cx_d(b->v[j]);
      double r = op == GA_CX_ADD   ? x + y
                 : op == GA_CX_SUB ? x - y
                 : op == GA_CX_MUL ? x * y
                 : y != 0.0        ? x / y
                                   : 0.0;
      nul |= (uint64_t)(r != r || (op == GA_CX_DIV && y == 0.0)) << j;
      a->v[j] = ga_cx_u(r);
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
  a->notnull &= live;
  if (slow)
    word_slow(op, a, b, slow);
  a->notnull &= live;
}

/* Lane j's comparison of a with b: <0, 0, >0 (both numbers, rule 4). */
static inline int lane_cmp(const ga_cx_word *a, const ga_cx_word *b, int j) {
  return ga_cx_cmp((a->isint >> j) & 1 ? GA_CX_TINT : GA_CX_TREAL, a->v[j],
                   (b->isint >> j) & 1 ? GA_CX_TINT : GA_CX_TREAL, b->v[j]);
}

/* The truth of a and b's lanes as 0/1 INTEGER words: where a op b holds. */
static uint64_t word_cmp_mask(int op, const ga_cx_word *a, const ga_cx_word *b,
                              uint64_t live) {
  uint64_t ints = a->isint & b->isint & live,
           reals = ~(a->isint | b->isint) & live;
  uint64_t yes = 0;
  if (ints == live) {
    for (int j = 0; j < 64; j++) {
      int64_t x = (int64_t)a->v[j], y = (int64_t)b->v[j];
      yes |= (uint64_t)ga_cx_holds(op, (x > y) - (x < y)) << j;
    }
  } else if (reals == live) {
    for (int j = 0; j < 64; j++) {
      double x = ga_cx_d(a->v[j]), y = ga_cx_d(b->v[j]);
      yes |= (uint64_t)ga_cx_holds(op, (x > y) - (x < y)) << j;
    }
  } else {
    for (uint64_t m = live; m; m &= m - 1) {
      int j = __builtin_ctzll(m);
      yes |= (uint64_t)ga_cx_holds(op, lane_cmp(a, b, j)) << j;
    }
  }
  return yes & live;
}

/* w := the truth values `yes` on lanes `live`, NULL elsewhere. */
static void set_bool(ga_cx_word *w, uint64_t yes, uint64_t live) {
  for (int j = 0; j < 64; j++)
    w->v[j] = (yes >> j) & 1;
  w->notnull = live;
  w->isint = ~0ull;
}

/* The lanes where w is true, and where it is false (rule 4). */
static void truth(const ga_cx_word *w, uint64_t *t, uint64_t *f) {
  uint64_t nz = 0;
  for (int j = 0; j < 64; j++) {
    int x = (w->isint >> j) & 1 ? w->v[j] != 0 : ga_cx_d(w->v[j]) != 0.0;
    nz |= (uint64_t)x << j;
  }
  *t = nz & w->notnull;
  *f = ~nz & w->notnull;
}

/* lanes m of src into dst */
static void take_lanes(ga_cx_word *dst, const ga_cx_word *src, uint64_t m) {
  for (uint64_t k = m; k; k &= k - 1) {
    int j = __builtin_ctzll(k);
    dst->v[j] = src->v[j];
  }
  dst->notnull = (dst->notnull & ~m) | (src->notnull & m);
  dst->isint = (dst->isint & ~m) | (src->isint & m);
}

/* rule 4's CASE over s[0 .. 2*pairs + has_else - 1], into *out. */
static void word_case(ga_cx_word *s, int pairs, int has_else, ga_cx_word *out) {
  ga_cx_word r;
  uint64_t open = ~0ull, err = 0;
  memset(&r, 0, sizeof(r));
  for (int k = 0; k < pairs; k++) {
    uint64_t t, f;
    truth(&s[2 * k], &t, &f);
    err |= s[2 * k].err; /* conservative: rule 5 */
    uint64_t take = open & t;
    take_lanes(&r, &s[2 * k + 1], take);
    err |= s[2 * k + 1].err;
    open &= ~t;
  }
  if (has_else) {
    take_lanes(&r, &s[2 * pairs], open);
    err |= s[2 * pairs].err;
  } else {
    r.notnull &= ~open;
  }
  r.err = err;
  *out = r;
}

/* rule 4's x IN (pool a .. a+n-1), NULL element written when has_null. */
static void word_in(ga_cx_word *x, const ga_value *lits, int n, int has_null) {
  uint64_t live = x->notnull, yes = 0;
  if (n == 0 && !has_null) { /* x IN () is 0, even for a NULL x */
    set_bool(x, 0, ~0ull);
    return;
  }
  for (uint64_t m = live; m; m &= m - 1) {
    int j = __builtin_ctzll(m);
    int tx = (x->isint >> j) & 1 ? GA_CX_TINT : GA_CX_TREAL;
    for (int k = 0; k < n; k++) {
      const ga_value *l = &lits[k];
      if (!ga_cx_cmp(tx, x->v[j],
                     l->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
                     l->type == GA_V_INT ? (uint64_t)l->i : ga_cx_u(l->r))) {
        yes |= 1ull << j;
        break;
      }
    }
  }
  /* no match: NULL when the list holds a NULL (rule 4) */
  set_bool(x, yes, has_null ? yes : live);
}

static void word_abs(ga_cx_word *x) {
  for (uint64_t m = x->notnull; m; m &= m - 1) {
    int j = __builtin_ctzll(m);
    if ((x->isint >> j) & 1) {
      int64_t v = (int64_t)x->v[j];
      if (v == INT64_MIN)
        x->err |= 1ull << j; /* SQLite: integer overflow (rule 5) */
      else if (v < 0)
        x->v[j] = (uint64_t)-v;
    } else if (ga_cx_d(x->v[j]) < 0.0) { /* SQLite's: abs(-0.0) is -0.0 */
      x->v[j] = ga_cx_u(-ga_cx_d(x->v[j]));
    }
  }
}

/* Rule 8: is (t, u) an element of set m?  Binary search. */
static int set_has(const ga_cx_map *m, int t, uint64_t u) {
  int64_t lo = 0, hi = m->n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = ga_cx_cmp(t, u, m->type[mid] == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
                      m->v[mid]);
    if (c == 0)
      return 1;
    if (c < 0)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return 0;
}

/* Rule 8's x IN set (bits: the bitmap over [base, ...), or NULL). */
static void word_inset(ga_cx_word *x, const ga_cx_map *set,
                       const ga_cx_map *bits, int64_t base, int has_null) {
  uint64_t live = x->notnull, yes = 0;
  if (set->n == 0 && !has_null) { /* x IN (empty) is 0, even for NULL */
    set_bool(x, 0, ~0ull);
    return;
  }
  for (uint64_t m = live; m; m &= m - 1) {
    int j = __builtin_ctzll(m);
    int isint = (x->isint >> j) & 1;
    int hit;
    if (bits && isint) {
      uint64_t off = (uint64_t)(int64_t)x->v[j] - (uint64_t)base;
      hit = (int64_t)x->v[j] >= base && off / 64 < (uint64_t)bits->n &&
            ((bits->v[off / 64] >> (off % 64)) & 1);
    } else {
      hit = set_has(set, isint ? GA_CX_TINT : GA_CX_TREAL, x->v[j]);
    }
    yes |= (uint64_t)hit << j;
  }
  set_bool(x, yes, has_null ? yes : live);
}

static void word_map(ga_cx_word *x, const ga_cx_map *m) {
  uint64_t nn = 0, ii = 0;
  for (int j = 0; j < 64; j++) {
    int64_t c = (x->notnull >> j) & 1 ? (int64_t)x->v[j] : m->n;
    if (c < 0 || c > m->n)
      c = m->n; /* a lane past the rows (rule 7) */
    x->v[j] = m->v[c];
    nn |= (uint64_t)(m->type[c] != GA_V_NULL) << j;
    ii |= (uint64_t)(m->type[c] == GA_V_INT) << j;
  }
  x->notnull = nn;
  x->isint = ii;
}

void ga_cexpr_eval_word(const ga_cexpr *x,
                        void (*load)(const void *arg, int col, ga_cx_word *w),
                        const void *arg, ga_cx_word *stack, ga_cx_word *out) {
  int sp = 0;
  for (int k = 0; k < x->n; k++) {
    const ga_cx_ins *in = &x->ins[k];
    ga_cx_word *top = &stack[sp - 1];
    switch (in->op) {
    case GA_CX_COL:
      load(arg, in->col, &stack[sp]);
      stack[sp++].err = 0;
      break;
    case GA_CX_LIT: {
      ga_cx_word *w = &stack[sp++];
      uint64_t bits = in->v.type == GA_V_INT    ? (uint64_t)in->v.i
                      : in->v.type == GA_V_REAL ? ga_cx_u(in->v.r)
                                                : 0;
      for (int j = 0; j < 64; j++)
        w->v[j] = bits;
      w->notnull = in->v.type == GA_V_NULL ? 0 : ~0ull;
      w->isint = in->v.type == GA_V_INT ? ~0ull : 0;
      w->err = 0;
      break;
    }
    case GA_CX_NEG: {             /* rule 3: 0 - x */
      ga_cx_word *w = &stack[sp]; /* a free slot */
      memset(w, 0, sizeof(*w));
      w->notnull = w->isint = ~0ull;
      word_binary(GA_CX_SUB, w, top);
      *top = *w;
      break;
    }
    case GA_CX_CMP: {
      ga_cx_word *a = &stack[sp - 2];
      uint64_t live = a->notnull & top->notnull;
      a->err |= top->err;
      set_bool(a, word_cmp_mask(in->a, a, top, live), live);
      sp--;
      break;
    }
    case GA_CX_IS: {
      ga_cx_word *a = &stack[sp - 2];
      uint64_t live = a->notnull & top->notnull;
      uint64_t same = word_cmp_mask(GAK_CMP_EQ, a, top, live) |
                      (~a->notnull & ~top->notnull);
      a->err |= top->err;
      set_bool(a, in->a ? ~same : same, ~0ull);
      sp--;
      break;
    }
    case GA_CX_ISNULL: {
      uint64_t nul = ~top->notnull;
      set_bool(top, in->a ? ~nul : nul, ~0ull);
      break;
    }
    case GA_CX_NOT: {
      uint64_t t, f;
      truth(top, &t, &f);
      set_bool(top, f, t | f);
      break;
    }
    case GA_CX_AND:
    case GA_CX_OR: {
      ga_cx_word *a = &stack[sp - 2];
      uint64_t ta, fa, tb, fb;
      truth(a, &ta, &fa);
      truth(top, &tb, &fb);
      a->err |= top->err;
      if (in->op == GA_CX_AND) /* false wins, then NULL */
        set_bool(a, ta & tb, fa | fb | (ta & tb));
      else /* true wins, then NULL */
        set_bool(a, ta | tb, ta | tb | (fa & fb));
      sp--;
      break;
    }
    case GA_CX_IN:
      word_in(top, &x->env->pool[in->a], in->b, in->col);
      break;
    case GA_CX_BETWEEN: { /* x lo hi */
      ga_cx_word *xv = &stack[sp - 3], *lo = &stack[sp - 2];
      uint64_t l1 = xv->notnull & lo->notnull, l2 = xv->notnull & top->notnull;
      uint64_t y1 = word_cmp_mask(in->a, xv, lo, l1);
      uint64_t y2 = word_cmp_mask(in->b, xv, top, l2);
      uint64_t f = (l1 & ~y1) | (l2 & ~y2); /* AND: false wins */
      xv->err |= lo->err | top->err;
      set_bool(xv, y1 & y2, f | (y1 & y2));
      sp -= 2;
      break;
    }
    case GA_CX_CASE: {
      int n = 2 * in->a + in->b;
      word_case(&stack[sp - n], in->a, in->b, &stack[sp - n]);
      sp -= n - 1;
      break;
    }
    case GA_CX_COALESCE: {
      int n = in->a;
      ga_cx_word *s = &stack[sp - n];
      uint64_t open = ~s[0].notnull, err = s[0].err;
      for (int i = 1; i < n; i++) {
        take_lanes(&s[0], &s[i], open & s[i].notnull);
        err |= s[i].err;
        open &= ~s[i].notnull;
      }
      s[0].err = err;
      sp -= n - 1;
      break;
    }
    case GA_CX_ABS:
      word_abs(top);
      break;
    case GA_CX_MAP:
      word_map(top, &x->env->maps[in->a]);
      break;
    case GA_CX_INSET:
      word_inset(top, &x->env->maps[in->a],
                 in->b >= 0 ? &x->env->maps[in->b] : NULL, in->v.i, in->col);
      break;
    default:
      word_binary(in->op, &stack[sp - 2], top);
      sp--;
    }
  }
  if (out != &stack[0])
    *out = stack[0];
}
