/*
** qschema.c — a partial's schema parts, checked (qschema.h: the rules).
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qschema.h"

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
static int is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static const char *skip_space(const char *p) {
  while (is_space(*p))
    p++;
  return p;
}

/* A signed number of SQLite's grammar (rule 1): its end, or NULL. */
static const char *signed_number(const char *p) {
  if (*p == '+' || *p == '-')
    p++;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_hex(p[2])) {
    for (p += 2; is_hex(*p);)
      p++;
    return p;
  }
  int digits = 0;
  while (is_digit(*p))
    p++, digits++;
  if (*p == '.')
    for (p++; is_digit(*p);)
      p++, digits++;
  if (!digits)
    return NULL;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!is_digit(*p))
      return NULL;
    while (is_digit(*p))
      p++;
  }
  return p;
}

int ga_qs_type_plain(const char *z) {
  const char *p = skip_space(z);
  int words = 0;
  while (is_alpha(*p)) {
    const char *w = p;
    while (is_alpha(*p) || is_digit(*p))
      p++;
    if (sqlite3_keyword_check(w, (int)(p - w)))
      return 0; /* AS, NOT, DEFAULT, ...: a constraint, not a type */
    if (p - w == 6 && !sqlite3_strnicmp(w, "HIDDEN", 6))
      return 0; /* sqlite3_declare_vtab hides a column of this word */
    words++;
    p = skip_space(p);
  }
  if (!words)
    return *p == 0;
  if (*p == '(') {
    for (int n = 0; n < 2; n++) {
      p = signed_number(skip_space(p + 1));
      if (!p)
        return 0;
      p = skip_space(p);
      if (*p != ',')
        break;
    }
    if (*p != ')')
      return 0;
    p = skip_space(p + 1);
  }
  return *p == 0;
}

/* z holds s, in any case. */
static int holds(const char *z, const char *s) {
  size_t n = strlen(s);
  for (; *z; z++)
    if (!sqlite3_strnicmp(z, s, (int)n))
      return 1;
  return 0;
}

const char *ga_qs_type_affinity(const char *z) {
  if (!z || !z[0])
    return "";
  if (holds(z, "INT")) /* SQLite's order: INT first, then TEXT, BLOB, REAL */
    return "INTEGER";
  if (holds(z, "CHAR") || holds(z, "CLOB") || holds(z, "TEXT"))
    return "TEXT";
  if (holds(z, "BLOB"))
    return "BLOB";
  if (holds(z, "REAL") || holds(z, "FLOA") || holds(z, "DOUB"))
    return "REAL";
  return "NUMERIC";
}

const char *ga_qs_type_safe(const char *z) {
  if (!z)
    return "";
  return ga_qs_type_plain(z) ? z : ga_qs_type_affinity(z);
}

const char *ga_qs_coll(const char *z) {
  static const char *const known[] = {"BINARY", "NOCASE", "RTRIM"};
  for (int i = 0; z && i < 3; i++)
    if (!sqlite3_stricmp(z, known[i]))
      return known[i];
  return NULL;
}

void ga_qs_index_free(ga_qs_index *x) {
  sqlite3_free(x->name);
  sqlite3_free(x->table);
  for (int i = 0; x->col && i < x->ncol; i++)
    sqlite3_free(x->col[i]);
  sqlite3_free(x->col);
  sqlite3_free((void *)x->coll);
  sqlite3_free(x->desc);
  memset(x, 0, sizeof(*x));
}

char *ga_qs_index_text(const ga_qs_index *x) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "CREATE %sINDEX \"%w\" ON \"%w\"(",
                      x->unique ? "UNIQUE " : "", x->name, x->table);
  for (int i = 0; i < x->ncol; i++)
    sqlite3_str_appendf(s, "%s\"%w\" COLLATE %s%s", i ? ", " : "", x->col[i],
                        x->coll[i], x->desc[i] ? " DESC" : "");
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

/* A quoted identifier at *p: its name (sqlite3_malloc'd), *p past it;
** NULL with *bad set when *p is no such identifier. */
static char *quoted(const char **p, int *bad, int *nomem) {
  const char *q = *p;
  if (*q != '"') {
    *bad = 1;
    return NULL;
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  for (q++;; q++) {
    if (!*q) {
      *bad = 1;
      break;
    }
    if (*q == '"') {
      if (q[1] != '"')
        break;
      q++;
    }
    sqlite3_str_appendchar(s, 1, *q);
  }
  int err = sqlite3_str_errcode(s);
  char *z = sqlite3_str_finish(s);
  if (!z && !err) /* "" as a name: sqlite3_str_finish gives NULL */
    z = sqlite3_mprintf("");
  if (!z)
    *nomem = 1;
  if (*bad || !z) {
    sqlite3_free(z);
    return NULL;
  }
  *p = q + 1;
  return z;
}

/* The literal w at *p: 1 and *p past it, else 0. */
static int lit(const char **p, const char *w) {
  size_t n = strlen(w);
  if (strncmp(*p, w, n))
    return 0;
  *p += n;
  return 1;
}

int ga_qs_index_parse(const char *text, ga_qs_index *x) {
  const char *p = text;
  int bad = 0, nomem = 0, cap = 1;
  memset(x, 0, sizeof(*x));
  for (const char *c = text; *c; c++) /* columns at most: commas + 1 */
    cap += *c == ',';
  if (!lit(&p, "CREATE "))
    return 1;
  x->unique = lit(&p, "UNIQUE ");
  if (!lit(&p, "INDEX "))
    return 1;
  x->name = quoted(&p, &bad, &nomem);
  if (!bad && !nomem && !lit(&p, " ON "))
    bad = 1;
  if (!bad && !nomem)
    x->table = quoted(&p, &bad, &nomem);
  if (!bad && !nomem && !lit(&p, "("))
    bad = 1;
  if (!bad && !nomem) {
    x->col = sqlite3_malloc64(sizeof(*x->col) * (size_t)cap);
    x->coll = sqlite3_malloc64(sizeof(*x->coll) * (size_t)cap);
    x->desc = sqlite3_malloc64(sizeof(*x->desc) * (size_t)cap);
    nomem = !x->col || !x->coll || !x->desc;
  }
  while (!bad && !nomem) {
    if (x->ncol >= cap) {
      bad = 1;
      break;
    }
    char *c = quoted(&p, &bad, &nomem);
    if (!c)
      break;
    x->col[x->ncol] = c;
    x->desc[x->ncol] = 0;
    x->coll[x->ncol++] = NULL;
    if (!lit(&p, " COLLATE ")) {
      bad = 1;
      break;
    }
    const char *w = p;
    while (*p >= 'A' && *p <= 'Z')
      p++;
    char word[8] = "";
    if (p - w < (int)sizeof word)
      memcpy(word, w, (size_t)(p - w)), word[p - w] = 0;
    const char *k = ga_qs_coll(word);
    if (!k || strcmp(k, word)) {
      bad = 1;
      break;
    }
    x->coll[x->ncol - 1] = k;
    x->desc[x->ncol - 1] = lit(&p, " DESC");
    if (lit(&p, ")"))
      break;
    if (!lit(&p, ", "))
      bad = 1;
  }
  if (!bad && !nomem && *p)
    bad = 1; /* text after the column list: a WHERE, a second statement */
  if (bad || nomem) {
    ga_qs_index_free(x);
    return nomem ? 2 : 1;
  }
  return 0;
}
