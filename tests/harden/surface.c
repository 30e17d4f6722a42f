/*
** surface.c — interrupts mid-aggregate, checked for leaks (make test-asan,
** test-valgrind; tests/harden/surface.py covers the rest of the SQL surface).
**
** For each query (sums, max/min, text, sliding and history windows, GROUP
** BY, gpu_matadd) and each N in a range: a progress handler interrupts the
** statement after N callbacks.  The statement must end in SQLITE_INTERRUPT
** (or complete with the right answer when N is past its end); the
** connection must then still answer correctly; and after sqlite3_close,
** sqlite3_memory_used() must be back where it was before sqlite3_open.
** Then sqlite3_interrupt() from another thread at random moments.
** Ends with "N passed, N failed".
*/
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "harden.h"

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
      fflush(stdout);                                                          \
    }                                                                          \
  } while (0)

static const char *setup =
    "CREATE TABLE t(g, x);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE "
    "i<30000)"
    " INSERT INTO t SELECT i % 13, CASE WHEN i % 4 = 0 THEN i * 0.5 WHEN i % "
    "97 = 0 THEN"
    " 'v' || i ELSE i END FROM c;"
    "CREATE TABLE a(i INTEGER, j INTEGER, v REAL);"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i<39)"
    " INSERT INTO a SELECT x.i, y.i, x.i - y.i * 0.5 FROM c x, c y;"
    "CREATE VIEW tv AS SELECT g, x FROM t WHERE g < 7;";

static const char *queries[] = {
    "SELECT gpu_sum(x), gpu_total(x), gpu_avg(x) FROM t",
    "SELECT gpu_max(x), gpu_min(x) FROM t",
    "SELECT g, gpu_sum(x), gpu_max(x) FROM t GROUP BY g",
    "SELECT gpu_sum(x) OVER (ORDER BY rowid ROWS BETWEEN 10 PRECEDING AND "
    "CURRENT ROW) FROM t",
    "SELECT gpu_max(x) OVER (ORDER BY rowid ROWS BETWEEN 10 PRECEDING AND "
    "CURRENT ROW) FROM t",
    "SELECT gpu_min(x) OVER (ORDER BY rowid ROWS BETWEEN CURRENT ROW AND "
    "UNBOUNDED FOLLOWING) FROM t",
    "SELECT count(*), gpu_sum(v) FROM gpu_matadd('a', 'a')",
};
#define NQ ((int)(sizeof(queries) / sizeof(queries[0])))

static char dbpath[256];
static int budget;
static int progress(void *p) {
  (void)p;
  return --budget <= 0;
}

static void test_progress(void) {
  for (int q = 0; q < NQ; q++) {
    /* reference */
    sqlite3 *db = open_ga(dbpath, 0);
    hstr want = {0}, got = {0};
    char *err = NULL;
    int rc = run_sql(db, queries[q], &want, &err);
    CHECK(rc == SQLITE_OK, "query %d: %s", q, err ? err : "");
    free(err);
    sqlite3_close(db);
    int ninterrupted = 0, ncomplete = 0;
    for (int n = 1; n < 1000000; n = n < 8 ? n + 1 : n * 2) {
      sqlite3_int64 m0 = sqlite3_memory_used();
      db = open_ga(dbpath, 0);
      budget = n;
      sqlite3_progress_handler(db, 50, progress, NULL);
      hs_reset(&got);
      err = NULL;
      rc = run_sql(db, queries[q], &got, &err);
      sqlite3_progress_handler(db, 0, NULL, NULL);
      if (rc == SQLITE_INTERRUPT) {
        ninterrupted++;
        /* "interrupted", or gpu_matadd's "gpu_matadd: reading table a:
         * interrupted" */
        size_t el = err ? strlen(err) : 0;
        CHECK(el >= 11 && !strcmp(err + el - 11, "interrupted"),
              "query %d n %d: message %s", q, n, err ? err : "");
      } else {
        ncomplete++;
        CHECK(rc == SQLITE_OK && got.p && !strcmp(got.p, want.p),
              "query %d n %d: rc %d (%s), not SQLITE_INTERRUPT or the answer",
              q, n, rc, err ? err : "");
      }
      free(err);
      err = NULL;
      hs_reset(&got);
      rc = run_sql(db, queries[q], &got, &err); /* still usable */
      CHECK(rc == SQLITE_OK && !strcmp(got.p, want.p),
            "query %d n %d: after interrupt: %s", q, n,
            err ? err : "wrong answer");
      free(err);
      CHECK(sqlite3_close(db) == SQLITE_OK, "close");
      CHECK(sqlite3_memory_used() == m0, "query %d n %d: leak of %lld bytes", q,
            n, (long long)(sqlite3_memory_used() - m0));
      if (ncomplete >= 2)
        break;
    }
    CHECK(ninterrupted > 0, "query %d: never interrupted", q);
    printf("progress interrupt, query %d: %d interrupted, %d completed\n", q,
           ninterrupted, ncomplete);
    hs_free(&want);
    hs_free(&got);
  }
}

/* gpu_query's planning runs its own statements on the caller's connection
** (the table's schema, its columns, a view's text): an interrupt between any
** two of their steps must free what the earlier steps resolved.  The sweep
** above fires every 50 steps and lands in planning by luck; here the handler
** fires on every step, for every budget up to the first answer. */
static const char *plan_queries[] = {
    "SELECT * FROM gpu_query_json('SELECT g, sum(x) FROM t GROUP BY g')",
    "SELECT * FROM gpu_query_json('SELECT count(*), max(x) FROM tv')",
    "SELECT * FROM gpu_query_json('WITH w AS (SELECT g, x FROM t) SELECT g, "
    "min(x) FROM w GROUP BY g')",
};
#define NPQ ((int)(sizeof(plan_queries) / sizeof(plan_queries[0])))

static void test_progress_planning(void) {
  for (int q = 0; q < NPQ; q++) {
    sqlite3 *db = open_ga(dbpath, 0);
    hstr want = {0}, got = {0};
    char *err = NULL;
    int rc = run_sql(db, plan_queries[q], &want, &err);
    CHECK(rc == SQLITE_OK, "planning %d: %s", q, err ? err : "");
    free(err);
    sqlite3_close(db);
    int ninterrupted = 0, done = 0;
    for (int n = 1; n < 100000000 && !done; n += 1 + n / (n < 5000 ? 64 : 4)) {
      sqlite3_int64 m0 = sqlite3_memory_used();
      db = open_ga(dbpath, 0);
      budget = n;
      sqlite3_progress_handler(db, 1, progress, NULL);
      hs_reset(&got);
      err = NULL;
      rc = run_sql(db, plan_queries[q], &got, &err);
      sqlite3_progress_handler(db, 0, NULL, NULL);
      if (rc == SQLITE_INTERRUPT)
        ninterrupted++;
      else {
        done = 1;
        CHECK(rc == SQLITE_OK && got.p && !strcmp(got.p, want.p),
              "planning %d n %d: rc %d (%s), not SQLITE_INTERRUPT or the "
              "answer",
              q, n, rc, err ? err : "");
      }
      free(err);
      CHECK(sqlite3_close(db) == SQLITE_OK, "close");
      CHECK(sqlite3_memory_used() == m0, "planning %d n %d: leak of %lld bytes",
            q, n, (long long)(sqlite3_memory_used() - m0));
    }
    CHECK(done && ninterrupted > 0, "planning %d: %d interrupted, done %d", q,
          ninterrupted, done);
    printf("progress interrupt, planning %d: %d budgets interrupted\n", q,
           ninterrupted);
    hs_free(&want);
    hs_free(&got);
  }
}

typedef struct {
  sqlite3 *db;
  long usec;
} irq_arg;

static void *irq_thread(void *p) {
  irq_arg *a = p;
  usleep((useconds_t)a->usec);
  sqlite3_interrupt(a->db);
  return NULL;
}

static void test_thread_interrupt(void) {
  uint64_t seed = 12345;
  int seen = 0;
  for (int k = 0; k < 24; k++) {
    sqlite3_int64 m0 = sqlite3_memory_used();
    sqlite3 *db = open_ga(dbpath, 0);
    char *err = NULL;
    irq_arg a = {db, (long)(h_rnd(&seed) % 20000)};
    pthread_t th;
    pthread_create(&th, NULL, irq_thread, &a);
    const char *q = k % 2 ? queries[k % NQ]
                          : "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT "
                            "i+1 FROM c WHERE "
                            "i<400000) SELECT gpu_sum(i), gpu_max(i), "
                            "gpu_min(i * 0.5) FROM c";
    int rc = run_sql(db, q, NULL, &err);
    pthread_join(th, NULL);
    seen += rc == SQLITE_INTERRUPT;
    CHECK(rc == SQLITE_OK || rc == SQLITE_INTERRUPT,
          "thread interrupt %d: rc %d %s", k, rc, err ? err : "");
    free(err);
    CHECK(sqlite3_close(db) == SQLITE_OK, "close");
    CHECK(sqlite3_memory_used() == m0,
          "thread interrupt %d: leak of %lld bytes", k,
          (long long)(sqlite3_memory_used() - m0));
  }
  CHECK(seen > 0, "sqlite3_interrupt never landed");
  printf("thread interrupt: %d of 24 interrupted\n", seen);
}

int main(void) {
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
  sqlite3_initialize();
  snprintf(dbpath, sizeof dbpath, "%s/gpuagg_surface_%d.db",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  unlink(dbpath);
  /* warm-up: SQLite's one-time allocations */
  sqlite3 *db = open_ga(dbpath, 0);
  run_sql(db, setup, NULL, NULL);
  for (int q = 0; q < NQ; q++)
    run_sql(db, queries[q], NULL, NULL);
  sqlite3_close(db);
  test_progress();
  test_progress_planning();
  test_thread_interrupt();
  unlink(dbpath);
  printf("RESULT surface: %d passed, %d failed, 0 skipped\n", passed, failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
