/*
** intr.c — the caller's interrupt and progress handler, as the thread that
** runs worker 0 and waits for the others sees them (ext/common/glue.h).
** The rules are gpu_aggregate's (planner/path.c, rule 12).
*/
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "glue.h"

typedef int (*is_interrupted_fn)(sqlite3 *);

/* sqlite3_is_interrupted (3.41+), found at run time: in a loadable
** extension it is the routine that follows value_encoding in the API table
** of 3.41 and later; linked in (SQLITE_CORE), the library's symbol. */
static is_interrupted_fn find_is_interrupted(void) {
  static int done;
  static is_interrupted_fn fn;
  if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
    return fn;
  is_interrupted_fn f = NULL;
  if (sqlite3_libversion_number() >= 3041000) {
#ifdef SQLITE_CORE
    *(void **)&f = dlsym(RTLD_DEFAULT, "sqlite3_is_interrupted");
#else
    const char *slot = (const char *)&sqlite3_api->value_encoding;
    memcpy(&f, slot + sizeof(void (*)(void)), sizeof f);
#endif
  }
  fn = f;
  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
  return fn;
}

int ga_intr_native(void) { return find_is_interrupted() != NULL; }

int ga_intr_rc(sqlite3 *db, int rc) {
  if ((rc & 0xff) == SQLITE_ERROR &&
      !strcmp(sqlite3_errmsg(db), sqlite3_errstr(SQLITE_INTERRUPT)))
    return SQLITE_INTERRUPT;
  return rc;
}

/* The progress probe: about 4,300 VM instructions (250 turns of a
** recursive CTE, ~30 us), stepped on the caller's connection at most once
** every GA_INTR_PROGRESS_NS.  SQLite calls a progress handler from the VM
** of any statement of the connection, so the application's handler (which
** SQLite lets nobody read) runs while the workers scan: one of period N <=
** 4096 at least once a probe, a larger one every ceil(N/4300) probes.
** When it returns nonzero, the probe fails with SQLITE_INTERRUPT and the
** scan stops, as the serial query would. */
#define GA_INTR_PROGRESS_SQL                                                   \
  "WITH RECURSIVE gpuagg_probe(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM "   \
  "gpuagg_probe WHERE i < 250) SELECT count(*) FROM gpuagg_probe"
#define GA_INTR_PROGRESS_NS 10000000 /* 10 ms */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Step st to its end and reset it; 1 when it was interrupted.  Preparing
** it is part of the poll: SQLite's parser stops at an interrupt too, so a
** probe not yet prepared when the interrupt came fails to prepare with it
** (and would fail again at every poll, the interrupt never seen). */
static int step_interrupted(sqlite3 *db, sqlite3_stmt **st, const char *sql) {
  int rc;
  if (!*st && (rc = sqlite3_prepare_v2(db, sql, -1, st, NULL)) != SQLITE_OK)
    return (ga_intr_rc(db, rc) & 0xff) == SQLITE_INTERRUPT;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW)
    ;
  sqlite3_reset(*st);
  return rc == SQLITE_INTERRUPT;
}

int ga_intr_check(void *arg) {
  ga_intr *in = arg;
  int64_t now = mono_ns();
  if (now >= in->next_progress_ns) { /* the first call always probes */
    in->next_progress_ns = now + GA_INTR_PROGRESS_NS;
    in->progress_probes++;
    if (step_interrupted(in->db, &in->progress, GA_INTR_PROGRESS_SQL))
      return 1;
  }
  is_interrupted_fn f = find_is_interrupted();
  if (f)
    return f(in->db);
  /* Older SQLite: a statement stepped on the caller's connection returns
  ** SQLITE_INTERRUPT once sqlite3_interrupt was called (the flag is cleared
  ** only when no statement of the connection runs, and ours does).  A step
  ** costs far more than a load, and worker 0 polls every few thousand VM
  ** instructions (engine/scan/scan.c): one step a millisecond at most. */
  if (now < in->next_ns)
    return 0;
  in->next_ns = now + 1000000;
  return step_interrupted(in->db, &in->probe, "SELECT 1");
}

void ga_intr_free(ga_intr *i) {
  sqlite3_finalize(i->probe);
  sqlite3_finalize(i->progress);
  i->probe = i->progress = NULL;
}
