/*
** cache_gpu_many.c — many groups on a GPU entry (issue 37: bench/
** query_bench.py's d4, 2e6 parts at 6e7 rows, and d5, the top 10 of
** 100,000 suppliers by count(*)): the bounds and the charge of
** engine/cache/cache_gpu_query.c's rules 9 and 10.
**
** Rules:
**   1. A GPU query of more than GA_CACHE_MAX_GROUPS key ids (the product of
**      its keys' dense ids, NULL included) is "many" (rule 10 there) up to
**      GA_CQ_MANY_MAX_IDS; GPUAGG_CACHE_MANY_IDS (read at each query, 1 ..
**      GA_CACHE_MAX_GROUPS) sets the bound lower, so that a test's small
**      table takes the same steps, counters and charges.
**   2. The charge (ga_cq_many_fits): a many query's scratch on the device
**      (every array carved for it: per row, per id, per group) with the
**      host's copy of the groups' bounds (8 bytes an id) and then,
**      once the groups with rows are known, what each such group takes on
**      the host while the answer is made: its exact states as they come
**      back (a gak_cstate a value), its keys (a gak_cval each), its first
**      row, and its group in the shared groups as gpu_query's scan counts
**      one (GA_GROUP_FIXED_BYTES plus 32 bytes of slot).  One tally
**      against group_bytes (ga_cquery.dist_cap, the cap of gpu_query's
**      scan over the same groups); past it the cache declines, and says
**      how many bytes and how to raise the cap.  0 or less: no cap.  A
**      GPU query that is not many is charged its host part alone (dev 0).
**   3. Top k by count (rule 9 there, ga_cquery.topk_count): a count is
**      exact and cheap to order (kernels/cache_many.cu), so the path pays
**      from GA_CQ_TOPK_COUNT_IDS key ids on, where shipping every group's
**      states and letting SQLite order them (d5: 100,000 groups, two
**      values) costs more than one sort of the groups' keys.
**   4. The groups' hand-over to the shared groups (ga_cq_hand_groups): a
**      group's states leave the device whole (a superaccumulator each), and
**      each becomes a compact state and a group with a hash, on the host,
**      which at 2e6 groups (d4 at 6e7 rows) took a thread over a second.
**      For a many query (rule 1), past GA_CQ_HAND_MIN groups (64 under
**      GPUAGG_CACHE_MANY_IDS, so that tests run it), up to
**      GA_CQ_HAND_THREADS threads (and the CPUs online) take contiguous
**      ranges of as many groups each; the shared groups lock by shard.  A
**      thread that cannot start leaves its range to the caller's thread.
**      Each group is a key tuple of its own (the ids are distinct values:
**      TEXT keys group under BINARY only), so no two threads' groups merge
**      and the order they arrive in changes nothing.
**   5. The hand-over is a long loop (2e6 groups at d4's scale): the
**      caller's thread polls the caller's interrupt (ga_cquery.interrupted)
**      every GA_CQ_HAND_POLL groups of its range; an interrupt stops every
**      thread (GA_SCAN_INTERRUPT), the others through a shared flag read
**      at each group.
**   6. Compact states (issue 37, d4 at 6e7 rows: every group's ~700-byte
**      exact state merged on the device and copied back took 833 ms).  In a
**      many query (rule 1) of the sorted layout, a value that no min, max
**      or DISTINCT reads is first reduced by gak_cache_many_compact into
**      32 bytes a group (the counts of INTEGER and REAL values, the int64
**      sums of each), which is exact where every REAL value is an integer
**      below 2^53 in magnitude and neither sum leaves int64 (kernels/
**      cache_many.cu rule 4); the device checks that for every kept value
**      of the call.  Where it cannot, the value takes the exact reduce and
**      merge (one flag for the value: nothing half done).  Each group's
**      engine state is then built on the host (ga_cq_compact_xstate): the
**      integers' total in the integer halves, the REALs' total in the
**      superaccumulator at the units' digit, normalised; a normalised
**      partial is canonical, so the state equals the exact path's, bit for
**      bit, and so does every answer (typeof too: nreal decides REAL).
**      GPUAGG_CACHE_PROFILE names the step "reduce compact";
**      GPUAGG_CACHE_MANY_COMPACT=0 turns it off (tests compare both).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_gpu_many.h"
#include "gak.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

/* Rule 3: key ids past which a top k by count takes rule 9's path. */
#define GA_CQ_TOPK_COUNT_IDS ((int64_t)4096)

static int64_t knob(const char *name, int64_t dflt) {
  const char *z = getenv(name);
  int64_t v = z ? atoll(z) : 0;
  return v >= 1 && v < dflt ? v : dflt;
}

int64_t ga_cq_many_ids(void) {
  return knob("GPUAGG_CACHE_MANY_IDS", GA_CACHE_MAX_GROUPS);
}

int64_t ga_cq_topk_min_ids(int count) {
  return knob("GPUAGG_CACHE_TOPK_IDS",
              count ? GA_CQ_TOPK_COUNT_IDS : GA_CACHE_MAX_GROUPS);
}

int ga_cq_many_fits(const ga_cquery *q, const ga_gshape *shape, int64_t dev,
                    int64_t ngr, char *why, size_t nwhy) {
  int nkc = q->nkeys + q->ncarry;
  int64_t one = (int64_t)q->nvals * (int64_t)sizeof(gak_cstate) +
                (int64_t)nkc * (int64_t)sizeof(gak_cval) + 4 +
                GA_GROUP_FIXED_BYTES(shape) + 32;
  int64_t cap = q->dist_cap;
  if (cap <= 0 || (dev <= cap && ngr <= (cap - dev) / one))
    return 1;
  double need = (double)dev + (double)ngr * (double)one;
  snprintf(why, nwhy,
           "%lld groups on the GPU would take %.0f bytes, past group_bytes "
           "(%lld): raise it (SELECT gpuagg_config('group_bytes', ...))",
           (long long)ngr, need, (long long)cap);
  return 0;
}

/* Rule 4's bounds. */
#define GA_CQ_HAND_MIN ((int64_t)32768)
#define GA_CQ_HAND_THREADS 16
/* Rule 5: groups between two polls of the caller's interrupt. */
#define GA_CQ_HAND_POLL 1024

typedef struct hand_run {
  int64_t lo, hi;
  int nv, rc;
  int (*one)(void *arg, int64_t g, ga_xstate *sts);
  void *arg;
  const ga_cquery *q; /* the caller's range: its interrupt (rule 5) */
  int *stop;
} hand_run;

static void *hand_range(void *p) {
  hand_run *r = p;
  ga_xstate *sts =
      sqlite3_malloc64(sizeof(ga_xstate) * (size_t)(r->nv ? r->nv : 1));
  r->rc = sts ? GA_SCAN_OK : GA_SCAN_NOMEM;
  for (int64_t g = r->lo; g < r->hi && r->rc == GA_SCAN_OK; g++) {
    if (r->q && (g - r->lo) % GA_CQ_HAND_POLL == GA_CQ_HAND_POLL - 1 &&
        r->q->interrupted && r->q->interrupted(r->q->interrupted_arg))
      __atomic_store_n(r->stop, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
      r->rc = GA_SCAN_INTERRUPT;
      break;
    }
    r->rc = r->one(r->arg, g, sts);
  }
  sqlite3_free(sts);
  return NULL;
}

int ga_cq_hand_groups(const ga_cquery *q, int64_t ngr, int nv, int par,
                      int (*one)(void *arg, int64_t g, ga_xstate *sts),
                      void *arg) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  /* GPUAGG_CACHE_MANY_IDS (tests): small tables take threads too */
  int64_t most = getenv("GPUAGG_CACHE_MANY_IDS") ? 64 : GA_CQ_HAND_MIN;
  int64_t nt = par ? ngr / most : 1;
  if (nt > GA_CQ_HAND_THREADS)
    nt = GA_CQ_HAND_THREADS;
  if (nt > cpus)
    nt = cpus;
  if (nt < 1)
    nt = 1;
  hand_run runs[GA_CQ_HAND_THREADS];
  pthread_t tid[GA_CQ_HAND_THREADS];
  int started[GA_CQ_HAND_THREADS], stop = 0;
  for (int64_t t = 0; t < nt; t++) {
    runs[t].lo = ngr * t / nt;
    runs[t].hi = ngr * (t + 1) / nt;
    runs[t].nv = nv;
    runs[t].one = one;
    runs[t].arg = arg;
    runs[t].q = NULL;
    runs[t].stop = &stop;
    started[t] = t > 0 && !pthread_create(&tid[t], NULL, hand_range, &runs[t]);
  }
  for (int64_t t = 0; t < nt; t++) /* the caller's range, and any left */
    if (!started[t]) {
      runs[t].q = q; /* rule 5: the caller's thread polls */
      hand_range(&runs[t]);
    }
  int rc = GA_SCAN_OK;
  for (int64_t t = 0; t < nt; t++) {
    if (started[t])
      pthread_join(tid[t], NULL);
    if (runs[t].rc != GA_SCAN_OK && rc != GA_SCAN_INTERRUPT)
      rc = runs[t].rc;
  }
  return rc;
}

/* Rule 5. */
int ga_cq_compact_on(const ga_cquery *q, int i) {
  const char *z = getenv("GPUAGG_CACHE_MANY_COMPACT");
  if (z && atoi(z) == 0)
    return 0;
  return !q->best[i] && !q->dist[i];
}

void ga_cq_compact_bounds(const gak_cslice *sl, const gak_cgroup *gr,
                          int64_t ngr, uint32_t *bounds) {
  for (int64_t g = 0; g < ngr; g++) {
    const gak_cslice *a = &sl[gr[g].first_slice];
    const gak_cslice *z = &sl[gr[g].first_slice + gr[g].nslices - 1];
    bounds[2 * g] = a->start;
    bounds[2 * g + 1] = z->start + z->len;
  }
}

void ga_cq_compact_xstate(ga_xstate *st, const gak_cmany *cm, int64_t rows) {
  memset(st, 0, sizeof(*st)); /* max and min: NULL (rule 6: none read) */
  st->rows = rows;
  st->count = cm->nint + cm->nreal;
  ga_sum_set_int_total(&st->sum, (ga_i128)cm->isum);
  st->sum.nint = cm->nint;
  st->sum.nreal = cm->nreal;
  if (cm->rsum) { /* |rsum| < 2^63 (the kernel's checked adds) */
    int neg = cm->rsum < 0;
    uint64_t mag = neg ? 0 - (uint64_t)cm->rsum : (uint64_t)cm->rsum;
    ga_xacc_add_at(st->sum.acc, mag, 1074, neg); /* 2^(1074 - 1074) = 1 */
  }
  ga_sum_normalize(&st->sum);
}
