/*
** cache_append.c — a host entry extended by appended rows (cache_append.h,
** whose header states the rules).
*/
#include "cache_append.h"

#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_gpu.h"
#include "value.h"

ga_cappend *ga_cappend_new(void) {
  ga_cappend *a = sqlite3_malloc64(sizeof(*a));
  if (a)
    memset(a, 0, sizeof(*a));
  return a;
}

void ga_cappend_free(ga_cappend *a) {
  if (!a)
    return;
  sqlite3_free(a->pages);
  sqlite3_free(a);
}

int ga_cappend_has(const ga_cappend *a, uint32_t pg) {
  return pg < a->nbits && (a->pages[pg >> 6] >> (pg & 63)) & 1;
}

int ga_cappend_add(ga_cappend *a, uint32_t pg) {
  if (pg >= a->nbits) {
    uint64_t nb = ((uint64_t)pg + 1) * 2;
    if (nb > 0xffffffffu)
      nb = 0xffffffffu;
    uint64_t *p =
        sqlite3_realloc64(a->pages, (size_t)GA_BW((int64_t)nb) * sizeof(*p));
    if (!p)
      return GA_NOMEM;
    memset(p + GA_BW((int64_t)a->nbits), 0,
           (size_t)(GA_BW((int64_t)nb) - GA_BW((int64_t)a->nbits)) *
               sizeof(*p));
    a->pages = p;
    a->nbits = (uint32_t)nb;
  }
  a->pages[pg >> 6] |= (uint64_t)1 << (pg & 63);
  return GA_OK;
}

int ga_cappend_in_tail(const ga_cappend *a, uint32_t pg) {
  for (int i = 0; i < a->ntail; i++)
    if (a->tail[i] == pg)
      return 1;
  return 0;
}

/* Row i of host entry e: its block and the row within it (segments in
** rowid order, seg_base ascending). */
static const ga_cblock *row_at(const ga_centry *e, int64_t i, int64_t *j) {
  int64_t lo = 0, hi = e->nsegs - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (e->seg_base[mid] <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  *j = i - e->seg_base[lo];
  return e->segs[lo];
}

static int is_text_col(const ga_ccol *c) { return c->ntext > 0; }

/* The rows of r against e's rows from base (e a host entry, or a host
** view of a GPU entry's rows fetched from the device: shown is the row
** number of e's row 0 in the entry, for why). */
static int same_rows(const ga_centry *e, int64_t base, int64_t shown,
                     const ga_centry *r, char *why, size_t nwhy) {
  for (int c = 0; c < e->ncols; c++) {
    const ga_ccol *ec = &e->cols[c], *rc = &r->cols[c];
    if (rc->mixed || ec->mixed) {
      snprintf(why, nwhy, "column %s holds TEXT and numbers", ec->name);
      return 0;
    }
    for (int64_t i = 0; i < r->rows; i++) {
      int64_t je = 0, jr = 0;
      const ga_cblock *be = row_at(e, base + i, &je);
      const ga_cblock *br = row_at(r, i, &jr);
      int ne = ga_bit(ga_cb_notnull(be, c), je);
      int nr = ga_bit(ga_cb_notnull(br, c), jr);
      int same = ne == nr;
      if (same && ne) {
        uint64_t we = ga_cb_vals(be, c)[je], wr = ga_cb_vals(br, c)[jr];
        if (is_text_col(rc) || is_text_col(ec)) {
          const void *pe = NULL, *pr = NULL;
          int le = 0, lr = 0;
          same = is_text_col(rc) && is_text_col(ec) && ec->dict && rc->dict &&
                 we < (uint64_t)ga_dict_count(ec->dict) &&
                 wr < (uint64_t)ga_dict_count(rc->dict);
          if (same) {
            ga_dict_value(ec->dict, (uint32_t)we, &pe, &le);
            ga_dict_value(rc->dict, (uint32_t)wr, &pr, &lr);
            same = le == lr && (le == 0 || !memcmp(pe, pr, (size_t)le));
          }
        } else {
          same = we == wr && ga_bit(ga_cb_isint(be, c), je) ==
                                 ga_bit(ga_cb_isint(br, c), jr);
        }
      }
      if (!same) {
        snprintf(why, nwhy,
                 "row %lld, in the b-tree's last leaves, changed (column %s): "
                 "not only appends",
                 (long long)(shown + base + i), ec->name);
        return 0;
      }
    }
  }
  return 1;
}

int ga_cappend_same_tail(const ga_centry *e, const ga_centry *r, char *why,
                         size_t nwhy) {
  if (r->rows > e->rows || r->ncols != e->ncols) {
    snprintf(why, nwhy, "the last leaves hold more rows than the entry");
    return 0;
  }
  if (e->where == GA_CACHE_HOST)
    return same_rows(e, e->rows - r->rows, 0, r, why, nwhy);
  if (r->rows == 0)
    return 1;
  /* rule 5: a GPU entry's last rows, read back (as many as r's, which
  ** the extension's read charged to the budget) into a host view */
  ga_cblock *b = ga_cb_new(e->ncols, r->rows, 0);
  if (!b) {
    snprintf(why, nwhy, "out of memory");
    return 0;
  }
  int ok =
      ga_cache_gpu_fetch(e, e->rows - r->rows, r->rows, b, why, nwhy) == GA_OK;
  if (ok) {
    int64_t zero = 0;
    ga_centry v = *e;
    v.where = GA_CACHE_HOST;
    v.rows = r->rows;
    v.segs = &b;
    v.seg_base = &zero;
    v.nsegs = 1;
    ok = same_rows(&v, 0, e->rows - r->rows, r, why, nwhy);
  }
  ga_cb_free(b);
  return ok;
}

/* A column's union dictionary (rule 4: built before anything changes). */
typedef struct newdict {
  ga_dict *d;      /* the union, sealed; NULL: the column keeps its own */
  uint32_t *code1; /* e's code -> union code; NULL: the same */
  uint32_t *code2; /* x's code -> union code */
} newdict;

static void newdict_free(newdict *n) {
  ga_dict_free(n->d);
  sqlite3_free(n->code1);
  sqlite3_free(n->code2);
  memset(n, 0, sizeof(*n));
}

static int build_union(const ga_dict *d1, const ga_dict *d2, newdict *n) {
  int64_t n1 = d1 ? ga_dict_count(d1) : 0, n2 = ga_dict_count(d2);
  if (n1 + n2 > GA_DICT_MAX)
    return GA_DICT_FULL;
  ga_dict_local *l = ga_dict_local_new();
  uint32_t *lid2 = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n2 ? n2 : 1));
  uint32_t *map =
      sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n1 + n2 ? n1 + n2 : 1));
  n->code1 = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n1 ? n1 : 1));
  n->code2 = sqlite3_malloc64(sizeof(uint32_t) * (size_t)(n2 ? n2 : 1));
  n->d = ga_dict_new();
  int rc = l && lid2 && map && n->code1 && n->code2 && n->d ? GA_OK : GA_NOMEM;
  for (int64_t i = 0; rc == GA_OK && i < n1; i++) {
    const void *p;
    int len;
    uint32_t id;
    ga_dict_value(d1, (uint32_t)i, &p, &len);
    rc = ga_dict_local_intern(l, p, len, &id); /* id == i: distinct */
  }
  for (int64_t j = 0; rc == GA_OK && j < n2; j++) {
    const void *p;
    int len;
    ga_dict_value(d2, (uint32_t)j, &p, &len);
    rc = ga_dict_local_intern(l, p, len, &lid2[j]);
  }
  if (rc == GA_OK)
    rc = ga_dict_merge(n->d, l, map);
  if (rc == GA_OK)
    rc = ga_dict_seal(n->d);
  if (rc == GA_OK) {
    int same = 1;
    for (int64_t i = 0; i < n1; i++) {
      n->code1[i] = ga_dict_code(n->d, map[i]);
      same &= n->code1[i] == (uint32_t)i;
    }
    for (int64_t j = 0; j < n2; j++)
      n->code2[j] = ga_dict_code(n->d, map[lid2[j]]);
    if (same) { /* every new value sorts after the old ones */
      sqlite3_free(n->code1);
      n->code1 = NULL;
    }
  }
  ga_dict_local_free(l);
  sqlite3_free(lid2);
  sqlite3_free(map);
  return rc;
}

static void remap_col(ga_cblock *b, int c, const uint32_t *code) {
  uint64_t *v = ga_cb_vals(b, c);
  const uint64_t *nn = ga_cb_notnull(b, c);
  for (int64_t i = 0; i < b->n; i++)
    if (ga_bit(nn, i))
      v[i] = code[v[i]];
}

/* Rule 4's refusals, each column's union dictionary into nd (e's codes
** read-only in a mapping refuse a remap: mapped), and the bytes the
** dictionaries grow by (*grow).  GA_OK, GA_NOMEM, GA_CACHE_DECLINED. */
static int prepare(const ga_centry *e, const ga_centry *x, int mapped,
                   newdict *nd, int64_t *grow, char *why, size_t nwhy) {
  int rc = GA_OK;
  *grow = 0;
  if (e->rows + x->rows > GA_CACHE_MAX_ROWS) {
    snprintf(why, nwhy, "more than %lld rows", (long long)GA_CACHE_MAX_ROWS);
    return GA_CACHE_DECLINED;
  }
  for (int c = 0; rc == GA_OK && c < e->ncols; c++) {
    const ga_ccol *ec = &e->cols[c], *xc = &x->cols[c];
    int etext = ec->ntext > 0 || ec->dict, enum_ = ec->nint + ec->nreal > 0;
    if (ec->mixed || xc->mixed || (etext && xc->nint + xc->nreal) ||
        (enum_ && xc->ntext)) {
      snprintf(why, nwhy,
               "column %s would hold TEXT and numbers (the entry is "
               "reloaded)",
               ec->name);
      rc = GA_CACHE_DECLINED;
      break;
    }
    if (!xc->ntext || !xc->dict)
      continue;
    rc = build_union(ec->dict, xc->dict, &nd[c]);
    if (rc == GA_DICT_FULL) {
      snprintf(why, nwhy,
               "column %s would have more than %lld distinct TEXT "
               "values",
               ec->name, (long long)GA_DICT_MAX);
      rc = GA_CACHE_DECLINED;
    } else if (rc == GA_OK && nd[c].code1 && mapped) {
      snprintf(why, nwhy,
               "a new value of column %s sorts before an old one, and the "
               "entry's codes are in a read-only cache file mapping",
               ec->name);
      rc = GA_CACHE_DECLINED;
    }
    if (rc == GA_OK)
      *grow +=
          ga_dict_bytes(nd[c].d) - (ec->dict ? ga_dict_bytes(ec->dict) : 0);
  }
  return rc;
}

/* After every refusal: each column takes its union dictionary (e's host
** blocks' codes rewritten where host; a GPU entry's were on the device)
** and x's counts (x's codes: remap_new, before).  nd is freed. */
static void apply_cols(ga_centry *e, ga_centry *x, newdict *nd, int host) {
  for (int c = 0; c < e->ncols; c++) {
    ga_ccol *ec = &e->cols[c];
    const ga_ccol *xc = &x->cols[c];
    if (nd[c].d) {
      if (nd[c].code1 && host)
        for (int64_t i = 0; i < e->nsegs; i++)
          remap_col(e->segs[i], c, nd[c].code1);
      ga_dict_free(ec->dict);
      ec->dict = nd[c].d;
      nd[c].d = NULL;
    }
    if (xc->nint) {
      if (!ec->nint || xc->imin < ec->imin)
        ec->imin = xc->imin;
      if (!ec->nint || xc->imax > ec->imax)
        ec->imax = xc->imax;
    }
    ec->nnull += xc->nnull;
    ec->nint += xc->nint;
    ec->nreal += xc->nreal;
    ec->ntext += xc->ntext;
    ec->nnow += xc->nnow;
    newdict_free(&nd[c]);
  }
  sqlite3_free(nd);
}

/* After every refusal: x's codes become the union's (a column whose
** dictionary grew). */
static void remap_new(ga_centry *x, const newdict *nd, int ncols) {
  for (int c = 0; c < ncols; c++)
    for (int64_t i = 0; nd[c].d && nd[c].code2 && i < x->nsegs; i++)
      remap_col(x->segs[i], c, nd[c].code2);
}

static void nd_free(newdict *nd, int ncols) {
  for (int c = 0; c < ncols; c++)
    newdict_free(&nd[c]);
  sqlite3_free(nd);
}

int ga_cappend_merge(ga_centry *e, ga_centry *x,
                     int (*reserve)(void *arg, int64_t n), void *arg,
                     int64_t *moved, int64_t *more, char *why, size_t nwhy) {
  *moved = *more = 0;
  if (e->where != GA_CACHE_HOST || x->where != GA_CACHE_HOST ||
      x->ncols != e->ncols || x->enc != e->enc) {
    snprintf(why, nwhy, "the entry is not in host memory");
    return GA_CACHE_DECLINED;
  }
  int mapped = 0;
  for (int64_t i = 0; i < e->nsegs; i++)
    mapped |= e->segs[i]->mapped;
  newdict *nd = sqlite3_malloc64(sizeof(*nd) * (size_t)e->ncols);
  if (!nd)
    return GA_NOMEM;
  memset(nd, 0, sizeof(*nd) * (size_t)e->ncols);
  int64_t grow = 0;
  /* rule 4: every refusal first */
  int rc = prepare(e, x, mapped, nd, &grow, why, nwhy);
  int64_t nseg = e->nsegs + x->nsegs;
  ga_cblock **segs = NULL;
  int64_t *base = NULL;
  if (rc == GA_OK) {
    segs = sqlite3_malloc64(sizeof(*segs) * (size_t)(nseg ? nseg : 1));
    base = sqlite3_malloc64(sizeof(*base) * (size_t)(nseg ? nseg : 1));
    if (!segs || !base)
      rc = GA_NOMEM;
  }
  if (rc == GA_OK && grow > 0 && reserve(arg, grow)) {
    snprintf(why, nwhy, "the grown dictionaries do not fit in cache_bytes");
    rc = GA_CACHE_DECLINED;
  }
  if (rc != GA_OK) {
    nd_free(nd, e->ncols);
    sqlite3_free(segs);
    sqlite3_free(base);
    return rc;
  }
  /* nothing refuses from here on */
  *more = grow;
  remap_new(x, nd, e->ncols);
  apply_cols(e, x, nd, 1);
  memcpy(segs, e->segs, sizeof(*segs) * (size_t)e->nsegs);
  memcpy(base, e->seg_base, sizeof(*base) * (size_t)e->nsegs);
  for (int64_t i = 0; i < x->nsegs; i++) {
    segs[e->nsegs + i] = x->segs[i];
    base[e->nsegs + i] = e->rows + x->seg_base[i];
    *moved += x->segs[i]->bytes;
    x->segs[i] = NULL; /* e's now (ga_cb_free(NULL) does nothing) */
  }
  sqlite3_free(e->segs);
  sqlite3_free(e->seg_base);
  e->segs = segs;
  e->seg_base = base;
  e->nsegs = nseg;
  e->rows += x->rows;
  e->bytes += *moved + grow;
  return GA_OK;
}

int64_t ga_cappend_gpu_cap(int64_t need) {
  int64_t cap = need + need / GA_CAPPEND_GPU_GROW;
  cap = (cap + 63) / 64 * 64;
  if (cap > GA_CACHE_MAX_ROWS)
    cap = GA_CACHE_MAX_ROWS;
  return cap < need ? need : cap;
}

static void give_back(ga_cache *c, int64_t n) {
  pthread_mutex_lock(&c->mu);
  c->used -= n;
  pthread_mutex_unlock(&c->mu);
}

int ga_cappend_merge_gpu(ga_cache *c, int64_t budget, ga_centry *e,
                         ga_centry *x, int64_t *more, int *copied,
                         int (*stop)(void *), void *stop_arg, char *why,
                         size_t nwhy) {
  *more = 0;
  *copied = 0;
  if (e->where != GA_CACHE_GPU || x->where != GA_CACHE_HOST ||
      x->ncols != e->ncols || x->enc != e->enc || e->d_cap < e->rows) {
    snprintf(why, nwhy, "the entry is not on the GPU");
    return GA_CACHE_DECLINED;
  }
  newdict *nd = sqlite3_malloc64(sizeof(*nd) * (size_t)e->ncols);
  if (!nd)
    return GA_NOMEM;
  memset(nd, 0, sizeof(*nd) * (size_t)e->ncols);
  int64_t grow = 0, need = e->rows + x->rows;
  /* rule 4: every refusal first (the codes live on the device: none is
  ** read-only) */
  int rc = prepare(e, x, 0, nd, &grow, why, nwhy);
  if (rc == GA_OK && grow > 0 && !ga_cache_reserve(c, budget, grow, NULL)) {
    snprintf(why, nwhy, "the grown dictionaries do not fit in cache_bytes");
    rc = GA_CACHE_DECLINED;
  }
  if (rc != GA_OK) {
    nd_free(nd, e->ncols);
    return rc;
  }
  int64_t reserved = grow > 0 ? grow : 0;
  /* rule 5: the room, or a larger allocation; while the old rows are
  ** copied into it both exist, and both are reserved */
  int64_t cap = e->d_cap, ncap = cap;
  int64_t oldb = ga_cache_gpu_bytes(e->ncols, cap);
  if (need > cap) {
    ncap = ga_cappend_gpu_cap(need);
    int64_t copy = ga_cache_gpu_bytes(e->ncols, ncap) + oldb;
    if (!ga_cache_reserve(c, budget, copy, NULL)) {
      give_back(c, reserved);
      nd_free(nd, e->ncols);
      snprintf(why, nwhy,
               "the device columns' new room (%lld rows, the old ones copied "
               "into it) does not fit in the GPU memory budget",
               (long long)ncap);
      return GA_CACHE_DECLINED;
    }
    reserved += copy;
  }
  /* the caller's interrupt, last while the entry is whole (the rows are
  ** read: placing them is bounded, and not polled, so an interrupt never
  ** costs the entry its columns) */
  ga_cgpu *g = NULL;
  if (stop && stop(stop_arg)) {
    snprintf(why, nwhy, "interrupted");
    rc = GA_INTERRUPTED;
  } else
    rc = ga_cgpu_adopt(&g, e, why, nwhy);
  if (rc != GA_OK) { /* adopt leaves e's arrays as they were: e is whole */
    ga_cgpu_abort(g);
    give_back(c, reserved);
    nd_free(nd, e->ncols);
    return rc == GA_CLOAD_EFAIL ? GA_CACHE_DECLINED : rc;
  }
  /* nothing refuses from here on: a failed device step drops the entry */
  *more = reserved; /* in used: the caller takes it out as e relinks */
  if (ncap > cap) {
    rc = ga_cgpu_grow(g, ncap);
    if (rc != GA_OK)
      snprintf(why, nwhy, "%s", ga_cgpu_why(g));
  }
  for (int k = 0; rc == GA_OK && k < e->ncols; k++)
    if (nd[k].d && nd[k].code1) { /* a new value sorts before an old one */
      rc = ga_cgpu_remap(g, k, nd[k].code1, ga_dict_count(e->cols[k].dict));
      if (rc != GA_OK)
        snprintf(why, nwhy, "%s", ga_cgpu_why(g));
    }
  if (rc == GA_OK) {
    remap_new(x, nd, e->ncols); /* before they are copied */
    rc = ga_cgpu_place_entry(g, x, NULL, NULL, why, nwhy);
  }
  int64_t freed = 0;
  if (rc == GA_OK && ga_cgpu_finish(g, e, need, &freed) != GA_OK) {
    snprintf(why, nwhy, "%s", ga_cgpu_why(g));
    rc = GA_CLOAD_EFAIL;
  }
  ga_cgpu_abort(g); /* on success its arrays are e's */
  if (rc != GA_OK) {
    nd_free(nd, e->ncols);
    return GA_CLOAD_EFAIL; /* e's columns may be gone: dropped */
  }
  apply_cols(e, x, nd, 0);
  int64_t dicts = ga_cache_gpu_forget_dicts(e); /* cache_gpu.c rule 7 */
  e->rows = need;
  e->bytes += grow + ga_cache_gpu_bytes(e->ncols, e->d_cap) - oldb - dicts;
  *copied = ncap > cap;
  return GA_OK;
}
