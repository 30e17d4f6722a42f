/*
** matadd_vtab.h — gpu_matadd and gpu_matadd_info (matadd_vtab.c), for
** ext/init.c's table.
*/
#ifndef GA_MATADD_VTAB_H
#define GA_MATADD_VTAB_H

#include "sqlite3ext.h"

#include "glue.h"

/* The module; its data (one per connection, holding a reference to the
** ga_conn, which points back at it for gpu_matadd_info). */
extern const sqlite3_module ga_matadd_methods;
void *ga_matadd_data_new(ga_conn *conn);
void ga_matadd_data_free(void *m);
/* gpu_matadd_info(): user data a ga_fn_data. */
void ga_matadd_info_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
