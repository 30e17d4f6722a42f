/*
** query.h — gpu_query's planner: one analyst's SELECT split into what the
** workers evaluate (keys, the columns carried with them, the distinct
** aggregate arguments, the filter: planner.h's ga_parts), the query SQLite
** runs over the merged groups afterwards (the select list, HAVING, ORDER BY
** and LIMIT as written), and the serial query.  The rules it keeps are at
** the top of planner/query.c.
*/
#ifndef GA_QUERY_H
#define GA_QUERY_H

#include "sqlite3ext.h"

#include "planner.h"
#include "qsubq.h"

/* An aggregate of the text: what a value column of the groups table holds.
** op is a GA_AGG_* (value.h) or one of these. */
#define GA_Q_COUNT_STAR 10 /* count(*): the group's rows */
#define GA_Q_COUNT 11      /* count(e): e's non-NULL values */

/* A median or percentile (issue 39): GA_Q_PCT + its GA_PCT_* (pct.h). */
#define GA_Q_PCT 20

typedef struct ga_qagg {
  int op;
  int val;     /* index into vals (count(*): 0, any state counts rows) */
  double frac; /* GA_Q_PCT's: the fraction of its constant P */
} ga_qagg;

/* The most aggregate calls, distinct (op, argument) pairs, of one query. */
#define GA_Q_MAX_AGGS 128

typedef struct ga_query {
  ga_target t;
  char *qual; /* the name the text qualifies columns with: the alias, else
                 the table's name as written */
  int has_alias;
  /* the workers' texts (parameters as ?3..) */
  char *filter;
  int nkeys, ncarry;
  char **keys; /* nkeys keys, then ncarry carried columns (quoted names) */
  int nvals;
  char **vals;
  unsigned char val_minmax[GA_MAX_STATES]; /* planner.h's ga_parts */
  unsigned char val_best[GA_MAX_STATES];   /* planner.h's ga_parts */
  /* the groups table: its columns are the carried and key columns the text
  ** reads outside aggregates (rep_*), then one per aggregate (aggs) */
  int nreps;
  char **rep_name; /* as the table names it */
  char **rep_decl; /* declared type and COLLATE, as in the table */
  int *rep_slot;   /* its key (or carried) slot */
  int naggs;
  ga_qagg *aggs;
  char **agg_col;      /* the groups table's name of each */
  char *groups_schema; /* CREATE TABLE x(...) of the groups table */
  /* every GROUP BY term a bare column: each groups-table row is one group
  ** of SQLite's GROUP BY, and the post query has none (query.c rule 6) */
  int flat;
  /* SQLite's own texts, with the original parameter numbers */
  char *post_sql;      /* over the groups table; ?(nparams + 1) is the handle */
  char *serial_sql;    /* the text with gpu_ aggregates, rows in rowid order */
  char *serial_sql_ix; /* the same without NOT INDEXED: SQLite's own plan,
                          for an indexed range (planner/path.c rule 14);
                          NULL when the text has INDEXED BY / NOT INDEXED */
  int nparams;
  char **param_name; /* as written: "?1", ":a" (an anonymous ? is "?N") */
  int ncols;
  char **col_name;         /* the result columns, made unique (rule 3) */
  const char *serial_why;  /* not NULL: the parallel path cannot serve */
  const char *partial_why; /* not NULL: no partial (planner/qrewrite.c) */
  /* scalar subqueries and EXISTS, parameters ?(subs.param0 + j) of the
  ** workers' texts (+ 2) and the post query, evaluated in the scan's
  ** snapshot (planner/qsubq.c); serial_sql then is the text as written */
  ga_qsubs subs;
  /* rule 7: ORDER BY an aggregate ... LIMIT: only the groups among the
  ** first topk_k by that aggregate (ties kept) can reach the answer.
  ** topk_agg: the aggregate (index into aggs), -1 none */
  int topk_agg, topk_desc;
  int64_t topk_k;
  unsigned char val_sum[GA_MAX_STATES]; /* per value: a sum() reads it */
  /* per value: 0, or 1 + the GA_COLL_* of a DISTINCT aggregate's argument
  ** (query.c rule 9; planner.h's ga_parts) */
  unsigned char val_dist[GA_MAX_STATES];
  /* per value: 1 when a variance reads it (rule 14; ga_parts.val_sq) */
  unsigned char val_sq[GA_MAX_STATES];
  /* a join (planner/qjoin.c; issue 38): t is the fact table, qual its
  ** name; the FROM clauses of the workers' texts and of the caller's
  ** checks, the tables it names, last_scan's "join" object; NULL: one
  ** table */
  char *join_from, *join_from_caller, *join_json;
  char **join_tables;
  int njoin_tables;
  int join_hinted; /* the text names the fact (qjoin.c rule 2) */
  /* per key: -1, or the slot of the one column its term reads, whose
  ** workers evaluate it once per distinct value (query.c rule 11) */
  int key_memo[GA_MAX_KEYS];
  /* HAVING terms SQLite moves into WHERE (query.c rule 12): how many, and
  ** the workers' filter with them (filter alone is the text's WHERE, which
  ** a partial's signature reads) */
  int having_moved;
  char *scan_filter;
  /* a join's probe plan (planner/qdims.c), NULL: none */
  struct ga_qd *dims;
} ga_query;

/* Parse and check sql on db (the caller's connection), for the groups
** table `groups` (a name in temp).  SQLITE_OK; SQLITE_NOMEM; SQLITE_INTERRUPT
** (the caller's interrupt, seen while SQLite compiles the text); or
** SQLITE_ERROR with *err "gpu_query: ..." (sqlite3_malloc'd). */
int ga_query_parse(sqlite3 *db, const char *sql, const char *groups,
                   ga_query *q, char **err);
void ga_query_free(ga_query *q);

/* The workers' parts of q (keys, vals: arrays of q). */
void ga_query_parts(const ga_query *q, ga_parts *p,
                    sqlite3_value *const *params, int nparams);

#endif
