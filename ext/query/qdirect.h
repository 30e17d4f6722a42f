/*
** qdirect.h — gpu_query's rows straight from the merged groups, without
** SQLite's post query, where the post query only reads columns and
** compares aggregates with numeric literals (qdirect.c; issue 37).
*/
#ifndef GA_QDIRECT_H
#define GA_QDIRECT_H

#include "sqlite3ext.h"

#include "query_vtab.h"

/* One HAVING comparison: aggregate agg (index into q->aggs) op literal. */
typedef struct ga_qdirect_cmp {
  int agg;
  int op;       /* GA_QD_LT ... (the aggregate on the left) */
  int lit_type; /* SQLITE_INTEGER, SQLITE_FLOAT; a parameter's: any type */
  int64_t lit_i;
  double lit_r;
} ga_qdirect_cmp;

#define GA_QD_MAX_CMPS 16

typedef struct ga_qdirect {
  int ok;    /* 1: the plan applies (the rest is set) */
  int ncols; /* result columns */
  int *col;  /* per result column: the groups table's column */
  int nchecks;
  int check[GA_Q_MAX_AGGS]; /* the sums whose overflow raises (aggs) */
  int ncmps;
  ga_qdirect_cmp cmp[GA_QD_MAX_CMPS];
  /* rule 7: the value of aggregate memo_agg (-1: none) for the row
  ** ga_qdirect_next gave last (memo_i), finalised by its test */
  int memo_agg;
  size_t memo_i;
  ga_value memo_v;
} ga_qdirect;

/* Rule 1: whether q's post query (q->post_sql) is one qdirect.c can
** answer with the call's parameter values (params[0] is ?1; NULL:
** unbound); d->ok says.  SQLITE_OK or SQLITE_NOMEM (db: the caller's
** connection, which reads each literal). */
int ga_qdirect_plan(sqlite3 *db, const ga_query *q,
                    sqlite3_value *const *params, int nparams, ga_qdirect *d);
void ga_qdirect_free(ga_qdirect *d);

/* The next group at or after *i that passes the HAVING (rule 3):
** SQLITE_ROW with *i its index; SQLITE_DONE; SQLITE_ERROR (a sum of the
** group overflowed: "integer overflow", as the post query raises it);
** SQLITE_INTERRUPT (the caller's, polled by in every GA_QD_POLL groups);
** SQLITE_NOMEM. */
#define GA_QD_POLL 4096
int ga_qdirect_next(ga_qdirect *d, const ga_qgroups *gs, size_t *i,
                    ga_intr *in);

/* Result column col of group i (rule 2). */
void ga_qdirect_column(const ga_qdirect *d, const ga_qgroups *gs, size_t i,
                       sqlite3_context *ctx, int col);

/* Rule 5: the bytes rule 7 of query_vtab.c would keep for group i's row
** (the post query's values, 64 a value plus TEXT and BLOB bytes). */
int64_t ga_qdirect_row_bytes(const ga_qdirect *d, const ga_qgroups *gs,
                             size_t i);

#endif
