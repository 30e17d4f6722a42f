/*
** cache_dbits.c — gpu_query's DISTINCT aggregates on a host entry, as
** bitmaps: one bit per (group, value) pair, for a value whose column holds
** INTEGERs only or TEXT codes under BINARY, over a dense range (issue 37).
** The hash sets of cache_distinct.c take every other value.
**
** Why: filled row by row, a group's hash set misses the caches once a
** row when its values pass L2 (bench/dashboard_bench.py's uniq, 8 regions
** x 200,000 customers: 48% of the time in ga_dset_add, and the sets' page
** faults, growth and merges most of the rest).  The bitmaps of the same
** query take 225 KiB a run, and a row sets one bit.
**
** Rules:
**   1. Which values: a DISTINCT value (ga_cquery.dist) whose argument is a
**      bare column of the entry holding either INTEGERs only beside NULL
**      (no REAL, no TEXT: the load's counts, ga_ccol), over
**      [imin, imax], or TEXT with a dictionary under BINARY, over its codes
**      (equal codes, equal values: dict.h rule 2; cache_distinct.c rule 2
**      says only count reads such a set).  Exactness: two INTEGERs are one
**      DISTINCT value exactly when their int64s are equal, and with no REAL
**      in the column every value equal to another is the same INTEGER, so
**      which row is first in rowid order (dset.h rule 2) cannot change
**      typeof or a sum: the representative question is moot.  A column
**      with a REAL (1 beside 1.0, -0.0 beside 0), TEXT under NOCASE or
**      RTRIM, or an expression keeps the hash sets, which keep the first
**      row's value.  NULL sets no bit and is not counted.
**   2. Rows: a group's bits are one row of its run's block, every bitmap
**      value's span in turn (span: its range rounded up to 64 bits).  Under
**      cache_host.c rule 8's dense ids (or keys that are constants: one
**      group) a group's row is its id in every run; otherwise rule 4.  Each
**      run sets bits in its own block (cache_host.c rule 1's runs), and
**      counts the row in its group's state (rows, for count(*)); the
**      state's set stays NULL.  After the runs the rows of each group are
**      ORed, and its state filled from them: count is their bits, and
**      where a sum, total or avg reads the value (ga_cquery.best_only is 0)
**      every set bit's value is stepped into the state (its exact sum, max
**      and min), once, in value order (the exact sum is order-free; an
**      integer overflow raises as sum()'s does).  min and max of a DISTINCT
**      number or BINARY TEXT are the plain aggregates (planner/query.c), so
**      they read no set.  A state without a set answers from those
**      (gstate.h rule 5 reads the set only where there is one), the
**      answers of the set's representatives.
**   3. Memory and work: a run's block is at most GA_CDBITS_RUN_BYTES, and
**      at most GA_CDBITS_BITS_PER_ROW bits a row of the entry plus
**      GA_CDBITS_FREE_BITS, so zeroing, merging and counting cost a small
**      multiple of reading the column.  Every block is charged to the
**      shared tally of the DISTINCT sets' bytes, against
**      ga_cquery.dist_cap (group_bytes).  Under dense ids a value past any
**      of these takes the hash sets (which may then pass dist_cap: the
**      cache declines and says so).
**   4. Other keys (hashed, cache_host.c rule 6): a run gives a group a row
**      when it meets it, and keeps row + 1 in the count of the group's
**      first bitmap value's state (unused until rule 2's fill).  When the
**      block may not grow within rule 3, the group's values take the sets
**      in that run (count -1), so a group may have a set from some runs
**      and rows in others.  Before the run hands its table over, each row
**      records its group's key tuple and hash, and the counts are cleared.
**      After the runs each record finds its listed group by key (as GROUP
**      BY compares, BINARY: codes and numbers) and its bits go to the
**      group's row of a united block, or, where the group has a set, into
**      the set as values of that run (dset.h rule 2: a tag; INTEGERs, so
**      no representative changes), charged to dist_cap: past it, the cache
**      declines.
**   5. GPUAGG_CACHE_PROFILE: "dset-bitmap" when every DISTINCT value ran
**      on bitmaps in every group, "dset-bitmap+hash" when some did,
**      "dset-hash" when none (cache_host.c).
*/
#include "cache_dbits.h"

#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

/* Rule 3: add delta to the shared tally unless that passes cap.  1: added. */
static int charge(int64_t *tally, int64_t delta, int64_t cap) {
  int64_t now = __atomic_add_fetch(tally, delta, __ATOMIC_RELAXED);
  if (cap > 0 && now > cap) {
    __atomic_sub_fetch(tally, delta, __ATOMIC_RELAXED);
    return 0;
  }
  return 1;
}

/* Grow run u's block to cap rows (zeroed), and its records (hashed).
** GA_OK or GA_NOMEM. */
static int grow(const ga_cdbits *b, ga_cdbits_run *u, int64_t cap) {
  if (b->hashed) {
    ga_cdbits_rec *rec =
        sqlite3_realloc64(u->rec, sizeof(ga_cdbits_rec) * (size_t)(cap + 1));
    if (!rec)
      return GA_NOMEM;
    memset(rec + u->cap, 0, sizeof(ga_cdbits_rec) * (size_t)(cap + 1 - u->cap));
    u->rec = rec;
  }
  uint64_t *w =
      sqlite3_realloc64(u->w, 8 * (size_t)(cap * b->stride + 1)); /* + 1: */
  if (!w) /* a block of no bits still has an address */
    return GA_NOMEM;
  memset(w + u->cap * b->stride, 0,
         8 * (size_t)((cap - u->cap) * b->stride + 1));
  u->w = w;
  u->cap = cap;
  return GA_OK;
}

int ga_cdbits_plan(ga_cdbits *b, const ga_centry *e, const ga_cquery *q,
                   int64_t ids, int threads, int64_t *charged) {
  memset(b, 0, sizeof(*b));
  int konst = 1; /* every key a constant: one group */
  for (int k = 0; k < q->nkeys; k++)
    if (ga_cq_key(q, k)->n != 1 || ga_cq_key(q, k)->ins[0].op != GA_CX_LIT)
      konst = 0;
  b->keyed = ids > 0;
  b->hashed = !b->keyed && !konst;
  int64_t rows = b->hashed ? 0 : b->keyed ? ids : 1; /* rule 4: made later */
  b->nvals = q->nvals;
  b->nruns = threads;
  b->charged = charged;
  b->cap = q->dist_cap;
  b->home = -1;
  int64_t most_bits = e->rows * GA_CDBITS_BITS_PER_ROW + GA_CDBITS_FREE_BITS;
  if (most_bits > GA_CDBITS_RUN_BYTES * 8)
    most_bits = GA_CDBITS_RUN_BYTES * 8;
  b->most_bytes = most_bits / 8;
  int64_t bits = 0; /* a row's */
  for (int i = 0; i < q->nvals; i++) {
    /* a median's values; a DISTINCT variance's set (gstate.h rule 9) */
    if (!q->dist[i] || q->dist[i] == GA_DIST_PCT || q->sq[i])
      continue;
    int c = ga_cx_bare(ga_cq_val(q, i));
    const ga_ccol *col = c < 0 ? NULL : &e->cols[c];
    if (!col || col->mixed)
      continue;
    int64_t lo = 0;
    uint64_t range;
    if (col->dict && q->dist[i] - 1 == GA_COLL_BINARY) {
      range = (uint64_t)ga_dict_count(col->dict);
      b->text[i] = 1;
    } else if (!col->dict && !col->nreal && !col->ntext) {
      lo = col->imin;
      range = col->nint ? (uint64_t)col->imax - (uint64_t)col->imin + 1 : 0;
    } else {
      continue;
    }
    /* rule 3, in bits: rows x span within the block (hashed: one row at
    ** least); each bound is tested before the product it keeps from
    ** overflowing */
    if (range > (uint64_t)most_bits)
      continue;
    int64_t span = (int64_t)((range + 63) & ~(uint64_t)63);
    int64_t n = rows ? rows : 1;
    if (span && n > (most_bits - n * bits) / span)
      continue;
    if (!b->hashed && q->dist_cap > 0 &&
        *charged + n * (bits + span) / 8 * threads > q->dist_cap)
      continue;
    b->on[i] = 1;
    b->lo[i] = lo;
    b->range[i] = (int64_t)range;
    b->span[i] = span;
    b->off[i] = bits / 64;
    bits += span;
    if (b->home < 0)
      b->home = i;
    b->non++;
  }
  if (!b->non)
    return 0;
  b->stride = bits / 64;
  if (!b->hashed) {
    b->shape.nk = 0;
  } else {
    b->shape.nk = q->nkeys;
    for (int k = 0; k < q->nkeys; k++)
      b->shape.coll[k] = GA_COLL_BINARY; /* codes and numbers */
  }
  b->run = sqlite3_malloc64(sizeof(ga_cdbits_run) * (size_t)threads);
  if (!b->run) {
    b->non = 0;
    return -1;
  }
  memset(b->run, 0, sizeof(ga_cdbits_run) * (size_t)threads);
  for (int t = 0; t < threads; t++) {
    if (grow(b, &b->run[t], rows)) {
      ga_cdbits_free(b);
      return -1;
    }
    b->run[t].rows = rows;
  }
  *charged += 8 * (rows * b->stride + 1) * threads;
  return b->non;
}

int64_t ga_cdbits_new_row(const ga_cdbits *b, int run, ga_gstate *home) {
  ga_cdbits_run *u = &b->run[run];
  if (u->rows == u->cap) {
    int64_t cap = u->cap ? 2 * u->cap : 1;
    int64_t more =
        (cap - u->cap) * (b->stride * 8 + (int64_t)sizeof(ga_cdbits_rec));
    if (cap * b->stride * 8 > b->most_bytes ||
        !charge(b->charged, more, b->cap)) {
      home->count = -1; /* rule 4: this run's sets */
      u->fell = 1;
      return -1;
    }
    if (grow(b, u, cap)) {
      __atomic_sub_fetch(b->charged, more, __ATOMIC_RELAXED);
      home->count = -1;
      u->fell = 1;
      return -1;
    }
  }
  home->count = ++u->rows;
  return u->rows - 1;
}

int ga_cdbits_run_end(const ga_cdbits *b, int run, ga_group_table *t) {
  ga_cdbits_run *u = &b->run[run];
  if (!b->hashed || !b->non)
    return GA_OK;
  int rc = GA_OK; /* the records grew with the rows (charged there) */
  for (size_t j = 0; j < t->cap; j++) {
    ga_group *g = t->slot[j];
    if (!g)
      continue;
    ga_gstate *h = &g->st[b->home];
    if (h->count > 0 && h->count <= u->rows) {
      ga_cdbits_rec *r = &u->rec[h->count - 1];
      r->hash = g->hash;
      for (int k = 0; k < b->shape.nk && rc == GA_OK; k++) {
        ga_value v;
        ga_bval_view(&g->key[k], &v);
        if (ga_bval_set(&r->key[k], &v))
          rc = GA_NOMEM;
      }
    }
    h->count = 0; /* rule 4: the fill counts */
  }
  return rc;
}

/* Rule 2: a dense group's id from its key tuple (cache_host.c's id_keys,
** the other way): per key, NULL is its last code, else the INTEGER (a
** code, or the value) less base. */
static int64_t group_id(const ga_cquery *q, const int64_t *card,
                        const int64_t *base, const ga_group *g) {
  int64_t id = 0, stride = 1;
  for (int k = 0; k < q->nkeys; k++) {
    ga_value v;
    ga_bval_view(&g->key[k], &v);
    if (v.type != GA_V_NULL && v.type != GA_V_INT)
      return -1;
    int64_t code = v.type == GA_V_NULL ? card[k] - 1 : v.i - base[k];
    if (code < 0 || code >= card[k])
      return -1;
    id += code * stride;
    stride *= card[k];
  }
  return id;
}

/* Rule 2: value i's bits w of one group into st. */
static void fill_one(const ga_cdbits *b, const ga_cquery *q, int i,
                     const uint64_t *w, ga_gstate *st) {
  int64_t nw = b->span[i] / 64, first = -1, last = -1, n = 0;
  for (int64_t k = 0; k < nw; k++) {
    if (!w[k])
      continue;
    if (first < 0)
      first = k;
    last = k;
    n += __builtin_popcountll(w[k]);
  }
  if (!n)
    return;
  if (q->best_only[i] || b->text[i]) { /* count alone reads it (rule 2) */
    st->count += n;
    return;
  }
  int64_t rows = st->rows; /* the run loop counted them (rule 2) */
  for (int64_t k = first; k <= last; k++)
    for (uint64_t x = w[k]; x; x &= x - 1)
      ga_gstate_step_int(st, b->lo[i] + k * 64 + __builtin_ctzll(x));
  st->rows = rows;
}

/* Rule 4: value i's bits w of run `run` into the set of st (which has
** one), charged.  GA_OK, GA_NOMEM or GA_CDBITS_FULL. */
static int into_set(const ga_cdbits *b, const ga_cquery *q, int i,
                    const uint64_t *w, int run, ga_gstate *st) {
  int64_t was = ga_dset_bytes(st->set);
  for (int64_t k = 0; k < b->span[i] / 64; k++)
    for (uint64_t x = w[k]; x; x &= x - 1) {
      ga_value v;
      memset(&v, 0, sizeof(v));
      v.type = GA_V_INT; /* a value, or a BINARY code (cache_distinct.c) */
      v.i = b->lo[i] + k * 64 + __builtin_ctzll(x);
      if (ga_distinct_add(&st->set, q->dist[i] - 1, &v, run, NULL))
        return GA_NOMEM;
    }
  return charge(b->charged, ga_dset_bytes(st->set) - was, b->cap)
             ? GA_OK
             : GA_CDBITS_FULL;
}

/* Rule 4: the listed group of r's keys (hash r->hash) through map (slots
** of index + 1, mask), or -1. */
static int64_t find_group(const ga_cdbits *b, const ga_cdbits_rec *r,
                          ga_group **groups, const int64_t *map,
                          uint64_t mask) {
  ga_value a[GA_MAX_KEYS], c[GA_MAX_KEYS];
  for (int k = 0; k < b->shape.nk; k++)
    ga_bval_view(&r->key[k], &a[k]);
  for (uint64_t s = r->hash & mask;; s = (s + 1) & mask) {
    if (!map[s])
      return -1;
    const ga_group *g = groups[map[s] - 1];
    if (g->hash != r->hash)
      continue;
    for (int k = 0; k < b->shape.nk; k++)
      ga_bval_view(&g->key[k], &c[k]);
    if (!ga_keys_cmp(a, c, &b->shape))
      return map[s] - 1;
  }
}

static int fill_hashed(ga_cdbits *b, const ga_cquery *q, ga_group **groups,
                       size_t n) {
  uint64_t mask = 1;
  while (mask < 2 * (uint64_t)n + 2)
    mask <<= 1;
  int64_t fbytes = 8 * ((int64_t)n * b->stride + 1);
  int64_t mbytes = 8 * (int64_t)mask;
  if (!charge(b->charged, fbytes + mbytes, b->cap))
    return GA_CDBITS_FULL;
  int64_t *map = sqlite3_malloc64((size_t)mbytes);
  uint64_t *all = sqlite3_malloc64((size_t)fbytes);
  int rc = map && all ? GA_OK : GA_NOMEM;
  mask--;
  if (rc == GA_OK) {
    memset(map, 0, (size_t)mbytes);
    memset(all, 0, (size_t)fbytes);
    for (size_t j = 0; j < n; j++) {
      uint64_t s = groups[j]->hash & mask;
      while (map[s])
        s = (s + 1) & mask;
      map[s] = (int64_t)j + 1;
    }
  }
  for (int t = 0; t < b->nruns && rc == GA_OK; t++) {
    const ga_cdbits_run *u = &b->run[t];
    for (int64_t r = 0; r < u->rows && rc == GA_OK; r++) {
      int64_t j = find_group(b, &u->rec[r], groups, map, mask);
      if (j < 0) {
        rc = GA_NOMEM; /* never: every run's group is listed */
        break;
      }
      for (int i = 0; i < b->nvals && rc == GA_OK; i++) {
        if (!b->on[i])
          continue;
        const uint64_t *w = u->w + r * b->stride + b->off[i];
        ga_gstate *st = &groups[j]->st[i];
        if (st->set) { /* rule 4: a run's set for this group */
          rc = into_set(b, q, i, w, t, st);
          continue;
        }
        uint64_t *to = all + j * b->stride + b->off[i];
        for (int64_t k = 0; k < b->span[i] / 64; k++)
          to[k] |= w[k];
      }
    }
  }
  for (size_t j = 0; j < n && rc == GA_OK; j++)
    for (int i = 0; i < b->nvals; i++)
      if (b->on[i] && !groups[j]->st[i].set)
        fill_one(b, q, i, all + j * b->stride + b->off[i], &groups[j]->st[i]);
  sqlite3_free(map);
  sqlite3_free(all);
  return rc;
}

int ga_cdbits_fill(ga_cdbits *b, const ga_cquery *q, const int64_t *card,
                   const int64_t *base, ga_group **groups, size_t n) {
  if (b->hashed)
    return fill_hashed(b, q, groups, n);
  uint64_t *all = b->run[0].w;
  int64_t words = b->run[0].rows * b->stride;
  for (int t = 1; t < b->nruns; t++) {
    const uint64_t *x = b->run[t].w;
    for (int64_t k = 0; k < words; k++)
      all[k] |= x[k];
  }
  for (size_t j = 0; j < n; j++) {
    int64_t id = b->keyed ? group_id(q, card, base, groups[j]) : 0;
    if (id < 0 || id >= b->run[0].rows)
      return GA_NOMEM; /* never: the keys are the runs' ids */
    for (int i = 0; i < b->nvals; i++)
      if (b->on[i])
        fill_one(b, q, i, all + id * b->stride + b->off[i], &groups[j]->st[i]);
  }
  return GA_OK;
}

const char *ga_cdbits_word(const ga_cdbits *b, int ndist) {
  int fell = 0;
  for (int t = 0; b->non && t < b->nruns; t++)
    fell |= b->run[t].fell;
  return b->non == ndist && !fell ? "dset-bitmap"
         : b->non                 ? "dset-bitmap+hash"
                                  : "dset-hash";
}

void ga_cdbits_free(ga_cdbits *b) {
  for (int t = 0; b->run && t < b->nruns; t++) {
    ga_cdbits_run *u = &b->run[t];
    for (int64_t r = 0; u->rec && r < u->rows; r++)
      for (int k = 0; k < b->shape.nk; k++)
        ga_bval_clear(&u->rec[r].key[k]);
    sqlite3_free(u->rec);
    sqlite3_free(u->w);
  }
  sqlite3_free(b->run);
  b->run = NULL;
  b->non = 0;
}
