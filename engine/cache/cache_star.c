/*
** cache_star.c — a star or snowflake join from host entries (cache_star.h;
** issue 38 §3.2).  planner/cache_join.c reads the join and hands over the
** entries, each dimension's own conditions and the fact's as compiled
** queries (cache_shape.c), and the columns the query reads; this file
** builds the lookups, probes the fact's rows and writes the join entry,
** which cache_host.c answers as it answers one table.
**
** Rules:
**   1. Keys are numbers, or ids (planner/cache_join.c maps a TEXT key's
**      codes to ids by the comparison's collation: pmap, kmap).  SQLite
**      compares INTEGER and REAL exactly, whatever the columns'
**      affinities (an affinity changes only TEXT), so a number's key is
**      its integer: an INTEGER itself, a REAL with an integral value in
**      int64 range that integer (1.0 = 1, -0.0 = 0); a REAL that is no
**      integer in a dimension's row that passes declines the join, and in
**      a fact row (or a parent dimension's) matches nothing, as no
**      dimension key is one.  NULL never matches.
**   2. A dimension's rows pass its own conditions (its compiled filter,
**      evaluated a word at a time by cache_host.c's ga_cache_pass_word,
**      which declines on a row whose program raises an error) and find a
**      row in each dimension inner-joined to it (a snowflake: built
**      first, leaves first; `via` keeps that row, -1 for a LEFT JOIN's
**      miss).  A key of several columns (composite) is their tuple, every
**      part a number (rule 1), and always hashes.  The keys of the passing
**      rows
**      go into a dense array over [least, greatest] when that span is at
**      most 32 times the keys, or twice the dimension's rows, plus 65,536
**      (4 bytes a slot: SSB's yyyymmdd dates take 280 KB, a part key of
**      SF 1 800 KB however few parts pass: the array's probe is one load,
**      a hash's a chain of them), else an open-addressing hash; a key
**      met twice marks the dimension multi-match: its lookup then
**      gives a slot whose rows (`start`, `list`) are in rowid order, and a
**      fact row joins each of them, one joined row each, so the joined
**      rows run in the fact's rowid order and then that dimension's (the
**      contract's order for a group's first row).  One dimension at most,
**      joined to the fact and with none joined to it (another order of
**      loops could not be told): else the join declines, naming the key.
**   3. The fact's rows are cut into `threads` runs of words, in row order;
**      each word's rows pass the fact's own conditions, then probe the
**      dimensions joined to the fact, the one that keeps the fewest of its
**      rows first; a row that misses an inner join is dropped, a LEFT
**      JOIN's miss is row -1 (its columns NULL, and so a snowflake's
**      beyond it: an inner join there then drops the row, as SQL's inner
**      join after a LEFT JOIN does).  A dense lookup whose lanes are all
**      INTEGER probes every lane of the word without a branch.  The rows
**      left
**      are written, in row order, with the columns the query reads (a
**      dimension's column read through its row, and a snowflake's through
**      its parent's `via`), into blocks of the join entry; the runs'
**      blocks in run order keep the fact's rowid order (cache.h rule 3:
**      the first row of a group is the fact's first).
**   4. Memory: the lookups, the dimensions' columns laid out by row and
**      the join entry's blocks are charged to cap (group_bytes, gpu_query's
**      cap on what a query holds); past it the join declines with why.
**      The caller's interrupt is polled by the caller's thread every 256
**      words of the probe (the other runs stop with it), and every
**      CS_POLL rows of each loop of the build (a dimension's rows, its
**      lookup, its children's rows, its columns laid out by row), which
**      runs on the caller's thread.
**   5. The join entry's columns carry their counts (NULL, INTEGER, REAL,
**      TEXT codes, the least and greatest INTEGER) as a load's would be
**      for those rows, a TEXT column its dimension's dictionary (codes in
**      BINARY order, cache.h rule 1), and the table column they copy
**      (ga_ccol.src_*), whose declaration and collation the planner reads.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache_star.h"
#include "scan.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define CS_BLOCK 16384 /* rows of a join entry's block */

static double ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Rule 4: the caller's interrupt, polled once every CS_POLL rows that a
** loop on the caller's thread walks (*walked counts them): 1 when it came. */
#define CS_POLL 16384
static int cs_polled(const ga_cstar *s, int64_t *walked, int64_t n) {
  if ((*walked += n) < CS_POLL)
    return 0;
  *walked = 0;
  return s->interrupted && s->interrupted(s->interrupted_arg);
}

static int charge(ga_cstar *s, int64_t n) {
  int64_t now = __atomic_add_fetch(&s->used, n, __ATOMIC_RELAXED);
  return now > s->cap;
}

/* Rule 1: the key of a value (v, isint, notnull): 1 with *k, else 0. */
static inline int key_of(uint64_t v, int isint, int notnull, int64_t *k) {
  if (!notnull)
    return 0;
  if (isint) {
    *k = (int64_t)v;
    return 1;
  }
  double d;
  memcpy(&d, &v, 8);
  if (!(d >= -0x1p63 && d < 0x1p63) || (double)(int64_t)d != d)
    return 0;
  *k = (int64_t)d;
  return 1;
}

static inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static inline uint64_t hash_of(const int64_t *k, int n) {
  uint64_t h = 0;
  for (int i = 0; i < n; i++)
    h = mix(h ^ (uint64_t)k[i]) + (uint64_t)i;
  return h;
}

/* The slot of key k in d's lookup (dense: its offset; hash: its index),
** or -1. */
static inline int64_t lookup_slot(const ga_cstar_dim *d, const int64_t *k) {
  if (d->dense) {
    uint64_t o = (uint64_t)k[0] - (uint64_t)d->base;
    return o < (uint64_t)d->span && d->slot[o] >= 0 ? (int64_t)o : -1;
  }
  int n = d->nkeys;
  for (uint64_t h = hash_of(k, n) & d->hmask;; h = (h + 1) & d->hmask) {
    if (d->slot[h] < 0)
      return -1;
    const int64_t *at = d->hkey + h * (uint64_t)n;
    int eq = 1;
    for (int i = 0; i < n; i++)
      eq &= at[i] == k[i];
    if (eq)
      return (int64_t)h;
  }
}

/* The row of key k (d->nkeys values) in dimension d's lookup, or -1 (a
** dense one read directly: the probe's hot path). */
static inline int32_t lookup(const ga_cstar_dim *d, const int64_t *k) {
  if (d->dense) {
    uint64_t o = (uint64_t)k[0] - (uint64_t)d->base;
    return o < (uint64_t)d->span ? d->slot[o] : -1;
  }
  int64_t h = lookup_slot(d, k);
  return h < 0 ? -1 : d->slot[h];
}

/* Row r's key of entry e through columns cols (n of them): 1 with k, 0
** when a part is NULL or a REAL that is no integer (*real set then). */
static int row_key(const ga_centry *e, const int *cols,
                   const int64_t *const *map, const int64_t *nmap, int n,
                   int64_t r, int64_t *seg, int64_t *k, int *real);

/* A TEXT key's code v through map (n codes): 1 with its id, else 0. */
static inline int key_mapped(uint64_t v, const int64_t *map, int64_t n,
                             int64_t *k) {
  if (v >= (uint64_t)n || map[v] < 0)
    return 0;
  *k = map[v];
  return 1;
}

/* Row r's value of column c of entry e, through its segment (rows are
** walked in order by the callers: *seg is the hint). */
void ga_cstar_value_at(const ga_centry *e, int c, int64_t r, int64_t *seg,
                       uint64_t *v, int *isint, int *notnull) {
  int64_t s = *seg;
  if (s >= e->nsegs || r < e->seg_base[s] ||
      r >= e->seg_base[s] + e->segs[s]->n) {
    int64_t lo = 0, hi = e->nsegs - 1;
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      if (e->seg_base[mid] <= r)
        lo = mid;
      else
        hi = mid - 1;
    }
    s = *seg = lo;
  }
  const ga_cblock *b = e->segs[s];
  int64_t i = r - e->seg_base[s];
  *v = ga_cb_vals(b, c)[i];
  *isint = ga_bit(ga_cb_isint(b, c), i);
  *notnull = ga_bit(ga_cb_notnull(b, c), i);
}

static int row_key(const ga_centry *e, const int *cols,
                   const int64_t *const *map, const int64_t *nmap, int n,
                   int64_t r, int64_t *seg, int64_t *k, int *real) {
  *real = 0;
  for (int i = 0; i < n; i++) {
    uint64_t v;
    int ii, nn;
    ga_cstar_value_at(e, cols[i], r, seg, &v, &ii, &nn);
    if (!nn)
      return 0;
    if (map[i]) {
      if (!key_mapped(v, map[i], nmap[i], &k[i]))
        return 0;
      continue;
    }
    if (!key_of(v, ii, nn, &k[i])) {
      *real = 1;
      return 0;
    }
  }
  return 1;
}

/* Rule 2: dimension d's passing rows into pass (one byte a row). */
static int dim_pass(ga_cstar *s, ga_cstar_dim *d, uint8_t *pass, char *why,
                    size_t nwhy) {
  const ga_centry *e = d->e;
  int depth = d->filter && d->filter->has_fprog ? d->filter->fprog.depth : 1;
  ga_cx_word *wd = sqlite3_malloc64(sizeof(ga_cx_word) * (size_t)(1 + depth));
  if (!wd)
    return GA_NOMEM;
  int rc = 0, intr = 0;
  int64_t walked = 0;
  for (int64_t sg = 0; sg < e->nsegs && !rc && !intr; sg++) {
    const ga_cblock *b = e->segs[sg];
    for (int64_t w = 0; w < GA_BW(b->n) && !rc; w++) {
      int64_t cnt = b->n - w * 64 < 64 ? b->n - w * 64 : 64;
      if ((intr = cs_polled(s, &walked, cnt)) != 0)
        break;
      uint64_t m = cnt == 64 ? ~0ull : (1ull << cnt) - 1;
      if (d->filter)
        m = ga_cache_pass_word(d->filter, b, w, wd + 1, wd, &rc);
      for (int64_t j = 0; j < cnt; j++)
        pass[e->seg_base[sg] + w * 64 + j] = (uint8_t)((m >> j) & 1);
    }
  }
  sqlite3_free(wd);
  if (intr)
    return GA_SCAN_INTERRUPT;
  if (rc) {
    snprintf(why, nwhy,
             "a row of %s raises an error in its conditions (SQLite "
             "reports it)",
             e->table);
    return GA_CACHE_DECLINED;
  }
  return GA_OK;
}

/* Rule 2: d's lookup from its passing rows' keys. */
static int dim_lookup(ga_cstar *s, ga_cstar_dim *d, const uint8_t *pass,
                      char *why, size_t nwhy) {
  const ga_centry *e = d->e;
  int64_t n = 0, lo = INT64_MAX, hi = INT64_MIN, seg = 0, k[GA_CSTAR_KEYS];
  int64_t walked = 0;
  int nk = d->nkeys, real = 0;
  for (int64_t r = 0; r < e->rows; r++) {
    if (cs_polled(s, &walked, 1))
      return GA_SCAN_INTERRUPT;
    if (!pass[r])
      continue;
    if (!row_key(e, d->kcol, d->kmap, d->nkmap, nk, r, &seg, k, &real)) {
      if (!real)
        continue;
      snprintf(why, nwhy,
               "a key of %s is a REAL that is no integer (the cache's "
               "lookups take integers)",
               e->table);
      return GA_CACHE_DECLINED;
    }
    n++;
    lo = k[0] < lo ? k[0] : lo;
    hi = k[0] > hi ? k[0] : hi;
  }
  d->keys = n;
  /* hi - lo as unsigned: below 2^64 always; + 1 wraps to 0 for keys
  ** INT64_MIN and INT64_MAX, which then take the hash */
  uint64_t gap = n ? (uint64_t)hi - (uint64_t)lo : 0;
  uint64_t span = gap + 1;
  uint64_t most = (uint64_t)(32 * n > 2 * e->rows ? 32 * n : 2 * e->rows);
  d->dense = nk == 1 && gap < ((uint64_t)1 << 31) - 1 && span <= most + 65536;
  if (d->dense) {
    d->base = n ? lo : 0;
    d->span = (int64_t)span;
    d->bytes = d->span * 4;
  } else {
    uint64_t cap = 1024;
    while (cap < (uint64_t)n * 2)
      cap *= 2;
    d->hmask = cap - 1;
    d->bytes = (int64_t)cap * (4 + 8 * nk);
  }
  if (charge(s, d->bytes)) {
    snprintf(why, nwhy,
             "the lookup of %s needs more than group_bytes (%lld bytes "
             "in all; raise it with gpuagg_config)",
             e->table, (long long)s->used);
    return GA_CACHE_DECLINED;
  }
  if (d->dense) {
    d->slot = sqlite3_malloc64(sizeof(int32_t) * (size_t)d->span);
    if (!d->slot)
      return GA_NOMEM;
    memset(d->slot, 0xff, sizeof(int32_t) * (size_t)d->span);
  } else {
    d->slot = sqlite3_malloc64(sizeof(int32_t) * (size_t)(d->hmask + 1));
    d->hkey =
        sqlite3_malloc64(sizeof(int64_t) * (size_t)nk * (size_t)(d->hmask + 1));
    if (!d->slot || !d->hkey)
      return GA_NOMEM;
    memset(d->slot, 0xff, sizeof(int32_t) * (size_t)(d->hmask + 1));
  }
  seg = 0;
  for (int64_t r = 0; r < e->rows; r++) {
    if (cs_polled(s, &walked, 1))
      return GA_SCAN_INTERRUPT;
    if (!pass[r] ||
        !row_key(e, d->kcol, d->kmap, d->nkmap, nk, r, &seg, k, &real))
      continue;
    int32_t *at;
    if (d->dense) {
      at = &d->slot[k[0] - d->base];
    } else {
      uint64_t h = hash_of(k, nk) & d->hmask;
      for (;; h = (h + 1) & d->hmask) {
        if (d->slot[h] < 0)
          break;
        int eq = 1;
        for (int i = 0; i < nk; i++)
          eq &= d->hkey[h * (uint64_t)nk + i] == k[i];
        if (eq)
          break;
      }
      memcpy(d->hkey + h * (uint64_t)nk, k, sizeof(int64_t) * (size_t)nk);
      at = &d->slot[h];
    }
    if (*at >= 0) {
      if (!d->multi) /* rule 2: kept for the one multi-match dimension */
        snprintf(d->dup, sizeof d->dup,
                 "%s has two rows of key %lld%s (a fact row would join "
                 "both: the cache's lookups take several rows a key in one "
                 "dimension, joined to the fact, with none joined to it)",
                 e->table, (long long)k[0], nk > 1 ? ", ..." : "");
      d->multi = 1;
      continue;
    }
    *at = (int32_t)r;
  }
  if (!d->multi)
    return GA_OK;
  /* the slots' rows in rowid order: counted, then placed */
  int64_t nslots = d->dense ? d->span : (int64_t)d->hmask + 1;
  if (charge(s, 4 * (nslots + 1) + 4 * n)) {
    snprintf(why, nwhy,
             "the lookup of %s needs more than group_bytes (raise it with "
             "gpuagg_config)",
             e->table);
    return GA_CACHE_DECLINED;
  }
  d->start = sqlite3_malloc64(sizeof(int32_t) * (size_t)(nslots + 1));
  d->list = sqlite3_malloc64(sizeof(int32_t) * (size_t)(n ? n : 1));
  if (!d->start || !d->list)
    return GA_NOMEM;
  memset(d->start, 0, sizeof(int32_t) * (size_t)(nslots + 1));
  seg = 0;
  for (int64_t r = 0; r < e->rows; r++) {
    if (cs_polled(s, &walked, 1))
      return GA_SCAN_INTERRUPT;
    if (pass[r] &&
        row_key(e, d->kcol, d->kmap, d->nkmap, nk, r, &seg, k, &real))
      d->start[lookup_slot(d, k) + 1]++;
  }
  for (int64_t i = 0; i < nslots; i++)
    d->start[i + 1] += d->start[i];
  int32_t *fill = sqlite3_malloc64(sizeof(int32_t) * (size_t)(nslots + 1));
  if (!fill)
    return GA_NOMEM;
  memcpy(fill, d->start, sizeof(int32_t) * (size_t)(nslots + 1));
  seg = 0;
  int rc = GA_OK;
  for (int64_t r = 0; r < e->rows && rc == GA_OK; r++) {
    if (cs_polled(s, &walked, 1))
      rc = GA_SCAN_INTERRUPT;
    else if (pass[r] &&
             row_key(e, d->kcol, d->kmap, d->nkmap, nk, r, &seg, k, &real))
      d->list[fill[lookup_slot(d, k)]++] = (int32_t)r;
  }
  sqlite3_free(fill);
  return rc;
}

/* The dimension's depth from the fact. */
static int depth_of(const ga_cstar *s, int d) {
  int n = 0;
  for (; d >= 0; d = s->dims[d].parent)
    n++;
  return n;
}

int ga_cstar_build(ga_cstar *s, char *why, size_t nwhy) {
  double t0 = ms_now();
  s->multi = -1;
  int order[GA_CSTAR_MAX], n = 0;
  /* leaves first: the deepest dimensions, then their parents */
  for (int dep = GA_CSTAR_MAX + 1; dep > 0; dep--)
    for (int d = 0; d < s->ndims; d++)
      if (depth_of(s, d) == dep)
        order[n++] = d;
  for (int i = 0; i < n; i++) {
    ga_cstar_dim *d = &s->dims[order[i]];
    double d0 = ms_now();
    if (d->e->rows >= INT32_MAX) {
      snprintf(why, nwhy, "%s has 2^31 rows or more", d->e->table);
      return GA_CACHE_DECLINED;
    }
    if (s->interrupted && s->interrupted(s->interrupted_arg))
      return GA_SCAN_INTERRUPT;
    int64_t rows = d->e->rows;
    if (charge(s, rows)) {
      snprintf(why, nwhy,
               "the lookups need more than group_bytes (raise it with "
               "gpuagg_config)");
      return GA_CACHE_DECLINED;
    }
    uint8_t *pass = sqlite3_malloc64((size_t)(rows ? rows : 1));
    if (!pass)
      return GA_NOMEM;
    int rc = dim_pass(s, d, pass, why, nwhy);
    /* its children (built already): each passing row finds its row there */
    for (int c = 0; c < s->ndims && rc == GA_OK; c++) {
      ga_cstar_dim *x = &s->dims[c];
      if (x->parent != order[i])
        continue;
      if (charge(s, rows * 4)) {
        snprintf(why, nwhy,
                 "the lookups need more than group_bytes (raise it with "
                 "gpuagg_config)");
        rc = GA_CACHE_DECLINED;
        break;
      }
      x->via = sqlite3_malloc64(sizeof(int32_t) * (size_t)(rows ? rows : 1));
      if (!x->via) {
        rc = GA_NOMEM;
        break;
      }
      int64_t seg = 0, k[GA_CSTAR_KEYS], walked = 0;
      int real;
      for (int64_t r = 0; r < rows; r++) {
        if (cs_polled(s, &walked, 1)) {
          rc = GA_SCAN_INTERRUPT;
          break;
        }
        x->via[r] = -1;
        if (!pass[r])
          continue;
        if (row_key(d->e, x->pcol, x->pmap, x->npmap, x->nkeys, r, &seg, k,
                    &real))
          x->via[r] = lookup(x, k);
        if (x->via[r] < 0 && !x->left) /* an inner join's miss */
          pass[r] = 0;
      }
    }
    if (rc == GA_OK)
      rc = dim_lookup(s, d, pass, why, nwhy);
    if (rc == GA_OK && d->multi) {
      /* rule 2: one multi-match dimension, joined to the fact, none to it */
      int kids = 0;
      for (int c = 0; c < s->ndims; c++)
        kids |= s->dims[c].parent == order[i];
      if (d->parent >= 0 || kids || s->multi >= 0) {
        snprintf(why, nwhy, "%s", d->dup);
        rc = GA_CACHE_DECLINED;
      } else {
        s->multi = order[i];
      }
    }
    sqlite3_free(pass);
    __atomic_sub_fetch(&s->used, rows, __ATOMIC_RELAXED);
    d->ms = ms_now() - d0;
    if (rc != GA_OK)
      return rc;
  }
  s->build_ms = ms_now() - t0;
  return GA_OK;
}

/* ---- the probe (rule 3) ---- */

/* A dimension's column laid out by row: values and flags (1 isint, 2
** notnull). */
typedef struct flat {
  uint64_t *v;
  uint8_t *f;
} flat;

typedef struct cstats {
  int64_t nnull, nint, nreal, ntext, imin, imax;
} cstats;

typedef struct prun {
  ga_cstar *s;
  const flat *flats;
  const int *top; /* dimensions joined to the fact, probe order */
  int ntop;
  int64_t u0, u1; /* its units: (segment, word) in row order */
  const int64_t *useg, *uword;
  ga_cblock *head, *tail;
  cstats st[GA_CACHE_MAX_COLS];
  const int *deep; /* the snowflake's dimensions, parents first */
  int ndeep;
  int64_t probed, matched;
  int rc, err_row;
  int caller; /* polls the interrupt */
  int *stop;
  pthread_t th;
} prun;

static int new_block(prun *r) {
  ga_cstar *s = r->s;
  ga_cblock *b = ga_cb_new(s->ncols, CS_BLOCK, 0);
  if (!b)
    return GA_NOMEM;
  if (charge(s, b->bytes)) {
    ga_cb_free(b);
    return GA_CACHE_DECLINED;
  }
  if (r->tail)
    r->tail->next = b;
  else
    r->head = b;
  r->tail = b;
  return GA_OK;
}

static void *probe_run(void *arg) {
  prun *r = arg;
  ga_cstar *s = r->s;
  const ga_centry *f = s->fact;
  int depth = s->ffilter && s->ffilter->has_fprog ? s->ffilter->fprog.depth : 1;
  ga_cx_word *wd = sqlite3_malloc64(sizeof(ga_cx_word) * (size_t)(1 + depth));
  int32_t rows[GA_CSTAR_MAX][64];
  if (!wd) {
    r->rc = GA_NOMEM;
    return NULL;
  }
  for (int c = 0; c < s->ncols; c++) {
    r->st[c].imin = INT64_MAX;
    r->st[c].imax = INT64_MIN;
  }
  for (int64_t u = r->u0; u < r->u1 && !r->rc; u++) {
    if (((u - r->u0) & 255) == 255) {
      if (r->caller && s->interrupted && s->interrupted(s->interrupted_arg)) {
        r->rc = GA_SCAN_INTERRUPT;
        __atomic_store_n(r->stop, 1, __ATOMIC_RELAXED);
      }
      if (__atomic_load_n(r->stop, __ATOMIC_RELAXED))
        break;
    }
    const ga_cblock *b = f->segs[r->useg[u]];
    int64_t w = r->uword[u], i0 = w * 64;
    int64_t cnt = b->n - i0 < 64 ? b->n - i0 : 64;
    uint64_t m = cnt == 64 ? ~0ull : (1ull << cnt) - 1;
    if (s->ffilter) {
      int frc = 0;
      m = ga_cache_pass_word(s->ffilter, b, w, wd + 1, wd, &frc);
      if (frc) {
        r->rc = GA_CACHE_DECLINED;
        r->err_row = 1;
        break;
      }
    }
    r->probed += cnt;
    for (int t = 0; t < r->ntop && m; t++) {
      const ga_cstar_dim *d = &s->dims[r->top[t]];
      int nk = d->nkeys;
      if (d->dense && !d->pmap[0] && !d->multi &&
          __builtin_popcountll(m) >= 16 &&
          (ga_cb_isint(b, d->pcol[0])[w] & m) == m) {
        /* rule 3's fast case: a dense array and INTEGER keys in every
        ** lane still in: every lane probed, no branch a lane (a lane out
        ** of the word, or NULL, finds nothing or is masked off) */
        const uint64_t *v = ga_cb_vals(b, d->pcol[0]) + i0;
        const int32_t *slot = d->slot;
        uint64_t base = (uint64_t)d->base, span = (uint64_t)d->span, hit = 0;
        int32_t *out = rows[r->top[t]];
        for (int j = 0; j < (int)cnt; j++) {
          uint64_t o = v[j] - base;
          int32_t row = o < span ? slot[o] : -1;
          out[j] = row;
          hit |= (uint64_t)(row >= 0) << j;
        }
        if (!d->left)
          m &= hit;
        continue;
      }
      uint64_t in = m;
      for (int i = 0; i < nk; i++)
        in &= ga_cb_notnull(b, d->pcol[i])[w];
      for (uint64_t k = m; k; k &= k - 1) {
        int j = __builtin_ctzll(k);
        int64_t key[GA_CSTAR_KEYS];
        int32_t row = -1;
        if ((in >> j) & 1) {
          int okk = 1;
          for (int i = 0; i < nk && okk; i++)
            okk = d->pmap[i]
                      ? key_mapped(ga_cb_vals(b, d->pcol[i])[i0 + j],
                                   d->pmap[i], d->npmap[i], &key[i])
                      : key_of(ga_cb_vals(b, d->pcol[i])[i0 + j],
                               (int)((ga_cb_isint(b, d->pcol[i])[w] >> j) & 1),
                               1, &key[i]);
          /* the multi-match dimension's: its slot (rule 2) */
          row = !okk       ? -1
                : d->multi ? (int32_t)lookup_slot(d, key)
                           : lookup(d, key);
        }
        rows[r->top[t]][j] = row;
        if (row < 0 && !d->left)
          m &= ~(1ull << j);
      }
    }
    if (!m)
      continue;
    /* a snowflake's rows, through their parents' (parents first) */
    for (int t = 0; t < r->ndeep; t++) {
      const ga_cstar_dim *x = &s->dims[r->deep[t]];
      for (uint64_t k = m; k; k &= k - 1) {
        int j = __builtin_ctzll(k);
        int32_t pr = rows[x->parent][j];
        rows[r->deep[t]][j] = pr < 0 ? -1 : x->via[pr];
        /* an inner join under a LEFT JOIN's NULL row drops the row */
        if (rows[r->deep[t]][j] < 0 && !x->left)
          m &= ~(1ull << j);
      }
    }
    if (!m)
      continue;
    int md = s->multi;
    for (uint64_t k = m; k; k &= k - 1) {
      int j = __builtin_ctzll(k);
      /* the multi-match dimension's rows for this fact row, in rowid
      ** order (a LEFT JOIN's miss: one row of NULLs) */
      int32_t sl = md >= 0 ? rows[md][j] : -1;
      int32_t x0 = sl >= 0 ? s->dims[md].start[sl] : 0;
      int32_t x1 = sl >= 0 ? s->dims[md].start[sl + 1] : 1;
      for (int32_t x = x0; x < x1 && !r->rc; x++) {
        if (sl >= 0)
          rows[md][j] = s->dims[md].list[x];
        if (!r->tail || r->tail->n == r->tail->cap) {
          int brc = new_block(r);
          if (brc) {
            r->rc = brc;
            break;
          }
        }
        ga_cblock *o = r->tail;
        int64_t i = o->n++;
        uint64_t bit = 1ull << (i & 63);
        for (int c = 0; c < s->ncols; c++) {
          const ga_cstar_col *sc = &s->cols[c];
          uint64_t val;
          int isint, notnull;
          const ga_ccol *src;
          if (sc->tab < 0) {
            val = ga_cb_vals(b, sc->col)[i0 + j];
            isint = (int)((ga_cb_isint(b, sc->col)[w] >> j) & 1);
            notnull = (int)((ga_cb_notnull(b, sc->col)[w] >> j) & 1);
            src = &f->cols[sc->col];
          } else {
            int32_t row = rows[sc->tab][j]; /* -1: a LEFT JOIN's NULLs */
            val = row < 0 ? 0 : r->flats[c].v[row];
            isint = row < 0 ? 0 : r->flats[c].f[row] & 1;
            notnull = row < 0 ? 0 : (r->flats[c].f[row] >> 1) & 1;
            src = &s->dims[sc->tab].e->cols[sc->col];
          }
          ga_cb_vals(o, c)[i] = val;
          cstats *st = &r->st[c];
          if (!notnull) {
            ga_cb_vals(o, c)[i] = 0;
            st->nnull++;
            continue;
          }
          ga_cb_notnull(o, c)[i >> 6] |= bit;
          if (isint)
            ga_cb_isint(o, c)[i >> 6] |= bit;
          if (src->dict) {
            st->ntext++;
          } else if (isint) {
            st->nint++;
            int64_t x = (int64_t)val;
            st->imin = x < st->imin ? x : st->imin;
            st->imax = x > st->imax ? x : st->imax;
          } else {
            st->nreal++;
          }
        }
        r->matched++;
      }
      if (r->rc)
        break;
    }
  }
  sqlite3_free(wd);
  if (r->rc && r->rc != GA_SCAN_INTERRUPT)
    __atomic_store_n(r->stop, 1, __ATOMIC_RELAXED);
  return NULL;
}

void ga_cstar_entry_free(ga_centry *out) {
  for (int64_t i = 0; i < out->nsegs; i++)
    ga_cb_free(out->segs[i]);
  sqlite3_free(out->segs);
  sqlite3_free(out->seg_base);
  sqlite3_free(out->cols);
  memset(out, 0, sizeof(*out));
}

int ga_cstar_probe(ga_cstar *s, const char *const *names, ga_centry *out,
                   char *why, size_t nwhy) {
  double t0 = ms_now();
  const ga_centry *f = s->fact;
  int rc = GA_OK, stop = 0;
  memset(out, 0, sizeof(*out));
  flat flats[GA_CACHE_MAX_COLS];
  memset(flats, 0, sizeof(flats));
  int top[GA_CSTAR_MAX], ntop = 0, deep[GA_CSTAR_MAX], ndeep = 0, err_row = 0;
  int64_t *useg = NULL, *uword = NULL, nunits = 0;
  prun *runs = NULL;
  int nthreads = s->threads < 1 ? 1 : s->threads;
  /* the dimensions' columns by row (rule 3) */
  for (int c = 0; c < s->ncols && rc == GA_OK; c++) {
    if (s->cols[c].tab < 0)
      continue;
    const ga_centry *e = s->dims[s->cols[c].tab].e;
    int64_t n = e->rows ? e->rows : 1;
    if (charge(s, n * 9)) {
      rc = GA_CACHE_DECLINED;
      break;
    }
    flats[c].v = sqlite3_malloc64(sizeof(uint64_t) * (size_t)n);
    flats[c].f = sqlite3_malloc64((size_t)n);
    if (!flats[c].v || !flats[c].f) {
      rc = GA_NOMEM;
      break;
    }
    int64_t walked = 0;
    for (int64_t sg = 0; sg < e->nsegs && rc == GA_OK; sg++) {
      const ga_cblock *b = e->segs[sg];
      int col = s->cols[c].col;
      for (int64_t i = 0; i < b->n; i++) {
        if (cs_polled(s, &walked, 1)) {
          rc = GA_SCAN_INTERRUPT;
          break;
        }
        int64_t r = e->seg_base[sg] + i;
        flats[c].v[r] = ga_cb_vals(b, col)[i];
        flats[c].f[r] = (uint8_t)(ga_bit(ga_cb_isint(b, col), i) |
                                  ga_bit(ga_cb_notnull(b, col), i) << 1);
      }
    }
  }
  /* the snowflake's dimensions, by depth */
  for (int dep = 2; dep <= GA_CSTAR_MAX + 1; dep++)
    for (int d = 0; d < s->ndims; d++)
      if (depth_of(s, d) == dep)
        deep[ndeep++] = d;
  /* the dimensions joined to the fact, the fewest kept first */
  for (int d = 0; d < s->ndims; d++)
    if (s->dims[d].parent < 0)
      top[ntop++] = d;
  for (int i = 1; i < ntop; i++)
    for (int k = i; k > 0; k--) {
      const ga_cstar_dim *a = &s->dims[top[k - 1]], *b = &s->dims[top[k]];
      double fa = (double)a->keys / (double)(a->e->rows ? a->e->rows : 1);
      double fb = (double)b->keys / (double)(b->e->rows ? b->e->rows : 1);
      if (fb < fa) {
        int t = top[k];
        top[k] = top[k - 1];
        top[k - 1] = t;
      }
    }
  /* the runs: words of the fact in row order */
  if (rc == GA_OK) {
    for (int64_t sg = 0; sg < f->nsegs; sg++)
      nunits += GA_BW(f->segs[sg]->n);
    useg = sqlite3_malloc64(sizeof(int64_t) * (size_t)(nunits + 1));
    uword = sqlite3_malloc64(sizeof(int64_t) * (size_t)(nunits + 1));
    runs = sqlite3_malloc64(sizeof(prun) * (size_t)nthreads);
    if (!useg || !uword || !runs)
      rc = GA_NOMEM;
  }
  if (rc == GA_OK) {
    int64_t u = 0;
    for (int64_t sg = 0; sg < f->nsegs; sg++)
      for (int64_t w = 0; w < GA_BW(f->segs[sg]->n); w++) {
        useg[u] = sg;
        uword[u++] = w;
      }
    if (nunits < (int64_t)nthreads * 64)
      nthreads = 1;
    memset(runs, 0, sizeof(prun) * (size_t)nthreads);
    for (int t = 0; t < nthreads; t++) {
      prun *r = &runs[t];
      r->s = s;
      r->flats = flats;
      r->top = top;
      r->ntop = ntop;
      r->deep = deep;
      r->ndeep = ndeep;
      r->u0 = nunits * t / nthreads;
      r->u1 = nunits * (t + 1) / nthreads;
      r->useg = useg;
      r->uword = uword;
      r->stop = &stop;
      r->caller = t == 0;
    }
    int started = 1;
    for (int t = 1; t < nthreads; t++) {
      if (pthread_create(&runs[t].th, NULL, probe_run, &runs[t])) {
        runs[t].rc = GA_NOMEM;
        break;
      }
      started++;
    }
    probe_run(&runs[0]);
    for (int t = 1; t < started; t++)
      pthread_join(runs[t].th, NULL);
    for (int t = 0; t < nthreads; t++) {
      if (runs[t].rc == GA_SCAN_INTERRUPT)
        rc = GA_SCAN_INTERRUPT;
      else if (runs[t].rc && rc == GA_OK)
        rc = runs[t].rc;
      err_row |= runs[t].err_row;
      s->probed += runs[t].probed;
      s->matched += runs[t].matched;
    }
  }
  /* the join entry: every run's blocks, in run order */
  int64_t nsegs = 0;
  for (int t = 0; runs && t < nthreads; t++)
    for (ga_cblock *b = runs[t].head; b; b = b->next)
      nsegs++;
  out->segs = sqlite3_malloc64(sizeof(ga_cblock *) * (size_t)(nsegs + 1));
  out->seg_base = sqlite3_malloc64(sizeof(int64_t) * (size_t)(nsegs + 1));
  out->cols = sqlite3_malloc64(sizeof(ga_ccol) * (size_t)(s->ncols + 1));
  if (!out->segs || !out->seg_base || !out->cols) {
    rc = rc ? rc : GA_NOMEM;
    for (int t = 0; runs && t < nthreads; t++)
      for (ga_cblock *b = runs[t].head, *nx; b; b = nx) {
        nx = b->next;
        ga_cb_free(b);
      }
  } else {
    for (int t = 0; runs && t < nthreads; t++)
      for (ga_cblock *b = runs[t].head, *nx; b; b = nx) {
        nx = b->next;
        b->next = NULL;
        out->seg_base[out->nsegs] = out->rows;
        out->segs[out->nsegs++] = b;
        out->rows += b->n;
      }
    memset(out->cols, 0, sizeof(ga_ccol) * (size_t)(s->ncols + 1));
    out->ncols = s->ncols;
    out->schema = f->schema;
    out->table = f->table;
    out->where = GA_CACHE_HOST;
    out->enc = f->enc;
    for (int c = 0; c < s->ncols; c++) {
      const ga_cstar_col *sc = &s->cols[c];
      const ga_centry *e = sc->tab < 0 ? f : s->dims[sc->tab].e;
      const ga_ccol *src = &e->cols[sc->col];
      ga_ccol *col = &out->cols[c];
      col->name = (char *)names[c];
      col->aff = src->aff;
      col->dict = src->dict;
      col->nnow = src->nnow;
      col->mixed = src->mixed;
      col->src_schema = e->schema;
      col->src_table = e->table;
      col->src_name = src->name;
      col->imin = INT64_MAX;
      col->imax = INT64_MIN;
      for (int t = 0; runs && t < nthreads; t++) {
        const cstats *st = &runs[t].st[c];
        col->nnull += st->nnull;
        col->nint += st->nint;
        col->nreal += st->nreal;
        col->ntext += st->ntext;
        if (st->nint) {
          col->imin = st->imin < col->imin ? st->imin : col->imin;
          col->imax = st->imax > col->imax ? st->imax : col->imax;
        }
      }
      if (!col->nint)
        col->imin = col->imax = 0;
    }
  }
  if (rc == GA_CACHE_DECLINED && err_row)
    snprintf(why, nwhy,
             "a row of %s raises an error in its conditions (SQLite "
             "reports it)",
             f->table);
  else if (rc == GA_CACHE_DECLINED && !why[0])
    snprintf(why, nwhy,
             "the joined rows need more than group_bytes (%lld bytes; "
             "raise it with gpuagg_config)",
             (long long)s->used);
  for (int c = 0; c < GA_CACHE_MAX_COLS; c++) {
    sqlite3_free(flats[c].v);
    sqlite3_free(flats[c].f);
  }
  sqlite3_free(useg);
  sqlite3_free(uword);
  sqlite3_free(runs);
  s->probe_ms = ms_now() - t0;
  return rc;
}

void ga_cstar_free(ga_cstar *s) {
  for (int d = 0; d < s->ndims; d++) {
    sqlite3_free(s->dims[d].slot);
    sqlite3_free(s->dims[d].hkey);
    sqlite3_free(s->dims[d].via);
    sqlite3_free(s->dims[d].start);
    sqlite3_free(s->dims[d].list);
    s->dims[d].start = s->dims[d].list = NULL;
    s->dims[d].slot = NULL;
    s->dims[d].hkey = NULL;
    s->dims[d].via = NULL;
  }
}
