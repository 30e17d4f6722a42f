/*
** cache_shape.c — which gpu_aggregate calls the column cache may answer,
** and the query they become (engine/cache/cache.h's ga_cquery).
**
** Eligible shapes (anything else takes the uncached path, with the reason):
**   expression  a bare column name (quoted or not) of the entry;
**   group_by    empty, or a bare column name of the entry;
**   filter      empty, or an AND (parentheses allowed) of terms
**                 col OP number | number OP col     OP: = == <> != < <= > >=
**                 col BETWEEN number AND number
**                 col IN (number, ...)
**                 col IS NULL | col IS NOT NULL | col ISNULL | col NOTNULL
**                 | col NOT NULL
**               where number is a numeric literal with at most one sign.
**
** Rules:
**   1. SQLite's semantics, or ineligible.  The entry holds only INTEGER, REAL
**      and NULL values.  A column compared with a number uses the column's
**      affinity: INTEGER, REAL, NUMERIC and BLOB (none) leave a numeric
**      literal's value as it is, so the comparison is SQLite's exact one
**      between numbers (ga_num_cmp); TEXT affinity would turn the number
**      into text, so a TEXT-affinity column in a comparison is ineligible.
**      Collations do not apply to numbers; NULL fails every comparison and
**      an AND of terms passes a row only when every term is true, so NULL
**      and false need no distinction (there is no NOT, no OR).
**   2. A literal's value is what SQLite makes of its text: it is evaluated
**      by SQLite itself (SELECT <sign><literal>), so hexadecimal, integers
**      too large for int64 (REAL), 1e999 (Inf) and -9223372036854775808
**      are SQLite's.  It must come out INTEGER or REAL.
**   3. A name is a column only if it is one of the table's columns (what
**      SQLite resolves first); a name that is no column makes the shape
**      ineligible (it may be a string in double quotes).  Keywords are
**      AND, BETWEEN, IN, IS, NOT, NULL, ISNULL, NOTNULL, any case.
**   4. Comments, parameters, functions, COLLATE, casts, arithmetic,
**      subqueries: ineligible.
**   6. TEXT columns (engine/cache/cache.h rule 1: codes and a dictionary;
**      issue 20).  Compared only with string literals ('...', SQLite's own
**      value of the literal, in the database's encoding), only where the
**      column's affinity is TEXT or none (a numeric affinity would turn a
**      numeric-looking literal into a number) and its collation BINARY (the
**      dictionary's order); grouped only under BINARY.  A comparison with
**      a string becomes one with the string's insertion point among the
**      codes: = and <> with its code, or with -1 (no code) when the
**      dictionary lacks it; < and >= with the insertion point; <= and >
**      with it, moved by one when the value is absent.  NULL still fails
**      every comparison (no code).  A TEXT column as the expression, or
**      compared with a number: ineligible.
**   7. The expression may be arithmetic (host entries): numeric cached
**      columns, numbers ([sign] NUM, rule 2), + - * / %, unary - and +,
**      parentheses, with SQLite's precedence; it runs as engine/cache/
**      cexpr.h's program, with SQLite's semantics row by row.
**   5. The REAL -9223372036854775808.0 (-2^63) against the rowid alias
**      (INTEGER PRIMARY KEY) with = or IN.  Where SQLite seeks the rowid
**      with a literal (OP_SeekRowid), integer affinity leaves -2^63.0 REAL
**      (sqlite3VdbeIntegerAffinity takes only values above -2^63), so no
**      row matches, not even rowid -2^63; where it compares instead (the
**      term is not the seek) the comparison is numeric and that row does
**      match.  Every other operator, every other column (indexed or not),
**      and every other literal compare numerically either way.  So: the
**      alias's only = / one-number IN term with it is always the seek, and
**      its literal becomes 0.5, which no integer equals; with another = or
**      IN on the alias, or in an IN list of several numbers (a small
**      ANALYZEd table is scanned), the planner decides: ineligible.
*/
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

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

static int is_id0(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c >= 0x80;
}
static int is_id(unsigned char c) {
  return is_id0(c) || (c >= '0' && c <= '9') || c == '$';
}

static void push(lexer *L, int kind, const char *z, int n, char *id, int op) {
  if (L->n == L->cap) {
    int cap = L->cap ? L->cap * 2 : 16;
    tok *t = sqlite3_realloc64(L->t, sizeof(tok) * (size_t)cap);
    if (!t) {
      L->nomem = 1;
      sqlite3_free(id);
      return;
    }
    L->t = t;
    L->cap = cap;
  }
  tok *t = &L->t[L->n++];
  t->kind = kind;
  t->z = z;
  t->n = n;
  t->id = id;
  t->qual = NULL;
  t->op = op;
}

/* A quoted name at z (closing c; doubled closers stand for one, not for
** ']'): its length, and the name in *out; 0 when unterminated. */
static int quoted(const char *z, char c, char **out, int *nomem) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  int i = 1;
  for (;; i++) {
    if (!z[i]) {
      sqlite3_free(sqlite3_str_finish(s));
      return 0;
    }
    if (z[i] == c) {
      if (c != ']' && z[i + 1] == c)
        i++;
      else
        break;
    }
    sqlite3_str_appendchar(s, 1, z[i]);
  }
  *out = sqlite3_str_finish(s);
  if (!*out)
    *nomem = 1;
  return i + 1;
}

/* A name at z, quoted or not, pushed as T_QID or T_ID: its length, or 0
** (unterminated quote, or out of memory). */
static int name_at(lexer *L, const char *z) {
  unsigned char c = (unsigned char)*z;
  if (c == '"' || c == '[' || c == '`') {
    char *id = NULL;
    int n = quoted(z, c == '[' ? ']' : (char)c, &id, &L->nomem);
    if (n)
      push(L, T_QID, z, n, id, 0);
    return L->nomem ? 0 : n;
  }
  const char *b = z;
  while (is_id((unsigned char)*z))
    z++;
  char *id = sqlite3_mprintf("%.*s", (int)(z - b), b);
  if (!id)
    L->nomem = 1;
  push(L, T_ID, b, (int)(z - b), id, 0);
  return L->nomem ? 0 : (int)(z - b);
}

/* Tokens of z, ending with T_END (after a T_BAD, if any). */
static void lex(lexer *L, const char *z) {
  int bad = 0;
  while (*z && !L->nomem && !bad) {
    unsigned char c = (unsigned char)*z;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      z++;
    } else if (c == '"' || c == '[' || c == '`' || is_id0(c)) {
      /* a name, or q.name (rule 8); three parts are not ours */
      int n = name_at(L, z);
      if (!n) {
        push(L, T_BAD, z, 1, NULL, 0);
        bad = 1;
        continue;
      }
      z += n;
      if (*z == '.' && (is_id0((unsigned char)z[1]) || z[1] == '"' ||
                        z[1] == '[' || z[1] == '`')) {
        tok *q = &L->t[L->n - 1];
        char *qual = q->id;
        L->n--;
        int m = name_at(L, z + 1);
        if (!m || L->nomem) {
          sqlite3_free(qual);
          push(L, T_BAD, z, 1, NULL, 0);
          bad = 1;
          continue;
        }
        tok *t = &L->t[L->n - 1];
        t->kind = T_QID;
        t->qual = qual;
        t->z = z - n;
        t->n = n + 1 + m;
        z += 1 + m;
        if (*z == '.') {
          push(L, T_BAD, z, 1, NULL, 0);
          bad = 1;
        }
      }
    } else if (c == '?' && z[1] >= '0' && z[1] <= '9') {
      const char *b = z++;
      int v = 0;
      while (*z >= '0' && *z <= '9' && v < 100000)
        v = v * 10 + (*z++ - '0');
      push(L, T_VAR, b, (int)(z - b), NULL, v);
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && z[1] >= '0' && z[1] <= '9')) {
      const char *b = z;
      int hex = c == '0' && (z[1] == 'x' || z[1] == 'X');
      while (
          is_id((unsigned char)*z) || *z == '.' ||
          (!hex && (*z == '+' || *z == '-') && (z[-1] == 'e' || z[-1] == 'E')))
        z++;
      push(L, T_NUM, b, (int)(z - b), NULL, 0);
    } else if (c == '\'') { /* a string literal, '' inside (rule 6) */
      const char *b = z++;
      while (*z && (*z != '\'' || z[1] == '\''))
        z += *z == '\'' ? 2 : 1;
      if (!*z) {
        push(L, T_BAD, b, 1, NULL, 0);
        bad = 1;
        continue;
      }
      z++;
      push(L, T_STR, b, (int)(z - b), NULL, 0);
    } else if (c == '*' || c == '%' || (c == '/' && z[1] != '*')) {
      push(L, T_MULOP, z, 1, NULL, c);
      z++;
    } else if (c == '(' || c == ')' || c == ',') {
      push(L, c == '(' ? T_LP : c == ')' ? T_RP : T_COMMA, z, 1, NULL, 0);
      z++;
    } else if (c == '+' || c == '-') {
      if (c == '-' && z[1] == '-') { /* a comment: not ours (rule 4) */
        push(L, T_BAD, z, 1, NULL, 0);
        bad = 1;
        continue;
      }
      push(L, T_SIGN, z, 1, NULL, c);
      z++;
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
      int op = -1, n = 1;
      if (c == '=')
        op = GAK_CMP_EQ, n = z[1] == '=' ? 2 : 1;
      else if (c == '!' && z[1] == '=')
        op = GAK_CMP_NE, n = 2;
      else if (c == '<' && z[1] == '>')
        op = GAK_CMP_NE, n = 2;
      else if (c == '<' && z[1] == '=')
        op = GAK_CMP_LE, n = 2;
      else if (c == '>' && z[1] == '=')
        op = GAK_CMP_GE, n = 2;
      else if (c == '<' && z[1] != '<')
        op = GAK_CMP_LT;
      else if (c == '>' && z[1] != '>')
        op = GAK_CMP_GT;
      if (op < 0) {
        push(L, T_BAD, z, 1, NULL, 0);
        bad = 1;
        continue;
      }
      push(L, T_OP, z, n, NULL, op);
      z += n;
    } else {
      push(L, T_BAD, z, 1, NULL, 0);
      bad = 1;
    }
  }
  push(L, T_END, z, 0, NULL, 0);
}

static void lexer_free(lexer *L) {
  for (int i = 0; i < L->n; i++) {
    sqlite3_free(L->t[i].id);
    sqlite3_free(L->t[i].qual);
  }
  sqlite3_free(L->t);
  memset(L, 0, sizeof(*L));
}

/* ---- the parser ---- */

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
} parser;

static tok *peek(parser *p) { return &p->L.t[p->L.pos]; }
/* The next token; T_END is never passed. */
static tok *next(parser *p) {
  tok *t = &p->L.t[p->L.pos];
  if (t->kind != T_END)
    p->L.pos++;
  return t;
}

static int kw(const tok *t, const char *w) {
  return t->kind == T_ID && !sqlite3_stricmp(t->id, w);
}

static int is_keyword(const tok *t) {
  static const char *const k[] = {"AND",     "BETWEEN", "IN",     "IS",
                                  "NOT",     "NULL",    "ISNULL", "NOTNULL",
                                  "COLLATE", "OR",      "LIKE",   "GLOB",
                                  "ESCAPE",  "CAST",    "CASE",   "SELECT"};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (kw(t, k[i]))
      return 1;
  return 0;
}

static int no(parser *p, const char *fmt, const char *a) {
  if (!p->why[0])
    sqlite3_snprintf((int)p->nwhy, p->why, fmt, a ? a : "");
  return 0;
}

/* The entry column named by token t: its index, or -1 (why set). */
static int column(parser *p, const tok *t) {
  if ((t->kind != T_ID && t->kind != T_QID) ||
      (t->kind == T_ID && is_keyword(t)))
    return -1;
  if (t->qual) { /* rule 8: the FROM clause's name for the table */
    const char *as = p->parts && p->parts->alias ? p->parts->alias : p->t->table;
    if (sqlite3_stricmp(t->qual, as)) {
      no(p, "the name %s is qualified by another table's name", t->id);
      return -1;
    }
  }
  for (int c = 0; c < p->e->ncols; c++)
    if (!sqlite3_stricmp(p->e->cols[c].name, t->id))
      return c;
  for (int c = 0; c < p->ntcols; c++)
    if (!sqlite3_stricmp(p->tcols[c], t->id)) {
      no(p, "column %s is not cached", p->tcols[c]);
      return -1;
    }
  no(p, "%s is not a column of the table", t->id);
  return -1;
}

/* [sign] NUM, evaluated by SQLite (rule 2), into *out (INT or REAL): 1,
** or 0 (why set, or nomem). */
static int number(parser *p, ga_value *out) {
  const tok *sign = NULL;
  if (peek(p)->kind == T_SIGN)
    sign = next(p);
  tok *t = next(p);
  if (t->kind != T_NUM)
    return no(p, "a comparison is not with a number%s", NULL);
  char *sql = sqlite3_mprintf(
      "SELECT %s%.*s", sign ? (sign->op == '-' ? "-" : "+") : "", t->n, t->z);
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (!sql) {
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  memset(out, 0, sizeof(*out));
  int rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK && sqlite3_column_count(st) == 1 &&
      sqlite3_step(st) == SQLITE_ROW) {
    int ty = sqlite3_column_type(st, 0);
    if (ty == SQLITE_INTEGER) {
      out->type = GA_V_INT;
      out->i = sqlite3_column_int64(st, 0);
      ok = 1;
    } else if (ty == SQLITE_FLOAT) {
      out->type = GA_V_REAL;
      out->r = sqlite3_column_double(st, 0);
      ok = 1;
    }
  } else if ((rc & 0xff) == SQLITE_NOMEM) {
    p->rc = SQLITE_NOMEM;
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  if (!ok)
    no(p, "%s is not a number SQLite reads as one", NULL);
  return ok;
}

/* [sign] NUM (rule 2) into lits[]: its index, -1. */
static int literal(parser *p) {
  gak_cfilter *f = &p->q->filter;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return no(p, "more numbers than the cache takes%s", NULL) - 1;
  ga_value v;
  if (!number(p, &v))
    return -1;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  l->kind = v.type == GA_V_INT ? GA_KIND_INT : GA_KIND_REAL;
  if (v.type == GA_V_INT)
    l->bits = v.i;
  else
    memcpy(&l->bits, &v.r, 8);
  return f->nlits++;
}

/* Rule 6: may TEXT column c be compared (compared 1) or grouped?  1, or 0
** with the reason. */
static int text_ok(parser *p, int c, int compared) {
  const ga_ccol *col = &p->e->cols[c];
  if (compared && col->aff != GA_AFF_TEXT && col->aff != GA_AFF_BLOB)
    return no(p, "TEXT column %s has a numeric affinity", col->name);
  const char *type, *coll;
  if (ga_column_decl(p->db, p->t->schema, p->t->table, col->name, &type,
                     &coll) != SQLITE_OK)
    return no(p, "the collation of TEXT column %s cannot be read", col->name);
  if (coll && sqlite3_stricmp(coll, "BINARY"))
    return no(p, "TEXT column %s has a collation other than BINARY", col->name);
  return 1;
}

/* Rule 6: TEXT bytes z, n (the database's encoding) compared with TEXT
** column c by *op (mirrored already): their insertion point among the codes
** as an INTEGER literal, *op adjusted; the literal's index, or -1. */
static int text_code_lit(parser *p, int c, int *op, const void *z, int n) {
  gak_cfilter *f = &p->q->filter;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return no(p, "more literals than the cache takes%s", NULL) - 1;
  int found = 0;
  int64_t at = ga_dict_find(p->e->cols[c].dict, z ? z : "", n, &found);
  if (at < 0) {
    p->rc = SQLITE_NOMEM;
    return -1;
  }
  int64_t v = at;
  if (*op == GAK_CMP_EQ || *op == GAK_CMP_NE || *op == GAK_CMP_IN)
    v = found ? at : -1; /* -1: no code */
  else if (*op == GAK_CMP_LE && !found)
    *op = GAK_CMP_LT;
  else if (*op == GAK_CMP_GT && !found)
    *op = GAK_CMP_GE;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  l->kind = GA_KIND_INT;
  l->bits = v;
  return f->nlits++;
}

/* A TEXT value's bytes in the entry's encoding. */
static const void *text_bytes(parser *p, sqlite3_value *v, int *n) {
  const void *z;
  if (p->e->enc == SQLITE_UTF16LE || p->e->enc == SQLITE_UTF16BE) {
    z = p->e->enc == SQLITE_UTF16LE ? sqlite3_value_text16le(v)
                                    : sqlite3_value_text16be(v);
    *n = sqlite3_value_bytes16(v);
  } else {
    z = sqlite3_value_text(v);
    *n = sqlite3_value_bytes(v);
  }
  if (!z)
    p->rc = SQLITE_NOMEM; /* a TEXT value has bytes */
  return z;
}

/* Rule 6: a string literal compared with TEXT column c by *op (mirrored
** already): text_code_lit of SQLite's value of it; the literal's index, or
** -1 (why set). */
static int text_literal(parser *p, int c, int *op) {
  tok *t = next(p);
  if (t->kind != T_STR)
    return no(p, "TEXT column %s is compared with a number",
              p->e->cols[c].name) -
           1;
  char *sql = sqlite3_mprintf("SELECT %.*s", t->n, t->z);
  sqlite3_stmt *st = NULL;
  int lit = -1,
      rc = sql ? sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) == SQLITE_TEXT) {
    int n = 0;
    const void *z = text_bytes(p, sqlite3_column_value(st, 0), &n);
    if (z)
      lit = text_code_lit(p, c, op, z, n);
  }
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  sqlite3_finalize(st);
  sqlite3_free(sql);
  if (lit < 0)
    no(p, "%s is not a string SQLite reads as one", NULL);
  return lit;
}

/* Rule 8: the value of parameter token t (NULL when unbound). */
static sqlite3_value *param(parser *p, const tok *t) {
  int k = t->op - 3; /* ?3 is the first (planner.h's ga_parts) */
  if (!p->parts || k < 0 || k >= p->parts->nparams)
    return NULL;
  return p->parts->params[k];
}

/* Rule 8: a parameter compared with column col by *op: a literal's index;
** -1 (why set); -2 when its value is NULL (the comparison is never
** true). */
static int param_lit(parser *p, int col, int *op) {
  sqlite3_value *v = param(p, next(p));
  int ty = v ? sqlite3_value_type(v) : SQLITE_NULL;
  if (ty == SQLITE_NULL)
    return -2;
  if (p->e->cols[col].dict) {
    if (ty != SQLITE_TEXT)
      return no(p, "TEXT column %s is compared with a parameter that is not "
                   "TEXT",
                p->e->cols[col].name) -
             1;
    int n = 0;
    const void *z = text_bytes(p, v, &n);
    return z ? text_code_lit(p, col, op, z, n) : -1;
  }
  if (ty != SQLITE_INTEGER && ty != SQLITE_FLOAT)
    return no(p, "column %s holds numbers, compared with a parameter that is "
                 "not a number",
              p->e->cols[col].name) -
           1;
  gak_cfilter *f = &p->q->filter;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return no(p, "more literals than the cache takes%s", NULL) - 1;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  if (ty == SQLITE_INTEGER) {
    l->kind = GA_KIND_INT;
    l->bits = sqlite3_value_int64(v);
  } else {
    double r = sqlite3_value_double(v);
    l->kind = GA_KIND_REAL;
    memcpy(&l->bits, &r, 8);
  }
  return f->nlits++;
}

/* A literal compared with column col by *op: a string for a TEXT column
** (rule 6), else a number (rule 2).  Its index, or -1. */
static int value_lit(parser *p, int col, int *op) {
  if (peek(p)->kind == T_VAR)
    return param_lit(p, col, op);
  if (p->e->cols[col].dict)
    return text_ok(p, col, 1) ? text_literal(p, col, op) : -1;
  if (peek(p)->kind == T_STR)
    return no(p, "column %s holds numbers, compared with a string",
              p->e->cols[col].name) -
           1;
  return literal(p);
}

static gak_cterm *term_new(parser *p, int col, int op) {
  gak_cfilter *f = &p->q->filter;
  if (f->nterms >= GAK_CACHE_MAX_TERMS) {
    no(p, "more terms than the cache takes%s", NULL);
    return NULL;
  }
  if (op < GAK_CMP_ISNULL && p->e->cols[col].aff == GA_AFF_TEXT &&
      !p->e->cols[col].dict) {
    /* rule 1: TEXT affinity would compare the number as text */
    no(p, "column %s has TEXT affinity", p->e->cols[col].name);
    return NULL;
  }
  gak_cterm *t = &f->terms[f->nterms++];
  t->col = col;
  t->op = op;
  t->lit = 0;
  t->nlit = 0;
  return t;
}

static int mirror(int op) {
  return op == GAK_CMP_LT   ? GAK_CMP_GT
         : op == GAK_CMP_LE ? GAK_CMP_GE
         : op == GAK_CMP_GT ? GAK_CMP_LT
         : op == GAK_CMP_GE ? GAK_CMP_LE
                            : op;
}

static int all_terms(parser *p);

/* One term; 1 ok, 0 not eligible. */
static int term(parser *p) {
  tok *t = peek(p);
  if (t->kind == T_LP) {
    next(p);
    if (!all_terms(p))
      return 0;
    if (next(p)->kind != T_RP)
      return no(p, "the filter is not an AND of comparisons%s", NULL);
    return 1;
  }
  if (t->kind == T_NUM || t->kind == T_SIGN || t->kind == T_STR ||
      t->kind == T_VAR) {
    /* literal OP col: read as col OP' literal */
    int at = p->L.pos;
    while (peek(p)->kind != T_OP && peek(p)->kind != T_END)
      next(p);
    tok *o = next(p);
    if (o->kind != T_OP)
      return no(p, "the filter is not an AND of comparisons%s", NULL);
    int col = column(p, next(p));
    if (col < 0)
      return no(p, "a comparison is not between a column and a literal%s",
                NULL);
    int end = p->L.pos, op = mirror(o->op);
    p->L.pos = at;
    int lit = value_lit(p, col, &op);
    if (lit == -1)
      return 0;
    if (p->L.t[p->L.pos].kind != T_OP)
      return no(p, "the filter is not an AND of comparisons%s", NULL);
    p->L.pos = end;
    if (lit == -2)
      return p->never = 1;
    gak_cterm *tm = term_new(p, col, op);
    if (!tm)
      return 0;
    tm->lit = lit;
    tm->nlit = 1;
    return 1;
  }
  int col = column(p, next(p));
  if (col < 0)
    return no(p,
              "the filter is not an AND of comparisons of a column with "
              "a number%s",
              NULL);
  t = next(p);
  if (t->kind == T_OP) {
    if (peek(p)->kind != T_NUM && peek(p)->kind != T_SIGN &&
        peek(p)->kind != T_STR && peek(p)->kind != T_VAR)
      return no(p, "a comparison is not between a column and a literal%s",
                NULL);
    int op = t->op;
    int lit = value_lit(p, col, &op);
    if (lit == -1)
      return 0;
    if (lit == -2)
      return p->never = 1;
    gak_cterm *tm = term_new(p, col, op);
    if (!tm)
      return 0;
    tm->lit = lit;
    tm->nlit = 1;
    return 1;
  }
  if (kw(t, "ISNULL"))
    return term_new(p, col, GAK_CMP_ISNULL) != NULL;
  if (kw(t, "NOTNULL"))
    return term_new(p, col, GAK_CMP_NOTNULL) != NULL;
  if (kw(t, "IS")) {
    int neg = kw(peek(p), "NOT");
    if (neg)
      next(p);
    if (!kw(next(p), "NULL"))
      return no(p, "IS is only eligible with NULL%s", NULL);
    return term_new(p, col, neg ? GAK_CMP_NOTNULL : GAK_CMP_ISNULL) != NULL;
  }
  if (kw(t, "NOT")) {
    if (!kw(next(p), "NULL"))
      return no(p, "NOT is only eligible in NOT NULL%s", NULL);
    return term_new(p, col, GAK_CMP_NOTNULL) != NULL;
  }
  if (kw(t, "BETWEEN")) { /* x >= a AND x <= b, x read once (SQLite) */
    int opa = GAK_CMP_GE, opb = GAK_CMP_LE;
    int a = value_lit(p, col, &opa);
    if (a == -1)
      return 0;
    if (!kw(next(p), "AND"))
      return no(p, "BETWEEN needs AND%s", NULL);
    int b = value_lit(p, col, &opb);
    if (b == -1)
      return 0;
    if (a == -2 || b == -2)
      return p->never = 1;
    gak_cterm *ge = term_new(p, col, opa);
    if (!ge)
      return 0;
    ge->lit = a;
    ge->nlit = 1;
    gak_cterm *le = term_new(p, col, opb);
    if (!le)
      return 0;
    le->lit = b;
    le->nlit = 1;
    return 1;
  }
  if (kw(t, "IN")) {
    if (next(p)->kind != T_LP)
      return no(p, "IN is only eligible with a list of numbers%s", NULL);
    gak_cterm *tm = term_new(p, col, GAK_CMP_IN);
    if (!tm)
      return 0;
    tm->lit = p->q->filter.nlits;
    for (;;) {
      int op = GAK_CMP_IN, lit = value_lit(p, col, &op);
      if (lit == -1)
        return 0;
      tm->nlit += lit >= 0; /* NULL in the list: never equal (rule 8) */
      tok *s = next(p);
      if (s->kind == T_RP)
        return 1;
      if (s->kind != T_COMMA)
        return no(p, "IN is only eligible with a list of numbers%s", NULL);
    }
  }
  return no(p,
            "the filter is not an AND of comparisons of a column with a "
            "number%s",
            NULL);
}

/* -2^63 as a REAL literal (rule 5). */
static int min_real(const gak_clit *l) {
  return l->kind == GA_KIND_REAL && l->bits == (int64_t)0xc3e0000000000000u;
}

/* Is entry column c the rowid alias?  Asked of the planner, which seeks
** the rowid for c = 1 only then (it knows the DESC quirk, WITHOUT ROWID).
** 1, 0, or -1 (SQLite failed: nomem set, or ineligible). */
static int rowid_alias(parser *p, int c) {
  char *sql = sqlite3_mprintf(
      "EXPLAIN QUERY PLAN SELECT 1 FROM \"%w\".\"%w\" WHERE \"%w\" = 1",
      p->e->schema, p->e->table, p->e->cols[c].name);
  sqlite3_stmt *st = NULL;
  int alias = 0, rc;
  if (!sql) {
    p->rc = SQLITE_NOMEM;
    return -1;
  }
  rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *d = (const char *)sqlite3_column_text(st, 3);
      if (d && strstr(d, "INTEGER PRIMARY KEY"))
        alias = 1;
    }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE)
    return alias;
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  no(p, "cannot tell whether %s is the rowid", p->e->cols[c].name);
  return -1;
}

/* Rule 5, once the whole filter is read: 1 ok, 0 not eligible. */
static int rowid_min_real(parser *p) {
  gak_cfilter *f = &p->q->filter;
  for (int i = 0; i < f->nterms; i++) {
    gak_cterm *tm = &f->terms[i];
    int hit = -1, neq = 0;
    if (tm->op != GAK_CMP_EQ && tm->op != GAK_CMP_IN)
      continue;
    for (int k = tm->lit; k < tm->lit + tm->nlit; k++)
      if (min_real(&f->lits[k]))
        hit = k;
    if (hit < 0)
      continue;
    int alias = rowid_alias(p, tm->col);
    if (alias < 0)
      return 0;
    if (!alias)
      continue;
    for (int j = 0; j < f->nterms; j++)
      neq += f->terms[j].col == tm->col &&
             (f->terms[j].op == GAK_CMP_EQ || f->terms[j].op == GAK_CMP_IN);
    if (neq > 1 || tm->nlit > 1)
      return no(p,
                "-9223372036854775808.0 with = or IN on the rowid %s: "
                "SQLite's plan decides",
                p->e->cols[tm->col].name);
    double never = 0.5; /* what the seek finds: no row */
    memcpy(&f->lits[hit].bits, &never, 8);
  }
  return 1;
}

static int all_terms(parser *p) {
  if (!term(p))
    return 0;
  while (kw(peek(p), "AND")) {
    next(p);
    if (!term(p))
      return 0;
  }
  return 1;
}

/* ---- rule 7: the expression as arithmetic ---- */

static int x_add(parser *p);

static int x_emit(parser *p, int op, int col, const ga_value *v) {
  ga_cexpr *x = p->x;
  if (x->n >= GA_CX_MAX)
    return no(p, "the expression is longer than the cache takes%s", NULL);
  ga_cx_ins *in = &x->ins[x->n++];
  memset(in, 0, sizeof(*in));
  in->op = op;
  in->col = col;
  if (v)
    in->v = *v;
  return 1;
}

/* column | [sign] number | ( expr ) | - unary | + unary */
static int x_unary(parser *p) {
  tok *t = peek(p);
  if (t->kind == T_SIGN && p->L.t[p->L.pos + 1].kind == T_NUM) {
    ga_value v; /* -5 is SQLite's literal -5 */
    return number(p, &v) && x_emit(p, GA_CX_LIT, 0, &v);
  }
  if (t->kind == T_SIGN) {
    next(p);
    if (!x_unary(p))
      return 0;
    return t->op == '-' ? x_emit(p, GA_CX_NEG, 0, NULL) : 1;
  }
  if (t->kind == T_NUM) {
    ga_value v;
    return number(p, &v) && x_emit(p, GA_CX_LIT, 0, &v);
  }
  if (t->kind == T_VAR || kw(t, "NULL")) { /* rule 8; NULL */
    sqlite3_value *pv = t->kind == T_VAR ? param(p, t) : NULL;
    int ty = pv ? sqlite3_value_type(pv) : SQLITE_NULL;
    ga_value v;
    next(p);
    memset(&v, 0, sizeof(v));
    if (ty == SQLITE_INTEGER) {
      v.type = GA_V_INT;
      v.i = sqlite3_value_int64(pv);
    } else if (ty == SQLITE_FLOAT) {
      v.type = GA_V_REAL;
      v.r = sqlite3_value_double(pv);
    } else if (ty == SQLITE_NULL) {
      v.type = GA_V_NULL;
    } else {
      return no(p, "a parameter in the expression is not a number%s", NULL);
    }
    return x_emit(p, GA_CX_LIT, 0, &v);
  }
  if (t->kind == T_LP) {
    next(p);
    if (!x_add(p))
      return 0;
    if (next(p)->kind != T_RP)
      return no(p, "the expression's parentheses do not close%s", NULL);
    return 1;
  }
  if (t->kind == T_ID && p->L.t[p->L.pos + 1].kind == T_LP)
    return no(p, "the expression calls a function (%s)", t->id);
  int c = column(p, next(p));
  if (c < 0)
    return 0;
  if (p->e->cols[c].dict)
    return no(p, "TEXT column %s in an arithmetic expression",
              p->e->cols[c].name);
  return x_emit(p, GA_CX_COL, c, NULL);
}

static int x_mul(parser *p) {
  if (!x_unary(p))
    return 0;
  while (peek(p)->kind == T_MULOP) {
    int c = next(p)->op;
    if (!x_unary(p))
      return 0;
    if (!x_emit(p,
                c == '*'   ? GA_CX_MUL
                : c == '/' ? GA_CX_DIV
                           : GA_CX_MOD,
                0, NULL))
      return 0;
  }
  return 1;
}

static int x_add(parser *p) {
  if (!x_mul(p))
    return 0;
  while (peek(p)->kind == T_SIGN) {
    int c = next(p)->op;
    if (!x_mul(p))
      return 0;
    if (!x_emit(p, c == '+' ? GA_CX_ADD : GA_CX_SUB, 0, NULL))
      return 0;
  }
  return 1;
}

/* z as rule 7's program into *x: 1, or 0 (why set).  A bare TEXT column
** is a program too (its codes: a key's or a carried column's). */
static int x_program(parser *p, const char *z, ga_cexpr *x) {
  lexer L = p->L;
  memset(&p->L, 0, sizeof(p->L));
  memset(x, 0, sizeof(*x));
  lex(&p->L, z);
  p->x = x;
  int ok = 0;
  if (p->L.nomem) {
    p->rc = SQLITE_NOMEM;
  } else if (p->L.n == 2 && (p->L.t[0].kind == T_ID || p->L.t[0].kind == T_QID) &&
             !kw(&p->L.t[0], "NULL")) {
    int c = column(p, &p->L.t[0]); /* a bare column, TEXT or not */
    ok = c >= 0 && x_emit(p, GA_CX_COL, c, NULL);
  } else {
    ok = x_add(p) && peek(p)->kind == T_END;
    if (!ok && !p->why[0] && !p->rc)
      no(p, "%s is not arithmetic over cached columns", z);
  }
  lexer_free(&p->L);
  p->L = L;
  return ok;
}

int ga_cache_shape(sqlite3 *db, const ga_centry *e, const ga_target *t,
                   const ga_parts *parts, ga_cquery *q, char *why,
                   size_t nwhy) {
  parser p;
  memset(&p, 0, sizeof(p));
  memset(q, 0, sizeof(*q));
  p.db = db;
  p.t = t;
  p.e = e;
  p.tcols = (const char *const *)t->cols;
  p.ntcols = t->ncols;
  p.q = q;
  p.parts = parts;
  p.why = why;
  p.nwhy = nwhy;
  why[0] = 0;
  q->nkeys = parts->nkeys;
  q->ncarry = parts->ncarry;
  q->nvals = parts->nvals;
  q->xcol = q->gcol = -1;
  int nkc = q->nkeys + q->ncarry;
  if (nkc > GA_MAX_KEYS)
    return no(&p, "more keys and carried columns than the cache takes%s",
              NULL);
  q->prog = sqlite3_malloc64(sizeof(ga_cexpr) * (size_t)(nkc + q->nvals));
  if (!q->prog)
    return SQLITE_NOMEM;
  for (int k = 0; k < nkc; k++) {
    ga_cexpr *x = &q->prog[k];
    if (!x_program(&p, parts->keys[k], x))
      return p.rc ? p.rc : 0;
    int c = ga_cx_bare(x);
    /* rule 6: a TEXT key groups under BINARY; a carried one is only read */
    if (k < q->nkeys && c >= 0 && e->cols[c].dict && !text_ok(&p, c, 0))
      return p.rc ? p.rc : 0;
  }
  for (int i = 0; i < q->nvals; i++) {
    ga_cexpr *x = &q->prog[nkc + i];
    if (!x_program(&p, parts->vals[i], x))
      return p.rc ? p.rc : 0;
    int c = ga_cx_bare(x);
    if (c >= 0 && e->cols[c].dict) /* rule 6 */
      return no(&p, "the aggregate argument %s holds TEXT", e->cols[c].name);
  }
  q->xcol = q->nvals == 1 ? ga_cx_bare(ga_cq_val(q, 0)) : -1;
  q->gcol = q->nkeys == 1 && !q->ncarry ? ga_cx_bare(ga_cq_key(q, 0)) : -1;
  q->simple = q->nvals == 1 && !q->ncarry && (!q->nkeys || q->gcol >= 0);
  if (e->where == GA_CACHE_GPU && (!q->simple || q->xcol < 0))
    return no(&p,
              "several keys or values, or arithmetic: GPU entries do not "
              "take them yet%s",
              NULL);
  if (!parts->filter || !*parts->filter)
    return 1;
  lex(&p.L, parts->filter);
  int ok = 0;
  if (p.L.nomem)
    p.rc = SQLITE_NOMEM;
  else
    ok = all_terms(&p) && peek(&p)->kind == T_END && rowid_min_real(&p);
  if (ok && p.never) { /* rule 8: one term no row passes */
    gak_cfilter *f = &q->filter;
    if (f->nterms >= GAK_CACHE_MAX_TERMS) {
      ok = no(&p, "more terms than the cache takes%s", NULL);
    } else {
      gak_cterm *tm = &f->terms[f->nterms++];
      memset(tm, 0, sizeof(*tm));
      tm->op = GAK_CMP_IN; /* in an empty list */
    }
  }
  if (!ok)
    no(&p,
       "the filter is not an AND of comparisons of a column with a "
       "number%s",
       NULL);
  lexer_free(&p.L);
  return p.rc ? p.rc : ok;
}
