/*
** cache_upload.c — a host entry's columns copied to the device, making it
** a GPU entry (cache_file.h, ga_cfile_to_gpu): how a GPU entry comes from a
** cache file, or is written to one (ext/cache/cache_persist.c rule 1).
**
** Rules:
**   1. The rows go in rowid order through one pinned staging block of
**      GA_CUP_ROWS rows (a multiple of 64, so a slice of a segment starts on
**      a bitmap word), with the load's own placement (cache_gpu.c: the
**      bitmaps' partial words carried over at each block's row offset); a
**      slice's last bitmap word is masked to its rows, so no bit past them
**      is carried into the next block's rows.
**   2. The device arrays are reserved in the budget (evicting others, never
**      this entry) before they are allocated; the host segments (or the
**      mapping) are freed, and their bytes given back, only once every copy
**      completed.  A failure leaves the host entry as it was.
**   3. The TEXT dictionaries stay in host memory, as a GPU load's do
**      (cache.h rule 1): codes are the same words on the device.
**   4. ga_cgpu_place_entry is rule 1's loop alone, placing a host entry's
**      rows after the rows already placed: a cache file's entry from row 0,
**      an extension's new rows after a GPU entry's (cache_append.h rule 5).
*/
#include <stdio.h>
#include <string.h>

#include "cache_file.h"
#include "cache_gpu.h"
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#define GA_CUP_ROWS ((int64_t)1 << 20)

/* Rule 1: rows [r0, r0 + m) of segment b into staging block st. */
static void slice(const ga_cblock *b, int64_t r0, int64_t m, ga_cblock *st) {
  int64_t nw = GA_BW(m);
  uint64_t last = (m & 63) ? ((uint64_t)1 << (m & 63)) - 1 : ~(uint64_t)0;
  st->n = m;
  for (int c = 0; c < b->ncols; c++) {
    memcpy(ga_cb_vals(st, c), ga_cb_vals(b, c) + r0, (size_t)m * 8);
    uint64_t *si = ga_cb_isint(st, c), *sn = ga_cb_notnull(st, c);
    memcpy(si, ga_cb_isint(b, c) + (r0 >> 6), (size_t)nw * 8);
    memcpy(sn, ga_cb_notnull(b, c) + (r0 >> 6), (size_t)nw * 8);
    si[nw - 1] &= last;
    sn[nw - 1] &= last;
  }
}

int ga_cgpu_place_entry(ga_cgpu *g, const ga_centry *x, int (*stop)(void *),
                        void *arg, char *why, size_t nwhy) {
  if (x->where != GA_CACHE_HOST) {
    snprintf(why, nwhy, "not a host entry");
    return GA_CLOAD_EFAIL;
  }
  if (x->rows < 1)
    return GA_OK;
  ga_cblock *st = ga_cb_new(
      x->ncols, x->rows < GA_CUP_ROWS ? GA_BW(x->rows) * 64 : GA_CUP_ROWS, 1);
  if (!st) {
    snprintf(why, nwhy, "no pinned host memory for the copy");
    return GA_NOMEM;
  }
  int rc = GA_OK;
  int64_t at = ga_cgpu_rows(g);
  for (int64_t s = 0; rc == GA_OK && s < x->nsegs; s++) {
    const ga_cblock *b = x->segs[s];
    for (int64_t r0 = 0; rc == GA_OK && r0 < b->n; r0 += st->cap) {
      if (stop && stop(arg)) {
        snprintf(why, nwhy, "interrupted");
        rc = GA_CLOAD_EFAIL;
        break;
      }
      int64_t m = b->n - r0 < st->cap ? b->n - r0 : st->cap;
      slice(b, r0, m, st);
      rc = ga_cgpu_place(g, st, at);
      if (rc == GA_OK)
        rc = ga_cgpu_sync(g); /* st is rewritten next */
      if (rc != GA_OK)
        snprintf(why, nwhy, "%s", ga_cgpu_why(g));
      at += m;
    }
  }
  ga_cb_free(st);
  return rc;
}

int ga_cfile_to_gpu(ga_cache *c, ga_centry *e, int64_t budget,
                    int (*stop)(void *), void *arg, char *why, size_t nwhy) {
  if (e->where != GA_CACHE_HOST || e->rows < 1) {
    snprintf(why, nwhy, "not a host entry with rows");
    return GA_CFILE_BAD;
  }
  int64_t need = ga_cache_gpu_bytes(e->ncols, e->rows);
  if (!ga_cache_reserve(c, budget, need, e)) {
    snprintf(why, nwhy,
             "%lld bytes of GPU memory do not fit in the budget "
             "(cache_bytes = %lld)",
             (long long)need, (long long)budget);
    return GA_CFILE_BUDGET;
  }
  ga_cgpu *g = NULL;
  int rc = ga_cgpu_begin(&g, e->ncols, e->rows, why, nwhy);
  if (rc == GA_OK)
    rc = ga_cgpu_place_entry(g, e, stop, arg, why, nwhy);
  int64_t at = rc == GA_OK ? ga_cgpu_rows(g) : 0;
  int64_t freed = 0;
  if (rc == GA_OK && ga_cgpu_finish(g, e, at, &freed) != GA_OK) {
    snprintf(why, nwhy, "%s", ga_cgpu_why(g));
    rc = GA_CLOAD_EFAIL;
  }
  ga_cgpu_free(g); /* on success its arrays are e's */
  if (rc != GA_OK) {
    pthread_mutex_lock(&c->mu);
    c->used -= need;
    pthread_mutex_unlock(&c->mu);
    return rc == GA_NOMEM ? GA_CFILE_NOMEM : GA_CFILE_BAD;
  }
  /* rule 2: the host copy goes now */
  int64_t host = 0;
  for (int64_t s = 0; s < e->nsegs; s++) {
    host += e->segs[s]->bytes;
    ga_cb_free(e->segs[s]);
  }
  sqlite3_free(e->segs);
  sqlite3_free(e->seg_base);
  e->segs = NULL;
  e->seg_base = NULL;
  e->nsegs = 0;
  if (e->free_map)
    e->free_map(e);
  e->free_map = NULL;
  e->where = GA_CACHE_GPU;
  pthread_mutex_lock(&c->mu);
  c->used -= host + freed;
  e->bytes += need - host - freed;
  pthread_mutex_unlock(&c->mu);
  return GA_CFILE_OK;
}
