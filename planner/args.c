/*
** planner/args.c — gpu_aggregate's arguments: lexing the SQL text of the
** expression, filter and group-by, resolving the table name, and the SQL
** texts built from them (the serial reference query and the workers').
**
** Rules:
**   1. The table argument is only ever used as a quoted identifier, never
**      pasted into SQL (gpu_aggregate('t; DROP TABLE t', 'x') is "no such
**      table").
**   2. The other arguments are SQL text pasted into SQL, so each must be one
**      expression by itself: the lexer refuses unbalanced parentheses (a
**      ')' before its '(' would close ours: '1) OR (1' would otherwise widen
**      a worker's rowid range), any ';', parameters (ours are ?1 and ?2),
**      and unterminated strings, quoted names and comments.  Each argument
**      is pasted inside parentheses on lines of its own, so a '--' comment
**      ends before our text goes on; the statement is then prepared once
**      and must consume all of our text (aggregate_vtab.c).
**   3. The expression is pasted as ((X)): 'DISTINCT x' or '*' is a syntax
**      error, not a different aggregate.  The group-by is pasted as +(G),
**      never as a bare integer that GROUP BY would read as a column number;
**      unary + keeps G's collation and value.
**   4. The lexer follows SQLite's tokenizer: '...' strings ('' inside),
**      "...", [...] and `...` names, x'..' blobs, -- and C comments.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"
#include "planner.h"

/* ---- lexing ---- */

static int id_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c >= 0x80;
}
static int id_char(unsigned char c) {
  return id_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* SQLite's date and time functions: flagged deterministic, yet 'now'
** makes their value the statement's time (rule 5 of planner/path.c). */
static int time_fn(const char *z, int n) {
  static const char *const names[] = {"julianday", "date",     "time",
                                      "datetime",  "strftime", "unixepoch"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((int)strlen(names[i]) == n && !sqlite3_strnicmp(z, names[i], n))
      return 1;
  return 0;
}

static int current_kw(const char *z, int n) {
  return (n == 12 && !sqlite3_strnicmp(z, "current_time", n)) ||
         (n == 12 && !sqlite3_strnicmp(z, "current_date", n)) ||
         (n == 17 && !sqlite3_strnicmp(z, "current_timestamp", n));
}

/* Does the string literal's text hold "now" in any case? */
static int holds_now(const char *z) {
  for (; *z; z++)
    if (!sqlite3_strnicmp(z, "now", 3))
      return 1;
  return 0;
}

static void time_mark(ga_lex *o, const char *z, int n) {
  if (!o->time_call[0])
    sqlite3_snprintf((int)sizeof o->time_call, o->time_call, "%.*s", n, z);
}

/* Does the text hold "localtime" or "utc" in any case (a modifier that
** follows the process's TZ)? */
static int holds_tz(const char *z) {
  for (; *z; z++)
    if (!sqlite3_strnicmp(z, "localtime", 9) || !sqlite3_strnicmp(z, "utc", 3))
      return 1;
  return 0;
}

static void tz_mark(ga_lex *o, const char *z, int n) {
  if (!o->tz_call[0])
    sqlite3_snprintf((int)sizeof o->tz_call, o->tz_call, "%.*s", n, z);
}

static void time_col_mark(ga_lex *o, const char *z, int n) {
  if (!o->time_col[0])
    sqlite3_snprintf((int)sizeof o->time_col, o->time_col, "%.*s", n, z);
}

/* A date and time call with no argument inside another's arguments
** (date(julianday())): the name at z, then "(", ")" (spaces between). */
static int empty_call(const char *z) {
  while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r' || *z == '\f')
    z++;
  if (*z++ != '(')
    return 0;
  while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r' || *z == '\f')
    z++;
  return *z == ')' || *z == '/' || *z == '-'; /* a comment: as if empty */
}

static int push(char ***list, int *n, const char *z, int len) {
  char **l = sqlite3_realloc64(*list, sizeof(char *) * (size_t)(*n + 1));
  if (!l)
    return SQLITE_NOMEM;
  *list = l;
  l[*n] = sqlite3_mprintf("%.*s", len, z);
  if (!l[*n])
    return SQLITE_NOMEM;
  (*n)++;
  return SQLITE_OK;
}

/* A quoted name at z (quote q, closing c; doubled closers stand for one):
** its dequoted text into *out.  Returns the length consumed, 0 when
** unterminated. */
static int quoted(const char *z, char c, char **out) {
  int i = 1;
  sqlite3_str *s = sqlite3_str_new(NULL);
  for (;; i++) {
    if (!z[i]) {
      sqlite3_free(sqlite3_str_finish(s));
      *out = NULL;
      return 0;
    }
    if (z[i] == c) {
      if (c != ']' && z[i + 1] == c) {
        i++;
      } else {
        i++;
        break;
      }
    }
    sqlite3_str_appendchar(s, 1, z[i]);
  }
  *out = sqlite3_str_finish(s);
  return i;
}

int ga_lex_sql(const char *z, ga_lex *o) {
  int depth = 0, after_collate = 0, rc = SQLITE_OK;
  int after_dot = 0; /* the last token was '.' (comments between pass) */
  /* a date and time call: its name was the last token (pending), then the
  ** depth of its argument list (tdepth, 0 outside one) and tokens seen */
  const char *tname = NULL;
  int tn = 0, pending = 0, tdepth = 0, targs = 0;
  /* the argument's index (commas at the call's depth), and the first that
  ** is a modifier (strftime's is 2: format, time value, modifiers) */
  int targn = 0, tmod = 1;
  if (!z)
    return SQLITE_OK;
  while (*z && rc == SQLITE_OK) {
    unsigned char c = (unsigned char)*z;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      z++;
      continue;
    }
    if (c == '-' && z[1] == '-') {
      while (*z && *z != '\n')
        z++;
      continue;
    }
    if (c == '/' && z[1] == '*') {
      const char *e = strstr(z + 2, "*/");
      if (!e) {
        o->bad = 1;
        break;
      }
      z = e + 2;
      continue;
    }
    if (c == '\'' || ((c == 'x' || c == 'X') && z[1] == '\'')) {
      if (c != '\'')
        z++;
      char *s;
      int n = quoted(z, '\'', &s);
      if (!n) {
        o->bad = 1;
        break;
      }
      if (tdepth && (!s || holds_now(s)))
        time_mark(o, tname, tn);
      if (tdepth && (!s || holds_tz(s)))
        tz_mark(o, tname, tn);
      targs += tdepth != 0;
      pending = 0;
      sqlite3_free(s);
      z += n;
      after_collate = after_dot = 0;
      continue;
    }
    if (c == '"' || c == '[' || c == '`') {
      char *s;
      int n = quoted(z, c == '[' ? ']' : (char)c, &s);
      if (!n) {
        o->bad = 1;
        break;
      }
      if (!s) { /* the name's copy: out of memory */
        rc = SQLITE_NOMEM;
        break;
      }
      rc = after_collate ? push(&o->colls, &o->ncolls, s, (int)strlen(s))
                         : push(&o->ids, &o->nids, s, (int)strlen(s));
      if (rc == SQLITE_OK && !after_collate && !after_dot)
        rc = push(&o->tids, &o->ntids, s, (int)strlen(s));
      after_dot = 0;
      if (!after_collate && tdepth && c == '"' && holds_now(s))
        time_mark(o, tname, tn);         /* "now": a string where DQS allows */
      else if (!after_collate && tdepth) /* a column: it may hold 'now' */
        time_col_mark(o, tname, tn);
      if (!after_collate && tdepth && (targn >= tmod || holds_tz(s)))
        tz_mark(o, tname, tn); /* a modifier from a column, or "utc" */
      targs += tdepth != 0;    /* an argument, so not date() */
      pending = !after_collate && !tdepth && time_fn(s, (int)strlen(s));
      if (pending)
        tname = z + 1, tn = n - 2;
      sqlite3_free(s);
      z += n;
      after_collate = 0;
      continue;
    }
    if (id_start(c)) {
      const char *b = z;
      while (id_char((unsigned char)*z))
        z++;
      int n = (int)(z - b);
      targs += tdepth != 0; /* an argument, so not date() */
      if (after_collate) {
        rc = push(&o->colls, &o->ncolls, b, n);
        after_collate = 0;
      } else if (n == 7 && !sqlite3_strnicmp(b, "collate", 7)) {
        after_collate = 1;
      } else {
        if (n == 6 && !sqlite3_strnicmp(b, "select", 6))
          o->has_select = 1;
        if (current_kw(b, n) || (tdepth && time_fn(b, n) && empty_call(z)))
          time_mark(o, tdepth ? tname : b, tdepth ? tn : n);
        else if (tdepth) /* a column or a function: a row may hold 'now' */
          time_col_mark(o, tname, tn);
        if (tdepth && targn >= tmod) /* a modifier may be 'localtime' */
          tz_mark(o, tname, tn);
        pending = !tdepth && time_fn(b, n);
        if (pending)
          tname = b, tn = n;
        rc = push(&o->ids, &o->nids, b, n);
        if (rc == SQLITE_OK && !after_dot)
          rc = push(&o->tids, &o->ntids, b, n);
      }
      after_dot = 0;
      continue;
    }
    after_collate = 0;
    after_dot = c == '.' && !(z[1] >= '0' && z[1] <= '9');
    if (c == '(' && pending && !tdepth) {
      tdepth = depth + 1, targs = 0, targn = 0;
      tmod = tn == 8 && !sqlite3_strnicmp(tname, "strftime", 8) ? 2 : 1;
    } else if (c == ')' && tdepth && depth == tdepth) {
      if (!targs) /* date() and the like: now */
        time_mark(o, tname, tn);
      tdepth = 0;
    } else if (tdepth && c == ',' && depth == tdepth) {
      targn++;
    } else if (tdepth && c != ',' && c != '(' && c != ')') {
      targs++;
    }
    pending = 0;
    if ((c >= '0' && c <= '9') || (c == '.' && z[1] >= '0' && z[1] <= '9')) {
      while (id_char((unsigned char)*z) || *z == '.' ||
             ((*z == '+' || *z == '-') && (z[-1] == 'e' || z[-1] == 'E')))
        z++;
      continue;
    }
    if (c == '?' || c == ':' || c == '@' || c == '$' || c == '#') {
      o->param = 1;
      if (tdepth) /* a parameter may be bound to 'now' (its 'localtime':
                   ** ext/query/partial_fns.c reads the values) */
        time_col_mark(o, tname, tn);
      z++;
      continue;
    }
    if (c == ';')
      o->semicolon = 1;
    if (c == ',' && depth == 0)
      o->commas++;
    if (c == '(')
      depth++;
    if (c == ')' && --depth < 0)
      o->bad = 1;
    z++;
  }
  if (depth != 0)
    o->bad = 1;
  return rc;
}

void ga_lex_free(ga_lex *l) {
  for (int i = 0; i < l->nids; i++)
    sqlite3_free(l->ids[i]);
  for (int i = 0; i < l->ncolls; i++)
    sqlite3_free(l->colls[i]);
  for (int i = 0; i < l->ntids; i++)
    sqlite3_free(l->tids[i]);
  sqlite3_free(l->tids);
  sqlite3_free(l->ids);
  sqlite3_free(l->colls);
  memset(l, 0, sizeof(*l));
}

/* ---- the table ---- */

/* One identifier at *pz (quoted, or bare up to the next '.'). */
static char *ident(const char **pz, int *nomem) {
  const char *z = *pz;
  char *out = NULL;
  if (*z == '"' || *z == '`' || *z == '\'' || *z == '[') {
    int n = quoted(z, *z == '[' ? ']' : *z, &out);
    if (!n)
      return NULL;
    *pz = z + n;
  } else {
    const char *b = z;
    while (*z && *z != '.')
      z++;
    if (z == b)
      return NULL;
    out = sqlite3_mprintf("%.*s", (int)(z - b), b);
    *pz = z;
  }
  if (!out)
    *nomem = 1;
  return out;
}

static char *dup_col(sqlite3_stmt *st, int i) {
  const char *z = (const char *)sqlite3_column_text(st, i);
  return sqlite3_mprintf("%s", z ? z : "");
}

int ga_target_resolve(sqlite3 *db, const char *arg, ga_target *t,
                      char **pzErr) {
  const char *z = arg;
  char *p1 = NULL, *p2 = NULL;
  int nomem = 0, rc = SQLITE_OK;
  sqlite3_stmt *st = NULL;
  memset(t, 0, sizeof(*t));

  while (*z == ' ')
    z++;
  p1 = ident(&z, &nomem);
  if (p1 && *z == '.') {
    z++;
    p2 = ident(&z, &nomem);
  }
  while (*z == ' ')
    z++;
  if (nomem) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  if (!p1 || *z || (p2 == NULL && z[-1] == '.')) {
    /* not (schema.)name: the whole text as a name (rule 1) */
    sqlite3_free(p1);
    sqlite3_free(p2);
    p1 = sqlite3_mprintf("%s", arg);
    p2 = NULL;
    if (!p1) {
      rc = SQLITE_NOMEM;
      goto done;
    }
  }
  /* which schema: the named one, else SQLite's search order */
  rc = sqlite3_prepare_v2(
      db,
      p2 ? "SELECT t.schema, t.name, t.type, t.wr FROM pragma_table_list(?2) "
           "t WHERE t.schema = ?1 COLLATE NOCASE"
         : "SELECT t.schema, t.name, t.type, t.wr FROM pragma_table_list(?1) "
           "t JOIN pragma_database_list d ON d.name = t.schema "
           "ORDER BY t.schema = 'temp' DESC, d.seq",
      -1, &st, NULL);
  if (rc != SQLITE_OK) {
    rc = ga_intr_rc(db, rc);
    if ((rc & 0xff) != SQLITE_INTERRUPT && (rc & 0xff) != SQLITE_NOMEM)
      *pzErr = sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(db));
    goto done;
  }
  sqlite3_bind_text(st, 1, p1, -1, SQLITE_STATIC);
  if (p2)
    sqlite3_bind_text(st, 2, p2, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    t->schema = dup_col(st, 0);
    t->table = dup_col(st, 1);
    t->type = dup_col(st, 2);
    t->without_rowid = sqlite3_column_int(st, 3);
    rc = t->schema && t->table && t->type ? SQLITE_OK : SQLITE_NOMEM;
  } else if (rc == SQLITE_DONE) {
    *pzErr = sqlite3_mprintf("gpu_aggregate: no such table: %s", arg);
    rc = SQLITE_ERROR;
  } else {
    rc = ga_intr_rc(db, sqlite3_reset(st));
    if ((rc & 0xff) != SQLITE_INTERRUPT && (rc & 0xff) != SQLITE_NOMEM)
      *pzErr = sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rc != SQLITE_OK)
    goto done;

  /* columns, and a rowid alias that no column shadows */
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, ?2)", -1,
                          &st, NULL);
  if (rc != SQLITE_OK) {
    rc = ga_intr_rc(db, rc);
    if ((rc & 0xff) != SQLITE_INTERRUPT && (rc & 0xff) != SQLITE_NOMEM)
      *pzErr = sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(db));
    goto done;
  }
  sqlite3_bind_text(st, 1, t->table, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->schema, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *c = (const char *)sqlite3_column_text(st, 0);
    if (push(&t->cols, &t->ncols, c ? c : "", c ? (int)strlen(c) : 0)) {
      rc = SQLITE_NOMEM;
      break;
    }
  }
  if (rc == SQLITE_DONE)
    rc = SQLITE_OK;
  else if (rc != SQLITE_NOMEM) {
    rc = ga_intr_rc(db, sqlite3_reset(st));
    if ((rc & 0xff) != SQLITE_INTERRUPT && (rc & 0xff) != SQLITE_NOMEM)
      *pzErr = sqlite3_mprintf("gpu_aggregate: %s", sqlite3_errmsg(db));
  }
  static const char *const aliases[] = {"rowid", "_rowid_", "oid"};
  for (int a = 0; a < 3 && !t->rowid; a++) {
    int shadowed = 0;
    for (int i = 0; i < t->ncols; i++)
      if (!sqlite3_stricmp(t->cols[i], aliases[a]))
        shadowed = 1;
    if (!shadowed)
      t->rowid = aliases[a];
  }
done:
  sqlite3_finalize(st);
  sqlite3_free(p1);
  sqlite3_free(p2);
  /* a failure leaves *t empty: callers free a target only when it resolved
  ** (an interrupt while reading the columns used to leak the names) */
  if (rc != SQLITE_OK)
    ga_target_free(t);
  return rc;
}

void ga_target_free(ga_target *t) {
  sqlite3_free(t->schema);
  sqlite3_free(t->table);
  sqlite3_free(t->type);
  for (int i = 0; i < t->ncols; i++)
    sqlite3_free(t->cols[i]);
  sqlite3_free(t->cols);
  memset(t, 0, sizeof(*t));
}

/* ---- SQL texts ---- */

static int has(const char *z) { return z && *z; }

char *ga_sql_serial(const ga_target *t, const ga_args *a) {
  /* NOT INDEXED on a rowid table: rows in rowid order, so where the
  ** contract leaves a choice the first row in rowid order wins, as on the
  ** parallel path (a filter's index would give another order).  One fused
  ** aggregate per row, as the workers run it: the reference query's seven
  ** would evaluate X six times. */
  int ni = !strcmp(t->type, "table") && !t->without_rowid;
  sqlite3_str *s = sqlite3_str_new(NULL);
  if (has(a->group))
    sqlite3_str_appendf(s, "SELECT +(\n%s\n), ", a->group);
  else
    sqlite3_str_appendall(s, "SELECT NULL, ");
  sqlite3_str_appendf(s, "gpuagg_partial((\n%s\n)) FROM \"%w\".\"%w\"%s",
                      a->expr, t->schema, t->table, ni ? " NOT INDEXED" : "");
  if (has(a->filter))
    sqlite3_str_appendf(s, " WHERE (\n%s\n)", a->filter);
  if (has(a->group))
    sqlite3_str_appendf(s, " GROUP BY +(\n%s\n)", a->group);
  return sqlite3_str_finish(s);
}

void ga_parts_of_args(const ga_args *a, ga_parts *p, const char **keys,
                      const char **vals) {
  memset(p, 0, sizeof(*p));
  p->topk_val = -1; /* every group */
  p->filter = has(a->filter) ? a->filter : NULL;
  p->nkeys = has(a->group);
  keys[0] = a->group;
  vals[0] = a->expr;
  p->nvals = 1;
  p->keys = keys;
  p->vals = vals;
}

char *ga_sql_piece(const ga_target *t, const ga_parts *p, int hash) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  int grouped = p->nkeys > 0;
  sqlite3_str_appendall(s, "SELECT ");
  for (int i = 0; i < p->nkeys; i++)
    if (hash && grouped && p->key_memo && p->key_memo[i] >= 0)
      /* evaluated only where the worker's memo lacks the column's value
      ** (engine/scan/keymemo.h) */
      sqlite3_str_appendf(s,
                          "+(CASE WHEN gpuagg_keymemo_miss(%d, \n%s\n) THEN "
                          "(\n%s\n) END), ",
                          i, p->keys[p->key_memo[i]], p->keys[i]);
    else
      sqlite3_str_appendf(s, "+(\n%s\n), ", p->keys[i]);
  for (int i = p->nkeys; i < p->nkeys + p->ncarry; i++)
    sqlite3_str_appendf(s, "%s, ", p->keys[i]);
  /* hash mode: the rows themselves, in rowid order (a plain rowid-range
  ** scan: NOT INDEXED); the worker groups them (engine/scan/scan.h) */
  for (int i = 0; i < p->nvals; i++)
    sqlite3_str_appendf(s, "%s%s(\n%s\n)%s", i ? ", " : "",
                        hash && grouped ? "" : "gpuagg_partial(", p->vals[i],
                        hash && grouped ? "" : ")");
  if (p->join_from) /* a join: the fact's rowids (planner/qjoin.c rule 5) */
    sqlite3_str_appendf(s, " FROM %s WHERE " GA_QJ_RANGE, p->join_from,
                        p->alias, t->rowid, p->alias, t->rowid);
  else {
    sqlite3_str_appendf(s, " FROM main.\"%w\"", t->table);
    if (p->alias)
      sqlite3_str_appendf(s, " AS \"%w\"", p->alias);
    sqlite3_str_appendf(s, " NOT INDEXED WHERE %s >= ?1 AND %s <= ?2", t->rowid,
                        t->rowid);
  }
  if (has(p->filter))
    sqlite3_str_appendf(s, " AND (\n%s\n)", p->filter);
  if (grouped && !hash) {
    sqlite3_str_appendall(s, " GROUP BY ");
    for (int i = 0; i < p->nkeys; i++)
      sqlite3_str_appendf(s, "%s+(\n%s\n)", i ? ", " : "", p->keys[i]);
  }
  return sqlite3_str_finish(s);
}

/* Two subqueries: SQLite's min/max optimisation takes one aggregate at a
** time, and each is then one b-tree seek. */
char *ga_sql_bounds(const ga_target *t) {
  return sqlite3_mprintf(
      "SELECT (SELECT %s FROM main.\"%w\" ORDER BY %s LIMIT 1), "
      "(SELECT %s FROM main.\"%w\" ORDER BY %s DESC LIMIT 1)",
      t->rowid, t->table, t->rowid, t->rowid, t->table, t->rowid);
}

char *ga_sql_first(const ga_target *t) {
  return sqlite3_mprintf("SELECT %s FROM main.\"%w\" WHERE %s >= ?1 ORDER BY "
                         "%s LIMIT 1",
                         t->rowid, t->table, t->rowid, t->rowid);
}

char *ga_sql_kth(const ga_target *t) {
  return sqlite3_mprintf("SELECT %s FROM main.\"%w\" WHERE %s >= ?1 ORDER BY "
                         "%s LIMIT 1 OFFSET ?2",
                         t->rowid, t->table, t->rowid, t->rowid);
}
