/*
** cache_dbits.h — DISTINCT values of a host entry kept as bitmaps, one bit
** per (group, value) pair (cache_dbits.c says when, and why it is exact).
** cache_host.c plans them, sets bits in its row loop, hands each run's
** groups over, and fills the groups' states once the runs are done.
*/
#ifndef GA_CACHE_DBITS_H
#define GA_CACHE_DBITS_H

#include <stdint.h>

#include "cache.h"
#include "scan_group.h"

/* The largest bitmap block a run may hold (every bitmap value's bits). */
#define GA_CDBITS_RUN_BYTES ((int64_t)32 << 20)
/* ... and at most this many bits a row of the entry, plus
** GA_CDBITS_FREE_BITS: a bitmap's zeroing, merge and count stay within
** a small multiple of reading the column (cache_dbits.c rule 3). */
#define GA_CDBITS_BITS_PER_ROW 16
#define GA_CDBITS_FREE_BITS ((int64_t)1 << 23)

/* A hashed run's group with a row (rule 4): its key tuple and hash. */
typedef struct ga_cdbits_rec {
  uint64_t hash;
  ga_bval key[GA_MAX_KEYS];
} ga_cdbits_rec;

typedef struct ga_cdbits_run {
  uint64_t *w;        /* rows x stride words, zeroed */
  int64_t rows, cap;  /* rows in use, and allocated */
  ga_cdbits_rec *rec; /* hashed: row r's group (ga_cdbits_run_end) */
  int fell;           /* hashed: a group of this run took the sets */
} ga_cdbits_run;

typedef struct ga_cdbits {
  int nvals, non;                    /* the query's values; those on bitmaps */
  unsigned char on[GA_MAX_STATES];   /* 1: value i sets bits (rule 1) */
  unsigned char text[GA_MAX_STATES]; /* 1: its words are BINARY codes */
  int64_t lo[GA_MAX_STATES];         /* the value of its bit 0 */
  int64_t range[GA_MAX_STATES];      /* values lo .. lo + range - 1 */
  int64_t span[GA_MAX_STATES];       /* its bits a row, a multiple of 64 */
  int64_t off[GA_MAX_STATES];        /* its first word in a row */
  int64_t stride;                    /* words a row (a group) */
  int keyed;                         /* rows are cache_host.c rule 8's ids */
  int hashed;         /* rows are made as a run meets its groups (rule 4) */
  int home;           /* hashed: the value whose state's count holds the row */
  ga_gshape shape;    /* hashed: the keys' (BINARY: codes and numbers) */
  int64_t most_bytes; /* a run's block at most (rule 3) */
  int64_t *charged;   /* the shared tally of the sets' bytes, and its cap */
  int64_t cap;
  int nruns;
  ga_cdbits_run *run;
} ga_cdbits;

/* Plan q's DISTINCT values on e (rule 1): ids is cache_host.c's dense id
** space (0: none), threads the runs, and *charged (the shared tally of
** the sets' bytes) takes every block's bytes.  Returns the number of
** values on bitmaps (0: b holds nothing), or -1 when out of memory. */
int ga_cdbits_plan(ga_cdbits *b, const ga_centry *e, const ga_cquery *q,
                   int64_t ids, int threads, int64_t *charged);

/* Rule 4: a new group's row in run `run` (its home state's count := row
** + 1), or -1 when the block may not grow (count := -1: the group's
** values take the sets in this run). */
int64_t ga_cdbits_new_row(const ga_cdbits *b, int run, ga_gstate *home);

/* The row of a group of run `run` whose first value state is home: its
** dense id (keyed, or 0), else its row (made at its first row), or -1 (its
** values take the sets: rule 4). */
static inline int64_t ga_cdbits_row(const ga_cdbits *b, int run, int64_t id,
                                    ga_gstate *home) {
  if (!b->hashed)
    return id;
  if (home->count > 0)
    return home->count - 1;
  return home->count < 0 ? -1 : ga_cdbits_new_row(b, run, home);
}

/* Run `run`'s row: value i's word v (not NULL) sets its bit.  0, or 1
** when v lies outside the column's range (never: rule 1). */
static inline int ga_cdbits_set(const ga_cdbits *b, int run, int i, int64_t row,
                                uint64_t v) {
  uint64_t d = v - (uint64_t)b->lo[i];
  if (d >= (uint64_t)b->range[i])
    return 1;
  b->run[run].w[row * b->stride + b->off[i] + (int64_t)(d >> 6)] |= 1ull
                                                                    << (d & 63);
  return 0;
}

/* Rule 4, before run `run` hands table t over: each group's key tuple
** recorded by its row, and its home count cleared.  GA_OK or GA_NOMEM. */
int ga_cdbits_run_end(const ga_cdbits *b, int run, ga_group_table *t);

/* Rule 2: the blocks united, then each listed group's bitmap states filled
** from its bits (keys: rule 8's ids of card and base, cache_host.c).
** GA_OK, GA_NOMEM, or GA_CDBITS_FULL when the sets that rule 4 fills pass the
*cap. */
#define GA_CDBITS_FULL 2
int ga_cdbits_fill(ga_cdbits *b, const ga_cquery *q, const int64_t *card,
                   const int64_t *base, ga_group **groups, size_t n);

/* GPUAGG_CACHE_PROFILE's word (rule 6), after the runs. */
const char *ga_cdbits_word(const ga_cdbits *b, int ndist);

void ga_cdbits_free(ga_cdbits *b);

#endif
