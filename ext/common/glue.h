/*
** gpuagg_ext.h — what the SQLite glue files share.
*/
#ifndef GPUAGG_EXT_H
#define GPUAGG_EXT_H

#include "sqlite3ext.h"

#include "agg.h"
#include "config.h"
#include "scan.h"

typedef struct ga_conn ga_conn;

/* The user data of one aggregate function: which one, and its connection. */
typedef struct ga_fn_data {
  const char *name;
  int op; /* GA_AGG_* */
  ga_conn *conn;
} ga_fn_data;

#define GA_NAGG 5

/* One per connection: the user data of every function and module, freed
** when the connection closes. */
struct ga_conn {
  int refs;                /* see ga_conn_ref */
  ga_config cfg;           /* what gpuagg_config() set on this connection */
  ga_last last;            /* the last aggregate, for gpuagg_info() */
  ga_fn_data fns[GA_NAGG]; /* user data of the aggregates */
  ga_scan_last scan;       /* the last gpu_aggregate call (gpuagg_info) */
  int enc; /* the database's text encoding (SQLITE_UTF8/16LE/16BE), 0 until
              a max/min needs it once it is fixed (ga_db_encoding rule 2):
              BINARY collation is memcmp of it */
  struct ga_cache *cache; /* gpu_cache's entries (engine/cache.h) */
};

/* The bytes of a TEXT/BLOB value as max() compares them, in encoding enc
** (0: out of memory), and the main database's encoding, cached in *cache
** once it can no longer change (0: the error is set on ctx).
** ext/gpuagg.c. */
int ga_value_bytes(sqlite3_value *v, int type, int enc, ga_value *out);
int ga_db_encoding(sqlite3_context *ctx, int *cache);
/* The same for a connection: SQLite result code, *enc set on SQLITE_OK. */
int ga_db_encoding_of(sqlite3 *db, int *enc);
/* v as the function's result; TEXT given in encoding enc. */
void ga_result_value(sqlite3_context *ctx, const ga_value *v, int enc);

/* References held by every registration that points at a ga_conn; the
** last release frees it (ext/gpuagg.c). */
void ga_conn_ref(ga_conn *conn);
void ga_conn_unref(void *conn);

/* gpu_matadd (ext/matadd_vtab.c): register, or take back after a failed
** .load. */
int ga_matadd_register(sqlite3 *db, ga_conn *conn);
void ga_matadd_unregister(sqlite3 *db);

/* Aggregate states (ext/state_fns.c): the _state/_merge aggregates on a
** user's connection (and taking them back after a failed .load), and the
** fused per-row aggregate gpuagg_partial(X) on a gpu_aggregate worker's
** private connection. */
int ga_state_register(sqlite3 *db, ga_conn *conn);
void ga_state_unregister(sqlite3 *db);
int ga_state_register_worker(sqlite3 *db);
/* gpuagg_partial's step of a TEXT or BLOB value (type) into s, the text in
** the database's encoding enc: max()'s view, then sum()'s.  GA_OK or
** GA_NOMEM.  Also gpu_aggregate's hash-mode workers (ga_scan_spec). */
int ga_fused_step_other(ga_xstate *s, sqlite3_value *v, int type, int enc);
/* Everything a gpu_aggregate worker's connection runs: gpuagg_partial and
** gpu_cache's collector (ext/cache_fns.c). */
int ga_worker_prep(sqlite3 *db);

/* gpu_aggregate (ext/aggregate_vtab.c): register, or take back after a
** failed .load. */
int ga_aggregate_register(sqlite3 *db, ga_conn *conn);
void ga_aggregate_unregister(sqlite3 *db);

#endif
