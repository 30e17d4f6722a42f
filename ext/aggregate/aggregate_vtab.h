/*
** aggregate_vtab.h — gpu_aggregate (aggregate_vtab.c), for ext/init.c's
** table.
*/
#ifndef GA_AGGREGATE_VTAB_H
#define GA_AGGREGATE_VTAB_H

#include "sqlite3ext.h"

#include "glue.h"

/* The module; its data is a ga_scan_module (glue.h). */
extern const sqlite3_module ga_aggregate_methods;

#endif
