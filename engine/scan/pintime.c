/*
** pintime.c — one current time for every connection of one call (see
** pintime.h).
**
** Rules:
**   1. A shim is registered once per real VFS (rule 5), never as the
**      default, and lives as long as the process (SQLite keeps a pointer to
**      every registered VFS; the library is never unloaded: -z nodelete).
**      Its name is "gpuagg-pin/" and the real VFS's name, with "#N" after
**      it where that name is taken (rule 5: another VFS of the same name
**      has a shim too).
**   2. The shim is the real VFS in all but the time: szOsFile, mxPathname
**      and every method but xCurrentTime and xCurrentTimeInt64 are the
**      real one's, called with the real sqlite3_vfs* (xOpen fills the file
**      SQLite allocated with the real szOsFile, so the files it opens are
**      the real VFS's files: their locks and WAL index are shared with
**      connections that opened the file through the real VFS).  Its
**      version is 2, or 3 where the real VFS has the system-call methods.
**   3. The time: a thread that pinned one (ga_pintime_enter) gets it, in
**      either unit (xCurrentTime gets ms / 86400000.0); any other thread
**      gets the real VFS's answer, so a pooled connection used outside a
**      call behaves as one opened through the real VFS.  Each pinned
**      answer is counted (the enter's reads): SQLite asks only when a date
**      and time function reads 'now', once a step of a statement.
**   4. The caller's time is read as SQLite reads a statement's
**      (sqlite3StmtCurrentTime): xCurrentTimeInt64 of the connection's VFS
**      when its version is 2 or more and it has one, else xCurrentTime
**      scaled by 86400000.0 and truncated.
**   5. A shim wraps the caller's VFS itself (the sqlite3_vfs* its
**      connection uses), never whatever sqlite3_vfs_find gives for its
**      name now: an application may register another VFS under that name
**      (as the default or not), unregister the caller's, or register it
**      again, between or during calls, and a connection keeps the VFS it
**      was opened with.  So a shim is found by the real VFS's pointer and
**      a snapshot of its struct (pNext aside, which registering changes):
**      a VFS freed and another made at the same address gets a shim of
**      its own, under a name of its own, so the worker pools (keyed by
**      the VFS name, engine/scan/scan_pool.c) never hand a call
**      connections opened through another VFS.  Workers that need no pinned
**      time open the file by the caller's VFS's own name only while that
**      name finds that VFS (ga_pintime_vfs_name), else through its shim,
**      which outside a pinning thread is that VFS in every method.
*/
#include <pthread.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "pintime.h"

typedef struct shim {
  sqlite3_vfs base; /* first: SQLite hands the shim back as sqlite3_vfs* */
  sqlite3_vfs *real;
  sqlite3_vfs seen; /* *real when the shim was made, pNext NULL (rule 5) */
  struct shim *next;
  char name[160];
} shim;

static pthread_mutex_t shims_mu = PTHREAD_MUTEX_INITIALIZER;
static shim *shims;

static _Thread_local int pin_on;
static _Thread_local int64_t pin_ms;
static _Thread_local int64_t *pin_reads;

static void count_read(void) {
  if (pin_reads)
    __atomic_add_fetch(pin_reads, 1, __ATOMIC_RELAXED);
}

#define REAL(v) (((shim *)(v))->real)

static int s_open(sqlite3_vfs *v, const char *z, sqlite3_file *f, int flags,
                  int *out) {
  return REAL(v)->xOpen(REAL(v), z, f, flags, out);
}
static int s_delete(sqlite3_vfs *v, const char *z, int sync) {
  return REAL(v)->xDelete(REAL(v), z, sync);
}
static int s_access(sqlite3_vfs *v, const char *z, int flags, int *out) {
  return REAL(v)->xAccess(REAL(v), z, flags, out);
}
static int s_full(sqlite3_vfs *v, const char *z, int n, char *out) {
  return REAL(v)->xFullPathname(REAL(v), z, n, out);
}
static void *s_dlopen(sqlite3_vfs *v, const char *z) {
  return REAL(v)->xDlOpen(REAL(v), z);
}
static void s_dlerror(sqlite3_vfs *v, int n, char *z) {
  REAL(v)->xDlError(REAL(v), n, z);
}
static void (*s_dlsym(sqlite3_vfs *v, void *h, const char *z))(void) {
  return REAL(v)->xDlSym(REAL(v), h, z);
}
static void s_dlclose(sqlite3_vfs *v, void *h) {
  REAL(v)->xDlClose(REAL(v), h);
}
static int s_random(sqlite3_vfs *v, int n, char *z) {
  return REAL(v)->xRandomness(REAL(v), n, z);
}
static int s_sleep(sqlite3_vfs *v, int us) {
  return REAL(v)->xSleep(REAL(v), us);
}
static int s_lasterr(sqlite3_vfs *v, int n, char *z) {
  return REAL(v)->xGetLastError ? REAL(v)->xGetLastError(REAL(v), n, z) : 0;
}
static int s_setsys(sqlite3_vfs *v, const char *z, sqlite3_syscall_ptr p) {
  return REAL(v)->xSetSystemCall(REAL(v), z, p);
}
static sqlite3_syscall_ptr s_getsys(sqlite3_vfs *v, const char *z) {
  return REAL(v)->xGetSystemCall(REAL(v), z);
}
static const char *s_nextsys(sqlite3_vfs *v, const char *z) {
  return REAL(v)->xNextSystemCall(REAL(v), z);
}

/* rule 4, for a VFS that is not pinned */
static int real_time(sqlite3_vfs *r, sqlite3_int64 *ms) {
  if (r->iVersion >= 2 && r->xCurrentTimeInt64)
    return r->xCurrentTimeInt64(r, ms);
  double d = 0;
  int rc = r->xCurrentTime(r, &d);
  *ms = (sqlite3_int64)(d * 86400000.0);
  return rc;
}

/* rule 3 */
static int s_time64(sqlite3_vfs *v, sqlite3_int64 *ms) {
  if (pin_on) {
    count_read();
    *ms = pin_ms;
    return SQLITE_OK;
  }
  return real_time(REAL(v), ms);
}
static int s_time(sqlite3_vfs *v, double *d) {
  if (pin_on) {
    count_read();
    *d = (double)pin_ms / 86400000.0;
    return SQLITE_OK;
  }
  return REAL(v)->xCurrentTime(REAL(v), d);
}

/* Rule 5: *r as a shim saw it (pNext, which registering changes, aside). */
static void snapshot(const sqlite3_vfs *r, sqlite3_vfs *out) {
  memcpy(out, r, sizeof *out);
  out->pNext = NULL;
}

/* Rule 1: a name no registered VFS has (under shims_mu). */
static void shim_name(shim *s, const char *real_name) {
  sqlite3_snprintf((int)sizeof s->name, s->name, "gpuagg-pin/%s", real_name);
  for (int k = 2; sqlite3_vfs_find(s->name); k++)
    sqlite3_snprintf((int)sizeof s->name, s->name, "gpuagg-pin/%s#%d",
                     real_name, k);
}

int ga_pintime_shim(sqlite3_vfs *r, const char **name) {
  if (r->xCurrentTimeInt64 == s_time64 && r->iVersion >= 2) { /* a shim */
    *name = r->zName;
    return SQLITE_OK;
  }
  int rc = SQLITE_OK;
  sqlite3_vfs now;
  snapshot(r, &now);
  pthread_mutex_lock(&shims_mu);
  shim *s = shims;
  while (s && (s->real != r || memcmp(&s->seen, &now, sizeof now)))
    s = s->next; /* rule 5: the same VFS, not only the same address */
  if (!s) {
    s = sqlite3_malloc64(sizeof *s);
    if (!s) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    memset(s, 0, sizeof *s);
    s->real = r;
    s->seen = now;
    shim_name(s, r->zName);
    sqlite3_vfs *b = &s->base;
    b->iVersion = r->iVersion >= 3 ? 3 : 2; /* rule 2 */
    b->szOsFile = r->szOsFile;
    b->mxPathname = r->mxPathname;
    b->zName = s->name;
    b->xOpen = s_open;
    b->xDelete = s_delete;
    b->xAccess = s_access;
    b->xFullPathname = s_full;
    b->xDlOpen = r->xDlOpen ? s_dlopen : NULL;
    b->xDlError = r->xDlError ? s_dlerror : NULL;
    b->xDlSym = r->xDlSym ? s_dlsym : NULL;
    b->xDlClose = r->xDlClose ? s_dlclose : NULL;
    b->xRandomness = s_random;
    b->xSleep = s_sleep;
    b->xCurrentTime = s_time;
    b->xGetLastError = s_lasterr;
    b->xCurrentTimeInt64 = s_time64;
    if (b->iVersion >= 3) {
      b->xSetSystemCall = r->xSetSystemCall ? s_setsys : NULL;
      b->xGetSystemCall = r->xGetSystemCall ? s_getsys : NULL;
      b->xNextSystemCall = r->xNextSystemCall ? s_nextsys : NULL;
    }
    rc = sqlite3_vfs_register(b, 0); /* rule 1: never the default */
    if (rc != SQLITE_OK) {
      sqlite3_free(s);
      goto done;
    }
    s->next = shims;
    shims = s;
  }
  *name = s->name;
done:
  pthread_mutex_unlock(&shims_mu);
  return rc;
}

int ga_pintime_vfs_name(sqlite3_vfs *v, const char **name) {
  if (sqlite3_vfs_find(v->zName) == v) {
    *name = v->zName;
    return SQLITE_OK;
  }
  return ga_pintime_shim(v, name); /* rule 5 */
}

int ga_pintime_caller(sqlite3 *db, int64_t *ms) {
  sqlite3_vfs *v = NULL;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &v) !=
          SQLITE_OK ||
      !v)
    return SQLITE_ERROR;
  sqlite3_int64 t = 0;
  if (real_time(v, &t) != SQLITE_OK)
    return SQLITE_ERROR;
  *ms = t;
  return SQLITE_OK;
}

void ga_pintime_enter(int64_t ms, int64_t *reads, ga_pintime_saved *old) {
  old->on = pin_on;
  old->ms = pin_ms;
  old->reads = pin_reads;
  pin_ms = ms;
  pin_reads = reads;
  pin_on = 1;
}

void ga_pintime_leave(const ga_pintime_saved *old) {
  pin_ms = old->ms;
  pin_reads = old->reads;
  pin_on = old->on;
}
