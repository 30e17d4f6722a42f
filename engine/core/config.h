/*
** config.h — the knobs of gpuagg_config(), kept per connection.
**
** The SQLite glue owns one ga_config per connection and hands a snapshot to
** each aggregate or vtab scan when it starts, so a change made in the middle
** of a statement never affects work already under way.
*/
#ifndef GA_CONFIG_H
#define GA_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define GA_DEVICE_AUTO 0 /* GPU above cpu_max_rows when one is usable */
#define GA_DEVICE_CPU 1  /* never touch CUDA */
#define GA_DEVICE_GPU 2  /* GPU whenever usable, whatever cpu_max_rows */

typedef struct ga_config {
  int64_t cpu_max_rows;   /* inputs of at most this many values stay on CPU */
  int64_t gpu_start_rows; /* ... and, while this process has not used CUDA
                            yet, inputs of at most this many (CUDA's start
                            costs more than small inputs gain) */
  int device;             /* GA_DEVICE_* */
  int streams;            /* CUDA streams (in-flight chunks) per device */
  int64_t chunk_bytes;    /* bytes of one pinned chunk */
  int devices;            /* how many visible GPUs to use; 0 = all */
  int threads;            /* gpu_aggregate workers; 0 = one per online CPU,
                            1 = the serial path (engine/scan/scan.h) */
  int64_t scan_min_rows;  /* gpu_aggregate: tables estimated below this many
                            rows take the serial path */
  int64_t cache_bytes;    /* gpu_cache's budget; 0 = a quarter of the memory
                            where the cache lives (engine/cache/cache.h) */
  int64_t group_bytes;    /* the parallel scan's groups at most; 0 = an
                            eighth of the host's physical memory */
  int64_t partial_now;    /* gpu_query_partial's statement time for date and
                            time functions, in ms since the Julian epoch
                            (SQLite's xCurrentTimeInt64); 0 = the caller's at
                            the call's start (gpuagg.dask ships one) */
  int partial_check;      /* 1: gpu_query_partial only plans (NULL, or the
                            error the partial would give) */
  /* gpu_cache's files (ext/cache/cache_persist.c, issue 40): 1 = a load
  ** writes its entry to a cache file and gpu_cache maps a valid one; the
  ** file is <db>-gpuagg beside the database, or in cache_dir ("" = beside
  ** it) */
  int cache_file;
  char cache_dir[512];
  /* 1 = the process's cache outlives its last connection (issue 40: a
  ** connection per call, engine/cache/cache.c rule 7); 0 = the last
  ** connection to close frees it.  The connection that closes last
  ** decides. */
  int cache_keep;
} ga_config;

/* The group memory cap in effect (group_bytes, or its default). */
int64_t ga_config_group_bytes(const ga_config *c);

/* Upper bound of the threads knob. */
#define GA_CONFIG_MAX_THREADS 256

/* Devices and stream slots per device that the engine can drive (the
** bounds of the devices and streams knobs; engine/reduce/gpu.c). */
#define GA_MAX_DEV 16
#define GA_MAX_SLOTS 16

/* Defaults, chosen by measurement (bench/RESULTS.md). */
void ga_config_default(ga_config *c);

/* Set one knob by name from text.  Returns 0, or writes an error that names
** the valid names/values into err and returns 1. */
int ga_config_set(ga_config *c, const char *name, const char *value, char *err,
                  size_t nerr);
/* The knob's value as text into buf; 0, or 1 for an unknown name. */
int ga_config_get(const ga_config *c, const char *name, char *buf, size_t nbuf,
                  char *err, size_t nerr);
/* The whole config as a JSON object into buf. */
void ga_config_json(const ga_config *c, char *buf, size_t nbuf);
/* The threads a scan uses: the threads knob, or (0) one per online CPU,
** at most GA_CONFIG_MAX_THREADS. */
int ga_config_threads(const ga_config *c);

#endif
