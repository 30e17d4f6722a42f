/*
** qtok.c — the tokens of a gpu_query text (qtok.h), for planner/query.c
** and planner/qrewrite.c: identifiers (quoted or not), strings, numbers,
** parameters, blobs and operators, with their offsets in the text;
** comments and spaces dropped.
**
** Rules:
**   1. FILTER, OVER and WINDOW are keywords only where SQLite 3.40's
**      tokenizer makes them one (tokenize.c, analyzeFilterKeyword and its
**      siblings); elsewhere they are identifiers (ga_qtok.ident), so
**      "sum(x) filter FROM t" names the item filter, as SQLite does, and
**      a column or alias named over is a name.  FILTER: after ")" and
**      before "(".  OVER: after ")" and before "(" or a word SQLite's
**      getToken() reads as an identifier (a name, quoted or not, a string,
**      or a keyword that falls back to one: every keyword but the reserved
**      ones of qt_reserved).  WINDOW: before such a word followed by AS.
*/
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qtok.h"

static int qt_id_start(unsigned char c) {
  return isalpha(c) || c == '_' || c >= 0x80;
}

static int qt_id_char(unsigned char c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* The keywords that never fall back to an identifier in SQLite 3.40's
** grammar (parse.y's %fallback ID list and JOIN_KW leave exactly these
** out), FILTER among them (it is no fallback; the tokenizer decides). */
static int qt_reserved(const char *z, int n) {
  static const char *const words[] = {
      "ADD",         "ALL",      "ALTER",
      "AND",         "AS",       "AUTOINCREMENT",
      "BETWEEN",     "CASE",     "CHECK",
      "COLLATE",     "COMMIT",   "CONSTRAINT",
      "CREATE",      "DEFAULT",  "DEFERRABLE",
      "DELETE",      "DISTINCT", "DROP",
      "ELSE",        "ESCAPE",   "EXCEPT",
      "EXISTS",      "FILTER",   "FOREIGN",
      "FROM",        "GROUP",    "HAVING",
      "IN",          "INDEX",    "INSERT",
      "INTERSECT",   "INTO",     "IS",
      "ISNULL",      "JOIN",     "LIMIT",
      "NOT",         "NOTHING",  "NOTNULL",
      "NULL",        "ON",       "OR",
      "ORDER",       "PRIMARY",  "REFERENCES",
      "RETURNING",   "SELECT",   "SET",
      "TABLE",       "THEN",     "TO",
      "TRANSACTION", "UNION",    "UNIQUE",
      "UPDATE",      "USING",    "VALUES",
      "WHEN",        "WHERE",    NULL};
  for (int k = 0; words[k]; k++)
    if ((int)strlen(words[k]) == n && !sqlite3_strnicmp(z, words[k], n))
      return 1;
  return 0;
}

static int qt_word(const char *z, const ga_qtok *t, int n, int i,
                   const char *w) {
  return i >= 0 && i < n && t[i].type == GA_QT_ID &&
         (int)strlen(w) == t[i].len &&
         !sqlite3_strnicmp(z + t[i].off, w, t[i].len);
}

static int qt_op(const char *z, const ga_qtok *t, int n, int i, char c) {
  return i >= 0 && i < n && t[i].type == GA_QT_OP && t[i].len == 1 &&
         z[t[i].off] == c;
}

/* Rule 1: does SQLite's getToken() read token i as TK_ID? */
static int qt_idlike(const char *z, const ga_qtok *t, int n, int i) {
  if (i < 0 || i >= n)
    return 0;
  if (t[i].type == GA_QT_QID || t[i].type == GA_QT_STR)
    return 1;
  return t[i].type == GA_QT_ID && !qt_reserved(z + t[i].off, t[i].len);
}

int ga_qt_ctx_keyword(const char *z, const ga_qtok *t) {
  return !t->ident &&
         (qt_word(z, t, 1, 0, "FILTER") || qt_word(z, t, 1, 0, "OVER") ||
          qt_word(z, t, 1, 0, "WINDOW"));
}

/* Rule 1 over every token. */
static void qt_context_keywords(const char *z, ga_qtok *t, int n) {
  for (int i = 0; i < n; i++) {
    if (qt_word(z, t, n, i, "FILTER"))
      t[i].ident = !(qt_op(z, t, n, i - 1, ')') && qt_op(z, t, n, i + 1, '('));
    else if (qt_word(z, t, n, i, "OVER"))
      t[i].ident = !(qt_op(z, t, n, i - 1, ')') &&
                     (qt_op(z, t, n, i + 1, '(') || qt_idlike(z, t, n, i + 1)));
    else if (qt_word(z, t, n, i, "WINDOW"))
      t[i].ident =
          !(qt_idlike(z, t, n, i + 1) && qt_word(z, t, n, i + 2, "AS"));
  }
}

/* z into tokens; 0, 1 (unterminated string, quote or comment), or
** SQLITE_NOMEM (as -1). */
int ga_q_tokenize(const char *z, ga_qtok **out, int *nout) {
  int n = 0, cap = 0;
  ga_qtok *v = NULL;
  const unsigned char *s = (const unsigned char *)z;
  int i = 0;
  for (;;) {
    while (s[i] && isspace(s[i]))
      i++;
    if (!s[i])
      break;
    if (s[i] == '-' && s[i + 1] == '-') {
      while (s[i] && s[i] != '\n')
        i++;
      continue;
    }
    if (s[i] == '/' && s[i + 1] == '*') {
      const char *e = strstr(z + i + 2, "*/");
      if (!e)
        goto bad;
      i = (int)(e - z) + 2;
      continue;
    }
    ga_qtok t = {0, i, 0, 0, 0};
    unsigned char c = s[i];
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      unsigned char close = c == '[' ? ']' : c;
      int j = i + 1;
      for (;;) {
        if (!s[j])
          goto bad;
        if (s[j] == close) {
          if (close != ']' && s[j + 1] == close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      t.type = c == '\'' ? GA_QT_STR : GA_QT_QID;
      t.len = j + 1 - i;
    } else if ((c == 'x' || c == 'X') && s[i + 1] == '\'') {
      int j = i + 2;
      while (s[j] && s[j] != '\'')
        j++;
      if (!s[j])
        goto bad;
      t.type = GA_QT_BLOB;
      t.len = j + 1 - i;
    } else if (isdigit(c) || (c == '.' && isdigit(s[i + 1]))) {
      int j = i;
      if (c == '0' && (s[j + 1] == 'x' || s[j + 1] == 'X')) {
        j += 2;
        while (isxdigit(s[j]))
          j++;
      } else {
        while (isdigit(s[j]) || s[j] == '_')
          j++;
        if (s[j] == '.') {
          j++;
          while (isdigit(s[j]) || s[j] == '_')
            j++;
        }
        if ((s[j] == 'e' || s[j] == 'E') &&
            (isdigit(s[j + 1]) ||
             ((s[j + 1] == '+' || s[j + 1] == '-') && isdigit(s[j + 2])))) {
          j += 2;
          while (isdigit(s[j]))
            j++;
        }
      }
      t.type = GA_QT_NUM;
      t.len = j - i;
    } else if (c == '?') {
      int j = i + 1;
      while (isdigit(s[j]))
        j++;
      t.type = GA_QT_VAR;
      t.len = j - i;
    } else if ((c == ':' || c == '@' || c == '$' || c == '#') &&
               qt_id_char(s[i + 1])) {
      int j = i + 1;
      while (qt_id_char(s[j]) || (s[j] == ':' && s[j + 1] == ':'))
        j += s[j] == ':' ? 2 : 1;
      t.type = GA_QT_VAR;
      t.len = j - i;
    } else if (qt_id_start(c)) {
      int j = i;
      while (qt_id_char(s[j]))
        j++;
      t.type = GA_QT_ID;
      t.len = j - i;
    } else {
      static const char *const two[] = {
          "||", "<=", ">=", "==", "!=", "<>", "<<", ">>", "->"};
      t.type = GA_QT_OP;
      t.len = 1;
      if (s[i] == '-' && s[i + 1] == '>' && s[i + 2] == '>')
        t.len = 3;
      else
        for (size_t k = 0; k < sizeof two / sizeof two[0]; k++)
          if (s[i] == two[k][0] && s[i + 1] == two[k][1])
            t.len = 2;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      ga_qtok *nv = sqlite3_realloc64(v, sizeof(ga_qtok) * (size_t)cap);
      if (!nv) {
        sqlite3_free(v);
        return -1;
      }
      v = nv;
    }
    v[n++] = t;
    i += t.len;
  }
  qt_context_keywords(z, v, n);
  *out = v;
  *nout = n;
  return 0;
bad:
  sqlite3_free(v);
  return 1;
}

char *ga_qt_name(const char *z, const ga_qtok *t) {
  const char *s = z + t->off;
  if (t->type != GA_QT_QID)
    return sqlite3_mprintf("%.*s", t->len, s);
  char close = s[0] == '[' ? ']' : s[0];
  char *o = sqlite3_malloc(t->len);
  if (!o)
    return NULL;
  int k = 0;
  for (int j = 1; j < t->len - 1; j++) {
    o[k++] = s[j];
    if (s[j] == close && close != ']')
      j++; /* a doubled quote is one */
  }
  o[k] = 0;
  return o;
}

int ga_qt_int32(const char *z, const ga_qtok *t, int *v) {
  if (t->type != GA_QT_NUM)
    return 0;
  const char *s = z + t->off;
  int len = t->len, j = 0;
  int64_t n = 0;
  if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    for (j = 2; j < len && s[j] == '0'; j++)
      ;
    if (len - j > 8)
      return 0;
    for (; j < len; j++) {
      if (!isxdigit((unsigned char)s[j]))
        return 0;
      n = n * 16 + (isdigit((unsigned char)s[j])
                        ? s[j] - '0'
                        : tolower((unsigned char)s[j]) - 'a' + 10);
    }
  } else {
    for (j = 0; j < len && s[j] == '0'; j++)
      ;
    if (len - j > 10)
      return 0;
    for (; j < len; j++) {
      if (!isdigit((unsigned char)s[j]))
        return 0; /* 1.0, 1e0: TK_FLOAT */
      n = n * 10 + (s[j] - '0');
    }
  }
  if (n > 2147483647)
    return 0;
  *v = (int)n;
  return 1;
}

int ga_qt_op(const char *z, const ga_qtok *t, int n, int i, const char *w) {
  return i >= 0 && i < n && t[i].type == GA_QT_OP &&
         (int)strlen(w) == t[i].len &&
         !memcmp(z + t[i].off, w, (size_t)t[i].len);
}

int ga_qt_top_or(const char *z, const ga_qtok *t, int n, int a, int b) {
  int depth = 0;
  for (int i = a; i < b && i < n; i++) {
    if (ga_qt_op(z, t, n, i, "(") || qt_word(z, t, n, i, "CASE"))
      depth++;
    else if (ga_qt_op(z, t, n, i, ")") || qt_word(z, t, n, i, "END"))
      depth--;
    else if (depth == 0 && qt_word(z, t, n, i, "OR"))
      return 1;
  }
  return 0;
}

int ga_qt_close(const char *z, const ga_qtok *t, int n, int i) {
  int depth = 0;
  for (; i < n; i++) {
    if (ga_qt_op(z, t, n, i, "("))
      depth++;
    else if (ga_qt_op(z, t, n, i, ")") && --depth == 0)
      return i;
  }
  return n - 1;
}
