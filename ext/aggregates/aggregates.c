/*
** aggregates.c — gpu_sum, gpu_total, gpu_avg, gpu_max, gpu_min: exact
** aggregates and window functions (README "gpu_sum semantics").
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
**
** Rules this file keeps:
**   1. Values are classified exactly as the built-ins do: sum-like
**      functions use sqlite3_value_numeric_type, max/min the storage type.
**   2. Every aggregate is also a window function (xValue, xInverse).
**   3. The aggregates are SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS (ext/
**      init.c's table): honest, because the results are exact and do not
**      depend on path or order.
**   4. xFinal is the only cleanup hook SQLite guarantees, so every engine
**      object of an aggregate is freed there, also after an error.
**   5. Nothing touches CUDA at .load; the engine starts it at first GPU use.
**   6. User data: a ga_fn_data (name, GA_AGG_*, the ga_conn whose config
**      and last-run record the aggregate uses).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "agg.h"
#include "aggregates.h"
#include "glue.h"
#include "xacc.h"

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
void ga_fn_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
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
void ga_fn_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
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

void ga_fn_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
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

void ga_fn_value(sqlite3_context *ctx) { answer(ctx, 0); }
void ga_fn_final(sqlite3_context *ctx) { answer(ctx, 1); }
