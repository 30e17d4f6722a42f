/*
** newsqlite.c — gpu_aggregate under a newer SQLite than the system's 3.40:
** a host program linked with an amalgamation (SQLITE_AMALGAMATION, by
** default the one better-sqlite3 ships, tests/hosts/node/node_modules/...)
** that loads ./libgpuagg.so as an extension, as an application would
** (make test-aggregate-newsqlite).
**
** Checks:
**   1. The extension finds sqlite3_is_interrupted at run time (3.41+): the
**      last_scan of gpuagg_info() says "sqlite3_is_interrupted".
**   2. An interrupt from another thread stops a parallel gpu_aggregate
**      promptly with SQLITE_INTERRUPT; the next call answers right.
**   3. The parallel answer equals the serial one (threads = 1), and the
**      path is parallel.
** Prints "RESULT newsqlite: ..." and "N passed, N failed".
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3.h"

static int passed, failed;

static void check(const char *name, int ok, const char *detail) {
  if (ok)
    passed++;
  else {
    failed++;
    printf("FAIL [newsqlite] %s: %s\n", name, detail);
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The first column of sql's first row as text into buf. */
static int text_of(sqlite3 *db, const char *sql, char *buf, size_t n) {
  sqlite3_stmt *st;
  buf[0] = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const unsigned char *z = sqlite3_column_text(st, 0);
      snprintf(buf, n, "%s", z ? (const char *)z : "NULL");
      rc = SQLITE_OK;
    }
    int frc = sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
      rc = frc;
  }
  if (rc != SQLITE_OK)
    snprintf(buf, n, "error %d: %s", rc, sqlite3_errmsg(db));
  return rc;
}

static sqlite3 *db;
static const char *slow_sql =
    "SELECT count || ' ' || sum FROM gpu_aggregate('t', "
    "'length(printf(''%.40f %.40f'', x, x / 3))')";
static int slow_rc;
static double slow_end;

static void *slow(void *arg) {
  char buf[256];
  (void)arg;
  slow_rc = text_of(db, slow_sql, buf, sizeof buf);
  slow_end = now();
  return NULL;
}

int main(int argc, char **argv) {
  const char *lib = argc > 1 ? argv[1] : "./libgpuagg";
  char path[256], buf[512], serial[256], par[256], *err = NULL;
  snprintf(path, sizeof path, "%s/gpuagg_newsqlite_%d.db",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  unlink(path);
  printf("newsqlite: SQLite %s\n", sqlite3_libversion());
  if (sqlite3_open(path, &db) != SQLITE_OK)
    return 2;
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, lib, NULL, &err) != SQLITE_OK) {
    printf("FAIL [newsqlite] load: %s\n", err ? err : "?");
    printf("RESULT newsqlite: 0 passed, 1 failed, 0 skipped\n");
    return 1;
  }
  sqlite3_exec(db,
               "CREATE TABLE t(x REAL, s TEXT COLLATE NOCASE);"
               "BEGIN; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
               "FROM c WHERE i < 200000) INSERT INTO t SELECT i * 0.25, "
               "char(65 + i % 7 + (i % 2) * 32) FROM c; COMMIT;"
               "SELECT gpuagg_config('scan_min_rows', 0);",
               NULL, NULL, NULL);

  /* 3: parallel = serial, grouped by a NOCASE column */
  const char *q = "SELECT group_concat(grp || ':' || rows || ':' || sum, ',') "
                  "FROM gpu_aggregate('t', 'x', 'x > 10', 's')";
  text_of(db, "SELECT gpuagg_config('threads', 1)", buf, sizeof buf);
  text_of(db, q, serial, sizeof serial);
  text_of(db, "SELECT gpuagg_config('threads', 3)", buf, sizeof buf);
  text_of(db, q, par, sizeof par);
  check("parallel_equals_serial", !strcmp(serial, par) && strlen(par) > 10,
        par);
  text_of(db, "SELECT json_extract(gpuagg_info(), '$.last_scan.path')", buf,
          sizeof buf);
  check("path_parallel", !strcmp(buf, "parallel"), buf);
  /* 1: the native interrupt check */
  text_of(db, "SELECT json_extract(gpuagg_info(), '$.last_scan.interrupt')",
          buf, sizeof buf);
  check("finds_sqlite3_is_interrupted",
        sqlite3_libversion_number() < 3041000 ||
            !strcmp(buf, "sqlite3_is_interrupted"),
        buf);

  /* 2: interrupt a parallel scan from another thread */
  double t0 = now();
  text_of(db, slow_sql, buf, sizeof buf);
  double full = now() - t0;
  char want[256];
  snprintf(want, sizeof want, "%s", buf);
  pthread_t th;
  pthread_create(&th, NULL, slow, NULL);
  usleep((useconds_t)(full * 1e6 / 5));
  double ti = now();
  sqlite3_interrupt(db);
  pthread_join(th, NULL);
  snprintf(buf, sizeof buf,
           "rc %d, stopped %.3f s after the interrupt (full "
           "run %.3f s)",
           slow_rc, slow_end - ti, full);
  printf("newsqlite: %s\n", buf);
  check("interrupted", slow_rc == SQLITE_INTERRUPT, buf);
  check("interrupted_promptly", slow_end - ti < full / 2 + 0.05, buf);
  text_of(db, slow_sql, buf, sizeof buf);
  check("then_right", !strcmp(buf, want), buf);
  sqlite3_close(db);
  unlink(path);
  printf("RESULT newsqlite: %d passed, %d failed, 0 skipped\n", passed, failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
