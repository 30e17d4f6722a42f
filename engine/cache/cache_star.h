/*
** cache_star.h — a star (or snowflake) join answered from host entries
** (cache_star.c; issue 38 §3.2): each dimension's entry filtered by its
** own conditions into a lookup from its key to its row, the fact's entry
** probed a word of rows at a time, and the rows that find every dimension
** written, with the columns the query reads (the fact's and the
** dimensions'), into a join entry: an entry like any other, which
** cache_host.c then answers as one table's (planner/cache_join.c).
*/
#ifndef GA_CACHE_STAR_H
#define GA_CACHE_STAR_H

#include "cache.h"

/* Dimensions of one join, at most; columns of one key, at most. */
#define GA_CSTAR_MAX 8
#define GA_CSTAR_KEYS 4

typedef struct ga_cstar_dim {
  const ga_centry *e;      /* the dimension's host entry */
  const ga_cquery *filter; /* its own conditions; NULL: every row */
  int parent;              /* -1: the fact; else the dimension's index */
  int left;                /* LEFT JOIN: a miss keeps the row, NULLs */
  int nkeys;               /* the key's columns (a composite key: 2..4) */
  int pcol[GA_CSTAR_KEYS]; /* the key's columns in the parent's entry */
  int kcol[GA_CSTAR_KEYS]; /* the key's columns in this entry */
  /* a TEXT key column's codes -> the key's id (rule 1's TEXT keys; -1:
  ** matches nothing), the parent's and this entry's; NULL: numbers */
  const int64_t *pmap[GA_CSTAR_KEYS], *kmap[GA_CSTAR_KEYS];
  int64_t npmap[GA_CSTAR_KEYS], nkmap[GA_CSTAR_KEYS];
  /* built (ga_cstar_build) */
  int dense; /* 1: an array over [base, base + span) */
  int64_t base, span;
  int32_t *slot; /* dense: span rows (-1: none); hash: rows */
  int64_t *hkey; /* hash: the slots' keys, nkeys a slot */
  uint64_t hmask;
  int32_t *via; /* parent a dimension: its row -> this row */
  /* several rows of one key (rule 2's one multi-match dimension): the
  ** lookup gives a slot, its rows list[start[slot] .. start[slot + 1]) in
  ** rowid order */
  int multi;
  int32_t *start, *list;
  char dup[256]; /* why a second multi-match dimension declines */
  int64_t keys;  /* rows in the lookup */
  int64_t bytes; /* the lookup's bytes (charged) */
  double ms;
} ga_cstar_dim;

/* A column of the join entry: column col of the fact (tab -1) or of
** dimension tab. */
typedef struct ga_cstar_col {
  int tab, col;
} ga_cstar_col;

typedef struct ga_cstar {
  const ga_centry *fact;
  const ga_cquery *ffilter; /* the fact's own conditions; NULL: none */
  int ndims;
  ga_cstar_dim dims[GA_CSTAR_MAX];
  int ncols;
  ga_cstar_col cols[GA_CACHE_MAX_COLS];
  int threads;
  int64_t cap;  /* group_bytes: the lookups and the join entry's rows */
  int64_t used; /* charged so far */
  int multi;    /* the dimension with several rows of a key, -1 */
  int (*interrupted)(void *arg);
  void *interrupted_arg;
  /* the probe's counts, for last_scan */
  int64_t probed, matched;
  double build_ms, probe_ms;
} ga_cstar;

/* Build every dimension's lookup, leaves first.  GA_OK; GA_NOMEM;
** GA_SCAN_INTERRUPT; GA_CACHE_DECLINED with why (a key that is no number,
** two rows of one key, past cap). */
int ga_cstar_build(ga_cstar *s, char *why, size_t nwhy);
/* Probe the fact's rows into *out, a join entry (rows in the fact's rowid
** order; its columns s->cols, named names[k]); same results.  Free it
** with ga_cstar_entry_free. */
int ga_cstar_probe(ga_cstar *s, const char *const *names, ga_centry *out,
                   char *why, size_t nwhy);
void ga_cstar_entry_free(ga_centry *out);
void ga_cstar_free(ga_cstar *s);
/* Row r's value of column c of host entry e (v, isint, notnull); rows are
** walked in order by the callers: *seg is the segment hint (cache_gpu_star.c
** reads the dimensions' columns through it too). */
void ga_cstar_value_at(const ga_centry *e, int c, int64_t r, int64_t *seg,
                       uint64_t *v, int *isint, int *notnull);

#endif
