/*
** cache_gpu.h — a GPU load's device arrays (cache_gpu.c), used by
** cache_load.c: the arrays of every column, grown as rows arrive, and the
** copies of staged blocks into them at their row offsets.
*/
#ifndef GA_CACHE_GPU_H
#define GA_CACHE_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

typedef struct ga_cgpu ga_cgpu;

/* Device bytes of ncols columns of cap rows (values and both bitmaps). */
int64_t ga_cache_gpu_bytes(int ncols, int64_t cap);

/* Arrays for cap rows on the cache's device (the first usable one), and a
** stream.  These return GA_OK, GA_NOMEM (host memory), or GA_CLOAD_EFAIL
** (a GPU step; ga_cgpu_why says which). */
int ga_cgpu_begin(ga_cgpu **out, int ncols, int64_t cap, char *why,
                  size_t nwhy);
int64_t ga_cgpu_cap(const ga_cgpu *g);
/* Larger arrays holding what was placed (waits for the copies first). */
int ga_cgpu_grow(ga_cgpu *g, int64_t cap);
/* Queue the copies of block b's rows to rows [at, at + b->n); blocks are
** placed in row order (the bitmaps' partial words carry over). */
int ga_cgpu_place(ga_cgpu *g, ga_cblock *b, int64_t at);
/* Wait for every queued copy: GA_OK or GA_CLOAD_EFAIL. */
int ga_cgpu_sync(ga_cgpu *g);
/* A TEXT column's placed rows: each word w with a value becomes map[w]
** (map: nmap entries, the load ids' codes; cache_load.c rule 7).  Waits
** for the copies first and for the remap.  GA_OK or GA_CLOAD_EFAIL. */
int ga_cgpu_remap(ga_cgpu *g, int col, const uint32_t *map, int64_t nmap);
/* Hand the arrays of `rows` rows to e (e->cols[c].d_*, e->dev), shrinking
** them when much is unused (*freed: the bytes given back). */
int ga_cgpu_finish(ga_cgpu *g, ga_centry *e, int64_t rows, int64_t *freed);
/* Rows placed so far. */
int64_t ga_cgpu_rows(const ga_cgpu *g);
/* An extension (cache_gpu.c rule 5): g takes GPU entry e's arrays (e's
** d_* become NULL) as a load that placed e->rows rows into e->d_cap, its
** bitmaps' partial words carried; ga_cgpu_grow, ga_cgpu_place and
** ga_cgpu_finish then work as for a load.  GA_OK, GA_NOMEM or
** GA_CLOAD_EFAIL (e keeps its arrays; free g with ga_cgpu_abort). */
int ga_cgpu_adopt(ga_cgpu **out, ga_centry *e, char *why, size_t nwhy);
/* Every row of host entry x placed after the rows placed, through a
** pinned staging block (cache_upload.c rule 1); stop(arg) polled between
** blocks.  GA_OK, GA_NOMEM or GA_CLOAD_EFAIL (why). */
int ga_cgpu_place_entry(ga_cgpu *g, const ga_centry *x, int (*stop)(void *),
                        void *arg, char *why, size_t nwhy);
/* Rows [r0, r0 + n) of GPU entry e into host block b (cap >= n, e's
** columns), its bitmaps from row 0 (cache_gpu.c rule 6).  GA_OK, GA_NOMEM
** or GA_CLOAD_EFAIL (why). */
int ga_cache_gpu_fetch(const ga_centry *e, int64_t r0, int64_t n, ga_cblock *b,
                       char *why, size_t nwhy);
/* Forget every column's group dictionary (cache_gpu.c rule 7); the bytes
** e->bytes counted for them (the caller takes them off). */
int64_t ga_cache_gpu_forget_dicts(ga_centry *e);
/* Free g and whatever arrays it still owns. */
void ga_cgpu_abort(ga_cgpu *g);
#define ga_cgpu_free ga_cgpu_abort
/* Why the last step failed. */
const char *ga_cgpu_why(const ga_cgpu *g);

#endif
