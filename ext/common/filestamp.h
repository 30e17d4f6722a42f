/*
** filestamp.h — a database file's state read through a connection
** (engine/cache/fstamp.h's ga_fstamp), for the cache shared by every
** connection of the process (issue 40) and a persisted cache file.
**
** API:
**   ga_fstamp_read_locked  the stamp of schema's file while the caller holds
**                          its read lock (a statement on the schema on its
**                          row): what a load records, bracketed by its own
**                          before and after stamps (ext/cache/cache_fns.c).
**   ga_fstamp_read         the stamp of the state a new read transaction of
**                          the caller sees: WAL mode reads the wal-index
**                          header just before and just after it opens the
**                          read transaction (PRAGMA schema_version, held on
**                          its row for the rest of the stamp); the two must
**                          be equal, else the stamp is torn (ok = 0).
**   ga_fstamp_ident        the file's identity (device, inode) as the key
**                          of shared entries.
** Rules: filestamp.c's header.
*/
#ifndef GA_FILESTAMP_H
#define GA_FILESTAMP_H

#include <stdint.h>

#include "fstamp.h"
#include "sqlite3ext.h"

/* A big-endian 4-byte integer of a database, WAL or page header (SQLite's
** on-disk order): filestamp.c, walproof.c and planner/cache_extend.c. */
static inline uint32_t ga_be4(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

void ga_fstamp_read_locked(sqlite3 *db, const char *schema, ga_fstamp *s);
/* SQLite result code (of the statement that opens the read transaction);
** SQLITE_OK with s->ok = 0 and s->why where the state is not provable. */
int ga_fstamp_read(sqlite3 *db, const char *schema, ga_fstamp *s);
/* 1 with *dev, *ino when schema is a file the process can share entries of
** (not temp, not in memory, not immutable, HAS_MOVED 0, stat() reads it),
** else 0. */
int ga_fstamp_ident(sqlite3 *db, const char *schema, uint64_t *dev,
                    uint64_t *ino);
/* Rule 3's wal-index header of schema's file (both copies equal) into h:
** 1, or 0 where it cannot be read (issue 40 part 4 brackets a read
** transaction with it, planner/cache_extend.c). */
int ga_fstamp_walidx(sqlite3 *db, const char *schema,
                     unsigned char h[GA_FSTAMP_WALIDX]);
/* 1 when PRAGMA schema.name reads want (any case), 0 when it reads another
** value, dflt when it cannot be read (planner/cache_plan.c uses it too). */
int ga_pragma_is(sqlite3 *db, const char *schema, const char *name,
                 const char *want, int dflt);

#endif
