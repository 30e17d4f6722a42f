/*
** cache_plan.c — whether gpu_cache's entry answers a gpu_aggregate call
** (ga_cache_answer, asked before a scan is planned), the stamps that keep
** it current, and the cache's state for gpuagg_info().  The shapes an
** entry can answer are cache_shape.c's; the load is ext/cache/cache_fns.c.
**
** Rules (numbered as in ext/cache/cache_fns.c, which keeps the others):
**   2. Never stale.  An entry records (ga_cstamp) the schema's data_version
**      (commits of every other connection and process), this connection's
**      sqlite3_total_changes64 (its own writes, committed or not, rolled
**      back or not), the schema_version (DDL, drop and re-create under one
**      name, VACUUM) and the file behind the schema (a DETACH and ATTACH of
**      another file under the same name).  An answer is taken only when all
**      are the same as now; otherwise the entry is marked stale for good
**      and gpu_aggregate takes its uncached path.  No commit, update or
**      rollback hook is used: those slots belong to the application.
**      The pager's SQLITE_FCNTL_DATA_VERSION moves at every commit, the
**      connection's own included, even one that no statement counts
**      (sqlite3_blob_write and close: neither total_changes nor
**      data_version moves).
**      An attached schema's entry is current only under a stamp that
**      proves the file's state (a DETACH and ATTACH of the same file opens
**      a new pager, whose counters and even address can be the old ones),
**      read under the read lock (ga_cstamp_read says why that is enough):
**      rollback journal: the change counter, page count and schema cookie
**      of the header (and the size); WAL: the same WAL, with the same salts
**      and the same checksum at the last published commit frame (mxFrame).
**      A WAL with no committed frame (removed by the last connection's
**      close after a checkpoint) proves nothing: the header stays as it
**      was through another connection's write, checkpoint and close.  Such
**      an entry holds a connection of its own to the file from before its
**      load (ga_cstamp_watch: the caller's access, checkpointing on close
**      as the caller would, no busy wait): that connection's data_version
**      sees every commit whatever the caller detaches, and
**      SQLITE_FCNTL_HAS_MOVED a file renamed over the path; while it is
**      open, the WAL is not removed when the caller detaches.  It is kept
**      only while its entry is not stale, is closed at the next cache
**      operation once its file is gone (ga_cache_watchers), and one
**      connection keeps at most GA_CACHE_WATCHERS of them.
**      Every attached file's stamp also holds its identity: HAS_MOVED of
**      the caller's schema is 0, and stat() of the path (device, inode,
**      ctime in ns); a file built alike renamed over the path has the same
**      header, size and WAL state.  A WAL snapshot older than the newest
**      commit cannot be stamped: gpu_cache refuses inside a transaction
**      already open on an attached WAL schema
**      (ga_cstamp_snapshot_unprovable).
**   6. The cache answers only what the caller's connection would read now;
**      it steps aside (uncached path, the reason in last_scan.why) while a
**      statement or transaction of the connection writes to the schema
**      (total_changes moves only when a statement ends: an UPDATE that
**      reads the table row by row must see its own writes), under
**      read_uncommitted = 1 (shared cache: other connections' uncommitted
**      rows), and when the application's authorizer compiles a read of the
**      entry's columns otherwise than at the load (the opcodes of SELECT
**      <columns>, ga_program_sig; the load itself runs on the caller's
**      connection when an authorizer changes it, planner/path.c rule 10).
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_plan.h"
#include "gpu.h"
#include "pintime.h"

/* ---- stamps (rule 2) ---- */

static int pragma_int(sqlite3 *db, const char *fmt, const char *schema,
                      int64_t *out) {
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf(fmt, schema);
  if (!sql)
    return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static int64_t total_changes(sqlite3 *db) {
#ifndef SQLITE_CORE
  /* the API table has total_changes64 from 3.37 on */
  if (sqlite3_libversion_number() < 3037000)
    return sqlite3_total_changes(db);
#endif
  return sqlite3_total_changes64(db);
}

void ga_cstamp_free(ga_cstamp *s) {
  sqlite3_free(s->file);
  s->file = NULL;
}

static uint32_t get4(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

/* 1 when PRAGMA schema.name reads want (any case), 0 when it reads
** another value, dflt when it cannot be read. */
static int pragma_is(sqlite3 *db, const char *schema, const char *name,
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

/* n bytes of f at off into buf: 1, or 0 where f is not open or short. */
static int file_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off) {
  return f && f->pMethods && f->pMethods->xRead(f, buf, n, off) == SQLITE_OK;
}

/* The WAL-index header (SQLite's file format, "WAL-Index Format"): two
** copies of 48 bytes at the start of the -shm's first 32 KiB region. */
#define WALIDX_HDR 48
#define WALIDX_PGSZ 32768

/* Rule 2's proof of a WAL-mode file: the last published commit (the
** wal-index header's mxFrame, salts and the checksum of frame mxFrame), and
** the -wal file holding that same frame under those salts.  Sets
** s->unprovable where there is none to record. */
static void stamp_wal(sqlite3 *db, const char *schema, sqlite3_file *f,
                      sqlite3_file *j, ga_cstamp *s) {
  int excl = pragma_is(db, schema, "locking_mode", "exclusive", 0);
  /* exclusive locking mode may keep the wal-index in heap memory, where
  ** mapping the -shm would create one: no proof there */
  volatile void *shm = NULL;
  if (excl || !f || !f->pMethods || f->pMethods->iVersion < 2 ||
      !f->pMethods->xShmMap ||
      f->pMethods->xShmMap(f, 0, WALIDX_PGSZ, 0, &shm) != SQLITE_OK || !shm) {
    s->unprovable = 1;
    return;
  }
  /* SQLite's own readers copy both headers and take them when equal (a
  ** writer changes them one after the other) */
  unsigned char h1[WALIDX_HDR], h2[WALIDX_HDR];
  int same = 0;
  for (int i = 0; i < 100 && !same; i++) {
    memcpy(h1, (const void *)shm, WALIDX_HDR);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(h2, (const unsigned char *)shm + WALIDX_HDR, WALIDX_HDR);
    same = !memcmp(h1, h2, WALIDX_HDR);
  }
  uint32_t mx, fck[2];
  memcpy(&mx, h1 + 16, 4); /* native byte order */
  memcpy(fck, h1 + 24, 8);
  if (!same || h1[12] != 1 || mx == 0) {
    s->unprovable = 1; /* no commit in this WAL: nothing to record */
    return;
  }
  /* the -wal itself: its header's salts (bytes 16..23, as the wal-index
  ** copies them) and frame mxFrame's (bytes 8..15 of the frame header),
  ** a commit frame (bytes 4..7) whose checksum (16..23) is the header's */
  unsigned char wh[32], fh[24];
  if (!file_read(j, wh, 32, 0) || memcmp(wh + 16, h1 + 32, 8)) {
    s->unprovable = 1;
    return;
  }
  /* a hostile -wal may name any page size: only a power of two in
  ** 512..65536, the one the wal-index header records (szPage: 65536 is
  ** stored as 1), bounds the offset below (at most 2^32 frames of 65560
  ** bytes: no overflow) */
  uint32_t pgsz = get4(wh + 8);
  uint16_t ipg;
  memcpy(&ipg, h1 + 14, 2); /* native byte order */
  uint32_t idx_pgsz = (uint32_t)(ipg & 0xfe00) + ((uint32_t)(ipg & 1) << 16);
  if (pgsz < 512 || pgsz > 65536 || (pgsz & (pgsz - 1)) || pgsz != idx_pgsz) {
    s->unprovable = 1;
    return;
  }
  sqlite3_int64 off = 32 + (sqlite3_int64)(mx - 1) * (24 + (sqlite3_int64)pgsz);
  if (!file_read(j, fh, 24, off) || memcmp(fh + 8, wh + 16, 8) ||
      !get4(fh + 4) || get4(fh + 16) != fck[0] || get4(fh + 20) != fck[1]) {
    s->unprovable = 1;
    return;
  }
  s->mxframe = mx;
  memcpy(s->salt, wh + 16, 8);
  s->cksum[0] = fck[0];
  s->cksum[1] = fck[1];
}

/* Rule 2's stamp of an attached file, read through SQLite's own open files
** (not a second descriptor: closing one would drop the process's POSIX
** locks on it) while the caller holds the read lock (ga_cstamp_read). */
static void stamp_file(sqlite3 *db, const char *schema, ga_cstamp *s) {
  sqlite3_file *f = NULL, *j = NULL;
  unsigned char h[100];
  s->attached = 1;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &f) !=
      SQLITE_OK)
    f = NULL;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &j) !=
      SQLITE_OK)
    j = NULL;
  sqlite3_int64 size = -1;
  memset(h, 0, sizeof h);
  if (!f || !f->pMethods || f->pMethods->xFileSize(f, &size) != SQLITE_OK)
    size = -2;
  /* a short file (an empty one) reads as zeros: SQLITE_IOERR_SHORT_READ */
  int rc = f && f->pMethods ? f->pMethods->xRead(f, h, 100, 0) : SQLITE_ERROR;
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
    memset(h, 0xff, sizeof h);
  s->size = size;
  s->pagesize = (uint32_t)h[16] << 8 | h[17];
  s->counter = get4(h + 24);
  s->npages = get4(h + 28);
  s->cookie = get4(h + 40);
  s->wal = h[18] == 2 && h[19] == 2;
  /* the path names the caller's file (HAS_MOVED 0: unix compares the
  ** path's inode with the open file's), and that file's identity */
  const char *fn = sqlite3_db_filename(db, schema);
  int moved = 1;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_HAS_MOVED, &moved) !=
      SQLITE_OK)
    moved = 1;
  struct stat sb;
  if (moved)
    s->gone = 1;
  else if (!fn || !*fn || stat(fn, &sb) != 0)
    s->noident = 1;
  else {
    s->st_dev = (uint64_t)sb.st_dev;
    s->st_ino = (uint64_t)sb.st_ino;
    s->st_ctime_ns =
        (int64_t)sb.st_ctim.tv_sec * 1000000000 + (int64_t)sb.st_ctim.tv_nsec;
  }
  /* immutable=1: the caller promised that nobody changes the file, and
  ** SQLite then reads no WAL */
  if (s->wal && !(fn && sqlite3_uri_boolean(fn, "immutable", 0)))
    stamp_wal(db, schema, f, j, s);
}

/* The watcher (rule 2).  It opens the path, so it is checked to be the
** caller's file AFTER it is open: HAS_MOVED 0 then means the path named the
** caller's file at a moment when the watcher already had it open (a
** rename before the open or in between shows as 1).  It has the caller's
** access: read-only for a read-only caller; for a read-write one it
** checkpoints on close exactly when the caller's connection would (being
** the last connection to close, after the caller's DETACH, it does what
** that DETACH would have done: checkpoint and remove the WAL), as the scan
** helper does (engine/scan/scan.c, ckpt_on_close).  busy_timeout 0: the
** caller's interrupt cannot stop a wait on another connection, and a BUSY
** only makes the stamp unprovable, so stale. */
sqlite3 *ga_cstamp_watch(sqlite3 *db, const char *schema) {
  sqlite3_vfs *vfs = NULL;
  const char *path = sqlite3_db_filename(db, schema);
  if (!path || !*path ||
      sqlite3_file_control(db, schema, SQLITE_FCNTL_VFS_POINTER, &vfs) !=
          SQLITE_OK ||
      !vfs)
    return NULL;
  int ro = sqlite3_db_readonly(db, schema) != 0;
  int no_ckpt = 1;
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, -1, &no_ckpt);
  int ckpt_on_close = !ro && !no_ckpt;
  sqlite3 *w = NULL;
  int flags = ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  const char *vfs_name = NULL; /* the caller's VFS itself (pintime.c rule 5) */
  if (ga_pintime_vfs_name(vfs, &vfs_name) != SQLITE_OK ||
      sqlite3_open_v2(path, &w, flags, vfs_name) != SQLITE_OK) {
    sqlite3_close(w);
    return NULL;
  }
  sqlite3_db_config(w, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !ckpt_on_close,
                    (int *)NULL);
  sqlite3_busy_timeout(w, 0);
  int moved = 1;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_HAS_MOVED, &moved) !=
          SQLITE_OK ||
      moved) {
    sqlite3_close(w); /* it may have opened another file */
    return NULL;
  }
  return w;
}

/* The watcher's view (rule 2): its data_version, and whether the path
** names another file now (SQLITE_FCNTL_HAS_MOVED). */
static void stamp_watch(sqlite3 *w, ga_cstamp *s) {
  int moved = 1;
  if (!w || pragma_int(w, "PRAGMA \"%w\".data_version", "main",
                       &s->watch_version) != SQLITE_OK)
    return;
  if (sqlite3_file_control(w, "main", SQLITE_FCNTL_HAS_MOVED, &moved) !=
      SQLITE_OK)
    moved = 1;
  s->moved = moved;
  s->watched = 1;
}

/* The schema's state now.  SQLite result code.
**
** The locking argument (rule 2).  The schema_version statement below is
** left on its row while the attached file is stamped, so the connection
** holds the file's read lock then:
**  - rollback journal: a SHARED lock.  No other connection can commit
**    while it is held (a commit needs EXCLUSIVE), and every commit that
**    modified the file moves the change counter (offset 24) before the
**    file is unlocked.  The counter, page count and schema cookie read
**    under the lock are one committed state.
**  - WAL: a WAL read lock.  The wal-index header names the last published
**    commit (mxFrame, the salts, frame mxFrame's checksum); while the salts
**    stay, mxFrame only grows, and a restart of the WAL (the only way to
**    write frames from the start again) changes the salts, so an equal
**    triple at two moments means that no commit was published in between.
**    The read lock keeps a checkpoint from restarting the WAL under a
**    reader past its frames, so frame mxFrame read from the -wal is the one
**    the wal-index names; any torn or newer read only differs (stale, never
**    wrongly current).  That header is the NEWEST commit, not the reader's
**    snapshot: a caller already inside a read transaction on an older
**    snapshot would load old rows under a newer stamp, so gpu_cache
**    refuses there (ga_cstamp_snapshot_unprovable).  A WAL with no
**    committed frame (absent, empty, just checkpointed and restarted by
**    the last connection's close) proves nothing on disk: another
**    connection may have written, checkpointed and removed its WAL
**    meanwhile, leaving the header as it was (the change counter moves
**    only when page 1 is written).  Such a stamp is unprovable: it is
**    current only through the entry's watcher (ga_cstamp_watch), a
**    connection to the file open from before the first stamp, whose
**    data_version counts every commit whatever the caller detaches; with
**    no watcher (none could be opened, or it was closed) it is never
**    current.
**  - either mode: the path must still name the file (SQLITE_FCNTL_HAS_MOVED
**    of the caller's schema is 0), whose device, inode and change time
**    stat() records: a file built alike and renamed over the path while
**    detached has the same header, size and even WAL state.
** A load is bracketed by two stamps (ext/cache/cache_fns.c rule 3): equal
** ones mean no commit between them, so the rows loaded are the stamped
** state; an answer compares a new stamp with the entry's. */
int ga_cstamp_read(sqlite3 *db, const char *schema, sqlite3 *watch,
                   ga_cstamp *s) {
  memset(s, 0, sizeof(*s));
  int rc =
      pragma_int(db, "PRAGMA \"%w\".data_version", schema, &s->data_version);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", schema);
  if (!sql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      s->schema_version = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
      /* the read lock is held while the statement is on its row */
      if (sqlite3_stricmp(schema, "main") && sqlite3_stricmp(schema, "temp"))
        stamp_file(db, schema, s);
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_OK)
    return rc;
  if (s->unprovable)
    stamp_watch(watch, s);
  s->total_changes = total_changes(db);
  /* every commit of the pager, this connection's own included: a
  ** sqlite3_blob_write moves neither total_changes nor data_version */
  unsigned int pv = 0;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_DATA_VERSION, &pv) !=
      SQLITE_OK)
    pv = 0;
  s->pager_version = pv;
  const char *f = sqlite3_db_filename(db, schema);
  s->file = sqlite3_mprintf("%s", f ? f : "");
  if (!s->file)
    return SQLITE_NOMEM;
  void *fp = NULL;
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &fp) !=
      SQLITE_OK)
    fp = NULL;
  s->fileobj = fp;
  return SQLITE_OK;
}

/* NULL when a and b are the same state, else what differs. */
const char *ga_cstamp_diff(const ga_cstamp *a, const ga_cstamp *b) {
  if (a->data_version != b->data_version)
    return "another connection committed (data_version)";
  if (a->total_changes != b->total_changes)
    return "this connection wrote (total_changes)";
  if (a->schema_version != b->schema_version)
    return "the schema changed (schema_version)";
  if (strcmp(a->file, b->file) || a->fileobj != b->fileobj)
    return "another database is attached under that name";
  if (a->gone || b->gone)
    return "the attached file's path names another file now, or none "
           "(SQLITE_FCNTL_HAS_MOVED: renamed over or deleted)";
  if (a->noident || b->noident)
    return "the attached file's identity cannot be read (stat() of its "
           "name failed)";
  if (a->st_dev != b->st_dev || a->st_ino != b->st_ino ||
      a->st_ctime_ns != b->st_ctime_ns)
    return "the attached file was replaced or changed (another file under "
           "its name, or its change time moved)";
  if (a->unprovable != b->unprovable)
    return "the attached file changed (its WAL: detached, written and "
           "attached again)";
  if (a->unprovable && (!a->watched || !b->watched || b->moved ||
                        a->watch_version != b->watch_version))
    return "the attached file is in WAL mode with no committed frame in its "
           "WAL, and the cache's own connection to it saw a commit (or lost "
           "it)";
  if (a->attached != b->attached || a->wal != b->wal ||
      a->counter != b->counter || a->npages != b->npages ||
      a->cookie != b->cookie || a->pagesize != b->pagesize ||
      a->size != b->size)
    return "the attached file changed (its header or size: detached, "
           "written and attached again)";
  if (a->mxframe != b->mxframe || memcmp(a->salt, b->salt, sizeof a->salt) ||
      memcmp(a->cksum, b->cksum, sizeof a->cksum))
    return "the attached file changed (its WAL: detached, written and "
           "attached again)";
  if (a->pager_version != b->pager_version)
    return "this connection committed a write that no statement counts, "
           "such as sqlite3_blob_write (SQLITE_FCNTL_DATA_VERSION)";
  return NULL;
}

/* Rule 2: whether the caller's snapshot of an attached WAL schema cannot
** be stamped.  Asked BEFORE any statement of ga_cstamp_read opens a read
** transaction: a transaction already open (BEGIN and a read, or an outer
** statement) may be on a snapshot older than the wal-index header that
** stamp_wal records, or than what the watcher's data_version counts, so
** its rows could be stamped as a newer state.  Rollback journal: the
** SHARED lock held since the snapshot began keeps every commit out, so the
** header is the snapshot's; main and temp are never detached, and their
** data_version describes the snapshot.  immutable=1 reads no WAL. */
int ga_cstamp_snapshot_unprovable(sqlite3 *db, const char *schema) {
  if (!sqlite3_stricmp(schema, "main") || !sqlite3_stricmp(schema, "temp") ||
      sqlite3_txn_state(db, schema) == SQLITE_TXN_NONE)
    return 0;
  const char *fn = sqlite3_db_filename(db, schema);
  if (fn && sqlite3_uri_boolean(fn, "immutable", 0))
    return 0;
  /* the transaction is open already: this reads its own state */
  return pragma_is(db, schema, "journal_mode", "wal", 1); /* unknown: WAL */
}

/* Rule 2's watchers: those still open, after closing each whose file is
** gone (SQLITE_FCNTL_HAS_MOVED of its own main: deleted or renamed over),
** so that a deleted file's descriptors are released; its entry is then
** stale for good (nothing proves it any more). */
int ga_cache_watchers(ga_cache *c) {
  int n = 0;
  for (ga_centry *e = c ? c->entries : NULL; e; e = e->next) {
    if (!e->watch)
      continue;
    int moved = 1;
    if (sqlite3_file_control(e->watch, "main", SQLITE_FCNTL_HAS_MOVED,
                             &moved) != SQLITE_OK)
      moved = 1;
    if (moved || e->stale) {
      sqlite3_close(e->watch);
      e->watch = NULL;
      e->stale = 1;
    } else {
      n++;
    }
  }
  return n;
}

/* ---- the authorizer (rule 6) ---- */

/* The caller's program of SELECT <the entry's columns> FROM its table
** (ga_program_sig); NULL with *rc on failure. */
char *ga_centry_sig(sqlite3 *db, const ga_centry *e, int *rc) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "SELECT ");
  for (int i = 0; i < e->ncols; i++)
    sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", e->cols[i].name);
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\"", e->schema, e->table);
  char *sql = sqlite3_str_finish(s);
  if (!sql) {
    *rc = SQLITE_NOMEM;
    return NULL;
  }
  char *sig = ga_program_sig(db, sql, rc);
  sqlite3_free(sql);
  return sig;
}

/* Rules 2 and 6 for entry e of schema: SQLITE_OK with why "" when it
** answers for the caller's connection now, else with the reason in why (a
** stale entry is marked); SQLITE_NOMEM / SQLITE_INTERRUPT. */
int ga_cache_current(sqlite3 *db, const char *schema, ga_centry *e, char *why,
                     size_t nwhy) {
  ga_cstamp now;
  int rc;
  why[0] = 0;
  rc = ga_cstamp_read(db, schema, e->watch, &now);
  if (rc != SQLITE_OK) {
    ga_cstamp_free(&now);
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      return rc & 0xff;
    snprintf(why, nwhy, "cannot read the database's version (%s)",
             sqlite3_errstr(rc));
    return SQLITE_OK;
  }
  const char *diff = ga_cstamp_diff(&e->stamp, &now);
  ga_cstamp_free(&now);
  if (diff) {
    e->stale = 1;            /* never used again (rule 2) */
    sqlite3_close(e->watch); /* nothing left for it to prove */
    e->watch = NULL;
    snprintf(why, nwhy, "the entry is stale: %s", diff);
    return SQLITE_OK;
  }
  /* Rule 2, the snapshot: the stamps compared are the newest commit (the
  ** wal-index header, the watcher), not the caller's snapshot, so equal
  ** stamps must also mean the snapshot is the entry's.  The entry was
  ** loaded outside any transaction on an attached WAL schema (gpu_cache
  ** refuses inside one), so a read transaction open now began after the
  ** load and reads at least the loaded state; equal stamps mean nothing
  ** was committed since the load, so it reads exactly that state, never
  ** an older or newer one.  A snapshot opened on purpose
  ** (sqlite3_snapshot_open) to an older state changes the pager's view,
  ** which moves its data_version: stale.  main and temp: data_version
  ** and FCNTL_DATA_VERSION are the caller's own pager's, its snapshot. */
  /* rule 6: the caller's own view of the rows */
  if (sqlite3_txn_state(db, schema) == SQLITE_TXN_WRITE) {
    snprintf(why, nwhy,
             "a statement of this connection is writing to %s "
             "(its changes count only when it ends)",
             schema);
    return SQLITE_OK;
  }
  int64_t ru = 0;
  rc = pragma_int(db, "PRAGMA read_uncommitted%s", "", &ru);
  if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
    return rc & 0xff;
  if (rc != SQLITE_OK || ru) {
    snprintf(why, nwhy,
             "read_uncommitted = 1 (the connection may read "
             "other connections' uncommitted rows)");
    return SQLITE_OK;
  }
  char *sig = ga_centry_sig(db, e, &rc);
  if (!sig && ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT))
    return rc & 0xff;
  int same = sig && !strcmp(sig, e->auth_sig);
  sqlite3_free(sig);
  if (!same) {
    snprintf(why, nwhy,
             "the connection's authorizer treats the columns "
             "otherwise than at the load");
    return SQLITE_OK;
  }
  return SQLITE_OK;
}

/* ---- the cache step ---- */

static int cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                        const ga_target *t, const ga_parts *p, ga_cquery *qp,
                        ga_scan_out *out, int *hit, char *why, size_t nwhy) {
  ga_cache *c = conn->cache;
  *hit = 0;
  why[0] = 0;
  memset(out, 0, sizeof(*out));
  ga_cache_watchers(c); /* rule 2: release the gone files' watchers */
  ga_centry *e = c ? ga_cache_find(c, t->schema, t->table) : NULL;
  if (!e)
    return SQLITE_OK;
  if (cfg->cache_bytes > 0)
    ga_cache_fit(c, cfg->cache_bytes); /* a lowered budget */
  e = ga_cache_find(c, t->schema, t->table);
  if (!e) {
    snprintf(why, nwhy, "the entry was evicted (cache_bytes)");
    return SQLITE_OK;
  }
  if (e->stale) {
    snprintf(why, nwhy, "the entry is stale; gpu_cache reloads it");
    return SQLITE_OK;
  }
  if (e->where == GA_CACHE_GPU && cfg->device == GA_DEVICE_CPU) {
    snprintf(why, nwhy, "the entry is in GPU memory and device = 'cpu'");
    return SQLITE_OK;
  }
  /* medians and percentiles (issue 39): a host entry keeps each group's
  ** values (engine/cache/cache_pct.c), a GPU entry none */
  for (int k = 0; e->where == GA_CACHE_GPU && p->val_dist && k < p->nvals; k++)
    if (p->val_dist[k] == GA_DIST_PCT) {
      snprintf(why, nwhy,
               "a median or percentile (the GPU cache keeps no group's "
               "values; a host entry, loaded with device = 'cpu', answers "
               "it)");
      return SQLITE_OK;
    }
  /* gpu_query's DISTINCT aggregates (issue 37): a host entry keeps sets
  ** (engine/cache/cache_distinct.c), a GPU entry bitmaps
  ** (engine/cache/cache_gpu_distinct.c), or declines with the reason */
  for (int k = 0; e->where == GA_CACHE_GPU && p->val_sq && k < p->nvals; k++)
    if (p->val_sq[k]) { /* issue 39: a host entry steps Σx² */
      snprintf(why, nwhy,
               "a variance or standard deviation (the GPU cache keeps no "
               "sum of squares; a host entry, loaded with device = 'cpu', "
               "answers it)");
      return SQLITE_OK;
    }
  int rc = ga_cache_shape(db, e, t, p, qp, why, nwhy);
  if (rc != 1)
    return rc == 0 ? SQLITE_OK : rc;
  rc = ga_cache_current(db, t->schema, e, why, nwhy);
  if (rc != SQLITE_OK || why[0])
    return rc;
  int threads = ga_config_threads(cfg);
  char qwhy[200] = "";
  ga_intr intr = {.db = db}; /* DISTINCT's sets: cache_distinct.c rule 5 */
  qp->dist_cap = ga_config_group_bytes(cfg);
  qp->interrupted = qp->ndist ? ga_intr_check : NULL;
  qp->interrupted_arg = &intr;
  if (e->where == GA_CACHE_GPU)
    rc = ga_cache_query_gpu(c, e, qp, out, qwhy, sizeof qwhy);
  else
    rc = ga_cache_query_host(c, e, qp, threads, out, qwhy, sizeof qwhy);
  ga_intr_free(&intr);
  qp->interrupted = NULL;
  if (rc == GA_SCAN_INTERRUPT)
    return SQLITE_INTERRUPT;
  if (rc == GA_SCAN_OK && ga_cache_decode_keys(e, qp, out))
    rc = GA_SCAN_NOMEM;
  if (rc == GA_SCAN_OK) {
    *hit = 1;
    e->hits++;
    e->lru = ga_cache_touch(c);
    if (e->where == GA_CACHE_GPU)
      c->queries_gpu++;
    else
      c->queries_host++;
    snprintf(why, nwhy, "%s cache", e->where == GA_CACHE_GPU ? "GPU" : "host");
    return SQLITE_OK;
  }
  if (rc == GA_SCAN_NOMEM)
    return SQLITE_NOMEM;
  if (rc == GA_CACHE_DECLINED) { /* this shape, not the entry */
    snprintf(why, nwhy, "%s", qwhy);
    return SQLITE_OK;
  }
  c->fallbacks++;
  if (e->where == GA_CACHE_GPU) { /* rule 5 */
    snprintf(why, nwhy, "%s; the entry was dropped", qwhy);
    ga_cache_drop(c, e);
  } else {
    snprintf(why, nwhy, "%s", qwhy);
  }
  return SQLITE_OK;
}

int ga_cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                    const ga_target *t, const ga_parts *p, ga_scan_out *out,
                    int *hit, char *why, size_t nwhy) {
  ga_cquery q;
  memset(&q, 0, sizeof(q));
  int rc = cache_answer(conn, db, cfg, t, p, &q, out, hit, why, nwhy);
  ga_cquery_free(&q);
  return rc;
}

/* ---- gpuagg_info()'s "cache" ---- */

static void json_str(sqlite3_str *s, const char *z) {
  sqlite3_str_appendchar(s, 1, '"');
  for (; z && *z; z++) {
    unsigned char ch = (unsigned char)*z;
    if (ch == '"' || ch == '\\')
      sqlite3_str_appendf(s, "\\%c", ch);
    else if (ch < 0x20)
      sqlite3_str_appendf(s, "\\u%04x", ch);
    else
      sqlite3_str_appendchar(s, 1, (char)ch);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

char *ga_cache_json(ga_conn *conn, sqlite3 *db) {
  ga_config cfg = conn->cfg;
  ga_cache *c = conn->cache;
  int where = ga_cache_where(&cfg);
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(
      s,
      "{\"where\":\"%s\",\"budget\":%lld,\"used\":%lld,"
      "\"scratch\":%lld,\"queries_gpu\":%lld,"
      "\"queries_host\":%lld,\"fallbacks\":%lld,\"queries_topk\":%lld,"
      "\"queries_many\":%lld,\"entries\":[",
      where == GA_CACHE_GPU ? "gpu" : "host",
      (long long)ga_cache_budget(&cfg, where), (long long)(c ? c->used : 0),
      (long long)(c ? c->scratch_bytes : 0),
      (long long)(c ? c->queries_gpu : 0), (long long)(c ? c->queries_host : 0),
      (long long)(c ? c->fallbacks : 0), (long long)(c ? c->queries_topk : 0),
      (long long)(c ? c->queries_many : 0));
  ga_cache_watchers(c);
  for (ga_centry *e = c ? c->entries : NULL; e; e = e->next) {
    ga_cstamp now;
    int current = 0;
    memset(&now, 0, sizeof(now));
    if (!e->stale && ga_cstamp_read(db, e->schema, e->watch, &now) == SQLITE_OK)
      current = ga_cstamp_diff(&e->stamp, &now) == NULL;
    ga_cstamp_free(&now);
    sqlite3_str_appendf(s, "%s{\"table\":", e == c->entries ? "" : ",");
    char *full = sqlite3_mprintf("%s.%s", e->schema, e->table);
    json_str(s, full);
    sqlite3_free(full);
    sqlite3_str_appendall(s, ",\"columns\":[");
    for (int k = 0; k < e->ncols; k++) {
      if (k)
        sqlite3_str_appendchar(s, 1, ',');
      json_str(s, e->cols[k].name);
    }
    sqlite3_str_appendf(s,
                        "],\"rows\":%lld,\"bytes\":%lld,\"where\":\"%s\","
                        "\"current\":%s,\"hits\":%lld,\"load_ms\":%.3f",
                        (long long)e->rows, (long long)e->bytes,
                        e->where == GA_CACHE_GPU ? "gpu" : "host",
                        current ? "true" : "false", (long long)e->hits,
                        e->load_ms);
    /* rule 2: the entry holds a connection of its own to the file */
    sqlite3_str_appendf(
        s, ",\"watcher\":%s,\"how\":", e->watch ? "true" : "false");
    json_str(s, e->note);
    /* TEXT columns: their distinct values (engine/cache/dict.h) */
    sqlite3_str_appendall(s, ",\"text\":{");
    for (int k = 0, n = 0; k < e->ncols; k++) {
      if (!e->cols[k].dict)
        continue;
      if (n++)
        sqlite3_str_appendchar(s, 1, ',');
      json_str(s, e->cols[k].name);
      sqlite3_str_appendf(s, ":%lld",
                          (long long)ga_dict_count(e->cols[k].dict));
    }
    sqlite3_str_appendall(s, "},\"mixed\":[");
    for (int k = 0, n = 0; k < e->ncols; k++)
      if (e->cols[k].mixed) {
        if (n++)
          sqlite3_str_appendchar(s, 1, ',');
        json_str(s, e->cols[k].name);
      }
    sqlite3_str_appendall(s, "]}");
  }
  sqlite3_str_appendall(s, "]}");
  return sqlite3_str_finish(s);
}
