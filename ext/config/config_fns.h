/*
** config_fns.h — gpuagg_config, gpuagg_info, gpuagg_version
** (config_fns.c), for ext/init.c's table.  User data: a ga_fn_data.
*/
#ifndef GA_CONFIG_FNS_H
#define GA_CONFIG_FNS_H

#include "sqlite3ext.h"

/* The version: one home (mk/dist.mk reads it from here). */
#define GPUAGG_VERSION "0.1.0"

void ga_config_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_info_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_version_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
