/*
** aggregate_vtab.h — gpu_aggregate (aggregate_vtab.c), for ext/init.c's
** table.
*/
#ifndef GA_AGGREGATE_VTAB_H
#define GA_AGGREGATE_VTAB_H

#include "sqlite3ext.h"

#include "glue.h"

/* The module and its data (one per connection: a reference to the ga_conn
** and to the pools of the files it scanned). */
extern const sqlite3_module ga_aggregate_methods;
void *ga_aggregate_data_new(ga_conn *conn);
void ga_aggregate_data_free(void *m);

#endif
