/*
** states.c — SQL functions of exact aggregate states (README
** "Aggregate states").
**
** SQL interface:
**
**   gpu_sum_state(X), gpu_total_state(X), gpu_avg_state(X)
**        aggregate: a BLOB holding the exact sum partial of X (one format
**        for all three).  Empty input gives an empty state, never NULL.
**   gpu_max_state(X), gpu_min_state(X)
**        aggregate: a BLOB holding max(X) / min(X), value and type.
**   gpu_sum_merge(S), gpu_total_merge(S), gpu_avg_merge(S)
**        aggregate over sum states: what gpu_sum/total/avg return over the
**        union of the rows behind them, value and type.
**   gpu_max_merge(S), gpu_min_merge(S)
**        aggregate over max/min states; among equal INTEGER and REAL values
**        the state merged first wins.
**   (gpuagg_partial, the fused state the workers step, is ext/workers/.)
**
** Rules this file keeps:
**   1. NULL states are skipped; anything else that is not a valid state of
**      the right kind (TEXT, numbers, garbage, truncated, another kind, a
**      newer format version) is an error naming the function:
**      "gpu_sum_merge: ...".  Never a crash, never an answer from it.
**   2. Values are classified as the built-ins do: the sum family by
**      sqlite3_value_numeric_type, max/min by the storage class, TEXT as
**      the bytes of the database encoding (which the state records; a TEXT
**      state of another encoding is refused by the max/min merges, because
**      its order there would differ).
**   3. The _state functions and the sum-family _merge functions are also
**      window functions (exact removal); gpu_max/min_state and _merge are
**      plain aggregates.
**   4. Every aggregate is SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, as the
**      other gpu_ aggregates: no side effects, and every input is
**      validated before use.
**   5. xFinal frees every copy an aggregate holds (the only cleanup hook
**      SQLite guarantees).
**   6. Registered from ext/init.c's table: each function's user data is a
**      ga_fn_data (name and aggregate) holding a reference to the ga_conn
**      (ext/common/conn.c rule 1).
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "state.h"
#include "states.h"

/* ---- the connection's encoding: ga_db_encoding (ext/common/values.c) ---- */

static const char *enc_name(int enc) {
  return enc == SQLITE_UTF16LE   ? "UTF-16le"
         : enc == SQLITE_UTF16BE ? "UTF-16be"
                                 : "UTF-8";
}

static int enc_of(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  return ga_db_encoding(ctx, &d->conn->enc);
}

static const char *fn_name(sqlite3_context *ctx) {
  return ((ga_fn_data *)sqlite3_user_data(ctx))->name;
}

static void error(sqlite3_context *ctx, const char *why) {
  char *m = sqlite3_mprintf("%s: %s", fn_name(ctx), why);
  if (m) {
    sqlite3_result_error(ctx, m, -1);
    sqlite3_free(m);
  } else {
    sqlite3_result_error_nomem(ctx);
  }
}

/* ---- gpu_sum_state, gpu_total_state, gpu_avg_state ---- */

typedef struct sum_ctx {
  ga_xstate s;
  int64_t nadd; /* adds and removals since the sum was normalised */
} sum_ctx;

/* Add (sign 1) or remove (-1) one value, sum()'s classification. */
static void sum_one(sqlite3_context *ctx, sqlite3_value *v, int sign) {
  sum_ctx *c = sqlite3_aggregate_context(ctx, sizeof(*c));
  if (!c) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  switch (sqlite3_value_numeric_type(v)) {
  case SQLITE_NULL:
    return;
  case SQLITE_INTEGER:
    ga_sum_add_int(&c->s.sum, sqlite3_value_int64(v), sign);
    break;
  default: /* REAL, and text/blob as their numeric prefix */
    ga_xacc_add_real(&c->s.sum, sqlite3_value_double(v), sign);
  }
  c->s.count += sign;
  c->s.rows += sign;
  if ((++c->nadd & GA_STATE_NORM_MASK) == 0)
    ga_sum_normalize(&c->s.sum);
}

void ga_states_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sum_one(ctx, argv[0], 1);
}

void ga_states_sum_inverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc;
  sum_one(ctx, argv[0], -1);
}

void ga_states_sum_value(sqlite3_context *ctx) {
  sum_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  ga_result_state(ctx, c ? &c->s : &empty, GA_STATE_SUM);
}

/* ---- gpu_max_state, gpu_min_state ---- */

void ga_states_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_fn_data *d = sqlite3_user_data(ctx);
  sqlite3_value *v = argv[0];
  ga_value x;
  int type = sqlite3_value_type(v);
  switch (type) {
  case SQLITE_NULL:
    return;
  case SQLITE_INTEGER:
    x.type = GA_V_INT;
    x.i = sqlite3_value_int64(v);
    break;
  case SQLITE_FLOAT:
    x.type = GA_V_REAL;
    x.r = sqlite3_value_double(v);
    break;
  default:
    break;
  }
  ga_xstate *s = sqlite3_aggregate_context(ctx, sizeof(*s));
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
    int enc = enc_of(ctx);
    if (!enc)
      return; /* the error is set */
    if (!ga_value_bytes(v, type, enc, &x)) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    if (type == SQLITE_TEXT)
      s->enc = enc;
  }
  int rc = d->op == GA_AGG_MIN ? ga_xstate_step_min(s, &x)
                               : ga_xstate_step_max(s, &x);
  if (rc)
    sqlite3_result_error_nomem(ctx);
}

void ga_states_best_final(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  ga_result_state(ctx, s ? s : &empty,
                  d->op == GA_AGG_MIN ? GA_STATE_MIN : GA_STATE_MAX);
  if (s)
    ga_xstate_clear(s);
}

/* ---- the merges ---- */

/* The state argument, or NULL (skip it, or an error has been set). */
static const void *state_arg(sqlite3_context *ctx, sqlite3_value *v, int64_t *n,
                             const char *made_by) {
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL)
    return NULL;
  if (t != SQLITE_BLOB) {
    char *m =
        sqlite3_mprintf("expects a state BLOB made by %s, not %s", made_by,
                        t == SQLITE_TEXT      ? "a TEXT value"
                        : t == SQLITE_INTEGER ? "an INTEGER"
                                              : "a REAL");
    if (m)
      error(ctx, m);
    else
      sqlite3_result_error_nomem(ctx);
    sqlite3_free(m);
    return NULL;
  }
  const void *p = sqlite3_value_blob(v);
  *n = sqlite3_value_bytes(v);
  if (!p && *n) { /* the copy out of the record failed */
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  if (!p)
    p = ""; /* an empty BLOB: decode refuses it */
  return p;
}

/* Decode the argument of a merge into *s; 1 when there is a state. */
static int decode_arg(sqlite3_context *ctx, sqlite3_value *v, int kind,
                      ga_xstate *s) {
  int64_t n = 0;
  const void *p =
      state_arg(ctx, v, &n,
                kind == GA_STATE_SUM
                    ? "gpu_sum_state(), gpu_total_state() or gpu_avg_state()"
                : kind == GA_STATE_MAX ? "gpu_max_state()"
                                       : "gpu_min_state()");
  if (!p)
    return 0;
  const char *err = NULL;
  int rc = ga_state_decode(p, n, kind, s, &err);
  if (rc == GA_NOMEM) {
    sqlite3_result_error_nomem(ctx);
    return 0;
  }
  if (rc != GA_OK) {
    error(ctx, err);
    return 0;
  }
  return 1;
}

static void sum_merge_one(sqlite3_context *ctx, sqlite3_value *v, int sign) {
  if (sqlite3_value_type(v) == SQLITE_NULL)
    return;
  ga_xstate t;
  if (!decode_arg(ctx, v, GA_STATE_SUM, &t))
    return;
  sum_ctx *c = sqlite3_aggregate_context(ctx, sizeof(*c));
  if (!c) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (ga_xstate_merge_sum(&c->s, &t, sign))
    error(ctx, "the merged counts exceed 2^63");
}

void ga_merge_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sum_merge_one(ctx, argv[0], 1);
}

void ga_merge_sum_inverse(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  (void)argc;
  sum_merge_one(ctx, argv[0], -1);
}

void ga_merge_sum_value(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  sum_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  ga_value v;
  if (ga_xstate_result(c ? &c->s : &empty, d->op, &v) == GA_OVERFLOW)
    sqlite3_result_error(ctx, "integer overflow", -1); /* as gpu_sum */
  else
    ga_result_value(ctx, &v, 0);
}

void ga_merge_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_fn_data *d = sqlite3_user_data(ctx);
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
    return;
  int kind = d->op == GA_AGG_MIN ? GA_STATE_MIN : GA_STATE_MAX;
  ga_xstate t;
  if (!decode_arg(ctx, argv[0], kind, &t))
    return;
  const ga_bval *b = kind == GA_STATE_MIN ? &t.min : &t.max;
  if (b->type == GA_V_TEXT) {
    int enc = enc_of(ctx);
    if (!enc) { /* the error is set */
      ga_xstate_clear(&t);
      return;
    }
    if (t.enc != enc) {
      char m[160];
      snprintf(m, sizeof m,
               "the state holds TEXT compared as %s, but this database is "
               "%s; merge it in a %s database",
               enc_name(t.enc), enc_name(enc), enc_name(t.enc));
      error(ctx, m);
      ga_xstate_clear(&t);
      return;
    }
  }
  ga_xstate *s = sqlite3_aggregate_context(ctx, sizeof(*s));
  int rc = s ? ga_xstate_merge(s, &t) : GA_NOMEM;
  ga_xstate_clear(&t);
  if (rc == GA_NOMEM)
    sqlite3_result_error_nomem(ctx);
}

void ga_merge_best_final(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_value v;
  if (!s) {
    sqlite3_result_null(ctx);
    return;
  }
  ga_xstate_result(s, d->op, &v);
  ga_result_value(ctx, &v, s->enc);
  ga_xstate_clear(s);
}
