/*
** scan_pool.c — the process-wide pool of gpu_aggregate's worker
** connections, one entry per database file (see scan_pool.h).
**
** Rules:
**   1. Pooled connections are idle: no thread uses them, no transaction is
**      open on them (engine/scan/scan.c ends every transaction before ga_scan_
**      pool_put, and closes a connection it cannot bring back to that).
**   2. An entry lives while user connections hold references to it; the
**      last release closes its idle connections.  A user connection holds
**      a reference only while the file is attached to it: each gpu_aggregate
**      call and each parallel cache load first releases the pools of files
**      that PRAGMA database_list no longer names (ga_scan_pool_prune), so a
**      detached file's connections close at the next call, or when the user
**      connection closes.
**   3. A path that now names another file (deleted and created again: a
**      new inode) or no file (deleted) must not be read through old
**      descriptors, nor keep a deleted file's space: each new reference
**      (one per parallel call) checks the path of every entry that has idle
**      connections (one stat each), and closes those of a file that is gone
**      or replaced; taking a connection checks its own entry the same way.
**      This compares the path with the file the pool's own connections were
**      opened on, never with the caller's file (a file renamed over before
**      a call, or between this check and the workers' opens, passes it):
**      that the workers read the caller's file is engine/scan/scan.c's "One
**      file" check, made once every worker has begun.
**   4. The bound: GA_SCAN_POOL_MAX_IDLE (64) idle connections in all
**      entries together, helpers included, whatever the number of files,
**      user connections and threads.  Giving back one more closes the
**      connection idle the longest (of any entry) first.  A scan itself may
**      use more (threads + 1); they are opened as needed and the surplus is
**      closed when they come back.
**   5. One mutex guards the list; connections are opened and closed outside
**      it (opening reads the file); the stat calls of rule 3 run under it
**      (no I/O on the file itself).
**   6. A file the caller opened with immutable=1 (its URI) has entries of
**      its own, whose connections open it the same way: SQLite then takes
**      no lock and reads no WAL, as on the caller, so both see one file
**      that the caller promised nobody changes.
**   7. Access mode (issue 36): no connection of an entry may do what the
**      caller's cannot.  Workers open SQLITE_OPEN_READONLY always; the
**      helper opens read-write only for a caller that may write the file
**      (sqlite3_db_readonly == 0), and a read-only caller (mode=ro, a
**      read-only file, immutable=1) has entries of its own whose helper is
**      read-only too.  Every connection is opened with
**      SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: the last connection to a WAL file
**      that closes would otherwise checkpoint it into the main file and
**      delete the -wal, writing a file the caller only reads.  The one
**      exception is the read-write helper of a caller that would itself
**      checkpoint on close (engine/scan/scan.c sets it each time it takes
**      the helper): pooled connections outlive the caller's own close
**      (its module's destructor runs after SQLite closed its file), so the
**      helper is the last to close, and does what SQLite would have done.
**   8. A call that pins its statement time (planner/path.c rule 6) names
**      the shim of the caller's VFS (engine/scan/pintime.h) as its VFS, so
**      its connections are an entry of their own, opened through the shim;
**      outside a pinning thread the shim is its real VFS.
*/
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "scan_pool.h"

struct ga_scan_pool {
  char *vfs, *path;
  int immutable; /* rule 6 */
  int readonly;  /* rule 7: the helper opens read-only too */
  int users;
  dev_t dev;
  ino_t ino;
  int have_id;
  /* idle connections, each with the tick of its return (rule 4: the
  ** smallest tick of all entries is closed first) */
  sqlite3 *idle[GA_SCAN_POOL_MAX_IDLE];
  uint64_t idle_tick[GA_SCAN_POOL_MAX_IDLE];
  int nidle;
  sqlite3 *helper; /* the idle snapshot helper (read-write unless
                      readonly, rule 7) */
  uint64_t helper_tick;
  ga_scan_pool *next;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_scan_pool *pools;
static uint64_t pool_tick; /* under pool_mu */

static char *dup_text(const char *z) {
  size_t n = strlen(z);
  char *p = sqlite3_malloc64(n + 1);
  if (p)
    memcpy(p, z, n + 1);
  return p;
}

/* Take every idle connection of p out (under pool_mu); closed by the
** caller outside the lock.  out holds GA_SCAN_POOL_MAX_IDLE + 1. */
static int drain(ga_scan_pool *p, sqlite3 **out) {
  int n = 0;
  for (int i = 0; i < p->nidle; i++)
    out[n++] = p->idle[i];
  p->nidle = 0;
  if (p->helper)
    out[n++] = p->helper;
  p->helper = NULL;
  return n;
}

/* Rule 3 for p (under pool_mu): 1 when the file p's idle connections were
** opened on is gone from its path or replaced there.  *sb gets the path's
** file when it exists (have). */
static int file_gone(ga_scan_pool *p, struct stat *sb, int *have) {
  *have = stat(p->path, sb) == 0;
  if (!p->have_id)
    return 0;
  return !*have || sb->st_dev != p->dev || sb->st_ino != p->ino;
}

/* Rule 3 for every entry with idle connections (under pool_mu): their
** connections into out (all idle ones, so at most GA_SCAN_POOL_MAX_IDLE by
** rule 4). */
static int sweep(sqlite3 **out) {
  int n = 0;
  for (ga_scan_pool *p = pools; p; p = p->next) {
    struct stat sb;
    int have;
    if ((p->nidle || p->helper) && file_gone(p, &sb, &have))
      n += drain(p, out + n);
  }
  return n;
}

static void close_all(sqlite3 **dbs, int n) {
  for (int i = 0; i < n; i++)
    sqlite3_close_v2(dbs[i]);
}

ga_scan_pool *ga_scan_pool_ref(const char *vfs, const char *path, int immutable,
                               int readonly) {
  sqlite3 *close[GA_SCAN_POOL_MAX_IDLE + 1];
  ga_scan_pool *p;
  pthread_mutex_lock(&pool_mu);
  int n = sweep(close);
  for (p = pools; p; p = p->next)
    if (!strcmp(p->vfs, vfs) && !strcmp(p->path, path) &&
        p->immutable == immutable && p->readonly == readonly) {
      p->users++;
      break;
    }
  if (!p && (p = sqlite3_malloc64(sizeof(*p))) != NULL) {
    memset(p, 0, sizeof(*p));
    p->vfs = dup_text(vfs);
    p->path = dup_text(path);
    p->immutable = immutable;
    p->readonly = readonly;
    if (!p->vfs || !p->path) {
      sqlite3_free(p->vfs);
      sqlite3_free(p->path);
      sqlite3_free(p);
      p = NULL;
    } else {
      p->users = 1;
      p->next = pools;
      pools = p;
    }
  }
  pthread_mutex_unlock(&pool_mu);
  close_all(close, n);
  return p;
}

void ga_scan_pool_unref(ga_scan_pool *p) {
  sqlite3 *close[GA_SCAN_POOL_MAX_IDLE + 1];
  int n = 0, last = 0;
  if (!p)
    return;
  pthread_mutex_lock(&pool_mu);
  if (--p->users == 0) {
    n = drain(p, close);
    for (ga_scan_pool **pp = &pools; *pp; pp = &(*pp)->next)
      if (*pp == p) {
        *pp = p->next;
        break;
      }
    last = 1;
  }
  pthread_mutex_unlock(&pool_mu);
  close_all(close, n);
  if (last) {
    sqlite3_free(p->vfs);
    sqlite3_free(p->path);
    sqlite3_free(p);
  }
}

/* Is path one of db's attached files?  1 yes, 0 no, -1 the list cannot be
** read (then nothing is released). */
static int attached(sqlite3_stmt *st, const char *path) {
  int rc, found = 0;
  while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *f = (const char *)sqlite3_column_text(st, 2);
    found = f && !strcmp(f, path);
  }
  rc = sqlite3_reset(st);
  return rc == SQLITE_OK ? found : -1;
}

void ga_scan_pool_prune(sqlite3 *db, ga_scan_pool **list, int *n) {
  sqlite3_stmt *st = NULL;
  if (*n == 0 || sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &st,
                                    NULL) != SQLITE_OK)
    return;
  int k = 0;
  for (int i = 0; i < *n; i++) {
    if (attached(st, list[i]->path) == 0)
      ga_scan_pool_unref(list[i]); /* rule 2 */
    else
      list[k++] = list[i];
  }
  *n = k;
  sqlite3_finalize(st);
}

ga_scan_pool *ga_scan_pool_hold(ga_scan_pool ***list, int *n, const char *vfs,
                                const char *path, int immutable, int readonly) {
  ga_scan_pool *p = ga_scan_pool_ref(vfs, path, immutable, readonly);
  if (!p)
    return NULL;
  for (int i = 0; i < *n; i++)
    if ((*list)[i] == p) {
      ga_scan_pool_unref(p); /* already counted for this holder */
      return p;
    }
  ga_scan_pool **l = sqlite3_realloc64(*list, sizeof(*l) * (size_t)(*n + 1));
  if (!l) {
    ga_scan_pool_unref(p);
    return NULL;
  }
  *list = l;
  l[(*n)++] = p;
  return p;
}

/* Rule 6: "file:PATH?immutable=1", the path's bytes that a URI gives a
** meaning to (and any byte outside printable ASCII) as %HH. */
static char *immutable_uri(const char *path) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "file:");
  for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
    if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
        (*c >= '0' && *c <= '9') || strchr("/-_.~", *c))
      sqlite3_str_appendchar(s, 1, (char)*c);
    else
      sqlite3_str_appendf(s, "%%%02X", *c);
  }
  sqlite3_str_appendall(s, "?immutable=1");
  return sqlite3_str_finish(s);
}

int ga_scan_pool_take(ga_scan_pool *p, int rw, ga_scan_prep_fn prep,
                      sqlite3 **out, const char **err) {
  sqlite3 *close[GA_SCAN_POOL_MAX_IDLE + 1], *db = NULL;
  struct stat sb;
  int n = 0, have;
  *out = NULL;
  pthread_mutex_lock(&pool_mu);
  if (file_gone(p, &sb, &have))
    n = drain(p, close); /* rule 3 */
  if (have) {
    p->dev = sb.st_dev;
    p->ino = sb.st_ino;
    p->have_id = 1;
  }
  if (rw) {
    db = p->helper;
    p->helper = NULL;
  } else if (p->nidle > 0) {
    db = p->idle[--p->nidle];
  }
  pthread_mutex_unlock(&pool_mu);
  close_all(close, n);
  if (db) {
    *out = db;
    return SQLITE_OK;
  }
  if (!have) {
    *err = "the database file cannot be found by its path";
    return SQLITE_CANTOPEN;
  }
  /* rule 7: read-write only for the helper of a caller that may write */
  int flags =
      (rw && !p->readonly ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE;
  char *uri = p->immutable ? immutable_uri(p->path) : NULL;
  if (p->immutable && !uri) {
    *err = "out of memory";
    return SQLITE_NOMEM;
  }
  int rc = sqlite3_open_v2(uri ? uri : p->path, &db,
                           flags | (uri ? SQLITE_OPEN_URI : 0), p->vfs);
  sqlite3_free(uri);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(db, 1);
    /* rule 7: never checkpoint (nor delete the -wal) on close */
    rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
  }
  if (rc == SQLITE_OK) {
    if (prep)
      rc = prep(db);
  }
  if (rc != SQLITE_OK) {
    *err = !rw           ? "cannot open a worker connection"
           : p->readonly ? "cannot open the snapshot helper connection"
                         : "cannot open the database read-write for the "
                           "snapshot lock";
    sqlite3_close_v2(db);
    return rc;
  }
  *out = db;
  return SQLITE_OK;
}

/* Idle connections of all entries (under pool_mu). */
static int idle_all(void) {
  int n = 0;
  for (ga_scan_pool *p = pools; p; p = p->next)
    n += p->nidle + (p->helper != NULL);
  return n;
}

/* Rule 4 (under pool_mu): the connection idle the longest, out of its
** entry; NULL when none is idle. */
static sqlite3 *evict_oldest(void) {
  ga_scan_pool *best = NULL;
  int bi = -1; /* index in best->idle, -1: its helper */
  uint64_t bt = UINT64_MAX;
  for (ga_scan_pool *p = pools; p; p = p->next) {
    for (int i = 0; i < p->nidle; i++)
      if (p->idle_tick[i] < bt)
        best = p, bi = i, bt = p->idle_tick[i];
    if (p->helper && p->helper_tick < bt)
      best = p, bi = -1, bt = p->helper_tick;
  }
  if (!best)
    return NULL;
  sqlite3 *db;
  if (bi < 0) {
    db = best->helper;
    best->helper = NULL;
  } else {
    db = best->idle[bi];
    best->nidle--;
    memmove(best->idle + bi, best->idle + bi + 1,
            sizeof(best->idle[0]) * (size_t)(best->nidle - bi));
    memmove(best->idle_tick + bi, best->idle_tick + bi + 1,
            sizeof(best->idle_tick[0]) * (size_t)(best->nidle - bi));
  }
  return db;
}

void ga_scan_pool_put(ga_scan_pool *p, sqlite3 *db, int rw, int keep) {
  sqlite3 *old = NULL;
  if (!db)
    return;
  if (keep && sqlite3_get_autocommit(db)) {
    pthread_mutex_lock(&pool_mu);
    if ((rw && !p->helper) || (!rw && p->nidle < GA_SCAN_POOL_MAX_IDLE)) {
      if (idle_all() >= GA_SCAN_POOL_MAX_IDLE)
        old = evict_oldest(); /* rule 4 */
      if (rw) {
        p->helper = db;
        p->helper_tick = ++pool_tick;
      } else {
        p->idle_tick[p->nidle] = ++pool_tick;
        p->idle[p->nidle++] = db;
      }
      db = NULL;
    }
    pthread_mutex_unlock(&pool_mu);
  }
  sqlite3_close_v2(old);
  sqlite3_close_v2(db); /* not kept (rule 1), or the pool is full */
}

int ga_scan_pool_idle_readwrite(void) {
  int n = 0;
  pthread_mutex_lock(&pool_mu);
  for (ga_scan_pool *p = pools; p; p = p->next) {
    for (int i = 0; i < p->nidle; i++) /* idle: no thread uses them */
      n += sqlite3_db_readonly(p->idle[i], "main") == 0;
    if (p->helper)
      n += sqlite3_db_readonly(p->helper, "main") == 0;
  }
  pthread_mutex_unlock(&pool_mu);
  return n;
}

int ga_scan_pool_idle(void) {
  pthread_mutex_lock(&pool_mu);
  int n = idle_all();
  pthread_mutex_unlock(&pool_mu);
  return n;
}
