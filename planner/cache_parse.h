/*
** cache_parse.h — the pieces planner/cache_shape.c and planner/cache_expr.c
** share: the lexer of the texts an entry may answer (gpu_aggregate's
** arguments, gpu_query's parts) and the parser's state (cache_lex.c).
** Internal to the planner's cache shapes.
*/
#ifndef GA_CACHE_PARSE_H
#define GA_CACHE_PARSE_H

#include "sqlite3ext.h"

#include "cache.h"
#include "cache_plan.h"

enum {
  T_END,
  T_ID,
  T_QID,
  T_NUM,
  T_STR,
  T_OP,
  T_LP,
  T_RP,
  T_COMMA,
  T_SIGN,
  T_MULOP, /* * / %: arithmetic (rule 7) */
  T_VAR,   /* ?N: a parameter (rule 8) */
  T_OTHER, /* || & | ~ << >>: SQL the programs do not run (derived) */
  T_BAD
};

typedef struct tok {
  int kind;
  const char *z; /* the source text */
  int n;
  char *id;   /* T_ID / T_QID: the name (dequoted), sqlite3_malloc'd */
  char *qual; /* T_ID / T_QID: its qualifier (q.name), or NULL */
  int op;     /* T_OP: GAK_CMP_*; T_SIGN: '+' or '-'; T_VAR: N */
} tok;

typedef struct lexer {
  tok *t;
  int n, cap, pos;
  int nomem;
} lexer;

typedef struct parser {
  lexer L;
  sqlite3 *db;
  const ga_target *t;
  const ga_centry *e;
  const char *const *tcols; /* the table's columns */
  int ntcols;
  ga_cquery *q;
  const ga_parts *parts; /* the alias, the parameters (rule 8) */
  ga_cexpr *x;           /* the program being read (rule 7) */
  char *why;
  size_t nwhy;
  int rc;    /* SQLITE_NOMEM, or 0 */
  int never; /* a comparison with a NULL parameter: no row passes */
  int sp;    /* the program's stack while it is written */
} parser;

/* What an expression is, as the programs see it (cache_expr.c): a number
** (or NULL), a code of dictionary d, or a TEXT literal not yet written
** (compared with codes, it becomes their insertion point). */
enum { K_NUM, K_NULL, K_CODE, K_STR };
typedef struct xk {
  int k;
  const ga_dict *d;  /* K_CODE */
  int coll_col;      /* K_CODE: the TEXT column whose collation it carries
                        (a bare column, +column), else -1 (BINARY) */
  int aff;           /* K_NUM: 1 when it has an affinity (a column, +column:
                        a TEXT literal met would be converted), else 0 */
  const tok *str;    /* K_STR: a literal's token, or */
  sqlite3_value *sv; /* K_STR: a parameter's value */
} xk;

/* z as a program into *x, and what it gives (cache_expr.c): 1, or 0 with
** the reason. */
int ga_cl_program(parser *p, const char *z, ga_cexpr *x, xk *k);
/* Tokens [from, to) of p->L as a derived column (cache_derive.c): the
** value SQLite gives for each value of the one TEXT column they read,
** written as that column's code and a map.  1 (written, *k set); 0 with
** the reason; -1 when it does not apply (not one cached TEXT column). */
int ga_cl_derive(parser *p, int from, int to, xk *k);
/* Write one instruction (stack effect kept in p->sp, p->x->depth;
** cache_lex.c). */
int ga_cl_emit(parser *p, int op, int col, int a, int b, const ga_value *v);

/* Tokens of z into L, ending with T_END (after a T_BAD, if any). */
void ga_cl_lex(lexer *L, const char *z);
void ga_cl_lexer_free(lexer *L);
tok *ga_cl_peek(parser *p);
/* The next token; T_END is never passed. */
tok *ga_cl_next(parser *p);
/* Is t the keyword w (any case)? */
int ga_cl_kw(const tok *t, const char *w);
int ga_cl_is_keyword(const tok *t);
/* The reason (the first one stays): always 0. */
int ga_cl_no(parser *p, const char *fmt, const char *a);
/* The entry column named by token t: its index, or -1 (why set). */
int ga_cl_column(parser *p, const tok *t);
/* [sign] NUM, evaluated by SQLite (rule 2), into *out: 1, or 0. */
int ga_cl_number(parser *p, ga_value *out);
/* May TEXT column c be compared (compared 1) or grouped?  1, or 0. */
int ga_cl_text_ok(parser *p, int c, int compared);
/* TEXT bytes z, n compared with codes of d by *op (rule 6 of cache_shape.c):
** their code, or -1 when absent, for = <> IN; else their insertion point,
** with <= made < and > made >= when absent.  1 with *v, 0 (out of
** memory). */
int ga_cl_code_of(parser *p, const ga_dict *d, const void *z, int n, int *op,
                  int64_t *v);
/* TEXT bytes z, n compared with TEXT column c by *op: the insertion point
** as a literal of the filter (its index), *op adjusted; -1. */
int ga_cl_text_code_lit(parser *p, int c, int *op, const void *z, int n);
/* A TEXT value's bytes in the entry's encoding (NULL: out of memory). */
const void *ga_cl_text_bytes(parser *p, sqlite3_value *v, int *n);
/* The value of parameter token t (NULL when unbound). */
sqlite3_value *ga_cl_param(parser *p, const tok *t);
/* Is token t the placeholder of an IN subquery (planner/qsubq.c rule 6)?
** 1 with its rows (in the caller's evaluation), their count and its
** column's declaration (rows, n, decl may be NULL); 0. */
int ga_cl_in_slot(parser *p, const tok *t, sqlite3_value *const **rows, int *n,
                  const char **decl);
/* a op b as b op' a. */
int ga_cl_mirror(int op);

#endif
