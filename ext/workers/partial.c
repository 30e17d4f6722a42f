/*
** partial.c — gpuagg_partial(X), the fused aggregate that gpu_aggregate's
** workers (and its serial path, on the caller's connection) run: one BLOB
** with rows, count, the exact sum, max and min of X (README "The state
** BLOB", kind fused), stepped by one call per row.
**
** Rules:
**   1. Values are classified as the built-ins do: the sum by
**      sqlite3_value_numeric_type, max/min by the storage class, TEXT as the
**      bytes of the database encoding.
**   2. Numbers take state.h's inline path: no allocation, no dispatch.
**   3. Its user data (ga_partial_data) is the connection's own: a worker
**      connection has no ga_conn.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "workers.h"

void *ga_partial_data_new(void) {
  ga_partial_data *w = sqlite3_malloc64(sizeof(*w));
  if (w)
    w->enc = 0;
  return w;
}

/* A TEXT or BLOB value: max()'s view first (raw, the bytes in the
** database encoding, which max and min copy only when they keep them),
** since sqlite3_value_numeric_type may turn the value into a number; then
** sum()'s (num).  0 when out of memory. */
static int other_raw(sqlite3_value *v, int type, int enc, ga_value *raw,
                     ga_bval *max, ga_bval *min) {
  return ga_value_bytes(v, type, enc, raw) && !ga_best_update(max, raw, 0) &&
         !ga_best_update(min, raw, 1);
}

static void other_num(sqlite3_value *v, ga_value *num) {
  switch (sqlite3_value_numeric_type(v)) {
  case SQLITE_INTEGER:
    num->type = GA_V_INT;
    num->i = sqlite3_value_int64(v);
    break;
  default:
    num->type = GA_V_REAL;
    num->r = sqlite3_value_double(v);
  }
}

int ga_fused_step_other(ga_xstate *s, sqlite3_value *v, int type, int enc) {
  ga_value raw, num;
  if (!other_raw(v, type, enc, &raw, &s->max, &s->min))
    return GA_NOMEM;
  if (type == SQLITE_TEXT)
    s->enc = enc;
  other_num(v, &num);
  ga_xstate_step_sum(s, &num);
  return GA_OK;
}

int ga_group_step_other(ga_gstate *s, int64_t *tag, int64_t piece,
                        sqlite3_value *v, int type, int enc) {
  ga_value raw, num;
  if (tag) { /* direct mode: rule 2 by the tags */
    if (!ga_value_bytes(v, type, enc, &raw) ||
        ga_gstate_best_tagged(&s->max, &tag[0], piece, &raw, 0) ||
        ga_gstate_best_tagged(&s->min, &tag[1], piece, &raw, 1))
      return GA_NOMEM;
  } else if (!other_raw(v, type, enc, &raw, &s->max, &s->min)) {
    return GA_NOMEM;
  }
  if (type == SQLITE_TEXT)
    s->enc = enc;
  other_num(v, &num);
  return ga_gstate_step_sum(s, &num);
}

static void fused_other(sqlite3_context *ctx, ga_xstate *s, sqlite3_value *v,
                        int type) {
  ga_partial_data *w = sqlite3_user_data(ctx);
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
void ga_partial_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
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

void ga_partial_final(sqlite3_context *ctx) {
  ga_xstate *s = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  ga_result_state(ctx, s ? s : &empty, GA_STATE_FUSED);
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

void ga_partial_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
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

void ga_partial_final(sqlite3_context *ctx) {
  fused_ctx *c = sqlite3_aggregate_context(ctx, 0);
  ga_xstate empty;
  ga_xstate_init(&empty);
  if (c)
    fused_flush(c);
  ga_result_state(ctx, c ? &c->s : &empty, GA_STATE_FUSED);
  if (c)
    ga_xstate_clear(&c->s);
}
#endif
