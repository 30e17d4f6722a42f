/*
** qsubq.c — gpu_query's uncorrelated scalar subqueries, EXISTS and
** IN (SELECT column ...) on the parallel path (qsubq.h).
**
** Rules:
**   1. Placeholder.  planner/qrewrite.c writes each scalar subquery or
**      EXISTS (SELECT ...) of the text as a parameter ?K of its own (after
**      the text's parameters and the post query's handle), so the workers'
**      texts and the post query read its value where the text reads the
**      subquery.  EXISTS has no affinity: ?K.  A scalar subquery has its
**      first result column's affinity (sqlite3ExprAffinity of TK_SELECT)
**      and no collation (SQLite 3.40: 'a' = (SELECT n FROM d) with n
**      NOCASE holding 'A' is 0): ?K where it has none, else CAST(?K AS
**      BLOB | TEXT | NUMERIC | INTEGER | REAL).  The affinity is read, not
**      guessed: SQLite compiles ?1 = (subquery) on the caller's connection,
**      and the comparison's P5 (its affinity) must equal that of ?1 =
**      placeholder; else the serial path with the reason.  A subquery of
**      several columns (a row value) is the serial path too.
**   2. Value.  Evaluated once a call, with sum ... max as gpu_sum ...
**      gpu_max (the contract, inside the subquery too: a share of total is
**      exact on both sides), the text's parameters bound by number: SELECT
**      (subquery) gives its first row's first column, NULL where it has
**      none, as SQLite does; SELECT EXISTS (subquery) 0 or 1.  It runs on
**      worker 0's connection once every worker has begun (engine/scan/
**      scan.h's in_snapshot hook): its read transaction is the snapshot
**      the workers read, so a subquery over the scanned table reads their
**      rows (the caller's own read transaction began with its statement,
**      before the call, and may be older).  Worker 0 must do what the
**      caller would: gpu_sum ... gpu_max are registered on it for the
**      evaluation (ext/init.c), the subquery's program there must equal
**      the caller's, every instruction and operand (the same schema and
**      tables by number and root page: no TEMP table, no other schema, no
**      authorizer's change, no virtual table), the table must be in main
**      (a worker's main is its file), and at parse time a function it
**      calls must be SQLite's own (no application function, none whose
**      value is the connection's or the moment's, no date and time
**      function: its 'now' is the caller's statement's); else the serial
**      path with the reason.  The caller's interrupt reaches it through
**      worker 0's progress handler.
**   3. Exact.  CAST(v AS type) must give v back, type and bytes (a TEXT in
**      an INTEGER or BLOB column keeps its affinity but no CAST gives it
**      back): else the serial path, saying so.  The values' bytes (and an
**      IN subquery's rows) are charged to group_bytes.
**   4. Where the value is read: the workers bind it (?K + 2) where the
**      filter, an aggregate's argument or a group term reads it; the post
**      query (?K) where the select list, HAVING or ORDER BY does.
**      Partials refuse the text (planner/qrewrite.c rule 6).
**   5. IN (SELECT c ...) in the WHERE (planner/qrewrite.c: elsewhere the
**      post query would read it, serial): c a column of a table (names,
**      dots and an alias only, no expression, no COLLATE), whose declared
**      type's affinity and collation (sqlite3_table_column_metadata: BINARY,
**      NOCASE or RTRIM) declare the one column v of a TEMP table
**      gpuagg_in_<j> on every worker, created inside its read transaction
**      (its ROLLBACK at the end of the call drops it) and filled with the
**      subquery's rows stepped on worker 0; the workers' texts read
**      x IN (SELECT v FROM temp."gpuagg_in_<j>"), whose comparisons take
**      v's affinity and implicit collation as the original's take c's.
**      Storing a value under c's own affinity gives it back unchanged (it
**      passed that affinity when stored in c).
**   6. The column cache (ext/query/query_vtab.c): the caller holds a read
**      transaction on the table's schema (its statement's), and every
**      subquery is evaluated on the caller's connection in that
**      transaction (ga_qsub_eval_caller), the snapshot ga_cache_answer
**      checks the entry against, so the entry's rows and the values are one
**      state.  A scalar's value is bound as the workers' texts bind it
**      (planner/cache_expr.c reads CAST(?K AS type) as SQLite's CAST of the
**      value, a constant with that affinity); an IN subquery's rows are
**      kept (in_rows, charged to group_bytes as rule 3's) and the cache's
**      program tests membership with SQLite's affinity and collation of
**      the comparison (planner/cache_expr.c rule 4), or declines.
**   7. A scalar subquery that is itself a cache-shaped aggregate over a
**      cached table (SELECT agg(e) FROM t [WHERE ...], agg one of the
**      contract's gpu_ aggregates or count) is asked of r->cached first
**      (ext/query/query_vtab.c: the cache entry, current, in the same
**      snapshot, gives the value SQLite's would, bit for bit); else SQLite
**      evaluates it.  from_cache and by_sqlite count them (last_scan's
**      "subqueries").
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "planner.h"
#include "qsubq.h"
#include "qtok.h"

void ga_qsubs_free(ga_qsubs *s) {
  for (int i = 0; s->v && i < s->n; i++) {
    sqlite3_free(s->v[i].sql);
    sqlite3_free(s->v[i].in_decl);
  }
  sqlite3_free(s->v);
  memset(s, 0, sizeof(*s));
}

/* The affinity P5 of the comparison ?k = rhs on db (k: a number no other
** parameter of rhs has, but the placeholder's own): >= 0; -1 (no such
** program: a row value, an error); -2 (no memory). */
static int eq_aff(sqlite3 *db, int k, const char *rhs) {
  sqlite3_stmt *st = NULL;
  char *x = sqlite3_mprintf("EXPLAIN SELECT ?%d = %s", k, rhs);
  if (!x)
    return -2;
  int rc = sqlite3_prepare_v2(db, x, -1, &st, NULL);
  sqlite3_free(x);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    return (rc & 0xff) == SQLITE_NOMEM ? -2 : -1;
  }
  /* the outer comparison reads ?k's register (a constant's Variable may
  ** come after it, in the program's prologue: two passes) */
  int regs[8], nregs = 0, aff = -1, found = 0;
  for (int pass = 0; pass < 2; pass++) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char *o = (const char *)sqlite3_column_text(st, 1);
      if (!o)
        continue;
      if (pass == 0 && !strcmp(o, "Variable") &&
          sqlite3_column_int(st, 2) == k && nregs < 8)
        regs[nregs++] = sqlite3_column_int(st, 3);
      if (pass == 0 || strcmp(o, "Eq"))
        continue;
      for (int i = 0; i < nregs; i++)
        if (sqlite3_column_int(st, 2) == regs[i] ||
            sqlite3_column_int(st, 4) == regs[i]) {
          aff = sqlite3_column_int(st, 6) & 0x47; /* SQLITE_AFF_MASK|NONE */
          found++;
          break;
        }
    }
    sqlite3_reset(st);
  }
  rc = sqlite3_finalize(st);
  if ((rc & 0xff) == SQLITE_NOMEM)
    return -2;
  return found == 1 ? aff : -1;
}

int ga_qsub_placeholder(sqlite3 *db, const char *sub, int k, sqlite3_str *s,
                        const char **cast, const char **why) {
  static const char *const casts[] = {NULL,      "BLOB",    "TEXT",
                                      "NUMERIC", "INTEGER", "REAL"};
  int a = eq_aff(db, k, sub);
  if (a == -2)
    return SQLITE_NOMEM;
  *cast = NULL;
  if (a < 0x40 || a > 0x45) {
    *why = "a subquery's affinity cannot be read (a row value?): SQLite "
           "evaluates the text on the serial path";
    return SQLITE_ERROR;
  }
  *cast = casts[a - 0x40];
  char *ph = *cast ? sqlite3_mprintf("CAST(?%d AS %s)", k, *cast)
                   : sqlite3_mprintf("?%d", k);
  int b = ph ? eq_aff(db, k, ph) : -2;
  if (!ph || b == -2) {
    sqlite3_free(ph);
    return SQLITE_NOMEM;
  }
  if (b != a) {
    sqlite3_free(ph);
    *why = "a subquery's affinity has no placeholder that keeps it: SQLite "
           "evaluates the text on the serial path";
    return SQLITE_ERROR;
  }
  sqlite3_str_appendf(s, "%s ", ph);
  sqlite3_free(ph);
  return SQLITE_OK;
}

/* SQLite's affinity of a declared type (sqlite3AffinityType), named as a
** type of that affinity. */
static const char *aff_name(const char *t) {
  char up[64];
  int n = 0;
  if (!t || !*t)
    return "BLOB";
  for (; t[n] && n < 63; n++)
    up[n] = (char)(t[n] >= 'a' && t[n] <= 'z' ? t[n] - 32 : t[n]);
  up[n] = 0;
  if (t[n])
    return NULL; /* a long declared type: not read here */
  if (strstr(up, "INT"))
    return "INTEGER";
  if (strstr(up, "CHAR") || strstr(up, "CLOB") || strstr(up, "TEXT"))
    return "TEXT";
  if (strstr(up, "BLOB"))
    return "BLOB";
  if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB"))
    return "REAL";
  return "NUMERIC";
}

int ga_qsub_in_decl(sqlite3 *db, const char *sub, char **decl,
                    const char **why) {
  sqlite3_stmt *st = NULL;
  *decl = NULL;
  int rc = sqlite3_prepare_v2(db, sub, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    if ((rc & 0xff) == SQLITE_NOMEM)
      return SQLITE_NOMEM;
    *why = "an IN subquery does not compile alone: SQLite evaluates the "
           "text on the serial path";
    return SQLITE_ERROR;
  }
  const char *dbn = NULL, *tab = NULL, *col = NULL;
  if (sqlite3_column_count(st) == 1) {
    dbn = sqlite3_column_database_name(st, 0);
    tab = sqlite3_column_table_name(st, 0);
    col = sqlite3_column_origin_name(st, 0);
  }
  const char *type = NULL, *coll = NULL;
  rc = dbn && tab && col
           ? sqlite3_table_column_metadata(db, dbn, tab, col, &type, &coll,
                                           NULL, NULL, NULL)
           : SQLITE_ERROR;
  const char *aff = rc == SQLITE_OK ? aff_name(type) : NULL;
  if (aff && coll &&
      (!sqlite3_stricmp(coll, "BINARY") || !sqlite3_stricmp(coll, "NOCASE") ||
       !sqlite3_stricmp(coll, "RTRIM")))
    *decl = sqlite3_mprintf("%s COLLATE %s", aff, coll);
  else if ((rc & 0xff) != SQLITE_NOMEM)
    *why = "an IN subquery selects no column of a table with a built-in "
           "collation (its affinity and collation are not known): SQLite "
           "evaluates the text on the serial path";
  sqlite3_finalize(st);
  if ((rc & 0xff) == SQLITE_NOMEM || (aff && coll && !*decl && !*why))
    return SQLITE_NOMEM;
  return *decl ? SQLITE_OK : SQLITE_ERROR;
}

char *ga_qsub_worker_sql(const ga_qsubs *s, const char *sql, int shift) {
  ga_qtok *t = NULL;
  int n = 0;
  if (ga_q_tokenize(sql, &t, &n))
    return NULL;
  sqlite3_str *o = sqlite3_str_new(NULL);
  int at = 0;
  for (int i = 0; i + 3 < n; i++) {
    const char *z = sql + t[i].off;
    if (!(t[i].type == GA_QT_ID && t[i].len == 2 &&
          !sqlite3_strnicmp(z, "IN", 2) && t[i + 1].type == GA_QT_OP &&
          sql[t[i + 1].off] == '(' && t[i + 2].type == GA_QT_VAR &&
          sql[t[i + 2].off] == '?' && t[i + 3].type == GA_QT_OP &&
          sql[t[i + 3].off] == ')'))
      continue;
    int j = atoi(sql + t[i + 2].off + 1) - shift - s->param0;
    if (j < 0 || j >= s->n || !s->v[j].in_decl)
      continue;
    sqlite3_str_append(o, sql + at, t[i + 1].off - at);
    sqlite3_str_appendf(o, "(SELECT v FROM temp.\"gpuagg_in_%d\")", j);
    at = t[i + 3].off + 1;
    i += 3;
  }
  sqlite3_str_appendall(o, sql + at);
  sqlite3_free(t);
  return sqlite3_str_finish(o);
}

int ga_qsub_run_init(ga_qsub_run *r, sqlite3 *db, const ga_qsubs *subs,
                     sqlite3_value *const *params, int nparams, int64_t cap) {
  memset(r, 0, sizeof(*r));
  r->db = db;
  r->subs = subs;
  r->params = params;
  r->nparams = nparams;
  r->cap = cap;
  size_t n = (size_t)nparams + 1 + (size_t)subs->n;
  r->vals = sqlite3_malloc64(sizeof(*r->vals) * n);
  if (!r->vals)
    return SQLITE_NOMEM;
  memset(r->vals, 0, sizeof(*r->vals) * n);
  for (int i = 0; i < nparams; i++)
    r->vals[i] = params[i];
  return SQLITE_OK;
}

void ga_qsub_run_free(ga_qsub_run *r) {
  if (r->vals && r->subs)
    for (int j = 0; j < r->subs->n; j++)
      sqlite3_value_free(r->vals[r->nparams + 1 + j]);
  for (int j = 0; r->in_rows && j < r->subs->n; j++) {
    for (int i = 0; i < r->in_n[j]; i++)
      sqlite3_value_free(r->in_rows[j][i]);
    sqlite3_free(r->in_rows[j]);
  }
  sqlite3_free(r->in_rows);
  sqlite3_free(r->in_n);
  sqlite3_free(r->vals);
  memset(r, 0, sizeof(*r));
}

/* Rule 3: does CAST(v AS type) give v back? 1 yes, 0 no, < 0 an SQLite
** error code negated. */
static int cast_same(sqlite3 *db, sqlite3_value *v, const char *type) {
  sqlite3_stmt *st = NULL;
  char *x = sqlite3_mprintf("SELECT CAST(?1 AS %s)", type);
  if (!x)
    return -SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, x, -1, &st, NULL);
  sqlite3_free(x);
  int same = 0;
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_value(st, 1, v);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    int t = sqlite3_value_type(v);
    if (sqlite3_column_type(st, 0) == t) {
      if (t == SQLITE_NULL)
        same = 1;
      else if (t == SQLITE_INTEGER)
        same = sqlite3_column_int64(st, 0) == sqlite3_value_int64(v);
      else if (t == SQLITE_FLOAT) {
        double a = sqlite3_column_double(st, 0), b = sqlite3_value_double(v);
        same = !memcmp(&a, &b, sizeof a);
      } else {
        const void *a = t == SQLITE_TEXT
                            ? (const void *)sqlite3_column_text(st, 0)
                            : sqlite3_column_blob(st, 0);
        const void *b = t == SQLITE_TEXT ? (const void *)sqlite3_value_text(v)
                                         : sqlite3_value_blob(v);
        int na = sqlite3_column_bytes(st, 0), nb = sqlite3_value_bytes(v);
        same = na == nb && (!na || !memcmp(a, b, (size_t)na));
      }
    }
  }
  int frc = sqlite3_finalize(st);
  if (rc == SQLITE_OK || rc == SQLITE_DONE)
    rc = frc;
  return rc != SQLITE_OK ? -rc : same;
}

/* A program's every instruction (opcode, P1 .. P5; not the P4 of Init or
** Transaction): two connections with the same one read the same tables (the
** schema by number, each table by root page), collations and functions. */
static char *full_sig(sqlite3 *db, const char *sql, int *rc) {
  return ga_program_sig_as(db, sql, GA_SIG_FULL, rc);
}

const char *ga_qsub_fn_why(sqlite3 *db, const char *name) {
  static const char *const dates[] = {"date",      "time",      "datetime",
                                      "julianday", "unixepoch", "strftime",
                                      "timediff",  NULL};
  static const char *const ours[] = {"gpu_sum", "gpu_total", "gpu_avg",
                                     "gpu_min", "gpu_max",   NULL};
  for (int i = 0; dates[i]; i++)
    if (!sqlite3_stricmp(name, dates[i]))
      return "a subquery calls a date and time function (its 'now' is the "
             "statement's): SQLite evaluates the text on the serial path";
  for (int i = 0; ours[i]; i++)
    if (!sqlite3_stricmp(name, ours[i]))
      return NULL; /* worker 0 has them (rule 2) */
  sqlite3_stmt *st = NULL;
  const char *why = NULL;
  if (sqlite3_prepare_v2(
          db,
          "SELECT max(builtin = 0), min(CASE WHEN type = 's' THEN "
          "flags & 2048 ELSE 1 END) FROM "
          "pragma_function_list WHERE name = ?1 COLLATE NOCASE",
          -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return "cannot list the connection's functions: SQLite evaluates the "
           "text on the serial path";
  }
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) != SQLITE_NULL) {
    if (sqlite3_column_int(st, 0))
      why = "a subquery calls an application's function (the workers have "
            "SQLite's own): SQLite evaluates the text on the serial path";
    else if (!sqlite3_column_int(st, 1))
      why = "a subquery calls a function whose value is the connection's or "
            "the moment's: SQLite evaluates the text on the serial path";
  }
  sqlite3_finalize(st);
  return why;
}

/* Rule 5: the IN subquery j's rows, stepped on w[0] (st), into the TEMP
** table gpuagg_in_<j> of every worker, charged to *bytes. */
static int fill_in(ga_qsub_run *r, sqlite3 **w, int nw, int j, sqlite3_stmt *st,
                   int64_t *bytes, char *why, size_t n) {
  const ga_qsub *q = &r->subs->v[j];
  sqlite3_stmt **ins = sqlite3_malloc64(sizeof(*ins) * (size_t)nw);
  int rc = ins ? SQLITE_OK : SQLITE_NOMEM;
  if (ins)
    memset(ins, 0, sizeof(*ins) * (size_t)nw);
  for (int k = 0; rc == SQLITE_OK && k < nw; k++) {
    char *x = sqlite3_mprintf("CREATE TEMP TABLE \"gpuagg_in_%d\"(v %s)", j,
                              q->in_decl);
    rc = x ? sqlite3_exec(w[k], x, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(x);
    x = sqlite3_mprintf("INSERT INTO temp.\"gpuagg_in_%d\" VALUES (?1)", j);
    if (rc == SQLITE_OK)
      rc = x ? sqlite3_prepare_v2(w[k], x, -1, &ins[k], NULL) : SQLITE_NOMEM;
    sqlite3_free(x);
  }
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    sqlite3_value *v = sqlite3_column_value(st, 0);
    *bytes += 16 + sqlite3_value_bytes(v);
    if (*bytes > r->cap) { /* rule 3 */
      sqlite3_snprintf((int)n, why,
                       "the subqueries' values pass group_bytes = %lld",
                       (long long)r->cap);
      rc = SQLITE_ERROR;
      break;
    }
    rc = SQLITE_OK;
    for (int k = 0; rc == SQLITE_OK && k < nw; k++) {
      rc = sqlite3_bind_value(ins[k], 1, v);
      if (rc == SQLITE_OK && (rc = sqlite3_step(ins[k])) == SQLITE_DONE)
        rc = sqlite3_reset(ins[k]);
    }
  }
  if (rc == SQLITE_DONE)
    rc = SQLITE_OK;
  for (int k = 0; ins && k < nw; k++)
    sqlite3_finalize(ins[k]);
  sqlite3_free(ins);
  return rc;
}

/* Rule 6: the IN subquery j's rows, stepped on the caller (st), kept in
** r->in_rows[j], charged to *bytes. */
static int keep_in(ga_qsub_run *r, int j, sqlite3_stmt *st, int64_t *bytes,
                   char *why, size_t n) {
  int rc, cap = 0;
  for (int i = 0; i < r->in_n[j]; i++)
    sqlite3_value_free(r->in_rows[j][i]);
  r->in_n[j] = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    sqlite3_value *v = sqlite3_column_value(st, 0);
    *bytes += 16 + sqlite3_value_bytes(v);
    if (*bytes > r->cap) { /* rule 3 */
      sqlite3_snprintf((int)n, why,
                       "the subqueries' values pass group_bytes = %lld",
                       (long long)r->cap);
      return SQLITE_ERROR;
    }
    if (r->in_n[j] == cap) {
      cap = cap ? 2 * cap : 16;
      sqlite3_value **x =
          sqlite3_realloc64(r->in_rows[j], sizeof(*x) * (size_t)cap);
      if (!x)
        return SQLITE_NOMEM;
      r->in_rows[j] = x;
    }
    if (!(r->in_rows[j][r->in_n[j]] = sqlite3_value_dup(v)))
      return SQLITE_NOMEM;
    r->in_n[j]++;
  }
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Subquery j on w[0] (rule 2): its program must be the caller's (the same
** tables of the same schema, no authorizer's change, the same functions
** and collations), its value into the slot, or its rows into the workers'
** TEMP tables. */
static int eval_one(ga_qsub_run *r, sqlite3 **w, int nw, int j, int64_t *bytes,
                    char *why, size_t n) {
  sqlite3 *w0 = w[0];
  const ga_qsub *q = &r->subs->v[j];
  sqlite3_value **slot = &r->vals[r->nparams + 1 + j];
  sqlite3_value_free(*slot); /* a snapshot tried again */
  *slot = NULL;
  int rc = SQLITE_OK, wrc = SQLITE_OK, same = 1;
  if (w0 != r->db) { /* the caller's own program needs no check */
    char *a = full_sig(r->db, q->sql, &rc);
    char *b = a ? full_sig(w0, q->sql, &wrc) : NULL;
    same = a && b && !strcmp(a, b);
    sqlite3_free(a);
    sqlite3_free(b);
  }
  if ((rc & 0xff) == SQLITE_NOMEM || (wrc & 0xff) == SQLITE_NOMEM)
    return SQLITE_NOMEM;
  if ((rc & 0xff) == SQLITE_INTERRUPT || (wrc & 0xff) == SQLITE_INTERRUPT)
    return SQLITE_INTERRUPT;
  if (!same) {
    sqlite3_snprintf((int)n, why,
                     "a subquery compiles otherwise on a worker (a table of "
                     "another schema, a TEMP one, an authorizer, a virtual "
                     "table): SQLite evaluates the text on the serial path");
    return SQLITE_ERROR;
  }
  sqlite3_stmt *st = NULL;
  rc = sqlite3_prepare_v2(w0, q->sql, -1, &st, NULL);
  int np = st ? sqlite3_bind_parameter_count(st) : 0;
  for (int i = 0; rc == SQLITE_OK && i < np && i < r->nparams; i++)
    if (r->params[i])
      rc = sqlite3_bind_value(st, i + 1, r->params[i]);
  if (rc == SQLITE_OK && q->in_decl) {
    rc = r->caller ? keep_in(r, j, st, bytes, why, n)
                   : fill_in(r, w, nw, j, st, bytes, why, n);
    if (rc == SQLITE_ERROR && why[0]) {
      sqlite3_finalize(st);
      return SQLITE_ERROR;
    }
  } else if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *slot = sqlite3_value_dup(sqlite3_column_value(st, 0));
      rc = *slot ? SQLITE_OK : SQLITE_NOMEM;
    } else if (rc == SQLITE_DONE) {
      rc = SQLITE_ERROR; /* SELECT (...) returns one row */
    }
  }
  int frc = sqlite3_finalize(st);
  if (rc == SQLITE_OK)
    return SQLITE_OK;
  if (frc != SQLITE_OK)
    rc = frc;
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  sqlite3_snprintf((int)n, why, "a subquery failed on a worker: %s",
                   sqlite3_errmsg(w0));
  return SQLITE_ERROR;
}

int ga_qsub_eval(void *arg, sqlite3 **w, int nw, char *why, size_t n) {
  ga_qsub_run *r = arg;
  sqlite3 *w0 = w[0];
  int64_t bytes = 0;
  int rc = r->contract ? r->contract(w0, r->contract_ctx, 1) : SQLITE_OK;
  r->from_cache = r->by_sqlite = 0;
  for (int j = 0; rc == SQLITE_OK && j < r->subs->n; j++) {
    const ga_qsub *q = &r->subs->v[j];
    sqlite3_value **slot = &r->vals[r->nparams + 1 + j];
    sqlite3_value_free(*slot);
    *slot = NULL;
    if (r->caller && r->cached && !q->in_decl && /* rule 7 */
        !sqlite3_strnicmp(q->sql, "SELECT (", 8)) {
      rc = r->cached(r->cached_ctx, j, q->sql, slot);
      if (rc != SQLITE_OK)
        break;
    }
    if (*slot) {
      r->from_cache++;
    } else {
      rc = eval_one(r, w, nw, j, &bytes, why, n);
      r->by_sqlite++;
    }
    if (rc != SQLITE_OK || q->in_decl)
      continue;
    sqlite3_value *v = r->vals[r->nparams + 1 + j];
    bytes += 16 + sqlite3_value_bytes(v);
    if (bytes > r->cap) { /* rule 3 */
      sqlite3_snprintf((int)n, why,
                       "the subqueries' values pass group_bytes = %lld",
                       (long long)r->cap);
      rc = SQLITE_ERROR;
      break;
    }
    if (!q->cast)
      continue;
    int same = cast_same(r->db, v, q->cast);
    if (same < 0) {
      rc = -same;
      if ((rc & 0xff) != SQLITE_NOMEM && (rc & 0xff) != SQLITE_INTERRUPT)
        sqlite3_snprintf((int)n, why, "cannot check a subquery's value: %s",
                         sqlite3_errmsg(r->db));
      break;
    }
    if (!same) {
      static const char *const tn[] = {"?",    "INTEGER", "REAL",
                                       "TEXT", "BLOB",    "NULL"};
      sqlite3_snprintf((int)n, why,
                       "a subquery's value (%s) is not kept by its "
                       "affinity's CAST(... AS %s): SQLite evaluates the "
                       "text on the serial path",
                       tn[sqlite3_value_type(v)], q->cast);
      rc = SQLITE_ERROR;
    }
  }
  if (r->contract)
    r->contract(w0, r->contract_ctx, 0);
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  return rc;
}

int ga_qsub_bind_post(const ga_qsub_run *r, sqlite3_stmt *st) {
  int np = sqlite3_bind_parameter_count(st);
  for (int j = 0; r->vals && j < r->subs->n; j++) {
    int k = r->subs->param0 + j;
    if (k > np || !r->vals[r->nparams + 1 + j])
      continue;
    int rc = sqlite3_bind_value(st, k, r->vals[r->nparams + 1 + j]);
    if (rc != SQLITE_OK)
      return rc;
  }
  return SQLITE_OK;
}

int ga_qsub_reads(const ga_qsubs *s, const char *sql) {
  ga_qtok *t = NULL;
  int n = 0, reads = 0;
  if (!sql)
    return 0;
  if (ga_q_tokenize(sql, &t, &n))
    return 1;
  for (int i = 0; i < n && !reads; i++)
    reads = t[i].type == GA_QT_VAR && sql[t[i].off] == '?' &&
            atoi(sql + t[i].off + 1) >= s->param0;
  sqlite3_free(t);
  return reads;
}

int ga_qsub_eval_caller(ga_qsub_run *r, char *why, size_t n) {
  if (!r->in_rows && r->subs->n) {
    r->in_rows = sqlite3_malloc64(sizeof(*r->in_rows) * (size_t)r->subs->n);
    r->in_n = sqlite3_malloc64(sizeof(*r->in_n) * (size_t)r->subs->n);
    if (!r->in_rows || !r->in_n)
      return SQLITE_NOMEM;
    memset(r->in_rows, 0, sizeof(*r->in_rows) * (size_t)r->subs->n);
    memset(r->in_n, 0, sizeof(*r->in_n) * (size_t)r->subs->n);
  }
  /* the caller has gpu_sum ... gpu_max of its own: none registered */
  int (*contract)(sqlite3 *, void *, int) = r->contract;
  sqlite3 *db = r->db;
  r->contract = NULL;
  r->caller = 1;
  int rc = ga_qsub_eval(r, &db, 1, why, n);
  r->caller = 0;
  r->contract = contract;
  return rc;
}

int ga_qsub_in_set(const ga_qsub_run *r, int k, sqlite3_value *const **rows,
                   int *n, const char **decl) {
  int j = k - (r->nparams + 1);
  if (!r->in_rows || !r->subs || j < 0 || j >= r->subs->n ||
      !r->subs->v[j].in_decl)
    return 0;
  *rows = r->in_rows[j];
  *n = r->in_n[j];
  *decl = r->subs->v[j].in_decl;
  return 1;
}

/* Is token t of z the keyword w? */
static int tok_kw(const char *z, const ga_qtok *t, const char *w) {
  return t->type == GA_QT_ID && (int)strlen(w) == t->len &&
         !sqlite3_strnicmp(z + t->off, w, t->len);
}

char *ga_qsub_cache_text(const char *sql) {
  static const char *const aggs[] = {
      "gpu_sum", "gpu_total", "gpu_avg", "gpu_min", "gpu_max", "count", NULL};
  static const char *const stop[] = {"GROUP",  "HAVING", "ORDER",     "LIMIT",
                                     "WINDOW", "UNION",  "INTERSECT", "EXCEPT",
                                     "JOIN",   "VALUES", "OFFSET",    NULL};
  size_t len = strlen(sql);
  if (len < 10 || sqlite3_strnicmp(sql, "SELECT (", 8) || sql[len - 1] != ')')
    return NULL;
  char *in = sqlite3_mprintf("%.*s", (int)(len - 9), sql + 8);
  ga_qtok *t = NULL;
  int n = 0, ok = 0;
  if (!in || ga_q_tokenize(in, &t, &n)) {
    sqlite3_free(in);
    sqlite3_free(t);
    return NULL;
  }
  int i = 0, depth = 0;
  if (n > 4 && tok_kw(in, &t[0], "SELECT") && t[2].type == GA_QT_OP &&
      in[t[2].off] == '(')
    for (int a = 0; aggs[a] && !ok; a++)
      ok = tok_kw(in, &t[1], aggs[a]);
  for (i = 2; ok && i < n; i++) { /* the call's closing ")" */
    if (t[i].type == GA_QT_OP && in[t[i].off] == '(')
      depth++;
    else if (t[i].type == GA_QT_OP && in[t[i].off] == ')' && --depth == 0)
      break;
  }
  i++;
  if (ok && i < n && tok_kw(in, &t[i], "AS"))
    i++;
  if (ok && i < n && !tok_kw(in, &t[i], "FROM") &&
      (t[i].type == GA_QT_ID || t[i].type == GA_QT_QID))
    i++; /* the column's name */
  ok = ok && i < n && tok_kw(in, &t[i], "FROM");
  for (depth = 0; ok && i < n; i++) { /* one table, a WHERE at most */
    if (t[i].type == GA_QT_OP && in[t[i].off] == '(')
      depth++;
    else if (t[i].type == GA_QT_OP && in[t[i].off] == ')')
      depth--;
    else if (!depth && t[i].type == GA_QT_OP && in[t[i].off] == ',')
      ok = 0;
    for (int k = 0; stop[k] && ok && !depth; k++)
      ok = !tok_kw(in, &t[i], stop[k]);
  }
  sqlite3_free(t);
  if (!ok)
    sqlite3_free(in);
  return ok ? in : NULL;
}
