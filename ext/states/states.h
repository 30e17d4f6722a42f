/*
** states.h — the SQL functions of exact aggregate states (states.c), for
** ext/init.c's table.  User data: a ga_fn_data (name, GA_AGG_*, ga_conn).
*/
#ifndef GA_STATES_H
#define GA_STATES_H

#include "sqlite3ext.h"

/* gpu_sum_state, gpu_total_state, gpu_avg_state: window aggregates */
void ga_states_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_states_sum_inverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv);
void ga_states_sum_value(sqlite3_context *ctx);
/* gpu_max_state, gpu_min_state */
void ga_states_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_states_best_final(sqlite3_context *ctx);
/* gpu_sum_merge, gpu_total_merge, gpu_avg_merge: window aggregates */
void ga_merge_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_merge_sum_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_merge_sum_value(sqlite3_context *ctx);
/* gpu_max_merge, gpu_min_merge */
void ga_merge_best_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_merge_best_final(sqlite3_context *ctx);

#endif
