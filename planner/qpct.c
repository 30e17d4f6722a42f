/*
** qpct.c — gpu_query's median and percentile calls (issue 39, §2):
** gpu_median(y), gpu_percentile(y, p), gpu_percentile_cont(y, p) and
** gpu_percentile_disc(y, p) (ext/aggregates/percentile.c) in a text.
**
** Rules:
**   1. The grammar accepts them wherever an aggregate stands, with
**      DISTINCT and FILTER as SQLite does: the call runs as written.
**   2. They keep every value of a group, and SQLite's errors depend on
**      the order of the rows (the first row's P, the first TEXT or Inf
**      value), so the text takes the serial path, where the caller's
**      connection runs it in rowid order: last_scan.why says so
**      (ga_qpct_why).  The workers, the column cache and gpu_query_partial
**      do not run them yet (docs/gpu_query.md).
**   3. Over the groups, as a window function (gpu_median(sum(x)) OVER
**      ()), it is planner/qwindow.c's, not this file's.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qpct.h"

const char *const ga_qpct_why =
    "the text holds a median or percentile (gpu_median, gpu_percentile...), "
    "which keeps every value of its group: the serial path";

static int is_op(const char *z, const ga_qtok *t, int n, int i, const char *w) {
  return i >= 0 && i < n && ga_qt_op(z, t, n, i, w);
}

static int is_kw(const char *z, const ga_qtok *t, int n, int i, const char *w) {
  return i >= 0 && i < n && t[i].type == GA_QT_ID && !t[i].ident &&
         (int)strlen(w) == t[i].len &&
         !sqlite3_strnicmp(z + t[i].off, w, t[i].len);
}

int ga_qpct_call(const char *z, const ga_qtok *t, int n, int i) {
  static const char *const names[] = {"gpu_median", "gpu_percentile",
                                      "gpu_percentile_cont",
                                      "gpu_percentile_disc"};
  if (i < 0 || i >= n || t[i].type != GA_QT_ID || !is_op(z, t, n, i + 1, "("))
    return -1;
  int named = 0;
  for (int k = 0; k < 4; k++)
    named |= (int)strlen(names[k]) == t[i].len &&
             !sqlite3_strnicmp(z + t[i].off, names[k], t[i].len);
  if (!named)
    return -1;
  int end = ga_qt_close(z, t, n, i + 1);
  if (is_kw(z, t, n, end + 1, "FILTER") && is_op(z, t, n, end + 2, "("))
    end = ga_qt_close(z, t, n, end + 2);
  if (is_kw(z, t, n, end + 1, "OVER")) /* rule 3 */
    return -1;
  return end + 1;
}
