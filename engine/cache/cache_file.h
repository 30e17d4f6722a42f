/*
** cache_file.h — a host entry's columns in a file (issue 40, part 3): the
** format, the writer and the mapper.  What state of the database the file
** may stand for, and when it may be written or mapped, is the SQLite
** side's (ext/cache/cache_persist.c); this file knows bytes, checksums and
** file system rules only.
**
** The format (version 1, native byte order, refused elsewhere):
**   header     magic "GPUAGGC1", version, byte-order mark, file length, the
**              database's state (ga_cfstamp), the tables, the directory's
**              offset, and a checksum of the header and the directory
**   directory  per table: its section's offset and length
**   section    "GATABLE1", the table's name, rows, encoding, segments,
**              per column its name, affinity and figures (cache.h
**              ga_ccol), its dictionary's place and checksum, and per
**              segment and column the checksum of that column's block
**              (values, then its isint and notnull bitmaps); the meta
**              bytes have a checksum of their own
**   segments   each one ga_cblock's memory with cap = its rows (cache.h:
**              the values of every column, then each column's two
**              bitmaps), 8-byte aligned, so a mapped file is the entry's
**              segments as they are, nothing copied
**   dictionaries  per TEXT column its values in code order (length, bytes)
**
** Rules:
**   1. A file is read only through ga_cfile_map: opened with O_NOFOLLOW (a
**      symlink is never followed), a regular file owned by this process's
**      user and not writable by others (a checksum does not stop a forged
**      file planted in a shared directory), every length and offset bounded
**      by the file's size before it is read.
**   2. Every checksum is checked before the bytes it covers are used: the
**      header's and the section's meta before any figure, each column
**      block's before the entry holds it, each dictionary's before it is
**      rebuilt.  Any mismatch, any bound passed, any figure that contradicts
**      another (a dictionary out of order, a count above the rows): the file
**      is absent, with the reason, never a wrong answer.
**   3. Writers write a temporary file in the same directory (O_CREAT |
**      O_EXCL | O_NOFOLLOW, a name of their own) and rename it over the
**      path: a reader sees the old file or the new one whole, and two
**      writers at once leave one of the two.  A file is never changed in
**      place, so a mapping stays what was checked.  The file takes the mode
**      it is given (the database file's, never writable by others), set
**      with fchmod past the umask.
**   4. One file holds the tables of one database state: a writer keeps the
**      other tables' sections of a file written for the same state (their
**      bytes as they were: checked when mapped), and drops them otherwise.
**   5. The mapping is private and read-only in intent; the entry's segments
**      point into it (ga_cblock.mapped: not freed one by one) and the
**      mapping goes with the entry (ga_centry.free_map).
*/
#ifndef GA_CACHE_FILE_H
#define GA_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"

/* The database's state a file stands for (ext/cache/cache_persist.c says
** what each field proves): the file's identity, its header's counters and
** its WAL's last commit.  Compared field by field. */
typedef struct ga_cfstamp {
  uint64_t dev, ino;
  int64_t ctime_ns, size;
  uint32_t pagesize, counter, npages, cookie;
  uint32_t wal, mxframe, salt[2], cksum[2];
  uint32_t enc, pad;
} ga_cfstamp;

/* The file's outcome, for gpuagg_info. */
#define GA_CFILE_OK 0
#define GA_CFILE_ABSENT 1 /* no file (or none for this table) */
#define GA_CFILE_BAD 2    /* refused: why says (rules 1, 2) */
#define GA_CFILE_OTHER 3  /* valid, but for another state or columns */
#define GA_CFILE_NOMEM 4
#define GA_CFILE_BUDGET 5 /* it does not fit in cache_bytes */

/* Write host entry e (its columns, dictionaries and figures) as table
** `table` of the file at path for state st, with mode (rule 3), keeping the
** other tables of a file at path written for the same state (rule 4).
** stop(arg) is polled between blocks (1: give up).  GA_CFILE_OK, or
** another code with why. */
int ga_cfile_write(const char *path, const ga_cfstamp *st, const char *table,
                   const ga_centry *e, mode_t mode, int (*stop)(void *),
                   void *arg, char *why, size_t nwhy);

/* Map table `table` of the file at path as a new host entry (not linked;
** names unset, stamps unset), when the file is for state st and holds
** exactly the ncols columns named (any case) in that order, with those
** affinities.  Its bytes are reserved in c within budget (evicting others)
** before the entry is built; *out's bytes are then in c->used.
** GA_CFILE_OK with *out, or another code with why. */
int ga_cfile_map(ga_cache *c, int64_t budget, const char *path,
                 const ga_cfstamp *st, const char *table,
                 const char *const *names, const int *affs, int ncols,
                 int (*stop)(void *), void *arg, ga_centry **out, char *why,
                 size_t nwhy);

/* Host entry e (in c's list or not, its bytes in c->used) made a GPU
** entry: its columns copied to the device within budget, then its host
** segments (or mapping) freed (cache_upload.c).  GA_CFILE_OK; else the
** entry is as it was, with why. */
int ga_cfile_to_gpu(ga_cache *c, ga_centry *e, int64_t budget,
                    int (*stop)(void *), void *arg, char *why, size_t nwhy);

/* The checksum of n words (a Fletcher sum in 64-bit words, started at
** s[0] = 1, s[1] = 0), exposed for the tests' forgeries. */
void ga_cfile_sum(const uint64_t *w, size_t n, uint64_t s[2]);

#endif
