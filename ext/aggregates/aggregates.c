/*
** gpuagg.c — SQLite glue of the gpuagg extension.
**
** SQL interface:
**
**   gpu_sum(X)     like sum(X): INTEGER when every value is an integer (exact,
**                  'integer overflow' when the total leaves int64), else the
**                  correctly rounded REAL of the exact sum; NULL when empty.
**   gpu_total(X)   like total(X): always REAL, 0.0 when empty.
**   gpu_avg(X)     like avg(X): exact sum / count, rounded once.
**   gpu_max(X)     like max(X) on a scan: value and type, first seen wins.
**   gpu_min(X)     like min(X).
**   gpuagg_config(NAME [, VALUE])   read or set a knob of this connection.
**   gpuagg_info()  JSON: build, CUDA, devices, config, counters, last run.
**   gpuagg_version()
**   gpu_matadd(A, B)               virtual table (ext/matadd_vtab.c).
**   gpu_<agg>_state(X), gpu_<agg>_merge(S)   exact states (ext/state_fns.c).
**   gpu_aggregate(T, X [, F [, G]]) table-valued (ext/aggregate_vtab.c).
**
** Rules this file keeps:
**   1. Values are classified exactly as the built-ins do: sum-like
**      functions use sqlite3_value_numeric_type, max/min the storage type.
**   2. Every aggregate is also a window function (xValue, xInverse).
**   3. The aggregates are SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS: honest,
**      because the results are exact and do not depend on path or order.
**      gpuagg_config is SQLITE_DIRECTONLY.
**   4. xFinal is the only cleanup hook SQLite guarantees, so every engine
**      object of an aggregate is freed there, also after an error.
**   5. Nothing touches CUDA at .load; the engine starts it at first GPU use.
**   6. Every registration that points at a connection's state holds a
**      reference to it (ga_conn_ref), so a failed .load or a closing
**      connection never leaves a pointer to freed memory.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

#include "agg.h"
#include "cache_glue.h"
#include "chunk.h"
#include "gpu.h"
#include "gpuagg_ext.h"
#include "xacc.h"

#define GPUAGG_VERSION "0.1.0"

/* ---- connections: one ga_conn per db, found again on a second .load ---- */

typedef struct ga_conn_node {
  sqlite3 *db;
  ga_conn *conn;
  struct ga_conn_node *next;
} ga_conn_node;

static pthread_mutex_t conns_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_conn_node *conns;

/* Every function and the module registered for a connection hold a
** reference to its ga_conn, released by their destructors: when the
** connection closes, when a registration fails (SQLite calls the destructor
** then too), or when a failed .load takes them back.  The last release frees
** it, so nothing can point at a freed ga_conn. */
void ga_conn_ref(ga_conn *conn) {
  __atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
}

void ga_conn_unref(void *p) {
  ga_conn *conn = p;
  if (__atomic_sub_fetch(&conn->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  int last;
  pthread_mutex_lock(&conns_mu);
  for (ga_conn_node **pp = &conns; *pp; pp = &(*pp)->next)
    if ((*pp)->conn == conn) {
      ga_conn_node *n = *pp;
      *pp = n->next;
      sqlite3_free(n);
      break;
    }
  last = conns == NULL;
  pthread_mutex_unlock(&conns_mu);
  ga_cache_free(conn->cache); /* its entries die with the connection */
  sqlite3_free(conn);
  if (last)
    ga_pool_trim(); /* no connection left to reuse cached chunks */
}

/* Destructor of an aggregate's user data (&conn->fns[i]). */
static void fn_unref(void *p) { ga_conn_unref(((ga_fn_data *)p)->conn); }

/* ---- aggregates ---- */

/* The aggregates, registered from this one table. */
static const ga_fn_data agg_fns[GA_NAGG] = {
    {"gpu_sum", GA_AGG_SUM, NULL}, {"gpu_total", GA_AGG_TOTAL, NULL},
    {"gpu_avg", GA_AGG_AVG, NULL}, {"gpu_max", GA_AGG_MAX, NULL},
    {"gpu_min", GA_AGG_MIN, NULL},
};

/* Called for every row: no memset, only the fields the type needs.
** Returns GA_OK, or GA_NOMEM when SQLite could not give the text or blob
** (a conversion to the database's encoding failed): that must be an error,
** never an empty string in its place. */
static int to_value(int op, int enc, sqlite3_value *v, ga_value *out) {
  if (op <= GA_AGG_AVG) {
    /* sum()'s classification: text that looks like a number is that
    ** number; any other text or blob is its numeric prefix, as a REAL */
    int t = sqlite3_value_numeric_type(v);
    if (t == SQLITE_NULL) {
      out->type = GA_V_NULL;
    } else if (t == SQLITE_INTEGER) {
      out->type = GA_V_INT;
      out->i = sqlite3_value_int64(v);
    } else {
      out->type = GA_V_REAL;
      out->r = sqlite3_value_double(v);
    }
    return GA_OK;
  }
  switch (sqlite3_value_type(v)) { /* max()'s: the storage class as it is */
  case SQLITE_INTEGER:
    out->type = GA_V_INT;
    out->i = sqlite3_value_int64(v);
    break;
  case SQLITE_FLOAT:
    out->type = GA_V_REAL;
    out->r = sqlite3_value_double(v);
    break;
  case SQLITE_TEXT: /* in the database's encoding, as BINARY compares it */
  case SQLITE_BLOB:
    if (!ga_value_bytes(v, sqlite3_value_type(v), enc, out))
      return GA_NOMEM;
    break;
  default:
    out->type = GA_V_NULL;
  }
  return GA_OK;
}

/* max()'s view of a TEXT or BLOB value: its bytes in encoding enc (the
** database's: BINARY compares them with memcmp).  0 when SQLite could not
** give them (a conversion ran out of memory): that must be an error, never
** an empty string in their place.  An empty BLOB may come back NULL. */
int ga_value_bytes(sqlite3_value *v, int type, int enc, ga_value *out) {
  out->type = type == SQLITE_TEXT ? GA_V_TEXT : GA_V_BLOB;
  if (type == SQLITE_BLOB) {
    out->p = sqlite3_value_blob(v);
    out->n = sqlite3_value_bytes(v);
  } else if (enc == SQLITE_UTF16LE) {
    out->p = sqlite3_value_text16le(v);
    out->n = sqlite3_value_bytes16(v);
  } else if (enc == SQLITE_UTF16BE) {
    out->p = sqlite3_value_text16be(v);
    out->n = sqlite3_value_bytes16(v);
  } else {
    out->p = sqlite3_value_text(v);
    out->n = sqlite3_value_bytes(v);
  }
  if (!out->p && type == SQLITE_BLOB && out->n == 0)
    out->p = ""; /* the empty blob */
  return out->p != NULL;
}

/* The main database's text encoding (a connection's conn->enc, or a
** worker's own).  Rules:
**   1. Read with PRAGMA encoding; 0 when it cannot be read (out of memory,
**      a busy schema): the error is then set on ctx and NOT remembered,
**      since a cached guess would compare UTF-16 text as UTF-8 for the
**      connection's whole life.
**   2. Kept in *cache only once it can no longer change: PRAGMA encoding =
**      changes it while the main database has no schema object (SQLite
**      fixes it at the first CREATE, main or temp; page_count is no sign:
**      PRAGMA user_version = 1 writes page 1 and leaves it open).  Until
**      then it is read again on every call (attached databases must match
**      main, so main's is every schema's). */
int ga_db_encoding_of(sqlite3 *db, int *enc) {
  sqlite3_stmt *st = NULL;
  *enc = 0;
  int rc = sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    const char *e =
        rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (e)
      *enc = !strcmp(e, "UTF-16le")   ? SQLITE_UTF16LE
             : !strcmp(e, "UTF-16be") ? SQLITE_UTF16BE
                                      : SQLITE_UTF8;
    else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
      rc = SQLITE_NOMEM; /* the row's text could not be made */
  }
  sqlite3_finalize(st);
  return *enc ? SQLITE_OK : rc;
}

/* Rule 2: has a schema object fixed the encoding?  Asked before the
** encoding is read, so that a schema another connection just created is
** loaded first.  0 also when it cannot tell (not cached then). */
static int enc_fixed(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int fixed = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT EXISTS (SELECT 1 FROM main.sqlite_schema) OR "
                         "EXISTS (SELECT 1 FROM temp.sqlite_schema)",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    fixed = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return fixed;
}

int ga_db_encoding(sqlite3_context *ctx, int *cache) {
  if (*cache)
    return *cache;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int enc, fixed = enc_fixed(db);
  int rc = ga_db_encoding_of(db, &enc);
  if (enc && fixed)
    *cache = enc;
  else if (!enc && (rc & 0xff) == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  else if (!enc)
    sqlite3_result_error_code(ctx, rc);
  return enc;
}

/* Inlined: it runs for every row. */
static inline __attribute__((always_inline)) ga_agg **
agg_get(sqlite3_context *ctx, int create) {
  ga_agg **pp = sqlite3_aggregate_context(ctx, create ? sizeof(ga_agg *) : 0);
  if (!pp || *pp || !create)
    return pp;
  ga_fn_data *d = sqlite3_user_data(ctx);
  *pp = ga_agg_new(d->op, &d->conn->cfg, &d->conn->last);
  return *pp ? pp : NULL;
}

/* Out of line (cold): the flattened xSteps would otherwise save and restore
** its registers on every row. */
__attribute__((noinline, cold)) static void report(sqlite3_context *ctx,
                                                   int rc) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  if (rc == GA_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else if (rc == GA_OVERFLOW) {
    sqlite3_result_error(ctx, "integer overflow", -1);
  } else if (rc == GA_WINDOW_LOST) {
    char *m = sqlite3_mprintf(
        "%s: this window frame held more than %lld values (or %d MiB of "
        "text and blobs) before its first result and cannot slide; use %s() "
        "for it",
        d->name, (long long)GA_HISTORY_MAX, (int)(GA_HISTORY_TEXT_BYTES >> 20),
        d->name + 4);
    sqlite3_result_error(ctx, m ? m : "window frame too large", -1);
    sqlite3_free(m);
  }
}

/* xStep of gpu_max and gpu_min: numbers take a short path; text and blob
** (compared in the database's encoding) the general one. */
static void ga_xstep(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_agg **pp = agg_get(ctx, 1);
  if (!pp) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_value *arg = argv[0];
  int rc;
  switch (sqlite3_value_type(arg)) {
  case SQLITE_NULL:
    return;
  case SQLITE_INTEGER:
    rc = ga_agg_best_num(*pp, (uint64_t)sqlite3_value_int64(arg), GA_KIND_INT);
    break;
  case SQLITE_FLOAT:
    rc = ga_agg_best_num(*pp, (uint64_t)ga_dbits(sqlite3_value_double(arg)),
                         GA_KIND_REAL);
    break;
  default: {
    ga_value v;
    ga_fn_data *d = sqlite3_user_data(ctx);
    int enc = ga_db_encoding(ctx, &d->conn->enc);
    if (!enc)
      return; /* the error is set */
    rc = to_value(d->op, enc, arg, &v);
    if (rc == GA_OK)
      rc = ga_agg_step(*pp, &v);
  }
  }
  if (rc)
    report(ctx, rc);
}

/* xStep of gpu_sum, gpu_total, gpu_avg: the hot loop of a sum query, so no
** ga_value and no op dispatch; sum()'s classification. */
__attribute__((flatten)) /* one function per row, the engine's push inside */
static void
ga_xstep_sum(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_agg **pp = agg_get(ctx, 1);
  if (!pp) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_value *v = argv[0];
  int rc;
  switch (sqlite3_value_numeric_type(v)) {
  case SQLITE_INTEGER:
    rc = ga_agg_push_int(*pp, sqlite3_value_int64(v));
    break;
  case SQLITE_NULL:
    return;
  default: /* REAL, and text/blob as their numeric prefix */
    rc = ga_agg_push_real(*pp, sqlite3_value_double(v));
  }
  if (rc)
    report(ctx, rc);
}

static void ga_xinverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_fn_data *d = sqlite3_user_data(ctx);
  ga_value v;
  int enc = 0;
  if (d->op >= GA_AGG_MAX && !(enc = ga_db_encoding(ctx, &d->conn->enc)))
    return; /* the error is set */
  int rc = to_value(d->op, enc, argv[0], &v);
  if (rc) {
    report(ctx, rc);
    return;
  }
  ga_agg **pp = agg_get(ctx, 1);
  if (!pp) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = ga_agg_inverse(*pp, &v);
  if (rc)
    report(ctx, rc);
}

void ga_result_value(sqlite3_context *ctx, const ga_value *v, int enc) {
  switch (v->type) {
  case GA_V_INT:
    sqlite3_result_int64(ctx, v->i);
    break;
  case GA_V_REAL:
    sqlite3_result_double(ctx, v->r);
    break;
  case GA_V_TEXT:
    if (enc == SQLITE_UTF16LE)
      sqlite3_result_text16le(ctx, v->p, v->n, SQLITE_TRANSIENT);
    else if (enc == SQLITE_UTF16BE)
      sqlite3_result_text16be(ctx, v->p, v->n, SQLITE_TRANSIENT);
    else
      sqlite3_result_text(ctx, v->p, v->n, SQLITE_TRANSIENT);
    break;
  case GA_V_BLOB:
    sqlite3_result_blob(ctx, v->p, v->n, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_result_null(ctx);
  }
}

static void result(sqlite3_context *ctx, const ga_value *v) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  int enc = d->conn->enc; /* read by the steps that stored the text */
  if (v->type == GA_V_TEXT && !enc && !(enc = ga_db_encoding(ctx, &enc)))
    return; /* the error is set */
  ga_result_value(ctx, v, enc);
}

static void empty_result(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  if (d->op == GA_AGG_TOTAL)
    sqlite3_result_double(ctx, 0.0);
  else
    sqlite3_result_null(ctx);
}

/* xValue (final = 0) and xFinal (final = 1). */
static void answer(sqlite3_context *ctx, int final) {
  ga_agg **pp = agg_get(ctx, 0);
  if (!pp || !*pp) {
    empty_result(ctx);
    return;
  }
  ga_value v;
  int rc = final ? ga_agg_final(*pp, &v) : ga_agg_value(*pp, &v);
  if (rc)
    report(ctx, rc);
  else
    result(ctx, &v);
  if (final) {
    ga_agg_free(*pp); /* after result(): text/blob results point into it */
    *pp = NULL;
  }
}

static void ga_xvalue(sqlite3_context *ctx) { answer(ctx, 0); }
static void ga_xfinal(sqlite3_context *ctx) { answer(ctx, 1); }

/* ---- gpuagg_config, gpuagg_info, gpuagg_version ---- */

static void ga_config_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_conn *conn = sqlite3_user_data(ctx);
  char err[256], buf[64];
  const char *name = (const char *)sqlite3_value_text(argv[0]);
  if (!name) {
    sqlite3_result_error(ctx, "gpuagg_config: the name must not be NULL", -1);
    return;
  }
  if (argc == 2) {
    ga_config c = conn->cfg;
    if (ga_config_set(&c, name, (const char *)sqlite3_value_text(argv[1]), err,
                      sizeof err)) {
      sqlite3_result_error(ctx, err, -1);
      return;
    }
    conn->cfg = c;
  }
  if (ga_config_get(&conn->cfg, name, buf, sizeof buf, err, sizeof err)) {
    sqlite3_result_error(ctx, err, -1);
    return;
  }
  if (!strcmp(name, "device"))
    sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
  else
    sqlite3_result_int64(ctx, strtoll(buf, NULL, 10));
}

static void ga_info_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  ga_conn *conn = sqlite3_user_data(ctx);
  char gpu[4096], cfg[640], scan[1024];
  ga_counters k;
  /* device = 'cpu' promises not to touch CUDA: report, do not start it */
  ga_gpu_json(gpu, sizeof gpu, conn->cfg.device != GA_DEVICE_CPU);
  ga_config_json(&conn->cfg, cfg, sizeof cfg);
  ga_counters_get(&k);
  size_t gl = strlen(gpu);
  if (gl >= 2)
    gpu[gl - 1] = 0; /* splice its members into ours */
  const ga_last *l = &conn->last;
  ga_scan_last_json(&conn->scan, scan, sizeof scan);
  char *cache = ga_cache_json(conn, sqlite3_context_db_handle(ctx));
  if (!cache) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  char errs[512];
  size_t e = 0;
  for (int st = 0; st < GA_NSTAGES; st++)
    e += (size_t)snprintf(errs + e, sizeof errs - e, "%s\"%s\":%lld",
                          st ? "," : "", ga_stage_name(st),
                          (long long)k.stage_errors[st]);
  char *json = sqlite3_mprintf(
      "{\"version\":\"%s\",%s,\"config\":%s,"
      "\"counters\":{\"aggregates_cpu\":%lld,\"aggregates_gpu\":%lld,"
      "\"chunks_cpu\":%lld,\"chunks_gpu\":%lld,\"fallbacks\":%lld,"
      "\"matadd_cpu\":%lld,\"matadd_gpu\":%lld,\"pinned_bytes\":%lld,"
      "\"errors\":{%s}},"
      "\"last\":{\"path\":\"%s\",\"rows\":%lld,\"chunks_cpu\":%lld,"
      "\"chunks_gpu\":%lld,\"fallbacks\":%lld,\"h2d_ms\":%.3f,"
      "\"kernel_ms\":%.3f,\"finalize_ms\":%.3f,\"total_ms\":%.3f},"
      "\"last_scan\":%s,\"scans\":{\"pool_idle\":%d,\"pool_max_idle\":%d,"
      "\"waiting_for_snapshot\":%d,\"caller_in_piece\":%d},\"cache\":%s}",
      GPUAGG_VERSION, gpu + 1, cfg, (long long)k.agg_cpu, (long long)k.agg_gpu,
      (long long)k.chunks_cpu, (long long)k.chunks_gpu, (long long)k.fallbacks,
      (long long)k.matadd_cpu, (long long)k.matadd_gpu,
      (long long)ga_pool_pinned_bytes(), errs, l->path ? l->path : "none",
      (long long)l->rows, (long long)l->chunks_cpu, (long long)l->chunks_gpu,
      (long long)l->fallbacks, l->h2d_ms, l->kernel_ms, l->finalize_ms,
      l->total_ms, scan, ga_scan_pool_idle(), GA_SCAN_POOL_MAX_IDLE,
      ga_scan_now_waiting(), ga_scan_now_in_caller_piece(), cache);
  sqlite3_free(cache);
  if (!json) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, json, -1, sqlite3_free);
}

static void ga_version_fn(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  (void)argc, (void)argv;
  sqlite3_result_text(ctx, GPUAGG_VERSION, -1, SQLITE_STATIC);
}

/* ---- registration ---- */

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
    int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                            const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg;
  int rc = SQLITE_OK;
  const int det = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;

  /* Loaded twice into one connection: everything is registered already. */
  pthread_mutex_lock(&conns_mu);
  for (ga_conn_node *n = conns; n; n = n->next)
    if (n->db == db) {
      pthread_mutex_unlock(&conns_mu);
      return SQLITE_OK;
    }
  pthread_mutex_unlock(&conns_mu);

  ga_conn *conn = sqlite3_malloc64(sizeof(*conn));
  ga_conn_node *node = sqlite3_malloc64(sizeof(*node));
  if (!conn || !node) {
    sqlite3_free(conn);
    sqlite3_free(node);
    return SQLITE_NOMEM;
  }
  memset(conn, 0, sizeof(*conn));
  conn->refs = 1; /* this function's own, dropped at the end */
  ga_config_default(&conn->cfg);
  conn->cache = ga_cache_new();
  if (!conn->cache) {
    sqlite3_free(conn);
    sqlite3_free(node);
    return SQLITE_NOMEM;
  }
  node->db = db;
  node->conn = conn;
  pthread_mutex_lock(&conns_mu);
  node->next = conns;
  conns = node;
  pthread_mutex_unlock(&conns_mu);

  /* each registration takes a reference first: its destructor releases it,
  ** also when the registration itself fails */
  for (int i = 0; rc == SQLITE_OK && i < GA_NAGG; i++) {
    conn->fns[i] = agg_fns[i];
    conn->fns[i].conn = conn;
    ga_conn_ref(conn);
    rc = sqlite3_create_window_function(
        db, agg_fns[i].name, 1, det, &conn->fns[i],
        agg_fns[i].op <= GA_AGG_AVG ? ga_xstep_sum : ga_xstep, ga_xfinal,
        ga_xvalue, ga_xinverse, fn_unref);
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "gpuagg_version", 0, det, NULL,
                                 ga_version_fn, NULL, NULL);
  if (rc == SQLITE_OK) {
    ga_conn_ref(conn);
    rc = sqlite3_create_function_v2(db, "gpuagg_info", 0,
                                    SQLITE_UTF8 | SQLITE_DIRECTONLY, conn,
                                    ga_info_fn, NULL, NULL, ga_conn_unref);
  }
  for (int nargs = 1; rc == SQLITE_OK && nargs <= 2; nargs++) {
    ga_conn_ref(conn);
    rc = sqlite3_create_function_v2(db, "gpuagg_config", nargs,
                                    SQLITE_UTF8 | SQLITE_DIRECTONLY, conn,
                                    ga_config_fn, NULL, NULL, ga_conn_unref);
  }
  if (rc == SQLITE_OK)
    rc = ga_matadd_register(db, conn);
  if (rc == SQLITE_OK)
    rc = ga_aggregate_register(db, conn);
  if (rc == SQLITE_OK)
    rc = ga_state_register(db, conn);
  if (rc == SQLITE_OK)
    rc = ga_cache_register(db, conn);
  if (rc != SQLITE_OK) {
    /* take back everything that points at conn (their destructors release
    ** their references); deleting what was never registered is harmless */
    for (int i = 0; i < GA_NAGG; i++)
      sqlite3_create_window_function(db, agg_fns[i].name, 1, SQLITE_UTF8, NULL,
                                     NULL, NULL, NULL, NULL, NULL);
    sqlite3_create_function(db, "gpuagg_info", 0, SQLITE_UTF8, NULL, NULL, NULL,
                            NULL);
    for (int nargs = 1; nargs <= 2; nargs++)
      sqlite3_create_function(db, "gpuagg_config", nargs, SQLITE_UTF8, NULL,
                              NULL, NULL, NULL);
    ga_matadd_unregister(db);
    ga_aggregate_unregister(db);
    ga_state_unregister(db);
    ga_cache_unregister(db);
  }
  ga_conn_unref(conn); /* frees conn now if nothing holds it */
  return rc;
}
