/*
** matadd_vtab.c — gpu_matadd, matrix addition as a virtual table.
**
** SQL interface:
**
**   SELECT i, j, v FROM gpu_matadd('a', 'b') [WHERE ...] [ORDER BY i, j];
**
**   CREATE VIRTUAL TABLE c USING gpu_matadd(a, b);
**   SELECT * FROM c;            -- reads the current a and b at every scan
**   DROP TABLE c;
**
**   SELECT gpu_matadd_info();   -- JSON: what the last scan did
**
** A matrix is any table or view with columns i, j (indices) and v (value),
** one row per entry; a missing entry counts as 0.
**
** Rules:
**   1. Arguments name tables or views: 'x', 'main.x', 'temp.x', '"odd name"'.
**      They are only ever used as quoted identifiers, never pasted into SQL,
**      so gpu_matadd('a', 'b; DROP TABLE a') is "no such table or view".
**      An unqualified name is looked up as SQLite does (temp, main, then
**      attached databases).
**   2. The output has columns i INTEGER, j INTEGER, v REAL, one row for every
**      coordinate present in a or in b, in ascending (i, j) order; an
**      ORDER BY i, j (or ORDER BY j under i = constant) costs no sort.
**      v = A[i,j] + B[i,j] in double precision.
**   3. Constraints =, <, <=, >, >= on i and j are pushed into the queries that
**      read a and b, so WHERE i = 3 reads one row band only.  SQLite still
**      checks them on the output (they are not omitted), so the pushdown only
**      ever has to select a superset; a value that is not numeric is not
**      pushed at all.
**   4. Errors are SQL errors starting "gpu_matadd:" that name the table and
**      the offending coordinate or column: no such table or view, a missing
**      column i, j or v, a duplicate (i, j) within one input, an index that
**      is negative or not an integer (an integral REAL such as 3.0 is
**      accepted), a v that is NULL, text or a blob, and a wrong number of
**      arguments.  Rows excluded by a pushed-down constraint are not read,
**      so they are not checked either.  Tables are named as written; an
**      empty name shows as ''.
**   5. The module is SQLITE_VTAB_DIRECTONLY: views and triggers (which may
**      come from an untrusted database file) cannot use it.
**   6. Computation is in engine/matadd/matadd.c: dense (CPU, or GPU row bands
*over
**      several streams) or sparse (sorted merge); see matadd.h.  The config
**      of the connection (gpuagg_config) is snapshot at the start of a scan.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <math.h>
#include <string.h>

#include "glue.h"
#include "matadd.h"
#include "matadd_vtab.h"

/* Columns of the virtual table. */
#define GA_MATADD_COL_I 0
#define GA_MATADD_COL_J 1
#define GA_MATADD_COL_V 2
#define GA_MATADD_COL_A 3 /* hidden: first argument */
#define GA_MATADD_COL_B 4 /* hidden: second argument */
/* Hidden columns 5..8 exist only to catch extra arguments with our own
** message instead of SQLite's "too many arguments". */
#define GA_MATADD_NCOL 9

#define GA_MATADD_SCHEMA                                                       \
  "CREATE TABLE x(i INTEGER, j INTEGER, v REAL, a HIDDEN, b HIDDEN, "          \
  "arg3 HIDDEN, arg4 HIDDEN, arg5 HIDDEN, arg6 HIDDEN)"

/* At most this many i/j constraints are pushed down (more add nothing). */
#define GA_MATADD_MAX_PUSH 8
/* A gpu_matadd table that reads (through others) itself would recurse
** without end; scans nested deeper than this are refused. */
#define GA_MATADD_MAX_DEPTH 16
/* idxNum of a plan without exactly two arguments (| how many were given). */
#define GA_MATADD_BADARGS 0x100

/* Per connection: the user data of the module and of gpu_matadd_info(). */
typedef struct ga_matadd_module {
  ga_conn *conn;
  int depth; /* scans of this connection now reading their inputs */
  /* the last scan, for gpu_matadd_info() */
  int path, bands, streams, fallback;
  int64_t rows_a, rows_b, rows_out_max, cells;
  char pushed[96];
} ga_matadd_module;

typedef struct ga_matadd_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  ga_matadd_module *mod;
  int is_fn;   /* 1: table-valued function, arguments in hidden columns */
  char *zArgA; /* persistent form: the two table names as written */
  char *zArgB;
} ga_matadd_vtab;

typedef struct ga_matadd_cursor {
  sqlite3_vtab_cursor base;
  ga_matadd_result res;
  sqlite3_int64 rowid;
  char *zA, *zB; /* the arguments of this scan, for the hidden columns */
} ga_matadd_cursor;

/* ---- xConnect / xCreate (one function: eponymous and creatable) ---- */

static int matadd_connect(sqlite3 *db, void *pAux, int argc,
                          const char *const *argv, sqlite3_vtab **ppVtab,
                          char **pzErr) {
  ga_matadd_vtab *vt = NULL;
  int rc;
  int is_fn = argc == 3 && sqlite3_stricmp(argv[0], argv[2]) == 0;

  *ppVtab = NULL;
  if (!is_fn && argc != 5) {
    *pzErr = sqlite3_mprintf(
        "gpu_matadd: expected 2 arguments (the tables to add), got %d",
        argc - 3);
    return SQLITE_ERROR;
  }
  rc = sqlite3_declare_vtab(db, GA_MATADD_SCHEMA);
  if (rc != SQLITE_OK) { /* interrupted or out of memory: SQLite's words */
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  /* rule 5 is a security promise: no SQLite that cannot keep it */
#ifndef SQLITE_VTAB_DIRECTONLY
#error "gpu_matadd needs SQLite 3.31+ headers (SQLITE_VTAB_DIRECTONLY)"
#endif
  rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("gpu_matadd: cannot restrict the table to "
                             "direct use (SQLite too old?)");
    return rc;
  }
  vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  vt->db = db;
  vt->mod = pAux;
  vt->is_fn = is_fn;
  if (!is_fn) {
    vt->zArgA = sqlite3_mprintf("%s", argv[3]);
    vt->zArgB = sqlite3_mprintf("%s", argv[4]);
    if (!vt->zArgA || !vt->zArgB) {
      rc = SQLITE_NOMEM;
      goto cleanup;
    }
  }
  *ppVtab = &vt->base;
  return SQLITE_OK;

cleanup:
  sqlite3_free(vt->zArgA);
  sqlite3_free(vt->zArgB);
  sqlite3_free(vt);
  return rc;
}

static int matadd_disconnect(sqlite3_vtab *pVtab) {
  ga_matadd_vtab *vt = (ga_matadd_vtab *)pVtab;
  sqlite3_free(vt->zArgA);
  sqlite3_free(vt->zArgB);
  sqlite3_free(vt);
  return SQLITE_OK;
}

/* ---- xBestIndex ---- */

/* The pushdown plan travels in idxStr as comma-separated tokens, one per
** argument after the table names: a column letter and an operator, e.g.
** "i=,j>=" (readable in EXPLAIN QUERY PLAN). */
static const char *matadd_op_text(int op) {
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ:
    return "=";
  case SQLITE_INDEX_CONSTRAINT_GT:
    return ">";
  case SQLITE_INDEX_CONSTRAINT_GE:
    return ">=";
  case SQLITE_INDEX_CONSTRAINT_LT:
    return "<";
  case SQLITE_INDEX_CONSTRAINT_LE:
    return "<=";
  default:
    return NULL;
  }
}

static int matadd_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *p) {
  ga_matadd_vtab *vt = (ga_matadd_vtab *)pVtab;
  int iArg[2] = {-1, -1}, maxHidden = -1, unusable = 0;
  int nArgv = 0, nPush = 0, eqI = 0, k;
  double cost = 1e6, rows = 1e6;
  sqlite3_str *idx;

  if (vt->is_fn) {
    for (k = 0; k < p->nConstraint; k++) {
      const struct sqlite3_index_constraint *c = &p->aConstraint[k];
      if (c->iColumn < GA_MATADD_COL_A || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
        continue;
      if (c->iColumn > maxHidden)
        maxHidden = c->iColumn;
      if (c->iColumn <= GA_MATADD_COL_B) {
        if (!c->usable)
          unusable = 1;
        else if (iArg[c->iColumn - GA_MATADD_COL_A] < 0)
          iArg[c->iColumn - GA_MATADD_COL_A] = k;
      }
    }
    /* A wrong argument count is reported by xFilter, not here: SQLite also
    ** asks about subsets of the constraints (for OR terms, say), and an
    ** error here would fail the whole statement.  The plan gets an enormous
    ** cost so that any plan with the arguments wins. */
    if (maxHidden != GA_MATADD_COL_B ||
        (!unusable && (iArg[0] < 0 || iArg[1] < 0))) {
      int got = maxHidden < 0 ? 0 : maxHidden - GA_MATADD_COL_A + 1;
      p->idxNum = GA_MATADD_BADARGS | got;
      p->estimatedCost = 1e300;
      p->estimatedRows = (sqlite3_int64)1 << 62;
      return SQLITE_OK;
    }
    /* Arguments that come from a table not yet scanned (a join): tell the
    ** planner to try another order. */
    if (iArg[0] < 0 || iArg[1] < 0)
      return SQLITE_CONSTRAINT;
    p->aConstraintUsage[iArg[0]].argvIndex = ++nArgv;
    p->aConstraintUsage[iArg[0]].omit = 1;
    p->aConstraintUsage[iArg[1]].argvIndex = ++nArgv;
    p->aConstraintUsage[iArg[1]].omit = 1;
  }

  idx = sqlite3_str_new(NULL);
  for (k = 0; k < p->nConstraint && nPush < GA_MATADD_MAX_PUSH; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    const char *op = matadd_op_text(c->op);
    if (!c->usable || !op ||
        (c->iColumn != GA_MATADD_COL_I && c->iColumn != GA_MATADD_COL_J))
      continue;
    p->aConstraintUsage[k].argvIndex = ++nArgv;
    p->aConstraintUsage[k].omit = 0; /* rule 3: SQLite re-checks */
    sqlite3_str_appendf(idx, "%s%c%s", nPush ? "," : "",
                        c->iColumn == GA_MATADD_COL_I ? 'i' : 'j', op);
    nPush++;
    if (c->iColumn == GA_MATADD_COL_I && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      eqI = 1;
      cost /= 1000, rows /= 1000;
    } else {
      cost /= c->iColumn == GA_MATADD_COL_I ? 4 : 2;
      rows /= c->iColumn == GA_MATADD_COL_I ? 4 : 2;
    }
  }
  if (sqlite3_str_errcode(idx)) {
    sqlite3_free(sqlite3_str_finish(idx));
    return SQLITE_NOMEM;
  }
  p->idxStr = sqlite3_str_finish(idx); /* NULL when empty */
  p->needToFreeIdxStr = 1;
  p->idxNum = vt->is_fn;

  /* Rule 2: rows come in (i, j) order, so ORDER BY i, ORDER BY i, j and,
  ** with i fixed by =, ORDER BY j (all ascending) need no sort. */
  if (p->nOrderBy > 0) {
    int ok = 1, first = 0;
    if (eqI && p->aOrderBy[0].iColumn == GA_MATADD_COL_J)
      first = 1;
    for (k = 0; k < p->nOrderBy && ok; k++) {
      int want = first    ? GA_MATADD_COL_J
                 : k == 0 ? GA_MATADD_COL_I
                          : GA_MATADD_COL_J;
      if (p->aOrderBy[k].desc || p->aOrderBy[k].iColumn != want)
        ok = 0;
      if (k >= (first ? 1 : 2))
        ok = 0;
    }
    p->orderByConsumed = ok;
  }
  p->estimatedCost = cost;
  p->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
  return SQLITE_OK;
}

/* ---- resolving table names ---- */

/* One identifier at *pz: "double", [bracket], `back` or 'single' quoted (a
** doubled quote inside stands for one), or bare up to the next '.'.
** Returns it (sqlite3_malloc'd), *pz past it; NULL on a syntax error or
** NOMEM (*nomem set). */
static char *matadd_ident(const char **pz, int *nomem) {
  const char *z = *pz;
  sqlite3_str *s = sqlite3_str_new(NULL);
  char q = 0, *out;
  if (*z == '"' || *z == '`' || *z == '\'')
    q = *z;
  if (*z == '[')
    q = ']';
  if (q) {
    for (z++;; z++) {
      if (!*z)
        goto bad;
      if (*z == q) {
        if (q != ']' && z[1] == q) {
          z++;
        } else {
          z++;
          break;
        }
      }
      sqlite3_str_appendchar(s, 1, *z);
    }
  } else {
    for (; *z && *z != '.'; z++)
      sqlite3_str_appendchar(s, 1, *z);
  }
  if (sqlite3_str_length(s) == 0)
    goto bad;
  *pz = z;
  out = sqlite3_str_finish(s);
  if (!out)
    *nomem = 1;
  return out;
bad:
  if (sqlite3_str_errcode(s) == SQLITE_NOMEM)
    *nomem = 1;
  sqlite3_free(sqlite3_str_finish(s));
  return NULL;
}

/* 1 when zDb names an attached database (main, temp, ...). */
static int matadd_is_schema(sqlite3 *db, const char *zDb, int *rc) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  *rc = sqlite3_prepare_v2(db,
                           "SELECT 1 FROM pragma_database_list "
                           "WHERE name = ?1 COLLATE NOCASE",
                           -1, &st, NULL);
  if (*rc == SQLITE_OK) {
    /* a failed bind must not read as "no such schema" */
    *rc = sqlite3_bind_text(st, 1, zDb, -1, SQLITE_STATIC);
    if (*rc == SQLITE_OK)
      found = sqlite3_step(st) == SQLITE_ROW;
    int frc = sqlite3_finalize(st);
    if (*rc == SQLITE_OK)
      *rc = frc;
  }
  return found;
}

/* A table name as messages show it: as written, or '' when empty (rule 4). */
static const char *matadd_shown(const char *zArg) {
  return zArg[0] ? zArg : "''";
}

/* One input as the scan sees it. */
typedef struct ga_matadd_src {
  const char *zArg; /* as the user wrote it, for messages */
  char *zSchema;    /* NULL: SQLite's search order */
  char *zTable;
} ga_matadd_src;

/* Split zArg into schema and table (rule 1) and check that the table or view
** exists with columns i, j and v.  Errors go to *pzErr. */
static int matadd_resolve(sqlite3 *db, ga_matadd_src *src, char **pzErr) {
  const char *z = src->zArg;
  char *p1 = NULL, *p2 = NULL;
  int nomem = 0, rc = SQLITE_OK, have[3] = {0, 0, 0};
  sqlite3_stmt *st = NULL;
  static const char *const names[3] = {"i", "j", "v"};

  while (*z == ' ')
    z++;
  p1 = matadd_ident(&z, &nomem);
  if (p1 && *z == '.') {
    z++;
    p2 = matadd_ident(&z, &nomem);
  }
  while (p1 && *z == ' ')
    z++;
  if (nomem) {
    rc = SQLITE_NOMEM;
    goto cleanup;
  }
  if (p1 && p2 && !*z && matadd_is_schema(db, p1, &rc)) {
    src->zSchema = p1;
    src->zTable = p2;
    p1 = p2 = NULL;
  } else if (p1 && !p2 && !*z) {
    src->zTable = p1;
    p1 = NULL;
  } else {
    /* Not a (schema.)name: take the whole text as the name of a table; if it
    ** exists with such a name, so be it. */
    src->zTable = sqlite3_mprintf("%s", src->zArg);
    if (!src->zTable)
      rc = SQLITE_NOMEM;
  }
  if (rc != SQLITE_OK)
    goto cleanup;

  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, ?2)", -1,
                          &st, NULL);
  if (rc != SQLITE_OK)
    goto cleanup;
  rc = sqlite3_bind_text(st, 1, src->zTable, -1, SQLITE_STATIC);
  if (rc == SQLITE_OK && src->zSchema)
    rc = sqlite3_bind_text(st, 2, src->zSchema, -1, SQLITE_STATIC);
  if (rc != SQLITE_OK) /* not "no such table": the lookup never ran */
    goto cleanup;
  int ncol = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    ncol++;
    for (int k = 0; k < 3; k++)
      if (name && sqlite3_stricmp(name, names[k]) == 0)
        have[k] = 1;
  }
  if (rc != SQLITE_DONE) {
    *pzErr = sqlite3_mprintf("gpu_matadd: table %s: %s",
                             matadd_shown(src->zArg), sqlite3_errmsg(db));
    if (rc != SQLITE_NOMEM)
      rc = SQLITE_ERROR; /* keep out-of-memory visible */
    goto cleanup;
  }
  rc = SQLITE_OK;
  if (ncol == 0) {
    *pzErr = sqlite3_mprintf("gpu_matadd: no such table or view: %s",
                             matadd_shown(src->zArg));
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  for (int k = 0; k < 3; k++) {
    if (!have[k]) {
      *pzErr = sqlite3_mprintf("gpu_matadd: table %s has no column %s",
                               matadd_shown(src->zArg), names[k]);
      rc = SQLITE_ERROR;
      goto cleanup;
    }
  }

cleanup:
  sqlite3_finalize(st);
  sqlite3_free(p1);
  sqlite3_free(p2);
  return rc;
}

/* ---- reading an input ---- */

/* A value of a row, as text for an error message. */
static char *matadd_render(sqlite3_stmt *st, int col) {
  switch (sqlite3_column_type(st, col)) {
  case SQLITE_INTEGER:
    return sqlite3_mprintf("%lld", (long long)sqlite3_column_int64(st, col));
  case SQLITE_FLOAT:
    return sqlite3_mprintf("%!.15g", sqlite3_column_double(st, col));
  case SQLITE_TEXT:
    return sqlite3_mprintf("'%.40q'", sqlite3_column_text(st, col));
  case SQLITE_BLOB:
    return sqlite3_mprintf("a blob");
  default:
    return sqlite3_mprintf("NULL");
  }
}

/* An index: an INTEGER >= 0, or a REAL holding such an integer exactly. */
static int matadd_index(sqlite3_stmt *st, int col, int64_t *out) {
  int t = sqlite3_column_type(st, col);
  if (t == SQLITE_INTEGER) {
    *out = sqlite3_column_int64(st, col);
    return *out >= 0;
  }
  if (t == SQLITE_FLOAT) {
    double d = sqlite3_column_double(st, col);
    /* 2^63 is the first double beyond int64. */
    if (!(d >= 0 && d < 9223372036854775808.0) || d != floor(d))
      return 0;
    *out = (int64_t)d;
    return 1;
  }
  return 0;
}

/* The pushed-down constraints: "i = ?1 AND j >= ?2", values bound later. */
typedef struct ga_matadd_push {
  int n;
  char col[GA_MATADD_MAX_PUSH];
  const char *op[GA_MATADD_MAX_PUSH];
  sqlite3_value *val[GA_MATADD_MAX_PUSH]; /* numeric copies */
} ga_matadd_push;

static void matadd_push_free(ga_matadd_push *p) {
  for (int k = 0; k < p->n; k++)
    sqlite3_value_free(p->val[k]);
  p->n = 0;
}

/* Decode idxStr and the constraint values; a value that is not numeric
** after numeric affinity is skipped (rule 3). */
static int matadd_push_parse(const char *idxStr, int argc, sqlite3_value **argv,
                             ga_matadd_push *p, char *summary,
                             size_t nsummary) {
  const char *z = idxStr;
  int k = 0;
  size_t used = 0;
  summary[0] = 0;
  while (z && *z && k < argc) {
    char col = *z++;
    const char *op;
    if (z[0] == '=')
      op = "=";
    else if (z[0] == '>' && z[1] == '=')
      op = ">=";
    else if (z[0] == '<' && z[1] == '=')
      op = "<=";
    else if (z[0] == '>')
      op = ">";
    else
      op = "<";
    z += strlen(op);
    if (*z == ',')
      z++;
    sqlite3_value *v = sqlite3_value_dup(argv[k++]);
    if (!v)
      return SQLITE_NOMEM;
    int t = sqlite3_value_numeric_type(v);
    if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) ||
        p->n >= GA_MATADD_MAX_PUSH) {
      sqlite3_value_free(v);
      continue;
    }
    p->col[p->n] = col;
    p->op[p->n] = op;
    p->val[p->n] = v;
    p->n++;
    if (used < nsummary) {
      sqlite3_snprintf((int)(nsummary - used), summary + used, "%s%c%s",
                       used ? "," : "", col, op);
      used = strlen(summary);
    }
  }
  return SQLITE_OK;
}

/* Read the rows of one input (within the pushed-down constraints) into
** `in`, checking indices and values (rule 4). */
static int matadd_read(sqlite3 *db, const ga_matadd_src *src,
                       const ga_matadd_push *push, ga_matadd_input *in,
                       char **pzErr) {
  sqlite3_str *sql = sqlite3_str_new(db);
  sqlite3_stmt *st = NULL;
  char *zSql = NULL, *ri = NULL, *rj = NULL, *rv = NULL;
  int rc, k;

  if (src->zSchema)
    sqlite3_str_appendf(sql, "SELECT i, j, v FROM \"%w\".\"%w\"", src->zSchema,
                        src->zTable);
  else
    sqlite3_str_appendf(sql, "SELECT i, j, v FROM \"%w\"", src->zTable);
  for (k = 0; k < push->n; k++)
    sqlite3_str_appendf(sql, "%s%c %s ?%d", k ? " AND " : " WHERE ",
                        push->col[k], push->op[k], k + 1);
  zSql = sqlite3_str_finish(sql);
  if (!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("gpu_matadd: reading table %s: %s",
                             matadd_shown(src->zArg), sqlite3_errmsg(db));
    goto cleanup;
  }
  for (k = 0; k < push->n; k++)
    if ((rc = sqlite3_bind_value(st, k + 1, push->val[k])) != SQLITE_OK) {
      /* an unbound bound would read no rows instead of failing */
      *pzErr = sqlite3_mprintf("gpu_matadd: reading table %s: %s", src->zArg,
                               sqlite3_errstr(rc));
      goto cleanup;
    }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t i, j;
    int tv = sqlite3_column_type(st, 2);
    if (!matadd_index(st, 0, &i) || !matadd_index(st, 1, &j)) {
      int badI = !matadd_index(st, 0, &i);
      ri = matadd_render(st, 0);
      rj = matadd_render(st, 1);
      if (ri && rj)
        *pzErr = sqlite3_mprintf(
            "gpu_matadd: table %s: row (i=%s, j=%s): %s must be a "
            "non-negative integer",
            matadd_shown(src->zArg), ri, rj, badI ? "i" : "j");
      rc = ri && rj ? SQLITE_ERROR : SQLITE_NOMEM;
      goto cleanup;
    }
    if (tv != SQLITE_INTEGER && tv != SQLITE_FLOAT) {
      rv = matadd_render(st, 2);
      if (rv)
        *pzErr = sqlite3_mprintf(
            "gpu_matadd: table %s: entry (%lld, %lld): v %s%s%s",
            matadd_shown(src->zArg), (long long)i, (long long)j,
            tv == SQLITE_NULL ? "is NULL" : "is not numeric (",
            tv == SQLITE_NULL ? "" : rv, tv == SQLITE_NULL ? "" : ")");
      rc = rv ? SQLITE_ERROR : SQLITE_NOMEM;
      goto cleanup;
    }
    /* An INTEGER v is converted to double here, as the sum is a double. */
    if (ga_matadd_input_push(in, i, j, sqlite3_column_double(st, 2)) !=
        SQLITE_OK) {
      rc = SQLITE_NOMEM;
      goto cleanup;
    }
  }
  if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  } else {
    *pzErr = sqlite3_mprintf("gpu_matadd: reading table %s: %s",
                             matadd_shown(src->zArg), sqlite3_errmsg(db));
  }

cleanup:
  sqlite3_finalize(st);
  sqlite3_free(zSql);
  sqlite3_free(ri);
  sqlite3_free(rj);
  sqlite3_free(rv);
  return rc;
}

/* ---- cursor ---- */

static int matadd_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  ga_matadd_cursor *cur = sqlite3_malloc(sizeof(*cur));
  (void)pVtab;
  if (!cur)
    return SQLITE_NOMEM;
  memset(cur, 0, sizeof(*cur));
  cur->res.eof = 1;
  *ppCur = &cur->base;
  return SQLITE_OK;
}

static void matadd_cursor_reset(ga_matadd_cursor *cur) {
  ga_matadd_result_free(&cur->res);
  cur->res.eof = 1;
  sqlite3_free(cur->zA);
  sqlite3_free(cur->zB);
  cur->zA = cur->zB = NULL;
  cur->rowid = 0;
}

static int matadd_close(sqlite3_vtab_cursor *pCur) {
  ga_matadd_cursor *cur = (ga_matadd_cursor *)pCur;
  matadd_cursor_reset(cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int matadd_filter(sqlite3_vtab_cursor *pCur, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv) {
  ga_matadd_cursor *cur = (ga_matadd_cursor *)pCur;
  ga_matadd_vtab *vt = (ga_matadd_vtab *)pCur->pVtab;
  ga_matadd_module *mod = vt->mod;
  ga_matadd_src src[2];
  ga_matadd_input in[2];
  ga_matadd_push push;
  ga_matadd_dup dup;
  ga_config cfg;
  char *zErr = NULL;
  int rc = SQLITE_OK, k, nArgs = idxNum == 1 ? 2 : 0, entered = 0;

  memset(src, 0, sizeof(src));
  memset(in, 0, sizeof(in));
  memset(&push, 0, sizeof(push));
  matadd_cursor_reset(cur);
  /* Snapshot: a gpuagg_config() call during the scan must not change it. */
  cfg = mod->conn->cfg;

  if (idxNum & GA_MATADD_BADARGS) {
    zErr = sqlite3_mprintf("gpu_matadd: expected 2 arguments (the tables to "
                           "add), got %d",
                           idxNum & 0xff);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if (nArgs) {
    if (argc < 2) {
      rc = SQLITE_ERROR; /* cannot happen: xBestIndex asked for both */
      goto cleanup;
    }
    for (k = 0; k < 2; k++) {
      const unsigned char *z = sqlite3_value_text(argv[k]);
      if (sqlite3_value_type(argv[k]) != SQLITE_TEXT || !z) {
        zErr = sqlite3_mprintf("gpu_matadd: argument %d must be a table "
                               "name (text)",
                               k + 1);
        rc = SQLITE_ERROR;
        goto cleanup;
      }
    }
    cur->zA = sqlite3_mprintf("%s", sqlite3_value_text(argv[0]));
    cur->zB = sqlite3_mprintf("%s", sqlite3_value_text(argv[1]));
  } else {
    cur->zA = sqlite3_mprintf("%s", vt->zArgA);
    cur->zB = sqlite3_mprintf("%s", vt->zArgB);
  }
  if (!cur->zA || !cur->zB) {
    rc = SQLITE_NOMEM;
    goto cleanup;
  }
  src[0].zArg = cur->zA;
  src[1].zArg = cur->zB;

  if (mod->depth >= GA_MATADD_MAX_DEPTH) {
    zErr = sqlite3_mprintf("gpu_matadd: gpu_matadd tables nested more than "
                           "%d deep (does one read itself?)",
                           GA_MATADD_MAX_DEPTH);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  mod->depth++;
  entered = 1;

  rc = matadd_push_parse(idxStr, argc - nArgs, argv + nArgs, &push, mod->pushed,
                         sizeof(mod->pushed));
  if (rc != SQLITE_OK)
    goto cleanup;
  for (k = 0; k < 2; k++)
    if ((rc = matadd_resolve(vt->db, &src[k], &zErr)) != SQLITE_OK)
      goto cleanup;
  for (k = 0; k < 2; k++)
    if ((rc = matadd_read(vt->db, &src[k], &push, &in[k], &zErr)) != SQLITE_OK)
      goto cleanup;

  mod->rows_a = in[0].n;
  mod->rows_b = in[1].n;
  rc = ga_matadd_compute(&in[0], &in[1], &cfg, &cur->res, &dup);
  mod->fallback = cur->res.fallback;
  if (rc == GA_MATADD_DUPLICATE) {
    zErr = sqlite3_mprintf("gpu_matadd: table %s: duplicate entry (%lld, "
                           "%lld)",
                           matadd_shown(src[dup.which].zArg), (long long)dup.i,
                           (long long)dup.j);
    rc = SQLITE_ERROR;
    goto cleanup;
  }
  if (rc != SQLITE_OK)
    goto cleanup;
  mod->path = cur->res.path;
  mod->bands = cur->res.bands;
  mod->streams = cur->res.streams;
  mod->cells = cur->res.rows * cur->res.cols;
  ga_matadd_result_next(&cur->res);

cleanup:
  if (entered)
    mod->depth--;
  for (k = 0; k < 2; k++) {
    ga_matadd_input_free(&in[k]);
    sqlite3_free(src[k].zSchema);
    sqlite3_free(src[k].zTable);
  }
  matadd_push_free(&push);
  if (rc != SQLITE_OK) {
    matadd_cursor_reset(cur);
    if (zErr) {
      sqlite3_free(pCur->pVtab->zErrMsg);
      pCur->pVtab->zErrMsg = zErr;
    }
  }
  return rc;
}

static int matadd_next(sqlite3_vtab_cursor *pCur) {
  ga_matadd_cursor *cur = (ga_matadd_cursor *)pCur;
  ga_matadd_result_next(&cur->res);
  cur->rowid++;
  return SQLITE_OK;
}

static int matadd_eof(sqlite3_vtab_cursor *pCur) {
  return ((ga_matadd_cursor *)pCur)->res.eof;
}

static int matadd_column(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx,
                         int col) {
  ga_matadd_cursor *cur = (ga_matadd_cursor *)pCur;
  switch (col) {
  case GA_MATADD_COL_I:
    sqlite3_result_int64(ctx, cur->res.i);
    break;
  case GA_MATADD_COL_J:
    sqlite3_result_int64(ctx, cur->res.j);
    break;
  case GA_MATADD_COL_V:
    sqlite3_result_double(ctx, cur->res.v);
    break;
  case GA_MATADD_COL_A:
    sqlite3_result_text(ctx, cur->zA, -1, SQLITE_TRANSIENT);
    break;
  case GA_MATADD_COL_B:
    sqlite3_result_text(ctx, cur->zB, -1, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
  return SQLITE_OK;
}

static int matadd_rowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid) {
  *pRowid = ((ga_matadd_cursor *)pCur)->rowid;
  return SQLITE_OK;
}

/* Designated initialisers: the struct grows with SQLite versions. */
const sqlite3_module ga_matadd_methods = {
    .iVersion = 0,
    .xCreate = matadd_connect, /* = xConnect: eponymous and creatable */
    .xConnect = matadd_connect,
    .xBestIndex = matadd_best_index,
    .xDisconnect = matadd_disconnect,
    .xDestroy = matadd_disconnect, /* nothing is stored */
    .xOpen = matadd_open,
    .xClose = matadd_close,
    .xFilter = matadd_filter,
    .xNext = matadd_next,
    .xEof = matadd_eof,
    .xColumn = matadd_column,
    .xRowid = matadd_rowid,
};

/* gpu_matadd_info(): the last scan of this connection, as JSON (the
** module's data; none before the module is made, or after it went). */
void ga_matadd_info_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_matadd_module *m = ((ga_fn_data *)sqlite3_user_data(ctx))->conn->matadd;
  char *z;
  (void)argc, (void)argv;
  if (!m) {
    sqlite3_result_null(ctx);
    return;
  }
  z = sqlite3_mprintf(
      "{\"path\":\"%s\",\"rows_a\":%lld,\"rows_b\":%lld,"
      "\"rows_read\":%lld,\"cells\":%lld,\"bands\":%d,\"streams\":%d,"
      "\"fallback\":%d,\"pushed\":\"%s\"}",
      ga_matadd_path_name(m->path), (long long)m->rows_a, (long long)m->rows_b,
      (long long)(m->rows_a + m->rows_b), (long long)m->cells, m->bands,
      m->streams, m->fallback, m->pushed);
  if (!z) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* The module owns m and a reference to the connection's ga_conn. */
void ga_matadd_data_free(void *p) {
  ga_matadd_module *m = p;
  if (m->conn->matadd == m)
    m->conn->matadd = NULL;
  ga_conn_unref(m->conn);
  sqlite3_free(m);
}

void *ga_matadd_data_new(ga_conn *conn) {
  ga_matadd_module *m = ga_conn_data_new(conn, sizeof(*m));
  if (m)
    conn->matadd = m; /* gpu_matadd_info reads it there */
  return m;
}
