/*
** qwindow.h — gpu_query's window functions over the groups
** (planner/qwindow.c): which calls of the text are window functions, the
** tokens of their OVER clauses and of the WINDOW clause that name windows
** or frames (no columns), and the gpu_ spelling of the aggregates used as
** window functions.  planner/query.c reads the text into these tokens.
*/
#ifndef GA_QWINDOW_H
#define GA_QWINDOW_H

#include "qtok.h" /* planner/query.c's tokens */

/* One window function call: name ( args ) [FILTER (WHERE ...)] OVER ... */
typedef struct ga_qwin {
  int name; /* its name's token */
  int over; /* the OVER token */
  int end;  /* one past the OVER clause */
} ga_qwin;

typedef struct ga_qwins {
  ga_qwin *v;
  int n, cap;
  unsigned char *skip; /* per token: qwindow.c's QW_ bits */
  int ntok;
} ga_qwins;

/* The call named at token `name` whose argument list closes at token
** `close`: its OVER token when it is a window function, else -1. */
int ga_qw_over(const char *z, const ga_qtok *t, int n, int name, int close);
/* Record the window call named at token `name` with its OVER at `over`;
** SQLITE_OK or SQLITE_NOMEM. */
int ga_qw_add(ga_qwins *w, const char *z, const ga_qtok *t, int n, int name,
              int over);
/* The WINDOW clause's tokens [a, b): mark its window names and frames. */
int ga_qw_clause(ga_qwins *w, const char *z, const ga_qtok *t, int n, int a,
                 int b);
/* Token i is a window call's name / its OVER (1), or not (0). */
int ga_qw_name_at(const ga_qwins *w, int i);
int ga_qw_over_at(const ga_qwins *w, int i);
/* The innermost window call whose tokens hold token i, or -1. */
int ga_qw_inside(const ga_qwins *w, int i);
/* Token i names a window or is a frame's word, never a column. */
int ga_qw_skip(const ga_qwins *w, int i);
/* Rule 2: the exact window form's name (gpu_sum ... gpu_max) where the
** window function's name token is sum, total, avg, min or max, else NULL. */
const char *ga_qw_exact(const char *z, const ga_qtok *t);
void ga_qw_free(ga_qwins *w);

#endif
