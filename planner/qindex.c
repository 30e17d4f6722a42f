/*
** qindex.c — rule 14 of planner/path.c: a filter that an index answers
** (issue 37, part 5).  The parallel path reads rowid pieces of the whole
** table; where SQLite would read a range of an index, that costs more than
** SQLite's own plan on a selective range.  So:
**   1. The filter's top-level AND terms of the forms
**        col op v,  v op col  (op: = == < <= > >=),  col BETWEEN v AND v
**      with v a number, a string or a parameter, and col a column of the
**      table (bare, or qualified by the FROM clause's name) or its rowid
**      (rowid, _rowid_, oid where no column has the name; an INTEGER
**      PRIMARY KEY column),
**      are the range.  Nothing else is: a top-level OR (AND binds closer,
**      so the terms would not be ANDed), a COLLATE anywhere in the term (it
**      would change the comparison's collation), an expression, a keyword.
**   2. The index: the rowid when a term is on it; else, for the first
**      column with terms, an index that is not partial whose leftmost
**      column is that column with the column's own collation (a term
**      without COLLATE compares under the column's collation, and only an
**      index of that collation answers it: SQLite would scan otherwise).
**   3. Count the range through it on the caller's connection, bounded:
**      SELECT count(*) FROM (SELECT 1 FROM t INDEXED BY i WHERE terms LIMIT
**      S + 1), S = est / (GA_QINDEX_LOOKUP_COST * threads): the rows whose
**      lookups, scattered, cost what the parallel scan of the whole table
**      costs.  The decision reads S + 1 index entries at most.
**   4. The band: the least and greatest rowid of the range, by a skip over
**      its distinct keys (the first key, then each next one, three index
**      seeks each, GA_QINDEX_MAX_KEYS at most; the rowid: two seeks).
**      Dates that grow with the rowid give a band about as wide as the
**      range; shuffled ones the whole table.
**   5. The choice: serial with SQLite's own plan (GA_QINDEX_SERIAL;
**      gpu_query's serial text without NOT INDEXED) when the range is
**      empty, or its band has fewer than scan_min_rows /
**      GA_QINDEX_BAND_MIN_DIV rowids, or its rows are scattered (no band
**      narrower than 3/4 of the table, or one GA_QINDEX_LOOKUP_COST times
**      wider than their count) and number at most S or fewer than
**      scan_min_rows.  Otherwise a narrow band: the workers read only it
**      (GA_QINDEX_BAND); else the whole table (GA_QINDEX_NONE).  Where the
**      serial path cannot run SQLite's plan (gpu_aggregate, a partial, a
**      text with its own INDEXED BY or NOT INDEXED), a band if there is
**      one.
**   6. Exactness does not hang on any of this: the workers still apply the
**      whole filter, and the band they read is computed again by worker 0
**      inside the workers' snapshot (engine/scan/scan.c, "Pieces"), so a
**      commit between the decision and the scan changes only the cost.
**   7. GPUAGG_QINDEX (benchmarks): off (no rule 14: the whole table), band
**      (a band wherever one is known), serial (SQLite's own plan wherever
**      the serial path can run it), to measure each choice on one table.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qindex.h"

/* ---- a small lexer: just enough to find the terms ---- */

enum { QT_NAME, QT_QNAME, QT_STR, QT_NUM, QT_VAR, QT_OP, QT_OTHER };

typedef struct qtok {
  int type, off, len;
} qtok;

static int idch(unsigned char c) {
  return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') ||
         (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The tokens of z (comments and spaces dropped); -1 unterminated, -2
** NOMEM, else their count. */
static int lex(const char *z, qtok **out) {
  int n = 0, cap = 0, i = 0;
  qtok *t = NULL;
  *out = NULL;
  while (z[i]) {
    unsigned char c = (unsigned char)z[i];
    int st = i, type = QT_OTHER;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      i++;
      continue;
    }
    if (c == '-' && z[i + 1] == '-') {
      while (z[i] && z[i] != '\n')
        i++;
      continue;
    }
    if (c == '/' && z[i + 1] == '*') {
      const char *e = strstr(z + i + 2, "*/");
      if (!e)
        goto bad;
      i = (int)(e - z) + 2;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char q = c == '[' ? ']' : (char)c;
      for (i++;; i++) {
        if (!z[i])
          goto bad;
        if (z[i] == q) {
          if (q != ']' && z[i + 1] == q) {
            i++;
            continue;
          }
          break;
        }
      }
      i++;
      type = c == '\'' ? QT_STR : QT_QNAME;
    } else if ((c == 'x' || c == 'X') && z[i + 1] == '\'') {
      const char *e = strchr(z + i + 2, '\'');
      if (!e)
        goto bad;
      i = (int)(e - z) + 1; /* a BLOB: no value of ours */
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && z[i + 1] >= '0' && z[i + 1] <= '9')) {
      while (idch((unsigned char)z[i]) || z[i] == '.' ||
             ((z[i] == '+' || z[i] == '-') &&
              (z[i - 1] == 'e' || z[i - 1] == 'E') && z[st] != '0'))
        i++;
      type = QT_NUM;
    } else if (c == '?' || c == ':' || c == '@' || c == '$' || c == '#') {
      i++;
      while (idch((unsigned char)z[i]))
        i++;
      type = QT_VAR;
    } else if (idch(c)) {
      while (idch((unsigned char)z[i]))
        i++;
      type = QT_NAME;
    } else {
      static const char *const two[] = {"<=", ">=", "==", "!=", "<>",
                                        "||", "<<", ">>", "->"};
      i++;
      for (size_t k = 0; k < sizeof two / sizeof two[0]; k++)
        if (z[st] == two[k][0] && z[st + 1] == two[k][1]) {
          i = st + 2;
          break;
        }
      type = QT_OP;
    }
    if (n == cap) {
      int nc = cap ? cap * 2 : 32;
      qtok *nt = sqlite3_realloc64(t, sizeof(qtok) * (size_t)nc);
      if (!nt) {
        sqlite3_free(t);
        return -2;
      }
      t = nt, cap = nc;
    }
    t[n].type = type, t[n].off = st, t[n].len = i - st;
    n++;
  }
  *out = t;
  return n;
bad:
  sqlite3_free(t);
  return -1;
}

typedef struct qctx {
  const char *z;
  const qtok *t;
  int n;
  const ga_target *tg;
  const char *alias;
  int ipk; /* the INTEGER PRIMARY KEY column (the rowid), -1 none */
  const ga_parts *p;
} qctx;

static int is_kw(const qctx *c, int i, const char *kw) {
  return i < c->n && c->t[i].type == QT_NAME &&
         (int)strlen(kw) == c->t[i].len &&
         !sqlite3_strnicmp(c->z + c->t[i].off, kw, c->t[i].len);
}

static int is_op(const qctx *c, int i, const char *op) {
  return i < c->n && c->t[i].type == QT_OP && (int)strlen(op) == c->t[i].len &&
         !memcmp(c->z + c->t[i].off, op, (size_t)c->t[i].len);
}

/* A name token, dequoted into buf; 0 when not a name. */
static int name_of(const qctx *c, int i, char *buf, int nbuf) {
  if (i >= c->n || (c->t[i].type != QT_NAME && c->t[i].type != QT_QNAME))
    return 0;
  const char *s = c->z + c->t[i].off;
  int len = c->t[i].len, k = 0;
  if (c->t[i].type == QT_NAME) {
    /* a keyword (NULL, CURRENT_DATE, ...) is no column of ours */
    if (sqlite3_keyword_check(s, len) || len >= nbuf)
      return 0;
    memcpy(buf, s, (size_t)len);
    buf[len] = 0;
    return 1;
  }
  char q = s[0] == '[' ? ']' : s[0];
  for (int j = 1; j < len - 1 && k < nbuf - 1; j++) {
    buf[k++] = s[j];
    if (s[j] == q && q != ']')
      j++; /* a doubled quote */
  }
  buf[k] = 0;
  return k < nbuf - 1;
}

/* A column reference at i: its end in *end, and the column's number, -1
** for the rowid; -2 when not one. */
static int colref(const qctx *c, int i, int *end) {
  char a[256], b[256];
  const char *col = a;
  if (!name_of(c, i, a, sizeof a))
    return -2;
  *end = i + 1;
  if (is_op(c, i + 1, ".")) {
    /* qualified: by the FROM clause's name for the table */
    if (!name_of(c, i + 2, b, sizeof b) ||
        sqlite3_stricmp(a, c->alias ? c->alias : c->tg->table))
      return -2;
    col = b;
    *end = i + 3;
  }
  for (int k = 0; k < c->tg->ncols; k++)
    if (!sqlite3_stricmp(col, c->tg->cols[k]))
      return k == c->ipk ? -1 : k;
  /* the rowid under a name no column shadows */
  if (c->tg->rowid &&
      (!sqlite3_stricmp(col, "rowid") || !sqlite3_stricmp(col, "_rowid_") ||
       !sqlite3_stricmp(col, "oid")))
    return -1;
  return -2;
}

/* Parameter ?N at i has a value now: not one whose value comes later
** (gpu_query's subqueries, planner/qsubq.c: their values are NULL
** pointers until the scan's snapshot evaluates them; counted unbound, as
** NULL, every range that reads one would look empty). */
static int var_known(const qctx *c, int i) {
  const char *z = c->z + c->t[i].off;
  if (z[0] != '?' || c->t[i].len < 2)
    return 1; /* :name, @name, $name: the texts have none */
  int64_t k = 0;
  for (int j = 1; j < c->t[i].len; j++) {
    if (z[j] < '0' || z[j] > '9' || k > 1000000)
      return 0;
    k = k * 10 + (z[j] - '0');
  }
  return k >= 3 && k - 3 < c->p->nparams && c->p->params && c->p->params[k - 3];
}

/* A constant or a parameter at i: its end, or -1. */
static int value_at(const qctx *c, int i) {
  if (i >= c->n)
    return -1;
  if (c->t[i].type == QT_VAR && !var_known(c, i))
    return -1;
  if (c->t[i].type == QT_STR || c->t[i].type == QT_VAR ||
      c->t[i].type == QT_NUM)
    return i + 1;
  if ((is_op(c, i, "-") || is_op(c, i, "+")) && i + 1 < c->n &&
      c->t[i + 1].type == QT_NUM)
    return i + 2;
  return -1;
}

static int cmp_op(const qctx *c, int i) {
  return is_op(c, i, "=") || is_op(c, i, "==") || is_op(c, i, "<") ||
         is_op(c, i, "<=") || is_op(c, i, ">") || is_op(c, i, ">=");
}

/* Tokens [a, b) as a range term: the column (-1 rowid), or -2. */
static int term_col(const qctx *c, int a, int b) {
  int e, k = colref(c, a, &e);
  if (k > -2) {
    int v;
    if (cmp_op(c, e) && (v = value_at(c, e + 1)) == b)
      return k;
    if (is_kw(c, e, "BETWEEN") && (v = value_at(c, e + 1)) > 0 &&
        is_kw(c, v, "AND") && value_at(c, v + 1) == b)
      return k;
    return -2;
  }
  int v = value_at(c, a);
  if (v > 0 && cmp_op(c, v) && (k = colref(c, v + 1, &e)) > -2 && e == b)
    return k;
  return -2;
}

/* ---- the index ---- */

/* The name of an index of t that answers terms on column k: not partial,
** column k leftmost under the column's own collation (sqlite3_malloc'd;
** NULL none).  *nomem on out of memory. */
static char *index_for(sqlite3 *db, const ga_target *t, int k, int *nomem) {
  const char *ctype = NULL, *ccoll = NULL;
  sqlite3_stmt *st = NULL;
  char *found = NULL;
  if (sqlite3_table_column_metadata(db, t->schema, t->table, t->cols[k], &ctype,
                                    &ccoll, NULL, NULL, NULL) != SQLITE_OK)
    return NULL;
  if (sqlite3_prepare_v2(
          db,
          "SELECT il.name FROM pragma_index_list(?1, ?2) AS il, "
          "pragma_index_xinfo(il.name, ?2) AS x WHERE il.partial = 0 AND "
          "x.seqno = 0 AND x.cid >= 0 AND x.name = ?3 COLLATE NOCASE AND "
          "x.coll = ?4 COLLATE NOCASE ORDER BY il.name",
          -1, &st, NULL) != SQLITE_OK) {
    *nomem = sqlite3_errcode(db) == SQLITE_NOMEM;
    return NULL;
  }
  sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, t->cols[k], -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, ccoll ? ccoll : "BINARY", -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW) {
    found = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
    *nomem = !found;
  }
  sqlite3_finalize(st);
  return found;
}

/* The INTEGER PRIMARY KEY column, which is the rowid, or -1: the one
** primary key column, declared INTEGER, with no index of its own (an
** INTEGER PRIMARY KEY DESC has one, and is no rowid). */
static int ipk_col(sqlite3 *db, const ga_target *t) {
  int found = -1, n = 0;
  for (int k = 0; k < t->ncols; k++) {
    const char *type = NULL;
    int pk = 0;
    if (sqlite3_table_column_metadata(db, t->schema, t->table, t->cols[k],
                                      &type, NULL, NULL, &pk,
                                      NULL) != SQLITE_OK)
      return -1;
    if (pk) {
      n++;
      if (type && !sqlite3_stricmp(type, "INTEGER"))
        found = k;
    }
  }
  if (n != 1 || found < 0)
    return -1;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT 1 FROM pragma_index_list(?1, ?2) WHERE "
                         "origin = 'pk'",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_DONE)
    found = -1;
  sqlite3_finalize(st);
  return found;
}

/* ---- the statements ---- */

/* FROM schema.table [AS alias] and the index clause. */
static void from(sqlite3_str *s, const char *schema, const ga_target *t,
                 const char *alias, const char *idx) {
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\"", schema, t->table);
  if (alias)
    sqlite3_str_appendf(s, " AS \"%w\"", alias);
  if (idx)
    sqlite3_str_appendf(s, " INDEXED BY \"%w\"", idx);
  else
    sqlite3_str_appendall(s, " NOT INDEXED");
}

/* The band's statement over schema: one row (exact, lo, hi).  The rowid:
** two seeks.  An index of column col: the distinct keys of the range, the
** first and then each next one (min(col) > the last: one seek; the keys of
** a range on one column under one collation are consecutive in the index,
** so the walk stops at the first key outside it), the least and greatest
** rowid of each key (one seek each). */
static char *range_sql(const char *schema, const ga_target *t,
                       const char *alias, const char *idx, const char *col,
                       const char *w) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  if (!idx) {
    sqlite3_str_appendf(s, "SELECT 1, (SELECT %s", t->rowid);
    from(s, schema, t, alias, NULL);
    sqlite3_str_appendf(s, " WHERE %s ORDER BY %s LIMIT 1), (SELECT %s", w,
                        t->rowid, t->rowid);
    from(s, schema, t, alias, NULL);
    sqlite3_str_appendf(s, " WHERE %s ORDER BY %s DESC LIMIT 1)", w, t->rowid);
    return sqlite3_str_finish(s);
  }
  sqlite3_str_appendf(s,
                      "WITH RECURSIVE ga_qindex_k(d) AS (SELECT (SELECT "
                      "min(\"%w\")",
                      col);
  from(s, schema, t, alias, idx);
  sqlite3_str_appendf(s,
                      " WHERE %s) UNION ALL SELECT (SELECT min(\"%w\") FROM "
                      "\"%w\".\"%w\" INDEXED BY \"%w\" WHERE \"%w\" > "
                      "ga_qindex_k.d) FROM ga_qindex_k WHERE ga_qindex_k.d IS "
                      "NOT NULL AND EXISTS (SELECT 1",
                      w, col, schema, t->table, idx, col);
  from(s, schema, t, alias, idx);
  sqlite3_str_appendf(s,
                      " WHERE \"%w\" = ga_qindex_k.d AND (%s)) LIMIT %d) "
                      "SELECT count(*) <= %d, min((SELECT min(%s) FROM "
                      "\"%w\".\"%w\" INDEXED BY \"%w\" WHERE \"%w\" = "
                      "ga_qindex_k.d)), max((SELECT max(%s) FROM \"%w\".\"%w\" "
                      "INDEXED BY \"%w\" WHERE \"%w\" = ga_qindex_k.d)) FROM "
                      "ga_qindex_k WHERE d IS NOT NULL AND EXISTS (SELECT 1",
                      col, w, GA_QINDEX_MAX_KEYS + 2, GA_QINDEX_MAX_KEYS,
                      t->rowid, schema, t->table, idx, col, t->rowid, schema,
                      t->table, idx, col);
  from(s, schema, t, alias, idx);
  sqlite3_str_appendf(s, " WHERE \"%w\" = ga_qindex_k.d AND (%s))", col, w);
  return sqlite3_str_finish(s);
}

/* p's parameters into 3.. of st, as the workers bind them. */
static int bind_parts(sqlite3_stmt *st, const ga_parts *p) {
  int n = sqlite3_bind_parameter_count(st);
  for (int i = 0; i < p->nparams && i + 3 <= n; i++)
    if (p->params[i] && sqlite3_bind_value(st, i + 3, p->params[i]))
      return SQLITE_NOMEM;
  return SQLITE_OK;
}

/* ---- the decision ---- */

void ga_qindex_free(ga_qindex *q) {
  sqlite3_free(q->sql_range);
  q->sql_range = NULL;
}

int ga_qindex_plan(sqlite3 *db, const ga_target *t, const ga_parts *p,
                   int threads, int64_t est, int64_t min_rows, int serial_ok,
                   ga_qindex *q) {
  qtok *tk = NULL;
  char *idx = NULL, *sql = NULL;
  sqlite3_str *w = NULL;
  sqlite3_stmt *st = NULL;
  int rc = SQLITE_OK, nomem = 0, col = -2;
  memset(q, 0, sizeof(*q));
  q->rows = -1;
  /* benchmarks (bench/index_bench.py): GPUAGG_QINDEX=off (the whole table,
  ** as before rule 14), band (a band wherever one is known), serial
  ** (SQLite's own plan wherever the serial path can run it) */
  const char *force = getenv("GPUAGG_QINDEX");
  if (!p->filter || !*p->filter || !t->rowid ||
      (force && !strcmp(force, "off")))
    return SQLITE_OK;
  int n = lex(p->filter, &tk);
  if (n == -2)
    return SQLITE_NOMEM;
  if (n <= 0)
    return SQLITE_OK;
  qctx c = {p->filter, tk, n, t, p->alias, ipk_col(db, t), p};

  /* rule 1: the top-level AND terms (CASE ... END nests like parentheses;
  ** the AND of a BETWEEN is its own) */
  int depth = 0, between = 0, a = 0, nterm = 0;
  int ta[64], tb[64], tc[64];
  for (int i = 0; i <= n; i++) {
    if (i < n) {
      if (is_op(&c, i, "(") || is_kw(&c, i, "CASE"))
        depth++;
      else if (is_op(&c, i, ")") || is_kw(&c, i, "END"))
        depth--;
      if (depth)
        continue;
      if (is_kw(&c, i, "OR"))
        goto done; /* the terms would not be ANDed */
      if (is_kw(&c, i, "BETWEEN")) {
        between = 1;
        continue;
      }
      if (!is_kw(&c, i, "AND"))
        continue;
      if (between) {
        between = 0;
        continue;
      }
    }
    if (i > a && nterm < 64) {
      ta[nterm] = a, tb[nterm] = i, tc[nterm] = term_col(&c, a, i);
      nterm++;
    }
    a = i + 1;
  }
  /* rule 2: the rowid first, else the first indexed column with terms */
  for (int k = 0; k < nterm && col != -1; k++)
    if (tc[k] == -1)
      col = -1;
  for (int k = 0; k < nterm && col == -2; k++) {
    if (tc[k] < 0)
      continue;
    idx = index_for(db, t, tc[k], &nomem);
    if (nomem)
      goto nomem;
    if (idx)
      col = tc[k];
  }
  if (col == -2)
    goto done;
  w = sqlite3_str_new(NULL);
  int first = 1;
  for (int k = 0; k < nterm; k++)
    if (tc[k] == col) {
      int off = tk[ta[k]].off, end = tk[tb[k] - 1].off + tk[tb[k] - 1].len;
      sqlite3_str_appendf(w, "%s(%.*s)", first ? "" : " AND ", end - off,
                          p->filter + off);
      first = 0;
    }
  char *wt = sqlite3_str_finish(w);
  w = NULL;
  if (!wt)
    goto nomem;
  const char *cname = col >= 0 ? t->cols[col] : t->rowid;
  const char *via = idx ? idx : "the rowid";

  if (threads < 1)
    threads = 1;
  /* rule 4: the band, as the caller sees it now */
  sql = range_sql(t->schema, t, p->alias, idx, cname, wt);
  q->sql_range = range_sql("main", t, p->alias, idx, cname, wt);
  if (!sql || !q->sql_range) {
    sqlite3_free(wt);
    goto nomem;
  }
  int band = 0, empty = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
    if (bind_parts(st, p) != SQLITE_OK)
      nomem = 1;
    else if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0)) {
      if (sqlite3_column_type(st, 1) == SQLITE_NULL)
        empty = 1;
      else {
        band = 1;
        q->lo = sqlite3_column_int64(st, 1);
        q->hi = sqlite3_column_int64(st, 2);
      }
    }
  }
  nomem |= (sqlite3_errcode(db) & 0xff) == SQLITE_NOMEM;
  sqlite3_finalize(st);
  st = NULL;
  sqlite3_free(sql);
  sql = NULL;
  if (nomem) {
    sqlite3_free(wt);
    goto nomem;
  }
  uint64_t d = (uint64_t)q->hi - (uint64_t)q->lo;
  int64_t span = !band                     ? INT64_MAX
                 : d < (uint64_t)INT64_MAX ? (int64_t)d + 1
                                           : INT64_MAX;
  int narrow = empty || (band && span <= est / 4 * 3);

  /* rule 3: the bounded count, where the band does not decide alone: a
  ** narrow band is read in parallel when at least 1/GA_QINDEX_LOOKUP_COST
  ** of its rowids are in the range (lookups would cost more), a wide one
  ** or none when the range has more than S rows */
  int64_t s_rows = est / ((int64_t)GA_QINDEX_LOOKUP_COST * threads);
  int64_t lim = narrow ? span / GA_QINDEX_LOOKUP_COST : s_rows;
  int64_t cnt = -1, min_band = min_rows / GA_QINDEX_BAND_MIN_DIV;
  if (lim < 1)
    lim = 1;
  if (!empty && !(band && span < min_band)) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, "SELECT count(*) FROM (SELECT 1");
    from(s, t->schema, t, p->alias, idx);
    sqlite3_str_appendf(s, " WHERE %s LIMIT ?1)", wt);
    sql = sqlite3_str_finish(s);
    if (!sql) {
      sqlite3_free(wt);
      goto nomem;
    }
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      sqlite3_bind_int64(st, 1, lim + 1);
      if (bind_parts(st, p) != SQLITE_OK)
        nomem = 1;
      else if (sqlite3_step(st) == SQLITE_ROW)
        cnt = sqlite3_column_int64(st, 0);
    }
    nomem |= (sqlite3_errcode(db) & 0xff) == SQLITE_NOMEM;
    sqlite3_finalize(st);
    st = NULL;
    if (nomem) {
      sqlite3_free(wt);
      goto nomem;
    }
    if (cnt < 0) { /* SQLite's own error, if any, comes from the serial path */
      sqlite3_free(wt);
      ga_qindex_free(q);
      goto done;
    }
  }
  sqlite3_free(wt);
  q->rows = empty ? 0 : cnt > lim ? -1 : cnt;

  /* rule 5 */
  double pct = 100.0 / (double)(est > 0 ? est : 1);
  int serial = empty || (band && span < min_band) ||
               (q->rows >= 0 && (q->rows < min_rows || q->rows <= s_rows));
  if (force && !strcmp(force, "band"))
    serial = 0, narrow = band || empty;
  else if (force && !strcmp(force, "serial"))
    serial = 1;
  if (serial && serial_ok) {
    q->choice = GA_QINDEX_SERIAL;
    if (q->rows >= 0)
      sqlite3_snprintf((int)sizeof q->why, q->why,
                       "an indexed range of %lld rows (%.2g%% of the table) "
                       "through %s: SQLite's own plan",
                       (long long)q->rows, pct * (double)q->rows, via);
    else
      sqlite3_snprintf((int)sizeof q->why, q->why,
                       "an indexed range within rowids %lld..%lld (fewer "
                       "than scan_min_rows / %d) through %s: SQLite's own "
                       "plan",
                       (long long)q->lo, (long long)q->hi,
                       GA_QINDEX_BAND_MIN_DIV, via);
  } else if (narrow) {
    q->choice = GA_QINDEX_BAND;
    if (empty)
      sqlite3_snprintf((int)sizeof q->why, q->why,
                       "an empty indexed range through %s", via);
    else
      sqlite3_snprintf((int)sizeof q->why, q->why,
                       "an indexed range through %s within rowids "
                       "%lld..%lld (%.2g%% of the table)",
                       via, (long long)q->lo, (long long)q->hi,
                       pct * (double)span);
  } else {
    sqlite3_snprintf((int)sizeof q->why, q->why,
                     "an indexed range of %s%lld rows through %s, %s: the "
                     "whole table",
                     q->rows < 0 ? "over " : "",
                     (long long)(q->rows < 0 ? lim : q->rows), via,
                     band ? "scattered" : "no band (too many keys)");
  }
  if (q->choice != GA_QINDEX_BAND)
    ga_qindex_free(q);
done:
  sqlite3_free(sql);
  sqlite3_free(idx);
  sqlite3_free(tk);
  return rc;
nomem:
  rc = SQLITE_NOMEM;
  sqlite3_free(w ? sqlite3_str_finish(w) : NULL);
  sqlite3_finalize(st);
  ga_qindex_free(q);
  goto done;
}
