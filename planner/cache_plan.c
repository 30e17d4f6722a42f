/*
** cache_plan.c — whether gpu_cache's entry answers a gpu_aggregate call
** (ga_cache_answer, asked before a scan is planned), the stamps that keep
** it current, and the cache's state for gpuagg_info().  The shapes an
** entry can answer are cache_shape.c's; the load is ext/cache/cache_fns.c.
**
** Rules (numbered as in ext/cache/cache_fns.c, which keeps the others):
**   2. Never stale.  An entry records (ga_cstamp) the schema's data_version
**      (commits of every other connection and process), for a TEMP entry
**      this connection's sqlite3_total_changes64 (its own writes to temp;
**      an entry of main or an attached file ignores it: a TEMP insert or a
**      write to another attached file moves it, not the entry's pager,
**      issue 40), the schema_version (DDL, drop and re-create under one
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
**   7. Sharing (issue 40, engine/cache/cache.h rule 5).  ga_cache_lookup
**      finds the caller's own entry of that schema name, else a shareable
**      one of the same file (device, inode) and table.  The owner, under
**      the name it loaded, keeps rule 2's stamps; any other reader must
**      prove with its own file stamp (ext/common/filestamp.c) that it reads
**      exactly the entry's state:
**        (a) no transaction open on the schema: the stamp read around a
**            read transaction opened for it (WAL: the wal-index header
**            just before and just after it opens) equals the entry's;
**        (b) rollback journal, a transaction open: the SHARED lock held
**            since it began keeps commits out; the stamp under it equals;
**        (c) WAL, a transaction open (gpu_aggregate's statement holds one
**            on main before xFilter): the connection was seen with no
**            transaction on the schema (note_idle: at prepare, at the
**            extension's load, gpuagg_info, any lookup) at a moment after
**            the entry was linked (ga_cache_seq_now), and the newest
**            commit is still the entry's: headers never repeat (mxFrame
**            and iChange grow, a restart changes the salts), so no commit
**            happened since the load, and the transaction, begun after
**            that moment, reads the entry's state;
**        (d) a WAL without a committed frame proves nothing on disk; it is
**            shared only while its owner keeps the file open as main (the
**            WAL cannot be removed and rebuilt meanwhile); the owner's
**            close drops it (engine/cache/cache.c ga_cache_release).
**      The entries kept after the process's last connection closed
**      (engine/cache/cache.c rule 7) are read by later connections under
**      (a)-(c) alike; an answer from one says "kept" in last_scan.why.
**      Not proven: the uncached path, the reason in last_scan.why; a
**      reader with no transaction open that proves another state marks the
**      entry stale (commits only move a file on).  Rule 6 applies to every
**      reader on its own connection (writes, read_uncommitted, its
**      authorizer against the entry's columns under its own schema name);
**      TEMP shadowing resolves the target to temp first, whose entries are
**      never shared.  The query runs under the cache's query lock with a
**      reference held (engine/cache/cache.c rule 6).  The same idle moments
**      note the file's wal-index header (ext/common/walproof.c rule 5),
**      which proves an open transaction's snapshot to an extension by
**      appends (issue 40 part 4, planner/cache_extend.c rule 3); an
**      entry's "appends" and "extends" in gpuagg_info() are its record's.
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "bigmem.h"
#include "cache_append.h"
#include "cache_plan.h"
#include "filestamp.h"
#include "gpu.h"
#include "pintime.h"
#include "walproof.h"

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

/* Rule 2's stamp of the schema's file (ext/common/filestamp.c), read
** through SQLite's own open files while the caller holds the read lock
** (ga_cstamp_read).  Every schema with a file records it: the shared
** entries' stamp (rule 7); the owner compares it only for an attached
** schema.  An attached WAL file with no provable commit frame is
** unprovable: its watcher proves it (rule 2). */
static void stamp_file(sqlite3 *db, const char *schema, ga_cstamp *s) {
  ga_fstamp_read_locked(db, schema, &s->fs);
  s->attached =
      sqlite3_stricmp(schema, "main") && sqlite3_stricmp(schema, "temp");
  const char *fn = sqlite3_db_filename(db, schema);
  if (s->attached && s->fs.wal && !s->fs.walprov &&
      !(fn && sqlite3_uri_boolean(fn, "immutable", 0)))
    s->unprovable = 1;
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
      const char *fn = sqlite3_db_filename(db, schema);
      s->temp = !sqlite3_stricmp(schema, "temp");
      if (!s->temp && fn && *fn)
        stamp_file(db, schema, s);
      else if (!s->temp && sqlite3_stricmp(schema, "main"))
        s->attached = s->fs.noident = 1; /* in memory: never current */
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
  /* a TEMP write moves total_changes, not main's pager (issue 40): only a
  ** temp entry counts it; the others see this connection's commits in
  ** pager_version, and its uncommitted writes step aside (rule 6) */
  if ((a->temp || b->temp) && a->total_changes != b->total_changes)
    return "this connection wrote (total_changes)";
  if (a->schema_version != b->schema_version)
    return "the schema changed (schema_version)";
  if (strcmp(a->file, b->file) || a->fileobj != b->fileobj)
    return "another database is attached under that name";
  if (a->attached || b->attached) {
    const ga_fstamp *x = &a->fs, *y = &b->fs;
    if (x->gone || y->gone)
      return "the attached file's path names another file now, or none "
             "(SQLITE_FCNTL_HAS_MOVED: renamed over or deleted)";
    if (x->noident || y->noident)
      return "the attached file's identity cannot be read (stat() of its "
             "name failed)";
    if (x->st_dev != y->st_dev || x->st_ino != y->st_ino ||
        x->st_ctime_ns != y->st_ctime_ns || x->st_btime_ns != y->st_btime_ns)
      return "the attached file was replaced or changed (another file "
             "under its name, or its change time moved)";
    if (a->unprovable != b->unprovable)
      return "the attached file changed (its WAL: detached, written and "
             "attached again)";
    if (a->unprovable && (!a->watched || !b->watched || b->moved ||
                          a->watch_version != b->watch_version))
      return "the attached file is in WAL mode with no committed frame in "
             "its WAL, and the cache's own connection to it saw a commit "
             "(or lost it)";
    if (a->attached != b->attached || x->wal != y->wal ||
        x->counter != y->counter || x->npages != y->npages ||
        x->cookie != y->cookie || x->pagesize != y->pagesize ||
        x->size != y->size)
      return "the attached file changed (its header or size: detached, "
             "written and attached again)";
    if (x->mxframe != y->mxframe || memcmp(x->salt, y->salt, sizeof x->salt) ||
        memcmp(x->cksum, y->cksum, sizeof x->cksum))
      return "the attached file changed (its WAL: detached, written and "
             "attached again)";
  }
  if (a->pager_version != b->pager_version)
    return "this connection wrote and committed (SQLITE_FCNTL_DATA_VERSION "
           "of the schema's pager: a statement's commit, or one that no "
           "statement counts, such as sqlite3_blob_write)";
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
  return ga_pragma_is(db, schema, "journal_mode", "wal", 1); /* unknown: WAL */
}

/* Rule 2's watchers: those still open, after closing each whose file is
** gone (SQLITE_FCNTL_HAS_MOVED of its own main: deleted or renamed over),
** so that a deleted file's descriptors are released; its entry is then
** stale for good (nothing proves it any more). */
int ga_cache_watchers(ga_cache *c, sqlite3 *db) {
  int n = 0;
  if (!c)
    return 0;
  /* db's own entries only (a watcher belongs to its owner's thread);
  ** closed outside the list's mutex, one at a time (closing one may
  ** release a gpuagg connection of its own: engine/cache/cache.c rule 6) */
  for (;;) {
    sqlite3 *close = NULL;
    n = 0;
    pthread_mutex_lock(&c->mu);
    for (ga_centry *e = c->entries; e && !close; e = e->next) {
      if (e->owner != db || !e->watch)
        continue;
      int moved = 1;
      if (sqlite3_file_control(e->watch, "main", SQLITE_FCNTL_HAS_MOVED,
                               &moved) != SQLITE_OK)
        moved = 1;
      if (moved || e->stale) {
        close = e->watch;
        e->watch = NULL;
        e->stale = 1;
      } else {
        n++;
      }
    }
    pthread_mutex_unlock(&c->mu);
    if (!close)
      return n;
    sqlite3_close(close);
  }
}

/* ---- sharing (rule 7) ---- */

/* Rule 7: connection db has no transaction open on schema now: noted with
** the clock read BEFORE looking, so a later proof may rely on it. */
static void note_idle(sqlite3 *db, const char *schema) {
  int64_t seq = ga_cache_seq_now();
  if (schema && sqlite3_txn_state(db, schema) == SQLITE_TXN_NONE) {
    ga_cache_note_idle(db, schema, seq);
    ga_walnote_idle(db, schema); /* issue 40 part 4 */
  }
}

void ga_cache_note_idle_db(sqlite3 *db) {
#ifndef SQLITE_CORE
  /* the API table has sqlite3_db_name from 3.39 on */
  if (sqlite3_libversion_number() < 3039000) {
    note_idle(db, "main");
    return;
  }
#endif
  const char *name;
  for (int i = 0; (name = sqlite3_db_name(db, i)) != NULL; i++)
    if (i != 1) /* temp: never shared */
      note_idle(db, name);
}

ga_centry *ga_cache_lookup(ga_cache *c, sqlite3 *db, const char *schema,
                           const char *table) {
  uint64_t dev = 0, ino = 0;
  if (!c)
    return NULL;
  note_idle(db, schema);
  note_idle(db, "main");
  int ident = ga_fstamp_ident(db, schema, &dev, &ino);
  return ga_cache_get(c, db, schema, ident, dev, ino, table);
}

int ga_cache_visible(sqlite3 *db, const ga_centry *e) {
  if (__atomic_load_n(&e->owner, __ATOMIC_RELAXED) == db)
    return 1;
  if (!e->shareable)
    return 0;
  sqlite3_stmt *st = NULL;
  int seen = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &st, NULL) !=
      SQLITE_OK)
    return 0;
  while (!seen && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 1);
    uint64_t dev = 0, ino = 0;
    seen = name && ga_fstamp_ident(db, name, &dev, &ino) && dev == e->fdev &&
           ino == e->fino;
  }
  sqlite3_finalize(st);
  return seen;
}

/* The name db gives e's file (a shared entry), sqlite3_malloc'd, or
** NULL. */
static char *shared_schema(sqlite3 *db, const ga_centry *e) {
  sqlite3_stmt *st = NULL;
  char *found = NULL;
  if (sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &st, NULL) !=
      SQLITE_OK)
    return NULL;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 1);
    uint64_t dev = 0, ino = 0;
    if (name && ga_fstamp_ident(db, name, &dev, &ino) && dev == e->fdev &&
        ino == e->fino)
      found = sqlite3_mprintf("%s", name);
  }
  sqlite3_finalize(st);
  return found;
}

int ga_cache_visible_entries(ga_cache *c, sqlite3 *db, ga_centry ***out) {
  int n = 0, k = 0;
  *out = NULL;
  pthread_mutex_lock(&c->mu);
  for (ga_centry *e = c->entries; e; e = e->next)
    n++;
  ga_centry **all = sqlite3_malloc64(sizeof(*all) * (size_t)(n ? n : 1));
  for (ga_centry *e = c->entries; e && all; e = e->next) {
    e->refs++;
    all[k++] = e;
  }
  pthread_mutex_unlock(&c->mu);
  if (!all)
    return -1;
  int m = 0;
  for (int i = 0; i < k; i++) {
    if (ga_cache_visible(db, all[i]))
      all[m++] = all[i];
    else
      ga_centry_put(c, all[i]);
  }
  *out = all;
  return m;
}

/* ---- the authorizer (rule 6) ---- */

/* The caller's program of SELECT <the entry's columns> FROM its table
** (ga_program_sig); NULL with *rc on failure. */
char *ga_centry_sig(sqlite3 *db, const char *schema, const ga_centry *e,
                    int *rc) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "SELECT ");
  for (int i = 0; i < e->ncols; i++)
    sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", e->cols[i].name);
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\"", schema, e->table);
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
/* Rule 7: e read by a connection that did not load it (or under another
** schema name).  SQLITE_OK with why "" when current; why set otherwise
** (the entry marked stale where the file proved a newer state). */
static int shared_current(sqlite3 *db, const char *schema, ga_centry *e,
                          char *why, size_t nwhy, int mark) {
  if (!e->shareable) { /* cannot be: ga_cache_get finds none */
    snprintf(why, nwhy, "the entry is another connection's own");
    return SQLITE_OK;
  }
  /* a WAL with no committed frame: its header proves the state only
  ** while the process held the file open all along: the owner, on main
  ** (it cannot detach it), still open */
  int held = e->fs.walempty;
  if (held && !__atomic_load_n(&e->owner, __ATOMIC_RELAXED)) {
    snprintf(why, nwhy,
             "the shared entry's WAL had no committed frame, which proves "
             "the state only while its owner keeps the file open, and the "
             "owner closed");
    return SQLITE_OK;
  }
  ga_fstamp now;
  int rc = SQLITE_OK, txn = sqlite3_txn_state(db, schema);
  if (txn == SQLITE_TXN_NONE) {
    /* (a) the state a read transaction opened now sees, bracketed */
    rc = ga_fstamp_read(db, schema, &now);
  } else if (!e->fs.wal) {
    /* (b) rollback journal: the SHARED lock held since the transaction
    ** began keeps every commit out: the header is its snapshot */
    ga_fstamp_read_locked(db, schema, &now);
  } else if (ga_cache_idle_seq(db, schema) < e->seq) {
    /* (c) WAL inside a transaction (gpu_aggregate's own statement holds
    ** one on main) that may have begun before the entry was loaded */
    snprintf(why, nwhy,
             "the entry is shared (loaded by another connection) and this "
             "connection's read transaction on %s (WAL) may have begun "
             "before the load; it is proven once the connection is seen "
             "outside a transaction after the load (gpuagg_info(), a "
             "gpu_query through its temp table, a new connection)",
             schema);
    return SQLITE_OK;
  } else {
    /* (c) the transaction began after a moment this connection had none,
    ** which came after the load: no commit since the load (the newest
    ** commit is still the entry's) means its snapshot is the entry's */
    ga_fstamp_read_locked(db, schema, &now);
  }
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
      return rc & 0xff;
    snprintf(why, nwhy, "cannot read the database's version (%s)",
             sqlite3_errstr(rc));
    return SQLITE_OK;
  }
  const char *diff =
      held ? ga_fstamp_diff_held(&e->fs, &now) : ga_fstamp_diff(&e->fs, &now);
  if (diff) {
    /* a provable state other than the entry's is a later one: commits
    ** only move the file on (a file renamed over has another key) */
    if (mark && (now.ok || (held && now.walempty)))
      __atomic_store_n(&e->stale, 1, __ATOMIC_RELAXED);
    snprintf(why, nwhy,
             "the shared entry is not current for this connection: %s", diff);
  }
  return SQLITE_OK;
}

int ga_cache_current(sqlite3 *db, const char *schema, ga_centry *e, char *why,
                     size_t nwhy) {
  ga_cstamp now;
  int rc;
  why[0] = 0;
  /* rule 7: the owner, under the schema name it loaded, keeps its own
  ** stamps; any other reader proves the file's state */
  if (__atomic_load_n(&e->owner, __ATOMIC_RELAXED) != db ||
      sqlite3_stricmp(e->schema, schema)) {
    rc = shared_current(db, schema, e, why, nwhy, 1);
    if (rc != SQLITE_OK || why[0])
      return rc;
    goto rule6;
  }
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
    __atomic_store_n(&e->stale, 1, __ATOMIC_RELAXED); /* for good (rule 2) */
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
rule6:
  if (sqlite3_txn_state(db, schema) == SQLITE_TXN_WRITE) {
    snprintf(why, nwhy,
             "this connection wrote to %s in a transaction still open, or "
             "a statement of it is writing to %s now (the rows differ from "
             "the entry's until COMMIT, which makes it stale, or ROLLBACK)",
             schema, schema);
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
  char *sig = ga_centry_sig(db, schema, e, &rc);
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
                        ga_centry **ep, const ga_target *t, const ga_parts *p,
                        ga_cquery *qp, ga_scan_out *out, int *hit, char *why,
                        size_t nwhy) {
  ga_cache *c = conn->cache;
  *hit = 0;
  why[0] = 0;
  memset(out, 0, sizeof(*out));
  ga_cache_watchers(c, db); /* rule 2: release the gone files' watchers */
  ga_centry *e = c ? ga_cache_lookup(c, db, t->schema, t->table) : NULL;
  if (!e)
    return SQLITE_OK;
  ga_centry_put(c, e);
  if (cfg->cache_bytes > 0)
    ga_cache_fit(c, cfg->cache_bytes);                   /* a lowered budget */
  *ep = e = ga_cache_lookup(c, db, t->schema, t->table); /* rule 7: held */
  if (!e) {
    snprintf(why, nwhy, "the entry was evicted (cache_bytes)");
    return SQLITE_OK;
  }
  if (__atomic_load_n(&e->stale, __ATOMIC_RELAXED)) {
    snprintf(why, nwhy, "the entry is stale; gpu_cache reloads it");
    return SQLITE_OK;
  }
  if (e->where == GA_CACHE_GPU && cfg->device == GA_DEVICE_CPU) {
    snprintf(why, nwhy, "the entry is in GPU memory and device = 'cpu'");
    return SQLITE_OK;
  }
  int rc;
  /* medians and percentiles (issue 39): a host entry keeps each group's
  ** values (engine/cache/cache_pct.c), a GPU entry gathers and sorts them
  ** (engine/cache/cache_gpu_stat.c).  A variance of DISTINCT values: a host
  ** entry's sets keep the values (engine/state/gstate.h rule 9); a GPU
  ** entry's bitmaps and pairs do not feed its Σx², so it declines */
  for (int k = 0;
       e->where == GA_CACHE_GPU && p->val_sq && p->val_dist && k < p->nvals;
       k++)
    if (p->val_sq[k] && p->val_dist[k] && p->val_dist[k] != GA_DIST_PCT) {
      snprintf(why, nwhy,
               "a variance or standard deviation of DISTINCT values (the GPU "
               "cache keeps no set of values for it; a host entry, loaded "
               "with device = 'cpu', answers it)");
      return SQLITE_OK;
    }
  /* variances (issue 39): a host entry steps Σx² (cache_host.c rule 20), a
  ** GPU entry sums it on the device (cache_gpu_stat.c) */
  rc = ga_cache_shape(db, e, t, p, qp, why, nwhy);
  if (rc != 1)
    return rc == 0 ? SQLITE_OK : rc;
  rc = ga_cache_current(db, t->schema, e, why, nwhy);
  if (rc != SQLITE_OK || why[0])
    return rc;
  int threads = ga_config_threads(cfg);
  char qwhy[200] = "";
  /* the caller's interrupt, polled by the loops that can run long: DISTINCT's
  ** sets (cache_distinct.c rule 5), a GPU entry's groups (cache_gpu_many.c
  ** rule 5) */
  ga_intr intr = {.db = db};
  qp->dist_cap = ga_config_group_bytes(cfg);
  qp->interrupted = ga_intr_check;
  qp->interrupted_arg = &intr;
  /* rule 7: one query on the entries at a time (engine/cache/cache.c rule
  ** 6): the GPU's stream and scratch, an entry's lazy structures, the
  ** counters; no SQL runs on the caller's connection under it */
  ga_cache_qlock(c);
  if (e->where == GA_CACHE_GPU)
    rc = ga_cache_query_gpu(c, e, qp, out, qwhy, sizeof qwhy);
  else
    rc = ga_cache_query_host(c, e, qp, threads, out, qwhy, sizeof qwhy);
  ga_intr_free(&intr);
  qp->interrupted = NULL;
  if (rc == GA_SCAN_INTERRUPT) {
    ga_cache_qunlock(c);
    return SQLITE_INTERRUPT;
  }
  if (rc == GA_SCAN_OK && ga_cache_decode_keys(e, qp, out))
    rc = GA_SCAN_NOMEM;
  if (rc == GA_SCAN_OK) {
    *hit = 1;
    /* gpuagg_info reads them without the query lock: atomic */
    __atomic_add_fetch(&e->hits, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&e->owner, __ATOMIC_RELAXED) != db)
      __atomic_add_fetch(&e->shared_hits, 1, __ATOMIC_RELAXED);
    /* victim() reads it under c->mu: atomic (engine/cache/cache.c rule 6) */
    __atomic_store_n(&e->lru, ga_cache_touch(c), __ATOMIC_RELAXED);
    if (e->where == GA_CACHE_GPU)
      c->queries_gpu++;
    else
      c->queries_host++;
    ga_cache_qunlock(c);
    snprintf(why, nwhy, "%s cache%s", e->where == GA_CACHE_GPU ? "GPU" : "host",
             __atomic_load_n(&e->owner, __ATOMIC_RELAXED) == db ? ""
             : __atomic_load_n(&e->kept, __ATOMIC_RELAXED)
                 ? " (kept: loaded by a connection since closed, the cache "
                   "outlived the process's last connection, cache_keep)"
                 : " (shared: loaded by another connection)");
    return SQLITE_OK;
  }
  if (rc == GA_SCAN_NOMEM) {
    ga_cache_qunlock(c);
    return SQLITE_NOMEM;
  }
  if (rc == GA_CACHE_DECLINED) { /* this shape, not the entry */
    ga_cache_qunlock(c);
    snprintf(why, nwhy, "%s", qwhy);
    return SQLITE_OK;
  }
  c->fallbacks++;
  if (e->where == GA_CACHE_GPU) { /* rule 5 */
    snprintf(why, nwhy, "%s; the entry was dropped", qwhy);
    ga_cache_drop(c, e); /* gives back the reference too */
    *ep = NULL;
  } else {
    snprintf(why, nwhy, "%s", qwhy);
  }
  ga_cache_qunlock(c);
  return SQLITE_OK;
}

int ga_cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                    const ga_target *t, const ga_parts *p, ga_scan_out *out,
                    int *hit, char *why, size_t nwhy) {
  ga_cquery q;
  ga_centry *e = NULL; /* held while q reads its dictionaries */
  memset(&q, 0, sizeof(q));
  int rc = cache_answer(conn, db, cfg, &e, t, p, &q, out, hit, why, nwhy);
  ga_cquery_free(&q);
  if (e)
    ga_centry_put(conn->cache, e);
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
  int64_t used = 0, loads = 0, kept = 0, ctr[13] = {0}, file_ctr[2] = {0};
  long long big_reused = 0, big_kept = 0; /* bigmem.h rule 5 */
  ga_big_stats(&big_reused, &big_kept);
  char file_map[400] = "", file_write[400] = "";
  int nconn = 0;
  if (c) { /* rule 7: the process's (engine/cache/cache.c rule 6's locks) */
    nconn = ga_cache_nconn(c); /* g_mu's, not mu's: before the others */
    ga_cache_qlock(c);
    pthread_mutex_lock(&c->mu);
    used = c->used;
    loads = c->loads;
    kept = c->kept;             /* engine/cache/cache.c rule 7 */
    file_ctr[0] = c->file_maps; /* cache files: cache_persist.c */
    file_ctr[1] = c->file_writes;
    snprintf(file_map, sizeof file_map, "%s", c->file_map);
    snprintf(file_write, sizeof file_write, "%s", c->file_write);
    pthread_mutex_unlock(&c->mu);
    ctr[0] = (int64_t)c->scratch_bytes;
    ctr[1] = c->queries_gpu;
    ctr[2] = c->queries_host;
    ctr[3] = c->fallbacks;
    ctr[4] = c->queries_topk;
    ctr[5] = c->queries_many;
    ctr[6] = c->values_compact;
    ctr[7] = c->values_compact_no;
    ctr[8] = c->pct_values_back; /* issue 39 */
    ctr[9] = c->pct_selected;
    ctr[10] = c->queries_csum;  /* issue 37 */
    pthread_mutex_lock(&c->mu); /* issue 40 part 4: GPU extensions */
    ctr[11] = c->gpu_append_inplace;
    ctr[12] = c->gpu_append_copied;
    pthread_mutex_unlock(&c->mu);
    ga_cache_qunlock(c);
  }
  sqlite3_str_appendf(
      s,
      "{\"where\":\"%s\",\"budget\":%lld,\"used\":%lld,"
      "\"scratch\":%lld,\"queries_gpu\":%lld,"
      "\"queries_host\":%lld,\"fallbacks\":%lld,\"queries_topk\":%lld,"
      "\"queries_many\":%lld,\"values_compact\":%lld,"
      "\"values_compact_no\":%lld,\"pct_values_back\":%lld,"
      "\"pct_selected\":%lld,\"gpu_append_inplace\":%lld,"
      "\"gpu_append_copied\":%lld,\"loads\":%lld,\"kept\":%lld,"
      "\"queries_csum\":%lld,\"big_reused\":%lld,\"big_kept\":%lld,"
      "\"connections\":%d,\"entries\":[",
      where == GA_CACHE_GPU ? "gpu" : "host",
      (long long)ga_cache_budget(&cfg, where), (long long)used,
      (long long)ctr[0], (long long)ctr[1], (long long)ctr[2],
      (long long)ctr[3], (long long)ctr[4], (long long)ctr[5],
      (long long)ctr[6], (long long)ctr[7], (long long)ctr[8],
      (long long)ctr[9], (long long)ctr[11], (long long)ctr[12],
      (long long)loads, (long long)kept, (long long)ctr[10], big_reused,
      big_kept, nconn);
  ga_cache_watchers(c, db);
  note_idle(db, "main"); /* rule 7 */
  ga_centry **vis = NULL;
  int nvis = c ? ga_cache_visible_entries(c, db, &vis) : 0;
  for (int vi = 0; vi < nvis; vi++) {
    ga_centry *e = vis[vi];
    ga_cstamp now;
    int current = 0;
    int mine = __atomic_load_n(&e->owner, __ATOMIC_RELAXED) == db;
    memset(&now, 0, sizeof(now));
    if (__atomic_load_n(&e->stale, __ATOMIC_RELAXED)) {
      ;
    } else if (mine) {
      if (ga_cstamp_read(db, e->schema, e->watch, &now) == SQLITE_OK)
        current = ga_cstamp_diff(&e->stamp, &now) == NULL;
    } else {
      /* rule 7, without marking: the file's stamp as this connection
      ** would prove it, under the schema name it gives the file */
      char *name = shared_schema(db, e), w[8];
      w[0] = 0;
      current = name &&
                shared_current(db, name, e, w, sizeof w, 0) == SQLITE_OK &&
                !w[0];
      sqlite3_free(name);
    }
    ga_cstamp_free(&now);
    sqlite3_str_appendf(s, "%s{\"table\":", vi ? "," : "");
    char *full = sqlite3_mprintf("%s.%s", e->schema, e->table);
    json_str(s, full);
    sqlite3_free(full);
    sqlite3_str_appendall(s, ",\"columns\":[");
    for (int k = 0; k < e->ncols; k++) {
      if (k)
        sqlite3_str_appendchar(s, 1, ',');
      json_str(s, e->cols[k].name);
    }
    sqlite3_str_appendf(
        s,
        "],\"rows\":%lld,\"bytes\":%lld,\"where\":\"%s\","
        "\"current\":%s,\"hits\":%lld,\"load_ms\":%.3f",
        (long long)e->rows, (long long)e->bytes,
        e->where == GA_CACHE_GPU ? "gpu" : "host", current ? "true" : "false",
        (long long)__atomic_load_n(&e->hits, __ATOMIC_RELAXED), e->load_ms);
    /* rule 2: the entry holds a connection of its own to the file */
    sqlite3_str_appendf(
        s,
        ",\"watcher\":%s,\"shareable\":%s,\"mine\":%s,"
        "\"kept\":%s,"
        "\"shared_hits\":%lld,\"source\":\"%s\",",
        e->watch ? "true" : "false", e->shareable ? "true" : "false",
        mine ? "true" : "false",
        __atomic_load_n(&e->kept, __ATOMIC_RELAXED) ? "true" : "false",
        (long long)__atomic_load_n(&e->shared_hits, __ATOMIC_RELAXED),
        e->from_file ? "file" : "rows");
    /* issue 40 part 4: rows appended by extensions, and how many */
    sqlite3_str_appendf(s, "\"appends\":%lld,\"extends\":%lld,\"how\":",
                        e->app ? (long long)e->app->appends : 0LL,
                        e->app ? (long long)e->app->extends : 0LL);
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
  for (int vi = 0; vi < nvis; vi++)
    ga_centry_put(c, vis[vi]);
  sqlite3_free(vis);
  /* cache files (ext/cache/cache_persist.c) */
  sqlite3_str_appendf(s, "],\"file\":{\"maps\":%lld,\"writes\":%lld,\"map\":",
                      (long long)file_ctr[0], (long long)file_ctr[1]);
  json_str(s, file_map);
  sqlite3_str_appendall(s, ",\"write\":");
  json_str(s, file_write);
  sqlite3_str_appendall(s, "}}");
  return sqlite3_str_finish(s);
}
