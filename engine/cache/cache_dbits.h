/*
** cache_dbits.h — DISTINCT values of a host entry kept as bitmaps, one bit
** per (group id, value) pair (cache_dbits.c says when, and why it is
** exact).  cache_host.c plans them, sets bits in its row loop, and fills
** the groups' states once the runs are done.
*/
#ifndef GA_CACHE_DBITS_H
#define GA_CACHE_DBITS_H

#include <stdint.h>

#include "cache.h"

/* The largest bitmap block a run may hold (every bitmap value's bits). */
#define GA_CDBITS_RUN_BYTES ((int64_t)32 << 20)
/* ... and at most this many bits a row of the entry, plus
** GA_CDBITS_FREE_BITS: a bitmap's zeroing, merge and count stay within
** a small multiple of reading the column (cache_dbits.c rule 3). */
#define GA_CDBITS_BITS_PER_ROW 16
#define GA_CDBITS_FREE_BITS ((int64_t)1 << 23)

typedef struct ga_cdbits {
  int nvals, non;                    /* the query's values; those on bitmaps */
  unsigned char on[GA_MAX_STATES];   /* 1: value i sets bits (rule 1) */
  unsigned char text[GA_MAX_STATES]; /* 1: its words are BINARY codes */
  int64_t lo[GA_MAX_STATES];         /* the value of bit 0 of an id's span */
  int64_t range[GA_MAX_STATES];      /* values lo .. lo + range - 1 */
  int64_t span[GA_MAX_STATES];       /* bits a group id, a multiple of 64 */
  int64_t off[GA_MAX_STATES];        /* its first word in a run's block */
  int64_t ids;    /* group ids (1: ungrouped, or keys that are constants) */
  int keyed;      /* ids are cache_host.c rule 8 ids (else one group) */
  int64_t nwords; /* a run's block, in words */
  int nruns;
  uint64_t **run; /* per run: its block of nwords, zeroed */
} ga_cdbits;

/* Plan q's DISTINCT values on e (rule 1): ids is cache_host.c's dense id
** space (0: none; an ungrouped query is one id), threads the runs, and
** *charged (the shared tally of the sets' bytes) takes every block's
** bytes.  Returns the number of values on bitmaps (0: b holds nothing),
** or -1 when out of memory. */
int ga_cdbits_plan(ga_cdbits *b, const ga_centry *e, const ga_cquery *q,
                   int64_t ids, int threads, int64_t *charged);

/* Run `run`'s row of group id: value i's word v (not NULL) sets its bit.
** 0, or 1 when v lies outside the column's range (never: rule 1). */
static inline int ga_cdbits_set(const ga_cdbits *b, int run, int i, int64_t id,
                                uint64_t v) {
  uint64_t d = v - (uint64_t)b->lo[i];
  if (d >= (uint64_t)b->range[i])
    return 1;
  uint64_t bit = (uint64_t)id * (uint64_t)b->span[i] + d;
  b->run[run][b->off[i] + (int64_t)(bit >> 6)] |= 1ull << (bit & 63);
  return 0;
}

/* Rule 2: every run's block ORed into run 0's, then each listed group's
** bitmap states filled from its id's bits (keys: rule 8 ids of card and
** base, cache_host.c).  GA_OK or GA_NOMEM.  Polls nothing: its work is
** bounded by rule 3. */
int ga_cdbits_fill(ga_cdbits *b, const ga_cquery *q, const int64_t *card,
                   const int64_t *base, ga_group **groups, size_t n);

void ga_cdbits_free(ga_cdbits *b);

#endif
