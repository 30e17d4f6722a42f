/*
** cache_fns.h — gpu_cache and gpu_cache_drop (cache_fns.c), for ext/init.c's
** table.  User data: a ga_fn_data (its ga_conn holds the cache).
*/
#ifndef GA_CACHE_FNS_H
#define GA_CACHE_FNS_H

#include "sqlite3ext.h"

void ga_cache_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_cache_drop_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* gpuagg_cache_dict, the derived columns' table (dict_vtab.c). */
extern const sqlite3_module ga_cdict_methods;

#endif
