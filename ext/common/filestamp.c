/*
** filestamp.c — a database file's state, read through the caller's own
** open files (filestamp.h; the comparison is engine/cache/fstamp.c).
**
** Rules:
**   1. Read through SQLite's open sqlite3_file of the schema (FILE_POINTER,
**      JOURNAL_POINTER for the -wal, xShmMap for the wal-index), never a
**      second descriptor: closing one would drop the process's POSIX locks.
**   2. Rollback journal, under the read lock (a SHARED lock): no other
**      connection can commit while it is held, and every commit moves the
**      change counter (offset 24) before the file is unlocked; the counter,
**      the page count and the schema cookie read under the lock are one
**      committed state.  stat() adds the change time (ns) and the size: a
**      file rewritten in place with the same header and times (utimes
**      cannot set ctime) differs there.
**   3. WAL: the wal-index header (two 48-byte copies, equal) names the last
**      published commit; while the salts stay mxFrame only grows and
**      iChange counts commits, and a restart changes the salts.  The -wal
**      must hold frame mxFrame under those salts with that checksum.  A WAL
**      with no committed frame (mxFrame 0) proves nothing: another process
**      may have written, checkpointed and deleted its WAL, leaving the
**      header as it was: ok = 0 (walempty = 1: equal headers prove the
**      state only while the process held the file open all along).  Exclusive
*locking mode may keep the
**      wal-index in heap memory: ok = 0.
**   4. ga_fstamp_read, for a connection that did not load the entry: the
**      wal-index header is read before the read transaction opens and
**      again while it is held; equal, with the stamp equal to an entry's,
**      the snapshot the transaction took lies between two moments at which
**      the newest commit was the entry's, so it IS the entry's state
**      (neither older nor newer).  A caller already inside a read
**      transaction may hold an older snapshot: the cache asks
**      sqlite3_txn_state first (planner/cache_plan.c rule 7).
**   5. The identity: SQLITE_FCNTL_HAS_MOVED 0 (the path names the open
**      file), then stat() of the path (device, inode, change time) and,
**      where the file system keeps one, statx()'s birth time; immutable=1
**      callers read no WAL and take no lock, so they have none.
*/
#include "filestamp.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

SQLITE_EXTENSION_INIT3

#define WALIDX_PGSZ 32768

/* Rule 5: the birth time, where the file system keeps one (statx; ext4,
** xfs, btrfs, tmpfs).  With no connection open a deleted file's inode may
** be reused by a file built again in the same nanosecond's ctime: the
** birth time still tells them apart. */
static void birth(const char *fn, ga_fstamp *s) {
#ifdef STATX_BTIME
  struct statx x;
  if (statx(AT_FDCWD, fn, 0, STATX_BTIME, &x) == 0 &&
      (x.stx_mask & STATX_BTIME)) {
    s->has_btime = 1;
    s->st_btime_ns =
        (int64_t)x.stx_btime.tv_sec * 1000000000 + (int64_t)x.stx_btime.tv_nsec;
  }
#else
  (void)fn;
  (void)s;
#endif
}

static int file_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off) {
  return f && f->pMethods && f->pMethods->xRead(f, buf, n, off) == SQLITE_OK;
}

int ga_pragma_is(sqlite3 *db, const char *schema, const char *name,
                 const char *want, int dflt) {
  sqlite3_stmt *st = NULL;
  int is = dflt;
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".%s", schema, name);
  if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(st, 0);
    is = m && !sqlite3_stricmp(m, want);
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return is;
}

static void no(ga_fstamp *s, const char *why) {
  if (s->ok || !s->why)
    s->why = why;
  s->ok = 0;
}

/* Rule 3: the wal-index header into h (both copies equal); 1, or 0. */
static int walidx_hdr(sqlite3_file *f, unsigned char *h) {
  volatile void *shm = NULL;
  if (!f || !f->pMethods || f->pMethods->iVersion < 2 ||
      !f->pMethods->xShmMap ||
      f->pMethods->xShmMap(f, 0, WALIDX_PGSZ, 0, &shm) != SQLITE_OK || !shm)
    return 0;
  unsigned char h2[GA_FSTAMP_WALIDX];
  for (int i = 0; i < 100; i++) {
    memcpy(h, (const void *)shm, GA_FSTAMP_WALIDX);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(h2, (const unsigned char *)shm + GA_FSTAMP_WALIDX, GA_FSTAMP_WALIDX);
    if (!memcmp(h, h2, GA_FSTAMP_WALIDX))
      return 1;
  }
  return 0;
}

static sqlite3_file *file_of(sqlite3 *db, const char *schema, int op) {
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(db, schema, op, &f) != SQLITE_OK)
    f = NULL;
  return f;
}

/* Rule 3 under the read lock. */
static void stamp_wal(sqlite3 *db, const char *schema, sqlite3_file *f,
                      sqlite3_file *j, ga_fstamp *s) {
  if (ga_pragma_is(db, schema, "locking_mode", "exclusive", 0)) {
    no(s, "exclusive locking mode (the wal-index may be in heap memory)");
    return;
  }
  unsigned char *h1 = s->walidx;
  if (!walidx_hdr(f, h1) || h1[12] != 1) {
    no(s, "the wal-index header cannot be read");
    return;
  }
  uint32_t mx, fck[2];
  memcpy(&mx, h1 + 16, 4); /* native byte order */
  memcpy(fck, h1 + 24, 8);
  if (mx == 0) {
    s->walempty = s->ok; /* nothing else was wrong (fstamp.h) */
    no(s, "WAL mode with no committed frame in the WAL (nothing on disk "
          "proves the state)");
    return;
  }
  unsigned char wh[32], fh[24];
  if (!file_read(j, wh, 32, 0) || memcmp(wh + 16, h1 + 32, 8)) {
    no(s, "the -wal file does not match the wal-index");
    return;
  }
  /* a hostile -wal may name any page size: only the wal-index's, a power
  ** of two in 512..65536, bounds the offset below */
  uint32_t pgsz = ga_be4(wh + 8);
  uint16_t ipg;
  memcpy(&ipg, h1 + 14, 2);
  uint32_t idx_pgsz = (uint32_t)(ipg & 0xfe00) + ((uint32_t)(ipg & 1) << 16);
  if (pgsz < 512 || pgsz > 65536 || (pgsz & (pgsz - 1)) || pgsz != idx_pgsz) {
    no(s, "the -wal file does not match the wal-index");
    return;
  }
  sqlite3_int64 off = 32 + (sqlite3_int64)(mx - 1) * (24 + (sqlite3_int64)pgsz);
  if (!file_read(j, fh, 24, off) || memcmp(fh + 8, wh + 16, 8) ||
      !ga_be4(fh + 4) || ga_be4(fh + 16) != fck[0] ||
      ga_be4(fh + 20) != fck[1]) {
    no(s, "the -wal file does not match the wal-index");
    return;
  }
  s->walprov = 1;
  s->mxframe = mx;
  memcpy(s->salt, wh + 16, 8);
  s->cksum[0] = fck[0];
  s->cksum[1] = fck[1];
}

void ga_fstamp_read_locked(sqlite3 *db, const char *schema, ga_fstamp *s) {
  unsigned char h[100];
  memset(s, 0, sizeof(*s));
  s->ok = 1;
  sqlite3_file *f = file_of(db, schema, SQLITE_FCNTL_FILE_POINTER);
  sqlite3_file *j = file_of(db, schema, SQLITE_FCNTL_JOURNAL_POINTER);
  sqlite3_int64 size = -1;
  memset(h, 0, sizeof h);
  if (!f || !f->pMethods || f->pMethods->xFileSize(f, &size) != SQLITE_OK)
    size = -2;
  /* a short file (an empty one) reads as zeros: SQLITE_IOERR_SHORT_READ */
  int rc = f && f->pMethods ? f->pMethods->xRead(f, h, 100, 0) : SQLITE_ERROR;
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) {
    memset(h, 0xff, sizeof h);
    no(s, "the database header cannot be read");
  }
  s->size = size;
  s->pagesize = (uint32_t)h[16] << 8 | h[17];
  s->counter = ga_be4(h + 24);
  s->npages = ga_be4(h + 28);
  s->cookie = ga_be4(h + 40);
  s->wal = h[18] == 2 && h[19] == 2;
  const char *fn = sqlite3_db_filename(db, schema);
  int moved = 1;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_HAS_MOVED, &moved) !=
      SQLITE_OK)
    moved = 1;
  struct stat sb;
  if (moved) {
    s->gone = 1;
    no(s, "the path names another file now, or none (HAS_MOVED)");
  } else if (!fn || !*fn || stat(fn, &sb) != 0) {
    s->noident = 1;
    no(s, "the file's identity cannot be read (stat() of its name)");
  } else {
    s->st_dev = (uint64_t)sb.st_dev;
    s->st_ino = (uint64_t)sb.st_ino;
    s->st_ctime_ns =
        (int64_t)sb.st_ctim.tv_sec * 1000000000 + (int64_t)sb.st_ctim.tv_nsec;
    birth(fn, s);
  }
  if (fn && sqlite3_uri_boolean(fn, "immutable", 0))
    no(s, "immutable=1 (the connection reads no WAL and takes no lock)");
  else if (s->wal)
    stamp_wal(db, schema, f, j, s);
}

int ga_fstamp_read(sqlite3 *db, const char *schema, ga_fstamp *s) {
  memset(s, 0, sizeof(*s));
  sqlite3_file *f = file_of(db, schema, SQLITE_FCNTL_FILE_POINTER);
  /* rule 4: the newest commit before the read transaction opens (only
  ** where the file is in WAL mode: a header read without the lock only
  ** decides whether to look) */
  unsigned char h[100], before[GA_FSTAMP_WALIDX];
  int have_before = 0;
  if (file_read(f, h, 100, 0) && h[18] == 2 && h[19] == 2)
    have_before = walidx_hdr(f, before);
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", schema);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      rc = SQLITE_OK;
      ga_fstamp_read_locked(db, schema, s); /* the lock is held here */
      if ((s->ok || s->walempty) && s->wal &&
          (!have_before || memcmp(before, s->walidx, GA_FSTAMP_WALIDX))) {
        s->walempty = 0;
        no(s, "a commit was published while the read transaction opened "
              "(the wal-index header moved)");
      }
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

int ga_fstamp_walidx(sqlite3 *db, const char *schema,
                     unsigned char h[GA_FSTAMP_WALIDX]) {
  /* Only where the header says WAL and the -wal exists: then the pager
  ** opens the WAL at its next read (sqlite3WalOpen adopts the mapping and
  ** unmaps it at close).  A mapping made where the pager never opens a
  ** WAL (rollback journal, or WAL mode with the -wal removed by the last
  ** close) would be the file's until the process ends: a leak, and a
  ** -shm beside a rollback file. */
  sqlite3_file *f = file_of(db, schema, SQLITE_FCNTL_FILE_POINTER);
  unsigned char hd[20];
  if (!file_read(f, hd, 20, 0) || hd[18] != 2 || hd[19] != 2)
    return 0;
  sqlite3_vfs *vfs = NULL;
  const char *fn = sqlite3_db_filename(db, schema);
  const char *wal = fn && *fn ? sqlite3_filename_wal(fn) : NULL;
  int there = 0;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_VFS_POINTER, &vfs) !=
          SQLITE_OK ||
      !vfs || !wal || !vfs->xAccess ||
      vfs->xAccess(vfs, wal, SQLITE_ACCESS_EXISTS, &there) != SQLITE_OK ||
      !there)
    return 0;
  return walidx_hdr(f, h);
}

int ga_fstamp_ident(sqlite3 *db, const char *schema, uint64_t *dev,
                    uint64_t *ino) {
  if (!schema || !sqlite3_stricmp(schema, "temp"))
    return 0;
  const char *fn = sqlite3_db_filename(db, schema);
  if (!fn || !*fn || sqlite3_uri_boolean(fn, "immutable", 0))
    return 0;
  int moved = 1;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_HAS_MOVED, &moved) !=
          SQLITE_OK ||
      moved)
    return 0;
  struct stat sb;
  if (stat(fn, &sb) != 0)
    return 0;
  *dev = (uint64_t)sb.st_dev;
  *ino = (uint64_t)sb.st_ino;
  return 1;
}
