/*
** test_state_engine.c — C unit tests of engine/state/state.c (no SQL, no GPU).
**
** Oracles that do not come from the code under test:
**   - the aggregate engine (engine/reduce/agg.c, CPU path) over the same values
**     gives what every state result must give, value and type;
**   - a state split at random points, each piece encoded, decoded and
**     merged in order, must encode to the same bytes as one pass (the
**     encoding is canonical), and give the same results;
**   - BLOBs written here byte by byte from README's layout must decode to
**     the values written, and every way of breaking one must be refused;
**   - a decode that succeeds must re-encode to the very bytes it read (any
**     accepted BLOB is canonical), tried on every bit flip and truncation;
**   - a compact group state (gstate.c) stepped and merged in pieces must
**     encode, seen as a ga_xstate, to the bytes of one ga_xstate pass.
** Prints one line per failure and ends with "RESULT state_engine: ...".
*/
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "agg.h"
#include "gstate.h"
#include "state.h"

static int passed, failed;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond)                                                                  \
      passed++;                                                                \
    else {                                                                     \
      failed++;                                                                \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
    }                                                                          \
  } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

/* ---- values: (num, raw) pairs as the glue would classify them ---- */

typedef struct pair {
  ga_value num, raw;
  char buf[8];
} pair;

static const int64_t INT_SPECIAL[] = {
    INT64_MAX, INT64_MIN, INT64_MAX - 1,    INT64_MIN + 1,         0,
    -1,        1,         (int64_t)1 << 53, ((int64_t)1 << 53) + 1};

static double real_special(unsigned k) {
  static const double r[] = {INFINITY,
                             -INFINITY,
                             DBL_MAX,
                             -DBL_MAX,
                             DBL_MIN,
                             4.9406564584124654e-324,
                             -0.0,
                             1e300,
                             -1e300,
                             0.1,
                             9007199254740992.0,
                             5.0,
                             1e-310};
  return r[k % (sizeof r / sizeof r[0])];
}

/* mode: 0 everything, 1 numbers only (no Inf), 2 integers only, 3 small
** integers and equal reals (ties between INTEGER and REAL) */
static void gen(pair *p, int mode) {
  memset(p, 0, sizeof(*p));
  if (mode == 3) {
    int64_t v = (int64_t)(rnd() % 7) - 3;
    if (rnd() % 2) {
      p->num.type = GA_V_INT;
      p->num.i = v;
    } else {
      p->num.type = GA_V_REAL;
      p->num.r = (double)v;
    }
    p->raw = p->num;
    return;
  }
  unsigned k = (unsigned)(rnd() % 12);
  if (mode == 2)
    k = k % 3 + 1;
  if (mode == 1 && k >= 7)
    k = k % 6 + 1;
  switch (k) {
  case 0:
    p->num.type = p->raw.type = GA_V_NULL;
    return;
  case 1:
    p->num.type = GA_V_INT;
    p->num.i = (int64_t)(rnd() % 2001) - 1000;
    break;
  case 2:
    p->num.type = GA_V_INT;
    p->num.i =
        INT_SPECIAL[rnd() % (sizeof INT_SPECIAL / sizeof INT_SPECIAL[0])];
    break;
  case 3:
    p->num.type = GA_V_INT;
    p->num.i = (int64_t)rnd();
    break;
  case 4:
    p->num.type = GA_V_REAL;
    p->num.r = ldexp((double)(int64_t)(rnd() >> 11) - 0x1p52,
                     (int)(rnd() % 200) - 100);
    break;
  case 5:
    p->num.type = GA_V_REAL;
    p->num.r = (double)(rnd() % 41) * 0.25 - 5;
    break;
  case 6: { /* any finite double, subnormals included */
    uint64_t b = rnd();
    double d;
    memcpy(&d, &b, 8);
    if (!isfinite(d))
      d = 1.5;
    p->num.type = GA_V_REAL;
    p->num.r = d;
    break;
  }
  case 7:
    p->num.type = GA_V_REAL;
    p->num.r = real_special((unsigned)rnd());
    break;
  case 8:
  case 9: { /* text: 2..4 letters (numeric prefix 0.0), or a number text */
    int n = 1 + (int)(rnd() % 4);
    for (int j = 0; j < n; j++)
      p->buf[j] = (char)('a' + rnd() % 3);
    if (k == 9) { /* "12": classified as the integer 12 */
      n = snprintf(p->buf, sizeof p->buf, "%d", (int)(rnd() % 20));
      p->num.type = GA_V_INT;
      p->num.i = atoi(p->buf);
    } else {
      p->num.type = GA_V_REAL;
      p->num.r = 0.0;
    }
    p->raw.type = GA_V_TEXT;
    p->raw.p = p->buf;
    p->raw.n = n;
    return;
  }
  default: { /* blob, numeric prefix 0.0 */
    int n = (int)(rnd() % 4);
    for (int j = 0; j < n; j++)
      p->buf[j] = (char)(rnd() % 3);
    p->num.type = GA_V_REAL;
    p->num.r = 0.0;
    p->raw.type = GA_V_BLOB;
    p->raw.p = p->buf;
    p->raw.n = n;
    return;
  }
  }
  p->raw = p->num; /* numbers: both views are the number itself */
}

static int same_value(const ga_value *a, const ga_value *b) {
  if (a->type != b->type)
    return 0;
  switch (a->type) {
  case GA_V_INT:
    return a->i == b->i;
  case GA_V_REAL:
    return memcmp(&a->r, &b->r, 8) == 0;
  case GA_V_TEXT:
  case GA_V_BLOB:
    return a->n == b->n && (!a->n || !memcmp(a->p, b->p, (size_t)a->n));
  default:
    return 1;
  }
}

static void show(const ga_value *v, char *buf, size_t n) {
  switch (v->type) {
  case GA_V_INT:
    snprintf(buf, n, "int %lld", (long long)v->i);
    break;
  case GA_V_REAL:
    snprintf(buf, n, "real %a", v->r);
    break;
  case GA_V_TEXT:
    snprintf(buf, n, "text[%d]", v->n);
    break;
  case GA_V_BLOB:
    snprintf(buf, n, "blob[%d]", v->n);
    break;
  default:
    snprintf(buf, n, "null");
  }
}

/* What the aggregate engine says for op over the values. */
static int reference(const pair *v, int n, int op, ga_value *out,
                     ga_agg **keep) {
  ga_config cfg;
  ga_config_default(&cfg);
  cfg.device = GA_DEVICE_CPU;
  ga_agg *a = ga_agg_new(op, &cfg, NULL);
  for (int i = 0; i < n; i++) {
    const ga_value *x = op >= GA_AGG_MAX ? &v[i].raw : &v[i].num;
    if (x->type != GA_V_NULL)
      ga_agg_step(a, x);
  }
  int rc = ga_agg_final(a, out);
  if (n == 0 || rc != GA_OK || out->type == GA_V_NULL) {
    /* an engine with no value at all answers NULL; total says 0.0 */
  }
  *keep = a; /* out->p points into it */
  return rc;
}

static int64_t nonnull(const pair *v, int n) {
  int64_t c = 0;
  for (int i = 0; i < n; i++)
    c += v[i].num.type != GA_V_NULL;
  return c;
}

/* Every result of s against the engine over the same values. */
static void check_results(const ga_xstate *s, const pair *v, int n,
                          const char *what) {
  for (int op = GA_AGG_SUM; op <= GA_AGG_MIN; op++) {
    ga_value want, got;
    ga_agg *keep = NULL;
    int wrc = reference(v, n, op, &want, &keep);
    if (op == GA_AGG_TOTAL && nonnull(v, n) == 0) {
      want.type = GA_V_REAL; /* the glue answers 0.0 for an empty total */
      want.r = 0.0;
    }
    int grc = ga_xstate_result(s, op, &got);
    char a[64], b[64];
    show(&got, a, sizeof a);
    show(&want, b, sizeof b);
    CHECK(grc == wrc && (grc != GA_OK || same_value(&got, &want)),
          "%s op %d: got rc %d %s, engine rc %d %s", what, op, grc, a, wrc, b);
    ga_agg_free(keep);
  }
  CHECK(s->count == nonnull(v, n), "%s: count %lld, want %lld", what,
        (long long)s->count, (long long)nonnull(v, n));
}

static void step_all(ga_xstate *s, const pair *v, int n) {
  for (int i = 0; i < n; i++) {
    int rc = ga_xstate_step(s, &v[i].num, &v[i].raw);
    if (rc)
      abort();
  }
}

/* The fast path of numbers, as gpuagg_partial calls it. */
static void step_fast(ga_xstate *s, const pair *v, int n) {
  for (int i = 0; i < n; i++) {
    if (v[i].raw.type == GA_V_INT)
      ga_xstate_step_int(s, v[i].raw.i);
    else if (v[i].raw.type == GA_V_REAL)
      ga_xstate_step_real(s, v[i].raw.r);
    else if (v[i].raw.type == GA_V_NULL)
      ga_xstate_step_null(s);
    else if (ga_xstate_step(s, &v[i].num, &v[i].raw))
      abort();
  }
}

static int roundtrip(const ga_xstate *s, int kind, ga_xstate *out,
                     unsigned char **blob, int64_t *nb) {
  const char *err;
  if (ga_state_encode(s, kind, blob, nb) != GA_OK)
    return -1;
  int rc = ga_state_decode(*blob, *nb, kind, out, &err);
  if (rc != GA_OK)
    printf("  decode of a fresh encoding: %s\n", err ? err : "nomem");
  return rc;
}

/* One pass, fast path, and random splits merged in order: same results and
** the same bytes. */
static void test_splits(void) {
  enum { N = 400 };
  static pair v[N];
  for (int t = 0; t < 300; t++) {
    int mode = t % 4;
    int n = t < 20 ? t : (int)(rnd() % N);
    for (int i = 0; i < n; i++)
      gen(&v[i], mode);
    char what[64];
    snprintf(what, sizeof what, "case %d (n %d, mode %d)", t, n, mode);
    ga_xstate one, fast, acc;
    ga_xstate_init(&one);
    ga_xstate_init(&fast);
    ga_xstate_init(&acc);
    one.enc = fast.enc = SQLITE_UTF8;
    step_all(&one, v, n);
    step_fast(&fast, v, n);
    check_results(&one, v, n, what);
    unsigned char *b1, *b2, *b3;
    int64_t n1, n2, n3;
    ga_state_encode(&one, GA_STATE_FUSED, &b1, &n1);
    ga_state_encode(&fast, GA_STATE_FUSED, &b2, &n2);
    CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1),
          "%s: fast path state differs from ga_xstate_step", what);
    /* split into pieces, each through its BLOB, merged in order */
    int at = 0;
    while (at < n || at == 0) {
      int len = (int)(rnd() % 50);
      if (at + len > n)
        len = n - at;
      ga_xstate piece, back;
      ga_xstate_init(&piece);
      piece.enc = SQLITE_UTF8;
      step_all(&piece, v + at, len);
      unsigned char *pb;
      int64_t pn;
      int kind = 1 + (int)(rnd() % 4);
      if (roundtrip(&piece, GA_STATE_FUSED, &back, &pb, &pn) == GA_OK) {
        CHECK(ga_xstate_merge(&acc, &back) == GA_OK, "%s: merge", what);
        ga_xstate_clear(&back);
      } else {
        CHECK(0, "%s: round trip", what);
      }
      sqlite3_free(pb);
      /* the single-kind BLOBs decode to the same parts */
      if (roundtrip(&piece, kind, &back, &pb, &pn) == GA_OK) {
        ga_value x, y;
        int op = kind == GA_STATE_MAX   ? GA_AGG_MAX
                 : kind == GA_STATE_MIN ? GA_AGG_MIN
                                        : GA_AGG_TOTAL;
        ga_xstate_result(&piece, op, &x);
        ga_xstate_result(&back, op, &y);
        CHECK(same_value(&x, &y), "%s: kind %d round trip", what, kind);
        ga_xstate_clear(&back);
      }
      sqlite3_free(pb);
      ga_xstate_clear(&piece);
      at += len;
      if (n == 0)
        break;
    }
    acc.enc = SQLITE_UTF8;
    ga_state_encode(&acc, GA_STATE_FUSED, &b3, &n3);
    CHECK(n1 == n3 && !memcmp(b1, b3, (size_t)n1),
          "%s: split-and-merge state differs from one pass", what);
    check_results(&acc, v, n, what);
    sqlite3_free(b1);
    sqlite3_free(b2);
    sqlite3_free(b3);
    ga_xstate_clear(&one);
    ga_xstate_clear(&fast);
    ga_xstate_clear(&acc);
  }
}

/* ---- BLOBs written by hand from README's layout ---- */

typedef struct hb {
  unsigned char b[512];
  int n;
} hb;
static void h8(hb *h, unsigned v) { h->b[h->n++] = (unsigned char)v; }
static void h32(hb *h, uint32_t v) {
  for (int k = 0; k < 4; k++)
    h8(h, (v >> (8 * k)) & 0xff);
}
static void h64(hb *h, uint64_t v) {
  for (int k = 0; k < 8; k++)
    h8(h, (unsigned)(v >> (8 * k)) & 0xff);
}
static void hhdr(hb *h, int kind) {
  h->n = 0;
  h8(h, 'G'), h8(h, 'A'), h8(h, 'S'), h8(h, 'T');
  h8(h, 1), h8(h, (unsigned)kind), h8(h, 0), h8(h, 0);
}
/* sum section: counts, 128-bit integer total, sign, digits */
static void hsum(hb *h, int64_t nint, __int128 itot, int64_t nreal,
                 int64_t npinf, int64_t nninf, int neg, int lo, int nd,
                 const uint32_t *d) {
  h64(h, (uint64_t)nint);
  h64(h, (uint64_t)itot);
  h64(h, (uint64_t)(itot >> 64));
  h64(h, (uint64_t)nreal);
  h64(h, (uint64_t)npinf);
  h64(h, (uint64_t)nninf);
  h64(h, 0);
  h8(h, (unsigned)neg), h8(h, (unsigned)lo), h8(h, (unsigned)nd);
  for (int k = 0; k < nd; k++)
    h32(h, d[k]);
}

static int dec(const hb *h, int kind, ga_xstate *s, const char **err) {
  return ga_state_decode(h->b, h->n, kind, s, err);
}

static void expect_bad(const hb *h, int kind, const char *substr,
                       const char *what) {
  ga_xstate s;
  const char *err = NULL;
  int rc = dec(h, kind, &s, &err);
  CHECK(rc == GA_BADSTATE && err && (!substr || strstr(err, substr)),
        "%s: rc %d err %s (want '%s')", what, rc, err ? err : "-",
        substr ? substr : "any");
  if (rc == GA_OK)
    ga_xstate_clear(&s);
}

static void test_layout(void) {
  hb h;
  ga_xstate s;
  const char *err;
  ga_value v;
  /* 1.5 + 2 (one real, one integer): 1.5 = 3 * 2^-1, i.e. 3 << 1073 in
  ** units of 2^-1074: digit 33 (bits 1056..1087) holds 3 << 17 */
  uint32_t d1[1] = {3u << 17};
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 1, 2, 1, 0, 0, 0, 33, 1, d1);
  CHECK(dec(&h, GA_STATE_SUM, &s, &err) == GA_OK, "hand-made sum: %s", err);
  ga_xstate_result(&s, GA_AGG_SUM, &v);
  CHECK(v.type == GA_V_REAL && v.r == 3.5, "hand-made sum = 3.5");
  ga_xstate_result(&s, GA_AGG_AVG, &v);
  CHECK(v.type == GA_V_REAL && v.r == 1.75, "hand-made avg = 1.75");
  unsigned char *b;
  int64_t nb;
  ga_state_encode(&s, GA_STATE_SUM, &b, &nb);
  CHECK(nb == h.n && !memcmp(b, h.b, (size_t)nb),
        "encode writes README's layout (sum)");
  sqlite3_free(b);
  ga_xstate_clear(&s);
  /* the same negated: sign byte 1 */
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 1, -2, 1, 0, 0, 1, 33, 1, d1);
  CHECK(dec(&h, GA_STATE_SUM, &s, &err) == GA_OK, "negative sum: %s", err);
  ga_xstate_result(&s, GA_AGG_TOTAL, &v);
  CHECK(v.type == GA_V_REAL && v.r == -3.5, "hand-made total = -3.5");
  ga_state_encode(&s, GA_STATE_SUM, &b, &nb);
  CHECK(nb == h.n && !memcmp(b, h.b, (size_t)nb), "layout (negative sum)");
  sqlite3_free(b);
  ga_xstate_clear(&s);
  /* integers only: a total past int64 is an overflow for sum, fine for
  ** total */
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 2, (__int128)INT64_MAX + 1, 0, 0, 0, 0, 0, 0, NULL);
  CHECK(dec(&h, GA_STATE_SUM, &s, &err) == GA_OK, "int sum: %s", err);
  CHECK(ga_xstate_result(&s, GA_AGG_SUM, &v) == GA_OVERFLOW, "overflow");
  ga_xstate_result(&s, GA_AGG_TOTAL, &v);
  CHECK(v.type == GA_V_REAL && v.r == 0x1p63, "total of 2^63");
  ga_xstate_clear(&s);
  /* max: integer, real, text (with its encoding), blob */
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_INT), h64(&h, (uint64_t)-5);
  CHECK(dec(&h, GA_STATE_MAX, &s, &err) == GA_OK, "max int: %s", err);
  ga_xstate_result(&s, GA_AGG_MAX, &v);
  CHECK(v.type == GA_V_INT && v.i == -5, "max -5");
  ga_xstate_clear(&s);
  hhdr(&h, GA_STATE_MIN);
  h8(&h, GA_V_TEXT), h8(&h, 2), h32(&h, 4), h8(&h, 'h'), h8(&h, 0), h8(&h, 'i'),
      h8(&h, 0);
  CHECK(dec(&h, GA_STATE_MIN, &s, &err) == GA_OK, "min text: %s", err);
  ga_xstate_result(&s, GA_AGG_MIN, &v);
  CHECK(v.type == GA_V_TEXT && v.n == 4 && !memcmp(v.p, "h\0i\0", 4) &&
            s.enc == SQLITE_UTF16LE,
        "min text 'hi' UTF-16le");
  ga_state_encode(&s, GA_STATE_MIN, &b, &nb);
  CHECK(nb == h.n && !memcmp(b, h.b, (size_t)nb), "layout (text)");
  sqlite3_free(b);
  ga_xstate_clear(&s);
  /* fused: rows, sum, max, min */
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 3);
  hsum(&h, 1, 7, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, GA_V_BLOB), h32(&h, 1), h8(&h, 0xff);
  h8(&h, GA_V_INT), h64(&h, 7);
  CHECK(dec(&h, GA_STATE_FUSED, &s, &err) == GA_OK, "fused: %s", err);
  CHECK(s.rows == 3 && s.count == 1, "fused rows/count");
  ga_xstate_clear(&s);
}

/* Every class of bad BLOB. */
static void test_bad(void) {
  hb h;
  uint32_t d1[2] = {1, 1};
  hhdr(&h, GA_STATE_SUM);
  h.n = 0;
  expect_bad(&h, GA_STATE_SUM, "not a gpuagg state", "empty");
  memcpy(h.b, "hello world, this is text", 25);
  h.n = 25;
  expect_bad(&h, GA_STATE_SUM, "not a gpuagg state", "text");
  hhdr(&h, GA_STATE_SUM);
  h.b[4] = 2;
  expect_bad(&h, GA_STATE_SUM, "newer", "version 2");
  h.b[4] = 0;
  expect_bad(&h, GA_STATE_SUM, "not a gpuagg state", "version 0");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, 0);
  expect_bad(&h, GA_STATE_SUM, "max state", "max state as sum");
  expect_bad(&h, GA_STATE_MIN, "max state", "max state as min");
  hhdr(&h, 9);
  expect_bad(&h, GA_STATE_SUM, "unknown state kind", "kind 9");
  hhdr(&h, GA_STATE_MAX);
  h.b[6] = 1;
  h8(&h, 0);
  expect_bad(&h, GA_STATE_MAX, "reserved", "reserved byte");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, 0), h8(&h, 0);
  expect_bad(&h, GA_STATE_MAX, "trailing", "trailing byte");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, 7);
  expect_bad(&h, GA_STATE_MAX, "value type", "value type 7");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_REAL), h64(&h, 0x7ff8000000000001ull);
  expect_bad(&h, GA_STATE_MAX, "NaN", "NaN");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_TEXT), h8(&h, 4), h32(&h, 0);
  expect_bad(&h, GA_STATE_MAX, "encoding", "text encoding 4");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_TEXT), h8(&h, 3), h32(&h, 1), h8(&h, 'a');
  expect_bad(&h, GA_STATE_MAX, "odd", "odd UTF-16");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_BLOB), h32(&h, 0xffffffffu);
  expect_bad(&h, GA_STATE_MAX, "too long", "length 2^32-1");
  hhdr(&h, GA_STATE_MAX);
  h8(&h, GA_V_BLOB), h32(&h, 100), h8(&h, 1);
  expect_bad(&h, GA_STATE_MAX, "truncated", "blob shorter than its length");
  /* sum section */
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, -1, 0, 0, 0, 0, 0, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "negative", "negative count");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 1, (__int128)1 << 63 << 1, 0, 0, 0, 0, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "integer total", "int total > nint * 2^63");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 1, 0, 0, 0, 0, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "integer total", "int total without ints");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, INT64_MAX, 0, 1, 0, 0, 0, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "counts too large", "nint + nreal > int64");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 1, 1, 0, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "infinities", "two infinities, one real");
  /* NaN count: SQL never makes one (README: always 0), issue 22 */
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 0, 0, 0, 0, 0, NULL);
  h.n -= 11, h64(&h, 1), h8(&h, 0), h8(&h, 0), h8(&h, 0);
  expect_bad(&h, GA_STATE_SUM, "NaN count", "a NaN count of 1");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 0, 0, 0, 0, 3, 1, d1);
  expect_bad(&h, GA_STATE_SUM, "too large", "real digits without reals");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 1, 0, 0, 3, 1, d1);
  expect_bad(&h, GA_STATE_SUM, "too large", "real digits with only +Inf");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 0, 0, 0, 67, 1, d1);
  expect_bad(&h, GA_STATE_SUM, "too large", "one real above DBL_MAX");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 0, 0, 0, 67, 2, d1);
  expect_bad(&h, GA_STATE_SUM, "digit range", "digits past 68");
  hhdr(&h, GA_STATE_SUM);
  uint32_t d0[2] = {0, 1};
  hsum(&h, 0, 0, 1, 0, 0, 0, 3, 2, d0);
  expect_bad(&h, GA_STATE_SUM, "canonical", "leading zero digit");
  uint32_t d00[2] = {1, 0};
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 1, 0, 0, 0, 3, 2, d00);
  expect_bad(&h, GA_STATE_SUM, "canonical", "trailing zero digit");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 0, 0, 0, 1, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "digit range", "negative zero");
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, 0, 0, 0, 0, 0, 2, 0, 0, NULL);
  expect_bad(&h, GA_STATE_SUM, "digit range", "sign byte 2");
  /* fused consistency */
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 0);
  hsum(&h, 1, 7, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, GA_V_INT), h64(&h, 7), h8(&h, GA_V_INT), h64(&h, 7);
  expect_bad(&h, GA_STATE_FUSED, "fewer rows", "rows < count");
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 1);
  hsum(&h, 1, 7, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, 0), h8(&h, GA_V_INT), h64(&h, 7);
  expect_bad(&h, GA_STATE_FUSED, "max/min", "no max with a value");
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 1);
  hsum(&h, 0, 0, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, GA_V_INT), h64(&h, 7), h8(&h, GA_V_INT), h64(&h, 7);
  expect_bad(&h, GA_STATE_FUSED, "max/min", "a max without values");
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 2);
  hsum(&h, 2, 7, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, GA_V_INT), h64(&h, 3), h8(&h, GA_V_INT), h64(&h, 4);
  expect_bad(&h, GA_STATE_FUSED, "below", "max < min");
  hhdr(&h, GA_STATE_FUSED);
  h64(&h, 2);
  hsum(&h, 2, 7, 0, 0, 0, 0, 0, 0, NULL);
  h8(&h, GA_V_TEXT), h8(&h, 1), h32(&h, 1), h8(&h, 'b');
  h8(&h, GA_V_TEXT), h8(&h, 2), h32(&h, 2), h8(&h, 'a'), h8(&h, 0);
  expect_bad(&h, GA_STATE_FUSED, "two text encodings", "mixed encodings");
}

/* Truncations and bit flips of real states: refused, or canonical. */
static void test_mutations(void) {
  enum { N = 60 };
  static pair v[N];
  int accepted = 0, refused = 0, noncanon = 0, badtrunc = 0;
  for (int t = 0; t < 60; t++) {
    int n = (int)(rnd() % N);
    for (int i = 0; i < n; i++)
      gen(&v[i], 0);
    ga_xstate s;
    ga_xstate_init(&s);
    s.enc = SQLITE_UTF8;
    step_all(&s, v, n);
    for (int kind = GA_STATE_SUM; kind <= GA_STATE_FUSED; kind++) {
      unsigned char *b;
      int64_t nb;
      if (ga_state_encode(&s, kind, &b, &nb) != GA_OK || nb <= 0 || nb > 4096)
        abort();
      for (int64_t cut = 0; cut < nb; cut++) {
        ga_xstate x;
        const char *err;
        if (ga_state_decode(b, cut, kind, &x, &err) == GA_OK) {
          badtrunc++;
          ga_xstate_clear(&x);
        }
      }
      unsigned char *m = malloc((size_t)nb);
      for (int64_t bit = 0; bit < nb * 8; bit++) {
        memcpy(m, b, (size_t)nb);
        m[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        ga_xstate x;
        const char *err;
        if (ga_state_decode(m, nb, kind, &x, &err) == GA_OK) {
          accepted++;
          unsigned char *r;
          int64_t nr;
          if (!x.enc)
            x.enc = s.enc;
          ga_state_encode(&x, kind, &r, &nr);
          if (nr != nb || memcmp(r, m, (size_t)nb))
            noncanon++;
          sqlite3_free(r);
          ga_xstate_clear(&x);
        } else {
          refused++;
        }
      }
      free(m);
      sqlite3_free(b);
    }
    ga_xstate_clear(&s);
  }
  CHECK(badtrunc == 0, "%d truncated states were accepted", badtrunc);
  CHECK(noncanon == 0, "%d accepted bit flips were not canonical", noncanon);
  /* many flips only change a value (another valid state); the rest are
  ** refused */
  CHECK(refused > 0 && accepted > 0, "bit flips: %d refused, %d accepted",
        refused, accepted);
}

/* Merge order: the state merged first wins between equal INTEGER and REAL;
** counts that would leave int64 are refused. */
static void test_merge_rules(void) {
  ga_value i5 = {GA_V_INT, 0, 5, 0, NULL}, r5 = {GA_V_REAL, 0, 0, 5.0, NULL};
  for (int order = 0; order < 2; order++) {
    ga_xstate a, b;
    ga_xstate_init(&a);
    ga_xstate_init(&b);
    ga_xstate_step(&a, order ? &r5 : &i5, order ? &r5 : &i5);
    ga_xstate_step(&b, order ? &i5 : &r5, order ? &i5 : &r5);
    ga_xstate_merge(&a, &b);
    ga_value v;
    ga_xstate_result(&a, GA_AGG_MAX, &v);
    CHECK(v.type == (order ? GA_V_REAL : GA_V_INT), "max tie, order %d", order);
    ga_xstate_result(&a, GA_AGG_MIN, &v);
    CHECK(v.type == (order ? GA_V_REAL : GA_V_INT), "min tie, order %d", order);
    ga_xstate_clear(&a);
    ga_xstate_clear(&b);
  }
  /* counts at the edge of int64 */
  hb h;
  hhdr(&h, GA_STATE_SUM);
  hsum(&h, INT64_MAX, 0, 0, 0, 0, 0, 0, 0, NULL);
  ga_xstate a, b;
  const char *err;
  CHECK(dec(&h, GA_STATE_SUM, &a, &err) == GA_OK, "nint = INT64_MAX: %s", err);
  CHECK(dec(&h, GA_STATE_SUM, &b, &err) == GA_OK, "again");
  CHECK(ga_xstate_merge(&a, &b) == GA_BADSTATE, "count overflow refused");
  CHECK(a.sum.nint == INT64_MAX, "a failed merge changes nothing");
  /* integer totals past 2^95 stay exact through encode and merge; the
  ** overflow is decided on the final total */
  {
    ga_xstate m, t;
    ga_xstate_init(&m);
    __int128 want = 0;
    for (int k = 0; k < 4; k++) {
      __int128 tot = (__int128)INT64_MAX << 40; /* 2^40 values of INT64_MAX */
      if (k == 3)
        tot = -tot * 3 - 5; /* 3 * 2^40 values of INT64_MIN-ish, and -5 */
      hhdr(&h, GA_STATE_SUM);
      hsum(&h, k == 3 ? (int64_t)3 << 40 | 1 : (int64_t)1 << 40, tot, 0, 0, 0,
           0, 0, 0, NULL);
      CHECK(dec(&h, GA_STATE_SUM, &t, &err) == GA_OK, "big state %d: %s", k,
            err);
      ga_xstate_merge(&m, &t);
      ga_xstate_clear(&t);
      want += tot;
      ga_value v;
      int rc = ga_xstate_result(&m, GA_AGG_SUM, &v);
      CHECK((__int128)ga_sum_int_total(&m.sum) == want,
            "exact 128-bit total after %d big states", k + 1);
      CHECK(k < 3 ? rc == GA_OVERFLOW : rc == GA_OK && v.i == -5,
            "big states %d: rc %d", k + 1, rc);
    }
    unsigned char *bb;
    int64_t bn;
    ga_state_encode(&m, GA_STATE_SUM, &bb, &bn);
    ga_xstate_clear(&m);
    CHECK(ga_state_decode(bb, bn, GA_STATE_SUM, &m, &err) == GA_OK &&
              ga_sum_int_total(&m.sum) == -5,
          "the cancelled total round-trips");
    sqlite3_free(bb);
    ga_xstate_clear(&m);
  }
  /* removal (a window frame) restores the state exactly */
  ga_xstate x, y;
  ga_xstate_init(&x);
  ga_xstate_init(&y);
  pair p[50];
  for (int i = 0; i < 50; i++)
    gen(&p[i], 1);
  step_all(&x, p, 30);
  step_all(&y, p + 30, 20);
  unsigned char *b1, *b2;
  int64_t n1, n2;
  ga_state_encode(&x, GA_STATE_SUM, &b1, &n1);
  ga_xstate_merge_sum(&x, &y, 1);
  ga_xstate_merge_sum(&x, &y, -1);
  ga_state_encode(&x, GA_STATE_SUM, &b2, &n2);
  CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1), "add then remove");
  sqlite3_free(b1);
  sqlite3_free(b2);
  ga_xstate_clear(&x);
  ga_xstate_clear(&y);
  ga_xstate_clear(&a);
  ga_xstate_clear(&b);
}

/* Many values: the periodic normalisation keeps the sum exact. */
static void test_many(void) {
  ga_xstate s;
  ga_xstate_init(&s);
  int64_t n = (int64_t)3 << 27;
  for (int64_t i = 0; i < n; i++)
    ga_xstate_step_int(&s, INT64_MAX);
  CHECK((__int128)ga_sum_int_total(&s.sum) == (__int128)INT64_MAX * n,
        "3*2^27 times INT64_MAX");
  ga_xstate_clear(&s);
}

/* ---- the compact group state (gstate.h) ---- */

/* Values of one binary order of magnitude band: the window's case. */
static void gen_band(pair *p, int lo_exp, int span) {
  memset(p, 0, sizeof(*p));
  p->num.type = GA_V_REAL;
  double m = (double)(int64_t)(rnd() >> 11) * 0x1p-53; /* [0, 1) */
  p->num.r = ldexp(1.0 + m, lo_exp + (int)(rnd() % (uint64_t)(span + 1)));
  if (rnd() % 3 == 0)
    p->num.r = -p->num.r;
  if (rnd() % 17 == 0) { /* an integer now and then */
    p->num.type = GA_V_INT;
    p->num.i = (int64_t)(rnd() % 2001) - 1000;
  }
  p->raw = p->num;
}

static int gstep(ga_gstate *g, const pair *v) {
  if (v->raw.type == GA_V_INT && v->num.type == GA_V_INT)
    return ga_gstate_step_int(g, v->num.i);
  if (v->raw.type == GA_V_REAL && v->num.type == GA_V_REAL)
    return ga_gstate_step_real(g, v->num.r);
  if (v->raw.type == GA_V_NULL) {
    ga_gstate_step_null(g);
    return GA_OK;
  }
  return ga_gstate_step(g, &v->num, &v->raw);
}

/* The fused BLOB of a compact state seen as a ga_xstate. */
static void g_encode(const ga_gstate *g, unsigned char **b, int64_t *n) {
  ga_xstate view;
  ga_gstate_view(g, &view);
  if (ga_state_encode(&view, GA_STATE_FUSED, b, n))
    abort();
}

/* Values split into pieces at random; each piece stepped into a compact
** state (or a ga_xstate taken over: a decoded BLOB of sorted mode), the
** pieces merged in order: the same bytes and results as one ga_xstate. */
static void test_gstate(void) {
  enum { N = 600 };
  pair v[N];
  int wide = 0, narrow = 0;
  for (int round = 0; round < 3000; round++) {
    int n = (int)(rnd() % N), band = round % 3 != 0;
    int lo_exp = (int)(rnd() % 400) - 200, span = (int)(rnd() % 90);
    for (int i = 0; i < n; i++) {
      if (band)
        gen_band(&v[i], lo_exp, span);
      else
        gen(&v[i], (int)(rnd() % 4));
    }
    ga_xstate want;
    ga_xstate_init(&want);
    step_all(&want, v, n);
    ga_gstate got;
    ga_gstate_init(&got);
    for (int i = 0; i < n;) {
      int len = 1 + (int)(rnd() % (uint64_t)(rnd() % 3 ? 40 : n));
      if (i + len > n)
        len = n - i;
      ga_gstate part;
      ga_gstate_init(&part);
      if (rnd() % 4 == 0) {
        ga_xstate x;
        ga_xstate_init(&x);
        step_all(&x, v + i, len);
        CHECK(ga_gstate_take(&part, &x) == GA_OK, "take");
      } else {
        for (int j = i; j < i + len; j++)
          if (gstep(&part, &v[j]))
            abort();
      }
      CHECK(ga_gstate_merge(&got, &part) == GA_OK, "merge round %d", round);
      ga_gstate_clear(&part);
      i += len;
    }
    unsigned char *b1, *b2;
    int64_t n1, n2;
    g_encode(&got, &b1, &n1);
    if (ga_state_encode(&want, GA_STATE_FUSED, &b2, &n2))
      abort();
    CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1),
          "round %d (band %d, exp %d + %d, %d values): the compact state's "
          "bytes differ from one ga_xstate pass",
          round, band, lo_exp, span, n);
    for (int op = GA_AGG_SUM; op <= GA_AGG_MIN; op++) {
      ga_value a, c;
      int ra = ga_gstate_result(&got, op, &a);
      int rc = ga_xstate_result(&want, op, &c);
      CHECK(ra == rc && (ra != GA_OK || same_value(&a, &c)),
            "round %d op %d: result", round, op);
    }
    if (band && n > 0) {
      if (got.sum.wide)
        wide++;
      else
        narrow++;
    }
    sqlite3_free(b1);
    sqlite3_free(b2);
    ga_gstate_clear(&got);
    ga_xstate_clear(&want);
  }
  /* values within 2^100 of each other stay in the window (5 digits besides
  ** a value's 3: rule 1's point); wider ones go wide, and are still exact */
  CHECK(wide == 0 && narrow > 1000, "band values: %d windowed, %d wide", narrow,
        wide);

  /* a window far from the first one: the state goes wide */
  ga_gstate g;
  ga_gstate_init(&g);
  ga_gstate_step_real(&g, 1.0);
  CHECK(!g.sum.wide, "1.0: windowed");
  ga_gstate_step_real(&g, 0x1p300);
  CHECK(g.sum.wide != NULL, "1.0 and 2^300: wide");
  CHECK(ga_gstate_heap_bytes(&g) == (int64_t)sizeof(ga_sum_partial),
        "a wide state counts its accumulator");
  ga_gstate_clear(&g);
}

/* The periodic normalisation, with values at the top of the window. */
static void test_gstate_many(void) {
  ga_gstate g;
  ga_xstate x;
  ga_gstate_init(&g);
  ga_xstate_init(&x);
  int64_t n = ((int64_t)1 << 27) + 4321;
  double v = 0x1.fffffffffffffp+40;
  for (int64_t i = 0; i < n; i++) {
    ga_gstate_step_real(&g, i % 5 == 4 ? -v : v);
    ga_xstate_step_real(&x, i % 5 == 4 ? -v : v);
  }
  unsigned char *b1, *b2;
  int64_t n1, n2;
  g_encode(&g, &b1, &n1);
  if (ga_state_encode(&x, GA_STATE_FUSED, &b2, &n2))
    abort();
  CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1) && !g.sum.wide,
        "2^27 + 4321 values near 2^41: the same state, windowed");
  sqlite3_free(b1);
  sqlite3_free(b2);
  ga_gstate_clear(&g);
  ga_xstate_clear(&x);
}

/* gstate.h rule 6: ga_wsum_add_fixed's s * 2^(pos - 1074), s an int128 of
** any sign and up to 126 bits, beside values stepped one by one, must be the
** state of stepping its three 53-bit pieces as doubles (each exact: a piece
** times a power of two no lower than 2^-1074): the same bytes and results. */
static void test_gstate_fixed(void) {
  for (int round = 0; round < 4000; round++) {
    ga_gstate g, x; /* x: every double stepped alone (no max and min) */
    ga_gstate_init(&g);
    ga_gstate_init(&x);
    int blocks = 1 + (int)(rnd() % 6), base = (int)(rnd() % 1900);
    for (int k = 0; k < blocks; k++) {
      /* near one scale (the window's case) or anywhere (wide) */
      int pos = round % 2 ? base + (int)(rnd() % 40) - 20 : (int)(rnd() % 1901);
      if (pos < 0)
        pos = 0;
      if (pos > GA_WSUM_FIXED_MAX_POS)
        pos = GA_WSUM_FIXED_MAX_POS;
      int bits = 1 + (int)(rnd() % 126);
      unsigned __int128 u = ((unsigned __int128)rnd() << 64) | rnd();
      u >>= 128 - bits;
      int neg = (int)(rnd() % 2);
      __int128 sv = neg ? -(__int128)u : (__int128)u;
      CHECK(ga_wsum_add_fixed(&g.sum, sv, pos) == GA_OK, "add_fixed");
      for (int j = 0; j < 3; j++) { /* the same value as three doubles */
        double d = ldexp((double)(uint64_t)((u >> (53 * j)) &
                                            (((unsigned __int128)1 << 53) - 1)),
                         pos - 1074 + 53 * j);
        CHECK(ga_gstate_step_sum_real(&x, neg ? -d : d) == GA_OK, "step");
      }
      g.rows += 3;
      g.count += 3;
      g.sum.nreal += 3;
      if (rnd() % 2) { /* a value stepped alone between blocks */
        double d = ldexp(1.0 + (double)(rnd() >> 12) * 0x1p-52,
                         pos - 1074 + (int)(rnd() % 60));
        CHECK(ga_gstate_step_sum_real(&g, d) == GA_OK, "step");
        CHECK(ga_gstate_step_sum_real(&x, d) == GA_OK, "step");
      }
    }
    unsigned char *b1, *b2;
    int64_t n1, n2;
    g_encode(&g, &b1, &n1);
    g_encode(&x, &b2, &n2);
    CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1),
          "round %d: blocks added as integers differ from their doubles",
          round);
    for (int op = GA_AGG_SUM; op <= GA_AGG_AVG; op++) {
      ga_value a, c;
      int ra = ga_gstate_result(&g, op, &a);
      int rc = ga_gstate_result(&x, op, &c);
      CHECK(ra == rc && (ra != GA_OK || same_value(&a, &c)),
            "round %d op %d: result", round, op);
    }
    sqlite3_free(b1);
    sqlite3_free(b2);
    ga_gstate_clear(&g);
    ga_gstate_clear(&x);
  }
}

/* Direct mode's max/min: rows of pieces stepped in any order of pieces
** (rows of one piece in order), a tie going to the earlier piece, must
** keep what one pass in rowid order keeps: value, type and bits. */
static void test_best_tagged(void) {
  enum { N = 60 };
  pair v[N];
  for (int round = 0; round < 4000; round++) {
    int n = 1 + (int)(rnd() % N), mode = (int)(rnd() % 4);
    int piece_of[N], np = 1 + (int)(rnd() % 6);
    for (int i = 0; i < n; i++) {
      gen(&v[i], mode);
      if (rnd() % 4 == 0 && v[i].num.type == GA_V_REAL && v[i].num.r == 0)
        v[i].raw.r = v[i].num.r = rnd() % 2 ? 0.0 : -0.0;
    }
    /* pieces: contiguous runs, numbered in rowid order */
    for (int i = 0, p = 0; i < n; i++) {
      if (i > 0 && p + 1 < np && rnd() % 3 == 0)
        p++;
      piece_of[i] = p;
    }
    for (int want_min = 0; want_min < 2; want_min++) {
      ga_bval ref = {0}, got = {0};
      int64_t tag = INT64_MAX;
      for (int i = 0; i < n; i++)
        ga_best_update(&ref, &v[i].raw, want_min);
      int order[8];
      for (int p = 0; p < np; p++)
        order[p] = p;
      for (int p = np - 1; p > 0; p--) {
        int q = (int)(rnd() % (uint64_t)(p + 1)), t = order[p];
        order[p] = order[q];
        order[q] = t;
      }
      for (int o = 0; o < np; o++)
        for (int i = 0; i < n; i++)
          if (piece_of[i] == order[o])
            ga_gstate_best_tagged(&got, &tag, piece_of[i], &v[i].raw, want_min);
      ga_value a, b;
      ga_bval_view(&got, &a);
      ga_bval_view(&ref, &b);
      CHECK(same_value(&a, &b), "round %d (%s): tagged best differs", round,
            want_min ? "min" : "max");
      ga_bval_clear(&ref);
      ga_bval_clear(&got);
    }
  }
}

/* dset.h rule 6: a selection made elsewhere (a GPU entry's picked order
** statistics) never merges; the merge says so as a bad state (the caller's
** "malformed state" error), never as GA_NOMEM's "out of memory" nor as a
** code no caller knows. */
static void test_gstate_picked_merge(void) {
  ga_gstate a, b;
  ga_gstate_init(&a);
  ga_gstate_init(&b);
  int ok = ga_dset_pct_push(&a.set, 1.0) == GA_OK &&
           ga_dset_pct_push(&b.set, 2.0) == GA_OK;
  CHECK(ok, "picked merge: push");
  if (ok) {
    b.set->pct.at = malloc(sizeof(size_t));
    if (b.set->pct.at)
      b.set->pct.at[0] = 0;
    int rc = ga_gstate_merge(&a, &b);
    CHECK(rc == GA_BADSTATE, "picked merge: rc %d, not GA_BADSTATE", rc);
    CHECK(a.set && a.set->pct.n == 1, "picked merge: into changed");
  }
  ga_gstate_clear(&a);
  ga_gstate_clear(&b);
}

int main(void) {
  test_layout();
  test_bad();
  test_merge_rules();
  test_splits();
  test_mutations();
  test_many();
  test_gstate();
  test_gstate_many();
  test_gstate_fixed();
  test_best_tagged();
  test_gstate_picked_merge();
  printf("RESULT state_engine: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  return failed != 0;
}
