/*
** test_cache_dict.c — engine/cache/dict.c (TEXT dictionaries of the column
** cache, issue 20) against SQLite itself (make test-cache-dict; suite
** cache_dict of tests/run_all.sh).
**
**   1. Four sinks intern random byte strings (empty, long, embedded NUL,
**      bytes 0x80-0xff, shared prefixes), merge into one dictionary in a
**      random order and seal it: every row's local id leads, through its
**      load id and code, back to its own bytes; the values are distinct
**      and as many as a reference's.
**   2. Codes sort as SQLite's BINARY comparison does (`?1 < ?2`, `?1 = ?2`
**      on TEXT), in a UTF-8 and in a UTF-16le database (memcmp of UTF-16
**      bytes is not code point order: the dictionary must follow the
**      database's bytes).
**   3. ga_dict_find: present and absent probes, the insertion point and the
**      found flag against a reference count.
**   4. 1e6 distinct values; bytes counted.
** Prints FAIL lines and "RESULT cache_dict: p passed, f failed, 0 skipped".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dict.h"
#include "value.h"

static int passed, failed;

static void check(int ok, const char *what, long long i) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  if (failed < 20)
    printf("FAIL [cache_dict] %s (case %lld)\n", what, i);
}

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  seed ^= seed >> 12;
  seed ^= seed << 25;
  seed ^= seed >> 27;
  return seed * 2685821657736338717ull;
}

/* A random string: a shared prefix often, bytes from a small alphabet
** that stresses memcmp (NUL, 0x7f, 0x80, 0xff, UTF-8), sometimes long. */
static int rand_bytes(unsigned char *buf, int max) {
  static const unsigned char alpha[] = {'a',  'b',  'A',  ' ',  0,   0x7f,
                                        0x80, 0xc3, 0xa9, 0xff, '1', 'z'};
  int n = (int)(rnd() % 6);
  if (rnd() % 50 == 0)
    n = 200 + (int)(rnd() % 3000);
  if (n > max)
    n = max;
  int i = 0;
  if (rnd() % 3 == 0)
    for (; i < n && i < 3; i++)
      buf[i] = "key"[i];
  for (; i < n; i++)
    buf[i] = alpha[rnd() % sizeof alpha];
  return n;
}

typedef struct str {
  unsigned char *p;
  int n;
} str;

static int str_cmp(const void *a, const void *b) {
  const str *x = a, *y = b;
  return ga_dict_cmp(x->p, x->n, y->p, y->n);
}

/* SQLite's comparison of two TEXT values in db: -1, 0, 1. */
static int sqlite_cmp(sqlite3 *db, int utf16, const str *a, const str *b) {
  static sqlite3_stmt *st[2];
  if (!st[utf16])
    sqlite3_prepare_v2(db, "SELECT (?1 > ?2) - (?1 < ?2)", -1, &st[utf16],
                       NULL);
  sqlite3_stmt *s = st[utf16];
  if (utf16) {
    sqlite3_bind_text16(s, 1, a->p, a->n, SQLITE_STATIC);
    sqlite3_bind_text16(s, 2, b->p, b->n, SQLITE_STATIC);
  } else {
    sqlite3_bind_text(s, 1, (const char *)a->p, a->n, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, (const char *)b->p, b->n, SQLITE_STATIC);
  }
  int r = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 9;
  sqlite3_reset(s);
  if (r == 9) {
    sqlite3_finalize(s);
    st[utf16] = NULL;
  }
  return r;
}

static int sign(int64_t v) { return (v > 0) - (v < 0); }

/* One round: rows strings in 4 sinks, utf16 (even lengths, as UTF-16
** bytes are) or not. */
static void round_of(sqlite3 *db, int utf16, int rows, int r) {
  enum { SINKS = 4 };
  str *row = malloc(sizeof(str) * (size_t)rows);
  uint32_t *lid = malloc(sizeof(uint32_t) * (size_t)rows);
  ga_dict_local *loc[SINKS];
  uint32_t *map[SINKS];
  ga_dict *d = ga_dict_new();
  for (int k = 0; k < SINKS; k++)
    loc[k] = ga_dict_local_new();
  for (int i = 0; i < rows; i++) {
    unsigned char buf[4096];
    int n = rand_bytes(buf, sizeof buf);
    if (utf16)
      n &= ~1;
    row[i].p = malloc((size_t)n + 1);
    memcpy(row[i].p, buf, (size_t)n);
    row[i].n = n;
    int rc = ga_dict_local_intern(loc[i % SINKS], row[i].p, n, &lid[i]);
    check(rc == GA_OK, "intern", r);
  }
  /* merged in a random order of sinks, as pieces end */
  int order[SINKS] = {0, 1, 2, 3};
  for (int k = SINKS - 1; k > 0; k--) {
    int j = (int)(rnd() % (uint64_t)(k + 1)), t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
  for (int o = 0; o < SINKS; o++) {
    int k = order[o];
    map[k] = malloc(sizeof(uint32_t) * (ga_dict_local_count(loc[k]) + 1));
    check(ga_dict_merge(d, loc[k], map[k]) == GA_OK, "merge", r);
  }
  check(ga_dict_seal(d) == GA_OK, "seal", r);
  /* the reference: sorted distinct rows */
  str *ref = malloc(sizeof(str) * (size_t)rows);
  memcpy(ref, row, sizeof(str) * (size_t)rows);
  qsort(ref, (size_t)rows, sizeof(str), str_cmp);
  int nd = 0;
  for (int i = 0; i < rows; i++)
    if (nd == 0 || str_cmp(&ref[nd - 1], &ref[i]))
      ref[nd++] = ref[i];
  check(ga_dict_count(d) == nd, "distinct values", r);
  /* every row back to its bytes; codes are the reference's ranks */
  for (int i = 0; i < rows; i++) {
    uint32_t code = ga_dict_code(d, map[i % SINKS][lid[i]]);
    const void *p;
    int n;
    ga_dict_value(d, code, &p, &n);
    check(n == row[i].n && (n == 0 || !memcmp(p, row[i].p, (size_t)n)),
          "row -> code -> its bytes", i);
    str *at = bsearch(&row[i], ref, (size_t)nd, sizeof(str), str_cmp);
    check(at && at - ref == (ptrdiff_t)code, "code = BINARY rank", i);
  }
  /* codes compare as SQLite compares the values */
  for (int t = 0; t < 3000; t++) {
    int a = (int)(rnd() % (uint64_t)rows), b = (int)(rnd() % (uint64_t)rows);
    if (t % 3 == 0)
      b = (a + 1) % rows;
    int ca = (int)ga_dict_code(d, map[a % SINKS][lid[a]]);
    int cb = (int)ga_dict_code(d, map[b % SINKS][lid[b]]);
    check(sign(ca - cb) == sqlite_cmp(db, utf16, &row[a], &row[b]),
          utf16 ? "codes sort as SQLite's BINARY (UTF-16le)"
                : "codes sort as SQLite's BINARY (UTF-8)",
          t);
  }
  /* insertion points of present and absent probes */
  for (int t = 0; t < 3000; t++) {
    unsigned char buf[4096];
    str probe;
    if (t % 2) {
      probe = row[rnd() % (uint64_t)rows];
    } else {
      probe.p = buf;
      probe.n = rand_bytes(buf, sizeof buf);
      if (utf16)
        probe.n &= ~1;
    }
    int found, want_found = 0;
    int64_t at = ga_dict_find(d, probe.p, probe.n, &found), below = 0;
    for (int i = 0; i < nd; i++) {
      int c = str_cmp(&ref[i], &probe);
      below += c < 0;
      want_found |= c == 0;
    }
    check(at == below && found == want_found, "find: insertion point", t);
  }
  int64_t sum = 0;
  for (int i = 0; i < nd; i++)
    sum += ref[i].n;
  check(ga_dict_bytes(d) > sum, "bytes counted", r);
  for (int k = 0; k < SINKS; k++) {
    ga_dict_local_free(loc[k]);
    free(map[k]);
  }
  for (int i = 0; i < rows; i++)
    free(row[i].p);
  free(row);
  free(ref);
  free(lid);
  ga_dict_free(d);
}

/* 1e6 distinct values in two sinks (and a clear between pieces). */
static void many(void) {
  ga_dict_local *l = ga_dict_local_new();
  ga_dict *d = ga_dict_new();
  uint32_t *map = malloc(sizeof(uint32_t) * 500001);
  int ok = 1;
  for (int half = 0; half < 2; half++) {
    ga_dict_local_clear(l);
    for (int i = 0; i < 500000; i++) {
      char buf[32];
      int n = snprintf(buf, sizeof buf, "v%07d", 2 * i + half);
      uint32_t id;
      ok &= ga_dict_local_intern(l, buf, n, &id) == GA_OK && id == (uint32_t)i;
    }
    ok &= ga_dict_merge(d, l, map) == GA_OK;
  }
  check(ok, "1e6 values interned and merged", 0);
  check(ga_dict_seal(d) == GA_OK && ga_dict_count(d) == 1000000,
        "1e6 distinct values", 0);
  int sorted = 1;
  for (uint32_t c = 1; c < 1000000; c += 997) {
    const void *a, *b;
    int na, nb;
    ga_dict_value(d, c - 1, &a, &na);
    ga_dict_value(d, c, &b, &nb);
    char want[32];
    snprintf(want, sizeof want, "v%07u", c);
    sorted &= ga_dict_cmp(a, na, b, nb) < 0 && nb == 8 && !memcmp(b, want, 8);
  }
  check(sorted, "1e6 values in order", 0);
  free(map);
  ga_dict_local_free(l);
  ga_dict_free(d);
}

int main(void) {
  sqlite3 *db8, *db16;
  sqlite3_open(":memory:", &db8);
  sqlite3_open(":memory:", &db16);
  sqlite3_exec(db16, "PRAGMA encoding = 'UTF-16le'", 0, 0, 0);
  int sizes[] = {1, 2, 50, 1000, 20000};
  for (int r = 0; r < 10; r++)
    round_of(r % 2 ? db16 : db8, r % 2, sizes[r / 2], r);
  many();
  sqlite3_close_v2(db8);
  sqlite3_close_v2(db16);
  printf("RESULT cache_dict: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  return failed ? 1 : 0;
}
