/*
** scan_pool.c — the process-wide pool of gpu_aggregate's worker
** connections, one entry per database file (see scan.h).
**
** Rules:
**   1. Pooled connections are idle: no thread uses them, no transaction is
**      open on them (engine/scan.c ends every transaction before ga_scan_
**      pool_put, and closes a connection it cannot bring back to that).
**   2. An entry lives while user connections hold references to it; the
**      last release closes its idle connections (README: "closed when the
**      last user connection closes").
**   3. A path that now names another file (deleted and created again: a
**      new inode) must not be read through old descriptors: the idle
**      connections of the old file are closed when that is noticed.
**   4. One mutex guards the list; connections are opened and closed outside
**      it (opening reads the file).
*/
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "scan.h"

/* Idle connections kept per file and kind. */
#define GA_POOL_KEEP 64

struct ga_scan_pool {
  char *vfs, *path;
  int users;
  dev_t dev;
  ino_t ino;
  int have_id;
  sqlite3 *idle[GA_POOL_KEEP];
  int nidle;
  sqlite3 *helper; /* the idle read-write one */
  ga_scan_pool *next;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ga_scan_pool *pools;

static char *dup_text(const char *z) {
  size_t n = strlen(z);
  char *p = sqlite3_malloc64(n + 1);
  if (p)
    memcpy(p, z, n + 1);
  return p;
}

ga_scan_pool *ga_scan_pool_ref(const char *vfs, const char *path) {
  ga_scan_pool *p;
  pthread_mutex_lock(&pool_mu);
  for (p = pools; p; p = p->next)
    if (!strcmp(p->vfs, vfs) && !strcmp(p->path, path)) {
      p->users++;
      pthread_mutex_unlock(&pool_mu);
      return p;
    }
  p = sqlite3_malloc64(sizeof(*p));
  if (p) {
    memset(p, 0, sizeof(*p));
    p->vfs = dup_text(vfs);
    p->path = dup_text(path);
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
  return p;
}

/* Take every idle connection of p out (under pool_mu); closed by the
** caller outside the lock. */
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

void ga_scan_pool_unref(ga_scan_pool *p) {
  sqlite3 *close[GA_POOL_KEEP + 1];
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
  for (int i = 0; i < n; i++)
    sqlite3_close_v2(close[i]);
  if (last) {
    sqlite3_free(p->vfs);
    sqlite3_free(p->path);
    sqlite3_free(p);
  }
}

int ga_scan_pool_take(ga_scan_pool *p, int rw, ga_scan_prep_fn prep,
                      sqlite3 **out, const char **err) {
  sqlite3 *close[GA_POOL_KEEP + 1], *db = NULL;
  struct stat sb;
  int n = 0, have = stat(p->path, &sb) == 0;
  *out = NULL;
  pthread_mutex_lock(&pool_mu);
  if (have && p->have_id && (sb.st_dev != p->dev || sb.st_ino != p->ino))
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
  for (int i = 0; i < n; i++)
    sqlite3_close_v2(close[i]);
  if (db) {
    *out = db;
    return SQLITE_OK;
  }
  if (!have) {
    *err = "the database file cannot be found by its path";
    return SQLITE_CANTOPEN;
  }
  int flags = (rw ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
              SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE;
  int rc = sqlite3_open_v2(p->path, &db, flags, p->vfs);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(db, 1);
    if (prep)
      rc = prep(db);
  }
  if (rc != SQLITE_OK) {
    *err = rw ? "cannot open the database read-write for the snapshot lock"
              : "cannot open a worker connection";
    sqlite3_close_v2(db);
    return rc;
  }
  *out = db;
  return SQLITE_OK;
}

void ga_scan_pool_put(ga_scan_pool *p, sqlite3 *db, int rw, int keep) {
  if (!db)
    return;
  if (keep && sqlite3_get_autocommit(db)) {
    pthread_mutex_lock(&pool_mu);
    if (rw && !p->helper) {
      p->helper = db;
      db = NULL;
    } else if (!rw && p->nidle < GA_POOL_KEEP) {
      p->idle[p->nidle++] = db;
      db = NULL;
    }
    pthread_mutex_unlock(&pool_mu);
  }
  sqlite3_close_v2(db); /* not kept (rule 1), or the pool is full */
}

int ga_scan_pool_idle(void) {
  int n = 0;
  pthread_mutex_lock(&pool_mu);
  for (ga_scan_pool *p = pools; p; p = p->next)
    n += p->nidle + (p->helper != NULL);
  pthread_mutex_unlock(&pool_mu);
  return n;
}
