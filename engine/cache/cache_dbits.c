/*
** cache_dbits.c — gpu_query's DISTINCT aggregates on a host entry, as
** bitmaps: one bit per (group id, value) pair, for a value whose column
** holds INTEGERs only or TEXT codes under BINARY, over a dense range
** (issue 37).  The hash sets of cache_distinct.c take every other value.
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
**      says only count reads such a set).  The group ids are cache_host.c
**      rule 8's dense ids (an ungrouped query: one id); without them the
**      hash sets run.  Exactness: two INTEGERs are one DISTINCT value
**      exactly when their int64s are equal, and with no REAL in the column
**      every value equal to another is the same INTEGER, so which row is
**      first in rowid order (dset.h rule 2) cannot change typeof or a
**      sum: the representative question is moot.  A column with a REAL (1
**      beside 1.0, -0.0 beside 0), TEXT under NOCASE or RTRIM, or an
**      expression keeps the hash sets, which keep the first row's value.
**      NULL sets no bit and is not counted.
**   2. Each run sets bits in its own block, in its rows (cache_host.c rule
**      1's runs), and counts the row in its group's state (rows, for
**      count(*)); the state's set stays NULL.  After the runs every block
**      is ORed into run 0's, and each group's state is filled from its
**      id's bits: count is their number, and where a sum, total or avg
**      reads the value (ga_cquery.best_only is 0) every set bit's value is
**      stepped into the state (its exact sum, max and min), once, in value
**      order (the exact sum is order-free; an integer overflow raises as
**      sum()'s does).  min and max of a DISTINCT number or BINARY TEXT are
**      the plain aggregates (planner/query.c), so they read no set.  A state
**      without a set answers from those (gstate.h rule 5 reads the set only
**      where there is one), the answers of the set's representatives.
**   3. Memory and work: a run's block holds every bitmap value's ids x
**      span bits (span: the range rounded up to 64), at most
**      GA_CDBITS_RUN_BYTES, and at most GA_CDBITS_BITS_PER_ROW bits a row
**      of the entry plus GA_CDBITS_FREE_BITS, so zeroing, merging and
**      counting cost a small multiple of reading the column.  Every run's
**      block is charged to the shared tally of the DISTINCT sets' bytes,
**      against ga_cquery.dist_cap (group_bytes).  A value past any of these
**      falls back to the hash sets (which may then pass dist_cap: the cache
**      declines and says so).
**   4. GPUAGG_CACHE_PROFILE: "dset-bitmap" when every DISTINCT value ran
**      on bitmaps, "dset-bitmap+hash" when some did, "dset-hash" when none
**      (cache_host.c).
*/
#include "cache_dbits.h"

#include <string.h>

#include "scan_group.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

int ga_cdbits_plan(ga_cdbits *b, const ga_centry *e, const ga_cquery *q,
                   int64_t ids, int threads, int64_t *charged) {
  memset(b, 0, sizeof(*b));
  if (ids <= 0) /* rule 1: no dense ids; constant keys are one group */
    for (int k = 0; k < q->nkeys; k++)
      if (ga_cq_key(q, k)->n != 1 || ga_cq_key(q, k)->ins[0].op != GA_CX_LIT)
        return 0;
  b->nvals = q->nvals;
  b->ids = ids > 0 ? ids : 1;
  b->keyed = ids > 0;
  b->nruns = threads;
  int64_t most_bits = e->rows * GA_CDBITS_BITS_PER_ROW + GA_CDBITS_FREE_BITS;
  int64_t bits = 0;
  for (int i = 0; i < q->nvals; i++) {
    if (!q->dist[i])
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
    /* rule 3, in bits: ids x span within the block and the rows' share;
    ** each bound is tested before the product it keeps from overflowing */
    if (range > (uint64_t)most_bits)
      continue;
    int64_t span = (int64_t)((range + 63) & ~(uint64_t)63);
    if (span && b->ids > (most_bits - bits) / span)
      continue;
    int64_t add = b->ids * span;
    if ((bits + add) / 8 > GA_CDBITS_RUN_BYTES)
      continue;
    int64_t bytes = (bits + add) / 8 * threads;
    if (q->dist_cap > 0 && *charged + bytes > q->dist_cap)
      continue;
    b->on[i] = 1;
    b->lo[i] = lo;
    b->range[i] = (int64_t)range;
    b->span[i] = span;
    b->off[i] = bits / 64;
    bits += add;
    b->non++;
  }
  if (!b->non)
    return 0;
  b->nwords = bits / 64;
  b->run = sqlite3_malloc64(sizeof(uint64_t *) * (size_t)threads);
  if (!b->run) {
    b->non = 0;
    return -1;
  }
  memset(b->run, 0, sizeof(uint64_t *) * (size_t)threads);
  for (int t = 0; t < threads; t++) {
    /* one word more: a block of no bits still has an address */
    b->run[t] = sqlite3_malloc64(8 * (size_t)(b->nwords + 1));
    if (!b->run[t]) {
      ga_cdbits_free(b);
      return -1;
    }
    memset(b->run[t], 0, 8 * (size_t)(b->nwords + 1));
  }
  *charged += 8 * (b->nwords + 1) * threads;
  return b->non;
}

/* Rule 2: a group's id from its key tuple (cache_host.c's id_keys, the
** other way): per key, NULL is its last code, else the INTEGER (a code,
** or the value) less base. */
static int64_t group_id(const ga_cquery *q, const int64_t *card,
                        const int64_t *base, const ga_group *g) {
  int64_t id = 0, stride = 1;
  for (int k = 0; k < q->nkeys; k++) {
    ga_value v;
    ga_bval_view(&g->key[k], &v);
    int64_t code = v.type == GA_V_NULL ? card[k] - 1 : v.i - base[k];
    if (v.type != GA_V_NULL && v.type != GA_V_INT)
      return -1;
    if (code < 0 || code >= card[k])
      return -1;
    id += code * stride;
    stride *= card[k];
  }
  return id;
}

/* Rule 2: value i's bits of one id into st. */
static void fill_one(const ga_cdbits *b, const ga_cquery *q, int i,
                     const uint64_t *w, ga_gstate *st) {
  int64_t nw = b->span[i] / 64, first = -1, last = -1, n = 0;
  for (int64_t k = 0; k < nw; k++) {
    if (!w[k])
      continue;
    if (first < 0)
      first = k * 64 + __builtin_ctzll(w[k]);
    last = k * 64 + 63 - __builtin_clzll(w[k]);
    n += __builtin_popcountll(w[k]);
  }
  if (!n)
    return;
  if (q->best_only[i] || b->text[i]) { /* count alone reads it (rule 2) */
    st->count += n;
    return;
  }
  int64_t rows = st->rows; /* the run loop counted them (rule 2) */
  for (int64_t k = first / 64; k <= last / 64; k++)
    for (uint64_t x = w[k]; x; x &= x - 1)
      ga_gstate_step_int(st, b->lo[i] + k * 64 + __builtin_ctzll(x));
  st->rows = rows;
}

int ga_cdbits_fill(ga_cdbits *b, const ga_cquery *q, const int64_t *card,
                   const int64_t *base, ga_group **groups, size_t n) {
  uint64_t *all = b->run[0];
  for (int t = 1; t < b->nruns; t++) {
    const uint64_t *x = b->run[t];
    for (int64_t k = 0; k < b->nwords; k++)
      all[k] |= x[k];
  }
  for (size_t j = 0; j < n; j++) {
    int64_t id = b->keyed ? group_id(q, card, base, groups[j]) : 0;
    if (id < 0 || id >= b->ids)
      return GA_NOMEM; /* never: the keys are the runs' ids */
    for (int i = 0; i < b->nvals; i++)
      if (b->on[i])
        fill_one(b, q, i, all + b->off[i] + id * (b->span[i] / 64),
                 &groups[j]->st[i]);
  }
  return GA_OK;
}

void ga_cdbits_free(ga_cdbits *b) {
  for (int t = 0; b->run && t < b->nruns; t++)
    sqlite3_free(b->run[t]);
  sqlite3_free(b->run);
  b->run = NULL;
  b->non = 0;
}
