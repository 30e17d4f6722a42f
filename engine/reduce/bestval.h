/*
** bestval.h — owned values for max/min: comparison in max()'s order, and
** the monotonic queue that lets a window frame slide in O(1) amortised.
*/
#ifndef GA_BESTVAL_H
#define GA_BESTVAL_H

#include <stdint.h>

#include "value.h"

/* An owned copy of a ga_value (text and blob bytes copied).  TEXT and
** BLOB of at most GA_BVAL_INLINE bytes live in the bval itself (p NULL):
** a group's keys (flags, modes, ISO dates) then cost no allocation, which
** in a scan's hot loop goes through SQLite's global allocator mutex.  Read
** the bytes through ga_bval_view: the bval may have moved since it was
** set. */
#define GA_BVAL_INLINE 15
typedef struct ga_bval {
  int type, n;
  union {
    struct {
      int64_t i;
      double r;
    };
    char small[GA_BVAL_INLINE + 1]; /* with a terminating 0 */
  };
  void *p;
} ga_bval;

/* max()'s order: NULL < numbers (exact across INTEGER/REAL) < TEXT (memcmp)
** < BLOB (memcmp).  Returns <0, 0, >0. */
int ga_value_cmp(const ga_value *a, const ga_value *b);
int ga_bval_set(ga_bval *dst, const ga_value *src); /* GA_OK or GA_NOMEM */
void ga_bval_clear(ga_bval *b);
/* The value of b (out->p points into b or its copy). */
static inline void ga_bval_view(const ga_bval *b, ga_value *out) {
  out->type = b->type;
  out->n = b->n;
  if ((b->type == GA_V_TEXT || b->type == GA_V_BLOB) && !b->p) {
    out->i = 0;
    out->r = 0;
    out->p = b->small;
  } else {
    out->i = b->i;
    out->r = b->r;
    out->p = b->p;
  }
}

/* Monotonic deque of a sliding frame's candidates: values are pushed at the
** back after popping every strictly worse one, so the front is the frame's
** best and equal values keep their order (the first seen wins).  A row that
** leaves the frame is the oldest; it is still queued only if it equals the
** front, which is how ga_deque_leave finds it without row numbers. */
typedef struct ga_deque {
  ga_bval *v;
  int64_t head, len, cap;
} ga_deque;
int ga_deque_push(ga_deque *d, const ga_value *x, int want_min);
void ga_deque_leave(ga_deque *d, const ga_value *x);
const ga_bval *ga_deque_front(const ga_deque *d);
void ga_deque_free(ga_deque *d);

#endif
