/*
** query_vtab.c — gpu_query: an analyst's whole SELECT through the parallel
** exact scan.
**
** SQL interface:
**
**   CREATE VIRTUAL TABLE temp.q1 USING gpu_query('SELECT ... FROM t ...');
**   SELECT * FROM q1(p1, p2, ...);
**
**   The columns are the SELECT's result columns (planner/query.c rule 3)
**   and, HIDDEN, its parameters, named as written ("?1", ":a"; an
**   anonymous ? is "?N"), which table-valued-function arguments or
**   "?1" = ... constraints bind; an unbound parameter is NULL.
**
** Rules:
**   1. The contract: the rows equal those of the SELECT run on the caller's
**      connection with sum, total, avg, min, max replaced by gpu_sum ...
**      gpu_max (count unchanged), values and typeof, on one committed state
**      of the database that existed during the call; in the text's ORDER
**      BY order where it has one.  Where it leaves a choice (a group's
**      representative, equal INTEGER and REAL in min/max), the parallel
**      path takes the first row in rowid order; the serial path SQLite's
**      own choice, over the rows in rowid order (NOT INDEXED), or through
**      the index with SQLite's own plan for a selective indexed range
**      (planner/path.c rule 14: q.serial_sql_ix).
**   2. Two paths.  Parallel: the workers compute every distinct aggregate
**      argument's exact state per group in one pass (planner/path.c's
**      conditions, engine/scan/scan.c), and SQLite evaluates the select
**      list, HAVING, ORDER BY and LIMIT over the merged groups
**      (groups_vtab.c).  Serial: the text with gpu_ aggregates on the
**      caller's connection.  Any failure of the parallel path (and a
**      schema changed since CREATE) takes the serial one, with the reason
**      in gpuagg_info()'s last_scan.why.
**   3. The text is parsed again at each call (the schema may have
**      changed); the columns stay those of CREATE: a call whose text now
**      has other columns is an error.
**   4. Temp only, DIRECTONLY: CREATE fails elsewhere (a table in a file
**      would re-prepare its text at every connect, and could not even be
**      dropped once a column it names was renamed).  The table's groups
**      table, temp."<name>_groups", is created, renamed and dropped with it.
**   5. Errors start "gpu_query:" and name the construct (planner/query.c
**      rule 1) or carry SQLite's own message.  The argument must be exactly
**      one SQL string literal: a lone quote inside it ends the literal
**      (SQLite then joins three tokens into one argument), so it is an
**      error showing the doubled quote (ga_unquote).  A text with more
**      parameters than SQLITE_LIMIT_COLUMN leaves hidden columns for is an
**      error saying so (?40000 numbers 40,000 of them).
**   6. An interrupt or progress handler of the caller acts as on
**      gpu_aggregate (planner/path.c rule 12); last_scan as gpu_aggregate's,
**      with rows null on the serial path.
**   7. One answer per cursor and parameters: SQLite calls xFilter again on
**      the same cursor for each outer row of a join; with the same
**      parameter values the cursor serves the rows it kept (up to
**      GA_SCAN_MEMO_BYTES of them; past it, it runs again).
**      gpuagg_info()'s gpu_query {calls, replays} counts them.
**   8. The column cache first (planner/cache_plan.h's ga_cache_answer, the
**      step gpu_aggregate takes too): when an entry answers the parts, its
**      merged groups go under the post query as the scan's would
**      (last_scan.path "cache"); otherwise its reason leads last_scan.why
**      ("cache not used: ...") and the scan runs.  A text with subqueries
**      whose table has an entry: subq_cache (planner/qsubq.c rules 6 and
**      7); last_scan.subqueries counts those answered from an entry and
**      those SQLite evaluated.
**   9. Partials (partial_fns.c): a last HIDDEN column, gpuagg_partial (none
**      where a result column or parameter has that name), takes a BLOB of
**      gpu_query_partial or gpu_query_merge computed for the same text and
**      parameter values; the call then reads no table: the partial's groups
**      go under the post query (last_scan.path "partial", rows its rows).
**      A post query that does not compile is then an error.  A value there
**      that is no BLOB is most often one argument more than the query has
**      parameters: the error says how many it takes.
**  10. The constructor runs SQL on the caller's connection only once every
**      schema is known current (schema_guard): where another connection
**      changed one, SQLite 3.40 would reset it, and temp with it, under
**      the table being created (a use-after-free, issue 37).  Then the
**      constructor returns SQLITE_SCHEMA having touched nothing, and SQLite
**      runs the caller's statement again on the fresh schema, unseen.
**  11. Rows straight from the groups (issue 37): where the post query only
**      reads the groups' columns and compares aggregates with numeric
**      literals (qdirect.c rule 1), it is compiled (its errors and the
**      serial fallback stay SQLite's) but never stepped: the cursor walks
**      the groups, keeps those whose comparisons hold, and serves their
**      columns as the groups table would (last_scan.post "direct").  Rule
**      7's memo then replays by walking the groups again.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_extend.h"
#include "cache_plan.h"
#include "partial_fns.h"
#include "qdirect.h"
#include "query_scan.h"
#include "query_vtab.h"

typedef struct query_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  ga_scan_module *mod;
  char *sql;           /* the SELECT */
  char *groups;        /* its groups table, in temp */
  char *groups_schema; /* that table's columns at CREATE */
  int ncols, nparams;
  int has_partial; /* rule 9: column ncols + nparams is gpuagg_partial */
} query_vtab;

typedef struct query_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st; /* the post query (parallel) or the serial one */
  ga_query q;
  ga_scan_out out;
  ga_qgroups gs;
  sqlite3_value **params; /* nparams; NULL: unbound */
  int np;
  int eof, serial, reversed;
  sqlite3_int64 rowid;
  double t0;
  int reported;
  int64_t rows; /* passed the filter (parallel), -1: not counted */
  /* rule 7: the rows kept, ncols values each */
  sqlite3_value **kept;
  size_t nkept, capkept;
  int64_t kept_bytes;
  int memo, memo_off, replay;
  size_t ri;
  ga_qsub_run subq; /* the subqueries' values (planner/qsubq.c) */
  /* rule 11: rows straight from the groups (qdirect.c): the group served,
  ** the next one to look at, the interrupt's probe */
  ga_qdirect dq;
  int direct;
  size_t drow, dnext;
  ga_intr din;
} query_cursor;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void vtab_free(query_vtab *vt) {
  if (!vt)
    return;
  sqlite3_free(vt->sql);
  sqlite3_free(vt->groups);
  sqlite3_free(vt->groups_schema);
  sqlite3_free(vt);
}

/* Rule 10.  A statement of ours that finds a schema changed by another
** connection makes SQLite (3.40) reset it and temp with it, freeing the
** Table (and argv) of the gpu_query table under construction, which
** sqlite3_declare_vtab then writes into: a use-after-free.  So before
** anything else runs, one statement reads every schema's cookie (temp is
** ours alone); if SQLite had to prepare it again, a reset happened: the
** constructor touches nothing more and returns SQLITE_SCHEMA, and SQLite
** runs the caller's CREATE (or prepare) again on the fresh schema.  Else
** the statement stays open on its row, so that its read transactions keep
** the schemas as they are until the constructor ends (*hold). */
static int schema_guard(sqlite3 *db, sqlite3_stmt **hold, char **err) {
  sqlite3_stmt *st = NULL;
  sqlite3_str *s = sqlite3_str_new(db);
  int rc;
  sqlite3_str_appendall(s, "SELECT 0");
  /* PRAGMA database_list reads no schema: it cannot reset one */
  rc = sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &st, NULL);
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 1);
    if (name && sqlite3_column_int(st, 0) != 1) /* 1: temp */
      sqlite3_str_appendf(s, ", (SELECT count(*) FROM \"%w\".sqlite_schema)",
                          name);
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_finalize(st);
  else
    sqlite3_finalize(st);
  st = NULL;
  char *sql = sqlite3_str_finish(s);
  if (rc == SQLITE_OK && !sql)
    rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0) > 0)
      rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_SCHEMA : rc;
    else if (rc == SQLITE_ROW)
      rc = SQLITE_OK;
    else if (rc == SQLITE_DONE)
      rc = SQLITE_ERROR; /* one row, always */
  }
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    rc = ga_intr_rc(db, rc);
    if (rc == SQLITE_SCHEMA)
      *err = sqlite3_mprintf("gpu_query: the database schema has changed");
    else if ((rc & 0xff) != SQLITE_INTERRUPT && (rc & 0xff) != SQLITE_NOMEM)
      *err = sqlite3_mprintf("gpu_query: %s", sqlite3_errmsg(db));
    return rc;
  }
  *hold = st;
  return SQLITE_OK;
}

static int init(sqlite3 *db, void *aux, int argc, const char *const *argv,
                sqlite3_vtab **pp, char **err, int create) {
  query_vtab *vt = NULL;
  ga_query q;
  int rc;
  memset(&q, 0, sizeof(q));
  if (sqlite3_stricmp(argv[1], "temp")) {
    *err = sqlite3_mprintf("gpu_query: create it in temp: CREATE VIRTUAL "
                           "TABLE temp.%s USING gpu_query('SELECT ...')",
                           argv[2]);
    return SQLITE_ERROR;
  }
  if (argc != 4) {
    *err = sqlite3_mprintf("gpu_query: expected one argument, the text of "
                           "one SELECT, got %d",
                           argc - 3);
    return SQLITE_ERROR;
  }
  vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  vt->db = db;
  vt->mod = aux;
  vt->sql = ga_unquote(argv[3]);
  vt->groups = sqlite3_mprintf("%s_groups", argv[2]);
  if (!vt->groups) {
    vtab_free(vt);
    return SQLITE_NOMEM;
  }
  if (!vt->sql) {
    vtab_free(vt);
    /* a lone quote inside ends SQLite's literal: the rest would be read
    ** otherwise than written (ga_unquote) */
    *err = sqlite3_mprintf("gpu_query: the argument must be the SELECT as "
                           "one SQL string literal, each quote inside it "
                           "doubled: gpu_query('SELECT ... WHERE k <> "
                           "''North''')");
    return SQLITE_ERROR;
  }
  sqlite3_stmt *hold = NULL; /* rule 10: every schema current, until done */
  rc = schema_guard(db, &hold, err);
  if (rc == SQLITE_OK)
    rc = ga_query_parse(db, vt->sql, vt->groups, &q, err);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(hold);
    vtab_free(vt);
    return rc;
  }
  /* one hidden column a parameter, and gpuagg_partial: SQLite's own
  ** "too many columns on x" would not say why (?40000 is 40,000 of them) */
  int maxcols = sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1);
  if (q.ncols + q.nparams + 1 > maxcols) {
    *err = sqlite3_mprintf(
        "gpu_query: the query has %d parameters (?N numbers them up to N), "
        "and a gpu_query table takes one hidden column for each: with its "
        "%d result columns that passes SQLite's limit of %d columns "
        "(SQLITE_LIMIT_COLUMN); number the parameters from ?1 without gaps",
        q.nparams, q.ncols, maxcols);
    ga_query_free(&q);
    sqlite3_finalize(hold);
    vtab_free(vt);
    return *err ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int i = 0; i < q.ncols; i++)
    sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", q.col_name[i]);
  for (int i = 0; i < q.nparams; i++)
    sqlite3_str_appendf(s, ", \"%w\" HIDDEN", q.param_name[i]);
  vt->has_partial = 1; /* rule 9 */
  for (int i = 0; i < q.ncols; i++)
    if (!sqlite3_stricmp(q.col_name[i], "gpuagg_partial"))
      vt->has_partial = 0;
  for (int i = 0; i < q.nparams; i++)
    if (!sqlite3_stricmp(q.param_name[i], "gpuagg_partial"))
      vt->has_partial = 0;
  if (vt->has_partial)
    sqlite3_str_appendall(s, ", gpuagg_partial HIDDEN");
  sqlite3_str_appendall(s, ")");
  char *decl = sqlite3_str_finish(s);
  vt->ncols = q.ncols;
  vt->nparams = q.nparams;
  vt->groups_schema = sqlite3_mprintf("%s", q.groups_schema);
  rc = !decl || !vt->groups_schema ? SQLITE_NOMEM
                                   : sqlite3_declare_vtab(db, decl);
  if (rc == SQLITE_OK)
    rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if (rc == SQLITE_OK && create) {
    char *x = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE temp.\"%w\" USING gpuagg_groups(%Q, %d)",
        vt->groups, q.groups_schema, q.nreps + q.naggs + 1);
    rc = x ? sqlite3_exec(db, x, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(x);
    if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
      *err = sqlite3_mprintf("gpu_query: cannot create %s: %s", vt->groups,
                             sqlite3_errmsg(db));
  } else if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *err = sqlite3_mprintf("gpu_query: %s", sqlite3_errmsg(db));
  }
  sqlite3_free(decl);
  ga_query_free(&q);
  sqlite3_finalize(hold);
  if (rc != SQLITE_OK) {
    vtab_free(vt);
    return rc;
  }
  *pp = &vt->base;
  return SQLITE_OK;
}

static int query_create(sqlite3 *db, void *aux, int argc,
                        const char *const *argv, sqlite3_vtab **pp,
                        char **err) {
  return init(db, aux, argc, argv, pp, err, 1);
}

static int query_connect(sqlite3 *db, void *aux, int argc,
                         const char *const *argv, sqlite3_vtab **pp,
                         char **err) {
  return init(db, aux, argc, argv, pp, err, 0);
}

static int query_disconnect(sqlite3_vtab *pv) {
  vtab_free((query_vtab *)pv);
  return SQLITE_OK;
}

static int query_destroy(sqlite3_vtab *pv) {
  query_vtab *vt = (query_vtab *)pv;
  char *x = sqlite3_mprintf("DROP TABLE IF EXISTS temp.\"%w\"", vt->groups);
  int rc = x ? sqlite3_exec(vt->db, x, NULL, NULL, NULL) : SQLITE_NOMEM;
  sqlite3_free(x);
  if (rc != SQLITE_OK)
    return rc;
  vtab_free(vt);
  return SQLITE_OK;
}

static int query_rename(sqlite3_vtab *pv, const char *name) {
  query_vtab *vt = (query_vtab *)pv;
  char *g = sqlite3_mprintf("%s_groups", name);
  char *x = g ? sqlite3_mprintf("ALTER TABLE temp.\"%w\" RENAME TO \"%w\"",
                                vt->groups, g)
              : NULL;
  int rc = x ? sqlite3_exec(vt->db, x, NULL, NULL, NULL) : SQLITE_NOMEM;
  sqlite3_free(x);
  if (rc != SQLITE_OK) {
    sqlite3_free(g);
    return rc;
  }
  sqlite3_free(vt->groups);
  vt->groups = g;
  return SQLITE_OK;
}

/* ---- plan: parameters are equality constraints on hidden columns ---- */

static int query_best_index(sqlite3_vtab *pv, sqlite3_index_info *p) {
  /* issue 40: as gpu_aggregate's (planner/cache_plan.c rule 7; part 4's
  ** extension, planner/cache_extend.c rule 3) */
  ga_cache_note_idle_db(((query_vtab *)pv)->db);
  query_vtab *vt = (query_vtab *)pv;
  int n = 0;
  sqlite3_str *s = sqlite3_str_new(NULL);
  char *seen = sqlite3_malloc64((size_t)vt->nparams + 1);
  if (!seen) {
    sqlite3_free(sqlite3_str_finish(s));
    return SQLITE_NOMEM;
  }
  memset(seen, 0, (size_t)vt->nparams + 1);
  for (int k = 0; k < p->nConstraint; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    int a = c->iColumn - vt->ncols; /* nparams: the partial (rule 9) */
    if (a < 0 || a > vt->nparams || (a == vt->nparams && !vt->has_partial) ||
        c->op != SQLITE_INDEX_CONSTRAINT_EQ || seen[a])
      continue;
    if (!c->usable) {
      sqlite3_free(seen);
      sqlite3_free(sqlite3_str_finish(s));
      return SQLITE_CONSTRAINT;
    }
    seen[a] = 1;
    p->aConstraintUsage[k].argvIndex = ++n;
    p->aConstraintUsage[k].omit = 1;
    sqlite3_str_appendf(s, "%d,", a);
  }
  sqlite3_free(seen);
  char *idx = sqlite3_str_finish(s);
  if (!idx && n)
    return SQLITE_NOMEM;
  p->idxStr = idx;
  p->needToFreeIdxStr = 1;
  p->idxNum = n;
  /* a call scans its whole table once (gpu_aggregate's estimates) */
  p->estimatedCost = 1e9;
  p->estimatedRows = 1000;
  return SQLITE_OK;
}

/* ---- cursor ---- */

static int query_open(sqlite3_vtab *pv, sqlite3_vtab_cursor **pp) {
  (void)pv;
  query_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->eof = 1;
  *pp = &c->base;
  return SQLITE_OK;
}

static void report_last(query_cursor *c) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  if (c->reported || c->t0 <= 0)
    return;
  c->reported = 1;
  ga_scan_last *l = &vt->mod->conn->scan;
  l->rows = c->rows;
  l->ms = now_ms() - c->t0;
}

static void kept_free(query_cursor *c) {
  for (size_t i = 0; i < c->nkept; i++)
    sqlite3_value_free(c->kept[i]);
  sqlite3_free(c->kept);
  c->kept = NULL;
  c->nkept = c->capkept = 0;
  c->kept_bytes = 0;
}

/* Keep the statement's current row (rule 7). */
static void keep_row(query_cursor *c, int ncols) {
  if (c->memo_off)
    return;
  if (c->nkept + (size_t)ncols > c->capkept) {
    size_t cap = c->capkept ? c->capkept * 2 : 64;
    while (cap < c->nkept + (size_t)ncols)
      cap *= 2;
    sqlite3_value **k = sqlite3_realloc64(c->kept, sizeof(*k) * cap);
    if (!k)
      goto stop;
    c->kept = k;
    c->capkept = cap;
  }
  for (int i = 0; i < ncols; i++) {
    sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(c->st, i));
    if (!v)
      goto stop;
    c->kept[c->nkept++] = v;
    /* a number's bytes would be its text, made for nothing (issue 37) */
    int t = sqlite3_value_type(v);
    c->kept_bytes +=
        64 +
        (t == SQLITE_TEXT || t == SQLITE_BLOB ? sqlite3_value_bytes(v) : 0);
  }
  if (c->kept_bytes <= GA_SCAN_MEMO_BYTES)
    return;
stop:
  kept_free(c);
  c->memo_off = 1;
}

static void reverse_restore(query_cursor *c) {
  ga_reverse_restore(((query_vtab *)c->base.pVtab)->db, c->reversed);
  c->reversed = 0;
}

static void cursor_reset(query_cursor *c) {
  report_last(c);
  reverse_restore(c);
  sqlite3_finalize(c->st);
  c->st = NULL;
  ga_scan_out_free(&c->out);
  memset(&c->gs, 0, sizeof(c->gs));
  ga_qsub_run_free(&c->subq);
  ga_query_free(&c->q);
  for (int i = 0; i < c->np; i++)
    sqlite3_value_free(c->params[i]);
  sqlite3_free(c->params);
  c->params = NULL;
  c->np = 0;
  kept_free(c);
  c->memo = c->memo_off = c->replay = 0;
  c->ri = 0;
  c->eof = 1;
  c->serial = 0;
  c->rowid = 0;
  c->t0 = 0;
  c->reported = 0;
  c->rows = -1;
  ga_qdirect_free(&c->dq);
  ga_intr_free(&c->din);
  memset(&c->din, 0, sizeof(c->din));
  c->direct = 0;
  c->drow = c->dnext = 0;
}

static int query_close(sqlite3_vtab_cursor *pc) {
  cursor_reset((query_cursor *)pc);
  sqlite3_free(pc);
  return SQLITE_OK;
}

static int set_err(query_cursor *c, int rc, char *msg) {
  if (msg) {
    sqlite3_free(c->base.pVtab->zErrMsg);
    c->base.pVtab->zErrMsg = msg;
  }
  return rc;
}

/* Rule 11: the next group that passes, as step() gives the post query's
** next row (rule 7's bytes counted, not kept: the groups are). */
static int direct_step(query_cursor *c) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  size_t i = c->dnext;
  c->din.db = vt->db;
  int rc = ga_qdirect_next(&c->dq, &c->gs, &i, &c->din);
  if (rc == SQLITE_ROW) {
    c->drow = i;
    c->dnext = i + 1;
    if (!c->memo_off && (c->kept_bytes += ga_qdirect_row_bytes(
                             &c->dq, &c->gs, i)) > GA_SCAN_MEMO_BYTES)
      c->memo_off = 1;
    return SQLITE_OK;
  }
  c->eof = 1;
  report_last(c);
  if (rc == SQLITE_DONE) {
    c->memo = c->memo_off == 0;
    return SQLITE_OK;
  }
  if (rc != SQLITE_ERROR)
    return rc;
  return set_err(c, SQLITE_ERROR,
                 sqlite3_mprintf("gpu_query: integer overflow"));
}

/* Step the statement: a row (kept, rule 7), the end, or an error with our
** prefix. */
static int step(query_cursor *c) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  if (c->direct)
    return direct_step(c);
  int rc = sqlite3_step(c->st);
  reverse_restore(c); /* the first step read every row */
  if (rc == SQLITE_ROW) {
    keep_row(c, vt->ncols);
    return SQLITE_OK;
  }
  c->eof = 1;
  if (rc == SQLITE_DONE) {
    c->memo = !c->memo_off;
    report_last(c);
    return SQLITE_OK;
  }
  rc = ga_intr_rc(vt->db, sqlite3_reset(c->st));
  report_last(c);
  if ((rc & 0xff) == SQLITE_INTERRUPT && c->serial)
    vt->mod->conn->scan.interrupted_in = "serial";
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc;
  return set_err(c, SQLITE_ERROR,
                 sqlite3_mprintf("gpu_query: %s", sqlite3_errmsg(vt->db)));
}

/* Rule 7: the same parameter values as the kept answer's. */
static int same_params(const query_cursor *c, const sqlite3_value *const *p,
                       int np) {
  if (!c->memo || np != c->np)
    return 0;
  for (int i = 0; i < np; i++) {
    sqlite3_value *a = c->params[i];
    const sqlite3_value *b = p[i];
    int ta = a ? sqlite3_value_type(a) : SQLITE_NULL;
    int tb = b ? sqlite3_value_type((sqlite3_value *)b) : SQLITE_NULL;
    if (ta != tb)
      return 0;
    if (ta == SQLITE_NULL)
      continue;
    if (ta == SQLITE_INTEGER &&
        sqlite3_value_int64(a) != sqlite3_value_int64((sqlite3_value *)b))
      return 0;
    if (ta == SQLITE_FLOAT) {
      double x = sqlite3_value_double(a),
             y = sqlite3_value_double((sqlite3_value *)b);
      if (memcmp(&x, &y, sizeof x))
        return 0;
    }
    if (ta == SQLITE_TEXT || ta == SQLITE_BLOB) {
      const void *x = ta == SQLITE_TEXT ? (const void *)sqlite3_value_text(a)
                                        : sqlite3_value_blob(a);
      const void *y = ta == SQLITE_TEXT
                          ? (const void *)sqlite3_value_text((sqlite3_value *)b)
                          : sqlite3_value_blob((sqlite3_value *)b);
      int nx = sqlite3_value_bytes(a),
          ny = sqlite3_value_bytes((sqlite3_value *)b);
      if (nx != ny || (nx && memcmp(x, y, (size_t)nx)))
        return 0;
    }
  }
  return 1;
}

/* The parameter values into st (1..np). */
static int bind_all(query_cursor *c, sqlite3_stmt *st) {
  for (int i = 0; i < c->np; i++)
    if (c->params[i]) {
      int rc = sqlite3_bind_value(st, i + 1, c->params[i]);
      if (rc != SQLITE_OK)
        return rc;
    }
  return SQLITE_OK;
}

/* The merged groups of c->out (their TEXT in encoding enc) under the post
** query: SQLITE_OK with c->st; with *why set and no statement (the serial
** path: the post query does not compile); or an error. */
static int serve_groups(query_cursor *c, int enc, char *why, size_t n) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  int rc;
  c->gs.q = &c->q;
  c->gs.g = c->out.sorted;
  c->gs.n = c->out.n;
  c->gs.ungrouped = c->q.nkeys == 0;
  c->gs.enc = enc;
  c->rows = 0;
  for (size_t i = 0; i < c->out.n; i++)
    c->rows += c->out.sorted[i]->st[0].rows;
  rc = sqlite3_prepare_v2(vt->db, c->q.post_sql, -1, &c->st, NULL);
  if (rc == SQLITE_OK)
    rc = bind_all(c, c->st);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_pointer(c->st, c->np + 1, &c->gs, "gpuagg_groups", NULL);
  if (rc == SQLITE_OK && c->subq.vals) /* planner/qsubq.c rule 4 */
    rc = ga_qsub_bind_post(&c->subq, c->st);
  if (rc == SQLITE_OK) { /* rule 11 */
    rc = ga_qdirect_plan(vt->db, &c->q, c->params, c->np, &c->dq);
    c->direct = c->dq.ok;
    c->dnext = 0;
  }
  if (rc != SQLITE_OK) {
    rc = ga_intr_rc(vt->db, rc);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      return rc & 0xff;
    sqlite3_snprintf((int)n, why,
                     "the query over the groups does not compile: %s",
                     sqlite3_errmsg(vt->db));
    sqlite3_finalize(c->st);
    c->st = NULL;
    ga_scan_out_free(&c->out);
    memset(&c->gs, 0, sizeof(c->gs));
    c->rows = -1;
    return SQLITE_OK;
  }
  return SQLITE_OK;
}

/* The workers' texts with each IN subquery's TEMP table (planner/qsubq.c
** rule 5): their parameters are the post query's + 2. */
static int subq_texts(ga_plan *plan, const ga_qsubs *s) {
  char **f[] = {&plan->sql_piece, &plan->sql_rows, &plan->sql_range};
  for (int i = 0; i < 3; i++) {
    if (!*f[i])
      continue;
    char *x = ga_qsub_worker_sql(s, *f[i], 2);
    if (!x)
      return SQLITE_NOMEM;
    sqlite3_free(*f[i]);
    *f[i] = x;
  }
  plan->spec.sql_piece = plan->sql_piece;
  plan->spec.sql_rows = plan->sql_rows;
  plan->spec.sql_range = plan->sql_range;
  return SQLITE_OK;
}

/* planner/qsubq.c rule 7's hook: the cursor, the call's configuration. */
typedef struct subq_ctx {
  query_cursor *c;
  sqlite3 *db;
  const ga_config *cfg;
} subq_ctx;

/* The value of aggregate a over the one group g (NULL: no row) of an
** ungrouped text, as the groups table gives it (ext/query/groups_vtab.c);
** *v NULL where that is no number (TEXT, or a sum's overflow: SQLite
** raises it).  SQLITE_OK or an error. */
static int agg_value(sqlite3 *db, const ga_qagg *a, const ga_group *g,
                     sqlite3_value **v) {
  ga_gstate none;
  ga_value x;
  memset(&x, 0, sizeof x);
  if (!g)
    ga_gstate_init(&none);
  const ga_gstate *st = g ? &g->st[a->val] : &none;
  if (a->op == GA_Q_COUNT_STAR || a->op == GA_Q_COUNT) {
    x.type = GA_V_INT;
    x.i = a->op == GA_Q_COUNT_STAR ? st->rows : ga_gstate_count(st);
  } else if (ga_gstate_result(st, a->op, &x) != GA_OK) {
    return SQLITE_OK;
  }
  if (x.type != GA_V_INT && x.type != GA_V_REAL && x.type != GA_V_NULL)
    return SQLITE_OK;
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT ?1", -1, &q, NULL);
  if (rc == SQLITE_OK)
    rc = x.type == GA_V_INT    ? sqlite3_bind_int64(q, 1, x.i)
         : x.type == GA_V_REAL ? sqlite3_bind_double(q, 1, x.r)
                               : sqlite3_bind_null(q, 1);
  if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    *v = sqlite3_value_dup(sqlite3_column_value(q, 0));
    rc = *v ? SQLITE_OK : SQLITE_NOMEM;
  }
  int frc = sqlite3_finalize(q);
  return rc == SQLITE_OK ? frc : rc;
}

/* planner/qsubq.c rule 7: scalar subquery j (its text sql) from the column
** cache: SQLITE_OK with *v, or with *v NULL (SQLite evaluates it). */
static int subq_from_cache(void *arg, int j, const char *sql,
                           sqlite3_value **v) {
  subq_ctx *x = arg;
  query_cursor *c = x->c;
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  (void)j;
  *v = NULL;
  char *inner = ga_qsub_cache_text(sql);
  if (!inner)
    return SQLITE_OK;
  ga_query q;
  char *err = NULL;
  memset(&q, 0, sizeof q);
  int rc = ga_query_parse(x->db, inner, vt->groups, &q, &err);
  sqlite3_free(inner);
  sqlite3_free(err);
  if (rc == SQLITE_OK && !q.serial_why && !q.subs.n && !q.nkeys && !q.nreps &&
      q.naggs == 1 && q.nparams <= c->np &&
      sqlite3_txn_state(x->db, q.t.schema) != SQLITE_TXN_NONE) {
    ga_parts parts;
    ga_scan_out out;
    int hit = 0;
    char why[256];
    ga_query_parts(&q, &parts, c->params, c->np);
    rc = ga_cache_answer(vt->mod->conn, x->db, x->cfg, &q.t, &parts, &out, &hit,
                         why, sizeof why);
    if (rc == SQLITE_OK && hit)
      rc = agg_value(x->db, &q.aggs[0], out.n ? out.sorted[0] : NULL, v);
    ga_scan_out_free(&out);
  }
  ga_query_free(&q);
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  return SQLITE_OK; /* anything else: SQLite evaluates it */
}

/* The column cache for a text with subqueries (planner/qsubq.c rules 6
** and 7): the values evaluated on this connection inside the read
** transaction its statement holds, the snapshot ga_cache_answer checks the
** entry against (a scalar one that is a cached aggregate from the entry),
** bound into the parts as the workers' texts bind them (an IN subquery's
** rows for the cache's set test).  SQLITE_OK with *hit, or with why (cache
** not used). */
static int subq_cache(query_cursor *c, sqlite3 *db, const ga_config *cfg,
                      ga_parts *parts, int *hit, char *why, size_t n) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  ga_cache *cache = vt->mod->conn->cache;
  ga_centry *e =
      cache ? ga_cache_lookup(cache, db, c->q.t.schema, c->q.t.table) : NULL;
  int stale = e && __atomic_load_n(&e->stale, __ATOMIC_RELAXED);
  if (e) /* whether one exists (issue 40: ga_cache_answer holds it) */
    ga_centry_put(cache, e);
  if (!e || stale) /* no entry: the scan evaluates them, once */
    return e ? ga_cache_answer(vt->mod->conn, db, cfg, &c->q.t, parts, &c->out,
                               hit, why, n)
             : SQLITE_OK;
  if (sqlite3_txn_state(db, c->q.t.schema) == SQLITE_TXN_NONE) {
    sqlite3_snprintf((int)n, why,
                     "no read transaction holds the snapshot a subquery "
                     "would read");
    return SQLITE_OK;
  }
  char ewhy[200] = "";
  subq_ctx x = {c, db, cfg};
  double t0 = ga_cache_prof_ms();
  c->subq.cached = subq_from_cache;
  c->subq.cached_ctx = &x;
  int rc = ga_qsub_eval_caller(&c->subq, ewhy, sizeof ewhy);
  c->subq.cached = NULL;
  c->subq.cached_ctx = NULL;
  /* GPUAGG_CACHE_PROFILE: the subqueries' step, named by who answered */
  ga_cache_prof("subq",
                !c->subq.by_sqlite   ? "from-cache"
                : c->subq.from_cache ? "mixed"
                                     : "by-sqlite",
                &t0);
  if (rc == SQLITE_NOMEM || rc == SQLITE_INTERRUPT)
    return rc;
  if (rc != SQLITE_OK) {
    sqlite3_snprintf((int)n, why, "%s", ewhy);
    return SQLITE_OK;
  }
  parts->params = c->subq.vals;
  parts->nparams = c->np + 1 + c->q.subs.n;
  parts->subq = &c->subq;
  rc = ga_cache_answer(vt->mod->conn, db, cfg, &c->q.t, parts, &c->out, hit,
                       why, n);
  parts->subq = NULL;
  return rc;
}

/* The parallel path; SQLITE_OK with c->st the post query, or with *why set
** (and no statement) for the serial path, or an error. */
static int run_parallel(query_cursor *c, ga_plan *plan, char *why, size_t n) {
  query_vtab *vt = (query_vtab *)c->base.pVtab;
  int rc = ga_query_scan(vt->mod, vt->db, plan, &c->out, why, n);
  if (rc != SQLITE_OK || why[0])
    return rc;
  rc = serve_groups(c, plan->spec.enc, why, n);
  if (rc == SQLITE_OK && c->st)
    ga_query_last_parallel(&vt->mod->conn->scan, &c->out, plan, c->q.nvals);
  return rc;
}

static int query_filter(sqlite3_vtab_cursor *pc, int idxNum, const char *idxStr,
                        int argc, sqlite3_value **argv) {
  query_cursor *c = (query_cursor *)pc;
  query_vtab *vt = (query_vtab *)pc->pVtab;
  ga_scan_module *m = vt->mod;
  ga_conn *conn = m->conn;
  ga_config cfg = conn->cfg;
  ga_plan plan;
  char why[256] = "", cwhy[256] = "", *err = NULL;
  int rc = SQLITE_OK, hit = 0, index_serial = 0;
  (void)idxNum;

  /* the parameters, in their order (unbound: NULL), then the partial */
  sqlite3_value **p = NULL, *partial = NULL;
  p = sqlite3_malloc64(sizeof(*p) * (size_t)(vt->nparams + 1));
  if (!p)
    return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p) * (size_t)(vt->nparams + 1));
  const char *z = idxStr ? idxStr : "";
  for (int k = 0; k < argc && *z; k++) {
    int a = atoi(z);
    if (a >= 0 && a <= vt->nparams && !p[a])
      p[a] = argv[k];
    while (*z && *z != ',')
      z++;
    if (*z)
      z++;
  }
  partial = p[vt->nparams];
  /* rule 7 (a partial's answer is not kept: its BLOB may change) */
  if (!partial &&
      same_params(c, (const sqlite3_value *const *)p, vt->nparams)) {
    sqlite3_free(p);
    sqlite3_finalize(c->st);
    c->st = NULL;
    if (c->direct) { /* rule 11: the groups again */
      c->dnext = 0;
      c->rowid = 0;
      c->eof = 0;
      conn->query_replays++;
      return direct_step(c);
    }
    c->replay = 1;
    c->ri = 0;
    c->rowid = 0;
    c->eof = c->nkept == 0;
    conn->query_replays++;
    return SQLITE_OK;
  }
  cursor_reset(c);
  conn->query_calls++;
  c->np = vt->nparams;
  if (c->np) {
    c->params = sqlite3_malloc64(sizeof(*c->params) * (size_t)c->np);
    if (!c->params) {
      sqlite3_free(p);
      return SQLITE_NOMEM;
    }
    for (int i = 0; i < c->np; i++) {
      c->params[i] = p[i] ? sqlite3_value_dup(p[i]) : NULL;
      if (p[i] && !c->params[i])
        rc = SQLITE_NOMEM;
    }
  }
  sqlite3_free(p);
  if (rc != SQLITE_OK)
    return rc;
  ga_scan_pool_prune(vt->db, m->pools, &m->npools);
  memset(&plan, 0, sizeof(plan));
  c->t0 = now_ms();

  /* rule 3: the text again, on today's schema */
  rc = ga_query_parse(vt->db, vt->sql, vt->groups, &c->q, &err);
  if (rc == SQLITE_OK &&
      (c->q.ncols != vt->ncols || c->q.nparams != vt->nparams))
    err = sqlite3_mprintf("gpu_query: the query's columns changed since "
                          "CREATE (drop %s and create it again)",
                          vt->groups);
  if (rc != SQLITE_OK || err) {
    c->t0 = 0;
    return set_err(c, err ? SQLITE_ERROR : rc, err);
  }
  ga_scan_last *last = &conn->scan;
  memset(last, 0, sizeof(*last));
  last->interrupt =
      ga_intr_native() ? "sqlite3_is_interrupted" : "probe statement";
  if (c->q.join_json) /* planner/qjoin.c; whole, or a valid stub */
    sqlite3_snprintf((int)sizeof last->join, last->join, "%s",
                     strlen(c->q.join_json) < sizeof last->join
                         ? c->q.join_json
                         : "{\"how\":\"sqlite-per-worker\",\"long\":true}");
  if (partial && sqlite3_value_type(partial) != SQLITE_BLOB) {
    /* rule 9: most often one argument more than the query has parameters
    ** (SQLite gives it to the next hidden column): say how many it takes */
    char *n = vt->nparams
                  ? sqlite3_mprintf("%d parameter%s; an argument "
                                    "past %s",
                                    vt->nparams, vt->nparams == 1 ? "" : "s",
                                    vt->nparams == 1 ? "it" : "them")
                  : sqlite3_mprintf("no parameters; an argument");
    err = n ? sqlite3_mprintf("gpu_query: the query takes %s goes to the "
                              "hidden column gpuagg_partial, which takes "
                              "only a partial (a BLOB of gpu_query_partial "
                              "or gpu_query_merge)",
                              n)
            : NULL;
    sqlite3_free(n);
    c->t0 = 0;
    return set_err(c, err ? SQLITE_ERROR : SQLITE_NOMEM, err);
  }
  if (partial) { /* rule 9 */
    c->memo_off = 1;
    rc = c->q.serial_why
             ? (err = sqlite3_mprintf("gpu_query: %s", c->q.serial_why),
                SQLITE_ERROR)
             : ga_query_from_partial(vt->db, partial, &c->q, c->params, c->np,
                                     &cfg, &c->out, &err);
    if (rc == SQLITE_OK)
      rc = serve_groups(c, c->out.enc, why, sizeof why);
    if (rc == SQLITE_OK && !c->st)
      err = sqlite3_mprintf("gpu_query: %s", why);
    if (rc != SQLITE_OK || err) {
      if ((rc & 0xff) == SQLITE_INTERRUPT)
        last->interrupted_in = "partial";
      report_last(c);
      return set_err(c, err ? SQLITE_ERROR : rc, err);
    }
    last->path = "partial";
    last->threads = 1;
    last->values = c->q.nvals;
    last->post = c->direct ? "direct" : "sqlite";
    c->eof = 0;
    return step(c);
  }
  if (c->q.serial_why) {
    sqlite3_snprintf((int)sizeof why, why, "%s", c->q.serial_why);
  } else if (strcmp(c->q.groups_schema, vt->groups_schema)) {
    sqlite3_snprintf((int)sizeof why, why,
                     "the table's columns changed since CREATE");
  } else {
    ga_parts parts;
    ga_query_parts(&c->q, &parts, c->params, c->np);
    parts.serial_index = c->q.serial_sql_ix != NULL; /* path.c rule 14 */
    parts.call_stmts = conn->qjson_stepping;         /* query_json.c rule 7 */
    if (c->q.subs.n) { /* subqueries: values of the scan's snapshot */
      rc = ga_qsub_run_init(&c->subq, vt->db, &c->q.subs, c->params, c->np,
                            ga_config_group_bytes(&cfg));
      c->subq.contract = conn->contract_fns;
      c->subq.contract_ctx = conn;
      if (rc == SQLITE_OK)
        rc = subq_cache(c, vt->db, &cfg, &parts, &hit, cwhy, sizeof cwhy);
      parts.params = c->subq.vals;
      parts.nparams = c->np + 1 + c->q.subs.n;
    } else if (c->q.join_from) {
      /* a join: from the host entries of all its tables
      ** (planner/cache_join.c), said where one of them has an entry */
      rc = ga_cache_join_answer(conn, vt->db, &cfg, &parts, &c->out, &hit, cwhy,
                                sizeof cwhy);
    } else {
      /* rule 8: the column cache first (appends extend it first: issue 40
      ** part 4, planner/cache_extend.c) */
      rc = ga_cache_answer_ext(conn, vt->db, &cfg, &c->q.t, &parts, &c->out,
                               &hit, cwhy, sizeof cwhy);
    }
    if (rc == SQLITE_OK && hit) {
      rc = serve_groups(c, c->out.enc, why, sizeof why);
      if (rc == SQLITE_OK && c->st) {
        last->path = "cache";
        ga_scan_last_counters(last, &c->out); /* cache_host.c rule 12 */
        last->threads = c->out.threads;
        last->values = c->q.nvals;
        sqlite3_snprintf((int)sizeof last->why, last->why, "%s", cwhy);
      }
    } else if (rc == SQLITE_OK) {
      rc = ga_plan_parts(vt->db, &cfg, &c->q.t, &parts, &plan);
      if (rc == SQLITE_OK && plan.parallel && c->q.subs.n &&
          sqlite3_stricmp(c->q.t.schema, "main")) {
        /* a worker's main is the table's file: the subquery's names would
        ** resolve elsewhere (planner/qsubq.c rule 2) */
        plan.parallel = 0;
        sqlite3_snprintf((int)sizeof plan.why, plan.why,
                         "the text holds a subquery and its table is not in "
                         "main: SQLite evaluates it on the serial path");
      }
      if (c->q.subs.n) { /* planner/qsubq.c rule 2 */
        plan.spec.in_snapshot = ga_qsub_eval;
        plan.spec.in_snapshot_arg = &c->subq;
        if (rc == SQLITE_OK && plan.parallel)
          rc = subq_texts(&plan, &c->q.subs);
      }
      index_serial = plan.index_serial;
      if (rc == SQLITE_OK && plan.parallel)
        rc = run_parallel(c, &plan, why, sizeof why);
      else if (rc == SQLITE_OK)
        sqlite3_snprintf((int)sizeof why, why, "%s", plan.why);
    }
  }
  if (cwhy[0] && !hit && c->st) { /* the parallel path: its why, after */
    char w[256];
    sqlite3_snprintf((int)sizeof w, w, "cache not used: %s; %s", cwhy,
                     last->why);
    sqlite3_snprintf((int)sizeof last->why, last->why, "%s", w);
  } else if (cwhy[0] && !hit) { /* the serial path's */
    char w[256];
    sqlite3_snprintf((int)sizeof w, w, "cache not used: %s; %s", cwhy, why);
    sqlite3_snprintf((int)sizeof why, why, "%s", w);
  }
  if (c->q.having_moved && c->st) { /* planner/query.c rule 12 */
    char w[256];
    sqlite3_snprintf((int)sizeof w, w,
                     "%s%sHAVING to WHERE: %d condition%s reading only "
                     "group terms filter%s the rows, as SQLite moves them",
                     last->why, last->why[0] ? "; " : "", c->q.having_moved,
                     c->q.having_moved > 1 ? "s" : "",
                     c->q.having_moved > 1 ? "" : "s");
    sqlite3_snprintf((int)sizeof last->why, last->why, "%s", w);
  }
  ga_plan_free(&plan);
  if (rc != SQLITE_OK) {
    report_last(c);
    return rc;
  }
  if (!c->st) { /* the serial path */
    last->path = "serial";
    last->threads = 1;
    sqlite3_snprintf((int)sizeof last->why, last->why, "%s", why);
    c->serial = 1;
    c->rows = -1;
    c->reversed = ga_reverse_off(vt->db);
    /* an indexed range: SQLite's own plan (planner/path.c rule 14) */
    rc = sqlite3_prepare_v2(vt->db,
                            index_serial ? c->q.serial_sql_ix : c->q.serial_sql,
                            -1, &c->st, NULL);
    if (rc == SQLITE_OK)
      rc = bind_all(c, c->st);
    if (rc != SQLITE_OK) {
      rc = ga_intr_rc(vt->db, rc);
      reverse_restore(c);
      report_last(c);
      if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
        return rc & 0xff;
      return set_err(c, SQLITE_ERROR,
                     sqlite3_mprintf("gpu_query: %s", sqlite3_errmsg(vt->db)));
    }
  }
  if (c->q.subs.n) { /* planner/qsubq.c rule 7: who evaluated them */
    last->subq_cache = c->serial ? 0 : c->subq.from_cache;
    last->subq_sqlite = c->serial ? c->q.subs.n : c->subq.by_sqlite;
  }
  last->post = c->serial ? NULL : c->direct ? "direct" : "sqlite";
  c->eof = 0;
  return step(c);
}

static int query_next(sqlite3_vtab_cursor *pc) {
  query_cursor *c = (query_cursor *)pc;
  query_vtab *vt = (query_vtab *)pc->pVtab;
  c->rowid++;
  if (c->direct)
    return direct_step(c);
  if (c->replay) {
    c->ri++;
    c->eof = c->ri * (size_t)vt->ncols >= c->nkept;
    return SQLITE_OK;
  }
  return step(c);
}

static int query_eof(sqlite3_vtab_cursor *pc) {
  return ((query_cursor *)pc)->eof;
}

static int query_column(sqlite3_vtab_cursor *pc, sqlite3_context *ctx,
                        int col) {
  query_cursor *c = (query_cursor *)pc;
  query_vtab *vt = (query_vtab *)pc->pVtab;
  if (col >= vt->ncols) {
    int a = col - vt->ncols;
    if (a < c->np && c->params[a])
      sqlite3_result_value(ctx, c->params[a]);
    return SQLITE_OK;
  }
  if (c->direct) /* rule 11 */
    ga_qdirect_column(&c->dq, &c->gs, c->drow, ctx, col);
  else if (c->replay)
    sqlite3_result_value(ctx, c->kept[c->ri * (size_t)vt->ncols + (size_t)col]);
  else
    sqlite3_result_value(ctx, sqlite3_column_value(c->st, col));
  return SQLITE_OK;
}

static int query_rowid(sqlite3_vtab_cursor *pc, sqlite3_int64 *r) {
  *r = ((query_cursor *)pc)->rowid;
  return SQLITE_OK;
}

const sqlite3_module ga_query_methods = {
    .iVersion = 1,
    .xCreate = query_create,
    .xConnect = query_connect,
    .xBestIndex = query_best_index,
    .xDisconnect = query_disconnect,
    .xDestroy = query_destroy,
    .xOpen = query_open,
    .xClose = query_close,
    .xFilter = query_filter,
    .xNext = query_next,
    .xEof = query_eof,
    .xColumn = query_column,
    .xRowid = query_rowid,
    .xRename = query_rename,
};
