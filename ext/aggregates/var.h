/*
** var.h — gpu_var_samp, gpu_var_pop, gpu_stddev_samp, gpu_stddev_pop
** (gpu_variance, gpu_stddev), gpu_var_state and gpu_var_merge (var.c), for
** ext/init.c's table.  User data: a ga_fn_data whose op is GA_VAR_* /
** GA_SD_* (engine/reduce/xvar.h), GA_VAR_STATE or GA_VAR_MERGE.
*/
#ifndef GA_VAR_H
#define GA_VAR_H

#include "sqlite3ext.h"

#define GA_VAR_STATE 16 /* gpu_var_state: the BLOB */
#define GA_VAR_MERGE 17 /* gpu_var_merge: the form from its 2nd argument */

/* the values' xStep and xInverse (variances, stddevs, gpu_var_state) */
void ga_fn_var_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_fn_var_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* gpu_var_merge's */
void ga_fn_var_merge_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void ga_fn_var_merge_inverse(sqlite3_context *ctx, int argc,
                             sqlite3_value **argv);
/* every one's xValue and xFinal */
void ga_fn_var_value(sqlite3_context *ctx);

#endif
