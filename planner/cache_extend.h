/*
** cache_extend.h — appends extend a cache entry (issue 40 part 4;
** cache_extend.c's header states the rules).
*/
#ifndef GA_CACHE_EXTEND_H
#define GA_CACHE_EXTEND_H

#include "sqlite3ext.h"

#include "cache.h"
#include "cache_plan.h"
#include "config.h"

/* At a load, while the entry is still the loader's own: the record of
** rule 2 into e->app, or the reason there is none into e->app_no.  rowid:
** the name that reads the table's rowid (ga_target.rowid). */
void ga_cextend_record(sqlite3 *db, ga_centry *e, const char *rowid);

/* Before e answers db (schema: db's name for e's file) or is reloaded:
** when appends alone changed its table since its state (rule 4), extend it
** (*added: the rows appended, >= 0); else *added = -1 and why says why not
** ("" where nothing was committed since its state), or -2: not proven
** either way yet (the caller's read transaction may have begun before the
** newest commit: rule 3), so the entry should not be marked stale for it.
*SQLITE_OK, or
** SQLITE_NOMEM / SQLITE_INTERRUPT. */
int ga_cextend_try(ga_cache *c, sqlite3 *db, const ga_config *cfg,
                   const char *schema, ga_centry *e, int64_t *added, char *why,
                   size_t nwhy);

/* ga_cache_answer (planner/cache_plan.c) after ga_cextend_try on the
** entry it would read: the same arguments and results; last_scan's why
** says "(extended by N appended rows)" after an extension, and "; not
** extended: ..." after a stale entry's reason.  An entry not proven either
** way (*added -2) is kept, not marked stale. */
int ga_cache_answer_ext(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                        const ga_target *t, const ga_parts *p, ga_scan_out *out,
                        int *hit, char *why, size_t nwhy);

#endif
