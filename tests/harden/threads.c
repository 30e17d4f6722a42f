/*
** threads.c — 8 threads, each with its own connection, run gpu_sum /
** gpu_max / gpu_min / gpu_total over a shared file database and over private
** (TEMP) tables, many times, concurrently (make test-tsan; also under ASan
** and valgrind).  Every answer is compared with an exact expectation
** computed here (__int128 for integer totals; the reals are multiples of
** 0.25 whose sums are exact in a double).  Threads also close and reopen
** their connection now and then, so registration, the connection list and
** the pool trim at last close race with running aggregates.
**
** Each thread also runs a gpu_query star join at 2 threads of its own:
** its dimension is built once per call and probed by that call's workers
** (engine/scan/dims.h), so TSan watches the shared build and its probes.
**
** A watchdog fails the run if the threads do not finish (deadlock).
** HARDEN_QUICK=1 runs fewer iterations (valgrind); HARDEN_GPU=1 forces
** every aggregate onto the GPU (make test-threads-gpu).
** Prints "RESULT threads: ..." and "N passed, N failed".
*/
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "harden.h"

#define NTHREADS 8
#define NBIG 20000 /* > 2 CPU chunks of 8192 */
#define NPRIV 9000

static char dbpath[256];
static int iters = 30;
static __int128 big_sum;
static long long big_max, big_min;
static int fails[NTHREADS], checks[NTHREADS];
static long long join_want; /* sum(jf.v * jd.g) over jd.g < 3 */

static long long big_val(long long i) {
  if (i == 1)
    return INT64_MAX;
  if (i == 2)
    return INT64_MIN + 1;
  return (long long)((uint64_t)(i * 2654435761ull) % (1ull << 40)) -
         (1ll << 39);
}

#define EXPECT(t, cond, ...)                                                   \
  do {                                                                         \
    checks[t]++;                                                               \
    if (!(cond)) {                                                             \
      if (fails[t]++ < 5) {                                                    \
        printf("FAIL thread %d: ", t);                                         \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
        fflush(stdout);                                                        \
      }                                                                        \
    }                                                                          \
  } while (0)

static sqlite3 *thread_open(int t) {
  sqlite3 *db = open_ga(dbpath, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  char sql[1024], *err = NULL;
  sqlite3_busy_timeout(db, 10000);
  char *jerr = NULL;
  if (run_sql(db,
              "SELECT gpuagg_config('threads', 2);"
              "SELECT gpuagg_config('scan_min_rows', 0);"
              "CREATE VIRTUAL TABLE temp.jq USING gpu_query('SELECT "
              "sum(jf.v * jd.g) AS s FROM jf JOIN jd ON jf.k = jd.k WHERE "
              "jd.g < 3')",
              NULL, &jerr) != SQLITE_OK) {
    fprintf(stderr, "thread %d: join setup: %s\n", t, jerr ? jerr : "?");
    exit(2);
  }
  free(jerr);
  /* the private table: reals (t+1) * i / 4, and texts */
  snprintf(
      sql, sizeof sql,
      "CREATE TEMP TABLE priv(k INTEGER PRIMARY KEY, x REAL, s TEXT);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<%d)"
      " INSERT INTO priv SELECT i, %d * i / 4.0, printf('t%d-%%05d', i) FROM "
      "c;",
      NPRIV, t + 1, t);
  if (run_sql(db, sql, NULL, &err) != SQLITE_OK) {
    printf("FAIL thread %d: setup: %s\n", t, err ? err : "?");
    fails[t]++;
    free(err);
    err = NULL;
  }
  /* HARDEN_GPU=1 (make test-threads-gpu, GPU machine): every aggregate on
  ** the GPU, small chunks, so threads share the streams of the process */
  if (getenv("HARDEN_GPU") && run_sql(db,
                                      "SELECT gpuagg_config('device','gpu'), "
                                      "gpuagg_config('cpu_max_rows',0), "
                                      "gpuagg_config('chunk_bytes',65536);",
                                      NULL, &err) != SQLITE_OK) {
    printf("FAIL thread %d: config: %s\n", t, err ? err : "?");
    fails[t]++;
    free(err);
  }
  return db;
}

static int64_t q_int(sqlite3 *db, const char *sql, int *type) {
  sqlite3_stmt *st;
  int64_t v = 0;
  *type = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return 0;
  if (sqlite3_step(st) == SQLITE_ROW) {
    *type = sqlite3_column_type(st, 0);
    v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  sqlite3 *db = thread_open(t);
  hstr out = {0};
  char want[512];
  double pn = (double)NPRIV;
  double psum =
      (t + 1) * pn * (pn + 1) / 8.0; /* exact: a multiple of 1/8 < 2^53 */
  for (int it = 0; it < iters; it++) {
    int ty;
    char *err = NULL;
    /* shared table: exact integer total, max, min */
    int64_t s = q_int(db, "SELECT gpu_sum(x) FROM big", &ty);
    EXPECT(t, ty == SQLITE_INTEGER && s == (int64_t)big_sum,
           "gpu_sum(big) = %lld type %d", (long long)s, ty);
    int64_t mx = q_int(db, "SELECT gpu_max(x) FROM big", &ty);
    EXPECT(t, ty == SQLITE_INTEGER && mx == big_max, "gpu_max(big) = %lld",
           (long long)mx);
    int64_t mn = q_int(db, "SELECT gpu_min(x) FROM big", &ty);
    EXPECT(t, ty == SQLITE_INTEGER && mn == big_min, "gpu_min(big) = %lld",
           (long long)mn);
    /* private table: reals, texts, a window */
    hs_reset(&out);
    int rc = run_sql(
        db,
        "SELECT gpu_sum(x), gpu_total(x), gpu_max(x), gpu_min(x), gpu_max(s), "
        "gpu_min(s) FROM priv",
        &out, &err);
    snprintf(want, sizeof want, "r:%a|r:%a|r:%a|r:%a", psum, psum,
             (t + 1) * pn / 4.0, (t + 1) / 4.0);
    for (int k = 0; k < 2; k++) {
      char ts[32];
      size_t n = strlen(want);
      snprintf(ts, sizeof ts, "t%d-%05d", t, k ? 1 : NPRIV);
      n += (size_t)snprintf(want + n, sizeof want - n,
                            "|t:%d:", (int)strlen(ts));
      for (int i = 0; ts[i]; i++, n += 2)
        snprintf(want + n, 3, "%02x", (unsigned char)ts[i]);
    }
    strcat(want, "\n");
    EXPECT(t, rc == SQLITE_OK && out.p && !strcmp(out.p, want),
           "priv: rc %d %s got %s want %s", rc, err ? err : "",
           out.p ? out.p : "", want);
    free(err);
    err = NULL;
    /* a sliding window: sum of 3 consecutive (t+1)*i/4 = (t+1)*(3k-3)/4 */
    int64_t bad = q_int(
        db,
        "SELECT count(*) FROM (SELECT k, gpu_sum(x) OVER (ORDER BY k ROWS "
        "BETWEEN 2 PRECEDING AND CURRENT ROW) AS w, gpu_max(x) OVER (ORDER BY "
        "k "
        "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM priv WHERE k <= "
        "2000) "
        "WHERE k >= 3 AND (w <> (SELECT x FROM priv p WHERE p.k = 1) * (3 * k "
        "- 3) "
        "OR m <> (SELECT x FROM priv p WHERE p.k = 1) * k)",
        &ty);
    EXPECT(t, ty == SQLITE_INTEGER && bad == 0, "window: %lld wrong rows",
           (long long)bad);
    /* a star join on the probe path (engine/scan/dims.h) */
    int64_t js = q_int(db, "SELECT s FROM temp.jq", &ty);
    EXPECT(t, ty == SQLITE_INTEGER && js == join_want, "join: %lld want %lld",
           (long long)js, join_want);
    int64_t probed = q_int(db,
                           "SELECT gpuagg_info() LIKE "
                           "'%\"probe\":{\"used\":true%'",
                           &ty);
    EXPECT(t, probed == 1, "join: the probe path was not taken");
    /* now and then: close and reopen (registration, pool trim) */
    if (it % 7 == 6) {
      if (sqlite3_close(db) != SQLITE_OK)
        EXPECT(t, 0, "close failed");
      db = thread_open(t);
    }
  }
  hs_free(&out);
  sqlite3_close(db);
  return NULL;
}

/* the churn thread: connections open and close all the while, so the
** process's cache count (engine/cache/cache.c g_mu) changes under the
** workers' gpuagg_info() (planner/cache_plan.c ga_cache_json).  It runs
** nothing on them: a call of its own would take the cache's locks after
** each change, and order it before the workers' reads for TSan */
static int workers_done, churn_opens;

static void *churn(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE)) {
    sqlite3 *db = open_ga(dbpath, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
    sqlite3_close(db);
    churn_opens++;
  }
  return NULL;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] =
      "FAIL threads: watchdog: not finished in time (deadlock?)\n"
      "0 passed, 1 failed\n";
  if (write(1, m, sizeof m - 1) < 0)
    _exit(3);
  _exit(3);
}

int main(void) {
  if (getenv("HARDEN_QUICK") && atoi(getenv("HARDEN_QUICK")))
    iters = 4;
  if (getenv("HARDEN_ITERS"))
    iters = atoi(getenv("HARDEN_ITERS"));
  int watchdog =
      getenv("HARDEN_WATCHDOG") ? atoi(getenv("HARDEN_WATCHDOG")) : 900;
  snprintf(dbpath, sizeof dbpath, "%s/gpuagg_threads_%d.db",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  unlink(dbpath);
  sqlite3 *db = open_ga(dbpath, 0);
  char *err = NULL;
  char sql[512];
  snprintf(
      sql, sizeof sql,
      "CREATE TABLE big(x INTEGER); BEGIN;"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<%d)"
      " INSERT INTO big SELECT NULL FROM c; COMMIT;",
      NBIG);
  if (run_sql(db, sql, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "setup: %s\n", err);
    return 2;
  }
  /* the star join's tables: jf.k = i % 16, jd.g = k % 4 */
  snprintf(
      sql, sizeof sql,
      "CREATE TABLE jd(k INTEGER PRIMARY KEY, g INTEGER);"
      "CREATE TABLE jf(k INTEGER, v INTEGER); BEGIN;"
      "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i<15)"
      " INSERT INTO jd SELECT i, i %% 4 FROM c;"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<%d)"
      " INSERT INTO jf SELECT i %% 16, i FROM c; COMMIT;",
      NBIG);
  if (run_sql(db, sql, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "setup: %s\n", err);
    return 2;
  }
  for (long long i = 1; i <= NBIG; i++)
    if ((i % 16) % 4 < 3)
      join_want += i * ((i % 16) % 4);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "UPDATE big SET x = ?1 WHERE rowid = ?2", -1, &st,
                     NULL);
  run_sql(db, "BEGIN", NULL, NULL);
  big_max = INT64_MIN;
  big_min = INT64_MAX;
  for (long long i = 1; i <= NBIG; i++) {
    long long v = big_val(i);
    big_sum += v;
    if (v > big_max)
      big_max = v;
    if (v < big_min)
      big_min = v;
    sqlite3_bind_int64(st, 1, v);
    sqlite3_bind_int64(st, 2, i);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  run_sql(db, "COMMIT", NULL, NULL);
  sqlite3_close(db);

  signal(SIGALRM, on_alarm);
  alarm((unsigned)watchdog);
  pthread_t th[NTHREADS], ch;
  if (pthread_create(&ch, NULL, churn, NULL)) {
    fprintf(stderr, "pthread_create failed\n");
    return 2;
  }
  for (int t = 0; t < NTHREADS; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t)) {
      fprintf(stderr, "pthread_create failed\n");
      return 2;
    }
  for (int t = 0; t < NTHREADS; t++)
    pthread_join(th[t], NULL);
  __atomic_store_n(&workers_done, 1, __ATOMIC_RELEASE);
  pthread_join(ch, NULL);
  alarm(0);
  unlink(dbpath);
  int passed = 0, failed = 0;
  for (int t = 0; t < NTHREADS; t++) {
    passed += checks[t] - fails[t];
    failed += fails[t];
  }
  printf("threads: %d threads x %d iterations, %d connections opened and "
         "closed beside them\n",
         NTHREADS, iters, churn_opens);
  printf("RESULT threads: %d passed, %d failed, 0 skipped\n", passed, failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
