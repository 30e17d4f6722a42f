/*
** state.c — exact aggregate states and their BLOB formats (see state.h;
** the byte layout is documented in README "Aggregate states").
**
** Rules this file keeps:
**   1. The BLOB has a fixed byte order (little-endian, written byte by byte,
**      whatever the host) and a fixed layout per version.
**   2. Encoding writes the canonical form of a state: the sum partial
**      normalised and stored as sign + magnitude over its non-zero digits,
**      the integer total as one exact 128-bit number.  Equal states give
**      equal bytes.
**   3. Decoding checks every byte before it builds anything: magic,
**      version, kind, reserved bytes, lengths, the canonical form, and the
**      consistency of the counts with the values (an integer total larger
**      than nint * 2^63 or a real sum larger than its count of finite
**      values times DBL_MAX cannot come from encode, nor can a count of
**      NaNs: SQL passes none).  A BLOB that encode cannot produce is
**      refused, so the counts and digits of a merge stay far inside int64.
*/
#include "state.h"

#include <math.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define NDIG GA_XACC_DIGITS

static const unsigned char MAGIC[4] = {'G', 'A', 'S', 'T'};
#define HDR 8

void ga_xstate_init(ga_xstate *s) { memset(s, 0, sizeof(*s)); }

void ga_xstate_clear(ga_xstate *s) {
  ga_bval_clear(&s->max);
  ga_bval_clear(&s->min);
  memset(s, 0, sizeof(*s));
}

/* ---- stepping ---- */

void ga_xstate_step_sum(ga_xstate *s, const ga_value *num) {
  s->rows++;
  if (num->type == GA_V_NULL)
    return;
  s->count++;
  if (num->type == GA_V_INT)
    ga_sum_add_int(&s->sum, num->i, 1);
  else
    ga_xacc_add_real(&s->sum, num->r, 1);
  if ((s->count & GA_STATE_NORM_MASK) == 0)
    ga_sum_normalize(&s->sum);
}

/* Set a best value: numbers in place, text and blob copied. */
int ga_best_set(ga_bval *b, const ga_value *v) {
  if (v->type == GA_V_INT || v->type == GA_V_REAL) {
    if (b->p) {
      sqlite3_free(b->p);
      b->p = NULL;
    }
    b->type = v->type;
    b->n = 0;
    b->i = v->type == GA_V_INT ? v->i : 0;
    b->r = v->type == GA_V_REAL ? v->r : 0;
    return GA_OK;
  }
  return ga_bval_set(b, v);
}

int ga_best_update(ga_bval *b, const ga_value *v, int want_min) {
  if (v->type == GA_V_NULL)
    return GA_OK;
  if (b->type != GA_V_NULL) {
    ga_value cur;
    ga_bval_view(b, &cur);
    int c = ga_value_cmp(v, &cur);
    if (want_min ? c >= 0 : c <= 0)
      return GA_OK; /* not strictly better: the earlier one stays */
  }
  return ga_best_set(b, v);
}

int ga_xstate_step_max(ga_xstate *s, const ga_value *raw) {
  return ga_best_update(&s->max, raw, 0);
}

int ga_xstate_step_min(ga_xstate *s, const ga_value *raw) {
  return ga_best_update(&s->min, raw, 1);
}

void ga_xstate_best_num_slow(ga_bval *b, const ga_value *v, int want_min) {
  if (b->type == GA_V_INT || b->type == GA_V_REAL) { /* INTEGER vs REAL */
    int c = ga_num_cmp(v->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL,
                       v->type == GA_V_INT ? v->i : ga_dbits(v->r),
                       b->type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL,
                       b->type == GA_V_INT ? b->i : ga_dbits(b->r));
    if (want_min ? c >= 0 : c <= 0)
      return;
  } else if (b->type != GA_V_NULL && !want_min) {
    return; /* a TEXT or BLOB max beats every number */
  }
  ga_best_set(b, v); /* numbers never need a copy: this cannot fail */
}

int ga_xstate_step(ga_xstate *s, const ga_value *num, const ga_value *raw) {
  int rc = ga_xstate_step_max(s, raw);
  if (rc == GA_OK)
    rc = ga_xstate_step_min(s, raw);
  if (rc == GA_OK) /* counted only once the row is taken completely */
    ga_xstate_step_sum(s, num);
  return rc;
}

/* ---- merging ---- */

static int add_count(int64_t *into, int64_t v, int sign) {
  int64_t r;
  if (__builtin_add_overflow(*into, sign * v, &r) || r < 0)
    return GA_BADSTATE;
  *into = r;
  return GA_OK;
}

int ga_xstate_merge_sum(ga_xstate *into, const ga_xstate *later, int sign) {
  ga_xstate *a = into;
  const ga_sum_partial *f = &later->sum;
  int64_t c[7] = {a->rows,      a->count,     a->sum.nint, a->sum.nreal,
                  a->sum.npinf, a->sum.nninf, a->sum.nnan};
  const int64_t d[7] = {later->rows, later->count, f->nint, f->nreal,
                        f->npinf,    f->nninf,     f->nnan};
  for (int k = 0; k < 7; k++)
    if (add_count(&c[k], d[k], sign))
      return GA_BADSTATE; /* nothing changed */
  ga_sum_partial g = *f;
  ga_i128 it = ga_sum_int_total(&into->sum) +
               (sign < 0 ? -ga_sum_int_total(f) : ga_sum_int_total(f));
  if (sign < 0)
    for (int k = 0; k < NDIG; k++)
      g.acc[k] = -g.acc[k];
  g.nint = g.nreal = g.npinf = g.nninf = g.nnan = 0;
  ga_sum_set_int_total(&g, 0);
  ga_sum_merge(&into->sum, &g); /* the digits; counts and integers below */
  ga_sum_set_int_total(&into->sum, it);
  a->rows = c[0];
  a->count = c[1];
  a->sum.nint = c[2];
  a->sum.nreal = c[3];
  a->sum.npinf = c[4];
  a->sum.nninf = c[5];
  a->sum.nnan = c[6];
  return GA_OK;
}

int ga_bval_merge_begin(ga_bval_merge *m, const ga_bval *max,
                        const ga_bval *min, const ga_bval *later_max,
                        const ga_bval *later_min) {
  ga_value v, cur;
  memset(m, 0, sizeof(*m));
  ga_bval_view(later_max, &v);
  ga_bval_view(max, &cur);
  if (v.type != GA_V_NULL &&
      (cur.type == GA_V_NULL || ga_value_cmp(&v, &cur) > 0)) {
    if (ga_best_set(&m->max, &v))
      return GA_NOMEM;
    m->take_max = 1;
  }
  ga_bval_view(later_min, &v);
  ga_bval_view(min, &cur);
  if (v.type != GA_V_NULL &&
      (cur.type == GA_V_NULL || ga_value_cmp(&v, &cur) < 0)) {
    if (ga_best_set(&m->min, &v)) {
      ga_bval_clear(&m->max);
      return GA_NOMEM;
    }
    m->take_min = 1;
  }
  return GA_OK;
}

void ga_bval_merge_end(ga_bval_merge *m, ga_bval *max, ga_bval *min,
                       int commit) {
  if (commit && m->take_max) {
    ga_bval_clear(max);
    *max = m->max;
  } else {
    ga_bval_clear(&m->max);
  }
  if (commit && m->take_min) {
    ga_bval_clear(min);
    *min = m->min;
  } else {
    ga_bval_clear(&m->min);
  }
}

int ga_xstate_merge(ga_xstate *into, const ga_xstate *later) {
  /* copies first, so that a failure leaves into unchanged */
  ga_bval_merge m;
  if (ga_bval_merge_begin(&m, &into->max, &into->min, &later->max, &later->min))
    return GA_NOMEM;
  int rc = ga_xstate_merge_sum(into, later, 1);
  ga_bval_merge_end(&m, &into->max, &into->min, rc == GA_OK);
  if (rc)
    return rc;
  if (!into->enc)
    into->enc = later->enc;
  return GA_OK;
}

/* ---- results ---- */

int ga_xstate_result(const ga_xstate *s, int op, ga_value *out) {
  memset(out, 0, sizeof(*out));
  switch (op) {
  case GA_AGG_MAX:
    ga_bval_view(&s->max, out);
    return GA_OK;
  case GA_AGG_MIN:
    ga_bval_view(&s->min, out);
    return GA_OK;
  default:
    return ga_sum_value(&s->sum, op, out);
  }
}

/* ---- the BLOB: writing ---- */

typedef struct wbuf {
  unsigned char *p;
  int64_t n;
} wbuf;

static void put8(wbuf *w, unsigned v) { w->p[w->n++] = (unsigned char)v; }
static void put32(wbuf *w, uint32_t v) {
  for (int k = 0; k < 4; k++)
    put8(w, (v >> (8 * k)) & 0xff);
}
static void put64(wbuf *w, uint64_t v) {
  for (int k = 0; k < 8; k++)
    put8(w, (unsigned)(v >> (8 * k)) & 0xff);
}
static void putn(wbuf *w, const void *p, int64_t n) {
  if (n)
    memcpy(w->p + w->n, p, (size_t)n);
  w->n += n;
}

/* The canonical digits of the real part: sign and |acc| normalised. */
typedef struct canon {
  int neg, lo, nd;
  uint32_t d[NDIG];
} canon;

static void canon_of(const ga_sum_partial *p, canon *c) {
  ga_sum_partial q = *p;
  ga_sum_normalize(&q);
  c->neg = q.acc[NDIG - 1] < 0;
  if (c->neg) { /* |value|: negate every digit, normalise again */
    for (int k = 0; k < NDIG; k++)
      q.acc[k] = -q.acc[k];
    ga_sum_normalize(&q);
  }
  int lo = 0, hi = NDIG - 1;
  while (lo < NDIG && q.acc[lo] == 0)
    lo++;
  while (hi >= lo && q.acc[hi] == 0)
    hi--;
  c->lo = lo < NDIG ? lo : 0;
  c->nd = lo < NDIG ? hi - lo + 1 : 0;
  if (!c->nd)
    c->neg = 0;
  /* the top digit of a real magnitude is below 2^18 (README), so every
  ** digit fits in 32 bits */
  for (int k = 0; k < c->nd; k++)
    c->d[k] = (uint32_t)q.acc[c->lo + k];
}

#define SUM_FIXED (8 + 16 + 8 * 4 + 3)

static void put_sum(wbuf *w, const ga_sum_partial *p, const canon *c) {
  ga_i128 t = ga_sum_int_total(p);
  put64(w, (uint64_t)p->nint);
  put64(w, (uint64_t)t);
  put64(w, (uint64_t)(t >> 64));
  put64(w, (uint64_t)p->nreal);
  put64(w, (uint64_t)p->npinf);
  put64(w, (uint64_t)p->nninf);
  put64(w, (uint64_t)p->nnan);
  put8(w, (unsigned)c->neg);
  put8(w, (unsigned)c->lo);
  put8(w, (unsigned)c->nd);
  for (int k = 0; k < c->nd; k++)
    put32(w, c->d[k]);
}

static int64_t val_size(const ga_bval *b) {
  switch (b->type) {
  case GA_V_INT:
  case GA_V_REAL:
    return 1 + 8;
  case GA_V_TEXT:
    return 1 + 1 + 4 + b->n;
  case GA_V_BLOB:
    return 1 + 4 + b->n;
  default:
    return 1;
  }
}

static const void *bval_bytes(const ga_bval *b) {
  ga_value v;
  ga_bval_view(b, &v);
  return v.p;
}

static void put_val(wbuf *w, const ga_bval *b, int enc) {
  put8(w, (unsigned)b->type);
  switch (b->type) {
  case GA_V_INT:
    put64(w, (uint64_t)b->i);
    break;
  case GA_V_REAL:
    put64(w, (uint64_t)ga_dbits(b->r));
    break;
  case GA_V_TEXT:
    put8(w, (unsigned)enc);
    put32(w, (uint32_t)b->n);
    putn(w, bval_bytes(b), b->n);
    break;
  case GA_V_BLOB:
    put32(w, (uint32_t)b->n);
    putn(w, bval_bytes(b), b->n);
    break;
  }
}

/* The BLOB of s into buf when it fits in cap bytes (buf may be NULL when
** cap is 0); returns its size either way.  c is s's canonical sum. */
static int64_t encode_to(const ga_xstate *s, int kind, const canon *c,
                         unsigned char *buf, int64_t cap) {
  int with_sum = kind == GA_STATE_SUM || kind == GA_STATE_FUSED;
  int64_t size = HDR;
  if (with_sum)
    size += SUM_FIXED + 4 * (int64_t)c->nd;
  if (kind == GA_STATE_FUSED)
    size += 8 + val_size(&s->max) + val_size(&s->min);
  else if (kind == GA_STATE_MAX)
    size += val_size(&s->max);
  else if (kind == GA_STATE_MIN)
    size += val_size(&s->min);
  if (size > cap)
    return size;
  wbuf w = {buf, 0};
  putn(&w, MAGIC, 4);
  put8(&w, GA_STATE_VERSION);
  put8(&w, (unsigned)kind);
  put8(&w, 0);
  put8(&w, 0);
  int enc = s->enc ? s->enc : 1;
  if (kind == GA_STATE_FUSED)
    put64(&w, (uint64_t)s->rows);
  if (with_sum)
    put_sum(&w, &s->sum, c);
  if (kind == GA_STATE_MAX || kind == GA_STATE_FUSED)
    put_val(&w, &s->max, enc);
  if (kind == GA_STATE_MIN || kind == GA_STATE_FUSED)
    put_val(&w, &s->min, enc);
  return w.n;
}

static void canon_for(const ga_xstate *s, int kind, canon *c) {
  memset(c, 0, sizeof(*c));
  if (kind == GA_STATE_SUM || kind == GA_STATE_FUSED)
    canon_of(&s->sum, c);
}

int ga_state_encode(const ga_xstate *s, int kind, unsigned char **out,
                    int64_t *n) {
  canon c;
  canon_for(s, kind, &c);
  int64_t size = encode_to(s, kind, &c, NULL, 0);
  *out = sqlite3_malloc64((uint64_t)size);
  *n = 0;
  if (!*out)
    return GA_NOMEM;
  *n = encode_to(s, kind, &c, *out, size);
  return GA_OK;
}

int64_t ga_state_encode_buf(const ga_xstate *s, int kind, unsigned char *buf,
                            int64_t cap) {
  canon c;
  canon_for(s, kind, &c);
  return encode_to(s, kind, &c, buf, cap);
}

/* ---- the BLOB: reading ---- */

typedef struct rbuf {
  const unsigned char *p;
  int64_t n, i;
  const char *err; /* first error; reads after it return 0 */
} rbuf;

static int need(rbuf *r, int64_t k) {
  if (r->err)
    return 0;
  if (k > r->n - r->i) {
    r->err = "truncated state";
    return 0;
  }
  return 1;
}
static unsigned get8(rbuf *r) { return need(r, 1) ? r->p[r->i++] : 0; }
static uint32_t get32(rbuf *r) {
  if (!need(r, 4))
    return 0;
  uint32_t v = 0;
  for (int k = 3; k >= 0; k--)
    v = v << 8 | r->p[r->i + k];
  r->i += 4;
  return v;
}
static uint64_t get64(rbuf *r) {
  if (!need(r, 8))
    return 0;
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--)
    v = v << 8 | r->p[r->i + k];
  r->i += 8;
  return v;
}
static void bad(rbuf *r, const char *why) {
  if (!r->err)
    r->err = why;
}
static int64_t get_count(rbuf *r) {
  uint64_t v = get64(r);
  if (v > (uint64_t)INT64_MAX)
    bad(r, "malformed state (a count is negative)");
  return (int64_t)v;
}

/* The sum section into p (which is zeroed). */
static void get_sum(rbuf *r, ga_sum_partial *p) {
  int64_t nint = get_count(r);
  uint64_t tlo = get64(r), thi = get64(r);
  ga_i128 t = (ga_i128)(((unsigned __int128)thi << 64) | tlo);
  int64_t nreal = get_count(r);
  int64_t npinf = get_count(r), nninf = get_count(r), nnan = get_count(r);
  unsigned neg = get8(r), lo = get8(r), nd = get8(r);
  if (r->err)
    return;
  if (nint > INT64_MAX - nreal) /* count = nint + nreal must fit */
    return bad(r, "malformed state (counts too large)");
  /* the integers: |total| <= nint * 2^63 */
  ga_i128 lim = (ga_i128)nint << 63;
  if (t > lim || t < -lim)
    return bad(r, "malformed state (integer total too large for its count)");
  /* SQL has no NaN (SQLite reads it as NULL), so no step counts one and
  ** encode writes 0; a count of NaNs would turn the merge into NULL */
  if (nnan != 0)
    return bad(r, "malformed state (a NaN count)");
  if ((unsigned __int128)npinf + (unsigned __int128)nninf +
          (unsigned __int128)nnan >
      (unsigned __int128)nreal)
    return bad(r, "malformed state (more infinities than reals)");
  if (neg > 1 || lo + nd > NDIG || (nd == 0 && (lo || neg)))
    return bad(r, "malformed state (digit range)");
  if (!need(r, 4 * (int64_t)nd))
    return;
  uint32_t d[NDIG] = {0};
  for (unsigned k = 0; k < nd; k++)
    d[lo + k] = get32(r);
  if (nd && (d[lo] == 0 || d[lo + nd - 1] == 0))
    return bad(r, "malformed state (digits not canonical)");
  /* |reals| < nfinite * 2^1024, i.e. bits from 2^(1024 + 1074) = bit 2098
  ** (digit 65, bit 18) up, as an integer, must stay below nfinite */
  int64_t nfinite = nreal - npinf - nninf - nnan;
  unsigned __int128 above = ((unsigned __int128)d[67] << 46) |
                            ((unsigned __int128)d[66] << 14) | (d[65] >> 18);
  if (nd && above >= (unsigned __int128)nfinite)
    return bad(r, "malformed state (real sum too large for its count)");
  for (int k = 0; k < NDIG; k++)
    p->acc[k] = neg ? -(int64_t)d[k] : (int64_t)d[k];
  ga_sum_normalize(p);
  ga_sum_set_int_total(p, t);
  p->nint = nint;
  p->nreal = nreal;
  p->npinf = npinf;
  p->nninf = nninf;
  p->nnan = nnan;
}

/* One value section into b (empty); GA_NOMEM or GA_OK (errors in r). */
static int get_val(rbuf *r, ga_bval *b, int *enc) {
  unsigned type = get8(r);
  if (r->err)
    return GA_OK;
  switch (type) {
  case GA_V_NULL:
    return GA_OK;
  case GA_V_INT:
    b->i = (int64_t)get64(r);
    break;
  case GA_V_REAL:
    b->r = ga_bitsd((int64_t)get64(r));
    if (b->r != b->r)
      bad(r, "malformed state (NaN)");
    break;
  case GA_V_TEXT:
  case GA_V_BLOB: {
    unsigned e = 0;
    if (type == GA_V_TEXT) {
      e = get8(r);
      if (!r->err && (e < 1 || e > 3))
        bad(r, "malformed state (unknown text encoding)");
    }
    uint32_t len = get32(r);
    if (!r->err && len > 0x7fffffff)
      bad(r, "malformed state (value too long)");
    if (!r->err && type == GA_V_TEXT && e != 1 && (len & 1))
      bad(r, "malformed state (odd UTF-16 length)");
    if (r->err || !need(r, len))
      return GA_OK;
    ga_value v = {0};
    v.type = (int)type;
    v.n = (int)len;
    v.p = r->p + r->i;
    r->i += len;
    if (ga_bval_set(b, &v))
      return GA_NOMEM;
    if (type == GA_V_TEXT) {
      if (*enc && *enc != (int)e)
        bad(r, "malformed state (two text encodings)");
      *enc = (int)e;
    }
    return GA_OK;
  }
  default:
    bad(r, "malformed state (unknown value type)");
    return GA_OK;
  }
  if (!r->err)
    b->type = (int)type;
  return GA_OK;
}

int ga_state_kind(const void *blob, int64_t n) {
  const unsigned char *p = blob;
  if (!p || n < HDR || memcmp(p, MAGIC, 4))
    return 0;
  return p[5] >= GA_STATE_SUM && p[5] <= GA_STATE_VAR ? p[5] : 0;
}

int ga_state_decode(const void *blob, int64_t n, int kind, ga_xstate *out,
                    const char **err) {
  rbuf r = {blob, n, 0, NULL};
  ga_xstate_init(out);
  *err = NULL;
  if (!blob || n < 6 || memcmp(blob, MAGIC, 4)) {
    *err = "not a gpuagg state";
    return GA_BADSTATE;
  }
  r.i = 4;
  unsigned ver = get8(&r), k = get8(&r);
  if (ver > GA_STATE_VERSION) {
    *err = "state made by a newer gpuagg (format version > 1); upgrade "
           "gpuagg to read it";
    return GA_BADSTATE;
  }
  if (ver != GA_STATE_VERSION) {
    *err = "not a gpuagg state (version 0)";
    return GA_BADSTATE;
  }
  if ((int)k != kind) {
    /* static texts: "wrong kind" names what the BLOB is */
    static const char *const wrong[5] = {
        "wrong kind of state: this is a sum state (gpu_sum/total/avg_state)",
        "wrong kind of state: this is a max state (gpu_max_state)",
        "wrong kind of state: this is a min state (gpu_min_state)",
        "wrong kind of state: this is a gpu_aggregate worker state",
        "wrong kind of state: this is a variance state (gpu_var_state)"};
    *err = k >= GA_STATE_SUM && k <= GA_STATE_VAR ? wrong[k - 1]
                                                  : "unknown state kind";
    return GA_BADSTATE;
  }
  if (get8(&r) != 0 || get8(&r) != 0) {
    *err = r.err ? r.err : "malformed state (reserved header bytes)";
    return GA_BADSTATE;
  }
  int rc = GA_OK, enc = 0;
  if (kind == GA_STATE_FUSED) {
    out->rows = get_count(&r);
  }
  if (kind == GA_STATE_SUM || kind == GA_STATE_FUSED)
    get_sum(&r, &out->sum);
  if (!r.err && (kind == GA_STATE_MAX || kind == GA_STATE_FUSED))
    rc = get_val(&r, &out->max, &enc);
  if (rc == GA_OK && !r.err && (kind == GA_STATE_MIN || kind == GA_STATE_FUSED))
    rc = get_val(&r, &out->min, &enc);
  if (rc == GA_OK && !r.err && r.i != r.n)
    bad(&r, "malformed state (trailing bytes)");
  out->count = out->sum.nint + out->sum.nreal;
  if (rc == GA_OK && !r.err && kind == GA_STATE_FUSED) {
    int none = out->count == 0;
    if (out->rows < out->count)
      bad(&r, "malformed state (fewer rows than values)");
    else if (none != (out->max.type == GA_V_NULL) ||
             none != (out->min.type == GA_V_NULL))
      bad(&r, "malformed state (max/min do not match the count)");
    else if (!none) {
      ga_value a, b;
      ga_bval_view(&out->max, &a);
      ga_bval_view(&out->min, &b);
      if (ga_value_cmp(&a, &b) < 0)
        bad(&r, "malformed state (max below min)");
    }
  }
  if (kind != GA_STATE_FUSED)
    out->rows = out->count;
  out->enc = enc;
  if (rc != GA_OK || r.err) {
    ga_xstate_clear(out);
    *err = rc != GA_OK ? NULL : r.err;
    return rc != GA_OK ? rc : GA_BADSTATE;
  }
  return GA_OK;
}

/* ---- the sum section alone (engine/state/vstate.c's variance BLOB) ---- */

int64_t ga_state_sum_section(const ga_sum_partial *p, unsigned char *buf,
                             int64_t cap) {
  canon c;
  canon_of(p, &c);
  int64_t size = SUM_FIXED + 4 * (int64_t)c.nd;
  if (size <= cap) {
    wbuf w = {buf, 0};
    put_sum(&w, p, &c);
  }
  return size;
}

int64_t ga_state_sum_section_read(const unsigned char *p, int64_t n,
                                  ga_sum_partial *out, const char **err) {
  rbuf r = {p, n, 0, NULL};
  memset(out, 0, sizeof(*out));
  get_sum(&r, out);
  *err = r.err;
  return r.err ? -1 : r.i;
}
