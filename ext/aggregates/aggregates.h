/*
** aggregates.h — gpu_sum, gpu_total, gpu_avg, gpu_max, gpu_min
** (aggregates.c), for ext/init.c's table.  User data: a ga_fn_data.
*/
#ifndef GA_AGGREGATES_H
#define GA_AGGREGATES_H

#include "sqlite3ext.h"

/* xStep of gpu_sum, gpu_total, gpu_avg (the hot loop of a sum query) */
void ga_fn_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* xStep of gpu_max, gpu_min */
void ga_fn_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* every one's xInverse, xValue and xFinal */
void ga_fn_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_fn_value(sqlite3_context *ctx);
void ga_fn_final(sqlite3_context *ctx);

#endif
