/*
** walproof.h — the pages a WAL's frames wrote, read through the caller's
** own open files (issue 40 part 4: appends extend a cache entry only when
** the frames since its state prove that nothing but appends changed its
** table; planner/cache_extend.c builds the proof from these pieces).
**
** Rules (walproof.c):
**   1. Through SQLite's open sqlite3_file of the schema and of its -wal
**      (SQLITE_FCNTL_FILE_POINTER, SQLITE_FCNTL_JOURNAL_POINTER), never a
**      second descriptor (filestamp.c rule 1), and only while the caller
**      holds a read transaction whose snapshot is the stamp's (the
**      wal-index header the same just before and just after it opened).
**      A checkpoint cannot then restart the WAL under a reader that holds
**      a read-mark above 0; one on read-mark 0 (every frame backfilled)
**      does not stop a restart, so every frame read (a header in
**      ga_walview_open, a page in ga_walview_page) is checked again for
**      the WAL's salts and its page number: a frame of a new generation
**      proves nothing.
**   2. Frames 1 .. mxFrame of the stamp, each with the WAL header's salts
**      (frame by frame: a frame of an older generation is never read as
**      this one's), the last with the stamp's checksum.  A page's version
**      in that snapshot is its newest frame there, else the database file.
**   3. Page numbers are bounded by the largest database size any commit
**      frame names, and by 2^24 (a hostile -wal cannot make it allocate
**      more than 64 MiB).
**   4. The b-tree readers check every offset against the page size and
**      answer 0 on anything malformed (a caller then proves nothing).
**   5. Idle notes: the wal-index header of (connection, schema) at the
**      last moment the connection had no transaction open on it, with the
**      file's identity.  A transaction open later began after that moment,
**      so where the header is still the same its snapshot is that header's
**      state.  A slot reused by a connection at the same address proves the
**      same (its transactions began after it opened, after the note).  The
**      wal-index is read only for a file whose header says WAL (xShmMap
**      would create a -shm beside a rollback-journal file), and a note is
**      taken only where the connection's pager has its WAL open (a mapping
**      made before its first read is the file's until the process ends
**      if the connection closes without one).
*/
#ifndef GA_WALPROOF_H
#define GA_WALPROOF_H

#include <stddef.h>
#include <stdint.h>

#include "fstamp.h"
#include "sqlite3ext.h"

typedef struct ga_walview {
  sqlite3_file *db, *wal;
  uint32_t pgsz, mx;
  unsigned char salt[8]; /* the WAL header's salts, as the stamp read them */
  uint32_t *last;      /* page -> its newest frame (1-based); 0: the file */
  uint32_t nlast;      /* pages last covers */
  uint32_t mincommit;  /* least database size a commit frame after `from`
                          names (0xffffffff: none) */
  uint32_t npage;      /* the database's pages in the snapshot (frame mx) */
  uint32_t from_npage; /* ... in the state of frame `from` (0: none) */
} ga_walview;

/* Rule 2 for stamp s (s->walprov), noting the commits after frame `from`.
** SQLITE_OK; SQLITE_NOMEM; SQLITE_INTERRUPT (intr polled); SQLITE_NOTFOUND
** with why (not provable). */
int ga_walview_open(sqlite3 *db, const char *schema, const ga_fstamp *s,
                    uint32_t from, int (*intr)(void *), void *iarg,
                    ga_walview *v, char *why, size_t nwhy);
void ga_walview_close(ga_walview *v);
/* Frame f (1 .. v->mx) carries the checksum cksum (as ga_fstamp keeps it)
** and the WAL's salts: 1, else 0. */
int ga_walview_frame_is(const ga_walview *v, uint32_t f,
                        const uint32_t cksum[2]);
/* Page pg's version in the snapshot into buf (v->pgsz bytes): 1, or 0. */
int ga_walview_page(const ga_walview *v, uint32_t pg, unsigned char *buf);

/* Rule 4: a page's b-tree type byte (0x02, 0x05, 0x0a, 0x0d), or -1. */
int ga_btree_type(const unsigned char *p, uint32_t pgno, uint32_t pgsz);
/* A table interior page's right-most child: 1, or 0. */
int ga_btree_right(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                   uint32_t *child);
/* A table interior page's last children in key order (at most max: the
** left children of its last max - 1 cells, then its right-most child) into
** kids, *n of them: 1, or 0. */
int ga_btree_last_children(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                           uint32_t *kids, int max, int *n);
/* A table leaf's cells and its first and last rowids: 1, or 0 (an empty
** leaf: *ncell 0). */
int ga_btree_leaf(const unsigned char *p, uint32_t pgno, uint32_t pgsz,
                  int *ncell, int64_t *first, int64_t *last);

/* Rule 5: db has no transaction open on schema now (checked again): its
** newest commit is noted (planner/cache_plan.c's note_idle). */
void ga_walnote_idle(sqlite3 *db, const char *schema);
/* Rule 5: the header noted for (db, schema) of the file (dev, ino) into h:
** 1, or 0 (none). */
int ga_walnote_get(sqlite3 *db, const char *schema, uint64_t dev, uint64_t ino,
                   unsigned char *h);

#endif
