/*
** qjoin.h — gpu_query's joins (planner/qjoin.c, its rules): a FROM of
** several tables read as one fact table and its dimensions (a star, or a
** snowflake), checked against the grammar, and written again as the FROM
** clause of the workers', the caller's and the serial texts.  query.c
** keeps its one-table planner: the fact is its target, and the columns of
** every table are one list (ga_qj_col).
*/
#ifndef GA_QJOIN_H
#define GA_QJOIN_H

#include "sqlite3ext.h"

#include "planner.h"
#include "qtok.h"

/* How a table joins the ones before it, as written. */
enum {
  GA_QJ_FIRST = 0, /* the first table of FROM */
  GA_QJ_COMMA,     /* , */
  GA_QJ_INNER,     /* [INNER] JOIN */
  GA_QJ_CROSS,     /* CROSS JOIN */
  GA_QJ_LEFT       /* LEFT [OUTER] JOIN */
};

/* Where a FROM clause is rendered (ga_qj_from). */
enum {
  GA_QJ_WORKER = 0, /* main."table" AS "q" (a worker's main is the file) */
  GA_QJ_CALLER,     /* "schema"."table" AS "q" (the caller's checks) */
  GA_QJ_SERIAL      /* each name as written, AS "q" */
};

typedef struct ga_qj_tab {
  int a, b;             /* the item's tokens, operator excluded */
  int name_a, name_b;   /* [schema .] name */
  int idx_a;            /* INDEXED BY x / NOT INDEXED: its first token, -1 */
  int op;               /* GA_QJ_* */
  int on_a, on_b;       /* the ON expression, -1: none */
  int using_a, using_b; /* the names inside USING ( ... ), -1: none */
  ga_target t;
  char *qual;   /* the name the text qualifies its columns with */
  int ipk;      /* its INTEGER PRIMARY KEY (index in t.cols), -1 */
  int parent;   /* the table one step nearer the fact (rule 3), -1: the fact */
  int nkeys;    /* equalities joining it to its parent */
  int64_t rows; /* rows: sqlite_stat1's, else the rowid span (rule 2) */
  int stat;     /* rows came from sqlite_stat1 */
  int filtered; /* a condition reads it alone (rule 5's order), or, after
                   the tree, it or a table beyond it */
} ga_qj_tab;

typedef struct ga_qjoin {
  int n;
  ga_qj_tab *v; /* in the order written */
  int fact;
  int hinted;    /* the text named the fact (rule 2) */
  int *order;    /* the tables from the fact outwards (rule 5) */
  int reorder;   /* rule 5: written again fact first, ON into WHERE */
  int cross;     /* rule 5: its order fixed by CROSS JOIN */
  int any_left;  /* a LEFT JOIN */
  int any_using; /* USING */
  /* rule 6: the columns of every table, one list: the fact's first (at
  ** their index in its t.cols), then each other table's, then each other
  ** table's rowid (col -1) */
  int ncols;
  int *ctab, *ccol;
  const char *serial_why; /* not NULL: the serial path, and why (rule 7) */
  char *json;             /* last_scan's "join" object */
} ga_qjoin;

/* Does FROM [a, b) name several tables (a top-level ',' or JOIN)? */
int ga_qj_is_join(const char *z, const ga_qtok *t, int a, int b);

/* Read FROM [fa, fb) and the conditions of WHERE [wa, wb) (wa = wb: none)
** on db: SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR with *err "gpu_query:
** ..." (sqlite3_malloc'd).  The text compiled on db already. */
int ga_qj_read(sqlite3 *db, const char *z, const ga_qtok *t, int n, int fa,
               int fb, int wa, int wb, ga_qjoin *j, char **err);
void ga_qj_free(ga_qjoin *j);

/* The column token i names (rule 6): an index into j's list, or -1
** (not a column, or the fact's rowid: *fact_rowid set). */
int ga_qj_col(const ga_qjoin *j, const char *z, const ga_qtok *t, int n, int i,
              int *fact_rowid);
/* Column c's name (for a rowid: rowid's name) and table. */
const char *ga_qj_colname(const ga_qjoin *j, int c);
const ga_qj_tab *ga_qj_coltab(const ga_qjoin *j, int c);

/* last_scan's "join" object without its closing brace (query.c adds its
** "plan"); NULL: no memory. */
char *ga_qj_json(const ga_qjoin *j);

/* Writes tokens [a, b) into s with parameters numbered + off. */
typedef void (*ga_qj_emit)(void *ctx, sqlite3_str *s, int a, int b, int off);

/* The FROM clause (without the word) for `where` (GA_QJ_*), parameters of
** ON clauses + off; and (rule 5) the ON conditions it moved into WHERE,
** "(c1) AND (c2)", "" when none (NULL: no memory). */
char *ga_qj_from(const ga_qjoin *j, const char *z, const ga_qtok *t, int where,
                 int off, ga_qj_emit emit, void *ctx);
char *ga_qj_moved(const ga_qjoin *j, int off, ga_qj_emit emit, void *ctx);

#endif
