/*
** dset.h — the values of one DISTINCT aggregate in one group (gpu_query's
** count/sum/total/avg(DISTINCT e), issue 37): a hash set of the distinct
** non-NULL values, each with its representative and the rowid piece it
** came from, that merges exactly in any order.
**
** Rules:
**   1. Distinctness is SQLite's for a DISTINCT aggregate (its ephemeral
**      index over the argument, keyed with the argument's collation): the
**      caller's eq and hash (engine/scan/scan_group.h rule 1: INTEGER and
**      REAL by exact value, so 1 and 1.0 are one value; TEXT under the
**      argument's collation; BLOB by memcmp; TEXT never equals BLOB or a
**      number).  NULL is never added.
**   2. Among equal values the representative is the one first in rowid
**      order, which decides typeof (sum(DISTINCT v) over 1.0, 1 is 1.0):
**      every entry carries the piece it came from (its tag), an add or a
**      merge replaces an entry only by one of an earlier piece, and rows of
**      one piece arrive in rowid order (the first stays).
**   3. The answer is the aggregate over the representatives: their sum's
**      classification (num: what sum() makes of the value, INTEGER or REAL)
**      is kept beside the value and stepped into a fresh exact state when
**      a result is asked for (engine/state/gstate.c), so count, sum, total
**      and avg are those of the gpu_ aggregates over the distinct values,
**      in any order (the exact sum is order-free).
**   4. Memory: GA_DSET_ENTRY_BYTES (64) a slot, and the slots grow by
**      doubling at 3/4 full, so at least 3/8 of them hold a value: at most
**      171 bytes a distinct value, plus the bytes of a TEXT or BLOB longer
**      than GA_BVAL_INLINE (15), all in ga_dset_bytes, which the scan
**      charges to group_bytes.
**   5. Interrupts: a loop over a set's slots (a merge here, the results
**      of engine/state/gstate.c) is as long as the input, so it polls this
**      thread's poll (ga_dset_poll_swap; none: no poll) every
**      GA_DSET_POLL_EVERY slots and stops with GA_INTERRUPTED where the
**      poll says so.  A merge so stopped leaves *into with some of later's
**      entries (each whole): the caller fails the call and reads it no
**      more.  Growing (a rehash, amortised over the adds) and freeing do
**      not stop.
**   6. Medians and percentiles (issue 39): a state that keeps every value
**      of its group holds them in pct (engine/reduce/pct.h), unordered, and
**      no entries; a merge appends later's values, its bytes are counted
**      with the set's (rule 4).  The order of the values never matters:
**      the answer is a selection over all of them.  A GPU entry's group
**      may hold only the order statistics its answers read (pct.c rule
**      7, their ranks counted too): such a set is a whole group's alone
**      and never merges (GA_PCT_BAD: the GPU entry's groups are distinct
**      keys, so no caller meets it).
*/
#ifndef GA_DSET_H
#define GA_DSET_H

#include <stddef.h>
#include <stdint.h>

#include "bestval.h"
#include "pct.h"
#include "value.h"

/* Equality of two non-NULL values under collation coll (rule 1). */
typedef int (*ga_dset_eq_fn)(const ga_value *a, const ga_value *b, int coll);

typedef struct ga_dent {
  ga_bval raw;   /* the representative, GA_V_NULL: an empty slot */
  int64_t tag;   /* its rowid piece (rule 2) */
  int num_type;  /* GA_V_INT or GA_V_REAL: sum()'s view of raw */
  int64_t num_i; /* num's value: the integer, or the REAL's bits */
} ga_dent;

/* A slot: its entry and its hash (probing reads the hashes, 8 bytes a
** slot, and an entry only where the hash matches). */
#define GA_DSET_ENTRY_BYTES ((int64_t)(sizeof(ga_dent) + sizeof(uint64_t)))

typedef struct ga_dset {
  ga_dent *e;
  uint64_t *hs;  /* per slot: its entry's hash | 1, 0 when empty (e's block) */
  size_t n, cap; /* cap: 0 or a power of 2 */
  int coll;
  ga_dset_eq_fn eq;
  int64_t text_bytes; /* TEXT and BLOB bytes held outside the slots */
  /* rule 6: a median's or percentile's values (gpu_query, issue 39): a
  ** state of such a value keeps them here, and no entries */
  ga_pct pct;
} ga_dset;

/* *ps (made when NULL, with coll and eq) gets raw (non-NULL, hash h) of
** piece tag: added when new, the representative replaced when tag comes
** before its own.  *slot (may be NULL): the entry when raw was added or
** became the representative (the caller then sets its num: ga_dset_set_num),
** else NULL.  GA_OK or GA_NOMEM. */
int ga_dset_add(ga_dset **ps, int coll, ga_dset_eq_fn eq, const ga_value *raw,
                uint64_t h, int64_t tag, ga_dent **slot);
/* num (GA_V_INT or GA_V_REAL) as e's sum classification. */
void ga_dset_set_num(ga_dent *e, const ga_value *num);
/* *into += every entry of later (rule 2 by the tags; later unchanged).
** GA_OK, GA_NOMEM, GA_INTERRUPTED (rule 5), or GA_PCT_BAD (rule 6). */
int ga_dset_merge(ga_dset **into, const ga_dset *later);
/* Rule 5: this thread's poll of the long loops.  stop(arg) non-zero: stop;
** polls counts the calls (tests assert on it). */
typedef struct ga_dset_poll {
  int (*stop)(void *arg);
  void *arg;
  int64_t polls;
} ga_dset_poll;
#define GA_DSET_POLL_EVERY 4096 /* slots between two polls (a power of 2) */
/* This thread's poll := p (NULL: none); the one before is returned, for
** the caller to put back. */
ga_dset_poll *ga_dset_poll_swap(ga_dset_poll *p);
/* Rule 5 at slot i of a loop: 1 when the poll (every GA_DSET_POLL_EVERY
** slots) says stop. */
int ga_dset_stop_at(size_t i);
/* Rule 6: y (finite) into the values of *ps (made when NULL).  GA_OK or
** GA_NOMEM. */
int ga_dset_pct_push(ga_dset **ps, double y);
/* Heap bytes of s (rule 4; rule 6's values, 8 each), 0 for NULL. */
int64_t ga_dset_bytes(const ga_dset *s);
void ga_dset_free(ga_dset *s);

#endif
