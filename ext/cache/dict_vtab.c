/*
** dict_vtab.c — gpuagg_cache_dict(ptr): a TEXT dictionary of the column
** cache as rows, for the derived columns of planner/cache_derive.c.
**
** SQL interface (internal: its argument is a pointer only the planner
** binds, planner/cache_plan.h's ga_cdict_src):
**
**   SELECT code, <expression over v_text_binary ...> FROM gpuagg_cache_dict(?1)
**
** Rules:
**   1. Rows in code order: (code, the value) for each of the dictionary's
**      values, then (count, NULL): the expression's value for a NULL.
**   2. Every value column holds the same value; each is declared with one
**      affinity and one built-in collation, so the expression compares and
**      converts as it would over the source column.
**   3. Eponymous only, DIRECTONLY: nothing persists, and no trigger or
**      view can reach it.  Without its pointer it has no rows.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_fns.h"
#include "cache_plan.h"

static const char *const decl_aff[5] = {"", "TEXT", "NUMERIC", "INTEGER",
                                        "REAL"};

#define NVAL 15 /* 5 affinities x 3 collations */
#define COL_SRC (1 + NVAL)

typedef struct dict_cursor {
  sqlite3_vtab_cursor base;
  const ga_cdict_src *src;
  int64_t i, n;
} dict_cursor;

static int dict_connect(sqlite3 *db, void *aux, int argc,
                        const char *const *argv, sqlite3_vtab **pp,
                        char **err) {
  (void)aux, (void)argc, (void)argv, (void)err;
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(code INTEGER");
  for (int a = 0; a < 5; a++)
    for (int c = 0; c < 3; c++)
      sqlite3_str_appendf(s, ", v_%s_%s %s COLLATE %s", ga_cdict_aff[a],
                          ga_cdict_coll[c], decl_aff[a], ga_cdict_coll[c]);
  sqlite3_str_appendall(s, ", src HIDDEN)");
  char *sql = sqlite3_str_finish(s);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  sqlite3_vtab *vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  *pp = vt;
  return SQLITE_OK;
}

static int dict_disconnect(sqlite3_vtab *vt) {
  sqlite3_free(vt);
  return SQLITE_OK;
}

static int dict_best_index(sqlite3_vtab *vt, sqlite3_index_info *p) {
  (void)vt;
  for (int k = 0; k < p->nConstraint; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    if (c->iColumn == COL_SRC && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if (!c->usable)
        return SQLITE_CONSTRAINT;
      p->aConstraintUsage[k].argvIndex = 1;
      p->aConstraintUsage[k].omit = 1;
      p->idxNum = 1;
    }
  }
  p->estimatedCost = 1000;
  return SQLITE_OK;
}

static int dict_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **pp) {
  (void)vt;
  dict_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *pp = &c->base;
  return SQLITE_OK;
}

static int dict_close(sqlite3_vtab_cursor *pc) {
  sqlite3_free(pc);
  return SQLITE_OK;
}

static int dict_filter(sqlite3_vtab_cursor *pc, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv) {
  dict_cursor *c = (dict_cursor *)pc;
  (void)idxStr;
  c->src = idxNum == 1 && argc == 1
               ? sqlite3_value_pointer(argv[0], GA_CDICT_PTR)
               : NULL;
  c->i = 0;
  c->n = c->src ? ga_dict_count(c->src->d) + 1 : 0; /* rule 1 */
  return SQLITE_OK;
}

static int dict_next(sqlite3_vtab_cursor *pc) {
  ((dict_cursor *)pc)->i++;
  return SQLITE_OK;
}

static int dict_eof(sqlite3_vtab_cursor *pc) {
  dict_cursor *c = (dict_cursor *)pc;
  return c->i >= c->n;
}

static int dict_column(sqlite3_vtab_cursor *pc, sqlite3_context *ctx, int col) {
  dict_cursor *c = (dict_cursor *)pc;
  if (col == 0) {
    sqlite3_result_int64(ctx, c->i);
    return SQLITE_OK;
  }
  if (col == COL_SRC || c->i >= c->n - 1)
    return SQLITE_OK; /* NULL */
  const void *z;
  int n;
  ga_dict_value(c->src->d, (uint32_t)c->i, &z, &n);
  if (c->src->enc == SQLITE_UTF16LE)
    sqlite3_result_text16le(ctx, z, n, SQLITE_STATIC);
  else if (c->src->enc == SQLITE_UTF16BE)
    sqlite3_result_text16be(ctx, z, n, SQLITE_STATIC);
  else
    sqlite3_result_text(ctx, z, n, SQLITE_STATIC);
  return SQLITE_OK;
}

static int dict_rowid(sqlite3_vtab_cursor *pc, sqlite3_int64 *r) {
  *r = ((dict_cursor *)pc)->i;
  return SQLITE_OK;
}

const sqlite3_module ga_cdict_methods = {
    .iVersion = 1,
    .xConnect = dict_connect,
    .xBestIndex = dict_best_index,
    .xDisconnect = dict_disconnect,
    .xOpen = dict_open,
    .xClose = dict_close,
    .xFilter = dict_filter,
    .xNext = dict_next,
    .xEof = dict_eof,
    .xColumn = dict_column,
    .xRowid = dict_rowid,
};
