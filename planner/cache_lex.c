/*
** cache_lex.c — the lexer of the texts a cache entry may answer, and the
** parser's shared helpers (cache_parse.h): names, literals, parameters,
** TEXT columns' codes.  The rules are planner/cache_shape.c's.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_parse.h"
#include "qsubq.h"

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
void ga_cl_lex(lexer *L, const char *z) {
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
      /* q . name: SQLite's qualified name, spaces around the dot too (the
      ** texts planner/qrewrite.c writes again have them) */
      const char *d = z, *e;
      while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r' || *d == '\f')
        d++;
      e = d + (*d == '.');
      while (e > d && (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r' ||
                       *e == '\f'))
        e++;
      if (*d == '.' &&
          (is_id0((unsigned char)*e) || *e == '"' || *e == '[' || *e == '`')) {
        tok *q = &L->t[L->n - 1];
        char *qual = q->id;
        L->n--;
        int m = name_at(L, e);
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
        t->n = (int)(e + m - (z - n));
        z = e + m;
        d = z;
        while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r' ||
               *d == '\f')
          d++;
        if (*d == '.') {
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
    } else if (c == '|' || c == '&' || c == '~' ||
               ((c == '<' || c == '>') && z[1] == c)) {
      int n = c == '|' && z[1] == '|' ? 2 : (c == '<' || c == '>') ? 2 : 1;
      push(L, T_OTHER, z, n, NULL, c);
      z += n;
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

void ga_cl_lexer_free(lexer *L) {
  for (int i = 0; i < L->n; i++) {
    sqlite3_free(L->t[i].id);
    sqlite3_free(L->t[i].qual);
  }
  sqlite3_free(L->t);
  memset(L, 0, sizeof(*L));
}

tok *ga_cl_peek(parser *p) { return &p->L.t[p->L.pos]; }
/* The next token; T_END is never passed. */
tok *ga_cl_next(parser *p) {
  tok *t = &p->L.t[p->L.pos];
  if (t->kind != T_END)
    p->L.pos++;
  return t;
}

int ga_cl_kw(const tok *t, const char *w) {
  return t->kind == T_ID && !sqlite3_stricmp(t->id, w);
}

int ga_cl_is_keyword(const tok *t) {
  static const char *const k[] = {
      "AND",    "BETWEEN", "IN",      "IS",     "NOT",  "NULL",
      "ISNULL", "NOTNULL", "COLLATE", "OR",     "LIKE", "GLOB",
      "ESCAPE", "CAST",    "CASE",    "SELECT", "WHEN", "THEN",
      "ELSE",   "END",     "EXISTS",  "REGEXP", "MATCH"};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (ga_cl_kw(t, k[i]))
      return 1;
  return 0;
}

int ga_cl_no(parser *p, const char *fmt, const char *a) {
  if (!p->why[0])
    sqlite3_snprintf((int)p->nwhy, p->why, fmt, a ? a : "");
  return 0;
}

/* The entry column named by token t: its index, or -1 (why set). */
int ga_cl_column(parser *p, const tok *t) {
  if ((t->kind != T_ID && t->kind != T_QID) ||
      (t->kind == T_ID && ga_cl_is_keyword(t)))
    return -1;
  if (t->qual) { /* rule 8: the FROM clause's name for the table */
    const char *as =
        p->parts && p->parts->alias ? p->parts->alias : p->t->table;
    if (sqlite3_stricmp(t->qual, as)) {
      ga_cl_no(p, "the name %s is qualified by another table's name", t->id);
      return -1;
    }
  }
  for (int c = 0; c < p->e->ncols; c++)
    if (!sqlite3_stricmp(p->e->cols[c].name, t->id)) {
      if (p->e->cols[c].mixed) /* engine/cache/cache_load.c rule 8 */
        return ga_cl_no(p,
                        "column %s holds TEXT and numbers (the cache answers "
                        "no query that reads it)",
                        p->e->cols[c].name) -
               1;
      return c;
    }
  for (int c = 0; c < p->ntcols; c++)
    if (!sqlite3_stricmp(p->tcols[c], t->id)) {
      ga_cl_no(p, "column %s is not cached", p->tcols[c]);
      return -1;
    }
  ga_cl_no(p, "%s is not a column of the table", t->id);
  return -1;
}

/* [sign] NUM, evaluated by SQLite (rule 2), into *out (INT or REAL): 1,
** or 0 (why set, or nomem). */
int ga_cl_number(parser *p, ga_value *out) {
  const tok *sign = NULL;
  if (ga_cl_peek(p)->kind == T_SIGN)
    sign = ga_cl_next(p);
  tok *t = ga_cl_next(p);
  if (t->kind != T_NUM)
    return ga_cl_no(p, "a comparison is not with a number%s", NULL);
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
    ga_cl_no(p, "%s is not a number SQLite reads as one", NULL);
  return ok;
}

/* Rule 6: may TEXT column c be compared (compared 1) or grouped?  1, or 0
** with the reason. */
int ga_cl_text_ok(parser *p, int c, int compared) {
  const ga_ccol *col = &p->e->cols[c];
  if (compared && col->aff != GA_AFF_TEXT && col->aff != GA_AFF_BLOB)
    return ga_cl_no(p, "TEXT column %s has a numeric affinity", col->name);
  const char *type, *coll;
  if (ga_column_decl(p->db, col->src_table ? col->src_schema : p->t->schema,
                     col->src_table ? col->src_table : p->t->table,
                     col->src_table ? col->src_name : col->name, &type,
                     &coll) != SQLITE_OK)
    return ga_cl_no(p, "the collation of TEXT column %s cannot be read",
                    col->name);
  if (coll && sqlite3_stricmp(coll, "BINARY"))
    return ga_cl_no(p, "TEXT column %s has a collation other than BINARY",
                    col->name);
  return 1;
}

/* Rule 6: TEXT bytes z, n (the database's encoding) compared with TEXT
** column c by *op (mirrored already): their insertion point among the codes
** as an INTEGER literal, *op adjusted; the literal's index, or -1. */
int ga_cl_code_of(parser *p, const ga_dict *d, const void *z, int n, int *op,
                  int64_t *v) {
  int found = 0;
  int64_t at = ga_dict_find(d, z ? z : "", n, &found);
  if (at < 0) {
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  if (*op == GAK_CMP_EQ || *op == GAK_CMP_NE || *op == GAK_CMP_IN)
    at = found ? at : -1; /* -1: no code */
  else if (*op == GAK_CMP_LE && !found)
    *op = GAK_CMP_LT;
  else if (*op == GAK_CMP_GT && !found)
    *op = GAK_CMP_GE;
  *v = at;
  return 1;
}

int ga_cl_text_code_lit(parser *p, int c, int *op, const void *z, int n) {
  gak_cfilter *f = &p->q->filter;
  int64_t v;
  if (f->nlits >= GAK_CACHE_MAX_LITS)
    return ga_cl_no(p, "more literals than the cache takes%s", NULL) - 1;
  if (!ga_cl_code_of(p, p->e->cols[c].dict, z, n, op, &v))
    return -1;
  gak_clit *l = &f->lits[f->nlits];
  memset(l, 0, sizeof(*l));
  l->kind = GA_KIND_INT;
  l->bits = v;
  return f->nlits++;
}

const void *ga_cl_text_bytes(parser *p, sqlite3_value *v, int *n) {
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

/* Rule 8: the value of parameter token t (NULL when unbound). */
sqlite3_value *ga_cl_param(parser *p, const tok *t) {
  int k = t->op - 3; /* ?3 is the first (planner.h's ga_parts) */
  if (!p->parts || k < 0 || k >= p->parts->nparams)
    return NULL;
  return p->parts->params[k];
}

int ga_cl_in_slot(parser *p, const tok *t, sqlite3_value *const **rows, int *n,
                  const char **decl) {
  int k = t->op - 3;
  sqlite3_value *const *r0;
  int n0;
  const char *d0;
  if (t->kind != T_VAR || !p->parts || !p->parts->subq || k < 0 ||
      k >= p->parts->nparams)
    return 0;
  return ga_qsub_in_set(p->parts->subq, k, rows ? rows : &r0, n ? n : &n0,
                        decl ? decl : &d0);
}

int ga_cl_mirror(int op) {
  return op == GAK_CMP_LT   ? GAK_CMP_GT
         : op == GAK_CMP_LE ? GAK_CMP_GE
         : op == GAK_CMP_GT ? GAK_CMP_LT
         : op == GAK_CMP_GE ? GAK_CMP_LE
                            : op;
}

/* One instruction of the program being written, and its stack effect. */
int ga_cl_emit(parser *p, int op, int col, int a, int b, const ga_value *v) {
  ga_cexpr *x = p->x;
  if (x->n >= GA_CX_MAX)
    return ga_cl_no(p, "the expression is longer than the cache takes%s", NULL);
  ga_cx_ins *in = &x->ins[x->n++];
  memset(in, 0, sizeof(*in));
  in->op = op;
  in->col = col;
  in->a = a;
  in->b = b;
  if (v)
    in->v = *v;
  switch (op) {
  case GA_CX_COL:
  case GA_CX_LIT:
    p->sp++;
    break;
  case GA_CX_NEG: /* a free slot for 0 */
  case GA_CX_ISNULL:
  case GA_CX_NOT:
  case GA_CX_IN:
  case GA_CX_ABS:
  case GA_CX_MAP:
  case GA_CX_INSET:
    break;
  case GA_CX_BETWEEN:
    p->sp -= 2;
    break;
  case GA_CX_CASE:
    p->sp -= 2 * a + b - 1;
    break;
  case GA_CX_COALESCE:
    p->sp -= a - 1;
    break;
  default: /* binary */
    p->sp--;
  }
  if (p->sp + 1 > x->depth)
    x->depth = p->sp + 1;
  return 1;
}
