/*
** cache_append.h — an entry extended by rows appended to its table (issue
** 40, part 4): the record of the table's pages that a proof of "appends
** only" needs (planner/cache_extend.c keeps it current), and the data side
** of an extension: the rows re-read from the b-tree's last leaves compared
** with the entry's last rows, and the new rows' blocks appended to a host
** entry, or copied after a GPU entry's rows (rule 5), its dictionaries
** grown.
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
**   5. A GPU entry (session 7) extends under the same proof, its new rows
**      read the same way (a host entry x, charged to the GPU budget), with:
**      (a) the comparison of rule 2: its last kr rows read back from the
**          device (cache_gpu.c ga_cache_gpu_fetch);
**      (b) the new rows placed after the old ones as a load places its
**          blocks (cache_gpu.c rule 5): IN PLACE when the device columns
**          have room (ga_centry.d_cap), else into new columns of
**          ga_cappend_gpu_cap(rows) rows (need + need / 4, rounded up to
**          64) with the old rows copied device to device (never reloaded
**          from SQLite's rows);
**      (c) the headroom: none is made at a load beyond what a load leaves
**          (ga_cgpu_finish keeps up to a quarter + 65536 rows unused, in
**          the entry's bytes); only an extension that finds no room makes
**          it, so only a table extended before holds it.  Most cached
**          tables are never appended to, and room held for each of them
**          would take a quarter of the GPU budget from other entries; the
**          first extension's copy runs at device-to-device speed, far below
**          a reload, and the room then takes the next ~25% of appends in
**          place.  The room is in e->bytes (the whole allocation), charged
**          to the budget like every device byte; while the copy runs the
**          old and the new columns both exist, and both are reserved (a
**          budget that cannot hold both declines: the entry reloads);
**      (d) TEXT: where a new value sorts before an old one the old rows'
**          codes are remapped on the device (gak_cache_remap, the load's
**          own); the new rows' codes are the union's before they are
**          copied;
**      (e) what is derived from the rows: each column's counts (nnull,
**          nint, nreal, ntext, nnow: "all integer", a REAL among them) and
**          its INTEGER range (imin, imax: overflow and range proofs) are
**          updated as a host entry's; the group dictionaries (the only
**          structure a GPU entry keeps across queries) are forgotten and
**          built again by the next query (cache_gpu.c rule 7); the rest
**          (many-groups layout, star lookups, DISTINCT and percentile
**          structures) is made per query from these;
**      (f) a failed step after the refusals (a device step) drops the
**          entry (cache_gpu.c rule 2): the query takes the uncached path.
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

/* Rule 5's growth factor: a GPU entry's device columns re-allocated by an
** extension get room for need + need / GA_CAPPEND_GPU_GROW rows (rounded
** up to 64), so the appends that follow go in place. */
#define GA_CAPPEND_GPU_GROW 4
int64_t ga_cappend_gpu_cap(int64_t need);

/* Rule 5: append x's rows (a host entry of the same columns, loaded from
** the rows after e's last) to GPU entry e (rule 3: the caller's alone),
** in place in its device columns' room, else into a larger allocation
** (*copied = 1) holding the old rows copied device to device; the
** dictionaries become the unions (old codes remapped on the device), the
** counts x's added, the group dictionaries forgotten.  The reservations
** (ga_cache_reserve within budget) are in c->used as *more, which the
** caller takes out as it relinks e (e->bytes counts what e holds now),
** also after a failure.  x keeps its blocks (its codes rewritten).
** stop(arg) is polled once, before the first device step (placing rows
** already read is bounded: an interrupt never costs e its columns).
** GA_OK; GA_NOMEM, GA_INTERRUPTED and GA_CACHE_DECLINED with why (rule 4,
** or the device could not take e's arrays: e unchanged, *more 0);
** GA_CLOAD_EFAIL with why (a device step after that failed: e may have
** lost its columns, the caller drops it). */
int ga_cappend_merge_gpu(ga_cache *c, int64_t budget, ga_centry *e,
                         ga_centry *x, int64_t *more, int *copied,
                         int (*stop)(void *), void *stop_arg, char *why,
                         size_t nwhy);

#endif
