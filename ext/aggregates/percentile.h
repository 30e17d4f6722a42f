/*
** percentile.h — gpu_median, gpu_percentile, gpu_percentile_cont,
** gpu_percentile_disc (percentile.c), for ext/init.c's table.  User data:
** a ga_fn_data whose op is a GA_PCT_* (engine/reduce/pct.h).
*/
#ifndef GA_PERCENTILE_H
#define GA_PERCENTILE_H

#include "sqlite3ext.h"

#include "pct.h"

void ga_pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_pct_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_pct_value(sqlite3_context *ctx);
void ga_pct_final(sqlite3_context *ctx);
/* gpu_percentile_state's xFinal; the _merge aggregates' xStep (their
** xFinal is ga_pct_final) */
void ga_pct_state_final(sqlite3_context *ctx);
void ga_pct_merge_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
