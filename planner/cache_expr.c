/*
** cache_expr.c — the texts of keys, values and filters as cexpr.h programs
** (planner/cache_shape.c rule 7), with SQLite's grammar and precedence:
**
**   or    := and (OR and)*
**   and   := not (AND not)*
**   not   := NOT not | eq
**   eq    := rel ((= == <> !=) rel | IS [NOT] rel | IS [NOT] NULL | ISNULL
**             | NOTNULL | NOT NULL | [NOT] IN (literals) | [NOT] BETWEEN
**             rel AND rel)*
**   rel   := add ((< <= > >=) add)*
**   add   := mul ((+ -) mul)*
**   mul   := unary ((* / %) unary)*
**   unary := - unary | + unary | primary
**   primary := number | 'string' | ?N | NULL | column | ( or )
**             | CASE [base] WHEN or THEN or ... [ELSE or] END
**             | abs(or) | coalesce(or, ...) | ifnull(or, or)
**
** Rules:
**   1. Kinds (cache_parse.h's xk): numbers and NULL; a TEXT column's codes
**      (engine/cache/dict.h); TEXT literals.  Arithmetic, logic, abs and
**      truth take numbers; a code is compared with codes of its own
**      dictionary or with a TEXT literal, which becomes its insertion point
**      (= and IN: the code, or -1 when absent; <= absent: <; > absent: >=),
**      so the comparison is BINARY's.  A TEXT column compared keeps its
**      collation and affinity (cache_lex.c's ga_cl_text_ok: BINARY, TEXT
**      or no affinity); CASE, coalesce and derived columns carry no
**      collation (SQLite's: only a column, CAST and unary + carry one), so
**      their codes compare under BINARY.  Anything else (a number compared
**      with TEXT, which affinity would convert) is not eligible.
**   2. A predicate (the `not` level) or a function call that the grammar
**      does not take, and that reads exactly one cached TEXT column, is a
**      derived column: SQLite evaluates it once per distinct value
**      (cache_derive.c).  LIKE, GLOB, ||, substr(), strftime() ... arrive
**      that way.
**   3. IN lists hold literals and parameters only; BETWEEN reads x once
**      (cexpr.h).  A NULL parameter is SQLite's NULL.
**   4. Subqueries (planner/qsubq.c rule 6, evaluated on the caller in the
**      entry's snapshot).  A scalar's placeholder CAST(?K AS type) is its
**      value (qsubq.c rule 3: the CAST gives it back), a constant with
**      that type's affinity (aff: compared with a TEXT column or a TEXT
**      value, ineligible as any affinity case above).  x IN (?K), K an IN
**      subquery, is cexpr.h rule 8's set test under SQLite's comparison
**      (sqlite3CompareAffinity of x and the set column, the IN's
**      sqlite3BinaryCompareCollSeq): x's affinity is its column's where x
**      is a bare column, none for an expression without CAST or a column's
**      affinity (else ineligible); the set's values take the comparison's
**      affinity (NUMERIC: numeric-looking TEXT becomes a number; none or
**      BLOB: unchanged), and a value that can never equal x's kind is left
**      out (TEXT or BLOB against numbers, numbers or BLOB against TEXT).
**      Ineligible: TEXT x under a numeric comparison affinity (SQLite
**      converts '05' to 5 on each row: `tk IN (SELECT code ...)` with code
**      INTEGER matches '05'), numbers under TEXT affinity, TEXT x compared
**      under a collation other than BINARY (a bare column's own, else the
**      set column's), a string x, and -9223372036854775808.0 in the set
**      (cache_shape.c rule 5).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_parse.h"
#include "qsubq.h"

static int x_or(parser *p, xk *k);
static int x_rel(parser *p, xk *k);

static int lit(parser *p, const ga_value *v) {
  return ga_cl_emit(p, GA_CX_LIT, 0, 0, 0, v);
}

static int is_num(const xk *k) { return k->k == K_NUM || k->k == K_NULL; }

/* ---- TEXT literals against codes (rule 1) ---- */

/* The bytes of a K_STR in the entry's encoding, into *z (sqlite3_malloc'd)
** and *n: 1, or 0 (why or rc set). */
static int str_bytes(parser *p, const xk *s, void **z, int *n) {
  sqlite3_stmt *st = NULL;
  sqlite3_value *v = s->sv;
  int rc = SQLITE_OK;
  *z = NULL;
  if (!v) {
    char *sql = sqlite3_mprintf("SELECT %.*s", s->str->n, s->str->z);
    rc = sql ? sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) == SQLITE_TEXT)
      v = sqlite3_column_value(st, 0);
    else if (rc == SQLITE_OK)
      rc = sqlite3_reset(st);
  }
  if (v) {
    const void *b = ga_cl_text_bytes(p, v, n);
    if (b && (*z = sqlite3_malloc64((size_t)*n + 1)) != NULL)
      memcpy(*z, b, (size_t)*n);
    else
      p->rc = SQLITE_NOMEM;
  }
  sqlite3_finalize(st);
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  if (!*z && !p->rc)
    ga_cl_no(p, "a string SQLite does not read as one%s", NULL);
  return *z != NULL;
}

/* The literal s compared with codes of d by *op: written as its insertion
** point (or -1), *op adjusted (rule 1). */
static int code_lit(parser *p, const ga_dict *d, const xk *s, int *op) {
  void *z;
  int n;
  ga_value v = {0};
  if (!str_bytes(p, s, &z, &n))
    return 0;
  int ok = ga_cl_code_of(p, d, z, n, op, &v.i);
  sqlite3_free(z);
  v.type = GA_V_INT;
  return ok && lit(p, &v);
}

/* May a code of kind k be compared (rule 1)? */
static int code_cmp_ok(parser *p, const xk *k) {
  return k->coll_col < 0 || ga_cl_text_ok(p, k->coll_col, 1);
}

/* IS (0) or IS NOT (1) of a number and a TEXT: never the same. */
static int in_is_not(int neg) { return neg ? 1 : 0; }

/* a op b, both read (a K_STR is not written yet): the comparison written,
** rule 1.  is: IS / IS NOT (a = 0 / 1) instead of op. */
static int compare(parser *p, const xk *a, int op, const xk *b, int is) {
  int mirror = 0;
  const xk *code = NULL, *str = NULL;
  if (is_num(a) && is_num(b)) {
  } else if (a->k == K_CODE && b->k == K_CODE) {
    if (a->d != b->d)
      return ga_cl_no(p, "TEXT of two dictionaries compared%s", NULL);
    if (!code_cmp_ok(p, a) || !code_cmp_ok(p, b))
      return 0;
  } else if (a->k == K_CODE && b->k == K_STR) {
    code = a, str = b;
  } else if (a->k == K_STR && b->k == K_CODE) {
    code = b, str = a, mirror = 1;
  } else if ((a->k == K_CODE && b->k == K_NULL) ||
             (a->k == K_NULL && b->k == K_CODE)) {
  } else if ((a->k == K_NUM && !a->aff && b->k == K_STR && !b->aff) ||
             (a->k == K_STR && !a->aff && b->k == K_NUM && !b->aff)) {
    /* no affinity on either side: a number is below any TEXT, so the
    ** comparison is a constant for a number, NULL for NULL (IS: a
    ** constant); the number alone is written */
    if (a->k == K_STR && !is)
      op = ga_cl_mirror(op);
    int c = is ? in_is_not(op)
               : op == GAK_CMP_NE || op == GAK_CMP_LT || op == GAK_CMP_LE;
    ga_value zero = {0}, v = {0};
    zero.type = v.type = GA_V_INT;
    v.i = c;
    if (is) /* x * 0 + c: 0 or 1 whatever x (ISNULL makes it a number) */
      return ga_cl_emit(p, GA_CX_ISNULL, 0, 0, 0, NULL) && lit(p, &zero) &&
             ga_cl_emit(p, GA_CX_MUL, 0, 0, 0, NULL) && lit(p, &v) &&
             ga_cl_emit(p, GA_CX_ADD, 0, 0, 0, NULL);
    /* CASE WHEN x NOT NULL THEN c END */
    return ga_cl_emit(p, GA_CX_ISNULL, 0, 1, 0, NULL) && lit(p, &v) &&
           ga_cl_emit(p, GA_CX_CASE, 0, 1, 0, NULL);
  } else {
    return ga_cl_no(p, "TEXT compared with a number (affinity)%s", NULL);
  }
  if (code) {
    if (!code_cmp_ok(p, code))
      return 0;
    if (mirror && !is)
      op = ga_cl_mirror(op);
    if (!code_lit(p, code->d, str, is ? &(int){GAK_CMP_EQ} : &op))
      return 0;
  }
  return is ? ga_cl_emit(p, GA_CX_IS, 0, op, 0, NULL)
            : ga_cl_emit(p, GA_CX_CMP, 0, op, 0, NULL);
}

/* ---- primaries ---- */

static int param_value(parser *p, const tok *t, xk *k) {
  sqlite3_value *pv = ga_cl_param(p, t);
  int ty = pv ? sqlite3_value_type(pv) : SQLITE_NULL;
  ga_value v = {0};
  memset(k, 0, sizeof(*k));
  k->coll_col = -1;
  if (ty == SQLITE_TEXT) {
    k->k = K_STR;
    k->sv = pv;
    return 1;
  }
  if (ty == SQLITE_BLOB)
    return ga_cl_no(p, "a parameter is a BLOB%s", NULL);
  k->k = ty == SQLITE_NULL ? K_NULL : K_NUM;
  v.type = ty == SQLITE_INTEGER ? GA_V_INT
           : ty == SQLITE_FLOAT ? GA_V_REAL
                                : GA_V_NULL;
  if (v.type == GA_V_INT)
    v.i = sqlite3_value_int64(pv);
  else if (v.type == GA_V_REAL)
    v.r = sqlite3_value_double(pv);
  return lit(p, &v);
}

/* The token after the ')' matching the '(' at position at, or -1. */
static int close_of(parser *p, int at) {
  int depth = 0;
  for (int i = at; i < p->L.n; i++) {
    int kind = p->L.t[i].kind;
    if (kind == T_LP)
      depth++;
    else if (kind == T_RP && --depth == 0)
      return i + 1;
    else if (kind == T_END || kind == T_BAD)
      return -1;
  }
  return -1;
}

/* A call of a function the programs run (abs, coalesce, ifnull): 1 with
** its value written, 0 not (why set). */
static int call_native(parser *p, const char *name, xk *k) {
  int coalesce = !sqlite3_stricmp(name, "coalesce"),
      ifnull = !sqlite3_stricmp(name, "ifnull"),
      abs = !sqlite3_stricmp(name, "abs");
  if (!coalesce && !ifnull && !abs)
    return ga_cl_no(p, "the expression calls a function (%s)", name);
  ga_cl_next(p); /* the name */
  ga_cl_next(p); /* ( */
  int n = 0;
  xk all = {K_NULL, NULL, -1, 0, NULL, NULL};
  for (;;) {
    xk a;
    if (!x_or(p, &a))
      return 0;
    if (a.k == K_STR)
      return ga_cl_no(p, "%s() of a string", name);
    if (a.k == K_CODE) {
      if (abs || (all.k == K_CODE && all.d != a.d) || all.k == K_NUM)
        return ga_cl_no(p, "%s() of TEXT", name);
      all.k = K_CODE, all.d = a.d;
    } else if (a.k == K_NUM) {
      if (all.k == K_CODE)
        return ga_cl_no(p, "%s() of TEXT and numbers", name);
      all.k = K_NUM;
    }
    n++;
    tok *t = ga_cl_next(p);
    if (t->kind == T_RP)
      break;
    if (t->kind != T_COMMA)
      return ga_cl_no(p, "%s()'s arguments do not close", name);
  }
  if ((abs && n != 1) || (ifnull && n != 2) || (coalesce && n < 2))
    return ga_cl_no(p, "%s() with another number of arguments", name);
  *k = all;
  k->coll_col = -1; /* a function's value carries no collation (rule 1) */
  return abs ? ga_cl_emit(p, GA_CX_ABS, 0, 0, 0, NULL)
             : ga_cl_emit(p, GA_CX_COALESCE, 0, n, 0, NULL);
}

/* One THEN or ELSE of a CASE into the kind of them all (*all): numbers, or
** codes of one dictionary, NULLs with either.  1, or 0 with why. */
static int case_join(parser *p, xk *all, const xk *b) {
  if (b->k == K_STR || (b->k == K_CODE && all->k == K_NUM) ||
      (b->k == K_NUM && all->k == K_CODE) ||
      (b->k == K_CODE && all->k == K_CODE && all->d != b->d))
    return ga_cl_no(p, "CASE gives TEXT literals or TEXT and numbers%s", NULL);
  if (b->k != K_NULL)
    all->k = b->k, all->d = b->d;
  return 1;
}

/* CASE [base] WHEN w THEN t ... [ELSE e] END (the CASE read). */
static int x_case(parser *p, xk *k) {
  int base = -1, pairs = 0, has_else = 0;
  xk all = {K_NULL, NULL, -1, 0, NULL, NULL};
  if (!ga_cl_kw(ga_cl_peek(p), "WHEN")) { /* the base: where it starts */
    base = p->L.pos;
    int n0 = p->x->n, sp0 = p->sp;
    xk b;
    if (!x_or(p, &b))
      return 0;
    p->x->n = n0, p->sp = sp0; /* written again before each WHEN */
  }
  while (ga_cl_kw(ga_cl_peek(p), "WHEN")) {
    ga_cl_next(p);
    xk w, t;
    if (base >= 0) { /* base = w */
      int at = p->L.pos;
      xk b;
      p->L.pos = base;
      if (!x_or(p, &b))
        return 0;
      p->L.pos = at;
      if (!x_or(p, &w) || !compare(p, &b, GAK_CMP_EQ, &w, 0))
        return 0;
    } else if (!x_or(p, &w)) {
      return 0;
    } else if (!is_num(&w)) {
      return ga_cl_no(p, "a WHEN that is TEXT%s", NULL);
    }
    if (!ga_cl_kw(ga_cl_next(p), "THEN"))
      return ga_cl_no(p, "CASE without THEN%s", NULL);
    if (!x_or(p, &t))
      return 0;
    if (!case_join(p, &all, &t))
      return 0;
    pairs++;
  }
  if (!pairs)
    return ga_cl_no(p, "CASE without WHEN%s", NULL);
  if (ga_cl_kw(ga_cl_peek(p), "ELSE")) {
    ga_cl_next(p);
    xk e;
    if (!x_or(p, &e))
      return 0;
    if (!case_join(p, &all, &e))
      return 0;
    has_else = 1;
  }
  if (!ga_cl_kw(ga_cl_next(p), "END"))
    return ga_cl_no(p, "CASE without END%s", NULL);
  *k = all;
  k->coll_col = -1;
  return ga_cl_emit(p, GA_CX_CASE, 0, pairs, has_else, NULL);
}

/* Rule 4: CAST(?K AS type) at the CAST, K a scalar subquery's value: 1
** (written, *k set), 0 (why set), -1 (not one). */
static int sub_cast(parser *p, xk *k) {
  const tok *t = &p->L.t[p->L.pos];
  const ga_qsub_run *r = p->parts ? p->parts->subq : NULL;
  if (!r || t[1].kind != T_LP || t[2].kind != T_VAR || !ga_cl_kw(&t[3], "AS") ||
      t[4].kind != T_ID || t[5].kind != T_RP)
    return -1;
  int slot = t[2].op - 3;
  if (slot < r->nparams + 1 || slot >= p->parts->nparams ||
      ga_cl_in_slot(p, &t[2], NULL, NULL, NULL))
    return -1;       /* a parameter of the text: SQLite's CAST may change it */
  p->L.pos += 1 + 1; /* CAST ( */
  if (!param_value(p, ga_cl_next(p), k))
    return 0;
  p->L.pos += 3; /* AS type ) */
  /* the value has the type's affinity (BLOB: a value BLOB keeps, so NULL
  ** here, param_value declines a BLOB) */
  k->aff = sqlite3_stricmp(t[4].id, "BLOB") != 0;
  return 1;
}

static int x_primary(parser *p, xk *k) {
  tok *t = ga_cl_peek(p);
  memset(k, 0, sizeof(*k));
  k->coll_col = -1;
  if (t->kind == T_NUM) {
    ga_value v;
    k->k = K_NUM;
    return ga_cl_number(p, &v) && lit(p, &v);
  }
  if (t->kind == T_STR) {
    k->k = K_STR;
    k->str = ga_cl_next(p);
    return 1;
  }
  if (t->kind == T_VAR)
    return param_value(p, ga_cl_next(p), k);
  if (ga_cl_kw(t, "NULL")) {
    ga_value v = {0};
    ga_cl_next(p);
    k->k = K_NULL;
    v.type = GA_V_NULL;
    return lit(p, &v);
  }
  if (t->kind == T_LP) {
    ga_cl_next(p);
    if (!x_or(p, k))
      return 0;
    if (ga_cl_next(p)->kind != T_RP)
      return ga_cl_no(p, "the expression's parentheses do not close%s", NULL);
    return 1;
  }
  if (ga_cl_kw(t, "CASE")) {
    ga_cl_next(p);
    return x_case(p, k);
  }
  if (ga_cl_kw(t, "CAST")) { /* a scalar subquery's placeholder (rule 4) */
    int r = sub_cast(p, k);
    if (r >= 0)
      return r;
  }
  if ((t->kind == T_ID && p->L.t[p->L.pos + 1].kind == T_LP) ||
      ga_cl_kw(t, "CAST")) { /* a call: ours, or derived (rule 2) */
    int at = p->L.pos, n0 = p->x->n, sp0 = p->sp;
    char keep[256];
    if (call_native(p, t->id, k))
      return 1;
    if (p->rc)
      return 0;
    sqlite3_snprintf((int)sizeof keep, keep, "%s", p->why);
    p->why[0] = 0;
    p->L.pos = at, p->x->n = n0, p->sp = sp0;
    int end = close_of(p, at + 1);
    int r = end < 0 ? -1 : ga_cl_derive(p, at, end, k);
    if (r == 1) {
      p->L.pos = end;
      return 1;
    }
    if (r < 0 && !p->rc)
      sqlite3_snprintf((int)p->nwhy, p->why, "%s", keep);
    return 0;
  }
  int c = ga_cl_column(p, ga_cl_next(p));
  if (c < 0)
    return 0;
  if (p->e->cols[c].dict) {
    k->k = K_CODE;
    k->d = p->e->cols[c].dict;
    k->coll_col = c;
  } else {
    k->k = K_NUM;
    k->aff = 1; /* the column's affinity (rule 1) */
  }
  return ga_cl_emit(p, GA_CX_COL, c, 0, 0, NULL);
}

static int x_unary(parser *p, xk *k) {
  tok *t = ga_cl_peek(p);
  if (t->kind == T_SIGN && p->L.t[p->L.pos + 1].kind == T_NUM) {
    ga_value v; /* -5 is SQLite's literal -5 */
    memset(k, 0, sizeof(*k));
    k->k = K_NUM;
    k->coll_col = -1;
    return ga_cl_number(p, &v) && lit(p, &v);
  }
  if (t->kind == T_SIGN) {
    ga_cl_next(p);
    if (!x_unary(p, k))
      return 0;
    if (t->op == '+') /* +x is x, collation included */
      return 1;
    if (!is_num(k))
      return ga_cl_no(p, "minus of TEXT%s", NULL);
    k->aff = 0;
    return ga_cl_emit(p, GA_CX_NEG, 0, 0, 0, NULL);
  }
  return x_primary(p, k);
}

static int arith(parser *p, xk *a, const xk *b, int op) {
  if (!is_num(a) || !is_num(b))
    return ga_cl_no(p, "TEXT in an arithmetic expression%s", NULL);
  a->k = a->k == K_NULL && b->k == K_NULL ? K_NULL : K_NUM;
  a->coll_col = -1;
  a->aff = 0;
  return ga_cl_emit(p, op, 0, 0, 0, NULL);
}

static int x_mul(parser *p, xk *k) {
  if (!x_unary(p, k))
    return 0;
  while (ga_cl_peek(p)->kind == T_MULOP) {
    int c = ga_cl_next(p)->op;
    xk b;
    if (!x_unary(p, &b) || !arith(p, k, &b,
                                  c == '*'   ? GA_CX_MUL
                                  : c == '/' ? GA_CX_DIV
                                             : GA_CX_MOD))
      return 0;
  }
  return 1;
}

static int x_add(parser *p, xk *k) {
  if (!x_mul(p, k))
    return 0;
  while (ga_cl_peek(p)->kind == T_SIGN) {
    int c = ga_cl_next(p)->op;
    xk b;
    if (!x_mul(p, &b) || !arith(p, k, &b, c == '+' ? GA_CX_ADD : GA_CX_SUB))
      return 0;
  }
  return 1;
}

static xk bool_kind(void) {
  xk k = {K_NUM, NULL, -1, 0, NULL, NULL};
  return k;
}

static int x_rel(parser *p, xk *k) {
  if (!x_add(p, k))
    return 0;
  for (;;) {
    tok *t = ga_cl_peek(p);
    if (t->kind != T_OP || t->op == GAK_CMP_EQ || t->op == GAK_CMP_NE)
      return 1;
    ga_cl_next(p);
    xk b;
    if (!x_add(p, &b) || !compare(p, k, t->op, &b, 0))
      return 0;
    *k = bool_kind();
  }
}

/* ---- x IN (an IN subquery's set): rule 4 ---- */

/* SQLite's affinities (sqliteInt.h's SQLITE_AFF_*). */
enum {
  AFF_NONE = 0x40,
  AFF_BLOB,
  AFF_TEXT,
  AFF_NUMERIC,
  AFF_INTEGER,
  AFF_REAL
};

/* The affinity a declaration "<type> COLLATE <name>" (qsubq.c) names. */
static int decl_aff(const char *d) {
  static const char *const n[] = {"BLOB", "TEXT", "NUMERIC", "INTEGER", "REAL"};
  for (int i = 0; i < 5; i++)
    if (!sqlite3_strnicmp(d, n[i], (int)strlen(n[i])) && d[strlen(n[i])] == ' ')
      return AFF_BLOB + i;
  return -1;
}

/* sqlite3CompareAffinity. */
static int cmp_aff(int a1, int a2) {
  if (a1 > AFF_NONE && a2 > AFF_NONE)
    return a1 >= AFF_NUMERIC || a2 >= AFF_NUMERIC ? AFF_NUMERIC : AFF_BLOB;
  return (a1 <= AFF_NONE ? a2 : a1) | AFF_NONE;
}

static int elem_cmp(const void *a, const void *b) {
  const ga_value *x = a, *y = b;
  return ga_cx_cmp(x->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
                   x->type == GA_V_INT ? (uint64_t)x->i : ga_cx_u(x->r),
                   y->type == GA_V_INT ? GA_CX_TINT : GA_CX_TREAL,
                   y->type == GA_V_INT ? (uint64_t)y->i : ga_cx_u(y->r));
}

/* A new map of the env (freed with the query): its index, or -1. */
static int env_map(parser *p) {
  ga_cx_env *env = p->q->env;
  ga_cx_map *maps = sqlite3_realloc64(env->maps, sizeof(ga_cx_map) *
                                                     (size_t)(env->nmaps + 1));
  if (!maps) {
    p->rc = SQLITE_NOMEM;
    return -1;
  }
  env->maps = maps;
  memset(&maps[env->nmaps], 0, sizeof(ga_cx_map));
  return env->nmaps++;
}

/* The set's elements e[0 .. n) (numbers, or codes) as cexpr.h rule 8's
** set, and the bitmap where every one is an INTEGER close to the others;
** the GA_CX_INSET written. */
static int emit_set(parser *p, ga_value *e, int64_t n, int has_null) {
  if (n)
    qsort(e, (size_t)n, sizeof(*e), elem_cmp);
  int64_t m = 0, ints = 0;
  for (int64_t i = 0; i < n; i++)
    if (!m || elem_cmp(&e[m - 1], &e[i]))
      e[m++] = e[i];
  int si = env_map(p);
  if (si < 0)
    return 0;
  ga_cx_map *set = &p->q->env->maps[si];
  set->v = sqlite3_malloc64(sizeof(uint64_t) * (size_t)(m ? m : 1));
  set->type = sqlite3_malloc64((size_t)(m ? m : 1));
  if (!set->v || !set->type) {
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  set->n = m;
  for (int64_t i = 0; i < m; i++) {
    set->v[i] = e[i].type == GA_V_INT ? (uint64_t)e[i].i : ga_cx_u(e[i].r);
    set->type[i] = (uint8_t)e[i].type;
    ints += e[i].type == GA_V_INT;
  }
  int bi = -1;
  ga_value base = {0};
  base.type = GA_V_INT;
  /* a bitmap of at most 16 words an element (and 64 more) */
  if (m && ints == m &&
      (uint64_t)e[m - 1].i - (uint64_t)e[0].i < (uint64_t)(16 * m + 64) * 64) {
    int64_t words =
        (int64_t)(((uint64_t)e[m - 1].i - (uint64_t)e[0].i) / 64) + 1;
    bi = env_map(p);
    if (bi < 0)
      return 0;
    ga_cx_map *b = &p->q->env->maps[bi];
    b->v = sqlite3_malloc64(sizeof(uint64_t) * (size_t)words);
    if (!b->v) {
      p->rc = SQLITE_NOMEM;
      return 0;
    }
    memset(b->v, 0, sizeof(uint64_t) * (size_t)words);
    b->n = words;
    base.i = e[0].i;
    for (int64_t i = 0; i < m; i++) {
      uint64_t off = (uint64_t)e[i].i - (uint64_t)base.i;
      b->v[off / 64] |= 1ull << (off % 64);
    }
  }
  return ga_cl_emit(p, GA_CX_INSET, has_null, si, bi, &base);
}

/* x IN (?K), K an IN subquery (the ')' read; x read: k, lhs_col its entry
** column where x is a bare column, else -1; cast: x has a CAST): rule 4. */
static int x_in_set(parser *p, xk *k, int lhs_col, int cast,
                    sqlite3_value *const *rows, int nrows, const char *decl) {
  int raff = decl_aff(decl);
  const char *coll = strstr(decl, " COLLATE ");
  coll = coll ? coll + 9 : "BINARY";
  if (raff < 0)
    return ga_cl_no(p,
                    "an IN subquery's column has no affinity the cache "
                    "reads%s",
                    NULL);
  if (k->k == K_STR)
    return ga_cl_no(p, "a string IN a subquery%s", NULL);
  int laff = AFF_NONE;
  if (lhs_col >= 0) {
    static const int a[] = {AFF_BLOB, AFF_TEXT, AFF_NUMERIC, AFF_INTEGER,
                            AFF_REAL};
    laff = a[p->e->cols[lhs_col].aff];
  } else if (cast || (k->k == K_NUM && k->aff)) {
    return ga_cl_no(p, "an expression with an affinity IN a subquery%s", NULL);
  }
  int aff = cmp_aff(raff, laff);
  int text = k->k == K_CODE;
  if (text) {
    if (aff >= AFF_NUMERIC)
      return ga_cl_no(p,
                      "TEXT IN a subquery whose comparison has a numeric "
                      "affinity (SQLite converts each TEXT value)%s",
                      NULL);
    if (k->coll_col >= 0 ? !code_cmp_ok(p, k) : 0)
      return 0;
    if (k->coll_col < 0 && sqlite3_stricmp(coll, "BINARY"))
      return ga_cl_no(p, "TEXT IN a subquery under collation %s", coll);
  } else if (aff == AFF_TEXT) {
    return ga_cl_no(p,
                    "a number IN a subquery whose comparison has TEXT "
                    "affinity (SQLite converts each number)%s",
                    NULL);
  }
  ga_value *e = sqlite3_malloc64(sizeof(*e) * (size_t)(nrows ? nrows : 1));
  if (!e) {
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  int64_t n = 0;
  int has_null = 0, ok = 1;
  for (int i = 0; ok && i < nrows; i++) {
    sqlite3_value *v = rows[i];
    int ty = sqlite3_value_type(v);
    if (ty == SQLITE_NULL) {
      has_null = 1;
    } else if (text && ty == SQLITE_TEXT) {
      int nb = 0, op = GAK_CMP_IN;
      const void *z = ga_cl_text_bytes(p, v, &nb);
      ok = z && ga_cl_code_of(p, k->d, z, nb, &op, &e[n].i);
      e[n].type = GA_V_INT;
      n += ok && e[n].i >= 0; /* absent: never equal */
    } else if (text) {
      /* a number under TEXT affinity would become TEXT; none or BLOB
      ** affinity leaves it, never equal to TEXT; a BLOB never is */
      if (aff == AFF_TEXT && ty != SQLITE_BLOB)
        ok = ga_cl_no(p, "a number in a TEXT subquery's set%s", NULL);
    } else {
      if (ty == SQLITE_TEXT && aff == AFF_NUMERIC) {
        sqlite3_value *d = sqlite3_value_dup(v);
        if (!d) {
          p->rc = SQLITE_NOMEM;
          ok = 0;
          break;
        }
        ty = sqlite3_value_numeric_type(d); /* SQLite's NUMERIC affinity */
        if (ty == SQLITE_INTEGER)
          e[n].type = GA_V_INT, e[n].i = sqlite3_value_int64(d);
        else if (ty == SQLITE_FLOAT)
          e[n].type = GA_V_REAL, e[n].r = sqlite3_value_double(d);
        sqlite3_value_free(d);
      } else if (ty == SQLITE_INTEGER) {
        e[n].type = GA_V_INT, e[n].i = sqlite3_value_int64(v);
      } else if (ty == SQLITE_FLOAT) {
        e[n].type = GA_V_REAL, e[n].r = sqlite3_value_double(v);
      }
      if (ty == SQLITE_FLOAT && e[n].r == -0x1p63)
        ok = ga_cl_no(p,
                      "-9223372036854775808.0 in an IN subquery's set: "
                      "SQLite's plan decides%s",
                      NULL);
      n += ty == SQLITE_INTEGER || ty == SQLITE_FLOAT;
    }
  }
  ok = ok && !p->rc && emit_set(p, e, n, has_null);
  sqlite3_free(e);
  return ok;
}

/* x [NOT] IN ( literals ) (IN read): rule 3; x IN (?K): rule 4. */
static int x_in(parser *p, xk *k, int lhs_col, int cast) {
  ga_cx_env *env = p->q->env;
  if (ga_cl_next(p)->kind != T_LP)
    return ga_cl_no(p, "IN takes a list of literals here%s", NULL);
  sqlite3_value *const *rows;
  int nrows;
  const char *decl;
  if (ga_cl_peek(p)->kind == T_VAR && p->L.t[p->L.pos + 1].kind == T_RP &&
      ga_cl_in_slot(p, ga_cl_peek(p), &rows, &nrows, &decl)) {
    p->L.pos += 2;
    return x_in_set(p, k, lhs_col, cast, rows, nrows, decl);
  }
  if (k->k == K_STR)
    return ga_cl_no(p, "a string IN a list%s", NULL);
  if (k->k == K_CODE && !code_cmp_ok(p, k))
    return 0;
  int first = env->npool, has_null = 0;
  if (ga_cl_peek(p)->kind == T_RP) {
    ga_cl_next(p);
    return ga_cl_emit(p, GA_CX_IN, 0, first, 0, NULL);
  }
  for (;;) {
    tok *t = ga_cl_peek(p);
    xk e;
    int n0 = p->x->n, sp0 = p->sp;
    if (t->kind != T_NUM && t->kind != T_SIGN && t->kind != T_STR &&
        t->kind != T_VAR && !ga_cl_kw(t, "NULL"))
      return ga_cl_no(p, "IN takes a list of literals here%s", NULL);
    if (!x_unary(p, &e))
      return 0;
    if (e.k != K_STR && (p->x->n != n0 + 1 || p->x->ins[n0].op != GA_CX_LIT))
      return ga_cl_no(p, "IN takes a list of literals here%s", NULL);
    if (env->npool >= GA_CX_POOL)
      return ga_cl_no(p, "more IN elements than the cache takes%s", NULL);
    ga_value *v = &env->pool[env->npool];
    if (e.k == K_NULL) {
      has_null = 1;
    } else if (e.k == K_STR) {
      if (k->k != K_CODE)
        return ga_cl_no(p, "numbers IN a list of strings (affinity)%s", NULL);
      int op = GAK_CMP_IN;
      if (!code_lit(p, k->d, &e, &op))
        return 0;
      *v = p->x->ins[p->x->n - 1].v;
      if (v->i >= 0) /* absent: never equal */
        env->npool++;
    } else if (k->k == K_CODE) {
      return ga_cl_no(p, "TEXT IN a list of numbers%s", NULL);
    } else {
      *v = p->x->ins[p->x->n - 1].v; /* the literal just written */
      env->npool++;
    }
    p->x->n = n0, p->sp = sp0; /* the element lives in the pool */
    tok *s = ga_cl_next(p);
    if (s->kind == T_RP)
      break;
    if (s->kind != T_COMMA)
      return ga_cl_no(p, "IN takes a list of literals here%s", NULL);
  }
  return ga_cl_emit(p, GA_CX_IN, has_null, first, env->npool - first, NULL);
}

/* x [NOT] BETWEEN lo AND hi (BETWEEN read). */
static int x_between(parser *p, xk *k) {
  int op[2] = {GAK_CMP_GE, GAK_CMP_LE};
  if (k->k == K_STR)
    return ga_cl_no(p, "a string BETWEEN%s", NULL);
  for (int i = 0; i < 2; i++) {
    xk b;
    if (i && !ga_cl_kw(ga_cl_next(p), "AND"))
      return ga_cl_no(p, "BETWEEN needs AND%s", NULL);
    if (!x_rel(p, &b))
      return 0;
    if (k->k == K_CODE && b.k == K_STR) {
      if (!code_cmp_ok(p, k) || !code_lit(p, k->d, &b, &op[i]))
        return 0;
    } else if (!(is_num(k) && is_num(&b)) &&
               !(k->k == K_CODE && b.k == K_NULL)) {
      return ga_cl_no(p, "BETWEEN of TEXT and numbers%s", NULL);
    }
  }
  return ga_cl_emit(p, GA_CX_BETWEEN, 0, op[0], op[1], NULL);
}

static int x_eq(parser *p, xk *k) {
  int at = p->L.pos, n0 = p->x->n;
  if (!x_rel(p, k))
    return 0;
  /* rule 4: x a bare column (one token, one GA_CX_COL), or with a CAST */
  int lhs_col =
      p->L.pos == at + 1 && p->x->n == n0 + 1 && p->x->ins[n0].op == GA_CX_COL
          ? p->x->ins[n0].col
          : -1;
  int cast = 0;
  for (int i = at; i < p->L.pos; i++)
    cast |= ga_cl_kw(&p->L.t[i], "CAST");
  for (int first = 1;; first = 0) {
    if (!first)
      lhs_col = -1, cast = 0; /* x is a comparison's value */
    tok *t = ga_cl_peek(p);
    int neg = 0;
    xk b;
    if (t->kind == T_OP) { /* = == <> != */
      ga_cl_next(p);
      if (!x_rel(p, &b) || !compare(p, k, t->op, &b, 0))
        return 0;
    } else if (ga_cl_kw(t, "ISNULL") || ga_cl_kw(t, "NOTNULL")) {
      ga_cl_next(p);
      if (!ga_cl_emit(p, GA_CX_ISNULL, 0, ga_cl_kw(t, "NOTNULL"), 0, NULL))
        return 0;
    } else if (ga_cl_kw(t, "IS")) {
      ga_cl_next(p);
      if (ga_cl_kw(ga_cl_peek(p), "NOT"))
        ga_cl_next(p), neg = 1;
      const tok *nx = &p->L.t[p->L.pos + 1]; /* after NULL: x IS NULL > 1
                                                 is x IS (NULL > 1) */
      if (ga_cl_kw(ga_cl_peek(p), "NULL") && nx->kind != T_SIGN &&
          nx->kind != T_MULOP && nx->kind != T_OTHER &&
          !(nx->kind == T_OP && nx->op >= GAK_CMP_LT) &&
          !ga_cl_kw(nx, "COLLATE")) {
        ga_cl_next(p);
        if (k->k == K_STR)
          return ga_cl_no(p, "a string IS NULL%s", NULL);
        if (!ga_cl_emit(p, GA_CX_ISNULL, 0, neg, 0, NULL))
          return 0;
      } else if (!x_rel(p, &b) || !compare(p, k, neg, &b, 1)) {
        return 0;
      }
    } else if (ga_cl_kw(t, "NOT") || ga_cl_kw(t, "IN") ||
               ga_cl_kw(t, "BETWEEN")) {
      if (ga_cl_kw(t, "NOT")) {
        tok *u = &p->L.t[p->L.pos + 1];
        if (!ga_cl_kw(u, "NULL") && !ga_cl_kw(u, "IN") &&
            !ga_cl_kw(u, "BETWEEN"))
          return 1; /* NOT LIKE ...: not ours */
        ga_cl_next(p);
        neg = 1;
        if (ga_cl_kw(u, "NULL")) {
          ga_cl_next(p);
          if (!ga_cl_emit(p, GA_CX_ISNULL, 0, 1, 0, NULL))
            return 0;
          *k = bool_kind();
          continue;
        }
      }
      int in = ga_cl_kw(ga_cl_next(p), "IN");
      if (!(in ? x_in(p, k, lhs_col, cast) : x_between(p, k)))
        return 0;
      if (neg && !ga_cl_emit(p, GA_CX_NOT, 0, 0, 0, NULL))
        return 0;
    } else {
      return 1;
    }
    *k = bool_kind();
  }
}

/* Where a predicate may end: AND, OR, ), ',', CASE's words, the end. */
static int pred_end(const tok *t) {
  return t->kind == T_END || t->kind == T_RP || t->kind == T_COMMA ||
         ga_cl_kw(t, "AND") || ga_cl_kw(t, "OR") || ga_cl_kw(t, "THEN") ||
         ga_cl_kw(t, "WHEN") || ga_cl_kw(t, "ELSE") || ga_cl_kw(t, "END");
}

/* The end of the predicate that starts at token at: the first pred_end
** token at depth 0 (the AND of a BETWEEN skipped). */
static int span_end(parser *p, int at) {
  int depth = 0, between = 0;
  for (int i = at; i < p->L.n; i++) {
    const tok *t = &p->L.t[i];
    if (t->kind == T_LP || ga_cl_kw(t, "CASE")) {
      depth++;
    } else if (depth == 0 && ga_cl_kw(t, "BETWEEN")) {
      between++;
    } else if (depth == 0 && between && ga_cl_kw(t, "AND")) {
      between--;
    } else if (depth == 0 && pred_end(t)) {
      return i;
    } else if (t->kind == T_RP || ga_cl_kw(t, "END")) {
      depth--;
    }
  }
  return p->L.n - 1;
}

static int x_not(parser *p, xk *k) {
  int at = p->L.pos, n0 = p->x->n, sp0 = p->sp;
  int ok;
  if (ga_cl_kw(ga_cl_peek(p), "NOT")) {
    ga_cl_next(p);
    ok = x_not(p, k) && is_num(k) && ga_cl_emit(p, GA_CX_NOT, 0, 0, 0, NULL);
    if (ok)
      *k = bool_kind();
    else if (!p->why[0] && !p->rc)
      ga_cl_no(p, "NOT of TEXT%s", NULL);
  } else {
    ok = x_eq(p, k);
  }
  if (ok && pred_end(ga_cl_peek(p)))
    return 1;
  if (p->rc)
    return 0;
  /* rule 2: the whole predicate, derived */
  char keep[256];
  const tok *stop = ga_cl_peek(p);
  if (p->why[0])
    sqlite3_snprintf((int)sizeof keep, keep, "%s", p->why);
  else
    sqlite3_snprintf((int)sizeof keep, keep,
                     "the text from '%.*s' is not an expression the cache "
                     "runs",
                     stop->n > 20 ? 20 : stop->n, stop->z);
  p->why[0] = 0;
  p->L.pos = at, p->x->n = n0, p->sp = sp0;
  int end = span_end(p, at);
  int r = ga_cl_derive(p, at, end, k);
  if (r == 1) {
    p->L.pos = end;
    return 1;
  }
  if (r < 0 && !p->rc)
    sqlite3_snprintf((int)p->nwhy, p->why, "%s", keep);
  return 0;
}

static int logic(parser *p, xk *a, const xk *b, int op) {
  if (!is_num(a) || !is_num(b))
    return ga_cl_no(p, "TEXT in AND or OR%s", NULL);
  *a = bool_kind();
  return ga_cl_emit(p, op, 0, 0, 0, NULL);
}

/* left (word left)*: AND over NOTs, OR over ANDs. */
static int x_chain(parser *p, xk *k, const char *word, int op,
                   int (*sub)(parser *, xk *)) {
  if (!sub(p, k))
    return 0;
  while (ga_cl_kw(ga_cl_peek(p), word)) {
    ga_cl_next(p);
    xk b;
    if (!sub(p, &b) || !logic(p, k, &b, op))
      return 0;
  }
  return 1;
}

static int x_and(parser *p, xk *k) {
  return x_chain(p, k, "AND", GA_CX_AND, x_not);
}

static int x_or(parser *p, xk *k) {
  return x_chain(p, k, "OR", GA_CX_OR, x_and);
}

int ga_cl_program(parser *p, const char *z, ga_cexpr *x, xk *k) {
  lexer L = p->L;
  memset(&p->L, 0, sizeof(p->L));
  memset(x, 0, sizeof(*x));
  x->env = p->q->env;
  ga_cl_lex(&p->L, z);
  p->x = x;
  p->sp = 0;
  int ok = 0;
  if (p->L.nomem) {
    p->rc = SQLITE_NOMEM;
  } else {
    ok = x_or(p, k) && ga_cl_peek(p)->kind == T_END;
    /* a TEXT-affinity column without TEXT holds only NULLs; met by a
    ** number, its affinity would make that TEXT: bare or IS NULL only */
    for (int i = 0; ok && x->n > 1 && i < x->n; i++) {
      const ga_cx_ins *in = &x->ins[i];
      if (in->op == GA_CX_COL && !p->e->cols[in->col].dict &&
          p->e->cols[in->col].aff == GA_AFF_TEXT &&
          (i + 1 >= x->n || x->ins[i + 1].op != GA_CX_ISNULL))
        ok = ga_cl_no(p, "column %s has TEXT affinity",
                      p->e->cols[in->col].name);
    }
    if (ok && k->k == K_STR)
      ok = ga_cl_no(p, "%s is a string, not a column's value", z);
    if (!ok && !p->why[0] && !p->rc)
      ga_cl_no(p, "%s is not an expression the cache runs", z);
  }
  ga_cl_lexer_free(&p->L);
  p->L = L;
  return ok && !p->rc;
}
