/*
** qrewrite.h — gpu_query's pre-pass (planner/qrewrite.c): a view or one
** common table expression in FROM substituted into the one-table text the
** planner reads (planner/query.c), and uncorrelated subqueries taken out
** of it.  Its rules are at the top of qrewrite.c.  The tokens are
** planner/qtok.h's.
*/
#ifndef GA_QREWRITE_H
#define GA_QREWRITE_H

#include "sqlite3ext.h"

#include "qsubq.h"
#include "qtok.h"

typedef struct ga_qrw {
  char *text; /* the one-table text to plan; NULL: the text as it is */
  /* not NULL: the call takes the serial path for this reason, with
  ** serial_sql (the text as written, sum ... max as gpu_sum ... gpu_max) */
  const char *serial_why;
  char *serial_sql;
  /* not NULL: gpu_query_partial refuses the text for this reason (rule 6) */
  const char *partial_why;
  /* scalar subqueries and EXISTS, each a parameter of text (rule 5,
  ** planner/qsubq.c); n = 0: none, or the text is serial */
  ga_qsubs subs;
} ga_qrw;

/* Rewrite sql (compiled on db, the caller's connection).  SQLITE_OK (rw
** filled; rw->text NULL where nothing was rewritten, or where the text
** does not compile: the planner reports SQLite's error); SQLITE_NOMEM;
** SQLITE_ERROR with *err "gpu_query: ..." naming the construct. */
int ga_qrewrite(sqlite3 *db, const char *sql, ga_qrw *rw, char **err);
void ga_qrw_free(ga_qrw *rw);

#endif
