/*
** aggregate_vtab.c — gpu_aggregate, a table-valued function.
**
** SQL interface:
**
**   SELECT grp, rows, count, sum, total, avg, min, max
**     FROM gpu_aggregate('t', 'x' [, 'filter' [, 'group_by']]);
**
**   One row per group: grp (NULL without group_by), rows (rows that pass
**   the filter), count (non-NULL x), and what gpu_sum, gpu_total, gpu_avg,
**   gpu_min and gpu_max give, value and type.  Without group_by exactly one
**   row, even when nothing matches.
**
** Rules:
**   1. The contract: the rows equal, as a set (values and typeof), those of
**        SELECT +(g), count(*), count(x), gpu_sum(x), gpu_total(x),
**               gpu_avg(x), gpu_min(x), gpu_max(x)
**          FROM t WHERE f GROUP BY +(g)
**      on one committed state of the database that existed during the call,
**      whatever the path and thread count; where it leaves a choice (a
**      group's representative, 1 vs 1.0 or 'a' vs 'A'; equal INTEGER and
**      REAL in min/max) the row first in rowid order wins.
**   2. Two paths.  Serial: that query on the caller's connection, with the
**      seven aggregates fused into gpuagg_partial(X) (the workers' one, so
**      X is evaluated once a row), NOT INDEXED on rowid tables so that rows
**      come in rowid order; streamed, one group at a time.
**      Parallel: engine/scan/scan.c, taken only under the conditions of
**      planner/path.c; any failure there falls back to serial.
**   3. Row order: not promised (as for GROUP BY without ORDER BY).  Today
**      both paths return groups in ascending grp under its collation.
**   4. Errors start "gpu_aggregate:" and name the problem: a wrong number of
**      arguments or type, no such table, SQLite's own message for a bad
**      expression, an argument that is not one expression (rule 2 of
**      planner/args.c), integer overflow of sum.
**   5. The module is SQLITE_VTAB_DIRECTONLY and eponymous-only: views and
**      triggers of a database file cannot run SQL text through it; TEMP
**      views (the application's own) can.
**   6. An interrupt of the caller stops the workers (planner/path.c).
**   7. gpuagg_info()'s last_scan: path, threads, why, rows, ms, pieces,
**      hash_pieces, interrupted_in (where an interrupt was noticed: scan.h,
**      or "serial"), snapshot_waits (retries of the snapshot's bounded
**      wait for a busy lock), progress_probes.  rows counts the rows that
**      passed the filter over the whole table, whatever LIMIT the statement
**      has; null where the serial path's statement was not read to its end
**      (it counts them as it streams the groups, and a LIMIT stopped it).
**   8. One answer per cursor and arguments.  SQLite calls xFilter again on
**      the same cursor for each row of an outer loop (several calls joined
**      in CTEs, a correlated use): with the same arguments the cursor
**      serves the rows it computed the first time, from the parallel
**      path's or the cache's groups, or from the serial path's groups kept
**      as they streamed (up to GA_SCAN_MEMO_BYTES; past it, and for a
**      statement not read to its end, the next xFilter runs again).  The
**      cursor is closed when its statement ends: the next statement runs
**      anew.  gpuagg_info()'s gpu_aggregate {calls, replays} counts them.
*/
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "aggregate_vtab.h"
#include "cache_extend.h"
#include "cache_plan.h"
#include "glue.h"
#include "planner.h"

#define COL_GRP 0
#define COL_ROWS 1
#define COL_COUNT 2
#define COL_SUM 3  /* .. COL_MAX = 7, in GA_AGG_* order from here */
#define COL_ARG0 8 /* hidden: table, expr, filter, group_by */
#define NARGS_MAX 4
/* hidden arg12..13 only catch extra arguments with our own message */
#define SCHEMA                                                                 \
  "CREATE TABLE x(grp, rows, count, sum, total, avg, min, max, tbl HIDDEN, "   \
  "expr HIDDEN, filter HIDDEN, group_by HIDDEN, arg5 HIDDEN, arg6 HIDDEN)"
#define NCOL 14
#define BADARGS 0x100

/* Column c's aggregate (GA_AGG_*), for c in COL_SUM..COL_SUM+4. */
static const int col_op[5] = {GA_AGG_SUM, GA_AGG_TOTAL, GA_AGG_AVG, GA_AGG_MIN,
                              GA_AGG_MAX};

typedef struct aggr_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  ga_scan_module *mod;
} aggr_vtab;

typedef struct aggr_cursor {
  sqlite3_vtab_cursor base;
  /* serial path */
  sqlite3_stmt *st;
  ga_xstate cur; /* the current row's state */
  /* parallel path */
  ga_scan_out out;
  ga_group **g;
  size_t ng, i;
  int empty;   /* ungrouped, no group: the one empty row */
  int key_enc; /* TEXT group keys' encoding: the database's (0: UTF-8) */
  ga_xstate none;
  /* both */
  int eof, serial;
  sqlite3_int64 rowid;
  char *arg[NARGS_MAX];
  int64_t rows;
  double t0;
  int reported;
  int complete; /* rows counts every row that passed the filter */
  /* Rule 8: the answer kept for the same arguments again on this cursor.
  ** memo: c->g (the parallel path's or the cache's groups, or memo_g) holds
  ** the whole answer for arg[] and idx.  The serial path builds memo_g as it
  ** streams (memo_off once it passed the memory cap). */
  int memo, memo_off, idx;
  ga_group **memo_g;
  size_t memo_n, memo_cap;
  int64_t memo_bytes;
} aggr_cursor;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- connect ---- */

static int aggr_connect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr) {
  (void)argc, (void)argv;
  int rc = sqlite3_declare_vtab(db, SCHEMA);
  if (rc != SQLITE_OK) { /* interrupted or out of memory: SQLite's words */
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return ga_intr_rc(db, rc);
  }
  rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("gpu_aggregate: cannot restrict the function "
                             "to direct use (SQLite too old?)");
    return rc;
  }
  aggr_vtab *vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  vt->db = db;
  vt->mod = pAux;
  *ppVtab = &vt->base;
  return SQLITE_OK;
}

static int aggr_disconnect(sqlite3_vtab *pVtab) {
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* ---- plan: the arguments are equality constraints on hidden columns ---- */

static int aggr_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *p) {
  /* issue 40: prepared outside a transaction, it proves the shared cache's
  ** entries to the statement's read transaction (cache_plan.c rule 7) */
  ga_cache_note_idle_db(((aggr_vtab *)pVtab)->db);
  int iArg[NCOL - COL_ARG0], maxHidden = -1, unusable = 0, n = 0;
  for (int k = 0; k < NCOL - COL_ARG0; k++)
    iArg[k] = -1;
  for (int k = 0; k < p->nConstraint; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    if (c->iColumn < COL_ARG0 || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    int a = c->iColumn - COL_ARG0;
    if (a > maxHidden)
      maxHidden = a;
    if (!c->usable)
      unusable = 1;
    else if (iArg[a] < 0)
      iArg[a] = k;
  }
  int got = maxHidden + 1;
  /* a wrong count is reported by xFilter (SQLite also plans subsets) */
  if (got < 2 || got > NARGS_MAX) {
    p->idxNum = BADARGS | got;
    p->estimatedCost = 1e300;
    p->estimatedRows = (sqlite3_int64)1 << 62;
    return SQLITE_OK;
  }
  for (int a = 0; a < got; a++)
    if (iArg[a] < 0)
      return unusable ? SQLITE_CONSTRAINT : SQLITE_ERROR;
  for (int a = 0; a < got; a++) {
    p->aConstraintUsage[iArg[a]].argvIndex = ++n;
    p->aConstraintUsage[iArg[a]].omit = 1;
  }
  p->idxNum = got;
  /* Honest estimates (rule 8): a call scans its whole table once, so it
  ** costs like a full scan of a large table, whatever its constraints; the
  ** planner then puts it in an outer loop where it can.  Without group_by
  ** it returns exactly one row; with one, a guess. */
  p->estimatedCost = 1e9;
  if (got <= 3) {
    p->estimatedRows = 1;
    p->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  } else {
    p->estimatedRows = 1000;
  }
  return SQLITE_OK;
}

/* ---- cursor ---- */

static int aggr_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  (void)pVtab;
  aggr_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->eof = 1;
  *ppCur = &c->base;
  return SQLITE_OK;
}

/* last_scan, once per scan (at eof, or when the cursor goes earlier). */
static void report_last(aggr_cursor *c) {
  aggr_vtab *vt = (aggr_vtab *)c->base.pVtab;
  if (c->reported || !vt)
    return;
  c->reported = 1;
  ga_scan_last *l = &vt->mod->conn->scan;
  l->rows = c->complete ? c->rows : -1; /* rule 7: -1 reads as null */
  l->ms = now_ms() - c->t0;
}

/* ---- rule 8: the answer kept per cursor ---- */

/* The kept groups' shape: one key, one state. */
static const ga_gshape *memo_shape(void) {
  static const ga_gshape one = {.nk = 1, .ns = 1, .coll = {GA_COLL_BINARY}};
  return &one;
}

static void memo_free(aggr_cursor *c) {
  for (size_t i = 0; i < c->memo_n; i++)
    ga_group_free(c->memo_g[i], memo_shape());
  sqlite3_free(c->memo_g);
  c->memo_g = NULL;
  c->memo_n = c->memo_cap = 0;
  c->memo_bytes = 0;
}

/* Stop keeping the serial path's groups (memory cap, out of memory): the
** next xFilter with the same arguments runs the query again. */
static void memo_stop(aggr_cursor *c) {
  memo_free(c);
  c->memo_off = 1;
}

/* Keep the serial path's current group (its key, column 0, and c->cur). */
static void memo_add(aggr_cursor *c) {
  if (c->memo_off)
    return;
  sqlite3_value *kv = sqlite3_column_value(c->st, 0);
  int type = sqlite3_value_type(kv);
  ga_value key;
  memset(&key, 0, sizeof(key));
  if (type == SQLITE_INTEGER)
    key.type = GA_V_INT, key.i = sqlite3_value_int64(kv);
  else if (type == SQLITE_FLOAT)
    key.type = GA_V_REAL, key.r = sqlite3_value_double(kv);
  else if (type == SQLITE_NULL)
    key.type = GA_V_NULL;
  else if (!ga_value_bytes(kv, type, c->key_enc ? c->key_enc : SQLITE_UTF8,
                           &key)) {
    memo_stop(c);
    return;
  }
  int64_t bytes = GA_GROUP_FIXED_BYTES(memo_shape()) + key.n + c->cur.max.n +
                  c->cur.min.n + 64;
  if (c->memo_bytes + bytes > GA_SCAN_MEMO_BYTES) {
    memo_stop(c);
    return;
  }
  if (c->memo_n == c->memo_cap) {
    size_t cap = c->memo_cap ? c->memo_cap * 2 : 16;
    ga_group **g = sqlite3_realloc64(c->memo_g, sizeof(*g) * cap);
    if (!g) {
      memo_stop(c);
      return;
    }
    c->memo_g = g;
    c->memo_cap = cap;
  }
  ga_group *g = ga_group_new(memo_shape());
  if (!g) {
    memo_stop(c);
    return;
  }
  ga_xstate copy; /* c->cur stays the row's: take a copy of it */
  ga_xstate_init(&copy);
  if (ga_bval_set(g->key, &key) || ga_xstate_merge(&copy, &c->cur) ||
      ga_gstate_take(g->st, &copy)) {
    ga_xstate_clear(&copy);
    ga_group_free(g, memo_shape());
    memo_stop(c);
    return;
  }
  c->memo_g[c->memo_n++] = g;
  c->memo_bytes += bytes;
}

/* The same call again: idxNum and every argument's text equal. */
static int memo_same(const aggr_cursor *c, int idxNum, int argc,
                     sqlite3_value **argv) {
  if (!c->memo || idxNum != c->idx)
    return 0;
  for (int k = 0; k < NARGS_MAX; k++) {
    const char *z = k < argc && sqlite3_value_type(argv[k]) != SQLITE_NULL
                        ? (const char *)sqlite3_value_text(argv[k])
                        : NULL;
    if (!z != !c->arg[k] || (z && strcmp(z, c->arg[k])))
      return 0;
  }
  return 1;
}

/* Serve the kept answer from its first row; last_scan stays the call's. */
static void memo_rewind(aggr_cursor *c) {
  if (c->serial) { /* the serial statement's groups, kept */
    sqlite3_finalize(c->st);
    c->st = NULL;
    c->serial = 0;
    c->g = c->memo_g;
    c->ng = c->memo_n;
  }
  c->i = 0;
  c->rowid = 0;
  c->eof = c->ng == 0 && !c->empty;
  c->reported = 1;
}

static void aggr_reset(aggr_cursor *c) {
  if (c->t0 > 0)
    report_last(c);
  sqlite3_finalize(c->st);
  c->st = NULL;
  ga_scan_out_free(&c->out);
  c->g = NULL;
  c->ng = c->i = 0;
  c->empty = 0;
  c->key_enc = 0;
  ga_xstate_clear(&c->none);
  ga_xstate_clear(&c->cur);
  for (int k = 0; k < NARGS_MAX; k++) {
    sqlite3_free(c->arg[k]);
    c->arg[k] = NULL;
  }
  memo_free(c);
  c->memo = c->memo_off = 0;
  c->idx = 0;
  c->eof = 1;
  c->rowid = 0;
  c->rows = 0;
  c->complete = 0;
  c->t0 = 0;
  c->reported = 0;
}

static int aggr_close(sqlite3_vtab_cursor *pCur) {
  aggr_reset((aggr_cursor *)pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int set_err(aggr_cursor *c, int rc, char *msg) {
  if (msg) {
    sqlite3_free(c->base.pVtab->zErrMsg);
    c->base.pVtab->zErrMsg = msg;
  }
  return rc;
}

/* Step the serial statement and decode its state; errors get our prefix,
** and a gpu_sum overflow is the reference query's error. */
static int serial_step(aggr_cursor *c) {
  aggr_vtab *vt = (aggr_vtab *)c->base.pVtab;
  int rc = sqlite3_step(c->st);
  ga_xstate_clear(&c->cur);
  if (rc == SQLITE_ROW) {
    const char *why = NULL;
    ga_value v;
    int drc = ga_state_decode(sqlite3_column_blob(c->st, 1),
                              sqlite3_column_bytes(c->st, 1), GA_STATE_FUSED,
                              &c->cur, &why);
    if (drc == GA_NOMEM)
      return SQLITE_NOMEM;
    if (drc)
      return set_err(c, SQLITE_ERROR,
                     sqlite3_mprintf("gpu_aggregate: %s", why));
    c->rows += c->cur.rows;
    if (ga_xstate_result(&c->cur, GA_AGG_SUM, &v) == GA_OVERFLOW)
      return set_err(c, SQLITE_ERROR,
                     sqlite3_mprintf("gpu_aggregate: integer overflow"));
    memo_add(c);
    return SQLITE_OK;
  }
  c->eof = 1;
  if (rc == SQLITE_DONE) {
    c->complete = 1;        /* every group was read: rows is the whole count */
    c->memo = !c->memo_off; /* rule 8 */
    report_last(c);
    return SQLITE_OK;
  }
  rc = ga_intr_rc(vt->db, sqlite3_reset(c->st));
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    vt->mod->conn->scan.interrupted_in = "serial";
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc;
  return set_err(c, SQLITE_ERROR,
                 sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(vt->db)));
}

/* Any group's gpu_sum overflow is the reference query's error too. */
static int overflow_of(aggr_cursor *c) {
  for (size_t i = 0; i < c->ng; i++) {
    ga_value v;
    if (ga_gstate_result(c->g[i]->st, GA_AGG_SUM, &v) == GA_OVERFLOW)
      return 1;
  }
  return 0;
}

/* last_scan.why: the path's reason, after the cache's when the table has
** an entry that could not answer. */
static void set_why(ga_scan_last *last, const char *cwhy, const char *why) {
  if (cwhy[0])
    sqlite3_snprintf((int)sizeof last->why, last->why, "cache not used: %s; %s",
                     cwhy, why);
  else
    sqlite3_snprintf((int)sizeof last->why, last->why, "%s", why);
}

/* The cursor reads the merged groups of c->out (parallel path or cache);
** the serial statement is not needed. */
static void take_groups(aggr_cursor *c, const ga_args *a, char **err) {
  c->g = c->out.sorted;
  c->ng = c->out.n;
  for (size_t i = 0; i < c->ng; i++)
    c->rows += c->g[i]->st[0].rows;
  c->complete = 1;
  if (overflow_of(c)) {
    *err = sqlite3_mprintf("gpu_aggregate: integer overflow");
    return;
  }
  sqlite3_finalize(c->st);
  c->st = NULL;
  c->serial = 0;
  c->empty = c->ng == 0 && !a->group;
  c->eof = c->ng == 0 && !c->empty;
  c->memo = 1; /* rule 8: every group is here */
  if (c->eof)
    report_last(c);
}

static int aggr_filter(sqlite3_vtab_cursor *pCur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv) {
  (void)idxStr;
  aggr_cursor *c = (aggr_cursor *)pCur;
  aggr_vtab *vt = (aggr_vtab *)pCur->pVtab;
  ga_scan_module *m = vt->mod;
  ga_conn *conn = m->conn;
  ga_config cfg = conn->cfg; /* a snapshot, as the aggregates take it */
  ga_target t;
  ga_plan plan;
  ga_args a = {NULL, NULL, NULL, NULL};
  ga_intr intr = {.db = vt->db};
  char *err = NULL, *sql = NULL;
  const char *tail = NULL;
  int rc = SQLITE_OK, reversed = 0;

  /* rule 8: the same call again on this cursor (the inner loop of a join
  ** calls xFilter once per outer row): the rows computed the first time */
  if (memo_same(c, idxNum, argc, argv)) {
    memo_rewind(c);
    conn->aggregate_replays++;
    return SQLITE_OK;
  }
  aggr_reset(c);
  conn->aggregate_calls++;
  /* the pools of files detached since the last call close now, whatever
  ** path this call takes (scan_pool.c rule 2) */
  ga_scan_pool_prune(vt->db, m->pools, &m->npools);
  memset(&t, 0, sizeof(t));
  memset(&plan, 0, sizeof(plan));
  c->t0 = now_ms();
  if (idxNum & BADARGS) {
    c->t0 = 0;
    return set_err(c, SQLITE_ERROR,
                   sqlite3_mprintf("gpu_aggregate: expected 2 to 4 arguments "
                                   "(table, expression [, filter [, "
                                   "group_by]]), got %d",
                                   idxNum & 0xff));
  }
  static const char *const names[NARGS_MAX] = {"the table", "the expression",
                                               "the filter", "group_by"};
  for (int k = 0; k < argc && k < NARGS_MAX; k++) {
    int ty = sqlite3_value_type(argv[k]);
    if (ty == SQLITE_NULL && k >= 2)
      continue;
    if (ty != SQLITE_TEXT) {
      c->t0 = 0;
      return set_err(c, SQLITE_ERROR,
                     sqlite3_mprintf("gpu_aggregate: %s must be text%s",
                                     names[k], k >= 2 ? " or NULL" : ""));
    }
    c->arg[k] = sqlite3_mprintf("%s", sqlite3_value_text(argv[k]));
    if (!c->arg[k]) {
      c->t0 = 0;
      return SQLITE_NOMEM;
    }
  }
  c->idx = idxNum;
  a.table = c->arg[0];
  a.expr = c->arg[1];
  a.filter = c->arg[2] && *c->arg[2] ? c->arg[2] : NULL;
  a.group = c->arg[3] && *c->arg[3] ? c->arg[3] : NULL;

  /* each text argument must be one expression (planner/args.c rule 2) */
  for (int k = 1; k < NARGS_MAX; k++) {
    const char *z = k == 1 ? a.expr : k == 2 ? a.filter : a.group;
    ga_lex lx;
    memset(&lx, 0, sizeof(lx));
    if (k == 1 && !*z) {
      err = sqlite3_mprintf("gpu_aggregate: the expression is empty");
      break;
    }
    if (ga_lex_sql(z, &lx)) {
      ga_lex_free(&lx);
      rc = SQLITE_NOMEM;
      break;
    }
    if (lx.commas && !lx.bad && !lx.semicolon && !lx.param)
      err = sqlite3_mprintf(
          "gpu_aggregate: %s must be one SQL expression, not a list: %s (%s)",
          names[k], z,
          k == 3 ? "one key a call: group by one expression such as "
                   "a || '|' || b, or by one column"
                 : "one expression a call: join several calls on grp, "
                   "as docs/gpu_aggregate.md shows");
    else if (lx.bad || lx.semicolon || lx.param)
      err = sqlite3_mprintf(
          "gpu_aggregate: %s must be one SQL expression (%s): %s", names[k],
          lx.semicolon ? "no ';'"
          : lx.param   ? "no parameters"
                       : "balanced parentheses, closed quotes and comments",
          z);
    ga_lex_free(&lx);
    if (err)
      break;
  }
  if (rc == SQLITE_OK && !err)
    rc = ga_target_resolve(vt->db, a.table, &t, &err);
  if (rc == SQLITE_OK && !err) {
    /* the reference query: its errors are SQLite's own messages */
    sql = ga_sql_serial(&t, &a);
    reversed = ga_reverse_off(vt->db);
    int prc;
    if (!sql)
      rc = SQLITE_NOMEM;
    else if ((prc = sqlite3_prepare_v2(vt->db, sql, -1, &c->st, &tail)) !=
             SQLITE_OK) {
      prc = ga_intr_rc(vt->db, prc);
      if ((prc & 0xff) == SQLITE_INTERRUPT || (prc & 0xff) == SQLITE_NOMEM)
        rc = prc & 0xff; /* not a problem of the arguments */
      else
        err = sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(vt->db));
    } else if (!c->st || (tail && *tail) ||
               sqlite3_bind_parameter_count(c->st) != 0)
      err = sqlite3_mprintf("gpu_aggregate: the arguments must be SQL "
                            "expressions");
  }
  /* the column cache first (ext/cache/cache_fns.c): an answer from it skips
  ** the plan; its reason for not answering joins the path's */
  int hit = 0;
  char cwhy[256] = "";
  if (rc == SQLITE_OK && !err) {
    ga_parts parts;
    const char *keys[1], *vals[1];
    ga_parts_of_args(&a, &parts, keys, vals);
    rc = ga_cache_answer_ext(conn, vt->db, &cfg, &t, &parts, &c->out, &hit,
                             cwhy, sizeof cwhy); /* issue 40 part 4 */
  }
  if (rc == SQLITE_OK && !err && !hit)
    rc = ga_plan_make(vt->db, &cfg, &t, &a, &plan);
  if (rc != SQLITE_OK || err) {
    ga_scan_out_free(&c->out);
    ga_target_free(&t);
    ga_plan_free(&plan);
    sqlite3_free(sql);
    sqlite3_finalize(c->st);
    c->st = NULL;
    c->t0 = 0;
    ga_reverse_restore(vt->db, reversed);
    return set_err(c, err ? SQLITE_ERROR : rc, err);
  }

  ga_scan_last *last = &conn->scan;
  memset(last, 0, sizeof(*last));
  last->interrupt =
      ga_intr_native() ? "sqlite3_is_interrupted" : "probe statement";
  if (hit) {
    last->path = "cache";
    last->threads = c->out.threads;
    /* a TEXT key from the cache is in the entry's encoding (its bytes) */
    c->key_enc = c->out.enc ? c->out.enc : SQLITE_UTF8;
    sqlite3_snprintf((int)sizeof last->why, last->why, "%s", cwhy);
    take_groups(c, &a, &err);
    goto done;
  }
  if (plan.parallel) {
    plan.spec.pool =
        ga_scan_pool_hold(&m->pools, &m->npools, plan.vfs, plan.path,
                          plan.spec.immutable, plan.spec.readonly);
    if (plan.spec.pool && ga_plan_verify(&plan, plan.spec.pool)) {
      rc = SQLITE_NOMEM;
      goto done;
    }
  }
  if (plan.parallel) {
    plan.spec.interrupted = ga_intr_check;
    plan.spec.interrupted_arg = &intr;
    /* one poll before the scan: the interrupt, and the progress probe
    ** (planner/path.c) that runs the application's progress handler */
    int src = !plan.spec.pool        ? GA_SCAN_NOMEM
              : ga_intr_check(&intr) ? GA_SCAN_INTERRUPT
                                     : ga_scan_run(&plan.spec, &c->out);
    ga_intr_free(&intr);
    last->progress_probes = intr.progress_probes;
    last->snapshot_waits = c->out.snapshot_waits;
    if (src == GA_SCAN_OK) {
      c->key_enc = plan.spec.enc;
      last->path = "parallel";
      set_why(last, cwhy, plan.why);
      ga_scan_last_counters(last, &c->out);
      last->values = 1;
      take_groups(c, &a, &err);
      goto done;
    }
    if (src == GA_SCAN_INTERRUPT) {
      last->interrupted_in = c->out.interrupted_in;
      last->pieces = c->out.pieces; /* handed out before the stop */
      rc = SQLITE_INTERRUPT;
      goto done;
    }
    if (src == GA_SCAN_NOMEM) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    /* GA_SCAN_FALLBACK: the serial path, with the reason */
    sqlite3_snprintf((int)sizeof plan.why, plan.why, "%s", c->out.why);
    ga_scan_out_free(&c->out);
  }
  last->path = "serial";
  last->threads = 1;
  set_why(last, cwhy, plan.why);
  /* the kept groups' TEXT keys in the database's encoding (rule 8) */
  if (ga_db_encoding_of(vt->db, &c->key_enc) != SQLITE_OK)
    c->memo_off = 1;
  c->serial = 1;
  c->eof = 0;
  rc = serial_step(c);

done:
  ga_reverse_restore(vt->db, reversed);
  ga_target_free(&t);
  ga_plan_free(&plan);
  sqlite3_free(sql);
  if (rc != SQLITE_OK || err) {
    c->eof = 1;
    report_last(c);
    return set_err(c, err ? SQLITE_ERROR : rc, err);
  }
  return SQLITE_OK;
}

static int aggr_next(sqlite3_vtab_cursor *pCur) {
  aggr_cursor *c = (aggr_cursor *)pCur;
  c->rowid++;
  if (c->serial)
    return serial_step(c);
  if (c->empty || ++c->i >= c->ng) {
    c->eof = 1;
    report_last(c);
  }
  return SQLITE_OK;
}

static int aggr_eof(sqlite3_vtab_cursor *pCur) {
  return ((aggr_cursor *)pCur)->eof;
}

static int aggr_column(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx,
                       int col) {
  aggr_cursor *c = (aggr_cursor *)pCur;
  if (col >= COL_ARG0) {
    const char *z = col - COL_ARG0 < NARGS_MAX ? c->arg[col - COL_ARG0] : NULL;
    if (z)
      sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
    return SQLITE_OK;
  }
  ga_xstate view; /* a group's compact state, seen as a ga_xstate */
  const ga_xstate *s = &view;
  if (c->serial)
    s = &c->cur;
  else if (c->empty)
    s = &c->none;
  else
    ga_gstate_view(c->g[c->i]->st, &view);
  ga_value v;
  switch (col) {
  case COL_GRP:
    if (c->serial) {
      sqlite3_result_value(ctx, sqlite3_column_value(c->st, 0));
    } else if (!c->empty) {
      ga_bval_view(c->g[c->i]->key, &v);
      ga_result_value(ctx, &v, c->key_enc); /* the stored bytes */
    }
    break;
  case COL_ROWS:
    sqlite3_result_int64(ctx, s->rows);
    break;
  case COL_COUNT:
    sqlite3_result_int64(ctx, s->count);
    break;
  default:
    if (ga_xstate_result(s, col_op[col - COL_SUM], &v) == GA_OVERFLOW)
      sqlite3_result_error(ctx, "gpu_aggregate: integer overflow", -1);
    else
      ga_result_value(ctx, &v, s->enc);
  }
  return SQLITE_OK;
}

static int aggr_rowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid) {
  *pRowid = ((aggr_cursor *)pCur)->rowid;
  return SQLITE_OK;
}

const sqlite3_module ga_aggregate_methods = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous-only: no CREATE VIRTUAL TABLE */
    .xConnect = aggr_connect,
    .xBestIndex = aggr_best_index,
    .xDisconnect = aggr_disconnect,
    .xDestroy = aggr_disconnect,
    .xOpen = aggr_open,
    .xClose = aggr_close,
    .xFilter = aggr_filter,
    .xNext = aggr_next,
    .xEof = aggr_eof,
    .xColumn = aggr_column,
    .xRowid = aggr_rowid,
};
