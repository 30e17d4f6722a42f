/*
** aggregate.h — what the files of gpu_aggregate share: the vtab
** (aggregate_vtab.c), its arguments and SQL texts (aggregate_args.c) and
** the choice of path (aggregate_path.c).
*/
#ifndef GA_AGGREGATE_H
#define GA_AGGREGATE_H

#include "sqlite3ext.h"

#include "config.h"
#include "scan.h"

/* An argument's SQL text as a lexer sees it (aggregate_args.c). */
typedef struct ga_lex {
  int bad;        /* unbalanced parentheses, unterminated string/comment */
  int semicolon;  /* a ';' outside strings and comments */
  int param;      /* a parameter: ?, ?N, :a, @a, $a, #N */
  int has_select; /* the keyword SELECT (a subquery) */
  /* a date and time function whose value may change with the statement:
  ** one called with no argument, or with an argument that is not a literal
  ** (a column may hold 'now'), or with a string that holds "now"; also
  ** CURRENT_TIME, CURRENT_DATE, CURRENT_TIMESTAMP.  Its name, else "". */
  char time_call[24];
  char **ids; /* identifiers, bare and quoted (dequoted) */
  int nids;
  char **colls; /* names after COLLATE (dequoted) */
  int ncolls;
} ga_lex;

/* Lex z into *out (appending to its lists: one ga_lex may collect several
** arguments).  SQLITE_OK or SQLITE_NOMEM. */
int ga_lex_sql(const char *z, ga_lex *out);
void ga_lex_free(ga_lex *l);

/* The table argument, resolved on the caller's connection. */
typedef struct ga_target {
  char *schema; /* as in pragma database_list ("main", "temp", "aux") */
  char *table;  /* as in the schema */
  char *type;   /* pragma table_list's: table, view, virtual, shadow */
  int without_rowid;
  char **cols; /* column names (table_xinfo), for collations */
  int ncols;
  const char *rowid; /* rowid, _rowid_ or oid: one no column shadows; NULL
                        when all three are column names */
} ga_target;

/* Split and resolve the table name (quoted identifiers, schema.table); an
** unqualified name is looked up as SQLite does (temp, main, attached).
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR with *pzErr "gpu_aggregate:
** no such table: ...". */
int ga_target_resolve(sqlite3 *db, const char *arg, ga_target *t, char **pzErr);
void ga_target_free(ga_target *t);

/* The four arguments (filter and group NULL when absent). */
typedef struct ga_args {
  const char *table, *expr, *filter, *group;
} ga_args;

/* SQL texts.  sqlite3_malloc'd; NULL on NOMEM.
**   serial: on the caller's connection, rows of (grp, fused state BLOB):
**           the reference query with one fused aggregate for the seven.
**   piece, bounds, first, kth: what the workers run (scan.h); piece with
**           hash = 1: scan.h's sql_rows. */
char *ga_sql_serial(const ga_target *t, const ga_args *a);
char *ga_sql_piece(const ga_target *t, const ga_args *a, int hash);
char *ga_sql_bounds(const ga_target *t);
char *ga_sql_first(const ga_target *t);
char *ga_sql_kth(const ga_target *t);

/* The decision (aggregate_path.c). */
typedef struct ga_plan {
  int parallel;  /* else serial */
  char why[256]; /* why serial, or how parallel */
  ga_scan_spec spec;
  char *path, *vfs;
  char *sql_piece, *sql_rows, *sql_bounds, *sql_first, *sql_kth;
  /* rule 10 of aggregate_path.c: the text as a worker compiles it, and the
  ** caller's program of it (opcodes) */
  char *auth_sql, *auth_sig;
} ga_plan;

/* Decide the path of one call; fills plan (spec.pool excepted).  Errors
** only for out of memory: every other problem is a reason for the serial
** path, which then reports SQLite's own error if there is one. */
int ga_plan_make(sqlite3 *db, const ga_config *cfg, const ga_target *t,
                 const ga_args *a, ga_plan *plan);
void ga_plan_free(ga_plan *plan);
/* The checks that need a worker connection of pool (rule 10: the caller's
** authorizer): a plan that fails them turns serial, with the reason.
** SQLITE_OK or SQLITE_NOMEM. */
int ga_plan_verify(ga_plan *plan, ga_scan_pool *pool);

/* The opcodes of sql's program on db, one after another (EXPLAIN): what
** the connection's authorizer, which SQLite lets nobody read, made of it.
** sqlite3_malloc'd; NULL when sql cannot be prepared, with *rc set (an
** authorizer's SQLITE_DENY is one case). */
char *ga_program_sig(sqlite3 *db, const char *sql, int *rc);

/* The caller's interrupt, as seen from its own thread (aggregate_path.c):
** sqlite3_is_interrupted where the running SQLite has it (3.41+), else a
** probe statement that SQLite's own interrupt check answers. */
typedef struct ga_intr {
  sqlite3 *db;
  sqlite3_stmt *probe;
  int64_t next_ns; /* the probe: no step before this (CLOCK_MONOTONIC) */
  /* the progress probe (both versions: the application's progress handler
  ** runs inside it), and the next time it may step */
  sqlite3_stmt *progress;
  int64_t next_progress_ns;
  int64_t progress_probes; /* steps of it (gpuagg_info's last_scan) */
} ga_intr;
int ga_intr_check(void *arg);
void ga_intr_free(ga_intr *i);
/* 1 when sqlite3_is_interrupted was found (gpuagg_info, tests). */
int ga_intr_native(void);
/* rc of a failed prepare or step on db, or SQLITE_INTERRUPT where an
** interrupt caused it: SQLite reports one that hits the parser inside a
** virtual table's constructor (its own pragma_* tables') as SQLITE_ERROR
** with the message "interrupted". */
int ga_intr_rc(sqlite3 *db, int rc);

#endif
