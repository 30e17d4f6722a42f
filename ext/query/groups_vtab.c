/*
** groups_vtab.c — the merged groups of one gpu_query call, as a table that
** SQLite's own query reads (planner/query.c, "post").
**
** SQL interface (internal; gpu_query creates and drops it):
**
**   CREATE VIRTUAL TABLE temp."<q>_groups"
**     USING gpuagg_groups('<schema>', <columns>);
**   SELECT ... FROM temp."<q>_groups"(?handle) AS <name> ...
**   gpuagg_pick(X)   an aggregate: X of the group's one row
**   gpuagg_value(X)  a scalar: X (rule 6)
**   gpuagg_check(X, ...)  a scalar: 1 (rule 6)
**
** Rules:
**   1. The columns are those of <schema>: the group's key and carried
**      columns, declared with their table's type and collation (so keys keep
**      their affinity and collation in HAVING and ORDER BY), one column per
**      aggregate value, and the HIDDEN handle.  A row is a group.
**   2. The handle is a pointer bound by gpu_query (sqlite3_bind_pointer,
**      type "gpuagg_groups"): no SQL text can make one, so the table shows
**      no rows to anyone else.  Without one, no row.
**   3. An aggregate value is what gpu_sum, gpu_total, gpu_avg, gpu_min,
**      gpu_max, count(x) or count(*) gives over the group's rows.  A
**      gpu_sum that overflows is a private BLOB instead (random bytes of
**      this process), which gpuagg_pick turns into the error "integer
**      overflow" when SQLite finalises that group, as the reference query
**      raises it: groups that a LIMIT never reaches raise nothing.
**   4. DIRECTONLY, both: not from triggers or views of a database file.
**   5. Where every GROUP BY term of the text is a bare key column, each row
**      is one group of SQLite's GROUP BY already (the same comparison:
**      scan_group.h rule 1), and the post query has no GROUP BY
**      (planner/query.c rule 6): it reads each aggregate value through
**      gpuagg_value(X), a scalar, instead of the aggregate gpuagg_pick, and
**      SQLite neither sorts nor aggregates millions of groups again.
**   6. gpuagg_value(X) is X; gpuagg_check(X, ...) is 1, or rule 3's error
**      when any X is the marker.  The flat post query checks every sum of
**      a row first (planner/query.c), so gpuagg_value never meets one.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "query_vtab.h"

/* Rule 3's marker: a prefix and 16 random bytes. */
#define MARK_PREFIX "gpuagg:overflow:"
#define MARK_BYTES (sizeof(MARK_PREFIX) - 1 + 16)
static unsigned char mark[MARK_BYTES];
static int mark_made; /* atomic */

static const unsigned char *overflow_mark(void) {
  if (!__atomic_load_n(&mark_made, __ATOMIC_ACQUIRE)) {
    unsigned char m[MARK_BYTES];
    memcpy(m, MARK_PREFIX, sizeof(MARK_PREFIX) - 1);
    sqlite3_randomness(16, m + sizeof(MARK_PREFIX) - 1);
    /* two threads may both make one: the first stored wins */
    int expected = 0;
    if (__atomic_compare_exchange_n(&mark_made, &expected, 2, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      memcpy(mark, m, MARK_BYTES);
      __atomic_store_n(&mark_made, 1, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&mark_made, __ATOMIC_ACQUIRE) != 1)
      ;
  }
  return mark;
}

/* ---- gpuagg_pick, gpuagg_value ---- */

/* Rule 3's marker? */
static int is_overflow_mark(sqlite3_value *v) {
  return sqlite3_value_type(v) == SQLITE_BLOB &&
         sqlite3_value_bytes(v) == (int)MARK_BYTES &&
         !memcmp(sqlite3_value_blob(v), overflow_mark(), MARK_BYTES);
}

static void pick_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3_value **kept = sqlite3_aggregate_context(ctx, sizeof(*kept));
  if (!kept) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (*kept)
    return; /* one row a group; the first stays */
  *kept = sqlite3_value_dup(argv[0]);
  if (!*kept)
    sqlite3_result_error_nomem(ctx);
}

static void pick_final(sqlite3_context *ctx) {
  sqlite3_value **kept = sqlite3_aggregate_context(ctx, 0);
  if (!kept || !*kept)
    return; /* no row: NULL */
  sqlite3_value *v = *kept;
  if (is_overflow_mark(v))
    sqlite3_result_error(ctx, "integer overflow", -1);
  else
    sqlite3_result_value(ctx, v);
  sqlite3_value_free(v);
  *kept = NULL;
}

/* A function, not the bare column: its result has no collation, as an
** aggregate's has none (max(name) = k compares under k's collation). */
void ga_value_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3_result_value(ctx, argv[0]);
}

void ga_check_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  for (int i = 0; i < argc; i++)
    if (is_overflow_mark(argv[i])) {
      sqlite3_result_error(ctx, "integer overflow", -1);
      return;
    }
  sqlite3_result_int(ctx, 1);
}

void ga_pick_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  pick_step(ctx, argc, argv);
}

void ga_pick_final(sqlite3_context *ctx) { pick_final(ctx); }

/* ---- the table ---- */

typedef struct groups_vtab {
  sqlite3_vtab base;
  int ncol; /* declared columns, the handle last */
} groups_vtab;

typedef struct groups_cursor {
  sqlite3_vtab_cursor base;
  const ga_qgroups *gs;
  size_t i, n; /* row i of n */
} groups_cursor;

static int groups_connect(sqlite3 *db, void *aux, int argc,
                          const char *const *argv, sqlite3_vtab **pp,
                          char **err) {
  (void)aux;
  char *schema = argc == 5 ? ga_unquote(argv[3]) : NULL;
  int ncol = argc == 5 ? atoi(argv[4]) : 0;
  if (!schema || ncol < 1) {
    sqlite3_free(schema);
    *err = sqlite3_mprintf("gpuagg_groups: made by gpu_query only");
    return SQLITE_ERROR;
  }
  int rc = sqlite3_declare_vtab(db, schema);
  sqlite3_free(schema);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("gpuagg_groups: %s", sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  groups_vtab *vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  vt->ncol = ncol;
  *pp = &vt->base;
  return SQLITE_OK;
}

static int groups_disconnect(sqlite3_vtab *vt) {
  sqlite3_free(vt);
  return SQLITE_OK;
}

/* The handle (the last column) must be bound: rule 2. */
static int groups_best_index(sqlite3_vtab *pv, sqlite3_index_info *p) {
  groups_vtab *vt = (groups_vtab *)pv;
  int found = -1;
  for (int k = 0; k < p->nConstraint; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    if (c->iColumn == vt->ncol - 1 && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if (!c->usable)
        return SQLITE_CONSTRAINT;
      found = k;
    }
  }
  if (found >= 0) {
    p->aConstraintUsage[found].argvIndex = 1;
    p->aConstraintUsage[found].omit = 1;
    p->idxNum = 1;
  }
  p->estimatedCost = 1000;
  p->estimatedRows = 1000;
  return SQLITE_OK;
}

static int groups_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **pp) {
  (void)vt;
  groups_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *pp = &c->base;
  return SQLITE_OK;
}

static int groups_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

static int groups_filter(sqlite3_vtab_cursor *pc, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv) {
  (void)idxStr;
  groups_cursor *c = (groups_cursor *)pc;
  c->gs = idxNum == 1 && argc == 1
              ? sqlite3_value_pointer(argv[0], "gpuagg_groups")
              : NULL;
  c->i = 0;
  /* ungrouped: exactly one row, the empty state when nothing matched */
  c->n = !c->gs ? 0 : c->gs->ungrouped && c->gs->n == 0 ? 1 : c->gs->n;
  return SQLITE_OK;
}

/* Groups ahead of the row being read whose memory is brought towards the
** cache: the group itself far ahead, then what its pointers reach.  The
** groups lie in hash order all over memory, so each row otherwise waits
** for a few cache misses in a row. */
#define GROUPS_AHEAD 8

static int groups_next(sqlite3_vtab_cursor *pc) {
  groups_cursor *c = (groups_cursor *)pc;
  c->i++;
  const ga_qgroups *gs = c->gs;
  if (gs && c->i + 2 * GROUPS_AHEAD < gs->n)
    __builtin_prefetch(gs->g[c->i + 2 * GROUPS_AHEAD], 0);
  if (gs && c->i + GROUPS_AHEAD < gs->n) {
    const ga_group *g = gs->g[c->i + GROUPS_AHEAD];
    __builtin_prefetch(g->key, 0);
    for (int k = 0; k < gs->q->naggs; k++)
      __builtin_prefetch(&g->st[gs->q->aggs[k].val], 0);
  }
  return SQLITE_OK;
}

static int groups_eof(sqlite3_vtab_cursor *pc) {
  groups_cursor *c = (groups_cursor *)pc;
  return c->i >= c->n;
}

/* A set's answer loops over its values, as many as the input's (engine/
** state/dset.h rule 5): a large one polls the caller's interrupt, on the
** caller's own thread (this one). */
static int result_polled(sqlite3_context *ctx, const ga_gstate *s, int op,
                         ga_value *v) {
  if (!s->set || s->set->cap < GA_DSET_POLL_EVERY)
    return ga_gstate_result(s, op, v);
  ga_intr in;
  memset(&in, 0, sizeof in);
  in.db = sqlite3_context_db_handle(ctx);
  ga_dset_poll poll = {ga_intr_check, &in, 0}, *was = ga_dset_poll_swap(&poll);
  int rc = ga_gstate_result(s, op, v);
  ga_dset_poll_swap(was);
  ga_intr_free(&in);
  return rc;
}

/* A median's or percentile's answer from the values its state keeps
** (engine/scan/scan_group.h rule 6), NULL where none: a selection over
** them, reordered in place (their order never matters), polling the
** caller's interrupt on its own thread. */
static int pct_column(sqlite3_context *ctx, const ga_qagg *a,
                      const ga_gstate *s) {
  if (!s->set || !s->set->pct.n)
    return SQLITE_OK;
  ga_pct view = s->set->pct;
  view.frac = a->frac;
  ga_intr in;
  memset(&in, 0, sizeof in);
  in.db = sqlite3_context_db_handle(ctx);
  double r;
  int rc = ga_pct_answer(&view, a->op - GA_Q_PCT, &r, ga_intr_check, &in);
  ga_intr_free(&in);
  if (rc == GA_OK)
    sqlite3_result_double(ctx, r);
  else
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  return SQLITE_OK;
}

static int groups_column(sqlite3_vtab_cursor *pc, sqlite3_context *ctx,
                         int col) {
  groups_cursor *c = (groups_cursor *)pc;
  const ga_qgroups *gs = c->gs;
  return ga_groups_cell(ctx, gs, gs->n ? gs->g[c->i] : NULL, col);
}

/* Column col of group g (NULL: the ungrouped query's empty row): what the
** post query reads, and what qdirect.c hands out without one. */
int ga_groups_cell(sqlite3_context *ctx, const ga_qgroups *gs,
                   const ga_group *g, int col) {
  const ga_query *q = gs->q;
  ga_value v;
  if (col < q->nreps) {
    if (g) {
      ga_bval_view(&g->key[q->rep_slot[col]], &v);
      ga_result_value(ctx, &v, gs->enc);
    }
    return SQLITE_OK;
  }
  col -= q->nreps;
  if (col >= q->naggs)
    return SQLITE_OK; /* the handle */
  const ga_qagg *a = &q->aggs[col];
  ga_gstate none;
  if (!g)
    ga_gstate_init(&none);
  const ga_gstate *s = g ? &g->st[a->val] : &none;
  if (a->op >= GA_Q_PCT) /* a median or percentile (issue 39) */
    return pct_column(ctx, a, s);
  int rc = a->op == GA_Q_COUNT_STAR || a->op == GA_Q_COUNT
               ? GA_OK
               : result_polled(ctx, s, a->op, &v);
  if (a->op == GA_Q_COUNT_STAR)
    sqlite3_result_int64(ctx, s->rows);
  else if (a->op == GA_Q_COUNT) /* count(DISTINCT e): its set's values */
    sqlite3_result_int64(ctx, ga_gstate_count(s));
  else if (rc == GA_INTERRUPTED) /* SQLite's own "interrupted" */
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else if (rc == GA_OVERFLOW)
    sqlite3_result_blob(ctx, overflow_mark(), (int)MARK_BYTES,
                        SQLITE_TRANSIENT);
  else /* a DISTINCT min/max's TEXT is the set's, in the groups' encoding */
    ga_result_value(ctx, &v, s->set ? gs->enc : s->enc);
  return SQLITE_OK;
}

static int groups_rowid(sqlite3_vtab_cursor *pc, sqlite3_int64 *r) {
  *r = (sqlite3_int64)((groups_cursor *)pc)->i;
  return SQLITE_OK;
}

const sqlite3_module ga_groups_methods = {
    .iVersion = 0,
    .xCreate = groups_connect,
    .xConnect = groups_connect,
    .xBestIndex = groups_best_index,
    .xDisconnect = groups_disconnect,
    .xDestroy = groups_disconnect,
    .xOpen = groups_open,
    .xClose = groups_close,
    .xFilter = groups_filter,
    .xNext = groups_next,
    .xEof = groups_eof,
    .xColumn = groups_column,
    .xRowid = groups_rowid,
};
