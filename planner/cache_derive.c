/*
** cache_derive.c — derived columns (planner/cache_expr.c rule 2): an
** expression that reads one cached TEXT column, evaluated by SQLite on the
** caller's connection once per distinct value of the column (and once for
** NULL), so its semantics are SQLite's by construction.  The values become
** a map from the column's codes: numbers, or codes of a new dictionary
** when they are TEXT.
**
** Rules:
**   1. The expression's text is SQLite's, over gpuagg_cache_dict(?1)
**      (ext/cache/dict_vtab.c), with the column's name replaced by the
**      value column of the same affinity and collation; its parameters
**      are bound as the caller bound them.
**   2. Eligible only when the values do not depend on the moment or the
**      connection: every function it calls (LIKE, GLOB, REGEXP and MATCH
**      included) is SQLITE_DETERMINISTIC on this connection (pragma
**      function_list: built-in or the application's); the date and time
**      functions, which are flagged so yet read 'now' as the statement's
**      time, only where neither a literal nor a value of the column holds
**      "now" in any case; no CURRENT_TIME / DATE / TIMESTAMP; no subquery.
**   3. Collations: a COLLATE in the text would travel with its value; a
**      CAST or unary + keeps the column's.  Neither is eligible unless the
**      column's collation is BINARY (the codes' order), and a collation
**      other than the three built-ins is not.
**   4. The values are all numbers and NULLs, or all TEXT and NULLs (a new
**      dictionary in the entry's encoding, BINARY order); BLOBs, or TEXT
**      with numbers, are not eligible.  An error evaluating any value (a
**      malformed JSON, say) is not eligible either: the uncached path
**      raises it only where a row needs it.
**   5. Maps and dictionaries live as long as the query (ga_cquery_free).
**   6. Every name in the text is the column's, a keyword, TRUE or FALSE, a
**      function's, a CAST's type or a collation's: SQLite would resolve
**      any other name (rowid, oid, _rowid_, "code", a "string" read as a
**      name) against gpuagg_cache_dict's row instead of the caller's
**      row, and a name the table does not have would raise no error.  So
**      rowid and its aliases (even when the INTEGER PRIMARY KEY column is
**      cached: that column's own name is the way) are not eligible here.
*/
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_parse.h"
#include "glue.h"

const char *const ga_cdict_aff[5] = {"blob", "text", "numeric", "integer",
                                     "real"};
const char *const ga_cdict_coll[3] = {"binary", "nocase", "rtrim"};

static const char *const time_fns[] = {"date",      "time",      "datetime",
                                       "julianday", "unixepoch", "strftime",
                                       "timediff"};

/* Does (z, n) in encoding enc hold "now" in any case? */
static int holds_now(const void *z, int n, int enc) {
  const unsigned char *s = z;
  int w = enc == SQLITE_UTF8 ? 1 : 2, lo = enc == SQLITE_UTF16BE ? 1 : 0;
  for (int i = 0; i + 3 * w <= n; i += w) {
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
      unsigned char c = s[i + k * w + lo];
      if (w == 2 && s[i + k * w + (1 - lo)])
        ok = 0;
      else
        ok = (c | 0x20) == "now"[k];
    }
    if (ok)
      return 1;
  }
  return 0;
}

/* Rule 2 for function f: 1 eligible, 0 not (why set). */
static int deterministic(parser *p, const char *f) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      p->db,
      "SELECT count(*), min((flags & 0x800) != 0) FROM pragma_function_list "
      "WHERE name = ?1 COLLATE NOCASE",
      -1, &st, NULL);
  int ok = 0;
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, f, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
      if (sqlite3_column_int(st, 0) == 0)
        ga_cl_no(p, "no function %s() on this connection", f);
      else if (!sqlite3_column_int(st, 1))
        ga_cl_no(p, "%s() is not deterministic", f);
      else
        ok = 1;
    }
    rc = sqlite3_finalize(st);
  }
  if ((rc & 0xff) == SQLITE_NOMEM)
    p->rc = SQLITE_NOMEM;
  if (!ok && !p->why[0])
    ga_cl_no(p, "cannot read this connection's functions (%s)", f);
  return ok;
}

/* The column of the table that token t names, quietly: its index among
** the table's columns, or -1 (-2: another table's qualifier). */
static int table_col(parser *p, const tok *t) {
  if ((t->kind != T_ID && t->kind != T_QID) ||
      (t->kind == T_ID && ga_cl_is_keyword(t)))
    return -1;
  if (t->qual) {
    const char *as =
        p->parts && p->parts->alias ? p->parts->alias : p->t->table;
    if (sqlite3_stricmp(t->qual, as))
      return -2;
  }
  for (int c = 0; c < p->ntcols; c++)
    if (!sqlite3_stricmp(p->tcols[c], t->id))
      return c;
  return -1;
}

/* Rule 6: may t, which names no column of the table, stand in the text?
** (a keyword, TRUE, FALSE) */
static int plain_word(const tok *t) {
  static const char *const w[] = {"AS", "DISTINCT", "FROM", "TRUE", "FALSE"};
  if (t->kind != T_ID || t->qual)
    return 0;
  if (ga_cl_is_keyword(t))
    return 1;
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (ga_cl_kw(t, w[i]))
      return 1;
  return 0;
}

/* Rule 6: the last token of the name that token i introduces (a CAST's
** type after AS, up to the first ')': NUMERIC(10, 2)'s ends it, and no
** name follows; a collation after COLLATE), else i. */
static int name_end(const lexer *L, int i, int to) {
  const tok *t = &L->t[i];
  if (ga_cl_kw(t, "COLLATE"))
    return i + 1 < to ? i + 1 : i;
  if (!ga_cl_kw(t, "AS"))
    return i;
  while (i + 1 < to && L->t[i + 1].kind != T_RP)
    i++;
  return i;
}

/* The map's values (rule 4) from the statement's rows, and the new
** dictionary when they are TEXT.  1, 0 (why set). */
static int read_values(parser *p, sqlite3_stmt *st, ga_cx_map *m,
                       ga_dict **newd) {
  int64_t n = m->n;
  int rc, text = 0, num = 0;
  uint32_t *ids = NULL;
  ga_dict_local *loc = NULL;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t c = sqlite3_column_int64(st, 0);
    if (c < 0 || c > n)
      continue;
    int ty = sqlite3_column_type(st, 1);
    m->type[c] = GA_V_NULL;
    m->v[c] = 0;
    if (ty == SQLITE_INTEGER) {
      m->type[c] = GA_V_INT;
      m->v[c] = (uint64_t)sqlite3_column_int64(st, 1);
      num = 1;
    } else if (ty == SQLITE_FLOAT) {
      double r = sqlite3_column_double(st, 1);
      m->type[c] = GA_V_REAL;
      memcpy(&m->v[c], &r, 8);
      num = 1;
    } else if (ty == SQLITE_TEXT) {
      const void *z;
      int len;
      if (!loc &&
          (!(loc = ga_dict_local_new()) ||
           !(ids = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n + 1))))) {
        p->rc = SQLITE_NOMEM;
        break;
      }
      if (p->e->enc == SQLITE_UTF16LE || p->e->enc == SQLITE_UTF16BE) {
        z = p->e->enc == SQLITE_UTF16LE
                ? sqlite3_value_text16le(sqlite3_column_value(st, 1))
                : sqlite3_value_text16be(sqlite3_column_value(st, 1));
        len = sqlite3_column_bytes16(st, 1);
      } else {
        z = sqlite3_column_text(st, 1);
        len = sqlite3_column_bytes(st, 1);
      }
      if (!z || ga_dict_local_intern(loc, z, len, &ids[c]) != GA_OK) {
        p->rc = SQLITE_NOMEM;
        break;
      }
      m->type[c] = GA_V_INT; /* a code, once the dictionary is sealed */
      m->v[c] = (uint64_t)-1;
      text = 1;
    } else if (ty == SQLITE_BLOB) {
      ga_cl_no(p, "a derived expression gives a BLOB%s", NULL);
      break;
    }
  }
  int ok = rc == SQLITE_DONE && !p->rc && !p->why[0];
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    rc = ga_intr_rc(p->db, rc);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      p->rc = rc & 0xff;
    else
      ga_cl_no(p, "evaluating it over the column's values fails: %s",
               sqlite3_errmsg(p->db));
  }
  if (ok && text && num)
    ok = ga_cl_no(p, "a derived expression gives TEXT and numbers%s", NULL);
  if (ok && text) { /* codes of a new dictionary (engine/cache/dict.h) */
    uint32_t nl = ga_dict_local_count(loc);
    uint32_t *load = sqlite3_malloc64(sizeof(uint32_t) * ((size_t)nl + 1));
    ga_dict *d = ga_dict_new();
    if (!load || !d || ga_dict_merge(d, loc, load) != GA_OK ||
        ga_dict_seal(d) != GA_OK) {
      p->rc = SQLITE_NOMEM;
      ga_dict_free(d);
      ok = 0;
    } else {
      for (int64_t c = 0; c <= n; c++)
        if (m->type[c] == GA_V_INT)
          m->v[c] = ga_dict_code(d, load[ids[c]]);
      *newd = d;
    }
    sqlite3_free(load);
  }
  ga_dict_local_free(loc);
  sqlite3_free(ids);
  return ok;
}

int ga_cl_derive(parser *p, int from, int to, xk *k) {
  const lexer *L = &p->L;
  int col = -1, collate = 0, keeps = 0, timefn = 0, strnow = 0;
  for (int i = from; i < to; i++) {
    const tok *t = &L->t[i];
    if (t->kind == T_BAD || t->kind == T_END || ga_cl_kw(t, "SELECT") ||
        ga_cl_kw(t, "EXISTS"))
      return -1;
    if (ga_cl_kw(t, "CURRENT_TIME") || ga_cl_kw(t, "CURRENT_DATE") ||
        ga_cl_kw(t, "CURRENT_TIMESTAMP"))
      return ga_cl_no(p, "%s is the statement's time", t->id);
    collate |= ga_cl_kw(t, "COLLATE");
    keeps |= ga_cl_kw(t, "CAST") || (t->kind == T_SIGN && t->op == '+');
    if (t->kind == T_STR && holds_now(t->z, t->n, SQLITE_UTF8))
      strnow = 1;
    int call = t->kind == T_ID && L->t[i + 1].kind == T_LP;
    if (call) {
      for (size_t f = 0; f < sizeof time_fns / sizeof time_fns[0]; f++)
        timefn |= !sqlite3_stricmp(t->id, time_fns[f]);
      continue;
    }
    int c = table_col(p, t);
    if (c == -2)
      return -1;
    if (c < 0 && (t->kind == T_ID || t->kind == T_QID) && !plain_word(t))
      return ga_cl_no(p, "%s is not a column of the table", t->id); /* 6 */
    i = name_end(L, i, to);
    if (c < 0)
      continue;
    int ec = -1; /* the entry's column */
    for (int j = 0; j < p->e->ncols; j++)
      if (!sqlite3_stricmp(p->e->cols[j].name, p->tcols[c]))
        ec = j;
    if (ec < 0 || (col >= 0 && col != ec))
      return -1; /* not cached, or a second column */
    col = ec;
  }
  if (col < 0 || !p->e->cols[col].dict)
    return -1;
  const ga_ccol *cc = &p->e->cols[col];
  /* rule 3 */
  const char *type = NULL, *coll = NULL;
  if (ga_column_decl(p->db, cc->src_table ? cc->src_schema : p->t->schema,
                     cc->src_table ? cc->src_table : p->t->table,
                     cc->src_table ? cc->src_name : cc->name, &type,
                     &coll) != SQLITE_OK)
    return ga_cl_no(p, "the collation of %s cannot be read", cc->name);
  int ci = !coll || !sqlite3_stricmp(coll, "BINARY") ? 0
           : !sqlite3_stricmp(coll, "NOCASE")        ? 1
           : !sqlite3_stricmp(coll, "RTRIM")         ? 2
                                                     : -1;
  if (ci < 0)
    return ga_cl_no(p, "column %s has a collation other than the built-ins",
                    cc->name);
  if (collate)
    return ga_cl_no(p, "a COLLATE in an expression over TEXT column %s",
                    cc->name);
  if (keeps && ci)
    return ga_cl_no(p, "a CAST or + keeps column %s's collation", cc->name);
  /* rule 2 (a type's name is no call: CAST(x AS NUMERIC(10, 2))) */
  for (int i = from; i < to; i = name_end(L, i, to) + 1) {
    const tok *t = &L->t[i];
    /* a keyword before "(" (x IN (...)) is no call */
    int call =
        t->kind == T_ID && L->t[i + 1].kind == T_LP && !ga_cl_is_keyword(t);
    const char *f = call                    ? t->id
                    : ga_cl_kw(t, "LIKE")   ? "like"
                    : ga_cl_kw(t, "GLOB")   ? "glob"
                    : ga_cl_kw(t, "REGEXP") ? "regexp"
                    : ga_cl_kw(t, "MATCH")  ? "match"
                                            : NULL;
    if (f && ga_cl_kw(t, "CAST"))
      f = NULL;
    if (f && !deterministic(p, f))
      return 0;
  }
  int64_t n = ga_dict_count(cc->dict);
  if (timefn) {
    if (strnow)
      return ga_cl_no(p, "'now' in a date and time function%s", NULL);
    if (cc->nnow) { /* counted at load (engine/cache/cache_load.c rule 9) */
      char what[160];
      sqlite3_snprintf((int)sizeof what, what,
                       "column %s holds 'now' in %lld "
                       "rows",
                       cc->name, (long long)cc->nnow);
      return ga_cl_no(p,
                      "%s, which date and time functions read as the "
                      "statement's time",
                      what);
    }
  }
  /* an IN subquery's placeholder has no value to bind (planner/qsubq.c
  ** rule 6): SQLite would read IN (NULL); the caller's reason stands */
  for (int i = from; i < to; i++)
    if (ga_cl_in_slot(p, &L->t[i], NULL, NULL, NULL))
      return -1;
  /* rule 1 */
  sqlite3_str *s = sqlite3_str_new(p->db);
  sqlite3_str_appendall(s, "SELECT code, (");
  const char *at = L->t[from].z;
  for (int i = from; i < to; i++) {
    const tok *t = &L->t[i];
    int call = t->kind == T_ID && L->t[i + 1].kind == T_LP;
    if (name_end(L, i, to) != i) { /* a type or collation: kept (rule 6) */
      i = name_end(L, i, to);
    } else if (!call && table_col(p, t) >= 0) {
      sqlite3_str_append(s, at, (int)(t->z - at));
      sqlite3_str_appendf(s, "v_%s_%s", ga_cdict_aff[cc->aff],
                          ga_cdict_coll[ci]);
      at = t->z + t->n;
    }
  }
  const tok *last = &L->t[to - 1];
  sqlite3_str_append(s, at, (int)(last->z + last->n - at));
  sqlite3_str_appendall(s, ") FROM gpuagg_cache_dict(?1)");
  char *sql = sqlite3_str_finish(s);
  if (!sql) {
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    rc = ga_intr_rc(p->db, rc);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      p->rc = rc & 0xff;
    return ga_cl_no(p, "SQLite does not take it over the column's values: %s",
                    sqlite3_errmsg(p->db));
  }
  ga_cdict_src src = {cc->dict, p->e->enc};
  sqlite3_bind_pointer(st, 1, &src, GA_CDICT_PTR, NULL);
  for (int i = from; i < to; i++)
    if (L->t[i].kind == T_VAR) {
      sqlite3_value *v = ga_cl_param(p, &L->t[i]);
      if (v)
        sqlite3_bind_value(st, L->t[i].op, v);
    }
  /* the map, in the query's env */
  ga_cx_env *env = p->q->env;
  ga_cx_map *maps = sqlite3_realloc64(env->maps, sizeof(ga_cx_map) *
                                                     (size_t)(env->nmaps + 1));
  if (!maps) {
    sqlite3_finalize(st);
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  env->maps = maps;
  ga_cx_map *m = &maps[env->nmaps];
  memset(m, 0, sizeof(*m));
  m->n = n;
  m->v = sqlite3_malloc64(sizeof(uint64_t) * (size_t)(n + 1));
  m->type = sqlite3_malloc64((size_t)(n + 1));
  env->nmaps++; /* freed with the query, whatever follows */
  if (!m->v || !m->type) {
    sqlite3_finalize(st);
    p->rc = SQLITE_NOMEM;
    return 0;
  }
  memset(m->type, GA_V_NULL, (size_t)(n + 1));
  memset(m->v, 0, sizeof(uint64_t) * (size_t)(n + 1));
  ga_dict *nd = NULL;
  int ok = read_values(p, st, m, &nd);
  sqlite3_finalize(st);
  if (nd) {
    ga_dict **o =
        sqlite3_realloc64(p->q->owned, sizeof(*o) * (size_t)(p->q->nowned + 1));
    if (!o) {
      ga_dict_free(nd);
      p->rc = SQLITE_NOMEM;
      return 0;
    }
    p->q->owned = o;
    o[p->q->nowned++] = nd;
  }
  if (!ok)
    return 0;
  memset(k, 0, sizeof(*k));
  k->k = nd ? K_CODE : K_NUM;
  k->d = nd;
  k->coll_col = -1;
  return ga_cl_emit(p, GA_CX_COL, col, 0, 0, NULL) &&
         ga_cl_emit(p, GA_CX_MAP, 0, env->nmaps - 1, 0, NULL);
}
