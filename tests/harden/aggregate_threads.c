/*
** aggregate_threads.c — gpu_aggregate's worker threads under the sanitizers
** (make test-tsan, test-asan, test-valgrind).
**
** Two file databases, one in WAL and one in rollback-journal mode, each with
** a writer thread that commits in a loop while keeping invariants (x moves
** between two rows of one group, a row moves from the front to a new rowid
** past the end).  READERS threads, each with its own connection, run
** gpu_aggregate with 3 workers (so up to READERS * 3 worker threads and the
** pools of both files are shared), ungrouped and grouped, and gpu_query
** with two keys and four measures, and check every
** result against the invariants.  An interrupter thread calls
** sqlite3_interrupt on random readers (their answer may then be
** SQLITE_INTERRUPT, never a wrong one), and readers close and reopen their
** connections now and then (pool references and the last-close cleanup race
** with running scans).  A watchdog fails the run on a deadlock.
**
** HARDEN_QUICK=1: fewer iterations (valgrind).  Prints
** "RESULT aggregate_threads: ..." and "N passed, N failed".
*/
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "harden.h"

#define NROWS 6000
#define GROUPS 4
#define READERS 4

static char paths[2][256];
static int64_t want_sum[2], want_grows[2][GROUPS], want_gsum[2][GROUPS];
static int iters = 25, stop_writers;
static int fails[READERS], checks[READERS], interrupted[READERS],
    parallel[READERS];
static sqlite3 *reader_db[READERS];
static pthread_mutex_t reader_mu[READERS];

#define EXPECT(t, cond, ...)                                                   \
  do {                                                                         \
    checks[t]++;                                                               \
    if (!(cond) && fails[t]++ < 5) {                                           \
      printf("FAIL reader %d: ", t);                                           \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      fflush(stdout);                                                          \
    }                                                                          \
  } while (0)

/* x moves between two rows of one group; a row moves from the front to a
** new rowid past the end */
static unsigned writer_sql(char *sql, size_t n, uint64_t *seed) {
  int off, k = h_move_x_sql(sql, n, seed, GROUPS, &off);
  snprintf(sql + k, n - (size_t)k,
           "INSERT INTO t(x, g) SELECT x, g FROM t ORDER BY id LIMIT 1 "
           "OFFSET %d;"
           "DELETE FROM t WHERE id = (SELECT id FROM t ORDER BY id LIMIT 1 "
           "OFFSET %d);"
           "COMMIT;",
           off, off);
  return 500;
}

static void *writer(void *arg) {
  int k = (int)(intptr_t)arg;
  h_writer_loop(paths[k], &stop_writers, 0x9e3779b97f4a7c15ull + (uint64_t)k,
                writer_sql);
  return NULL;
}

static sqlite3 *reader_open(int t) {
  sqlite3 *db = open_ga(paths[t % 2], SQLITE_OPEN_READWRITE);
  sqlite3_busy_timeout(db, 20000);
  run_sql(db,
          "SELECT gpuagg_config('threads', 3), gpuagg_config('scan_min_rows', "
          "0)",
          NULL, NULL);
  /* gpu_query's multi-key, multi-measure hash path (issue 19): h is a
  ** function of g, so the groups are g's; d must be 0 and c the rows */
  run_sql(db,
          "CREATE VIRTUAL TABLE temp.q USING gpu_query('SELECT g, g % 2 AS h, "
          "count(*) AS n, sum(x) AS s, total(x * 2) - 2 * sum(x) AS d, "
          "count(x) AS c FROM t GROUP BY g, h')",
          NULL, NULL);
  return db;
}

/* One gpu_aggregate (grouped 0, 1) or gpu_query (2): 1 when the answer
** keeps the invariants. */
static void check_once(int t, sqlite3 *db, int k, int grouped) {
  sqlite3_stmt *st;
  const char *sql =
      grouped == 2 ? "SELECT g, n, s, d, c FROM q"
      : grouped    ? "SELECT grp, rows, sum, 0, rows FROM gpu_aggregate('t', "
                     "'x', NULL, 'g')"
                   : "SELECT NULL, rows, sum, 0, rows FROM gpu_aggregate('t', "
                     "'x')";
  int64_t grows[GROUPS] = {0}, gsum[GROUPS] = {0}, rows = 0, sum = 0;
  int n = 0, rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL), bad = 0;
  /* the interrupter hit the prepare itself; inside gpu_aggregate's
  ** constructor (an eponymous table) SQLite reports it as SQLITE_ERROR with
  ** its own message, as for its pragma_* tables */
  if (rc == SQLITE_INTERRUPT ||
      (rc == SQLITE_ERROR &&
       !strcmp(sqlite3_errmsg(db), sqlite3_errstr(SQLITE_INTERRUPT)))) {
    interrupted[t]++;
    return;
  }
  if (rc != SQLITE_OK) {
    EXPECT(t, 0, "prepare: %s", sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t g = sqlite3_column_int64(st, 0);
    if (grouped && (g < 0 || g >= GROUPS))
      bad = 1;
    else if (grouped) {
      grows[g] = sqlite3_column_int64(st, 1);
      gsum[g] = sqlite3_column_int64(st, 2);
    }
    rows += sqlite3_column_int64(st, 1);
    sum += sqlite3_column_int64(st, 2);
    if (sqlite3_column_double(st, 3) != 0.0 ||
        sqlite3_column_int64(st, 4) != sqlite3_column_int64(st, 1))
      bad = 1;
    n++;
  }
  rc = sqlite3_finalize(st);
  if (rc == SQLITE_INTERRUPT) {
    interrupted[t]++;
    return;
  }
  EXPECT(t, rc == SQLITE_OK, "gpu_aggregate: %s", sqlite3_errmsg(db));
  if (rc != SQLITE_OK)
    return;
  for (int g = 0; grouped && g < GROUPS; g++)
    if (grows[g] != want_grows[k][g] || gsum[g] != want_gsum[k][g])
      bad = 1;
  EXPECT(t,
         !bad && n == (grouped ? GROUPS : 1) && rows == NROWS &&
             sum == want_sum[k],
         "db %d grouped %d: %d rows of output, rows %lld sum %lld (want "
         "%lld)",
         k, grouped, n, (long long)rows, (long long)sum,
         (long long)want_sum[k]);
  if (sqlite3_prepare_v2(db,
                         "SELECT json_extract(gpuagg_info(), "
                         "'$.last_scan.path') = 'parallel'",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    parallel[t] += sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
}

static void *reader(void *arg) {
  int t = (int)(intptr_t)arg, k = t % 2;
  pthread_mutex_lock(&reader_mu[t]);
  sqlite3 *db = reader_db[t] = reader_open(t);
  pthread_mutex_unlock(&reader_mu[t]);
  for (int it = 0; it < iters; it++) {
    check_once(t, db, k, it % 3);
    if (it % 9 == 8) { /* close and reopen: pool references */
      pthread_mutex_lock(&reader_mu[t]);
      sqlite3_close(db);
      db = reader_db[t] = reader_open(t);
      pthread_mutex_unlock(&reader_mu[t]);
    }
  }
  pthread_mutex_lock(&reader_mu[t]);
  sqlite3_close(db);
  reader_db[t] = NULL;
  pthread_mutex_unlock(&reader_mu[t]);
  return NULL;
}

static int readers_done;

static void *interrupter(void *arg) {
  (void)arg;
  uint64_t seed = 12345;
  while (!__atomic_load_n(&readers_done, __ATOMIC_ACQUIRE)) {
    int t = (int)(h_rnd(&seed) % READERS);
    usleep(20000 + (unsigned)(h_rnd(&seed) % 30000));
    pthread_mutex_lock(&reader_mu[t]);
    if (reader_db[t])
      sqlite3_interrupt(reader_db[t]);
    pthread_mutex_unlock(&reader_mu[t]);
  }
  return NULL;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "FAIL aggregate_threads: watchdog: not finished in "
                          "time (deadlock?)\n0 passed, 1 failed\n";
  if (write(1, m, sizeof m - 1) < 0)
    _exit(3);
  _exit(3);
}

int main(void) {
  if (getenv("HARDEN_QUICK") && atoi(getenv("HARDEN_QUICK")))
    iters = 6;
  if (getenv("HARDEN_ITERS"))
    iters = atoi(getenv("HARDEN_ITERS"));
  int watchdog =
      getenv("HARDEN_WATCHDOG") ? atoi(getenv("HARDEN_WATCHDOG")) : 900;
  for (int k = 0; k < 2; k++)
    h_threads_table(paths[k], sizeof paths[k], "aggr_threads", k, NROWS, GROUPS,
                    &want_sum[k], want_grows[k], want_gsum[k]);
  for (int t = 0; t < READERS; t++)
    pthread_mutex_init(&reader_mu[t], NULL);
  signal(SIGALRM, on_alarm);
  alarm((unsigned)watchdog);
  pthread_t w[2], r[READERS], in;
  for (int k = 0; k < 2; k++)
    pthread_create(&w[k], NULL, writer, (void *)(intptr_t)k);
  for (int t = 0; t < READERS; t++)
    pthread_create(&r[t], NULL, reader, (void *)(intptr_t)t);
  pthread_create(&in, NULL, interrupter, NULL);
  for (int t = 0; t < READERS; t++)
    pthread_join(r[t], NULL);
  __atomic_store_n(&readers_done, 1, __ATOMIC_RELEASE);
  pthread_join(in, NULL);
  __atomic_store_n(&stop_writers, 1, __ATOMIC_RELEASE);
  for (int k = 0; k < 2; k++)
    pthread_join(w[k], NULL);
  alarm(0);
  int passed = 0, failed = 0, intr = 0, par = 0;
  for (int t = 0; t < READERS; t++) {
    passed += checks[t] - fails[t];
    failed += fails[t];
    intr += interrupted[t];
    par += parallel[t];
  }
  /* vacuous unless the worker threads really ran */
  if (par == 0) {
    printf("FAIL aggregate_threads: no call took the parallel path\n");
    failed++;
  }
  for (int k = 0; k < 2; k++)
    h_unlink_db(paths[k]);
  printf("aggregate_threads: %d readers x %d calls, %d parallel, %d "
         "interrupted\n",
         READERS, iters, par, intr);
  printf("RESULT aggregate_threads: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
