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
**   4. The workers' filter: the fact conditions, then rule 5's ranges,
**      then one gpuagg_dim_probe per dimension (those with a filter first,
**      as qjoin.c rule 5 orders them): an inner join drops a fact row that
**      no dimension row matches.  GPUAGG_DIM_PROBE=0 turns the path off
**      (A/B).  Where the workers run SQLite's join instead (a reason here,
**      or the build's, engine/scan/dims.h rules 3, 4, 9 and 10), they run
**      one piece each: each piece builds SQLite's Bloom filters again.
**   5. A range per inner dimension of one key whose fact column has
**      INTEGER, REAL or NUMERIC affinity (or is the rowid): `fk BETWEEN lo
**      AND hi` after a marker comment that holds the build's token, its
**      numbers written by the build (engine/scan/dims.h rule 8) or the
**      whole replaced by `1`; the build reads the key column's min and
**      max over the whole table (span_sql) to judge it.
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
  int tab;        /* its table in the join */
  int left;       /* LEFT JOIN: no probe in the filter; NULL row's values */
  char *null_sql; /* LEFT JOIN: its attributes over no row */
  int nk;         /* keys */
  char *fkey[GA_SD_MAX_KEYS]; /* the fact side's text */
  char *dkey[GA_SD_MAX_KEYS]; /* the dimension side's text */
  int numeric[GA_SD_MAX_KEYS], coll[GA_SD_MAX_KEYS];
  int fnum;           /* rule 5: the fact side of key 1 has numeric affinity */
  int64_t trows;      /* dims.h rule 9: its table's rows (qjoin.c's count) */
  char *span_sql;     /* rule 5: the key column's min and max; NULL none */
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
  /* rule 2: each worker's text again, NULL: kept; the build's token goes
  ** at each offset of tok (TOKW digits, zeros now) */
  char **ktmpl, **vtmpl;
  int **ktok, **vtok;
  int *nktok, *nvtok;
  char *fact_filter; /* NULL: none; a template (ftok) */
  int *ftok, nftok;
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
    sqlite3_free(d->null_sql);
    sqlite3_free(d->span_sql);
  }
  sqlite3_free(qd->d);
  for (int i = 0; qd->ktmpl && i < qd->nkt; i++) {
    sqlite3_free(qd->ktmpl[i]);
    sqlite3_free(qd->ktok[i]);
  }
  for (int i = 0; qd->vtmpl && i < qd->nv; i++) {
    sqlite3_free(qd->vtmpl[i]);
    sqlite3_free(qd->vtok[i]);
  }
  sqlite3_free(qd->ktmpl);
  sqlite3_free(qd->ktok);
  sqlite3_free(qd->nktok);
  sqlite3_free(qd->vtmpl);
  sqlite3_free(qd->vtok);
  sqlite3_free(qd->nvtok);
  sqlite3_free(qd->fact_filter);
  sqlite3_free(qd->ftok);
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

/* The workers' filter's calls of gpuagg_dim_get on a LEFT JOIN's
** dimensions (its WHERE conditions on them): past it, SQLite's join. */
#define QD_MAX_FTOK 1024

/* A bare column [a, b): its list index c (-1: the fact's rowid, *fr). */
static int bare(const ga_qjoin *j, const txt *x, int a, int b, int *c,
                int *fr) {
  while (b - a >= 3 && op(x, a, "(") &&
         ga_qt_close(x->z, x->t, x->n, a) == b - 1)
    a++, b--;
  if (b - a != 1 && b - a != 3 && b - a != 5)
    return 0;
  /* t.c or s.t.c exactly: `1 + d.k` is no bare column (its last three
  ** tokens alone would read as d.k) */
  for (int i = a; i < b - 1; i += 2)
    if (!(x->t[i].type == GA_QT_ID || x->t[i].type == GA_QT_QID) ||
        !op(x, i + 1, "."))
      return 0;
  *c = ga_qj_col(j, x->z, x->t, x->n, b - 1, fr);
  return *c >= 0 || *fr;
}

/* ---- the plan ---- */

typedef struct pl {
  sqlite3 *db;
  const ga_qjoin *j;
  ga_qd *qd;
  int *dim_of; /* table -> index in qd->d, -1 */
  /* where the conditions come from: -1 WHERE, else the item whose ON (or
  ** USING) they are */
  int from;
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

/* Attribute index of text z in dimension d (added once). */
static int attr_of(pl *P, qd_dim *d, const char *z, int len) {
  for (int a = 0; a < d->na; a++)
    if ((int)strlen(d->attr[a]) == len && !memcmp(d->attr[a], z, (size_t)len))
      return a;
  char **na = sqlite3_realloc64(d->attr, sizeof(char *) * (size_t)(d->na + 1));
  if (!na || !(na[d->na] = sqlite3_mprintf("%.*s", len, z))) {
    if (na)
      d->attr = na;
    P->qd->why = "out of memory";
    return -1;
  }
  d->attr = na;
  return d->na++;
}

#define TOKW 19 /* the token's digits: leading zeros read as decimal */

/* gpuagg_dim_get(TOKEN, dk, a, fact keys) into s, the token's offset into
** tok[*ntok]. */
static void get_call(const ga_qd *qd, sqlite3_str *s, int dk, int a, int *tok,
                     int *ntok) {
  sqlite3_str_appendall(s, "gpuagg_dim_get(");
  tok[(*ntok)++] = sqlite3_str_length(s);
  sqlite3_str_appendf(s, "%0*d, %d, %d", TOKW, 0, dk, a);
  for (int c = 0; c < qd->d[dk].nk; c++)
    sqlite3_str_appendf(s, ", %s", qd->d[dk].fkey[c]);
  sqlite3_str_appendall(s, ")");
}

/* One AND-ed condition [a, b) of the workers' filter (rule 1). */
static int cond(pl *P, const txt *x, int a, int b, sqlite3_str *fact) {
  const ga_qjoin *j = P->j;
  ga_qd *qd = P->qd;
  uint64_t m = mask_of(j, x, a, b);
  uint64_t fbit = (uint64_t)1 << j->fact;
  int lf = P->from >= 0 && j->v[P->from].op == GA_QJ_LEFT;
  if (!(m & ~fbit) && lf) {
    qd->why = "a LEFT JOIN's ON condition reads the fact table alone: each "
              "worker runs SQLite's join";
    return SQLITE_OK;
  }
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
  if (br >= 0 && lf && br != P->from) {
    qd->why = "a LEFT JOIN's ON condition reads another dimension: each "
              "worker runs SQLite's join";
    return SQLITE_OK;
  }
  if (br >= 0 && P->from != br && qd->d[P->dim_of[br]].left) {
    /* WHERE over a LEFT JOIN's dimension: after the probe, in the worker,
    ** its value built (the NULL row's for a fact row it misses) */
    int dk = P->dim_of[br];
    int at = attr_of(P, &qd->d[dk], x->z + x->t[a].off,
                     x->t[b - 1].off + x->t[b - 1].len - x->t[a].off);
    if (at < 0)
      return SQLITE_NOMEM;
    if (qd->nftok >= QD_MAX_FTOK) { /* ftok's room: SQLite's join instead */
      qd->why = "the filter has too many conditions on a LEFT JOIN's "
                "dimension";
      return SQLITE_OK;
    }
    sqlite3_str_appendall(fact, sqlite3_str_length(fact) ? " AND " : "");
    get_call(qd, fact, dk, at, qd->ftok, &qd->nftok);
    return SQLITE_OK;
  }
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
  if (d->left && P->from != dtab) {
    qd->why = "a LEFT JOIN's dimension is joined outside its ON clause: "
              "each worker runs SQLite's join";
    return SQLITE_OK;
  }
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
  if (!k) /* rule 5: a fact column of INTEGER, REAL or NUMERIC affinity */
    d->fnum = fl ? ln : rn;
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
  if (ga_qt_top_or(x->z, x->t, x->n, a, b)) /* one condition: OR is loosest */
    return a >= b ? SQLITE_OK : cond(P, x, a, b, fact);
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

/* Rule 2's mixed texts: no comparison, collation or function but those
** whose value follows their arguments' values alone (affinity and
** collation are what a dimension's column loses in gpuagg_dim_get). */
static int value_only(const txt *x) {
  static const char *const bad_kw[] = {
      "IS",      "IN",   "BETWEEN", "LIKE",   "GLOB",   "MATCH", "REGEXP",
      "COLLATE", "CASE", "ESCAPE",  "SELECT", "EXISTS", NULL};
  static const char *const bad_op[] = {"=", "==", "!=", "<>", "<",
                                       ">", "<=", ">=", NULL};
  static const char *const fn_ok[] = {
      "abs",   "coalesce", "ifnull",    "round",   "length", "upper",
      "lower", "substr",   "substring", "typeof",  "cast",   "hex",
      "trim",  "ltrim",    "rtrim",     "replace", "sign",   NULL};
  for (int i = 0; i < x->n; i++) {
    for (int k = 0; bad_kw[k]; k++)
      if (kw(x, i, bad_kw[k]))
        return 0;
    for (int k = 0; bad_op[k]; k++)
      if (op(x, i, bad_op[k]))
        return 0;
    if ((x->t[i].type == GA_QT_ID || x->t[i].type == GA_QT_QID) &&
        op(x, i + 1, "(")) {
      int ok = 0;
      for (int k = 0; fn_ok[k] && !ok; k++)
        ok = kw(x, i, fn_ok[k]);
      if (!ok)
        return 0;
    }
  }
  return 1;
}

/* A worker's text (rule 2): NULL kept (*why may be set), else its template
** (*tok, *ntok: the token's offsets). */
static char *text_sub(pl *P, const char *z, int **tok, int *ntok) {
  const ga_qjoin *j = P->j;
  txt x = {.z = z};
  *tok = NULL;
  *ntok = 0;
  if (ga_q_tokenize(z, &x.t, &x.n)) {
    sqlite3_free(x.t);
    P->qd->why = "a text cannot be read again";
    return NULL;
  }
  uint64_t m = mask_of(j, &x, 0, x.n);
  uint64_t fbit = (uint64_t)1 << j->fact;
  int br = branch_of(j, m);
  char *r = NULL;
  if (!(m & ~fbit)) {
    sqlite3_free(x.t);
    return NULL;
  }
  if (!(*tok = sqlite3_malloc64(sizeof(int) * (size_t)(x.n + 1)))) {
    sqlite3_free(x.t);
    P->qd->why = "out of memory";
    return NULL;
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  if (br >= 0) { /* one branch: the whole text, built */
    int dk = P->dim_of[br];
    int a = attr_of(P, &P->qd->d[dk], z, (int)strlen(z));
    if (a >= 0)
      get_call(P->qd, s, dk, a, *tok, ntok);
  } else if (!value_only(&x)) {
    P->qd->why = "a group term, carried column or aggregate argument reads "
                 "the fact table and a dimension together with a comparison, "
                 "a collation or a function: each worker runs SQLite's join";
  } else { /* each dimension column read back */
    int at = 0;
    for (int i = 0; i < x.n && !P->qd->why; i++) {
      int fr = 0, c = ga_qj_col(j, z, x.t, x.n, i, &fr);
      if (fr || c < 0 || j->ctab[c] == j->fact)
        continue;
      int a0 = i;
      if (op(&x, i - 1, ".") && i >= 2)
        a0 = i - 2;
      if (a0 == i - 2 && op(&x, i - 3, ".") && i >= 4)
        a0 = i - 4;
      sqlite3_str_appendf(s, "%.*s", x.t[a0].off - at, z + at);
      int dk = P->dim_of[j->ctab[c]];
      char *ct = col_text(j, c, 0);
      int a = ct ? attr_of(P, &P->qd->d[dk], ct, (int)strlen(ct)) : -1;
      sqlite3_free(ct);
      if (a < 0) {
        P->qd->why = "out of memory";
        break;
      }
      get_call(P->qd, s, dk, a, *tok, ntok);
      at = x.t[i].off + x.t[i].len;
    }
    sqlite3_str_appendall(s, z + at);
  }
  r = sqlite3_str_finish(s);
  sqlite3_free(x.t);
  if (!r || P->qd->why) {
    if (!r && !P->qd->why)
      P->qd->why = "out of memory";
    sqlite3_free(r);
    sqlite3_free(*tok);
    *tok = NULL;
    *ntok = 0;
    return NULL;
  }
  return r;
}

int ga_qd_plan(sqlite3 *db, const ga_qjoin *j, const ga_query *q,
               const char *ztext, const ga_qtok *ztok, ga_qj_emit emit,
               void *ectx, ga_qd **out) {
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
  if (!j->reorder && j->fact != 0) {
    qd->why = "the fact table is not written first";
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
      d->trows = j->v[k].rows;
      d->where = sqlite3_str_new(NULL);
      P.dim_of[k] = qd->n++;
    }
  }
  P.dim_of[j->fact] = -1;
  P.from = -1;
  for (int k = 0; k < j->n && !qd->why; k++) { /* LEFT JOIN: a leaf */
    if (j->v[k].op != GA_QJ_LEFT)
      continue;
    int leaf = j->v[k].parent == j->fact;
    for (int u = 0; u < j->n; u++)
      leaf &= j->v[u].parent != k;
    if (!leaf)
      qd->why = "a LEFT JOIN's dimension is not joined to the fact table, or "
                "has tables beyond it: each worker runs SQLite's join";
    else
      qd->d[P.dim_of[k]].left = 1;
  }
  qd->ftok = sqlite3_malloc64(sizeof(int) * QD_MAX_FTOK);
  if (!qd->ftok) {
    sqlite3_free(P.dim_of);
    return SQLITE_NOMEM;
  }
  for (int o = 1; o < j->n; o++) { /* branches: their top's */
    int k = j->order[o];
    if (P.dim_of[k] < 0)
      P.dim_of[k] = P.dim_of[top_of(j, k)];
  }
  /* rule 1: the filter */
  const char *f = q->scan_filter ? q->scan_filter : q->filter;
  sqlite3_str *fact = sqlite3_str_new(NULL);
  /* rule 1: ON and USING, where qjoin.c rule 5 keeps them (LEFT JOIN) */
  for (int k = 0; k < j->n && !j->reorder && rc == SQLITE_OK && !qd->why; k++) {
    const ga_qj_tab *it = &j->v[k];
    P.from = k;
    if (it->on_a >= 0 && it->on_b > it->on_a) {
      sqlite3_str *on = sqlite3_str_new(NULL);
      emit(ectx, on, it->on_a, it->on_b, 2);
      char *z = sqlite3_str_finish(on);
      txt x = {.z = z};
      if (!z)
        rc = SQLITE_NOMEM;
      else if (ga_q_tokenize(z, &x.t, &x.n))
        qd->why = "an ON clause cannot be read again";
      else
        rc = conds(&P, &x, 0, x.n, fact);
      sqlite3_free(x.t);
      sqlite3_free(z);
    }
    for (int i = it->using_a;
         it->using_a >= 0 && i < it->using_b && rc == SQLITE_OK && !qd->why;
         i++) {
      /* USING (c): left.c = k.c, the leftmost earlier table with c (the
      ** left operand's collation, as SQLite compares them) */
      if (ztok[i].type != GA_QT_ID && ztok[i].type != GA_QT_QID)
        continue;
      char *c = ga_qt_name(ztext, &ztok[i]);
      int left = -1;
      for (int y = 0; c && y < k && left < 0; y++)
        for (int q2 = 0; q2 < j->v[y].t.ncols && left < 0; q2++)
          if (!sqlite3_stricmp(c, j->v[y].t.cols[q2]))
            left = y;
      char *e = c && left >= 0
                    ? sqlite3_mprintf("\"%w\".\"%w\" = \"%w\".\"%w\"",
                                      j->v[left].qual, c, it->qual, c)
                    : NULL;
      txt x = {.z = e};
      if (!c || (left >= 0 && !e))
        rc = SQLITE_NOMEM;
      else if (e && !ga_q_tokenize(e, &x.t, &x.n))
        rc = cond(&P, &x, 0, x.n, fact);
      else if (e)
        qd->why = "a USING clause cannot be read again";
      sqlite3_free(x.t);
      sqlite3_free(e);
      sqlite3_free(c);
    }
  }
  P.from = -1;
  if (f && *f) {
    txt x = {.z = f};
    if (ga_q_tokenize(f, &x.t, &x.n))
      qd->why = "the filter cannot be read again";
    else
      rc = conds(&P, &x, 0, x.n, fact);
    sqlite3_free(x.t);
  }
  P.from = -1;
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
  qd->ktmpl = sqlite3_malloc64(sizeof(char *) * (size_t)(qd->nkt + 1));
  qd->ktok = sqlite3_malloc64(sizeof(int *) * (size_t)(qd->nkt + 1));
  qd->nktok = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nkt + 1));
  qd->vtmpl = sqlite3_malloc64(sizeof(char *) * (size_t)(qd->nv + 1));
  qd->vtok = sqlite3_malloc64(sizeof(int *) * (size_t)(qd->nv + 1));
  qd->nvtok = sqlite3_malloc64(sizeof(int) * (size_t)(qd->nv + 1));
  if (!qd->ktmpl || !qd->ktok || !qd->nktok || !qd->vtmpl || !qd->vtok ||
      !qd->nvtok) {
    sqlite3_free(P.dim_of);
    return SQLITE_NOMEM;
  }
  memset(qd->ktmpl, 0, sizeof(char *) * (size_t)(qd->nkt + 1));
  memset(qd->ktok, 0, sizeof(int *) * (size_t)(qd->nkt + 1));
  memset(qd->vtmpl, 0, sizeof(char *) * (size_t)(qd->nv + 1));
  memset(qd->vtok, 0, sizeof(int *) * (size_t)(qd->nv + 1));
  for (int i = 0; i < qd->nkt && rc == SQLITE_OK && !qd->why; i++)
    qd->ktmpl[i] = text_sub(&P, q->keys[i], &qd->ktok[i], &qd->nktok[i]);
  for (int i = 0; i < qd->nv && rc == SQLITE_OK && !qd->why; i++)
    qd->vtmpl[i] = text_sub(&P, q->vals[i], &qd->vtok[i], &qd->nvtok[i]);
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
    if (rc == SQLITE_OK && d->nk == 1 && d->fnum && !d->left &&
        !(d->span_sql = sqlite3_mprintf(
              "SELECT min(%s), max(%s) FROM main.\"%w\" AS \"%w\"", d->dkey[0],
              d->dkey[0], j->v[d->tab].t.table, j->v[d->tab].qual)))
      rc = SQLITE_NOMEM;              /* rule 5 */
    if (d->left && rc == SQLITE_OK) { /* its attributes over no row */
      sqlite3_str *n = sqlite3_str_new(NULL);
      sqlite3_str_appendall(n, "SELECT NULL");
      for (int a = 0; a < d->na; a++)
        sqlite3_str_appendf(n, ", (\n%s\n)", d->attr[a]);
      sqlite3_str_appendf(n,
                          " FROM (SELECT 1) LEFT JOIN main.\"%w\" AS \"%w\" "
                          "ON 0",
                          j->v[d->tab].t.table, j->v[d->tab].qual);
      if (!(d->null_sql = sqlite3_str_finish(n)))
        rc = SQLITE_NOMEM;
    }
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

/* Template t with the token at its offsets (sqlite3_malloc'd). */
static char *with_token(const char *t, const int *off, int n, uint64_t tok) {
  char *r = sqlite3_mprintf("%s", t);
  char d[TOKW + 1];
  sqlite3_snprintf((int)sizeof d, d, "%0*lld", TOKW, (long long)tok);
  for (int i = 0; r && i < n; i++)
    memcpy(r + off[i], d, TOKW);
  return r;
}

int ga_qd_attach(const ga_qd *qd, const ga_target *t, const ga_parts *p,
                 const ga_parts *rows_parts, ga_plan *plan) {
  if (qd && qd->why && plan->parallel)
    plan->spec.large_pieces = 2; /* SQLite's join: one piece a worker */
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
    x->left = d->left;
    x->table_rows = d->trows; /* dims.h rule 9 */
    if (d->left && !(x->null_sql = sqlite3_mprintf("%s", d->null_sql)))
      rc = SQLITE_NOMEM;
    for (int c = 0; c < d->nk; c++) {
      x->numeric[c] = d->numeric[c];
      x->coll[c] = d->coll[c];
    }
    if (!x->sql || !x->table)
      rc = SQLITE_NOMEM;
    if (d->span_sql && rc == SQLITE_OK) { /* rule 5 */
      if (!(x->span_sql = sqlite3_mprintf("%s", d->span_sql)))
        rc = SQLITE_NOMEM;
      x->range_on = -1;
      sqlite3_snprintf((int)sizeof x->marker, x->marker,
                       "/*gpuagg_range %lld %d*/", (long long)sd->token, k);
    }
  }
  /* an ungrouped DISTINCT's one NULL key (ga_query_parts) reads no table */
  int keys_same = nkt == qd->nkt;
  for (int i = 0; i < nkt && rc == SQLITE_OK; i++)
    if (keys_same && qd->ktmpl[i] &&
        !(keys[i] =
              with_token(qd->ktmpl[i], qd->ktok[i], qd->nktok[i], sd->token)))
      rc = SQLITE_NOMEM;
    else if (!keys_same && strcmp(p->keys[i], "NULL"))
      rc = SQLITE_DONE; /* texts other than planned: keep SQLite's join */
  for (int i = 0; i < p->nvals && rc == SQLITE_OK; i++)
    if (p->nvals != qd->nv)
      rc = SQLITE_DONE;
    else if (qd->vtmpl[i] && !(vals[i] = with_token(qd->vtmpl[i], qd->vtok[i],
                                                    qd->nvtok[i], sd->token)))
      rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK) { /* rule 4 */
    sqlite3_str *s = sqlite3_str_new(NULL);
    char *ff = qd->fact_filter
                   ? with_token(qd->fact_filter, qd->ftok, qd->nftok, sd->token)
                   : NULL;
    if (ff)
      sqlite3_str_appendf(s, "%s", ff);
    else if (qd->fact_filter)
      rc = SQLITE_NOMEM;
    sqlite3_free(ff);
    for (int k = 0; k < qd->n; k++) { /* rule 5: the ranges first */
      ga_sd_dim *x = &sd->d[k];
      if (!x->span_sql)
        continue;
      sqlite3_str_appendf(s, "%s%s", sqlite3_str_length(s) ? " AND " : "",
                          x->marker);
      int at = sqlite3_str_length(s);
      sqlite3_str_appendf(s, "(%s BETWEEN ", qd->d[k].fkey[0]);
      x->range_lo = sqlite3_str_length(s) - at;
      sqlite3_str_appendf(s, "%20d AND %20d)", 1, 0);
      x->range_len = sqlite3_str_length(s) - at;
    }
    for (int k = 0; k < qd->n; k++) {
      if (qd->d[k].left)
        continue; /* a LEFT JOIN keeps the fact rows it misses */
      sqlite3_str_appendf(s, "%sgpuagg_dim_probe(%lld, %d",
                          sqlite3_str_length(s) ? " AND " : "",
                          (long long)sd->token, k);
      key_args(s, &qd->d[k]);
      sqlite3_str_appendall(s, ")");
    }
    int empty = sqlite3_str_length(s) == 0; /* LEFT JOINs alone */
    if (!(filter = sqlite3_str_finish(s)) && !empty)
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
    if (rc == SQLITE_DONE) /* SQLite's join: one piece a worker */
      plan->spec.large_pieces = 2;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  }
  sd->spec = &plan->spec;
  sd->fact_rows = plan->spec.est_rows; /* dims.h rule 9 */
  sd->join_piece = plan->sql_piece;
  sd->join_rows = plan->sql_rows;
  plan->spec.sql_piece = sd->probe_piece;
  plan->spec.sql_rows = sd->probe_rows;
  plan->spec.in_snapshot = ga_sd_build;
  plan->spec.in_snapshot_arg = sd;
  plan->dims = sd;
  return SQLITE_OK;
}
