/*
** partial_fns.c — one gpu_query text over many database files: each file's
** merged groups as a BLOB (a partial), partials merged, and the last one
** finished by gpu_query itself.  gpuagg.dask runs these on a cluster
** (pkg/python/gpuagg/dask.py); any shell can too (docs/gpu_query.md, "Many
** files").
**
** SQL interface:
**
**   gpu_query_partial(text, p1, p2, ...)  BLOB: text's groups over its table
**       on this connection: per group the keys, the columns carried with
**       it and one exact state per distinct aggregate argument
**       (engine/scan/qpartial.h); p1... bind the text's parameters in
**       order (fewer: NULL).
**   gpu_query_merge(a, b, ...)  BLOB: the partials merged, in argument
**       order, as one partial of every row they cover.
**   gpu_query_partial_info(a)  TEXT: JSON {"table", "columns", "indexes"
**       (the fact's, for a join), "tables" (every table, the fact first:
**       "table", "columns", "indexes"), "create" (every table's and its
**       indexes' declarations), "encoding", "groups", "rows", "keys",
**       "carried", "values", "params", "bytes"}: its header only.
**   SELECT * FROM q(p1, ..., pn) WHERE gpuagg_partial = a
**       gpu_query's table q (query_vtab.c rule 9) answers from partial a
**       instead of its table: the select list, HAVING, ORDER BY and LIMIT
**       over a's groups.  The database needs only the table's declaration
**       ("create" of the info), no rows.
**
** Rules:
**   1. The contract: gpu_query over the last partial of files F1..Fn,
**      merged in that order, gives the rows that gpu_query gives over one
**      table holding F1's rows, then F2's, ... in rowid order: values and
**      typeof.  Where it leaves a choice (a group's representative, equal
**      INTEGER and REAL in min/max), the earliest file wins, then the
**      first row in its rowid order (qpartial.h rule 2).  States are exact,
**      so the merge order changes nothing else.
**   2. A partial is computed by the parallel scan (planner/path.c), with
**      one worker at least and no minimum of rows; where that scan cannot
**      serve the text on this connection (an open transaction, a TEMP
**      table, an application function, ...) the call fails with the reason,
**      since the serial path has no groups to give.  The column cache is
**      not read: its groups do not keep the key collations a merge needs.
**   3. A partial records what it was computed for: the text's parts (keys,
**      carried columns, aggregate arguments, filter), the parameter values,
**      the key collations and the database encoding.  Merging or finishing
**      partials that differ in any of these is an error naming the
**      argument, as is a column declared with another type or collation in
**      one of them, or another table.  Finishing checks the same, with the
**      same function (mismatch), against what a partial of the text would
**      record on the finishing connection (issue 36, defect 8).  Columns
**      that only some files have are kept.
**   4. Memory and time: a merge's or a finish's groups are capped by
**      group_bytes (gpuagg_config), charged as each group is decoded, a
**      partial by SQLITE_LIMIT_LENGTH; past either, an error that says
**      which.  The caller's interrupt and progress handler are polled
**      while a header's columns and indexes are read and while groups are
**      decoded and encoded, gpu_query_partial's too (ext/common/intr.c),
**      which ends the call with SQLITE_INTERRUPT (issue 36, defect 12).
**      A header costs n log n in its names at most: at most 32767 columns
**      (SQLite's hard limit), each name found by a sorted index of names
**      that mismatch and merge_columns share (qpartial.h rule 4).
**   5. Errors start with the function's name.  A partial whose header's
**      rows differ from its groups' rows, or whose rows pass 2^63, is
**      damaged (qpartial.h rule 3; issue 36, defect 14).
**   6. No text of the file reaches SQL elsewhere (issue 36): the header
**      carries a declared type as it is only when it is a plain type name,
**      else its affinity's name (engine/scan/qschema.h rule 1); a column
**      of a collation other than BINARY, NOCASE or RTRIM (an
**      application's) is left out of the header, where it is written and
**      where a partial is finished alike (no text that reads it runs in
**      parallel: planner/path.c rule 7); an index as rebuilt from its
**      parts (table, columns, their collations and order, UNIQUE), never
**      its CREATE text, and none over an expression, partial, of another
**      collation or of more columns than the header's (a column repeated)
**      (INDEXED BY naming one fails where the partial is finished: "no
**      such index").  The reader
**      checks all of it again (qpartial.h rule 4).  gpu_query_partial_info
**      gives the parts ("columns", "indexes") and "create", which is made
**      of the checked parts and quoted names only.
**   7. Across processes (issue 37): gpuagg_config('partial_now', MS) is the
**      statement time the workers pin for date and time functions over
**      columns (planner/path.c rule 6), in place of this connection's, so
**      that every file's partial reads one time; a text whose parts may
**      apply 'localtime' or 'utc' is then refused (each process has its
**      own TZ).  gpuagg_config('partial_check', 1) makes the call plan only
**      (the parse, the path, the workers compiling their texts): NULL, or
**      the error the partial would give (gpuagg.dask runs it on the first
**      file before any task starts).
**   8. Joins (issue 38; planner/qjoin.c rule 8): a file's partial is the
**      join within that file, its fact's rows joined to its own
**      dimensions.  The text names the fact (every file and the finishing
**      database choose the same one).  The header carries every table of
**      the join (qpartial.h rule 7): the fact as one table's, then each
**      dimension's columns and indexes by rule 6's forms and checks.
**      Merging and finishing check every table as rule 3 checks the fact
**      (the same tables; the columns both declare, declared alike: an
**      error naming the argument and the table), and keep each table's
**      columns that only some files have.  "create" declares every table;
**      an index whose name an earlier index or a table of the partial has
**      is left out (one database holds one of each name).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "partial_fns.h"
#include "qpartial.h"
#include "qschema.h"
#include "query_scan.h"

/* ---- rule 3: what a partial was computed for ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

static uint64_t fnv_str(uint64_t h, const char *z) {
  h = fnv(h, z ? z : "", z ? strlen(z) : 0);
  return fnv(h, "", 1); /* a separator: ("ab","c") differs from ("a","bc") */
}

uint64_t ga_query_sig(const ga_query *q, sqlite3_value *const *params, int np) {
  uint64_t h = 0xcbf29ce484222325ULL;
  int dims[4] = {q->nkeys, q->ncarry, q->nvals, q->nparams};
  h = fnv(h, "gpuagg partial 1", 16);
  h = fnv(h, dims, sizeof dims);
  for (int i = 0; i < q->nkeys + q->ncarry; i++)
    h = fnv_str(h, q->keys[i]);
  for (int i = 0; i < q->nvals; i++)
    h = fnv_str(h, q->vals[i]);
  h = fnv_str(h, q->filter);
  h = fnv_str(h, q->has_alias ? q->qual : "");
  for (int i = 0; i < q->nparams; i++) {
    sqlite3_value *v = i < np ? params[i] : NULL;
    int t = v ? sqlite3_value_type(v) : SQLITE_NULL;
    h = fnv(h, &t, sizeof t);
    if (t == SQLITE_INTEGER) {
      sqlite3_int64 x = sqlite3_value_int64(v);
      h = fnv(h, &x, sizeof x);
    } else if (t == SQLITE_FLOAT) {
      double x = sqlite3_value_double(v);
      h = fnv(h, &x, sizeof x);
    } else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
      const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_value_text(v)
                                       : sqlite3_value_blob(v);
      int n = sqlite3_value_bytes(v);
      h = fnv(h, &n, sizeof n);
      if (p && n)
        h = fnv(h, p, (size_t)n);
    }
  }
  return h;
}

/* SQLite's name of an encoding. */
static const char *enc_name(int enc) {
  return enc == SQLITE_UTF16LE   ? "UTF-16le"
         : enc == SQLITE_UTF16BE ? "UTF-16be"
                                 : "UTF-8";
}

/* "gpu_query: msg" as "<fn>: msg". */
static void result_error(sqlite3_context *ctx, const char *fn, char *err) {
  const char *m = err ? err : "out of memory";
  if (!strncmp(m, "gpu_query: ", 11))
    m += 11;
  char *e = sqlite3_mprintf("%s: %s", fn, m);
  if (e)
    sqlite3_result_error(ctx, e, -1);
  else
    sqlite3_result_error_nomem(ctx);
  sqlite3_free(e);
  sqlite3_free(err);
}

static void result_code(sqlite3_context *ctx, int rc) {
  if ((rc & 0xff) == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_error_code(ctx, rc);
}

/* ---- gpu_query_partial ---- */

/* The table's columns as declared (rule 3), and which is the rowid: a
** declared type as it is when plain, else its affinity's name, and a
** collation of SQLite's own (rule 6).  A column of an application's
** collation is left out: no text that names it runs in parallel
** (planner/path.c rule 7), and the finish leaves it out alike (here_head
** calls this too). */
static int head_columns(sqlite3 *db, const ga_target *t, ga_qpart_head *h) {
  int npk = 0, alias = -1;
  h->cols = sqlite3_malloc64(sizeof(*h->cols) * (size_t)(t->ncols + 1));
  if (!h->cols)
    return SQLITE_NOMEM;
  memset(h->cols, 0, sizeof(*h->cols) * (size_t)(t->ncols + 1));
  for (int i = 0; i < t->ncols; i++) {
    const char *type = NULL, *coll = NULL;
    int pk = 0;
    int rc =
        ga_column_meta(db, t->schema, t->table, t->cols[i], &type, &coll, &pk);
    if (rc != SQLITE_OK)
      return rc;
    npk += pk != 0; /* of the table, whether carried or not */
    const char *known = ga_qs_coll(coll ? coll : "BINARY");
    if (!known)
      continue; /* an application's collation: left out */
    ga_qpart_col *c = &h->cols[h->ncols++];
    c->name = sqlite3_mprintf("%s", t->cols[i]);
    c->type = sqlite3_mprintf("%s", ga_qs_type_safe(type));
    c->coll = sqlite3_mprintf("%s", known);
    if (!c->name || !c->type || !c->coll)
      return SQLITE_NOMEM;
    if (pk && type && !sqlite3_stricmp(type, "INTEGER"))
      alias = h->ncols - 1;
    c->wpk = pk && t->without_rowid; /* rule 8: its PRIMARY KEY */
  }
  /* one INTEGER PRIMARY KEY column of a rowid table: the rowid (the DESC
  ** exception of SQLite's lang_createtable aside) */
  if (npk == 1 && alias >= 0 && !t->without_rowid)
    h->cols[alias].rowid = 1;
  return SQLITE_OK;
}

/* Index idx's parts (rule 6): *x, or x->ncol 0 where it has an expression
** or a collation of its own, or is partial (its WHERE). */
static int index_parts(sqlite3 *db, const ga_target *t, const char *idx,
                       int unique, ga_qs_index *x) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
                              "SELECT cid, name, desc, coll FROM "
                              "pragma_index_xinfo(?1, ?2) WHERE key ORDER BY "
                              "seqno",
                              -1, &st, NULL);
  memset(x, 0, sizeof(*x));
  x->unique = unique;
  x->name = sqlite3_mprintf("%s", idx);
  x->table = sqlite3_mprintf("%s", t->table);
  if (rc == SQLITE_OK && (!x->name || !x->table))
    rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(st, 1, idx, -1, SQLITE_STATIC);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  int skip = 0, cap = 0;
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 1);
    const char *coll = ga_qs_coll((const char *)sqlite3_column_text(st, 3));
    if (sqlite3_column_int(st, 0) < 0 || !name || !coll) {
      skip = 1; /* an expression, or a collation of the application's */
      continue;
    }
    if (x->ncol == cap) {
      cap = cap ? 2 * cap : 8;
      char **c = sqlite3_realloc64(x->col, sizeof(*c) * (size_t)cap);
      if (c)
        x->col = c;
      const char **k =
          sqlite3_realloc64((void *)x->coll, sizeof(*k) * (size_t)cap);
      if (k)
        x->coll = k;
      int *d = sqlite3_realloc64(x->desc, sizeof(*d) * (size_t)cap);
      if (d)
        x->desc = d;
      if (!c || !k || !d) {
        rc = SQLITE_NOMEM;
        break;
      }
    }
    x->coll[x->ncol] = coll;
    x->desc[x->ncol] = sqlite3_column_int(st, 2) != 0;
    if (!(x->col[x->ncol++] = sqlite3_mprintf("%s", name)))
      rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_finalize(st);
  else
    sqlite3_finalize(st);
  if (skip)
    ga_qs_index_free(x); /* x->ncol 0: left out */
  return rc;
}

/* The table's indexes, for INDEXED BY where the partial is finished: each
** rebuilt from its parts (rule 6), never its CREATE text; an index over
** an expression, partial, or of an application's collation is left out. */
static int head_indexes(sqlite3 *db, const ga_target *t, ga_qpart_head *h) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
                              "SELECT name, \"unique\", partial FROM "
                              "pragma_index_list(?1, ?2) WHERE origin = 'c' "
                              "ORDER BY name",
                              -1, &st, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    ga_qs_index x;
    if (sqlite3_column_int(st, 2)) /* partial: its WHERE is text */
      continue;
    rc = index_parts(db, t, (const char *)sqlite3_column_text(st, 0),
                     sqlite3_column_int(st, 1), &x);
    if (x.ncol > h->ncols) /* a column repeated: more than the reader takes
                              (qpartial.h rule 4) */
      ga_qs_index_free(&x);
    char *text = rc == SQLITE_OK && x.ncol ? ga_qs_index_text(&x) : NULL;
    if (rc == SQLITE_OK && x.ncol && !text)
      rc = SQLITE_NOMEM;
    if (text) {
      ga_qpart_idx *v =
          sqlite3_realloc64(h->idx, sizeof(*v) * (size_t)(h->nidx + 1));
      if (!v)
        rc = SQLITE_NOMEM;
      else {
        h->idx = v;
        v[h->nidx].name = sqlite3_mprintf("%s", x.name);
        v[h->nidx].sql = text;
        text = NULL;
        if (!v[h->nidx++].name)
          rc = SQLITE_NOMEM;
      }
    }
    sqlite3_free(text);
    ga_qs_index_free(&x);
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_finalize(st);
  else
    sqlite3_finalize(st);
  return rc;
}

/* Rule 8: a join's other tables (its dimensions, each once, in the order
** the text names them) into h->dims, their columns as head_columns
** declares the fact's, and (indexes) their indexes.  One table: none.
** They are in the fact's schema: a join of tables of two schemas takes
** the serial path (planner/qjoin.c rule 7), which has no partial. */
static int head_dims(sqlite3 *db, const ga_query *q, ga_qpart_head *h,
                     int indexes, char **err) {
  if (!q->join_from || q->njoin_tables < 2)
    return SQLITE_OK;
  h->dims = sqlite3_malloc64(sizeof(*h->dims) * (size_t)q->njoin_tables);
  if (!h->dims)
    return SQLITE_NOMEM;
  memset(h->dims, 0, sizeof(*h->dims) * (size_t)q->njoin_tables);
  int rc = SQLITE_OK;
  for (int k = 0; rc == SQLITE_OK && k < q->njoin_tables; k++) {
    const char *name = q->join_tables[k];
    if (ga_qpart_table(h, name)) /* the fact, or a table joined twice */
      continue;
    ga_target t;
    memset(&t, 0, sizeof t);
    char *full = sqlite3_mprintf("\"%w\".\"%w\"", q->t.schema, name);
    if (!full)
      return SQLITE_NOMEM;
    rc = ga_target_resolve(db, full, &t, err);
    sqlite3_free(full);
    ga_qpart_head *d = &h->dims[h->ndims];
    if (rc == SQLITE_OK) {
      h->ndims++;
      d->table = sqlite3_mprintf("%s", t.table);
      rc = d->table ? head_columns(db, &t, d) : SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK && indexes)
      rc = head_indexes(db, &t, d);
    if (rc == SQLITE_OK && ga_qpart_sort_cols(d) == GA_NOMEM)
      rc = SQLITE_NOMEM;
    ga_target_free(&t);
  }
  return rc;
}

/* Rule 7: can a date and time function read parameter pv as the modifier
** 'localtime' or 'utc'?  SQLite's parseModifier compares the whole
** modifier, either case, as a C string: a TEXT is one exactly then (not
** any text holding "utc", such as 'Dutch'); a BLOB is read as text in the
** database's encoding, which is not checked here: any BLOB may be one. */
static int tz_param(sqlite3_value *pv) {
  int t = pv ? sqlite3_value_type(pv) : SQLITE_NULL;
  if (t == SQLITE_BLOB)
    return 1;
  const char *v = t == SQLITE_TEXT ? (const char *)sqlite3_value_text(pv) : 0;
  return v && (!sqlite3_stricmp(v, "localtime") || !sqlite3_stricmp(v, "utc"));
}

/* Rule 7: the time the workers pin is partial_now where given, and then
** the text may not apply 'localtime' or 'utc' in its parts.  0 (*err set
** when refused) or SQLITE_NOMEM. */
static int partial_time(const ga_config *cfg, const ga_parts *p, ga_plan *plan,
                        char **err) {
  if (!cfg->partial_now)
    return SQLITE_OK;
  ga_lex lx;
  int rc = SQLITE_OK;
  memset(&lx, 0, sizeof lx);
  if (p->filter)
    rc = ga_lex_sql(p->filter, &lx);
  for (int k = 0; rc == SQLITE_OK && k < p->nkeys + p->ncarry; k++)
    rc = ga_lex_sql(p->keys[k], &lx);
  for (int k = 0; rc == SQLITE_OK && k < p->nvals; k++)
    rc = ga_lex_sql(p->vals[k], &lx);
  const char *tz = lx.tz_call[0] ? lx.tz_call : NULL;
  for (int i = 0; rc == SQLITE_OK && !tz && lx.time_col[0] && i < p->nparams;
       i++) /* a parameter bound to 'localtime' or 'utc' */
    if (tz_param((sqlite3_value *)p->params[i]))
      tz = lx.time_col;
  if (rc == SQLITE_OK && tz)
    *err = sqlite3_mprintf(
        "the text applies %s() with 'localtime' or 'utc', or with a modifier "
        "that is not a literal: their value follows each process's TZ, and "
        "partials computed in other processes (gpuagg_config partial_now) "
        "may differ; store the times converted, or run gpu_query on one "
        "connection",
        tz);
  ga_lex_free(&lx);
  if (rc == SQLITE_OK && !*err && plan->parallel && plan->spec.pin)
    plan->spec.pin_ms = cfg->partial_now;
  return rc;
}

/* Rule 7: partial_check plans only; the path, and the workers' texts
** compiled on a worker (ga_plan_verify), as a partial would. */
static int partial_check(ga_scan_module *m, ga_plan *plan, char *why,
                         size_t n) {
  if (plan->parallel) {
    plan->spec.pool =
        ga_scan_pool_hold(&m->pools, &m->npools, plan->vfs, plan->path,
                          plan->spec.immutable, plan->spec.readonly);
    if (!plan->spec.pool || ga_plan_verify(plan, plan->spec.pool))
      return SQLITE_NOMEM;
  }
  if (!plan->parallel)
    sqlite3_snprintf((int)n, why, "%s",
                     plan->why[0] ? plan->why : "the serial path");
  return SQLITE_OK;
}

void ga_query_partial_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  static const char fn[] = "gpu_query_partial";
  ga_scan_module *m = sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ga_query q;
  ga_plan plan;
  ga_scan_out out;
  ga_qpart_head h;
  sqlite3_value **params = NULL;
  unsigned char *blob = NULL;
  int64_t nblob = 0;
  char why[256] = "", *err = NULL;
  memset(&q, 0, sizeof q);
  memset(&plan, 0, sizeof plan);
  memset(&out, 0, sizeof out);
  memset(&h, 0, sizeof h);
  const char *sql = (const char *)sqlite3_value_text(argv[0]);
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT || !sql) {
    sqlite3_result_error(ctx,
                         "gpu_query_partial: the first argument must be the "
                         "text of one SELECT",
                         -1);
    return;
  }
  ga_scan_pool_prune(db, m->pools, &m->npools); /* files no longer attached */
  int rc = ga_query_parse(db, sql, "gpuagg_partial_groups", &q, &err);
  if (rc != SQLITE_OK) {
    if (err)
      result_error(ctx, fn, err);
    else
      result_code(ctx, rc);
    goto done;
  }
  if (q.join_from && !q.join_hinted) { /* planner/qjoin.c rule 8 */
    err = sqlite3_mprintf(
        "a join's partial needs its fact table named in the text (SELECT /* "
        "gpuagg_fact(%s) */ ...): every file and the finishing database "
        "must choose the same fact, whatever their rows",
        q.t.table);
    result_error(ctx, fn, err);
    goto done;
  }
  if (argc - 1 > q.nparams) {
    err = sqlite3_mprintf("the text has %d parameter%s, %d values were given",
                          q.nparams, q.nparams == 1 ? "" : "s", argc - 1);
    result_error(ctx, fn, err);
    goto done;
  }
  if (q.serial_why || q.partial_why) {
    result_error(
        ctx, fn,
        sqlite3_mprintf("%s", q.serial_why ? q.serial_why : q.partial_why));
    goto done;
  }
  params = sqlite3_malloc64(sizeof(*params) * (size_t)(q.nparams + 1));
  if (!params) {
    sqlite3_result_error_nomem(ctx);
    goto done;
  }
  for (int i = 0; i < q.nparams; i++)
    params[i] = i + 1 < argc ? argv[i + 1] : NULL;
  ga_parts parts;
  ga_query_parts(&q, &parts, params, q.nparams);
  parts.topk_val = -1;  /* a partial holds every group: files merge later */
  parts.one_worker = 1; /* rule 2 */
  ga_config cfg = m->conn->cfg;
  cfg.scan_min_rows = 0;
  ga_scan_last *last = &m->conn->scan;
  memset(last, 0, sizeof(*last));
  last->interrupt =
      ga_intr_native() ? "sqlite3_is_interrupted" : "probe statement";
  if (q.join_json && strlen(q.join_json) < sizeof last->join) /* qjoin.c */
    sqlite3_snprintf((int)sizeof last->join, last->join, "%s", q.join_json);
  rc = ga_plan_parts(db, &cfg, &q.t, &parts, &plan);
  if (rc == SQLITE_OK && (rc = partial_time(&cfg, &parts, &plan, &err)) == 0 &&
      err) {
    result_error(ctx, fn, err);
    err = NULL;
    goto done;
  }
  if (rc == SQLITE_OK && cfg.partial_check)
    rc = partial_check(m, &plan, why, sizeof why);
  else if (rc == SQLITE_OK)
    rc = ga_query_scan(m, db, &plan, &out, why, sizeof why);
  if (rc != SQLITE_OK) {
    result_code(ctx, rc);
    goto done;
  }
  if (why[0]) {
    result_error(ctx, fn,
                 sqlite3_mprintf("this connection cannot scan the table in "
                                 "parallel (%s)",
                                 why));
    goto done;
  }
  if (cfg.partial_check) { /* rule 7: the checks passed */
    sqlite3_result_null(ctx);
    goto done;
  }
  ga_query_last_parallel(last, &out, &plan, q.nvals);
  h.shape = plan.spec.shape;
  h.sig = ga_query_sig(&q, params, q.nparams);
  h.nparams = q.nparams;
  h.table = q.t.table;
  rc = ga_db_encoding_of(db, &h.enc);
  if (rc == SQLITE_OK)
    rc = head_columns(db, &q.t, &h);
  if (rc == SQLITE_OK)
    rc = head_indexes(db, &q.t, &h);
  if (rc == SQLITE_OK)
    rc = head_dims(db, &q, &h, 1, &err);
  if (rc != SQLITE_OK) {
    result_error(
        ctx, fn,
        (rc & 0xff) == SQLITE_NOMEM ? NULL
        : err                       ? err
              : sqlite3_mprintf("cannot read the columns of %s", q.t.table));
    err = NULL;
    goto done;
  }
  int64_t limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  ga_intr intr; /* rule 4: the caller's interrupt while encoding */
  memset(&intr, 0, sizeof intr);
  intr.db = db;
  ga_qpart_limit lim = {INT64_MAX, ga_intr_check, &intr};
  rc = ga_qpart_encode(&h, out.sorted, out.n, limit, &lim, &blob, &nblob);
  ga_intr_free(&intr);
  if (rc == GA_QPART_STOP)
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else if (rc == GA_QPART_TOOBIG)
    result_error(ctx, fn,
                 sqlite3_mprintf("the partial of %lld groups exceeds "
                                 "SQLITE_LIMIT_LENGTH (%lld bytes)",
                                 (long long)out.n, (long long)limit));
  else if (rc != GA_OK)
    sqlite3_result_error_nomem(ctx);
  else {
    last->rows = h.rows; /* the groups' rows, counted by the encoder */
    sqlite3_result_blob64(ctx, blob, (sqlite3_uint64)nblob, sqlite3_free);
    blob = NULL;
  }
done:
  h.table = NULL; /* q's */
  ga_qpart_head_free(&h);
  sqlite3_free(blob);
  sqlite3_free(params);
  ga_scan_out_free(&out);
  ga_plan_free(&plan);
  ga_query_free(&q);
}

/* ---- reading partials ---- */

/* The one flow that reads a partial, for the SQL functions and for
** gpu_query's answer from a partial: its header, then its groups.  Each
** returns SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR with *err (the reason,
** after `what`: "argument 2", "gpuagg_partial"; sqlite3_malloc'd). */
static int part_head(sqlite3_value *v, const char *what, ga_qpart_head *h,
                     const ga_qpart_limit *lim, char **err) {
  const char *why = NULL;
  int rc = ga_qpart_read_head(sqlite3_value_blob(v), sqlite3_value_bytes(v), h,
                              lim, &why);
  if (rc == GA_NOMEM)
    return SQLITE_NOMEM;
  if (rc == GA_QPART_STOP)
    return SQLITE_INTERRUPT;
  if (rc != GA_OK) {
    *err = sqlite3_mprintf("%s: %s", what, why);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Groups of partial v (header h) into *s (made on first use), tagged
** piece; the groups' bytes in *bytes, at most lim->cap, checked as each
** group is added, and their rows in *rows (rule 4).  SQLITE_INTERRUPT
** when lim's stop (the caller's interrupt) said so. */
static int part_groups(sqlite3_value *v, const char *what,
                       const ga_qpart_head *h, ga_group_shards **s,
                       int64_t piece, const ga_qpart_limit *lim, int64_t *bytes,
                       int64_t *rows, char **err) {
  const char *why = NULL;
  if (!*s && !(*s = ga_gs_new(&h->shape)))
    return SQLITE_NOMEM;
  int rc = ga_qpart_add_groups(sqlite3_value_blob(v), sqlite3_value_bytes(v), h,
                               *s, piece, lim, bytes, rows, &why);
  if (rc == GA_NOMEM)
    return SQLITE_NOMEM;
  if (rc == GA_QPART_STOP)
    return SQLITE_INTERRUPT;
  if (rc == GA_QPART_CAP) {
    int dist = 0, pct = 0; /* a DISTINCT aggregate's values count too
                              (issue 37), and a median's (issue 39) */
    for (int k = 0; k < h->shape.ns; k++) {
      pct |= h->shape.dist[k] == GA_DIST_PCT;
      dist |= h->shape.dist[k] != 0 && h->shape.dist[k] != GA_DIST_PCT;
    }
    *err = sqlite3_mprintf("the groups exceed group_bytes (%lld bytes; "
                           "gpuagg_config('group_bytes', N) raises it)%s%s",
                           (long long)lim->cap,
                           dist ? "; each distinct value of a DISTINCT "
                                  "aggregate takes up to 171 bytes and its "
                                  "TEXT or BLOB"
                                : "",
                           pct ? "; each value of a median or percentile "
                                 "takes 8 bytes"
                               : "");
    return SQLITE_ERROR;
  }
  if (rc != GA_OK) {
    *err = sqlite3_mprintf("%s: %s", what, why);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* An SQL function's argument: 1, or 0 with the error set on ctx. */
static int arg_ok(sqlite3_context *ctx, const char *fn, int rc, char *err) {
  if (rc == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  else if (rc == SQLITE_INTERRUPT)
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else if (rc != SQLITE_OK)
    result_error(ctx, fn, err);
  return rc == SQLITE_OK;
}

/* Read argument v's header; 0 with the error set on ctx. */
static int read_head(sqlite3_context *ctx, const char *fn, int arg,
                     sqlite3_value *v, const ga_qpart_limit *lim,
                     ga_qpart_head *h) {
  char what[32], *err = NULL;
  if (sqlite3_value_type(v) != SQLITE_BLOB) {
    result_error(ctx, fn,
                 sqlite3_mprintf("argument %d is not a partial (a BLOB of "
                                 "gpu_query_partial)",
                                 arg));
    return 0;
  }
  sqlite3_snprintf(sizeof what, what, "argument %d", arg);
  int rc = part_head(v, what, h, lim, &err); /* before err is read */
  return arg_ok(ctx, fn, rc, err);
}

/* A join's other table of h named name (qpartial.h rule 7), or NULL. */
static const ga_qpart_head *table_of(const ga_qpart_head *h, const char *name) {
  const ga_qpart_head *t = ga_qpart_table(h, name);
  return t == h ? NULL : t;
}

/* How a column is a key, for rule 3's messages. */
static const char *key_words(const ga_qpart_col *c) {
  return c->rowid ? " PRIMARY KEY"
         : c->wpk ? " PRIMARY KEY (WITHOUT ROWID)"
                  : "";
}

/* Rule 3: the columns that tables a and b (of one name) both declare,
** declared alike; `table` names a join's other table in the message (NULL:
** the fact, named already).  NULL, or the reason. */
static char *columns_mismatch(const ga_qpart_head *a, const ga_qpart_head *b,
                              const char *what, int finish, const char *table,
                              const char *fix) {
  for (int i = 0; i < b->ncols; i++) { /* a's names by a->byname: n log n */
    const ga_qpart_col *c = &b->cols[i];
    int j = ga_qpart_find_name(a->byname, a->ncols, c->name);
    if (j >= 0 && (sqlite3_stricmp(a->cols[j].type, c->type) ||
                   sqlite3_stricmp(a->cols[j].coll, c->coll) ||
                   a->cols[j].rowid != c->rowid || a->cols[j].wpk != c->wpk))
      return sqlite3_mprintf(
          "%s declares column %s%s%s as \"%s\" COLLATE %s%s, %s as \"%s\" "
          "COLLATE %s%s%s",
          what, c->name, table ? " of table " : "", table ? table : "", c->type,
          c->coll, key_words(c), finish ? "this database" : "an earlier one",
          a->cols[j].type, a->cols[j].coll, key_words(&a->cols[j]), fix);
  }
  return NULL;
}

/* Rule 3, the one check of merge and finish (issue 36, defect 8): partial
** b (`what`: "argument 2", "gpuagg_partial") computed for what a records:
** a merge's first partial, or (finish) the head this connection would
** write for the text (ga_query_from_partial).  The query, its parameter
** values and shape, the encoding, the table, the columns both declare, the
** key collations.  NULL, or the reason. */
static char *mismatch(const ga_qpart_head *a, const ga_qpart_head *b,
                      const char *what, int finish) {
  const char *fix = finish ? " (finish it where the table is declared as "
                             "gpu_query_partial_info's \"create\" says)"
                           : "";
  if (a->sig != b->sig || a->nparams != b->nparams ||
      a->shape.nk != b->shape.nk || a->shape.nc != b->shape.nc ||
      a->shape.ns != b->shape.ns)
    return sqlite3_mprintf("%s is the partial of another query or other "
                           "parameter values",
                           what);
  if (a->enc != b->enc)
    return sqlite3_mprintf("%s is of a %s database, %s of a %s one%s", what,
                           enc_name(b->enc), finish ? "this one" : "the first",
                           enc_name(a->enc), fix);
  if (sqlite3_stricmp(a->table, b->table))
    return sqlite3_mprintf("%s is over table %s, %s over %s%s", what, b->table,
                           finish ? "the query here" : "the first", a->table,
                           fix);
  char *why = columns_mismatch(a, b, what, finish, NULL, fix);
  /* a join's other tables (qpartial.h rule 7): the same, each declared
  ** alike */
  for (int i = 0; !why && i < b->ndims; i++) {
    const ga_qpart_head *d = &b->dims[i], *e = table_of(a, d->table);
    why = e ? columns_mismatch(e, d, what, finish, d->table, fix)
            : sqlite3_mprintf("%s joins table %s, which %s does not%s", what,
                              d->table, finish ? "the query here" : "the first",
                              fix);
  }
  for (int i = 0; !why && i < a->ndims; i++)
    if (!table_of(b, a->dims[i].table))
      why = sqlite3_mprintf("%s does not join table %s, which %s joins%s", what,
                            a->dims[i].table,
                            finish ? "the query here" : "the first", fix);
  if (why)
    return why;
  /* a damaged or forged header's (a column declared otherwise is named
  ** above) */
  for (int k = 0; k < a->shape.nk; k++)
    if (a->shape.coll[k] != b->shape.coll[k])
      return sqlite3_mprintf("%s: group key %d has another collation there%s",
                             what, k + 1, fix);
  for (int k = 0; k < a->shape.ns; k++)
    if (a->shape.dist[k] != b->shape.dist[k])
      return sqlite3_mprintf("%s: aggregate argument %d is DISTINCT under "
                             "another collation there%s",
                             what, k + 1, fix);
  for (int k = 0; k < a->shape.ns; k++) /* issue 39 (qpartial.h rule 7) */
    if (a->shape.sq[k] != b->shape.sq[k])
      return sqlite3_mprintf("%s: aggregate argument %d has a variance's sum "
                             "of squares in one partial only%s",
                             what, k + 1, fix);
  return NULL;
}

/* b's columns into a's (rule 3; mismatch checked those both declare):
** a's order, then b's new ones; b's indexes of names a lacks.  Names are
** found by sorted indexes (a->byname, rebuilt after), never column by
** column, and a's arrays grow once: n log n for any header (qpartial.h
** rule 4).  NULL, or "" when out of memory. */
static char *merge_columns(ga_qpart_head *a, const ga_qpart_head *b) {
  int na = a->ncols, fresh = 0;
  for (int i = 0; i < b->ncols; i++)
    fresh += ga_qpart_find_name(a->byname, na, b->cols[i].name) < 0;
  if (fresh) {
    ga_qpart_col *v =
        sqlite3_realloc64(a->cols, sizeof(*v) * (size_t)(na + fresh));
    if (!v)
      return sqlite3_mprintf("");
    a->cols = v;
    for (int i = 0; i < b->ncols; i++) {
      const ga_qpart_col *c = &b->cols[i];
      if (ga_qpart_find_name(a->byname, na, c->name) >= 0)
        continue;
      v[a->ncols].name = sqlite3_mprintf("%s", c->name);
      v[a->ncols].type = sqlite3_mprintf("%s", c->type);
      v[a->ncols].coll = sqlite3_mprintf("%s", c->coll);
      v[a->ncols].rowid = 0; /* a second rowid alias cannot be: plain */
      v[a->ncols].wpk = 0;   /* nor a key column only some files have */
      a->ncols++;
      if (!v[a->ncols - 1].name || !v[a->ncols - 1].type ||
          !v[a->ncols - 1].coll)
        return sqlite3_mprintf("");
    }
    /* b's names are distinct (its reader checked): no two in a now */
    if (ga_qpart_sort_cols(a) != GA_OK)
      return sqlite3_mprintf("");
  }
  if (!b->nidx)
    return NULL;
  /* indexes: a's, then b's new names */
  ga_qpart_name *an = sqlite3_malloc64(sizeof(*an) * (size_t)(a->nidx + 1));
  ga_qpart_idx *v =
      sqlite3_realloc64(a->idx, sizeof(*v) * (size_t)(a->nidx + b->nidx));
  if (v)
    a->idx = v;
  if (!an || !v) {
    sqlite3_free(an);
    return sqlite3_mprintf("");
  }
  int ni = a->nidx;
  for (int i = 0; i < ni; i++)
    an[i] = (ga_qpart_name){a->idx[i].name, i};
  ga_qpart_sort_names(an, ni);
  for (int i = 0; i < b->nidx; i++) {
    if (ga_qpart_find_name(an, ni, b->idx[i].name) >= 0)
      continue;
    v[a->nidx].name = sqlite3_mprintf("%s", b->idx[i].name);
    v[a->nidx].sql = sqlite3_mprintf("%s", b->idx[i].sql);
    a->nidx++;
    if (!v[a->nidx - 1].name || !v[a->nidx - 1].sql) {
      sqlite3_free(an);
      return sqlite3_mprintf("");
    }
  }
  sqlite3_free(an);
  return NULL;
}

/* merge_columns over the fact and each of a join's other tables (which
** mismatch found alike in both: qpartial.h rule 7). */
static char *merge_tables(ga_qpart_head *a, const ga_qpart_head *b) {
  char *why = merge_columns(a, b);
  for (int i = 0; !why && i < b->ndims; i++) {
    ga_qpart_head *e = (ga_qpart_head *)table_of(a, b->dims[i].table);
    if (e)
      why = merge_columns(e, &b->dims[i]);
  }
  return why;
}

/* Groups of argument v into *s; 0 with the error set on ctx. */
static int add_groups(sqlite3_context *ctx, const char *fn, int arg,
                      sqlite3_value *v, const ga_qpart_head *h,
                      ga_group_shards **s, int64_t piece,
                      const ga_qpart_limit *lim, int64_t *bytes,
                      int64_t *rows) {
  char what[32], *err = NULL;
  sqlite3_snprintf(sizeof what, what, "argument %d", arg);
  int rc = part_groups(v, what, h, s, piece, lim, bytes, rows, &err);
  return arg_ok(ctx, fn, rc, err);
}

/* ---- gpu_query_merge ---- */

void ga_query_merge_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  static const char fn[] = "gpu_query_merge";
  ga_conn *conn = ((ga_fn_data *)sqlite3_user_data(ctx))->conn;
  ga_qpart_head first, h;
  ga_group_shards *s = NULL;
  ga_group **list = NULL;
  size_t n = 0;
  int64_t bytes = 0, rows = 0;
  /* rule 4: the cap and the caller's interrupt, as the groups are read */
  ga_intr intr;
  memset(&intr, 0, sizeof intr);
  intr.db = sqlite3_context_db_handle(ctx);
  ga_qpart_limit lim = {ga_config_group_bytes(&conn->cfg), ga_intr_check,
                        &intr};
  memset(&first, 0, sizeof first);
  memset(&h, 0, sizeof h);
  if (argc < 1) {
    sqlite3_result_error(ctx, "gpu_query_merge: give it one partial or more",
                         -1);
    return;
  }
  if (!read_head(ctx, fn, 1, argv[0], &lim, &first) ||
      !add_groups(ctx, fn, 1, argv[0], &first, &s, 0, &lim, &bytes, &rows))
    goto done;
  for (int i = 1; i < argc; i++) {
    char *why, what[32];
    if (!read_head(ctx, fn, i + 1, argv[i], &lim, &h))
      goto done;
    sqlite3_snprintf(sizeof what, what, "argument %d", i + 1);
    if ((why = mismatch(&first, &h, what, 0)) ||
        (why = merge_tables(&first, &h))) {
      if (!why[0]) {
        sqlite3_free(why);
        sqlite3_result_error_nomem(ctx);
      } else
        result_error(ctx, fn, why);
      goto done;
    }
    if (!add_groups(ctx, fn, i + 1, argv[i], &h, &s, i, &lim, &bytes, &rows))
      goto done;
    ga_qpart_head_free(&h);
  }
  if (ga_gs_list(s, &list, &n)) {
    sqlite3_result_error_nomem(ctx);
    goto done;
  }
  unsigned char *blob = NULL;
  int64_t nblob = 0, limit = sqlite3_limit(sqlite3_context_db_handle(ctx),
                                           SQLITE_LIMIT_LENGTH, -1);
  int rc = ga_qpart_encode(&first, list, n, limit, &lim, &blob, &nblob);
  if (rc == GA_QPART_STOP)
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else if (rc == GA_QPART_TOOBIG)
    result_error(ctx, fn,
                 sqlite3_mprintf("the merged partial of %lld groups exceeds "
                                 "SQLITE_LIMIT_LENGTH (%lld bytes)",
                                 (long long)n, (long long)limit));
  else if (rc != GA_OK)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_blob64(ctx, blob, (sqlite3_uint64)nblob, sqlite3_free);
done:
  ga_intr_free(&intr);
  sqlite3_free(list);
  ga_gs_free(s);
  ga_qpart_head_free(&h);
  ga_qpart_head_free(&first);
}

/* ---- gpu_query_partial_info ---- */

/* z as a JSON string. */
static void json_str(sqlite3_str *s, const char *z) {
  sqlite3_str_appendchar(s, 1, '"');
  for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
    if (*p == '"' || *p == '\\')
      sqlite3_str_appendf(s, "\\%c", *p);
    else if (*p < 0x20)
      sqlite3_str_appendf(s, "\\u%04x", *p);
    else
      sqlite3_str_appendchar(s, 1, (char)*p);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

/* Table t's CREATE TABLE, then its CREATE INDEX statements, into s (NULL:
** none), of quoted names and checked parts only (rule 6: the reader
** checked them; they are checked here again, since this text is run where
** the partial is finished); its parts into json: "columns":[...],
** "indexes":[...].  skip[i] set: t's index i is left out (rule 8: a name
** that an earlier table's index or a table has). */
static void table_sql(const ga_qpart_head *t, sqlite3_str *s, sqlite3_str *json,
                      const unsigned char *skip) {
  if (s)
    sqlite3_str_appendf(s, "CREATE TABLE \"%w\"(", t->table);
  sqlite3_str_appendall(json, "\"columns\":[");
  for (int i = 0; i < t->ncols; i++) {
    const ga_qpart_col *c = &t->cols[i];
    const char *type = ga_qs_type_safe(c->type);
    const char *coll = ga_qs_coll(c->coll);
    if (s) {
      sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", c->name);
      if (type[0])
        sqlite3_str_appendf(s, " %s", type);
      if (c->rowid)
        sqlite3_str_appendall(s, " PRIMARY KEY");
      if (coll && strcmp(coll, "BINARY"))
        sqlite3_str_appendf(s, " COLLATE \"%w\"", coll);
    }
    sqlite3_str_appendall(json, i ? ",{\"name\":" : "{\"name\":");
    json_str(json, c->name);
    sqlite3_str_appendall(json, ",\"type\":");
    json_str(json, type);
    sqlite3_str_appendf(json, ",\"collation\":\"%s\",\"rowid\":%s%s}",
                        coll ? coll : "BINARY", c->rowid ? "true" : "false",
                        c->wpk ? ",\"key\":true" : "");
  }
  int wr = 0; /* rule 8: a WITHOUT ROWID table, its key in column order */
  for (int i = 0; i < t->ncols; i++)
    if (t->cols[i].wpk && s)
      sqlite3_str_appendf(s, "%s\"%w\"", wr++ ? ", " : ", PRIMARY KEY(",
                          t->cols[i].name);
  if (s)
    sqlite3_str_appendall(s, wr ? ")) WITHOUT ROWID" : ")");
  sqlite3_str_appendall(json, "],\"indexes\":[");
  int n = 0;
  for (int i = 0; i < t->nidx; i++) {
    ga_qs_index x;
    if ((skip && skip[i]) || ga_qs_index_parse(t->idx[i].sql, &x))
      continue; /* the reader kept none such */
    char *text = s ? ga_qs_index_text(&x) : NULL;
    if (text)
      sqlite3_str_appendf(s, ";\n%s", text);
    sqlite3_free(text);
    sqlite3_str_appendall(json, n++ ? ",{\"name\":" : "{\"name\":");
    json_str(json, x.name);
    sqlite3_str_appendf(json, ",\"unique\":%s,\"columns\":[",
                        x.unique ? "true" : "false");
    for (int k = 0; k < x.ncol; k++) {
      sqlite3_str_appendall(json, k ? ",{\"name\":" : "{\"name\":");
      json_str(json, x.col[k]);
      sqlite3_str_appendf(json, ",\"collation\":\"%s\",\"desc\":%s}", x.coll[k],
                          x.desc[k] ? "true" : "false");
    }
    sqlite3_str_appendall(json, "]}");
    ga_qs_index_free(&x);
  }
  sqlite3_str_appendall(json, "]");
}

/* Rule 8: which indexes of h's tables (the fact's, then each other
** table's, one flag each in that order) to leave out: an index whose name
** an earlier one has, or a table of the partial (partials of several
** files merged may bring both; one database holds one).  Names found by a
** sorted index, n log n.  NULL when out of memory; *n the flags. */
static unsigned char *index_skips(const ga_qpart_head *h, int64_t *n) {
  int64_t total = h->nidx;
  for (int i = 0; i < h->ndims; i++)
    total += h->dims[i].nidx;
  *n = total;
  unsigned char *skip = sqlite3_malloc64((size_t)total + 1);
  ga_qpart_name *v = sqlite3_malloc64(sizeof(*v) * (size_t)(total + 1));
  if (!skip || !v) {
    sqlite3_free(skip);
    sqlite3_free(v);
    return NULL;
  }
  memset(skip, 0, (size_t)total + 1);
  int64_t k = 0;
  for (int t = -1; t < h->ndims; t++) {
    const ga_qpart_head *x = t < 0 ? h : &h->dims[t];
    for (int i = 0; i < x->nidx; i++, k++) {
      v[k] = (ga_qpart_name){x->idx[i].name, (int)k};
      skip[k] = ga_qpart_table(h, x->idx[i].name) != NULL;
    }
  }
  ga_qpart_sort_names(v, (int)total); /* by name, then position */
  for (int64_t i = 1; i < total; i++)
    if (!sqlite3_stricmp(v[i - 1].name, v[i].name))
      skip[v[i].at] = 1;
  sqlite3_free(v);
  return skip;
}

/* The finishing database's declarations of every table of h (the fact's,
** then a join's others: qpartial.h rule 7), and into json their parts:
** the fact's "columns" and "indexes" (as before joins), then "tables":
** [{"table", "columns", "indexes"}, ...], the fact first.
** sqlite3_malloc'd; NULL: out of memory. */
static char *create_sql(const ga_qpart_head *h, sqlite3_str *json) {
  int64_t nskip = 0;
  unsigned char *skip = index_skips(h, &nskip);
  if (!skip)
    return NULL;
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(json, ",");
  table_sql(h, NULL, json, skip);
  sqlite3_str_appendall(json, ",\"tables\":[");
  int64_t at = 0;
  for (int t = -1; t < h->ndims; t++) {
    const ga_qpart_head *x = t < 0 ? h : &h->dims[t];
    if (t >= 0)
      sqlite3_str_appendall(s, ";\n");
    sqlite3_str_appendall(json, t < 0 ? "{\"table\":" : ",{\"table\":");
    json_str(json, x->table);
    sqlite3_str_appendall(json, ",");
    table_sql(x, s, json, skip + at);
    sqlite3_str_appendall(json, "}");
    at += x->nidx;
  }
  sqlite3_str_appendall(json, "]");
  sqlite3_free(skip);
  return sqlite3_str_finish(s);
}

void ga_query_partial_info_fn(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  static const char fn[] = "gpu_query_partial_info";
  ga_qpart_head h;
  ga_intr intr; /* rule 4: a header's columns and indexes are polled too */
  memset(&intr, 0, sizeof intr);
  intr.db = sqlite3_context_db_handle(ctx);
  ga_qpart_limit lim = {INT64_MAX, ga_intr_check, &intr};
  (void)argc;
  memset(&h, 0, sizeof h);
  int ok = read_head(ctx, fn, 1, argv[0], &lim, &h);
  ga_intr_free(&intr);
  if (!ok)
    return; /* the header only: the groups are read where they are used */
  sqlite3_str *j = sqlite3_str_new(NULL);
  sqlite3_str_appendall(j, "{\"table\":");
  json_str(j, h.table);
  char *create = create_sql(&h, j);
  sqlite3_str_appendall(j, ",\"create\":");
  json_str(j, create ? create : "");
  sqlite3_str_appendf(
      j,
      ",\"encoding\":\"%s\",\"groups\":%lld,\"rows\":%lld,\"keys\":%d,"
      "\"carried\":%d,\"values\":%d,\"params\":%d,\"bytes\":%d}",
      enc_name(h.enc), (long long)h.ngroups, (long long)h.rows, h.shape.nk,
      h.shape.nc, h.shape.ns, h.nparams, sqlite3_value_bytes(argv[0]));
  char *json = sqlite3_str_finish(j);
  if (create && json)
    sqlite3_result_text(ctx, json, -1, sqlite3_free);
  else {
    sqlite3_free(json);
    sqlite3_result_error_nomem(ctx);
  }
  sqlite3_free(create);
  ga_qpart_head_free(&h);
}

/* ---- gpu_query's answer from a partial (query_vtab.c rule 9) ---- */

/* The head a partial of q with these parameter values would have on this
** connection (gpu_query_partial's, groups aside): what a partial finished
** here is checked against (rule 3).  SQLITE_OK, or an error (err, when
** not out of memory, "cannot read ..."). */
static int here_head(sqlite3 *db, const ga_query *q,
                     sqlite3_value *const *params, int np, ga_qpart_head *h,
                     char **err) {
  ga_parts parts;
  ga_query_parts(q, &parts, params, np);
  h->shape.nk = q->nkeys > 0 ? q->nkeys : 1; /* as planner/path.c's spec */
  h->shape.nc = q->nkeys > 0 ? q->ncarry : 0;
  h->shape.ns = q->nvals;
  for (int k = 0; k < q->nkeys; k++) /* -1 (not built-in): never a partial's */
    h->shape.coll[k] =
        q->join_from_caller /* a join: its FROM (planner/qjoin.c) */
            ? ga_plan_key_coll_join(db, q->join_from_caller, q->keys[k])
            : ga_plan_key_coll(db, &q->t, parts.alias, q->keys[k]);
  for (int k = 0; parts.val_dist && k < q->nvals; k++) /* DISTINCT (issue 37) */
    h->shape.dist[k] = parts.val_dist[k];
  for (int k = 0; parts.val_sq && k < q->nvals; k++)       /* issue 39 */
    h->shape.sq[k] = parts.val_sq[k] && !h->shape.dist[k]; /* a set: rule 6 */
  h->sig = ga_query_sig(q, params, np);
  h->nparams = q->nparams;
  h->table = sqlite3_mprintf("%s", q->t.table);
  int rc = h->table ? ga_db_encoding_of(db, &h->enc) : SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    rc = head_columns(db, &q->t, h);
  if (rc == SQLITE_OK)
    rc = head_dims(db, q, h, 0, err);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) != SQLITE_NOMEM && !*err)
      *err = sqlite3_mprintf("cannot read the columns of %s", q->t.table);
    return rc;
  }
  /* through the format and back, so that it reads as a partial's header
  ** does (whatever the decoder makes of names and types); the key
  ** collations as found (-1 is no header's) */
  unsigned char *buf = NULL;
  int64_t n = 0;
  const char *why = NULL;
  ga_gshape shape = h->shape;
  ga_qpart_head back;
  for (int k = 0; k < h->shape.nk; k++)
    h->shape.coll[k] = GA_COLL_BINARY; /* restored below */
  rc = ga_qpart_encode(h, NULL, 0, INT64_MAX, NULL, &buf, &n);
  if (rc == GA_OK)
    rc = ga_qpart_read_head(buf, n, &back, NULL, &why);
  sqlite3_free(buf);
  if (rc != GA_OK) {
    if (rc != GA_NOMEM)
      *err = sqlite3_mprintf("cannot describe %s here (%s)", q->t.table,
                             why ? why : "?");
    return rc == GA_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
  }
  ga_qpart_head_free(h);
  *h = back;
  h->shape = shape;
  return SQLITE_OK;
}

int ga_query_from_partial(sqlite3 *db, sqlite3_value *v, const ga_query *q,
                          sqlite3_value *const *params, int np,
                          const ga_config *cfg, ga_scan_out *out, char **err) {
  ga_qpart_head h, here;
  int64_t bytes = 0, rows = 0;
  char *why = NULL;
  ga_intr intr; /* rule 4 */
  memset(&intr, 0, sizeof intr);
  intr.db = db;
  ga_qpart_limit lim = {ga_config_group_bytes(cfg), ga_intr_check, &intr};
  memset(out, 0, sizeof(*out));
  memset(&h, 0, sizeof h);
  memset(&here, 0, sizeof here);
  if (sqlite3_value_type(v) != SQLITE_BLOB) {
    *err = sqlite3_mprintf("gpu_query: gpuagg_partial must be a partial (a "
                           "BLOB of gpu_query_partial or gpu_query_merge)");
    return SQLITE_ERROR;
  }
  int rc = part_head(v, "gpuagg_partial", &h, &lim, &why);
  if (rc == SQLITE_OK)
    rc = here_head(db, q, params, np, &here, &why);
  if (rc == SQLITE_OK && (why = mismatch(&here, &h, "gpuagg_partial", 1)))
    rc = SQLITE_ERROR;
  if (rc == SQLITE_OK) {
    out->shape = h.shape;
    out->enc = h.enc;
    rc = part_groups(v, "gpuagg_partial", &h, &out->groups, 0, &lim, &bytes,
                     &rows, &why);
  }
  if (rc == SQLITE_OK && ga_gs_list(out->groups, &out->sorted, &out->n))
    rc = SQLITE_NOMEM;
  ga_intr_free(&intr);
  ga_qpart_head_free(&h);
  ga_qpart_head_free(&here);
  if (rc != SQLITE_OK) {
    ga_scan_out_free(out);
    if (rc == SQLITE_ERROR)
      *err = why ? sqlite3_mprintf("gpu_query: %s", why) : NULL;
    sqlite3_free(why);
    return why || rc != SQLITE_ERROR ? rc : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}
