/*
** path.c — which path one gpu_aggregate call takes (the caller's
** interrupt as the waiting thread sees it is ext/common/intr.c).
**
** The parallel path runs the query on other connections, so it is taken
** only where those connections cannot differ from the caller's in any way
** that changes the answer.  Every condition below sends the call to the
** serial path (the reference query on the caller's own connection), with
** the reason in gpuagg_info()'s last_scan.why:
**   1. threads = 1, or one online CPU (unless the caller asks for a plan of
**      one worker: gpu_query); SQLite built or configured without threads
**      (sqlite3_threadsafe() == 0, SQLITE_CONFIG_SINGLETHREAD).
**   2. Not a file: temp tables, :memory: (no file name).
**   3. Not a rowid table: views, virtual tables, WITHOUT ROWID, a table
**      whose rowid, _rowid_ and oid are all column names.
**   4. The caller is not in autocommit (an explicit transaction, read or
**      write: its snapshot may be older than any new read, and its own
**      uncommitted rows must count), or it is writing that schema now, or
**      its locking_mode is EXCLUSIVE (save a file opened with immutable=1,
**      which takes no locks: nobody changes it), or another of its
**      statements is
**      running (a cursor stepped and not finished holds a read snapshot
**      that may be older than the workers' new one; sqlite3_txn_state
**      cannot tell, since the calling statement always reads; a statement
**      that runs for the same call counts as the caller: p->call_stmts,
**      gpu_query_json's outer SELECT), or
**      read_uncommitted = 1 (in shared-cache mode it reads other
**      connections' uncommitted rows, which no worker sees).
**   5. The text holds a subquery (SELECT), names a schema (a worker's
**      "main" is the target's file), or names a table other than the
**      target (x IN t2), or the target's own name where another schema has
**      a table of that name (a TEMP v shadows main.v on the caller only).
**      A name written after a '.' is a column (d.w, the schema of s.t2
**      already refused), never read as a table here (ga_lex's tids).
**      gpu_query's texts reach here with a view or WITH expression already
**      substituted and no subquery (planner/qrewrite.c: a subquery is a
**      parameter, its value evaluated in the scan's snapshot by planner/
**      qsubq.c, or the text is SQLite's, on the serial path).
**   6. A name in the text is an application-defined function of the caller
**      (pragma function_list, builtin = 0: an app function, or one that
**      shadows a built-in such as an ICU lower() or a case_sensitive_like
**      LIKE), or a built-in scalar function without SQLITE_DETERMINISTIC
**      (changes(), last_insert_rowid(), random(), sqlite_version(), ...:
**      its value is the connection's or the moment's), or a date and time
**      function with 'now' written in it or no argument, or CURRENT_TIME/
**      DATE/TIMESTAMP (flagged deterministic, yet 'now' is the statement's
**      time, which gpu_query's post query on the caller would read apart).
**      Date and time functions over columns (a row may hold 'now') run on
**      the workers at the call's one time (issue 37): SQLite fixes a
**      statement's time once per sqlite3_step, and every row is read in
**      the caller's one step, so the plan pins the caller's VFS time now
**      (engine/scan/pintime.h) and the workers open the file through the
**      shim of that VFS, whose time is the one their thread pinned; where
**      no shim or time can be had, serial.  Where gpu_query's post query
**      applies a date and time function too (it re-evaluates the keys on
**      the caller, at its own time), the scan counts the pinned times read
**      and a scan that read one (a row held 'now') turns serial
**      (spec.pin_alone).  'localtime' and 'utc' follow the process's TZ,
**      which in-process workers share.
**      Workers have only SQLite's built-ins and gpuagg_partial.
**      Likewise a name that is a virtual table module of the caller (pragma
**      module_list) or a pragma's table-valued function (pragma_ and a name
**      of pragma pragma_list, which module_list leaves out): its rows may
**      be the connection's state (pragma_busy_timeout, pragma_cache_size,
**      sqlite_stmt), another file's (dbstat), the application's (a module
**      it registered), or gpuagg's own, which workers do not have.  Only
**      an allow-list of modules whose rows are a function of their
**      arguments alone runs on the workers: json_each and json_tree, built
**      into SQLite (generate_series is not: an extension's or the
**      application's module of that name is not known to be the same).
**   7. A collation in play is not one of BINARY, NOCASE, RTRIM (explicit
**      COLLATE names, and the declared collations of the columns the text
**      names), or the caller's connection overrides one of those three
**      (probed against SQLite's own definitions), or the group key's
**      collation cannot be identified as one of them.
**   8. The table is estimated below scan_min_rows rows.
**   9. The group key's collation is NOCASE or RTRIM in a UTF-16 database:
**      SQLite registers them for UTF-8 only and compares the keys converted,
**      but returns the stored UTF-16 bytes, which that conversion does not
**      always give back (malformed surrogates).  BINARY keys of a UTF-16
**      database are held in its encoding (engine/scan/scan_group.h rule 1).
**      Likewise gpu_query's min or max over DISTINCT values under NOCASE
**      or RTRIM (issue 37): the set holds them as UTF-8, as SQLite compares
**      them, where gpu_max orders the UTF-16 bytes.  (Their count, sum,
**      total and avg run: they read no bytes of the values.)
**  10. The application's authorizer changes the text: SQLite has no getter
**      for it, so the caller compiles SELECT <expression, filter, key> FROM
**      the table and a worker compiles the same; different opcodes (an
**      SQLITE_IGNORE turns a column or a function into NULL) or an error
**      on the caller (SQLITE_DENY) send the call to the serial path, where
**      the authorizer acts as SQLite makes it act (ga_plan_verify).
**  14. A filter that an index (or the rowid) answers, planner/qindex.c:
**      its range's rowid band found by index seeks, its rows counted
**      through the index, bounded.  A band under scan_min_rows / 8 rowids,
**      or few rows that are scattered (at most est / (GA_QINDEX_LOOKUP_COST
**      * threads), or under scan_min_rows): the serial path with SQLite's
**      own plan, where the caller's serial text can run it (gpu_query);
**      else the workers read only the band when it is narrower than 3/4
**      of the table (spec.sql_range), else the table.  Decided before
**      rules 5-7 and 10, which only the parallel path needs; not for a
**      table rule 8 sends to the serial path.
**   What the workers carry instead of stepping aside:
**   11. Every sqlite3_limit of the caller, set on each worker before it
**       runs; SQLITE_DBCONFIG_DQS_DML.
**   12. The caller's interrupt and progress handler: its thread polls
**       sqlite3_is_interrupted (3.41+) or steps SELECT 1 (older, at most
**       once a millisecond), and at most every 10 ms (once before the scan)
**       steps a probe of about 4,300 VM instructions on the caller's
**       connection, in which SQLite calls the progress handler; a handler
**       that returns nonzero stops the scan with SQLITE_INTERRUPT, as it
**       stops the serial query (ga_intr_check).
**   13. The caller's access mode (issue 36): workers open the file
**       read-only, and immutable=1 only when the caller's URI has it; the
**       snapshot helper opens read-only when sqlite3_db_readonly says the
**       caller is; none checkpoints on close (engine/scan/scan_pool.c rule
**       7).  The file itself: the path must still name the caller's file
**       once every worker has begun (SQLITE_FCNTL_HAS_MOVED, checked in
**       engine/scan/scan.c), else serial.
**  15. Key memo (issue 37): a group term over one column (planner/query.c
**      rule 10) is evaluated by hash mode's workers once per distinct value
**      of that column (engine/scan/keymemo.h), in a UTF-8 database (the
**      memo compares the stored bytes as the keys do; UTF-16 keys are read
**      converted).  Not a condition of the parallel path: the memo only
**      saves work, and gives the values SQLite would.
**   Worker-side failures (the snapshot within busy_timeout, a worker's
**   error, the memory cap of groups) fall back later, in the vtab.
*/
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "dims.h"
#include "glue.h"
#include "pintime.h"
#include "planner.h"
#include "qdims.h"
#include "qindex.h"
#include "scan_group.h"
#include "workers.h"

/* ---- small queries on the caller's connection ---- */

/* The first column of the first row as int64 (def when none). */
static int64_t q_int(sqlite3 *db, const char *sql, int64_t def) {
  sqlite3_stmt *st = NULL;
  int64_t v = def;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) != SQLITE_NULL)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* The first column as text into buf ("" when none). */
static void q_text(sqlite3 *db, const char *sql, char *buf, size_t n) {
  sqlite3_stmt *st = NULL;
  buf[0] = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(st, 0);
    if (z)
      sqlite3_snprintf((int)n, buf, "%s", z);
  }
  sqlite3_finalize(st);
}

/* ---- rule 1: threads ---- */

/* SQLITE_CONFIG_SINGLETHREAD at run time leaves the library without
** mutexes; a connection opened FULLMUTEX then has none.  Asked once. */
static int runtime_threadsafe(void) {
  static int known; /* 0 unknown, 1 yes, 2 no */
  int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
  if (!k) {
    sqlite3 *db = NULL;
    k = 2;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
                        NULL) == SQLITE_OK &&
        sqlite3_db_mutex(db))
      k = 1;
    sqlite3_close(db);
    __atomic_store_n(&known, k, __ATOMIC_RELEASE);
  }
  return k == 1;
}

/* ---- rules 5-7: names in the text ---- */

static int in_list(char **l, int n, const char *z) {
  for (int i = 0; i < n; i++)
    if (!sqlite3_stricmp(l[i], z))
      return 1;
  return 0;
}

/* Rule 6's allow-list: modules whose rows depend on their arguments alone,
** built into every SQLite that has JSON, so a worker's are the caller's. */
static int pure_module(const char *z) {
  return !sqlite3_stricmp(z, "json_each") || !sqlite3_stricmp(z, "json_tree");
}

/* A name of the text that is a virtual table module of the caller, or a
** pragma's table-valued function, other than a pure one: into why; 1
** found, 0 none, -1 the lists cannot be read. */
static int modules_check(sqlite3 *db, const ga_lex *lx, char *why, size_t n) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (!lx->nids)
    return 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT name FROM pragma_module_list UNION ALL "
                         "SELECT 'pragma_' || name FROM pragma_pragma_list",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(st, 0);
    if (m && !pure_module(m) && in_list(lx->ids, lx->nids, m)) {
      sqlite3_snprintf((int)n, why,
                       "the text names the virtual table %s (its rows may "
                       "be the connection's; workers run only json_each and "
                       "json_tree)",
                       m);
      found = 1;
    }
  }
  if (sqlite3_finalize(st) != SQLITE_OK)
    return -1;
  return found;
}

/* A name of the text that is an app-defined function, a function whose
** value depends on the connection or the moment (no SQLITE_DETERMINISTIC:
** changes(), last_insert_rowid(), random(), ...), a module other than a
** pure one (modules_check), a schema, or a table
** that a worker could resolve otherwise: into why; 1 found, 0 none, -1
** the lists cannot be read.  Workers have only SQLite's built-ins, their
** own "main" is the target's file, and they have no TEMP tables, so a name
** that is a table is safe only where it is the target itself and no other
** schema holds a table of that name (a TEMP v shadows main.v). */
/* Rule 6's date and time functions over columns: the workers open the
** file through the shim of its VFS (*vfs_name, engine/scan/pintime.h) and
** read the caller's time, pinned now, at the call's start.  0, or 1 with
** the reason the time cannot be pinned. */
static int pin_time(sqlite3 *db, sqlite3_vfs *vfs, const char **vfs_name,
                    int64_t *ms, char *why, size_t n) {
  const char *shim = NULL;
  const char *fault = getenv("GPUAGG_PIN_FAULT"); /* tests */
  if ((fault && *fault) || ga_pintime_shim(vfs, &shim) != SQLITE_OK) {
    sqlite3_snprintf((int)n, why,
                     "its VFS %s cannot be shimmed to pin the "
                     "statement's time for the workers",
                     *vfs_name);
    return 1;
  }
  if (ga_pintime_caller(db, ms) != SQLITE_OK) {
    sqlite3_snprintf((int)n, why,
                     "the caller's VFS cannot give the current "
                     "time to pin for the workers");
    return 1;
  }
  *vfs_name = shim;
  return 0;
}

/* Does the post query use a date and time function (over anything)?  *bad
** -1: out of memory. */
static int post_time(const char *post, int *bad) {
  ga_lex l;
  memset(&l, 0, sizeof l);
  *bad = post && ga_lex_sql(post, &l) != SQLITE_OK ? -1 : 0;
  int r = l.time_col[0] || l.time_call[0];
  ga_lex_free(&l);
  return r;
}

static int names_check(sqlite3 *db, const ga_target *t, const ga_parts *p,
                       const ga_lex *lx, char *why, size_t n) {
  sqlite3_stmt *st = NULL;
  int found = 0, k;
  if (sqlite3_prepare_v2(db,
                         "SELECT name, builtin FROM pragma_function_list "
                         "WHERE builtin = 0 OR (type = 's' AND "
                         "(flags & 0x800) = 0) ORDER BY builtin",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *f = (const char *)sqlite3_column_text(st, 0);
    if (f && in_list(lx->ids, lx->nids, f)) {
      if (sqlite3_column_int(st, 1))
        sqlite3_snprintf((int)n, why,
                         "the text uses %s(), which is not deterministic "
                         "(its value is the connection's or the moment's)",
                         f);
      else
        sqlite3_snprintf((int)n, why,
                         "the text uses %s(), a function of the application "
                         "(workers have only SQLite's built-ins)",
                         f);
      found = 1;
    }
  }
  if (sqlite3_finalize(st) != SQLITE_OK)
    return -1;
  if (found)
    return 1;
  k = modules_check(db, lx, why, n);
  if (k)
    return k;
  if (lx->time_call[0]) {
    sqlite3_snprintf((int)n, why,
                     "the text uses %s with 'now' written, no argument, or "
                     "CURRENT_TIME/DATE/TIMESTAMP (its value is the "
                     "statement's time, which the caller's own part of the "
                     "query would read apart from the workers)",
                     lx->time_call);
    return 1;
  }
  if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1, &st,
                         NULL) != SQLITE_OK)
    return -1;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(st, 0);
    if (z && in_list(lx->ids, lx->nids, z)) {
      sqlite3_snprintf((int)n, why,
                       "the text names the schema %s (a worker's main is "
                       "the target's file)",
                       z);
      found = 1;
    }
  }
  if (sqlite3_finalize(st) != SQLITE_OK)
    return -1;
  if (found)
    return 1;
  if (sqlite3_prepare_v2(db, "SELECT schema, name FROM pragma_table_list", -1,
                         &st, NULL) != SQLITE_OK)
    return -1;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *sc = (const char *)sqlite3_column_text(st, 0);
    const char *z = (const char *)sqlite3_column_text(st, 1);
    if (!sc || !z || !in_list(lx->tids, lx->ntids, z)) /* d.w: a column */
      continue;
    int joined = 0; /* a table of the join: read in the same snapshot */
    for (int j = 0; j < p->njoin_tables && !joined; j++)
      joined = !sqlite3_stricmp(z, p->join_tables[j]);
    if (sqlite3_stricmp(z, t->table) && !joined)
      sqlite3_snprintf((int)n, why, "the text names another table: %s", z);
    else if (sqlite3_stricmp(sc, t->schema))
      sqlite3_snprintf((int)n, why,
                       "the text names %s, which is also a table of %s "
                       "(a worker would read another one)",
                       z, sc);
    else
      continue; /* the target itself */
    found = 1;
  }
  if (sqlite3_finalize(st) != SQLITE_OK)
    return -1;
  return found;
}

static int builtin_coll(const char *z) {
  if (!sqlite3_stricmp(z, "BINARY"))
    return GA_COLL_BINARY;
  if (!sqlite3_stricmp(z, "NOCASE"))
    return GA_COLL_NOCASE;
  if (!sqlite3_stricmp(z, "RTRIM"))
    return GA_COLL_RTRIM;
  return -1;
}

/* Pairs that tell SQLite's built-in collations from look-alikes: case, the
** order of '[' against letters (folding up or down), non-ASCII case,
** trailing spaces and tabs, prefixes. */
static const char *const probe_pairs[][2] = {
    {"a", "A"},
    {"a", "B"},
    {"B", "a"},
    {"[", "A"},
    {"a ", "a"},
    {"a", "a  "},
    {"\xc3\xa9", "\xc3\x89"},
    {"", "a"},
    {"ab", "a"},
    {"a\t", "a"},
    {"A", "a "},
    {"x y", "X Y "},
    {"10", "9"},
    {"z", "\xc3\xa9"},
};
#define NPAIRS (int)(sizeof(probe_pairs) / sizeof(probe_pairs[0]))

/* 1 when the caller's BINARY, NOCASE and RTRIM agree with SQLite's on every
** probe pair, 0 (why set) when one differs, -1 when it cannot be asked. */
static int colls_genuine(sqlite3 *db, char *why, size_t n) {
  static const char *const names[3] = {"BINARY", "NOCASE", "RTRIM"};
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_stmt *st = NULL;
  int ok = 1;
  sqlite3_str_appendall(s, "SELECT ");
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < NPAIRS; i++)
      sqlite3_str_appendf(s, "%s(%Q COLLATE %s > %Q) - (%Q COLLATE %s < %Q)",
                          c || i ? ", " : "", probe_pairs[i][0], names[c],
                          probe_pairs[i][1], probe_pairs[i][0], names[c],
                          probe_pairs[i][1]);
  char *sql = sqlite3_str_finish(s);
  if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW)
    ok = -1;
  for (int c = 0; ok == 1 && c < 3; c++)
    for (int i = 0; ok == 1 && i < NPAIRS; i++) {
      const char *a = probe_pairs[i][0], *b = probe_pairs[i][1];
      int want = ga_coll_cmp(c, a, (int)strlen(a), b, (int)strlen(b));
      want = (want > 0) - (want < 0);
      if (sqlite3_column_int(st, c * NPAIRS + i) != want) {
        sqlite3_snprintf((int)n, why,
                         "the connection overrides the collation %s", names[c]);
        ok = 0;
      }
    }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return ok;
}

typedef int (*meta_fn)(sqlite3 *, const char *, const char *, const char *,
                       char const **, char const **, int *, int *, int *);

/* Rule 7's names: explicit COLLATEs and the declared collations of the
** columns the text names must all be built-ins.  1 ok, 0 (why set), -1. */
static int colls_builtin(sqlite3 *db, const ga_target *t, const ga_lex *lx,
                         char *why, size_t n) {
  for (int i = 0; i < lx->ncolls; i++)
    if (builtin_coll(lx->colls[i]) < 0) {
      sqlite3_snprintf((int)n, why, "the text uses the collation %s",
                       lx->colls[i]);
      return 0;
    }
  meta_fn meta = NULL;
#ifdef SQLITE_CORE
  meta = sqlite3_table_column_metadata;
#else
  meta = sqlite3_api->table_column_metadata; /* NULL when not compiled in */
#endif
  if (getenv("GPUAGG_SCAN_NO_METADATA")) /* tests: the fallback below */
    meta = NULL;
  if (!meta) {
    /* without column metadata: every COLLATE of the table's CREATE
    ** statement must be a built-in one (a little stricter) */
    sqlite3_stmt *st = NULL;
    ga_lex tl;
    int ok = -1;
    memset(&tl, 0, sizeof(tl));
    char *sql = sqlite3_mprintf(
        "SELECT sql FROM \"%w\".sqlite_schema WHERE name = ?1", t->schema);
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
      if (sqlite3_step(st) == SQLITE_ROW &&
          ga_lex_sql((const char *)sqlite3_column_text(st, 0), &tl) ==
              SQLITE_OK) {
        ok = 1;
        for (int i = 0; ok == 1 && i < tl.ncolls; i++)
          if (builtin_coll(tl.colls[i]) < 0) {
            sqlite3_snprintf((int)n, why, "the table uses the collation %s",
                             tl.colls[i]);
            ok = 0;
          }
      }
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
    ga_lex_free(&tl);
    return ok;
  }
  for (int c = 0; c < t->ncols; c++) {
    if (!in_list(lx->ids, lx->nids, t->cols[c]))
      continue;
    const char *coll = NULL;
    if (meta(db, t->schema, t->table, t->cols[c], NULL, &coll, NULL, NULL,
             NULL) != SQLITE_OK)
      return -1;
    if (coll && builtin_coll(coll) < 0) {
      sqlite3_snprintf((int)n, why, "column %s has the collation %s",
                       t->cols[c], coll);
      return 0;
    }
  }
  return 1;
}

/* The group key's collation, as SQLite itself applies it: a compound
** SELECT takes its column's collation from its leftmost SELECT, so GROUP BY
** over (+(G) ... WHERE 0) UNION ALL probe values groups them with G's
** collation.  'a','A' and 'a','a ' tell the three built-ins apart (the
** names in play are built-ins, checked above).  GA_COLL_* or -1. */
static int group_coll(sqlite3 *db, const ga_target *t, const char *alias,
                      const char *g, const char *join_from) {
  sqlite3_stmt *st = NULL;
  int coll = -1;
  /* the text may qualify its columns with the FROM clause's alias; a join
  ** (planner/qjoin.c) reads its tables' columns under its FROM */
  char *from = join_from ? sqlite3_mprintf("%s", join_from)
               : alias   ? sqlite3_mprintf("\"%w\".\"%w\" AS \"%w\"", t->schema,
                                           t->table, alias)
                       : sqlite3_mprintf("\"%w\".\"%w\"", t->schema, t->table);
  char *sql = from ? sqlite3_mprintf(
                         "SELECT (SELECT count(*) FROM (SELECT 1 FROM (SELECT "
                         "+(\n%s\n) AS k FROM %s WHERE 0 UNION ALL SELECT 'a' "
                         "UNION ALL SELECT 'A') GROUP BY k)), (SELECT count(*) "
                         "FROM (SELECT 1 FROM (SELECT +(\n%s\n) AS k FROM %s "
                         "WHERE 0 UNION ALL SELECT 'a' UNION ALL SELECT 'a ') "
                         "GROUP BY k))",
                         g, from, g, from)
                   : NULL;
  if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    int a = sqlite3_column_int(st, 0), b = sqlite3_column_int(st, 1);
    coll = a == 1 && b == 2   ? GA_COLL_NOCASE
           : a == 2 && b == 1 ? GA_COLL_RTRIM
           : a == 2 && b == 2 ? GA_COLL_BINARY
                              : -1;
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  sqlite3_free(from);
  return coll;
}

int ga_plan_key_coll(sqlite3 *db, const ga_target *t, const char *alias,
                     const char *key) {
  return group_coll(db, t, alias, key, NULL);
}

int ga_plan_key_coll_join(sqlite3 *db, const char *from, const char *key) {
  return group_coll(db, NULL, NULL, key, from);
}

/* ---- rule 4: statements in progress ---- */

/* Statements of the connection now running: the one that calls us, and
** any other (a cursor stepped and not finished) whose read transaction
** fixes the connection's snapshot.  sqlite3_txn_state cannot tell them
** apart: the calling statement always holds a read transaction. */
static int busy_statements(sqlite3 *db) {
  int n = 0;
  for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st;
       st = sqlite3_next_stmt(db, st))
    n += sqlite3_stmt_busy(st) != 0;
  return n;
}

/* ---- rule 10: what the application's authorizer does to the text ---- */

/* An authorizer that answers SQLITE_IGNORE turns a column read or a
** function call into OP_Null, so the same text compiles to other opcodes on
** the caller than on a worker, which has no authorizer (aggregate.h). */
char *ga_program_sig_as(sqlite3 *db, const char *sql, int detail, int *rc) {
  sqlite3_stmt *st = NULL;
  char *x = sqlite3_mprintf("EXPLAIN %s", sql);
  *rc = x ? sqlite3_prepare_v2(db, x, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(x);
  if (*rc != SQLITE_OK)
    return NULL;
  sqlite3_str *s = sqlite3_str_new(NULL);
  while ((*rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *op = (const char *)sqlite3_column_text(st, 1);
    const char *p4 = (const char *)sqlite3_column_text(st, 5);
    int init = op && !strcmp(op, "Init");
    if (detail == GA_SIG_OPS) {
      sqlite3_str_appendf(s, "%s ", op ? op : "?");
    } else if (detail == GA_SIG_P4) {
      if (init)
        continue; /* its P4 may be the text */
      if (op && !strcmp(op, "Variable"))
        p4 = ""; /* the parameter's name, written ?N in a rewritten text */
      sqlite3_str_appendf(s, "%s %s %d\n", op ? op : "?", p4 ? p4 : "",
                          sqlite3_column_int(st, 6));
    } else {
      if (init || (op && !strcmp(op, "Transaction")))
        p4 = NULL; /* the text; the connection's count of schema loads */
      sqlite3_str_appendf(s, "%s %lld %lld %lld %s %d\n", op ? op : "?",
                          (long long)sqlite3_column_int64(st, 2),
                          (long long)sqlite3_column_int64(st, 3),
                          (long long)sqlite3_column_int64(st, 4), p4 ? p4 : "",
                          sqlite3_column_int(st, 6));
    }
  }
  *rc = sqlite3_finalize(st);
  char *sig = sqlite3_str_finish(s);
  if (*rc == SQLITE_OK && !sig)
    *rc = SQLITE_NOMEM;
  if (*rc != SQLITE_OK) {
    sqlite3_free(sig);
    return NULL;
  }
  return sig;
}

char *ga_program_sig(sqlite3 *db, const char *sql, int *rc) {
  return ga_program_sig_as(db, sql, GA_SIG_OPS, rc);
}

/* The text every worker statement evaluates, as one SELECT over schema's
** table: the values (gpu_cache's load: a list of columns), the filter, the
** keys and the carried columns. */
static char *auth_sql(const ga_target *t, const ga_parts *p, const char *schema,
                      int worker) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "SELECT ");
  for (int i = 0; i < p->nvals; i++)
    sqlite3_str_appendf(s, "\n%s\n, ", p->vals[i]);
  sqlite3_str_appendf(s, "\n%s\n",
                      p->filter && *p->filter ? p->filter : "NULL");
  for (int i = 0; i < p->nkeys + p->ncarry; i++)
    sqlite3_str_appendf(s, ", \n%s\n", p->keys[i]);
  if (p->join_from) { /* a join: its FROM (planner/qjoin.c) */
    sqlite3_str_appendf(s, " FROM %s",
                        worker ? p->join_from : p->join_from_caller);
    return sqlite3_str_finish(s);
  }
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\"", schema, t->table);
  if (p->alias)
    sqlite3_str_appendf(s, " AS \"%w\"", p->alias);
  return sqlite3_str_finish(s);
}

int ga_plan_verify(ga_plan *plan, ga_scan_pool *pool) {
  sqlite3 *w = NULL;
  const char *err = NULL;
  int rc;
  if (!plan->parallel || !plan->auth_sql)
    return SQLITE_OK;
  rc = ga_scan_pool_take(pool, 0, plan->spec.prep, &w, &err);
  if (rc == SQLITE_NOMEM)
    return rc;
  if (rc != SQLITE_OK) {
    sqlite3_snprintf((int)sizeof plan->why, plan->why, "%s",
                     err ? err : "cannot open a worker connection");
    plan->parallel = 0;
    return SQLITE_OK;
  }
  char *sig = ga_program_sig(w, plan->auth_sql, &rc);
  ga_scan_pool_put(pool, w, 0, rc == SQLITE_OK);
  if ((rc & 0xff) == SQLITE_NOMEM)
    return SQLITE_NOMEM;
  if (!sig || strcmp(sig, plan->auth_sig)) {
    sqlite3_snprintf((int)sizeof plan->why, plan->why, "%s",
                     sig ? "the connection's authorizer changes the "
                           "statement (its program differs from a "
                           "worker's)"
                         : "a worker cannot compile the statement");
    plan->parallel = 0;
  }
  sqlite3_free(sig);
  return SQLITE_OK;
}

/* Rule 15: how many of p's keys hash mode's workers memoise (their texts
** then hold the guard), and the memo's bytes (0: GA_KEYMEMO_BYTES). */
static int key_memo_terms(const ga_parts *p, int hash, int enc,
                          int64_t *bytes) {
  const char *env = getenv("GPUAGG_KEY_MEMO_BYTES"); /* tests, A/B */
  int n = 0;
  *bytes = env && *env ? atoll(env) : 0;
  if (!p->key_memo || !hash || enc != SQLITE_UTF8 ||
      (env && *env && *bytes <= 0))
    return 0;
  for (int k = 0; k < p->nkeys && k < GA_MAX_KEYS; k++)
    n += p->key_memo[k] >= 0;
  return n;
}

/* ---- the decision ---- */

#define SERIAL(...)                                                            \
  do {                                                                         \
    sqlite3_snprintf((int)sizeof plan->why, plan->why, __VA_ARGS__);           \
    goto serial;                                                               \
  } while (0)

int ga_plan_make(sqlite3 *db, const ga_config *cfg, const ga_target *t,
                 const ga_args *a, ga_plan *plan) {
  const char *keys[1], *vals[1];
  ga_parts p;
  ga_parts_of_args(a, &p, keys, vals);
  return ga_plan_parts(db, cfg, t, &p, plan);
}

int ga_plan_parts(sqlite3 *db, const ga_config *cfg, const ga_target *t,
                  const ga_parts *p, ga_plan *plan) {
  ga_lex lx;
  int coll[GA_MAX_KEYS];
  char buf[64], *sql = NULL;
  int rc = SQLITE_OK, k;
  ga_qindex qi; /* rule 14 */
  memset(plan, 0, sizeof(*plan));
  memset(&lx, 0, sizeof(lx));
  memset(&qi, 0, sizeof(qi));

  /* the schema this plan reads (the columns, the group key's collation):
  ** the workers' snapshot must have the same (engine/scan/scan.c, Checks) */
  sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", t->schema);
  if (!sql)
    goto nomem;
  int64_t schema_version = q_int(db, sql, -1);
  sqlite3_free(sql);
  sql = NULL;
  /* rule 1 */
  int threads = ga_config_threads(cfg);
  if (cfg->threads == 1 && !p->one_worker)
    SERIAL("threads = 1");
  if (threads < 2 && !p->one_worker)
    SERIAL("one online CPU (threads = 0)");
  if (!sqlite3_threadsafe() || !runtime_threadsafe())
    SERIAL("SQLite is single-threaded here");
  /* rule 2 */
  const char *file = sqlite3_db_filename(db, t->schema);
  if (!sqlite3_stricmp(t->schema, "temp") || !file || !*file)
    SERIAL("%s", !sqlite3_stricmp(t->schema, "temp")
                     ? "a temp table"
                     : "an in-memory database (no file)");
  /* rule 3 */
  if (strcmp(t->type, "table") && strcmp(t->type, "shadow"))
    SERIAL("%s is a %s", t->table, t->type);
  if (t->without_rowid)
    SERIAL("%s is a WITHOUT ROWID table", t->table);
  if (!t->rowid)
    SERIAL("%s has columns named rowid, _rowid_ and oid", t->table);
  /* rule 4 */
  if (!sqlite3_get_autocommit(db))
    SERIAL("inside an explicit transaction");
  if (sqlite3_txn_state(db, t->schema) == SQLITE_TXN_WRITE)
    SERIAL("the connection is writing to %s", t->schema);
  /* an immutable file takes no locks (SQLite reports EXCLUSIVE for it):
  ** nobody changes it, so there is no snapshot to share */
  int immutable = sqlite3_uri_boolean(file, "immutable", 0);
  sql = sqlite3_mprintf("PRAGMA \"%w\".locking_mode", t->schema);
  if (!sql)
    goto nomem;
  q_text(db, sql, buf, sizeof buf);
  sqlite3_free(sql);
  if (sqlite3_stricmp(buf, "normal") && !immutable)
    SERIAL("locking_mode is %s", buf[0] ? buf : "unknown");
  k = busy_statements(db);
  if (k > 1 + p->call_stmts)
    SERIAL("another statement of the connection is running (its read "
           "snapshot may be older than a new one)");
  if (q_int(db, "PRAGMA read_uncommitted", 0))
    SERIAL("read_uncommitted = 1 (the connection may read other "
           "connections' uncommitted rows)");
  /* rule 8: rows of the table, an upper estimate (the rowid span, and what
  ** the file's pages can hold at 5 bytes a row at least) */
  sql = sqlite3_mprintf(
      "SELECT (SELECT %s FROM \"%w\".\"%w\" ORDER BY %s DESC LIMIT 1) - "
      "(SELECT %s FROM \"%w\".\"%w\" ORDER BY %s LIMIT 1) + 1",
      t->rowid, t->schema, t->table, t->rowid, t->rowid, t->schema, t->table,
      t->rowid);
  if (!sql)
    goto nomem;
  int64_t span = q_int(db, sql, 0);
  sqlite3_free(sql);
  sql = sqlite3_mprintf("SELECT (SELECT page_count FROM \"%w\".pragma_"
                        "page_count) * (SELECT page_size FROM \"%w\".pragma_"
                        "page_size) / 5",
                        t->schema, t->schema);
  if (!sql)
    goto nomem;
  int64_t cap = q_int(db, sql, INT64_MAX);
  sqlite3_free(sql);
  sql = NULL;
  int64_t est = span <= 0    ? cap
                : span < cap ? span
                             : cap; /* span <= 0: overflowed */
  /* rule 14: an indexed range, decided before the rules that only the
  ** parallel path needs (SQLite's own plan needs none of them) */
  if (est >= cfg->scan_min_rows && /* else rule 8 */
      !p->join_from &&             /* a join's filter reads other tables */
      ga_qindex_plan(db, t, p, threads, est, cfg->scan_min_rows,
                     p->serial_index, &qi) != SQLITE_OK)
    goto nomem;
  plan->sql_range = qi.sql_range; /* NULL but for a band */
  qi.sql_range = NULL;
  if (qi.choice == GA_QINDEX_SERIAL) {
    plan->index_serial = 1;
    SERIAL("%s", qi.why);
  }
  /* rules 5-7 */
  if (ga_lex_sql(p->filter, &lx))
    goto nomem;
  for (k = 0; k < p->nvals; k++)
    if (ga_lex_sql(p->vals[k], &lx))
      goto nomem;
  for (k = 0; k < p->nkeys + p->ncarry; k++)
    if (ga_lex_sql(p->keys[k], &lx))
      goto nomem;
  if (p->alias && ga_lex_sql(p->alias, &lx))
    goto nomem;
  for (k = 0; k < p->njoin_tables; k++) { /* a join's tables, as names */
    char *qn = sqlite3_mprintf("\"%w\"", p->join_tables[k]);
    int lrc = qn ? ga_lex_sql(qn, &lx) : SQLITE_NOMEM;
    sqlite3_free(qn);
    if (lrc)
      goto nomem;
  }
  if (lx.has_select)
    SERIAL("the text holds a subquery");
  k = names_check(db, t, p, &lx, plan->why, sizeof plan->why);
  if (k > 0)
    goto serial;
  if (k < 0)
    SERIAL("cannot list the connection's functions, modules and tables");
  k = colls_builtin(db, t, &lx, plan->why, sizeof plan->why);
  if (k == 0)
    goto serial;
  if (k < 0)
    SERIAL("cannot read the columns' collations");
  k = colls_genuine(db, plan->why, sizeof plan->why);
  if (k == 0)
    goto serial;
  if (k < 0)
    SERIAL("cannot probe the collations");
  /* rule 10: the caller's program of the text, compared with a worker's
  ** in ga_plan_verify */
  sql = auth_sql(t, p, t->schema, 0);
  if (!sql)
    goto nomem;
  plan->auth_sig = ga_program_sig(db, sql, &k);
  sqlite3_free(sql);
  sql = NULL;
  if ((k & 0xff) == SQLITE_NOMEM || (k & 0xff) == SQLITE_INTERRUPT) {
    rc = k & 0xff;
    goto serial;
  }
  if (!plan->auth_sig)
    SERIAL("the statement cannot be compiled here (%s)", sqlite3_errstr(k));
  int any_text_coll = 0; /* a key compared under NOCASE or RTRIM */
  for (k = 0; k < p->nkeys; k++) {
    coll[k] = group_coll(db, t, p->alias, p->keys[k], p->join_from_caller);
    if (coll[k] < 0)
      SERIAL("the group key's collation is not a built-in one");
    any_text_coll |= coll[k] != GA_COLL_BINARY;
  }
  /* rule 8 (est: above) */
  if (est < cfg->scan_min_rows)
    SERIAL("the table has fewer than scan_min_rows = %lld rows",
           (long long)cfg->scan_min_rows);
  if (schema_version < 0)
    SERIAL("cannot read the schema version");

  /* parallel: the spec */
  sql = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", t->schema);
  if (!sql)
    goto nomem;
  q_text(db, sql, buf, sizeof buf);
  sqlite3_free(sql);
  sqlite3_vfs *vfs = NULL;
  if (sqlite3_file_control(db, t->schema, SQLITE_FCNTL_VFS_POINTER, &vfs) !=
          SQLITE_OK ||
      !vfs)
    SERIAL("cannot find the database's VFS");
  const char *vfs_name = vfs->zName;
  int64_t pin_ms = 0;
  int pin_alone = lx.time_col[0] && post_time(p->post, &k);
  if (lx.time_col[0] && k < 0)
    goto nomem;
  char pin_why[96];
  if (lx.time_col[0] &&
      pin_time(db, vfs, &vfs_name, &pin_ms, pin_why, sizeof pin_why))
    SERIAL("the text uses %s over a column, and %s", lx.time_col, pin_why);
  /* the workers reach the caller's VFS itself (engine/scan/pintime.c rule
  ** 5), whatever the application registered under its name since */
  if (!lx.time_col[0] && ga_pintime_vfs_name(vfs, &vfs_name) != SQLITE_OK)
    SERIAL("its VFS %s is no longer registered under its name, and cannot "
           "be shimmed for the workers",
           vfs->zName);
  plan->path = sqlite3_mprintf("%s", file);
  plan->vfs = sqlite3_mprintf("%s", vfs_name);
  plan->schema = sqlite3_mprintf("%s", t->schema);
  /* grouped: hash mode (engine/scan/scan.h), unless the benchmark asks for
  ** SQLite's GROUP BY in each piece to compare (GPUAGG_SCAN_GROUP_BY=sql) */
  const char *gb = getenv("GPUAGG_SCAN_GROUP_BY");
  /* a DISTINCT aggregate's set is stepped in hash mode only */
  int any_dist = 0;
  for (k = 0; p->val_dist && k < p->nvals; k++)
    any_dist |= p->val_dist[k] != 0;
  for (k = 0; p->val_sq && k < p->nvals; k++) /* and a Σx² (issue 39) */
    any_dist |= p->val_sq[k] != 0;
  int hash = p->nkeys > 0 && (any_dist || !(gb && !strcmp(gb, "sql")));
  int enc = 0;
  if (p->nkeys > 0) { /* both modes read TEXT keys (rule 9) */
    int erc = ga_db_encoding_of(db, &enc);
    if ((erc & 0xff) == SQLITE_NOMEM)
      goto nomem;
    if (erc != SQLITE_OK)
      SERIAL("cannot read the database's encoding");
    if (enc != SQLITE_UTF8 && any_text_coll)
      SERIAL("NOCASE or RTRIM group keys of a UTF-16 database");
    /* (issue 37) such a set's TEXT is held as UTF-8, as SQLite compares
    ** it, but gpu_max orders the database's UTF-16 bytes */
    for (k = 0; p->val_dist && k < p->nvals; k++)
      if (enc != SQLITE_UTF8 && p->val_dist[k] > 1 + GA_COLL_BINARY &&
          p->val_dist[k] != GA_DIST_PCT && /* no set (issue 39) */
          (!p->val_best || p->val_best[k]))
        SERIAL("min or max over NOCASE or RTRIM DISTINCT values of a UTF-16 "
               "database");
  }
  /* rule 15: the key memo's terms, in hash mode over a UTF-8 database */
  ga_parts rows_parts = *p;
  int64_t memo_bytes = 0;
  int memo_n = key_memo_terms(p, hash, enc, &memo_bytes);
  if (!memo_n)
    rows_parts.key_memo = NULL;
  plan->sql_piece = ga_sql_piece(t, p, 0);
  plan->sql_rows = hash ? ga_sql_piece(t, &rows_parts, 1) : NULL;
  plan->sql_bounds = ga_sql_bounds(t);
  plan->sql_first = ga_sql_first(t);
  plan->sql_kth = ga_sql_kth(t);
  plan->auth_sql = auth_sql(t, p, "main", 1);
  if (!plan->auth_sql || !plan->path || !plan->vfs || !plan->schema ||
      !plan->sql_piece || (hash && !plan->sql_rows) || !plan->sql_bounds ||
      !plan->sql_first || !plan->sql_kth)
    goto nomem;
  ga_scan_spec *sp = &plan->spec;
  sp->prep = ga_worker_prep;
  sp->sql_piece = plan->sql_piece;
  sp->sql_rows = plan->sql_rows;
  sp->sql_bounds = plan->sql_bounds;
  sp->sql_first = plan->sql_first;
  sp->sql_kth = plan->sql_kth;
  sp->sql_range = plan->sql_range;
  sp->grouped = p->nkeys > 0;
  sp->shape.nk = p->nkeys > 0 ? p->nkeys : 1; /* ungrouped: one NULL key */
  sp->shape.nc = p->nkeys > 0 ? p->ncarry : 0;
  sp->shape.ns = p->nvals;
  sp->any_order = p->any_order;
  for (k = 0; k < p->nkeys; k++)
    sp->shape.coll[k] = coll[k];
  for (k = 0; p->val_dist && k < p->nvals; k++)
    sp->shape.dist[k] = p->val_dist[k];
  for (k = 0; p->val_sq && k < p->nvals; k++) /* a DISTINCT one: its set */
    sp->shape.sq[k] = p->val_sq[k] && !sp->shape.dist[k];
  sp->params = p->params;
  sp->nparams = p->nparams;
  sp->step_other = hash ? ga_group_step_other : NULL;
  sp->enc = enc;
  sp->threads = threads;
  sp->wal = !sqlite3_stricmp(buf, "wal");
  sp->immutable = immutable;
  /* the workers and the helper may do no more than the caller (scan_pool.c
  ** rule 7) */
  sp->readonly = sqlite3_db_readonly(db, t->schema) != 0;
  int no_ckpt = 1;
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, -1, &no_ckpt);
  sp->ckpt_on_close = !sp->readonly && !no_ckpt;
  sp->caller = db;
  sp->caller_schema = plan->schema;
  sp->busy_ms = (int)q_int(db, "PRAGMA busy_timeout", 0);
  sql = sqlite3_mprintf("PRAGMA \"%w\".mmap_size", t->schema);
  if (!sql)
    goto nomem;
  sp->mmap_size = q_int(db, sql, 0);
  sqlite3_free(sql);
  sql = NULL;
  sp->caller_reads = sqlite3_txn_state(db, t->schema) >= SQLITE_TXN_READ;
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, -1, &sp->dqs);
  for (int i = 0; i < GA_SCAN_NLIMITS; i++) /* rule 11 */
    sp->limits[i] = sqlite3_limit(db, i, -1);
  sp->est_rows = est;
  sp->large_pieces = p->join_from != NULL; /* planner/qjoin.c rule 5 */
  sp->schema_version = schema_version;
  sp->max_group_bytes = ga_config_group_bytes(cfg);
  sp->pin = lx.time_col[0] != 0; /* rule 6 */
  sp->pin_ms = pin_ms;
  sp->pin_alone = pin_alone;
  sp->key_memo_n = memo_n; /* rule 15 */
  sp->key_memo_bytes = memo_bytes;
  for (k = 0; k < GA_MAX_KEYS; k++)
    sp->key_memo[k] =
        (signed char)(memo_n && k < p->nkeys ? p->key_memo[k] : -1);
  const char *cap_env = getenv("GPUAGG_SCAN_MAX_GROUP_BYTES"); /* tests */
  if (cap_env && atoll(cap_env) > 0)
    sp->max_group_bytes = atoll(cap_env);
  plan->parallel = 1;
  if (p->dims && ga_qd_attach(p->dims, t, p, &rows_parts, plan)) /* issue 38 */
    goto nomem;
  sqlite3_snprintf((int)sizeof plan->why, plan->why, "%s%s%s",
                   sp->immutable ? "an immutable file (immutable=1)"
                   : sp->wal     ? "WAL snapshot"
                                 : "rollback-journal snapshot",
                   qi.why[0] ? "; " : "", qi.why);
  ga_lex_free(&lx);
  return SQLITE_OK;

nomem:
  rc = SQLITE_NOMEM;
serial:
  ga_lex_free(&lx);
  plan->parallel = 0;
  return rc;
}

void ga_plan_free(ga_plan *plan) {
  sqlite3_free(plan->path);
  sqlite3_free(plan->vfs);
  sqlite3_free(plan->schema);
  sqlite3_free(plan->sql_piece);
  sqlite3_free(plan->sql_rows);
  sqlite3_free(plan->sql_bounds);
  sqlite3_free(plan->sql_first);
  sqlite3_free(plan->sql_kth);
  sqlite3_free(plan->auth_sql);
  sqlite3_free(plan->auth_sig);
  sqlite3_free(plan->sql_range);
  ga_sd_free(plan->dims); /* planner/qdims.c */
  memset(plan, 0, sizeof(*plan));
}
