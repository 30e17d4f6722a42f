/*
** qjoin.c — gpu_query's star and snowflake joins (qjoin.h; issue 38, step
** 1).  A FROM clause of several tables is one fact table, whose rows the
** scan cuts into rowid pieces as it cuts one table's, and dimensions
** joined to it.  In this step SQLite evaluates the join itself on every
** worker, over the worker's piece of the fact's rowids, so the join's
** meaning (affinity, collation, NULL keys, duplicate keys, LEFT JOIN) is
** SQLite's by construction; the plan below (fact, dimensions, join keys,
** the order) is explicit so that a later step can build lookup structures
** from it.
**
** Rules:
**   1. The grammar.  FROM t1 [AS a1], t2 ... (the join conditions in
**      WHERE), t1 [INNER | CROSS] JOIN t2 ON e, JOIN ... USING (c, ...),
**      LEFT [OUTER] JOIN t2 ON / USING, in any mix; each item a table of a
**      schema ([schema.]name [[AS] alias] [INDEXED BY i | NOT INDEXED]).
**      Errors, each naming the construct: RIGHT and FULL joins, NATURAL
**      joins (name the columns), a subquery or table-valued function in
**      FROM, a view or virtual table, one name (alias) for two tables, the
**      fact table named twice (a self-join), a fact table that is the right
**      side of a LEFT JOIN, a join condition that is not an equality of two
**      tables (rule 3), a table joined to none nearer the fact (a cross
**      product), and an equality between two tables neither of which is
**      the other's step towards the fact (rule 3).
**   2. The fact table is the one of most rows: sqlite_stat1's count where
**      ANALYZE wrote one, else its rows counted up to 65,536 (a few ms) and
**      past that the span of its rowids (two seeks); in a tie the first
**      written.  The text may name it in a comment anywhere:
**      gpuagg_fact(name), name a table or alias of FROM.
**   3. The shape.  The WHERE clause (for a comma join) and each ON clause
**      are read as AND-ed conditions (parentheses around an AND opened; a
**      top-level OR, which binds looser, makes its whole text one
**      condition, as qdims.c and cache_join.c read it: ga_qt_top_or); one
**      that reads columns of two or more tables must be e1 = e2 (or ==)
**      with each side reading one table, the
**      two different, and one side a column: an edge between those tables.
**      USING (c) is an edge between its table and the leftmost table before
**      it that has c (SQLite's choice).  From the fact, the edges must make
**      a tree: every other table reached (else a cross product), and each
**      edge between a table and its parent (the table through which it was
**      first reached).  A composite key is several edges of one pair.  A
**      condition of one table is a filter, which SQLite applies where it
**      stands.
**   4. Exactness.  The workers run the text's join, restricted to their
**      piece of the fact's rowids, so each worker's rows are the rows that
**      SQLite's join of the text makes from those fact rows; the caller's
**      text and the workers' differ only in the order of the tables, which
**      no inner join's rows depend on (rule 5).  Every table is read in the
**      workers' one snapshot: rule 7 sends a join whose tables are not all
**      in the fact's file to the serial path.
**      planner/qdims.c (issue 38, step 3.1) replaces the workers' join by
**      probes of dimensions built once per call where it keeps the same
**      rows exactly, else says why and keeps these texts.
**   5. The order.  Without LEFT JOIN and USING, the FROM is written again
**      fact first, then the others outwards from it (each after its
**      parent), joined by CROSS JOIN (SQLite keeps that order), with the ON
**      conditions moved into WHERE (an inner join's ON is a WHERE term).
**      Among the tables one step further out, those with a filter (on
**      them or beyond them) come first, so that the lookups that drop fact
**      rows run before the others.
**      Written first with plain JOINs after the fact, which lets SQLite
**      order the dimensions and check its Bloom filters on all of them in
**      the fact's loop (a CROSS JOIN makes each table depend on those
**      before it, and keeps each check in its own loop); query.c keeps that
**      form where SQLite's plan of a piece reads the fact's rowid range
**      first and the serial text's plan has the same loops (join_plan),
**      else the CROSS JOIN form, outwards from the fact (as written, for
**      LEFT JOIN and USING below).
**      The fact then drives the loop, NOT INDEXED: its rows in rowid order,
**      the rowid range of the piece (under likelihood 1.0: SQLite then
**      estimates the fact's rows as the table's and keeps its Bloom
**      filters on the dimensions, planner.h's GA_QJ_RANGE), and each
**      dimension looked up by its key (the contract's order for a
*representative: the fact's rowid,
**      then each dimension's).  With LEFT JOIN or USING (whose meaning
**      depends on the order written: USING's collation is its left
**      table's), the FROM is kept as written (each inner join a JOIN, or a
**      CROSS JOIN where the plain form fails join_plan's test), and the
**      fact must be written first (else rule 7).
**   6. Names.  The columns of every table are one list (qjoin.h).  A
**      qualified name (q.c, schema.q.c) is q's column or rowid; a bare name
**      is the column of the first table written that has it (SQLite has
**      refused an ambiguous one, and a USING column is its left table's);
**      a bare rowid name that no column takes is the rowid of the one
**      table that has a rowid (the others WITHOUT ROWID), the fact's or a
**      dimension's, as SQLite's lookupName resolves it; where several
**      tables have one, SQLite has refused it (no such column).
**   7. The serial path (q->serial_why), with the reason: a table of
**      another schema than the fact's (TEMP, an ATTACHed file: not in the
**      workers' snapshot), a dimension's column of a collation other than
**      BINARY, NOCASE and RTRIM, a fact not written first where rule 5
**      keeps the order.
**   8. Partials (ext/query/partial_fns.c): a file's partial is the join
**      within that file (its own dimensions), by the same workers' texts.
**      Each file, and the database that finishes the merged partial, would
**      choose the fact by its own rows (an empty finishing database: the
**      first written), so gpu_query_partial takes a join only where the
**      text names the fact (rule 2's hint); the finishing database must
**      declare every table of the join, which the partial carries
**      (engine/scan/qpartial.h rule 7; gpu_query_partial_info's "create"
**      and "tables", from which gpuagg.dask declares them).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "qjoin.h"

typedef struct jp {
  sqlite3 *db;
  const char *z;
  const ga_qtok *t;
  int n;
  char **err;
  ga_qjoin *j;
} jp;

static int kw(const jp *p, int i, const char *w) {
  return i >= 0 && i < p->n && p->t[i].type == GA_QT_ID &&
         (int)strlen(w) == p->t[i].len &&
         !sqlite3_strnicmp(p->z + p->t[i].off, w, p->t[i].len);
}

static int op(const jp *p, int i, const char *w) {
  return ga_qt_op(p->z, p->t, p->n, i, w);
}

static int is_name(const jp *p, int i) {
  return i >= 0 && i < p->n &&
         (p->t[i].type == GA_QT_ID || p->t[i].type == GA_QT_QID);
}

/* A name token, dequoted (sqlite3_malloc'd). */
static char *tname(const char *z, const ga_qtok *t) { return ga_qt_name(z, t); }

static int name_is(const char *z, const ga_qtok *t, const char *w) {
  char *s = tname(z, t);
  int r = s && !sqlite3_stricmp(s, w);
  sqlite3_free(s);
  return r;
}

static int fail(jp *p, const char *fmt, const char *a, const char *b) {
  if (!*p->err)
    *p->err = sqlite3_mprintf(fmt, a ? a : "", b ? b : "");
  return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* The words that start a join operator or a clause of an item. */
static int join_word(const jp *p, int i) {
  static const char *const w[] = {"JOIN",  "INNER", "CROSS",   "LEFT",
                                  "RIGHT", "FULL",  "NATURAL", NULL};
  for (int k = 0; w[k]; k++)
    if (kw(p, i, w[k]) && !op(p, i + 1, "("))
      return 1;
  return 0;
}

static int item_word(const jp *p, int i) {
  return join_word(p, i) || kw(p, i, "ON") || kw(p, i, "USING") ||
         kw(p, i, "INDEXED") || kw(p, i, "NOT") || kw(p, i, "OUTER");
}

int ga_qj_is_join(const char *z, const ga_qtok *t, int a, int b) {
  jp P = {.z = z, .t = t, .n = b};
  int depth = 0;
  for (int i = a; i < b; i++) {
    depth += op(&P, i, "(") - op(&P, i, ")");
    if (depth == 0 && (op(&P, i, ",") || kw(&P, i, "JOIN")))
      return 1;
  }
  return 0;
}

/* ---- rule 6: columns ---- */

static int tab_of_qual(const ga_qjoin *j, const char *z, const ga_qtok *t) {
  for (int k = 0; k < j->n; k++)
    if (name_is(z, t, j->v[k].qual))
      return k;
  return -1;
}

static int is_rowid_name(const char *s) {
  return !sqlite3_stricmp(s, "rowid") || !sqlite3_stricmp(s, "oid") ||
         !sqlite3_stricmp(s, "_rowid_");
}

/* Index in the list of table k's column c (c -1: its rowid), or -1. */
static int list_index(const ga_qjoin *j, int k, int c) {
  for (int x = 0; x < j->ncols; x++)
    if (j->ctab[x] == k && j->ccol[x] == c)
      return x;
  return -1;
}

int ga_qj_col(const ga_qjoin *j, const char *z, const ga_qtok *t, int n, int i,
              int *fact_rowid) {
  jp P = {.z = z, .t = t, .n = n};
  jp *p = &P;
  *fact_rowid = 0;
  if (!is_name(p, i) || op(p, i + 1, "(") || op(p, i + 1, "."))
    return -1;
  char *s = tname(z, &t[i]);
  if (!s)
    return -1;
  int r = -1;
  if (op(p, i - 1, ".") && is_name(p, i - 2)) {
    int k = tab_of_qual(j, z, &t[i - 2]);
    if (k >= 0) {
      const ga_target *tt = &j->v[k].t;
      for (int c = 0; c < tt->ncols && r < 0; c++)
        if (!sqlite3_stricmp(s, tt->cols[c]))
          r = list_index(j, k, c);
      if (r < 0 && tt->rowid && is_rowid_name(s)) {
        if (k == j->fact)
          *fact_rowid = 1;
        else
          r = list_index(j, k, -1);
      }
    }
  } else if (!op(p, i - 1, ".")) {
    for (int k = 0; k < j->n && r < 0; k++) {
      const ga_target *tt = &j->v[k].t;
      for (int c = 0; c < tt->ncols && r < 0; c++)
        if (!sqlite3_stricmp(s, tt->cols[c]))
          r = list_index(j, k, c);
    }
    /* SQLite's lookupName: a bare rowid name that no column takes is the
    ** rowid of the one table that has one (cntTab == 1), fact or not */
    int nrowid = 0, kr = -1;
    for (int k = 0; k < j->n && r < 0 && is_rowid_name(s); k++)
      if (!j->v[k].t.without_rowid)
        nrowid++, kr = k;
    if (r < 0 && nrowid == 1) {
      if (kr == j->fact)
        *fact_rowid = 1;
      else
        r = list_index(j, kr, -1);
    }
  }
  sqlite3_free(s);
  return r;
}

const char *ga_qj_colname(const ga_qjoin *j, int c) {
  const ga_qj_tab *x = &j->v[j->ctab[c]];
  return j->ccol[c] < 0 ? x->t.rowid : x->t.cols[j->ccol[c]];
}

const ga_qj_tab *ga_qj_coltab(const ga_qjoin *j, int c) {
  return &j->v[j->ctab[c]];
}

/* Table of column token i (rule 6), -1 none: the fact's rowid counts. */
static int tab_at(jp *p, int i) {
  int fr = 0;
  int c = ga_qj_col(p->j, p->z, p->t, p->n, i, &fr);
  return fr ? p->j->fact : c >= 0 ? p->j->ctab[c] : -1;
}

/* ---- reading FROM (rule 1) ---- */

static int close_of(const jp *p, int i) {
  return ga_qt_close(p->z, p->t, p->n, i);
}

/* The end of an ON expression starting at a: the next join operator at
** depth 0, or b. */
static int on_end(const jp *p, int a, int b) {
  int depth = 0;
  for (int i = a; i < b; i++) {
    depth += op(p, i, "(") - op(p, i, ")");
    if (depth == 0 && (op(p, i, ",") || join_word(p, i)))
      return i;
  }
  return b;
}

static int read_items(jp *p, int fa, int fb) {
  ga_qjoin *j = p->j;
  int cap = 2;
  for (int i = fa; i < fb; i++)
    cap += op(p, i, ",") || kw(p, i, "JOIN");
  j->v = sqlite3_malloc64(sizeof(ga_qj_tab) * (size_t)cap);
  if (!j->v)
    return SQLITE_NOMEM;
  memset(j->v, 0, sizeof(ga_qj_tab) * (size_t)cap);
  int i = fa, kind = GA_QJ_FIRST;
  while (i < fb) {
    ga_qj_tab *x = &j->v[j->n];
    x->op = kind;
    x->idx_a = x->on_a = x->on_b = x->using_a = x->using_b = -1;
    x->parent = -1;
    x->ipk = -1;
    if (op(p, i, "(") || !is_name(p, i))
      return fail(p,
                  "gpu_query: FROM names a subquery or a table-valued "
                  "function (a join names tables: make it a table, or run "
                  "the query on SQLite)%s%s",
                  NULL, NULL);
    x->a = x->name_a = i;
    i++;
    if (op(p, i, ".") && is_name(p, i + 1))
      i += 2;
    x->name_b = i;
    if (op(p, i, "("))
      return fail(p,
                  "gpu_query: FROM names a subquery or a table-valued "
                  "function (a join names tables: make it a table, or run "
                  "the query on SQLite)%s%s",
                  NULL, NULL);
    int alias = -1;
    if (kw(p, i, "AS") && is_name(p, i + 1))
      alias = i + 1, i += 2;
    else if (i < fb && is_name(p, i) && !item_word(p, i))
      alias = i++;
    x->qual = tname(p->z, &p->t[alias >= 0 ? alias : x->name_b - 1]);
    if (!x->qual)
      return SQLITE_NOMEM;
    j->n++;
    if (kw(p, i, "INDEXED") && kw(p, i + 1, "BY") && is_name(p, i + 2))
      x->idx_a = i, i += 3;
    else if (kw(p, i, "NOT") && kw(p, i + 1, "INDEXED"))
      x->idx_a = i, i += 2;
    x->b = i;
    if (kw(p, i, "ON")) {
      x->on_a = i + 1;
      x->on_b = i = on_end(p, i + 1, fb);
    } else if (kw(p, i, "USING") && op(p, i + 1, "(")) {
      x->using_a = i + 2;
      x->using_b = close_of(p, i + 1);
      i = x->using_b + 1;
    }
    if (i >= fb)
      break;
    /* the operator */
    if (op(p, i, ",")) {
      kind = GA_QJ_COMMA;
      i++;
      continue;
    }
    if (kw(p, i, "NATURAL"))
      return fail(p,
                  "gpu_query: NATURAL joins are not supported: name the "
                  "join columns (JOIN d USING (k), or JOIN d ON f.k = "
                  "d.k)%s%s",
                  NULL, NULL);
    if (kw(p, i, "RIGHT") || kw(p, i, "FULL"))
      return fail(p,
                  "gpu_query: RIGHT and FULL joins are not supported "
                  "(gpu_query scans the fact table's rows: write the fact "
                  "table first and LEFT JOIN its dimensions)%s%s",
                  NULL, NULL);
    if (kw(p, i, "LEFT")) {
      kind = GA_QJ_LEFT;
      i += 1 + kw(p, i + 1, "OUTER");
    } else if (kw(p, i, "INNER")) {
      kind = GA_QJ_INNER;
      i++;
    } else if (kw(p, i, "CROSS")) {
      kind = GA_QJ_CROSS;
      i++;
    } else {
      kind = GA_QJ_INNER;
    }
    if (!kw(p, i, "JOIN"))
      return fail(p, "gpu_query: cannot read the join in FROM%s%s", NULL, NULL);
    i++;
    if (i >= fb)
      return fail(p, "gpu_query: cannot read the join in FROM%s%s", NULL, NULL);
  }
  return SQLITE_OK;
}

/* Rule 2's rows of table x: sqlite_stat1's; else counted up to the cap,
** and past it the larger of the cap and the rowid span. */
#define GA_QJ_COUNT_CAP 65536
static int64_t q_int(sqlite3 *db, const char *sql, int64_t def, int *got) {
  sqlite3_stmt *st = NULL;
  int64_t v = def;
  if (got)
    *got = 0;
  if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) != SQLITE_NULL) {
    v = sqlite3_column_int64(st, 0);
    if (got)
      *got = 1;
  }
  sqlite3_finalize(st);
  return v;
}

static int count_rows(jp *p, ga_qj_tab *x) {
  char *sql = sqlite3_mprintf(
      "SELECT CAST(stat AS INTEGER) FROM \"%w\".sqlite_stat1 WHERE tbl = %Q "
      "ORDER BY idx IS NOT NULL LIMIT 1",
      x->t.schema, x->t.table);
  if (!sql)
    return SQLITE_NOMEM;
  int got = 0;
  x->rows = q_int(p->db, sql, 0, &got);
  sqlite3_free(sql);
  x->stat = got;
  if (got || !x->t.rowid)
    return SQLITE_OK;
  /* its rows, counted up to GA_QJ_COUNT_CAP (a few ms): a dimension keyed
  ** by dates (yyyymmdd) spans more rowids than it has rows */
  sql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM \"%w\".\"%w\" "
                        "LIMIT %d)",
                        x->t.schema, x->t.table, GA_QJ_COUNT_CAP + 1);
  if (!sql)
    return SQLITE_NOMEM;
  x->rows = q_int(p->db, sql, 0, NULL);
  sqlite3_free(sql);
  if (x->rows <= GA_QJ_COUNT_CAP)
    return SQLITE_OK;
  sql = sqlite3_mprintf(
      "SELECT (SELECT %s FROM \"%w\".\"%w\" ORDER BY %s DESC LIMIT 1) - "
      "(SELECT %s FROM \"%w\".\"%w\" ORDER BY %s LIMIT 1) + 1",
      x->t.rowid, x->t.schema, x->t.table, x->t.rowid, x->t.rowid, x->t.schema,
      x->t.table, x->t.rowid);
  if (!sql)
    return SQLITE_NOMEM;
  int64_t span = q_int(p->db, sql, 0, NULL);
  sqlite3_free(sql);
  if (span < 0)
    span = INT64_MAX; /* the span overflowed */
  if (span > x->rows)
    x->rows = span;
  return SQLITE_OK;
}

/* Rule 2's hint: gpuagg_fact(name) in a comment (between tokens). */
static int find_hint(jp *p, int *fact) {
  const char *z = p->z;
  size_t len = strlen(z);
  for (int i = 0; i <= p->n; i++) {
    size_t a = i ? (size_t)(p->t[i - 1].off + p->t[i - 1].len) : 0;
    size_t b = i < p->n ? (size_t)p->t[i].off : len;
    for (size_t k = a; k + 12 <= b; k++) {
      if (sqlite3_strnicmp(z + k, "gpuagg_fact(", 12))
        continue;
      size_t s = k + 12, e = s;
      while (e < b && z[e] != ')')
        e++;
      char *name = sqlite3_mprintf("%.*s", (int)(e - s), z + s);
      if (!name)
        return SQLITE_NOMEM;
      int found = -1;
      for (int t = 0; t < p->j->n && found < 0; t++)
        if (!sqlite3_stricmp(name, p->j->v[t].qual) ||
            !sqlite3_stricmp(name, p->j->v[t].t.table))
          found = t;
      if (found < 0) {
        int rc = fail(p,
                      "gpu_query: the hint gpuagg_fact(%s) names no table "
                      "of FROM (name a table or its alias)%s",
                      name, NULL);
        sqlite3_free(name);
        return rc;
      }
      sqlite3_free(name);
      *fact = found;
      p->j->hinted = 1;
      return SQLITE_OK;
    }
  }
  return SQLITE_OK;
}

/* ---- rule 3: the conditions ---- */

typedef struct edge {
  int x, y;   /* tables */
  int a, b;   /* the condition's tokens, for messages; a < 0: USING */
  int using_; /* the column, for USING: its token */
} edge;

typedef struct edges {
  edge *v;
  int n, cap;
} edges;

static int add_edge(edges *E, int x, int y, int a, int b) {
  if (E->n == E->cap) {
    int cap = E->cap ? 2 * E->cap : 16;
    edge *nv = sqlite3_realloc64(E->v, sizeof(edge) * (size_t)cap);
    if (!nv)
      return SQLITE_NOMEM;
    E->v = nv;
    E->cap = cap;
  }
  E->v[E->n].x = x;
  E->v[E->n].y = y;
  E->v[E->n].a = a;
  E->v[E->n].b = b;
  E->n++;
  return SQLITE_OK;
}

/* The set of tables [a, b) reads, as a bit mask (at most 63 tables). */
static uint64_t tables_of(jp *p, int a, int b) {
  uint64_t m = 0;
  for (int i = a; i < b; i++) {
    int k = tab_at(p, i);
    if (k >= 0 && k < 64)
      m |= (uint64_t)1 << k;
  }
  return m;
}

static int one_table(uint64_t m) { return m && !(m & (m - 1)); }

static int bit_index(uint64_t m) {
  int k = 0;
  while (!(m & 1))
    m >>= 1, k++;
  return k;
}

/* A bare column: [[schema .] q .] name, one token of a column. */
static int bare_col(jp *p, int a, int b) {
  while (b - a >= 3 && op(p, a, "(") && close_of(p, a) == b - 1)
    a++, b--;
  if (b - a != 1 && b - a != 3 && b - a != 5)
    return 0;
  int fr = 0;
  return ga_qj_col(p->j, p->z, p->t, p->n, b - 1, &fr) >= 0 || fr;
}

static int cond_text_fail(jp *p, const char *fmt, int a, int b) {
  char *c =
      sqlite3_mprintf("%.*s", p->t[b - 1].off + p->t[b - 1].len - p->t[a].off,
                      p->z + p->t[a].off);
  if (!c)
    return SQLITE_NOMEM;
  int rc = fail(p, fmt, c, NULL);
  sqlite3_free(c);
  return rc;
}

/* One AND-ed condition [a, b). */
static int read_cond(jp *p, edges *E, int a, int b) {
  uint64_t m = tables_of(p, a, b);
  if (one_table(m))
    p->j->v[bit_index(m)].filtered = 1;
  if (!m || one_table(m))
    return SQLITE_OK; /* a filter */
  int eq = -1, depth = 0, neq = 0;
  for (int i = a; i < b; i++) {
    depth += op(p, i, "(") - op(p, i, ")");
    if (depth == 0 && (op(p, i, "=") || op(p, i, "=="))) {
      eq = i;
      neq++;
    }
  }
  uint64_t l = eq > a ? tables_of(p, a, eq) : 0;
  uint64_t r = eq > a ? tables_of(p, eq + 1, b) : 0;
  if (neq != 1 || !one_table(l) || !one_table(r) || l == r ||
      (!bare_col(p, a, eq) && !bare_col(p, eq + 1, b)))
    return cond_text_fail(p,
                          "gpu_query: the join condition %s is not an "
                          "equality between two tables (joins that are not "
                          "equalities are not supported: gpu_query joins by "
                          "f.k = d.k)%s",
                          a, b);
  return add_edge(E, bit_index(l), bit_index(r), a, b);
}

/* The AND-ed conditions of [a, b) (rule 3): parentheses around the whole
** opened; a top-level OR makes the whole one condition (AND binds tighter:
** `f.k = d.k AND d.x = 1 OR d.y = 2` is one disjunction, not an edge and a
** filter); BETWEEN's AND and a CASE's split nothing; each part read again
** (its own parentheses opened). */
static int read_conds(jp *p, edges *E, int a, int b) {
  while (b - a >= 2 && op(p, a, "(") && close_of(p, a) == b - 1)
    a++, b--;
  if (a >= b)
    return SQLITE_OK;
  if (ga_qt_top_or(p->z, p->t, p->n, a, b))
    return read_cond(p, E, a, b);
  int depth = 0, between = 0, s = a, rc = SQLITE_OK, parts = 0;
  for (int i = a; i <= b && rc == SQLITE_OK; i++) {
    if (i < b) {
      if (op(p, i, "(") || kw(p, i, "CASE"))
        depth++;
      else if (op(p, i, ")") || kw(p, i, "END"))
        depth--;
      if (depth == 0 && kw(p, i, "BETWEEN"))
        between++;
    }
    if (i == b || (depth == 0 && kw(p, i, "AND"))) {
      if (i < b && between) {
        between--;
        continue;
      }
      if (i == b && !parts) /* no AND: one condition */
        rc = read_cond(p, E, s, i);
      else if (i > s)
        rc = read_conds(p, E, s, i);
      parts++;
      s = i + 1;
    }
  }
  return rc;
}

/* USING (c, ...) of table k: edges to the leftmost earlier table with c. */
static int read_using(jp *p, edges *E, int k) {
  ga_qj_tab *x = &p->j->v[k];
  for (int i = x->using_a; i < x->using_b; i++) {
    if (!is_name(p, i))
      continue;
    char *c = tname(p->z, &p->t[i]);
    if (!c)
      return SQLITE_NOMEM;
    int left = -1;
    for (int y = 0; y < k && left < 0; y++)
      for (int q = 0; q < p->j->v[y].t.ncols && left < 0; q++)
        if (!sqlite3_stricmp(c, p->j->v[y].t.cols[q]))
          left = y;
    sqlite3_free(c);
    if (left >= 0 && add_edge(E, left, k, -1, i))
      return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* ---- rule 7's collations ---- */

static int builtin(const char *c) {
  return !c || !sqlite3_stricmp(c, "BINARY") || !sqlite3_stricmp(c, "NOCASE") ||
         !sqlite3_stricmp(c, "RTRIM");
}

static void check_colls(jp *p) {
  ga_qjoin *j = p->j;
  for (int k = 0; k < j->n && !j->serial_why; k++) {
    if (k == j->fact) /* planner/path.c rule 7 reads the fact's */
      continue;
    const ga_target *tt = &j->v[k].t;
    for (int c = 0; c < tt->ncols && !j->serial_why; c++) {
      int named = 0;
      for (int i = 0; i < p->n && !named; i++)
        named = is_name(p, i) && name_is(p->z, &p->t[i], tt->cols[c]);
      const char *type = NULL, *coll = NULL;
      if (!named)
        continue;
      if (ga_column_decl(p->db, tt->schema, tt->table, tt->cols[c], &type,
                         &coll) != SQLITE_OK)
        j->serial_why = "a dimension's collations cannot be read (SQLite "
                        "built without column metadata)";
      else if (!builtin(coll))
        j->serial_why = "a dimension's column has a collation other than "
                        "BINARY, NOCASE and RTRIM";
    }
  }
}

/* ---- last_scan's "join" ---- */

static void json_str(sqlite3_str *s, const char *z) {
  sqlite3_str_appendchar(s, 1, '"');
  for (; z && *z; z++) {
    unsigned char c = (unsigned char)*z;
    if (c == '"' || c == '\\')
      sqlite3_str_appendf(s, "\\%c", c);
    else if (c < 0x20)
      sqlite3_str_appendf(s, "\\u%04x", c);
    else
      sqlite3_str_appendchar(s, 1, (char)c);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

char *ga_qj_json(const ga_qjoin *j) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  const ga_qj_tab *f = &j->v[j->fact];
  sqlite3_str_appendall(s, "{\"fact\":");
  json_str(s, f->t.table);
  sqlite3_str_appendall(s, ",\"as\":");
  json_str(s, f->qual);
  sqlite3_str_appendf(s, ",\"rows\":%lld,\"chosen_by\":\"%s\",\"dims\":[",
                      (long long)f->rows,
                      j->hinted ? "hint"
                      : f->stat ? "sqlite_stat1"
                                : "count");
  for (int o = 1; o < j->n; o++) {
    const ga_qj_tab *x = &j->v[j->order[o]];
    sqlite3_str_appendall(s, o > 1 ? ",{\"table\":" : "{\"table\":");
    json_str(s, x->t.table);
    sqlite3_str_appendall(s, ",\"as\":");
    json_str(s, x->qual);
    sqlite3_str_appendall(s, ",\"joins\":");
    json_str(s, j->v[x->parent].qual);
    sqlite3_str_appendf(s, ",\"keys\":%d,\"left\":%s,\"rows\":%lld}", x->nkeys,
                        x->op == GA_QJ_LEFT ? "true" : "false",
                        (long long)x->rows);
  }
  sqlite3_str_appendf(s, "],\"order\":\"%s\",\"how\":\"sqlite-per-worker\"",
                      !j->reorder ? "as written"
                      : j->cross  ? "fact first, dimensions outwards"
                                  : "fact first, dimensions in SQLite's order");
  return sqlite3_str_finish(s);
}

/* ---- the whole ---- */

int ga_qj_read(sqlite3 *db, const char *z, const ga_qtok *t, int n, int fa,
               int fb, int wa, int wb, ga_qjoin *j, char **err) {
  jp P = {.db = db, .z = z, .t = t, .n = n, .err = err, .j = j};
  jp *p = &P;
  edges E = {0};
  int rc;
  memset(j, 0, sizeof(*j));
  if ((rc = read_items(p, fa, fb)) != SQLITE_OK)
    goto done;
  if (j->n > 63) {
    rc = fail(p, "gpu_query: a join of more than 63 tables%s%s", NULL, NULL);
    goto done;
  }
  for (int k = 0; k < j->n; k++) {
    ga_qj_tab *x = &j->v[k];
    char *arg = sqlite3_mprintf(
        "%.*s", t[x->name_b - 1].off + t[x->name_b - 1].len - t[x->name_a].off,
        z + t[x->name_a].off);
    if (!arg) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    rc = ga_target_resolve(db, arg, &x->t, err);
    sqlite3_free(arg);
    if (rc != SQLITE_OK) {
      if (*err && !strncmp(*err, "gpu_aggregate: ", 15)) {
        char *e = sqlite3_mprintf("gpu_query: %s", *err + 15);
        sqlite3_free(*err);
        *err = e;
      }
      goto done;
    }
    if (strcmp(x->t.type, "table") && strcmp(x->t.type, "shadow")) {
      rc = fail(p,
                "gpu_query: %s is a %s (a join names tables; a view's "
                "rows: run the query on SQLite)",
                x->t.table, x->t.type);
      goto done;
    }
    for (int y = 0; y < k; y++)
      if (!sqlite3_stricmp(j->v[y].qual, x->qual)) {
        rc = fail(p,
                  "gpu_query: the name %s stands for two tables of FROM "
                  "(give each an alias)%s",
                  x->qual, NULL);
        goto done;
      }
    if ((rc = count_rows(p, x)) != SQLITE_OK)
      goto done;
  }
  /* rule 2 */
  j->fact = -1;
  if ((rc = find_hint(p, &j->fact)) != SQLITE_OK)
    goto done;
  if (j->fact < 0) {
    j->fact = 0;
    for (int k = 1; k < j->n; k++)
      if (j->v[k].rows > j->v[j->fact].rows)
        j->fact = k;
  }
  ga_qj_tab *f = &j->v[j->fact];
  for (int k = 0; k < j->n; k++)
    if (k != j->fact && !strcmp(j->v[k].t.schema, f->t.schema) &&
        !strcmp(j->v[k].t.table, f->t.table)) {
      rc = fail(p,
                "gpu_query: the fact table %s is named twice (self-joins "
                "of the fact table are not supported: run the query on "
                "SQLite)%s",
                f->t.table, NULL);
      goto done;
    }
  if (f->op == GA_QJ_LEFT) {
    rc = fail(p,
              "gpu_query: the fact table %s is the right side of a LEFT "
              "JOIN (gpu_query scans the fact's rows: write FROM %s LEFT "
              "JOIN d ...)",
              f->t.table, f->t.table);
    goto done;
  }
  /* rule 6's list */
  int nc = 0;
  for (int k = 0; k < j->n; k++)
    nc += j->v[k].t.ncols + 1;
  j->ctab = sqlite3_malloc64(sizeof(int) * (size_t)(nc + 1));
  j->ccol = sqlite3_malloc64(sizeof(int) * (size_t)(nc + 1));
  j->order = sqlite3_malloc64(sizeof(int) * (size_t)(j->n + 1));
  if (!j->ctab || !j->ccol || !j->order) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  for (int c = 0; c < f->t.ncols; c++)
    j->ctab[j->ncols] = j->fact, j->ccol[j->ncols++] = c;
  for (int k = 0; k < j->n; k++)
    for (int c = 0; k != j->fact && c < j->v[k].t.ncols; c++)
      j->ctab[j->ncols] = k, j->ccol[j->ncols++] = c;
  for (int k = 0; k < j->n; k++)
    if (k != j->fact && j->v[k].t.rowid)
      j->ctab[j->ncols] = k, j->ccol[j->ncols++] = -1;
  /* rule 3 */
  for (int k = 0; k < j->n; k++) {
    ga_qj_tab *x = &j->v[k];
    j->any_left |= x->op == GA_QJ_LEFT;
    j->any_using |= x->using_a >= 0;
    if (x->on_a >= 0 && (rc = read_conds(p, &E, x->on_a, x->on_b)))
      goto done;
    if (x->using_a >= 0 && (rc = read_using(p, &E, k)))
      goto done;
  }
  if (wb > wa && (rc = read_conds(p, &E, wa, wb)))
    goto done;
  /* the tree, breadth first from the fact */
  int *seen = sqlite3_malloc64(sizeof(int) * (size_t)j->n);
  if (!seen) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  memset(seen, 0, sizeof(int) * (size_t)j->n);
  int head = 0, tail = 0;
  j->order[tail++] = j->fact;
  seen[j->fact] = 1;
  while (head < tail) {
    int u = j->order[head++];
    for (int e = 0; e < E.n; e++) {
      int v = E.v[e].x == u ? E.v[e].y : E.v[e].y == u ? E.v[e].x : -1;
      if (v >= 0 && !seen[v]) {
        seen[v] = 1;
        j->v[v].parent = u;
        j->order[tail++] = v;
      }
    }
  }
  sqlite3_free(seen);
  if (tail < j->n) {
    for (int k = 0; k < j->n; k++) {
      int in = 0;
      for (int o = 0; o < tail; o++)
        in |= j->order[o] == k;
      if (!in) {
        rc = fail(p,
                  "gpu_query: %s is joined without a condition (a cross "
                  "product): join it by an equality to the fact table %s "
                  "or to a table joined to it",
                  j->v[k].qual, f->qual);
        goto done;
      }
    }
  }
  for (int e = 0; e < E.n; e++) {
    ga_qj_tab *x = &j->v[E.v[e].x], *y = &j->v[E.v[e].y];
    if (x->parent == E.v[e].y)
      x->nkeys++;
    else if (y->parent == E.v[e].x)
      y->nkeys++;
    else {
      char *c = E.v[e].a >= 0
                    ? sqlite3_mprintf("%.*s",
                                      t[E.v[e].b - 1].off +
                                          t[E.v[e].b - 1].len - t[E.v[e].a].off,
                                      z + t[E.v[e].a].off)
                    : sqlite3_mprintf("USING (%.*s)", t[E.v[e].b].len,
                                      z + t[E.v[e].b].off);
      if (!c) {
        rc = SQLITE_NOMEM;
        goto done;
      }
      if (!*err)
        *err = sqlite3_mprintf(
            "gpu_query: the join condition %s joins %s and %s, neither of "
            "which is the other's step towards the fact table %s "
            "(gpu_query runs star and snowflake joins: each table joined "
            "to one table nearer the fact)",
            c, x->qual, y->qual, f->qual);
      sqlite3_free(c);
      rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
      goto done;
    }
  }
  /* rule 5's order: outwards from the fact, a table with a filter on it or
  ** beyond it before one without (it drops fact rows before the others'
  ** lookups), else as written */
  for (int k = 0; k < j->n; k++)
    if (j->v[k].filtered)
      for (int u = j->v[k].parent; u >= 0 && u != j->fact; u = j->v[u].parent)
        j->v[u].filtered = 1;
  {
    int t2 = 0, h2 = 0;
    int *o2 = sqlite3_malloc64(sizeof(int) * (size_t)j->n);
    if (!o2) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    o2[t2++] = j->fact;
    while (h2 < t2) {
      int u = o2[h2++];
      for (int pass = 1; pass >= 0; pass--)
        for (int v = 0; v < j->n; v++)
          if (v != j->fact && j->v[v].parent == u &&
              (j->v[v].filtered != 0) == pass)
            o2[t2++] = v;
    }
    memcpy(j->order, o2, sizeof(int) * (size_t)j->n);
    sqlite3_free(o2);
  }
  /* rule 5 */
  j->reorder = !j->any_left && !j->any_using;
  if (!j->reorder && j->fact != 0)
    j->serial_why = "the join has LEFT JOIN or USING, whose meaning follows "
                    "the order written, and the fact table is not written "
                    "first (write it first to scan it in parallel)";
  /* rule 7 */
  for (int k = 0; k < j->n && !j->serial_why; k++)
    if (strcmp(j->v[k].t.schema, f->t.schema))
      j->serial_why = "the join reads tables of two schemas (the workers' "
                      "snapshot is the fact table's file's)";
  if (!j->serial_why)
    check_colls(p);
  if (!(j->json = ga_qj_json(j)))
    rc = SQLITE_NOMEM;
done:
  sqlite3_free(E.v);
  if (rc != SQLITE_OK)
    ga_qj_free(j);
  return rc;
}

void ga_qj_free(ga_qjoin *j) {
  for (int k = 0; j->v && k < j->n; k++) {
    ga_target_free(&j->v[k].t);
    sqlite3_free(j->v[k].qual);
  }
  sqlite3_free(j->v);
  sqlite3_free(j->order);
  sqlite3_free(j->ctab);
  sqlite3_free(j->ccol);
  sqlite3_free(j->json);
  memset(j, 0, sizeof(*j));
}

/* ---- rendering (rule 5) ---- */

static void table_text(const ga_qjoin *j, int k, const char *z,
                       const ga_qtok *t, int where, sqlite3_str *s,
                       ga_qj_emit emit, void *ctx) {
  const ga_qj_tab *x = &j->v[k];
  (void)z;
  (void)t;
  if (where == GA_QJ_WORKER)
    sqlite3_str_appendf(s, "main.\"%w\"", x->t.table);
  else if (where == GA_QJ_CALLER)
    sqlite3_str_appendf(s, "\"%w\".\"%w\"", x->t.schema, x->t.table);
  else
    emit(ctx, s, x->name_a, x->name_b, 0);
  sqlite3_str_appendf(s, " AS \"%w\"", x->qual);
  if (x->idx_a >= 0) {
    sqlite3_str_appendall(s, " ");
    emit(ctx, s, x->idx_a, x->b, 0);
  } else if (k == j->fact) {
    sqlite3_str_appendall(s, " NOT INDEXED");
  }
}

char *ga_qj_from(const ga_qjoin *j, const char *z, const ga_qtok *t, int where,
                 int off, ga_qj_emit emit, void *ctx) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  for (int o = 0; o < j->n; o++) {
    int k = j->reorder ? j->order[o] : o;
    const ga_qj_tab *x = &j->v[k];
    if (o)
      sqlite3_str_appendall(s, x->op == GA_QJ_LEFT && !j->reorder
                                   ? " LEFT JOIN "
                               : j->cross ? " CROSS JOIN "
                                          : " JOIN ");
    table_text(j, k, z, t, where, s, emit, ctx);
    if (j->reorder)
      continue;
    if (x->on_a >= 0) {
      sqlite3_str_appendall(s, " ON (");
      emit(ctx, s, x->on_a, x->on_b, off);
      sqlite3_str_appendall(s, ")");
    } else if (x->using_a >= 0) {
      sqlite3_str_appendall(s, " USING (");
      emit(ctx, s, x->using_a, x->using_b, off);
      sqlite3_str_appendall(s, ")");
    }
  }
  return sqlite3_str_finish(s);
}

char *ga_qj_moved(const ga_qjoin *j, int off, ga_qj_emit emit, void *ctx) {
  if (!j->reorder)
    return sqlite3_mprintf("");
  sqlite3_str *s = sqlite3_str_new(NULL);
  int any = 0;
  for (int k = 0; k < j->n; k++)
    if (j->v[k].on_a >= 0 && j->v[k].on_b > j->v[k].on_a) {
      sqlite3_str_appendall(s, any++ ? " AND (" : "(");
      emit(ctx, s, j->v[k].on_a, j->v[k].on_b, off);
      sqlite3_str_appendall(s, ")");
    }
  if (!any) {
    sqlite3_free(sqlite3_str_finish(s));
    return sqlite3_mprintf("");
  }
  return sqlite3_str_finish(s);
}
