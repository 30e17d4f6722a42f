/*
** query_json.c — gpu_query_json: a gpu_query text in one statement, for
** the clients that run one statement at a time (sqlite-utils' CLI,
** Datasette, the sqlite3 shell's -cmd, any binding without a helper).
**
** SQL interface:
**
**   SELECT row_json FROM gpu_query_json('SELECT ...', p1, p2, ...);
**
**   An eponymous table-valued function: one row per result row of the
**   text, in the order gpu_query gives them (the text's ORDER BY), and
**   row_json the row's values as one JSON array.  Its HIDDEN columns are
**   sql (the text) and p1 .. p32, which bind the text's parameters by
**   number (?1 .. ?32: ?N, or :a, @a, $a in the order SQLite numbers them).
**
** Rules:
**   1. The text runs through a gpu_query table in temp (query_vtab.c, its
**      rules: the same paths, answers and last_scan), named
**      gpuagg_json_<FNV-1a 64 of the text, 16 hex digits>, created at the
**      first call of the text with the text quoted by sqlite3_mprintf's %Q:
**      nothing of the text runs as SQL but the SELECT that gpu_query
**      parses.  A table of that name whose schema text is not exactly the
**      one made here for this text (a hash collision, or the caller's own
**      table) is never read nor dropped: the next name, _1 .. _7, is tried.
**   2. An eponymous table declares its columns before it sees an argument,
**      so the parameters are GA_QJSON_MAX_PARAMS hidden columns.  A text
**      with more parameters is an error naming the gpu_query form that
**      takes them; an argument past the text's parameters is an error
**      saying how many it takes; an unbound parameter is NULL (as in
**      gpu_query).
**   3. Plan reuse.  Per connection, up to GA_QJSON_KEEP texts, holding
**      GA_QJSON_KEEP_BYTES of text together, keep their table and a
**      prepared statement over it: a call of a kept text creates and
**      prepares nothing (gpuagg_info()'s gpu_query_json counts: calls,
**      created, reused, prepared, dropped, kept).  Past either cap the least
**      recently used text that no cursor is reading loses its statement
**      and its table (DROP TABLE).  A kept text's table is checked against
**      temp's schema at every call (the ROLLBACK of the transaction that
**      created it, a DROP by the caller): gone or changed, it is made
**      again.
**   4. Exact JSON, readable by SQLite's own ->> and json_extract, Python's
**      json and JavaScript's JSON.parse alike: INTEGER as its digits; REAL
**      as the shortest decimal that reads back to the same bits, always
**      with a '.' or an exponent so that it reads back as REAL (infinities
**      as 9.0e999 and -9.0e999, as SQLite's JSON writes them); TEXT as a
**      JSON string (quote, backslash and control characters escaped); NULL
**      as null.  A BLOB is an error (JSON holds none; json_array's too).
**      A row is built in a sqlite3_str of the connection, bounded by
**      SQLITE_LIMIT_LENGTH.
**   5. DIRECTONLY, as gpu_query: views and triggers of a database file
**      cannot call it.  Errors start "gpu_query_json:" (gpu_query's
**      messages about the text under that prefix).
**   6. The kept statements are finalized by xDisconnect, which SQLite runs
**      at close before it looks for unfinalized statements (sqlite3Close:
**      "the v-table implementation may be storing some prepared statements
**      internally"), so a kept statement never holds a connection open.
**   7. The outer SELECT is part of the call: it runs for the text alone,
**      and its read transaction began with the call, as the calling
**      statement's of a gpu_query table does.  While the inner statement
**      steps, ga_conn.qjson_stepping says so, and planner/path.c rule 4
**      counts the outer SELECT with the caller (ga_parts.call_stmts), so
**      the text takes the parallel path as a gpu_query table would; any
**      other running statement still sends it to the serial path.
*/
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_plan.h"
#include "query_vtab.h"

/* the columns: row_json, then the hidden sql, p1 .. pMAX */
#define COL_ROW 0
#define COL_SQL 1

typedef struct qjson_entry {
  char *text; /* the text, nbytes bytes */
  int nbytes;
  char name[48];    /* its table in temp */
  int nparams;      /* the text's parameters (hidden columns of the table) */
  sqlite3_stmt *st; /* idle: SELECT * FROM temp."name"(?1, ..), or NULL */
  int busy;         /* cursors reading it (never evicted then) */
  uint64_t tick;    /* last use, for the least recently used */
} qjson_entry;

typedef struct qjson_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  ga_conn *conn;
  sqlite3_stmt *check; /* the schema text of a temp table (rule 3) */
  qjson_entry *e[GA_QJSON_KEEP];
  int n;
  int64_t bytes; /* of the kept texts */
  uint64_t tick;
} qjson_vtab;

typedef struct qjson_cursor {
  sqlite3_vtab_cursor base;
  qjson_entry *e; /* the text's entry, busy while set */
  sqlite3_stmt *st;
  int own; /* st is the cursor's own (the entry's was busy) */
  int eof;
  sqlite3_int64 rowid;
  sqlite3_value *arg[1 + GA_QJSON_MAX_PARAMS]; /* sql, p1 .. (hidden) */
} qjson_cursor;

/* ---- names (rule 1) ---- */

static uint64_t fnv1a(const char *z, int n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; i++) {
    h ^= (unsigned char)z[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static void table_name(char *out, size_t n, uint64_t h, int k) {
  if (k)
    snprintf(out, n, "gpuagg_json_%016llx_%d", (unsigned long long)h, k);
  else
    snprintf(out, n, "gpuagg_json_%016llx", (unsigned long long)h);
}

/* The schema text SQLite keeps for the table this file makes for text. */
static char *schema_text(const char *name, const char *text) {
  return sqlite3_mprintf("CREATE VIRTUAL TABLE \"%w\" USING gpu_query(%Q)",
                         name, text);
}

/* 0: no table `name` in temp; 1: ours, for text; 2: another one; or
** -(SQLite error code). */
static int table_state(qjson_vtab *vt, const char *name, const char *text) {
  int rc = SQLITE_OK;
  if (!vt->check)
    rc = sqlite3_prepare_v2(vt->db,
                            "SELECT sql FROM temp.sqlite_schema WHERE "
                            "name = ?1 COLLATE NOCASE",
                            -1, &vt->check, NULL);
  if (rc != SQLITE_OK)
    return -rc;
  sqlite3_bind_text(vt->check, 1, name, -1, SQLITE_STATIC);
  int state = 0;
  char *want = NULL;
  while ((rc = sqlite3_step(vt->check)) == SQLITE_ROW) {
    const char *got = (const char *)sqlite3_column_text(vt->check, 0);
    if (!want && !(want = schema_text(name, text))) {
      rc = SQLITE_NOMEM;
      break;
    }
    state = state == 0 && got && !strcmp(got, want) ? 1 : 2;
  }
  sqlite3_free(want);
  if (rc == SQLITE_DONE)
    rc = sqlite3_reset(vt->check);
  else
    sqlite3_reset(vt->check);
  sqlite3_clear_bindings(vt->check);
  return rc == SQLITE_OK ? state : -rc;
}

/* ---- errors (rule 5) ---- */

static int set_err(sqlite3_vtab *v, int rc, char *msg) {
  sqlite3_free(v->zErrMsg);
  v->zErrMsg = msg;
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  return msg ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* SQLite's message on db under our prefix: gpu_query's own prefix gives
** way to ours (its messages are about the text, which is ours). */
static char *db_err(sqlite3 *db) {
  const char *m = sqlite3_errmsg(db);
  if (!strncmp(m, "gpu_query: ", 11))
    m += 11;
  return sqlite3_mprintf("gpu_query_json: %s", m);
}

/* ---- the kept texts (rule 3) ---- */

static void entry_free(qjson_entry *e) {
  if (!e)
    return;
  sqlite3_finalize(e->st);
  sqlite3_free(e->text);
  sqlite3_free(e);
}

/* Take e out of the kept list, dropping its table when drop (and the
** table is still the one made for it). */
static void entry_forget(qjson_vtab *vt, qjson_entry *e, int drop) {
  for (int i = 0; i < vt->n; i++)
    if (vt->e[i] == e) {
      vt->e[i] = vt->e[--vt->n];
      break;
    }
  vt->bytes -= e->nbytes;
  sqlite3_finalize(e->st);
  e->st = NULL;
  if (drop && table_state(vt, e->name, e->text) == 1) {
    char *x = sqlite3_mprintf("DROP TABLE IF EXISTS temp.\"%w\"", e->name);
    if (x && sqlite3_exec(vt->db, x, NULL, NULL, NULL) == SQLITE_OK)
      vt->conn->qjson_dropped++;
    sqlite3_free(x);
  }
  entry_free(e);
  vt->conn->qjson_kept = vt->n;
}

/* Room for a text of nbytes: the least recently used entries no cursor
** reads go.  SQLITE_OK, or SQLITE_ERROR when every slot is busy. */
static int make_room(qjson_vtab *vt, int nbytes) {
  while (vt->n > 0 &&
         (vt->n == GA_QJSON_KEEP || vt->bytes + nbytes > GA_QJSON_KEEP_BYTES)) {
    qjson_entry *lru = NULL;
    for (int i = 0; i < vt->n; i++)
      if (!vt->e[i]->busy && (!lru || vt->e[i]->tick < lru->tick))
        lru = vt->e[i];
    if (!lru)
      break;
    entry_forget(vt, lru, 1);
  }
  return vt->n < GA_QJSON_KEEP ? SQLITE_OK : SQLITE_ERROR;
}

/* The text's parameters: the table's hidden columns named as parameters
** (query_vtab.c: "?1", ":a"; its last hidden column gpuagg_partial is
** none). */
static int count_params(qjson_vtab *vt, const char *name, int *n) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      vt->db,
      "SELECT count(*) FROM pragma_table_xinfo(?1, 'temp') WHERE hidden "
      "AND substr(name, 1, 1) IN ('?', ':', '@', '$')",
      -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *n = sqlite3_column_int(st, 0);
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

/* The statement over e's table: SELECT * FROM temp."name"(?1, .., ?n). */
static int prepare(qjson_vtab *vt, qjson_entry *e, sqlite3_stmt **st) {
  sqlite3_str *s = sqlite3_str_new(vt->db);
  sqlite3_str_appendf(s, "SELECT * FROM temp.\"%w\"", e->name);
  for (int i = 1; i <= e->nparams; i++)
    sqlite3_str_appendf(s, "%s?%d", i == 1 ? "(" : ", ", i);
  if (e->nparams)
    sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(vt->db, sql, -1, st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK)
    vt->conn->qjson_prepared++;
  return rc;
}

/* A new entry for the text: its table found (ours, rule 1) or created,
** its parameters counted and its statement prepared.  SQLITE_OK with *out
** (kept), or an error with *err. */
static int entry_make(qjson_vtab *vt, const char *text, int nbytes,
                      qjson_entry **out, char **err) {
  qjson_entry *e = NULL;
  int rc = make_room(vt, nbytes);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("gpu_query_json: more than %d texts at once in "
                           "one statement; use gpu_query tables "
                           "(CREATE VIRTUAL TABLE temp.q USING "
                           "gpu_query('SELECT ...'))",
                           GA_QJSON_KEEP);
    return SQLITE_ERROR;
  }
  e = sqlite3_malloc(sizeof(*e));
  if (!e)
    return SQLITE_NOMEM;
  memset(e, 0, sizeof(*e));
  e->text = sqlite3_malloc64((sqlite3_uint64)nbytes + 1);
  if (!e->text) {
    sqlite3_free(e);
    return SQLITE_NOMEM;
  }
  memcpy(e->text, text, (size_t)nbytes);
  e->text[nbytes] = 0;
  e->nbytes = nbytes;
  uint64_t h = fnv1a(text, nbytes);
  int state = 2;
  for (int k = 0; k < 8 && state == 2; k++) {
    table_name(e->name, sizeof e->name, h, k);
    state = table_state(vt, e->name, e->text);
  }
  if (state < 0) {
    rc = -state;
    *err = db_err(vt->db);
  } else if (state == 2) {
    rc = SQLITE_ERROR;
    table_name(e->name, sizeof e->name, h, 0);
    *err = sqlite3_mprintf("gpu_query_json: the temp tables %s and its "
                           "seven successors hold other texts; drop them",
                           e->name);
  } else if (state == 0) {
    char *x =
        sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING gpu_query(%Q)",
                        e->name, e->text);
    rc = x ? sqlite3_exec(vt->db, x, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(x);
    if (rc == SQLITE_OK)
      vt->conn->qjson_created++;
    else
      *err = db_err(vt->db);
  }
  if (rc == SQLITE_OK) {
    rc = count_params(vt, e->name, &e->nparams);
    if (rc != SQLITE_OK)
      *err = db_err(vt->db);
  }
  if (rc == SQLITE_OK && e->nparams <= GA_QJSON_MAX_PARAMS) {
    rc = prepare(vt, e, &e->st);
    if (rc != SQLITE_OK)
      *err = db_err(vt->db);
  }
  if (rc != SQLITE_OK) {
    entry_free(e);
    return rc;
  }
  vt->e[vt->n++] = e;
  vt->bytes += nbytes;
  vt->conn->qjson_kept = vt->n;
  *out = e;
  return SQLITE_OK;
}

/* The kept entry of the text, checked (rule 3), or a new one. */
static int entry_get(qjson_vtab *vt, const char *text, int nbytes,
                     qjson_entry **out, char **err) {
  for (int i = 0; i < vt->n; i++) {
    qjson_entry *e = vt->e[i];
    if (e->nbytes != nbytes || memcmp(e->text, text, (size_t)nbytes))
      continue;
    int state = table_state(vt, e->name, e->text);
    if (state < 0) {
      *err = db_err(vt->db);
      return -state;
    }
    if (state == 1) {
      e->tick = ++vt->tick;
      vt->conn->qjson_reused++;
      *out = e;
      return SQLITE_OK;
    }
    if (e->busy) { /* a cursor of this statement reads it */
      *err = sqlite3_mprintf("gpu_query_json: its table %s was dropped "
                             "while a cursor read it",
                             e->name);
      return SQLITE_ERROR;
    }
    entry_forget(vt, e, 0); /* gone or not ours: never dropped here */
    break;
  }
  int rc = entry_make(vt, text, nbytes, out, err);
  if (rc == SQLITE_OK)
    (*out)->tick = ++vt->tick;
  return rc;
}

/* ---- JSON (rule 4) ---- */

static void json_text(sqlite3_str *s, const unsigned char *z, int n) {
  static const char hex[] = "0123456789abcdef";
  sqlite3_str_appendchar(s, 1, '"');
  int a = 0;
  for (int i = 0; i < n; i++) {
    unsigned char ch = z[i];
    if (ch >= 0x20 && ch != '"' && ch != '\\')
      continue;
    sqlite3_str_append(s, (const char *)z + a, i - a);
    a = i + 1;
    char esc[7] = {'\\', 0};
    switch (ch) {
    case '"':
    case '\\':
      esc[1] = (char)ch;
      break;
    case '\n':
      esc[1] = 'n';
      break;
    case '\r':
      esc[1] = 'r';
      break;
    case '\t':
      esc[1] = 't';
      break;
    case '\b':
      esc[1] = 'b';
      break;
    case '\f':
      esc[1] = 'f';
      break;
    default:
      esc[1] = 'u', esc[2] = '0', esc[3] = '0';
      esc[4] = hex[ch >> 4], esc[5] = hex[ch & 15];
    }
    sqlite3_str_appendall(s, esc);
  }
  sqlite3_str_append(s, (const char *)z + a, n - a);
  sqlite3_str_appendchar(s, 1, '"');
}

static void json_real(char *out, size_t n, double x) {
  if (isinf(x)) {
    snprintf(out, n, "%s", x < 0 ? "-9.0e999" : "9.0e999");
    return;
  }
  /* the shortest of 15, 16, 17 significant digits that reads back (17
  ** always does); snprintf and strtod share the C library's locale */
  for (int p = 15; p <= 17; p++) {
    snprintf(out, n, "%.*g", p, x);
    if (strtod(out, NULL) == x)
      break;
  }
  int real = 0;
  for (char *c = out; *c; c++) {
    if (*c == ',') /* a locale's decimal comma */
      *c = '.';
    if (*c == '.' || *c == 'e')
      real = 1;
  }
  if (!real && strlen(out) + 3 <= n)
    strcat(out, ".0");
}

/* The current row of st as a JSON array into ctx. */
static void row_json(sqlite3_context *ctx, sqlite3_stmt *st, int ncols) {
  sqlite3_str *s = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendchar(s, 1, '[');
  for (int i = 0; i < ncols; i++) {
    if (i)
      sqlite3_str_appendchar(s, 1, ',');
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
      sqlite3_str_appendf(s, "%lld", (long long)sqlite3_column_int64(st, i));
      break;
    case SQLITE_FLOAT: {
      char b[40];
      json_real(b, sizeof b, sqlite3_column_double(st, i));
      sqlite3_str_appendall(s, b);
      break;
    }
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_column_text(st, i);
      json_text(s, z ? z : (const unsigned char *)"",
                sqlite3_column_bytes(st, i));
      break;
    }
    case SQLITE_BLOB: {
      char *m = sqlite3_mprintf(
          "gpu_query_json: the result column %s holds a BLOB, which JSON "
          "cannot hold; select hex(...) of it in the text, or read it "
          "from a gpu_query table",
          sqlite3_column_name(st, i));
      sqlite3_free(sqlite3_str_finish(s));
      if (m)
        sqlite3_result_error(ctx, m, -1);
      else
        sqlite3_result_error_nomem(ctx);
      sqlite3_free(m);
      return;
    }
    default:
      sqlite3_str_appendall(s, "null");
    }
  }
  sqlite3_str_appendchar(s, 1, ']');
  int rc = sqlite3_str_errcode(s);
  char *z = sqlite3_str_finish(s);
  if (rc == SQLITE_TOOBIG)
    sqlite3_result_error_toobig(ctx);
  else if (!z)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_text(ctx, z, -1, sqlite3_free);
  if (rc == SQLITE_TOOBIG)
    sqlite3_free(z);
}

/* ---- the table ---- */

static int qjson_connect(sqlite3 *db, void *aux, int argc,
                         const char *const *argv, sqlite3_vtab **pp,
                         char **err) {
  (void)argc, (void)argv;
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "CREATE TABLE x(row_json, sql HIDDEN");
  for (int i = 1; i <= GA_QJSON_MAX_PARAMS; i++)
    sqlite3_str_appendf(s, ", p%d HIDDEN", i);
  sqlite3_str_appendall(s, ")");
  char *decl = sqlite3_str_finish(s);
  int rc = decl ? sqlite3_declare_vtab(db, decl) : SQLITE_NOMEM;
  sqlite3_free(decl);
  if (rc == SQLITE_OK)
    rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY); /* rule 5 */
  if (rc != SQLITE_OK) {
    if (rc != SQLITE_NOMEM)
      *err = sqlite3_mprintf("gpu_query_json: %s", sqlite3_errmsg(db));
    return rc;
  }
  qjson_vtab *vt = sqlite3_malloc(sizeof(*vt));
  if (!vt)
    return SQLITE_NOMEM;
  memset(vt, 0, sizeof(*vt));
  vt->db = db;
  vt->conn = ((ga_scan_module *)aux)->conn;
  *pp = &vt->base;
  return SQLITE_OK;
}

/* Rule 6: the kept statements go here, at close before SQLite's check;
** the tables stay (temp goes with the connection). */
static int qjson_disconnect(sqlite3_vtab *pv) {
  qjson_vtab *vt = (qjson_vtab *)pv;
  for (int i = 0; i < vt->n; i++)
    entry_free(vt->e[i]);
  vt->conn->qjson_kept = 0;
  sqlite3_finalize(vt->check);
  sqlite3_free(vt);
  return SQLITE_OK;
}

static int qjson_best_index(sqlite3_vtab *pv, sqlite3_index_info *p) {
  /* issue 40: as gpu_aggregate's (planner/cache_plan.c rule 7) */
  ga_cache_note_idle_db(((qjson_vtab *)pv)->db);
  int n = 0, has_sql = 0;
  char seen[1 + GA_QJSON_MAX_PARAMS];
  memset(seen, 0, sizeof seen);
  sqlite3_str *s = sqlite3_str_new(NULL);
  for (int k = 0; k < p->nConstraint; k++) {
    const struct sqlite3_index_constraint *c = &p->aConstraint[k];
    int a = c->iColumn - COL_SQL; /* 0: sql, i: p<i> */
    if (a < 0 || a > GA_QJSON_MAX_PARAMS ||
        c->op != SQLITE_INDEX_CONSTRAINT_EQ || seen[a])
      continue;
    if (!c->usable) {
      sqlite3_free(sqlite3_str_finish(s));
      return SQLITE_CONSTRAINT;
    }
    seen[a] = 1;
    has_sql |= a == 0;
    p->aConstraintUsage[k].argvIndex = ++n;
    p->aConstraintUsage[k].omit = 1;
    sqlite3_str_appendf(s, "%d,", a);
  }
  char *idx = sqlite3_str_finish(s);
  if (!has_sql) {
    sqlite3_free(idx);
    sqlite3_free(pv->zErrMsg);
    pv->zErrMsg = sqlite3_mprintf(
        "gpu_query_json: the first argument is the text of one SELECT: "
        "SELECT row_json FROM gpu_query_json('SELECT ...', p1, p2, ...)");
    return pv->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if (!idx)
    return SQLITE_NOMEM;
  p->idxStr = idx;
  p->needToFreeIdxStr = 1;
  p->idxNum = n;
  p->estimatedCost = 1e9; /* one whole query (gpu_query's estimates) */
  p->estimatedRows = 1000;
  return SQLITE_OK;
}

static int qjson_open(sqlite3_vtab *pv, sqlite3_vtab_cursor **pp) {
  (void)pv;
  qjson_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->eof = 1;
  *pp = &c->base;
  return SQLITE_OK;
}

/* The statement back to its entry (idle again), or finalized. */
static void release(qjson_cursor *c) {
  if (c->st) {
    if (c->own || !c->e || c->e->st) {
      sqlite3_finalize(c->st);
    } else {
      sqlite3_reset(c->st);
      sqlite3_clear_bindings(c->st);
      c->e->st = c->st;
    }
    c->st = NULL;
  }
  if (c->e)
    c->e->busy--;
  c->e = NULL;
  c->own = 0;
  c->eof = 1;
  c->rowid = 0;
}

static void cursor_reset(qjson_cursor *c) {
  release(c);
  for (int i = 0; i <= GA_QJSON_MAX_PARAMS; i++) {
    sqlite3_value_free(c->arg[i]);
    c->arg[i] = NULL;
  }
}

static int qjson_close(sqlite3_vtab_cursor *pc) {
  cursor_reset((qjson_cursor *)pc);
  sqlite3_free(pc);
  return SQLITE_OK;
}

static int step(qjson_cursor *c) {
  qjson_vtab *vt = (qjson_vtab *)c->base.pVtab;
  vt->conn->qjson_stepping++; /* rule 7 */
  int rc = sqlite3_step(c->st);
  vt->conn->qjson_stepping--;
  if (rc == SQLITE_ROW)
    return SQLITE_OK;
  c->eof = 1;
  if (rc == SQLITE_DONE)
    return SQLITE_OK;
  rc = sqlite3_reset(c->st);
  return set_err(c->base.pVtab, rc, db_err(vt->db));
}

static int qjson_filter(sqlite3_vtab_cursor *pc, int idxNum, const char *idxStr,
                        int argc, sqlite3_value **argv) {
  qjson_cursor *c = (qjson_cursor *)pc;
  qjson_vtab *vt = (qjson_vtab *)pc->pVtab;
  char *err = NULL;
  int rc = SQLITE_OK, nargs = 0;
  (void)idxNum;
  cursor_reset(c);
  vt->conn->qjson_calls++;
  const char *z = idxStr ? idxStr : "";
  for (int k = 0; k < argc && *z; k++) {
    int a = atoi(z);
    if (a >= 0 && a <= GA_QJSON_MAX_PARAMS && !c->arg[a]) {
      if (!(c->arg[a] = sqlite3_value_dup(argv[k])))
        return SQLITE_NOMEM;
      if (a > nargs)
        nargs = a;
    }
    while (*z && *z != ',')
      z++;
    if (*z)
      z++;
  }
  sqlite3_value *text = c->arg[0];
  if (!text || sqlite3_value_type(text) != SQLITE_TEXT)
    return set_err(&vt->base, SQLITE_ERROR,
                   sqlite3_mprintf("gpu_query_json: the first argument must "
                                   "be the text of one SELECT, not %s",
                                   !text ? "absent"
                                   : sqlite3_value_type(text) == SQLITE_NULL
                                       ? "NULL"
                                       : "a number or a BLOB"));
  const char *sql = (const char *)sqlite3_value_text(text);
  int nbytes = sqlite3_value_bytes(text);
  if (!sql)
    return SQLITE_NOMEM;
  if (memchr(sql, 0, (size_t)nbytes)) /* SQLite's text would end there */
    return set_err(&vt->base, SQLITE_ERROR,
                   sqlite3_mprintf("gpu_query_json: the text holds a NUL "
                                   "character, which ends SQLite's text"));
  qjson_entry *e = NULL;
  rc = entry_get(vt, sql, nbytes, &e, &err);
  if (rc != SQLITE_OK)
    return set_err(&vt->base, rc, err);
  if (e->nparams > GA_QJSON_MAX_PARAMS)
    return set_err(
        &vt->base, SQLITE_ERROR,
        sqlite3_mprintf(
            "gpu_query_json: the query has %d parameters, more than the %d "
            "it binds; run it as a gpu_query table: CREATE VIRTUAL TABLE "
            "temp.q USING gpu_query('SELECT ...'); SELECT * FROM q(p1, p2, "
            "...)",
            e->nparams, GA_QJSON_MAX_PARAMS));
  if (nargs > e->nparams)
    return set_err(
        &vt->base, SQLITE_ERROR,
        e->nparams
            ? sqlite3_mprintf("gpu_query_json: the query takes %d parameter%s "
                              "(?1 .. ?%d), got %d argument%s after the text",
                              e->nparams, e->nparams == 1 ? "" : "s",
                              e->nparams, nargs, nargs == 1 ? "" : "s")
            : sqlite3_mprintf("gpu_query_json: the query takes no "
                              "parameters, got %d argument%s after the text",
                              nargs, nargs == 1 ? "" : "s"));
  e->busy++;
  c->e = e;
  if (e->st) { /* rule 3: the kept statement */
    c->st = e->st;
    e->st = NULL;
  } else { /* kept one busy (the text twice in one statement) */
    c->own = 1;
    rc = prepare(vt, e, &c->st);
    if (rc != SQLITE_OK)
      return set_err(&vt->base, rc, db_err(vt->db));
  }
  for (int i = 1; i <= e->nparams && rc == SQLITE_OK; i++)
    rc = c->arg[i] ? sqlite3_bind_value(c->st, i, c->arg[i])
                   : sqlite3_bind_null(c->st, i);
  if (rc != SQLITE_OK)
    return set_err(&vt->base, rc, db_err(vt->db));
  c->eof = 0;
  return step(c);
}

static int qjson_next(sqlite3_vtab_cursor *pc) {
  qjson_cursor *c = (qjson_cursor *)pc;
  c->rowid++;
  return step(c);
}

static int qjson_eof(sqlite3_vtab_cursor *pc) {
  return ((qjson_cursor *)pc)->eof;
}

static int qjson_column(sqlite3_vtab_cursor *pc, sqlite3_context *ctx,
                        int col) {
  qjson_cursor *c = (qjson_cursor *)pc;
  if (col == COL_ROW)
    row_json(ctx, c->st, sqlite3_column_count(c->st));
  else if (col - COL_SQL <= GA_QJSON_MAX_PARAMS && c->arg[col - COL_SQL])
    sqlite3_result_value(ctx, c->arg[col - COL_SQL]);
  return SQLITE_OK;
}

static int qjson_rowid(sqlite3_vtab_cursor *pc, sqlite3_int64 *r) {
  *r = ((qjson_cursor *)pc)->rowid;
  return SQLITE_OK;
}

const sqlite3_module ga_query_json_methods = {
    .iVersion = 1,
    .xCreate = NULL, /* eponymous-only */
    .xConnect = qjson_connect,
    .xBestIndex = qjson_best_index,
    .xDisconnect = qjson_disconnect,
    .xDestroy = qjson_disconnect,
    .xOpen = qjson_open,
    .xClose = qjson_close,
    .xFilter = qjson_filter,
    .xNext = qjson_next,
    .xEof = qjson_eof,
    .xColumn = qjson_column,
    .xRowid = qjson_rowid,
};
