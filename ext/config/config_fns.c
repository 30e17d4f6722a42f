/*
** config_fns.c — gpuagg_config, gpuagg_info, gpuagg_version.
**
** SQL interface:
**
**   gpuagg_config(NAME [, VALUE])   read or set a knob of this connection
**                                   (engine/core/config.c names them).
**   gpuagg_info()   JSON: version, build, CUDA, devices, config, counters,
**                   the last aggregate, the last gpu_aggregate call
**                   (last_scan) and the column cache.
**   gpuagg_version()
**
** Rules:
**   1. gpuagg_config and gpuagg_info are SQLITE_DIRECTONLY (ext/init.c).
**   2. gpuagg_info with device = 'cpu' reports the GPU without starting
**      CUDA: that setting promises not to touch it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "cache_plan.h"
#include "chunk.h"
#include "config_fns.h"
#include "glue.h"
#include "gpu.h"

void ga_config_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ga_conn *conn = ((ga_fn_data *)sqlite3_user_data(ctx))->conn;
  char err[256], buf[600]; /* cache_dir: up to 511 bytes */
  const char *name = (const char *)sqlite3_value_text(argv[0]);
  if (!name) {
    sqlite3_result_error(ctx, "gpuagg_config: the name must not be NULL", -1);
    return;
  }
  if (argc == 2) {
    ga_config c = conn->cfg;
    if (ga_config_set(&c, name, (const char *)sqlite3_value_text(argv[1]), err,
                      sizeof err)) {
      sqlite3_result_error(ctx, err, -1);
      return;
    }
    conn->cfg = c;
  }
  if (ga_config_get(&conn->cfg, name, buf, sizeof buf, err, sizeof err)) {
    sqlite3_result_error(ctx, err, -1);
    return;
  }
  if (!strcmp(name, "device") || !strcmp(name, "cache_file") ||
      !strcmp(name, "cache_dir") || !strcmp(name, "cache_keep"))
    sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
  else
    sqlite3_result_int64(ctx, strtoll(buf, NULL, 10));
}

void ga_info_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  ga_conn *conn = ((ga_fn_data *)sqlite3_user_data(ctx))->conn;
  char gpu[4096], cfg[640], scan[4096];
  ga_counters k;
  /* device = 'cpu' promises not to touch CUDA: report, do not start it */
  ga_gpu_json(gpu, sizeof gpu, conn->cfg.device != GA_DEVICE_CPU);
  ga_config_json(&conn->cfg, cfg, sizeof cfg);
  ga_counters_get(&k);
  size_t gl = strlen(gpu);
  if (gl >= 2)
    gpu[gl - 1] = 0; /* splice its members into ours */
  const ga_last *l = &conn->last;
  ga_scan_last_json(&conn->scan, scan, sizeof scan);
  char *cache = ga_cache_json(conn, sqlite3_context_db_handle(ctx));
  if (!cache) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  char errs[512];
  size_t e = 0;
  for (int st = 0; st < GA_NSTAGES; st++)
    e += (size_t)snprintf(errs + e, sizeof errs - e, "%s\"%s\":%lld",
                          st ? "," : "", ga_stage_name(st),
                          (long long)k.stage_errors[st]);
  char *json = sqlite3_mprintf(
      "{\"version\":\"%s\",%s,\"config\":%s,"
      "\"counters\":{\"aggregates_cpu\":%lld,\"aggregates_gpu\":%lld,"
      "\"chunks_cpu\":%lld,\"chunks_gpu\":%lld,\"fallbacks\":%lld,"
      "\"matadd_cpu\":%lld,\"matadd_gpu\":%lld,\"pinned_bytes\":%lld,"
      "\"errors\":{%s}},"
      "\"last\":{\"path\":\"%s\",\"rows\":%lld,\"chunks_cpu\":%lld,"
      "\"chunks_gpu\":%lld,\"fallbacks\":%lld,\"h2d_ms\":%.3f,"
      "\"kernel_ms\":%.3f,\"finalize_ms\":%.3f,\"total_ms\":%.3f},"
      "\"last_scan\":%s,\"scans\":{\"pool_idle\":%d,\"pool_max_idle\":%d,"
      "\"pool_idle_readwrite\":%d,\"waiting_for_snapshot\":%d,\"caller_in_"
      "piece\":%d},"
      "\"gpu_aggregate\":{\"calls\":%lld,\"replays\":%lld},"
      "\"gpu_query\":{\"calls\":%lld,\"replays\":%lld},"
      "\"gpu_query_json\":{\"calls\":%lld,\"created\":%lld,\"reused\":%lld,"
      "\"prepared\":%lld,\"dropped\":%lld,\"kept\":%lld},\"cache\":%s}",
      GPUAGG_VERSION, gpu + 1, cfg, (long long)k.agg_cpu, (long long)k.agg_gpu,
      (long long)k.chunks_cpu, (long long)k.chunks_gpu, (long long)k.fallbacks,
      (long long)k.matadd_cpu, (long long)k.matadd_gpu,
      (long long)ga_pool_pinned_bytes(), errs, l->path ? l->path : "none",
      (long long)l->rows, (long long)l->chunks_cpu, (long long)l->chunks_gpu,
      (long long)l->fallbacks, l->h2d_ms, l->kernel_ms, l->finalize_ms,
      l->total_ms, scan, ga_scan_pool_idle(), GA_SCAN_POOL_MAX_IDLE,
      ga_scan_pool_idle_readwrite(), ga_scan_now_waiting(),
      ga_scan_now_in_caller_piece(), (long long)conn->aggregate_calls,
      (long long)conn->aggregate_replays, (long long)conn->query_calls,
      (long long)conn->query_replays, (long long)conn->qjson_calls,
      (long long)conn->qjson_created, (long long)conn->qjson_reused,
      (long long)conn->qjson_prepared, (long long)conn->qjson_dropped,
      (long long)conn->qjson_kept, cache);
  sqlite3_free(cache);
  if (!json) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, json, -1, sqlite3_free);
}

void ga_version_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  sqlite3_result_text(ctx, GPUAGG_VERSION, -1, SQLITE_STATIC);
}
