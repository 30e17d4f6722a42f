/*
** fstamp.h — a database file's state as one process may compare it across
** connections (issue 40): what ext/common/filestamp.c reads through a
** connection's open file, under that connection's read lock, and the
** comparison.  Plain data, no SQLite call: the cache's entries keep one
** (cache.h, ga_centry.fs) and a persisted cache file may record one.
**
** Rules:
**   1. Two stamps are the same state only when every field is equal and
**      both are provable (ok = 1): the same file (device and inode, change
**      time in ns, birth time where the file system keeps one, size), the same header (change counter at offset 24,
**      page count, schema cookie, page size), and in WAL mode the same
**      wal-index header (48 bytes: mxFrame, the salts, the last frame's
**      checksum, the commit counter iChange) with mxFrame > 0 and the
**      -wal file holding frame mxFrame under those salts and checksum.
**   2. ok = 0 (unprovable) is never equal to anything, not even itself:
**      a WAL without a committed frame, the wal-index in heap memory
**      (exclusive locking), a header read that changed between the two
**      reads around the read lock (torn), a path naming another file
**      (HAS_MOVED) or one stat() cannot read.  why says which.
*/
#ifndef GA_FSTAMP_H
#define GA_FSTAMP_H

#include <stdint.h>

#define GA_FSTAMP_WALIDX 48

typedef struct ga_fstamp {
  int ok;          /* rule 2: provable */
  const char *why; /* static: why not provable (ok = 0) */
  int gone;        /* SQLITE_FCNTL_HAS_MOVED was not 0 */
  int noident;     /* stat() of the path failed */
  uint64_t st_dev, st_ino;
  int64_t st_ctime_ns;
  int has_btime;       /* statx gave a birth time (filestamp.c rule 5) */
  int64_t st_btime_ns; /* ... the birth time */
  int64_t size;                               /* the file's size */
  uint32_t counter, npages, cookie, pagesize; /* header offsets 24, 28, 40 */
  int wal;     /* the header says WAL (bytes 18 and 19 are 2) */
  int walprov; /* WAL: frame mxFrame of the -wal matched the wal-index */
  /* WAL with no committed frame (mxFrame 0), the wal-index header read:
  ** not provable on its own (ok = 0, rule 2), but equal headers prove the
  ** state while a connection of the process holds the file open all along
  ** (planner/cache_plan.c rule 7: the entry's owner, on main) */
  int walempty;
  uint32_t mxframe, salt[2], cksum[2];
  unsigned char walidx[GA_FSTAMP_WALIDX]; /* the wal-index header */
} ga_fstamp;

/* NULL when a and b prove the same state (rule 1), else what differs;
** ga_fstamp_diff_held: the same, taking walempty stamps as provable (the
** caller knows the file was held open between them). */
const char *ga_fstamp_diff_held(const ga_fstamp *a, const ga_fstamp *b);
const char *ga_fstamp_diff(const ga_fstamp *a, const ga_fstamp *b);

#endif
