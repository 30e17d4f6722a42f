/*
** cache_join.c — gpu_query's star and snowflake joins from the host cache
** (issue 38 §3.2; ga_cache_join_answer, cache_plan.h): where gpu_cache
** holds the fact table's columns that the query reads and each
** dimension's (their own entries, each current for the caller's
** connection), the whole query runs from memory: engine/cache/cache_star.c
** filters each dimension by its own conditions into a lookup, probes the
** fact's rows and writes the rows that join, with the columns the query
** reads, into a join entry; cache_host.c answers the query's keys, values
** and the rest of its WHERE over that entry as over one table's.
**
** Rules:
**   1. The shape.  The FROM clause is planner/qjoin.c's (the fact first):
**      tables joined by ',', [INNER | CROSS] JOIN and LEFT [OUTER] JOIN,
**      with ON or USING.  The WHERE clause (the text's, with the ON
**      conditions qjoin.c moved into it) and each ON are read as AND-ed
**      terms (a parenthesised term's own ANDs too, BETWEEN's AND kept).
**      A term `a = b` (or ==) of two columns of two tables is an edge; so
**      is USING (c), between its table and the leftmost table before it
**      that has c.  From the fact, each table's parent is the table its
**      first edge reaches it from (a LEFT JOIN's only by its own ON's
**      edges), and every edge between a table and its parent is a column
**      of its key (several: a composite key); an edge that is no such step
**      filters the joined rows instead.  Of the other terms: one of one
**      inner-joined dimension's columns is its condition, applied when its
**      lookup is built (so is a LEFT JOIN's ON term of its own columns); one
**      of the fact's columns (or of none) is the fact's, applied before the
**      probe; a WHERE term that reads a LEFT-joined dimension, or several
**      tables, filters the joined rows (so `WHERE d.c IS NULL` keeps the
**      unmatched rows).  A LEFT JOIN's ON term that reads another table
**      otherwise declines.
**   2. Names.  A qualified name (q.c, s.q.c) is table q's column; a bare
**      name the column of the one table that has it (SQLite refused an
**      ambiguous one), a USING column's bare name
**      its leftmost table's; a name of no table stays as
**      written (a keyword, a function, a type), and cache_shape.c then
**      declines what it cannot read.  Every column the query reads must
**      be in its table's entry (else: declines, naming it).
**   3. Exactness.  Each key column pair (the two sides of an edge) holds
**      numbers (cache_star.c rule 1 compares them as SQLite does), or TEXT
**      and NULL only on both sides under TEXT or no affinity (then no
**      affinity converts anything: text_key maps each side's codes to one
**      id per value the left operand's collation finds equal, SQLite's
**      choice for two columns); TEXT against numbers, or under a numeric
**      affinity, declines (affinity decides its matches; the workers
**      answer it).  A key may have several rows in one dimension
**      (cache_star.c rule 2: each joins, in its rowid order); in two, or in
**      one that another table joins, the join declines, naming the key.  The
*join entry's rows are the
**      rows SQLite's join makes, in the fact's rowid order; its columns
**      keep their table's declaration, collation and dictionary, so
**      cache_shape.c reads them as on their own table.
**   4. Currency.  Every table's entry passes cache_plan.c rules 2 and 6
**      (ga_cache_current) on the caller's connection; one that does not
**      declines with its reason.  The GPU (issue 38 section 3.3): where
**      the fact's entry is a GPU entry (and device is not 'cpu'), a GPU
**      dimension is copied to the host for the build
**      (engine/cache/cache_gpu_star.c rule 1), the fact's own terms filter
**      after the probe with the others (the GPU query's WHERE over the
**      fact's rows), and cache_gpu_star.c probes on the device and
**      answers; a failed device step drops the fact's entry (cache_plan.c
**      rule 5).  A GPU dimension beside a host fact declines.
**   5. Memory: cache_star.c rule 4 (group_bytes).  A TEXT key's maps
**      (rule 3: 8 bytes a code of each side, kept through the join) and
**      what making them takes for a while (a sort entry a code, NOCASE's
**      folded bytes) are charged to group_bytes before they are made, on
**      one tally with the maps made before; past it the join declines and
**      says which key.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu_star.h"
#include "cache_plan.h"
#include "cache_star.h"
#include "qtok.h"

#define CJ_MAX_TABS (GA_CSTAR_MAX + 1)
#define CJ_MAX_TERMS 64

typedef struct cj_tab {
  char *schema, *table, *qual;
  ga_centry *e;
  ga_centry *real; /* the cache's entry (e: its host copy, rule 4) */
  ga_target t;
  int parent;     /* -1 the fact (tab 0); else a table's index */
  int left;       /* LEFT JOIN */
  int on_a, on_b; /* its ON condition's tokens in the FROM text, -1 */
  int us_a, us_b; /* the names inside USING ( ... ), -1 */
  int nkeys;      /* the edges to its parent (a composite key: several) */
  int pcol[GA_CSTAR_KEYS], kcol[GA_CSTAR_KEYS]; /* parent's, this entry's */
  int pleft[GA_CSTAR_KEYS]; /* the parent's column is the left operand */
  int64_t *pmap[GA_CSTAR_KEYS], *kmap[GA_CSTAR_KEYS]; /* TEXT keys (rule 3) */
  int64_t npmap[GA_CSTAR_KEYS], nkmap[GA_CSTAR_KEYS];
  int nterms; /* its own conditions */
} cj_tab;

typedef struct cj {
  sqlite3 *db;
  ga_cache *c;
  int n;
  cj_tab tab[CJ_MAX_TABS];
  /* the join entry's columns: (table, entry column) */
  int nv;
  int vtab[GA_CACHE_MAX_COLS], vcol[GA_CACHE_MAX_COLS];
  /* the FROM text's tokens, and USING's names (a bare one is its leftmost
  ** table's column) */
  const char *fz;
  ga_qtok *ft;
  int fn;
  char *using[GA_CACHE_MAX_COLS];
  int nusing;
  char *vname[GA_CACHE_MAX_COLS];
  char *why;
  size_t nwhy;
  int rc; /* SQLITE_NOMEM */
  /* rule 5: group_bytes, and the bytes of the TEXT keys' maps made so far */
  int64_t cap, maps;
} cj;

static int no(cj *j, const char *fmt, const char *a, const char *b) {
  snprintf(j->why, j->nwhy, fmt, a ? a : "", b ? b : "");
  return 0;
}

static int tok_is(const char *z, const ga_qtok *t, const char *w) {
  return t->type == GA_QT_ID && (int)strlen(w) == t->len &&
         !sqlite3_strnicmp(z + t->off, w, t->len);
}

static int is_name(const ga_qtok *t) {
  return t->type == GA_QT_ID || t->type == GA_QT_QID;
}

/* s's text, "" when empty (sqlite3_str_finish gives NULL then); NULL
** only for no memory. */
static char *finish(sqlite3_str *s) {
  int err = sqlite3_str_errcode(s);
  char *z = sqlite3_str_finish(s);
  if (err != SQLITE_OK) {
    sqlite3_free(z);
    return NULL;
  }
  return z ? z : sqlite3_mprintf("%s", "");
}

/* ---- FROM (rule 1) ---- */

/* The end of an ON expression starting at token i: the next separator at
** depth 0 (',', [LEFT [OUTER] | INNER | CROSS] JOIN), or n. */
static int on_end(const char *z, const ga_qtok *t, int n, int i) {
  for (; i < n; i++) {
    if (ga_qt_op(z, t, n, i, "(")) {
      i = ga_qt_close(z, t, n, i);
      continue;
    }
    if (ga_qt_op(z, t, n, i, ",") || tok_is(z, &t[i], "JOIN") ||
        tok_is(z, &t[i], "LEFT") || tok_is(z, &t[i], "INNER") ||
        tok_is(z, &t[i], "CROSS"))
      return i;
  }
  return n;
}

static int read_from(cj *j, const char *z) {
  ga_qtok *t = NULL;
  int n = 0, r = ga_q_tokenize(z, &t, &n);
  if (r < 0) {
    j->rc = SQLITE_NOMEM;
    return 0;
  }
  j->fz = z;
  j->ft = t;
  j->fn = n;
  int ok = r == 0, i = 0, left = 0;
  while (ok && i < n) {
    /* "schema"."table" AS "qual" */
    if (j->n >= CJ_MAX_TABS) {
      ok = no(j, "the join has more than %s tables", "9", NULL);
      break;
    }
    if (!(i + 4 < n && is_name(&t[i]) && ga_qt_op(z, t, n, i + 1, ".") &&
          is_name(&t[i + 2]) && tok_is(z, &t[i + 3], "AS") &&
          is_name(&t[i + 4]))) {
      ok = 0;
      break;
    }
    cj_tab *x = &j->tab[j->n++];
    x->schema = ga_qt_name(z, &t[i]);
    x->table = ga_qt_name(z, &t[i + 2]);
    x->qual = ga_qt_name(z, &t[i + 4]);
    x->parent = -1;
    x->left = left;
    x->on_a = x->on_b = x->us_a = x->us_b = -1;
    if (!x->schema || !x->table || !x->qual) {
      j->rc = SQLITE_NOMEM;
      ok = 0;
      break;
    }
    i += 5;
    if (i + 1 < n && tok_is(z, &t[i], "NOT") && tok_is(z, &t[i + 1], "INDEXED"))
      i += 2;
    else if (i + 2 < n && tok_is(z, &t[i], "INDEXED") &&
             tok_is(z, &t[i + 1], "BY"))
      i += 3;
    if (i < n && tok_is(z, &t[i], "ON")) {
      x->on_a = i + 1;
      x->on_b = i = on_end(z, t, n, i + 1);
    } else if (i + 1 < n && tok_is(z, &t[i], "USING") &&
               ga_qt_op(z, t, n, i + 1, "(")) {
      int cl = ga_qt_close(z, t, n, i + 1);
      x->us_a = i + 2;
      x->us_b = cl;
      for (int k = i + 2; k < cl; k++)
        if (is_name(&t[k]) && j->nusing < GA_CACHE_MAX_COLS &&
            !(j->using[j->nusing++] = ga_qt_name(z, &t[k])))
          j->rc = SQLITE_NOMEM;
      i = cl + 1;
    }
    if (j->rc) {
      ok = 0;
      break;
    }
    if (i >= n)
      break;
    left = 0;
    if (ga_qt_op(z, t, n, i, ",")) {
      i++;
    } else if (tok_is(z, &t[i], "JOIN")) {
      i++;
    } else if (i + 1 < n &&
               (tok_is(z, &t[i], "CROSS") || tok_is(z, &t[i], "INNER")) &&
               tok_is(z, &t[i + 1], "JOIN")) {
      i += 2;
    } else if (i + 1 < n && tok_is(z, &t[i], "LEFT")) {
      i += 1 + (tok_is(z, &t[i + 1], "OUTER") != 0);
      left = i < n && tok_is(z, &t[i], "JOIN");
      ok = left;
      i++;
    } else {
      ok = 0;
    }
  }
  if (ok && j->n < 2)
    ok = 0;
  if (!ok && !j->why[0] && !j->rc)
    no(j, "the join's FROM clause is not one the host cache reads%s%s", NULL,
       NULL);
  return ok;
}

/* ---- names (rule 2) ---- */

/* The table whose qualifier is [z, n), or -1. */
static int tab_of_qual(cj *j, const char *q) {
  for (int k = 0; k < j->n; k++)
    if (!sqlite3_stricmp(j->tab[k].qual, q))
      return k;
  return -1;
}

/* Does table k declare column c? */
static int has_col(cj *j, int k, const char *c) {
  const char *type, *coll;
  return ga_column_decl(j->db, j->tab[k].schema, j->tab[k].table, c, &type,
                        &coll) == SQLITE_OK;
}

static int entry_col(const ga_centry *e, const char *c) {
  for (int k = 0; k < e->ncols; k++)
    if (!sqlite3_stricmp(e->cols[k].name, c))
      return k;
  return -1;
}

/* A column reference found in a text: tokens [a, b), table, entry column. */
typedef struct cref {
  int a, b, tab, col;
} cref;

/* The column references of tokens [a, b) of z into refs (at most max):
** their count, or -1 (why set, or nomem). */
static int refs_of(cj *j, const char *z, const ga_qtok *t, int a, int b,
                   cref *refs, int max) {
  int nr = 0, after_as = 0;
  for (int i = a; i < b; i++) {
    if (!is_name(&t[i])) {
      after_as = 0;
      continue;
    }
    if (tok_is(z, &t[i], "AS")) {
      after_as = 1;
      continue;
    }
    if (after_as) /* CAST(x AS type words) */
      continue;
    if (i > a &&
        (ga_qt_op(z, t, b, i - 1, ".") || tok_is(z, &t[i - 1], "COLLATE")))
      continue;
    int tab = -1, end = i + 1;
    char *col = NULL;
    if (i + 2 < b && ga_qt_op(z, t, b, i + 1, ".") && is_name(&t[i + 2])) {
      int qi = i, ci = i + 2;
      if (i + 4 < b && ga_qt_op(z, t, b, i + 3, ".") && is_name(&t[i + 4])) {
        qi = i + 2; /* schema.q.c */
        ci = i + 4;
      }
      char *q = ga_qt_name(z, &t[qi]);
      col = ga_qt_name(z, &t[ci]);
      if (!q || !col) {
        sqlite3_free(q);
        sqlite3_free(col);
        j->rc = SQLITE_NOMEM;
        return -1;
      }
      tab = tab_of_qual(j, q);
      sqlite3_free(q);
      end = ci + 1;
      if (tab < 0) {
        no(j, "%s names no table of the join%s", col, NULL);
        sqlite3_free(col);
        return -1;
      }
    } else {
      if (i + 1 < b && ga_qt_op(z, t, b, i + 1, "("))
        continue; /* a function */
      if (t[i].type == GA_QT_ID &&
          (sqlite3_keyword_check(z + t[i].off, t[i].len) ||
           ga_qt_ctx_keyword(z, &t[i])))
        continue;
      col = ga_qt_name(z, &t[i]);
      if (!col) {
        j->rc = SQLITE_NOMEM;
        return -1;
      }
      int found = 0;
      for (int k = 0; k < j->n; k++)
        if (has_col(j, k, col)) {
          tab = k;
          found++;
        }
      for (int u = 0; found > 1 && u < j->nusing; u++)
        if (!sqlite3_stricmp(j->using[u], col)) {
          /* USING's column: its leftmost table's (qjoin.c rule 6) */
          for (tab = 0; !has_col(j, tab, col); tab++)
            ;
          found = 1;
        }
      if (found != 1) { /* no column (stays), or ambiguous */
        sqlite3_free(col);
        if (found > 1)
          return no(j, "a name is a column of several tables%s%s", NULL, NULL) -
                 1;
        continue;
      }
    }
    int ec = entry_col(j->tab[tab].e, col);
    if (ec < 0) {
      snprintf(j->why, j->nwhy, "column %s of %s is not cached", col,
               j->tab[tab].table);
      sqlite3_free(col);
      return -1;
    }
    sqlite3_free(col);
    if (nr >= max)
      return no(j, "a term reads too many columns%s%s", NULL, NULL) - 1;
    refs[nr++] = (cref){i, end, tab, ec};
    i = end - 1;
  }
  return nr;
}

/* The join entry's column of (tab, col), added where new: its index, or
** -1 (why set). */
static int vcol_of(cj *j, int tab, int col) {
  for (int k = 0; k < j->nv; k++)
    if (j->vtab[k] == tab && j->vcol[k] == col)
      return k;
  if (j->nv >= GA_CACHE_MAX_COLS)
    return no(j, "the query reads more than 64 columns%s%s", NULL, NULL) - 1;
  char *nm = sqlite3_mprintf("gpuagg_j%d", j->nv);
  if (!nm) {
    j->rc = SQLITE_NOMEM;
    return -1;
  }
  j->vname[j->nv] = nm;
  j->vtab[j->nv] = tab;
  j->vcol[j->nv] = col;
  return j->nv++;
}

/* Tokens [a, b) of z written again into s with each column reference
** replaced: by its bare column name (as_join 0) or by its join entry's
** column (1).  1, or 0 (why set, or nomem). */
static int rewrite(cj *j, sqlite3_str *s, const char *z, const ga_qtok *t,
                   int a, int b, int as_join) {
  cref refs[GA_CACHE_MAX_COLS * 2];
  int nr = refs_of(j, z, t, a, b, refs, GA_CACHE_MAX_COLS * 2);
  if (nr < 0)
    return 0;
  int at = a < b ? t[a].off : 0, r = 0;
  for (int i = a; i < b; i++) {
    if (r < nr && refs[r].a == i) {
      sqlite3_str_append(s, z + at, t[i].off - at);
      const cref *x = &refs[r++];
      if (as_join) {
        int v = vcol_of(j, x->tab, x->col);
        if (v < 0)
          return 0;
        sqlite3_str_appendf(s, "\"%w\"", j->vname[v]);
      } else {
        sqlite3_str_appendf(s, "\"%w\"", j->tab[x->tab].e->cols[x->col].name);
      }
      i = x->b - 1;
      at = t[i].off + t[i].len;
    }
  }
  if (a < b)
    sqlite3_str_append(s, z + at, t[b - 1].off + t[b - 1].len - at);
  return 1;
}

/* A whole text rewritten as the join entry's (NULL with why, or nomem). */
static char *rewrite_text(cj *j, const char *z) {
  ga_qtok *t = NULL;
  int n = 0, r = ga_q_tokenize(z, &t, &n);
  if (r < 0) {
    j->rc = SQLITE_NOMEM;
    return NULL;
  }
  if (r) {
    sqlite3_free(t);
    no(j, "a text the host cache cannot read%s%s", NULL, NULL);
    return NULL;
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  int ok = rewrite(j, s, z, t, 0, n, 1);
  sqlite3_free(t);
  char *out = finish(s);
  if (!out)
    j->rc = SQLITE_NOMEM;
  if (!ok) {
    sqlite3_free(out);
    return NULL;
  }
  return out;
}

/* ---- WHERE (rule 1) ---- */

typedef struct term {
  int a, b;
  const char *z; /* its text: the WHERE's or the FROM's (an ON) */
  const ga_qtok *t;
  int n;
  int on; /* -1: WHERE or an inner join's ON; else the LEFT JOIN's table */
} term;

/* The AND-ed terms of tokens [a, b): into v (at most CJ_MAX_TERMS). */
static int split(const char *z, const ga_qtok *t, int n, int a, int b, term *v,
                 int *nv) {
  while (b - a >= 2 && ga_qt_op(z, t, n, a, "(") &&
         ga_qt_close(z, t, n, a) == b - 1) {
    a++;
    b--;
  }
  if (ga_qt_top_or(z, t, n, a, b)) { /* one term: OR binds loosest */
    if (a >= b || *nv >= CJ_MAX_TERMS)
      return 0;
    v[(*nv)++] = (term){a, b, z, t, n, -1};
    return 1;
  }
  int start = a, between = 0, cases = 0;
  for (int i = a; i <= b; i++) {
    if (i < b && ga_qt_op(z, t, n, i, "(")) {
      i = ga_qt_close(z, t, n, i);
      continue;
    }
    if (i < b && tok_is(z, &t[i], "BETWEEN"))
      between++;
    if (i < b && tok_is(z, &t[i], "CASE"))
      cases++;
    if (i < b && tok_is(z, &t[i], "END") && cases)
      cases--;
    int at_and = i < b && tok_is(z, &t[i], "AND") && !cases;
    if (at_and && between) {
      between--;
      continue;
    }
    if (i == b || at_and) {
      if (i == start)
        return 0;
      if (*nv >= CJ_MAX_TERMS)
        return 0;
      if (start != a || i != b) {
        if (!split(z, t, n, start, i, v, nv))
          return 0;
      } else {
        v[(*nv)++] = (term){start, i, z, t, n, -1};
      }
      start = i + 1;
    }
  }
  return 1;
}

/* ---- TEXT keys (rule 3) ---- */

typedef struct canon {
  const unsigned char *p;
  int n, side;
  int64_t code;
} canon;

static int canon_cmp(const void *x, const void *y) {
  const canon *a = x, *b = y;
  int m = a->n < b->n ? a->n : b->n;
  int r = m ? memcmp(a->p, b->p, (size_t)m) : 0;
  return r ? r : (a->n > b->n) - (a->n < b->n);
}

/* The key of an edge between TEXT column pc of table pt and kc of table
** kt (pleft: pt's is the left operand as written): both columns hold
** TEXT and NULL only, under TEXT or no affinity (no conversion then), in
** UTF-8; the collation is the left operand's column's (BINARY where it
** declares none; SQLite's choice for a comparison of two columns), and
** two values are one key when that collation finds them equal: BINARY
** the same bytes, NOCASE the same length and bytes up to ASCII case,
** RTRIM the same bytes without trailing spaces.  Each side's codes map to
** the key's id (*pm, *km: sqlite3_malloc'd).  1, or 0 (why set, or
** nomem). */
static int text_key(cj *j, const cj_tab *pt, int pc, const cj_tab *kt, int kc,
                    int pleft, int64_t **pm, int64_t *npm, int64_t **km,
                    int64_t *nkm) {
  const ga_ccol *c[2] = {&pt->e->cols[pc], &kt->e->cols[kc]};
  for (int s = 0; s < 2; s++)
    if (c[s]->mixed || c[s]->nint || c[s]->nreal ||
        (c[s]->aff != GA_AFF_TEXT && c[s]->aff != GA_AFF_BLOB) ||
        (s ? kt : pt)->e->enc != SQLITE_UTF8)
      return 0;
  const cj_tab *lt = pleft ? pt : kt;
  const char *type = NULL, *coll = NULL;
  if (ga_column_decl(j->db, lt->schema, lt->table, c[pleft ? 0 : 1]->name,
                     &type, &coll) != SQLITE_OK)
    return no(j, "the collation of join key %s cannot be read%s",
              c[pleft ? 0 : 1]->name, NULL);
  int ci = !coll || !sqlite3_stricmp(coll, "BINARY") ? 0
           : !sqlite3_stricmp(coll, "NOCASE")        ? 1
           : !sqlite3_stricmp(coll, "RTRIM")         ? 2
                                                     : -1;
  if (ci < 0)
    return no(j, "join key %s has a collation other than the built-ins%s",
              c[pleft ? 0 : 1]->name, NULL);
  int64_t cnt[2], total = 0;
  for (int s = 0; s < 2; s++) {
    cnt[s] = c[s]->dict ? ga_dict_count(c[s]->dict) : 0;
    total += cnt[s];
  }
  int64_t at = 0, lowat = 0, lowlen = 0;
  for (int s = 0; s < 2 && ci == 1; s++)
    for (int64_t k = 0; k < cnt[s]; k++) {
      const void *p;
      int n;
      ga_dict_value(c[s]->dict, (uint32_t)k, &p, &n);
      lowlen += n;
    }
  /* rule 5: charged before they are made (the maps stay, the sort's
  ** values and the folded bytes go with this call) */
  int64_t kept = (int64_t)sizeof(int64_t) * (cnt[0] + cnt[1] + 2);
  int64_t need =
      kept + (int64_t)sizeof(canon) * (total + 1) + (ci == 1 ? lowlen + 1 : 0);
  if (j->maps + need > j->cap) {
    snprintf(j->why, j->nwhy,
             "the TEXT join key %s needs %lld bytes for its maps, past "
             "group_bytes (%lld): raise it (SELECT gpuagg_config("
             "'group_bytes', ...))",
             c[1]->name, (long long)(j->maps + need), (long long)j->cap);
    return 0;
  }
  j->maps += kept;
  canon *v = sqlite3_malloc64(sizeof(canon) * (size_t)(total + 1));
  int64_t *map[2] = {sqlite3_malloc64(sizeof(int64_t) * (size_t)(cnt[0] + 1)),
                     sqlite3_malloc64(sizeof(int64_t) * (size_t)(cnt[1] + 1))};
  unsigned char *low = NULL;
  if (ci == 1)
    low = sqlite3_malloc64((size_t)lowlen + 1);
  if (!v || !map[0] || !map[1] || (ci == 1 && !low)) {
    sqlite3_free(v);
    sqlite3_free(map[0]);
    sqlite3_free(map[1]);
    sqlite3_free(low);
    j->rc = SQLITE_NOMEM;
    return 0;
  }
  for (int s = 0; s < 2; s++)
    for (int64_t k = 0; k < cnt[s]; k++) {
      const void *p;
      int n;
      ga_dict_value(c[s]->dict, (uint32_t)k, &p, &n);
      const unsigned char *b = p;
      if (ci == 1) { /* NOCASE: ASCII case folded (sqlite3StrNICmp) */
        for (int i = 0; i < n; i++)
          low[lowat + i] =
              b[i] >= 'A' && b[i] <= 'Z' ? (unsigned char)(b[i] + 32) : b[i];
        b = low + lowat;
        lowat += n;
      } else if (ci == 2) { /* RTRIM: no trailing spaces */
        while (n > 0 && b[n - 1] == ' ')
          n--;
      }
      v[at++] = (canon){b, n, s, k};
    }
  qsort(v, (size_t)total, sizeof(canon), canon_cmp);
  int64_t id = -1;
  for (int64_t i = 0; i < total; i++) {
    if (i == 0 || canon_cmp(&v[i - 1], &v[i]))
      id++;
    map[v[i].side][v[i].code] = id;
  }
  sqlite3_free(v);
  sqlite3_free(low);
  *pm = map[0];
  *npm = cnt[0];
  *km = map[1];
  *nkm = cnt[1];
  return 1;
}

/* ---- the answer ---- */

static void cj_free(cj *j) {
  sqlite3_free(j->ft);
  for (int k = 0; k < j->nusing; k++)
    sqlite3_free(j->using[k]);
  for (int k = 0; k < j->n; k++) {
    for (int i = 0; i < GA_CSTAR_KEYS; i++) {
      sqlite3_free(j->tab[k].pmap[i]);
      sqlite3_free(j->tab[k].kmap[i]);
    }
    sqlite3_free(j->tab[k].schema);
    sqlite3_free(j->tab[k].table);
    sqlite3_free(j->tab[k].qual);
  }
  for (int k = 0; k < j->nv; k++)
    sqlite3_free(j->vname[k]);
}

/* A one-table query over entry e: its filter (NULL: none) compiled as
** conditions (vals: "1"). */
static int compile_filter(cj *j, int k, const char *filter, const ga_parts *p,
                          ga_cquery *q) {
  static const char *const one[1] = {"1"};
  ga_parts fp;
  memset(&fp, 0, sizeof(fp));
  fp.filter = filter;
  fp.nvals = 1;
  fp.vals = one;
  fp.params = p->params;
  fp.nparams = p->nparams;
  fp.topk_val = -1;
  cj_tab *x = &j->tab[k];
  x->t.schema = x->schema;
  x->t.table = x->table;
  /* the names a derived column may read (cache_derive.c): the entry's */
  char *names[GA_CACHE_MAX_COLS];
  for (int c = 0; c < x->e->ncols && c < GA_CACHE_MAX_COLS; c++)
    names[c] = x->e->cols[c].name;
  x->t.cols = names;
  x->t.ncols =
      x->e->ncols < GA_CACHE_MAX_COLS ? x->e->ncols : GA_CACHE_MAX_COLS;
  char w[200] = "";
  int rc = ga_cache_shape(j->db, x->e, &x->t, &fp, q, w, sizeof w);
  x->t.cols = NULL;
  x->t.ncols = 0;
  if (rc == 1)
    return 1;
  if (rc != 0)
    j->rc = rc;
  else
    snprintf(j->why, j->nwhy, "%s's conditions: %s", x->table, w);
  return 0;
}

int ga_cache_join_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                         const ga_parts *p, ga_scan_out *out, int *hit,
                         char *why, size_t nwhy) {
  cj j;
  memset(&j, 0, sizeof(j));
  j.db = db;
  j.c = conn->cache;
  j.cap = ga_config_group_bytes(cfg);
  j.why = why;
  j.nwhy = nwhy;
  *hit = 0;
  why[0] = 0;
  memset(out, 0, sizeof(*out));
  ga_cquery fq[CJ_MAX_TABS], vq;
  memset(fq, 0, sizeof(fq));
  memset(&vq, 0, sizeof(vq));
  ga_cstar s;
  memset(&s, 0, sizeof(s));
  ga_centry virt;
  memset(&virt, 0, sizeof(virt));
  int have_virt = 0, ok = 0, gpu = 0, qlocked = 0;
  ga_centry mir[CJ_MAX_TABS]; /* rule 4: GPU dimensions' host copies */
  memset(mir, 0, sizeof(mir));
  ga_cgstar gs;
  memset(&gs, 0, sizeof(gs));
  char **vkeys = NULL, **vvals = NULL, *vfilter = NULL;
  char *ftext[CJ_MAX_TABS];
  memset(ftext, 0, sizeof(ftext));
  ga_qtok *t = NULL;
  int n = 0;
  sqlite3_str *other = NULL;

  if (!j.c || !p->join_from_caller)
    return SQLITE_OK;
  ga_cache_watchers(j.c, db);
  if (cfg->cache_bytes > 0)
    ga_cache_fit(j.c, cfg->cache_bytes);
  {
    /* rule 4: every table's entry (said only where one has any) */
    int any = 0;
    pthread_mutex_lock(&j.c->mu); /* the process's list (issue 40) */
    for (int k = 0; k < p->njoin_tables && !any; k++)
      for (ga_centry *e = j.c->entries; e && !any; e = e->next)
        any = !sqlite3_stricmp(e->table, p->join_tables[k]);
    pthread_mutex_unlock(&j.c->mu);
    if (!any)
      return SQLITE_OK;
  }
  char lead[160];
  snprintf(lead, sizeof lead, "the text joins %d tables: ", p->njoin_tables);
  if (!read_from(&j, p->join_from_caller))
    goto done;
  snprintf(lead, sizeof lead, "the text joins %d tables (fact %s): ", j.n,
           j.tab[0].table);
  for (int k = 0; k < j.n; k++) {
    cj_tab *x = &j.tab[k];
    x->e = x->real = ga_cache_lookup(j.c, db, x->schema, x->table); /* held */
    if (!x->e) {
      snprintf(why, nwhy, "%s has no gpu_cache entry", x->table);
      goto done;
    }
    if (__atomic_load_n(&x->e->stale, __ATOMIC_RELAXED)) {
      snprintf(why, nwhy, "the entry of %s is stale; gpu_cache reloads it",
               x->table);
      goto done;
    }
    if (x->e->where != j.tab[0].e->where && k && !gpu) {
      snprintf(why, nwhy,
               "%s is in GPU memory (a star join over a host entry of the "
               "fact reads host entries: gpu_cache them under device = "
               "'cpu')",
               x->table);
      goto done;
    }
    if (!k && (gpu = x->e->where == GA_CACHE_GPU) &&
        cfg->device == GA_DEVICE_CPU) {
      snprintf(why, nwhy, "%s is in GPU memory and device = 'cpu'", x->table);
      goto done;
    }
    for (int i = 0; i < k; i++) /* a dimension twice: two lookups */
      if (j.tab[i].e == x->e && i == 0) {
        snprintf(why, nwhy, "%s is joined twice", x->table);
        goto done;
      }
  }
  /* One query on entries at a time (issue 40; engine/cache/cache.c rule
  ** 6), and never while SQL runs on the caller's connection (the filters'
  ** and the join entry's shapes, the currency checks): held around the GPU
  ** dimensions' copies, around the build and the probe, around the answer
  ** and a failed GPU step's drop, and for the device memory's release
  ** (done).  qlocked: held now. */
  ga_cache_qlock(j.c);
  qlocked = 1;
  for (int k = 1; gpu && k < j.n; k++) { /* rule 4: a GPU dimension */
    cj_tab *x = &j.tab[k];
    int64_t mb = 0;
    if (x->e->where != GA_CACHE_GPU)
      continue;
    int mrc = ga_cgstar_mirror(j.c, x->e, &mir[k], &mb, why, nwhy);
    if (mrc == GA_NOMEM) {
      j.rc = SQLITE_NOMEM;
      goto done;
    }
    if (mrc != GA_OK)
      goto done;
    x->e = &mir[k];
    s.used += mb;
  }
  ga_cache_qunlock(j.c);
  qlocked = 0;
  /* the terms (rule 1): the WHERE's, and each ON's */
  const char *wz = p->filter ? p->filter : "";
  int r = ga_q_tokenize(wz, &t, &n);
  if (r < 0) {
    j.rc = SQLITE_NOMEM;
    goto done;
  }
  term terms[CJ_MAX_TERMS];
  int nt = 0;
  if (r || (n && !split(wz, t, n, 0, n, terms, &nt))) {
    snprintf(why, nwhy, "the WHERE clause has more than %d terms",
             CJ_MAX_TERMS);
    goto done;
  }
  for (int k = 1; k < j.n; k++) {
    cj_tab *x = &j.tab[k];
    int from = nt;
    if (x->on_a >= 0 && x->on_a < x->on_b &&
        !split(j.fz, j.ft, j.fn, x->on_a, x->on_b, terms, &nt)) {
      snprintf(why, nwhy, "an ON clause has more than %d terms", CJ_MAX_TERMS);
      goto done;
    }
    for (int i = from; i < nt; i++)
      terms[i].on = x->left ? k : -1;
  }
  /* edges: a = b of two tables' columns (USING's too) */
  typedef struct edge {
    int a, ca, b, cb, on; /* on: the LEFT JOIN's table whose ON holds it */
    int term;             /* its term, -1 (USING) */
  } edge;
  edge ed[CJ_MAX_TERMS + GA_CACHE_MAX_COLS];
  int ne = 0;
  int kind[CJ_MAX_TERMS]; /* -2 an edge, -1 after the probe, else a table */
  for (int i = 0; i < nt; i++) {
    term *tm = &terms[i];
    cref refs[GA_CACHE_MAX_COLS * 2];
    int nr =
        refs_of(&j, tm->z, tm->t, tm->a, tm->b, refs, GA_CACHE_MAX_COLS * 2);
    if (nr < 0)
      goto done;
    uint32_t m = 0, lefts = 0;
    for (int k = 0; k < nr; k++)
      m |= 1u << refs[k].tab;
    for (int k = 1; k < j.n; k++)
      lefts |= (uint32_t)j.tab[k].left << k;
    int is_edge = nr == 2 && refs[0].a == tm->a && refs[1].b == tm->b &&
                  refs[0].tab != refs[1].tab && refs[1].a == refs[0].b + 1 &&
                  (ga_qt_op(tm->z, tm->t, tm->n, refs[0].b, "=") ||
                   ga_qt_op(tm->z, tm->t, tm->n, refs[0].b, "=="));
    if (tm->on >= 0) { /* a LEFT JOIN's ON: its own, or its edge */
      if (m == 1u << tm->on) {
        kind[i] = tm->on;
      } else if (is_edge && (m >> tm->on & 1)) {
        kind[i] = -2;
      } else {
        snprintf(why, nwhy,
                 "the ON clause of LEFT JOIN %s reads other tables than "
                 "by an equality of columns",
                 j.tab[tm->on].table);
        goto done;
      }
    } else if (m & lefts) {
      /* rule 1: a LEFT JOIN's WHERE term, after the probe; an edge may
      ** join an inner table under it */
      kind[i] = is_edge ? -2 : -1;
    } else if (!m || m == 1u) {
      kind[i] = 0; /* the fact's (or no table's) */
    } else if (!(m & (m - 1))) {
      kind[i] = __builtin_ctz(m);
    } else {
      kind[i] = is_edge ? -2 : -1;
    }
    if (gpu && kind[i] == 0)
      kind[i] = -1; /* rule 4: the GPU's query filters the fact's rows */
    if (kind[i] == -2)
      ed[ne++] =
          (edge){refs[0].tab, refs[0].col, refs[1].tab, refs[1].col, tm->on, i};
  }
  for (int k = 1; k < j.n; k++) { /* USING (c): the leftmost table's c */
    cj_tab *x = &j.tab[k];
    for (int i = x->us_a; i >= 0 && i < x->us_b; i++) {
      if (!is_name(&j.ft[i]))
        continue;
      char *c = ga_qt_name(j.fz, &j.ft[i]);
      int lt = 0;
      if (!c) {
        j.rc = SQLITE_NOMEM;
        goto done;
      }
      while (lt < k && !has_col(&j, lt, c))
        lt++;
      int ca = lt < k ? entry_col(j.tab[lt].e, c) : -1, cb = entry_col(x->e, c);
      if (ca < 0 || cb < 0)
        snprintf(why, nwhy, "USING column %s is not cached", c);
      sqlite3_free(c);
      if (ca < 0 || cb < 0)
        goto done;
      if (ne < (int)(sizeof ed / sizeof ed[0]))
        ed[ne++] = (edge){lt, ca, k, cb, x->left ? k : -1, -1};
    }
  }
  /* the tree from the fact: each table's parent by its first edge to a
  ** table reached (a LEFT JOIN's only by its ON), then every edge a key
  ** column of a (parent, child) pair */
  {
    uint32_t reached = 1;
    for (int round = 0; round < j.n; round++)
      for (int i = 0; i < ne; i++) {
        edge *x = &ed[i];
        int ra = reached >> x->a & 1, rb = reached >> x->b & 1;
        if (ra == rb)
          continue;
        int child = ra ? x->b : x->a;
        if (j.tab[child].left && x->on != child)
          continue;
        if (!j.tab[child].left && x->on >= 0)
          continue;
        j.tab[child].parent = ra ? x->a : x->b;
        reached |= 1u << child;
      }
    if (reached != (1u << j.n) - 1) {
      snprintf(why, nwhy,
               "a table is joined to the others by no equality of two "
               "columns that the host cache follows");
      goto done;
    }
    for (int i = 0; i < ne; i++) {
      edge *x = &ed[i];
      int child = j.tab[x->b].parent == x->a   ? x->b
                  : j.tab[x->a].parent == x->b ? x->a
                                               : -1;
      cj_tab *c = child >= 0 ? &j.tab[child] : NULL;
      if ((!c || (c->left && x->on != child)) && x->term >= 0 && x->on < 0) {
        kind[x->term] = -1; /* no step of the tree: a filter after it */
        continue;
      }
      if (!c || (c->left && x->on != child) || c->nkeys >= GA_CSTAR_KEYS) {
        snprintf(why, nwhy,
                 "an equality between two tables that is no step of the "
                 "join's tree from the fact");
        goto done;
      }
      c->pleft[c->nkeys] = child == x->b; /* ed's a: the left operand */
      c->pcol[c->nkeys] = child == x->b ? x->ca : x->cb;
      c->kcol[c->nkeys++] = child == x->b ? x->cb : x->ca;
    }
  }
  /* rule 3: numbers on both sides of every edge, or TEXT on both */
  for (int k = 1; k < j.n; k++) {
    cj_tab *x = &j.tab[k];
    cj_tab *pt = &j.tab[x->parent];
    for (int i = 0; i < x->nkeys; i++) {
      const ga_ccol *a = &pt->e->cols[x->pcol[i]], *b = &x->e->cols[x->kcol[i]];
      if (!a->ntext && !a->mixed && !a->dict && !b->ntext && !b->mixed &&
          !b->dict)
        continue; /* numbers (or NULL) */
      if (!text_key(&j, pt, x->pcol[i], x, x->kcol[i], x->pleft[i], &x->pmap[i],
                    &x->npmap[i], &x->kmap[i], &x->nkmap[i])) {
        if (!j.rc && !why[0])
          snprintf(why, nwhy,
                   "join key %s holds TEXT with numbers, or under a numeric "
                   "affinity (affinity decides its matches: the workers "
                   "answer)",
                   a->ntext || a->dict ? b->name : a->name);
        goto done;
      }
    }
  }
  /* each table's own conditions, rewritten bare (rule 1) */
  other = sqlite3_str_new(NULL);
  for (int k = 0; k < j.n; k++) {
    sqlite3_str *s1 = sqlite3_str_new(NULL);
    int cnt = 0, okk = 1;
    for (int i = 0; i < nt && okk; i++) {
      if (kind[i] != k)
        continue;
      sqlite3_str_appendall(s1, cnt++ ? " AND (" : "(");
      okk = rewrite(&j, s1, terms[i].z, terms[i].t, terms[i].a, terms[i].b, 0);
      sqlite3_str_appendall(s1, ")");
    }
    ftext[k] = finish(s1);
    if (!ftext[k])
      j.rc = SQLITE_NOMEM;
    if (!okk || j.rc)
      goto done;
    if (cnt && !compile_filter(&j, k, ftext[k], p, &fq[k]))
      goto done;
    j.tab[k].nterms = cnt;
  }
  for (int i = 0, cnt = 0; i < nt; i++) {
    if (kind[i] != -1)
      continue;
    sqlite3_str_appendall(other, cnt++ ? " AND (" : "(");
    if (!rewrite(&j, other, terms[i].z, terms[i].t, terms[i].a, terms[i].b, 1))
      goto done;
    sqlite3_str_appendall(other, ")");
  }
  vfilter = finish(other);
  other = NULL;
  if (!vfilter) {
    j.rc = SQLITE_NOMEM;
    goto done;
  }
  /* the keys, carried columns and values over the join entry */
  int nkc = p->nkeys + p->ncarry;
  vkeys = sqlite3_malloc64(sizeof(char *) * (size_t)(nkc + 1));
  vvals = sqlite3_malloc64(sizeof(char *) * (size_t)(p->nvals + 1));
  if (!vkeys || !vvals) {
    j.rc = SQLITE_NOMEM;
    goto done;
  }
  memset(vkeys, 0, sizeof(char *) * (size_t)(nkc + 1));
  memset(vvals, 0, sizeof(char *) * (size_t)(p->nvals + 1));
  for (int k = 0; k < nkc; k++)
    if (!(vkeys[k] = rewrite_text(&j, p->keys[k])))
      goto done;
  for (int k = 0; k < p->nvals; k++)
    if (!(vvals[k] = rewrite_text(&j, p->vals[k])))
      goto done;
  /* a text that reads no column (count(*)): the join entry still needs
  ** one to hold its rows */
  if (j.nv == 0 && vcol_of(&j, 0, 0) < 0)
    goto done;
  /* rule 4: every entry current for the caller */
  for (int k = 0; k < j.n; k++) {
    char w[200];
    int rc = ga_cache_current(db, j.tab[k].schema, j.tab[k].real, w, sizeof w);
    if (rc != SQLITE_OK) {
      j.rc = rc;
      goto done;
    }
    if (w[0]) {
      snprintf(why, nwhy, "%s: %s", j.tab[k].table, w);
      goto done;
    }
  }
  /* the lookups and the probe (engine/cache/cache_star.c) */
  ga_intr intr = {.db = db};
  s.fact = j.tab[0].e;
  s.ffilter = j.tab[0].nterms ? &fq[0] : NULL;
  s.ndims = j.n - 1;
  for (int k = 1; k < j.n; k++) {
    ga_cstar_dim *d = &s.dims[k - 1];
    d->e = j.tab[k].e;
    d->filter = j.tab[k].nterms ? &fq[k] : NULL;
    d->parent = j.tab[k].parent - 1;
    d->left = j.tab[k].left;
    d->nkeys = j.tab[k].nkeys;
    memcpy(d->pcol, j.tab[k].pcol, sizeof(d->pcol));
    memcpy(d->kcol, j.tab[k].kcol, sizeof(d->kcol));
    for (int i = 0; i < GA_CSTAR_KEYS; i++) {
      d->pmap[i] = j.tab[k].pmap[i];
      d->kmap[i] = j.tab[k].kmap[i];
      d->npmap[i] = j.tab[k].npmap[i];
      d->nkmap[i] = j.tab[k].nkmap[i];
    }
  }
  for (int k = 0; k < j.nv; k++) {
    s.cols[k].tab = j.vtab[k] - 1;
    s.cols[k].col = j.vcol[k];
  }
  s.ncols = j.nv;
  s.threads = ga_config_threads(cfg);
  s.cap = ga_config_group_bytes(cfg);
  if (gpu && s.used > s.cap) {
    snprintf(why, nwhy,
             "the dimensions' host copies need more than group_bytes "
             "(raise it with gpuagg_config)");
    goto done;
  }
  for (int k = 1; k < j.n; k++) /* TEXT keys' maps: the lookups' too */
    for (int i = 0; i < j.tab[k].nkeys; i++)
      s.used += 8 * (j.tab[k].npmap[i] + j.tab[k].nkmap[i]);
  s.interrupted = ga_intr_check;
  s.interrupted_arg = &intr;
  char w[200] = "";
  ga_cache_qlock(j.c);
  qlocked = 1;
  int erc = ga_cstar_build(&s, w, sizeof w);
  if (erc == GA_OK && gpu) { /* rule 4: the GPU's probe */
    erc = ga_cgstar_probe(j.c, &s, (const char *const *)j.vname, &gs, &virt, w,
                          sizeof w);
  } else if (erc == GA_OK) {
    erc = ga_cstar_probe(&s, (const char *const *)j.vname, &virt, w, sizeof w);
    have_virt = 1;
  }
  ga_cache_qunlock(j.c);
  qlocked = 0;
  if (erc == GA_OK) {
    /* the query over the join entry, as one table's (cache_shape.c) */
    ga_parts vp = *p;
    ga_target vt;
    memset(&vt, 0, sizeof(vt));
    vt.schema = j.tab[0].schema;
    vt.table = j.tab[0].table;
    vt.cols = j.vname;
    vt.ncols = j.nv;
    vp.alias = NULL;
    vp.keys = (const char *const *)vkeys;
    vp.vals = (const char *const *)vvals;
    vp.filter = vfilter[0] ? vfilter : NULL;
    vp.join_from = vp.join_from_caller = NULL;
    vp.join_tables = NULL;
    vp.njoin_tables = 0;
    int rc = ga_cache_shape(db, &virt, &vt, &vp, &vq, w, sizeof w);
    if (rc != 1 && rc != 0) {
      j.rc = rc;
      ga_intr_free(&intr);
      goto done;
    }
    if (rc == 0) {
      erc = GA_CACHE_DECLINED;
    } else {
      vq.dist_cap = ga_config_group_bytes(cfg) - s.used;
      if (vq.dist_cap < 1)
        vq.dist_cap = 1;
      vq.interrupted = vq.ndist ? ga_intr_check : NULL;
      vq.interrupted_arg = &intr;
      ga_cache_qlock(j.c);
      qlocked = 1;
      if (gpu && vq.nsq) {
        snprintf(w, sizeof w,
                 "a variance or standard deviation (the GPU cache keeps no "
                 "sum of squares; host entries, loaded with device = "
                 "'cpu', answer it)");
        erc = GA_CACHE_DECLINED;
      } else if (gpu) {
        erc = ga_cgstar_query(&gs, &virt, &vq, out, w, sizeof w);
      } else {
        erc = ga_cache_query_host(j.c, &virt, &vq, s.threads, out, w, sizeof w);
      }
      vq.interrupted = NULL;
      if (erc == GA_SCAN_OK && ga_cache_decode_keys(&virt, &vq, out))
        erc = GA_SCAN_NOMEM;
    }
  }
  ga_intr_free(&intr);
  if (erc == GA_SCAN_INTERRUPT || erc == GA_SCAN_NOMEM) {
    j.rc = erc == GA_SCAN_NOMEM ? SQLITE_NOMEM : SQLITE_INTERRUPT;
    goto done;
  }
  if (erc == GA_SCAN_FALLBACK && gpu) { /* rule 4: as cache_plan.c */
    if (!qlocked) {
      ga_cache_qlock(j.c);
      qlocked = 1;
    }
    j.c->fallbacks++;
    ga_cgstar_free(&gs, &virt);
    snprintf(why, nwhy, "%s; the entry of %s was dropped", w, j.tab[0].table);
    ga_cache_drop(j.c, j.tab[0].real);
    j.tab[0].real = j.tab[0].e = NULL;
    goto done;
  }
  if (erc != GA_OK) {
    snprintf(why, nwhy, "%s", w);
    goto done;
  }
  if (qlocked) {
    ga_cache_qunlock(j.c);
    qlocked = 0;
  }
  ok = 1;
  *hit = 1;
  for (int k = 0; k < j.n; k++) {
    __atomic_add_fetch(&j.tab[k].real->hits, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&j.tab[k].real->lru, ga_cache_touch(j.c),
                     __ATOMIC_RELAXED);
  }
  ga_cache_qlock(j.c);
  if (gpu)
    j.c->queries_gpu++;
  else
    j.c->queries_host++;
  ga_cache_qunlock(j.c);
  {
    sqlite3_str *m = sqlite3_str_new(NULL);
    sqlite3_str_appendf(m,
                        "%s cache: star join, fact %s: %lld rows probed, "
                        "%lld joined; lookups",
                        gpu ? "GPU" : "host", j.tab[0].table,
                        (long long)s.probed, (long long)s.matched);
    for (int d = 0; d < s.ndims; d++)
      sqlite3_str_appendf(m, " %s %s %lld", j.tab[d + 1].table,
                          s.dims[d].dense ? "dense" : "hash",
                          (long long)s.dims[d].keys);
    if (gpu) { /* rule 4: each build's bytes and time, the probe's */
      sqlite3_str_appendf(m, "; builds");
      for (int d = 0; d < s.ndims; d++)
        sqlite3_str_appendf(
            m, " %s %lld rows %lld bytes %.3f ms", j.tab[d + 1].table,
            (long long)s.dims[d].keys,
            (long long)(gs.dim_bytes[d] ? gs.dim_bytes[d] : s.dims[d].bytes),
            s.dims[d].ms);
      sqlite3_str_appendf(m, "; probe %.3f ms, %lld device bytes", gs.probe_ms,
                          (long long)gs.dev_bytes);
    }
    char *mm = finish(m);
    snprintf(why, nwhy, "%s", mm ? mm : "host cache");
    sqlite3_free(mm);
  }
done:
  if (!ok && why[0] && !j.rc) {
    char w2[256];
    snprintf(w2, sizeof w2, "%s%s", lead, why);
    snprintf(why, nwhy, "%s", w2);
  }
  if (!ok && (*hit = 0, out->groups || out->sorted))
    ga_scan_out_free(out);
  if (other)
    sqlite3_free(sqlite3_str_finish(other));
  if (have_virt)
    ga_cstar_entry_free(&virt);
  if (j.c && !qlocked) { /* the device memory's release (cache.c rule 6) */
    ga_cache_qlock(j.c);
    qlocked = 1;
  }
  ga_cgstar_free(&gs, &virt);
  for (int k = 0; k < CJ_MAX_TABS; k++)
    ga_cgstar_mirror_free(&mir[k]);
  if (qlocked)
    ga_cache_qunlock(j.c);
  ga_cstar_free(&s);
  for (int k = 0; k < CJ_MAX_TABS; k++) {
    ga_cquery_free(&fq[k]);
    sqlite3_free(ftext[k]);
  }
  ga_cquery_free(&vq);
  for (int k = 0; vkeys && vkeys[k]; k++)
    sqlite3_free(vkeys[k]);
  for (int k = 0; vvals && vvals[k]; k++)
    sqlite3_free(vvals[k]);
  sqlite3_free(vkeys);
  sqlite3_free(vvals);
  sqlite3_free(vfilter);
  sqlite3_free(t);
  for (int k = 0; k < CJ_MAX_TABS; k++) /* issue 40: the references */
    if (j.tab[k].real) { /* e may be a GPU dimension's host copy (rule 4) */
      ga_centry_put(j.c, j.tab[k].real);
      j.tab[k].real = j.tab[k].e = NULL;
    }
  cj_free(&j);
  return j.rc;
}
