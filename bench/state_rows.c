/*
** state_rows.c — the per-row cost of gpu_aggregate's fused worker aggregate
** gpuagg_partial(x) against the built-ins and the gpu_ aggregates doing the
** same work (rows, count, sum, min, max), on one table.
**
**   state_rows DB ROWS KIND QUERY [REPS]
**
** DB: a database file, (re)filled with ROWS rows of KIND (int | real |
** mixed: integers, reals and 10% NULLs) when it does not hold them yet.
** QUERY: builtin (count(*), count(x), sum(x), min(x), max(x)), fused
** (gpuagg_partial(x)), gpu (count(*), count(x), gpu_sum, gpu_min, gpu_max),
** sum (sum(x)).  Prints "QUERY,KIND,ROWS,ns_per_row" (median of REPS runs).
** The query runs inside run_query(), which callgrind can isolate with
** --toggle-collect=run_query (bench/state_rows.sh does).
**
** Linked with the extension's objects (SQLITE_CORE), so gpuagg_partial is
** registered with ga_worker_prep, as the scan's workers do.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "bench_util.h"

struct sqlite3_api_routines;
int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                        const struct sqlite3_api_routines *pApi);
int ga_worker_prep(sqlite3 *db);

static void die(sqlite3 *db, const char *what) {
  fprintf(stderr, "state_rows: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
  exit(2);
}

static void fill(sqlite3 *db, long long rows, const char *kind) {
  sqlite3_stmt *st;
  long long have = -1;
  char *tag = NULL;
  if (sqlite3_prepare_v2(db, "SELECT n, kind FROM meta", -1, &st, NULL) ==
      SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) {
      have = sqlite3_column_int64(st, 0);
      tag = sqlite3_mprintf("%s", sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
  }
  int ok = have == rows && tag && !strcmp(tag, kind);
  sqlite3_free(tag);
  if (ok)
    return;
  sqlite3_exec(db,
               "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS meta;"
               "CREATE TABLE t(x); CREATE TABLE meta(n, kind); BEGIN",
               NULL, NULL, NULL);
  if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1)", -1, &st, NULL))
    die(db, "insert");
  uint64_t r = 88172645463325252ull;
  for (long long i = 0; i < rows; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    int k = !strcmp(kind, "int")    ? 0
            : !strcmp(kind, "real") ? 1
                                    : (int)(r % 10 == 0 ? 2 : r % 2);
    if (k == 0)
      sqlite3_bind_int64(st, 1, (int64_t)(r % 2000001) - 1000000);
    else if (k == 1)
      sqlite3_bind_double(st, 1, (double)(int64_t)(r >> 11) * 0x1p-40);
    else
      sqlite3_bind_null(st, 1);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  char sql[128];
  snprintf(sql, sizeof sql, "INSERT INTO meta VALUES (%lld, '%s'); COMMIT",
           rows, kind);
  if (sqlite3_exec(db, sql, NULL, NULL, NULL))
    die(db, "commit");
}

__attribute__((noinline)) static void run_query(sqlite3_stmt *st) {
  while (sqlite3_step(st) == SQLITE_ROW)
    ;
  sqlite3_reset(st);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: state_rows DB ROWS int|real|mixed "
                    "builtin|fused|gpu|sum [REPS]\n");
    return 2;
  }
  long long rows = atoll(argv[2]);
  const char *kind = argv[3], *q = argv[4];
  int reps = argc > 5 ? atoi(argv[5]) : 5;
  sqlite3 *db;
  char *err = NULL;
  if (sqlite3_open(argv[1], &db) != SQLITE_OK)
    die(db, "open");
  if (sqlite3_gpuagg_init(db, &err, NULL) != SQLITE_OK ||
      ga_worker_prep(db) != SQLITE_OK)
    die(db, "register");
  fill(db, rows, kind);
  const char *sql =
      !strcmp(q, "builtin")
          ? "SELECT count(*), count(x), sum(x), min(x), max(x) FROM t"
      : !strcmp(q, "fused") ? "SELECT gpuagg_partial(x) FROM t"
      : !strcmp(q, "gpu")   ? "SELECT count(*), count(x), gpu_sum(x), "
                              "gpu_min(x), gpu_max(x) FROM t"
                            : "SELECT sum(x) FROM t";
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL))
    die(db, "prepare");
  double *ms = malloc(sizeof(double) * (size_t)reps);
  run_query(st); /* warm the page cache */
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_ms();
    run_query(st);
    ms[i] = bench_now_ms() - t0;
  }
  printf("%s,%s,%lld,%.2f\n", q, kind, rows,
         bench_median(ms, reps) * 1e6 / (double)rows);
  free(ms);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return 0;
}
