/*
** var.c — exact variance and standard deviation (issue 39): aggregates and
** window functions over engine/reduce/xvar.h's exact state.
**
** SQL interface:
**
**   gpu_var_samp(X), gpu_variance(X)    sample variance: NULL for n < 2
**   gpu_var_pop(X)                      population variance: NULL for n = 0
**   gpu_stddev_samp(X), gpu_stddev(X)   sqrt of the sample variance
**   gpu_stddev_pop(X)                   sqrt of the population variance
**   gpu_var_state(X)    the exact state as a BLOB (kind 5 of the state
**                       family, engine/state/vstate.h); never NULL
**   gpu_var_merge(S [, FORM])  over such BLOBs: FORM (default 'var_samp')
**                       is 'var_samp', 'var_pop', 'stddev_samp' or
**                       'stddev_pop': the same bits as that function over
**                       the rows behind the states; or 'state': the merged
**                       state's BLOB (the same bytes as gpu_var_state over
**                       those rows)
**
** Rules:
**   1. Values are classified as sum() classifies them
**      (sqlite3_value_numeric_type): NULL is skipped, INTEGER is exact,
**      anything else (REAL, TEXT and BLOB by their numeric prefix, 'abc' as
**      0.0) is sqlite3_value_double's REAL.
**   2. The result is a REAL or NULL (xvar.h rules 4, 5): the exact value
**      rounded once; an infinity among the values gives NULL; a variance
**      beyond DBL_MAX is +Inf (its stddev is finite).
**   3. Every function is a window function; xInverse removes a value
**      exactly (xvar.h rule 3), so a frame's answer equals the answer
**      computed afresh over it, and gpu_var_state's BLOB the afresh one.
**   4. The state lives in SQLite's zeroed aggregate context (all zero is
**      the empty state): nothing to free, nothing allocated per row.
**   5. gpu_var_merge: NULL states are skipped; anything that is not a
**      valid variance state is an error naming the function; FORM must be
**      one of the five names, the same on every row.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "var.h"
#include "vstate.h"
#include "xacc.h"
#include "xvar.h"

typedef struct var_ctx {
  ga_var_partial p;
  int form; /* gpu_var_merge: GA_VAR_* / GA_SD_* + 1, 0 until read */
} var_ctx;

static var_ctx *ctx_get(sqlite3_context *ctx) {
  var_ctx *c = sqlite3_aggregate_context(ctx, sizeof(var_ctx));
  if (!c)
    sqlite3_result_error_nomem(ctx);
  return c;
}

static void step_sign(sqlite3_context *ctx, sqlite3_value *v, int sign) {
  int t = sqlite3_value_numeric_type(v); /* rule 1 */
  if (t == SQLITE_NULL)
    return;
  var_ctx *c = ctx_get(ctx);
  if (!c)
    return;
  if (t == SQLITE_INTEGER)
    ga_var_add_int(&c->p, sqlite3_value_int64(v), sign);
  else
    ga_var_add_real(&c->p, sqlite3_value_double(v), sign);
}

void ga_fn_var_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  step_sign(ctx, argv[0], 1);
}

void ga_fn_var_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  step_sign(ctx, argv[0], -1);
}

static void error(sqlite3_context *ctx, const char *why) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  char *m = sqlite3_mprintf("%s: %s", d->name, why);
  sqlite3_result_error(ctx, m ? m : why, -1);
  sqlite3_free(m);
}

/* GA_VAR_SAMP .. GA_SD_POP, then 'state': the merged state's BLOB */
#define FORM_STATE 4
static const char *const forms[5] = {"var_samp", "var_pop", "stddev_samp",
                                     "stddev_pop", "state"};

/* FORM of gpu_var_merge's row into c->form; 0 when an error is set. */
static int read_form(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                     var_ctx *c) {
  int f = GA_VAR_SAMP;
  if (argc > 1) {
    const char *z = (const char *)sqlite3_value_text(argv[1]);
    f = -1;
    for (int k = 0; z && k < 5; k++)
      if (!sqlite3_stricmp(z, forms[k]))
        f = k;
    if (f < 0) {
      error(ctx, "FORM must be 'var_samp', 'var_pop', 'stddev_samp', "
                 "'stddev_pop' or 'state'");
      return 0;
    }
  }
  if (c->form && c->form != f + 1) {
    error(ctx, "FORM must be the same on every row");
    return 0;
  }
  c->form = f + 1;
  return 1;
}

static void merge_sign(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                       int sign) {
  var_ctx *c = ctx_get(ctx);
  if (!c || !read_form(ctx, argc, argv, c))
    return;
  sqlite3_value *v = argv[0];
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL)
    return;
  if (t != SQLITE_BLOB) {
    error(ctx, t == SQLITE_TEXT ? "expects a state BLOB made by "
                                  "gpu_var_state(), not a TEXT value"
                                : "expects a state BLOB made by "
                                  "gpu_var_state(), not a number");
    return;
  }
  const void *p = sqlite3_value_blob(v);
  int64_t n = sqlite3_value_bytes(v);
  if (!p && n) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  ga_var_partial s;
  const char *err = NULL;
  if (ga_vstate_decode(p ? p : "", n, &s, &err) != GA_OK) {
    error(ctx, err);
    return;
  }
  if (sign < 0) {
    /* a frame drops a state it added: counts cannot go below zero then */
    if (ga_var_count(&s) > ga_var_count(&c->p)) {
      error(ctx, "removing a state that was not added");
      return;
    }
  } else if (ga_var_count(&s) > INT64_MAX / 2 - ga_var_count(&c->p)) {
    error(ctx, "the merged counts exceed 2^62");
    return;
  }
  ga_var_merge(&c->p, &s, sign);
}

void ga_fn_var_merge_step(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  merge_sign(ctx, argc, argv, 1);
}

void ga_fn_var_merge_inverse(sqlite3_context *ctx, int argc,
                             sqlite3_value **argv) {
  merge_sign(ctx, argc, argv, -1);
}

void ga_fn_var_value(sqlite3_context *ctx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  var_ctx *c = sqlite3_aggregate_context(ctx, 0);
  var_ctx empty;
  if (!c) {
    memset(&empty, 0, sizeof(empty));
    c = &empty;
  }
  if (d->op == GA_VAR_STATE ||
      (d->op == GA_VAR_MERGE && c->form == FORM_STATE + 1)) {
    unsigned char *b;
    int64_t n;
    if (ga_vstate_encode(&c->p, &b, &n) != GA_OK)
      sqlite3_result_error_nomem(ctx);
    else
      sqlite3_result_blob64(ctx, b, (sqlite3_uint64)n, sqlite3_free);
    return;
  }
  int which =
      d->op == GA_VAR_MERGE ? (c->form ? c->form - 1 : GA_VAR_SAMP) : d->op;
  double r;
  if (ga_var_result(&c->p, which, &r))
    sqlite3_result_double(ctx, r);
  else
    sqlite3_result_null(ctx);
}
