/*
** planner.h — SQL text to a plan: gpu_aggregate's arguments lexed, its
** table resolved and its SQL texts made (planner/args.c), and the choice
** of path with the scan's spec (planner/path.c).  The column cache's part
** is planner/cache_plan.h; the vtab that runs a plan is
** ext/aggregate/aggregate_vtab.c.
*/
#ifndef GA_PLANNER_H
#define GA_PLANNER_H

#include "sqlite3ext.h"

#include "config.h"
#include "scan.h"

/* An argument's SQL text as a lexer sees it (planner/args.c). */
typedef struct ga_lex {
  int bad;        /* unbalanced parentheses, unterminated string/comment */
  int semicolon;  /* a ';' outside strings and comments */
  int param;      /* a parameter: ?, ?N, :a, @a, $a, #N */
  int has_select; /* the keyword SELECT (a subquery) */
  int commas;     /* ',' outside parentheses: a list, not one expression */
  /* a date and time function whose value may change with the statement:
  ** one called with no argument, or with an argument that is not a literal
  ** (a column may hold 'now'), or with a string that holds "now"; also
  ** CURRENT_TIME, CURRENT_DATE, CURRENT_TIMESTAMP.  Its name, else "". */
  char time_call[24];
  /* a date and time function with an argument that is not a literal (a
  ** column, an expression): a row may hold 'now', read at the statement's
  ** time, which the parallel path pins for its workers (planner/path.c
  ** rule 6).  Its name, else "". */
  char time_col[24];
  /* a date and time function that may apply 'localtime' or 'utc' (a
  ** string holding either, or a modifier that is not a literal): its value
  ** follows the process's TZ.  Its name, else "". */
  char tz_call[24];
  char **ids; /* identifiers, bare and quoted (dequoted) */
  int nids;
  /* those of ids not written after a '.' (q.c's c is a column, never a
  ** table): the names that may be a table (planner/path.c rule 5) */
  char **tids;
  int ntids;
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
** no such table: ...".  On any failure *t is left empty (nothing to free). */
int ga_target_resolve(sqlite3 *db, const char *arg, ga_target *t, char **pzErr);
void ga_target_free(ga_target *t);

/* The four arguments (filter and group NULL when absent). */
typedef struct ga_args {
  const char *table, *expr, *filter, *group;
} ga_args;

/* What the workers evaluate, as SQL texts over the table: gpu_aggregate's
** arguments (ga_parts_of_args) or a gpu_query's parts (planner/query.c).
** Parameters in the texts are ?3.. (params[0] is ?3): ?1 and ?2 are the
** pieces' rowid bounds. */
typedef struct ga_parts {
  const char *filter; /* NULL or "": none */
  const char *alias;  /* the FROM clause's name for the table, NULL: none */
  int nkeys;          /* 0: ungrouped */
  int ncarry;         /* columns carried with the first row (scan_group.h) */
  int nvals;          /* >= 1 */
  const char *const *keys; /* nkeys keys, then ncarry carried columns */
  const char *const *vals;
  sqlite3_value *const *params;
  int nparams;
  /* one worker is a plan too (gpu_query's grouped queries with threads =
  ** 1: the workers' hash grouping costs less a row than the serial text's
  ** GROUP BY, which sorts); 0: threads = 1 means the serial path */
  int one_worker;
  /* the merged groups may come in any order (gpu_query: SQLite's GROUP BY
  ** in its post query sorts them again); 0: in key order */
  int any_order;
  /* per value, 1 when only min, max and count read its state (gpu_query's
  ** aggregates over it): then a TEXT value's codes serve (the column
  ** cache); NULL: none */
  const unsigned char *val_minmax;
  /* per value, 1 when a min or max reads its state; NULL: every value (the
  ** GPU cache then keeps max and min only where they are read) */
  const unsigned char *val_best;
  /* gpu_query's rule 7 (planner/query.c): only the groups among the first
  ** topk_k by sum (topk_total 0) or total (1) of value topk_val, in
  ** descending (topk_desc) or ascending order, ties kept, can reach the
  ** answer; a path may hand over only those.  topk_val -1: all groups.
  ** val_sum: per value, 1 when a sum() reads it (an integer overflow in any
  ** group is an error, so a path that leaves groups out must know none
  ** overflows); NULL: none */
  int topk_val, topk_total, topk_desc;
  int64_t topk_k;
  /* issue 37: the order is count(*) of the group (1: its rows) or count()
  ** of value topk_val (2) instead of its sum or total (0) */
  int topk_count;
  const unsigned char *val_sum;
  /* the serial path can run SQLite's own plan of the text (gpu_query's
  ** serial text without NOT INDEXED): rule 14 of planner/path.c may choose
  ** it for a selective indexed range; 0: never (gpu_aggregate, partials) */
  int serial_index;
  /* gpu_query's post query (NULL: none): the caller evaluates it at its own
  ** time, apart from the workers' pinned one (planner/path.c rule 6) */
  const char *post;
  /* per value, 0 or 1 + the GA_COLL_* of a DISTINCT aggregate's argument
  ** (gpu_query, issue 37): its state keeps the distinct values
  ** (engine/scan/scan_group.h rule 5); NULL: none */
  const unsigned char *val_dist;
  /* per value, 1 when a variance reads it (gpu_query, issue 39): its state
  ** keeps Σx² too (engine/state/gstate.h rule 8), stepped in hash mode
  ** only; NULL: none */
  const unsigned char *val_sq;
  /* gpu_query's aggregate calls (planner/query.h; NULL: none given): a GPU
  ** entry reads its medians' and percentiles' fractions (issue 39,
  ** engine/cache/cache_gpu_stat.c rule 3) */
  const struct ga_qagg *aggs;
  int naggs;
  /* a join (planner/qjoin.c): the FROM clause of the workers' texts (the
  ** fact table NOT INDEXED under the name alias), the same over the
  ** caller's schema, and the names of its tables; NULL: one table */
  const char *join_from, *join_from_caller;
  const char *const *join_tables;
  int njoin_tables;
  /* per key, -1 or the row position (in keys: a bare key's or a carried
  ** column's) of the one column the key's term reads: hash mode's workers
  ** evaluate the term once per distinct value of it (engine/scan/keymemo.h,
  ** planner/query.c rule 11); NULL: none */
  const int *key_memo;
  /* statements of the connection running for this one call besides the
  ** calling one: gpu_query_json's outer SELECT (ext/query/query_json.c
  ** rule 7), whose read transaction began with the call; planner/path.c
  ** rule 4 counts them with the caller.  0: none */
  int call_stmts;
  /* gpu_query's subqueries evaluated on the caller for the column cache
  ** (planner/qsubq.c rule 6: IN subqueries' rows); NULL: none */
  const struct ga_qsub_run *subq;
  /* a join's probe plan (planner/qdims.c); NULL: none */
  const struct ga_qd *dims;
} ga_parts;

/* a's parts (one key or none, one value); keys and vals are the arrays
** parts points at. */
void ga_parts_of_args(const ga_args *a, ga_parts *p, const char **keys,
                      const char **vals);

/* SQL texts.  sqlite3_malloc'd; NULL on NOMEM.
**   serial: on the caller's connection, rows of (grp, fused state BLOB):
**           the reference query with one fused aggregate for the seven.
**   piece, bounds, first, kth: what the workers run (scan.h); piece with
**           hash = 1: scan.h's sql_rows. */
char *ga_sql_serial(const ga_target *t, const ga_args *a);
char *ga_sql_piece(const ga_target *t, const ga_parts *p, int hash);
char *ga_sql_bounds(const ga_target *t);
char *ga_sql_first(const ga_target *t);
char *ga_sql_kth(const ga_target *t);

/* The decision (planner/path.c). */
typedef struct ga_plan {
  int parallel;  /* else serial */
  char why[256]; /* why serial, or how parallel */
  ga_scan_spec spec;
  char *path, *vfs;
  char *schema; /* the table's schema on the caller (spec.caller_schema) */
  char *sql_piece, *sql_rows, *sql_bounds, *sql_first, *sql_kth;
  /* rule 10 of planner/path.c: the text as a worker compiles it, and the
  ** caller's program of it (opcodes) */
  char *auth_sql, *auth_sig;
  /* rule 14 of planner/path.c: serial with SQLite's own plan (the serial
  ** text without NOT INDEXED); the band's statement (spec.sql_range) */
  int index_serial;
  char *sql_range;
  /* a join's dimensions built for the probe path (planner/qdims.c,
  ** engine/scan/dims.h); NULL: none */
  struct ga_sd *dims;
} ga_plan;

/* Decide the path of one call; fills plan (spec.pool excepted).  Errors
** only for out of memory: every other problem is a reason for the serial
** path, which then reports SQLite's own error if there is one. */
int ga_plan_make(sqlite3 *db, const ga_config *cfg, const ga_target *t,
                 const ga_args *a, ga_plan *plan);
/* The same for any parts (gpu_query's): the path rules over every text. */
int ga_plan_parts(sqlite3 *db, const ga_config *cfg, const ga_target *t,
                  const ga_parts *p, ga_plan *plan);
void ga_plan_free(ga_plan *plan);
/* The GA_COLL_* under which SQLite's GROUP BY compares key (text of the
** table t, FROM alias or NULL) on db, -1 when not a built-in collation:
** a partial's key collations are checked against it where it is finished
** (ext/query/partial_fns.c). */
int ga_plan_key_coll(sqlite3 *db, const ga_target *t, const char *alias,
                     const char *key);
/* A join's piece of the fact's rowids (planner/qjoin.c rule 5), of the
** fact's name and rowid name twice: likelihood 1.0 keeps SQLite's estimate
** of the fact's rows at the table's, so that it still builds its Bloom
** filters on the dimensions (3.40 weighs them against the rows of the
** loops outside; a plain range cuts that estimate 16-fold). */
#define GA_QJ_RANGE                                                            \
  "likelihood(\"%w\".%s >= ?1, 1.0) AND likelihood(\"%w\".%s <= ?2, 1.0)"
/* The same for a key over a join's FROM clause (planner/qjoin.c). */
int ga_plan_key_coll_join(sqlite3 *db, const char *from, const char *key);
/* The checks that need a worker connection of pool (rule 10: the caller's
** authorizer): a plan that fails them turns serial, with the reason.
** SQLITE_OK or SQLITE_NOMEM. */
int ga_plan_verify(ga_plan *plan, ga_scan_pool *pool);

/* The opcodes of sql's program on db, one after another (EXPLAIN): what
** the connection's authorizer, which SQLite lets nobody read, made of it.
** sqlite3_malloc'd; NULL when sql cannot be prepared, with *rc set (an
** authorizer's SQLITE_DENY is one case). */
char *ga_program_sig(sqlite3 *db, const char *sql, int *rc);
/* The same at a level of detail: GA_SIG_OPS the opcodes (ga_program_sig);
** GA_SIG_P4 each opcode with its P4 and P5, not Init, nor a Variable's
** name (planner/qrewrite.c: two texts of one meaning); GA_SIG_FULL every
** instruction's opcode, P1 .. P5, not the P4 of Init or Transaction
** (planner/qsubq.c: two connections reading the same tables, collations
** and functions). */
#define GA_SIG_OPS 0
#define GA_SIG_P4 1
#define GA_SIG_FULL 2
char *ga_program_sig_as(sqlite3 *db, const char *sql, int detail, int *rc);

#endif
