/*
** query.c — gpu_query's planner (query.h): the text of one SELECT, read
** token by token, checked against the grammar, and split in three.
**
**   workers  SELECT keys, carried columns, aggregate arguments FROM the
**            table WHERE rowid range AND filter   (planner/path.c, scan.c)
**   post     the text itself over the merged groups: its select list,
**            GROUP BY, HAVING, ORDER BY and LIMIT as written, FROM the
**            groups table under the text's own table name or alias, no
**            WHERE, its WINDOW clause and window functions (sum ... max
**            among them as gpu_sum ... gpu_max: qwindow.c rule 2), and
**            each aggregate call replaced by gpuagg_pick(column)
**            of its value in the group (ext/query/groups_vtab.c); flat
**            (rule 6): no GROUP BY, HAVING as WHERE, gpuagg_value(column)
**   serial   the text with sum, total, avg, min and max (aggregates and
**            window functions) replaced by gpu_sum ... gpu_max and NOT
**            INDEXED after the table; and without NOT INDEXED
**            (serial_sql_ix: SQLite's own plan, for a selective indexed
**            range, planner/path.c rule 14) unless the text has its own
**            INDEXED BY or NOT INDEXED
**
** Rules:
**   1. The grammar.  One SELECT; FROM one table, optional alias and
**      INDEXED BY / NOT INDEXED; WHERE, GROUP BY (at most 16 terms), HAVING,
**      WINDOW, ORDER BY, LIMIT / OFFSET; aggregates count(*), count(e),
**      sum, total, avg, min, max (and gpu_ spellings) with one argument
**      (ALL before it is the default it is: sum(ALL x) is sum(x)),
**      DISTINCT and FILTER (WHERE c) (rule 9); gpu_var_samp ...
**      gpu_stddev (rule 15); window functions over the
**      groups (planner/qwindow.c).  Everything else is an error naming the
**      construct: VALUES, compound selects, subqueries in FROM,
**      virtual tables, WITHOUT ROWID, window functions over the table's
**      rows, other aggregates, '*' in the select list, a column outside
**      aggregates that no group term reads, a query with neither
**      aggregate nor GROUP BY; where a rewrite runs, the error names it
**      (planner/qhint.c for other aggregates).  A view, one WITH
**      expression and uncorrelated subqueries reach this parse rewritten
**      (planner/qrewrite.c, its rules); the text as written names the
**      columns and numbers the parameters (rules 3, 4).
**   2. Names resolve as SQLite resolves them (resolve.c, 3.40): a GROUP BY
**      or ORDER BY term that is an integer by sqlite3ExprIsInteger once its
**      COLLATEs are skipped (1, +1, (1), 1 COLLATE NOCASE, 0x1; not 1.0,
**      1e0, '1' or 2147483648, which are constants) is the select list's
**      item, under that outermost COLLATE; an identifier that is no column
**      of the table nor its rowid (rowid, oid, _rowid_) but an item's
**      alias is that item's expression (in GROUP BY, WHERE, HAVING and
**      inside an ORDER BY term; not in the select list, where SQLite
**      resolves no alias); a whole ORDER BY term that is an alias
**      (COLLATEs and parentheses aside) is the alias, even where a column
**      has its name.  A column's name is the column everywhere else, also
**      qualified (t.x, main.t.x), so a column that no group term reads is
**      refused (rule 1) where an alias has its name (sum(x) AS x ... HAVING
**      x): the post query, whose table has the grouped columns only, would
**      find the alias.  A double-quoted word that names no column (nor,
**      outside the select list, an alias) is a string
**      (SQLITE_DBCONFIG_DQS_DML), so it keeps its case: max("Hello") and
**      max("hello") are two values.  SQLite compiles the text on the
**      caller's connection first, so every other error (a column number
**      out of range) is SQLite's own.
**   3. Result columns are named as sqlite3_column_name names them; a name
**      taken before (a parameter's, or an earlier column's, compared
**      case-insensitively) becomes name:1, name:2, ... the first free one.
**   4. Parameters are numbered as SQLite numbers them (?, ?N, :a, @a, $a);
**      every text made here writes them as ?N with SQLite's number (+2 in
**      the workers' texts), so each text binds the same values by number.
**   5. A group term that is a bare column is its own column of the groups
**      table; any other term's columns are carried with the group's first
**      row (scan_group.h), so SQLite evaluates the term again over the
**      groups and finds the same groups (the term is deterministic,
**      planner/path.c rule 6, else the serial path).  The groups table
**      declares each column with its table's type and collation, so keys
**      keep their affinity and collation in HAVING and ORDER BY: the type
**      as declared only where it is a plain type name, else its affinity's
**      name (engine/scan/qschema.h rule 1: "TEXT, extra" would add a
**      column), the collation quoted.
**   6. Flat: where every GROUP BY term is a bare column of the table, a
**      row of the groups table is one group of SQLite's GROUP BY over the
**      same columns (scan_group.h rule 1), so the post query leaves the
**      GROUP BY out: its HAVING condition becomes a WHERE and each
**      aggregate a scalar read of its column; gpuagg_check raises a sum's
**      overflow first, as SQLite's finalising every aggregate would.  SQLite
**      then neither sorts nor aggregates the groups again (millions, on one
**      thread), and an ORDER BY ... LIMIT keeps the few rows it needs.
**      Not flat: a text with a sum and a LIMIT whose SQLite may stop early
**      (no ORDER BY, or one that may be the GROUP BY's order): SQLite then
**      never finalises the groups after the LIMIT, so a sum that overflowed
**      there raises nothing, and only the GROUP BY post query stops where
**      SQLite stops (limit_stops_early).
**   7. Top k: a flat query without HAVING, DISTINCT or a window function
**      (qwindow.c rule 5) whose first ORDER BY
**      term is a sum(), total(), count(*) or count() call of the text (or
**      the alias of an item that is one; no DISTINCT inside: issue 37,
**      ga_parts.topk_count), with ASC or DESC and nothing else, and a LIMIT
**      of integer literals (LIMIT n, LIMIT n OFFSET m, LIMIT m, n; n > 0)
**      answers from the groups among the first n + m by that aggregate,
**      every group tied with the last of them included: the post query's
**      ORDER BY puts no other group before them, and its other terms only
**      order groups among themselves.  A path may then hand over only
**      those (engine/cache/cache_gpu_query.c rule 9; ga_parts.topk_*).
**      SQLite computes the select list and the ORDER BY terms of every
**      group, even of one the LIMIT drops, so an error there (abs() of
**      the least integer, malformed JSON) would be raised for a group
**      left out: every item and term must be a column, an alias, a column
**      number or one aggregate call (plain_output), and a sum()'s overflow
**      is the path's to rule out.
**   8. The post query sees the text's names only: the groups table's own
**      columns (one per aggregate, the handle) take a prefix that occurs
**      nowhere in the text, in any case, and begins no column of the table;
**      its other columns are the table's, named as the table names them.
**      A name of the text that is a schema (main.t.x) is left out there.
**   9. DISTINCT and FILTER (issue 37).  An aggregate call's value is its
**      argument, its DISTINCT and its FILTER condition together (equal
**      triples share a state).  The workers' text of agg(e) FILTER (WHERE
**      c) is CASE WHEN (c) THEN (e) END, count(*) FILTER's a count of CASE
**      WHEN (c) THEN 1 END: the same rows reach the state, and the state
**      compares nothing under e's collation but a DISTINCT set, whose
**      collation is read from e alone (ga_plan_key_coll: the CASE would
**      have none).  min and max ignore DISTINCT where e's collation is
**      BINARY (it changes nothing there); under NOCASE or RTRIM they read
**      the set's representatives (DISTINCT passes one of 'a', 'A').  A
**      DISTINCT value's state keeps a set (engine/scan/scan_group.h rule
**      5), which only the workers' hash grouping steps, so an ungrouped
**      query with one is a grouped scan of one NULL key (ga_query_parts),
**      and no top k (rule 7) reads it.  The serial and post texts keep the
**      calls as written (the post query's gpuagg_pick replaces the whole
**      call, FILTER included).
**  10. Joins (issue 38, planner/qjoin.c and its rules).  A FROM of several
**      tables is a fact table, the target of everything above (rowids,
**      pieces, the serial text's NOT INDEXED), and its dimensions.  The
**      columns of every table are one list (qjoin.c rule 6): col_of reads
**      qualified and bare names against it.  The groups table's columns
**      for a join are named with the internal prefix (rule 8), one per
**      column of the list, and the post query names that column for every
**      reference to it, qualified or not (join_post_col), since two tables
**      may have columns of one name; the workers' carried columns are
**      qualified.  The workers' FROM, the caller's (its checks, key
**      collations over the join) and the serial text's are qjoin.c's, the
**      ON conditions it moves into WHERE lead the workers' filter, and
**      last_scan.join gets SQLite's plan of a piece (join_plan).
**      planner/qdims.c then plans the probe path (join_probe_plan: the
**      workers read the fact alone and probe dimensions built once per
**      call; its reason, where not, in last_scan.join.probe).
**  11. Key memo (issue 37).  A group term that is not a bare column, reads
**      exactly one column of the table (not the rowid, under any of its
**      names; no alias of an item), and calls a function (a name before
**      "(", CAST included) or applies ||, -> or ->>, is a function of that
**      column's value alone within one call: every other name in it is a
**      function, a keyword, a collation or a constant, and its parameters,
**      subqueries' values and pinned time are the call's.  (The built-ins
**      that read more than their arguments' values are not deterministic,
**      so such a text is serial, planner/path.c rule 6; sqlite_offset(),
**      flagged deterministic, reads the row's place: never memoised.)  Its
**      key_memo is the slot of that column (a bare key's, or the carried
**      column's that rule 5 adds), and hash mode's workers evaluate it once
**      per distinct value of the column (engine/scan/keymemo.h).
**      Not for a join (rule 10): its columns are several tables'.
**  12. HAVING to WHERE (issue 37).  SQLite moves each term of HAVING's
**      top-level AND chain that reads only BINARY group terms and constants
**      into its WHERE clause (select.c havingToWhere; planner/qhaving.c
**      decides as it does), so the rows such a term rejects reach no
**      aggregate: a group they alone make is never formed, its sum never
**      overflows, and the term reads each row (typeof(k) of 1 and 1.0).
**      The workers' filter (ga_parts.filter: every path, the cache and
**      partials included) is the WHERE ANDed with those terms, written as
**      the text writes them (aliases as their items, schema.table.column
**      as table.column), the WHERE in parentheses where it has an OR of its
**      own.  ga_query.filter stays the WHERE alone (a partial's signature).
**      The post query keeps HAVING as written: a moved term holds for every
**      group left (each of its rows passed it, and the group's values are a
**      row's), so a finishing connection that decides otherwise (it lacks
**      the table's NOT NULL constraints) gives the same rows.  Where
**      qhaving.c cannot read the HAVING, or a moved term lies inside an
**      alias's expression, the serial path, where SQLite moves it.  In a
**      join a group term's collation is read over the join's FROM (a
**      dimension's "d"."val" is BINARY too), and a column's NOT NULL on its
**      own table; a LEFT JOIN's right side can always be NULL (SQLite's
**      EP_CanBeNull), so its x IS NULL is not folded (qh_notnull).
**  13. Folded to false (issue 37).  SQLite's parser makes an AND with the
**      integer literal 0 beside it the literal 0 (sqlite3ExprAnd), so an
**      aggregate only inside such an AND is in no AggInfo: never finalised,
**      its sum's overflow never raised.  The post query's SQLite folds its
**      copy the same; rule 6's gpuagg_check reads only the sums with a
**      call outside every fold (planner/qhaving.c rule 5 finds them in
**      HAVING, each select list item and each ORDER BY term).  Where one
**      that may fold cannot be read, or one is in a WINDOW clause, the
**      serial path.  The workers still compute such an aggregate.
**  14. Medians and percentiles (issue 39, planner/qpct.c): a call of
**      gpu_median or gpu_percentile[_cont|_disc] is accepted as written.
**      With a constant P (qpct.c rule 2) whose fraction is valid and no
**      DISTINCT, it is an aggregate (GA_Q_PCT) over a value of its own
**      ("PCT " before its normal form, FILTER as rule 9's) that keeps every
**      number (val_dist GA_DIST_PCT: engine/scan/scan_group.h rule 6),
**      which partials carry (engine/scan/qpartial.h rule 9) and a host
**      entry of the cache keeps (engine/cache/cache_pct.c); otherwise its
**      tokens are no bare
**      columns (check_bare) and the text takes the serial path
**      (ga_qpct_why).
**  15. Variance (issue 39, planner/qvar.c).  gpu_var_samp, gpu_var_pop,
**      gpu_stddev_samp, gpu_stddev_pop, gpu_variance and gpu_stddev are
**      aggregates of the grammar (DISTINCT and FILTER as rule 9 reads
**      them).  The value's state keeps Σx² next to its exact sum
**      (ga_parts.val_sq, stepped in hash mode: an ungrouped text's one
**      group is a NULL key's, as rule 9's sets), and the groups table
**      gives xvar.c's answer.  Over DISTINCT the value keeps its set (rule
**      9) and the answer is the set's (gstate.h rule 9): its flag stays
**      set (the cache's bitmaps leave such a value to the sets), but no
**      state of a DISTINCT value keeps Σx² (planner/path.c and partials
**      mask it: qpartial.h rule 8).
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "qdims.h"
#include "qhaving.h"
#include "qhint.h"
#include "qjoin.h"
#include "qpct.h"
#include "qrewrite.h"
#include "qschema.h"
#include "qtok.h"
#include "query.h"
#include "qvar.h"
#include "qwindow.h"

/* ---- tokens (planner/qtok.c) ---- */

enum {
  T_ID = GA_QT_ID,
  T_QID = GA_QT_QID,
  T_STR = GA_QT_STR,
  T_NUM = GA_QT_NUM,
  T_VAR = GA_QT_VAR,
  T_BLOB = GA_QT_BLOB,
  T_OP = GA_QT_OP
};

typedef ga_qtok tok;

/* ---- the parse ---- */

typedef struct span {
  int a, b; /* tokens [a, b) */
} span;

typedef struct item {
  span expr;   /* without its alias */
  char *alias; /* NULL: none */
} item;

typedef struct aggcall {
  span all;    /* name ( args ) [FILTER (WHERE ...)] */
  int arg_end; /* the token closing the arguments */
  int agg;     /* index into q->aggs */
} aggcall;

typedef struct parse {
  sqlite3 *db;
  const char *z;
  tok *t;
  int n;
  ga_query *q;
  char **err;
  int distinct;    /* token of DISTINCT/ALL after SELECT, else -1 */
  span items_span; /* the select list */
  item *items;
  int nitems;
  span from, where, group, having, order, limit;
  int from_name_end; /* the token after the table's name and alias */
  int indexed;       /* the text has INDEXED BY or NOT INDEXED */
  span *terms;
  int nterms;
  aggcall *calls;
  int ncalls, capcalls;
  char **aggnames; /* the connection's other aggregate functions */
  int naggnames;
  char **valnorm; /* normalised text of each value, for sharing */
  int in_items;   /* find_calls is in the select list: no alias there */
  int ipk;        /* find_ipk */
  span window;    /* the WINDOW clause */
  ga_qwins wins;  /* window function calls (planner/qwindow.c) */
  /* a join (planner/qjoin.c, rule 10): its tables and columns; per groups
  ** table column, the column of the list it holds (GA_Q_ROWID: the fact's
  ** rowid); the prefix its names take */
  int join;
  ga_qjoin j;
  int *rep_col;
  char *pre;
  ga_qh_term *hterms; /* rule 12: each group term's expression */
  int *hmoved;        /* rule 12: the HAVING terms SQLite moves, as spans */
  int nhmoved;
  int *folds; /* rule 13: the spans SQLite's parser folds to 0 */
  int nfolds;
} parse;

static int kw(const parse *p, int i, const char *w) {
  return i >= 0 && i < p->n && p->t[i].type == T_ID && !p->t[i].ident &&
         (int)strlen(w) == p->t[i].len &&
         !sqlite3_strnicmp(p->z + p->t[i].off, w, p->t[i].len);
}

static int op(const parse *p, int i, const char *w) {
  return ga_qt_op(p->z, p->t, p->n, i, w);
}

static int fail(parse *p, const char *fmt, const char *a) {
  if (!*p->err)
    *p->err = sqlite3_mprintf(fmt, a ? a : "");
  return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* An identifier token's name, dequoted (sqlite3_malloc'd). */
static char *tok_name(const parse *p, int i) {
  return ga_qt_name(p->z, &p->t[i]);
}

static int is_name(const parse *p, int i) {
  return i >= 0 && i < p->n && (p->t[i].type == T_ID || p->t[i].type == T_QID);
}

/* Table t's INTEGER PRIMARY KEY, an alias of its rowid: its index in
** t.cols, or -1. */
static int target_ipk(parse *p, const ga_target *t) {
  sqlite3_stmt *st = NULL;
  int ipk = -1, n = 0;
  char *sql = sqlite3_mprintf("SELECT name, upper(type) = 'INTEGER' FROM "
                              "\"%w\".pragma_table_info(%Q) WHERE pk",
                              t->schema, t->table);
  if (sql && sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char *z = (const char *)sqlite3_column_text(st, 0);
      n++;
      for (int c = 0; z && sqlite3_column_int(st, 1) && c < t->ncols; c++)
        if (!sqlite3_stricmp(z, t->cols[c]))
          ipk = c;
    }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return n == 1 && !t->without_rowid ? ipk : -1;
}

static int find_ipk(parse *p) { return target_ipk(p, &p->q->t); }

/* Token i names a column of the table (or its rowid, under one of its
** names or as its INTEGER PRIMARY KEY): its index in t.cols, GA_Q_ROWID,
** or -1. */
#define GA_Q_ROWID (-2)
static int col_of(const parse *p, int i) {
  if (!is_name(p, i) || ga_qt_ctx_keyword(p->z, &p->t[i]))
    return -1;   /* OVER w of a table with a column over (qtok.c rule 1) */
  if (p->join) { /* qjoin.c rule 6 */
    int fr = 0, c = ga_qj_col(&p->j, p->z, p->t, p->n, i, &fr);
    return fr || (c >= 0 && c == p->ipk) ? GA_Q_ROWID : c;
  }
  char *z = tok_name(p, i);
  int r = -1;
  if (!z)
    return -1;
  for (int c = 0; c < p->q->t.ncols && r < 0; c++)
    if (!sqlite3_stricmp(z, p->q->t.cols[c]))
      r = c;
  if (r < 0 && p->q->t.rowid &&
      (!sqlite3_stricmp(z, "rowid") || !sqlite3_stricmp(z, "oid") ||
       !sqlite3_stricmp(z, "_rowid_")))
    r = GA_Q_ROWID;
  if (r >= 0 && r == p->ipk)
    r = GA_Q_ROWID;
  sqlite3_free(z);
  return r;
}

/* The item whose alias token i names (not a column: rule 2), or -1. */
static int alias_of(const parse *p, int i) {
  if (!is_name(p, i) || col_of(p, i) != -1 || op(p, i - 1, ".") ||
      op(p, i + 1, "(") || op(p, i + 1, "."))
    return -1;
  char *z = tok_name(p, i);
  int r = -1;
  for (int k = 0; z && k < p->nitems && r < 0; k++)
    if (p->items[k].alias && !sqlite3_stricmp(z, p->items[k].alias))
      r = k;
  sqlite3_free(z);
  return r;
}

static int agg_of(parse *p, int i); /* the call starting at token i */
static int join_post_col(const parse *p, int i, int *last);
static int order_alias(const parse *p, int a, int b);

/* The ORDER BY term that starts at token a: *e its end (its comma or
** order.b); returned, the end of its expression (ASC, DESC and NULLS
** FIRST/LAST aside). */
static int order_term(const parse *p, int a, int *e) {
  int depth = 0, t;
  for (*e = a; *e < p->order.b && (depth || !op(p, *e, ",")); (*e)++)
    depth += op(p, *e, "(") - op(p, *e, ")");
  t = *e;
  if (t - a >= 3 && kw(p, t - 2, "NULLS") &&
      (kw(p, t - 1, "FIRST") || kw(p, t - 1, "LAST")))
    t -= 2;
  if (t - a >= 2 && (kw(p, t - 1, "ASC") || kw(p, t - 1, "DESC")))
    t--;
  return t;
}

/* Rule 10: is token i a whole ORDER BY term that is an alias? */
static int order_alias_at(const parse *p, int i) {
  if (i < p->order.a || i >= p->order.b)
    return 0;
  for (int a = p->order.a; a < p->order.b;) {
    int e, t = order_term(p, a, &e);
    if (i >= a && i < e)
      return order_alias(p, a, t);
    a = e + 1;
  }
  return 0;
}

/* Rule 10: the groups table column (rep) of the join's column reference
** starting at token i ([schema .] [q .] name), its last token in *last;
** -1 when it is none (an alias, a function's or a collation's name). */
static int join_post_col(const parse *p, int i, int *last) {
  int c_tok = -1;
  if (op(p, i - 1, ".") || !is_name(p, i))
    return -1;
  if (op(p, i + 1, ".") && is_name(p, i + 2) && op(p, i + 3, ".") &&
      is_name(p, i + 4))
    c_tok = i + 4;
  else if (op(p, i + 1, ".") && is_name(p, i + 2))
    c_tok = i + 2;
  else
    c_tok = i;
  if (kw(p, i - 1, "COLLATE") || kw(p, i - 1, "AS") ||
      ga_qw_skip(&p->wins, i) || (c_tok == i && order_alias_at(p, i)))
    return -1;
  if (i >= p->items_span.a && i < p->items_span.b) { /* not an alias */
    int in = 0;
    for (int k = 0; k < p->nitems && !in; k++)
      in = i >= p->items[k].expr.a && i < p->items[k].expr.b;
    if (!in)
      return -1;
  }
  int c = col_of(p, c_tok);
  if (c == -1)
    return -1;
  for (int r = 0; r < p->q->nreps; r++)
    if (p->rep_col[r] == c) {
      *last = c_tok;
      return r;
    }
  return -1;
}

/* Append tokens [a, b) to s with the text between them, parameters as
** ?(N + off) (rule 4); subst: aliases become their items (rule 2); calls:
** aggregate calls become gpuagg_pick("col") (post, calls = 1),
** gpuagg_value("col") (flat post, 3) or gpu_ names (serial, 2); calls = 4:
** schema.table.column is table.column, nothing else changes (rule 12). */
static void emit(parse *p, sqlite3_str *s, int a, int b, int off, int subst,
                 int calls) {
  for (int i = a; i < b; i++) {
    const tok *t = &p->t[i];
    if (i > a)
      sqlite3_str_append(s, p->z + p->t[i - 1].off + p->t[i - 1].len,
                         t->off - (p->t[i - 1].off + p->t[i - 1].len));
    int k, jlast = i;
    if (t->type == T_VAR) {
      sqlite3_str_appendf(s, "?%d", t->var + off);
    } else if ((calls == 1 || calls == 3) && p->join &&
               (k = join_post_col(p, i, &jlast)) >= 0) {
      /* rule 10: a join's column is its groups table column */
      sqlite3_str_appendf(s, "\"%w\"", p->q->rep_name[k]);
      i = jlast;
    } else if ((calls == 1 || calls == 3 || calls == 4) && !op(p, i - 1, ".") &&
               is_name(p, i) && op(p, i + 1, ".") && is_name(p, i + 2) &&
               op(p, i + 3, ".") && is_name(p, i + 4)) {
      /* post: schema.table.column is table.column (the groups table is
      ** temp's, under the text's name for the table) */
      i++;
    } else if (calls && calls != 4 && (k = agg_of(p, i)) >= 0) {
      aggcall *c = &p->calls[k];
      if (calls == 1 || calls == 3) {
        /* an explicit COLLATE in the argument is the call's collation
        ** (ORDER BY max(u COLLATE RTRIM)): it stays on the value */
        int coll = -1;
        for (int j = c->all.a + 2; j + 1 < c->arg_end && coll < 0; j++)
          if (kw(p, j, "COLLATE") && is_name(p, j + 1))
            coll = j + 1;
        sqlite3_str_appendf(s, "%s(\"%w\")",
                            calls == 3 ? "gpuagg_value" : "gpuagg_pick",
                            p->q->agg_col[c->agg]);
        if (coll >= 0)
          sqlite3_str_appendf(s, " COLLATE %.*s", p->t[coll].len,
                              p->z + p->t[coll].off);
        i = c->all.b - 1;
      } else { /* serial: the name only; its arguments as they are */
        if (p->t[i].len < 4 || sqlite3_strnicmp(p->z + t->off, "gpu_", 4)) {
          if (p->q->aggs[c->agg].op < GA_Q_COUNT_STAR)
            sqlite3_str_appendall(s, "gpu_");
        }
        sqlite3_str_append(s, p->z + t->off, t->len);
      }
    } else if (calls && calls != 4 && ga_qw_name_at(&p->wins, i) &&
               ga_qw_exact(p->z, t)) { /* qwindow.c rule 2 */
      sqlite3_str_appendall(s, ga_qw_exact(p->z, t));
    } else if (subst && (k = alias_of(p, i)) >= 0) {
      sqlite3_str_appendall(s, "(");
      emit(p, s, p->items[k].expr.a, p->items[k].expr.b, off, 0, 0);
      sqlite3_str_appendall(s, ")");
    } else {
      sqlite3_str_append(s, p->z + t->off, t->len);
    }
  }
}

static char *text(parse *p, int a, int b, int off, int subst) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  emit(p, s, a, b, off, subst, 0);
  return sqlite3_str_finish(s);
}

/* Tokens [a, b) joined by spaces into s, as text() reads them (subst: an
** alias becomes its item), names lowercased: a, A and "a" name one column.
** A double-quoted word that names no column and no alias is a string to
** SQLite (SQLITE_DBCONFIG_DQS_DML; where that is off, the text does not
** compile), so it keeps its case, written as the string literal it is:
** "Hello" and "hello" are two values, "Hello" and 'Hello' one. */
static void norm_into(parse *p, sqlite3_str *s, int a, int b, int subst) {
  for (int i = a; i < b; i++) {
    const tok *t = &p->t[i];
    int k;
    if (t->type == T_VAR) {
      sqlite3_str_appendf(s, "?%d ", t->var);
    } else if (subst && (k = alias_of(p, i)) >= 0) {
      sqlite3_str_appendall(s, "( ");
      norm_into(p, s, p->items[k].expr.a, p->items[k].expr.b, 0);
      sqlite3_str_appendall(s, ") ");
    } else if (is_name(p, i)) {
      char *z = tok_name(p, i);
      if (t->type == T_QID && p->z[t->off] == '"' && col_of(p, i) == -1) {
        sqlite3_str_appendf(s, "%Q ", z ? z : "");
      } else {
        for (char *c = z; c && *c; c++)
          *c = (char)tolower((unsigned char)*c);
        sqlite3_str_appendf(s, "\"%w\" ", z ? z : "");
      }
      sqlite3_free(z);
    } else {
      sqlite3_str_appendf(s, "%.*s ", t->len, p->z + t->off);
    }
  }
}

/* Two arguments that normalise alike are one value (value_of). */
static char *norm(parse *p, int a, int b, int subst) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  norm_into(p, s, a, b, subst);
  return sqlite3_str_finish(s);
}

/* Where a clause ends: the next top-level clause keyword after a. */
static int clause_end(const parse *p, int a) {
  static const char *const kws[] = {"FROM",  "WHERE",  "GROUP", "HAVING",
                                    "ORDER", "WINDOW", "LIMIT"};
  int depth = 0;
  for (int i = a; i < p->n; i++) {
    if (op(p, i, "("))
      depth++;
    else if (op(p, i, ")"))
      depth--;
    else if (depth == 0)
      for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++)
        if (kw(p, i, kws[k]))
          return i;
  }
  return p->n;
}

/* Split [a, b) at top-level commas into *out (sqlite3_malloc'd). */
static int split(const parse *p, int a, int b, span **out, int *n) {
  int cap = 1, depth = 0;
  for (int i = a; i < b; i++)
    cap += op(p, i, ",");
  span *v = sqlite3_malloc64(sizeof(span) * (size_t)cap);
  if (!v)
    return SQLITE_NOMEM;
  int k = 0, s0 = a;
  for (int i = a; i <= b; i++) {
    if (i < b && op(p, i, "("))
      depth++;
    else if (i < b && op(p, i, ")"))
      depth--;
    else if (i == b || (depth == 0 && op(p, i, ","))) {
      v[k].a = s0;
      v[k].b = i;
      k++;
      s0 = i + 1;
    }
  }
  *out = v;
  *n = k;
  return SQLITE_OK;
}

/* The token closing the parenthesis at i. */
static int close_of(const parse *p, int i) {
  return ga_qt_close(p->z, p->t, p->n, i);
}

/* Rule 2's column numbers.  The integer literal at token i as SQLite's
** parser keeps it (sqlite3GetInt32): decimal digits only, or 0x and at
** most 8 hex digits after leading zeros, below 2^31; 1.0, 1e0 and
** 2147483648 are not (they stay constants). */
static int int_lit(const parse *p, int i, int *v) {
  return ga_qt_int32(p->z, &p->t[i], v);
}

/* Is [a, b) a column number?  SQLite's rule (resolveOrderGroupBy): the
** term without its COLLATEs (sqlite3ExprSkipCollate: at the top only,
** parentheses make no node) is an integer by sqlite3ExprIsInteger: such a
** literal under unary + and - signs.  So 1, +1, (1), 1 COLLATE NOCASE,
** 0x1 and - -1 are column 1; -1, 0 and 2147483647 were out of range when
** SQLite compiled the text; 1.0, '1', 2147483648 and +(1 COLLATE NOCASE)
** are constants.  *coll: the outermost COLLATE's name token, which SQLite
** keeps on the item's expression (resolveAlias), or unchanged. */
static int int_term(const parse *p, int a, int b, int top, int *v, int *coll) {
  while (top && b - a >= 3 && kw(p, b - 2, "COLLATE") && is_name(p, b - 1)) {
    if (*coll < 0)
      *coll = b - 1;
    b -= 2;
  }
  if (b <= a)
    return 0;
  if (op(p, a, "(") && close_of(p, a) == b - 1)
    return int_term(p, a + 1, b - 1, top, v, coll);
  if (op(p, a, "+"))
    return int_term(p, a + 1, b, 0, v, coll);
  if (op(p, a, "-")) {
    int w;
    if (!int_term(p, a + 1, b, 0, &w, coll))
      return 0;
    *v = -w;
    return 1;
  }
  return b == a + 1 && int_lit(p, a, v);
}

static const char *const our_aggs[] = {"count", "sum", "total",
                                       "avg",   "min", "max"};
static const int our_ops[] = {GA_Q_COUNT, GA_AGG_SUM, GA_AGG_TOTAL,
                              GA_AGG_AVG, GA_AGG_MIN, GA_AGG_MAX};

/* Which of ours the name at i is (its index in our_aggs), or -1. */
static int our_agg(const parse *p, int i) {
  if (p->t[i].type != T_ID || !op(p, i + 1, "("))
    return -1;
  const char *z = p->z + p->t[i].off;
  int len = p->t[i].len;
  int gpu = len > 4 && !sqlite3_strnicmp(z, "gpu_", 4);
  if (gpu)
    z += 4, len -= 4;
  for (int k = gpu ? 1 : 0; k < 6; k++) /* there is no gpu_count */
    if ((int)strlen(our_aggs[k]) == len &&
        !sqlite3_strnicmp(z, our_aggs[k], len))
      return k;
  return -1;
}

static int agg_of(parse *p, int i) {
  for (int k = 0; k < p->ncalls; k++)
    if (p->calls[k].all.a == i)
      return k;
  return -1;
}

/* The value of argument [a, b): its index, shared by equal texts.  In the
** select list SQLite resolves no alias (a bare one does not compile there,
** and a double-quoted one is a string); in HAVING and ORDER BY it does. */
static int value_of(parse *p, int a, int b, int *idx) {
  int subst = !p->in_items;
  char *nz = norm(p, a, b, subst);
  if (!nz)
    return SQLITE_NOMEM;
  ga_query *q = p->q;
  for (int k = 0; k < q->nvals; k++)
    if (!strcmp(p->valnorm[k], nz)) {
      sqlite3_free(nz);
      *idx = k;
      return SQLITE_OK;
    }
  if (q->nvals == GA_MAX_STATES) {
    sqlite3_free(nz);
    return fail(p,
                "gpu_query: more than %s distinct aggregate arguments (split "
                "the select list over two gpu_query tables of the same GROUP "
                "BY and join them on its terms)",
                "64");
  }
  char *v = text(p, a, b, 2, subst);
  if (!v) {
    sqlite3_free(nz);
    return SQLITE_NOMEM;
  }
  p->valnorm[q->nvals] = nz;
  q->vals[q->nvals] = v;
  *idx = q->nvals++;
  return SQLITE_OK;
}

/* Rule 9: the value of an aggregate call: argument [a, b) (a < 0: count(*),
** the constant 1), DISTINCT or not, under FILTER [fa, fb) (fa < 0: none).
** Its identity is all three (sum(DISTINCT x) and sum(x), or sum(x) under
** two filters, are two values); the workers' text of a FILTER is CASE WHEN
** (c) THEN (e) END, and a DISTINCT argument's collation is e's own, read
** here (the CASE has none). */
static int value_of_call(parse *p, int a, int b, int fa, int fb, int dist,
                         int minmax, int *idx) {
  ga_query *q = p->q;
  int alias_ok = !p->in_items; /* as value_of */
  if (dist && minmax) {
    /* min/max(DISTINCT e): the plain form where e's collation is BINARY,
    ** gpu_max's order (equal values are then identical, or numbers whose
    ** first in rowid order both keep); under NOCASE or RTRIM DISTINCT
    ** passes one of 'a' and 'A' on, so the set's representatives decide */
    char *e = text(p, a, b, 2, alias_ok);
    if (!e)
      return SQLITE_NOMEM;
    int c =
        q->join_from_caller
            ? ga_plan_key_coll_join(p->db, q->join_from_caller, e)
            : ga_plan_key_coll(p->db, &q->t, q->has_alias ? q->qual : NULL, e);
    sqlite3_free(e);
    dist = c != GA_COLL_BINARY;
  }
  if (!dist && fa < 0)
    return value_of(p, a, b, idx);
  char *na = a >= 0 ? norm(p, a, b, alias_ok) : sqlite3_mprintf("*");
  char *nf = fa >= 0 ? norm(p, fa, fb, alias_ok) : sqlite3_mprintf("");
  int pct = dist == GA_DIST_PCT; /* rule 14: a median's own value */
  char *nz = na && nf ? sqlite3_mprintf("%s%s%s%s",
                                        pct    ? "PCT "
                                        : dist ? "DISTINCT "
                                               : "",
                                        na, fa >= 0 ? " FILTER " : "", nf)
                      : NULL;
  sqlite3_free(na);
  sqlite3_free(nf);
  if (!nz)
    return SQLITE_NOMEM;
  for (int k = 0; k < q->nvals; k++)
    if (strcmp(nz, p->valnorm[k]) == 0) {
      sqlite3_free(nz);
      *idx = k;
      return SQLITE_OK;
    }
  if (q->nvals == GA_MAX_STATES) {
    sqlite3_free(nz);
    return fail(p, "gpu_query: more than %s distinct aggregate arguments",
                "64");
  }
  char *e = a >= 0 ? text(p, a, b, 2, alias_ok) : sqlite3_mprintf("1");
  char *f = fa >= 0 ? text(p, fa, fb, 2, alias_ok) : NULL;
  char *v = !e || (fa >= 0 && !f) ? NULL
            : fa >= 0 ? sqlite3_mprintf("CASE WHEN (%s) THEN (%s) END", f, e)
                      : sqlite3_mprintf("%s", e);
  int coll = GA_COLL_BINARY;
  if (v && dist && !pct) {
    coll =
        q->join_from_caller
            ? ga_plan_key_coll_join(p->db, q->join_from_caller, e)
            : ga_plan_key_coll(p->db, &q->t, q->has_alias ? q->qual : NULL, e);
    if (coll < 0) {
      q->serial_why = "a DISTINCT argument's collation is not a built-in one";
      coll = GA_COLL_BINARY;
    }
  }
  sqlite3_free(e);
  sqlite3_free(f);
  if (!v) {
    sqlite3_free(nz);
    return SQLITE_NOMEM;
  }
  p->valnorm[q->nvals] = nz;
  q->vals[q->nvals] = v;
  q->val_dist[q->nvals] = pct    ? GA_DIST_PCT
                          : dist ? (unsigned char)(1 + coll)
                                 : 0;
  *idx = q->nvals++;
  return SQLITE_OK;
}

/* Rule 14: the median or percentile call [i, pe).  With a constant P
** whose fraction is valid and no DISTINCT, an aggregate of the workers: its
** value keeps every number (GA_DIST_PCT), FILTER as rule 9's; else the
** serial path, where SQLite checks P on every row. */
static int pct_call(parse *p, int i, int pe) {
  ga_query *q = p->q;
  int fn = ga_qpct_fn(p->z, &p->t[i]);
  int close = close_of(p, i + 1);
  span *args = NULL;
  int nargs = 0;
  if (kw(p, i + 2, "DISTINCT") || kw(p, i + 2, "ALL") ||
      split(p, i + 2, close, &args, &nargs) != SQLITE_OK ||
      nargs != (fn == GA_PCT_MEDIAN ? 1 : 2)) {
    sqlite3_free(args);
    q->serial_why = ga_qpct_why;
    return SQLITE_OK;
  }
  double frac = 0.5;
  if (fn != GA_PCT_MEDIAN) {
    int rc = ga_qpct_frac(p->db, p->z, p->t, args[1].a, args[1].b, fn, &frac);
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
      sqlite3_free(args);
      return rc;
    }
    if (rc == SQLITE_DONE) { /* not a constant, or out of range */
      sqlite3_free(args);
      q->serial_why = ga_qpct_why;
      return SQLITE_OK;
    }
  }
  int fa = -1, fb = -1;
  if (kw(p, close + 1, "FILTER")) {
    fa = close + 4;
    fb = close_of(p, close + 2);
  }
  int val = 0;
  int rc = value_of_call(p, args[0].a, args[0].b, fa, fb, GA_DIST_PCT, 0, &val);
  sqlite3_free(args);
  if (rc != SQLITE_OK)
    return *p->err ? SQLITE_ERROR : rc;
  int op = GA_Q_PCT + fn, k;
  for (k = 0; k < q->naggs; k++)
    if (q->aggs[k].op == op && q->aggs[k].val == val && q->aggs[k].frac == frac)
      break;
  if (k == q->naggs) {
    if (k == GA_Q_MAX_AGGS)
      return fail(p, "gpu_query: more than %s aggregate calls", "128");
    q->aggs[k].op = op;
    q->aggs[k].val = val;
    q->aggs[k].frac = frac;
    q->naggs++;
  }
  if (p->ncalls == p->capcalls) {
    int cap = p->capcalls ? p->capcalls * 2 : 16;
    aggcall *nc = sqlite3_realloc64(p->calls, sizeof(aggcall) * (size_t)cap);
    if (!nc)
      return SQLITE_NOMEM;
    p->calls = nc;
    p->capcalls = cap;
  }
  p->calls[p->ncalls].all.a = i;
  p->calls[p->ncalls].all.b = pe;
  p->calls[p->ncalls].arg_end = close;
  p->calls[p->ncalls].agg = k;
  p->ncalls++; /* partials carry the values (qpartial.h rule 9) */
  return SQLITE_OK;
}

/* Find the aggregate calls in [a, b) (rule 1). */
static int find_calls(parse *p, int a, int b) {
  ga_query *q = p->q;
  for (int i = a; i < b; i++) {
    if (kw(p, i, "OVER") && op(p, i - 1, ")") && !ga_qw_over_at(&p->wins, i))
      return fail(p,
                  "gpu_query: window functions (OVER) are not "
                  "supported%s",
                  NULL);
    int over = is_name(p, i) && op(p, i + 1, "(")
                   ? ga_qw_over(p->z, p->t, p->n, i, close_of(p, i + 1))
                   : -1;
    if (over >= 0) { /* a window function: look inside (qwindow.c rule 1) */
      if (ga_qw_add(&p->wins, p->z, p->t, p->n, i, over))
        return SQLITE_NOMEM;
      continue;
    }
    if (p->t[i].type != T_ID || !op(p, i + 1, "("))
      continue;
    int pe = ga_qpct_call(p->z, p->t, p->n, i); /* rule 14 */
    if (pe >= 0) {
      int prc = pct_call(p, i, pe);
      if (prc != SQLITE_OK)
        return prc;
      i = pe - 1;
      continue;
    }
    int which = our_agg(p, i);
    int var = which < 0 ? ga_qvar_is(p->z + p->t[i].off, p->t[i].len)
                        : 0; /* rule 14: 1 + its form */
    int close = close_of(p, i + 1);
    span *args = NULL;
    int nargs = 0;
    if (which < 0 && !var) {
      char *name = tok_name(p, i);
      int other = 0;
      for (int k = 0; name && k < p->naggnames; k++)
        other |= !sqlite3_stricmp(name, p->aggnames[k]);
      if (other) {
        const char *hint = ga_qhint(name); /* qhint.c */
        *p->err = sqlite3_mprintf(
            "gpu_query: %s() is not an aggregate gpu_query runs (it runs "
            "count, sum, total, avg, min and max, and gpu_sum ... "
            "gpu_max)%s%s",
            name, hint ? "; " : "", hint ? hint : "");
        sqlite3_free(name);
        return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
      }
      sqlite3_free(name);
      continue;
    }
    /* rule 9: DISTINCT (min and max: see value_of_call) and FILTER (WHERE
    ** c) after the arguments */
    int dist = kw(p, i + 2, "DISTINCT");
    int fa = -1, fb = -1, end = close;
    if (kw(p, close + 1, "FILTER")) {
      if (!op(p, close + 2, "(") || !kw(p, close + 3, "WHERE"))
        return fail(p, "gpu_query: cannot read a FILTER clause%s", NULL);
      end = close_of(p, close + 2);
      fa = close + 4;
      fb = end;
    }
    if (kw(p, end + 1, "OVER"))
      return fail(p,
                  "gpu_query: window functions (OVER) are not "
                  "supported%s",
                  NULL);
    /* sum(ALL x) is sum(x): ALL is the default (a keyword, never a
    ** column), and the workers' texts take the argument alone */
    int arg0 = i + 2 + (kw(p, i + 2, "ALL") || dist);
    int minmax =
        !var && (our_ops[which] == GA_AGG_MIN || our_ops[which] == GA_AGG_MAX);
    if (close > arg0 && split(p, arg0, close, &args, &nargs))
      return SQLITE_NOMEM;
    if (nargs > 1) { /* min(a, b), max(a, b): scalar; look inside */
      sqlite3_free(args);
      i++;
      continue;
    }
    int opn = var ? GA_Q_VAR + var - 1 : our_ops[which], val = 0;
    if (var) /* rule 15 */
      ga_qvar_mark(q, dist);
    if (which == 0 && (nargs == 0 || (close == arg0 + 1 && op(p, arg0, "*")))) {
      opn = GA_Q_COUNT_STAR;
      /* count(*) FILTER (WHERE c): a count of CASE WHEN c THEN 1 END */
      if (fa >= 0 && value_of_call(p, -1, -1, fa, fb, 0, 0, &val)) {
        sqlite3_free(args);
        return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
      }
      if (fa >= 0)
        opn = GA_Q_COUNT;
    } else if (nargs == 1 && value_of_call(p, args[0].a, args[0].b, fa, fb,
                                           dist, minmax, &val)) {
      sqlite3_free(args);
      return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    sqlite3_free(args);
    int k;
    for (k = 0; k < q->naggs; k++)
      if (q->aggs[k].op == opn &&
          (opn == GA_Q_COUNT_STAR || q->aggs[k].val == val))
        break;
    if (k == q->naggs) {
      if (k == GA_Q_MAX_AGGS)
        return fail(p,
                    "gpu_query: more than %s aggregate calls (split the select "
                    "list over two gpu_query tables of the same GROUP BY and "
                    "join them on its terms)",
                    "128");
      q->aggs[k].op = opn;
      q->aggs[k].val = opn == GA_Q_COUNT_STAR ? 0 : val;
      /* rule 15: a DISTINCT variance's set answers it; its flag tells the
      ** cache's bitmaps, which keep no set, to leave it to the sets */
      q->val_sq[val] |= var != 0;
      q->naggs++;
    }
    if (p->ncalls == p->capcalls) {
      int cap = p->capcalls ? p->capcalls * 2 : 16;
      aggcall *nc = sqlite3_realloc64(p->calls, sizeof(aggcall) * (size_t)cap);
      if (!nc)
        return SQLITE_NOMEM;
      p->calls = nc;
      p->capcalls = cap;
    }
    p->calls[p->ncalls].all.a = i;
    p->calls[p->ncalls].all.b = end + 1;
    p->calls[p->ncalls].arg_end = close;
    p->calls[p->ncalls].agg = k;
    p->ncalls++;
    i = end;
  }
  return SQLITE_OK;
}

/* Number the parameters as SQLite does (rule 4) and check the numbers
** against st's. */
static int number_params(parse *p, sqlite3_stmt *st) {
  int nvar = 0;
  for (int i = 0; i < p->n; i++) {
    tok *t = &p->t[i];
    if (t->type != T_VAR)
      continue;
    const char *z = p->z + t->off;
    if (z[0] == '?' && t->len == 1) {
      t->var = ++nvar;
    } else if (z[0] == '?') {
      t->var = atoi(z + 1);
      if (t->var > nvar)
        nvar = t->var;
    } else {
      char *name = sqlite3_mprintf("%.*s", t->len, z);
      if (!name)
        return SQLITE_NOMEM;
      int idx = sqlite3_bind_parameter_index(st, name);
      sqlite3_free(name);
      t->var = idx;
      if (idx > nvar)
        nvar = idx;
    }
    if (t->var < 1 || t->var > sqlite3_bind_parameter_count(st))
      return fail(p, "gpu_query: cannot number a parameter%s", NULL);
  }
  return SQLITE_OK;
}

/* The connection's aggregate functions that are not ours. */
static int list_aggs(parse *p) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(p->db,
                              "SELECT DISTINCT name FROM pragma_function_list "
                              "WHERE type IN ('a', 'w')",
                              -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rc == SQLITE_NOMEM ? rc : SQLITE_OK; /* cannot tell: SQLite will */
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(st, 0);
    if (!z)
      continue;
    char **nv = sqlite3_realloc64(p->aggnames,
                                  sizeof(char *) * (size_t)(p->naggnames + 1));
    if (!nv) {
      sqlite3_finalize(st);
      return SQLITE_NOMEM;
    }
    p->aggnames = nv;
    if (!(nv[p->naggnames] = sqlite3_mprintf("%s", z))) {
      sqlite3_finalize(st);
      return SQLITE_NOMEM;
    }
    p->naggnames++;
  }
  return sqlite3_finalize(st) == SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
}

/* The select list: items and their aliases (from SQLite's column names). */
static int read_items(parse *p, sqlite3_stmt *st) {
  span *sp = NULL;
  int n = 0;
  if (split(p, p->items_span.a, p->items_span.b, &sp, &n))
    return SQLITE_NOMEM;
  p->items = sqlite3_malloc64(sizeof(item) * (size_t)n);
  if (!p->items) {
    sqlite3_free(sp);
    return SQLITE_NOMEM;
  }
  memset(p->items, 0, sizeof(item) * (size_t)n);
  p->nitems = n;
  int rc = SQLITE_OK;
  for (int k = 0; k < n && rc == SQLITE_OK; k++) {
    span e = sp[k];
    if (e.b - e.a >= 1 && op(p, e.b - 1, "*")) {
      rc = fail(p,
                "gpu_query: '*' in the select list: name the grouped "
                "columns and the aggregates%s",
                NULL);
      break;
    }
    const char *cn = sqlite3_column_name(st, k);
    /* an alias: [AS] name at the end, naming the column */
    if (cn && e.b - e.a >= 2 && is_name(p, e.b - 1) && !op(p, e.b - 2, ".") &&
        !kw(p, e.b - 2, "COLLATE")) {
      char *z = tok_name(p, e.b - 1);
      if (!z) {
        rc = SQLITE_NOMEM;
        break;
      }
      if (!strcmp(z, cn)) {
        p->items[k].alias = z;
        e.b -= kw(p, e.b - 2, "AS") ? 2 : 1;
      } else {
        sqlite3_free(z);
      }
    }
    p->items[k].expr = e;
  }
  sqlite3_free(sp);
  return rc;
}

static int read_join(parse *p, char **table);

/* FROM: one table, [AS] alias, INDEXED BY x | NOT INDEXED (rule 1); or a
** join (rule 10). */
static int read_from(parse *p, char **table) {
  int a = p->from.a, b = p->from.b, i = a;
  if (ga_qj_is_join(p->z, p->t, a, b))
    return read_join(p, table);
  for (int k = a; k < b; k++) {
    if (op(p, k, "("))
      return fail(p,
                  "gpu_query: FROM must name one table, not a subquery "
                  "or a table-valued function%s",
                  NULL);
  }
  if (!is_name(p, i))
    return fail(p, "gpu_query: FROM must name one table%s", NULL);
  i++;
  if (i + 1 < b && op(p, i, ".") && is_name(p, i + 1))
    i += 2;
  *table =
      sqlite3_mprintf("%.*s", p->t[i - 1].off + p->t[i - 1].len - p->t[a].off,
                      p->z + p->t[a].off);
  if (!*table)
    return SQLITE_NOMEM;
  char *name = tok_name(p, i - 1);
  if (!name)
    return SQLITE_NOMEM;
  if (i < b && kw(p, i, "AS"))
    i++;
  if (i < b && is_name(p, i) && !kw(p, i, "INDEXED") && !kw(p, i, "NOT")) {
    sqlite3_free(name);
    name = tok_name(p, i);
    p->q->has_alias = 1;
    i++;
  }
  p->q->qual = name;
  p->from_name_end = i;
  if (kw(p, i, "INDEXED") && kw(p, i + 1, "BY") && is_name(p, i + 2))
    i += 3, p->indexed = 1;
  else if (kw(p, i, "NOT") && kw(p, i + 1, "INDEXED"))
    i += 2, p->indexed = 1;
  if (i != b)
    return fail(p, "gpu_query: FROM must name one table%s", NULL);
  return p->q->qual ? SQLITE_OK : SQLITE_NOMEM;
}

/* Column c's declared type and collation, as the groups table declares
** it (rule 5). */
static char *decl_of(parse *p, int c) {
  ga_query *q = p->q;
  if (c == GA_Q_ROWID || (p->join && p->j.ccol[c] < 0))
    return sqlite3_mprintf("INTEGER");
  const char *type = NULL, *coll = NULL;
  const ga_target *tt = p->join ? &ga_qj_coltab(&p->j, c)->t : &q->t;
  if (ga_column_decl(p->db, tt->schema, tt->table,
                     p->join ? ga_qj_colname(&p->j, c) : q->t.cols[c], &type,
                     &coll) != SQLITE_OK) {
    q->serial_why = "the columns' collations cannot be read (SQLite built "
                    "without column metadata)";
    return sqlite3_mprintf("");
  }
  /* a declared type is file text: as it is only when it is a plain type
  ** name, else its affinity's name ("TEXT, extra" would add a column) */
  return sqlite3_mprintf("%s COLLATE \"%w\"", ga_qs_type_safe(type),
                         coll ? coll : "BINARY");
}

static int add_rep(parse *p, int i, int c, int slot, int *idx);

/* The rowid under each of its names that no other column takes (rowid,
** oid, _rowid_, its INTEGER PRIMARY KEY), one slot: the text may read it
** under another name than the group term's, and the groups table's own
** rowid is not the table's. */
static int add_rowid(parse *p, int slot, int *idx) {
  ga_query *q = p->q;
  const char *names[4] = {"rowid", "oid", "_rowid_",
                          p->ipk >= 0 ? q->t.cols[p->ipk] : NULL};
  int first = -1;
  for (int n = 0; n < 4 && names[n]; n++) {
    int taken = 0;
    for (int c = 0; c < q->t.ncols; c++)
      taken |= c != p->ipk && !sqlite3_stricmp(names[n], q->t.cols[c]);
    for (int k = 0; k < q->nreps && !taken; k++)
      if (!sqlite3_stricmp(names[n], q->rep_name[k])) {
        taken = 1;
        if (first < 0)
          first = k;
      }
    if (taken)
      continue;
    int k = q->nreps;
    q->rep_name[k] = sqlite3_mprintf("%s", names[n]);
    q->rep_decl[k] = sqlite3_mprintf("INTEGER");
    q->rep_slot[k] = slot;
    if (!q->rep_name[k] || !q->rep_decl[k]) {
      sqlite3_free(q->rep_name[k]);
      sqlite3_free(q->rep_decl[k]);
      return SQLITE_NOMEM;
    }
    q->nreps++;
    if (first < 0)
      first = k;
  }
  *idx = first;
  return SQLITE_OK;
}

/* Add column c (token i names it) to the groups table as slot `slot` when
** it is not there yet; its index. */
static char *internal_prefix(const parse *p);

/* Rule 10: a join's groups table column for column c of the list (or the
** fact's rowid), named with the internal prefix: the post query names it
** for every reference, qualified or not. */
static int add_rep_join(parse *p, int c, int slot, int *idx) {
  ga_query *q = p->q;
  for (int k = 0; k < q->nreps; k++)
    if (p->rep_col[k] == c) {
      *idx = k;
      return SQLITE_OK;
    }
  if (!p->pre && !(p->pre = internal_prefix(p)))
    return SQLITE_NOMEM;
  int k = q->nreps;
  q->rep_name[k] = sqlite3_mprintf("%sr%d", p->pre, k);
  q->rep_decl[k] = decl_of(p, c);
  q->rep_slot[k] = slot;
  p->rep_col[k] = c;
  if (!q->rep_name[k] || !q->rep_decl[k]) {
    sqlite3_free(q->rep_name[k]);
    sqlite3_free(q->rep_decl[k]);
    return SQLITE_NOMEM;
  }
  q->nreps++;
  *idx = k;
  return SQLITE_OK;
}

static int add_rep(parse *p, int i, int c, int slot, int *idx) {
  ga_query *q = p->q;
  if (p->join)
    return add_rep_join(p, c, slot, idx);
  if (c == GA_Q_ROWID)
    return add_rowid(p, slot, idx);
  char *z = tok_name(p, i);
  if (!z)
    return SQLITE_NOMEM;
  const char *name = q->t.cols[c];
  for (int k = 0; k < q->nreps; k++)
    if (!sqlite3_stricmp(q->rep_name[k], name)) {
      sqlite3_free(z);
      *idx = k;
      return SQLITE_OK;
    }
  int k = q->nreps;
  q->rep_name[k] = sqlite3_mprintf("%s", name);
  q->rep_decl[k] = decl_of(p, c);
  q->rep_slot[k] = slot;
  sqlite3_free(z);
  if (!q->rep_name[k] || !q->rep_decl[k])
    return SQLITE_NOMEM;
  q->nreps++;
  *idx = k;
  return SQLITE_OK;
}

/* Rule 10: the workers' text of a join's carried column: qualified, since
** another table may have a column of its name. */
static char *join_carried(parse *p, int c) {
  if (c == GA_Q_ROWID)
    return sqlite3_mprintf("\"%w\".%s", p->q->qual, p->q->t.rowid);
  const ga_qj_tab *x = ga_qj_coltab(&p->j, c);
  if (p->j.ccol[c] < 0)
    return sqlite3_mprintf("\"%w\".%s", x->qual, x->t.rowid);
  return sqlite3_mprintf("\"%w\".\"%w\"", x->qual, ga_qj_colname(&p->j, c));
}

/* Rule 11: the slot of the one column term e reads, when its workers may
** evaluate it once per distinct value of that column; else -1. */
static int memo_slot(parse *p, span e, int coll) {
  int col = -1, calls = 0;
  if (p->join)
    return -1; /* several tables' columns (rule 11) */
  if (coll < 0 && (e.b == e.a + 1 || (e.b == e.a + 3 && op(p, e.a + 1, "."))))
    return -1; /* a bare column: its own value */
  for (int i = e.a; i < e.b; i++) {
    if (op(p, i, "||") || op(p, i, "->") || op(p, i, "->>"))
      calls = 1;
    if (!is_name(p, i) || op(p, i + 1, ".") || kw(p, i - 1, "COLLATE"))
      continue;
    if (op(p, i + 1, "(")) {
      char *f = tok_name(p, i);
      int offset = !f || !sqlite3_stricmp(f, "sqlite_offset");
      sqlite3_free(f);
      if (offset)
        return -1;
      calls = 1;
      continue;
    }
    int c = col_of(p, i);
    if (c == GA_Q_ROWID || (c == -1 && alias_of(p, i) >= 0))
      return -1;
    if (c >= 0) {
      if (col >= 0 && col != c)
        return -1;
      col = c;
    }
  }
  if (col < 0 || !calls)
    return -1;
  ga_query *q = p->q;
  for (int k = 0; k < q->nreps; k++) /* rule 5 put it there */
    if (!sqlite3_stricmp(q->rep_name[k], q->t.cols[col]))
      return q->rep_slot[k];
  return -1;
}

/* The group terms: keys (rule 2), the groups table's columns (rule 5). */
static int read_terms(parse *p) {
  ga_query *q = p->q;
  if (p->group.b > p->group.a &&
      split(p, p->group.a, p->group.b, &p->terms, &p->nterms))
    return SQLITE_NOMEM;
  if (p->nterms > 16)
    return fail(p, "gpu_query: more than 16 GROUP BY terms%s", NULL);
  int cap = 2 * p->nterms + (p->join ? p->j.ncols : q->t.ncols) + 3;
  q->keys = sqlite3_malloc64(sizeof(char *) * (size_t)(cap));
  q->rep_name = sqlite3_malloc64(sizeof(char *) * (size_t)(cap));
  q->rep_decl = sqlite3_malloc64(sizeof(char *) * (size_t)(cap));
  q->rep_slot = sqlite3_malloc64(sizeof(int) * (size_t)(cap));
  if (!q->keys || !q->rep_name || !q->rep_decl || !q->rep_slot)
    return SQLITE_NOMEM;
  if (p->join && !(p->rep_col = sqlite3_malloc64(sizeof(int) * (size_t)cap)))
    return SQLITE_NOMEM;
  span *res = sqlite3_malloc64(sizeof(span) * (size_t)(p->nterms + 1));
  if (!res)
    return SQLITE_NOMEM;
  int *coll = sqlite3_malloc64(sizeof(int) * (size_t)(p->nterms + 1));
  p->hterms = sqlite3_malloc64(sizeof(ga_qh_term) * (size_t)(p->nterms + 1));
  if (!coll || !p->hterms) {
    sqlite3_free(res);
    sqlite3_free(coll);
    return SQLITE_NOMEM;
  }
  /* each term's expression: an item for a column number (under the
  ** term's outermost COLLATE, as SQLite keeps it) or an alias */
  for (int k = 0; k < p->nterms; k++) {
    span e = p->terms[k];
    int it = -1, pos = 0;
    coll[k] = -1;
    if (int_term(p, e.a, e.b, 1, &pos, &coll[k]))
      it = pos - 1; /* SQLite has checked its range */
    else if (e.b == e.a + 1)
      it = alias_of(p, e.a);
    if (it < 0 || it >= p->nitems)
      coll[k] = -1;
    else
      e = p->items[it].expr;
    res[k] = e;
    if (p->hterms) /* rule 12 */
      p->hterms[k] =
          (ga_qh_term){e.a, e.b, coll[k], it >= 0 && it < p->nitems, 0};
    if (coll[k] >= 0) {
      char *z = text(p, e.a, e.b, 2, 1);
      q->keys[k] =
          z ? sqlite3_mprintf("(%s) COLLATE %.*s", z, p->t[coll[k]].len,
                              p->z + p->t[coll[k]].off)
            : NULL;
      sqlite3_free(z);
    } else {
      q->keys[k] = text(p, e.a, e.b, 2, 1);
    }
    if (!q->keys[k]) {
      sqlite3_free(res);
      sqlite3_free(coll);
      return SQLITE_NOMEM;
    }
  }
  q->nkeys = p->nterms;
  for (int k = 0; k < GA_MAX_KEYS; k++)
    q->key_memo[k] = -1;
  /* bare columns first: their own slots */
  int rc = SQLITE_OK, idx;
  q->flat = p->nterms > 0;
  for (int k = 0; k < p->nterms && rc == SQLITE_OK; k++) {
    span e = res[k];
    int last = e.b - 1, c = col_of(p, last);
    int bare = c != -1 && coll[k] < 0 &&
               (e.b == e.a + 1 || (e.b == e.a + 3 && op(p, e.a + 1, ".")));
    if (bare)
      rc = add_rep(p, last, c, k, &idx);
    q->flat &= bare;
  }
  /* the columns other terms read: carried */
  for (int k = 0; k < p->nterms && rc == SQLITE_OK; k++)
    for (int i = res[k].a; i < res[k].b && rc == SQLITE_OK; i++) {
      int c = col_of(p, i);
      if (c == -1 || op(p, i + 1, "(") || op(p, i + 1, ".") ||
          kw(p, i - 1, "COLLATE"))
        continue;
      int before = q->nreps;
      rc = add_rep(p, i, c, q->nkeys + q->ncarry, &idx);
      if (rc == SQLITE_OK && q->nreps > before) {
        q->keys[q->nkeys + q->ncarry] =
            p->join ? join_carried(p, c)
                    : sqlite3_mprintf("\"%w\"", q->rep_name[idx]);
        if (!q->keys[q->nkeys + q->ncarry])
          rc = SQLITE_NOMEM;
        q->ncarry++;
      }
    }
  for (int k = 0; k < p->nterms && rc == SQLITE_OK; k++)
    q->key_memo[k] = memo_slot(p, res[k], coll[k]); /* rule 11 */
  sqlite3_free(res);
  sqlite3_free(coll);
  return rc;
}

/* Rule 1: a column outside aggregates that the groups table lacks.  A
** name that is a column of the table, or its rowid under any of its names,
** is that column here (the select list, HAVING, inside an ORDER BY term),
** even where an item takes it as its alias: SQLite's lookupName tries the
** aliases only when no column matched, and `k AS oid ... HAVING oid` reads
** the table's rowid.  A column the groups table lacks is refused, so the
** post query never finds an alias, or the groups table's own rowid, where
** the text has a column. */
static int check_bare(parse *p, int a, int b) {
  for (int i = a; i < b; i++) {
    int k = agg_of(p, i);
    if (k >= 0) {
      i = p->calls[k].all.b - 1;
      continue;
    }
    if (ga_qw_skip(&p->wins, i)) /* a window's name: qwindow.c rule 3 */
      continue;
    int pe = ga_qpct_call(p->z, p->t, p->n, i); /* rule 14 */
    if (pe >= 0) {
      i = pe - 1;
      continue;
    }
    int c = col_of(p, i);
    if (c == -1 || op(p, i + 1, "(") || op(p, i + 1, ".") ||
        kw(p, i - 1, "COLLATE"))
      continue;
    char *z = tok_name(p, i);
    if (!z)
      return SQLITE_NOMEM;
    int found = 0;
    for (int r = 0; r < p->q->nreps; r++)
      found |= p->join ? p->rep_col[r] == c
                       : !sqlite3_stricmp(p->q->rep_name[r],
                                          c >= 0 ? p->q->t.cols[c] : z);
    int w = found ? -1 : ga_qw_inside(&p->wins, i);
    if (w >= 0 || (!found && i >= p->window.a && i < p->window.b)) {
      /* qwindow.c rule 4: a window over the table's rows */
      const tok *nt = w >= 0 ? &p->t[p->wins.v[w].name] : NULL;
      *p->err = sqlite3_mprintf(
          "gpu_query: %s%.*s%s reads the column %s, which is neither grouped "
          "nor aggregated: gpu_query runs window functions over the groups, "
          "so their arguments, PARTITION BY and ORDER BY read group terms "
          "and aggregates (sum(sum(x)) OVER (), rank() OVER (ORDER BY "
          "sum(x) DESC))",
          nt ? "the window function " : "the WINDOW clause", nt ? nt->len : 0,
          nt ? p->z + nt->off : "", nt ? "()" : "", z);
      sqlite3_free(z);
      return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    if (!found) {
      *p->err = sqlite3_mprintf("gpu_query: the column %s is neither grouped "
                                "nor aggregated (group by it, or read it in "
                                "an aggregate: min(%s), max(%s))",
                                z, z, z);
      sqlite3_free(z);
      return *p->err ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    sqlite3_free(z);
  }
  return SQLITE_OK;
}

/* Rule 2: is the ORDER BY term [a, b) (without ASC, DESC, NULLS ...) an
** item's alias?  SQLite's resolveAsName: the term without its COLLATEs
** (parentheses make no node) is one identifier, quoted or not, that some
** item has as its alias; that wins over a column of the name.  Anything
** else (-x, x % 2, t.x, +x) resolves columns first. */
static int order_alias(const parse *p, int a, int b) {
  for (;;) {
    if (b - a >= 3 && kw(p, b - 2, "COLLATE") && is_name(p, b - 1))
      b -= 2;
    else if (b - a >= 3 && op(p, a, "(") && close_of(p, a) == b - 1)
      a++, b--;
    else
      break;
  }
  if (b != a + 1 || !is_name(p, a))
    return 0;
  char *z = tok_name(p, a);
  int r = 0;
  for (int k = 0; z && k < p->nitems && !r; k++)
    r = p->items[k].alias && !sqlite3_stricmp(z, p->items[k].alias);
  sqlite3_free(z);
  return r;
}

/* Rule 1 over ORDER BY: each term but one that is an alias (rule 2). */
static int check_order(parse *p) {
  int rc = SQLITE_OK;
  for (int a = p->order.a; a < p->order.b && rc == SQLITE_OK;) {
    int e, t = order_term(p, a, &e);
    if (!order_alias(p, a, t))
      rc = check_bare(p, a, t);
    a = e + 1;
  }
  return rc;
}

/* Rule 8: the prefix of the groups table's own columns: "gpuagg_" with as
** many more underscores as it takes to occur nowhere in the text (no
** identifier, string or comment of it holds the prefix, in any case, so
** no name of the text can reach such a column: SQLite compares names in
** ASCII case only) and to begin no column of the table (the groups
** table's other columns are named as the table's). */
static char *internal_prefix(const parse *p) {
  size_t len = strlen(p->z);
  for (int n = 1;; n++) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, "gpuagg");
    sqlite3_str_appendchar(s, n, '_');
    char *z = sqlite3_str_finish(s);
    if (!z)
      return NULL;
    size_t zl = strlen(z);
    int clash = 0;
    for (size_t i = 0; i + zl <= len && !clash; i++)
      clash = !sqlite3_strnicmp(p->z + i, z, (int)zl);
    for (int c = 0; c < p->q->t.ncols && !clash; c++)
      clash = !sqlite3_strnicmp(p->q->t.cols[c], z, (int)zl);
    for (int c = 0; p->join && c < p->j.ncols && !clash; c++)
      clash = !sqlite3_strnicmp(ga_qj_colname(&p->j, c), z, (int)zl);
    if (!clash)
      return z;
    sqlite3_free(z);
  }
}

/* Rule 3. */
static int name_columns(parse *p, sqlite3_stmt *st) {
  ga_query *q = p->q;
  int np = q->nparams, nc = sqlite3_column_count(st);
  q->param_name = sqlite3_malloc64(sizeof(char *) * (size_t)(np + 1));
  q->col_name = sqlite3_malloc64(sizeof(char *) * (size_t)(nc + 1));
  if (!q->param_name || !q->col_name)
    return SQLITE_NOMEM;
  for (int i = 0; i < np; i++) {
    const char *z = sqlite3_bind_parameter_name(st, i + 1);
    q->param_name[i] =
        z ? sqlite3_mprintf("%s", z) : sqlite3_mprintf("?%d", i + 1);
    if (!q->param_name[i])
      return SQLITE_NOMEM;
  }
  for (int i = 0; i < nc; i++) {
    const char *base = sqlite3_column_name(st, i);
    if (!base)
      return SQLITE_NOMEM;
    char *z = sqlite3_mprintf("%s", base);
    for (int k = 1; z; k++) {
      int taken = 0;
      for (int j = 0; j < np && !taken; j++)
        taken = !sqlite3_stricmp(z, q->param_name[j]);
      for (int j = 0; j < q->ncols && !taken; j++)
        taken = !sqlite3_stricmp(z, q->col_name[j]);
      if (!taken)
        break;
      sqlite3_free(z);
      z = sqlite3_mprintf("%s:%d", base, k);
    }
    if (!z)
      return SQLITE_NOMEM;
    q->col_name[q->ncols++] = z;
  }
  return SQLITE_OK;
}

/* Rule 10: the names of the text for planner/qhaving.c. */
static int qh_col(void *arg, int i) {
  int c = col_of((parse *)arg, i);
  return c == GA_Q_ROWID ? GA_QH_ROWID : c;
}

static int qh_alias(void *arg, int i, int *a, int *b) {
  parse *p = arg;
  int k = alias_of(p, i);
  if (k < 0)
    return 0;
  *a = p->items[k].expr.a;
  *b = p->items[k].expr.b;
  return 1;
}

static int qh_agg(void *arg, int i) {
  parse *p = arg;
  int k = agg_of(p, i);
  return k >= 0 ? p->calls[k].all.b : -1;
}

/* Column c (col_of's) can never be NULL (sqlite3ExprCanBeNull).  In a
** join c indexes the join's list (qjoin.c rule 6), so the column is read
** on its own table; a column of a LEFT JOIN's right side can be NULL
** whatever its declaration (SQLite's EP_CanBeNull), and a dimension's
** rowid or INTEGER PRIMARY KEY (SQLite's column -1) cannot otherwise. */
static int qh_notnull(void *arg, int c) {
  parse *p = arg;
  int nn = 0;
  if (c < 0)
    return 1;
  const ga_target *tt = &p->q->t;
  const char *name = c < p->q->t.ncols ? p->q->t.cols[c] : NULL;
  if (p->join) {
    const ga_qj_tab *x = ga_qj_coltab(&p->j, c);
    if (x->op == GA_QJ_LEFT)
      return 0;
    if (p->j.ccol[c] < 0 || p->j.ccol[c] == target_ipk(p, &x->t))
      return 1;
    tt = &x->t;
    name = ga_qj_colname(&p->j, c);
  }
  if (!name ||
      sqlite3_table_column_metadata(p->db, tt->schema, tt->table, name, NULL,
                                    NULL, &nn, NULL, NULL) != SQLITE_OK)
    return 0;
  return nn;
}

/* Rule 13: token i is the integer literal 0 with an AND beside it
** (parentheses aside), so [a, b) may hold a fold. */
static int fold_near(const parse *p, int i, int a, int b) {
  int v;
  if (p->t[i].type != T_NUM || !ga_qt_int32(p->z, &p->t[i], &v) || v != 0)
    return 0;
  int l = i - 1, r = i + 1;
  while (l >= a && op(p, l, "("))
    l--;
  while (r < b && op(p, r, ")"))
    r++;
  return (l >= a && kw(p, l, "AND")) || (r < b && kw(p, r, "AND"));
}

/* Rule 13: the folds of the expression [a, b) (HAVING, a select list
** item, an ORDER BY term) into p->folds; where qhaving.c cannot read one
** that may fold, the serial path. */
static int fold_span(parse *p, int a, int b) {
  int near = 0;
  for (int i = a; i < b && !near; i++)
    near = fold_near(p, i, a, b);
  if (!near)
    return SQLITE_OK;
  int *f = sqlite3_realloc64(
      p->folds, sizeof(int) * 2 * ((size_t)p->nfolds + (size_t)(b - a + 1)));
  if (!f)
    return SQLITE_NOMEM;
  p->folds = f;
  ga_qh_names nm = {p, qh_col, qh_alias, qh_agg, qh_notnull};
  const char *why = NULL;
  int nf = 0;
  int rc = ga_qh_folds(p->db, p->z, p->t, p->n, p->q->nparams, &nm, a, b,
                       f + 2 * p->nfolds, &nf, &why);
  if (rc == SQLITE_ERROR) {
    p->q->serial_why = "an AND with the literal 0 that SQLite's parser "
                       "folds to 0 (its aggregates never finalised) where "
                       "gpu_query cannot read it";
    return SQLITE_OK;
  }
  p->nfolds += nf;
  return rc;
}

static int find_folds(parse *p) {
  int rc = SQLITE_OK;
  if (p->q->serial_why)
    return SQLITE_OK;
  for (int k = 0; k < p->nitems && rc == SQLITE_OK; k++)
    rc = fold_span(p, p->items[k].expr.a, p->items[k].expr.b);
  if (rc == SQLITE_OK && p->having.b > p->having.a)
    rc = fold_span(p, p->having.a, p->having.b);
  /* each ORDER BY term, its ASC, DESC and NULLS FIRST/LAST aside */
  for (int a = p->order.a, e;
       a < p->order.b && rc == SQLITE_OK && !p->q->serial_why; a = e + 1)
    rc = fold_span(p, a, order_term(p, a, &e));
  for (int i = p->window.a; i < p->window.b && !p->q->serial_why; i++)
    if (fold_near(p, i, p->window.a, p->window.b))
      p->q->serial_why = "a WINDOW clause holds an AND with the literal 0, "
                         "which SQLite's parser folds to 0";
  return rc;
}

/* Rule 13: aggregate k has a call SQLite keeps (outside every fold). */
static int agg_kept(const parse *p, int k) {
  for (int j = 0; j < p->ncalls; j++) {
    if (p->calls[j].agg != k)
      continue;
    int in = 0;
    for (int f = 0; f < p->nfolds && !in; f++)
      in = p->calls[j].all.a >= p->folds[2 * f] &&
           p->calls[j].all.b <= p->folds[2 * f + 1];
    if (!in)
      return 1;
  }
  return 0;
}

/* Rule 10: the HAVING terms SQLite moves into its WHERE clause join the
** workers' filter, ANDed after it in HAVING's order, as SQLite ANDs them
** (the filter in parentheses where it has an OR of its own). */
static int having_to_where(parse *p) {
  ga_query *q = p->q;
  if (p->nterms == 0 || p->having.b <= p->having.a || q->serial_why)
    return SQLITE_OK;
  for (int k = 0; k < p->nterms; k++)
    p->hterms[k].binary = /* a join's keys read every table */
        (q->join_from_caller
             ? ga_plan_key_coll_join(p->db, q->join_from_caller, q->keys[k])
             : ga_plan_key_coll(p->db, &q->t, q->has_alias ? q->qual : NULL,
                                q->keys[k])) == GA_COLL_BINARY;
  p->hmoved = sqlite3_malloc64(sizeof(int) * 2 *
                               (size_t)(p->having.b - p->having.a + 1));
  if (!p->hmoved)
    return SQLITE_NOMEM;
  ga_qh_names nm = {p, qh_col, qh_alias, qh_agg, qh_notnull};
  const char *why = NULL;
  int rc = ga_qh_moved(p->db, p->z, p->t, p->n, q->nparams, &nm, p->hterms,
                       p->nterms, p->having.a, p->having.b, p->hmoved,
                       &p->nhmoved, &why);
  if (rc == SQLITE_ERROR) { /* qhaving.c rules 1, 4: SQLite decides */
    p->nhmoved = 0;
    q->serial_why = "the HAVING clause holds a condition whose move into "
                    "WHERE gpu_query cannot tell (SQLite's HAVING-to-WHERE)";
    return SQLITE_OK;
  }
  if (rc != SQLITE_OK || p->nhmoved == 0)
    return rc;
  int or = 0, depth = 0;
  for (int i = p->where.a; i < p->where.b; i++) {
    depth += op(p, i, "(") - op(p, i, ")");
    or |= depth == 0 && kw(p, i, "OR");
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  if (q->filter)
    sqlite3_str_appendf(s, or ? "(%s)" : "%s", q->filter);
  for (int k = 0; k < p->nhmoved; k++) {
    sqlite3_str *ms = sqlite3_str_new(NULL);
    emit(p, ms, p->hmoved[2 * k], p->hmoved[2 * k + 1], 2, 1, 4);
    char *m = sqlite3_str_finish(ms);
    if (!m) {
      sqlite3_free(sqlite3_str_finish(s));
      return SQLITE_NOMEM;
    }
    sqlite3_str_appendf(s, "%s(%s)", k || q->filter ? " AND " : "", m);
    sqlite3_free(m);
  }
  q->scan_filter = sqlite3_str_finish(s);
  q->having_moved = p->nhmoved;
  return q->scan_filter ? SQLITE_OK : SQLITE_NOMEM;
}

/* Rule 6's WHERE: SQLite finalises every aggregate of a group before its
** HAVING, so a sum that overflowed raises its error whatever the HAVING's
** short cuts (x OR sum(b) > 1): gpuagg_check(sums...) first, then the
** HAVING condition, in a CASE that keeps that order. */
static void flat_where(parse *p, sqlite3_str *s) {
  ga_query *q = p->q;
  int nsums = 0;
  for (int k = 0; k < q->naggs; k++)
    if (q->aggs[k].op == GA_AGG_SUM && agg_kept(p, k)) /* rule 13 */
      sqlite3_str_appendf(s, "%s\"%w\"",
                          nsums++ ? ", " : "WHERE CASE WHEN gpuagg_check(",
                          q->agg_col[k]);
  int having = p->having.b > p->having.a;
  if (nsums)
    sqlite3_str_appendall(s, having ? ") THEN (" : ") THEN 1");
  else if (having)
    sqlite3_str_appendall(s, "WHERE (");
  if (having) {
    emit(p, s, p->having.a, p->having.b, 0, 0, 3);
    sqlite3_str_appendall(s, ")");
  }
  sqlite3_str_appendall(s, nsums ? " END " : " ");
}

/* The post query and the groups table (rule 5), and the serial query. */
/* The aggregate call spanning exactly [a, b), or -1. */
static int call_at(const parse *p, int a, int b) {
  for (int j = 0; j < p->ncalls; j++)
    if (p->calls[j].all.a == a && p->calls[j].all.b == b)
      return p->calls[j].agg;
  return -1;
}

/* A LIMIT clause's integer literal at token i: its value, or -1. */
static int64_t limit_num(const parse *p, int i) {
  if (i >= p->limit.b || p->t[i].type != T_NUM || p->t[i].len > 9)
    return -1;
  int64_t v = 0;
  for (int j = 0; j < p->t[i].len; j++) {
    char c = p->z[p->t[i].off + j];
    if (c < '0' || c > '9')
      return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

/* Rule 7: a term that cannot raise an error over a group: a column (bare
** or qualified), an alias or a column number, or one aggregate call. */
static int plain_term(const parse *p, int a, int b) {
  int id = a < b && (p->t[a].type == T_ID || p->t[a].type == T_QID);
  if (call_at(p, a, b) >= 0 || (b == a + 1 && (id || p->t[a].type == T_NUM)))
    return 1;
  return b == a + 3 && id && op(p, a + 1, ".") &&
         (p->t[a + 2].type == T_ID || p->t[a + 2].type == T_QID);
}

/* Rule 7: every item of the select list and every ORDER BY term plain. */
static int plain_output(const parse *p) {
  for (int k = 0; k < p->nitems; k++)
    if (!plain_term(p, p->items[k].expr.a, p->items[k].expr.b))
      return 0;
  for (int a = p->order.a; a < p->order.b;) {
    int e = a, depth = 0;
    for (; e < p->order.b && (depth || !op(p, e, ",")); e++)
      depth += op(p, e, "(") - op(p, e, ")");
    int t = e - (kw(p, e - 1, "DESC") || kw(p, e - 1, "ASC"));
    if (!plain_term(p, a, t))
      return 0;
    a = e + 1;
  }
  return 1;
}

/* Rule 6's exception: SQLite's GROUP BY hands its groups out in key order
** and finalises each as it goes, so with a LIMIT and no ORDER BY, or one
** that may be the GROUP BY's own order (as many terms, none an aggregate:
** select.c's orderByGrp), it stops at the LIMIT and never finalises the
** later groups: a sum that overflowed there raises nothing.  The flat
** post query checks every group in its WHERE; the GROUP BY post query
** finalises in SQLite's own order and stops where it stops. */
static int limit_stops_early(const parse *p) {
  const ga_query *q = p->q;
  int sums = 0;
  for (int k = 0; k < q->naggs; k++)
    sums |= q->aggs[k].op == GA_AGG_SUM;
  if (!sums || p->limit.b <= p->limit.a)
    return 0;
  if (p->order.b <= p->order.a)
    return 1;
  for (int j = 0; j < p->ncalls; j++)
    if (p->calls[j].all.a >= p->order.a && p->calls[j].all.b <= p->order.b)
      return 0; /* an aggregate term: the sorter finalises every group */
  int terms = 0, depth = 0;
  for (int a = p->order.a, i = a; i <= p->order.b; i++) {
    if (i < p->order.b && (depth || !op(p, i, ","))) {
      depth += op(p, i, "(") - op(p, i, ")");
      continue;
    }
    terms++;
    if (p->t[a].type == T_ID || p->t[a].type == T_QID) { /* an alias's sum */
      char *name = tok_name(p, a);
      for (int k = 0; name && k < p->nitems; k++)
        if (p->items[k].alias && !sqlite3_stricmp(name, p->items[k].alias) &&
            call_at(p, p->items[k].expr.a, p->items[k].expr.b) >= 0) {
          sqlite3_free(name);
          return 0;
        }
      sqlite3_free(name); /* NOMEM: not flat, which is always exact */
      if (!name)
        return 1;
    }
    a = i + 1;
  }
  return terms == p->nterms;
}

/* Rule 7: q->topk_* (NOMEM only from the alias's name). */
static int find_topk(parse *p) {
  ga_query *q = p->q;
  q->topk_agg = -1;
  if (!q->flat || p->having.b > p->having.a || kw(p, p->distinct, "DISTINCT") ||
      p->wins.n > 0 || /* windows see every group (qwindow.c rule 5) */
      p->order.b <= p->order.a || p->limit.b <= p->limit.a || !plain_output(p))
    return SQLITE_OK;
  int a = p->order.a, e = a, depth = 0;
  for (; e < p->order.b && (depth || !op(p, e, ",")); e++)
    depth += op(p, e, "(") - op(p, e, ")");
  int desc = kw(p, e - 1, "DESC");
  if (desc || kw(p, e - 1, "ASC"))
    e--;
  int agg = call_at(p, a, e);
  if (agg < 0 && e == a + 1 &&
      (p->t[a].type == T_ID || p->t[a].type == T_QID)) {
    char *name = tok_name(p, a);
    if (!name)
      return SQLITE_NOMEM;
    for (int k = 0; k < p->nitems && agg < 0; k++)
      if (p->items[k].alias && !sqlite3_stricmp(name, p->items[k].alias))
        agg = call_at(p, p->items[k].expr.a, p->items[k].expr.b);
    sqlite3_free(name);
  }
  if (agg < 0 ||
      (q->aggs[agg].op != GA_AGG_SUM && q->aggs[agg].op != GA_AGG_TOTAL &&
       q->aggs[agg].op != GA_Q_COUNT_STAR && q->aggs[agg].op != GA_Q_COUNT) ||
      q->val_dist[q->aggs[agg].val]) /* a path's top k reads plain states */
    return SQLITE_OK;
  int i = p->limit.a;
  int64_t n = limit_num(p, i), m = 0;
  if (i + 1 == p->limit.b) {
    /* LIMIT n */
  } else if (i + 3 == p->limit.b && kw(p, i + 1, "OFFSET")) {
    m = limit_num(p, i + 2);
  } else if (i + 3 == p->limit.b && op(p, i + 1, ",")) {
    m = n; /* LIMIT m, n */
    n = limit_num(p, i + 2);
  } else {
    return SQLITE_OK;
  }
  if (n < 1 || m < 0)
    return SQLITE_OK;
  q->topk_agg = agg;
  q->topk_desc = desc;
  q->topk_k = n + m;
  return SQLITE_OK;
}

/* ---- rule 10: joins (planner/qjoin.c) ---- */

static void join_emit(void *ctx, sqlite3_str *s, int a, int b, int off) {
  emit((parse *)ctx, s, a, b, off, 0, 0);
}

/* FROM names several tables: the fact is the target (qjoin.c rule 2). */
static int read_join(parse *p, char **table) {
  ga_query *q = p->q;
  int rc = ga_qj_read(p->db, p->z, p->t, p->n, p->from.a, p->from.b, p->where.a,
                      p->where.b, &p->j, p->err);
  if (rc != SQLITE_OK)
    return rc;
  p->join = 1;
  const ga_qj_tab *f = &p->j.v[p->j.fact];
  *table = sqlite3_mprintf("\"%w\".\"%w\"", f->t.schema, f->t.table);
  q->qual = sqlite3_mprintf("%s", f->qual);
  q->has_alias = 1; /* the texts name the fact by it */
  q->join_hinted = p->j.hinted;
  p->indexed = f->idx_a >= 0;
  if (p->j.serial_why)
    q->serial_why = p->j.serial_why;
  q->join_json = sqlite3_mprintf("%s", p->j.json);
  q->join_tables = sqlite3_malloc64(sizeof(char *) * (size_t)p->j.n);
  if (!*table || !q->qual || !q->join_json || !q->join_tables)
    return SQLITE_NOMEM;
  for (int k = 0; k < p->j.n; k++) {
    if (!(q->join_tables[k] = sqlite3_mprintf("%s", p->j.v[k].t.table)))
      return SQLITE_NOMEM;
    q->njoin_tables++;
  }
  return SQLITE_OK;
}

/* Once the parameters have their numbers: the FROM clauses. */
static int join_finish(parse *p) {
  ga_query *q = p->q;
  q->join_from = ga_qj_from(&p->j, p->z, p->t, GA_QJ_WORKER, 2, join_emit, p);
  q->join_from_caller =
      ga_qj_from(&p->j, p->z, p->t, GA_QJ_CALLER, 2, join_emit, p);
  return q->join_from && q->join_from_caller ? SQLITE_OK : SQLITE_NOMEM;
}

/* The workers' filter: the ON conditions moved into WHERE (qjoin.c rule
** 5), then the text's WHERE. */
static int join_filter(parse *p) {
  ga_query *q = p->q;
  char *moved = ga_qj_moved(&p->j, 2, join_emit, p);
  if (!moved)
    return SQLITE_NOMEM;
  if (!*moved) {
    sqlite3_free(moved);
    return SQLITE_OK;
  }
  char *f = q->filter ? sqlite3_mprintf("%s AND (\n%s\n)", moved, q->filter)
                      : sqlite3_mprintf("%s", moved);
  sqlite3_free(moved);
  if (!f)
    return SQLITE_NOMEM;
  sqlite3_free(q->filter);
  q->filter = f;
  return SQLITE_OK;
}

/* The loops of SQLite's plan of sql on the caller (EXPLAIN QUERY PLAN's
** SCAN, SEARCH and BLOOM FILTER lines), each a JSON string and a comma;
** "" when it cannot be planned; NULL: no memory. */
static char *join_loops(parse *p, const char *sql) {
  sqlite3_stmt *st = NULL;
  sqlite3_str *s = sqlite3_str_new(NULL);
  char *x = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
  if (x && sqlite3_prepare_v2(p->db, x, -1, &st, NULL) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char *d = (const char *)sqlite3_column_text(st, 3);
      if (!d || (strncmp(d, "SCAN", 4) && strncmp(d, "SEARCH", 6) &&
                 strncmp(d, "BLOOM", 5)))
        continue;
      sqlite3_str_appendall(s, "\"");
      for (; *d; d++) /* JSON: the detail names tables as written */
        if (*d == '"' || *d == '\\')
          sqlite3_str_appendf(s, "\\%c", *d);
        else if ((unsigned char)*d >= 0x20)
          sqlite3_str_appendchar(s, 1, *d);
      sqlite3_str_appendall(s, "\",");
    }
  sqlite3_finalize(st);
  char *r = sqlite3_str_finish(s);
  if (!x) {
    sqlite3_free(r);
    return NULL;
  }
  sqlite3_free(x);
  return r ? r : sqlite3_mprintf("");
}

/* What a worker's piece reads, over the caller's schema. */
static char *join_worker_sql(parse *p) {
  ga_query *q = p->q;
  sqlite3_str *w = sqlite3_str_new(NULL);
  sqlite3_str_appendall(w, "SELECT ");
  for (int k = 0; k < q->nvals; k++)
    sqlite3_str_appendf(w, "%s(\n%s\n)", k ? ", " : "", q->vals[k]);
  for (int k = 0; k < q->nkeys + q->ncarry; k++)
    sqlite3_str_appendf(w, ", (\n%s\n)", q->keys[k]);
  sqlite3_str_appendf(w, " FROM %s WHERE " GA_QJ_RANGE, q->join_from_caller,
                      q->qual, q->t.rowid, q->qual, q->t.rowid);
  if (q->filter)
    sqlite3_str_appendf(w, " AND (\n%s\n)", q->filter);
  return sqlite3_str_finish(w);
}

static int join_serial(parse *p);

/* qjoin.c rule 5's choice, and last_scan's "join" with its "plan": SQLite's
** plan of a piece (EXPLAIN QUERY PLAN on the caller).  The plain JOIN form
** where that plan reads the fact's rowid range first and the serial text's
** plan has the same loops (both paths meet the rows in one order); else
** the CROSS JOIN form, outwards from the fact. */
static int join_plan(parse *p) {
  ga_query *q = p->q;
  char *sql = join_worker_sql(p);
  char *w = sql ? join_loops(p, sql) : NULL;
  char *s = join_loops(p, q->serial_sql);
  char *first = sqlite3_mprintf(
      "\"SEARCH %s USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)\",",
      q->qual);
  int rc = sql && w && s && first ? SQLITE_OK : SQLITE_NOMEM;
  if (rc == SQLITE_OK && !p->j.cross &&
      (strncmp(w, first, strlen(first)) || strcmp(w, s))) {
    p->j.cross = 1; /* the FROM clauses again */
    sqlite3_free(q->join_from);
    sqlite3_free(q->join_from_caller);
    sqlite3_free(q->serial_sql);
    q->join_from = q->join_from_caller = q->serial_sql = NULL;
    sqlite3_free(sql);
    sqlite3_free(w);
    sql = w = NULL;
    rc = join_finish(p);
    if (rc == SQLITE_OK)
      rc = join_serial(p);
    if (rc == SQLITE_OK &&
        (!(sql = join_worker_sql(p)) || !(w = join_loops(p, sql))))
      rc = SQLITE_NOMEM;
  }
  char *json = rc == SQLITE_OK ? ga_qj_json(&p->j) : NULL;
  char *j = json ? sqlite3_mprintf("%s,\"plan\":[%.*s]}", json,
                                   (int)strlen(w) - (*w ? 1 : 0), w)
                 : NULL;
  sqlite3_free(sql);
  sqlite3_free(w);
  sqlite3_free(s);
  sqlite3_free(first);
  sqlite3_free(json);
  if (rc == SQLITE_OK && !j)
    rc = SQLITE_NOMEM;
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_free(q->join_json);
  q->join_json = j;
  return SQLITE_OK;
}

/* planner/qdims.c's plan; last_scan.join says why where it keeps SQLite's
** join in the workers. */
static int join_probe_plan(parse *p) {
  ga_query *q = p->q;
  int rc = ga_qd_plan(p->db, &p->j, q, p->z, p->t, join_emit, p, &q->dims);
  const char *why = rc == SQLITE_OK ? ga_qd_why(q->dims) : NULL;
  size_t n = q->join_json ? strlen(q->join_json) : 0;
  if (why && n && q->join_json[n - 1] == '}') {
    char *j = sqlite3_mprintf("%.*s,\"probe\":{\"used\":false,\"why\":"
                              "\"%w\"}}",
                              (int)n - 1, q->join_json, why);
    if (!j)
      return SQLITE_NOMEM;
    sqlite3_free(q->join_json);
    q->join_json = j;
  }
  return rc;
}

/* The serial text: the text over the join's FROM as the workers read it
** (the fact first, NOT INDEXED: the contract's order), gpu_ names. */
static int join_serial(parse *p) {
  ga_query *q = p->q;
  sqlite3_str *s = sqlite3_str_new(NULL);
  char *from = ga_qj_from(&p->j, p->z, p->t, GA_QJ_SERIAL, 0, join_emit, p);
  char *moved = ga_qj_moved(&p->j, 0, join_emit, p);
  int has_where = p->where.b > p->where.a;
  emit(p, s, 0, p->from.a, 0, 0, 2);
  sqlite3_str_appendf(s, " %s ", from ? from : "");
  /* every rowid, as a piece's range is written: the same plan (join_plan) */
  sqlite3_str_appendf(s,
                      "WHERE likelihood(\"%w\".%s >= -9223372036854775807 - 1, "
                      "1.0) AND likelihood(\"%w\".%s <= 9223372036854775807, "
                      "1.0)",
                      q->qual, q->t.rowid, q->qual, q->t.rowid);
  if (moved && *moved)
    sqlite3_str_appendf(s, " AND %s", moved);
  if (has_where) {
    sqlite3_str_appendall(s, " AND (");
    emit(p, s, p->where.a, p->where.b, 0, 0, 2);
    sqlite3_str_appendall(s, "\n)");
  }
  sqlite3_str_appendall(s, "\n");
  emit(p, s, has_where ? p->where.b : p->from.b, p->n, 0, 0, 2);
  q->serial_sql = sqlite3_str_finish(s);
  int ok = from && moved && q->serial_sql;
  sqlite3_free(from);
  sqlite3_free(moved);
  return ok && q->groups_schema && q->post_sql ? SQLITE_OK : SQLITE_NOMEM;
}

static int make_texts(parse *p, const char *groups) {
  ga_query *q = p->q;
  q->agg_col = sqlite3_malloc64(sizeof(char *) * (size_t)(q->naggs + 1));
  if (!q->agg_col)
    return SQLITE_NOMEM;
  char *pre = internal_prefix(p);
  if (!pre)
    return SQLITE_NOMEM;
  for (int k = 0; k < q->naggs; k++)
    if (!(q->agg_col[k] = sqlite3_mprintf("%sv%d", pre, k))) {
      sqlite3_free(pre);
      return SQLITE_NOMEM;
    }
  char *handle = sqlite3_mprintf("%shandle", pre);
  sqlite3_free(pre);
  if (!handle)
    return SQLITE_NOMEM;
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int k = 0; k < q->nreps; k++)
    sqlite3_str_appendf(s, "\"%w\" %s, ", q->rep_name[k], q->rep_decl[k]);
  for (int k = 0; k < q->naggs; k++)
    sqlite3_str_appendf(s, "\"%w\", ", q->agg_col[k]);
  sqlite3_str_appendf(s, "\"%w\" HIDDEN)", handle);
  sqlite3_free(handle);
  q->groups_schema = sqlite3_str_finish(s);

  /* post: SELECT [DISTINCT] items FROM groups(?H) AS qual [GROUP BY ...]
  ** [HAVING ...] [ORDER BY ...] [LIMIT ...]; flat (rule 6): no GROUP BY,
  ** WHERE (the HAVING condition), gpuagg_value for gpuagg_pick */
  int calls = q->flat ? 3 : 1;
  s = sqlite3_str_new(NULL);
  emit(p, s, 0, p->from.a - 1, 0, 0, calls);
  sqlite3_str_appendf(s, " FROM temp.\"%w\"(?%d) AS \"%w\" ", groups,
                      q->nparams + 1, q->qual);
  if (q->flat)
    flat_where(p, s);
  span tail[5] = {p->group, p->having, p->window, p->order, p->limit};
  for (int k = q->flat ? 2 : 0; k < 5; k++) {
    if (tail[k].b <= tail[k].a)
      continue;
    int kwtok = tail[k].a - (k == 0 || k == 3 ? 2 : 1);
    emit(p, s, kwtok, tail[k].b, 0, 0, calls);
    sqlite3_str_appendall(s, " ");
  }
  q->post_sql = sqlite3_str_finish(s);

  if (p->join) /* rule 10 */
    return join_serial(p);
  /* serial: the text, gpu_ names, NOT INDEXED after the table (rowid
  ** order: the contract's tie rule) */
  s = sqlite3_str_new(NULL);
  int cut = p->from_name_end;
  emit(p, s, 0, cut, 0, 0, 2);
  if (!p->indexed && !strcmp(q->t.type, "table") && !q->t.without_rowid)
    sqlite3_str_appendall(s, " NOT INDEXED");
  sqlite3_str_appendall(s, " ");
  emit(p, s, cut, p->n, 0, 0, 2);
  q->serial_sql = sqlite3_str_finish(s);
  if (!q->groups_schema || !q->post_sql || !q->serial_sql)
    return SQLITE_NOMEM;
  /* the same with SQLite's own plan, for an indexed range (planner/path.c
  ** rule 14); none where the text names its own index clause */
  if (!p->indexed) {
    s = sqlite3_str_new(NULL);
    emit(p, s, 0, p->n, 0, 0, 2);
    if (!(q->serial_sql_ix = sqlite3_str_finish(s)))
      return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int ga_query_parse(sqlite3 *db, const char *sql, const char *groups,
                   ga_query *q, char **err) {
  parse P, *p = &P;
  sqlite3_stmt *st = NULL, *sto = NULL;
  const char *tail = NULL;
  char *table = NULL;
  int rc;
  ga_qrw rw;
  memset(q, 0, sizeof(*q));
  q->topk_agg = -1;
  memset(p, 0, sizeof(*p));
  *err = NULL;
  /* views, a WITH, subqueries: the one-table text (planner/qrewrite.c);
  ** the text as written names the columns and parameters */
  if ((rc = ga_qrewrite(db, sql, &rw, err)) != SQLITE_OK)
    return rc;
  if (rw.text) {
    if (sqlite3_prepare_v2(db, sql, -1, &sto, NULL) != SQLITE_OK) {
      ga_qrw_free(&rw);
      return SQLITE_NOMEM;
    }
    sql = rw.text;
  }
  p->db = db;
  p->z = sql;
  p->q = q;
  p->err = err;
  p->distinct = -1;
  p->ipk = -1;

  rc = ga_q_tokenize(sql, &p->t, &p->n);
  if (rc < 0)
    return SQLITE_NOMEM;
  if (rc > 0) {
    rc = fail(p, "gpu_query: an unterminated string, quote or comment%s", NULL);
    goto done;
  }
  while (p->n > 0 && op(p, p->n - 1, ";"))
    p->n--;
  for (int i = 0; i < p->n; i++)
    if (op(p, i, ";")) {
      rc = fail(p,
                "gpu_query: one SELECT statement, not several (one gpu_query "
                "table for each)%s",
                NULL);
      goto done;
    }
  if (kw(p, 0, "WITH")) {
    rc = fail(p,
              "gpu_query: common table expressions (WITH) are not "
              "supported%s",
              NULL);
    goto done;
  }
  if (!kw(p, 0, "SELECT")) {
    rc = fail(p, "gpu_query: the argument must be one SELECT%s",
              kw(p, 0, "VALUES") ? " (not VALUES)" : "");
    goto done;
  }
  /* SQLite's own errors first: the text must compile on the caller */
  rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_NOMEM)
      goto done;
    /* the caller's interrupt (SQLite reports it from a prepare inside a
    ** running statement as SQLITE_ERROR "interrupted"): SQLITE_INTERRUPT,
    ** as the statement's other steps give it, not an error of the text */
    if ((rc & 0xff) == SQLITE_INTERRUPT ||
        !strcmp(sqlite3_errmsg(db), sqlite3_errstr(SQLITE_INTERRUPT))) {
      rc = SQLITE_INTERRUPT;
      goto done;
    }
    const char *em = sqlite3_errmsg(db);
    const char *hint = /* qhint.c: median, variance, ... */
        !strncmp(em, "no such function: ", 18) ? ga_qhint(em + 18) : NULL;
    *err = sqlite3_mprintf("gpu_query: %s%s%s", em, hint ? "; " : "",
                           hint ? hint : "");
    rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  if (!st) {
    rc = fail(p, "gpu_query: the argument must be one SELECT%s", NULL);
    goto done;
  }
  /* the clauses */
  {
    int depth = 0;
    for (int i = 1; i < p->n; i++) {
      if (op(p, i, "("))
        depth++;
      else if (op(p, i, ")"))
        depth--;
      if (kw(p, i, "SELECT")) {
        /* planner/qrewrite.c leaves a join's subqueries (rule 10) */
        int f = clause_end(p, 1), fe = f < p->n ? clause_end(p, f + 1) : f;
        int joined = f < p->n && ga_qj_is_join(p->z, p->t, f + 1, fe);
        rc = fail(p,
                  joined && (i < f || i >= fe)
                      ? "gpu_query: a join's text with a subquery is not "
                        "supported yet (issue 38): aggregate the join in "
                        "gpu_query and read the subquery's value as a "
                        "parameter%s"
                      : "gpu_query: a subquery in FROM is not supported "
                        "(FROM names one table, a view or a WITH "
                        "expression)%s",
                  NULL);
        goto done;
      }
      if (depth == 0 &&
          (kw(p, i, "UNION") || kw(p, i, "INTERSECT") || kw(p, i, "EXCEPT"))) {
        rc = fail(p,
                  "gpu_query: compound selects (UNION, INTERSECT, "
                  "EXCEPT) are not supported: make one gpu_query table of "
                  "each SELECT and combine their rows in SQLite (SELECT * "
                  "FROM q1 UNION ALL SELECT * FROM q2)%s",
                  NULL);
        goto done;
      }
    }
  }
  int i = 1;
  if (kw(p, i, "DISTINCT") || kw(p, i, "ALL"))
    p->distinct = i++;
  p->items_span.a = i;
  p->items_span.b = i = clause_end(p, i);
  if (!kw(p, i, "FROM")) {
    rc = fail(p, "gpu_query: the SELECT must read FROM one table%s", NULL);
    goto done;
  }
  p->from.a = i + 1;
  p->from.b = i = clause_end(p, i + 1);
  if (kw(p, i, "WHERE")) {
    p->where.a = i + 1;
    p->where.b = i = clause_end(p, i + 1);
  }
  if (kw(p, i, "GROUP") && kw(p, i + 1, "BY")) {
    p->group.a = i + 2;
    p->group.b = i = clause_end(p, i + 2);
  }
  if (kw(p, i, "HAVING")) {
    p->having.a = i + 1;
    p->having.b = i = clause_end(p, i + 1);
  }
  if (kw(p, i, "WINDOW")) { /* qwindow.c */
    p->window.a = i + 1;
    p->window.b = i = clause_end(p, i + 1);
    if ((rc = ga_qw_clause(&p->wins, p->z, p->t, p->n, p->window.a,
                           p->window.b)))
      goto done;
  }
  if (kw(p, i, "ORDER") && kw(p, i + 1, "BY")) {
    p->order.a = i + 2;
    p->order.b = i = clause_end(p, i + 2);
  }
  if (kw(p, i, "LIMIT")) {
    p->limit.a = i + 1;
    p->limit.b = i = p->n;
  }
  if (i != p->n) {
    rc = fail(p, "gpu_query: cannot read the clauses of the SELECT%s", NULL);
    goto done;
  }
  if ((rc = read_from(p, &table)) != SQLITE_OK)
    goto done;
  rc = ga_target_resolve(db, table, &q->t, err);
  if (rc != SQLITE_OK) {
    if (*err && !strncmp(*err, "gpu_aggregate: ", 15)) {
      char *e = sqlite3_mprintf("gpu_query: %s", *err + 15);
      sqlite3_free(*err);
      *err = e;
    }
    goto done;
  }
  if (!strcmp(q->t.type, "view") || !strcmp(q->t.type, "virtual")) {
    *err = sqlite3_mprintf("gpu_query: %s is a %s table (FROM must name a "
                           "rowid table)",
                           q->t.table, q->t.type);
    rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  if (q->t.without_rowid || !q->t.rowid) {
    *err = sqlite3_mprintf(
        "gpu_query: %s is %s (FROM must name a rowid table%s%s)", q->t.table,
        q->t.without_rowid ? "a WITHOUT ROWID table" : "without a rowid name",
        q->t.without_rowid ? ": copy it into one, CREATE TABLE c AS SELECT * "
                             "FROM "
                           : "",
        q->t.without_rowid ? q->t.table : "");
    rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  p->ipk = find_ipk(p);
  q->nparams = sqlite3_bind_parameter_count(sto ? sto : st);
  if ((rc = number_params(p, st)) != SQLITE_OK)
    goto done;
  if (p->join && (rc = join_finish(p)) != SQLITE_OK) /* rule 10 */
    goto done;
  if ((rc = read_items(p, st)) != SQLITE_OK)
    goto done;
  if ((rc = list_aggs(p)) != SQLITE_OK)
    goto done;
  q->vals = sqlite3_malloc64(sizeof(char *) * (GA_MAX_STATES + 1));
  p->valnorm = sqlite3_malloc64(sizeof(char *) * (GA_MAX_STATES + 1));
  q->aggs = sqlite3_malloc64(sizeof(ga_qagg) * GA_Q_MAX_AGGS);
  if (!q->vals || !p->valnorm || !q->aggs) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  /* aggregates: in the select list, HAVING and ORDER BY only (SQLite has
  ** refused them elsewhere) */
  p->in_items = 1;
  rc = find_calls(p, p->items_span.a, p->items_span.b);
  p->in_items = 0;
  if (rc || (rc = find_calls(p, p->having.a, p->having.b)) ||
      (rc = find_calls(p, p->window.a, p->window.b)) ||
      (rc = find_calls(p, p->order.a, p->order.b)))
    goto done;
  if ((rc = read_terms(p)) != SQLITE_OK)
    goto done;
  if (q->naggs == 0 && q->nkeys == 0 && p->wins.n) { /* qwindow.c rule 4 */
    const tok *nt = &p->t[p->wins.v[0].name];
    *err = sqlite3_mprintf(
        "gpu_query: window functions over the table's rows (%.*s() OVER "
        "without GROUP BY or an aggregate) are not supported: gpu_query "
        "runs window functions over the groups of an aggregate query "
        "(SELECT k, sum(x), rank() OVER (ORDER BY sum(x) DESC) FROM t "
        "GROUP BY k); run this one on SQLite itself",
        nt->len, p->z + nt->off);
    rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  if (q->naggs == 0 && q->nkeys == 0 && q->serial_why != ga_qpct_why) {
    rc = fail(p,
              "gpu_query: the query has neither an aggregate nor GROUP "
              "BY (nothing to aggregate): gpu_query computes aggregates; a "
              "SELECT of rows runs as it is on SQLite%s",
              NULL);
    goto done;
  }
  /* each item's expression, not its alias: `sum(x) AS s` names no column
  ** s, even where the table has one */
  for (int k = 0; k < p->nitems && rc == SQLITE_OK; k++)
    rc = check_bare(p, p->items[k].expr.a, p->items[k].expr.b);
  if (rc != SQLITE_OK || (rc = check_bare(p, p->having.a, p->having.b)) ||
      (rc = check_bare(p, p->window.a, p->window.b)) || (rc = check_order(p)))
    goto done;
  if (q->nkeys + q->ncarry > GA_MAX_KEYS) {
    rc = fail(p,
              "gpu_query: the group terms read too many columns (at most %s "
              "group terms and the columns they read: group by fewer terms, "
              "or by bare columns)",
              "32");
    goto done;
  }
  if (q->nvals == 0) { /* count(*) alone: one value to count rows with */
    q->vals[0] = sqlite3_mprintf("NULL");
    p->valnorm[0] = sqlite3_mprintf("NULL");
    if (!q->vals[0] || !p->valnorm[0]) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    q->nvals = 1;
  }
  /* ga_parts.val_minmax: values only min, max and count read */
  for (int k = 0; k < q->nvals; k++) {
    q->val_minmax[k] = 1;
    q->val_best[k] = 0;
  }
  for (int k = 0; k < q->naggs; k++) {
    int best = q->aggs[k].op == GA_AGG_MIN || q->aggs[k].op == GA_AGG_MAX;
    q->val_sum[q->aggs[k].val] |= q->aggs[k].op == GA_AGG_SUM;
    if (q->aggs[k].op != GA_Q_COUNT_STAR && q->aggs[k].op != GA_Q_COUNT &&
        !best)
      q->val_minmax[q->aggs[k].val] = 0;
    if (best)
      q->val_best[q->aggs[k].val] = 1;
  }
  if (p->where.b > p->where.a &&
      !(q->filter = text(p, p->where.a, p->where.b, 2, 1))) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  if (p->join && (rc = join_filter(p)) != SQLITE_OK) /* rule 10 */
    goto done;
  if ((rc = having_to_where(p)) != SQLITE_OK) /* rule 12 */
    goto done;
  if ((rc = find_folds(p)) != SQLITE_OK) /* rule 13 */
    goto done;
  if ((rc = name_columns(p, sto ? sto : st)) != SQLITE_OK)
    goto done;
  q->flat &= !limit_stops_early(p); /* rule 6 */
  if ((rc = find_topk(p)) != SQLITE_OK)
    goto done;
  rc = make_texts(p, groups);
  if (rc == SQLITE_OK && p->join) /* qjoin.c rule 5 */
    rc = join_plan(p);
  if (rc == SQLITE_OK && p->join) /* planner/qdims.c */
    rc = join_probe_plan(p);
  if (rw.partial_why) /* else rule 14's, or none */
    q->partial_why = rw.partial_why;
  if (rc == SQLITE_OK && rw.subs.n) { /* qrewrite.c rule 5, qsubq.c */
    q->subs = rw.subs;
    memset(&rw.subs, 0, sizeof(rw.subs));
    sqlite3_free(q->serial_sql);
    q->serial_sql = rw.serial_sql;
    rw.serial_sql = NULL;
    sqlite3_free(q->serial_sql_ix); /* the serial path: the text as written */
    q->serial_sql_ix = NULL;
  }
  if (rc == SQLITE_OK && rw.serial_why) { /* qrewrite.c rules 4, 5 */
    q->serial_why = rw.serial_why;
    sqlite3_free(q->serial_sql);
    q->serial_sql = rw.serial_sql;
    rw.serial_sql = NULL;
  }

done:
  sqlite3_finalize(st);
  sqlite3_finalize(sto);
  ga_qrw_free(&rw);
  sqlite3_free(table);
  sqlite3_free(p->t);
  for (int k = 0; k < p->nitems; k++)
    sqlite3_free(p->items[k].alias);
  sqlite3_free(p->items);
  sqlite3_free(p->terms);
  sqlite3_free(p->hterms);
  sqlite3_free(p->hmoved);
  sqlite3_free(p->folds);
  sqlite3_free(p->calls);
  ga_qw_free(&p->wins);
  ga_qj_free(&p->j);
  sqlite3_free(p->rep_col);
  sqlite3_free(p->pre);
  for (int k = 0; k < p->naggnames; k++)
    sqlite3_free(p->aggnames[k]);
  sqlite3_free(p->aggnames);
  if (p->valnorm)
    for (int k = 0; k < q->nvals; k++)
      sqlite3_free(p->valnorm[k]);
  sqlite3_free(p->valnorm);
  if (rc != SQLITE_OK)
    ga_query_free(q);
  if (rc == SQLITE_ERROR && !*err)
    rc = SQLITE_NOMEM;
  return rc;
}

void ga_query_free(ga_query *q) {
  ga_qsubs_free(&q->subs);
  ga_target_free(&q->t);
  sqlite3_free(q->qual);
  sqlite3_free(q->filter);
  sqlite3_free(q->scan_filter);
  for (int k = 0; q->keys && k < q->nkeys + q->ncarry; k++)
    sqlite3_free(q->keys[k]);
  sqlite3_free(q->keys);
  for (int k = 0; q->vals && k < q->nvals; k++)
    sqlite3_free(q->vals[k]);
  sqlite3_free(q->vals);
  for (int k = 0; k < q->nreps; k++) {
    sqlite3_free(q->rep_name[k]);
    sqlite3_free(q->rep_decl[k]);
  }
  sqlite3_free(q->rep_name);
  sqlite3_free(q->rep_decl);
  sqlite3_free(q->rep_slot);
  for (int k = 0; q->agg_col && k < q->naggs; k++)
    sqlite3_free(q->agg_col[k]);
  sqlite3_free(q->agg_col);
  sqlite3_free(q->aggs);
  sqlite3_free(q->groups_schema);
  sqlite3_free(q->post_sql);
  sqlite3_free(q->serial_sql);
  sqlite3_free(q->serial_sql_ix);
  for (int k = 0; q->param_name && k < q->nparams; k++)
    sqlite3_free(q->param_name[k]);
  sqlite3_free(q->param_name);
  for (int k = 0; k < q->ncols; k++)
    sqlite3_free(q->col_name[k]);
  sqlite3_free(q->col_name);
  sqlite3_free(q->join_from);
  sqlite3_free(q->join_from_caller);
  sqlite3_free(q->join_json);
  ga_qd_free(q->dims);
  for (int k = 0; k < q->njoin_tables; k++)
    sqlite3_free(q->join_tables[k]);
  sqlite3_free(q->join_tables);
  memset(q, 0, sizeof(*q));
}

void ga_query_parts(const ga_query *q, ga_parts *p,
                    sqlite3_value *const *params, int nparams) {
  memset(p, 0, sizeof(*p));
  p->filter = q->scan_filter ? q->scan_filter : q->filter; /* rule 12 */
  p->alias = q->has_alias ? q->qual : NULL;
  p->nkeys = q->nkeys;
  p->ncarry = q->ncarry;
  p->nvals = q->nvals;
  p->keys = (const char *const *)q->keys;
  p->vals = (const char *const *)q->vals;
  p->params = params;
  p->nparams = nparams;
  /* grouped: one worker's hash grouping beats the serial text's GROUP BY
  ** (it sorts); ungrouped, the serial text is as cheap (bench/RESULTS.md
  ** §11) */
  p->one_worker = q->nkeys > 0;
  p->any_order = 1;
  p->val_minmax = q->val_minmax;
  p->val_best = q->val_best;
  p->topk_val = q->topk_agg >= 0 ? q->aggs[q->topk_agg].val : -1;
  p->topk_total = q->topk_agg >= 0 && q->aggs[q->topk_agg].op == GA_AGG_TOTAL;
  p->topk_count = q->topk_agg < 0                              ? 0
                  : q->aggs[q->topk_agg].op == GA_Q_COUNT_STAR ? 1
                  : q->aggs[q->topk_agg].op == GA_Q_COUNT      ? 2
                                                               : 0;
  p->topk_desc = q->topk_desc;
  p->topk_k = q->topk_k;
  p->val_sum = q->val_sum;
  p->aggs = q->aggs; /* issue 39: the GPU cache's medians */
  p->naggs = q->naggs;
  p->post = q->post_sql;
  p->join_from = q->join_from; /* rule 10 */
  p->join_from_caller = q->join_from_caller;
  p->join_tables = (const char *const *)q->join_tables;
  p->njoin_tables = q->njoin_tables;
  p->dims = q->dims;                               /* planner/qdims.c */
  p->key_memo = q->nkeys > 0 ? q->key_memo : NULL; /* rule 11 */
  /* rule 9: DISTINCT values; an ungrouped query's one group is a grouped
  ** scan's (one NULL key), since only hash mode steps sets */
  static const char *const null_key[] = {"NULL"};
  int dist = 0, sq = 0;
  for (int k = 0; k < q->nvals; k++) {
    dist |= q->val_dist[k] != 0;
    sq |= q->val_sq[k] != 0;
  }
  p->val_sq = sq ? q->val_sq : NULL; /* rule 14: a Σx², stepped as sets */
  if (dist || sq) {
    p->val_dist = dist ? q->val_dist : NULL;
    if (q->nkeys == 0) {
      p->nkeys = 1;
      p->keys = null_key;
      p->one_worker = 1;
    }
  }
}
