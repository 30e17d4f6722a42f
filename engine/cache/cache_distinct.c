/*
** cache_distinct.c — gpu_query's DISTINCT aggregates (count, sum, total,
** avg, min and max over DISTINCT e, issue 37) on a host entry of the
** column cache: each group's state keeps the set of its distinct values,
** the very set (engine/state/dset.h) and result (engine/state/gstate.h
** rule 5) of the scan, so a cached answer is the scan's, bit for bit.
**
** Rules:
**   1. Distinctness is the scan's (engine/scan/scan_group.h rule 5): each
**      row's value, as a ga_value, goes through ga_distinct_step under its
**      argument's collation: INTEGER and REAL by exact value (1 and 1.0
**      one value), TEXT under the collation, NULL never added.  A cached
**      column holds no BLOB, and no TEXT beside numbers (a mixed column is
**      read by no query: cache_load.c rule 8), so those cases never reach
**      an entry.
**   2. TEXT values are dictionary codes in the entry, one code a value
**      (dict.h rule 2: BINARY ranks).  Under BINARY the set holds the codes
**      as integers (equal codes, equal values); under NOCASE and RTRIM,
**      which join values of other codes, the codes' bytes (ga_dict_value,
**      in the entry's encoding).  Only count reads a TEXT DISTINCT value
**      under BINARY (planner/cache_shape.c declines sum, total and avg of
**      TEXT, and min and max keep DISTINCT only under NOCASE or RTRIM,
**      planner/query.c), so a set of codes answers as a set of values, and
**      min and max read a set of bytes.  No TEXT representative needs
**      sum()'s classification.  Partials never read the cache
**      (ext/query/partial_fns.c rule 2), so no set of codes leaves it.
**   3. The representative of equal values is the first in rowid order:
**      a run walks its rows in row order and tags every value with its run
**      number, which orders runs by rowid (cache_host.c rule 1), and the
**      shared groups unite the runs' sets by those tags (dset.h rule 2).
**      So cache_host.c runs DISTINCT queries in rule 6's row loop, keyed by
**      hash or by rule 8's dense index, never through rule 9's records or
**      rule 11's arrays, which keep no set.
**   4. A UTF-16 entry's TEXT under NOCASE or RTRIM declines: SQLite
**      compares those in UTF-8 (the scan converts; the entry keeps the
**      database's bytes).
**   5. Memory: every run adds what its sets grew to one shared tally (at
**      most GA_DSET_ENTRY_BYTES and 3/8 occupancy: dset.h rule 4); past
**      ga_cquery.dist_cap (group_bytes) the cache declines, and gpu_query's
**      scan answers or raises its own group_bytes error.  The caller's
**      interrupt is polled on the caller's thread (run 0) every 64 words;
**      the other runs see the stop through the same tally.
**   6. GPUAGG_CACHE_PROFILE: "dset-hash" says the sets ran (hash sets of
**      values a group; the GPU keeps none and declines).  Values of INTEGER
**      columns and BINARY codes take cache_dbits.c's
**      bitmaps instead ("dset-bitmap", or "dset-bitmap+hash" beside sets).
*/
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "idrows.h"
#include "sqlite3ext.h"
#include "xacc.h"
SQLITE_EXTENSION_INIT3

int ga_cdist_takes(const ga_centry *e, const ga_cquery *q, char *why,
                   size_t nwhy) {
  for (int i = 0; i < q->nvals; i++)
    if (q->dist[i] && q->dist[i] - 1 != GA_COLL_BINARY && q->vdict[i] &&
        e->enc != SQLITE_UTF8) { /* rule 4 */
      snprintf(why, nwhy,
               "DISTINCT under NOCASE or RTRIM on TEXT of a UTF-16 database "
               "(SQLite compares it in UTF-8)");
      return 0;
    }
  return 1;
}

int ga_cdist_step(ga_gstate *st, int dist, int cls, uint64_t v,
                  const ga_dict *d, int64_t piece, int64_t *bytes) {
  ga_value raw;
  memset(&raw, 0, sizeof(raw));
  if (cls == GA_IDR_NULL) {
    raw.type = GA_V_NULL;
  } else if (d && dist - 1 == GA_COLL_BINARY) { /* rule 2: the code */
    raw.type = GA_V_INT;
    raw.i = (int64_t)v;
  } else if (d) { /* rule 2: the code's bytes */
    raw.type = GA_V_TEXT;
    ga_dict_value(d, (uint32_t)v, &raw.p, &raw.n);
  } else if (cls == GA_IDR_INT) {
    raw.type = GA_V_INT;
    raw.i = (int64_t)v;
  } else {
    raw.type = GA_V_REAL;
    raw.r = ga_bitsd((int64_t)v);
  }
  int64_t was = ga_dset_bytes(st->set);
  int rc = ga_distinct_step(st, dist - 1, &raw, piece, NULL);
  *bytes += ga_dset_bytes(st->set) - was;
  return rc;
}

int ga_cdist_charge(int64_t *shared, int64_t delta, int64_t cap) {
  int64_t now = __atomic_add_fetch(shared, delta, __ATOMIC_RELAXED);
  return cap > 0 && now > cap;
}
