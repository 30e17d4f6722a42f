/*
** qrewrite.c — gpu_query's pre-pass (qrewrite.h): views, one common table
** expression, and uncorrelated subqueries, turned into the one-table text
** planner/query.c reads.  The text as written stays the caller's: SQLite
** compiles it first (its errors, the authorizer, trusted_schema and
** DIRECTONLY act on it as written), and it names the result columns.
**
** Rules:
**   1. A source.  FROM names a view, or the one non-recursive common table
**      expression of a WITH (read there only), whose body is SELECT [ALL]
**      <expressions or *> FROM <one table> [[AS] alias] [INDEXED BY x |
**      NOT INDEXED] [WHERE ...].  Anything else in the body (DISTINCT,
**      aggregates, window functions, GROUP BY, HAVING, ORDER BY, LIMIT,
**      compound selects, joins, subqueries, a view over a view) is an error
**      naming the construct, as are RECURSIVE, several expressions, or one
**      FROM does not name.
**   2. Names.  The source's columns are named as SQLite names them (the
**      columns of SELECT * FROM it: an explicit column list, aliases, the
**      ":1" suffixes), position by position.  A view's body resolves in the
**      view's schema (a main view reads main.t where a TEMP t shadows it);
**      a TEMP view's, and an expression's, as a top-level name.  Qualified
**      names of the body lose their qualifier (the body has one table).
**   3. Substitution.  In the outer text every name that SQLite resolves to
**      a source column (bare, or qualified by the FROM's alias or name, or
**      schema.name) becomes the column it shows, written alone where the
**      body's item is a column of the table (it keeps its affinity and
**      collation), else the body's expression in parentheses; FROM becomes
**      "schema"."table" AS <the FROM's alias or name>; the body's WHERE is
**      ANDed before the outer WHERE, as SQLite's flattener does.  An item's
**      alias as written, an alias read by a whole ORDER BY term, function
**      and collation names, window names and frame words stay.  A name
**      that reaches no source column but is a column of the table (an alias
**      or a double-quoted string of the outer text) would change meaning:
**      an error asking to rename it.
**      Parameters are written ?N with the number SQLite gives them in the
**      text as written (a WITH's body comes first there).
**   4. Exactness.  SQLite's program for the text as written and for the
**      substituted text must be the same, opcode, P4 (collations, functions,
**      affinities of comparisons) and P5 (comparison flags) alike; else the
**      call takes the serial path with the reason: an authorizer that
**      answers other than OK for the view's reads, a view column whose
**      collation or affinity the substitution would change.
**   5. Subqueries.  An uncorrelated scalar subquery, IN (SELECT ...) or
**      EXISTS (SELECT ...) outside FROM (each must compile alone on the
**      caller's connection; one that does not reads the outer query's
**      columns: an error, "rewrite as a join or GROUP BY").  Where the text
**      reads no view or WITH source and every IN (SELECT ...) is in the
**      WHERE, each becomes a parameter of its own (planner/qsubq.c rules
**      1 and 5: ?K or CAST(?K AS affinity); IN (?K) for an IN, whose set
**      is a TEMP table of the workers) and the call may run in parallel,
**      the subquery evaluated in the scan's snapshot; else, or where a
**      subquery's affinity, column or functions do not allow it, the
**      serial path: SQLite evaluates the text as written, with sum ...
**      max as gpu_sum ... gpu_max inside the subqueries too.  The planner
**      then reads the text with each subquery as (NULL), for the groups
**      table's columns and the names.  A subquery that reads the WITH's
**      expression is an error (it is read once, in FROM).
**   6. Partials.  gpu_query_partial refuses a text that reads a view: the
**      finishing database declares the table alone (gpuagg.dask), so the
**      finish could not read the view; a WITH expression is in the text,
**      and a subquery's value is no partial's to carry (rule 5).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "planner.h"
#include "qrewrite.h"
#include "qsubq.h"

typedef struct qsrc {
  const char *z;
  ga_qtok *t;
  int n;
} qsrc;

static int qkw(const qsrc *s, int i, const char *w) {
  return i >= 0 && i < s->n && s->t[i].type == GA_QT_ID && !s->t[i].ident &&
         (int)strlen(w) == s->t[i].len &&
         !sqlite3_strnicmp(s->z + s->t[i].off, w, s->t[i].len);
}

static int qop(const qsrc *s, int i, const char *w) {
  return i >= 0 && i < s->n && s->t[i].type == GA_QT_OP &&
         (int)strlen(w) == s->t[i].len &&
         !memcmp(s->z + s->t[i].off, w, (size_t)s->t[i].len);
}

static int qis_name(const qsrc *s, int i) {
  return i >= 0 && i < s->n &&
         (s->t[i].type == GA_QT_ID || s->t[i].type == GA_QT_QID);
}

/* An identifier dequoted (sqlite3_malloc'd). */
static char *qname(const qsrc *s, int i) { return ga_qt_name(s->z, &s->t[i]); }

/* Does token i name w (case-insensitively, dequoted)? */
static int qname_is(const qsrc *s, int i, const char *w) {
  if (!qis_name(s, i) || !w)
    return 0;
  char *z = qname(s, i);
  int r = z && !sqlite3_stricmp(z, w);
  sqlite3_free(z);
  return r;
}

static int qclose(const qsrc *s, int i) {
  int depth = 0;
  for (; i < s->n; i++) {
    if (qop(s, i, "("))
      depth++;
    else if (qop(s, i, ")") && --depth == 0)
      return i;
  }
  return s->n;
}

/* The next top-level token in [a, b) that is one of kws, else b. */
static int qnext(const qsrc *s, int a, int b, const char *const *kws) {
  int depth = 0;
  for (int i = a; i < b; i++) {
    if (qop(s, i, "("))
      depth++;
    else if (qop(s, i, ")"))
      depth--;
    else if (depth == 0)
      for (int k = 0; kws[k]; k++)
        if (qkw(s, i, kws[k]))
          return i;
  }
  return b;
}

static const char *const after_from[] = {"WHERE", "GROUP", "HAVING", "WINDOW",
                                         "ORDER", "LIMIT", NULL};

static int fail(char **err, const char *fmt, const char *a, const char *b) {
  if (!*err)
    *err = sqlite3_mprintf(fmt, a ? a : "", b ? b : "");
  return *err ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* ---- rule 4: a program's signature ---- */

static char *prog_sig(sqlite3 *db, const char *sql, int *rc) {
  return ga_program_sig_as(db, sql, GA_SIG_P4, rc);
}

/* ---- the source ---- */

typedef struct vcol {
  char *name;  /* as SQLite names the source's column */
  char *subst; /* what replaces it in the outer text */
} vcol;

typedef struct rw {
  sqlite3 *db;
  char **err;
  qsrc S;         /* the text */
  qsrc B;         /* the body (the view's SQL, or the text) */
  char *bz;       /* the view's SQL */
  int ba, bb;     /* the body's tokens in B */
  char *src_name; /* the view's or the expression's name */
  int temp_view;  /* a TEMP view, or an expression: top-level names */
  char *vschema;  /* the view's schema */
  ga_target t;    /* the body's table */
  char *where;    /* the body's WHERE, its qualifiers dropped */
  vcol *cols;
  int ncols;
  int cte_a, cte_b; /* the WITH clause [cte_a, cte_b) of S, none: 0, 0 */
} rw;

/* Tokens [a, b) of B into s, qualifiers dropped (rule 2). */
static void body_text(rw *w, sqlite3_str *s, int a, int b) {
  const qsrc *B = &w->B;
  for (int i = a; i < b; i++) {
    if (qis_name(B, i) && qop(B, i + 1, ".") && qis_name(B, i + 2)) {
      i++; /* q.x, s.q.x: x */
      continue;
    }
    if (B->t[i].type == GA_QT_VAR && B->t == w->S.t)
      sqlite3_str_appendf(s, "?%d ", B->t[i].var);
    else
      sqlite3_str_appendf(s, "%.*s ", B->t[i].len, B->z + B->t[i].off);
  }
}

/* The aggregate and window functions of the connection (rule 1). */
static int is_agg(sqlite3 *db, const char *name, int nargs) {
  if ((!sqlite3_stricmp(name, "min") || !sqlite3_stricmp(name, "max")) &&
      nargs > 1)
    return 0;
  sqlite3_stmt *st = NULL;
  int r = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT 1 FROM pragma_function_list WHERE name = ?1 "
                         "COLLATE NOCASE AND type IN ('a', 'w')",
                         -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    r = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return r;
}

/* Rule 1: the body [ba, bb) of B, checked; w->t, w->where, the items. */
static int read_body(rw *w) {
  const qsrc *B = &w->B;
  int a = w->ba, b = w->bb, rc;
  const char *what = w->temp_view == 2 ? "common table expression" : "view";
  if (!qkw(B, a, "SELECT"))
    return fail(w->err, "gpu_query: the %s %s is not one SELECT over one table",
                what, w->src_name);
  for (int i = a; i < b; i++) {
    static const char *const bad[] = {
        "DISTINCT", "GROUP",  "HAVING",    "ORDER", "LIMIT",  "WINDOW", "OVER",
        "UNION",    "EXCEPT", "INTERSECT", "JOIN",  "FILTER", NULL};
    if (i > a && qkw(B, i, "SELECT"))
      return fail(w->err,
                  "gpu_query: the %s %s holds a subquery (a view or common "
                  "table expression may only select expressions of one "
                  "table's rows)",
                  what, w->src_name);
    for (int k = 0; bad[k]; k++)
      if (qkw(B, i, bad[k])) {
        char *e = sqlite3_mprintf(
            "gpu_query: the %s %s has %s (a view or common table expression "
            "may only select expressions of one table's rows, with a WHERE)",
            what, w->src_name, bad[k]);
        *w->err = e;
        return e ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    if (qis_name(B, i) && qop(B, i + 1, "(") && !qop(B, i - 1, ".")) {
      int close = qclose(B, i + 1), nargs = close > i + 2, depth = 0;
      for (int j = i + 2; j < close; j++) {
        depth += qop(B, j, "(") - qop(B, j, ")");
        nargs += depth == 0 && qop(B, j, ",");
      }
      char *name = qname(B, i);
      if (!name)
        return SQLITE_NOMEM;
      if (!qkw(B, i - 1, "AS") && is_agg(w->db, name, nargs)) {
        char *e = sqlite3_mprintf(
            "gpu_query: the %s %s calls the aggregate %s() (a view or "
            "common table expression may only select expressions of one "
            "table's rows: aggregate in the query that reads it)",
            what, w->src_name, name);
        sqlite3_free(name);
        *w->err = e;
        return e ? SQLITE_ERROR : SQLITE_NOMEM;
      }
      sqlite3_free(name);
    }
  }
  int items = a + 1 + qkw(B, a + 1, "ALL");
  static const char *const from_kw[] = {"FROM", NULL};
  int from = qnext(B, items, b, from_kw);
  if (from == b)
    return fail(w->err, "gpu_query: the %s %s reads no table", what,
                w->src_name);
  int fe = qnext(B, from + 1, b, after_from);
  for (int i = from + 1; i < fe; i++)
    if (qop(B, i, ",") || qop(B, i, "("))
      return fail(w->err,
                  "gpu_query: the %s %s reads more than one table (a view or "
                  "common table expression must read one table)",
                  what, w->src_name);
  int i = from + 1;
  if (!qis_name(B, i))
    return fail(w->err, "gpu_query: the %s %s reads no table", what,
                w->src_name);
  char *s1 = qname(B, i), *s2 = NULL;
  if (!s1)
    return SQLITE_NOMEM;
  i++;
  if (qop(B, i, ".") && qis_name(B, i + 1)) {
    s2 = qname(B, i + 1);
    if (!s2) {
      sqlite3_free(s1);
      return SQLITE_NOMEM;
    }
    i += 2;
  }
  if (w->temp_view == 2 && !s2 && !sqlite3_stricmp(s1, w->src_name)) {
    sqlite3_free(s1);
    return fail(w->err,
                "gpu_query: the common table expression %s reads itself "
                "(recursive: not supported)",
                w->src_name, NULL);
  }
  char *qual = sqlite3_mprintf("%s", s2 ? s2 : s1);
  char *arg = s2             ? sqlite3_mprintf("\"%w\".\"%w\"", s1, s2)
              : w->temp_view ? sqlite3_mprintf("\"%w\"", s1)
                             : sqlite3_mprintf("\"%w\".\"%w\"", w->vschema, s1);
  sqlite3_free(s1);
  sqlite3_free(s2);
  if (!arg || !qual) {
    sqlite3_free(arg);
    sqlite3_free(qual);
    return SQLITE_NOMEM;
  }
  if (qkw(B, i, "AS"))
    i++;
  if (i < fe && qis_name(B, i) && !qkw(B, i, "INDEXED") && !qkw(B, i, "NOT")) {
    sqlite3_free(qual);
    if (!(qual = qname(B, i))) {
      sqlite3_free(arg);
      return SQLITE_NOMEM;
    }
    i++;
  }
  char *terr = NULL;
  rc = ga_target_resolve(w->db, arg, &w->t, &terr);
  sqlite3_free(arg);
  if (rc != SQLITE_OK) {
    sqlite3_free(qual);
    if (rc == SQLITE_NOMEM) {
      sqlite3_free(terr);
      return rc;
    }
    char *e = sqlite3_mprintf("gpu_query: the %s %s: %s", what, w->src_name,
                              terr ? terr + 15 : "");
    sqlite3_free(terr);
    *w->err = e;
    return e ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if (strcmp(w->t.type, "table")) {
    sqlite3_free(qual);
    char *e = sqlite3_mprintf(
        "gpu_query: the %s %s reads %s, a %s (a view or common table "
        "expression must read one rowid table)",
        what, w->src_name, w->t.table, w->t.type);
    *w->err = e;
    return e ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if (fe < b && !qkw(B, fe, "WHERE")) {
    sqlite3_free(qual);
    return fail(w->err, "gpu_query: the %s %s: cannot read its clauses", what,
                w->src_name);
  }
  if (fe < b) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    body_text(w, s, fe + 1, b);
    if (!(w->where = sqlite3_str_finish(s))) {
      sqlite3_free(qual);
      return SQLITE_NOMEM;
    }
  }
  /* the items, and SQLite's name for each column of the body */
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "SELECT %.*s FROM \"%w\".\"%w\" AS \"%w\"",
                      B->t[from - 1].off + B->t[from - 1].len - B->t[items].off,
                      B->z + B->t[items].off, w->t.schema, w->t.table, qual);
  sqlite3_free(qual);
  char *sel = sqlite3_str_finish(s);
  if (!sel)
    return SQLITE_NOMEM;
  sqlite3_stmt *st = NULL;
  rc = sqlite3_prepare_v2(w->db, sel, -1, &st, NULL);
  sqlite3_free(sel);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    if ((rc & 0xff) == SQLITE_NOMEM)
      return SQLITE_NOMEM;
    char *e = sqlite3_mprintf("gpu_query: the %s %s cannot be read as one "
                              "table's expressions (%s)",
                              what, w->src_name, sqlite3_errmsg(w->db));
    *w->err = e;
    return e ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  int nc = sqlite3_column_count(st);
  if (nc != w->ncols) {
    sqlite3_finalize(st);
    return fail(w->err, "gpu_query: the %s %s: cannot match its columns", what,
                w->src_name);
  }
  int col = 0, depth = 0, e0 = items;
  for (int j = items; j <= from && rc == SQLITE_OK; j++) {
    if (j < from && qop(B, j, "("))
      depth++;
    else if (j < from && qop(B, j, ")"))
      depth--;
    if (!(j == from || (depth == 0 && qop(B, j, ","))))
      continue;
    int ea = e0, eb = j;
    e0 = j + 1;
    if (qop(B, eb - 1, "*")) { /* *, q.*: the table's columns */
      for (int c = 0; c < w->t.ncols && col < nc; c++, col++)
        if (!(w->cols[col].subst = sqlite3_mprintf("\"%w\"", w->t.cols[c])))
          rc = SQLITE_NOMEM;
      continue;
    }
    if (col >= nc)
      break;
    const char *cn = sqlite3_column_name(st, col);
    if (cn && eb - ea >= 2 && qis_name(B, eb - 1) && !qop(B, eb - 2, ".") &&
        !qkw(B, eb - 2, "COLLATE") && qname_is(B, eb - 1, cn))
      eb -= qkw(B, eb - 2, "AS") ? 2 : 1;
    /* a bare column (or the rowid): itself, parentheses and qualifiers
    ** aside */
    int xa = ea, xb = eb;
    while (xb - xa >= 3 && qop(B, xa, "(") && qclose(B, xa) == xb - 1)
      xa++, xb--;
    while (xb - xa >= 3 && qis_name(B, xa) && qop(B, xa + 1, "."))
      xa += 2;
    if (xb == xa + 1 && qis_name(B, xa) && B->t[xa].type != GA_QT_STR) {
      char *z = qname(B, xa);
      int known = 0;
      for (int c = 0; z && c < w->t.ncols; c++)
        known |= !sqlite3_stricmp(z, w->t.cols[c]);
      if (z && known)
        w->cols[col].subst = sqlite3_mprintf("\"%w\"", z);
      sqlite3_free(z);
      if (!z)
        rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK && !w->cols[col].subst) {
      sqlite3_str *x = sqlite3_str_new(NULL);
      sqlite3_str_appendall(x, "(");
      body_text(w, x, ea, eb);
      sqlite3_str_appendall(x, ")");
      if (!(w->cols[col].subst = sqlite3_str_finish(x)))
        rc = SQLITE_NOMEM;
    }
    col++;
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_OK && col != nc)
    return fail(w->err, "gpu_query: the %s %s: cannot match its columns", what,
                w->src_name);
  return rc;
}

/* The source's column names: SELECT * FROM it (rule 2). */
static int source_cols(rw *w, const char *sql) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    if ((rc & 0xff) == SQLITE_NOMEM)
      return SQLITE_NOMEM;
    return fail(w->err, "gpu_query: cannot read the columns of %s (%s)",
                w->src_name, sqlite3_errmsg(w->db));
  }
  int n = sqlite3_column_count(st);
  w->cols = sqlite3_malloc64(sizeof(vcol) * (size_t)(n + 1));
  if (!w->cols) {
    sqlite3_finalize(st);
    return SQLITE_NOMEM;
  }
  memset(w->cols, 0, sizeof(vcol) * (size_t)(n + 1));
  w->ncols = n;
  for (int i = 0; i < n && rc == SQLITE_OK; i++) {
    const char *z = sqlite3_column_name(st, i);
    if (!z || !(w->cols[i].name = sqlite3_mprintf("%s", z)))
      rc = SQLITE_NOMEM;
  }
  sqlite3_finalize(st);
  return rc;
}

static int vcol_of(const rw *w, const char *z) {
  for (int k = 0; z && k < w->ncols; k++)
    if (!sqlite3_stricmp(z, w->cols[k].name))
      return k;
  return -1;
}

/* ---- the contract's serial text: sum ... max as gpu_sum ... gpu_max ---- */

/* Is token i a call the contract replaces (sum ... max of one argument)? */
static int contract_at(const qsrc *S, int i) {
  static const char *const ours[] = {"sum", "total", "avg", "min", "max", NULL};
  if (S->t[i].type != GA_QT_ID || !qop(S, i + 1, "(") || qop(S, i - 1, "."))
    return 0;
  int ours_k = 0;
  for (int k = 0; ours[k]; k++)
    ours_k |= qkw(S, i, ours[k]);
  if (!ours_k)
    return 0;
  int close = qclose(S, i + 1), depth = 0, commas = 0;
  for (int j = i + 2; j < close; j++) {
    depth += qop(S, j, "(") - qop(S, j, ")");
    commas += depth == 0 && qop(S, j, ",");
  }
  return !commas && close != i + 2;
}

static char *contract_text(const qsrc *S) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  int at = 0;
  for (int i = 0; i < S->n; i++) {
    if (!contract_at(S, i))
      continue; /* min(a, b), max(a, b): scalar */
    sqlite3_str_append(s, S->z + at, S->t[i].off - at);
    sqlite3_str_appendall(s, "gpu_");
    at = S->t[i].off;
  }
  sqlite3_str_appendall(s, S->z + at);
  return sqlite3_str_finish(s);
}

/* Tokens [a, b) of S as pre ... ")", parameters ?N, the contract's gpu_
** aggregates where contract (rule 5: a subquery's text). */
static char *sub_text(const qsrc *S, int a, int b, const char *pre,
                      int contract) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, pre);
  for (int i = a; i < b; i++) {
    const ga_qtok *t = &S->t[i];
    if (t->type == GA_QT_VAR) {
      sqlite3_str_appendf(s, "?%d ", t->var);
      continue;
    }
    if (contract && contract_at(S, i))
      sqlite3_str_appendf(s, "%s", "gpu_");
    sqlite3_str_appendf(s, "%.*s ", t->len, S->z + t->off);
  }
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

/* Rule 3: the window definition ( ... ) opening at token a: its base
** window's name and every word of its frame (ROWS, RANGE or GROUPS to its
** end, where no term follows BY, a comma or an operator) name no column:
** they stay as written (planner/qwindow.c rule 3 reads them so too). */
static void keep_window_def(const qsrc *S, int a, unsigned char *keep) {
  static const char *const words[] = {"PARTITION", "ORDER",  "ROWS",
                                      "RANGE",     "GROUPS", NULL};
  int b = qclose(S, a),
      base = qis_name(S, a + 1) && !qop(S, a + 2, "(") && !qop(S, a + 2, ".");
  for (int k = 0; words[k] && base; k++)
    base = !qkw(S, a + 1, words[k]);
  if (base)
    keep[a + 1] = 1;
  int depth = 0;
  for (int i = a + 1; i < b; i++) {
    depth += qop(S, i, "(") - qop(S, i, ")");
    int after_term =
        i == a + 1 || (!qkw(S, i - 1, "BY") &&
                       (S->t[i - 1].type != GA_QT_OP || qop(S, i - 1, ")")));
    if (depth == 0 && after_term &&
        (qkw(S, i, "ROWS") || qkw(S, i, "RANGE") || qkw(S, i, "GROUPS"))) {
      for (int j = i; j < b; j++)
        keep[j] |= qis_name(S, j);
      return;
    }
  }
}

/* Rule 3: window names (OVER name, a WINDOW clause's name AS ( ... ), a
** base window) and frames in [a, b) (the outer text after its SELECT)
** name no column of a view or WITH source: substituted, OVER w would read
** a view column w's expression (a syntax error, or another window). */
static void keep_windows(const qsrc *S, int a, int b, int fb,
                         unsigned char *keep) {
  static const char *const win_kw[] = {"WINDOW", NULL};
  static const char *const win_end[] = {"ORDER", "LIMIT", NULL};
  int wa = qnext(S, fb, b, win_kw), we = qnext(S, wa, b, win_end);
  for (int j = a; j < b; j++) {
    if (qkw(S, j, "OVER") && qop(S, j - 1, ")")) {
      if (qop(S, j + 1, "("))
        keep_window_def(S, j + 1, keep);
      else if (qis_name(S, j + 1))
        keep[j + 1] = 1;
    } else if (j > wa && j < we && qkw(S, j, "AS") && qop(S, j + 1, "(") &&
               qis_name(S, j - 1)) {
      keep[j - 1] = 1;
      keep_window_def(S, j + 1, keep);
    }
  }
}

/* Rule 5: subquery [j .. close] (j its "("; not an EXISTS) that SQLite
** evaluates on the serial path, written into s as a placeholder of as many
** NULLs as the subquery has columns, so that the text still compiles where
** a row value reads it ((a, b) IN (SELECT x, y ...) as (a, b) IN (VALUES
** (NULL, NULL)), (a, b) = (SELECT x, y) as (a, b) = (NULL, NULL)): one
** NULL would be SQLite's error about the placeholder, not the serial path.
** One NULL where the subquery does not compile alone (a correlated one:
** the error after the pass).  SQLITE_OK or SQLITE_NOMEM. */
static int null_placeholder(sqlite3 *db, const qsrc *S, int j, int close,
                            sqlite3_str *s) {
  char *sub = sub_text(S, j + 1, close, "SELECT * FROM (", 0);
  if (!sub)
    return SQLITE_NOMEM;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sub, -1, &st, NULL);
  int n = rc == SQLITE_OK && st ? sqlite3_column_count(st) : 1;
  sqlite3_finalize(st);
  sqlite3_free(sub);
  if ((rc & 0xff) == SQLITE_NOMEM)
    return SQLITE_NOMEM;
  if (n <= 1) {
    sqlite3_str_appendall(s, "(NULL) ");
    return SQLITE_OK;
  }
  int in = qkw(S, j - 1, "IN");
  sqlite3_str_appendall(s, in ? "(VALUES (NULL" : "(NULL");
  for (int i = 1; i < n; i++)
    sqlite3_str_appendall(s, ", NULL");
  sqlite3_str_appendall(s, in ? ")) " : ") ");
  return SQLITE_OK;
}

/* Rule 5: subquery [j .. close] (j its "(", EXISTS at j - 1 when ex) as
** the next placeholder of out->subs, written into s.  SQLITE_OK (*why set
** where none keeps its meaning: the serial path); SQLITE_NOMEM. */
static int sub_placeholder(sqlite3 *db, const qsrc *S, int j, int close, int ex,
                           ga_qrw *out, sqlite3_str *s, const char **why) {
  int in = !ex && qkw(S, j - 1, "IN");
  ga_qsubs *q = &out->subs;
  ga_qsub *v = sqlite3_realloc64(q->v, sizeof(*v) * (size_t)(q->n + 1));
  if (!v)
    return SQLITE_NOMEM;
  q->v = v;
  v = &q->v[q->n];
  memset(v, 0, sizeof(*v));
  int k = q->param0 + q->n;
  v->sql = sub_text(S, j + 1, close,
                    ex   ? "SELECT EXISTS ("
                    : in ? "SELECT * FROM ("
                         : "SELECT (",
                    1);
  if (!v->sql)
    return SQLITE_NOMEM;
  q->n++;
  /* worker 0 evaluates it (planner/qsubq.c rule 2): SQLite's functions */
  for (int i = j + 1; i < close && !*why; i++) {
    if (qkw(S, i, "CURRENT_TIME") || qkw(S, i, "CURRENT_DATE") ||
        qkw(S, i, "CURRENT_TIMESTAMP"))
      *why = ga_qsub_fn_why(db, "date");
    else if (S->t[i].type == GA_QT_ID && qop(S, i + 1, "(") &&
             !qop(S, i - 1, ".")) {
      char *name = qname(S, i);
      if (!name)
        return SQLITE_NOMEM;
      *why = ga_qsub_fn_why(db, name);
      sqlite3_free(name);
    }
  }
  if (*why)
    return ex ? (sqlite3_str_appendall(s, "(NULL) "), SQLITE_OK)
              : null_placeholder(db, S, j, close, s);
  if (in) { /* x IN (SELECT c ...): a TEMP table of the workers */
    static const char *const from_kw[] = {"FROM", NULL};
    int a = j + 2 + (qkw(S, j + 2, "DISTINCT") || qkw(S, j + 2, "ALL"));
    int b = qnext(S, a, close, from_kw), e = a;
    while (e < b && qis_name(S, e) && qop(S, e + 1, ".") && e - a < 4)
      e += 2;
    e += e < b && qis_name(S, e) && S->t[e].type != GA_QT_STR;
    if (e < b && qkw(S, e, "AS"))
      e++;
    if (e < b && qis_name(S, e) && e > a)
      e++;
    if (e != b || b == a) {
      *why = "an IN subquery selects an expression, not a column (its "
             "affinity and collation are not known here): SQLite evaluates "
             "the text on the serial path";
    } else {
      char *probe = sub_text(S, j + 1, close, "SELECT * FROM (", 0);
      if (!probe)
        return SQLITE_NOMEM;
      int rc = ga_qsub_in_decl(db, probe, &v->in_decl, why);
      sqlite3_free(probe);
      if (rc == SQLITE_NOMEM)
        return rc;
    }
    if (*why)
      return null_placeholder(db, S, j, close, s);
    sqlite3_str_appendf(s, "(?%d) ", k);
    return SQLITE_OK;
  }
  if (ex) { /* EXISTS: 0 or 1, no affinity */
    sqlite3_str_appendf(s, "?%d ", k);
    return SQLITE_OK;
  }
  char *probe = sub_text(S, j + 1, close, "(", 0);
  if (!probe)
    return SQLITE_NOMEM;
  int rc = ga_qsub_placeholder(db, probe, k, s, &v->cast, why);
  sqlite3_free(probe);
  if (rc == SQLITE_ERROR)
    rc = null_placeholder(db, S, j, close, s);
  return rc;
}

/* ---- the pass ---- */

int ga_qrewrite(sqlite3 *db, const char *sql, ga_qrw *out, char **err) {
  rw W, *w = &W;
  sqlite3_stmt *sto = NULL;
  sqlite3_str *s = NULL;
  char *text = NULL;
  int rc = SQLITE_OK;
  memset(out, 0, sizeof(*out));
  memset(w, 0, sizeof(*w));
  w->db = db;
  w->err = err;
  w->S.z = sql;
  int tr = ga_q_tokenize(sql, &w->S.t, &w->S.n);
  if (tr)
    return tr < 0 ? SQLITE_NOMEM : SQLITE_OK;
  qsrc *S = &w->S;
  while (S->n > 0 && qop(S, S->n - 1, ";"))
    S->n--;
  for (int i = 0; i < S->n; i++)
    if (qop(S, i, ";"))
      goto done; /* the planner says so */
  /* SQLite's own errors first: the planner reports them */
  rc = sqlite3_prepare_v2(db, sql, -1, &sto, NULL);
  if (rc != SQLITE_OK || !sto) {
    rc = (rc & 0xff) == SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
    goto done;
  }
  /* parameters: SQLite's numbers in the text as written (rule 3) */
  {
    int nvar = 0;
    for (int i = 0; i < S->n; i++) {
      ga_qtok *t = &S->t[i];
      if (t->type != GA_QT_VAR)
        continue;
      const char *z = sql + t->off;
      if (z[0] == '?' && t->len == 1) {
        t->var = ++nvar;
      } else if (z[0] == '?') {
        t->var = atoi(z + 1);
      } else {
        char *name = sqlite3_mprintf("%.*s", t->len, z);
        if (!name) {
          rc = SQLITE_NOMEM;
          goto done;
        }
        t->var = sqlite3_bind_parameter_index(sto, name);
        sqlite3_free(name);
      }
      if (t->var > nvar)
        nvar = t->var;
    }
  }
  /* WITH name [(cols)] AS [NOT] [MATERIALIZED] (body) */
  int o = 0;
  if (qkw(S, 0, "WITH")) {
    if (qkw(S, 1, "RECURSIVE")) {
      rc = fail(err,
                "gpu_query: WITH RECURSIVE is not supported (one "
                "non-recursive common table expression, read by FROM)%s%s",
                NULL, NULL);
      goto done;
    }
    int i = 1;
    if (!qis_name(S, i))
      goto done;
    if (!(w->src_name = qname(S, i))) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    i++;
    if (qop(S, i, "("))
      i = qclose(S, i) + 1;
    if (!qkw(S, i, "AS"))
      goto done;
    i++;
    if (qkw(S, i, "NOT"))
      i++;
    if (qkw(S, i, "MATERIALIZED"))
      i++;
    if (!qop(S, i, "("))
      goto done;
    int close = qclose(S, i);
    w->ba = i + 1;
    w->bb = close;
    o = close + 1;
    if (qop(S, o, ",")) {
      rc = fail(err,
                "gpu_query: WITH holds several common table expressions "
                "(one is supported, read by FROM)%s%s",
                NULL, NULL);
      goto done;
    }
    w->cte_b = o;
    w->temp_view = 2;
  }
  if (!qkw(S, o, "SELECT"))
    goto done;
  static const char *const from_kw[] = {"FROM", NULL};
  int from = qnext(S, o + 1, S->n, from_kw);
  if (from >= S->n)
    goto done;
  int fa = from + 1, fb = qnext(S, fa, S->n, after_from);
  for (int i = fa; i < fb; i++)
    if (qop(S, i, "(") || qop(S, i, ",") || qkw(S, i, "JOIN"))
      goto done; /* the planner's error */
  if (!qis_name(S, fa))
    goto done;
  int i = fa + 1, qualified = 0;
  if (qop(S, i, ".") && qis_name(S, i + 1))
    i += 2, qualified = 1;
  int name_tok = i - 1;
  char *alias = NULL;
  if (qkw(S, i, "AS"))
    i++;
  if (i < fb && qis_name(S, i) && !qkw(S, i, "INDEXED") && !qkw(S, i, "NOT"))
    alias = qname(S, i);
  else
    alias = qname(S, name_tok);
  if (!alias) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  /* the subqueries (outside FROM) */
  int nsub = 0;
  for (int k = o + 1; k < S->n; k++)
    nsub += qkw(S, k, "SELECT");
  /* which source */
  int source = 0;
  if (w->temp_view == 2) {
    if (qualified || !qname_is(S, name_tok, w->src_name)) {
      rc = fail(err,
                "gpu_query: the common table expression %s must be the "
                "table FROM reads%s",
                w->src_name, NULL);
      goto done2;
    }
    w->B = *S;
    source = 1;
    for (int k = o + 1; k < S->n; k++)
      if (k != name_tok && qname_is(S, k, w->src_name) &&
          (qkw(S, k - 1, "FROM") || qkw(S, k - 1, "JOIN"))) {
        rc = fail(err,
                  "gpu_query: the common table expression %s is read more "
                  "than once (a subquery reads it too): only FROM may read "
                  "it%s",
                  w->src_name, NULL);
        goto done2;
      }
  } else {
    char *arg = sqlite3_mprintf(
        "%.*s", S->t[name_tok].off + S->t[name_tok].len - S->t[fa].off,
        sql + S->t[fa].off);
    ga_target vt;
    char *verr = NULL;
    if (!arg) {
      rc = SQLITE_NOMEM;
      goto done2;
    }
    int vr = ga_target_resolve(db, arg, &vt, &verr);
    sqlite3_free(arg);
    sqlite3_free(verr);
    if (vr == SQLITE_NOMEM) {
      rc = vr;
      goto done2;
    }
    if (vr == SQLITE_OK && !strcmp(vt.type, "view")) {
      sqlite3_stmt *vs = NULL;
      char *q = sqlite3_mprintf("SELECT sql FROM \"%w\".sqlite_schema WHERE "
                                "type = 'view' AND name = ?1",
                                vt.schema);
      int nomem = !q, found = 0;
      if (q &&
          (sqlite3_prepare_v2(db, q, -1, &vs, NULL) & 0xff) == SQLITE_NOMEM)
        nomem = 1;
      if (vs) {
        sqlite3_bind_text(vs, 1, vt.table, -1, SQLITE_STATIC);
        if (sqlite3_step(vs) == SQLITE_ROW && sqlite3_column_text(vs, 0)) {
          found = 1;
          w->bz = sqlite3_mprintf("%s", sqlite3_column_text(vs, 0));
        }
      }
      sqlite3_finalize(vs);
      sqlite3_free(q);
      w->src_name = sqlite3_mprintf("%s", vt.table);
      w->vschema = sqlite3_mprintf("%s", vt.schema);
      w->temp_view = !sqlite3_stricmp(vt.schema, "temp");
      source = 1;
      if (nomem || (found && !w->bz) || !w->src_name || !w->vschema)
        rc = SQLITE_NOMEM;
      else if (!found) /* an authorizer that denies reading the schema */
        rc = fail(err, "gpu_query: cannot read the definition of the view %s%s",
                  w->src_name, NULL);
    }
    if (vr == SQLITE_OK)
      ga_target_free(&vt);
    if (rc != SQLITE_OK)
      goto done2;
    if (source) {
      /* CREATE [TEMP] VIEW [IF NOT EXISTS] [s.]name [(cols)] AS body */
      w->B.z = w->bz;
      tr = ga_q_tokenize(w->bz, &w->B.t, &w->B.n);
      if (tr) {
        rc = tr < 0 ? SQLITE_NOMEM
                    : fail(err, "gpu_query: cannot read the view %s%s",
                           w->src_name, NULL);
        goto done2;
      }
      int j = 0;
      while (j < w->B.n && !qkw(&w->B, j, "AS"))
        j += qop(&w->B, j, "(") ? qclose(&w->B, j) - j + 1 : 1;
      w->ba = j + 1;
      w->bb = w->B.n;
      while (w->bb > w->ba && qop(&w->B, w->bb - 1, ";"))
        w->bb--;
    }
  }
  if (!source && !nsub)
    goto done2;
  if (source) {
    char *q = w->temp_view == 2 ? sqlite3_mprintf("%.*s SELECT * FROM \"%w\"",
                                                  S->t[o].off, sql, w->src_name)
                                : sqlite3_mprintf("SELECT * FROM \"%w\".\"%w\"",
                                                  w->vschema, w->src_name);
    if (!q) {
      rc = SQLITE_NOMEM;
      goto done2;
    }
    rc = source_cols(w, q);
    sqlite3_free(q);
    if (rc == SQLITE_OK)
      rc = read_body(w);
    if (rc != SQLITE_OK)
      goto done2;
  }
  /* rule 3: the outer text.  Which name tokens stay: an item's alias as
  ** written, a whole ORDER BY term that is an item's alias. */
  int ncol_o = sqlite3_column_count(sto);
  unsigned char *keep = sqlite3_malloc64((size_t)S->n + 1);
  if (!keep) {
    rc = SQLITE_NOMEM;
    goto done2;
  }
  memset(keep, 0, (size_t)S->n + 1);
  {
    int a = o + 1 + (qkw(S, o + 1, "DISTINCT") || qkw(S, o + 1, "ALL"));
    int depth = 0, e0 = a, k = 0;
    for (int j = a; j <= from; j++) {
      if (j < from && qop(S, j, "("))
        depth++;
      else if (j < from && qop(S, j, ")"))
        depth--;
      if (!(j == from || (depth == 0 && qop(S, j, ","))))
        continue;
      int ea = e0, eb = j;
      e0 = j + 1;
      const char *cn = k < ncol_o ? sqlite3_column_name(sto, k) : NULL;
      k++;
      if (cn && eb - ea >= 2 && qis_name(S, eb - 1) && !qop(S, eb - 2, ".") &&
          !qkw(S, eb - 2, "COLLATE") && qname_is(S, eb - 1, cn))
        keep[eb - 1] = 1;
    }
    static const char *const order_kw[] = {"ORDER", NULL};
    int ob = qnext(S, fb, S->n, order_kw);
    if (ob < S->n && qkw(S, ob + 1, "BY")) {
      static const char *const lim_kw[] = {"LIMIT", NULL};
      int oe = qnext(S, ob + 2, S->n, lim_kw);
      for (int ta = ob + 2; ta < oe;) {
        int te = ta, dd = 0;
        for (; te < oe && (dd || !qop(S, te, ",")); te++)
          dd += qop(S, te, "(") - qop(S, te, ")");
        int xa = ta, xb = te;
        if (xb - xa >= 3 && qkw(S, xb - 2, "NULLS"))
          xb -= 2;
        if (xb - xa >= 2 && (qkw(S, xb - 1, "ASC") || qkw(S, xb - 1, "DESC")))
          xb--;
        for (;;) {
          if (xb - xa >= 3 && qkw(S, xb - 2, "COLLATE"))
            xb -= 2;
          else if (xb - xa >= 3 && qop(S, xa, "(") && qclose(S, xa) == xb - 1)
            xa++, xb--;
          else
            break;
        }
        for (int j = o + 1; xb == xa + 1 && j < from; j++)
          if (keep[j]) {
            char *al = qname(S, j);
            if (!al) {
              rc = SQLITE_NOMEM;
              break;
            }
            keep[xa] |= qname_is(S, xa, al);
            sqlite3_free(al);
          }
        ta = te + 1;
      }
    }
  }
  if (rc == SQLITE_OK && source)
    keep_windows(S, o + 1, S->n, fb, keep);
  if (rc != SQLITE_OK) {
    sqlite3_free(keep);
    goto done2;
  }
  int wk = fb < S->n && qkw(S, fb, "WHERE") ? fb : -1;
  int we = wk >= 0 && source && w->where
               ? qnext(S, wk + 1, S->n, after_from + 1)
               : -1;
  /* rule 5: scalar subqueries and EXISTS as parameters (planner/qsubq.c),
  ** where the text has no IN (SELECT ...) and no view or WITH source */
  const char *sub_why = NULL;
  int par = nsub && !source, in_out = 0;
  int wend = wk >= 0 ? qnext(S, wk + 1, S->n, after_from + 1) : -1;
  for (int j = o + 1; par && j < S->n; j++)
    if (qkw(S, j, "IN") && qop(S, j + 1, "(") && qkw(S, j + 2, "SELECT") &&
        !(j > wk && j < wend))
      par = 0, in_out = 1; /* the post query would read it: no set there */
  out->subs.param0 = sqlite3_bind_parameter_count(sto) + 2;
  s = sqlite3_str_new(NULL);
  for (int j = o; j < S->n; j++) {
    const ga_qtok *t = &S->t[j];
    if (j == we)
      sqlite3_str_appendall(s, ") ");
    if (j == fa && source) {
      /* no alias: the text's qualified names are substituted, and rule 5
      ** of planner/path.c would read a view's name as another table */
      sqlite3_str_appendf(s, "\"%w\".\"%w\" ", w->t.schema, w->t.table);
      if (w->where && wk < 0)
        sqlite3_str_appendf(s, "WHERE (%s) ", w->where);
      j = fb - 1;
      continue;
    }
    if (j == wk && we >= 0) {
      sqlite3_str_appendf(s, "WHERE (%s) AND (", w->where);
      continue;
    }
    if (nsub && qop(S, j, "(") && qkw(S, j + 1, "SELECT")) {
      int close = qclose(S, j);
      if (par && !sub_why)
        rc = sub_placeholder(db, S, j, close, 0, out, s, &sub_why);
      else
        rc = null_placeholder(db, S, j, close, s);
      if (rc != SQLITE_OK)
        break;
      j = close;
      continue;
    }
    if (nsub && qkw(S, j, "EXISTS") && qop(S, j + 1, "(") &&
        qkw(S, j + 2, "SELECT")) {
      int close = qclose(S, j + 1);
      if (par && !sub_why)
        rc = sub_placeholder(db, S, j + 1, close, 1, out, s, &sub_why);
      else
        sqlite3_str_appendall(s, "(NULL) ");
      if (rc != SQLITE_OK)
        break;
      j = close;
      continue;
    }
    if (t->type == GA_QT_VAR) {
      sqlite3_str_appendf(s, "?%d ", t->var);
      continue;
    }
    if (source && qis_name(S, j) && !keep[j] && !qop(S, j - 1, ".") &&
        !qop(S, j + 1, "(") && !qkw(S, j - 1, "AS") &&
        !qkw(S, j - 1, "COLLATE")) {
      /* a chain a.b.c: the last name, qualified by the FROM's name */
      int last = j, n = 0;
      while (qop(S, last + 1, ".") && qis_name(S, last + 2))
        last += 2, n++;
      char *z = qname(S, last);
      if (!z) {
        rc = SQLITE_NOMEM;
        break;
      }
      int c = -1;
      if (n == 0 || qname_is(S, last - 2, alias))
        c = vcol_of(w, z);
      if (c >= 0) {
        sqlite3_str_appendf(s, "%s ", w->cols[c].subst);
        sqlite3_free(z);
        j = last;
        continue;
      }
      int shadow = 0;
      for (int k = 0; n == 0 && k < w->t.ncols; k++)
        shadow |= !sqlite3_stricmp(z, w->t.cols[k]);
      if (n == 0 &&
          (!sqlite3_stricmp(z, "rowid") || !sqlite3_stricmp(z, "oid") ||
           !sqlite3_stricmp(z, "_rowid_")))
        shadow = 1;
      /* a keyword spelled like a column (DESC, KEY) is no name here; a
      ** misread one changes the program (rule 4) */
      if (shadow && t->type == GA_QT_ID &&
          sqlite3_keyword_check(z, (int)strlen(z)))
        shadow = 0;
      if (shadow) {
        rc = fail(err,
                  "gpu_query: %s is no column of %s, but a column of its "
                  "table: rename it (an alias, or a string in double quotes, "
                  "of that name would read the table's column)",
                  z, w->src_name);
        sqlite3_free(z);
        break;
      }
      sqlite3_free(z);
    }
    sqlite3_str_appendf(s, "%.*s ", t->len, sql + t->off);
  }
  if (rc == SQLITE_OK && we >= 0 && we == S->n)
    sqlite3_str_appendall(s, ") ");
  sqlite3_free(keep);
  text = sqlite3_str_finish(s);
  s = NULL;
  if (rc != SQLITE_OK)
    goto done2;
  if (!text) {
    rc = SQLITE_NOMEM;
    goto done2;
  }
  if (nsub) { /* rule 5: each must compile alone */
    for (int j = o + 1; j < S->n && rc == SQLITE_OK; j++) {
      if (!(qop(S, j, "(") && qkw(S, j + 1, "SELECT")))
        continue;
      int close = qclose(S, j);
      char *sub = sqlite3_mprintf("%.*s", S->t[close].off - S->t[j + 1].off,
                                  sql + S->t[j + 1].off);
      sqlite3_stmt *ss = NULL;
      if (!sub) {
        rc = SQLITE_NOMEM;
        break;
      }
      int sr = sqlite3_prepare_v2(db, sub, -1, &ss, NULL);
      sqlite3_finalize(ss);
      sqlite3_free(sub);
      if ((sr & 0xff) == SQLITE_NOMEM)
        rc = SQLITE_NOMEM;
      else if (sr != SQLITE_OK)
        rc = fail(err,
                  "gpu_query: a correlated subquery (one that reads the "
                  "outer query's columns) is not supported: rewrite as a "
                  "join or GROUP BY%s%s",
                  NULL, NULL);
      j = close;
    }
    if (rc != SQLITE_OK)
      goto done2;
    if (!par || sub_why) {
      out->serial_why =
          sub_why  ? sub_why
          : source ? "the text holds a subquery and reads a view or WITH "
                     "expression: SQLite evaluates it on the serial path"
          : in_out ? "the text holds an IN (SELECT ...) subquery outside "
                     "WHERE: SQLite evaluates it on the serial path"
                   : "the text holds a subquery: SQLite evaluates it on "
                     "the serial path";
      ga_qsubs_free(&out->subs);
    } else {
      out->partial_why = "the text holds a subquery, whose value the scan "
                         "evaluates in its own snapshot: no partial carries "
                         "it (run gpu_query, or compute the subquery first "
                         "and pass it as a parameter)";
    }
  } else { /* rule 4 */
    int r1 = SQLITE_OK, r2 = SQLITE_OK;
    char *a = prog_sig(db, sql, &r1);
    char *b = a ? prog_sig(db, text, &r2) : NULL;
    if ((r1 & 0xff) == SQLITE_NOMEM || (r2 & 0xff) == SQLITE_NOMEM)
      rc = SQLITE_NOMEM;
    else if (!a || !b || strcmp(a, b))
      out->serial_why = "the view's substitution compiles otherwise than the "
                        "text (an authorizer that does not answer OK, or a "
                        "view column's collation or affinity)";
    sqlite3_free(a);
    sqlite3_free(b);
    if (rc != SQLITE_OK)
      goto done2;
  }
  if ((out->serial_why || out->subs.n) &&
      !(out->serial_sql = contract_text(S))) {
    rc = SQLITE_NOMEM;
    goto done2;
  }
  if (source && w->temp_view != 2)
    out->partial_why = "the text reads a view, which the finishing database "
                       "does not declare: write the view's SELECT as a WITH "
                       "expression in the text";
  out->text = text;
  text = NULL;
done2:
  sqlite3_free(alias);
done:
  if (s)
    sqlite3_free(sqlite3_str_finish(s));
  sqlite3_free(text);
  sqlite3_finalize(sto);
  sqlite3_free(w->S.t);
  sqlite3_free(w->B.t == w->S.t ? NULL : w->B.t);
  sqlite3_free(w->bz);
  sqlite3_free(w->src_name);
  sqlite3_free(w->vschema);
  sqlite3_free(w->where);
  for (int k = 0; w->cols && k < w->ncols; k++) {
    sqlite3_free(w->cols[k].name);
    sqlite3_free(w->cols[k].subst);
  }
  sqlite3_free(w->cols);
  if (w->t.schema || w->t.table || w->t.type)
    ga_target_free(&w->t);
  if (rc != SQLITE_OK)
    ga_qrw_free(out);
  return rc;
}

void ga_qrw_free(ga_qrw *rw) {
  ga_qsubs_free(&rw->subs);
  sqlite3_free(rw->text);
  sqlite3_free(rw->serial_sql);
  memset(rw, 0, sizeof(*rw));
}
