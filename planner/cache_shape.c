/*
** cache_shape.c — which parts (planner.h's ga_parts: gpu_aggregate's
** arguments, gpu_query's keys, carried columns, values and WHERE) the
** column cache may answer, and the query they become (engine/cache/
** cache.h's ga_cquery).  Each key, carried column and value is a program of
** planner/cache_expr.c's grammar; the WHERE clause is an AND of terms
** (below: what the GPU's filter kernel runs) when it can be, else a program
** too.  Anything else takes the uncached path, with the reason.
**
** Terms of the AND (parentheses allowed):
**     col OP literal | literal OP col       OP: = == <> != < <= > >=
**     col BETWEEN literal AND literal
**     col IN (literal, ...)
**     col IS NULL | col IS NOT NULL | col ISNULL | col NOTNULL | col NOT NULL
**   where a literal is a number with at most one sign, a string (TEXT
**   columns), or ?N.
**
** Rules:
**   1. SQLite's semantics, or ineligible.  A number column compared with a
**      number: the column's affinity (INTEGER, REAL, NUMERIC, none) leaves
**      the number as it is, so the comparison is SQLite's exact one between
**      numbers.  NULL fails every comparison; an AND of terms passes a row
**      only when every term is true.
**   2. A literal's value is what SQLite makes of its text: it is evaluated
**      by SQLite itself (SELECT <sign><literal>), so hexadecimal, integers
**      too large for int64 (REAL), 1e999 (Inf) and -9223372036854775808
**      are SQLite's.
**   3. A name is a column only if it is one of the table's columns (what
**      SQLite resolves first), qualified or not by the FROM clause's name
**      for the table; a name that is no column makes it ineligible.
**   4. Comments and subqueries: ineligible.
**   5. The REAL -9223372036854775808.0 (-2^63) against the rowid alias
**      (INTEGER PRIMARY KEY) with = or IN.  Where SQLite seeks the rowid
**      with a literal (OP_SeekRowid), integer affinity leaves -2^63.0 REAL
**      (sqlite3VdbeIntegerAffinity takes only values above -2^63), so no
**      row matches, not even rowid -2^63; where it compares instead (the
**      term is not the seek) the comparison is numeric and that row does
**      match.  Every other operator, every other column (indexed or not),
**      and every other literal compare numerically either way.  So: the
**      alias's only = / one-number IN term with it is always the seek, and
**      its literal becomes 0.5, which no integer equals; with another = or
**      IN on the alias, or in an IN list of several numbers (a small
**      ANALYZEd table is scanned), the planner decides: ineligible.  A WHERE
**      program with that REAL anywhere: ineligible.
**   6. TEXT columns (engine/cache/cache.h rule 1: codes and a dictionary;
**      issue 20).  Compared with strings only where the column's affinity
**      is TEXT or none (a numeric affinity would turn a numeric-looking
**      string into a number) and its collation BINARY (the dictionary's
**      order); grouped only under BINARY; read as a value only by min, max
**      and count (ga_parts.val_minmax).  A comparison with a string becomes
**      one with the string's insertion point among the codes (cache_lex.c's
**      ga_cl_code_of).  Other TEXT shapes: derived columns (cache_derive.c)
**      or ineligible.
**   7. Programs: cache_expr.c.  A GPU entry answers what
**      engine/cache/cache_gpu_query.c's ga_cache_gpu_takes accepts.
**   8. ?N is gpu_query's parameter N - 2 (planner.h: ?1 and ?2 are the
**      pieces' bounds), as bound for the call; unbound is NULL.  A term
**      comparing with a NULL makes the AND false for every row.  An IN
**      subquery's placeholder (x IN (?N), planner/qsubq.c rule 6) is no
**      term: the filter's program tests the set (cache_expr.c rule 4).
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_parse.h"
#include "query.h"

/* [sign] NUM (rule 2) into lits[]: its index, -1. */
static int literal(parser *p) {
  gak_cfilter *f = &p->q->filter;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return ga_cl_no(p, "more numbers than the cache takes%s", NULL) - 1;
  ga_value v;
  if (!ga_cl_number(p, &v))
    return -1;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  l->kind = v.type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
  if (v.type == GA_V_INT)
    l->bits = v.i;
  else
    memcpy(&l->bits, &v.r, 8);
  return f->nlits++;
}

/* Rule 6: a string literal compared with TEXT column c by *op (mirrored
** already): text_code_lit of SQLite's value of it; the literal's index, or
** -1 (why set). */
static int text_literal(parser *p, int c, int *op) {
  tok *t = ga_cl_next(p);
  if (t->kind != T_STR)
    return ga_cl_no(p, "TEXT column %s is compared with a number",
                    p->e->cols[c].name) -
           1;
  char *sql = sqlite3_mprintf("SELECT %.*s", t->n, t->z);
  sqlite3_stmt *st = NULL;
  int lit = -1,
      rc = sql ? sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) == SQLITE_TEXT) {
    int n = 0;
    const void *z = ga_cl_text_bytes(p, sqlite3_column_value(st, 0), &n);
    if (z)
      lit = ga_cl_text_code_lit(p, c, op, z, n);
  }
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  sqlite3_finalize(st);
  sqlite3_free(sql);
  if (lit < 0)
    ga_cl_no(p, "%s is not a string SQLite reads as one", NULL);
  return lit;
}

/* Rule 8: a parameter compared with column col by *op: a literal's index;
** -1 (why set); -2 when its value is NULL (the comparison is never
** true). */
static int param_lit(parser *p, int col, int *op) {
  if (ga_cl_in_slot(p, ga_cl_peek(p), NULL, NULL, NULL))
    return ga_cl_no(p,
                    "an IN subquery's set is no list of literals (the "
                    "program tests it)%s",
                    NULL) -
           1;
  sqlite3_value *v = ga_cl_param(p, ga_cl_next(p));
  int ty = v ? sqlite3_value_type(v) : SQLITE_NULL;
  if (ty == SQLITE_NULL)
    return -2;
  if (p->e->cols[col].dict) {
    if (ty != SQLITE_TEXT)
      return ga_cl_no(p,
                      "TEXT column %s is compared with a parameter that is not "
                      "TEXT",
                      p->e->cols[col].name) -
             1;
    int n = 0;
    const void *z = ga_cl_text_bytes(p, v, &n);
    return z ? ga_cl_text_code_lit(p, col, op, z, n) : -1;
  }
  if (ty != SQLITE_INTEGER && ty != SQLITE_FLOAT)
    return ga_cl_no(
               p,
               "column %s holds numbers, compared with a parameter that is "
               "not a number",
               p->e->cols[col].name) -
           1;
  gak_cfilter *f = &p->q->filter;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return ga_cl_no(p, "more literals than the cache takes%s", NULL) - 1;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  if (ty == SQLITE_INTEGER) {
    l->kind = GA_KIND_INT;
    l->bits = sqlite3_value_int64(v);
  } else {
    double r = sqlite3_value_double(v);
    l->kind = GA_KIND_REAL;
    memcpy(&l->bits, &r, 8);
  }
  return f->nlits++;
}

/* A literal compared with column col by *op: a string for a TEXT column
** (rule 6), else a number (rule 2).  Its index, or -1. */
static int value_lit(parser *p, int col, int *op) {
  if (p->e->cols[col].dict && !ga_cl_text_ok(p, col, 1))
    return -1;
  if (ga_cl_peek(p)->kind == T_VAR)
    return param_lit(p, col, op);
  if (p->e->cols[col].dict)
    return ga_cl_text_ok(p, col, 1) ? text_literal(p, col, op) : -1;
  if (ga_cl_peek(p)->kind == T_STR)
    return ga_cl_no(p, "column %s holds numbers, compared with a string",
                    p->e->cols[col].name) -
           1;
  return literal(p);
}

static gak_cterm *term_new(parser *p, int col, int op) {
  gak_cfilter *f = &p->q->filter;
  if (f->nterms >= GAK_CACHE_MAX_TERMS) {
    ga_cl_no(p, "more terms than the cache takes%s", NULL);
    return NULL;
  }
  if (op < GAK_CMP_ISNULL && p->e->cols[col].aff == GA_AFF_TEXT &&
      !p->e->cols[col].dict) {
    /* rule 1: TEXT affinity would compare the number as text */
    ga_cl_no(p, "column %s has TEXT affinity", p->e->cols[col].name);
    return NULL;
  }
  gak_cterm *t = &f->terms[f->nterms++];
  t->col = col;
  t->op = op;
  t->lit = 0;
  t->nlit = 0;
  return t;
}

static int all_terms(parser *p);

/* One term; 1 ok, 0 not eligible. */
static int term(parser *p) {
  tok *t = ga_cl_peek(p);
  if (t->kind == T_LP) {
    ga_cl_next(p);
    if (!all_terms(p))
      return 0;
    if (ga_cl_next(p)->kind != T_RP)
      return ga_cl_no(p, "the filter is not an AND of comparisons%s", NULL);
    return 1;
  }
  if (t->kind == T_NUM || t->kind == T_SIGN || t->kind == T_STR ||
      t->kind == T_VAR) {
    /* literal OP col: read as col OP' literal */
    int at = p->L.pos;
    while (ga_cl_peek(p)->kind != T_OP && ga_cl_peek(p)->kind != T_END)
      ga_cl_next(p);
    tok *o = ga_cl_next(p);
    if (o->kind != T_OP)
      return ga_cl_no(p, "the filter is not an AND of comparisons%s", NULL);
    int col = ga_cl_column(p, ga_cl_next(p));
    if (col < 0)
      return ga_cl_no(p, "a comparison is not between a column and a literal%s",
                      NULL);
    int end = p->L.pos, op = ga_cl_mirror(o->op);
    p->L.pos = at;
    int lit = value_lit(p, col, &op);
    if (lit == -1)
      return 0;
    if (p->L.t[p->L.pos].kind != T_OP)
      return ga_cl_no(p, "the filter is not an AND of comparisons%s", NULL);
    p->L.pos = end;
    if (lit == -2)
      return p->never = 1;
    gak_cterm *tm = term_new(p, col, op);
    if (!tm)
      return 0;
    tm->lit = lit;
    tm->nlit = 1;
    return 1;
  }
  int col = ga_cl_column(p, ga_cl_next(p));
  if (col < 0)
    return ga_cl_no(p,
                    "the filter is not an AND of comparisons of a column with "
                    "a number%s",
                    NULL);
  t = ga_cl_next(p);
  if (t->kind == T_OP) {
    if (ga_cl_peek(p)->kind != T_NUM && ga_cl_peek(p)->kind != T_SIGN &&
        ga_cl_peek(p)->kind != T_STR && ga_cl_peek(p)->kind != T_VAR)
      return ga_cl_no(p, "a comparison is not between a column and a literal%s",
                      NULL);
    int op = t->op;
    int lit = value_lit(p, col, &op);
    if (lit == -1)
      return 0;
    if (lit == -2)
      return p->never = 1;
    gak_cterm *tm = term_new(p, col, op);
    if (!tm)
      return 0;
    tm->lit = lit;
    tm->nlit = 1;
    return 1;
  }
  if (ga_cl_kw(t, "ISNULL"))
    return term_new(p, col, GAK_CMP_ISNULL) != NULL;
  if (ga_cl_kw(t, "NOTNULL"))
    return term_new(p, col, GAK_CMP_NOTNULL) != NULL;
  if (ga_cl_kw(t, "IS")) {
    int neg = ga_cl_kw(ga_cl_peek(p), "NOT");
    if (neg)
      ga_cl_next(p);
    if (!ga_cl_kw(ga_cl_next(p), "NULL"))
      return ga_cl_no(p, "IS is only eligible with NULL%s", NULL);
    return term_new(p, col, neg ? GAK_CMP_NOTNULL : GAK_CMP_ISNULL) != NULL;
  }
  if (ga_cl_kw(t, "NOT")) {
    if (!ga_cl_kw(ga_cl_next(p), "NULL"))
      return ga_cl_no(p, "NOT is only eligible in NOT NULL%s", NULL);
    return term_new(p, col, GAK_CMP_NOTNULL) != NULL;
  }
  if (ga_cl_kw(t, "BETWEEN")) { /* x >= a AND x <= b, x read once (SQLite) */
    int opa = GAK_CMP_GE, opb = GAK_CMP_LE;
    int a = value_lit(p, col, &opa);
    if (a == -1)
      return 0;
    if (!ga_cl_kw(ga_cl_next(p), "AND"))
      return ga_cl_no(p, "BETWEEN needs AND%s", NULL);
    int b = value_lit(p, col, &opb);
    if (b == -1)
      return 0;
    if (a == -2 || b == -2)
      return p->never = 1;
    gak_cterm *ge = term_new(p, col, opa);
    if (!ge)
      return 0;
    ge->lit = a;
    ge->nlit = 1;
    gak_cterm *le = term_new(p, col, opb);
    if (!le)
      return 0;
    le->lit = b;
    le->nlit = 1;
    return 1;
  }
  if (ga_cl_kw(t, "IN")) {
    if (ga_cl_next(p)->kind != T_LP)
      return ga_cl_no(p, "IN is only eligible with a list of numbers%s", NULL);
    gak_cterm *tm = term_new(p, col, GAK_CMP_IN);
    if (!tm)
      return 0;
    tm->lit = p->q->filter.nlits;
    for (;;) {
      int op = GAK_CMP_IN, lit = value_lit(p, col, &op);
      if (lit == -1)
        return 0;
      tm->nlit += lit >= 0; /* NULL in the list: never equal (rule 8) */
      tok *s = ga_cl_next(p);
      if (s->kind == T_RP)
        return 1;
      if (s->kind != T_COMMA)
        return ga_cl_no(p, "IN is only eligible with a list of numbers%s",
                        NULL);
    }
  }
  return ga_cl_no(p,
                  "the filter is not an AND of comparisons of a column with a "
                  "number%s",
                  NULL);
}

/* -2^63 as a REAL literal (rule 5). */
static int min_real(const gak_clit *l) {
  return l->kind == GA_KIND_REAL && l->bits == (int64_t)0xc3e0000000000000u;
}

/* Is entry column c the rowid alias?  Asked of the planner, which seeks
** the rowid for c = 1 only then (it knows the DESC quirk, WITHOUT ROWID).
** 1, 0, or -1 (SQLite failed: nomem set, or ineligible). */
static int rowid_alias(parser *p, int c) {
  char *sql = sqlite3_mprintf(
      "EXPLAIN QUERY PLAN SELECT 1 FROM \"%w\".\"%w\" WHERE \"%w\" = 1",
      p->e->cols[c].src_table ? p->e->cols[c].src_schema : p->e->schema,
      p->e->cols[c].src_table ? p->e->cols[c].src_table : p->e->table,
      p->e->cols[c].src_table ? p->e->cols[c].src_name : p->e->cols[c].name);
  sqlite3_stmt *st = NULL;
  int alias = 0, rc;
  if (!sql) {
    p->rc = SQLITE_NOMEM;
    return -1;
  }
  rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *d = (const char *)sqlite3_column_text(st, 3);
      if (d && strstr(d, "INTEGER PRIMARY KEY"))
        alias = 1;
    }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE)
    return alias;
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  ga_cl_no(p, "cannot tell whether %s is the rowid", p->e->cols[c].name);
  return -1;
}

/* Rule 5, once the whole filter is read: 1 ok, 0 not eligible. */
static int rowid_min_real(parser *p) {
  gak_cfilter *f = &p->q->filter;
  for (int i = 0; i < f->nterms; i++) {
    gak_cterm *tm = &f->terms[i];
    int hit = -1, neq = 0;
    if (tm->op != GAK_CMP_EQ && tm->op != GAK_CMP_IN)
      continue;
    for (int k = tm->lit; k < tm->lit + tm->nlit; k++)
      if (min_real(&f->lits[k]))
        hit = k;
    if (hit < 0)
      continue;
    int alias = rowid_alias(p, tm->col);
    if (alias < 0)
      return 0;
    if (!alias)
      continue;
    for (int j = 0; j < f->nterms; j++)
      neq += f->terms[j].col == tm->col &&
             (f->terms[j].op == GAK_CMP_EQ || f->terms[j].op == GAK_CMP_IN);
    if (neq > 1 || tm->nlit > 1)
      return ga_cl_no(p,
                      "-9223372036854775808.0 with = or IN on the rowid %s: "
                      "SQLite's plan decides",
                      p->e->cols[tm->col].name);
    double never = 0.5; /* what the seek finds: no row */
    memcpy(&f->lits[hit].bits, &never, 8);
  }
  return 1;
}

static int all_terms(parser *p) {
  if (!term(p))
    return 0;
  while (ga_cl_kw(ga_cl_peek(p), "AND")) {
    ga_cl_next(p);
    if (!term(p))
      return 0;
  }
  return 1;
}

/* A GPU entry's own limits (engine/cache/cache_gpu_query.c rule 5); a
** set (cexpr.h rule 8) is the host's alone. */
static int gpu_takes(parser *p) {
  if (p->e->where != GA_CACHE_GPU)
    return 1;
  const ga_cquery *q = p->q;
  for (int k = 0; k <= q->nkeys + q->ncarry + q->nvals; k++) {
    const ga_cexpr *x =
        k < q->nkeys + q->ncarry + q->nvals ? &q->prog[k] : &q->fprog;
    for (int i = 0; i < x->n; i++)
      if (x->ins[i].op == GA_CX_INSET)
        return ga_cl_no(p,
                        "an IN subquery's set (the GPU cache's programs test "
                        "no sets; a host entry, loaded with device = 'cpu', "
                        "answers it)%s",
                        NULL);
  }
  return ga_cache_gpu_takes(p->e, p->q, p->why, p->nwhy);
}

/* What each median or percentile asks of its value (ga_cquery.pct_ask,
** issue 39); past the room, none (each value then comes back whole). */
static void pct_asks(ga_cquery *q, const ga_parts *parts) {
  _Static_assert(GA_CQ_MAX_PCT_ASKS >= GA_Q_MAX_AGGS, "room for every call");
  q->npct_ask = 0;
  for (int k = 0; parts->aggs && k < parts->naggs; k++) {
    const ga_qagg *a = &parts->aggs[k];
    if (a->op < GA_Q_PCT || a->val < 0 || a->val >= q->nvals)
      continue;
    if (q->npct_ask == GA_CQ_MAX_PCT_ASKS) {
      q->npct_ask = 0;
      return;
    }
    ga_pct_ask *w = &q->pct_ask[q->npct_ask++];
    w->val = a->val;
    w->fn = a->op - GA_Q_PCT;
    w->frac = a->frac;
  }
}

int ga_cache_shape(sqlite3 *db, const ga_centry *e, const ga_target *t,
                   const ga_parts *parts, ga_cquery *q, char *why,
                   size_t nwhy) {
  parser p;
  memset(&p, 0, sizeof(p));
  memset(q, 0, sizeof(*q));
  q->topk_val = -1;
  p.db = db;
  p.t = t;
  p.e = e;
  p.tcols = (const char *const *)t->cols;
  p.ntcols = t->ncols;
  p.q = q;
  p.parts = parts;
  p.why = why;
  p.nwhy = nwhy;
  why[0] = 0;
  q->nkeys = parts->nkeys;
  q->ncarry = parts->ncarry;
  q->nvals = parts->nvals;
  q->xcol = q->gcol = -1;
  int nkc = q->nkeys + q->ncarry;
  if (nkc > GA_MAX_KEYS)
    return ga_cl_no(&p, "more keys and carried columns than the cache takes%s",
                    NULL);
  q->prog = sqlite3_malloc64(sizeof(ga_cexpr) * (size_t)(nkc + q->nvals));
  q->env = sqlite3_malloc64(sizeof(ga_cx_env));
  if (!q->prog || !q->env)
    return SQLITE_NOMEM;
  memset(q->env, 0, sizeof(ga_cx_env));
  for (int k = 0; k < nkc; k++) {
    xk kind;
    if (!ga_cl_program(&p, parts->keys[k], &q->prog[k], &kind))
      return p.rc ? p.rc : 0;
    if (kind.k == K_CODE) {
      /* rule 6: a TEXT key groups under BINARY; a carried one is read */
      if (k < q->nkeys && kind.coll_col >= 0 &&
          !ga_cl_text_ok(&p, kind.coll_col, 0))
        return p.rc ? p.rc : 0;
      q->kdict[k] = kind.d;
    }
  }
  for (int i = 0; i < q->nvals; i++) {
    xk kind;
    if (!ga_cl_program(&p, parts->vals[i], &q->prog[nkc + i], &kind))
      return p.rc ? p.rc : 0;
    q->best[i] = !parts->val_best || parts->val_best[i];
    q->best_only[i] = parts->val_minmax && parts->val_minmax[i];
    if (kind.k == K_CODE && parts->val_minmax && parts->val_minmax[i])
      q->vdict[i] = kind.d; /* rule 6: min and max of codes */
    else if (kind.k == K_CODE)
      return ga_cl_no(&p, "the aggregate argument %s holds TEXT",
                      parts->vals[i]);
  }
  q->any_order = parts->any_order;
  q->topk_val = parts->topk_val;
  q->topk_total = parts->topk_total;
  q->topk_count = parts->topk_count; /* issue 37 */
  q->topk_desc = parts->topk_desc;
  q->topk_k = parts->topk_k;
  for (int i = 0; i < q->nvals; i++) {
    q->val_sum[i] = parts->val_sum ? parts->val_sum[i] : 0;
    q->dist[i] = parts->val_dist ? parts->val_dist[i] : 0; /* issue 37 */
    q->ndist += q->dist[i] != 0;
    q->sq[i] = parts->val_sq ? parts->val_sq[i] : 0; /* issue 39 */
    q->nsq += q->sq[i] != 0;
  }
  pct_asks(q, parts);
  q->xcol = q->nvals == 1 ? ga_cx_bare(ga_cq_val(q, 0)) : -1;
  q->gcol = q->nkeys == 1 && !q->ncarry ? ga_cx_bare(ga_cq_key(q, 0)) : -1;
  q->simple = q->nvals == 1 && !q->ncarry && (!q->nkeys || q->gcol >= 0);
  if (!parts->filter || !*parts->filter)
    return gpu_takes(&p);
  ga_cl_lex(&p.L, parts->filter);
  int ok = 0;
  if (p.L.nomem)
    p.rc = SQLITE_NOMEM;
  else
    ok = all_terms(&p) && ga_cl_peek(&p)->kind == T_END && rowid_min_real(&p);
  if (ok && p.never) { /* rule 8: one term no row passes */
    gak_cfilter *f = &q->filter;
    if (f->nterms >= GAK_CACHE_MAX_TERMS) {
      ok = ga_cl_no(&p, "more terms than the cache takes%s", NULL);
    } else {
      gak_cterm *tm = &f->terms[f->nterms++];
      memset(tm, 0, sizeof(*tm));
      tm->op = GAK_CMP_IN; /* in an empty list */
    }
  }
  ga_cl_lexer_free(&p.L);
  if (p.rc)
    return p.rc;
  if (ok)
    return gpu_takes(&p);
  /* rule 7: the filter as a program (host entries) */
  why[0] = 0; /* the AND of terms' reason: the program's replaces it */
  memset(&q->filter, 0, sizeof(q->filter));
  p.never = 0;
  xk kind;
  if (!ga_cl_program(&p, parts->filter, &q->fprog, &kind))
    return p.rc ? p.rc : 0;
  if (kind.k == K_CODE)
    return ga_cl_no(&p, "the filter is TEXT, not a condition%s", NULL);
  /* rule 5: the rowid's seek with -2^63.0 is the planner's to decide */
  for (int i = 0; i < q->fprog.n; i++)
    if (q->fprog.ins[i].op == GA_CX_LIT &&
        q->fprog.ins[i].v.type == GA_V_REAL && q->fprog.ins[i].v.r == -0x1p63)
      return ga_cl_no(&p,
                      "-9223372036854775808.0 in a filter: SQLite's plan "
                      "decides%s",
                      NULL);
  for (int i = 0; i < q->env->npool; i++)
    if (q->env->pool[i].type == GA_V_REAL && q->env->pool[i].r == -0x1p63)
      return ga_cl_no(&p,
                      "-9223372036854775808.0 in a filter: SQLite's plan "
                      "decides%s",
                      NULL);
  q->has_fprog = 1;
  return gpu_takes(&p);
}
