/*
** cache_fns.c — gpu_cache and gpu_cache_drop: the load of a column cache
** entry, and its drop.
**
** SQL interface:
**
**   gpu_cache('t', 'x, k, y')   loads (or reloads) those columns of table t
**                               into this connection's cache: in GPU memory
**                               when a GPU is usable, else (or with device =
**                               'cpu') in host memory.  Returns the rows
**                               cached.  The list replaces t's entry.
**   gpu_cache('t'), gpu_cache('t', '*')
**                               the same for every column of t (rule 8).
**   gpu_cache_drop('t')         drops t's entry; returns 1, or 0 if none.
**   gpu_cache_drop()            drops every entry; returns how many.
**
** The load's per-row collector, gpuagg_collect, is ext/workers/collect.c;
** gpu_aggregate asks planner/cache_plan.c's ga_cache_answer before it plans
** a scan.
**
** Rules:
**   1. gpu_cache and gpu_cache_drop are SQLITE_DIRECTONLY; errors start
**      "gpu_cache:" (no such table, no such column, an empty or malformed
**      list, a TEXT or BLOB value naming its column, the budget, a view or
**      WITHOUT ROWID table, a write transaction).
**   2. Never stale: the stamps of planner/cache_plan.c (rule 2 there) are
**      read before and after each load.  An attached WAL file with no
**      committed frame in its WAL gets its watcher before the first stamp;
**      where none can be opened, or the connection holds GA_CACHE_WATCHERS
**      already, gpu_cache refuses (no entry could be proven current).  So
**      it does for an attached file whose path names another file now
**      (HAS_MOVED) or whose identity stat() cannot read.
**   3. The load sees one committed state, equal to the stamps': the stamp
**      is read before and after it (parallel workers read their own
**      snapshot in between), and a load during which the stamp moved is
**      done again (up to 3 times, then an error).  A caller already holding
**      a read transaction on the schema (an explicit transaction, or an
**      outer statement reading it) loads on its own connection, so the
**      entry is exactly its snapshot, which data_version then describes;
**      except on an attached WAL schema, where a stamp records the newest
**      commit and the snapshot may be older: refused (asked before any
**      stamp's statement opens a transaction).
**   4. A load inside a transaction that writes to the schema is refused:
**      its uncommitted rows could be rolled back with no stamp moving.
**      Inside an explicit read transaction an entry is used when its stamps
**      match the caller's snapshot (loaded in it, or before it with nothing
**      committed since).
**   5. A GPU failure during a load loads into host memory instead; during a
**      query it drops the entry; either way the answer is the uncached
**      path's.
**   6. The cache steps aside where the caller's connection would read
**      something else (planner/cache_plan.c, rule 6 there).
**   7. A reload is atomic: the old entry answers no query while the new one
**      loads (it is out of the list, and its bytes do not count against
**      the budget, so that a table reloaded with the same columns fits:
**      both copies exist for that moment), and when the load fails (a
**      TEXT column named by mistake, the budget, an error) it is back as
**      it was, current if it was current: its own stamps still decide, so
**      a kept entry whose table changed meanwhile is stale, never served.
**   8. No column list, or '*' alone (blanks around it aside), is every
**      column of t, in the table's order (pragma table_xinfo: generated
**      columns too), resolved when gpu_cache runs: a column added later is
**      not in the entry.  Such a list fails as a named one would (a column
**      holding BLOBs, more than GA_CACHE_MAX_COLS columns), the error
**      saying to name the columns instead.
**   9. One cache per process (engine/cache/cache.h rule 5, issue 40): the
**      entry's key is the file's (ga_fstamp_ident: device, inode) and the
**      table, so a load replaces another connection's entry of the same
**      file too; it records its owner (this connection) and its file stamp
**      (ext/common/filestamp.c, read with the load's first stamp under the
**      read lock).  It is shareable when that stamp proves the state (or,
**      on main, a WAL without a committed frame while the owner keeps it
**      open) and the load did not run inside a WAL read transaction opened
**      before the first stamp (whose snapshot may be older than the newest
**      commit the stamp records); TEMP and in-memory entries never are.
**      gpu_cache_drop() drops the entries this connection sees.
**  10. Cache files (issue 40, cache_persist.c): with cache_file on, a valid
**      file of exactly these columns is mapped instead of the load (stamped
**      as rule 3's load would be); else the load runs, in host memory when
**      the entry is for the GPU and its file may be written; its file is
**      written and a GPU entry's columns are copied to the device (under
**      the query lock: the device's stream) before the entry is linked,
**      while no other connection can reach it.  A file step never fails
**      gpu_cache.
**  11. Appends (issue 40 part 4, planner/cache_extend.c): a load records
**      the pages the proof of "appends only" needs; a gpu_cache call with
**      the entry's own column list, on a table that changed by appends
**      alone (proven), extends the entry with the new rows instead of a
**      reload, and returns its rows.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_extend.h"
#include "cache_fns.h"
#include "cache_persist.h"
#include "cache_plan.h"
#include "filestamp.h"
#include "gpu.h"

#define GA_CACHE_LOAD_TRIES 3

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the column list ---- */

static int affinity(const char *type) {
  char up[256];
  size_t i = 0;
  for (; type && type[i] && i + 1 < sizeof up; i++)
    up[i] = (char)(type[i] >= 'a' && type[i] <= 'z' ? type[i] - 32 : type[i]);
  up[i] = 0;
  if (strstr(up, "INT"))
    return GA_AFF_INTEGER;
  if (strstr(up, "CHAR") || strstr(up, "CLOB") || strstr(up, "TEXT"))
    return GA_AFF_TEXT;
  if (strstr(up, "BLOB") || !up[0])
    return GA_AFF_BLOB;
  if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB"))
    return GA_AFF_REAL;
  return GA_AFF_NUMERIC;
}

typedef struct collist {
  char **name; /* as the table spells them */
  int *aff;
  int n;
  int every; /* rule 8: every column, no list named them */
} collist;

static void collist_free(collist *l) {
  for (int i = 0; i < l->n; i++)
    sqlite3_free(l->name[i]);
  sqlite3_free(l->name);
  sqlite3_free(l->aff);
  memset(l, 0, sizeof(*l));
}

/* Rule 8: NULL (no list) or '*' alone is every column of t. */
static int collist_all(const char *z) {
  if (!z)
    return 1;
  while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r')
    z++;
  if (*z++ != '*')
    return 0;
  while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r')
    z++;
  return !*z;
}

/* Rule 8's list: every column of t, as the table names them. */
static int collist_every(const ga_target *t, collist *l, char **err) {
  if (t->ncols > GA_CACHE_MAX_COLS) {
    *err = sqlite3_mprintf("gpu_cache: %s has %d columns, more than the %d "
                           "an entry holds; name the columns the queries "
                           "read: gpu_cache('%s', 'x, k, y')",
                           t->table, t->ncols, GA_CACHE_MAX_COLS, t->table);
    return SQLITE_ERROR;
  }
  for (int c = 0; c < t->ncols; c++) {
    l->name[l->n] = sqlite3_mprintf("%s", t->cols[c]);
    if (!l->name[l->n])
      return SQLITE_NOMEM;
    l->aff[l->n++] = GA_AFF_BLOB;
  }
  return SQLITE_OK;
}

/* Parse 'x, "k", [y]' against the table's columns (z NULL or '*': every
** column, rule 8).  SQLITE_OK, NOMEM, or SQLITE_ERROR with *err. */
static int collist_parse(sqlite3 *db, const ga_target *t, const char *z,
                         collist *l, char **err) {
  memset(l, 0, sizeof(*l));
  l->name = sqlite3_malloc64(sizeof(char *) * GA_CACHE_MAX_COLS);
  l->aff = sqlite3_malloc64(sizeof(int) * GA_CACHE_MAX_COLS);
  if (!l->name || !l->aff)
    return SQLITE_NOMEM;
  int every = l->every = collist_all(z);
  if (every) {
    int rc = collist_every(t, l, err);
    if (rc != SQLITE_OK)
      return rc;
  }
  const char *p = every ? "" : z;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
      p++;
    if (!*p)
      break;
    char *id = NULL;
    const char *b = p;
    if (*p == '"' || *p == '[' || *p == '`') {
      char close = *p == '[' ? ']' : *p;
      sqlite3_str *s = sqlite3_str_new(NULL);
      for (p++;; p++) {
        if (!*p) {
          sqlite3_free(sqlite3_str_finish(s));
          *err = sqlite3_mprintf("gpu_cache: unterminated name in the "
                                 "column list: %s",
                                 b);
          return SQLITE_ERROR;
        }
        if (*p == close) {
          if (close != ']' && p[1] == close)
            p++;
          else {
            p++;
            break;
          }
        }
        sqlite3_str_appendchar(s, 1, *p);
      }
      id = sqlite3_str_finish(s);
    } else {
      while (*p && *p != ',' && *p != ' ' && *p != '\t' && *p != '\n' &&
             *p != '\r')
        p++;
      id = sqlite3_mprintf("%.*s", (int)(p - b), b);
    }
    if (!id)
      return SQLITE_NOMEM;
    if (!*id) {
      *err =
          sqlite3_mprintf("gpu_cache: an empty name in the column list: %s", z);
      sqlite3_free(id);
      return SQLITE_ERROR;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
      p++;
    if (*p && *p != ',') {
      *err = sqlite3_mprintf("gpu_cache: the column list must be names "
                             "separated by commas: %s",
                             z);
      sqlite3_free(id);
      return SQLITE_ERROR;
    }
    int found = -1;
    for (int c = 0; c < t->ncols; c++)
      if (!sqlite3_stricmp(t->cols[c], id))
        found = c;
    if (found < 0 &&
        (!sqlite3_stricmp(id, "rowid") || !sqlite3_stricmp(id, "_rowid_") ||
         !sqlite3_stricmp(id, "oid"))) {
      *err = sqlite3_mprintf(
          "gpu_cache: %s is the row's key, not a column: every entry keeps "
          "its rows in rowid order, and a shape that reads %s takes the "
          "uncached path; cache the table's INTEGER PRIMARY KEY column "
          "instead, if it has one",
          id, id);
      sqlite3_free(id);
      return SQLITE_ERROR;
    }
    if (found < 0) {
      *err = sqlite3_mprintf("gpu_cache: no such column: %s", id);
      sqlite3_free(id);
      return SQLITE_ERROR;
    }
    sqlite3_free(id);
    int dup = 0;
    for (int i = 0; i < l->n; i++)
      if (!sqlite3_stricmp(l->name[i], t->cols[found]))
        dup = 1;
    if (!dup) {
      if (l->n == GA_CACHE_MAX_COLS) {
        *err = sqlite3_mprintf("gpu_cache: more than %d columns",
                               GA_CACHE_MAX_COLS);
        return SQLITE_ERROR;
      }
      l->name[l->n] = sqlite3_mprintf("%s", t->cols[found]);
      if (!l->name[l->n])
        return SQLITE_NOMEM;
      l->aff[l->n++] = GA_AFF_BLOB;
    }
    if (*p == ',') {
      p++;
      const char *q = p;
      while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
        q++;
      if (!*q || *q == ',') {
        *err = sqlite3_mprintf("gpu_cache: an empty name in the column "
                               "list: %s",
                               z);
        return SQLITE_ERROR;
      }
    }
  }
  if (l->n == 0) {
    *err = sqlite3_mprintf("gpu_cache: empty column list");
    return SQLITE_ERROR;
  }
  /* affinities from the declared types */
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      db, "SELECT name, type FROM pragma_table_xinfo(?1, ?2)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return ga_intr_rc(db, rc);
  sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *nm = (const char *)sqlite3_column_text(st, 0);
    for (int i = 0; nm && i < l->n; i++)
      if (!sqlite3_stricmp(l->name[i], nm))
        l->aff[i] = affinity((const char *)sqlite3_column_text(st, 1));
  }
  if (rc != SQLITE_DONE)
    rc = ga_intr_rc(db, sqlite3_reset(st));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- the load ---- */

/* Free an entry that a load made but that is in no list: its bytes, in
** c->used since the load reserved them, go too. */
static void discard(ga_cache *c, ga_centry *e) {
  if (!e)
    return;
  pthread_mutex_lock(&c->mu);
  c->used -= e->bytes;
  pthread_mutex_unlock(&c->mu);
  ga_centry_free(e);
}

/* Rows of the table, an upper estimate: its rowid span (2 seeks). */
static int64_t rowid_span(sqlite3 *db, const ga_target *t) {
  sqlite3_stmt *st = NULL;
  int64_t span = 0;
  char *sql = sqlite3_mprintf(
      "SELECT (SELECT %s FROM \"%w\".\"%w\" ORDER BY %s DESC LIMIT 1) - "
      "(SELECT %s FROM \"%w\".\"%w\" ORDER BY %s LIMIT 1) + 1",
      t->rowid, t->schema, t->table, t->rowid, t->rowid, t->schema, t->table,
      t->rowid);
  if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    span = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return span > 0 ? span : 0; /* 0: empty, or the span overflowed */
}

static char *collect_sql(const char *schema, const char *table,
                         const char *rowid, const collist *l) {
  return ga_cload_sql(schema, table, rowid, (const char *const *)l->name, l->n);
}

/* Run the collector over the whole table on the caller's connection, as
** piece 0.  SQLite result code. */
static int load_serial(sqlite3 *db, const ga_target *t, const collist *cl,
                       ga_cload *l) {
  char *sql = collect_sql(t->schema, t->table, t->rowid, cl);
  sqlite3_stmt *st = NULL;
  int64_t rows = 0;
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_int64(st, 1, INT64_MIN);
  sqlite3_bind_int64(st, 2, INT64_MAX);
  rc = ga_cload_piece_begin(l, st, 0, INT64_MIN, INT64_MAX);
  if (rc == GA_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      ;
    if (rc == SQLITE_DONE) {
      rc = ga_cload_piece_end(l, 0, 1, &rows) ? SQLITE_ERROR : SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  } else {
    rc = rc == GA_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
  }
  sqlite3_finalize(st);
  return rc;
}

/* One load of the columns into a new entry (not linked).  SQLite result
** code; on SQLITE_ERROR *err says why, and *gpu_failed when a GPU step
** failed. */
static int load_once(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                     const ga_target *t, const collist *cl, int where,
                     ga_centry **out, char *note, size_t nnote, char **err,
                     int *gpu_failed) {
  ga_cache *c = conn->cache;
  ga_plan plan;
  ga_args a = {t->table, NULL, NULL, NULL};
  int rc = SQLITE_OK;
  *out = NULL;
  *gpu_failed = 0;
  /* the plan's path rules (planner/path.c), on the column list as text */
  sqlite3_str *s = sqlite3_str_new(NULL);
  for (int i = 0; i < cl->n; i++)
    sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", cl->name[i]);
  char *expr = sqlite3_str_finish(s);
  if (!expr)
    return SQLITE_NOMEM;
  a.expr = expr;
  ga_config pc = *cfg;
  rc = ga_plan_make(db, &pc, t, &a, &plan);
  sqlite3_free(expr);
  if (rc != SQLITE_OK) {
    ga_plan_free(&plan);
    return rc;
  }
  /* rule 3: a caller reading the schema loads on its own snapshot */
  if (plan.parallel && sqlite3_txn_state(db, t->schema) >= SQLITE_TXN_READ) {
    plan.parallel = 0;
    sqlite3_snprintf((int)sizeof plan.why, plan.why,
                     "the connection holds a read transaction");
  }
  ga_cload *l = ga_cload_new(
      c, where, cl->n, plan.parallel ? plan.spec.est_rows : rowid_span(db, t),
      ga_cache_budget(cfg, where));
  if (!l) {
    ga_plan_free(&plan);
    return SQLITE_NOMEM;
  }
  int enc = SQLITE_UTF8; /* the bytes a TEXT column is cached in */
  rc = ga_db_encoding_of(db, &enc);
  if (rc != SQLITE_OK) {
    ga_cload_abort(l);
    ga_plan_free(&plan);
    return ga_intr_rc(db, rc);
  }
  ga_cload_set_enc(l, enc);
  int done = 0;
  if (plan.parallel && !ga_cload_error(l, NULL, 0, NULL, NULL, NULL)) {
    ga_scan_out so;
    memset(&so, 0, sizeof(so));
    ga_intr intr = {.db = db};
    char *piece = collect_sql("main", t->table, t->rowid, cl);
    /* a reference while the file stays attached (scan_pool.c rule 2) */
    ga_scan_pool_prune(db, conn->cache_pools, &conn->ncache_pools);
    plan.spec.pool =
        piece ? ga_scan_pool_hold(&conn->cache_pools, &conn->ncache_pools,
                                  plan.vfs, plan.path, plan.spec.immutable,
                                  plan.spec.readonly)
              : NULL;
    if (!piece || !plan.spec.pool ||
        ga_plan_verify(&plan, plan.spec.pool) != SQLITE_OK) {
      rc = SQLITE_NOMEM;
    } else if (!plan.parallel) {
      ; /* the serial load below, with the reason */
    } else {
      plan.spec.sql_piece = piece;
      plan.spec.grouped = 0;
      plan.spec.piece_begin = ga_cload_piece_begin;
      plan.spec.piece_end = ga_cload_piece_end;
      plan.spec.piece_arg = l;
      plan.spec.interrupted = ga_intr_check;
      plan.spec.interrupted_arg = &intr;
      int src = ga_intr_check(&intr) ? GA_SCAN_INTERRUPT /* as gpu_aggregate */
                                     : ga_scan_run(&plan.spec, &so);
      ga_scan_out_free(&so);
      ga_intr_free(&intr);
      if (src == GA_SCAN_OK) {
        done = 1;
        snprintf(note, nnote, "parallel, %d threads, %lld pieces", so.threads,
                 (long long)so.pieces);
      } else if (src == GA_SCAN_INTERRUPT) {
        rc = SQLITE_INTERRUPT;
      } else if (src == GA_SCAN_NOMEM) {
        rc = SQLITE_NOMEM;
      } else if (!ga_cload_error(l, NULL, 0, NULL, NULL, NULL)) {
        /* the scan's own reason (a snapshot, a worker): serial instead */
        sqlite3_snprintf((int)sizeof plan.why, plan.why, "%s", so.why);
        ga_cload_reset(l);
      }
    }
    sqlite3_free(piece);
  }
  if (rc == SQLITE_OK && !done &&
      !ga_cload_error(l, NULL, 0, NULL, NULL, NULL)) {
    rc = load_serial(db, t, cl, l);
    if (rc == SQLITE_OK || ga_cload_error(l, NULL, 0, NULL, NULL, NULL))
      sqlite3_snprintf((int)nnote, note, "serial: %s", plan.why);
    if (rc == SQLITE_ERROR && ga_cload_error(l, NULL, 0, NULL, NULL, NULL))
      rc = SQLITE_OK; /* the load's own reason, below */
    else if (rc != SQLITE_OK && !*err && (rc & 0xff) != SQLITE_NOMEM &&
             (rc & 0xff) != SQLITE_INTERRUPT)
      *err = sqlite3_mprintf("gpu_cache: %s", sqlite3_errmsg(db));
  }
  ga_plan_free(&plan);
  if (rc != SQLITE_OK) {
    ga_cload_abort(l);
    return rc;
  }
  char why[256];
  int col = 0, type = 0;
  int lerr = ga_cload_error(l, why, sizeof why, gpu_failed, &col, &type);
  ga_centry *e = lerr ? NULL : ga_cload_finish(l);
  if (!e) {
    lerr = ga_cload_error(l, why, sizeof why, gpu_failed, &col, &type);
    ga_cload_abort(l);
    if (lerr == GA_NOMEM)
      return SQLITE_NOMEM;
    if (lerr == GA_CLOAD_ETYPE)
      *err = sqlite3_mprintf("gpu_cache: column %s holds %s values (INTEGER, "
                             "REAL, TEXT and NULL can be cached)%s%s%s",
                             cl->name[col], type == GA_V_TEXT ? "TEXT" : "BLOB",
                             cl->every ? "; without a column list every column "
                                         "is cached: name the columns the "
                                         "queries read, gpu_cache('"
                                       : "",
                             cl->every ? t->table : "",
                             cl->every ? "', 'x, k, y')" : "");
    else if (lerr == GA_CLOAD_EDICT)
      *err = sqlite3_mprintf("gpu_cache: column %s has more than %lld "
                             "distinct TEXT values",
                             cl->name[col], (long long)GA_DICT_MAX);
    else if (lerr == GA_CLOAD_EBUDGET)
      *err = sqlite3_mprintf("gpu_cache: %s.%s (%d column%s) needs more than "
                             "cache_bytes = %lld bytes in %s memory",
                             t->schema, t->table, cl->n, cl->n > 1 ? "s" : "",
                             (long long)ga_cache_budget(cfg, where),
                             where == GA_CACHE_GPU ? "GPU" : "host");
    else
      *err = sqlite3_mprintf("gpu_cache: %s.%s: %s", t->schema, t->table, why);
    return SQLITE_ERROR;
  }
  *out = e;
  return SQLITE_OK;
}

/* Rule 11: the entry holds exactly the columns of the list, in order. */
static int same_columns(const ga_centry *e, const collist *l) {
  if (e->ncols != l->n)
    return 0;
  for (int i = 0; i < l->n; i++)
    if (sqlite3_stricmp(e->cols[i].name, l->name[i]))
      return 0;
  return 1;
}

/* gpu_aggregate's errors name gpu_aggregate: ours name gpu_cache. */
static char *our_prefix(char *err) {
  const char *pre = "gpu_aggregate: ";
  if (err && !strncmp(err, pre, strlen(pre))) {
    char *m = sqlite3_mprintf("gpu_cache: %s", err + strlen(pre));
    sqlite3_free(err);
    return m;
  }
  return err;
}

static void result_err(sqlite3_context *ctx, int rc, char *err) {
  if (err) {
    sqlite3_result_error(ctx, err, -1);
    sqlite3_free(err);
  } else if ((rc & 0xff) == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else {
    sqlite3_result_error_code(ctx, rc);
  }
}

void ga_cache_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_conn *conn = ((ga_fn_data *)sqlite3_user_data(ctx))->conn;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ga_config cfg = conn->cfg;
  ga_target t;
  collist cl;
  char *err = NULL;
  int rc;
  memset(&t, 0, sizeof(t));
  memset(&cl, 0, sizeof(cl));
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT ||
      (argc > 1 && sqlite3_value_type(argv[1]) != SQLITE_TEXT)) {
    sqlite3_result_error(ctx,
                         "gpu_cache: the table and the column list "
                         "must be text",
                         -1);
    return;
  }
  if (!conn->cache) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  const char *tname = (const char *)sqlite3_value_text(argv[0]);
  /* rule 8: no list, every column */
  const char *list = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "*";
  if (!tname || !list) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = ga_target_resolve(db, tname, &t, &err);
  err = our_prefix(err);
  if (rc == SQLITE_OK && !err) {
    if (strcmp(t.type, "table"))
      err = sqlite3_mprintf("gpu_cache: %s is a %s (only rowid tables can be "
                            "cached)",
                            t.table, t.type);
    else if (t.without_rowid)
      err = sqlite3_mprintf("gpu_cache: %s is a WITHOUT ROWID table (only "
                            "rowid tables can be cached)",
                            t.table);
    else if (!t.rowid)
      err = sqlite3_mprintf("gpu_cache: %s has columns named rowid, _rowid_ "
                            "and oid",
                            t.table);
    else if (sqlite3_stricmp(t.schema, "main") &&
             sqlite3_stricmp(t.schema, "temp")) {
      const char *f = sqlite3_db_filename(db, t.schema);
      if (!f || !*f)
        err = sqlite3_mprintf("gpu_cache: %s.%s is in an attached in-memory "
                              "database, which another could replace under "
                              "the same name unseen",
                              t.schema, t.table);
    }
  }
  if (rc == SQLITE_OK && !err)
    rc = collist_parse(db, &t, list, &cl, &err);
  if (rc == SQLITE_OK && !err &&
      sqlite3_txn_state(db, t.schema) == SQLITE_TXN_WRITE)
    err = sqlite3_mprintf("gpu_cache: not inside a transaction that writes "
                          "to %s (its rows could be rolled back unseen); "
                          "load before the first write or after COMMIT",
                          t.schema);
  /* rule 2: asked before any stamp's statement opens a transaction */
  if (rc == SQLITE_OK && !err && ga_cstamp_snapshot_unprovable(db, t.schema))
    err = sqlite3_mprintf(
        "gpu_cache: %s is an attached database in WAL mode, and this "
        "connection has a transaction open on it: its snapshot may be older "
        "than the newest commit, which is all a stamp can record; call "
        "gpu_cache outside the transaction",
        t.schema);
  if (rc != SQLITE_OK || err) {
    collist_free(&cl);
    ga_target_free(&t);
    result_err(ctx, rc, err);
    return;
  }

  /* rule 2: the watchers of gone files and stale entries are closed at
  ** every cache operation (a deleted file's descriptors released) */
  ga_cache_watchers(conn->cache, db);
  /* rule 7: a reload replaces the entry only when it succeeds; meanwhile
  ** the old one is out of the list, its bytes free for the new one.  The
  ** old one may be another connection's shared entry of the same file
  ** (rule 9): the key is the file's */
  ga_centry *old = ga_cache_lookup(conn->cache, db, t.schema, t.table);
  /* rule 11: appends alone since the entry's state extend it instead */
  if (old && same_columns(old, &cl)) {
    int64_t added = -1;
    char xwhy[200];
    rc = ga_cextend_try(conn->cache, db, &cfg, t.schema, old, &added, xwhy,
                        sizeof xwhy);
    if (rc != SQLITE_OK || added >= 0) {
      int64_t rows = old->rows;
      ga_centry_put(conn->cache, old);
      collist_free(&cl);
      ga_target_free(&t);
      if (rc != SQLITE_OK)
        result_err(ctx, rc, NULL);
      else
        sqlite3_result_int64(ctx, rows);
      return;
    }
  }
  int old_linked = old && ga_cache_unlink(conn->cache, old);
  /* rule 9: a snapshot older than the newest commit cannot be shared */
  int txn_before = sqlite3_txn_state(db, t.schema);
  int where = ga_cache_where(&cfg);
  ga_centry *e = NULL;
  char note[160] = "";
  double t0 = now_ms();
  int tries = 0, gpu_note = 0;
  sqlite3 *watch = NULL; /* rule 2's watcher, when the stamp needs one */
  /* a valid cache file instead of a load from rows (cache_persist.c) */
  rc = ga_persist_map(conn, db, &cfg, &t, (const char *const *)cl.name, cl.aff,
                      cl.n, where, &e, note, sizeof note);
  int dev_where = where; /* a file's entry is loaded in host memory first */
  where = ga_persist_load_where(db, &cfg, t.schema, where);
  while (rc == SQLITE_OK && !e) {
    ga_cstamp before, after;
    int gpu_failed = 0;
    memset(&before, 0, sizeof(before));
    memset(&after, 0, sizeof(after));
    rc = ga_cstamp_read(db, t.schema, watch, &before);
    if (rc == SQLITE_OK && before.attached &&
        (before.fs.gone || before.fs.noident)) {
      err = sqlite3_mprintf(
          "gpu_cache: %s.%s: %s", t.schema, t.table,
          before.fs.gone ? "the attached file's path names another file now, "
                           "or none (renamed over or deleted while attached); "
                           "DETACH and ATTACH it again"
                         : "the attached file's identity cannot be read "
                           "(stat() of its name failed), so a DETACH and "
                           "ATTACH of another file under that name would "
                           "pass unseen; cache it on a connection that opens "
                           "it as main");
      rc = SQLITE_ERROR;
    }
    if (rc == SQLITE_OK && before.unprovable && !watch &&
        ga_cache_watchers(conn->cache, db) >= GA_CACHE_WATCHERS) {
      err = sqlite3_mprintf(
          "gpu_cache: %s.%s: %s is an attached database in WAL mode with no "
          "committed frame in its WAL, which only a connection of the "
          "cache's own to the file can keep proven, and %d entries hold one "
          "already (the most per connection); drop one with "
          "gpu_cache_drop, or cache it after a commit to that database",
          t.schema, t.table, t.schema, GA_CACHE_WATCHERS);
      rc = SQLITE_ERROR;
    }
    if (rc == SQLITE_OK && before.unprovable && !watch) {
      /* rule 2: an attached WAL file with no committed frame in its WAL is
      ** proven by a connection of the entry's own, open from before the
      ** load for as long as the entry lives */
      ga_cstamp_free(&before);
      watch = ga_cstamp_watch(db, t.schema);
      rc = ga_cstamp_read(db, t.schema, watch, &before);
    }
    if (rc == SQLITE_OK && before.unprovable && !before.watched) {
      err = sqlite3_mprintf(
          "gpu_cache: %s.%s: %s is an attached database in WAL mode with no "
          "committed frame in its WAL, and the cache cannot open a "
          "connection of its own to it to see commits after a DETACH and "
          "ATTACH; cache it after a commit to that database, or on a "
          "connection that opens it as main",
          t.schema, t.table, t.schema);
      rc = SQLITE_ERROR;
    }
    if (rc == SQLITE_OK)
      rc = load_once(conn, db, &cfg, &t, &cl, where, &e, note, sizeof note,
                     &err, &gpu_failed);
    if (rc == SQLITE_OK && err) /* cannot happen: errors come with a code */
      rc = SQLITE_ERROR;
    if (rc == SQLITE_ERROR && gpu_failed && where == GA_CACHE_GPU) {
      /* rule 5: host memory instead */
      sqlite3_free(err);
      err = NULL;
      ga_cstamp_free(&before);
      where = GA_CACHE_HOST;
      gpu_note = 1;
      rc = SQLITE_OK;
      continue;
    }
    if (rc == SQLITE_OK)
      rc = ga_cstamp_read(db, t.schema, watch, &after);
    if (rc != SQLITE_OK) {
      discard(conn->cache, e);
      e = NULL;
      ga_cstamp_free(&before);
      ga_cstamp_free(&after);
      break;
    }
    /* the load wrote nothing on this connection; its own reads do not
    ** count as changes */
    if (!ga_cstamp_diff(&before, &after)) {
      e->stamp = before;
      ga_cstamp_free(&after);
      break;
    }
    discard(conn->cache, e);
    e = NULL;
    ga_cstamp_free(&before);
    ga_cstamp_free(&after);
    if (++tries >= GA_CACHE_LOAD_TRIES) {
      err = sqlite3_mprintf("gpu_cache: %s.%s changed during each of %d "
                            "loads; nothing cached",
                            t.schema, t.table, tries);
      rc = SQLITE_ERROR;
      break;
    }
  }
  if (rc == SQLITE_OK) {
    e->watch = watch; /* freed with the entry */
    watch = NULL;
  }
  sqlite3_close(watch);
  if (rc != SQLITE_OK) {
    collist_free(&cl);
    ga_target_free(&t);
    if (old && old_linked)
      ga_cache_relink(conn->cache, old); /* rule 7: as it was */
    ga_centry_put(conn->cache, old);
    result_err(ctx, rc, err);
    return;
  }
  char rowid_name[8];
  snprintf(rowid_name, sizeof rowid_name, "%s", t.rowid ? t.rowid : "");
  /* the entry takes the names and the affinities */
  e->schema = sqlite3_mprintf("%s", t.schema);
  e->table = sqlite3_mprintf("%s", t.table);
  int nodict = 0;
  for (int i = 0; i < cl.n; i++) {
    ga_ccol *col = &e->cols[i];
    col->name = cl.name[i];
    col->aff = cl.aff[i];
    cl.name[i] = NULL;
    /* a TEXT-affinity column of NULLs only: TEXT with no value yet (an
    ** empty dictionary), so its shapes are those of TEXT columns */
    if (col->aff == GA_AFF_TEXT && !col->dict && !col->nint && !col->nreal &&
        (!(col->dict = ga_dict_new()) || ga_dict_seal(col->dict)))
      nodict = 1;
  }
  collist_free(&cl);
  ga_target_free(&t);
  if (e->schema && e->table && !nodict)
    e->auth_sig = ga_centry_sig(db, e->schema, e, &rc);
  if (!e->schema || !e->table || !e->auth_sig) {
    int nomem =
        !e->schema || !e->table || nodict || (rc & 0xff) == SQLITE_NOMEM;
    discard(conn->cache, e);
    if (old && old_linked)
      ga_cache_relink(conn->cache, old); /* rule 7, as above */
    ga_centry_put(conn->cache, old);
    if (!nomem)
      sqlite3_result_error(ctx,
                           "gpu_cache: cannot compile a read of the "
                           "columns",
                           -1);
    else
      sqlite3_result_error_nomem(ctx);
    return;
  }
  e->load_ms = now_ms() - t0;
  e->lru = ga_cache_touch(conn->cache);
  if (gpu_note)
    sqlite3_snprintf((int)sizeof e->note, e->note,
                     "%s; in host memory: the GPU failed", note);
  else
    sqlite3_snprintf((int)sizeof e->note, e->note, "%s", note);
  /* rule 9: the owner, and the key other connections share it by */
  e->owner = db;
  e->fs = e->stamp.fs;
  uint64_t dev = 0, ino = 0;
  e->shareable =
      sqlite3_stricmp(e->schema, "temp") &&
      (e->fs.ok || (e->fs.walempty && !sqlite3_stricmp(e->schema, "main"))) &&
      !e->watch && !(e->fs.wal && txn_before != SQLITE_TXN_NONE) &&
      ga_fstamp_ident(db, e->schema, &dev, &ino) && dev == e->fs.st_dev &&
      ino == e->fs.st_ino;
  e->fdev = dev;
  e->fino = ino;
  /* rule 10: its cache file, and a GPU entry's copy to the device, while
  ** the entry is still this call's own: once linked, another connection
  ** may query, replace or evict it (engine/cache/cache.c rule 6) */
  ga_persist_save(conn, db, &cfg, e);
  ga_persist_to_device(conn, db, &cfg, e, dev_where);
  /* rule 11: the pages a later extension's proof needs */
  ga_cextend_record(db, e, rowid_name[0] ? rowid_name : NULL);
  int64_t rows = e->rows;
  /* another thread's load of the same key meanwhile: this one replaces it */
  ga_centry *dup = ga_cache_lookup(conn->cache, db, e->schema, e->table);
  if (dup)
    ga_cache_drop(conn->cache, dup);
  ga_cache_link(conn->cache, e);
  if (old)
    ga_cache_free_unlinked(conn->cache, old); /* replaced */
  sqlite3_result_int64(ctx, rows);
}

void ga_cache_drop_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_conn *conn = ((ga_fn_data *)sqlite3_user_data(ctx))->conn;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  if (!conn->cache) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  ga_centry **vis = NULL;
  if (argc == 0) {
    /* rule 9: every entry this connection sees (its own, and the shared
    ** ones of its files) */
    int n = ga_cache_visible_entries(conn->cache, db, &vis);
    if (n < 0) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    for (int i = 0; i < n; i++)
      ga_cache_drop(conn->cache, vis[i]);
    sqlite3_free(vis);
    sqlite3_result_int(ctx, n);
    return;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "gpu_cache_drop: the table must be text", -1);
    return;
  }
  const char *name = (const char *)sqlite3_value_text(argv[0]);
  ga_target t;
  char *err = NULL;
  ga_centry *e = NULL;
  int rc = ga_target_resolve(db, name, &t, &err);
  if (rc == SQLITE_OK) {
    e = ga_cache_lookup(conn->cache, db, t.schema, t.table);
  } else if (rc == SQLITE_ERROR) {
    /* a table dropped since: its entry by name ("t" or "schema.t") */
    int n = ga_cache_visible_entries(conn->cache, db, &vis);
    for (int i = 0; i < n; i++) {
      ga_centry *x = vis[i];
      char *full = e ? NULL : sqlite3_mprintf("%s.%s", x->schema, x->table);
      if (full &&
          (!sqlite3_stricmp(full, name) || !sqlite3_stricmp(x->table, name)))
        e = x;
      else
        ga_centry_put(conn->cache, x);
      sqlite3_free(full);
    }
    sqlite3_free(vis);
    rc = n < 0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  sqlite3_free(err);
  ga_target_free(&t);
  if (rc != SQLITE_OK) {
    ga_centry_put(conn->cache, e);
    result_err(ctx, rc, NULL);
    return;
  }
  if (e)
    ga_cache_drop(conn->cache, e);
  sqlite3_result_int(ctx, e != NULL);
}
