/*
** glue.h — the bottom of the SQLite glue (ext/common/): what every feature
** shares, registering nothing.
**
**   conn.c    one ga_conn per user connection, reference counted
**   values.c  SQLite values to and from the engine's (ga_value, states),
**             the database's text encoding
**   intr.c    the caller's interrupt and progress handler, seen from the
**             thread that waits for workers
*/
#ifndef GA_GLUE_H
#define GA_GLUE_H

#include "sqlite3ext.h"

#include "agg.h"
#include "config.h"
#include "scan.h"
#include "state.h"

typedef struct ga_conn ga_conn;

/* The user data of a function (ext/init.c makes one per registration):
** its name (for errors), its aggregate (GA_AGG_*, where it has one) and the
** connection. */
typedef struct ga_fn_data {
  const char *name;
  int op;
  ga_conn *conn;
} ga_fn_data;

/* One per connection: what gpuagg_config() set, what gpuagg_info() reports,
** and the features' per-connection state; freed when the last registration
** that points at it goes (ga_conn_unref). */
struct ga_conn {
  int refs;          /* see ga_conn_ref */
  ga_config cfg;     /* what gpuagg_config() set on this connection */
  ga_last last;      /* the last aggregate, for gpuagg_info() */
  ga_scan_last scan; /* the last gpu_aggregate call (gpuagg_info) */
  int enc; /* the database's text encoding (SQLITE_UTF8/16LE/16BE), 0 until
              the first max/min needs it: BINARY collation is memcmp of it */
  /* gpu_cache's entries: the process's cache (engine/cache/cache.h rule
  ** 5), on which this connection (db, the entries' owner) holds a count */
  struct ga_cache *cache;
  sqlite3 *db;
  /* the worker pools of the files gpu_cache loaded from in parallel on
  ** this connection (engine/scan/scan_pool.c rule 2) */
  struct ga_scan_pool **cache_pools;
  int ncache_pools;
  void *matadd; /* gpu_matadd's data (ext/matadd/), for gpu_matadd_info */
  /* gpu_aggregate's xFilter calls that computed an answer, and those that
  ** served the answer a cursor kept (gpuagg_info's "gpu_aggregate") */
  int64_t aggregate_calls, aggregate_replays;
  /* the same for gpu_query (gpuagg_info's "gpu_query") */
  int64_t query_calls, query_replays;
  /* gpu_query_json's calls, tables created, calls served by a kept table,
  ** statements prepared, tables dropped, texts kept now (gpuagg_info's
  ** "gpu_query_json", ext/query/query_json.c rule 3) */
  int64_t qjson_calls, qjson_created, qjson_reused, qjson_prepared,
      qjson_dropped, qjson_kept;
  /* gpu_query_json's statements stepping now (query_json.c rule 7) */
  int qjson_stepping;
  /* gpu_sum ... gpu_max registered on (on = 1) or taken off (0) a worker's
  ** connection db, with this conn: the contract inside gpu_query's
  ** subqueries, evaluated there (planner/qsubq.c rule 2); set by
  ** ext/init.c, which holds the registration table */
  int (*contract_fns)(sqlite3 *db, void *conn, int on);
};

/* ---- conn.c ---- */

/* The connection's ga_conn, made on the first .load (one reference, the
** caller's, to drop with ga_conn_unref); NULL with *again = 1 when db has
** one already (a second .load: everything is registered), NULL with
** *again = 0 when out of memory. */
ga_conn *ga_conn_open(sqlite3 *db, int *again);
/* References held by every registration that points at a ga_conn; the
** last release frees it. */
void ga_conn_ref(ga_conn *conn);
void ga_conn_unref(void *conn);
/* A module's user data of `size` bytes, zeroed, whose first member is
** the ga_conn *conn it keeps a reference to (ga_conn_ref); NULL when out
** of memory. */
void *ga_conn_data_new(ga_conn *conn, size_t size);

/* ---- values.c ---- */

/* The bytes of a TEXT/BLOB value as max() compares them, in encoding enc
** (0: out of memory), and the main database's encoding cached in *cache
** (0: the error is set on ctx). */
int ga_value_bytes(sqlite3_value *v, int type, int enc, ga_value *out);
int ga_db_encoding(sqlite3_context *ctx, int *cache);
/* The same for a connection: SQLite result code, *enc set on SQLITE_OK. */
int ga_db_encoding_of(sqlite3 *db, int *enc);
/* schema.table's column `col`: its declared type and collation (NULL for
** none), as sqlite3_table_column_metadata gives them; SQLITE_ERROR when
** SQLite was built without column metadata (or the column is gone). */
int ga_column_decl(sqlite3 *db, const char *schema, const char *table,
                   const char *col, const char **type, const char **coll);
/* The same, and *pk (when not NULL): 1 when it is part of the primary key. */
int ga_column_meta(sqlite3 *db, const char *schema, const char *table,
                   const char *col, const char **type, const char **coll,
                   int *pk);
/* v as the function's result; TEXT given in encoding enc. */
void ga_result_value(sqlite3_context *ctx, const ga_value *v, int enc);
/* A state BLOB (GA_STATE_* kind) as the function's result. */
void ga_result_state(sqlite3_context *ctx, const ga_xstate *s, int kind);

/* ---- intr.c ---- */

/* The caller's interrupt, as seen from its own thread (ext/common/intr.c):
** sqlite3_is_interrupted where the running SQLite has it (3.41+), else a
** probe statement that SQLite's own interrupt check answers. */
typedef struct ga_intr {
  sqlite3 *db;
  sqlite3_stmt *probe;
  int64_t next_ns; /* the probe: no step before this (CLOCK_MONOTONIC) */
  /* the progress probe (both versions: the application's progress handler
  ** runs inside it), and the next time it may step */
  sqlite3_stmt *progress;
  int64_t next_progress_ns;
  int64_t progress_probes; /* steps of it (gpuagg_info's last_scan) */
} ga_intr;
int ga_intr_check(void *arg);
void ga_intr_free(ga_intr *i);
/* 1 when sqlite3_is_interrupted was found (gpuagg_info, tests). */
int ga_intr_native(void);
/* rc of a failed prepare or step on db, or SQLITE_INTERRUPT where an
** interrupt caused it: SQLite reports one that hits the parser inside a
** virtual table's constructor (its own pragma_* tables') as SQLITE_ERROR
** with the message "interrupted". */
int ga_intr_rc(sqlite3 *db, int rc);

/* ---- shared by the scanning modules (gpu_aggregate, gpu_query) ---- */

/* A scanning module's data, one per connection: a reference to its ga_conn
** and to every pool of the files it scanned in parallel and still has
** attached (scan_pool.c rule 2).  ga_scan_module_new takes a reference to
** conn (NULL when out of memory); ga_scan_module_free releases them all. */
typedef struct ga_scan_module {
  ga_conn *conn;
  ga_scan_pool **pools;
  int npools;
} ga_scan_module;
void *ga_scan_module_new(ga_conn *conn);
void ga_scan_module_free(void *m);

/* PRAGMA reverse_unordered_selects reverses a scan without ORDER BY, and
** with it the serial paths' tie-break (the first row in rowid order wins):
** ga_reverse_off turns it off for a serial statement's compile and first
** step and returns 1 when it was on; ga_reverse_restore(db, that) puts the
** caller's setting back. */
int ga_reverse_off(sqlite3 *db);
void ga_reverse_restore(sqlite3 *db, int on);

/* The text of a quoted SQL string ('it''s'), sqlite3_malloc'd; NULL when z
** is not exactly one well-formed string literal (a lone quote inside, as in
** 'a 'b' c', which is three tokens), or out of memory. */
char *ga_unquote(const char *z);

#endif
