/*
** oom.c — allocation-failure injection (make test-oom).
**
** A failing allocator wraps SQLite's default one (SQLITE_CONFIG_GETMALLOC,
** then SQLITE_CONFIG_MALLOC before sqlite3_initialize).  gpuagg's host
** allocations all go through sqlite3_malloc64, so they are reached too.
**
** For every representative query, and for the registration itself
** (sqlite3_gpuagg_init), the Nth allocation made while the query runs is
** failed, for N = 1, 2, ... until a run completes without reaching N.  Two
** modes: one-shot (only the Nth fails) and persistent (the Nth and every
** later one fail).  Each run opens a fresh connection (unarmed), so the
** process-wide chunk pool starts empty every time (it is trimmed when the
** last connection closes) and its allocations are reached.  Checked:
**   - the statement either succeeds with exactly the answer of a run without
**     failures, or fails with SQLITE_NOMEM (any other error is a failure);
**   - never a crash (ASan build in make test-oom);
**   - no leak: sqlite3_memory_used() after sqlite3_close equals the value
**     before sqlite3_open.
** Prints per-query counts and ends with "N passed, N failed".
** HARDEN_QUICK=1 (valgrind) tests every 13th N, one-shot mode only;
** HARDEN_OOM_STRIDE=k every k-th N (CI).
*/
#include <unistd.h>

#include "harden.h"

static sqlite3_mem_methods orig;
static int armed, persistent, injected;
static long long fail_at, nalloc;

/* Atomic: gpu_aggregate's worker threads allocate too. */
static int hit(void) {
  if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE))
    return 0;
  long long k = __atomic_add_fetch(&nalloc, 1, __ATOMIC_RELAXED);
  if (k == fail_at || (persistent && k > fail_at)) {
    __atomic_add_fetch(&injected, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}
static void *x_malloc(int n) { return hit() ? NULL : orig.xMalloc(n); }
static void *x_realloc(void *p, int n) {
  return hit() ? NULL : orig.xRealloc(p, n);
}
static void arm(long long n, int pers) {
  fail_at = n;
  persistent = pers;
  nalloc = 0;
  injected = 0;
  __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
}
static void disarm(void) { __atomic_store_n(&armed, 0, __ATOMIC_RELEASE); }

static int passed, failed;
static int
    not_nomem; /* failures reported as another error naming "out of memory" */
static char dbpath[256];

static const char *setup_sql =
    "PRAGMA journal_mode=DELETE;"
    "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS s; DROP TABLE IF EXISTS a;"
    "DROP TABLE IF EXISTS b; DROP TABLE IF EXISTS w;"
    /* 20000 numbers, 3 chunks of 8192: ints, reals, exact extremes */
    "CREATE TABLE t(g INTEGER, x);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE "
    "i<20000)"
    " INSERT INTO t SELECT i % 7, CASE WHEN i % 3 = 0 THEN i * 1.5"
    "  WHEN i % 1000 = 1 THEN 1e300 WHEN i % 1000 = 2 THEN -1e300"
    "  WHEN i % 11 = 0 THEN NULL ELSE i * 1000003 END FROM c;"
    /* mixed types for max/min, windows */
    "CREATE TABLE s(k INTEGER PRIMARY KEY, v);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<300)"
    " INSERT INTO s SELECT i, CASE i % 6 WHEN 0 THEN i WHEN 1 THEN i * 0.25"
    "  WHEN 2 THEN 'txt' || (i * 7919 % 1000) WHEN 3 THEN x'00ff' || "
    "randomblob(0) || cast(i AS blob)"
    "  WHEN 4 THEN NULL ELSE 9007199254740993 - i END FROM c;"
    /* 9000 rows for a window whose first result comes after a full chunk */
    "CREATE TABLE w(k INTEGER PRIMARY KEY, x);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<8400)"
    " INSERT INTO w SELECT i, CASE WHEN i % 150 = 0 THEN 'z' || i ELSE (i * "
    "7919) % 10007 END FROM c;"
    /* small matrices for gpu_matadd */
    "CREATE TABLE a(i INTEGER, j INTEGER, v REAL);"
    "CREATE TABLE b(i INTEGER, j INTEGER, v REAL);"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i<5)"
    " INSERT INTO a SELECT x.i, y.i, x.i * 10 + y.i + 0.5 FROM c x, c y;"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i<5)"
    " INSERT INTO b SELECT x.i, y.i + 2, -(x.i * 3 + y.i) FROM c x, c y WHERE "
    "(x.i + y.i) % 2 = 0;";

static const struct {
  const char *name, *sql;
} queries[] = {
    {"all5", "SELECT gpu_sum(x), gpu_total(x), gpu_avg(x), gpu_max(x), "
             "gpu_min(x) FROM t"},
    {"sum_int", "SELECT gpu_sum(g), gpu_avg(g) FROM t"},
    {"group_by", "SELECT g, gpu_sum(x), gpu_max(x), gpu_min(x) FROM t GROUP BY "
                 "g ORDER BY g"},
    {"distinct", "SELECT gpu_sum(DISTINCT g), gpu_max(DISTINCT x) FROM t"},
    {"nested", "SELECT gpu_sum(m), gpu_max(m) FROM (SELECT gpu_max(x) AS m "
               "FROM t GROUP BY g)"},
    {"text_blob_max",
     "SELECT gpu_max(v), gpu_min(v), typeof(gpu_max(v)) FROM s"},
    {"window_sliding", "SELECT k, gpu_sum(v) OVER w, gpu_max(v) OVER w, "
                       "gpu_min(v) OVER w, gpu_avg(v) OVER w,"
                       " gpu_total(v) OVER w FROM s WINDOW w AS (ORDER BY k "
                       "ROWS BETWEEN 5 PRECEDING AND 2 FOLLOWING)"},
    {"window_partition", "SELECT g, gpu_sum(x) OVER (PARTITION BY g ORDER BY "
                         "rowid ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)"
                         " FROM t WHERE rowid <= 400"},
    {"window_history",
     /* min: numbers beat the texts, so no row's result is a text (each text
        result is an allocation, which would make this sweep 8400 long) */
     "SELECT k, gpu_min(x) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND "
     "UNBOUNDED FOLLOWING),"
     " gpu_min(x) OVER (ORDER BY k ROWS BETWEEN 100 PRECEDING AND 8400 "
     "FOLLOWING) FROM w"},
    {"matadd", "SELECT i, j, v FROM gpu_matadd('a', 'b') ORDER BY i, j"},
    /* constraints pushed into the reads of a and b (bound parameters) */
    {"matadd_pushdown", "SELECT i, j, v FROM gpu_matadd('a', 'b') WHERE i >= 2 "
                        "AND j < 3 ORDER BY i, j"},
    {"config_info",
     "SELECT gpuagg_config('streams', 3), length(gpuagg_info()) > 10"},
    /* aggregate states (ext/states/states.c): text/blob copies, encodes,
       decodes */
    {"states", "SELECT gpu_sum_merge(a), gpu_avg_merge(a), gpu_max_merge(b), "
               "gpu_min_merge(c) FROM"
               " (SELECT gpu_sum_state(v) a, gpu_max_state(v) b, "
               "gpu_min_state(v) c FROM s GROUP BY k % 5)"},
    {"state_window",
     "SELECT gpu_total_merge(a) OVER (ORDER BY g ROWS 1 PRECEDING) FROM"
     " (SELECT g, gpu_total_state(x) a FROM t GROUP BY g)"},
    /* gpu_aggregate: the serial path, and the parallel one (a failure in a
    ** worker falls back to serial: the same answer, or SQLITE_NOMEM) */
    {"aggregate_serial", "SELECT gpuagg_config('threads', 1);"
                         "SELECT grp, rows, count, sum, total, avg, min, max "
                         "FROM gpu_aggregate('t', 'x', 'g > 1', 'g')"},
    {"aggregate_parallel",
     "SELECT gpuagg_config('threads', 3), gpuagg_config('scan_min_rows', 0);"
     "SELECT grp, rows, count, sum, total, avg, min, max FROM "
     "gpu_aggregate('t', 'x', NULL, 'g');"
     "SELECT rows, sum, min, max FROM gpu_aggregate('s', 'v')"},
    /* gpu_cache (ext/cache/cache_fns.c): a parallel load and a serial one, then
    ** answers from the host cache (a failed load leaves no entry: the
    ** uncached path answers, the same rows) */
    {"cache",
     "SELECT gpuagg_config('device', 'cpu'), gpuagg_config('threads', 3),"
     " gpuagg_config('scan_min_rows', 0);"
     "SELECT gpu_cache('t', 'x, g');"
     "SELECT grp, rows, count, sum, total, avg, min, max FROM "
     "gpu_aggregate('t', 'x', 'g > 1', 'g');"
     "SELECT rows, sum, min, max FROM gpu_aggregate('t', 'x');"
     "SELECT gpuagg_config('threads', 1);"
     "SELECT gpu_cache('s', 'k');"
     "SELECT rows, sum, max FROM gpu_aggregate('s', 'k', 'k BETWEEN 5 AND 90 "
     "AND k <> 7');"
     "SELECT json_array_length(gpuagg_info(), '$.cache.entries') >= 0"},
};
#define NQ ((int)(sizeof(queries) / sizeof(queries[0])))

static sqlite3 *open_plain(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    fprintf(stderr, "oom: cannot open %s\n", dbpath);
    exit(2);
  }
  return db;
}

/* Primary code NOMEM (SQLITE_NOMEM, SQLITE_IOERR_NOMEM). */
static int is_nomem(int rc) {
  return (rc & 0xff) == SQLITE_NOMEM || rc == SQLITE_IOERR_NOMEM;
}

/* One query under one failure schedule: 1 when the sweep is over (the run
** did not reach N). */
static int one_run(int q, long long n, int pers, const char *want, int *bad) {
  hstr out = {0};
  char *err = NULL;
  sqlite3_int64 m0 = sqlite3_memory_used();
  sqlite3 *db = open_plain();
  char *ierr = NULL;
  if (sqlite3_gpuagg_init(db, &ierr, NULL) != SQLITE_OK) {
    fprintf(stderr, "oom: init failed unarmed\n");
    exit(2);
  }
  arm(n, pers);
  int rc = run_sql(db, queries[q].sql, &out, &err);
  disarm();
  int reached = injected > 0;
  if (rc == SQLITE_OK) {
    if (strcmp(out.p ? out.p : "", want)) {
      printf("FAIL %s N=%lld%s: wrong result after an injected failure\n  got  "
             "%.200s\n  want %.200s\n",
             queries[q].name, n, pers ? " persistent" : "", out.p ? out.p : "",
             want);
      (*bad)++;
    }
  } else if (reached && !is_nomem(rc) && err && strstr(err, "out of memory")) {
    /* a clear error, but not SQLITE_NOMEM (gpu_matadd reports its own) */
    not_nomem++;
  } else if (!is_nomem(rc) || !reached) {
    printf("FAIL %s N=%lld%s: rc %d (%s), not SQLITE_NOMEM%s\n",
           queries[q].name, n, pers ? " persistent" : "", rc, err ? err : "",
           reached ? "" : " (nothing injected)");
    (*bad)++;
  }
  int crc = sqlite3_close(db);
  sqlite3_int64 m1 = sqlite3_memory_used();
  if (crc != SQLITE_OK || m1 != m0) {
    printf("FAIL %s N=%lld%s: close rc %d, memory %lld before open, %lld after "
           "close (leak %lld)\n",
           queries[q].name, n, pers ? " persistent" : "", crc, (long long)m0,
           (long long)m1, (long long)(m1 - m0));
    (*bad)++;
  }
  free(err);
  hs_free(&out);
  return !reached;
}

/* Registration under failure: init fails cleanly (no leak, connection still
** usable) or succeeds and works. */
static int init_run(long long n, int pers, int *bad) {
  sqlite3_int64 m0 = sqlite3_memory_used();
  sqlite3 *db = open_plain();
  char *ierr = NULL;
  arm(n, pers);
  int rc = sqlite3_gpuagg_init(db, &ierr, NULL);
  disarm();
  int reached = injected > 0;
  sqlite3_free(ierr);
  hstr out = {0};
  char *err = NULL;
  if (rc == SQLITE_OK) {
    int qrc = run_sql(db,
                      "SELECT gpu_sum(x), gpu_max(x) FROM t WHERE rowid < 100;"
                      "SELECT count(*) FROM gpu_matadd('a','b')",
                      &out, &err);
    if (qrc != SQLITE_OK) {
      printf("FAIL init N=%lld%s: registered, then the query failed: %s\n", n,
             pers ? " persistent" : "", err ? err : "?");
      (*bad)++;
    }
  } else {
    if (!is_nomem(rc)) {
      printf("FAIL init N=%lld%s: rc %d, not SQLITE_NOMEM\n", n,
             pers ? " persistent" : "", rc);
      (*bad)++;
    }
    /* the connection must still work, and a second init must succeed */
    int qrc = run_sql(db, "SELECT count(*) FROM t", &out, &err);
    if (qrc != SQLITE_OK) {
      printf("FAIL init N=%lld: connection unusable after failed init: %s\n", n,
             err ? err : "?");
      (*bad)++;
    }
    free(err);
    err = NULL;
    if (sqlite3_gpuagg_init(db, &ierr, NULL) != SQLITE_OK ||
        run_sql(db, "SELECT gpu_sum(x) FROM t WHERE rowid < 10", &out, &err) !=
            SQLITE_OK) {
      printf("FAIL init N=%lld%s: init after a failed init: %s\n", n,
             pers ? " persistent" : "", err ? err : "init failed");
      (*bad)++;
    }
  }
  free(err);
  hs_free(&out);
  int crc = sqlite3_close(db);
  sqlite3_int64 m1 = sqlite3_memory_used();
  if (crc != SQLITE_OK || m1 != m0) {
    printf("FAIL init N=%lld%s: close rc %d, leak %lld bytes\n", n,
           pers ? " persistent" : "", crc, (long long)(m1 - m0));
    (*bad)++;
  }
  return !reached;
}

/* A UTF-16 database under failures, on ONE connection: the failures hit the
** encoding lookup and the conversion of UTF-8 parameters to UTF-16; each
** run must answer right or fail with SQLITE_NOMEM, and a run without
** failures afterwards, on the same connection, must order text as UTF-16
** (there 'ā' < 'b'; in UTF-8 'b' < 'ā'), so nothing wrong was remembered. */
static int two_hex(sqlite3 *d, const char *sql, int bind, hstr *out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(d, sql, -1, &st, NULL);
  if (rc == SQLITE_OK && bind) {
    sqlite3_bind_text(st, 1, "zz", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, "c", -1, SQLITE_STATIC);
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const char *a = (const char *)sqlite3_column_text(st, 0);
      const char *b = (const char *)sqlite3_column_text(st, 1);
      /* the harness's own reading of the row can fail too */
      rc = a && b ? SQLITE_OK : SQLITE_NOMEM;
      if (a && b)
        hs_add(out, "%s|%s", a, b);
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static int utf16_phase(void) {
  char path[300];
  snprintf(path, sizeof path, "%s.u16", dbpath);
  unlink(path);
  sqlite3 *db = open_ga(path, 0);
  char *err = NULL;
  if (run_sql(db,
              "PRAGMA encoding='UTF-16le'; CREATE TABLE u(v TEXT);"
              "INSERT INTO u VALUES ('b'), ('\xc4\x81'), ('a');",
              NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "oom: utf16 setup: %s\n", err);
    exit(2);
  }
  sqlite3_close(db);
  const char *pq =
      "SELECT hex(gpu_max(x)), hex(gpu_min(x)) FROM "
      "(SELECT ?1 AS x UNION ALL SELECT ?2 UNION ALL SELECT v FROM u)";
  const char *tq = "SELECT hex(gpu_max(v)), hex(gpu_min(v)) FROM u";
  /* UTF-16LE hex: 'b' = 6200, 'ā' = 0101, 'zz' = 7A007A00 */
  const char *want_p = "7A007A00|0101", *want_t = "6200|0101";
  int bad = 0;
  long long n;
  for (n = 1; bad < 10; n++) {
    sqlite3 *d = open_ga(path, 0);
    hstr out = {0};
    arm(n, 0);
    int rc = two_hex(d, pq, 1, &out);
    disarm();
    int reached = injected > 0;
    if (rc == SQLITE_OK ? strcmp(out.p ? out.p : "", want_p) != 0
                        : !is_nomem(rc)) {
      printf("FAIL utf16 N=%lld: rc %d, got %s want %s\n", n, rc,
             out.p ? out.p : "", want_p);
      bad++;
    }
    hs_reset(&out);
    if (two_hex(d, tq, 0, &out) != SQLITE_OK ||
        strcmp(out.p ? out.p : "", want_t)) {
      printf("FAIL utf16 N=%lld: after the failure, on the same connection: %s "
             "(want %s)\n",
             n, out.p ? out.p : "", want_t);
      bad++;
    }
    hs_free(&out);
    sqlite3_close(d);
    if (!reached)
      break;
  }
  unlink(path);
  printf("%s utf16: %lld failure points, %d bad\n", bad ? "FAIL" : "ok  ",
         n - 1, bad);
  return bad == 0;
}

int main(int argc, char **argv) {
  int quick = getenv("HARDEN_QUICK") && atoi(getenv("HARDEN_QUICK"));
  /* quick (valgrind): every 13th N, one-shot only; HARDEN_OOM_STRIDE=k:
  ** every k-th N, both modes (CI's time budget, tests/harden/ci.sh) */
  int stride = quick ? 13 : 1;
  if (getenv("HARDEN_OOM_STRIDE") && atoi(getenv("HARDEN_OOM_STRIDE")) > 0)
    stride = atoi(getenv("HARDEN_OOM_STRIDE"));
  const char *only = argc > 1 ? argv[1] : NULL;
  sqlite3_mem_methods m;
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &orig) != SQLITE_OK)
    return 2;
  m = orig;
  m.xMalloc = x_malloc;
  m.xRealloc = x_realloc;
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
    return 2;
  /* SQLite's memory statistics must be on for sqlite3_memory_used() */
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
  /* no lookaside: every small allocation reaches the failing allocator */
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
  if (sqlite3_initialize() != SQLITE_OK)
    return 2;

  snprintf(dbpath, sizeof dbpath, "%s/gpuagg_oom_%d.db",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  {
    sqlite3 *db = open_ga(dbpath, 0);
    char *err = NULL;
    if (run_sql(db, setup_sql, NULL, &err) != SQLITE_OK) {
      fprintf(stderr, "oom: setup: %s\n", err);
      return 2;
    }
    sqlite3_close(db);
  }

  /* warm-up: one-time allocations of SQLite (VFS, etc.) happen here */
  for (int q = 0; q < NQ; q++) {
    sqlite3 *db = open_ga(dbpath, 0);
    run_sql(db, queries[q].sql, NULL, NULL);
    sqlite3_close(db);
  }

  for (int pers = 0; pers < (quick ? 1 : 2); pers++) {
    if (!only || !strcmp(only, "init")) {
      int bad = 0;
      long long n;
      for (n = 1;; n += stride)
        if (init_run(n, pers, &bad))
          break;
      printf("%s init%s: %lld failure points, %d bad\n", bad ? "FAIL" : "ok  ",
             pers ? " (persistent)" : "", n - 1, bad);
      if (bad)
        failed++;
      else
        passed++;
    }
    for (int q = 0; q < NQ; q++) {
      if (only && strcmp(only, queries[q].name))
        continue;
      /* the answer without failures */
      hstr want = {0};
      char *err = NULL;
      sqlite3_int64 m0 = sqlite3_memory_used();
      sqlite3 *db = open_ga(dbpath, 0);
      int rc = run_sql(db, queries[q].sql, &want, &err);
      sqlite3_close(db);
      if (rc != SQLITE_OK || sqlite3_memory_used() != m0) {
        printf("FAIL %s: reference run: rc %d (%s), leak %lld\n",
               queries[q].name, rc, err ? err : "",
               (long long)(sqlite3_memory_used() - m0));
        failed++;
        free(err);
        hs_free(&want);
        continue;
      }
      int bad = 0;
      long long n;
      for (n = 1;; n += stride) {
        if (one_run(q, n, pers, want.p ? want.p : "", &bad))
          break;
        if (bad > 10)
          break;
      }
      printf("%s %s%s: %lld failure points, %d bad", bad ? "FAIL" : "ok  ",
             queries[q].name, pers ? " (persistent)" : "", n - 1, bad);
      if (not_nomem)
        printf(" (%d gave an 'out of memory' error with a code other than "
               "SQLITE_NOMEM)",
               not_nomem);
      printf("\n");
      not_nomem = 0;
      fflush(stdout);
      if (bad)
        failed++;
      else
        passed++;
      hs_free(&want);
    }
  }
  if (!only || !strcmp(only, "utf16")) {
    if (utf16_phase())
      passed++;
    else
      failed++;
  }
  unlink(dbpath);
  printf("RESULT oom: %d passed, %d failed, 0 skipped\n", passed, failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
