/*
** state_fns.c — SQL functions of exact aggregate states (README
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
**   gpuagg_partial(X)   (worker connections of gpu_aggregate only, see
**        ga_state_register_worker): one BLOB with rows, count, exact sum,
**        max and min of X, stepped by one call per row.
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
**   6. Each registration on a user's connection holds a reference to its
**      ga_conn (ext/gpuagg.c rule 6).
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "gpuagg_ext.h"
#include "state.h"

/* ---- the connection's encoding: ga_db_encoding (ext/gpuagg.c) ---- */

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

static void result_value(sqlite3_context *ctx, const ga_value *v, int enc) {
  switch (v->type) {
  case GA_V_INT:
    sqlite3_result_int64(ctx, v->i);
    break;
  case GA_V_REAL:
    sqlite3_result_double(ctx, v->r);
    break;
  case GA_V_TEXT:
    sqlite3_result_text64(ctx, v->p, (sqlite3_uint64)v->n, SQLITE_TRANSIENT,
                          (unsigned char)(enc ? enc : SQLITE_UTF8));
    break;
  case GA_V_BLOB:
    sqlite3_result_blob64(ctx, v->p, (sqlite3_uint64)v->n, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_result_null(ctx);
  }
}

/* A state as the result.  The common small state goes through a stack
** buffer and SQLITE_TRANSIENT: SQLite copies it into the connection's
** memory (its lookaside, where the build has one), and our own
** sqlite3_malloc and sqlite3_free, each taking SQLite's global memory
** mutex, are saved.  Workers in sorted mode return one state per group and
** piece, and their threads queued on that mutex (bench/RESULTS.md §8). */
static void result_state(sqlite3_context *ctx, const ga_xstate *s, int kind) {
  unsigned char small[256], *b;
  int64_t n = ga_state_encode_buf(s, kind, small, (int64_t)sizeof(small));
  if (n <= (int64_t)sizeof(small)) {
    sqlite3_result_blob64(ctx, small, (sqlite3_uint64)n, SQLITE_TRANSIENT);
    return;
  }
  if (ga_state_encode(s, kind, &b, &n) != GA_OK) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_blob64(ctx, b, (sqlite3_uint64)n, sqlite3_free);
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

static void sum_state_step(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc;
  sum_one(ctx, argv[0], 1);
}

static void sum_state_inverse(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  (void)argc;
  sum_one(ctx, argv[0], -1);
}

static void sum_state_value(sqlite3_context *ctx) {
  sum_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  result_state(ctx, c ? &c->s : &empty, GA_STATE_SUM);
}

/* ---- gpu_max_state, gpu_min_state ---- */

static void best_state_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
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

static void best_state_final(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  result_state(ctx, s ? s : &empty,
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

static void sum_merge_step(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc;
  sum_merge_one(ctx, argv[0], 1);
}

static void sum_merge_inverse(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  (void)argc;
  sum_merge_one(ctx, argv[0], -1);
}

static void sum_merge_value(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  sum_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  ga_value v;
  if (ga_xstate_result(c ? &c->s : &empty, d->op, &v) == GA_OVERFLOW)
    sqlite3_result_error(ctx, "integer overflow", -1); /* as gpu_sum */
  else
    result_value(ctx, &v, 0);
}

static void best_merge_step(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
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

static void best_merge_final(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_value v;
  if (!s) {
    sqlite3_result_null(ctx);
    return;
  }
  ga_xstate_result(s, d->op, &v);
  result_value(ctx, &v, s->enc);
  ga_xstate_clear(s);
}

/* ---- gpuagg_partial: the fused worker aggregate ---- */

typedef struct worker_data {
  int enc; /* the worker connection's encoding, 0 until the first text */
} worker_data;

/* TEXT and BLOB: max()'s view first (numeric_type may turn the value into a
** number), then sum()'s. */
int ga_fused_step_other(ga_xstate *s, sqlite3_value *v, int type, int enc) {
  ga_value raw, num;
  if (!ga_value_bytes(v, type, enc, &raw) || ga_xstate_step_max(s, &raw) ||
      ga_xstate_step_min(s, &raw))
    return GA_NOMEM;
  if (type == SQLITE_TEXT)
    s->enc = enc;
  switch (sqlite3_value_numeric_type(v)) {
  case SQLITE_INTEGER:
    num.type = GA_V_INT;
    num.i = sqlite3_value_int64(v);
    break;
  default:
    num.type = GA_V_REAL;
    num.r = sqlite3_value_double(v);
  }
  ga_xstate_step_sum(s, &num);
  return GA_OK;
}

static void fused_other(sqlite3_context *ctx, ga_xstate *s, sqlite3_value *v,
                        int type) {
  worker_data *w = sqlite3_user_data(ctx);
  int enc = ga_db_encoding(ctx, &w->enc);
  if (!enc)
    return; /* the error is set */
  if (ga_fused_step_other(s, v, type, enc))
    sqlite3_result_error_nomem(ctx);
}

#ifndef GA_FUSED_BUFFER
/* One call per row: numbers take the inline path of state.h (no
** allocation, no dispatch; bench/state_rows.sh measured it against
** buffering values for ga_cpu_sum, GA_FUSED_BUFFER below). */
static void fused_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_xstate *s = sqlite3_aggregate_context(ctx, sizeof(*s));
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_value *v = argv[0];
  int type = sqlite3_value_type(v);
  switch (type) {
  case SQLITE_INTEGER:
    ga_xstate_step_int(s, sqlite3_value_int64(v));
    return;
  case SQLITE_FLOAT:
    ga_xstate_step_real(s, sqlite3_value_double(v));
    return;
  case SQLITE_NULL:
    ga_xstate_step_null(s);
    return;
  default:
    fused_other(ctx, s, v, type);
  }
}

static void fused_final(sqlite3_context *ctx) {
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  result_state(ctx, s ? s : &empty, GA_STATE_FUSED);
  if (s)
    ga_xstate_clear(s);
}
#else
/* The measured alternative (bench/state_rows.sh builds it): numbers are
** buffered 64 at a time and summed by ga_cpu_sum; max/min as above. */
#include "cpu_reduce.h"

typedef struct fused_ctx {
  ga_xstate s; /* first: fused_other steps it directly */
  int n;
  uint64_t isint;
  uint64_t buf[64];
} fused_ctx;

static void fused_flush(fused_ctx *c) {
  int layout = c->isint == ~0ull ? GA_LAYOUT_INT
               : c->isint == 0   ? GA_LAYOUT_REAL
                                 : GA_LAYOUT_MIXED;
  ga_cpu_sum(c->buf, &c->isint, c->n, layout, &c->s.sum);
  c->n = 0;
  c->isint = 0;
}

static void fused_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  fused_ctx *c = sqlite3_aggregate_context(ctx, sizeof(*c));
  if (!c) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  ga_xstate *s = &c->s;
  sqlite3_value *v = argv[0];
  int type = sqlite3_value_type(v);
  ga_value x;
  switch (type) {
  case SQLITE_INTEGER:
    x.type = GA_V_INT;
    x.i = sqlite3_value_int64(v);
    c->buf[c->n] = (uint64_t)x.i;
    c->isint |= 1ull << c->n;
    ga_xstate_best_int(&s->max, x.i, 0);
    ga_xstate_best_int(&s->min, x.i, 1);
    break;
  case SQLITE_FLOAT:
    x.type = GA_V_REAL;
    x.r = sqlite3_value_double(v);
    c->buf[c->n] = (uint64_t)ga_dbits(x.r);
    ga_xstate_best_real(&s->max, x.r, 0);
    ga_xstate_best_real(&s->min, x.r, 1);
    break;
  case SQLITE_NULL:
    s->rows++;
    return;
  default:
    fused_other(ctx, s, v, type);
    return;
  }
  s->rows++;
  s->count++;
  if (++c->n == 64) {
    fused_flush(c);
    if ((s->count & GA_STATE_NORM_MASK) < 64)
      ga_sum_normalize(&s->sum);
  }
}

static void fused_final(sqlite3_context *ctx) {
  fused_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  if (c)
    fused_flush(c);
  result_state(ctx, c ? &c->s : &empty, GA_STATE_FUSED);
  if (c)
    ga_xstate_clear(&c->s);
}
#endif

/* ---- registration ---- */

static const struct {
  const char *name;
  int op, merge;
} fns[] = {
    {"gpu_sum_state", GA_AGG_SUM, 0},     {"gpu_total_state", GA_AGG_TOTAL, 0},
    {"gpu_avg_state", GA_AGG_AVG, 0},     {"gpu_max_state", GA_AGG_MAX, 0},
    {"gpu_min_state", GA_AGG_MIN, 0},     {"gpu_sum_merge", GA_AGG_SUM, 1},
    {"gpu_total_merge", GA_AGG_TOTAL, 1}, {"gpu_avg_merge", GA_AGG_AVG, 1},
    {"gpu_max_merge", GA_AGG_MAX, 1},     {"gpu_min_merge", GA_AGG_MIN, 1},
};
#define NFNS ((int)(sizeof(fns) / sizeof(fns[0])))

static void fn_data_free(void *p) {
  ga_fn_data *d = p;
  ga_conn_unref(d->conn);
  sqlite3_free(d);
}

int ga_state_register(sqlite3 *db, ga_conn *conn) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = SQLITE_OK;
  for (int i = 0; rc == SQLITE_OK && i < NFNS; i++) {
    ga_fn_data *d = sqlite3_malloc64(sizeof(*d));
    if (!d)
      return SQLITE_NOMEM;
    d->name = fns[i].name;
    d->op = fns[i].op;
    d->conn = conn;
    ga_conn_ref(conn); /* released by fn_data_free, also on failure */
    int sum = fns[i].op <= GA_AGG_AVG;
    if (!fns[i].merge && sum)
      rc = sqlite3_create_window_function(
          db, d->name, 1, flags, d, sum_state_step, sum_state_value,
          sum_state_value, sum_state_inverse, fn_data_free);
    else if (!fns[i].merge)
      rc = sqlite3_create_function_v2(db, d->name, 1, flags, d, NULL,
                                      best_state_step, best_state_final,
                                      fn_data_free);
    else if (sum)
      rc = sqlite3_create_window_function(
          db, d->name, 1, flags, d, sum_merge_step, sum_merge_value,
          sum_merge_value, sum_merge_inverse, fn_data_free);
    else
      rc = sqlite3_create_function_v2(db, d->name, 1, flags, d, NULL,
                                      best_merge_step, best_merge_final,
                                      fn_data_free);
  }
  return rc;
}

void ga_state_unregister(sqlite3 *db) {
  for (int i = 0; i < NFNS; i++) /* deleting what is not there is harmless */
    sqlite3_create_window_function(db, fns[i].name, 1, SQLITE_UTF8, NULL, NULL,
                                   NULL, NULL, NULL, NULL);
}

int ga_state_register_worker(sqlite3 *db) {
  worker_data *w = sqlite3_malloc64(sizeof(*w));
  if (!w)
    return SQLITE_NOMEM;
  w->enc = 0;
  return sqlite3_create_function_v2(
      db, "gpuagg_partial", 1,
      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, w, NULL,
      fused_step, fused_final, sqlite3_free);
}
