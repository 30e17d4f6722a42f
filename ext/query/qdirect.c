/*
** qdirect.c — gpu_query's rows straight from the merged groups (issue 37):
** where the post query (planner/query.c) would only read the groups
** table's columns and compare aggregates with numeric literals, the cursor
** hands out the groups' values itself, and SQLite neither compiles nor
** steps a query over millions of groups (d4 of bench/query_bench.py:
** 200,000 groups at 6e6 rows, 2e6 at 6e7, most of them kept).
**
** No SQL interface of its own: query_vtab.c asks ga_qdirect_plan once the
** post query compiled (so any error SQLite would raise there is raised
** first, and a text that does not compile still takes the serial path),
** and then reads rows through ga_qdirect_next and ga_qdirect_column.
** gpuagg_info()'s last_scan.post says "direct" (this file) or "sqlite".
** GPUAGG_POST_DIRECT=0 in the environment turns it off (A/B runs, tests).
**
** Rules:
**   1. The shapes.  The post query is flat (query.c rule 6: every GROUP BY
**      term a bare column, so each groups-table row is one group, in the
**      groups' order), with at least one key, no join, no subquery, no
**      DISTINCT, window, ORDER BY, LIMIT or OFFSET, and its tokens read,
**      exactly:
**        SELECT item, ... FROM temp."<groups>"(?N) AS "<name>"
**          [WHERE CASE WHEN gpuagg_check("<sum>", ...) THEN 1 END]
**          [WHERE [CASE WHEN gpuagg_check(...) THEN] (cond) [END]]
**      item: a key or carried column of the groups table (bare, or
**      qualified by the text's name for the table), or gpuagg_value("<v>")
**      of an aggregate count(*), count(e), sum, total, avg, min or max
**      without DISTINCT; each with an optional alias.  cond: comparisons
**      (<, <=, >, >=, =, ==, <>, !=) of such a gpuagg_value with a numeric
**      literal (an optional sign, then one number token) or a parameter
**      (?N: its value in this call; TEXT or BLOB only against an
**      aggregate that gives none, so never min or max), either side,
**      joined by AND, with parentheses around any of them; an aggregate
**      there may be written as its result column's alias (HAVING q > 60),
**      where SQLite resolves the name to it (alias_ref).  Anything else
**      (an expression, a COLLATE, a signed parameter, OR, NOT) keeps
**      SQLite's post query.
**   2. A column's value is the groups table's (groups_vtab.c's
**      ga_groups_cell, the function its xColumn calls), and gpuagg_value
**      returns its argument as it is: the value, its type and encoding are
**      the post query's.
**   3. A group passes when every comparison is true under SQLite's
**      comparison of two values without affinity (both operands are: a
**      function's result and a literal or parameter): NULL on either side
**      (and a REAL NaN, which SQLite stores as NULL) compares as NULL, so
**      the group does not pass;
**      INTEGER and REAL compare exactly, as numbers (an INTEGER against
**      a REAL by its truncation, then the fraction, never through a
**      rounded double); TEXT and BLOB come after every number.  Each
**      literal is SQLite's own value for its tokens (SELECT <sign><number>
**      on the caller's connection, once a call): 60 is INTEGER, 60.0 and
**      1e400 REAL, 9223372036854775808 REAL, -9223372036854775808 INTEGER.
**      Before its comparisons, every sum gpuagg_check names is finalised:
**      one that overflowed raises "integer overflow" at that group, in the
**      groups' order, as the post query's CASE raises it (query.c rule 6).
**   4. Long skips poll the caller's interrupt every GA_QD_POLL groups.
**   5. query_vtab.c's memo (its rule 7) counts the bytes its kept rows
**      would take (64 a value, plus the TEXT and BLOB bytes in the groups'
**      encoding), and replays by walking the groups again: it holds them.
**   6. Rule 5's count finalises only a min or max (the aggregates that can
**      give TEXT or BLOB): a count, sum, total or avg is a number or NULL,
**      64 bytes whatever its value (d4: 161,104 sums finalised once more
**      for nothing).
**   7. The value a row's test finalised (a sum, total or avg: rule 1's
**      aggregates never DISTINCT, so no set to poll) is the one its result
**      column gives: ga_qdirect_next keeps it for that row, and
**      ga_qdirect_column hands it out (ga_result_value, as ga_groups_cell
**      does) instead of finalising the state again.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qdirect.h"
#include "qtok.h"

/* groups ahead of the one read whose memory is prefetched */
#define GA_QD_AHEAD 8

enum { GA_QD_LT = 1, GA_QD_LE, GA_QD_GT, GA_QD_GE, GA_QD_EQ, GA_QD_NE };

typedef struct rd {
  const char *z;
  const ga_qtok *t;
  int n, i;
  const ga_query *q;
  sqlite3 *db;
  ga_qdirect *d;
  sqlite3_value *const *params; /* the call's, ?1 first (NULL: unbound) */
  int nparams;
  int *alias_at; /* per result column: its alias token (ID or QID), or -1 */
  int nomem;
} rd;

static int is_op(const rd *r, int i, const char *w) {
  return i < r->n && ga_qt_op(r->z, r->t, r->n, i, w);
}

static int is_kw(const rd *r, int i, const char *w) {
  return i < r->n && r->t[i].type == GA_QT_ID &&
         (int)strlen(w) == r->t[i].len &&
         !sqlite3_strnicmp(r->z + r->t[i].off, w, r->t[i].len);
}

static int is_name(const rd *r, int i) {
  return i < r->n && (r->t[i].type == GA_QT_ID || r->t[i].type == GA_QT_QID);
}

/* Token i's name equals w (case-insensitive, as SQLite matches names). */
static int name_is(rd *r, int i, const char *w) {
  if (!is_name(r, i))
    return 0;
  char *s = ga_qt_name(r->z, &r->t[i]);
  if (!s) {
    r->nomem = 1;
    return 0;
  }
  int eq = !sqlite3_stricmp(s, w);
  sqlite3_free(s);
  return eq;
}

/* Rule 1's aggregates: count(*), count, sum, total, avg, min, max, no
** DISTINCT, no variance's squares. */
static int agg_ok(const ga_query *q, int k) {
  const ga_qagg *a = &q->aggs[k];
  int op = a->op;
  return (op == GA_Q_COUNT_STAR || op == GA_Q_COUNT ||
          (op >= GA_AGG_SUM && op <= GA_AGG_MIN)) &&
         !q->val_dist[a->val] && !q->val_sq[a->val];
}

/* gpuagg_value("<col>") at r->i: the aggregate's index, r->i past it; or
** -1.  Only the aggregates of rule 1. */
static int value_call(rd *r) {
  int i = r->i;
  if (!is_kw(r, i, "gpuagg_value") || !is_op(r, i + 1, "(") ||
      r->t[i + 2].type != GA_QT_QID || !is_op(r, i + 3, ")"))
    return -1;
  for (int k = 0; k < r->q->naggs; k++)
    if (name_is(r, i + 2, r->q->agg_col[k])) {
      if (!agg_ok(r->q, k))
        return -1;
      r->i = i + 4;
      return k;
    }
  return -1;
}

/* Rule 1's alias in the condition: a bare name at r->i that SQLite
** resolves to one result column's alias, that column an aggregate's
** gpuagg_value.  SQLite looks in the FROM first: a column of the groups
** table (a key or carried column, its gpuagg_ columns, and the rowid's
** names, which a virtual table has) is no alias, so such a name declines;
** so does a name that two aliases share.  Its aggregate's index, r->i past
** it; or -1. */
static int alias_ref(rd *r) {
  int i = r->i;
  if (!is_name(r, i) || is_op(r, i + 1, "(") || is_op(r, i + 1, ".") ||
      (i > 0 && is_op(r, i - 1, ".")) || !r->alias_at)
    return -1;
  static const char *const rowid[] = {"rowid", "oid", "_rowid_"};
  for (int k = 0; k < 3; k++)
    if (name_is(r, i, rowid[k]))
      return -1;
  char *nm = ga_qt_name(r->z, &r->t[i]);
  if (!nm) {
    r->nomem = 1;
    return -1;
  }
  int ours = !sqlite3_strnicmp(nm, "gpuagg_", 7);
  sqlite3_free(nm);
  if (ours)
    return -1;
  for (int k = 0; k < r->q->nreps; k++)
    if (name_is(r, i, r->q->rep_name[k]))
      return -1;
  int found = -1;
  for (int c = 0; c < r->d->ncols; c++) {
    if (r->alias_at[c] < 0 || !is_name(r, r->alias_at[c]))
      continue;
    char *a = ga_qt_name(r->z, &r->t[r->alias_at[c]]);
    if (!a) {
      r->nomem = 1;
      return -1;
    }
    int eq = name_is(r, i, a);
    sqlite3_free(a);
    if (!eq)
      continue;
    if (found >= 0)
      return -1; /* two columns of that name */
    found = c;
  }
  if (found < 0 || r->d->col[found] < r->q->nreps ||
      !agg_ok(r->q, r->d->col[found] - r->q->nreps))
    return -1;
  r->i = i + 1;
  return r->d->col[found] - r->q->nreps;
}

/* An aggregate operand: gpuagg_value("<col>"), or an alias of one. */
static int agg_operand(rd *r) {
  int k = value_call(r);
  return k >= 0 ? k : alias_ref(r);
}

/* A column of the groups table at r->i (a key or carried column, bare or
** qualified by the text's name): its index, r->i past it; or -1. */
static int rep_col(rd *r) {
  int i = r->i;
  if (is_name(r, i) && is_op(r, i + 1, ".")) {
    if (!name_is(r, i, r->q->qual) || is_op(r, i + 3, "."))
      return -1;
    i += 2;
  }
  if (!is_name(r, i) || is_op(r, i + 1, "("))
    return -1;
  for (int k = 0; k < r->q->nreps; k++)
    if (name_is(r, i, r->q->rep_name[k])) {
      r->i = i + 1;
      return k;
    }
  return -1;
}

/* An optional alias: [AS] name, its token kept for result column c. */
static int alias(rd *r, int c) {
  if (is_kw(r, r->i, "AS")) {
    r->i++;
    if (!is_name(r, r->i) && !(r->i < r->n && r->t[r->i].type == GA_QT_STR))
      return 0;
    r->alias_at[c] = r->i++;
    return 1;
  }
  if (r->i < r->n &&
      (r->t[r->i].type == GA_QT_QID || r->t[r->i].type == GA_QT_STR ||
       (r->t[r->i].type == GA_QT_ID && !is_kw(r, r->i, "FROM") &&
        !is_kw(r, r->i, "COLLATE"))))
    r->alias_at[c] = r->i++;
  return 1;
}

/* The parameter at r->i (?N, as query.c writes every one), bound to a
** number, NULL, TEXT or BLOB: 1 with c's literal, r->i past it; 0. */
static int param(rd *r, ga_qdirect_cmp *c) {
  const ga_qtok *t = &r->t[r->i];
  if (t->type != GA_QT_VAR || t->len < 2 || r->z[t->off] != '?')
    return 0;
  int n = 0;
  for (int j = 1; j < t->len; j++) {
    char ch = r->z[t->off + j];
    if (ch < '0' || ch > '9' || n > 100000)
      return 0;
    n = n * 10 + (ch - '0');
  }
  sqlite3_value *v = n >= 1 && n <= r->nparams ? r->params[n - 1] : NULL;
  c->lit_type = v ? sqlite3_value_type(v) : SQLITE_NULL;
  if (c->lit_type == SQLITE_INTEGER)
    c->lit_i = sqlite3_value_int64(v);
  else if (c->lit_type == SQLITE_FLOAT)
    c->lit_r = sqlite3_value_double(v);
  r->i++;
  return 1;
}

/* The literal at r->i ([+|-] number) as SQLite reads it, or a parameter:
** 1 with c's literal, r->i past it; 0. */
static int literal(rd *r, ga_qdirect_cmp *c) {
  int i = r->i;
  if (i < r->n && r->t[i].type == GA_QT_VAR)
    return param(r, c);
  const char *sign = "";
  if (is_op(r, i, "-") || is_op(r, i, "+"))
    sign = r->z[r->t[i++].off] == '-' ? "-" : "+";
  if (i >= r->n || r->t[i].type != GA_QT_NUM)
    return 0;
  /* a number token only (checked above): SQLite's own value for it */
  char *sql =
      sqlite3_mprintf("SELECT %s%.*s", sign, r->t[i].len, r->z + r->t[i].off);
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (!sql) {
    r->nomem = 1;
    return 0;
  }
  int rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    c->lit_type = sqlite3_column_type(st, 0);
    c->lit_i = sqlite3_column_int64(st, 0);
    c->lit_r = sqlite3_column_double(st, 0);
    ok = c->lit_type == SQLITE_INTEGER ||
         (c->lit_type == SQLITE_FLOAT && !isnan(c->lit_r));
  } else if ((rc & 0xff) == SQLITE_NOMEM) {
    r->nomem = 1;
  }
  sqlite3_finalize(st);
  if (ok)
    r->i = i + 1;
  return ok;
}

static int cmp_op(rd *r) {
  static const struct {
    const char *w;
    int op;
  } ops[] = {{"<=", GA_QD_LE}, {">=", GA_QD_GE}, {"<>", GA_QD_NE},
             {"!=", GA_QD_NE}, {"==", GA_QD_EQ}, {"<", GA_QD_LT},
             {">", GA_QD_GT},  {"=", GA_QD_EQ}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    if (is_op(r, r->i, ops[k].w)) {
      r->i++;
      return ops[k].op;
    }
  return 0;
}

/* The comparison with its sides swapped (60 < x is x > 60). */
static int swap_op(int op) {
  switch (op) {
  case GA_QD_LT:
    return GA_QD_GT;
  case GA_QD_LE:
    return GA_QD_GE;
  case GA_QD_GT:
    return GA_QD_LT;
  case GA_QD_GE:
    return GA_QD_LE;
  default:
    return op;
  }
}

static int qd_conj(rd *r, int end);

/* One comparison, or a parenthesised conjunction. */
static int atom(rd *r, int end) {
  if (is_op(r, r->i, "(")) {
    int close = ga_qt_close(r->z, r->t, r->n, r->i);
    if (close >= end || !is_op(r, close, ")"))
      return 0;
    r->i++;
    if (!qd_conj(r, close) || r->i != close)
      return 0;
    r->i = close + 1;
    return 1;
  }
  if (r->d->ncmps >= GA_QD_MAX_CMPS)
    return 0;
  ga_qdirect_cmp *c = &r->d->cmp[r->d->ncmps];
  int k = agg_operand(r), op;
  if (k >= 0) {
    if (!(op = cmp_op(r)) || !literal(r, c))
      return 0;
  } else {
    if (!literal(r, c) || !(op = cmp_op(r)) || (k = agg_operand(r)) < 0)
      return 0;
    op = swap_op(op);
  }
  if (r->i > end)
    return 0;
  /* a TEXT or BLOB parameter against a value that may be TEXT or BLOB
  ** compares by a collation and an encoding: SQLite's post query */
  int aop = r->q->aggs[k].op;
  if ((c->lit_type == SQLITE_TEXT || c->lit_type == SQLITE_BLOB) &&
      (aop == GA_AGG_MIN || aop == GA_AGG_MAX))
    return 0;
  c->agg = k;
  c->op = op;
  r->d->ncmps++;
  return 1;
}

/* atom AND atom ... up to token end. */
static int qd_conj(rd *r, int end) {
  for (;;) {
    if (!atom(r, end))
      return 0;
    if (r->i == end)
      return 1;
    if (!is_kw(r, r->i, "AND"))
      return 0;
    r->i++;
  }
}

/* The WHERE of query.c's flat_where, from r->i to the end. */
static int where(rd *r) {
  int i = r->i;
  if (i == r->n)
    return 1;
  if (!is_kw(r, i, "WHERE"))
    return 0;
  r->i = ++i;
  int cased = 0;
  if (is_kw(r, i, "CASE")) {
    if (!is_kw(r, i + 1, "WHEN") || !is_kw(r, i + 2, "gpuagg_check") ||
        !is_op(r, i + 3, "("))
      return 0;
    r->i = i + 4;
    for (;;) {
      if (r->i >= r->n || r->t[r->i].type != GA_QT_QID ||
          r->d->nchecks >= GA_Q_MAX_AGGS)
        return 0;
      int found = -1;
      for (int k = 0; k < r->q->naggs && found < 0; k++)
        if (name_is(r, r->i, r->q->agg_col[k]))
          found = k;
      if (found < 0)
        return 0;
      r->d->check[r->d->nchecks++] = found;
      r->i++;
      if (is_op(r, r->i, ")"))
        break;
      if (!is_op(r, r->i, ","))
        return 0;
      r->i++;
    }
    r->i++;
    if (!is_kw(r, r->i, "THEN"))
      return 0;
    r->i++;
    if (r->i + 1 < r->n && r->t[r->i].type == GA_QT_NUM &&
        r->t[r->i].len == 1 && r->z[r->t[r->i].off] == '1' &&
        is_kw(r, r->i + 1, "END"))
      return r->i + 2 == r->n;
    cased = 1;
  }
  /* (cond) [END] */
  if (!is_op(r, r->i, "("))
    return 0;
  int close = ga_qt_close(r->z, r->t, r->n, r->i);
  if (!is_op(r, close, ")"))
    return 0;
  r->i++;
  if (!qd_conj(r, close) || r->i != close)
    return 0;
  r->i = close + 1;
  if (cased) {
    if (!is_kw(r, r->i, "END"))
      return 0;
    r->i++;
  }
  return r->i == r->n;
}

static int plan_tokens(rd *r) {
  const ga_query *q = r->q;
  ga_qdirect *d = r->d;
  if (!is_kw(r, 0, "SELECT") || is_kw(r, 1, "DISTINCT") || is_kw(r, 1, "ALL"))
    return 0;
  r->i = 1;
  d->col = sqlite3_malloc64(sizeof(int) * (size_t)q->ncols);
  r->alias_at = sqlite3_malloc64(sizeof(int) * (size_t)q->ncols);
  if (!d->col || !r->alias_at) {
    r->nomem = 1;
    return 0;
  }
  for (int c = 0; c < q->ncols; c++)
    r->alias_at[c] = -1;
  for (d->ncols = 0;;) {
    if (d->ncols >= q->ncols)
      return 0;
    int k = value_call(r);
    if (k >= 0)
      d->col[d->ncols++] = q->nreps + k;
    else if ((k = rep_col(r)) >= 0)
      d->col[d->ncols++] = k;
    else
      return 0;
    if (!alias(r, d->ncols - 1))
      return 0;
    if (is_kw(r, r->i, "FROM"))
      break;
    if (!is_op(r, r->i, ","))
      return 0;
    r->i++;
  }
  if (d->ncols != q->ncols)
    return 0;
  /* FROM temp . "groups" ( ?N ) AS "qual" */
  int i = r->i;
  if (!is_kw(r, i + 1, "temp") || !is_op(r, i + 2, ".") || !is_name(r, i + 3) ||
      !is_op(r, i + 4, "(") || i + 5 >= r->n || r->t[i + 5].type != GA_QT_VAR ||
      !is_op(r, i + 6, ")") || !is_kw(r, i + 7, "AS") || !is_name(r, i + 8))
    return 0;
  r->i = i + 9;
  return where(r);
}

int ga_qdirect_plan(sqlite3 *db, const ga_query *q,
                    sqlite3_value *const *params, int nparams, ga_qdirect *d) {
  memset(d, 0, sizeof(*d));
  d->memo_agg = -1; /* rule 7 */
  const char *env = getenv("GPUAGG_POST_DIRECT");
  if ((env && !strcmp(env, "0")) || !q->flat || q->nkeys == 0 || q->join_from ||
      q->subs.n || !q->post_sql || q->ncols < 1)
    return SQLITE_OK;
  ga_qtok *t = NULL;
  int n = 0, trc = ga_q_tokenize(q->post_sql, &t, &n);
  if (trc < 0)
    return SQLITE_NOMEM;
  rd r = {q->post_sql, t, n, 0, q, db, d, params, nparams, NULL, 0};
  int ok = trc == 0 && plan_tokens(&r);
  sqlite3_free(t);
  sqlite3_free(r.alias_at);
  if (r.nomem) {
    ga_qdirect_free(d);
    return SQLITE_NOMEM;
  }
  if (!ok) {
    ga_qdirect_free(d);
    return SQLITE_OK;
  }
  d->ok = 1;
  return SQLITE_OK;
}

void ga_qdirect_free(ga_qdirect *d) {
  sqlite3_free(d->col);
  memset(d, 0, sizeof(*d));
}

/* Rule 2's value of aggregate k for group g, typed: GA_OK or GA_OVERFLOW
** (the groups table's marker). */
static int agg_value(const ga_query *q, const ga_group *g, int k, ga_value *v) {
  const ga_qagg *a = &q->aggs[k];
  const ga_gstate *s = &g->st[a->val];
  memset(v, 0, sizeof(*v));
  if (a->op == GA_Q_COUNT_STAR || a->op == GA_Q_COUNT) {
    v->type = GA_V_INT;
    v->i = a->op == GA_Q_COUNT_STAR ? s->rows : ga_gstate_count(s);
    return GA_OK;
  }
  return ga_gstate_result(s, a->op, v);
}

/* Rule 6: whether aggregate k may give TEXT or BLOB: only min and max
** (count, sum, total and avg give numbers or NULL). */
static int agg_texty(const ga_query *q, int k) {
  int op = q->aggs[k].op;
  return op == GA_AGG_MAX || op == GA_AGG_MIN;
}

/* Rule 7: whether aggregate k's value is a sum, total or avg (a number or
** NULL, which ga_groups_cell gives as ga_gstate_result gives it). */
static int agg_numeric(const ga_query *q, int k) {
  int op = q->aggs[k].op;
  return op == GA_AGG_SUM || op == GA_AGG_TOTAL || op == GA_AGG_AVG;
}

/* Rule 3: an INTEGER against a REAL, exactly: -1, 0, 1. */
static int int_real_cmp(int64_t i, double r) {
  if (r < -9223372036854775808.0)
    return 1;
  if (r >= 9223372036854775808.0)
    return -1;
  int64_t y = (int64_t)r; /* r's integer part, exact */
  if (i != y)
    return i < y ? -1 : 1;
  double fy = (double)y;
  return fy < r ? -1 : fy > r ? 1 : 0;
}

/* Rule 3: 1 when v op literal is true (NULL: never). */
static int passes(const ga_value *v, const ga_qdirect_cmp *c) {
  int x;
  if (v->type == GA_V_NULL || (v->type == GA_V_REAL && isnan(v->r)) ||
      c->lit_type == SQLITE_NULL)
    return 0;
  if (v->type == GA_V_TEXT || v->type == GA_V_BLOB)
    x = 1; /* after every number (rule 1: never against TEXT or BLOB) */
  else if (c->lit_type == SQLITE_TEXT || c->lit_type == SQLITE_BLOB)
    x = -1; /* a number comes first */
  else if (v->type == GA_V_INT && c->lit_type == SQLITE_INTEGER)
    x = v->i < c->lit_i ? -1 : v->i > c->lit_i;
  else if (v->type == GA_V_INT)
    x = int_real_cmp(v->i, c->lit_r);
  else if (c->lit_type == SQLITE_INTEGER)
    x = -int_real_cmp(c->lit_i, v->r);
  else
    x = v->r < c->lit_r ? -1 : v->r > c->lit_r;
  switch (c->op) {
  case GA_QD_LT:
    return x < 0;
  case GA_QD_LE:
    return x <= 0;
  case GA_QD_GT:
    return x > 0;
  case GA_QD_GE:
    return x >= 0;
  case GA_QD_EQ:
    return x == 0;
  default:
    return x != 0;
  }
}

int ga_qdirect_next(ga_qdirect *d, const ga_qgroups *gs, size_t *i,
                    ga_intr *in) {
  const ga_query *q = gs->q;
  size_t polled = 0;
  d->memo_agg = -1; /* rule 7 */
  for (size_t j = *i; j < gs->n; j++) {
    const ga_group *g = gs->g[j];
    ga_value v;
    if (++polled == GA_QD_POLL) {
      polled = 0;
      if (in && ga_intr_check(in))
        return SQLITE_INTERRUPT;
    }
    /* the groups lie all over memory: bring those ahead towards the cache
    ** (groups_vtab.c's reads do the same) */
    if (j + 2 * GA_QD_AHEAD < gs->n)
      __builtin_prefetch(gs->g[j + 2 * GA_QD_AHEAD], 0);
    if (j + GA_QD_AHEAD < gs->n) {
      const ga_group *ga = gs->g[j + GA_QD_AHEAD];
      __builtin_prefetch(ga->key, 0);
      for (int k = 0; k < d->ncmps; k++)
        __builtin_prefetch(&ga->st[q->aggs[d->cmp[k].agg].val], 0);
    }
    int have = -1; /* v holds this aggregate's value (d4: check, then >) */
    for (int k = 0; k < d->nchecks; k++) {
      int rc = agg_value(q, g, d->check[k], &v);
      if (rc == GA_OVERFLOW)
        return SQLITE_ERROR;
      have = rc == GA_OK ? d->check[k] : -1;
    }
    int pass = 1;
    for (int k = 0; k < d->ncmps && pass; k++) {
      /* every sum the condition reads was checked above (query.c rule 6) */
      if (d->cmp[k].agg != have &&
          (have = -1, agg_value(q, g, d->cmp[k].agg, &v)) != GA_OK)
        return SQLITE_NOMEM;
      have = d->cmp[k].agg;
      pass = passes(&v, &d->cmp[k]);
    }
    if (pass) {
      *i = j;
      if (have >= 0 && agg_numeric(q, have)) { /* rule 7 */
        d->memo_agg = have;
        d->memo_i = j;
        d->memo_v = v;
      }
      return SQLITE_ROW;
    }
  }
  *i = gs->n;
  return SQLITE_DONE;
}

void ga_qdirect_column(const ga_qdirect *d, const ga_qgroups *gs, size_t i,
                       sqlite3_context *ctx, int col) {
  if (col < 0 || col >= d->ncols || i >= gs->n)
    return;
  if (d->memo_agg >= 0 && d->memo_i == i &&
      d->col[col] == gs->q->nreps + d->memo_agg)   /* rule 7 */
    ga_result_value(ctx, &d->memo_v, SQLITE_UTF8); /* a number or NULL */
  else
    ga_groups_cell(ctx, gs, gs->g[i], d->col[col]);
}

int64_t ga_qdirect_row_bytes(const ga_qdirect *d, const ga_qgroups *gs,
                             size_t i) {
  const ga_query *q = gs->q;
  const ga_group *g = gs->g[i];
  int64_t b = 64 * (int64_t)d->ncols;
  for (int c = 0; c < d->ncols; c++) {
    ga_value v;
    int col = d->col[c];
    if (col < q->nreps)
      ga_bval_view(&g->key[q->rep_slot[col]], &v);
    else if (!agg_texty(q, col - q->nreps) ||
             agg_value(q, g, col - q->nreps, &v) != GA_OK)
      continue; /* rule 6: a number (or NULL) has no bytes beyond its 64 */
    if (v.type == GA_V_TEXT || v.type == GA_V_BLOB)
      b += v.n;
  }
  return b;
}
