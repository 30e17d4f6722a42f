/*
** test_state_worker.c — gpuagg_partial(x), the fused aggregate of
** gpu_aggregate's workers, at the SQL level (ga_worker_prep, ext/workers/).
**
** As a worker does: the table is cut into rowid ranges, each range's
** gpuagg_partial BLOB is decoded and the states are merged in rowid order.
** Oracle: the same connection's count(*), count(x), gpu_sum, gpu_total,
** gpu_avg, gpu_max, gpu_min over the whole table (themselves checked
** against exact references by the other suites), value and type, in UTF-8
** and UTF-16 databases, on tables of numbers, numeric and non-numeric text,
** blobs, NULLs, +-Inf and int64 extremes.  Ends with "RESULT state_worker:".
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state.h"

struct sqlite3_api_routines;
int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                        const struct sqlite3_api_routines *pApi);
int ga_worker_prep(sqlite3 *db);

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

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

static void exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    printf("FAIL exec %s: %s\n", sql, err);
    exit(1);
  }
}

static void fill(sqlite3 *db, int n, int profile) {
  static const char *texts[] = {"12",
                                " 7 ",
                                "1.5e3",
                                "abc",
                                "",
                                "12abc",
                                "-9223372036854775808",
                                "\xc3\xa9",
                                "zz",
                                "\xf0\x9f\x98\x80",
                                "\xef\xbd\x81",
                                "1e999"};
  exec(db, "DROP TABLE IF EXISTS t; CREATE TABLE t(x); BEGIN");
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1)", -1, &st, NULL);
  for (int i = 0; i < n; i++) {
    unsigned k = (unsigned)(rnd() % 10);
    if (profile == 1 && k > 5)
      k %= 3;         /* numbers only */
    if (profile == 3) /* TEXT only: numeric-looking texts (" 7 ") can win */
      k = rnd() % 5 ? 6 : 0;
    if (profile == 2) { /* small INTEGER and equal REAL values: ties */
      if (rnd() % 2)
        sqlite3_bind_int64(st, 1, (int64_t)(rnd() % 7) - 3);
      else
        sqlite3_bind_double(st, 1, (double)(rnd() % 7) - 3);
      sqlite3_step(st);
      sqlite3_reset(st);
      continue;
    }
    switch (k) {
    case 0:
      sqlite3_bind_null(st, 1);
      break;
    case 1:
      sqlite3_bind_int64(st, 1, (int64_t)(rnd() % 41) - 20);
      break;
    case 2:
      sqlite3_bind_double(st, 1, (double)(rnd() % 41) - 20);
      break;
    case 3: {
      static const int64_t e[] = {INT64_MAX, INT64_MIN, (int64_t)1 << 53,
                                  ((int64_t)1 << 53) + 1};
      sqlite3_bind_int64(st, 1, e[rnd() % 4]);
      break;
    }
    case 4: {
      static const double e[] = {INFINITY, -INFINITY, 1e308,
                                 -1e308,   5e-324,    0x1p53};
      sqlite3_bind_double(st, 1, e[rnd() % 6]);
      break;
    }
    case 5:
      sqlite3_bind_double(st, 1, ldexp((double)(int64_t)(rnd() >> 11), -40));
      break;
    case 6:
    case 7:
      sqlite3_bind_text(st, 1, texts[rnd() % 12], -1, SQLITE_STATIC);
      break;
    default: {
      unsigned char b[3] = {(unsigned char)rnd(), (unsigned char)rnd(), '1'};
      sqlite3_bind_blob(st, 1, b, (int)(rnd() % 4), SQLITE_TRANSIENT);
    }
    }
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  exec(db, "COMMIT");
}

/* Column col of st as a ga_value (text in the database encoding enc). */
static void col_value(sqlite3_stmt *st, int col, int enc, ga_value *v) {
  memset(v, 0, sizeof(*v));
  switch (sqlite3_column_type(st, col)) {
  case SQLITE_INTEGER:
    v->type = GA_V_INT;
    v->i = sqlite3_column_int64(st, col);
    break;
  case SQLITE_FLOAT:
    v->type = GA_V_REAL;
    v->r = sqlite3_column_double(st, col);
    break;
  case SQLITE_TEXT:
    v->type = GA_V_TEXT;
    if (enc == SQLITE_UTF8) {
      v->p = sqlite3_column_text(st, col);
      v->n = sqlite3_column_bytes(st, col);
    } else { /* the bytes of the database encoding, as BINARY compares */
      sqlite3_value *x = sqlite3_column_value(st, col);
      v->p = enc == SQLITE_UTF16LE ? sqlite3_value_text16le(x)
                                   : sqlite3_value_text16be(x);
      v->n = sqlite3_value_bytes16(x);
    }
    break;
  case SQLITE_BLOB:
    v->type = GA_V_BLOB;
    v->p = sqlite3_column_blob(st, col);
    v->n = sqlite3_column_bytes(st, col);
    break;
  }
}

static int same(const ga_value *a, const ga_value *b) {
  if (a->type != b->type)
    return 0;
  if (a->type == GA_V_INT)
    return a->i == b->i;
  if (a->type == GA_V_REAL)
    return !memcmp(&a->r, &b->r, 8);
  if (a->type == GA_V_TEXT || a->type == GA_V_BLOB)
    return a->n == b->n && (!a->n || !memcmp(a->p, b->p, (size_t)a->n));
  return 1;
}

static void one_case(sqlite3 *db, int n, int profile, int enc, int slices) {
  fill(db, n, profile);
  /* the states of rowid slices, merged in rowid order */
  ga_xstate acc;
  ga_xstate_init(&acc);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(
      db, "SELECT gpuagg_partial(x) FROM t WHERE rowid BETWEEN ?1 AND ?2", -1,
      &st, NULL);
  int per = n / slices + 1;
  for (int a = 1; a <= n || a == 1; a += per) {
    sqlite3_bind_int(st, 1, a);
    sqlite3_bind_int(st, 2, a + per - 1);
    if (sqlite3_step(st) != SQLITE_ROW) {
      CHECK(0, "gpuagg_partial: %s", sqlite3_errmsg(db));
      break;
    }
    ga_xstate s;
    const char *err;
    int rc =
        ga_state_decode(sqlite3_column_blob(st, 0), sqlite3_column_bytes(st, 0),
                        GA_STATE_FUSED, &s, &err);
    CHECK(rc == GA_OK, "decode: %s", rc == GA_OK ? "" : err);
    if (rc == GA_OK) {
      CHECK(s.enc == 0 || s.enc == enc, "state encoding %d, db %d", s.enc, enc);
      ga_xstate_merge(&acc, &s);
      ga_xstate_clear(&s);
    }
    sqlite3_reset(st);
    if (n == 0)
      break;
  }
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db,
                     "SELECT count(*), count(x), gpu_total(x), gpu_avg(x), "
                     "gpu_max(x), gpu_min(x) FROM t",
                     -1, &st, NULL);
  sqlite3_step(st);
  CHECK(acc.rows == sqlite3_column_int64(st, 0) &&
            acc.count == sqlite3_column_int64(st, 1),
        "rows/count %lld/%lld vs %lld/%lld", (long long)acc.rows,
        (long long)acc.count, (long long)sqlite3_column_int64(st, 0),
        (long long)sqlite3_column_int64(st, 1));
  static const int ops[4] = {GA_AGG_TOTAL, GA_AGG_AVG, GA_AGG_MAX, GA_AGG_MIN};
  for (int k = 0; k < 4; k++) {
    ga_value want, got;
    col_value(st, 2 + k, enc, &want);
    ga_xstate_result(&acc, ops[k], &got);
    CHECK(same(&got, &want),
          "n %d profile %d enc %d slices %d op %d: type %d vs %d", n, profile,
          enc, slices, ops[k], got.type, want.type);
  }
  sqlite3_finalize(st);
  /* gpu_sum, which may fail with integer overflow */
  sqlite3_prepare_v2(db, "SELECT gpu_sum(x) FROM t", -1, &st, NULL);
  int rc = sqlite3_step(st);
  ga_value want, got;
  int grc = ga_xstate_result(&acc, GA_AGG_SUM, &got);
  if (rc == SQLITE_ROW) {
    col_value(st, 0, enc, &want);
    CHECK(grc == GA_OK && same(&got, &want), "gpu_sum: rc %d type %d vs %d",
          grc, got.type, want.type);
  } else {
    CHECK(grc == GA_OVERFLOW && !strcmp(sqlite3_errmsg(db), "integer overflow"),
          "gpu_sum failed (%s), state rc %d", sqlite3_errmsg(db), grc);
  }
  sqlite3_finalize(st);
  ga_xstate_clear(&acc);
}

int main(void) {
  static const char *encs[3] = {"UTF-8", "UTF-16le", "UTF-16be"};
  for (int e = 0; e < 3; e++) {
    sqlite3 *db;
    char *err = NULL;
    sqlite3_open(":memory:", &db);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA encoding = '%s'", encs[e]);
    exec(db, sql);
    if (sqlite3_gpuagg_init(db, &err, NULL) != SQLITE_OK ||
        ga_worker_prep(db) != SQLITE_OK) {
      printf("FAIL register\n");
      return 1;
    }
    for (int t = 0; t < 40; t++) {
      int n = t < 4 ? t : (int)(rnd() % 3000);
      one_case(db, n, t % 4, e + 1, 1 + (int)(rnd() % 9));
    }
    sqlite3_close(db);
  }
  printf("RESULT state_worker: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  return failed != 0;
}
