/*
** init.c — sqlite3_gpuagg_init: the extension's entry point, which
** registers every SQL function and module of gpuagg from the two tables
** below (the top of the layers, mk/layers.txt; nothing calls into it).
**
** SQL interface: the functions of the tables, documented where each lives:
**   ext/aggregates/  gpu_sum, gpu_total, gpu_avg, gpu_max, gpu_min;
**                    gpu_median, gpu_percentile[_cont|_disc], their
**                    _state and _merge (percentile.c)
**                    var.c: gpu_var_samp/pop, gpu_stddev_samp/pop,
**                    gpu_variance, gpu_stddev, gpu_var_state/_merge
**   ext/states/      gpu_<agg>_state, gpu_<agg>_merge
**   ext/aggregate/   gpu_aggregate (table-valued)
**   ext/query/       gpu_query (virtual table), gpu_query_json (table-valued),
**                    gpu_query_partial,
**                    gpu_query_merge, gpu_query_partial_info, and internally
*the groups
**                    table gpuagg_groups, its aggregate gpuagg_pick and
**                    scalars gpuagg_value and gpuagg_check
**   ext/cache/       gpu_cache, gpu_cache_drop
**   ext/matadd/      gpu_matadd (virtual table), gpu_matadd_info
**   ext/config/      gpuagg_config, gpuagg_info, gpuagg_version
**   ext/workers/     gpuagg_partial, gpuagg_collect (internal: the serial
**                    paths run them here; worker connections get them from
**                    ga_worker_prep)
**
** Rules:
**   1. Every registration that points at the connection's ga_conn holds a
**      reference to it, taken before the call (SQLite calls the destructor
**      when a registration fails, too), released by its destructor
**      (ext/common/conn.c rule 1).
**   2. A second .load into one connection registers nothing again.
**   3. When one registration fails, every one of the tables is taken back
**      (deleting what was never registered is harmless), so a failed .load
**      leaves no function pointing at freed memory.
**   4. Nothing touches CUDA at .load; the engine starts it at first GPU use.
**   5. The library stays mapped while the process's cache holds anything
**      (issue 40: the cache outlives the last connection, engine/cache/
**      cache.c rule 7).  SQLite dlcloses an extension when the connection
**      that loaded it closes; the .so is linked -z nodelete (Makefile), and
**      pin_library, the cache's pin hook (ga_cache_set_pin, set at each
**      .load), makes sure of it at run time for a build linked without
**      it: dladdr of our own entry point names the loaded file, and
**      dlopen(RTLD_NOLOAD | RTLD_NODELETE) of it marks it never to be
**      unloaded (once per process; the handle is never closed).  Linked
**      into a program (SQLITE_CORE: tests/harden, the fake GPU's
**      test_restore) there is nothing to pin.
*/
#include <string.h>
#ifndef SQLITE_CORE
#include <dlfcn.h>
#endif

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache.h"

#include "aggregate_vtab.h"
#include "aggregates.h"
#include "cache_fns.h"
#include "config_fns.h"
#include "glue.h"
#include "matadd_vtab.h"
#include "partial_fns.h"
#include "percentile.h"
#include "query_vtab.h"
#include "states.h"
#include "var.h"
#include "workers.h"
#include "xvar.h"

typedef void (*ga_xfunc)(sqlite3_context *, int, sqlite3_value **);
typedef void (*ga_xfinal)(sqlite3_context *);

/* What a function's user data is. */
enum {
  GA_UD_NONE,    /* none */
  GA_UD_FN,      /* a ga_fn_data: name, op, the ga_conn (a reference) */
  GA_UD_PARTIAL, /* gpuagg_partial's ga_partial_data */
  GA_UD_SCAN,    /* a ga_scan_module: worker pools, the ga_conn (a
                    reference) */
};

#define DET (SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)
#define DIRECT SQLITE_DIRECTONLY

/* One SQL function: scalar (xFunc), aggregate (xStep, xFinal) or window
** aggregate (xValue and xInverse too). */
typedef struct ga_fn_reg {
  const char *name;
  int nargs;
  int flags; /* besides SQLITE_UTF8 */
  int data;  /* GA_UD_* */
  int op;    /* GA_AGG_* of the ga_fn_data */
  ga_xfunc xFunc, xStep, xInverse;
  ga_xfinal xFinal, xValue;
} ga_fn_reg;

#define SCALAR(name, n, flags, data, f)                                        \
  { name, n, flags, data, 0, f, 0, 0, 0, 0 }
#define AGG(name, flags, data, op, step, final)                                \
  { name, 1, flags, data, op, 0, step, 0, final, 0 }
#define WINDOW(name, op, step, inverse, value, final)                          \
  { name, 1, DET, GA_UD_FN, op, 0, step, inverse, final, value }

static const ga_fn_reg fns[] = {
    WINDOW("gpu_sum", GA_AGG_SUM, ga_fn_sum_step, ga_fn_inverse, ga_fn_value,
           ga_fn_final),
    WINDOW("gpu_total", GA_AGG_TOTAL, ga_fn_sum_step, ga_fn_inverse,
           ga_fn_value, ga_fn_final),
    WINDOW("gpu_avg", GA_AGG_AVG, ga_fn_sum_step, ga_fn_inverse, ga_fn_value,
           ga_fn_final),
    WINDOW("gpu_max", GA_AGG_MAX, ga_fn_best_step, ga_fn_inverse, ga_fn_value,
           ga_fn_final),
    WINDOW("gpu_min", GA_AGG_MIN, ga_fn_best_step, ga_fn_inverse, ga_fn_value,
           ga_fn_final),
    WINDOW("gpu_sum_state", GA_AGG_SUM, ga_states_sum_step,
           ga_states_sum_inverse, ga_states_sum_value, ga_states_sum_value),
    WINDOW("gpu_total_state", GA_AGG_TOTAL, ga_states_sum_step,
           ga_states_sum_inverse, ga_states_sum_value, ga_states_sum_value),
    WINDOW("gpu_avg_state", GA_AGG_AVG, ga_states_sum_step,
           ga_states_sum_inverse, ga_states_sum_value, ga_states_sum_value),
    AGG("gpu_max_state", DET, GA_UD_FN, GA_AGG_MAX, ga_states_best_step,
        ga_states_best_final),
    AGG("gpu_min_state", DET, GA_UD_FN, GA_AGG_MIN, ga_states_best_step,
        ga_states_best_final),
    WINDOW("gpu_sum_merge", GA_AGG_SUM, ga_merge_sum_step, ga_merge_sum_inverse,
           ga_merge_sum_value, ga_merge_sum_value),
    WINDOW("gpu_total_merge", GA_AGG_TOTAL, ga_merge_sum_step,
           ga_merge_sum_inverse, ga_merge_sum_value, ga_merge_sum_value),
    WINDOW("gpu_avg_merge", GA_AGG_AVG, ga_merge_sum_step, ga_merge_sum_inverse,
           ga_merge_sum_value, ga_merge_sum_value),
    AGG("gpu_max_merge", DET, GA_UD_FN, GA_AGG_MAX, ga_merge_best_step,
        ga_merge_best_final),
    AGG("gpu_min_merge", DET, GA_UD_FN, GA_AGG_MIN, ga_merge_best_step,
        ga_merge_best_final),
    /* median and percentiles (ext/aggregates/percentile.c, issue 39) */
    {"gpu_median", 1, DET, GA_UD_FN, GA_PCT_MEDIAN, 0, ga_pct_step,
     ga_pct_inverse, ga_pct_final, ga_pct_value},
    {"gpu_percentile", 2, DET, GA_UD_FN, GA_PCT_PERCENTILE, 0, ga_pct_step,
     ga_pct_inverse, ga_pct_final, ga_pct_value},
    {"gpu_percentile_cont", 2, DET, GA_UD_FN, GA_PCT_CONT, 0, ga_pct_step,
     ga_pct_inverse, ga_pct_final, ga_pct_value},
    {"gpu_percentile_disc", 2, DET, GA_UD_FN, GA_PCT_DISC, 0, ga_pct_step,
     ga_pct_inverse, ga_pct_final, ga_pct_value},
    {"gpu_percentile_state", 1, DET, GA_UD_FN, GA_PCT_MEDIAN, 0, ga_pct_step, 0,
     ga_pct_state_final, 0},
    {"gpu_median_merge", 1, DET, GA_UD_FN, GA_PCT_MEDIAN, 0, ga_pct_merge_step,
     0, ga_pct_final, 0},
    {"gpu_percentile_merge", 2, DET, GA_UD_FN, GA_PCT_PERCENTILE, 0,
     ga_pct_merge_step, 0, ga_pct_final, 0},
    {"gpu_percentile_cont_merge", 2, DET, GA_UD_FN, GA_PCT_CONT, 0,
     ga_pct_merge_step, 0, ga_pct_final, 0},
    {"gpu_percentile_disc_merge", 2, DET, GA_UD_FN, GA_PCT_DISC, 0,
     ga_pct_merge_step, 0, ga_pct_final, 0},
    /* issue 39: exact variance and standard deviation (ext/aggregates/var.c) */
    WINDOW("gpu_var_samp", GA_VAR_SAMP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_variance", GA_VAR_SAMP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_var_pop", GA_VAR_POP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_stddev_samp", GA_SD_SAMP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_stddev", GA_SD_SAMP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_stddev_pop", GA_SD_POP, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_var_state", GA_VAR_STATE, ga_fn_var_step, ga_fn_var_inverse,
           ga_fn_var_value, ga_fn_var_value),
    WINDOW("gpu_var_merge", GA_VAR_MERGE, ga_fn_var_merge_step,
           ga_fn_var_merge_inverse, ga_fn_var_value, ga_fn_var_value),
    {"gpu_var_merge", 2, DET, GA_UD_FN, GA_VAR_MERGE, 0, ga_fn_var_merge_step,
     ga_fn_var_merge_inverse, ga_fn_var_value, ga_fn_var_value},
    AGG("gpuagg_partial", DET, GA_UD_PARTIAL, 0, ga_partial_step,
        ga_partial_final),
    {"gpuagg_collect", -1, DIRECT, GA_UD_NONE, 0, 0, ga_collect_step, 0,
     ga_collect_final, 0},
    AGG("gpuagg_pick", DIRECT, GA_UD_NONE, 0, ga_pick_step, ga_pick_final),
    SCALAR("gpuagg_value", 1, DIRECT, GA_UD_NONE, ga_value_fn),
    SCALAR("gpuagg_check", -1, DIRECT, GA_UD_NONE, ga_check_fn),
    SCALAR("gpu_query_partial", -1, DIRECT, GA_UD_SCAN, ga_query_partial_fn),
    SCALAR("gpu_query_merge", -1, SQLITE_DETERMINISTIC, GA_UD_FN,
           ga_query_merge_fn),
    SCALAR("gpu_query_partial_info", 1, SQLITE_DETERMINISTIC, GA_UD_FN,
           ga_query_partial_info_fn),
    SCALAR("gpu_cache", 1, DIRECT, GA_UD_FN, ga_cache_fn),
    SCALAR("gpu_cache", 2, DIRECT, GA_UD_FN, ga_cache_fn),
    SCALAR("gpu_cache_drop", 0, DIRECT, GA_UD_FN, ga_cache_drop_fn),
    SCALAR("gpu_cache_drop", 1, DIRECT, GA_UD_FN, ga_cache_drop_fn),
    SCALAR("gpu_matadd_info", 0, 0, GA_UD_FN, ga_matadd_info_fn),
    SCALAR("gpuagg_version", 0, DET, GA_UD_NONE, ga_version_fn),
    SCALAR("gpuagg_info", 0, DIRECT, GA_UD_FN, ga_info_fn),
    SCALAR("gpuagg_config", 1, DIRECT, GA_UD_FN, ga_config_fn),
    SCALAR("gpuagg_config", 2, DIRECT, GA_UD_FN, ga_config_fn),
};
#define NFNS ((int)(sizeof(fns) / sizeof(fns[0])))

/* One module: its data is made per connection and holds a reference. */
typedef struct ga_mod_reg {
  const char *name;
  const sqlite3_module *module;
  void *(*make)(ga_conn *conn);
  void (*destroy)(void *data);
} ga_mod_reg;

static const ga_mod_reg mods[] = {
    {"gpu_aggregate", &ga_aggregate_methods, ga_scan_module_new,
     ga_scan_module_free},
    {"gpu_matadd", &ga_matadd_methods, ga_matadd_data_new, ga_matadd_data_free},
    {"gpu_query", &ga_query_methods, ga_scan_module_new, ga_scan_module_free},
    {"gpu_query_json", &ga_query_json_methods, ga_scan_module_new,
     ga_scan_module_free},
    {"gpuagg_groups", &ga_groups_methods, NULL, NULL}, /* no data */
    {"gpuagg_cache_dict", &ga_cdict_methods, NULL, NULL},
};
#define NMODS ((int)(sizeof(mods) / sizeof(mods[0])))

static void fn_data_free(void *p) {
  ga_fn_data *d = p;
  ga_conn_unref(d->conn);
  sqlite3_free(d);
}

/* Register fns[i] on db.  SQLite result code. */
static int register_fn(sqlite3 *db, ga_conn *conn, const ga_fn_reg *f) {
  void *data = NULL;
  void (*destroy)(void *) = NULL;
  if (f->data == GA_UD_FN) {
    ga_fn_data *d = sqlite3_malloc64(sizeof(*d));
    if (!d)
      return SQLITE_NOMEM;
    d->name = f->name;
    d->op = f->op;
    d->conn = conn;
    ga_conn_ref(conn); /* rule 1: fn_data_free releases it */
    data = d, destroy = fn_data_free;
  } else if (f->data == GA_UD_PARTIAL) {
    if (!(data = ga_partial_data_new()))
      return SQLITE_NOMEM;
    destroy = sqlite3_free;
  } else if (f->data == GA_UD_SCAN) {
    /* rule 1: the module's reference, released by ga_scan_module_free */
    if (!(data = ga_scan_module_new(conn)))
      return SQLITE_NOMEM;
    destroy = ga_scan_module_free;
  }
  int flags = SQLITE_UTF8 | f->flags;
  if (f->xValue)
    return sqlite3_create_window_function(db, f->name, f->nargs, flags, data,
                                          f->xStep, f->xFinal, f->xValue,
                                          f->xInverse, destroy);
  return sqlite3_create_function_v2(db, f->name, f->nargs, flags, data,
                                    f->xFunc, f->xStep, f->xFinal, destroy);
}

/* ga_conn.contract_fns (glue.h): fns[0..4], gpu_sum ... gpu_max. */
static int contract_fns(sqlite3 *db, void *conn, int on) {
  int rc = SQLITE_OK;
  for (int i = 0; i < 5; i++)
    if (on && rc == SQLITE_OK)
      rc = register_fn(db, conn, &fns[i]);
    else if (!on)
      sqlite3_create_window_function(db, fns[i].name, 1, SQLITE_UTF8, NULL,
                                     NULL, NULL, NULL, NULL, NULL);
  return rc;
}

/* Rule 3. */
static void unregister_all(sqlite3 *db) {
  for (int i = 0; i < NFNS; i++)
    sqlite3_create_function(db, fns[i].name, fns[i].nargs, SQLITE_UTF8, NULL,
                            NULL, NULL, NULL);
  for (int i = 0; i < NMODS; i++)
    sqlite3_create_module(db, mods[i].name, NULL, NULL);
}

int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                        const sqlite3_api_routines *pApi);

/* Rule 5. */
static void pin_library(void) {
#if !defined(SQLITE_CORE) && !defined(_WIN32)
  static int pinned;
  if (__atomic_exchange_n(&pinned, 1, __ATOMIC_ACQ_REL))
    return;
  Dl_info di;
  if (dladdr((void *)(uintptr_t)sqlite3_gpuagg_init, &di) && di.dli_fname)
    (void)dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
    int sqlite3_gpuagg_init(sqlite3 *db, char **pzErrMsg,
                            const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg;
  int again, rc = SQLITE_OK;
  ga_conn *conn = ga_conn_open(db, &again); /* one reference, ours */
  if (!conn)
    return again ? SQLITE_OK : SQLITE_NOMEM; /* rule 2 */
  conn->contract_fns = contract_fns;
  ga_cache_set_pin(pin_library); /* rule 5 */
  for (int i = 0; rc == SQLITE_OK && i < NMODS; i++) {
    void *data = mods[i].make ? mods[i].make(conn) : NULL;
    /* the module owns data from here: destroyed with it, or at once if the
    ** registration fails */
    rc = data || !mods[i].make
             ? sqlite3_create_module_v2(db, mods[i].name, mods[i].module, data,
                                        mods[i].destroy)
             : SQLITE_NOMEM;
  }
  for (int i = 0; rc == SQLITE_OK && i < NFNS; i++)
    rc = register_fn(db, conn, &fns[i]);
  if (rc != SQLITE_OK)
    unregister_all(db);
  ga_conn_unref(conn); /* frees conn now if nothing holds it */
  return rc;
}
