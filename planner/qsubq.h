/*
** qsubq.h — gpu_query's uncorrelated scalar subqueries and EXISTS on the
** parallel path (planner/qsubq.c, its rules): each evaluated once on the
** caller's connection inside the scan's snapshot and bound, keeping its
** affinity, as a parameter of the workers' texts and of the post query.
*/
#ifndef GA_QSUBQ_H
#define GA_QSUBQ_H

#include <stddef.h>
#include <stdint.h>

#include "sqlite3ext.h"

typedef struct ga_qsub {
  char *sql;        /* SELECT (<subquery>) or SELECT EXISTS (<subquery>),
                       sum ... max as gpu_sum ... gpu_max, parameters ?N */
  const char *cast; /* NULL: a plain parameter; else CAST(?K AS cast) */
  /* x IN (SELECT ...) in WHERE: the set, a TEMP table gpuagg_in_<j> on
  ** every worker with one column declared in_decl (the subquery's column's
  ** affinity and collation); sql is SELECT * FROM (<subquery>) */
  char *in_decl;
} ga_qsub;

typedef struct ga_qsubs {
  int n;
  ga_qsub *v;
  /* subquery j is parameter ?(param0 + j) of the planner's text (the text's
  ** parameters, then the post query's handle, then these) */
  int param0;
} ga_qsubs;

void ga_qsubs_free(ga_qsubs *s);

/* Parse time (planner/qrewrite.c rule 5): the placeholder of the scalar
** subquery [sub] (its text as written, "SELECT ...") for parameter k,
** written into s, its CAST in *cast (static).  SQLITE_OK; SQLITE_NOMEM;
** SQLITE_ERROR (*why: no placeholder keeps its affinity: the serial path).
*/
int ga_qsub_placeholder(sqlite3 *db, const char *sub, int k, sqlite3_str *s,
                        const char **cast, const char **why);

/* Call time: the values, evaluated by ga_qsub_eval inside the snapshot. */
typedef struct ga_qsub_run {
  sqlite3 *db; /* the caller's connection */
  const ga_qsubs *subs;
  sqlite3_value *const *params; /* the text's own, nparams of them */
  int nparams;
  /* nparams + 1 + subs->n: the text's parameters (borrowed), NULL (the
  ** post query's handle), then the subqueries' values (owned) */
  sqlite3_value **vals;
  int64_t cap; /* bytes the values may take */
  /* gpu_sum ... gpu_max on (1) or off (0) worker 0's connection (ext/
  ** init.c's ga_contract_fns with ctx) */
  int (*contract)(sqlite3 *w0, void *ctx, int on);
  void *contract_ctx;
  /* rule 6, the caller's evaluation (ga_qsub_eval_caller): each IN
  ** subquery j's rows, in_n[j] of them in in_rows[j] (owned) */
  int caller;
  sqlite3_value ***in_rows;
  int *in_n;
  /* rule 7: a scalar subquery j answered from the column cache: SQLITE_OK
  ** with *v (owned by the caller) or NULL (SQLite evaluates it); else an
  ** error.  NULL: none */
  int (*cached)(void *ctx, int j, const char *sql, sqlite3_value **v);
  void *cached_ctx;
  /* the last evaluation's subqueries: from the cache, by SQLite */
  int from_cache, by_sqlite;
} ga_qsub_run;

/* vals allocated (SQLITE_OK / SQLITE_NOMEM). */
int ga_qsub_run_init(ga_qsub_run *r, sqlite3 *db, const ga_qsubs *subs,
                     sqlite3_value *const *params, int nparams, int64_t cap);
void ga_qsub_run_free(ga_qsub_run *r);

/* engine/scan/scan.h's in_snapshot hook: evaluate every subquery on
** worker 0's connection w0, inside the scan's snapshot (arg: a
** ga_qsub_run).  SQLITE_OK; SQLITE_NOMEM; SQLITE_INTERRUPT; anything else:
** the serial path for the reason in why. */
int ga_qsub_eval(void *arg, sqlite3 **w, int nw, char *why, size_t n);

/* Rule 6: is values slot k (parameter ?(k + 1) of the post query, ?(k + 3)
** of the parts) an IN subquery whose rows the caller evaluated?  1 with
** its rows, their count and its declaration (affinity COLLATE name), or
** 0. */
int ga_qsub_in_set(const ga_qsub_run *r, int k, sqlite3_value *const **rows,
                   int *n, const char **decl);

/* Parse time (rule 5): the declaration of the TEMP column that keeps the
** IN subquery's (its text as written, "SELECT ...") affinity and
** collation.  SQLITE_OK with *decl; SQLITE_NOMEM; SQLITE_ERROR with *why
** (the serial path). */
int ga_qsub_in_decl(sqlite3 *db, const char *sub, char **decl,
                    const char **why);

/* The workers' text sql (sqlite3_malloc'd), each IN (?N) placeholder of
** an IN subquery (N = param0 + j + shift) as IN (SELECT v FROM
** temp."gpuagg_in_<j>"); NULL: no memory. */
char *ga_qsub_worker_sql(const ga_qsubs *s, const char *sql, int shift);

/* Parse time: NULL where worker 0 may call the function name as the
** caller would, else the reason (rule 2). */
const char *ga_qsub_fn_why(sqlite3 *db, const char *name);

/* The values into the post query st (its parameters ?(param0 + j)). */
int ga_qsub_bind_post(const ga_qsub_run *r, sqlite3_stmt *st);

/* The column cache (rule 6): does sql (a filter, value or key text of the
** parts) read a subquery's value?  1 yes (or no memory to tell), 0 no. */
int ga_qsub_reads(const ga_qsubs *s, const char *sql);

/* The column cache (rule 6): every subquery evaluated on the caller's own
** connection, in its open read transaction (the snapshot the cache entry
** is checked against), an IN subquery's rows kept (in_rows), a scalar
** one asked of r->cached first; as ga_qsub_eval. */
int ga_qsub_eval_caller(ga_qsub_run *r, char *why, size_t n);

/* Rule 7: where the scalar subquery sql (ga_qsub.sql, "SELECT (...)") is
** SELECT agg(...) [[AS] name] FROM <one table> [WHERE ...], agg a gpu_
** aggregate or count and nothing after the WHERE: its inner text
** (sqlite3_malloc'd), for the column cache to answer; else NULL. */
char *ga_qsub_cache_text(const char *sql);

#endif
