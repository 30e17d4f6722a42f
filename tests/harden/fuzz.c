/*
** fuzz.c — libFuzzer target (make fuzz; clang -fsanitize=fuzzer,address).
**
** The input bytes become a table t(g, x) of values of every type (integers
** with the extremes, reals from raw bits and from a list of specials: huge,
** tiny, subnormal, +-Inf, -0.0; numeric and non-numeric text; blobs; NULLs),
** optionally repeated so that several 8192-value chunks are used, then a few
** queries chosen by the bytes: plain, GROUP BY, DISTINCT, nested, windows
** with random frames, and gpu_matadd on two random small tables.
**
** Oracles, computed here independently of the engine:
**   - gpu_sum: with only integers, the exact total (__int128), or the error
**     'integer overflow' outside int64; with any real, the exact sum of all
**     values (a big fixed-point integer in units of 2^-1074) rounded once to
**     nearest-even; +Inf and -Inf give NULL; per group and per window frame
**     too (ROWS frames over rowid order);
**   - gpu_total: the exact sum rounded once, always REAL; gpu_avg for
**     integer totals below 2^53: (double)total / n;
**   - gpu_max / gpu_min: value and typeof equal to the built-in max()/min()
**     in the same statement (in sliding windows an INTEGER may tie an equal
**     REAL: the values must then be equal, the types may differ; see
**     tests/harden/surface.py);
**   - gpu_matadd: equal to a GROUP BY over both tables when the inputs are
**     valid, else an error starting 'gpu_matadd:'.
**   - aggregate states (q_state_merge, q_state_blob): per-group
**     gpu_<agg>_state merged with gpu_<agg>_merge equals the oracles above
**     over the whole table; a state BLOB built from the input (a real state
**     with bytes overwritten, truncated or extended, or raw bytes) is either
**     refused by the decoder of every kind, or re-encodes to the same bytes;
**     and each _merge answers exactly when the decoder accepts, else fails
**     with an error naming the function.
** Any mismatch aborts (a crash for libFuzzer), printing the case.
*/
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harden.h"
#include "state.h"

/* ---- input reader ---- */
typedef struct {
  const uint8_t *p;
  size_t n, i;
} rd;
static unsigned b8(rd *r) { return r->i < r->n ? r->p[r->i++] : 0; }
static uint64_t b64(rd *r) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++)
    v = v << 8 | b8(r);
  return v;
}

/* ---- exact sums: signed 32-bit digits in int64, units of 2^-1074 ---- */
#define XD 72 /* 72*32 = 2304 bits > 2098 + carries */
typedef struct {
  int64_t d[XD];
  int64_t npinf, nninf, nreal, nint;
  __int128 itotal;
} xsum;

static void xs_add_double(xsum *s, double x, int sign) {
  s->nreal += sign;
  if (isinf(x)) {
    if ((x > 0) == (sign > 0))
      s->npinf += sign > 0 ? 1 : -1;
    else
      s->nninf += sign > 0 ? 1 : -1;
    return;
  }
  if (x == 0)
    return;
  int e;
  double m = frexp(fabs(x), &e); /* x = m 2^e, m in [0.5, 1) */
  /* integer mantissa in units of 2^-1074 */
  int sh = e - 53 + 1074;
  uint64_t mi = (uint64_t)ldexp(m, 53);
  if (sh < 0) { /* subnormal: the low bits are zero */
    mi >>= -sh;
    sh = 0;
  }
  int neg = (x < 0) != (sign < 0);
  /* add mi << sh, 32 bits to a digit */
  int k = sh / 32, o = sh % 32;
  unsigned __int128 w = (unsigned __int128)mi << o;
  for (int j = 0; j < 3 && k + j < XD; j++) {
    int64_t dig = (int64_t)(uint32_t)(w >> (32 * j));
    s->d[k + j] += neg ? -dig : dig;
  }
}
static void xs_add_int(xsum *s, int64_t v, int sign) {
  s->nint += sign;
  s->itotal += sign > 0 ? (__int128)v : -(__int128)v;
}
/* everything (ints included) rounded once; NaN when +Inf and -Inf */
static double xs_round(const xsum *s0) {
  xsum s = *s0;
  if (s.npinf && s.nninf)
    return NAN;
  if (s.npinf)
    return INFINITY;
  if (s.nninf)
    return -INFINITY;
  /* fold the integers in: itotal * 2^1074, 32 bits at a time */
  {
    __int128 t = s.itotal;
    int neg = t < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)t : (unsigned __int128)t;
    int k = 1074 / 32, o = 1074 % 32;
    for (int j = 0; j < 4; j++) {
      uint64_t w = (uint64_t)(uint32_t)(u >> (32 * j)) << o; /* < 2^50 */
      int64_t lo = (int64_t)(w & 0xffffffffu), hi = (int64_t)(w >> 32);
      s.d[k + j] += neg ? -lo : lo;
      s.d[k + j + 1] += neg ? -hi : hi;
    }
  }
  /* normalise: digits 0..XD-2 in [0, 2^32), top signed; negate if < 0 */
  int neg = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < XD - 1; j++) {
      int64_t c = s.d[j] >> 32; /* arithmetic: floor */
      s.d[j] -= c * ((int64_t)1 << 32);
      s.d[j + 1] += c;
    }
    if (s.d[XD - 1] >= 0)
      break;
    neg = 1;
    for (int j = 0; j < XD; j++)
      s.d[j] = -s.d[j];
  }
  int top = XD - 1;
  while (top >= 0 && s.d[top] == 0)
    top--;
  if (top < 0)
    return 0.0;
  int hb = 31;
  while (!((uint64_t)s.d[top] >> hb & 1))
    hb--;
  int nbits = top * 32 + hb + 1; /* bit length */
  uint64_t q;
  int shift = nbits > 53 ? nbits - 53 : 0;
  /* q = bits [shift, nbits) ; round with the bits below */
  q = 0;
  for (int b = nbits - 1; b >= shift; b--)
    q = q << 1 | (((uint64_t)s.d[b / 32] >> (b % 32)) & 1);
  if (shift > 0) {
    int half = ((uint64_t)s.d[(shift - 1) / 32] >> ((shift - 1) % 32)) & 1;
    int sticky = 0;
    for (int b = 0; b < shift - 1 && !sticky; b++)
      sticky = ((uint64_t)s.d[b / 32] >> (b % 32)) & 1;
    if (half && (sticky || (q & 1)))
      q++;
  }
  double r = ldexp((double)q, shift - 1074);
  return neg ? -r : r;
}

/* ---- values ---- */
typedef struct {
  int type; /* SQLITE_* storage class */
  int64_t i;
  double r;
  uint8_t s[24];
  int n;
  int g;
} val;

static const int64_t int_special[] = {INT64_MAX,
                                      INT64_MIN,
                                      INT64_MAX - 1,
                                      INT64_MIN + 1,
                                      0,
                                      -1,
                                      1,
                                      (int64_t)1 << 53,
                                      ((int64_t)1 << 53) + 1,
                                      -((int64_t)1 << 53) - 1,
                                      (int64_t)1 << 62,
                                      -((int64_t)1 << 62),
                                      4294967295ll,
                                      -4294967296ll};
static const char *text_special[] = {"12",
                                     " 12 ",
                                     "1.5e3",
                                     "-9223372036854775808",
                                     "9223372036854775808",
                                     "0x10",
                                     "abc",
                                     "",
                                     "12abc",
                                     "1e999",
                                     "-1e999",
                                     "4.9e-324",
                                     "  -0.0",
                                     "1e-400",
                                     "9007199254740993",
                                     "\xc3\xa9"};

static double real_special(unsigned k) {
  switch (k % 16) {
  case 0:
    return INFINITY;
  case 1:
    return -INFINITY;
  case 2:
    return DBL_MAX;
  case 3:
    return -DBL_MAX;
  case 4:
    return DBL_MIN;
  case 5:
    return 4.9406564584124654e-324;
  case 6:
    return -4.9406564584124654e-324;
  case 7:
    return -0.0;
  case 8:
    return 1e300;
  case 9:
    return -1e300;
  case 10:
    return 0.1;
  case 11:
    return 9007199254740993.0;
  case 12:
    return 1e-300;
  case 13:
    return 2.2250738585072009e-308; /* largest subnormal */
  case 14:
    return 0.5;
  default:
    return 1e16;
  }
}

static void gen_value(rd *r, val *v) {
  unsigned k = b8(r);
  memset(v, 0, sizeof(*v));
  switch (k % 11) {
  case 0:
    v->type = SQLITE_NULL;
    break;
  case 1:
    v->type = SQLITE_INTEGER;
    v->i = (int8_t)b8(r);
    break;
  case 2:
    v->type = SQLITE_INTEGER;
    v->i = int_special[b8(r) % (sizeof int_special / sizeof int_special[0])];
    break;
  case 3:
    v->type = SQLITE_INTEGER;
    v->i = (int64_t)b64(r);
    break;
  case 4: {
    uint64_t bits = b64(r);
    memcpy(&v->r, &bits, 8);
    v->type = isnan(v->r) ? SQLITE_NULL
                          : SQLITE_FLOAT; /* SQLite stores NaN as NULL */
    break;
  }
  case 5:
    v->type = SQLITE_FLOAT;
    v->r = real_special(b8(r));
    break;
  case 6:
    v->type = SQLITE_FLOAT;
    v->r = (int8_t)b8(r) / 8.0;
    break;
  case 7: {
    const char *t =
        text_special[b8(r) % (sizeof text_special / sizeof text_special[0])];
    v->type = SQLITE_TEXT;
    v->n = (int)strlen(t);
    memcpy(v->s, t, (size_t)v->n);
    break;
  }
  case 8:
  case 9: {
    v->type = k % 11 == 8 ? SQLITE_TEXT : SQLITE_BLOB;
    v->n = b8(r) % 9;
    for (int j = 0; j < v->n; j++) {
      v->s[j] = (uint8_t)b8(r);
      if (v->type == SQLITE_TEXT)
        v->s[j] = (uint8_t)('0' + v->s[j] % 75); /* printable */
    }
    break;
  }
  default:
    v->type = SQLITE_FLOAT;
    v->r = ldexp((double)(int8_t)b8(r), (int)(b8(r) % 200) - 100);
    break;
  }
  v->g = b8(r) % 4;
}

static void bind_val(sqlite3_stmt *st, int col, const val *v) {
  switch (v->type) {
  case SQLITE_INTEGER:
    sqlite3_bind_int64(st, col, v->i);
    break;
  case SQLITE_FLOAT:
    sqlite3_bind_double(st, col, v->r);
    break;
  case SQLITE_TEXT:
    sqlite3_bind_text(st, col, (const char *)v->s, v->n, SQLITE_TRANSIENT);
    break;
  case SQLITE_BLOB:
    sqlite3_bind_blob(st, col, v->s, v->n, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_bind_null(st, col);
  }
}

/* ---- failures ---- */
static const char *cur_sql;
#define BUG(...)                                                               \
  do {                                                                         \
    fprintf(stderr, "fuzz: MISMATCH: ");                                       \
    fprintf(stderr, __VA_ARGS__);                                              \
    fprintf(stderr, "\n  in: %s\n", cur_sql ? cur_sql : "?");                  \
    abort();                                                                   \
  } while (0)

static sqlite3 *db;

static sqlite3_stmt *prep(const char *sql) {
  sqlite3_stmt *st = NULL;
  cur_sql = sql;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    BUG("prepare failed: %s", sqlite3_errmsg(db));
  return st;
}
static void exec(const char *sql) {
  char *err = NULL;
  cur_sql = sql;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
    BUG("exec failed: %s", err);
}

/* The values of t as gpu_sum classifies them (sqlite3_value_numeric_type),
** in rowid order. */
typedef struct {
  int kind; /* 0 null, 1 int, 2 real */
  int64_t i;
  double r;
  int g;
} num;

static int load_nums(num *out, int max) {
  sqlite3_stmt *st = prep("SELECT x, g FROM t ORDER BY rowid");
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW && n < max) {
    sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(st, 0));
    if (!v)
      BUG("nomem");
    int ty = sqlite3_value_numeric_type(v);
    out[n].g = sqlite3_column_int(st, 1);
    if (ty == SQLITE_NULL)
      out[n].kind = 0;
    else if (ty == SQLITE_INTEGER)
      out[n].kind = 1, out[n].i = sqlite3_value_int64(v);
    else
      out[n].kind = 2, out[n].r = sqlite3_value_double(v);
    sqlite3_value_free(v);
    n++;
  }
  sqlite3_finalize(st);
  return n;
}

static void xs_add_num(xsum *s, const num *v, int sign) {
  if (v->kind == 1)
    xs_add_int(s, v->i, sign);
  else if (v->kind == 2)
    xs_add_double(s, v->r, sign);
}

/* Check one gpu_sum result column against the oracle of the values in s.
** err: the statement's error text or NULL. */
static void check_sum(const xsum *s, sqlite3_stmt *st, int col,
                      const char *what) {
  int ty = sqlite3_column_type(st, col);
  int64_t cnt = s->nint + s->nreal;
  if (cnt == 0) {
    if (ty != SQLITE_NULL)
      BUG("%s: no values, got type %d", what, ty);
    return;
  }
  if (s->nreal == 0) {
    if (s->itotal > INT64_MAX || s->itotal < INT64_MIN)
      BUG("%s: overflow not reported", what);
    if (ty != SQLITE_INTEGER ||
        sqlite3_column_int64(st, col) != (int64_t)s->itotal)
      BUG("%s: integers: got type %d %lld, want %lld", what, ty,
          (long long)sqlite3_column_int64(st, col), (long long)s->itotal);
    return;
  }
  double want = xs_round(s);
  if (isnan(want)) {
    if (ty != SQLITE_NULL)
      BUG("%s: +Inf with -Inf must give NULL, got type %d", what, ty);
    return;
  }
  double got = sqlite3_column_double(st, col);
  if (ty != SQLITE_FLOAT || memcmp(&got, &want, 8))
    BUG("%s: got type %d %a, want %a", what, ty, got, want);
}

static int int_overflows(const xsum *s) {
  return s->nint + s->nreal > 0 && s->nreal == 0 &&
         (s->itotal > INT64_MAX || s->itotal < INT64_MIN);
}

/* gpu_max/gpu_min vs max/min in columns a, b: same type and value. */
static void check_same(sqlite3_stmt *st, int a, int b, int tie_ok,
                       const char *what) {
  int ta = sqlite3_column_type(st, a), tb = sqlite3_column_type(st, b);
  if (ta != tb) {
    if (tie_ok && (ta == SQLITE_INTEGER || ta == SQLITE_FLOAT) &&
        (tb == SQLITE_INTEGER || tb == SQLITE_FLOAT)) {
      /* equal values of different types (a tie in a sliding window) */
      long double x = ta == SQLITE_INTEGER
                          ? (long double)sqlite3_column_int64(st, a)
                          : (long double)sqlite3_column_double(st, a);
      long double y = tb == SQLITE_INTEGER
                          ? (long double)sqlite3_column_int64(st, b)
                          : (long double)sqlite3_column_double(st, b);
      if (x == y)
        return;
    }
    BUG("%s: type %d vs built-in %d", what, ta, tb);
  }
  switch (ta) {
  case SQLITE_INTEGER:
    if (sqlite3_column_int64(st, a) != sqlite3_column_int64(st, b))
      BUG("%s: %lld vs %lld", what, (long long)sqlite3_column_int64(st, a),
          (long long)sqlite3_column_int64(st, b));
    break;
  case SQLITE_FLOAT: {
    double x = sqlite3_column_double(st, a), y = sqlite3_column_double(st, b);
    if (memcmp(&x, &y, 8) && !(tie_ok && x == y))
      BUG("%s: %a vs %a", what, x, y);
    break;
  }
  case SQLITE_TEXT:
  case SQLITE_BLOB: {
    const void *p = sqlite3_column_blob(st, a);
    int na = sqlite3_column_bytes(st, a);
    const void *q = sqlite3_column_blob(st, b);
    int nb = sqlite3_column_bytes(st, b);
    if (na != nb || (na && memcmp(p, q, (size_t)na)))
      BUG("%s: text/blob differ", what);
    break;
  }
  }
}

#define MAXROWS 20000

static num nums[MAXROWS];

static void q_plain(void) {
  int n = load_nums(nums, MAXROWS);
  xsum s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < n; i++)
    xs_add_num(&s, &nums[i], 1);
  sqlite3_stmt *st =
      prep("SELECT gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_max(x), max(x), "
           "gpu_min(x), min(x), count(x) FROM t");
  int rc = sqlite3_step(st);
  if (int_overflows(&s)) {
    if (rc != SQLITE_ERROR || strcmp(sqlite3_errmsg(db), "integer overflow"))
      BUG("expected integer overflow, rc %d %s", rc, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    /* the rest without gpu_sum */
    st = prep("SELECT 0, gpu_total(x), gpu_avg(x), gpu_max(x), max(x), "
              "gpu_min(x), min(x), "
              "count(x) FROM t");
    rc = sqlite3_step(st);
  } else {
    if (rc != SQLITE_ROW)
      BUG("rc %d %s", rc, sqlite3_errmsg(db));
    check_sum(&s, st, 0, "gpu_sum");
  }
  if (rc != SQLITE_ROW)
    BUG("rc %d %s", rc, sqlite3_errmsg(db));
  /* gpu_total: always REAL, the exact sum rounded once */
  double tw = (s.nint + s.nreal) ? xs_round(&s) : 0.0;
  if (isnan(tw)) {
    if (sqlite3_column_type(st, 1) != SQLITE_NULL)
      BUG("gpu_total: Inf-Inf must be NULL");
  } else {
    double tg = sqlite3_column_double(st, 1);
    if (sqlite3_column_type(st, 1) != SQLITE_FLOAT || memcmp(&tg, &tw, 8))
      BUG("gpu_total: %a want %a", tg, tw);
  }
  /* gpu_avg for integers with a small total */
  int64_t cnt = sqlite3_column_int64(st, 7);
  if (cnt != s.nint + s.nreal)
    BUG("count %lld vs %lld", (long long)cnt, (long long)(s.nint + s.nreal));
  if (cnt == 0 && sqlite3_column_type(st, 2) != SQLITE_NULL)
    BUG("gpu_avg of nothing");
  if (cnt > 0 && s.nreal == 0 && s.itotal < ((__int128)1 << 53) &&
      s.itotal > -((__int128)1 << 53)) {
    double aw = (double)(int64_t)s.itotal / (double)cnt,
           ag = sqlite3_column_double(st, 2);
    if (sqlite3_column_type(st, 2) != SQLITE_FLOAT || memcmp(&aw, &ag, 8))
      BUG("gpu_avg: %a want %a", ag, aw);
  }
  if (cnt == 1 && s.nreal == 1 &&
      !isnan(tw)) { /* the average of one value is itself */
    double ag = sqlite3_column_double(st, 2);
    if (memcmp(&ag, &tw, 8))
      BUG("gpu_avg of one value %a vs %a", ag, tw);
  }
  check_same(st, 3, 4, 0, "gpu_max");
  check_same(st, 5, 6, 0, "gpu_min");
  sqlite3_finalize(st);
}

static void q_group(int distinct) {
  int n = load_nums(nums, MAXROWS);
  xsum s[4];
  memset(s, 0, sizeof s);
  for (int i = 0; i < n; i++)
    xs_add_num(&s[nums[i].g & 3], &nums[i], 1);
  int any_over = 0;
  for (int g = 0; g < 4; g++)
    any_over |= int_overflows(&s[g]);
  sqlite3_stmt *st = prep(
      distinct
          ? "SELECT g, 0, gpu_max(DISTINCT x), max(DISTINCT x), "
            "gpu_min(DISTINCT x), "
            "min(DISTINCT x), gpu_sum(DISTINCT x) IS NOT NULL FROM t GROUP BY g"
      : any_over ? "SELECT g, 0, gpu_max(x), max(x), gpu_min(x), min(x) FROM t "
                   "GROUP BY g"
                 : "SELECT g, gpu_sum(x), gpu_max(x), max(x), gpu_min(x), "
                   "min(x) FROM t "
                   "GROUP BY g");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int g = sqlite3_column_int(st, 0);
    if (!distinct && !any_over)
      check_sum(&s[g & 3], st, 1, "gpu_sum group");
    check_same(st, 2, 3, 0, "gpu_max group");
    check_same(st, 4, 5, 0, "gpu_min group");
  }
  if (rc != SQLITE_DONE) {
    /* DISTINCT sums may overflow; nothing else may fail */
    if (!(distinct && !strcmp(sqlite3_errmsg(db), "integer overflow")))
      BUG("group rc %d %s", rc, sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
}

/* A window with a random ROWS frame over rowid order: gpu_sum against the
** oracle of each frame, gpu_max/gpu_min against max/min. */
static void q_window(rd *r) {
  int n = load_nums(nums, MAXROWS);
  int part = b8(r) & 1;
  int lo = b8(r) % 8, hi = b8(r) % 8; /* 7 = UNBOUNDED */
  int kind = b8(r) % 4; /* 0..1 ROWS, 2 RANGE, 3 GROUPS (max/min only) */
  char sql[512], lo_s[32], hi_s[32];
  if (lo == 7)
    snprintf(lo_s, sizeof lo_s, "UNBOUNDED PRECEDING");
  else
    snprintf(lo_s, sizeof lo_s, "%d PRECEDING", lo);
  if (hi == 7)
    snprintf(hi_s, sizeof hi_s, "UNBOUNDED FOLLOWING");
  else
    snprintf(hi_s, sizeof hi_s, "%d FOLLOWING", hi);
  int rows = kind < 2;
  int oracle = rows && n <= 3000;
  snprintf(sql, sizeof sql,
           "SELECT %s, gpu_max(x) OVER w, max(x) OVER w, gpu_min(x) OVER w, "
           "min(x) OVER w, "
           "gpu_total(x) OVER w IS NOT NULL FROM t WINDOW w AS (%s ORDER BY %s "
           "%s BETWEEN %s AND %s) "
           "ORDER BY rowid",
           oracle ? "gpu_sum(x) OVER w" : "0", part ? "PARTITION BY g" : "",
           rows ? "rowid" : "x",
           rows        ? "ROWS"
           : kind == 2 ? "RANGE"
                       : "GROUPS",
           kind == 2 ? "UNBOUNDED PRECEDING" : lo_s,
           kind == 2 ? "CURRENT ROW" : hi_s);
  /* the oracle: frames in rowid order within the partition */
  static int pos[MAXROWS];
  int over = 0;
  sqlite3_stmt *st = prep(sql);
  int rc, k = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (oracle) {
      /* row k: the rows of its partition, positions [p-lo, p+hi] */
      int np = 0, me = -1;
      for (int i = 0; i < n; i++)
        if (!part || nums[i].g == nums[k].g) {
          if (i == k)
            me = np;
          pos[np++] = i;
        }
      int a = lo == 7 ? 0 : me - lo, b = hi == 7 ? np - 1 : me + hi;
      if (a < 0)
        a = 0;
      if (b > np - 1)
        b = np - 1;
      xsum s;
      memset(&s, 0, sizeof s);
      for (int j = a; j <= b; j++)
        xs_add_num(&s, &nums[pos[j]], 1);
      if (int_overflows(&s))
        over = 1;
      else
        check_sum(&s, st, 0, "gpu_sum window");
    }
    check_same(st, 1, 2, 1, "gpu_max window");
    check_same(st, 3, 4, 1, "gpu_min window");
    k++;
  }
  if (rc != SQLITE_DONE) {
    if (!(oracle && !strcmp(sqlite3_errmsg(db), "integer overflow")))
      BUG("window rc %d %s", rc, sqlite3_errmsg(db));
  } else if (over) {
    BUG("window: a frame overflowed but no error");
  }
  sqlite3_finalize(st);
}

static void q_nested(void) {
  /* no oracle beyond 'runs, or fails with a clear error' */
  static const char *qs[] = {
      "SELECT gpu_sum(m), gpu_max(m), gpu_min(s) FROM (SELECT gpu_max(x) AS m, "
      "gpu_total(x) AS s "
      "FROM t GROUP BY g)",
      "SELECT gpu_max((SELECT gpu_min(x) FROM t AS u WHERE u.g = t.g AND "
      "u.rowid < 300)) FROM t "
      "WHERE rowid < 300",
      "SELECT gpu_total(x) FILTER (WHERE typeof(x) <> 'text'), "
      "gpu_avg(DISTINCT x) FROM t",
      "SELECT gpu_avg(s) OVER (ORDER BY g), gpu_max(m) OVER () FROM (SELECT g, "
      "gpu_total(x) s, "
      "gpu_max(x) m FROM t GROUP BY g)",
  };
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    char *err = NULL;
    cur_sql = qs[i];
    if (sqlite3_exec(db, qs[i], NULL, NULL, &err) != SQLITE_OK) {
      if (strcmp(err, "integer overflow"))
        BUG("nested: %s", err);
      sqlite3_free(err);
    }
  }
}

static void q_matadd(rd *r) {
  exec("DROP TABLE IF EXISTS a; DROP TABLE IF EXISTS b;"
       "CREATE TABLE a(i, j, v); CREATE TABLE b(i, j, v);");
  int valid = 1;
  for (int m = 0; m < 2; m++) {
    sqlite3_stmt *st = prep(m ? "INSERT INTO b VALUES (?1, ?2, ?3)"
                              : "INSERT INTO a VALUES (?1, ?2, ?3)");
    int cnt = b8(r) % 12;
    int sparse = b8(r) % 8 == 0;
    for (int e = 0; e < cnt; e++) {
      unsigned c = b8(r);
      if (c % 13 == 0) { /* a bad coordinate or value */
        val v;
        gen_value(r, &v);
        bind_val(st, 1 + (int)(c / 13) % 3, &v);
        valid = 0;
        sqlite3_bind_int(st, 1 + ((int)(c / 13) + 1) % 3, 1);
        sqlite3_bind_int(st, 1 + ((int)(c / 13) + 2) % 3, 1);
      } else {
        int64_t i = c % 6, j = b8(r) % 6;
        if (sparse)
          i *= 1000000007, j *= 999999937;
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, j);
        val v;
        gen_value(r, &v);
        if (v.type == SQLITE_INTEGER)
          sqlite3_bind_int64(st, 3, v.i);
        else if (v.type == SQLITE_FLOAT)
          sqlite3_bind_double(st, 3, v.r);
        else
          sqlite3_bind_double(st, 3, (int8_t)v.g * 0.75);
      }
      sqlite3_step(st);
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
  }
  /* duplicates make the input invalid too */
  sqlite3_stmt *st = prep("SELECT (SELECT count(*) FROM (SELECT 1 FROM a GROUP "
                          "BY i, j HAVING count(*) > 1))"
                          " + (SELECT count(*) FROM (SELECT 1 FROM b GROUP BY "
                          "i, j HAVING count(*) > 1))");
  sqlite3_step(st);
  if (sqlite3_column_int(st, 0))
    valid = 0;
  sqlite3_finalize(st);
  sqlite3_stmt *g = prep("SELECT i, j, v FROM gpu_matadd('a', 'b')");
  sqlite3_stmt *w =
      prep("SELECT i, j, total(v) FROM (SELECT i, j, v FROM a UNION ALL "
           "SELECT i, j, v FROM b) GROUP BY i, j ORDER BY i, j");
  int rc;
  while ((rc = sqlite3_step(g)) == SQLITE_ROW) {
    if (!valid)
      continue;
    if (sqlite3_step(w) != SQLITE_ROW)
      BUG("gpu_matadd: more rows than the reference");
    double gv = sqlite3_column_double(g, 2), wv = sqlite3_column_double(w, 2);
    if (sqlite3_column_int64(g, 0) != sqlite3_column_int64(w, 0) ||
        sqlite3_column_int64(g, 1) != sqlite3_column_int64(w, 1) ||
        !(gv == wv || (isnan(gv) && isnan(wv))))
      BUG("gpu_matadd: (%lld,%lld,%a) vs (%lld,%lld,%a)",
          (long long)sqlite3_column_int64(g, 0),
          (long long)sqlite3_column_int64(g, 1), gv,
          (long long)sqlite3_column_int64(w, 0),
          (long long)sqlite3_column_int64(w, 1), wv);
  }
  if (rc != SQLITE_DONE) {
    if (valid)
      BUG("gpu_matadd failed on valid input: %s", sqlite3_errmsg(db));
    if (strncmp(sqlite3_errmsg(db), "gpu_matadd:", 11))
      BUG("gpu_matadd error does not name the function: %s",
          sqlite3_errmsg(db));
  } else if (valid && sqlite3_step(w) == SQLITE_ROW) {
    BUG("gpu_matadd: fewer rows than the reference");
  }
  sqlite3_finalize(g);
  sqlite3_finalize(w);
}

/* ---- aggregate states ---- */

/* Per-group states (g) merged back: the whole-table oracles. */
static void q_state_merge(void) {
  int n = load_nums(nums, MAXROWS);
  xsum s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < n; i++)
    xs_add_num(&s, &nums[i], 1);
  sqlite3_stmt *st = prep("SELECT gpu_sum_merge(a), gpu_total_merge(b), "
                          "gpu_avg_merge(c), gpu_max_merge(d), "
                          "max(mx), gpu_min_merge(e), min(mn), count(*) FROM "
                          "(SELECT gpu_sum_state(x) a, "
                          "gpu_total_state(x) b, gpu_avg_state(x) c, "
                          "gpu_max_state(x) d, max(x) mx, "
                          "gpu_min_state(x) e, min(x) mn FROM t GROUP BY g "
                          "UNION ALL SELECT NULL, NULL, NULL, NULL, "
                          "NULL, NULL, NULL)");
  int rc = sqlite3_step(st);
  if (int_overflows(&s)) {
    if (rc != SQLITE_ERROR || strcmp(sqlite3_errmsg(db), "integer overflow"))
      BUG("states: expected integer overflow, rc %d %s", rc,
          sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return;
  }
  if (rc != SQLITE_ROW)
    BUG("states: rc %d %s", rc, sqlite3_errmsg(db));
  check_sum(&s, st, 0, "gpu_sum_merge");
  double tw = (s.nint + s.nreal) ? xs_round(&s) : 0.0;
  double tg = sqlite3_column_double(st, 1);
  if (isnan(tw)
          ? sqlite3_column_type(st, 1) != SQLITE_NULL
          : sqlite3_column_type(st, 1) != SQLITE_FLOAT || memcmp(&tg, &tw, 8))
    BUG("gpu_total_merge: %a want %a", tg, tw);
  if (s.nint + s.nreal == 0 && sqlite3_column_type(st, 2) != SQLITE_NULL)
    BUG("gpu_avg_merge of nothing");
  /* max/min: the value of max()/min(); the type may follow the merge order */
  check_same(st, 3, 4, 1, "gpu_max_merge");
  check_same(st, 5, 6, 1, "gpu_min_merge");
  sqlite3_finalize(st);
}

/* One BLOB through the decoder of every kind and every _merge. */
static void state_blob_check(const uint8_t *p, int64_t n) {
  static const char *fn[5] = {"gpu_sum_merge", "gpu_total_merge",
                              "gpu_avg_merge", "gpu_max_merge",
                              "gpu_min_merge"};
  static const int kind_of[5] = {GA_STATE_SUM, GA_STATE_SUM, GA_STATE_SUM,
                                 GA_STATE_MAX, GA_STATE_MIN};
  int ok[GA_STATE_FUSED + 1] = {0}, text16[GA_STATE_FUSED + 1] = {0};
  for (int k = GA_STATE_SUM; k <= GA_STATE_FUSED; k++) {
    ga_xstate x;
    const char *err = NULL;
    int rc = ga_state_decode(p, n, k, &x, &err);
    if (rc == GA_NOMEM)
      BUG("state decode: out of memory on %lld bytes", (long long)n);
    if (rc != GA_OK) {
      if (!err || !*err)
        BUG("state decode: refused without a reason");
      continue;
    }
    ok[k] = 1;
    text16[k] =
        x.enc > 1 && (x.max.type == GA_V_TEXT || x.min.type == GA_V_TEXT);
    unsigned char *e;
    int64_t en;
    if (ga_state_encode(&x, k, &e, &en) != GA_OK)
      BUG("state encode: out of memory");
    if (en != n || memcmp(e, p, (size_t)n))
      BUG("state kind %d accepted but not canonical (%lld bytes in, %lld out)",
          k, (long long)n, (long long)en);
    sqlite3_free(e);
    ga_xstate_clear(&x);
  }
  for (int f = 0; f < 5; f++) {
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT %s(?1)", fn[f]);
    sqlite3_stmt *st = prep(sql);
    sqlite3_bind_blob(st, 1, p, (int)n, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    const char *msg = sqlite3_errmsg(db);
    int named = rc == SQLITE_ERROR && !strncmp(msg, fn[f], strlen(fn[f])) &&
                msg[strlen(fn[f])] == ':';
    if (ok[kind_of[f]] && !text16[kind_of[f]]) {
      if (rc != SQLITE_ROW && !(f == 0 && !strcmp(msg, "integer overflow")))
        BUG("%s refused a BLOB the decoder accepts: %s", fn[f], msg);
    } else if (!named) {
      BUG("%s: rc %d, '%s': a refused BLOB must give an error naming the "
          "function",
          fn[f], rc, msg);
    }
    sqlite3_finalize(st);
  }
}

/* A state BLOB from the input: a real state of t with bytes overwritten,
** cut or extended, or the raw bytes that are left. */
static void q_state_blob(rd *r) {
  static const char *mk[4] = {
      "SELECT gpu_sum_state(x) FROM t", "SELECT gpu_max_state(x) FROM t",
      "SELECT gpu_min_state(x) FROM t",
      "SELECT gpu_sum_state(x) FROM t WHERE typeof(x) = 'integer'"};
  uint8_t buf[1024];
  int64_t n = 0;
  unsigned how = b8(r);
  if (how % 4 == 3) { /* raw input bytes */
    n = (int64_t)(b8(r) % 200);
    for (int64_t i = 0; i < n; i++)
      buf[i] = (uint8_t)b8(r);
  } else {
    sqlite3_stmt *st = prep(mk[b8(r) % 4]);
    if (sqlite3_step(st) != SQLITE_ROW)
      BUG("state: %s", sqlite3_errmsg(db));
    n = sqlite3_column_bytes(st, 0);
    if (n > 900)
      n = 900;
    if (n)
      memcpy(buf, sqlite3_column_blob(st, 0), (size_t)n);
    sqlite3_finalize(st);
    int edits = b8(r) % 4;
    for (int e = 0; e < edits && n > 0; e++) {
      unsigned pos = b8(r), val = b8(r);
      buf[pos % n] = (uint8_t)val;
    }
    if (how % 4 == 1 && n > 0)
      n -= 1 + b8(r) % n; /* cut */
    if (how % 4 == 2)
      for (int e = b8(r) % 8; e > 0; e--)
        buf[n++] = (uint8_t)b8(r); /* extend */
  }
  state_blob_check(buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rd r = {data, size, 0};
  char *err = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK)
    abort();
  if (sqlite3_gpuagg_init(db, &err, NULL) != SQLITE_OK)
    abort();
  exec("CREATE TABLE t(g INTEGER, x)");
  int nrows = b8(&r) % 48;
  sqlite3_stmt *st = prep("INSERT INTO t VALUES (?1, ?2)");
  for (int i = 0; i < nrows; i++) {
    val v;
    gen_value(&r, &v);
    sqlite3_bind_int(st, 1, v.g);
    bind_val(st, 2, &v);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  unsigned rep = b8(&r);
  if (rep >= 250 && nrows > 0) { /* rarely: many chunks */
    int times = (int)(12000 / nrows) + 1;
    char sql[256];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM c "
             "WHERE k<%d) "
             "INSERT INTO t SELECT g, x FROM t, c",
             times);
    exec(sql);
  }
  int nq = 1 + b8(&r) % 4;
  for (int q = 0; q < nq; q++) {
    switch (b8(&r) % 8) {
    case 6:
      q_state_merge();
      break;
    case 7:
      q_state_blob(&r);
      break;
    case 0:
      q_plain();
      break;
    case 1:
      q_group(0);
      break;
    case 2:
      q_group(1);
      break;
    case 3:
      q_window(&r);
      break;
    case 4:
      q_nested();
      break;
    default:
      q_matadd(&r);
      break;
    }
  }
  q_plain(); /* always at least the plain check */
  if (sqlite3_close(db) != SQLITE_OK)
    abort();
  db = NULL;
  return 0;
}
