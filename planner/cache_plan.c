/*
** cache_plan.c — whether gpu_cache's entry answers a gpu_aggregate call
** (ga_cache_answer, asked before a scan is planned), the stamps that keep
** it current, and the cache's state for gpuagg_info().  The shapes an
** entry can answer are cache_shape.c's; the load is ext/cache/cache_fns.c.
**
** Rules (numbered as in ext/cache/cache_fns.c, which keeps the others):
**   2. Never stale.  An entry records (ga_cstamp) the schema's data_version
**      (commits of every other connection and process), this connection's
**      sqlite3_total_changes64 (its own writes, committed or not, rolled
**      back or not), the schema_version (DDL, drop and re-create under one
**      name, VACUUM) and the file behind the schema (a DETACH and ATTACH of
**      another file under the same name).  An answer is taken only when all
**      are the same as now; otherwise the entry is marked stale for good
**      and gpu_aggregate takes its uncached path.  No commit, update or
**      rollback hook is used: those slots belong to the application.
**      An attached schema's entry also records its file as it is on disk
**      (header, size, WAL header and size, read through SQLite's own open
**      files): a DETACH and ATTACH of the same file opens a new pager,
**      whose data_version and even address can be the old ones, so only
**      the file tells that another connection wrote it meanwhile.
**   6. The cache answers only what the caller's connection would read now;
**      it steps aside (uncached path, the reason in last_scan.why) while a
**      statement or transaction of the connection writes to the schema
**      (total_changes moves only when a statement ends: an UPDATE that
**      reads the table row by row must see its own writes), under
**      read_uncommitted = 1 (shared cache: other connections' uncommitted
**      rows), and when the application's authorizer compiles a read of the
**      entry's columns otherwise than at the load (the opcodes of SELECT
**      <columns>, ga_program_sig; the load itself runs on the caller's
**      connection when an authorizer changes it, planner/path.c rule 10).
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_plan.h"
#include "gpu.h"

/* ---- stamps (rule 2) ---- */

static int pragma_int(sqlite3 *db, const char *fmt, const char *schema,
                      int64_t *out) {
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf(fmt, schema);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static int64_t total_changes(sqlite3 *db) {
#ifndef SQLITE_CORE
  /* the API table has total_changes64 from 3.37 on */
  if (sqlite3_libversion_number() < 3037000)
    return sqlite3_total_changes(db);
#endif
  return sqlite3_total_changes64(db);
}

void ga_cstamp_free(ga_cstamp *s) {
  sqlite3_free(s->file);
  s->file = NULL;
}

/* Up to n bytes of f from offset 0, and its size, into *id (zeros where f
** is not open, as a WAL before its first use). */
static void ident_file(sqlite3_file *f, int n, unsigned char *id, int *nid) {
  unsigned char buf[100];
  sqlite3_int64 size = -1;
  memset(buf, 0, sizeof buf);
  if (f && f->pMethods) {
    if (f->pMethods->xFileSize(f, &size) != SQLITE_OK)
      size = -2;
    /* SQLITE_IOERR_SHORT_READ zero-fills: a short file reads as zeros */
    if (f->pMethods->xRead(f, buf, n, 0) != SQLITE_OK &&
        f->pMethods->xRead(f, buf, n, 0) != SQLITE_IOERR_SHORT_READ)
      memset(buf, 0xff, sizeof buf);
  }
  memcpy(id + *nid, buf, (size_t)n);
  *nid += n;
  memcpy(id + *nid, &size, sizeof size);
  *nid += (int)sizeof size;
}

/* Rule 2's identity of an attached file: its first 100 bytes (the header,
** whose change counter every commit in rollback-journal mode moves), its
** size, and its WAL's header (new salts at each restart) and size (each
** commit appends), read through SQLite's own open files, not a second
** descriptor (closing one would drop the process's POSIX locks on it). */
static void stamp_ident(sqlite3 *db, const char *schema, ga_cstamp *s) {
  sqlite3_file *f = NULL, *j = NULL;
  s->nident = 0;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &f) !=
      SQLITE_OK)
    f = NULL;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &j) !=
      SQLITE_OK)
    j = NULL;
  ident_file(f, 100, s->ident, &s->nident);
  ident_file(j, 32, s->ident, &s->nident);
}

/* The schema's state now.  SQLite result code. */
int ga_cstamp_read(sqlite3 *db, const char *schema, ga_cstamp *s) {
  memset(s, 0, sizeof(*s));
  int rc =
      pragma_int(db, "PRAGMA \"%w\".data_version", schema, &s->data_version);
  if (rc == SQLITE_OK)
    rc = pragma_int(db, "PRAGMA \"%w\".schema_version", schema,
                    &s->schema_version);
  if (rc != SQLITE_OK)
    return rc;
  s->total_changes = total_changes(db);
  const char *f = sqlite3_db_filename(db, schema);
  s->file = sqlite3_mprintf("%s", f ? f : "");
  if (!s->file)
    return SQLITE_NOMEM;
  void *fp = NULL;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &fp) !=
      SQLITE_OK)
    fp = NULL;
  s->fileobj = fp;
  if (sqlite3_stricmp(schema, "main") && sqlite3_stricmp(schema, "temp"))
    stamp_ident(db, schema, s);
  return SQLITE_OK;
}

/* NULL when a and b are the same state, else what differs. */
const char *ga_cstamp_diff(const ga_cstamp *a, const ga_cstamp *b) {
  if (a->data_version != b->data_version)
    return "another connection committed (data_version)";
  if (a->total_changes != b->total_changes)
    return "this connection wrote (total_changes)";
  if (a->schema_version != b->schema_version)
    return "the schema changed (schema_version)";
  if (strcmp(a->file, b->file) || a->fileobj != b->fileobj)
    return "another database is attached under that name";
  if (a->nident != b->nident || memcmp(a->ident, b->ident, (size_t)a->nident))
    return "the attached file changed (detached and attached again, or "
           "written)";
  return NULL;
}

/* ---- the authorizer (rule 6) ---- */

/* The caller's program of SELECT <the entry's columns> FROM its table
** (ga_program_sig); NULL with *rc on failure. */
char *ga_centry_sig(sqlite3 *db, const ga_centry *e, int *rc) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "SELECT ");
  for (int i = 0; i < e->ncols; i++)
    sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", e->cols[i].name);
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\"", e->schema, e->table);
  char *sql = sqlite3_str_finish(s);
  if (!sql) {
    *rc = SQLITE_NOMEM;
    return NULL;
  }
  char *sig = ga_program_sig(db, sql, rc);
  sqlite3_free(sql);
  return sig;
}

/* ---- the cache step ---- */

static int cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                        const ga_target *t, const ga_parts *p, ga_cquery *qp,
                        ga_scan_out *out, int *hit, char *why, size_t nwhy) {
  ga_cache *c = conn->cache;
  ga_cstamp now;
  *hit = 0;
  why[0] = 0;
  memset(out, 0, sizeof(*out));
  ga_centry *e = c ? ga_cache_find(c, t->schema, t->table) : NULL;
  if (!e)
    return SQLITE_OK;
  if (cfg->cache_bytes > 0)
    ga_cache_fit(c, cfg->cache_bytes); /* a lowered budget */
  e = ga_cache_find(c, t->schema, t->table);
  if (!e) {
    snprintf(why, nwhy, "the entry was evicted (cache_bytes)");
    return SQLITE_OK;
  }
  if (e->stale) {
    snprintf(why, nwhy, "the entry is stale; gpu_cache reloads it");
    return SQLITE_OK;
  }
  if (e->where == GA_CACHE_GPU && cfg->device == GA_DEVICE_CPU) {
    snprintf(why, nwhy, "the entry is in GPU memory and device = 'cpu'");
    return SQLITE_OK;
  }
  int rc = ga_cache_shape(db, e, t, p, qp, why, nwhy);
  if (rc != 1)
    return rc == 0 ? SQLITE_OK : rc;
  rc = ga_cstamp_read(db, t->schema, &now);
  if (rc != SQLITE_OK) {
    ga_cstamp_free(&now);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      return rc & 0xff;
    snprintf(why, nwhy, "cannot read the database's version (%s)",
             sqlite3_errstr(rc));
    return SQLITE_OK;
  }
  const char *diff = ga_cstamp_diff(&e->stamp, &now);
  ga_cstamp_free(&now);
  if (diff) {
    e->stale = 1; /* never used again (rule 2) */
    snprintf(why, nwhy, "the entry is stale: %s", diff);
    return SQLITE_OK;
  }
  /* rule 6: the caller's own view of the rows */
  if (sqlite3_txn_state(db, t->schema) == SQLITE_TXN_WRITE) {
    snprintf(why, nwhy,
             "a statement of this connection is writing to %s "
             "(its changes count only when it ends)",
             t->schema);
    return SQLITE_OK;
  }
  int64_t ru = 0;
  rc = pragma_int(db, "PRAGMA read_uncommitted%s", "", &ru);
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  if (rc != SQLITE_OK || ru) {
    snprintf(why, nwhy,
             "read_uncommitted = 1 (the connection may read "
             "other connections' uncommitted rows)");
    return SQLITE_OK;
  }
  char *sig = ga_centry_sig(db, e, &rc);
  if (!sig && ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT))
    return rc & 0xff;
  int same = sig && !strcmp(sig, e->auth_sig);
  sqlite3_free(sig);
  if (!same) {
    snprintf(why, nwhy,
             "the connection's authorizer treats the columns "
             "otherwise than at the load");
    return SQLITE_OK;
  }
  int threads = ga_config_threads(cfg);
  char qwhy[200] = "";
  if (e->where == GA_CACHE_GPU)
    rc = ga_cache_query_gpu(c, e, qp, out, qwhy, sizeof qwhy);
  else
    rc = ga_cache_query_host(c, e, qp, threads, out, qwhy, sizeof qwhy);
  if (rc == GA_SCAN_OK && ga_cache_decode_keys(e, qp, out))
    rc = GA_SCAN_NOMEM;
  if (rc == GA_SCAN_OK) {
    *hit = 1;
    e->hits++;
    e->lru = ga_cache_touch(c);
    if (e->where == GA_CACHE_GPU)
      c->queries_gpu++;
    else
      c->queries_host++;
    snprintf(why, nwhy, "%s cache", e->where == GA_CACHE_GPU ? "GPU" : "host");
    return SQLITE_OK;
  }
  if (rc == GA_SCAN_NOMEM)
    return SQLITE_NOMEM;
  if (rc == GA_CACHE_DECLINED) { /* this shape, not the entry */
    snprintf(why, nwhy, "%s", qwhy);
    return SQLITE_OK;
  }
  c->fallbacks++;
  if (e->where == GA_CACHE_GPU) { /* rule 5 */
    snprintf(why, nwhy, "%s; the entry was dropped", qwhy);
    ga_cache_drop(c, e);
  } else {
    snprintf(why, nwhy, "%s", qwhy);
  }
  return SQLITE_OK;
}

int ga_cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                    const ga_target *t, const ga_parts *p, ga_scan_out *out,
                    int *hit, char *why, size_t nwhy) {
  ga_cquery q;
  memset(&q, 0, sizeof(q));
  int rc = cache_answer(conn, db, cfg, t, p, &q, out, hit, why, nwhy);
  ga_cquery_free(&q);
  return rc;
}

/* ---- gpuagg_info()'s "cache" ---- */

static void json_str(sqlite3_str *s, const char *z) {
  sqlite3_str_appendchar(s, 1, '"');
  for (; z && *z; z++) {
    unsigned char ch = (unsigned char)*z;
    if (ch == '"' || ch == '\\')
      sqlite3_str_appendf(s, "\\%c", ch);
    else if (ch < 0x20)
      sqlite3_str_appendf(s, "\\u%04x", ch);
    else
      sqlite3_str_appendchar(s, 1, (char)ch);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

char *ga_cache_json(ga_conn *conn, sqlite3 *db) {
  ga_config cfg = conn->cfg;
  ga_cache *c = conn->cache;
  int where = ga_cache_where(&cfg);
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(
      s,
      "{\"where\":\"%s\",\"budget\":%lld,\"used\":%lld,"
      "\"scratch\":%lld,\"queries_gpu\":%lld,"
      "\"queries_host\":%lld,\"fallbacks\":%lld,\"queries_topk\":%lld,"
      "\"entries\":[",
      where == GA_CACHE_GPU ? "gpu" : "host",
      (long long)ga_cache_budget(&cfg, where), (long long)(c ? c->used : 0),
      (long long)(c ? c->scratch_bytes : 0),
      (long long)(c ? c->queries_gpu : 0), (long long)(c ? c->queries_host : 0),
      (long long)(c ? c->fallbacks : 0), (long long)(c ? c->queries_topk : 0));
  for (ga_centry *e = c ? c->entries : NULL; e; e = e->next) {
    ga_cstamp now;
    int current = 0;
    memset(&now, 0, sizeof(now));
    if (!e->stale && ga_cstamp_read(db, e->schema, &now) == SQLITE_OK)
      current = ga_cstamp_diff(&e->stamp, &now) == NULL;
    ga_cstamp_free(&now);
    sqlite3_str_appendf(s, "%s{\"table\":", e == c->entries ? "" : ",");
    char *full = sqlite3_mprintf("%s.%s", e->schema, e->table);
    json_str(s, full);
    sqlite3_free(full);
    sqlite3_str_appendall(s, ",\"columns\":[");
    for (int k = 0; k < e->ncols; k++) {
      if (k)
        sqlite3_str_appendchar(s, 1, ',');
      json_str(s, e->cols[k].name);
    }
    sqlite3_str_appendf(s,
                        "],\"rows\":%lld,\"bytes\":%lld,\"where\":\"%s\","
                        "\"current\":%s,\"hits\":%lld,\"load_ms\":%.3f,"
                        "\"how\":",
                        (long long)e->rows, (long long)e->bytes,
                        e->where == GA_CACHE_GPU ? "gpu" : "host",
                        current ? "true" : "false", (long long)e->hits,
                        e->load_ms);
    json_str(s, e->note);
    /* TEXT columns: their distinct values (engine/cache/dict.h) */
    sqlite3_str_appendall(s, ",\"text\":{");
    for (int k = 0, n = 0; k < e->ncols; k++) {
      if (!e->cols[k].dict)
        continue;
      if (n++)
        sqlite3_str_appendchar(s, 1, ',');
      json_str(s, e->cols[k].name);
      sqlite3_str_appendf(s, ":%lld",
                          (long long)ga_dict_count(e->cols[k].dict));
    }
    sqlite3_str_appendall(s, "},\"mixed\":[");
    for (int k = 0, n = 0; k < e->ncols; k++)
      if (e->cols[k].mixed) {
        if (n++)
          sqlite3_str_appendchar(s, 1, ',');
        json_str(s, e->cols[k].name);
      }
    sqlite3_str_appendall(s, "]}");
  }
  sqlite3_str_appendall(s, "]}");
  return sqlite3_str_finish(s);
}
