/*
** qtok.h — the tokens of a gpu_query text (planner/qtok.c), read by
** planner/query.c and planner/qrewrite.c.
*/
#ifndef GA_QTOK_H
#define GA_QTOK_H

enum {
  GA_QT_ID = 1,
  GA_QT_QID,
  GA_QT_STR,
  GA_QT_NUM,
  GA_QT_VAR,
  GA_QT_BLOB,
  GA_QT_OP
};

typedef struct ga_qtok {
  int type, off, len;
  int var;   /* a parameter: SQLite's number (set by the reader) */
  int ident; /* 1: FILTER, OVER or WINDOW that SQLite reads as an
                identifier here (qtok.c rule 1), so no keyword */
} ga_qtok;

/* 1 when t (of text z) is FILTER, OVER or WINDOW read as the keyword
** (qtok.c rule 1): never a name, even where a column is spelled so. */
int ga_qt_ctx_keyword(const char *z, const ga_qtok *t);

/* 1 when token i (of n, text z) is the operator w ("(", ",", "||"). */
int ga_qt_op(const char *z, const ga_qtok *t, int n, int i, const char *w);

/* The token closing the parenthesis at token i (of n, text z); n - 1
** when it is not closed. */
int ga_qt_close(const char *z, const ga_qtok *t, int n, int i);

/* 1 when tokens [a, b) (of n, text z) hold an OR outside parentheses and
** CASE ... END: OR binds looser than AND, so such a range is one
** condition, never split at its ANDs ("a AND b OR c" is "(a AND b) OR c"). */
int ga_qt_top_or(const char *z, const ga_qtok *t, int n, int a, int b);

/* Identifier token t of text z, dequoted as SQLite does ("a""b", [a],
** `a`): sqlite3_malloc'd, NULL for no memory. */
char *ga_qt_name(const char *z, const ga_qtok *t);

/* Number token t of text z as SQLite's parser reads a column number
** (sqlite3GetInt32): decimal digits, or 0x and at most 8 hex digits after
** leading zeros, below 2^31: 1 with *v; 0 for the rest (1.0, 1e0,
** 2147483648 stay constants). */
int ga_qt_int32(const char *z, const ga_qtok *t, int *v);

/* z into tokens (sqlite3_malloc'd): 0; 1 (an unterminated string, quote
** or comment); -1 (no memory). */
int ga_q_tokenize(const char *z, ga_qtok **out, int *nout);

#endif
