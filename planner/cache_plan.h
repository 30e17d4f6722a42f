/*
** cache_plan.h — the column cache as gpu_aggregate's planner sees it
** (planner/cache_shape.c, planner/cache_plan.c): does an entry answer a
** call, is it current, and its state for gpuagg_info.  gpu_cache's own
** SQL functions (the load) are ext/cache/.
*/
#ifndef GA_CACHE_PLAN_H
#define GA_CACHE_PLAN_H

#include "sqlite3ext.h"

#include "cache.h"
#include "glue.h"
#include "planner.h"

/* Does the entry e answer the parts p (gpu_aggregate's arguments,
** ga_parts_of_args, or gpu_query's) on table t?  1 with the query in *q, 0
** with the reason in why, or SQLITE_NOMEM (cache_shape.c).  Free *q with
** ga_cquery_free whatever the outcome. */
int ga_cache_shape(sqlite3 *db, const ga_centry *e, const ga_target *t,
                   const ga_parts *p, ga_cquery *q, char *why, size_t nwhy);

/* The cache step of gpu_aggregate (ext/aggregate/aggregate_vtab.c) and
** gpu_query (ext/query/query_vtab.c), before they plan a scan: *hit = 1
** with the groups in *out when the cache answered (their TEXT in
** out->enc); *hit = 0 when it did not, with the reason in why ("" when the
** table has no entry).  SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT. */
int ga_cache_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                    const ga_target *t, const ga_parts *p, ga_scan_out *out,
                    int *hit, char *why, size_t nwhy);

/* Rules 2, 6 and 7 of cache_plan.c for entry e of schema (found, not
** stale), as connection db reads it:
** SQLITE_OK with why "" when it answers for the caller's connection now,
** else with the reason in why; SQLITE_NOMEM / SQLITE_INTERRUPT. */
int ga_cache_current(sqlite3 *db, const char *schema, ga_centry *e, char *why,
                     size_t nwhy);

/* gpu_query's star join from host entries (planner/cache_join.c): as
** ga_cache_answer, for parts with join_from (the fact, each dimension an
** entry of its own). */
int ga_cache_join_answer(ga_conn *conn, sqlite3 *db, const ga_config *cfg,
                         const ga_parts *p, ga_scan_out *out, int *hit,
                         char *why, size_t nwhy);

/* The argument of the table-valued function gpuagg_cache_dict(?)
** (ext/cache/dict_vtab.c), which the derived columns of cache_derive.c
** read: a dictionary's values as rows (code, value in every value column)
** in code order, then the row (count, NULL).  The value columns are
** declared with each affinity and built-in collation, so an expression
** over the one named like the source column's declaration acts as it does
** on the column: "v_<blob|text|numeric|integer|real>_<binary|nocase|
** rtrim>". */
typedef struct ga_cdict_src {
  const ga_dict *d;
  int enc; /* the bytes' encoding (SQLITE_UTF8, SQLITE_UTF16LE/BE) */
} ga_cdict_src;
#define GA_CDICT_PTR "gpuagg_cache_dict"
extern const char *const ga_cdict_aff[5];  /* by GA_AFF_* */
extern const char *const ga_cdict_coll[3]; /* BINARY, NOCASE, RTRIM */

/* gpuagg_info()'s "cache" object, sqlite3_malloc'd (NULL: no memory). */
char *ga_cache_json(ga_conn *conn, sqlite3 *db);

/* The stamps of rule 2 (cache_plan.c): the schema's state now (SQLite
** result code), what differs between two (NULL: the same state), and the
** free of one. */
int ga_cstamp_read(sqlite3 *db, const char *schema, sqlite3 *watch,
                   ga_cstamp *s);
/* An attached schema's watcher (rule 2): a connection to its file with
** the caller's access, or NULL (out of memory, it cannot be opened, or the
** path no longer names the caller's file). */
sqlite3 *ga_cstamp_watch(sqlite3 *db, const char *schema);
const char *ga_cstamp_diff(const ga_cstamp *a, const ga_cstamp *b);
/* 1 where the caller's open transaction on an attached WAL schema may be
** an older snapshot than any stamp could prove (asked before a stamp). */
int ga_cstamp_snapshot_unprovable(sqlite3 *db, const char *schema);
/* The most watchers one connection's cache keeps open. */
#define GA_CACHE_WATCHERS 16
/* The watchers of db's entries open, after closing those of gone files
** and stale entries (their entries are stale). */
int ga_cache_watchers(ga_cache *c, sqlite3 *db);
void ga_cstamp_free(ga_cstamp *s);
/* Rule 6's record of the authorizer: the caller's program of SELECT <the
** entry's columns> FROM its table (ga_program_sig); NULL with *rc. */
char *ga_centry_sig(sqlite3 *db, const char *schema, const ga_centry *e,
                    int *rc);

/* Rule 7 (issue 40): the entry that connection db reads for schema.table,
** referenced (ga_centry_put), or NULL: db's own, else one shared by the
** process for the same file (ga_fstamp_ident) and table. */
ga_centry *ga_cache_lookup(ga_cache *c, sqlite3 *db, const char *schema,
                           const char *table);
/* Rule 7: db is seen with no transaction open on main now (a statement
** being prepared, the extension loaded): noted, so that the read
** transaction of a statement prepared later may be proven to have begun
** after an entry's load. */
void ga_cache_note_idle_db(sqlite3 *db);
/* Whether e is one db sees (its own, or a shared one of a file db has
** open): gpuagg_info's entries, gpu_cache_drop()'s. */
int ga_cache_visible(sqlite3 *db, const ga_centry *e);
/* The entries db sees, referenced, into *out (give each back with
** ga_centry_put, then sqlite3_free the array); their count, or -1 when out
** of memory. */
int ga_cache_visible_entries(ga_cache *c, sqlite3 *db, ga_centry ***out);

#endif
