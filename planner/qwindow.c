/*
** qwindow.c — gpu_query's window functions over the groups (qwindow.h).
**
** SQLite evaluates a window function after GROUP BY and HAVING, over the
** grouped rows, which is where gpu_query's post query runs (planner/query.c:
** the text itself over the merged groups).  So a window function whose
** arguments, FILTER, PARTITION BY and ORDER BY read only group terms and
** aggregates is the post query's to evaluate, unchanged but for the names
** below, and the aggregates inside it are the workers' like any others.
**
** Rules:
**   1. A window call is name ( args ) [FILTER ( WHERE ... )] OVER name or
**      OVER ( ... ).  query.c's find_calls records it and goes on inside
**      its arguments and OVER clause, where the aggregate calls it finds
**      are computed by the workers; the call itself is no aggregate.
**   2. Exactness: sum, total, avg, min and max used as window functions are
**      written gpu_sum ... gpu_max (their window forms, ext/init.c) in the
**      post and the serial texts, as the contract writes the aggregates.
**   3. Names: the word after OVER, a base window's name first in a window's
**      parentheses, a WINDOW clause's names, and every word of a frame
**      (ROWS, RANGE or GROUPS to the window's end: its bounds are
**      constants to SQLite) name no column (ga_qw_skip), so a column
**      named like one is not refused as ungrouped.
**   4. Where a window reads a column that no group term reads (the table's
**      rows), query.c refuses it naming the window function; a query with
**      window functions and neither GROUP BY nor an aggregate is a window
**      over the table's rows and is refused naming the construct.
**   5. Top k (query.c rule 7) never applies with a window function: it sees
**      every group, not only those the LIMIT keeps.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qwindow.h"

/* qtok.h's token types, by the names query.c gives them */
enum { T_ID = GA_QT_ID, T_QID = GA_QT_QID, T_OP = GA_QT_OP };

/* ga_qwins.skip's bits */
#define QW_SKIP 1 /* a window's name or a frame's word (rule 3) */
#define QW_NAME 2 /* a window call's name */
#define QW_OVER 4 /* a window call's OVER */

static int qw_kw(const char *z, const ga_qtok *t, int n, int i, const char *w) {
  return i >= 0 && i < n && t[i].type == T_ID && !t[i].ident &&
         (int)strlen(w) == t[i].len &&
         !sqlite3_strnicmp(z + t[i].off, w, t[i].len);
}

static int qw_op(const char *z, const ga_qtok *t, int n, int i, const char *w) {
  return i >= 0 && i < n && t[i].type == T_OP && (int)strlen(w) == t[i].len &&
         !memcmp(z + t[i].off, w, (size_t)t[i].len);
}

static int qw_name(const ga_qtok *t, int n, int i) {
  return i >= 0 && i < n && (t[i].type == T_ID || t[i].type == T_QID);
}

static int qw_close(const char *z, const ga_qtok *t, int n, int i) {
  int depth = 0;
  for (; i < n; i++) {
    if (qw_op(z, t, n, i, "("))
      depth++;
    else if (qw_op(z, t, n, i, ")") && --depth == 0)
      return i;
  }
  return n - 1;
}

int ga_qw_over(const char *z, const ga_qtok *t, int n, int name, int close) {
  if (qw_kw(z, t, n, name, "FILTER") && qw_op(z, t, n, name - 1, ")"))
    return -1; /* the FILTER (WHERE ...) of a call, not a call */
  if (qw_kw(z, t, n, close + 1, "OVER"))
    return close + 1;
  if (qw_kw(z, t, n, close + 1, "FILTER") && qw_op(z, t, n, close + 2, "(")) {
    int c = qw_close(z, t, n, close + 2);
    if (qw_kw(z, t, n, c + 1, "OVER"))
      return c + 1;
  }
  return -1;
}

static int qw_marks(ga_qwins *w, int n) {
  if (!w->skip) {
    w->skip = sqlite3_malloc64((size_t)n + 1);
    if (!w->skip)
      return SQLITE_NOMEM;
    memset(w->skip, 0, (size_t)n + 1);
    w->ntok = n;
  }
  return SQLITE_OK;
}

/* Rule 3 over the window definition ( ... ) opening at token a. */
static void qw_def(ga_qwins *w, const char *z, const ga_qtok *t, int n, int a) {
  int b = qw_close(z, t, n, a);
  static const char *const words[] = {"PARTITION", "ORDER", "ROWS", "RANGE",
                                      "GROUPS"};
  int base = qw_name(t, n, a + 1) && !qw_op(z, t, n, a + 2, "(") &&
             !qw_op(z, t, n, a + 2, ".");
  for (size_t k = 0; k < sizeof words / sizeof words[0] && base; k++)
    base = !qw_kw(z, t, n, a + 1, words[k]);
  if (base)
    w->skip[a + 1] |= QW_SKIP;
  int depth = 0;
  for (int i = a + 1; i < b; i++) {
    depth += qw_op(z, t, n, i, "(") - qw_op(z, t, n, i, ")");
    /* PARTITION BY and ORDER BY are the definition's words, never columns
    ** of those names (a column "partition" is legal) */
    if (depth == 0 &&
        (qw_kw(z, t, n, i, "PARTITION") || qw_kw(z, t, n, i, "ORDER")) &&
        qw_kw(z, t, n, i + 1, "BY")) {
      w->skip[i] |= QW_SKIP;
      w->skip[i + 1] |= QW_SKIP;
    }
    /* a frame's keyword, not a column of its name: never after BY, a
    ** comma or an operator (ORDER BY rows, x + range) */
    int after_term =
        i == a + 1 || (!qw_kw(z, t, n, i - 1, "BY") &&
                       (t[i - 1].type != T_OP || qw_op(z, t, n, i - 1, ")")));
    if (depth == 0 && after_term &&
        (qw_kw(z, t, n, i, "ROWS") || qw_kw(z, t, n, i, "RANGE") ||
         qw_kw(z, t, n, i, "GROUPS"))) {
      for (int j = i; j < b; j++)
        w->skip[j] |= qw_name(t, n, j) ? QW_SKIP : 0;
      break;
    }
  }
}

int ga_qw_add(ga_qwins *w, const char *z, const ga_qtok *t, int n, int name,
              int over) {
  if (qw_marks(w, n))
    return SQLITE_NOMEM;
  if (w->n == w->cap) {
    int cap = w->cap ? w->cap * 2 : 8;
    ga_qwin *v = sqlite3_realloc64(w->v, sizeof(ga_qwin) * (size_t)cap);
    if (!v)
      return SQLITE_NOMEM;
    w->v = v;
    w->cap = cap;
  }
  int end = over + 1;
  if (qw_op(z, t, n, over + 1, "(")) {
    qw_def(w, z, t, n, over + 1);
    end = qw_close(z, t, n, over + 1) + 1;
  } else if (qw_name(t, n, over + 1)) {
    w->skip[over + 1] |= QW_SKIP;
    end = over + 2;
  }
  w->skip[name] |= QW_NAME;
  w->skip[over] |= QW_OVER;
  w->v[w->n].name = name;
  w->v[w->n].over = over;
  w->v[w->n].end = end;
  w->n++;
  return SQLITE_OK;
}

int ga_qw_clause(ga_qwins *w, const char *z, const ga_qtok *t, int n, int a,
                 int b) {
  if (b <= a)
    return SQLITE_OK;
  if (qw_marks(w, n))
    return SQLITE_NOMEM;
  /* name AS ( ... ) [, name AS ( ... )] */
  for (int i = a; i < b; i++) {
    if (qw_name(t, n, i) && qw_kw(z, t, n, i + 1, "AS") &&
        qw_op(z, t, n, i + 2, "(")) {
      w->skip[i] |= QW_SKIP;
      qw_def(w, z, t, n, i + 2);
      i = qw_close(z, t, n, i + 2);
    }
  }
  return SQLITE_OK;
}

/* per token, one lookup (emit asks it of every token) */
int ga_qw_name_at(const ga_qwins *w, int i) {
  return w->skip && i >= 0 && i < w->ntok && (w->skip[i] & QW_NAME);
}

int ga_qw_over_at(const ga_qwins *w, int i) {
  return w->skip && i >= 0 && i < w->ntok && (w->skip[i] & QW_OVER);
}

int ga_qw_inside(const ga_qwins *w, int i) {
  int best = -1;
  for (int k = 0; k < w->n; k++)
    if (w->v[k].name <= i && i < w->v[k].end &&
        (best < 0 || w->v[k].name > w->v[best].name))
      best = k;
  return best;
}

int ga_qw_skip(const ga_qwins *w, int i) {
  return w->skip && i >= 0 && i < w->ntok && (w->skip[i] & QW_SKIP);
}

const char *ga_qw_exact(const char *z, const ga_qtok *t) {
  static const char *const ours[] = {"sum", "total", "avg", "min", "max"};
  static const char *const gpu[] = {"gpu_sum", "gpu_total", "gpu_avg",
                                    "gpu_min", "gpu_max"};
  const char *s = z + t->off;
  int len = t->len;
  if (t->type == T_QID) /* "sum"(x) OVER (): the name without its quotes */
    s++, len -= 2;
  else if (t->type != T_ID)
    return NULL;
  for (size_t k = 0; k < sizeof ours / sizeof ours[0]; k++)
    if ((int)strlen(ours[k]) == len && !sqlite3_strnicmp(s, ours[k], len))
      return gpu[k];
  return NULL;
}

void ga_qw_free(ga_qwins *w) {
  sqlite3_free(w->v);
  sqlite3_free(w->skip);
  memset(w, 0, sizeof(*w));
}
