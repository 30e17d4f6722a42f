/*
** qhaving.h — which HAVING conditions SQLite moves into the WHERE clause
** (planner/qhaving.c), read by planner/query.c over its tokens.
*/
#ifndef GA_QHAVING_H
#define GA_QHAVING_H

#include "sqlite3ext.h"

#include "qtok.h" /* planner/query.c's tokens */

/* The text's names, as planner/query.c resolves them (its rule 2). */
typedef struct ga_qh_names {
  void *arg;
  /* token i names a column: its index, GA_QH_ROWID (the rowid under any of
  ** its names), or -1 */
  int (*col)(void *arg, int i);
  /* token i is an item's alias (no column has its name): 1 with the
  ** item's expression [*a, *b), else 0 */
  int (*alias)(void *arg, int i, int *a, int *b);
  /* an aggregate call of the text begins at token i: its end (one past
  ** its last token), else -1 */
  int (*agg)(void *arg, int i);
  /* column c (an index as col gives it) is declared NOT NULL */
  int (*notnull)(void *arg, int c);
} ga_qh_names;

#define GA_QH_ROWID (-2)

/* One GROUP BY term: its expression [a, b) (an item's, for a column
** number or an alias), the token of the COLLATE name a column number
** carries (-1: none), item (1: [a, b) is a select list item's, where no
** alias resolves), binary (its collation is BINARY). */
typedef struct ga_qh_term {
  int a, b, coll, item, binary;
} ga_qh_term;

/* The conjuncts of HAVING [a, b) that SQLite 3.40 moves into the WHERE
** clause (select.c's havingToWhere): each a span of tokens of the text,
** into moved[2 * k], moved[2 * k + 1] (room for (b - a + 1) spans).
** SQLITE_OK with *nmoved; SQLITE_NOMEM; SQLITE_ERROR with *why where the
** text holds a construct this reading does not know, or a moved condition
** lies inside an alias's expression (no span of the text is it). */
int ga_qh_moved(sqlite3 *db, const char *z, const ga_qtok *t, int n,
                int nparams, const ga_qh_names *nm, const ga_qh_term *terms,
                int nterms, int a, int b, int *moved, int *nmoved,
                const char **why);

/* The spans of [a, b) (one expression: HAVING) that SQLite 3.40's parser
** folds to the literal 0 (sqlite3ExprAnd: an AND with an operand that is
** the integer literal 0), outer and inner ones alike, into folds[2 * k],
** folds[2 * k + 1] (room for (b - a + 1) spans); qhaving.c rule 5.
** SQLITE_OK with *nfolds; SQLITE_NOMEM; SQLITE_ERROR with *why where the
** text holds a construct this reading does not know. */
int ga_qh_folds(sqlite3 *db, const char *z, const ga_qtok *t, int n,
                int nparams, const ga_qh_names *nm, int a, int b, int *folds,
                int *nfolds, const char **why);

#endif
