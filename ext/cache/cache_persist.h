/*
** cache_persist.h — gpu_cache's cache files (issue 40, part 3): when an
** entry may be written to a file, and when a file may stand for the
** database a connection reads (cache_persist.c).  The format is
** engine/cache/cache_file.h's.
*/
#ifndef GA_CACHE_PERSIST_H
#define GA_CACHE_PERSIST_H

#include "sqlite3ext.h"

#include "cache_plan.h"

/* Before a load of columns names[0..n) (affinities affs) of t into a new
** entry where (GA_CACHE_*): with cache_file on, a valid file mapped as that
** entry (*out, stamped, its bytes in the cache's used; names unset; for
** the GPU, copied there), with how it came in note.  *out NULL: load from rows
*(the reason in the
** cache's file_last).  SQLITE_OK, SQLITE_NOMEM or SQLITE_INTERRUPT. */
int ga_persist_map(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                   const ga_target *t, const char *const *names,
                   const int *affs, int n, int where, ga_centry **out,
                   char *note, size_t nnote);

/* After entry e was loaded from rows and linked: with cache_file on, its
** file written when every condition holds (cache_persist.c rules); the
** outcome in the cache's file_last.  Never fails the caller. */
void ga_persist_save(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                     ga_centry *e);

/* Where a load from rows goes (rule 1): host memory when the entry is
** for the GPU and its file may be written, so that it is written before
** the copy to the device; else where. */
int ga_persist_load_where(sqlite3 *db, const ga_config *cfg, const char *schema,
                          int where);

/* After ga_persist_save: an entry for the GPU (where) loaded into host
** memory by rule 1 is copied to the device (its note says how). */
void ga_persist_to_device(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                          ga_centry *e, int where);

#endif
