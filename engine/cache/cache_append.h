/*
** cache_append.h — an entry extended by rows appended to its table (issue
** 40, part 4): the record of the table's pages that a proof of "appends
** only" needs (planner/cache_extend.c keeps it current), and the data side
** of an extension: the rows re-read from the b-tree's last leaves compared
** with the entry's last rows, and the new rows' blocks appended to a host
*entry,
** its dictionaries grown.
**
** Rules (cache_append.c keeps them):
**   1. The page record is a superset of the pages that hold rows of the
**      entry's leaves (its leaf pages, read from the b-tree's interior
**      pages at the load, and every page a proven extension wrote that may
**      hold a table's rows; overflow pages of the rows at the load are not
**      in it: planner/cache_extend.c rule 4 reads those pages' versions):
**      a page may only be added, never removed, so the proof that
**      no later frame writes one of them (but the last leaves) can only
**      fail more often, never pass wrongly.
**   2. The tail leaves (tail: the last GA_CAPPEND_TAIL children, or fewer,
**      of the b-tree's right-most bottom interior page, or the root when it
**      is a leaf) held exactly the kr rows with rowid > lmax (lmax: the
**      largest rowid of any other row; has_lmax 0: none), checked on the
**      pages themselves when they were recorded; maxrowid the largest
**      rowid of the entry.  A balance caused by appends at the right edge
**      rewrites at most the last three children of that interior page
**      (SQLite balances a page with at most two siblings of the same
**      parent), so those are the pages the frames may write.
**   3. An extension is applied only to an entry no other caller holds
**      (engine/cache/cache.c ga_cache_unlink_sole): out of the list while
**      it grows, so no query reads a half-grown entry and no reader whose
**      snapshot is the old state is answered with the new rows.
**   4. ga_cappend_merge checks everything that can refuse (types, mixed
**      columns, a read-only mapped block that a code remap would write,
**      memory) before it changes the entry: a refusal leaves it as it was.
*/
#ifndef GA_CACHE_APPEND_H
#define GA_CACHE_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

#define GA_CAPPEND_TAIL 3

typedef struct ga_cappend {
  uint32_t pgsz;
  uint32_t nbits; /* pages has room for page numbers below nbits */
  uint64_t *pages;
  uint32_t tail[GA_CAPPEND_TAIL];
  int ntail;
  int64_t kr;
  int has_lmax;
  int64_t lmax, maxrowid;
  char rowid[8];   /* the name that reads the rowid: rowid, _rowid_, oid */
  int64_t appends; /* rows appended so far, over every extension */
  int64_t extends; /* extensions */
} ga_cappend;

ga_cappend *ga_cappend_new(void);
void ga_cappend_free(ga_cappend *a);
/* Rule 1. */
int ga_cappend_has(const ga_cappend *a, uint32_t pg);
/* GA_OK or GA_NOMEM. */
int ga_cappend_add(ga_cappend *a, uint32_t pg);
/* Rule 2: pg is one of the tail leaves. */
int ga_cappend_in_tail(const ga_cappend *a, uint32_t pg);

/* The entry's last r->rows rows hold r's values (every column: the same
** NULLs, types and words; TEXT by value through both dictionaries)? 1, or
** 0 with why. */
int ga_cappend_same_tail(const ga_centry *e, const ga_centry *r, char *why,
                         size_t nwhy);

/* Append x's rows (a host entry of the same columns, loaded from the rows
** after e's last) to host entry e (rule 3: e is the caller's alone); x's
** blocks move into e (x keeps its bytes in `used` until the caller frees
** it: *moved is what e now holds of them), each TEXT column's dictionary
** becomes the union (codes rewritten where a new value sorts before an old
** one).  *more: the bytes e grew by besides the moved blocks (its
** dictionaries), which the caller has reserved through reserve(arg, n)
** (0: granted).  GA_OK; GA_NOMEM; GA_CACHE_DECLINED with why (rule 4: e
** unchanged). */
int ga_cappend_merge(ga_centry *e, ga_centry *x,
                     int (*reserve)(void *arg, int64_t n), void *arg,
                     int64_t *moved, int64_t *more, char *why, size_t nwhy);

#endif
