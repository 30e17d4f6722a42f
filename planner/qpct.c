/*
** qpct.c — gpu_query's median and percentile calls (issue 39, §2):
** gpu_median(y), gpu_percentile(y, p), gpu_percentile_cont(y, p) and
** gpu_percentile_disc(y, p) (ext/aggregates/percentile.c) in a text.
**
** Rules:
**   1. The grammar accepts them wherever an aggregate stands, with
**      DISTINCT and FILTER as SQLite does: the call runs as written.
**   2. The workers run one (planner/query.c rule 14) when its P is a
**      constant: numbers, strings, parentheses and operators only, no
**      column, parameter or function; its value is SQLite's own (the
**      caller's connection evaluates SELECT P once) read as the aggregate
**      reads P (numeric type, double), and its fraction lies in [0, 1].
**      Then no row can fail P's checks.  Otherwise the text takes the
**      serial path, where SQLite checks P row by row in rowid order:
**      last_scan.why says so (ga_qpct_why).  So does a DISTINCT call.  A
**      value SQLite refuses (TEXT, BLOB, Inf) stops the workers, and the
**      serial path gives SQLite's own error (scan_group.h rule 6).
**   3. Over the groups, as a window function (gpu_median(sum(x)) OVER
**      ()), it is planner/qwindow.c's, not this file's.
**   4. A host entry of the column cache keeps each group's values
**      (engine/cache/cache_pct.c), a GPU entry sorts them on the device
**      (engine/cache/cache_gpu_stat.c), and gpu_query_partial carries them
**      (engine/scan/qpartial.h rule 9): past group_bytes an error naming
**      the function, never an approximation.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qpct.h"

const char *const ga_qpct_why =
    "the text holds a median or percentile (gpu_median, gpu_percentile...) "
    "whose P is no constant, or DISTINCT: the serial path, where SQLite "
    "checks P row by row";

int ga_qpct_fn(const char *z, const ga_qtok *t) {
  /* gpu_median, gpu_percentile, gpu_percentile_cont, gpu_percentile_disc */
  if (t->len == 10)
    return GA_PCT_MEDIAN;
  if (t->len == 14)
    return GA_PCT_PERCENTILE;
  return (z[t->off + t->len - 1] | 0x20) == 't' ? GA_PCT_CONT : GA_PCT_DISC;
}

int ga_qpct_frac(sqlite3 *db, const char *z, const ga_qtok *t, int a, int b,
                 int fn, double *frac) {
  if (b <= a)
    return SQLITE_DONE;
  for (int i = a; i < b; i++)
    if (t[i].type != GA_QT_NUM && t[i].type != GA_QT_STR &&
        t[i].type != GA_QT_OP)
      return SQLITE_DONE;
  char *sql = sqlite3_mprintf(
      "SELECT %.*s", t[b - 1].off + t[b - 1].len - t[a].off, z + t[a].off);
  if (!sql)
    return SQLITE_NOMEM;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    return (rc & 0xff) == SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_DONE;
  }
  rc = SQLITE_DONE;
  if (sqlite3_step(st) == SQLITE_ROW) {
    sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(st, 0));
    if (!v) {
      rc = SQLITE_NOMEM;
    } else {
      int ty = sqlite3_value_numeric_type(v); /* as the aggregate reads P */
      if (ga_pct_fraction(fn, ty == SQLITE_INTEGER || ty == SQLITE_FLOAT,
                          sqlite3_value_double(v), frac))
        rc = SQLITE_OK;
      sqlite3_value_free(v);
    }
  }
  sqlite3_finalize(st);
  return rc;
}

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
