/*
** percentile.c — gpu_median, gpu_percentile, gpu_percentile_cont and
** gpu_percentile_disc: SQLite's own percentile extension (median,
** percentile, percentile_cont, percentile_disc; sqlite.org/percentile.html,
** 3.47 and later) under gpu_ names, as aggregates and window functions,
** bit for bit, on a selection instead of a sort (engine/reduce/pct.c).
**
** SQL interface (docs/aggregates.md, "Median and percentiles"):
**
**   gpu_median(Y)              percentile of fraction 0.5
**   gpu_percentile(Y, P)       P in 0..100: the height at P/100 * (n - 1)
**                              of the line through the sorted values
**   gpu_percentile_cont(Y, P)  P in 0..1, the same line
**   gpu_percentile_disc(Y, P)  P in 0..1: the value at floor(P * (n - 1))
**   gpu_percentile_state(Y)    the values as a state BLOB (rule 8)
**   gpu_median_merge(S), gpu_percentile_merge(S, P),
**   gpu_percentile_cont_merge(S, P), gpu_percentile_disc_merge(S, P)
**                              the aggregate over the states' values
**
** Rules this file keeps:
**   1. P is checked on every row, NULL-Y rows included, before Y: a P
**      whose numeric type (sqlite3_value_numeric_type: '50' is 50) is not
**      INTEGER or REAL, or whose fraction lies outside [0, 1], is the error
**      "the fraction argument to F() is not between 0.0 and MX" (MX 100.0
**      or 1.0; NULL P too); a fraction that differs from the first row's by
**      more than 0.001 is "the fraction argument to F() is not the same for
**      all input rows".  SQLite's texts, F our function's name.
**   2. Y: NULL is skipped; any storage class but INTEGER and REAL is
**      "input to F() is not numeric" (TEXT '5' too: the storage class, not
**      the numeric type); an infinity is "Inf input to F()".  INTEGERs
**      become doubles as sqlite3_value_double makes them.
**   3. The result is REAL, or NULL when no Y was kept.
**   4. Windows: xValue answers without freeing; xInverse removes one equal
**      value and ignores what xStep would have refused, as SQLite's.
**   5. The values count against group_bytes (GA_PCT_VALUE_BYTES each):
**      past it, an error naming the function, never an approximation.
**   6. The selection, and a state's sort (pct_state.c rule 5), poll the
**      caller's interrupt (SQLITE_INTERRUPT).
**   7. xFinal frees the values, also after an error (aggregates.c rule 4).
**   8. States (docs/states.md): gpu_percentile_state(Y) keeps Y's values
**      under rule 2 as a BLOB (engine/state/pct_state.c); gpu_median_merge(S)
**      and gpu_percentile[_cont|_disc]_merge(S, P) take rule 1's P per row
**      (NULL-S rows too), skip NULL states and answer over every state's
**      values: the aggregate over all their rows, bit for bit.  A BLOB that
**      is not such a state is an error naming the merge.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "config.h"
#include "glue.h"
#include "pct_state.h"
#include "percentile.h"
#include "state.h"
#include "value.h"

__attribute__((cold)) static void fail(sqlite3_context *ctx, const char *fmt,
                                       double mx) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  char *m = sqlite3_mprintf(fmt, d->name, mx);
  if (m)
    sqlite3_result_error(ctx, m, -1);
  else
    sqlite3_result_error_nomem(ctx);
  sqlite3_free(m);
}

/* Rule 1 for this row: the aggregate's values, or NULL (the error is
** set, or the row added nothing). */
static ga_pct *begin(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  double frac = 0.5;
  if (argc == 2) { /* rule 1 */
    int t = sqlite3_value_numeric_type(argv[1]);
    double pv = sqlite3_value_double(argv[1]);
    if (!ga_pct_fraction(d->op, t == SQLITE_INTEGER || t == SQLITE_FLOAT, pv,
                         &frac)) {
      fail(ctx, "the fraction argument to %s() is not between 0.0 and %.1f",
           ga_pct_max_p(d->op));
      return NULL;
    }
  }
  ga_pct *p = sqlite3_aggregate_context(ctx, sizeof(*p));
  if (!p) {
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  if (!p->frac_set) {
    p->frac = frac;
    p->frac_set = 1;
    p->cap_bytes = ga_config_group_bytes(&d->conn->cfg); /* rule 5 */
  } else if (!ga_pct_same(p->frac, frac)) {
    fail(ctx,
         "the fraction argument to %s() is not the same for all input rows", 0);
    return NULL;
  }
  return p;
}

/* Rule 5's error. */
static void cap_error(sqlite3_context *ctx, const ga_pct *p) {
  ga_fn_data *d = sqlite3_user_data(ctx);
  char *m = sqlite3_mprintf(
      "%s: the values passed the memory cap (group_bytes = %lld; each value "
      "takes %d bytes): raise it with gpuagg_config('group_bytes', N)",
      d->name, (long long)p->cap_bytes, GA_PCT_VALUE_BYTES);
  if (m)
    sqlite3_result_error(ctx, m, -1);
  else
    sqlite3_result_error_nomem(ctx);
  sqlite3_free(m);
}

void ga_pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_pct *p = begin(ctx, argc, argv);
  if (!p)
    return;
  int t = sqlite3_value_type(argv[0]); /* rule 2 */
  if (t == SQLITE_NULL)
    return;
  if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) {
    fail(ctx, "input to %s() is not numeric", 0);
    return;
  }
  double y = sqlite3_value_double(argv[0]);
  if (!isfinite(y)) {
    fail(ctx, "Inf input to %s()", 0);
    return;
  }
  int rc = ga_pct_push(p, y);
  if (rc == GA_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else if (rc == GA_PCT_CAP) {
    cap_error(ctx, p);
  }
}

void ga_pct_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ga_pct *p = sqlite3_aggregate_context(ctx, 0);
  int t = sqlite3_value_type(argv[0]);
  if (!p || (t != SQLITE_INTEGER && t != SQLITE_FLOAT)) /* rule 4 */
    return;
  double y = sqlite3_value_double(argv[0]);
  if (isfinite(y))
    ga_pct_remove(p, y);
}

static void answer(sqlite3_context *ctx, int final) {
  ga_pct *p = sqlite3_aggregate_context(ctx, 0);
  if (!p)
    return;
  if (p->n) {
    ga_fn_data *d = sqlite3_user_data(ctx);
    ga_intr in;
    memset(&in, 0, sizeof in);
    in.db = sqlite3_context_db_handle(ctx);
    double r;
    int rc = ga_pct_answer(p, d->op, &r, ga_intr_check, &in); /* rule 6 */
    ga_intr_free(&in);
    if (rc == GA_OK)
      sqlite3_result_double(ctx, r);
    else
      sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  }
  if (final) /* rule 7 */
    ga_pct_free(p);
}

void ga_pct_value(sqlite3_context *ctx) { answer(ctx, 0); }
void ga_pct_final(sqlite3_context *ctx) { answer(ctx, 1); }

/* ---- states (rule 8) ---- */

void ga_pct_state_final(sqlite3_context *ctx) {
  ga_pct *p = sqlite3_aggregate_context(ctx, sizeof(*p));
  if (!p) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  unsigned char *out = NULL;
  int64_t n = 0;
  ga_intr in; /* pct_state.c rule 5: the sort polls the interrupt */
  memset(&in, 0, sizeof in);
  in.db = sqlite3_context_db_handle(ctx);
  int rc = ga_pct_state_encode(p, &out, &n, ga_intr_check, &in);
  ga_intr_free(&in);
  if (rc == GA_INTERRUPTED)
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else if (rc != GA_OK)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_blob64(ctx, out, (sqlite3_uint64)n, free);
  ga_pct_free(p);
}

void ga_pct_merge_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_pct *p = begin(ctx, argc, argv);
  if (!p)
    return;
  ga_fn_data *d = sqlite3_user_data(ctx);
  int t = sqlite3_value_type(argv[0]);
  if (t == SQLITE_NULL)
    return;
  const char *err = NULL;
  int rc = GA_BADSTATE;
  if (t != SQLITE_BLOB) {
    err = "expects a state BLOB made by gpu_percentile_state()";
  } else {
    const void *b = sqlite3_value_blob(argv[0]);
    int64_t n = sqlite3_value_bytes(argv[0]);
    if (!b && n) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    rc = ga_pct_state_merge(b ? b : "", n, p, &err);
  }
  if (rc == GA_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else if (rc == GA_PCT_CAP) {
    cap_error(ctx, p);
  } else if (rc != GA_OK) {
    char *m = sqlite3_mprintf("%s: %s", d->name, err);
    if (m)
      sqlite3_result_error(ctx, m, -1);
    else
      sqlite3_result_error_nomem(ctx);
    sqlite3_free(m);
  }
}
