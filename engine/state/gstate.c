/*
** gstate.c — the compact exact group state (gstate.h): a windowed
** superaccumulator that goes wide only when its values need it.
*/
#include "gstate.h"

#include <math.h>
#include <string.h>

#include "pct.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define W GA_WSUM_DIGITS
#define NDIG GA_XACC_DIGITS

void ga_gstate_init(ga_gstate *s) { memset(s, 0, sizeof(*s)); }

void ga_gstate_clear(ga_gstate *s) {
  ga_bval_clear(&s->max);
  ga_bval_clear(&s->min);
  sqlite3_free(s->sum.wide);
  ga_dset_free(s->set);
  sqlite3_free(s->sq);
  ga_gstate_init(s);
}

static int64_t bval_heap(const ga_bval *b) {
  return b->p ? b->n : 0; /* short ones live in the bval (bestval.h) */
}

int64_t ga_gstate_heap_bytes(const ga_gstate *s) {
  return (s->sum.wide ? (int64_t)sizeof(ga_sum_partial) : 0) +
         bval_heap(&s->max) + bval_heap(&s->min) + ga_dset_bytes(s->set) +
         (s->sq ? (int64_t)sizeof(ga_gsq) : 0);
}

/* ---- rule 8: Σx² ---- */

#define SQ_MAX_ADDS (GA_XACC_SAFE_ADDS / 4) /* xvar.c's headroom */

static void sq_normalize(ga_gsq *q) {
  for (int k = 0; k < GA_XSQ_DIGITS - 1; k++) {
    int64_t c = q->d[k] >> 32; /* arithmetic: floor */
    q->d[k] -= (int64_t)((uint64_t)c << 32);
    q->d[k + 1] += c;
  }
  q->adds = 0;
}

int ga_gstate_sq_step(ga_gstate *s, const ga_value *num) {
  if (num->type != GA_V_INT && num->type != GA_V_REAL)
    return GA_OK;
  if (!s->sq) {
    if (!(s->sq = sqlite3_malloc64(sizeof(ga_gsq))))
      return GA_NOMEM;
    memset(s->sq, 0, sizeof(ga_gsq));
  }
  if (num->type == GA_V_INT) {
    uint64_t u = num->i < 0 ? -(uint64_t)num->i : (uint64_t)num->i;
    ga_xsq_add_at(s->sq->d, (unsigned __int128)u * u, GA_XSQ_BIAS, 0);
  } else {
    uint64_t b = (uint64_t)ga_dbits(num->r);
    if (((b >> 52) & 0x7ff) != 0x7ff) /* infinities count in the sum only */
      ga_xsq_add_real(s->sq->d, b, 0);
  }
  if (++s->sq->adds >= SQ_MAX_ADDS)
    sq_normalize(s->sq);
  return GA_OK;
}

int ga_gstate_sq_add(ga_gstate *s, unsigned __int128 m, int pos) {
  if (!s->sq) {
    if (!(s->sq = sqlite3_malloc64(sizeof(ga_gsq))))
      return GA_NOMEM;
    memset(s->sq, 0, sizeof(ga_gsq));
  }
  ga_xsq_add_at(s->sq->d, m, pos, 0);
  if (++s->sq->adds >= SQ_MAX_ADDS)
    sq_normalize(s->sq);
  return GA_OK;
}

/* A merge's Σx² in two halves, so that a failure leaves into unchanged:
** sq_reserve gives into a zeroed window where later has one (its value
** unchanged), sq_add (which cannot fail) adds later's digits, each
** bounded by later's adds (rule 8). */
static int sq_reserve(ga_gstate *into, const ga_gstate *later) {
  if (!later->sq || into->sq)
    return GA_OK;
  if (!(into->sq = sqlite3_malloc64(sizeof(ga_gsq))))
    return GA_NOMEM;
  memset(into->sq, 0, sizeof(ga_gsq));
  return GA_OK;
}

static void sq_add(ga_gstate *into, const ga_gstate *later) {
  if (!later->sq)
    return;
  sq_normalize(into->sq);
  for (int k = 0; k < GA_XSQ_DIGITS; k++)
    into->sq->d[k] += later->sq->d[k];
  into->sq->adds = later->sq->adds + 1;
  if (into->sq->adds >= SQ_MAX_ADDS)
    sq_normalize(into->sq);
}

void ga_gstate_var_view(const ga_gstate *s, ga_var_partial *out) {
  memset(out, 0, sizeof(*out));
  ga_wsum_expand(&s->sum, &out->sum);
  if (s->sq) {
    memcpy(out->sq, s->sq->d, sizeof(out->sq));
    out->adds = s->sq->adds;
  }
  ga_var_normalize(out);
}

/* ---- the window ---- */

static void digits_normalize(int64_t *d, int n) {
  for (int k = 0; k < n - 1; k++) {
    int64_t c = d[k] >> 32; /* arithmetic: floor */
    d[k] -= (int64_t)((uint64_t)c << 32);
    d[k + 1] += c;
  }
}

/* Carries, then a negative value's sign folded down: normalising makes
** -x into 2^32 - 1 digits up to the top one, -1; -1 on top of 2^32 - 1 is
** -1 a digit lower, the same value.  The digits in use then span the
** value's own, not the whole window (which the next move needs free). */
static void window_normalize(int64_t *d) {
  digits_normalize(d, W);
  for (int t = W - 1; t > 0 && (d[t] == 0 || d[t] == -1); t--)
    if (d[t] == -1) {
      d[t - 1] -= (int64_t)1 << 32;
      d[t] = 0;
    }
}

void ga_wsum_normalize(ga_wsum *w) {
  if (w->wide)
    ga_sum_normalize(w->wide); /* its integer fields are zero */
  else
    window_normalize(w->d);
  /* the integer halves, as ga_sum_normalize does */
  int64_t c = w->ilo >> 32;
  w->ilo &= (int64_t)0xffffffff;
  w->ihi = (int64_t)((uint64_t)w->ihi + (uint64_t)c);
  c = w->ihi >> 32;
  w->ihi &= (int64_t)0xffffffff;
  w->itop += c;
  w->adds = 0;
}

/* The xacc indexes of the lowest and highest nonzero digit; 0 when none. */
static int used(const ga_wsum *w, int *a, int *t) {
  int i = 0, j = W - 1;
  while (i < W && !w->d[i])
    i++;
  if (i == W)
    return 0;
  while (!w->d[j])
    j--;
  *a = w->lo + i;
  *t = w->lo + j;
  return 1;
}

/* Move the window over digits [need_lo, need_hi] (at most W of them),
** centred, keeping every digit in use where it is in value. */
static void rewindow(ga_wsum *w, int need_lo, int need_hi) {
  int lo = need_lo - (W - (need_hi - need_lo + 1)) / 2;
  if (lo > NDIG - W)
    lo = NDIG - W;
  if (lo < 0)
    lo = 0;
  int64_t d[W] = {0};
  for (int i = 0; i < W; i++)
    if (w->d[i])
      d[w->lo + i - lo] = w->d[i]; /* in [0, W): used digits fit */
  memcpy(w->d, d, sizeof(d));
  w->lo = lo;
}

/* Every digit into a new whole accumulator; GA_OK or GA_NOMEM. */
static int go_wide(ga_wsum *w) {
  ga_sum_partial *p = sqlite3_malloc64(sizeof(*p));
  if (!p)
    return GA_NOMEM;
  memset(p, 0, sizeof(*p));
  for (int i = 0; i < W; i++)
    p->acc[w->lo + i] = w->d[i];
  memset(w->d, 0, sizeof(w->d));
  w->lo = 0;
  w->wide = p;
  return GA_OK;
}

int ga_wsum_add_slow(ga_wsum *w, uint64_t m, int pos, int neg) {
  int k = pos >> 5, a, t;
  if (!w->wide) {
    /* the value's digits and its headroom digit (rule 2), and those in use */
    int need_lo = k, need_hi = k + 3;
    if (used(w, &a, &t)) {
      need_lo = a < k ? a : k;
      need_hi = t > k + 3 ? t : k + 3;
    }
    if (need_hi - need_lo < W) {
      rewindow(w, need_lo, need_hi);
      ga_xacc_add_at(w->d, m, pos - 32 * w->lo, neg);
      return GA_OK;
    }
    if (go_wide(w))
      return GA_NOMEM;
  }
  ga_xacc_add_at(w->wide->acc, m, pos, neg);
  return GA_OK;
}

/* ga_wsum_add_real's add of m at xacc position pos, after its checks. */
static int wsum_add_at(ga_wsum *w, uint64_t m, int pos, int neg) {
  if (w->wide) {
    ga_xacc_add_at(w->wide->acc, m, pos, neg);
    return GA_OK;
  }
  unsigned j = (unsigned)((pos >> 5) - w->lo);
  if (j <= W - 4) {
    ga_xacc_add_at(w->d, m, pos - 32 * w->lo, neg);
    return GA_OK;
  }
  return ga_wsum_add_slow(w, m, pos, neg);
}

int ga_wsum_add_fixed(ga_wsum *w, __int128 s, int pos) {
  int neg = s < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)s : (unsigned __int128)s;
  uint64_t lo = (uint64_t)u, hi = (uint64_t)(u >> 64);
  int rc = GA_OK;
  if (lo)
    rc = wsum_add_at(w, lo, pos, neg);
  if (hi && rc == GA_OK)
    rc = wsum_add_at(w, hi, pos + 64, neg);
  w->adds += 2; /* rule 2: two values' worth of growth at most */
  if (w->adds >= GA_WSUM_MAX_ADDS)
    ga_wsum_normalize(w);
  return rc;
}

void ga_wsum_expand(const ga_wsum *w, ga_sum_partial *out) {
  if (w->wide) {
    memcpy(out->acc, w->wide->acc, sizeof(out->acc));
  } else {
    memset(out->acc, 0, sizeof(out->acc));
    memcpy(out->acc + w->lo, w->d, sizeof(w->d));
  }
  out->ilo = w->ilo;
  out->ihi = w->ihi;
  out->itop = w->itop;
  out->nint = w->nint;
  out->nreal = w->nreal;
  out->npinf = w->npinf;
  out->nninf = w->nninf;
  out->nnan = w->nnan;
}

/* A whole accumulator's digits into an empty w (counts and integers apart):
** normalised, a negative value's sign folded down into its top digit in
** use, then held in a window when they fit one (with headroom), else
** wide.  GA_OK or GA_NOMEM. */
static int wsum_take_digits(ga_wsum *w, const ga_sum_partial *src) {
  ga_sum_partial p = *src;
  ga_sum_normalize(&p);
  int a = 0, t = NDIG - 1;
  while (a < NDIG && !p.acc[a])
    a++;
  if (a == NDIG)
    return GA_OK; /* no digit: the empty window */
  /* -1 on top of 2^32 - 1 is -1 a digit lower: same value */
  while (t > a && (p.acc[t] == 0 || p.acc[t] == -1)) {
    if (p.acc[t] == -1)
      p.acc[t - 1] -= (int64_t)1 << 32;
    p.acc[t] = 0;
    t--;
  }
  if (t + 1 - a < W) {
    rewindow(w, a, t + 1); /* w is empty: only lo moves */
    for (int i = a; i <= t; i++)
      w->d[i - w->lo] = p.acc[i];
    return GA_OK;
  }
  w->wide = sqlite3_malloc64(sizeof(*w->wide));
  if (!w->wide)
    return GA_NOMEM;
  memset(w->wide, 0, sizeof(*w->wide));
  memcpy(w->wide->acc, p.acc, sizeof(p.acc));
  return GA_OK;
}

/* into's digits += later's; into unchanged in value on GA_NOMEM. */
static int wsum_merge_digits(ga_wsum *into, const ga_wsum *later) {
  int a1, t1, a2 = 0, t2 = 0;
  if (!into->wide && !later->wide) {
    if (!used(later, &a2, &t2))
      return GA_OK; /* no digit */
    if (a2 >= into->lo && t2 < into->lo + W &&
        (int64_t)into->adds + later->adds < GA_WSUM_MAX_ADDS) {
      /* the windows line up: no carry, no move (rule 2's bound) */
      for (int k = a2; k <= t2; k++)
        into->d[k - into->lo] += later->d[k - later->lo];
      into->adds += later->adds + 1;
      return GA_OK;
    }
  }
  ga_wsum b = *later; /* its digits only: b.wide stays later's */
  if (!b.wide) {
    window_normalize(b.d);
    if (!used(&b, &a2, &t2))
      return GA_OK;
  }
  if (!into->wide && !b.wide) {
    ga_wsum_normalize(into);
    int lo = a2, hi = t2;
    if (used(into, &a1, &t1)) {
      lo = a1 < lo ? a1 : lo;
      hi = t1 > hi ? t1 : hi;
    }
    if (hi + 1 - lo < W) { /* with a headroom digit for the carries */
      rewindow(into, lo, hi + 1);
      for (int i = 0; i < W; i++)
        if (b.d[i])
          into->d[b.lo + i - into->lo] += b.d[i];
      window_normalize(into->d);
      into->adds = 0;
      return GA_OK;
    }
  }
  if (!into->wide && go_wide(into))
    return GA_NOMEM;
  ga_sum_partial *p = into->wide;
  ga_sum_normalize(p); /* later's digits may hold up to 2^27 adds */
  if (b.wide) {
    for (int k = 0; k < NDIG; k++)
      p->acc[k] += b.wide->acc[k];
  } else {
    for (int i = 0; i < W; i++)
      p->acc[b.lo + i] += b.d[i];
  }
  ga_sum_normalize(p);
  into->adds = 0;
  return GA_OK;
}

/* ---- steps, merges, views ---- */

int ga_gstate_step_sum(ga_gstate *s, const ga_value *num) {
  if (num->type == GA_V_REAL && ga_wsum_add_real(&s->sum, num->r))
    return GA_NOMEM; /* the only add that can fail: nothing counted */
  s->rows++;
  if (num->type == GA_V_NULL)
    return GA_OK;
  s->count++;
  if (num->type == GA_V_INT)
    ga_wsum_add_int(&s->sum, num->i);
  if (++s->sum.adds >= GA_WSUM_MAX_ADDS)
    ga_wsum_normalize(&s->sum);
  return GA_OK;
}

int ga_gstate_step_tagged(ga_gstate *s, int64_t *tag, int64_t piece,
                          const ga_value *x) {
  if (x->type == GA_V_NULL) {
    ga_gstate_step_null(s);
    return GA_OK;
  }
  /* numbers: max and min allocate nothing, so only the sum can fail */
  ga_gstate_best_tagged(&s->max, &tag[0], piece, x, 0);
  ga_gstate_best_tagged(&s->min, &tag[1], piece, x, 1);
  return ga_gstate_step_sum(s, x);
}

int ga_gstate_step(ga_gstate *s, const ga_value *num, const ga_value *raw) {
  int rc = ga_best_update(&s->max, raw, 0);
  if (rc == GA_OK)
    rc = ga_best_update(&s->min, raw, 1);
  if (rc == GA_OK) /* counted only once the row is taken completely */
    rc = ga_gstate_step_sum(s, num);
  return rc;
}

static int add_count(int64_t *into, int64_t v) {
  int64_t r;
  if (__builtin_add_overflow(*into, v, &r))
    return GA_BADSTATE;
  *into = r;
  return GA_OK;
}

static ga_i128 int_total(const ga_wsum *w) {
  return (ga_i128)w->itop * ((ga_i128)1 << 64) +
         (ga_i128)w->ihi * ((ga_i128)1 << 32) + (ga_i128)w->ilo;
}

int ga_gstate_merge(ga_gstate *into, const ga_gstate *later) {
  /* rule 5: the sets first (a failure leaves into's counts as they were) */
  int src = later->set ? ga_dset_merge(&into->set, later->set) : GA_OK;
  if (src == GA_PCT_BAD) /* dset.h rule 6: a picked set: a bad state */
    return GA_BADSTATE;
  if (src != GA_OK)
    return src;                /* GA_NOMEM, or GA_INTERRUPTED (dset.h rule 5) */
  if (sq_reserve(into, later)) /* rule 8 */
    return GA_NOMEM;
  ga_wsum *a = &into->sum;
  const ga_wsum *f = &later->sum;
  int64_t c[7] = {into->rows, into->count, a->nint, a->nreal,
                  a->npinf,   a->nninf,    a->nnan};
  const int64_t d[7] = {later->rows, later->count, f->nint, f->nreal,
                        f->npinf,    f->nninf,     f->nnan};
  for (int k = 0; k < 7; k++)
    if (add_count(&c[k], d[k]))
      return GA_BADSTATE; /* nothing changed */
  /* the copies of max and min before the digits, so that a failure leaves
  ** into unchanged */
  ga_bval_merge m;
  if (ga_bval_merge_begin(&m, &into->max, &into->min, &later->max, &later->min))
    return GA_NOMEM;
  if (wsum_merge_digits(a, f)) {
    ga_bval_merge_end(&m, &into->max, &into->min, 0);
    return GA_NOMEM;
  }
  ga_i128 it = int_total(a) + int_total(f); /* |each| < 2^126 */
  a->ilo = (int64_t)(it & (ga_i128)0xffffffff);
  a->ihi = (int64_t)((it >> 32) & (ga_i128)0xffffffff);
  a->itop = (int64_t)(it >> 64);
  into->rows = c[0];
  into->count = c[1];
  a->nint = c[2];
  a->nreal = c[3];
  a->npinf = c[4];
  a->nninf = c[5];
  a->nnan = c[6];
  ga_bval_merge_end(&m, &into->max, &into->min, 1);
  sq_add(into, later); /* rule 8 */
  if (!into->enc)
    into->enc = later->enc;
  return GA_OK;
}

int ga_gstate_take(ga_gstate *s, ga_xstate *x) {
  ga_gstate_init(s);
  if (wsum_take_digits(&s->sum, &x->sum))
    return GA_NOMEM;
  ga_wsum *w = &s->sum;
  w->ilo = x->sum.ilo;
  w->ihi = x->sum.ihi;
  w->itop = x->sum.itop;
  w->nint = x->sum.nint;
  w->nreal = x->sum.nreal;
  w->npinf = x->sum.npinf;
  w->nninf = x->sum.nninf;
  w->nnan = x->sum.nnan;
  s->rows = x->rows;
  s->count = x->count;
  s->max = x->max;
  s->min = x->min;
  s->enc = x->enc;
  memset(&x->max, 0, sizeof(x->max));
  memset(&x->min, 0, sizeof(x->min));
  ga_xstate_clear(x);
  return GA_OK;
}

void ga_gstate_view(const ga_gstate *s, ga_xstate *out) {
  out->rows = s->rows;
  out->count = s->count;
  ga_wsum_expand(&s->sum, &out->sum);
  out->max = s->max;
  out->min = s->min;
  out->enc = s->enc;
}

/* Rule 4: the value of a window of REALs alone (no integer, infinity or
** NaN; not wide) whose digits in use are at most two consecutive ones
** holding a nonzero value of at most 53 bits: that value is a double, so
** it is its own correct rounding (ga_sum_round's answer, bit for bit),
** made without expanding 68 digits.  1 with *r, else 0. */
static int wsum_small(const ga_wsum *w, double *r) {
  if (w->wide || w->nint || w->npinf || w->nninf || w->nnan || !w->nreal ||
      w->ilo || w->ihi || w->itop)
    return 0;
  int a = 0, t = W - 1;
  while (a < W && !w->d[a])
    a++;
  if (a == W)
    return 0;
  while (!w->d[t])
    t--;
  if (t - a > 1)
    return 0;
  ga_i128 n =
      (ga_i128)w->d[a] + (ga_i128)w->d[t] * (t > a ? (ga_i128)1 << 32 : 0);
  int e = 32 * (w->lo + a) - GA_XACC_BIAS; /* digit i weighs 2^(32i - bias) */
  if (n == 0 || n >= (ga_i128)1 << 53 || n <= -((ga_i128)1 << 53) ||
      e > 1023 - 52)
    return 0;
  *r = ldexp((double)(int64_t)n, e); /* exact: 53 bits, e >= -1074 */
  return 1;
}

/* A set entry's number as sum() classified it (dset.h rule 3): the
** INTEGER, or the REAL's bits kept in num_i. */
static void set_num(const ga_dent *e, ga_value *num) {
  memset(num, 0, sizeof(*num));
  num->type = e->num_type;
  if (e->num_type == GA_V_INT)
    num->i = e->num_i;
  else
    memcpy(&num->r, &e->num_i, sizeof(double));
}

/* Rule 5: the aggregate over the set's representatives, each stepped as
** sum() classified it (dset.h rule 3). */
static int set_result(const ga_dset *d, int op, ga_value *out) {
  ga_xstate x;
  ga_xstate_init(&x);
  for (size_t i = 0; i < d->cap; i++) {
    if (ga_dset_stop_at(i)) { /* dset.h rule 5 */
      ga_xstate_clear(&x);
      return GA_INTERRUPTED;
    }
    const ga_dent *e = &d->e[i];
    if (e->raw.type == GA_V_NULL)
      continue;
    ga_value num;
    set_num(e, &num);
    ga_xstate_step_sum(&x, &num);
  }
  int rc = ga_sum_value(&x.sum, op, out);
  ga_xstate_clear(&x);
  return rc;
}

int ga_gstate_overflows(const ga_gstate *s) {
  if (s->set || s->sum.nreal || s->sum.wide || !s->sum.nint)
    return 0;
  ga_i128 t = int_total(&s->sum);
  return t > INT64_MAX || t < INT64_MIN;
}

int64_t ga_gstate_count(const ga_gstate *s) {
  return s->set ? (int64_t)s->set->n : s->count;
}

/* Rule 5: max()'s (or min()'s) best of the set's representatives, which
** never tie (equal ones are one value); *out views it.  GA_OK, or
** GA_INTERRUPTED (dset.h rule 5). */
static int set_best(const ga_dset *d, int want_min, ga_value *out) {
  for (size_t i = 0; i < d->cap; i++) {
    if (ga_dset_stop_at(i))
      return GA_INTERRUPTED;
    ga_value v;
    if (d->e[i].raw.type == GA_V_NULL)
      continue;
    ga_bval_view(&d->e[i].raw, &v);
    int c = out->type == GA_V_NULL ? 1 : ga_value_cmp(&v, out);
    if (out->type == GA_V_NULL || (want_min ? c < 0 : c > 0))
      *out = v;
  }
  return GA_OK;
}

/* Rule 9: a DISTINCT variance, over the set's representatives, each
** stepped as sum() classified it into a state of its own with its Σx².
** GA_OK, GA_NOMEM or GA_INTERRUPTED (dset.h rule 5). */
static int set_var(const ga_dset *d, int form, ga_value *out) {
  ga_gstate t;
  ga_gstate_init(&t);
  int rc = GA_OK;
  for (size_t i = 0; i < d->cap && rc == GA_OK; i++) {
    if (ga_dset_stop_at(i)) {
      rc = GA_INTERRUPTED;
      break;
    }
    const ga_dent *e = &d->e[i];
    if (e->raw.type == GA_V_NULL)
      continue;
    ga_value num;
    set_num(e, &num);
    rc = ga_gstate_step_sum(&t, &num);
    if (rc == GA_OK)
      rc = ga_gstate_sq_step(&t, &num);
  }
  if (rc == GA_OK) {
    ga_var_partial v;
    ga_gstate_var_view(&t, &v);
    out->type = ga_var_result(&v, form, &out->r) ? GA_V_REAL : GA_V_NULL;
  }
  ga_gstate_clear(&t);
  return rc;
}

int ga_gstate_result(const ga_gstate *s, int op, ga_value *out) {
  memset(out, 0, sizeof(*out));
  if (op >= GA_GSTATE_VAR && op <= GA_GSTATE_VAR + GA_SD_POP && s->set)
    return set_var(s->set, op - GA_GSTATE_VAR, out);            /* rule 9 */
  if (op >= GA_GSTATE_VAR && op <= GA_GSTATE_VAR + GA_SD_POP) { /* rule 8 */
    ga_var_partial v;
    ga_gstate_var_view(s, &v);
    out->type =
        ga_var_result(&v, op - GA_GSTATE_VAR, &out->r) ? GA_V_REAL : GA_V_NULL;
    return GA_OK;
  }
  if (s->set && (op == GA_AGG_MAX || op == GA_AGG_MIN))
    return set_best(s->set, op == GA_AGG_MIN, out);
  if (s->set)
    return set_result(s->set, op, out);
  if (op == GA_AGG_MAX || op == GA_AGG_MIN) {
    ga_bval_view(op == GA_AGG_MAX ? &s->max : &s->min, out);
    return GA_OK;
  }
  if ((op == GA_AGG_SUM || op == GA_AGG_TOTAL) &&
      wsum_small(&s->sum, &out->r)) {
    out->type = GA_V_REAL;
    return GA_OK;
  }
  if ((op == GA_AGG_SUM || op == GA_AGG_TOTAL) && !s->sum.nreal &&
      !s->sum.wide) { /* rule 7: INTEGERs alone, from the integer halves */
    ga_i128 t = int_total(&s->sum);
    if (op == GA_AGG_SUM) { /* ga_sum_result's integer case */
      if (!s->sum.nint) {
        out->type = GA_V_NULL;
        return GA_OK;
      }
      if (t > INT64_MAX || t < INT64_MIN)
        return GA_OVERFLOW;
      out->type = GA_V_INT;
      out->i = (int64_t)t;
      return GA_OK;
    }
    if (t <= (ga_i128)1 << 53 && t >= -((ga_i128)1 << 53)) {
      out->type = GA_V_REAL; /* exact: no rounding to do */
      out->r = (double)(int64_t)t;
      return GA_OK;
    }
  }
  ga_sum_partial p;
  ga_wsum_expand(&s->sum, &p);
  return ga_sum_value(&p, op, out);
}

int ga_gstate_best_tagged(ga_bval *b, int64_t *tag, int64_t piece,
                          const ga_value *v, int want_min) {
  if (v->type == GA_V_NULL)
    return GA_OK;
  if (v->type == b->type && v->type == GA_V_REAL) { /* the common case */
    if (want_min ? v->r > b->r : v->r < b->r)
      return GA_OK;
    if (v->r == b->r && piece >= *tag)
      return GA_OK; /* 0.0 and -0.0 are equal: rowid order */
  } else if (v->type == b->type && v->type == GA_V_INT) {
    if (want_min ? v->i > b->i : v->i < b->i)
      return GA_OK;
    if (v->i == b->i) { /* the same value: only the tag can change */
      if (piece < *tag)
        *tag = piece;
      return GA_OK;
    }
  } else if (b->type != GA_V_NULL) {
    ga_value cur;
    ga_bval_view(b, &cur);
    int c = ga_value_cmp(v, &cur);
    if (want_min)
      c = -c;
    /* equal values may differ (5 and 5.0, 0.0 and -0.0): rowid order */
    if (c < 0 || (c == 0 && piece >= *tag))
      return GA_OK;
  }
  if (ga_best_set(b, v))
    return GA_NOMEM;
  *tag = piece;
  return GA_OK;
}
