/*
** idrows.h — rows tagged with a group id, kept in arrival order and sorted
** by id, stably (cache_host.c rule 9: many groups over a dense key space).
**
** Rules:
**   1. A record is `stride` words: word 0 holds the id (low 32 bits) and
**      two bits a value (high 32: 0 NULL, 1 INTEGER, 2 REAL; so at most
**      GA_IDR_MAX_VALS values), then one word a value (its bits).
**   2. The sort is a least-significant-digit radix sort on the id, GA_IDR_BITS
**      bits a pass: stable, so a group's rows stay in arrival (row) order,
**      and every pass reads and writes the records once, in order, where a
**      step into each row's group waits for a cache miss or three.
**   3. Memory: room for the most records the caller can push (a run's
**      rows), at most GA_IDR_MAX_BYTES, is mapped at the first push
**      (engine/core/bigmem.h: pages cost only once written), and the sort
**      maps a second buffer of what is used; past that room the caller
**      declines (GA_IDR_FULL).
*/
#ifndef GA_IDROWS_H
#define GA_IDROWS_H

#include <stddef.h>
#include <stdint.h>

#define GA_IDR_MAX_VALS 16
#define GA_IDR_BITS 11
#define GA_IDR_MAX_BYTES ((int64_t)1 << 30)

#define GA_IDR_NULL 0
#define GA_IDR_INT 1
#define GA_IDR_REAL 2

typedef struct ga_idrows {
  uint64_t *rec;
  int64_t n, cap; /* records held, and room */
  int64_t most;   /* room to map at the first push */
  size_t bytes;   /* mapped at rec */
  int stride;     /* words a record: 1 + values */
} ga_idrows;

/* Empty, for records of nvals values, at most `most` of them. */
void ga_idrows_init(ga_idrows *r, int nvals, int64_t most);
void ga_idrows_free(ga_idrows *r);
/* Room for one more record: GA_OK, GA_NOMEM, or GA_IDR_FULL (rule 3). */
#define GA_IDR_FULL 2
int ga_idrows_reserve(ga_idrows *r);
/* The next record's words (after ga_idrows_reserve). */
static inline uint64_t *ga_idrows_push(ga_idrows *r) {
  return r->rec + (r->n++) * r->stride;
}
static inline uint32_t ga_idrows_id(const ga_idrows *r, int64_t i) {
  return (uint32_t)r->rec[i * r->stride];
}
/* Sort by id, ids below `ids` (rule 2).  GA_OK or GA_NOMEM (unsorted). */
int ga_idrows_sort(ga_idrows *r, int64_t ids);
/* The first record whose id is at least id (r sorted). */
int64_t ga_idrows_lower(const ga_idrows *r, int64_t id);

#endif
