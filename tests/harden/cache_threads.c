/*
** cache_threads.c — gpu_cache under the sanitizers (make test-tsan,
** test-asan, test-valgrind; HARDEN_GPU=1 on the fake GPU backend, or on a
** real GPU with make test-threads-gpu's build).
**
** Two file databases (WAL and rollback journal), each with a writer thread
** that commits in a loop while keeping invariants (x moves between two rows
** of one group).  READERS threads each own a connection: they load the
** columns into their cache (gpu_cache, whose load runs gpu_aggregate's
** worker threads), answer gpu_aggregate ungrouped and grouped (from the
** cache while it is current, uncached once a commit made it stale), reload
** now and then, drop, and close and reopen the connection.  SHARED threads
** use one connection together (SQLite's serialized mode orders their calls;
** the cache must not care which thread calls).  The cache is the
** process's (issue 40): the READERS' connections to one file share its
** entries, so their loads, answers, drops and evictions race on the same
** entries, under engine/cache/cache.c rule 6's locks.  Every answer must keep
*the
** invariants; the cache must have answered some, and staleness must have
** sent some elsewhere.  A watchdog fails the run on a deadlock.
**
** HARDEN_QUICK=1: fewer iterations.  Prints "RESULT cache_threads: ...".
*/
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "harden.h"

#define NROWS 6000
#define GROUPS 4
#define READERS 3
#define SHARED 2

static char paths[2][256];
static int64_t want_sum[2], want_grows[2][GROUPS], want_gsum[2][GROUPS];
static int iters = 30, stop_writers, gpu;
static int fails[READERS + SHARED], checks[READERS + SHARED];
static int hits[READERS + SHARED], misses[READERS + SHARED];
static sqlite3 *shared_db;

#define EXPECT(t, cond, ...)                                                   \
  do {                                                                         \
    __atomic_add_fetch(&checks[t], 1, __ATOMIC_RELAXED);                       \
    if (!(cond) && __atomic_add_fetch(&fails[t], 1, __ATOMIC_RELAXED) <= 5) {  \
      printf("FAIL cache thread %d: ", t);                                     \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      fflush(stdout);                                                          \
    }                                                                          \
  } while (0)

/* x moves between two rows of one group; pauses long enough for some
** answers to come from a current cache */
static unsigned writer_sql(char *sql, size_t n, uint64_t *seed) {
  int off, k = h_move_x_sql(sql, n, seed, GROUPS, &off);
  snprintf(sql + k, n - (size_t)k, "COMMIT;");
  return h_rnd(seed) % 4 ? 2000 : 60000;
}

static void *writer(void *arg) {
  int k = (int)(intptr_t)arg;
  h_writer_loop(paths[k], &stop_writers, 0x9e3779b97f4a7c15ull + (uint64_t)k,
                writer_sql);
  return NULL;
}

static sqlite3 *reader_open(int k, int flags) {
  sqlite3 *db = open_ga(paths[k], SQLITE_OPEN_READWRITE | flags);
  sqlite3_busy_timeout(db, 20000);
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT gpuagg_config('threads', 3), gpuagg_config('scan_min_rows', "
           "0), gpuagg_config('device', '%s')",
           gpu ? "gpu" : "cpu");
  run_sql(db, sql, NULL, NULL);
  return db;
}

static void load(int t, sqlite3 *db) {
  char *err = NULL;
  /* the error message is the connection's: hold its mutex so that a thread
  ** sharing it cannot replace the message before it is read */
  sqlite3_mutex *mu = sqlite3_db_mutex(db);
  if (mu)
    sqlite3_mutex_enter(mu);
  int rc = run_sql(db, "SELECT gpu_cache('t', 'x, g, lbl')", NULL, &err);
  if (mu)
    sqlite3_mutex_leave(mu);
  /* a load may fail only because the table kept changing under it */
  EXPECT(t, rc == SQLITE_OK || (err && strstr(err, "changed during")),
         "gpu_cache: %s", err ? err : "?");
  free(err); /* run_sql's copy (libc) */
}

/* grouped 0: the sum; 1: by g (on odd calls as programs, x * 1 by g + 0:
** the host's general path, issue 20); 2: group 1 through its TEXT label lbl
** (the cache's dictionary, merged by the load's workers) */
static void check_once(int t, sqlite3 *db, int k, int grouped) {
  static int calls;
  sqlite3_stmt *st;
  int prog = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) & 1;
  const char *sql = grouped == 1 && prog
                        ? "SELECT grp, rows, sum, json_extract("
                          "gpuagg_info(), '$.last_scan.path') FROM "
                          "gpu_aggregate('t', 'x * 1', NULL, 'g + 0')"
                    : grouped == 1 ? "SELECT grp, rows, sum, json_extract("
                                     "gpuagg_info(), '$.last_scan.path') FROM "
                                     "gpu_aggregate('t', 'x', NULL, 'g')"
                    : grouped      ? "SELECT NULL, rows, sum, json_extract("
                                     "gpuagg_info(), '$.last_scan.path') FROM "
                                     "gpu_aggregate('t', 'x', 'lbl = ''g1''')"
                                   : "SELECT NULL, rows, sum, json_extract("
                                     "gpuagg_info(), '$.last_scan.path') FROM "
                                     "gpu_aggregate('t', 'x')";
  int64_t grows[GROUPS] = {0}, gsum[GROUPS] = {0}, rows = 0, sum = 0;
  int n = 0, bad = 0, cached = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    EXPECT(t, 0, "prepare: %s", sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t g = sqlite3_column_int64(st, 0);
    if (grouped == 1 && (g < 0 || g >= GROUPS))
      bad = 1;
    else if (grouped == 1) {
      grows[g] = sqlite3_column_int64(st, 1);
      gsum[g] = sqlite3_column_int64(st, 2);
    }
    rows += sqlite3_column_int64(st, 1);
    sum += sqlite3_column_int64(st, 2);
    const unsigned char *p = sqlite3_column_text(st, 3);
    cached = p && !strcmp((const char *)p, "cache");
    n++;
  }
  rc = sqlite3_finalize(st);
  EXPECT(t, rc == SQLITE_OK, "gpu_aggregate: %s", sqlite3_errmsg(db));
  if (rc != SQLITE_OK)
    return;
  for (int g = 0; grouped == 1 && g < GROUPS; g++)
    if (grows[g] != want_grows[k][g] || gsum[g] != want_gsum[k][g])
      bad = 1;
  EXPECT(t,
         !bad && n == (grouped == 1 ? GROUPS : 1) &&
             rows == (grouped == 2 ? want_grows[k][1] : NROWS) &&
             sum == (grouped == 2 ? want_gsum[k][1] : want_sum[k]),
         "db %d grouped %d cached %d: %d rows of output, rows %lld sum %lld "
         "(want %lld)",
         k, grouped, cached, n, (long long)rows, (long long)sum,
         (long long)want_sum[k]);
  __atomic_add_fetch(cached ? &hits[t] : &misses[t], 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg) {
  int t = (int)(intptr_t)arg, k = t % 2;
  sqlite3 *db = reader_open(k, 0);
  load(t, db);
  for (int it = 0; it < iters; it++) {
    check_once(t, db, k, it % 3);
    if (it % 4 == 3)
      load(t, db);
    if (it % 11 == 10)
      run_sql(db, "SELECT gpu_cache_drop('t')", NULL, NULL);
    if (it % 13 == 12) { /* close and reopen: the cache dies with it */
      sqlite3_close(db);
      db = reader_open(k, 0);
      load(t, db);
    }
  }
  sqlite3_close(db);
  return NULL;
}

/* SHARED threads: one connection (FULLMUTEX), calls in any interleaving. */
static void *sharer(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int it = 0; it < iters; it++) {
    if (it % 3 == 0)
      load(t, shared_db);
    check_once(t, shared_db, 0, it % 3);
  }
  return NULL;
}

/* Many groups over a dense key (engine/cache/cache_host.c rule 9: each
** query's runs sort their rows by group id on threads of their own, then
** build the groups on threads again): the cached answer must be the
** uncached one, and must come from the cache.  1 when it holds. */
static int many_groups_check(void) {
  sqlite3 *db = open_ga(":memory:", 0);
  hstr got = {0}, want = {0}, path = {0}, cache = {0};
  char *err = NULL;
  int rc = run_sql(
      db,
      "SELECT gpuagg_config('threads', 3);"
      "CREATE TABLE m(k INTEGER, x);"
      "WITH RECURSIVE q(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM q "
      "WHERE i < 99999) INSERT INTO m SELECT i * 7 % 30000, "
      "CASE WHEN i % 3 = 0 THEN i * 0.5 WHEN i % 3 = 1 THEN 5 ELSE 5.0 END "
      "FROM q;"
      "SELECT gpu_cache('m', 'k, x');"
      "CREATE VIRTUAL TABLE temp.mq USING gpu_query('SELECT k, sum(x), "
      "max(x), min(x), count(*) FROM m GROUP BY k');",
      NULL, &err);
  if (rc == SQLITE_OK)
    rc = run_sql(db, "SELECT * FROM mq ORDER BY k", &got, &err);
  if (rc == SQLITE_OK)
    rc = run_sql(db, "SELECT json_extract(gpuagg_info(), '$.last_scan.path')",
                 &path, &err);
  if (rc == SQLITE_OK) /* the path as run_sql writes a value */
    rc = run_sql(db, "SELECT 'cache'", &cache, &err);
  if (rc == SQLITE_OK)
    rc = run_sql(db,
                 "SELECT k, gpu_sum(x), gpu_max(x), gpu_min(x), count(*) "
                 "FROM m GROUP BY k ORDER BY k",
                 &want, &err);
  int ok = rc == SQLITE_OK && got.n > 0 && got.n == want.n &&
           !memcmp(got.p, want.p, got.n) && path.p && cache.p &&
           !strcmp(path.p, cache.p);
  if (!ok)
    printf("FAIL cache_threads: many groups: %s (path %s)\n",
           err ? err : "cached and uncached answers differ",
           path.p ? path.p : "?");
  free(err);
  hs_free(&got);
  hs_free(&want);
  hs_free(&path);
  hs_free(&cache);
  sqlite3_close(db);
  return ok;
}

/* The writers stopped: on each file a loaded cache must answer (a hit),
** and after one more commit (x moved, invariants kept) it must step aside
** (a miss), both with the invariants.  So "the cache answered, and
** staleness was seen" holds whatever share of the concurrent calls the
** machine's load let the cache answer (under the sanitizers, on a busy
** machine, that share can be none). */
static void settled_check(void) {
  for (int k = 0; k < 2; k++) {
    sqlite3 *db = reader_open(k, 0), *w = open_ga(paths[k], 0);
    char sql[512];
    uint64_t seed = 0x5eedull + (uint64_t)k;
    int off;
    load(0, db);
    int h0 = hits[0], m0 = misses[0];
    check_once(0, db, k, 0);
    EXPECT(0, hits[0] == h0 + 1, "db %d: a current cache did not answer", k);
    int n = h_move_x_sql(sql, sizeof sql, &seed, GROUPS, &off);
    snprintf(sql + n, sizeof sql - (size_t)n, "COMMIT;");
    EXPECT(0, run_sql(w, sql, NULL, NULL) == SQLITE_OK, "db %d: commit", k);
    check_once(0, db, k, 0);
    EXPECT(0, misses[0] == m0 + 1, "db %d: a stale cache answered", k);
    sqlite3_close(w);
    sqlite3_close(db);
  }
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "FAIL cache_threads: watchdog: not finished in "
                          "time (deadlock?)\n0 passed, 1 failed\n";
  if (write(1, m, sizeof m - 1) < 0)
    _exit(3);
  _exit(3);
}

int main(void) {
  if (getenv("HARDEN_QUICK") && atoi(getenv("HARDEN_QUICK")))
    iters = 8;
  if (getenv("HARDEN_ITERS"))
    iters = atoi(getenv("HARDEN_ITERS"));
  gpu = getenv("HARDEN_GPU") && atoi(getenv("HARDEN_GPU"));
  int watchdog =
      getenv("HARDEN_WATCHDOG") ? atoi(getenv("HARDEN_WATCHDOG")) : 900;
  for (int k = 0; k < 2; k++)
    h_threads_table(paths[k], sizeof paths[k], "cache_threads", k, NROWS,
                    GROUPS, &want_sum[k], want_grows[k], want_gsum[k]);
  signal(SIGALRM, on_alarm);
  alarm((unsigned)watchdog);
  shared_db = reader_open(0, SQLITE_OPEN_FULLMUTEX);
  pthread_t w[2], r[READERS], s[SHARED];
  for (int k = 0; k < 2; k++)
    pthread_create(&w[k], NULL, writer, (void *)(intptr_t)k);
  for (int t = 0; t < READERS; t++)
    pthread_create(&r[t], NULL, reader, (void *)(intptr_t)t);
  for (int t = 0; t < SHARED; t++)
    pthread_create(&s[t], NULL, sharer, (void *)(intptr_t)(READERS + t));
  for (int t = 0; t < READERS; t++)
    pthread_join(r[t], NULL);
  for (int t = 0; t < SHARED; t++)
    pthread_join(s[t], NULL);
  __atomic_store_n(&stop_writers, 1, __ATOMIC_RELEASE);
  for (int k = 0; k < 2; k++)
    pthread_join(w[k], NULL);
  sqlite3_close(shared_db);
  settled_check();
  alarm(0);
  int passed = 0, failed = 0, nh = 0, nm = 0;
  for (int t = 0; t < READERS + SHARED; t++) {
    passed += checks[t] - fails[t];
    failed += fails[t];
    nh += hits[t];
    nm += misses[t];
  }
  /* vacuous unless the cache answered and staleness was seen */
  if (nh == 0 || nm == 0) {
    printf("FAIL cache_threads: %d cached and %d uncached answers (want "
           "both)\n",
           nh, nm);
    failed++;
  }
  if (many_groups_check())
    passed++;
  else
    failed++;
  for (int k = 0; k < 2; k++)
    h_unlink_db(paths[k]);
  printf("cache_threads: %d + %d threads x %d calls, %d cached, %d uncached "
         "(%s)\n",
         READERS, SHARED, iters, nh, nm, gpu ? "GPU" : "host");
  printf("RESULT cache_threads: %d passed, %d failed, 0 skipped\n", passed,
         failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
