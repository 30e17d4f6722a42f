/*
** test_restore.c — a query never changes the application's current device.
**
** A host application that uses CUDA itself (several GPUs) runs gpuagg
** queries from a thread whose current device it chose.  The engine switches
** devices to feed every GPU; it must switch back before each call returns
** (engine/reduce/gpu.c rule 4).  On the fake backend with three devices: for each
** starting device, aggregates over two devices and gpu_matadd run, and the
** thread's device afterwards must be the one it had.  Prints "RESTORE OK".
*/
#include <stdio.h>

#include "gak.h"
#include "harden.h"

static int run(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK)
    printf("FAIL: %s: %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return rc == SQLITE_OK;
}

int main(void) {
  sqlite3 *db = NULL;
  int bad = 0;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
      sqlite3_gpuagg_init(db, NULL, NULL) != SQLITE_OK)
    return 2;
  bad += !run(db, "CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION "
                  "ALL SELECT i+1 FROM c WHERE i<40000) INSERT INTO t SELECT "
                  "i*0.5 FROM c;"
                  "CREATE TABLE a(i INTEGER, j INTEGER, v REAL);"
                  "CREATE TABLE c2(i INTEGER PRIMARY KEY);"
                  "INSERT INTO c2 SELECT rowid FROM t WHERE rowid <= 4000;"
                  "CREATE TABLE b(i INTEGER, j INTEGER, v REAL);"
                  "INSERT INTO a SELECT (i-1)/4, (i-1)%4, i FROM c2;"
                  "INSERT INTO b SELECT i, j, -v FROM a;");
  bad += !run(db, "SELECT gpuagg_config('device','gpu'), "
                  "gpuagg_config('cpu_max_rows',0), "
                  "gpuagg_config('chunk_bytes',65536), "
                  "gpuagg_config('devices',2);");
  for (int start = 0; start < 3; start++) {
    int dev = -1;
    if (gak_set_device(start)) {
      printf("FAIL: cannot set device %d\n", start);
      return 1;
    }
    bad += !run(db, "SELECT gpu_sum(x), gpu_max(x), gpu_min(x) FROM t;");
    bad += !run(db, "SELECT count(*) FROM gpu_matadd('a', 'b');");
    gak_get_device(&dev);
    if (dev != start) {
      printf("FAIL: current device %d after queries, the thread had %d\n", dev,
             start);
      bad++;
    }
  }
  char *err = NULL;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT json_extract(gpuagg_info(),'$.counters."
                         "chunks_gpu'), json_extract(gpuagg_info(),"
                         "'$.counters.matadd_gpu')",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    if (sqlite3_column_int64(st, 0) == 0 || sqlite3_column_int64(st, 1) == 0) {
      printf("FAIL: the queries did not run on the (fake) GPU\n");
      bad++;
    }
  } else {
    bad++;
  }
  sqlite3_finalize(st);
  sqlite3_free(err);
  sqlite3_close(db);
  if (!bad)
    printf("RESTORE OK\n");
  return bad ? 1 : 0;
}
