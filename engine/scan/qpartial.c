/*
** qpartial.c — query partials to bytes and back (qpartial.h: the format
** and the rules).
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "qpartial.h"
#include "qpartial_pct.h"
#include "qschema.h"
#include "state.h"

static const char magic[4] = {'G', 'A', 'Q', 'P'};

/* ---- writing, into a buffer that grows (by doubling: realloc moves a
** large one by remapping its pages, not by copying them) ---- */

typedef struct wbuf {
  unsigned char *p;
  int64_t n, cap, max;
  int err; /* GA_NOMEM or GA_QPART_TOOBIG: nothing more is written */
} wbuf;

static void put(wbuf *w, const void *src, int64_t n) {
  if (w->err)
    return;
  if (w->n + n > w->cap) {
    int64_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n)
      cap *= 2;
    if (w->n + n > w->max) {
      w->err = GA_QPART_TOOBIG;
      return;
    }
    unsigned char *p = sqlite3_realloc64(w->p, (sqlite3_uint64)cap);
    if (!p) {
      w->err = GA_NOMEM;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  if (n)
    memcpy(w->p + w->n, src, (size_t)n);
  w->n += n;
}

static void put_u8(wbuf *w, unsigned v) {
  unsigned char b = (unsigned char)v;
  put(w, &b, 1);
}

static void put_u64(wbuf *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  put(w, b, 8);
}

static void put_u32(wbuf *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  put(w, b, 4);
}

static void put_str(wbuf *w, const void *z, int64_t n) {
  put_u32(w, (uint32_t)n);
  put(w, z, n);
}

static void put_cstr(wbuf *w, const char *z) {
  put_str(w, z ? z : "", z ? (int64_t)strlen(z) : 0);
}

static void put_value(wbuf *w, const ga_value *v) {
  put_u8(w, (unsigned)v->type);
  switch (v->type) {
  case GA_V_INT:
    put_u64(w, (uint64_t)v->i);
    break;
  case GA_V_REAL: {
    uint64_t u;
    memcpy(&u, &v->r, 8);
    put_u64(w, u);
    break;
  }
  case GA_V_TEXT:
  case GA_V_BLOB:
    put_str(w, v->p, v->n);
    break;
  }
}

/* qsort has no context argument in C11: the set's collation travels in a
** thread-local */
static _Thread_local int put_set_coll;

static int dent_cmp(const void *pa, const void *pb) {
  const ga_dent *a = *(const ga_dent *const *)pa;
  const ga_dent *b = *(const ga_dent *const *)pb;
  ga_value va, vb;
  ga_bval_view(&a->raw, &va);
  ga_bval_view(&b->raw, &vb);
  return ga_key_cmp(&va, &vb, put_set_coll);
}

/* Rule 6: a DISTINCT state's set, its representatives in ga_key_cmp order
** under its collation (a total order of distinct values), so that one set
** has one encoding whatever order its values came in. */
static void put_set(wbuf *w, const ga_dset *d) {
  size_t n = d ? d->n : 0, k = 0;
  put_u32(w, (uint32_t)n);
  if (!n || w->err)
    return;
  const ga_dent **v = sqlite3_malloc64(sizeof(*v) * n);
  if (!v) {
    w->err = GA_NOMEM;
    return;
  }
  for (size_t i = 0; i < d->cap; i++)
    if (d->e[i].raw.type != GA_V_NULL)
      v[k++] = &d->e[i];
  put_set_coll = d->coll;
  qsort(v, n, sizeof(*v), dent_cmp);
  for (size_t i = 0; i < n; i++) {
    ga_value x;
    ga_bval_view(&v[i]->raw, &x);
    put_value(w, &x);
    put_u8(w, (unsigned)v[i]->num_type);
    put_u64(w, (uint64_t)v[i]->num_i);
  }
  sqlite3_free(v);
}

/* A table's name, columns and indexes (rules 1 and 7). */
static void put_table(wbuf *w, const ga_qpart_head *h) {
  put_cstr(w, h->table);
  put_u32(w, (uint32_t)h->ncols);
  for (int i = 0; i < h->ncols; i++) {
    put_cstr(w, h->cols[i].name);
    put_cstr(w, h->cols[i].type);
    put_cstr(w, h->cols[i].coll);
    put_u8(w, (h->cols[i].rowid ? 1 : 0) | (h->cols[i].wpk ? 2 : 0));
  }
  put_u32(w, (uint32_t)h->nidx);
  for (int i = 0; i < h->nidx; i++) {
    put_cstr(w, h->idx[i].name);
    put_cstr(w, h->idx[i].sql);
  }
}

/* Rule 8: a variance state's Σx², its digits normalised (canonical: one
** value, one encoding), from the lowest nonzero digit to the highest. */
static void put_sq(wbuf *w, const ga_gsq *q) {
  int64_t d[GA_XSQ_DIGITS];
  if (q)
    memcpy(d, q->d, sizeof(d));
  else
    memset(d, 0, sizeof(d));
  for (int k = 0; k < GA_XSQ_DIGITS - 1; k++) {
    int64_t c = d[k] >> 32; /* arithmetic: floor */
    d[k] -= (int64_t)((uint64_t)c << 32);
    d[k + 1] += c;
  }
  int lo = 0, hi = GA_XSQ_DIGITS;
  while (lo < hi && !d[lo])
    lo++;
  while (hi > lo && !d[hi - 1])
    hi--;
  if (hi > lo && (d[hi - 1] < 0 || d[hi - 1] > (int64_t)0xffffffff)) {
    w->err = GA_NOMEM; /* no values give it (Σx² < 2^4300) */
    return;
  }
  put_u32(w, (uint32_t)lo);
  put_u32(w, (uint32_t)(hi - lo));
  for (int k = lo; k < hi; k++)
    put_u32(w, (uint32_t)d[k]);
}

static void put_head(wbuf *w, ga_qpart_head *h, ga_group *const *g, size_t n) {
  const ga_gshape *s = &h->shape;
  put(w, magic, 4);
  put_u8(w, GA_QPART_VERSION);
  put_u8(w, (unsigned)h->enc);
  put_u8(w, (unsigned)s->nk);
  put_u8(w, (unsigned)s->nc);
  put_u8(w, (unsigned)s->ns);
  for (int k = 0; k < s->nk; k++)
    put_u8(w, (unsigned)s->coll[k]);
  for (int j = 0; j < s->ns; j++) /* rules 6, 7, 9 */
    put_u8(w, s->dist[j] == GA_DIST_PCT
                  ? GA_QPART_PCT
                  : (unsigned)s->dist[j] | (s->sq[j] ? GA_QPART_SQ : 0));
  put_u64(w, h->sig);
  put_u32(w, (uint32_t)h->nparams);
  put_table(w, h);
  put_u32(w, (uint32_t)h->ndims); /* rule 7 */
  for (int i = 0; i < h->ndims; i++)
    put_table(w, &h->dims[i]);
  uint64_t rows = 0;
  for (size_t i = 0; i < n; i++)
    rows += (uint64_t)g[i]->st[0].rows;
  h->rows = (int64_t)rows;
  put_u64(w, rows);
  put_u64(w, (uint64_t)n);
}

/* Rule 9: a median's values (qpartial_pct.c), the sort polling lim's
** stop; GA_OK, GA_NOMEM or GA_QPART_STOP. */
static int put_pct(wbuf *w, ga_dset *set, const ga_qpart_limit *lim) {
  unsigned char *b = NULL;
  int64_t n = 0;
  int rc = ga_qpp_encode(set, lim ? lim->stop : NULL,
                         lim ? lim->stop_arg : NULL, &b, &n);
  if (rc != GA_OK)
    return rc == GA_INTERRUPTED ? GA_QPART_STOP : GA_NOMEM;
  put(w, b, n);
  sqlite3_free(b);
  return GA_OK;
}

/* One group; GA_OK, GA_NOMEM (a state too large for the stack buffer) or
** GA_QPART_STOP (rule 9's sort was stopped). */
static int put_group(wbuf *w, const ga_gshape *s, const ga_group *g,
                     const ga_qpart_limit *lim) {
  for (int k = 0; k < s->nk + s->nc; k++) {
    ga_value v;
    ga_bval_view(&g->key[k], &v);
    put_value(w, &v);
  }
  for (int j = 0; j < s->ns; j++) {
    ga_xstate x;
    unsigned char small[512];
    ga_gstate_view(&g->st[j], &x);
    int64_t len = ga_state_encode_buf(&x, GA_STATE_FUSED, small, sizeof small);
    if (len <= (int64_t)sizeof small) {
      put_str(w, small, len);
      continue;
    }
    unsigned char *big = NULL;
    if (ga_state_encode(&x, GA_STATE_FUSED, &big, &len))
      return GA_NOMEM;
    put_str(w, big, len);
    sqlite3_free(big);
  }
  for (int j = 0; j < s->ns; j++) {
    int rc = s->dist[j] == GA_DIST_PCT ? put_pct(w, g->st[j].set, lim) /* 9 */
                                       : GA_OK;
    if (rc != GA_OK)
      return rc;
    if (s->dist[j] && s->dist[j] != GA_DIST_PCT)
      put_set(w, g->st[j].set);
  }
  for (int j = 0; j < s->ns; j++)
    if (s->sq[j])
      put_sq(w, g->st[j].sq);
  return GA_OK;
}

/* Rule 5: 1 when the caller's stop says to end the work. */
static int stopped(const ga_qpart_limit *lim) {
  return lim && lim->stop && lim->stop(lim->stop_arg);
}

int ga_qpart_encode(ga_qpart_head *h, ga_group *const *g, size_t n,
                    int64_t max_bytes, const ga_qpart_limit *lim,
                    unsigned char **out, int64_t *nout) {
  wbuf w = {NULL, 0, 0, max_bytes, GA_OK};
  *out = NULL;
  *nout = 0;
  put_head(&w, h, g, n);
  for (size_t i = 0; i < n && !w.err; i++) {
    if (i % GA_QPART_POLL == 0 && stopped(lim))
      w.err = GA_QPART_STOP;
    else
      w.err = put_group(&w, &h->shape, g[i], lim);
  }
  if (w.err) {
    sqlite3_free(w.p);
    return w.err;
  }
  *out = w.p;
  *nout = w.n;
  return GA_OK;
}

/* ---- reading: every length checked before it is used (rule 3) ---- */

typedef struct rbuf {
  const unsigned char *p;
  int64_t n, at;
  int bad;
} rbuf;

static const unsigned char *take(rbuf *r, int64_t n) {
  if (r->bad || n < 0 || n > r->n - r->at) {
    r->bad = 1;
    return NULL;
  }
  const unsigned char *p = r->p + r->at;
  r->at += n;
  return p;
}

static unsigned get_u8(rbuf *r) {
  const unsigned char *p = take(r, 1);
  return p ? p[0] : 0;
}

static uint64_t get_u64(rbuf *r) {
  const unsigned char *p = take(r, 8);
  uint64_t v = 0;
  for (int i = 0; p && i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint32_t get_u32(rbuf *r) {
  const unsigned char *p = take(r, 4);
  uint32_t v = 0;
  for (int i = 0; p && i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

/* A str: its bytes (in the BLOB) and length. */
static const unsigned char *get_str(rbuf *r, int64_t *n) {
  uint32_t len = get_u32(r);
  *n = len;
  return take(r, len);
}

/* Well-formed UTF-8 without NUL: names go into error messages and SQL. */
static int utf8_ok(const unsigned char *p, int64_t n) {
  for (int64_t i = 0; i < n;) {
    unsigned c = p[i];
    int k = c < 0x80             ? 0
            : (c & 0xe0) == 0xc0 ? 1
            : (c & 0xf0) == 0xe0 ? 2
            : (c & 0xf8) == 0xf0 ? 3
                                 : -1;
    if (!c || k < 0 || (k && c < 0xc2) || c > 0xf4 || n - i <= k)
      return 0;
    unsigned d = k ? p[i + 1] : 0x80; /* no overlong form, no surrogate */
    if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d >= 0xa0) ||
        (c == 0xf0 && d < 0x90) || (c == 0xf4 && d >= 0x90))
      return 0;
    for (int j = 1; j <= k; j++)
      if ((p[i + j] & 0xc0) != 0x80)
        return 0;
    i += k + 1;
  }
  return 1;
}

/* A str as a new NUL-terminated string; NULL when bad (r->bad: truncated,
** or not UTF-8) or out of memory (*nomem). */
static char *get_cstr(rbuf *r, int *nomem) {
  int64_t n;
  const unsigned char *p = get_str(r, &n);
  if (p && !utf8_ok(p, n))
    r->bad = 1;
  if (!p || r->bad)
    return NULL;
  char *z = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if (!z) {
    *nomem = 1;
    return NULL;
  }
  memcpy(z, p, (size_t)n);
  z[n] = 0;
  return z;
}

void ga_qpart_head_free(ga_qpart_head *h) {
  sqlite3_free(h->table);
  for (int i = 0; h->cols && i < h->ncols; i++) {
    sqlite3_free(h->cols[i].name);
    sqlite3_free(h->cols[i].type);
    sqlite3_free(h->cols[i].coll);
  }
  sqlite3_free(h->cols);
  sqlite3_free(h->byname);
  for (int i = 0; h->idx && i < h->nidx; i++) {
    sqlite3_free(h->idx[i].name);
    sqlite3_free(h->idx[i].sql);
  }
  sqlite3_free(h->idx);
  for (int i = 0; h->dims && i < h->ndims; i++)
    ga_qpart_head_free(&h->dims[i]);
  sqlite3_free(h->dims);
  memset(h, 0, sizeof(*h));
}

const ga_qpart_head *ga_qpart_table(const ga_qpart_head *h, const char *name) {
  if (h->table && !sqlite3_stricmp(h->table, name))
    return h;
  for (int i = 0; i < h->ndims; i++)
    if (h->dims[i].table && !sqlite3_stricmp(h->dims[i].table, name))
      return &h->dims[i];
  return NULL;
}

static int name_cmp(const void *a, const void *b) {
  const ga_qpart_name *x = a, *y = b;
  int c = sqlite3_stricmp(x->name, y->name);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

int ga_qpart_sort_names(ga_qpart_name *v, int n) {
  if (n > 1)
    qsort(v, (size_t)n, sizeof(*v), name_cmp);
  for (int i = 1; i < n; i++)
    if (!sqlite3_stricmp(v[i - 1].name, v[i].name))
      return 1;
  return 0;
}

int ga_qpart_find_name(const ga_qpart_name *v, int n, const char *name) {
  int lo = 0, hi = n; /* the first at or after name */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (sqlite3_stricmp(v[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && !sqlite3_stricmp(v[lo].name, name) ? v[lo].at : -1;
}

int ga_qpart_sort_cols(ga_qpart_head *h) {
  sqlite3_free(h->byname);
  h->byname = NULL;
  if (!h->ncols)
    return GA_OK;
  h->byname = sqlite3_malloc64(sizeof(*h->byname) * (size_t)h->ncols);
  if (!h->byname)
    return GA_NOMEM;
  for (int i = 0; i < h->ncols; i++) {
    h->byname[i].name = h->cols[i].name ? h->cols[i].name : "";
    h->byname[i].at = i;
  }
  return ga_qpart_sort_names(h->byname, h->ncols) ? GA_BADSTATE : GA_OK;
}

/* Rule 4: the index named name whose text is sql, rebuilt from its parts
** (qschema.h rule 3) when they are over h's table and columns (found by
** h->byname); NULL when not (the index is dropped), out of memory
** (*nomem), or of more columns than the table (*forged). */
static char *index_text(const ga_qpart_head *h, const char *name,
                        const char *sql, int *nomem, const char **forged) {
  ga_qs_index x;
  int rc = ga_qs_index_parse(sql, &x);
  if (rc) {
    *nomem |= rc == 2;
    return NULL;
  }
  int ok = !strcmp(x.name, name) && !sqlite3_stricmp(x.table, h->table);
  if (x.ncol > h->ncols) {
    *forged = "a damaged partial (an index of more columns than its table)";
    ok = 0;
  }
  for (int i = 0; ok && i < x.ncol; i++)
    ok = ga_qpart_find_name(h->byname, h->ncols, x.col[i]) >= 0;
  char *text = ok ? ga_qs_index_text(&x) : NULL;
  *nomem |= ok && !text;
  ga_qs_index_free(&x);
  return text;
}

/* A table's name, columns and indexes into h (rules 1, 4 and 7): GA_OK
** with r->bad, *nomem, *forged (what the writer never writes) and *stop
** (rule 5) set as found, or GA_BADSTATE with *err (h's strings then freed
** by the caller). */
static int read_table(rbuf *r, ga_qpart_head *h, const ga_qpart_limit *lim,
                      int *nomem, const char **forged, int *stop,
                      const char **err) {
  int wpk = 0, rowid = 0; /* rule 7 */
  h->table = get_cstr(r, nomem);
  uint32_t nc = get_u32(r);
  if (!r->bad && nc > GA_QPART_MAX_COLS) { /* rule 4: no table has more */
    *err = "a damaged partial (more columns than SQLite allows a table)";
    return GA_BADSTATE;
  }
  /* each column takes 13 bytes at least: a count past what is left is bad */
  if (!r->bad && (int64_t)nc * 13 > r->n - r->at)
    r->bad = 1;
  if (!r->bad && !*nomem && nc) {
    h->cols = sqlite3_malloc64(sizeof(*h->cols) * nc);
    if (!h->cols)
      *nomem = 1;
    else {
      memset(h->cols, 0, sizeof(*h->cols) * nc);
      h->ncols = (int)nc;
    }
  }
  for (int i = 0; i < h->ncols && !r->bad && !*nomem && !*stop; i++) {
    ga_qpart_col *c = &h->cols[i];
    /* not at 0: the first poll runs the caller's progress probe, which
    ** runs at most every 10 ms (ext/common/intr.c); a small header spends
    ** none, and the groups' decode gets it */
    if (i && i % GA_QPART_POLL == 0 && stopped(lim)) {
      *stop = 1;
      break;
    }
    c->name = get_cstr(r, nomem);
    c->type = get_cstr(r, nomem);
    c->coll = get_cstr(r, nomem);
    unsigned flags = get_u8(r);
    c->rowid = (int)flags & 1;
    c->wpk = (int)(flags >> 1) & 1; /* rule 7 */
    wpk |= c->wpk;
    rowid |= c->rowid;
    if (c->type && !ga_qs_type_plain(c->type))
      *forged = "a damaged partial (a column's declared type is no type name)";
    if (c->coll &&
        (!ga_qs_coll(c->coll) || strcmp(ga_qs_coll(c->coll), c->coll)))
      *forged = "a damaged partial (a column's collation is not BINARY, "
                "NOCASE or RTRIM)";
  }
  if (wpk && rowid)
    *forged = "a damaged partial (a WITHOUT ROWID table with a rowid column)";
  if (!r->bad && !*nomem && !*stop) {
    int rc = ga_qpart_sort_cols(h);
    *nomem = rc == GA_NOMEM;
    if (rc == GA_BADSTATE)
      *forged = "a damaged partial (two columns of one name)";
  }
  uint32_t ni = get_u32(r);
  if (!r->bad && (int64_t)ni * 8 > r->n - r->at)
    r->bad = 1;
  if (!r->bad && !*nomem && ni) {
    h->idx = sqlite3_malloc64(sizeof(*h->idx) * ni);
    if (!h->idx)
      *nomem = 1;
    else {
      memset(h->idx, 0, sizeof(*h->idx) * ni);
      h->nidx = (int)ni;
    }
  }
  int kept = 0; /* rule 4: an index is kept as rebuilt from its parts */
  for (int i = 0; i < h->nidx && !r->bad && !*nomem && !*stop; i++) {
    if (i && i % GA_QPART_POLL == 0 && stopped(lim)) {
      *stop = 1;
      break;
    }
    char *name = get_cstr(r, nomem), *sql = get_cstr(r, nomem);
    char *text = sql && name ? index_text(h, name, sql, nomem, forged) : NULL;
    sqlite3_free(sql);
    if (text) {
      h->idx[kept].name = name;
      h->idx[kept++].sql = text;
    } else
      sqlite3_free(name);
  }
  if (h->idx)
    h->nidx = kept;
  return GA_OK;
}

int ga_qpart_read_head(const void *blob, int64_t n, ga_qpart_head *h,
                       const ga_qpart_limit *lim, const char **err) {
  rbuf r = {blob, n, 0, 0};
  int nomem = 0;
  memset(h, 0, sizeof(*h));
  const unsigned char *m = take(&r, 4);
  if (!m || memcmp(m, magic, 4)) {
    *err = "not a gpu_query partial";
    return GA_BADSTATE;
  }
  unsigned version = get_u8(&r);
  if (version != GA_QPART_VERSION) {
    *err = r.bad ? "a damaged partial (truncated header)"
           : version < GA_QPART_VERSION
               ? "a partial written by an older gpuagg: make it again with "
                 "this gpuagg's gpu_query_partial"
               : "a partial of a newer version of gpuagg: finish or merge "
                 "it with that version";
    return GA_BADSTATE;
  }
  h->enc = (int)get_u8(&r);
  h->shape.nk = (int)get_u8(&r);
  h->shape.nc = (int)get_u8(&r);
  h->shape.ns = (int)get_u8(&r);
  if (r.bad || h->enc < 1 || h->enc > 3 || h->shape.nk < 1 || h->shape.ns < 1 ||
      h->shape.nk + h->shape.nc > GA_MAX_KEYS || h->shape.ns > GA_MAX_STATES) {
    *err = "a damaged partial (its shape)";
    return GA_BADSTATE;
  }
  for (int k = 0; k < h->shape.nk; k++) {
    h->shape.coll[k] = (int)get_u8(&r);
    if (h->shape.coll[k] > GA_COLL_RTRIM)
      r.bad = 1;
  }
  for (int j = 0; j < h->shape.ns; j++) { /* rules 6, 7 */
    unsigned b = get_u8(&r);
    if (b == GA_QPART_PCT) { /* rule 9 */
      h->shape.dist[j] = GA_DIST_PCT;
      h->shape.sq[j] = 0;
      continue;
    }
    h->shape.sq[j] = (b & GA_QPART_SQ) != 0;
    h->shape.dist[j] = (unsigned char)(b & ~(unsigned)GA_QPART_SQ);
    if (h->shape.dist[j] > 1 + GA_COLL_RTRIM ||
        (h->shape.sq[j] && h->shape.dist[j]))
      r.bad = 1;
  }
  h->sig = get_u64(&r);
  uint32_t np = get_u32(&r);
  /* the writer's count is sqlite3_bind_parameter_count, up to the
  ** writer's SQLITE_LIMIT_VARIABLE_NUMBER (250,000 on Debian): any int */
  h->nparams = np > INT32_MAX ? (r.bad = 1, 0) : (int)np;
  const char *forged = NULL; /* rule 4: what the writer never writes */
  int stop = 0;              /* rule 5 */
  if (read_table(&r, h, lim, &nomem, &forged, &stop, err) != GA_OK) {
    ga_qpart_head_free(h);
    return GA_BADSTATE;
  }
  /* rule 7: a join's other tables, read and checked as the fact is */
  uint32_t nd = get_u32(&r);
  /* each takes 12 bytes at least: its name, columns and indexes' counts */
  if (!r.bad && !nomem && !stop && nd >= GA_QPART_MAX_TABLES) {
    ga_qpart_head_free(h);
    *err = "a damaged partial (more tables than SQLite joins)";
    return GA_BADSTATE;
  }
  if (!r.bad && (int64_t)nd * 12 > r.n - r.at)
    r.bad = 1;
  if (!r.bad && !nomem && !stop && nd) {
    h->dims = sqlite3_malloc64(sizeof(*h->dims) * nd);
    if (!h->dims)
      nomem = 1;
    else {
      memset(h->dims, 0, sizeof(*h->dims) * nd);
      h->ndims = (int)nd;
    }
  }
  for (int i = 0; i < h->ndims && !r.bad && !nomem && !stop; i++) {
    ga_qpart_head *d = &h->dims[i]; /* polled as its columns are read */
    if (read_table(&r, d, lim, &nomem, &forged, &stop, err) != GA_OK) {
      ga_qpart_head_free(h);
      return GA_BADSTATE;
    }
    if (!r.bad && !nomem && !d->table)
      r.bad = 1;
    /* names compared as SQLite compares table names */
    for (int k = -1; !r.bad && !nomem && d->table && k < i; k++)
      if (!sqlite3_stricmp(k < 0 ? h->table ? h->table : "" : h->dims[k].table,
                           d->table))
        forged = "a damaged partial (two tables of one name)";
  }
  uint64_t rows = get_u64(&r);
  if (!r.bad && !nomem && rows > (uint64_t)INT64_MAX) { /* rule 3 */
    ga_qpart_head_free(h);
    *err = "a damaged partial (its header's rows pass 2^63)";
    return GA_BADSTATE;
  }
  h->rows = (int64_t)rows;
  uint64_t ng = get_u64(&r);
  /* a group takes (keys + states) * 1 byte at least */
  if (!r.bad && ng > (uint64_t)(r.n - r.at))
    r.bad = 1;
  h->ngroups = (int64_t)ng;
  h->groups_at = r.at;
  if (nomem || stop) {
    ga_qpart_head_free(h);
    return nomem ? GA_NOMEM : GA_QPART_STOP;
  }
  if (r.bad || !h->table || forged) {
    *err = r.bad || !h->table ? "a damaged partial (truncated header)" : forged;
    ga_qpart_head_free(h);
    return GA_BADSTATE;
  }
  return GA_OK;
}

/* Rule 8: a variance state's Σx² into *out (NULL: zero), checked:
** canonical digits inside the window, zero without values, and
** n*Σx² >= (Σx)² with x's (n, Σx) (ga_var_consistent: what values give).
** GA_OK, GA_NOMEM, or GA_BADSTATE with *err. */
static int get_sq(rbuf *r, const ga_xstate *x, ga_gsq **out, const char **err) {
  *out = NULL;
  uint32_t lo = get_u32(r), n = get_u32(r);
  if (r->bad || lo > GA_XSQ_DIGITS || n > GA_XSQ_DIGITS - lo ||
      (int64_t)n * 4 > r->n - r->at) {
    *err = "a damaged partial (a variance's sum of squares)";
    return GA_BADSTATE;
  }
  ga_var_partial v;
  memset(&v, 0, sizeof(v));
  for (uint32_t k = 0; k < n; k++)
    v.sq[lo + k] = (int64_t)get_u32(r);
  v.sum = x->sum;
  if (n && (!v.sq[lo] || !v.sq[lo + n - 1])) {
    *err = "a damaged partial (a variance's sum of squares)";
    return GA_BADSTATE;
  }
  if (n && !ga_var_bounded(&v)) { /* what no values give: never Inf */
    *err = "a damaged partial (a variance's sum of squares too large for "
           "its count)";
    return GA_BADSTATE;
  }
  if ((n && !ga_var_count(&v)) || !ga_var_consistent(&v)) {
    *err = "a damaged partial (a variance's sum of squares below what its "
           "sum and count give)";
    return GA_BADSTATE;
  }
  if (!n)
    return GA_OK;
  if (!(*out = sqlite3_malloc64(sizeof(ga_gsq))))
    return GA_NOMEM;
  memcpy((*out)->d, v.sq, sizeof(v.sq));
  (*out)->adds = 0;
  return GA_OK;
}

static int get_value(rbuf *r, ga_value *v) {
  memset(v, 0, sizeof(*v));
  v->type = (int)get_u8(r);
  switch (v->type) {
  case GA_V_NULL:
    break;
  case GA_V_INT:
    v->i = (int64_t)get_u64(r);
    break;
  case GA_V_REAL: {
    uint64_t u = get_u64(r);
    memcpy(&v->r, &u, 8);
    break;
  }
  case GA_V_TEXT:
  case GA_V_BLOB: {
    int64_t n;
    v->p = get_str(r, &n);
    if (n > 0x7fffffff)
      r->bad = 1;
    v->n = (int)n;
    if (!v->p)
      v->p = ""; /* r->bad says so; never NULL bytes for TEXT */
    break;
  }
  default:
    r->bad = 1;
  }
  return !r->bad;
}

/* Rule 6: a DISTINCT state's set of piece `piece` into *out (NULL when
** empty), each value checked: no NULL, a number's sum classification
** itself, a TEXT or BLOB's an INTEGER or a REAL, no REAL NaN (SQLite
** stores none), no two values equal under coll, and no more values than
** bytes could hold.  GA_OK, GA_NOMEM, or GA_BADSTATE with *err. */
static int get_set(rbuf *r, int coll, int64_t piece, ga_dset **out,
                   const ga_qpart_limit *lim, int64_t bytes, const char **err) {
  *out = NULL;
  uint32_t n = get_u32(r);
  if (!r->bad && (int64_t)n * 10 > r->n - r->at) /* 10 bytes a value */
    r->bad = 1;
  for (uint32_t i = 0; i < n && !r->bad; i++) {
    /* rule 5 inside one group too: a set may hold millions of values */
    int rc = lim && bytes + ga_dset_bytes(*out) > lim->cap ? GA_QPART_CAP
             : (i & 0xffff) == 0xffff && stopped(lim)      ? GA_QPART_STOP
                                                           : GA_OK;
    if (rc != GA_OK) {
      ga_dset_free(*out);
      *out = NULL;
      return rc;
    }
    ga_value v, num;
    memset(&num, 0, sizeof(num));
    if (!get_value(r, &v))
      break;
    num.type = (int)get_u8(r);
    uint64_t bits = get_u64(r);
    if (num.type == GA_V_INT)
      num.i = (int64_t)bits;
    else
      memcpy(&num.r, &bits, 8);
    int same = v.type == num.type &&
               (uint64_t)(v.type == GA_V_INT ? (uint64_t)v.i
                                             : (uint64_t)ga_dbits(v.r)) == bits;
    if (r->bad || v.type == GA_V_NULL ||
        (num.type != GA_V_INT && num.type != GA_V_REAL) ||
        ((v.type == GA_V_INT || v.type == GA_V_REAL) && !same) ||
        (v.type == GA_V_REAL && v.r != v.r) ||
        (num.type == GA_V_REAL && num.r != num.r)) {
      r->bad = 1;
      break;
    }
    ga_dent *e = NULL;
    size_t had = *out ? (*out)->n : 0;
    if (ga_distinct_add(out, coll, &v, piece, &e)) {
      ga_dset_free(*out);
      *out = NULL;
      return GA_NOMEM;
    }
    if (!e || (*out)->n == had) { /* equal to a value before it */
      r->bad = 1;
      break;
    }
    ga_dset_set_num(e, &num);
  }
  if (r->bad) {
    ga_dset_free(*out);
    *out = NULL;
    *err = "a damaged partial (a DISTINCT aggregate's values)";
    return GA_BADSTATE;
  }
  return GA_OK;
}

/* Rule 9: a median's values (qpartial_pct.c), its state's sum, count, max
** and min empty (ga_pct_gstep keeps none of them). */
static int get_pct(rbuf *r, const ga_xstate *x, int64_t piece, ga_dset **out,
                   const ga_qpart_limit *lim, int64_t bytes, const char **err) {
  (void)piece; /* the values carry no representative (rule 2) */
  *out = NULL;
  if (r->bad || x->count || x->max.type != GA_V_NULL ||
      x->min.type != GA_V_NULL) {
    *err = "a damaged partial (a median's or percentile's values)";
    return GA_BADSTATE;
  }
  int64_t used = 0;
  int rc = ga_qpp_decode(r->p + r->at, r->n - r->at, &used, x->rows,
                         !lim               ? -1
                         : bytes > lim->cap ? 0
                                            : lim->cap - bytes,
                         lim ? lim->stop : NULL, lim ? lim->stop_arg : NULL,
                         out, err);
  if (rc == GA_OK)
    r->at += used;
  return rc;
}

int ga_qpart_add_groups(const void *blob, int64_t n, const ga_qpart_head *h,
                        ga_group_shards *s, int64_t piece,
                        const ga_qpart_limit *lim, int64_t *bytes,
                        int64_t *rows, const char **err) {
  const ga_gshape *sh = &h->shape;
  rbuf r = {blob, n, h->groups_at, 0};
  ga_value keys[GA_MAX_KEYS];
  ga_xstate xs[GA_MAX_STATES];
  ga_dset *sets[GA_MAX_STATES];
  ga_gsq *sqs[GA_MAX_STATES];
  int64_t own = 0; /* this partial's groups' rows (rule 3) */
  for (int64_t g = 0; g < h->ngroups; g++) {
    if (g % GA_QPART_POLL == 0 && stopped(lim)) /* rule 5 */
      return GA_QPART_STOP;
    for (int k = 0; k < sh->nk + sh->nc; k++)
      if (!get_value(&r, &keys[k])) {
        *err = "a damaged partial (a group's key)";
        return GA_BADSTATE;
      }
    int j = 0, rc = GA_OK;
    for (; j < sh->ns; j++) {
      int64_t len;
      const unsigned char *p = get_str(&r, &len);
      if (!p) {
        *err = "a damaged partial (a group's state)";
        rc = GA_BADSTATE;
        break;
      }
      ga_xstate_init(&xs[j]);
      rc = ga_state_decode(p, len, GA_STATE_FUSED, &xs[j], err);
      if (rc != GA_OK) {
        j++; /* clear it too */
        break;
      }
    }
    /* rule 3: counts that no table has, or a sum past int64 (each group's
    ** rows is its first state's, as the encoder counts them) */
    if (rc == GA_OK &&
        (xs[0].rows < 0 || __builtin_add_overflow(own, xs[0].rows, &own))) {
      *err = "a damaged partial (its groups' rows pass 2^63)";
      rc = GA_BADSTATE;
    }
    /* rule 6: the sets after the states; a DISTINCT state holds its
    ** rows only (count, sum, max and min empty: gstate.h rule 5) */
    memset(sets, 0, sizeof(sets[0]) * (size_t)sh->ns);
    for (int i = 0; rc == GA_OK && i < sh->ns; i++) {
      if (!sh->dist[i])
        continue;
      if (sh->dist[i] == GA_DIST_PCT) { /* rule 9 */
        rc = get_pct(&r, &xs[i], piece, &sets[i], lim, *bytes, err);
        continue;
      }
      if (xs[i].count || xs[i].max.type != GA_V_NULL ||
          xs[i].min.type != GA_V_NULL) {
        *err = "a damaged partial (a DISTINCT aggregate's state)";
        rc = GA_BADSTATE;
      } else {
        rc = get_set(&r, sh->dist[i] - 1, piece, &sets[i], lim, *bytes, err);
      }
    }
    memset(sqs, 0, sizeof(sqs[0]) * (size_t)sh->ns);
    for (int i = 0; rc == GA_OK && i < sh->ns; i++) /* rule 8 */
      if (sh->sq[i])
        rc = get_sq(&r, &xs[i], &sqs[i], err);
    if (rc != GA_OK) {
      for (int i = 0; i < j; i++)
        ga_xstate_clear(&xs[i]);
      for (int i = 0; i < sh->ns; i++) {
        ga_dset_free(sets[i]);
        sqlite3_free(sqs[i]);
      }
      return rc;
    }
    /* rule 5 inside a set's merge too (engine/state/dset.h rule 5) */
    ga_dset_poll poll = {lim ? lim->stop : NULL, lim ? lim->stop_arg : NULL, 0},
                 *was = ga_dset_poll_swap(&poll);
    rc = ga_gs_add_sq(s, keys, xs, sets, sqs, piece, bytes); /* clears all */
    ga_dset_poll_swap(was);
    if (rc == GA_INTERRUPTED)
      return GA_QPART_STOP;
    if (rc != GA_OK) {
      *err = rc == GA_NOMEM ? "out of memory" : "counts past 2^63";
      return rc;
    }
    if (lim && *bytes > lim->cap) /* rule 5: before the next group */
      return GA_QPART_CAP;
  }
  if (r.at != r.n) {
    *err = "a damaged partial (bytes after its last group)";
    return GA_BADSTATE;
  }
  if (own != h->rows) {
    *err = "a damaged partial (its header's rows differ from its groups')";
    return GA_BADSTATE;
  }
  if (__builtin_add_overflow(*rows, own, rows)) {
    *err = "counts past 2^63";
    return GA_BADSTATE;
  }
  return GA_OK;
}
