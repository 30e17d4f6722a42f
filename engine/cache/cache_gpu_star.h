/*
** cache_gpu_star.h — a star (or snowflake) join answered from a GPU entry
** of the fact table (cache_gpu_star.c; issue 38 section 3.3): the
** dimensions' lookups, built on the host by cache_star.c, go to device
** memory, one fused kernel a tile probes them and gathers the
** dimensions' columns (kernels/cache_star.cu), and the query runs over
** the joined rows as over one GPU entry's (cache_gpu_query.c), the join's
** rows its pre-selection.
*/
#ifndef GA_CACHE_GPU_STAR_H
#define GA_CACHE_GPU_STAR_H

#include "cache.h"
#include "cache_star.h"

/* One call's device arrays and counts. */
typedef struct ga_cgstar {
  ga_cache *c;
  ga_centry *fact;
  int dev, entered, prev;
  /* a top dimension: slots, keys, 4 maps; a gathered column: 3 */
  void *mem[6 * GA_CSTAR_MAX + 3 * GAK_CSTAR_COLS + 4];
  int nmem;
  uint64_t *d_sel;   /* the joined rows: bit i, fact row i */
  int64_t joined;    /* rows kept */
  int64_t dev_bytes; /* device bytes of the lookups, columns and bitmap */
  int64_t dim_bytes[GA_CSTAR_MAX]; /* each dimension's lookup, on the device */
  double probe_ms;
} ga_cgstar;

/* A host copy of GPU entry e (its columns and bitmaps, one block), for
** cache_star.c's build: *out, with *bytes its size.  GA_OK; GA_NOMEM;
** GA_SCAN_FALLBACK with why (a GPU step failed). */
int ga_cgstar_mirror(ga_cache *c, const ga_centry *e, ga_centry *out,
                     int64_t *bytes, char *why, size_t nwhy);
void ga_cgstar_mirror_free(ga_centry *out);

/* The probe of s's fact (a GPU entry; s built by ga_cstar_build) into
** *virt, a GPU entry of the fact's rows whose columns are s->cols (named
** names[k]): the fact's own device columns, and the dimensions' gathered;
** g->d_sel the rows that join.  GA_OK; GA_NOMEM; GA_CACHE_DECLINED with
** why (several rows a key, more than GAK_CSTAR_COLS dimension columns,
** past s->cap); GA_SCAN_FALLBACK with why (a GPU step failed). */
int ga_cgstar_probe(ga_cache *c, ga_cstar *s, const char *const *names,
                    ga_cgstar *g, ga_centry *virt, char *why, size_t nwhy);
/* q (shaped over *virt) answered from the GPU over the joined rows:
** ga_cache_query_gpu's results. */
int ga_cgstar_query(ga_cgstar *g, ga_centry *virt, ga_cquery *q,
                    ga_scan_out *out, char *why, size_t nwhy);
/* Free the call's device arrays; a group dictionary the query built on a
** fact column becomes the fact entry's (it is the column's own), one on a
** gathered column is freed. */
void ga_cgstar_free(ga_cgstar *g, ga_centry *virt);

#endif
