/*
** scan_pool.h — the process-wide pool of the parallel scan's worker
** connections, one entry per database file (scan_pool.c, whose header
** states its rules and the bound).
*/
#ifndef GA_SCAN_POOL_H
#define GA_SCAN_POOL_H

typedef struct sqlite3 sqlite3;

/* One database file (VFS name + path).  A user connection that runs a
** parallel scan on it holds a reference while the file is attached to it;
** the last release closes its idle connections.  Connections are opened
** read-only and NOMUTEX (each is used by one thread at a time) with the
** caller's VFS, except the one "helper" that takes the WAL write lock for a
** moment (engine/scan/scan.c): read-write for a caller that may write the
** file, read-only for a read-only caller (then it only watches for commits).
** None checkpoints on close.  The rules, and the bound below, are at the
** top of engine/scan/scan_pool.c. */
typedef struct ga_scan_pool ga_scan_pool;

/* Idle connections kept in all pools together, helpers included (rule 4
** of scan_pool.c: the one idle the longest is closed first). */
#define GA_SCAN_POOL_MAX_IDLE 64

/* Called once on every new connection (gpuagg's worker functions). */
typedef int (*ga_scan_prep_fn)(sqlite3 *db);

/* The entry of (vfs, path, immutable, readonly): immutable entries open
** their connections as "file:PATH?immutable=1" (rule 6 of scan_pool.c);
** readonly (the caller's sqlite3_db_readonly) entries open their helper
** read-only too (rule 7). */
ga_scan_pool *ga_scan_pool_ref(const char *vfs, const char *path, int immutable,
                               int readonly);
void ga_scan_pool_unref(ga_scan_pool *p);
/* A holder's list of references (gpu_aggregate's module, the column
** cache): hold adds the pool of (vfs, path, immutable, readonly) once and
** returns it
** (NULL: out
** of memory); prune releases those of files that db no longer has attached
** (PRAGMA database_list; nothing when it cannot be read). */
ga_scan_pool *ga_scan_pool_hold(ga_scan_pool ***list, int *n, const char *vfs,
                                const char *path, int immutable, int readonly);
void ga_scan_pool_prune(sqlite3 *db, ga_scan_pool **list, int *n);
/* A connection of the pool (rw: the helper), or a new one.  SQLite result
** code; *err gets a static reason on failure. */
int ga_scan_pool_take(ga_scan_pool *p, int rw, ga_scan_prep_fn prep,
                      sqlite3 **out, const char **err);
/* Give it back (keep = 0: it failed, close it). */
void ga_scan_pool_put(ga_scan_pool *p, sqlite3 *db, int rw, int keep);
/* Connections now idle in all pools (tests). */
int ga_scan_pool_idle(void);
/* Of them, those that can write their file (rule 7: only the helpers of
** callers that may write it). */
int ga_scan_pool_idle_readwrite(void);

#endif
