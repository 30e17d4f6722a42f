/*
** harden.h — helpers shared by the C harnesses of tests/harden/.
**
** The harnesses link the extension's objects built with -DSQLITE_CORE and
** register it with sqlite3_gpuagg_init() on each connection, so the engine's
** sqlite3_malloc64 is libsqlite3's own (what oom.c's failing allocator
** wraps) and no dlopen is needed.
*/
#ifndef GA_HARDEN_H
#define GA_HARDEN_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

struct sqlite3_api_routines;
int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                        const struct sqlite3_api_routines *pApi);

/* A growable string. */
typedef struct hstr {
  char *p;
  size_t n, cap;
} hstr;

static inline void hs_add(hstr *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = s->cap - s->n;
    va_start(ap, fmt);
    int k = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0)
      abort();
    if (s->p && (size_t)k < room) {
      s->n += (size_t)k;
      return;
    }
    size_t ncap = s->cap ? s->cap * 2 : 256;
    while (ncap < s->n + (size_t)k + 1)
      ncap *= 2;
    char *np = realloc(s->p, ncap); /* libc: not counted by SQLite */
    if (!np)
      abort();
    s->p = np;
    s->cap = ncap;
  }
}
static inline void hs_reset(hstr *s) {
  s->n = 0;
  if (s->p)
    s->p[0] = 0;
}
static inline void hs_free(hstr *s) {
  free(s->p);
  memset(s, 0, sizeof(*s));
}

/* One value as "type:value" with reals as exact hex. */
static inline void hs_value(hstr *s, sqlite3_stmt *st, int col) {
  switch (sqlite3_column_type(st, col)) {
  case SQLITE_INTEGER:
    hs_add(s, "i:%lld", (long long)sqlite3_column_int64(st, col));
    break;
  case SQLITE_FLOAT:
    hs_add(s, "r:%a", sqlite3_column_double(st, col));
    break;
  case SQLITE_TEXT: {
    const unsigned char *t = sqlite3_column_text(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (!t) { /* out of memory converting */
      hs_add(s, "t:<nomem>");
      break;
    }
    hs_add(s, "t:%d:", n);
    for (int i = 0; i < n; i++)
      hs_add(s, "%02x", t[i]);
    break;
  }
  case SQLITE_BLOB: {
    const unsigned char *b = sqlite3_column_blob(st, col);
    int n = sqlite3_column_bytes(st, col);
    hs_add(s, "b:%d:", n);
    for (int i = 0; b && i < n; i++)
      hs_add(s, "%02x", b[i]);
    break;
  }
  default:
    hs_add(s, "null");
  }
}

/* Run every statement of sql; the rows of all of them go into out.  Returns
** the first error code (SQLITE_OK when none); *err gets sqlite3_errmsg
** copied (libc) when it fails. */
static inline int run_sql(sqlite3 *db, const char *sql, hstr *out, char **err) {
  const char *tail = sql;
  int rc = SQLITE_OK;
  if (err)
    *err = NULL;
  while (tail && *tail) {
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(db, tail, -1, &st, &tail);
    if (rc != SQLITE_OK)
      break;
    if (!st)
      continue; /* whitespace or comment */
    int ncol = sqlite3_column_count(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (out) {
        for (int c = 0; c < ncol; c++) {
          if (c)
            hs_add(out, "|");
          hs_value(out, st, c);
        }
        hs_add(out, "\n");
      }
    }
    if (rc == SQLITE_DONE)
      rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
      if (err)
        *err = strdup(sqlite3_errmsg(db));
      sqlite3_finalize(st);
      return rc;
    }
    rc = sqlite3_finalize(st);
    if (rc != SQLITE_OK)
      break;
  }
  if (rc != SQLITE_OK && err)
    *err = strdup(sqlite3_errmsg(db));
  return rc;
}

/* Open a connection with gpuagg registered, or exit. */
static inline sqlite3 *open_ga(const char *path, int flags) {
  sqlite3 *db = NULL;
  char *err = NULL;
  if (sqlite3_open_v2(
          path, &db, flags ? flags : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
          NULL) != SQLITE_OK) {
    fprintf(stderr, "open %s: %s\n", path, db ? sqlite3_errmsg(db) : "?");
    exit(2);
  }
  if (sqlite3_gpuagg_init(db, &err, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite3_gpuagg_init: %s\n", err ? err : "?");
    exit(2);
  }
  return db;
}

/* xorshift64* */
static inline uint64_t h_rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Remove a database file with its -wal and -shm files. */
static inline void h_unlink_db(const char *path) {
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
}

/* ---- the threads harnesses' table (aggregate_threads.c, cache_threads.c) */

/* Database k (0: WAL, 1: rollback journal) of harness `name`, in $TMPDIR,
** made anew; its file name goes to path.  t(id INTEGER PRIMARY KEY,
** x INTEGER, g INTEGER) holds rows 1..nrows with x = (i * 7919) % 100003 -
** 50000 and g = i % groups.  Adds what the writers' commits keep to
** want_sum (sum(x)), want_grows[g] (rows of group g) and want_gsum[g] (its
** sum). */
static inline void h_threads_table(char *path, size_t npath, const char *name,
                                   int k, int nrows, int groups,
                                   int64_t *want_sum, int64_t *want_grows,
                                   int64_t *want_gsum) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(path, npath, "%s/gpuagg_%s_%d_%d.db", tmp, name, (int)getpid(), k);
  h_unlink_db(path);
  sqlite3 *db = open_ga(path, 0);
  char sql[512];
  snprintf(
      sql, sizeof sql,
      "PRAGMA journal_mode=%s;"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER, g INTEGER, lbl TEXT);"
      "BEGIN;"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
      "WHERE i < %d) INSERT INTO t SELECT i, (i * 7919) %% 100003 - "
      "50000, i %% %d, 'g' || (i %% %d) FROM c; COMMIT;",
      k ? "delete" : "wal", nrows, groups, groups);
  char *err = NULL;
  if (run_sql(db, sql, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "setup: %s\n", err ? err : "?");
    exit(2);
  }
  for (int i = 1; i <= nrows; i++) {
    int64_t x = (int64_t)((i * 7919) % 100003) - 50000;
    *want_sum += x;
    want_grows[i % groups]++;
    want_gsum[i % groups] += x;
  }
  sqlite3_close(db);
}

/* The writers' first statements: "BEGIN IMMEDIATE;" and d moved from a
** row of group g to another of g (sum(x) and each group's sum stay), the
** rows chosen among the first and last 50 of g.  *off gets the offset. */
static inline int h_move_x_sql(char *sql, size_t n, uint64_t *seed, int groups,
                               int *off) {
  int g = (int)(h_rnd(seed) % (uint64_t)groups);
  int d = (int)(h_rnd(seed) % 1000) + 1;
  *off = (int)(h_rnd(seed) % 50);
  return snprintf(sql, n,
                  "BEGIN IMMEDIATE;"
                  "UPDATE t SET x = x - %d WHERE id = (SELECT id FROM t WHERE "
                  "g = %d ORDER BY id LIMIT 1 OFFSET %d);"
                  "UPDATE t SET x = x + %d WHERE id = (SELECT id FROM t WHERE "
                  "g = %d ORDER BY id DESC LIMIT 1 OFFSET %d);",
                  d, g, *off, d, g, *off);
}

/* A writer thread's loop: until *stop, one transaction that make_sql
** writes (a ROLLBACK after a failure), then the pause in microseconds that
** it returned.  seed: the writer's own random state. */
static inline void
h_writer_loop(const char *path, const int *stop, uint64_t seed,
              unsigned (*make_sql)(char *sql, size_t n, uint64_t *seed)) {
  sqlite3 *db = NULL;
  sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
  sqlite3_busy_timeout(db, 20000);
  while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
    char sql[768];
    unsigned pause = make_sql(sql, sizeof sql, &seed);
    if (run_sql(db, sql, NULL, NULL) != SQLITE_OK)
      run_sql(db, "ROLLBACK", NULL, NULL);
    usleep(pause);
  }
  sqlite3_close(db);
}

#endif
