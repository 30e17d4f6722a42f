/*
** qdims.c — gpu_query's star joins on the probe path (qdims.h; issue 38,
** step 3.1).  Where qjoin.c's plan is an inner star or snowflake, each
** dimension (with the tables beyond it) is filtered by its own conditions
** and built once per call (engine/scan/dims.h), and the workers' texts
** read the fact table alone: SQLite does no B-tree lookup a fact row.
**
** Rules:
**   1. The shape.  No LEFT JOIN nor USING (qjoin.c rule 5's reordered
**      form: every ON condition is in the workers' filter), the fact
**      without INDEXED BY, a UTF-8 database.  Each AND-ed condition of the
**      workers' filter (parentheses opened) is: a fact condition (reads the
**      fact or no table: kept in the workers' text, first); an edge, c1 =
**      c2 (or ==) between a column (or rowid) of the fact and one of a
**      dimension joined to it, each side a bare column (the probe's key,
**      in the order found: composite keys); or a condition reading only
**      the tables of one dimension's branch (its own filters and the
**      snowflake's edges): that dimension's build text, where SQLite
**      evaluates it on each of its rows exactly as the join would.  Any
**      other condition keeps SQLite's join, with the reason.
**   2. Attributes.  Each group term, carried column and aggregate argument
**      of the workers reads the fact alone (kept) or one dimension's
**      branch alone: then the build computes it with SQLite per dimension
**      row, and the worker reads it back (gpuagg_dim_get), the same value
**      and type; its collation and affinity are never read from the
**      worker's text (the groups' collations come from the caller's text,
**      planner/path.c; a DISTINCT's from qjoin's FROM).  A text that reads
**      the fact and a dimension together keeps SQLite's join.
**   3. The key's comparison (engine/scan/dims.h rule 2): numeric affinity
**      when either column's declared affinity is INTEGER, REAL or NUMERIC
**      (a rowid is INTEGER); the collation of the left operand as written
**      (its column's declared one, BINARY without; a rowid on the left:
**      the right's), as sqlite3BinaryCompareCollSeq reads two columns.
**   4. The workers' filter: the fact conditions, then one
**      gpuagg_dim_probe per dimension (those with a filter first, as
**      qjoin.c rule 5 orders them): an inner join drops a fact row that
**      no dimension row matches.  GPUAGG_DIM_PROBE=0 turns the path off
**      (A/B).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "dims.h"
#include "glue.h"
#include "qdims.h"
#include "qschema.h"
#include "qtok.h"
#include "query.h"

typedef struct qd_dim {
  int tab;                    /* its table in the join */
  int nk;                     /* keys */
  char *fkey[GA_SD_MAX_KEYS]; /* the fact side's text */
  char *dkey[GA_SD_MAX_KEYS]; /* the dimension side's text */
  int numeric[GA_SD_MAX_KEYS], coll[GA_SD_MAX_KEYS];
  sqlite3_str *where; /* its branch's conditions */
  int nconds;
  int na;
  char **attr; /* its attributes' texts */
  char *sql;
} qd_dim;

struct ga_qd {
  const char *why;
  int n;
  qd_dim *d;
  int nkt, nv;
  int *ksub, *kattr, *vsub, *vattr; /* dimension (-1: kept) and attribute */
  char *fact_filter;                /* NULL: none */
  char *fact_from;
};

const char *ga_qd_why(const ga_qd *qd) { return qd->why; }

void ga_qd_free(ga_qd *qd) {
  if (!qd)
    return;
  for (int k = 0; k < qd->n; k++) {
    qd_dim *d = &qd->d[k];
    for (int c = 0; c < d->nk; c++) {
      sqlite3_free(d->fkey[c]);
      sqlite3_free(d->dkey[c]);
    }
    sqlite3_free(sqlite3_str_finish(d->where));
    for (int a = 0; a < d->na; a++)
      sqlite3_free(d->attr[a]);
    sqlite3_free(d->attr);
    sqlite3_free(d->sql);
  }
  sqlite3_free(qd->d);
  sqlite3_free(qd->ksub);
  sqlite3_free(qd->kattr);
  sqlite3_free(qd->vsub);
  sqlite3_free(qd->vattr);
  sqlite3_free(qd->fact_filter);
  sqlite3_free(qd->fact_from);
  sqlite3_free(qd);
}

/* ---- a text's tables ---- */

typedef struct txt {
  const char *z;
  ga_qtok *t;
  int n;
} txt;

static int op(const txt *x, int i, const char *w) {
  return ga_qt_op(x->z, x->t, x->n, i, w);
}

static int kw(const txt *x, int i, const char *w) {
  return i >= 0 && i < x->n && x->t[i].type == GA_QT_ID &&
         (int)strlen(w) == x->t[i].len &&
         !sqlite3_strnicmp(x->z + x->t[i].off, w, x->t[i].len);
}

/* Tables [a, b) reads, a bit mask (the fact's rowid counts as the fact). */
static uint64_t mask_of(const ga_qjoin *j, const txt *x, int a, int b) {
  uint64_t m = 0;
  for (int i = a; i < b; i++) {
    int fr = 0;
    int c = ga_qj_col(j, x->z, x->t, x->n, i, &fr);
    int k = fr ? j->fact : c >= 0 ? j->ctab[c] : -1;
    if (k >= 0 && k < 64)
      m |= (uint64_t)1 << k;
  }
  return m;
}

/* The dimension joined to the fact whose branch holds table k. */
static int top_of(const ga_qjoin *j, int k) {
  while (k >= 0 && j->v[k].parent >= 0 && j->v[k].parent != j->fact)
    k = j->v[k].parent;
  return k;
}

/* The one branch every table of m (no fact) lies in; -1 none. */
static int branch_of(const ga_qjoin *j, uint64_t m) {
  int top = -1;
  for (int k = 0; k < j->n; k++)
    if (m & ((uint64_t)1 << k)) {
      if (k == j->fact)
        return -1;
      int tk = top_of(j, k);
      if (top >= 0 && tk != top)
        return -1;
      top = tk;
    }
  return top;
}

/* A bare column [a, b): its list index c (-1: the fact's rowid, *fr). */
static int bare(const ga_qjoin *j, const txt *x, int a, int b, int *c,
                int *fr) {
  while (b - a >= 3 && op(x, a, "(") &&
         ga_qt_close(x->z, x->t, x->n, a) == b - 1)
    a++, b--;
  if (b - a != 1 && b - a != 3 && b - a != 5)
    return 0;
  *c = ga_qj_col(j, x->z, x->t, x->n, b - 1, fr);
  if (b - a > 1 && !op(x, b - 2, "."))
    return 0;
  return *c >= 0 || *fr;
}

/* ---- the plan ---- */

typedef struct pl {
  sqlite3 *db;
  const ga_qjoin *j;
  ga_qd *qd;
  int *dim_of; /* table -> index in qd->d, -1 */
} pl;

static char *col_text(const ga_qjoin *j, int c, int fr) {
  const ga_qj_tab *x = fr ? &j->v[j->fact] : ga_qj_coltab(j, c);
  return sqlite3_mprintf("\"%w\".\"%w\"", x->qual,
                         fr ? x->t.rowid : ga_qj_colname(j, c));
}

/* Declared affinity numeric? and collation of column c (fr: fact rowid):
** 0 ok, 1 cannot say. */
static int col_meta(pl *P, int c, int fr, int *numeric, const char **coll,
                    int *rowid) {
  const ga_qjoin *j = P->j;
  const ga_qj_tab *x = fr ? &j->v[j->fact] : ga_qj_coltab(j, c);
  *rowid = fr || j->ccol[c] < 0;
  if (*rowid) {
    *numeric = 1;
    *coll = NULL;
    return 0;
  }
  const char *type = NULL, *cl = NULL;
  if (ga_column_decl(P->db, x->t.schema, x->t.table, ga_qj_colname(j, c), &type,
                     &cl) != SQLITE_OK)
    return 1;
  const char *aff = ga_qs_type_affinity(type ? type : "");
  *numeric = !strcmp(aff, "INTEGER") || !strcmp(aff, "REAL") ||
             !strcmp(aff, "NUMERIC");
  *coll = cl ? cl : "BINARY";
  return 0;
}

static int coll_no(const char *c) {
  const char *b = c ? ga_qs_coll(c) : "BINARY";
  return !b                     ? -1
         : !strcmp(b, "NOCASE") ? GA_COLL_NOCASE
         : !strcmp(b, "RTRIM")  ? GA_COLL_RTRIM
                                : GA_COLL_BINARY;
}

static char *span(const txt *x, int a, int b) {
  if (b <= a)
    return sqlite3_mprintf("");
  return sqlite3_mprintf("%.*s",
                         x->t[b - 1].off + x->t[b - 1].len - x->t[a].off,
                         x->z + x->t[a].off);
}

/* One AND-ed condition [a, b) of the workers' filter (rule 1). */
static int cond(pl *P, const txt *x, int a, int b, sqlite3_str *fact) {
  const ga_qjoin *j = P->j;
  ga_qd *qd = P->qd;
  uint64_t m = mask_of(j, x, a, b);
  uint64_t fbit = (uint64_t)1 << j->fact;
  if (!(m & ~fbit)) { /* the fact's, or no table's */
    char *s = span(x, a, b);
    if (!s)
      return SQLITE_NOMEM;
    sqlite3_str_appendf(fact, "%s(\n%s\n)",
                        sqlite3_str_length(fact) ? " AND " : "", s);
    sqlite3_free(s);
    return SQLITE_OK;
  }
  int br = branch_of(j, m);
  if (br >= 0) { /* one branch: its build */
    qd_dim *d = &qd->d[P->dim_of[br]];
    char *s = span(x, a, b);
    if (!s)
      return SQLITE_NOMEM;
    sqlite3_str_appendf(d->where, "%s(\n%s\n)", d->nconds++ ? " AND " : "", s);
    sqlite3_free(s);
    return SQLITE_OK;
  }
  /* an edge: fact column = dimension column */
  int eq = -1, depth = 0, neq = 0;
  for (int i = a; i < b; i++) {
    depth += op(x, i, "(") - op(x, i, ")");
    if (depth == 0 && (op(x, i, "=") || op(x, i, "==")))
      eq = i, neq++;
  }
  int lc = -1, lfr = 0, rc_ = -1, rfr = 0;
  if (neq != 1 || !bare(j, x, a, eq, &lc, &lfr) ||
      !bare(j, x, eq + 1, b, &rc_, &rfr)) {
    qd->why = "a condition reads the fact table and a dimension but is not "
              "an equality of two columns: each worker runs SQLite's join";
    return SQLITE_OK;
  }
  int ltab = lfr ? j->fact : j->ctab[lc], rtab = rfr ? j->fact : j->ctab[rc_];
  int dtab = ltab == j->fact ? rtab : ltab;
  if ((ltab != j->fact) == (rtab != j->fact) || j->v[dtab].parent != j->fact) {
    qd->why = "a condition joins tables other than the fact and a dimension "
              "of it: each worker runs SQLite's join";
    return SQLITE_OK;
  }
  qd_dim *d = &qd->d[P->dim_of[dtab]];
  if (d->nk == GA_SD_MAX_KEYS) {
    qd->why = "a join key of more than 8 columns: each worker runs SQLite's "
              "join";
    return SQLITE_OK;
  }
  int ln, rn, lrow, rrow;
  const char *lcoll, *rcoll;
  if (col_meta(P, lc, lfr, &ln, &lcoll, &lrow) ||
      col_meta(P, rc_, rfr, &rn, &rcoll, &rrow)) {
    qd->why = "a join column's declared type cannot be read: each worker "
              "runs SQLite's join";
    return SQLITE_OK;
  }
  /* rule 3 */
  int coll = coll_no(lrow ? rcoll : lcoll);
  if (coll < 0) {
    qd->why = "a join key's collation is not a built-in one: each worker "
              "runs SQLite's join";
    return SQLITE_OK;
  }
  int k = d->nk++;
  d->numeric[k] = ln || rn;
  d->coll[k] = coll;
  int fl = ltab == j->fact;
  d->fkey[k] = fl ? col_text(j, lc, lfr) : col_text(j, rc_, rfr);
  d->dkey[k] = fl ? col_text(j, rc_, rfr) : col_text(j, lc, lfr);
  return d->fkey[k] && d->dkey[k] ? SQLITE_OK : SQLITE_NOMEM;
}

/* The AND-ed conditions of [a, b), parentheses around one opened. */
static int conds(pl *P, const txt *x, int a, int b, sqlite3_str *fact) {
  while (b - a >= 2 && op(x, a, "(") &&
         ga_qt_close(x->z, x->t, x->n, a) == b - 1)
    a++, b--;
  int depth = 0, between = 0, s = a, n = 0, rc = SQLITE_OK;
  int cut[256], nc = 0;
  for (int i = a; i < b; i++) {
    if (op(x, i, "(") || kw(x, i, "CASE"))
      depth++;
    else if (op(x, i, ")") || kw(x, i, "END"))
      depth--;
    if (depth == 0 && kw(x, i, "BETWEEN"))
      between++;
    else if (depth == 0 && kw(x, i, "AND")) {
      if (between)
        between--;
      else if (nc < 256)
        cut[nc++] = i;
      else
        P->qd->why = "the filter has too many conditions";
    }
  }
  (void)n;
  if (nc == 0) {
    if (a >= b)
      return SQLITE_OK;
    return cond(P, x, a, b, fact);
  }
  for (int c = 0; c <= nc && rc == SQLITE_OK && !P->qd->why; c++) {
    int e = c < nc ? cut[c] : b;
    rc = conds(P, x, s, e, fact);
    s = e + 1;
  }
  return rc;
}

/* A worker's text (rule 2): -1 kept, else its dimension, *attr set. */
static int text_sub(pl *P, const char *z, int *attr) {
  const ga_qjoin *j = P->j;
  txt x = {.z = z};
  if (ga_q_tokenize(z, &x.t, &x.n)) {
    sqlite3_free(x.t);
    P->qd->why = "a text cannot be read again";
    return -1;
  }
  uint64_t m = mask_of(j, &x, 0, x.n);
  sqlite3_free(x.t);
  uint64_t fbit = (uint64_t)1 << j->fact;
  if (!(m & ~fbit))
    return -1;
  int br = branch_of(j, m);
  if (br < 0) {
    P->qd->why = "a group term, carried column or aggregate argument reads "
                 "the fact table and a dimension together: each worker runs "
                 "SQLite's join";
    return -1;
  }
  qd_dim *d = &P->qd->d[P->dim_of[br]];
  for (int a = 0; a < d->na; a++)
    if (!strcmp(d->attr[a], z)) {
      *attr = a;
      return P->dim_of[br];
    }
  char **na = sqlite3_realloc64(d->attr, sizeof(char *) * (size_t)(d->na + 1));
  if (!na) {
    P->qd->why = "out of memory";
    return -1;
  }
  d->attr = na;
  if (!(d->attr[d->na] = sqlite3_mprintf("%s", z))) {
    P->qd->why = "out of memory";
    return -1;
  }
  *attr = d->na++;
  return P->dim_of[br];
}

int ga_qd_plan(sqlite3 *db, const ga_qjoin *j, const ga_query *q, ga_qd **out) {
  ga_qd *qd = sqlite3_malloc64(sizeof(*qd));
  *out = qd;
  if (!qd)
    return SQLITE_NOMEM;
  memset(qd, 0, sizeof(*qd));
  const char *env = getenv("GPUAGG_DIM_PROBE");
  int enc = 0;
  if (env && !strcmp(env, "0")) {
    qd->why = "the probe path is off (GPUAGG_DIM_PROBE=0): each worker runs "
              "SQLite's join";
    return SQLITE_OK;
  }
  if (j->any_left || j->any_using || !j->reorder) {
    qd->why = "LEFT JOIN or USING: each worker runs SQLite's join (the probe "
              "path takes inner joins written with ON or WHERE)";
    return SQLITE_OK;
  }
  if (j->v[j->fact].idx_a >= 0) {
    qd->why = "the fact table has INDEXED BY or NOT INDEXED: each worker "
              "runs SQLite's join";
    return SQLITE_OK;
  }
  if (ga_db_encoding_of(db, &enc) != SQLITE_OK || enc != SQLITE_UTF8) {
    qd->why = "not a UTF-8 database: each worker runs SQLite's join";
    return SQLITE_OK;
  }
  pl P = {.db = db, .j = j, .qd = qd};
  int rc = SQLITE_OK;
  P.dim_of = sqlite3_malloc64(sizeof(int) * (size_t)j->n);
  qd->d = sqlite3_malloc64(sizeof(qd_dim) * (size_t)j->n);
  if (!P.dim_of || !qd->d) {
    sqlite3_free(P.dim_of);
    return SQLITE_NOMEM;
  }
  memset(qd->d, 0, sizeof(qd_dim) * (size_t)j->n);
  for (int o = 1; o < j->n; o++) { /* qjoin.c rule 5's order */
    int k = j->order[o];
    P.dim_of[k] = -1;
    if (j->v[k].parent == j->fact) {
      qd_dim *d = &qd->d[qd->n];
      d->tab = k;
      d->where = sqlite3_str_new(NULL);
      P.dim_of[k] = qd->n++;
    }
  }
  P.dim_of[j->fact] = -1;
  for (int o = 1; o < j->n; o++) { /* branches: their top's */
    int k = j->order[o];
    if (P.dim_of[k] < 0)
      P.dim_of[k] = P.dim_of[top_of(j, k)];
  }
  /* rule 1: the filter */
  const char *f = q->scan_filter ? q->scan_filter : q->filter;
  sqlite3_str *fact = sqlite3_str_new(NULL);
  if (f && *f) {
    txt x = {.z = f};
    if (ga_q_tokenize(f, &x.t, &x.n))
      qd->why = "the filter cannot be read again";
    else
      rc = conds(&P, &x, 0, x.n, fact);
    sqlite3_free(x.t);
  }
  if (sqlite3_str_length(fact))
    qd->fact_filter = sqlite3_str_finish(fact);
  else
    sqlite3_free(sqlite3_str_finish(fact));
  for (int k = 0; k < qd->n && !qd->why && rc == SQLITE_OK; k++)
    if (!qd->d[k].nk)
      qd->why = "a dimension joined without a key: each worker runs "
                "SQLite's join";
  /* rule 2 */
  qd->nkt = q->nkeys + q->ncarry;
  qd->nv = q->nvals;
  qd->ksub = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nkt + 1));
  qd->kattr = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nkt + 1));
  qd->vsub = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nv + 1));
  qd->vattr = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nv + 1));
  if (!qd->ksub || !qd->kattr || !qd->vsub || !qd->vattr)
    rc = SQLITE_NOMEM;
  for (int i = 0; i < qd->nkt && rc == SQLITE_OK && !qd->why; i++)
    qd->ksub[i] = text_sub(&P, q->keys[i], &qd->kattr[i]);
  for (int i = 0; i < qd->nv && rc == SQLITE_OK && !qd->why; i++)
    qd->vsub[i] = text_sub(&P, q->vals[i], &qd->vattr[i]);
  /* the build texts */
  for (int k = 0; k < qd->n && rc == SQLITE_OK && !qd->why; k++) {
    qd_dim *d = &qd->d[k];
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, "SELECT ");
    for (int c = 0; c < d->nk; c++)
      sqlite3_str_appendf(s, "%s%s", c ? ", " : "", d->dkey[c]);
    for (int a = 0; a < d->na; a++)
      sqlite3_str_appendf(s, ", (\n%s\n)", d->attr[a]);
    int first = 1;
    for (int o = 1; o < j->n; o++) {
      int t = j->order[o];
      if (P.dim_of[t] != k)
        continue;
      sqlite3_str_appendf(s, "%smain.\"%w\" AS \"%w\"", first ? " FROM " : ", ",
                          j->v[t].t.table, j->v[t].qual);
      first = 0;
    }
    char *w = sqlite3_str_finish(d->where);
    d->where = NULL;
    if (w && *w)
      sqlite3_str_appendf(s, " WHERE %s", w);
    sqlite3_free(w);
    if (!(d->sql = sqlite3_str_finish(s)))
      rc = SQLITE_NOMEM;
  }
  const ga_qj_tab *ft = &j->v[j->fact];
  if (rc == SQLITE_OK && !qd->why &&
      !(qd->fact_from = sqlite3_mprintf("main.\"%w\" AS \"%w\" NOT INDEXED",
                                        ft->t.table, ft->qual)))
    rc = SQLITE_NOMEM;
  sqlite3_free(P.dim_of);
  return rc;
}

/* ---- attach: the probe texts with the build's token ---- */

static void key_args(sqlite3_str *s, const qd_dim *d) {
  for (int c = 0; c < d->nk; c++)
    sqlite3_str_appendf(s, ", %s", d->fkey[c]);
}

static char *get_text(const ga_qd *qd, uint64_t tok, int dk, int a) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "gpuagg_dim_get(%lld, %d, %d", (long long)tok, dk, a);
  key_args(s, &qd->d[dk]);
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

int ga_qd_attach(const ga_qd *qd, const ga_target *t, const ga_parts *p,
                 const ga_parts *rows_parts, ga_plan *plan) {
  if (!qd || qd->why || !plan->parallel)
    return SQLITE_OK;
  ga_sd *sd = ga_sd_new(qd->n);
  if (!sd)
    return SQLITE_NOMEM;
  int rc = SQLITE_OK;
  int nkt = p->nkeys + p->ncarry;
  char **keys = sqlite3_malloc64(sizeof(char *) * (size_t)(nkt + 1));
  char **vals = sqlite3_malloc64(sizeof(char *) * (size_t)(p->nvals + 1));
  char *filter = NULL;
  if (!keys || !vals)
    rc = SQLITE_NOMEM;
  else {
    memset(keys, 0, sizeof(char *) * (size_t)(nkt + 1));
    memset(vals, 0, sizeof(char *) * (size_t)(p->nvals + 1));
  }
  for (int k = 0; k < qd->n && rc == SQLITE_OK; k++) {
    ga_sd_dim *x = &sd->d[k];
    const qd_dim *d = &qd->d[k];
    x->sql = sqlite3_mprintf("%s", d->sql);
    x->table = sqlite3_mprintf("%s", p->join_tables[d->tab]);
    x->nk = d->nk;
    x->na = d->na;
    for (int c = 0; c < d->nk; c++) {
      x->numeric[c] = d->numeric[c];
      x->coll[c] = d->coll[c];
    }
    if (!x->sql || !x->table)
      rc = SQLITE_NOMEM;
  }
  int same = nkt == qd->nkt && p->nvals == qd->nv;
  for (int i = 0; i < nkt && rc == SQLITE_OK; i++)
    if (same && qd->ksub[i] >= 0 &&
        !(keys[i] = get_text(qd, sd->token, qd->ksub[i], qd->kattr[i])))
      rc = SQLITE_NOMEM;
  for (int i = 0; i < p->nvals && rc == SQLITE_OK; i++)
    if (same && qd->vsub[i] >= 0 &&
        !(vals[i] = get_text(qd, sd->token, qd->vsub[i], qd->vattr[i])))
      rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK && !same)
    rc = SQLITE_DONE;    /* texts other than planned: keep SQLite's join */
  if (rc == SQLITE_OK) { /* rule 4 */
    sqlite3_str *s = sqlite3_str_new(NULL);
    if (qd->fact_filter)
      sqlite3_str_appendf(s, "%s", qd->fact_filter);
    for (int k = 0; k < qd->n; k++) {
      sqlite3_str_appendf(s, "%sgpuagg_dim_probe(%lld, %d",
                          sqlite3_str_length(s) ? " AND " : "",
                          (long long)sd->token, k);
      key_args(s, &qd->d[k]);
      sqlite3_str_appendall(s, ")");
    }
    if (!(filter = sqlite3_str_finish(s)))
      rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK) {
    const char **kk = sqlite3_malloc64(sizeof(char *) * (size_t)(nkt + 1));
    const char **cv = sqlite3_malloc64(sizeof(char *) * (size_t)(p->nvals + 1));
    if (!kk || !cv)
      rc = SQLITE_NOMEM;
    for (int i = 0; rc == SQLITE_OK && i < nkt; i++)
      kk[i] = keys[i] ? keys[i] : p->keys[i];
    for (int i = 0; rc == SQLITE_OK && i < p->nvals; i++)
      cv[i] = vals[i] ? vals[i] : p->vals[i];
    if (rc == SQLITE_OK) {
      ga_parts a = *p, b = *rows_parts;
      a.keys = b.keys = kk;
      a.vals = b.vals = cv;
      a.filter = b.filter = filter;
      a.join_from = b.join_from = qd->fact_from;
      sd->probe_piece = ga_sql_piece(t, &a, 0);
      sd->probe_rows = plan->sql_rows ? ga_sql_piece(t, &b, 1) : NULL;
      if (!sd->probe_piece || (plan->sql_rows && !sd->probe_rows))
        rc = SQLITE_NOMEM;
    }
    sqlite3_free(kk);
    sqlite3_free(cv);
  }
  for (int i = 0; keys && i < nkt; i++)
    sqlite3_free(keys[i]);
  for (int i = 0; vals && i < p->nvals; i++)
    sqlite3_free(vals[i]);
  sqlite3_free(keys);
  sqlite3_free(vals);
  sqlite3_free(filter);
  if (rc != SQLITE_OK) {
    ga_sd_free(sd);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  }
  sd->spec = &plan->spec;
  sd->join_piece = plan->sql_piece;
  sd->join_rows = plan->sql_rows;
  plan->spec.sql_piece = sd->probe_piece;
  plan->spec.sql_rows = sd->probe_rows;
  plan->spec.in_snapshot = ga_sd_build;
  plan->spec.in_snapshot_arg = sd;
  plan->dims = sd;
  return SQLITE_OK;
}
