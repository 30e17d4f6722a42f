/*
** pintime.h — one current time for every connection of one call
** (pintime.c, whose header states the rules).
**
** SQLite's date and time functions read the statement's time ('now', from
** the connection's VFS) once per sqlite3_step().  Every row a gpuagg call
** aggregates is read in its caller's one step, so the workers that read
** those rows on connections of their own must see one time too: the call
** pins the caller's time when it starts (ga_pintime_caller), and each
** worker thread pins it around its steps (ga_pintime_enter/leave) on
** connections opened through the shim of the caller's VFS (ga_pintime_shim).
*/
#ifndef GA_PINTIME_H
#define GA_PINTIME_H

#include <stdint.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_vfs sqlite3_vfs;

/* The name of the shim VFS over the VFS real itself, the caller's VFS as
** SQLITE_FCNTL_VFS_POINTER gives it, whatever is registered under its name
** now (pintime.c rule 5; registered once, never as the default; a shim's
** own name when real is a shim).  0, or an SQLite error code (out of
** memory). */
int ga_pintime_shim(sqlite3_vfs *real, const char **name);

/* A name under which a connection opened now reaches the VFS v itself: v's
** own while sqlite3_vfs_find gives v for it, else the name of v's shim
** (rule 5: the application registered another VFS under v's name, or
** unregistered v).  0, or an SQLite error code. */
int ga_pintime_vfs_name(sqlite3_vfs *v, const char **name);

/* The caller's current time as SQLite reads it for a statement of db
** (xCurrentTimeInt64 of its main database's VFS, xCurrentTime where the VFS
** is of version 1): milliseconds since the Julian epoch.  0, or an SQLite
** error code. */
int ga_pintime_caller(sqlite3 *db, int64_t *ms);

/* This thread's pinned time: enter sets it (saving what was pinned before
** into *old), leave restores *old.  While pinned, every shim answers this
** thread with ms; otherwise a shim asks its real VFS. */
typedef struct ga_pintime_saved {
  int on;
  int64_t ms;
  int64_t *reads;
} ga_pintime_saved;
/* reads (NULL: none) counts, atomically, the times a shim answered this
** thread with the pinned time: 0 after a scan means that no row read the
** statement's time ('now'), so its answer holds at any time. */
void ga_pintime_enter(int64_t ms, int64_t *reads, ga_pintime_saved *old);
void ga_pintime_leave(const ga_pintime_saved *old);

#endif
