/*
** qhaving.c — the HAVING conditions that SQLite moves into the WHERE
** clause (qhaving.h), so gpu_query's workers filter the same rows.
**
** SQLite 3.40 (select.c havingToWhere, expr.c
** sqlite3ExprIsConstantOrGroupBy) rewrites a query with GROUP BY and
** HAVING before it runs: each term of HAVING's top-level AND chain that
** reads only GROUP BY terms and constants moves into the WHERE clause
** (ANDed after it, in HAVING's order) and is 1 in HAVING.  The rows a
** moved term rejects then reach no aggregate: a group of them is never
** formed, so its sum never overflows, and a term reads each row's value
** (typeof(k) of 1 and 1.0 in one group).  gpu_query does the same
** (planner/query.c rule 12), so this file reads the terms as SQLite's
** parser builds them and decides as SQLite does.
**
** Rules:
**   1. The tree.  HAVING and the group terms are read with SQLite's
**      grammar and precedence (OR; AND; NOT; = == <> != IS [NOT] [DISTINCT
**      FROM] [NOT] LIKE GLOB REGEXP MATCH [ESCAPE], [NOT] BETWEEN ... AND,
**      [NOT] IN, ISNULL, NOTNULL, NOT NULL; < <= > >=; & | << >>; + -;
**      * / %; || -> ->>; COLLATE; unary - + ~), into the nodes SQLite
**      makes: parentheses make none, x IS NULL is x ISNULL, x LIKE y is
**      like(y, x), NOT LIKE / NOT IN / NOT BETWEEN are NOT of the node.
**      The parser's own rewrite is kept: an AND one of whose sides is the
**      integer literal 0 (sqlite3ExprAnd) is that 0, so `x AND 0 AND k =
**      1` moves nothing.  A column is its index (t.x, main.t.x, X and "x"
**      are one; the rowid under any of its names); an alias (no column of
**      the name) is its item's expression; a double-quoted word naming
**      neither is a string; TRUE and FALSE are constants.  A construct
**      outside this grammar (x IN table, RAISE, a name that is none of
**      these) is an error: planner/query.c then takes the serial path.
**   2. Equal trees (sqlite3ExprCompare): the same node kinds and children,
**      integers of 32 bits by value, other literals, CAST types and
**      parameters by their text (?1 and :a are two), function names and
**      collations without case; where the kinds differ, one side's
**      outermost COLLATE aside they may still be equal (result 1).
**   3. A term moves when it is not an AND, is not the always-false 0 or
**      FALSE, and every node of it is: equal (rule 2) to a GROUP BY term
**      whose collation is BINARY (its subtree is not read further), or a
**      literal, a parameter, or a function SQLite calls constant (a
**      deterministic one, pragma_function_list's flag 0x800, or
**      current_time/_date/_timestamp), or any operator over such nodes.
**      A column, an aggregate or a subquery (planner/qsubq.c's placeholder
**      parameters among them) keeps it in HAVING.  Only with GROUP BY
**      (planner/query.c asks only then).
**   4. A term that moves inside an alias's expression (HAVING f with f
**      the alias of `a = 1 AND c = 2`) is no span of the text: an error,
**      so the serial path, where SQLite itself moves it.
**   5. Folds (ga_qh_folds).  The spans of HAVING that rule 1's rewrite
**      makes the literal 0: an aggregate call only inside them is deleted
**      by SQLite's parser, so it is never in the query's AggInfo, never
**      finalised, and its sum's overflow raises nothing (issue 37).  Only
**      the literal 0 folds (also in parentheses, `(0)`): not FALSE, 0.0,
**      '0', +0, -0, NOT 1 or a parameter bound to 0 (no EP_IsFalse until
**      resolution, or never).  An alias reads its item, whose folds
**      count too (SQLite folded the item as it parsed it).
*/
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qhaving.h"

enum {
  N_COL = 1,
  N_INT,  /* a 32-bit integer literal: key its value */
  N_LIT,  /* another literal: key its kind and text */
  N_NULL, /* NULL */
  N_VAR,  /* a parameter */
  N_FUNC, /* a scalar function: key its name, lowercased */
  N_AGG,  /* an aggregate call */
  N_SUBQ, /* a subquery */
  N_CAST, /* key the type's text */
  N_COLLATE,
  N_OP,   /* an operator: key its name (and, or, =, not, isnull, ...) */
  N_CASE, /* key "case" or "case base" */
  N_VEC,  /* (a, b, ...) */
  N_IN    /* x IN (list): key "in" */
};

typedef struct hnode {
  int op;
  int a, b;      /* its tokens */
  char *key;     /* sqlite3_malloc'd; NULL where none */
  int64_t ival;  /* N_INT */
  int col;       /* N_COL */
  int kid, next; /* first child, next sibling; -1 none */
  int nkids;
  int lit0;     /* the literal 0 as the parser makes it (rule 1) */
  int falsy;    /* ExprAlwaysFalse: 0 or FALSE */
  int in_alias; /* inside an alias's expression */
} hnode;

typedef struct hp {
  sqlite3 *db;
  const char *z;
  const ga_qtok *t;
  int n, nparams;
  const ga_qh_names *nm;
  int i, end; /* the next token; the end of what is read */
  int subst;  /* aliases resolve (not in a select list item) */
  int in_alias;
  hnode *v;
  int nv, cap;
  int rc;
  const char *why;
  int *folds; /* ga_qh_folds: each folded AND's span, else NULL */
  int nfolds;
} hp;

static int tk(const hp *p, int i, const char *w) {
  return i >= 0 && i < p->end && p->t[i].type == GA_QT_ID &&
         (int)strlen(w) == p->t[i].len &&
         !sqlite3_strnicmp(p->z + p->t[i].off, w, p->t[i].len);
}

static int to(const hp *p, int i, const char *w) {
  return i >= 0 && i < p->end && p->t[i].type == GA_QT_OP &&
         (int)strlen(w) == p->t[i].len &&
         !memcmp(p->z + p->t[i].off, w, (size_t)p->t[i].len);
}

static int is_name(const hp *p, int i) {
  return i >= 0 && i < p->end &&
         (p->t[i].type == GA_QT_ID || p->t[i].type == GA_QT_QID);
}

static int bad(hp *p, const char *why) {
  if (p->rc == SQLITE_OK) {
    p->rc = SQLITE_ERROR;
    p->why = why;
  }
  return -1;
}

/* A new node; its index or -1. */
static int node(hp *p, int op, int a, int b, char *key) {
  if (p->rc != SQLITE_OK) {
    sqlite3_free(key);
    return -1;
  }
  if (p->nv == p->cap) {
    int cap = p->cap ? 2 * p->cap : 32;
    hnode *nv = sqlite3_realloc64(p->v, sizeof(hnode) * (size_t)cap);
    if (!nv) {
      sqlite3_free(key);
      p->rc = SQLITE_NOMEM;
      return -1;
    }
    p->v = nv;
    p->cap = cap;
  }
  hnode *x = &p->v[p->nv];
  memset(x, 0, sizeof(*x));
  x->op = op;
  x->a = a;
  x->b = b;
  x->key = key;
  x->kid = x->next = -1;
  x->col = -1;
  x->in_alias = p->in_alias;
  return p->nv++;
}

static char *dup_lower(const char *s, int len) {
  char *o = sqlite3_mprintf("%.*s", len, s);
  for (char *c = o; c && *c; c++)
    *c = (char)tolower((unsigned char)*c);
  return o;
}

/* A node with children k (in order, -1 ends them). */
static int with_kids(hp *p, int op, int a, int b, const char *key, int k1,
                     int k2, int k3) {
  char *kz = key ? sqlite3_mprintf("%s", key) : NULL;
  if (key && !kz) {
    p->rc = SQLITE_NOMEM;
    return -1;
  }
  int x = node(p, op, a, b, kz);
  if (x < 0 || k1 < 0)
    return x;
  int ks[3] = {k1, k2, k3}, last = -1;
  for (int j = 0; j < 3 && ks[j] >= 0; j++) {
    if (last < 0)
      p->v[x].kid = ks[j];
    else
      p->v[last].next = ks[j];
    last = ks[j];
    p->v[x].nkids++;
  }
  return x;
}

static void add_kid(hp *p, int x, int k) {
  if (x < 0 || k < 0)
    return;
  int *at = &p->v[x].kid;
  while (*at >= 0)
    at = &p->v[*at].next;
  *at = k;
  p->v[x].nkids++;
}

static int parse_expr(hp *p, int min);

/* The token after the parenthesis that opens at i. */
static int past_paren(const hp *p, int i) {
  int depth = 0;
  for (; i < p->end; i++) {
    if (to(p, i, "("))
      depth++;
    else if (to(p, i, ")") && --depth == 0)
      return i + 1;
  }
  return p->end;
}

/* The expression [a, b) of an item (an alias's): its tree. */
static int parse_span(hp *p, int a, int b, int subst) {
  int si = p->i, se = p->end, ss = p->subst, sa = p->in_alias;
  p->i = a;
  p->end = b;
  p->subst = subst;
  p->in_alias = 1;
  int x = parse_expr(p, 1);
  if (p->i != b)
    x = bad(p, "an alias's expression");
  p->i = si;
  p->end = se;
  p->subst = ss;
  p->in_alias = sa;
  return x;
}

/* A function call named at token i, its '(' at i + 1. */
static int parse_call(hp *p, int i) {
  int end = p->nm->agg(p->nm->arg, i);
  if (end >= 0) { /* an aggregate of the text */
    p->i = end;
    return node(p, N_AGG, i, end, NULL);
  }
  int x = node(p, N_FUNC, i, i + 1, dup_lower(p->z + p->t[i].off, p->t[i].len));
  if (x >= 0 && !p->v[x].key)
    p->rc = SQLITE_NOMEM;
  p->i = i + 2;
  if (tk(p, p->i, "DISTINCT") || tk(p, p->i, "ALL") || to(p, p->i, "*"))
    return bad(p, "a function's DISTINCT, ALL or *");
  if (!to(p, p->i, ")"))
    for (;;) {
      add_kid(p, x, parse_expr(p, 1));
      if (p->rc != SQLITE_OK)
        return -1;
      if (!to(p, p->i, ","))
        break;
      p->i++;
    }
  if (!to(p, p->i, ")"))
    return bad(p, "a function's arguments");
  p->i++;
  if (tk(p, p->i, "FILTER") || tk(p, p->i, "OVER"))
    return bad(p, "a window function or FILTER");
  if (x >= 0)
    p->v[x].b = p->i;
  return x;
}

/* A name (a column, an alias, a string, TRUE/FALSE) at token i. */
static int parse_name(hp *p, int i) {
  int last = i;
  while (to(p, last + 1, ".") && is_name(p, last + 2))
    last += 2;
  p->i = last + 1;
  int c = p->nm->col(p->nm->arg, last);
  if (c != -1) {
    int x = node(p, N_COL, i, last + 1, NULL);
    if (x >= 0)
      p->v[x].col = c;
    return x;
  }
  if (last != i)
    return bad(p, "a qualified name that is no column");
  int ia, ib;
  if (p->subst && p->nm->alias(p->nm->arg, i, &ia, &ib)) {
    int x = parse_span(p, ia, ib, 0);
    if (x >= 0) { /* its tokens, for the text: the alias's */
      p->v[x].a = i;
      p->v[x].b = i + 1;
      p->v[x].lit0 = 0;               /* the parser saw a name (rule 1) */
      p->v[x].in_alias = p->in_alias; /* the whole of it: the alias's text */
    }
    return x;
  }
  const ga_qtok *t = &p->t[i];
  const char *s = p->z + t->off;
  if (t->type == GA_QT_QID && s[0] == '"') { /* a string (DQS) */
    sqlite3_str *o = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(o, 1, 's');
    for (int j = 1; j < t->len - 1; j++) {
      sqlite3_str_appendchar(o, 1, s[j]);
      if (s[j] == '"')
        j++;
    }
    return node(p, N_LIT, i, i + 1, sqlite3_str_finish(o));
  }
  if (tk(p, i, "TRUE") || tk(p, i, "FALSE")) {
    int x = node(p, N_LIT, i, i + 1, sqlite3_mprintf("t%.*s", t->len, s));
    if (x >= 0)
      p->v[x].falsy = tk(p, i, "FALSE");
    return x;
  }
  return bad(p, "a name that is no column, alias or string");
}

static int parse_primary(hp *p) {
  int i = p->i;
  if (i >= p->end)
    return bad(p, "an expression ends early");
  const ga_qtok *t = &p->t[i];
  const char *s = p->z + t->off;
  if (to(p, i, "(")) {
    if (tk(p, i + 1, "SELECT") || tk(p, i + 1, "WITH") ||
        tk(p, i + 1, "VALUES")) {
      p->i = past_paren(p, i);
      return node(p, N_SUBQ, i, p->i, NULL);
    }
    p->i = i + 1;
    int x = parse_expr(p, 1);
    if (to(p, p->i, ",")) { /* a row value */
      int v = with_kids(p, N_VEC, i, i, NULL, x, -1, -1);
      while (p->rc == SQLITE_OK && to(p, p->i, ",")) {
        p->i++;
        add_kid(p, v, parse_expr(p, 1));
      }
      x = v;
    }
    if (!to(p, p->i, ")"))
      return bad(p, "a parenthesis");
    p->i++;
    if (x >= 0) { /* parentheses make no node: the tokens are its own */
      p->v[x].a = i;
      p->v[x].b = p->i;
    }
    return x;
  }
  if (to(p, i, "-") || to(p, i, "+") || to(p, i, "~")) {
    p->i = i + 1;
    int k = parse_expr(p, 12);
    int x = with_kids(p, N_OP, i, p->i,
                      to(p, i, "-")   ? "u-"
                      : to(p, i, "+") ? "u+"
                                      : "~",
                      k, -1, -1);
    return x;
  }
  if (tk(p, i, "NOT")) {
    p->i = i + 1;
    int k = parse_expr(p, 3);
    return with_kids(p, N_OP, i, p->i, "not", k, -1, -1);
  }
  if (t->type == GA_QT_NUM) {
    int v;
    p->i = i + 1;
    if (ga_qt_int32(p->z, t, &v)) {
      int x = node(p, N_INT, i, i + 1, NULL);
      if (x >= 0) {
        p->v[x].ival = v;
        p->v[x].lit0 = p->v[x].falsy = v == 0;
      }
      return x;
    }
    return node(p, N_LIT, i, i + 1, sqlite3_mprintf("n%.*s", t->len, s));
  }
  if (t->type == GA_QT_STR) {
    sqlite3_str *o = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(o, 1, 's');
    for (int j = 1; j < t->len - 1; j++) {
      sqlite3_str_appendchar(o, 1, s[j]);
      if (s[j] == '\'')
        j++;
    }
    p->i = i + 1;
    return node(p, N_LIT, i, i + 1, sqlite3_str_finish(o));
  }
  if (t->type == GA_QT_BLOB) {
    p->i = i + 1;
    return node(p, N_LIT, i, i + 1, sqlite3_mprintf("b%.*s", t->len, s));
  }
  if (t->type == GA_QT_VAR) {
    p->i = i + 1;
    if (t->var > p->nparams) /* planner/qsubq.c's placeholder: a subquery */
      return node(p, N_SUBQ, i, i + 1, NULL);
    return node(p, N_VAR, i, i + 1,
                sqlite3_mprintf("%.*s#%d", t->len, s, t->var));
  }
  if (tk(p, i, "NULL")) {
    p->i = i + 1;
    return node(p, N_NULL, i, i + 1, NULL);
  }
  if (tk(p, i, "CURRENT_TIME") || tk(p, i, "CURRENT_DATE") ||
      tk(p, i, "CURRENT_TIMESTAMP")) { /* SLOCHNG: constant (rule 3) */
    p->i = i + 1;
    return node(p, N_FUNC, i, i + 1, dup_lower(s, t->len));
  }
  if (tk(p, i, "EXISTS") && to(p, i + 1, "(")) {
    p->i = past_paren(p, i + 1);
    return node(p, N_SUBQ, i, p->i, NULL);
  }
  if (tk(p, i, "CAST") && to(p, i + 1, "(")) {
    p->i = i + 2;
    int k = parse_expr(p, 1);
    if (!tk(p, p->i, "AS"))
      return bad(p, "a CAST");
    int ta = p->i + 1, tb = past_paren(p, i + 1) - 1; /* the type: [ta, tb) */
    if (tb <= ta || p->rc != SQLITE_OK)
      return bad(p, "a CAST");
    p->i = tb + 1;
    int x = node(p, N_CAST, i, p->i,
                 sqlite3_mprintf(
                     "%.*s", p->t[tb - 1].off + p->t[tb - 1].len - p->t[ta].off,
                     p->z + p->t[ta].off));
    add_kid(p, x, k);
    return x;
  }
  if (tk(p, i, "CASE")) {
    p->i = i + 1;
    int base = -1;
    if (!tk(p, p->i, "WHEN"))
      base = parse_expr(p, 1);
    int x = with_kids(p, N_CASE, i, i, base >= 0 ? "case base" : "case", base,
                      -1, -1);
    while (p->rc == SQLITE_OK && tk(p, p->i, "WHEN")) {
      p->i++;
      add_kid(p, x, parse_expr(p, 1));
      if (!tk(p, p->i, "THEN"))
        return bad(p, "a CASE");
      p->i++;
      add_kid(p, x, parse_expr(p, 1));
    }
    if (tk(p, p->i, "ELSE")) {
      p->i++;
      add_kid(p, x, parse_expr(p, 1));
    }
    if (!tk(p, p->i, "END"))
      return bad(p, "a CASE");
    p->i++;
    if (x >= 0)
      p->v[x].b = p->i;
    return x;
  }
  if (is_name(p, i) && to(p, i + 1, "(") && t->type == GA_QT_ID)
    return parse_call(p, i);
  if (is_name(p, i))
    return parse_name(p, i);
  return bad(p, "a token it cannot read");
}

/* x LIKE y [ESCAPE e] is like(y, x[, e]) (rule 1), under NOT for NOT LIKE. */
static int like_node(hp *p, int x, int opi, int neg) {
  char *name = dup_lower(p->z + p->t[opi].off, p->t[opi].len);
  int y = parse_expr(p, 5), e = -1;
  if (tk(p, p->i, "ESCAPE")) {
    p->i++;
    e = parse_expr(p, 7);
  }
  int f = node(p, N_FUNC, x >= 0 ? p->v[x].a : opi, p->i, name);
  add_kid(p, f, y);
  add_kid(p, f, x);
  add_kid(p, f, e);
  return neg ? with_kids(p, N_OP, f >= 0 ? p->v[f].a : opi, p->i, "not", f, -1,
                         -1)
             : f;
}

/* x ISNULL / NOTNULL; where x cannot be NULL (sqlite3ExprCanBeNull: a
** literal, the rowid, a NOT NULL column, under unary + and -) resolve.c
** makes it FALSE / TRUE, so `5 IS NULL` is always false (rule 1). */
static int null_test(hp *p, int a, int x, int isnull) {
  int k = x;
  while (k >= 0 && p->v[k].op == N_OP &&
         (!strcmp(p->v[k].key, "u+") || !strcmp(p->v[k].key, "u-")))
    k = p->v[k].kid;
  int never =
      k >= 0 &&
      (p->v[k].op == N_INT || (p->v[k].op == N_LIT && p->v[k].key[0] != 't') ||
       (p->v[k].op == N_COL && (p->v[k].col == GA_QH_ROWID ||
                                p->nm->notnull(p->nm->arg, p->v[k].col))));
  if (!never)
    return with_kids(p, N_OP, a, p->i, isnull ? "isnull" : "notnull", x, -1,
                     -1);
  int t = node(p, N_LIT, a, p->i, sqlite3_mprintf(isnull ? "tfalse" : "ttrue"));
  if (t >= 0)
    p->v[t].falsy = isnull;
  return t;
}

/* Binary operators at or above level min (rule 1's precedence, 1 = OR). */
static int parse_expr(hp *p, int min) {
  int x = parse_primary(p);
  while (p->rc == SQLITE_OK && p->i < p->end) {
    int i = p->i, a = x >= 0 ? p->v[x].a : i;
    const char *bin = NULL;
    int lvl = 0;
    if (tk(p, i, "OR"))
      bin = "or", lvl = 1;
    else if (tk(p, i, "AND"))
      bin = "and", lvl = 2;
    else if (to(p, i, "=") || to(p, i, "=="))
      bin = "=", lvl = 4;
    else if (to(p, i, "<>") || to(p, i, "!="))
      bin = "<>", lvl = 4;
    else if (to(p, i, "<") || to(p, i, "<=") || to(p, i, ">") || to(p, i, ">="))
      lvl = 5;
    else if (to(p, i, "&") || to(p, i, "|") || to(p, i, "<<") || to(p, i, ">>"))
      lvl = 7;
    else if (to(p, i, "+") || to(p, i, "-"))
      lvl = 8;
    else if (to(p, i, "*") || to(p, i, "/") || to(p, i, "%"))
      lvl = 9;
    else if (to(p, i, "||") || to(p, i, "->") || to(p, i, "->>"))
      lvl = 10;
    else if (tk(p, i, "COLLATE"))
      lvl = 11;
    else if (tk(p, i, "IS") || tk(p, i, "ISNULL") || tk(p, i, "NOTNULL") ||
             tk(p, i, "LIKE") || tk(p, i, "GLOB") || tk(p, i, "REGEXP") ||
             tk(p, i, "MATCH") || tk(p, i, "BETWEEN") || tk(p, i, "IN") ||
             (tk(p, i, "NOT") &&
              (tk(p, i + 1, "NULL") || tk(p, i + 1, "LIKE") ||
               tk(p, i + 1, "GLOB") || tk(p, i + 1, "REGEXP") ||
               tk(p, i + 1, "MATCH") || tk(p, i + 1, "BETWEEN") ||
               tk(p, i + 1, "IN"))))
      lvl = 4;
    if (lvl == 0 || lvl < min)
      break;
    if (bin || lvl == 5 || lvl == 7 || lvl == 8 || lvl == 9) {
      char op[4];
      sqlite3_snprintf(sizeof op, op, "%.*s", p->t[i].len, p->z + p->t[i].off);
      p->i = i + 1;
      int y = parse_expr(p, lvl + 1);
      if (bin && !strcmp(bin, "and") &&
          ((x >= 0 && p->v[x].lit0) || (y >= 0 && p->v[y].lit0))) {
        /* sqlite3ExprAnd: the literal 0 (rule 1) */
        if (p->folds) { /* rule 5 */
          p->folds[2 * p->nfolds] = a;
          p->folds[2 * p->nfolds + 1] = p->i;
          p->nfolds++;
        }
        x = node(p, N_INT, a, p->i, NULL);
        if (x >= 0)
          p->v[x].lit0 = p->v[x].falsy = 1;
        continue;
      }
      x = with_kids(p, N_OP, a, p->i, bin ? bin : op, x, y, -1);
      continue;
    }
    if (lvl == 10) { /* || is an operator; -> and ->> are functions */
      int arrow = !to(p, i, "||");
      char name[4];
      sqlite3_snprintf(sizeof name, name, "%.*s", p->t[i].len,
                       p->z + p->t[i].off);
      p->i = i + 1;
      int y = parse_expr(p, 11);
      x = with_kids(p, arrow ? N_FUNC : N_OP, a, p->i, name, x, y, -1);
      continue;
    }
    if (lvl == 11) {
      if (!is_name(p, i + 1))
        return bad(p, "a COLLATE");
      const ga_qtok *c = &p->t[i + 1];
      char *name = c->type == GA_QT_QID
                       ? dup_lower(p->z + c->off + 1, c->len - 2)
                       : dup_lower(p->z + c->off, c->len);
      p->i = i + 2;
      int k = x;
      x = node(p, N_COLLATE, a, p->i, name);
      add_kid(p, x, k);
      continue;
    }
    /* level 4's words */
    int neg = tk(p, i, "NOT");
    int w = i + neg;
    if (tk(p, w, "ISNULL") || tk(p, w, "NOTNULL") || tk(p, w, "NULL")) {
      p->i = w + 1;
      x = null_test(p, a, x, tk(p, w, "ISNULL"));
    } else if (tk(p, w, "IS")) {
      int isnot = tk(p, w + 1, "NOT");
      int j = w + 1 + isnot;
      if (tk(p, j, "DISTINCT") && tk(p, j + 1, "FROM")) {
        isnot = !isnot;
        j += 2;
      }
      p->i = j;
      if (tk(p, j, "NULL") && !(to(p, j + 1, ".") || to(p, j + 1, "("))) {
        /* x IS NULL is x ISNULL (the parser's binaryToUnaryIfNull) */
        int y = parse_expr(p, 5);
        if (y >= 0 && p->v[y].op == N_NULL) {
          x = null_test(p, a, x, !isnot);
          continue;
        }
        x = with_kids(p, N_OP, a, p->i, isnot ? "isnot" : "is", x, y, -1);
        continue;
      }
      int y = parse_expr(p, 5);
      x = with_kids(p, N_OP, a, p->i, isnot ? "isnot" : "is", x, y, -1);
    } else if (tk(p, w, "LIKE") || tk(p, w, "GLOB") || tk(p, w, "REGEXP") ||
               tk(p, w, "MATCH")) {
      p->i = w + 1;
      x = like_node(p, x, w, neg);
    } else if (tk(p, w, "BETWEEN")) {
      p->i = w + 1;
      int lo = parse_expr(p, 3);
      if (!tk(p, p->i, "AND"))
        return bad(p, "a BETWEEN");
      p->i++;
      int hi = parse_expr(p, 5);
      x = with_kids(p, N_OP, a, p->i, "between", x, lo, hi);
      if (neg)
        x = with_kids(p, N_OP, a, p->i, "not", x, -1, -1);
    } else if (tk(p, w, "IN")) {
      p->i = w + 1;
      if (!to(p, p->i, "("))
        return bad(p, "IN a table");
      if (tk(p, p->i + 1, "SELECT") || tk(p, p->i + 1, "WITH") ||
          tk(p, p->i + 1, "VALUES")) {
        p->i = past_paren(p, p->i);
        x = node(p, N_SUBQ, a, p->i, NULL);
      } else {
        int k = x;
        x = with_kids(p, N_IN, a, a, "in", k, -1, -1);
        p->i++;
        while (p->rc == SQLITE_OK && !to(p, p->i, ")")) {
          add_kid(p, x, parse_expr(p, 1));
          if (to(p, p->i, ","))
            p->i++;
          else if (!to(p, p->i, ")"))
            return bad(p, "an IN list");
        }
        p->i++;
        if (x >= 0)
          p->v[x].b = p->i;
      }
      if (neg)
        x = with_kids(p, N_OP, a, p->i, "not", x, -1, -1);
    } else {
      return bad(p, "an operator it cannot read");
    }
  }
  return p->rc == SQLITE_OK ? x : -1;
}

/* sqlite3ExprCompare (rule 2): 0 equal, 1 equal but for a COLLATE at the
** top, 2 different. */
static int same_kind(const hnode *x, const hnode *y) {
  if (x->op != y->op)
    return 0;
  return x->op != N_OP || !strcmp(x->key, y->key);
}

static int cmp(const hp *p, int ia, int ib) {
  if (ia < 0 || ib < 0)
    return ia == ib ? 0 : 2;
  const hnode *x = &p->v[ia], *y = &p->v[ib];
  if (x->op == N_INT || y->op == N_INT)
    return x->op == y->op && x->ival == y->ival ? 0 : 2;
  if (!same_kind(x, y)) {
    /* (on HAVING's side this changes nothing rule 3 sees: its walk reaches
    ** the COLLATE's operand anyway; on the group term's it does) */
    if (x->op == N_COLLATE && cmp(p, x->kid, ib) < 2)
      return 1;
    if (y->op == N_COLLATE && cmp(p, ia, y->kid) < 2)
      return 1;
    return 2;
  }
  if (x->op == N_NULL)
    return 0;
  if (x->op == N_COL && x->col != y->col)
    return 2;
  if (x->op == N_AGG || x->op == N_SUBQ) /* never equal: their trees are
                                            not read */
    return 2;
  if (x->key && y->key) {
    int ci = x->op == N_FUNC || x->op == N_COLLATE;
    if (ci ? sqlite3_stricmp(x->key, y->key) : strcmp(x->key, y->key))
      return 2;
  } else if (x->key || y->key) {
    return 2;
  }
  if (x->nkids != y->nkids)
    return 2;
  for (int a = x->kid, b = y->kid; a >= 0 && b >= 0;
       a = p->v[a].next, b = p->v[b].next)
    if (cmp(p, a, b) != 0)
      return 2;
  return 0;
}

/* Is the function of node k constant (rule 3)?  pragma_function_list:
** the definition of its number of arguments, else the variadic one. */
static int const_func(hp *p, int k) {
  const hnode *x = &p->v[k];
  if (!strcmp(x->key, "current_time") || !strcmp(x->key, "current_date") ||
      !strcmp(x->key, "current_timestamp"))
    return 1;
  sqlite3_stmt *st = NULL;
  int r = -1;
  int rc = sqlite3_prepare_v2(p->db,
                              "SELECT flags & 2048 FROM pragma_function_list "
                              "WHERE name = ?1 COLLATE NOCASE AND narg IN "
                              "(?2, -1) ORDER BY narg = ?2 DESC LIMIT 1",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, x->key, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, x->nkids);
    if (sqlite3_step(st) == SQLITE_ROW)
      r = sqlite3_column_int(st, 0) != 0;
    rc = sqlite3_finalize(st);
  }
  if (rc == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  else if (r < 0)
    bad(p, "a function pragma_function_list does not name");
  return r > 0;
}

/* sqlite3ExprIsConstantOrGroupBy (rule 3) over node k. */
static int const_or_group(hp *p, int k, const int *groups, int ng) {
  for (int g = 0; g < ng; g++)
    if (cmp(p, k, groups[g]) < 2)
      return 1;
  const hnode *x = &p->v[k];
  if (x->op == N_COL || x->op == N_AGG || x->op == N_SUBQ)
    return 0;
  if (x->op == N_FUNC && !const_func(p, k))
    return 0;
  for (int c = x->kid; c >= 0; c = p->v[c].next)
    if (!const_or_group(p, c, groups, ng))
      return 0;
  return 1;
}

/* havingToWhere's walk over HAVING's AND chain. */
static void walk(hp *p, int k, const int *groups, int ng, int *moved,
                 int *nmoved) {
  if (k < 0 || p->rc != SQLITE_OK)
    return;
  const hnode *x = &p->v[k];
  if (x->op == N_OP && !strcmp(x->key, "and")) {
    walk(p, x->kid, groups, ng, moved, nmoved);
    walk(p, p->v[x->kid].next, groups, ng, moved, nmoved);
    return;
  }
  if (!x->falsy && const_or_group(p, k, groups, ng) && p->rc == SQLITE_OK) {
    if (x->in_alias) {
      bad(p, "a HAVING condition on GROUP BY terms inside an alias's "
             "expression");
      return;
    }
    moved[2 * *nmoved] = x->a;
    moved[2 * *nmoved + 1] = x->b;
    (*nmoved)++;
  }
}

int ga_qh_moved(sqlite3 *db, const char *z, const ga_qtok *t, int n,
                int nparams, const ga_qh_names *nm, const ga_qh_term *terms,
                int nterms, int a, int b, int *moved, int *nmoved,
                const char **why) {
  hp P, *p = &P;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->z = z;
  p->t = t;
  p->n = n;
  p->nparams = nparams;
  p->nm = nm;
  *nmoved = 0;
  *why = NULL;
  int groups[32], ng = 0;
  for (int k = 0; k < nterms && k < 32 && p->rc == SQLITE_OK; k++) {
    if (!terms[k].binary) /* rule 3: only a BINARY term prunes */
      continue;
    p->i = terms[k].a;
    p->end = terms[k].b;
    p->subst = !terms[k].item;
    int g = parse_expr(p, 1);
    if (p->rc == SQLITE_OK && p->i != terms[k].b)
      g = bad(p, "a GROUP BY term");
    if (g >= 0 && terms[k].coll >= 0) { /* a column number's COLLATE */
      const ga_qtok *c = &t[terms[k].coll];
      char *name = c->type == GA_QT_QID ? dup_lower(z + c->off + 1, c->len - 2)
                                        : dup_lower(z + c->off, c->len);
      int x = node(p, N_COLLATE, terms[k].a, terms[k].b, name);
      add_kid(p, x, g);
      g = x;
    }
    if (g >= 0)
      groups[ng++] = g;
  }
  int h = -1;
  if (p->rc == SQLITE_OK) {
    p->i = a;
    p->end = b;
    p->subst = 1;
    p->in_alias = 0;
    h = parse_expr(p, 1);
    if (p->rc == SQLITE_OK && p->i != b)
      h = bad(p, "the HAVING clause");
  }
  if (p->rc == SQLITE_OK)
    walk(p, h, groups, ng, moved, nmoved);
  for (int k = 0; k < p->nv; k++)
    sqlite3_free(p->v[k].key);
  sqlite3_free(p->v);
  if (p->rc != SQLITE_OK)
    *nmoved = 0;
  *why = p->why;
  return p->rc;
}

int ga_qh_folds(sqlite3 *db, const char *z, const ga_qtok *t, int n,
                int nparams, const ga_qh_names *nm, int a, int b, int *folds,
                int *nfolds, const char **why) {
  hp P, *p = &P;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->z = z;
  p->t = t;
  p->n = n;
  p->nparams = nparams;
  p->nm = nm;
  p->folds = folds;
  p->i = a;
  p->end = b;
  p->subst = 1;
  int h = parse_expr(p, 1);
  (void)h;
  if (p->rc == SQLITE_OK && p->i != b)
    bad(p, "the HAVING clause");
  for (int k = 0; k < p->nv; k++)
    sqlite3_free(p->v[k].key);
  sqlite3_free(p->v);
  *nfolds = p->rc == SQLITE_OK ? p->nfolds : 0;
  *why = p->why;
  return p->rc;
}
