/*
** cache_persist.c — gpu_cache's cache files (issue 40, part 3): a host
** entry written after its load, and mapped by a later process instead of a
** load from rows (engine/cache/cache_file.c: the format and the I/O).
**
** SQL interface:
**
**   SELECT gpuagg_config('cache_file', 'on');   -- off by default
**   SELECT gpuagg_config('cache_dir', '/abs/dir');   -- '' = beside the db
**   SELECT gpu_cache('t', 'x, k');  -- maps a valid file, else loads from
**                                   -- rows and writes the file
**
** gpuagg_info()'s cache object: each entry's "source" ("file" or "rows"),
** and "file": {"maps", "writes", "map", "write"}: the outcome of the last
** map and of the last write, with the reason a file was refused or not
** written.
**
** Rules:
**   1. Only gpu_cache maps a file; a query never does on its own (it
**      answers from entries, which gpu_cache makes).  A file holds a host
**      entry's columns.  Where the entry goes to the GPU, it is built in
**      host memory first (mapped from the file, or loaded from rows and
**      written), then copied to the device (engine/cache/cache_upload.c)
**      and its host copy freed; where that copy fails it stays in host
**      memory (cache_fns.c rule 5).  A table of temp or of an in-memory
**      database loads as without files.
**   2. The file is <db>-gpuagg beside the database (its path as SQLite
**      names it), or with cache_dir set, <cache_dir>/<db's base
**      name>-<device>-<inode>-gpuagg (a read-only location's database).
**   3. What a file stands for (ga_cfstamp), read under the schema's read
**      lock (a PRAGMA schema_version statement left on its row, as
**      planner/cache_plan.c's stamps are): the database file's identity
**      (device, inode, change time in ns: a file replaced by rename, or
**      rewritten in place with the same size and times, differs), its size,
**      page size, change counter (offset 24), page count and schema cookie,
**      the text encoding, and in WAL mode the WAL's last commit: mxFrame,
**      the salts and frame mxFrame's checksum, read through xShmMap and
**      SQLITE_FCNTL_JOURNAL_POINTER's xRead, with mxFrame > 0.
**      Rollback journal: every commit moves the change counter and the
**      change time.  WAL: the change counter moves only when page 1 is
**      written, so after an in-place UPDATE, a checkpoint and a close the
**      header can be byte-identical while a value changed; a WAL with no
**      committed frame (checkpointed away, removed, reset and not yet
**      written) therefore proves nothing, and neither writes nor maps a
**      file; a reset WAL has new salts.  Any field that differs: the file
**      is for another state, and gpu_cache loads from rows (and writes a
**      new file).
**   4. A file is written only for the state the entry holds: the stamp of
**      rule 3 is read after the load, and then the connection's own stamps
**      (cache_plan.c rule 2) must still equal the entry's, so no commit
**      came between the load and it.  A file is mapped only when the
**      connection's stamps before and after it are equal (nothing
**      committed while it was read), and the entry takes the "before"
**      stamp, so it stays current exactly as a loaded one would.
**   5. Never inside a transaction open on the schema (its snapshot may be
**      older than the WAL's newest commit), never for a read-only database
**      (sqlite3_db_readonly: mode=ro, a read-only file or directory) or an
**      immutable one (neither written nor mapped: immutable reads no WAL),
**      never where the database's file cannot be stat()ed.
**   6. The file takes the database file's mode, never writable by others;
**      a file not owned by this process's user, writable by others, or a
**      symlink, is refused (engine/cache/cache_file.h rule 1).  A damaged
**      file is refused with the reason (rule 2 there), and gpu_cache loads
**      from rows and writes it anew.
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_file.h"
#include "cache_persist.h"
#include "filestamp.h"

/* The outcome of the last map (map = 1) or write, for gpuagg_info. */
static void last(ga_cache *c, int map, const char *fmt, const char *table,
                 const char *what) {
  pthread_mutex_lock(&c->mu);
  if (map)
    snprintf(c->file_map, sizeof c->file_map, fmt, table, what);
  else
    snprintf(c->file_write, sizeof c->file_write, fmt, table, what);
  pthread_mutex_unlock(&c->mu);
}

/* Rules 1 and 5: may schema's file be written (write = 1) or mapped?
** NULL, or why not. */
static const char *file_refusal(sqlite3 *db, const char *schema, int write) {
  if (!sqlite3_stricmp(schema, "temp"))
    return "a temp table";
  const char *fn = sqlite3_db_filename(db, schema);
  if (!fn || !*fn)
    return "an in-memory or temporary database";
  if (sqlite3_uri_boolean(fn, "immutable", 0))
    return "an immutable database (immutable=1)";
  if (write && sqlite3_db_readonly(db, schema) != 0)
    return "a read-only database (mode=ro, or a read-only file or "
           "directory)";
  if (sqlite3_txn_state(db, schema) != SQLITE_TXN_NONE)
    return "a transaction is open on the schema (its snapshot may be older "
           "than the newest commit)";
  return NULL;
}

/* Rule 3: the state of schema's file, under its read lock.  SQLite result
** code; *why set (and SQLITE_OK) when nothing on disk proves the state. */
static int file_stamp(sqlite3 *db, const char *schema, ga_cfstamp *fs,
                      const char **why) {
  memset(fs, 0, sizeof *fs);
  *why = NULL;
  int enc = SQLITE_UTF8;
  int rc = ga_db_encoding_of(db, &enc);
  if (rc != SQLITE_OK)
    return rc;
  ga_fstamp s;
  memset(&s, 0, sizeof s);
  sqlite3_stmt *st = NULL;
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", schema);
  if (!sql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      ga_fstamp_read_locked(db, schema, &s); /* the read lock is held */
      rc = SQLITE_OK;
    } else {
      rc = sqlite3_reset(st);
      if (rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_OK)
    return rc;
  if (s.gone)
    *why = "the database's path names another file now, or none";
  else if (s.noident)
    *why = "the database file's identity cannot be read (stat() failed)";
  else if (s.size < 0)
    *why = "the database file's size cannot be read";
  else if (s.wal && (!s.ok || s.mxframe == 0))
    *why = "WAL mode with no committed frame in the WAL (checkpointed "
           "away, reset, or none yet): nothing on disk proves the state";
  else if (!s.ok)
    *why = s.why ? s.why : "the database file's state cannot be proved";
  fs->dev = s.st_dev;
  fs->ino = s.st_ino;
  fs->ctime_ns = s.st_ctime_ns;
  fs->size = s.size;
  fs->pagesize = s.pagesize;
  fs->counter = s.counter;
  fs->npages = s.npages;
  fs->cookie = s.cookie;
  fs->wal = (uint32_t)s.wal;
  fs->mxframe = s.mxframe;
  memcpy(fs->salt, s.salt, sizeof fs->salt);
  memcpy(fs->cksum, s.cksum, sizeof fs->cksum);
  fs->enc = (uint32_t)enc;
  return SQLITE_OK;
}

/* Rule 2: the file's path (sqlite3_malloc'd), NULL when out of memory. */
static char *file_path(sqlite3 *db, const char *schema, const ga_config *cfg,
                       const ga_cfstamp *fs) {
  const char *fn = sqlite3_db_filename(db, schema);
  if (!cfg->cache_dir[0])
    return sqlite3_mprintf("%s-gpuagg", fn);
  const char *base = strrchr(fn, '/');
  base = base ? base + 1 : fn;
  return sqlite3_mprintf("%s/%s-%llu-%llu-gpuagg", cfg->cache_dir, base,
                         (unsigned long long)fs->dev,
                         (unsigned long long)fs->ino);
}

/* Rule 1: host entry e copied to the GPU; where that fails it stays in
** host memory, and note says why. */
static void to_device(ga_cache *c, sqlite3 *db, const ga_config *cfg,
                      ga_centry *e, char *note, size_t nnote) {
  char why[200];
  ga_intr intr = {.db = db};
  ga_cache_qlock(c); /* the device's stream (engine/cache/cache.c rule 6) */
  int rc = ga_cfile_to_gpu(c, e, ga_cache_budget(cfg, GA_CACHE_GPU),
                           ga_intr_check, &intr, why, sizeof why);
  ga_cache_qunlock(c);
  ga_intr_free(&intr);
  size_t n = strlen(note);
  if (rc == GA_CFILE_OK)
    snprintf(note + n, nnote - n, "; copied to the GPU");
  else
    snprintf(note + n, nnote - n, "; in host memory: %s", why);
}

int ga_persist_load_where(sqlite3 *db, const ga_config *cfg, const char *schema,
                          int where) {
  return cfg->cache_file && where == GA_CACHE_GPU &&
                 !file_refusal(db, schema, 1)
             ? GA_CACHE_HOST
             : where;
}

void ga_persist_to_device(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                          ga_centry *e, int where) {
  if (where == GA_CACHE_GPU && e->where == GA_CACHE_HOST && cfg->cache_file) {
    to_device(conn->cache, db, cfg, e, e->note, sizeof e->note);
  }
}

int ga_persist_map(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                   const ga_target *t, const char *const *names,
                   const int *affs, int n, int where, ga_centry **out,
                   char *note, size_t nnote) {
  ga_cache *c = conn->cache;
  *out = NULL;
  if (!cfg->cache_file)
    return SQLITE_OK;
  const char *no = file_refusal(db, t->schema, 0);
  if (no) {
    last(c, 1, "%s: not mapped: %s", t->table, no);
    return SQLITE_OK;
  }
  ga_cstamp before, after;
  ga_cfstamp fs;
  memset(&before, 0, sizeof before);
  memset(&after, 0, sizeof after);
  int rc = ga_cstamp_read(db, t->schema, NULL, &before);
  if (rc == SQLITE_OK)
    rc = file_stamp(db, t->schema, &fs, &no);
  if (rc != SQLITE_OK || no) {
    ga_cstamp_free(&before);
    if (rc != SQLITE_OK) {
      rc = ga_intr_rc(db, rc);
      if ((rc & 0xff) == SQLITE_NOMEM || (rc & 0xff) == SQLITE_INTERRUPT)
        return rc & 0xff;
      no = sqlite3_errstr(rc);
    }
    last(c, 1, "%s: not mapped: %s", t->table, no);
    return SQLITE_OK;
  }
  char *path = file_path(db, t->schema, cfg, &fs);
  if (!path) {
    ga_cstamp_free(&before);
    return SQLITE_NOMEM;
  }
  char why[300];
  ga_centry *e = NULL;
  ga_intr intr = {.db = db};
  int frc =
      ga_cfile_map(c, ga_cache_budget(cfg, GA_CACHE_HOST), path, &fs, t->table,
                   names, affs, n, ga_intr_check, &intr, &e, why, sizeof why);
  int stopped = ga_intr_check(&intr);
  ga_intr_free(&intr);
  if (frc == GA_CFILE_OK) {
    rc = ga_cstamp_read(db, t->schema, NULL, &after);
    const char *d = rc == SQLITE_OK ? ga_cstamp_diff(&before, &after) : NULL;
    if (rc != SQLITE_OK || d) {
      snprintf(why, sizeof why,
               "the database changed while the file was "
               "read");
      pthread_mutex_lock(&c->mu);
      c->used -= e->bytes;
      pthread_mutex_unlock(&c->mu);
      ga_centry_free(e);
      e = NULL;
      frc = GA_CFILE_OTHER;
    }
    ga_cstamp_free(&after);
  }
  if (frc != GA_CFILE_OK) {
    ga_cstamp_free(&before);
    last(c, 1, "%s: not mapped: %s", t->table, why);
    sqlite3_free(path);
    if (stopped)
      return SQLITE_INTERRUPT;
    return frc == GA_CFILE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
  }
  e->stamp = before; /* rule 4 */
  snprintf(note, nnote, "file %s", path);
  if (where == GA_CACHE_GPU) /* rule 1: a GPU entry from the host's */
    to_device(c, db, cfg, e, note, nnote);
  last(c, 1, "%s: mapped %s", t->table, path);
  pthread_mutex_lock(&c->mu);
  c->file_maps++;
  pthread_mutex_unlock(&c->mu);
  sqlite3_free(path);
  *out = e;
  return SQLITE_OK;
}

void ga_persist_save(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                     ga_centry *e) {
  ga_cache *c = conn->cache;
  if (!cfg->cache_file || e->from_file)
    return; /* off, or it came from a file of this state */
  const char *no = e->where != GA_CACHE_HOST
                       ? "a GPU entry (its columns are on the device)"
                       : file_refusal(db, e->schema, 1);
  if (no) {
    last(c, 0, "%s: not written: %s", e->table, no);
    return;
  }
  ga_cfstamp fs;
  ga_cstamp now;
  memset(&now, 0, sizeof now);
  int rc = file_stamp(db, e->schema, &fs, &no);
  /* rule 4: then the entry's own stamps, still its state */
  if (rc == SQLITE_OK && !no) {
    rc = ga_cstamp_read(db, e->schema, e->watch, &now);
    if (rc == SQLITE_OK && ga_cstamp_diff(&e->stamp, &now))
      no = "the database changed since the load";
  }
  ga_cstamp_free(&now);
  if (rc != SQLITE_OK)
    no = sqlite3_errstr(rc);
  struct stat sb;
  const char *fn = sqlite3_db_filename(db, e->schema);
  if (!no && stat(fn, &sb) != 0)
    no = "the database file cannot be stat()ed";
  char *path = no ? NULL : file_path(db, e->schema, cfg, &fs);
  if (!no && !path)
    no = "out of memory";
  if (no) {
    last(c, 0, "%s: not written: %s", e->table, no);
    return;
  }
  char why[300];
  ga_intr intr = {.db = db};
  int frc = ga_cfile_write(path, &fs, e->table, e, sb.st_mode, ga_intr_check,
                           &intr, why, sizeof why);
  ga_intr_free(&intr);
  if (frc == GA_CFILE_OK) {
    last(c, 0, "%s: wrote %s", e->table, path);
    pthread_mutex_lock(&c->mu);
    c->file_writes++;
    pthread_mutex_unlock(&c->mu);
  } else {
    last(c, 0, "%s: not written: %s", e->table, why);
  }
  sqlite3_free(path);
}
