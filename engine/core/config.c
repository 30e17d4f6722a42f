/*
** config.c — gpuagg_config() knobs: defaults, parsing, printing.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GA_CONFIG_NAMES                                                        \
  "cpu_max_rows, gpu_start_rows, device, streams, chunk_bytes, devices, "      \
  "threads, scan_min_rows, cache_bytes, group_bytes, partial_now, "            \
  "partial_check, cache_file, cache_dir, cache_keep"

/* gpu_aggregate's knobs (engine/scan/scan.c).  scan_min_rows: below it the
** parallel path's fixed cost (worker connections, the snapshot, threads)
** outweighs what the workers save; measured in bench/RESULTS.md
** ("gpu_aggregate: where the parallel path starts to pay"). */
static void ga_config_default_scan(ga_config *c) {
  c->threads = 0;
  c->scan_min_rows = 200000;
  /* gpu_cache's budget: 0 = a quarter of the GPU's memory, or of the host's
  ** physical memory for a host cache (README "gpu_cache": measured scratch
  ** and headroom) */
  c->cache_bytes = 0;
  /* the merged groups of one parallel scan (gpu_aggregate, gpu_query): 0 =
  ** an eighth of the host's physical memory.  Past the cap the call takes
  ** the serial path, where SQLite's GROUP BY sorts through temp files. */
  c->group_bytes = 0;
  /* gpu_query_partial across processes (docs/many_files.md) */
  c->partial_now = 0;
  c->partial_check = 0;
  /* cache files: off unless asked for (they are written beside the user's
  ** database) */
  c->cache_file = 0;
  c->cache_dir[0] = 0;
  /* the cache outlives the process's last connection: tools that open a
  ** connection per call (pandas' read_sql, sqlite-utils, notebooks) would
  ** otherwise reload every time; memory stays within cache_bytes, and a
  ** kept entry answers only where its file's stamp proves it current
  ** (docs/gpu_cache.md, "Sharing") */
  c->cache_keep = 1;
  /* the default, for a harness that measures the process's memory around
  ** each connection (tests/harden/oom.c; make test-oom) */
  const char *keep = getenv("GPUAGG_CACHE_KEEP");
  if (keep && !strcmp(keep, "off"))
    c->cache_keep = 0;
}

int64_t ga_config_group_bytes(const ga_config *c) {
  if (c->group_bytes > 0)
    return c->group_bytes;
  long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || ps <= 0)
    return (int64_t)256 << 20;
  return (int64_t)pages * ps / 8;
}

/* Defaults measured on the H200 machine (bench/RESULTS.md, "Choosing
** cpu_max_rows" and "Pipeline"): in a connection where CUDA runs already, the
** GPU path of gpu_sum is as fast as its CPU path at 1e6 values and faster
** above; starting CUDA costs about 0.6 s per process, which the GPU's gain
** (about 8 ns a value) repays only past ~1e8 values.  Two streams reach 97.5%
** of the pinned copy bandwidth; more add memory, not speed. */
void ga_config_default(ga_config *c) {
  c->cpu_max_rows = 1000000;
  c->gpu_start_rows = 100000000;
  c->device = GA_DEVICE_AUTO;
  c->streams = 2;
  c->chunk_bytes = 8 << 20;
  c->devices = 0;
  ga_config_default_scan(c);
}

static const char *device_name(int d) {
  return d == GA_DEVICE_CPU ? "cpu" : d == GA_DEVICE_GPU ? "gpu" : "auto";
}

/* The value as an error message shows it: quoted text, or a bare NULL for
** SQL NULL (so that NULL does not read as the string 'NULL'). */
static const char *shown(const char *value, char *buf, size_t nbuf) {
  if (!value)
    return "NULL";
  snprintf(buf, nbuf, "'%s'", value);
  return buf;
}

/* A whole decimal integer in [lo, hi], or -1 on error. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  if (!s || !*s)
    return -1;
  long long v = strtoll(s, &end, 10);
  if (*end || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int ga_config_set(ga_config *c, const char *name, const char *value, char *err,
                  size_t nerr) {
  int64_t v;
  char q[128]; /* the value as shown(): quoted, cut to fit */
  if (!strcmp(name, "cpu_max_rows")) {
    if (parse_int(value, 0, INT64_MAX, &v))
      goto bad_int;
    c->cpu_max_rows = v;
  } else if (!strcmp(name, "gpu_start_rows")) {
    if (parse_int(value, 0, INT64_MAX, &v))
      goto bad_int;
    c->gpu_start_rows = v;
  } else if (!strcmp(name, "device")) {
    if (value && !strcmp(value, "auto"))
      c->device = GA_DEVICE_AUTO;
    else if (value && !strcmp(value, "cpu"))
      c->device = GA_DEVICE_CPU;
    else if (value && !strcmp(value, "gpu"))
      c->device = GA_DEVICE_GPU;
    else {
      snprintf(err, nerr,
               "gpuagg_config: bad value for device: %s (valid: auto, cpu, "
               "gpu)",
               shown(value, q, sizeof q));
      return 1;
    }
  } else if (!strcmp(name, "streams")) {
    if (parse_int(value, 1, GA_MAX_SLOTS, &v)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for streams: %s (valid: 1 to %d)",
               shown(value, q, sizeof q), GA_MAX_SLOTS);
      return 1;
    }
    c->streams = (int)v;
  } else if (!strcmp(name, "chunk_bytes")) {
    /* at most a quarter of the pinned cap (chunk.h), so that streams of
    ** chunks fit in it */
    if (parse_int(value, 4096, (int64_t)128 << 20, &v) || (v & 511)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for chunk_bytes: %s (valid: a "
               "multiple of 512 from 4096 to 134217728)",
               shown(value, q, sizeof q));
      return 1;
    }
    c->chunk_bytes = v;
  } else if (!strcmp(name, "devices")) {
    if (parse_int(value, 0, GA_MAX_DEV, &v)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for devices: %s (valid: 0 = all "
               "visible GPUs, or 1 to %d)",
               shown(value, q, sizeof q), GA_MAX_DEV);
      return 1;
    }
    c->devices = (int)v;
  } else if (!strcmp(name, "threads")) {
    if (parse_int(value, 0, GA_CONFIG_MAX_THREADS, &v)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for threads: '%s' (valid: 0 = one per "
               "online CPU, 1 = serial, or up to %d)",
               value ? value : "NULL", GA_CONFIG_MAX_THREADS);
      return 1;
    }
    c->threads = (int)v;
  } else if (!strcmp(name, "scan_min_rows")) {
    if (parse_int(value, 0, INT64_MAX, &v))
      goto bad_int;
    c->scan_min_rows = v;
  } else if (!strcmp(name, "cache_bytes")) {
    if (parse_int(value, 0, INT64_MAX, &v))
      goto bad_int;
    c->cache_bytes = v;
  } else if (!strcmp(name, "group_bytes")) {
    if (parse_int(value, 0, INT64_MAX, &v))
      goto bad_int;
    c->group_bytes = v;
  } else if (!strcmp(name, "partial_now")) {
    /* julianday 0 to 9999-12-31 (SQLite's range), in ms */
    if (parse_int(value, 0, (int64_t)464269060799999, &v)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for partial_now: %s (valid: 0 = the "
               "caller's time, or CAST(julianday(T) * 86400000 AS INTEGER) "
               "up to 464269060799999)",
               shown(value, q, sizeof q));
      return 1;
    }
    c->partial_now = v;
  } else if (!strcmp(name, "partial_check")) {
    if (parse_int(value, 0, 1, &v)) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for partial_check: %s (valid: 0, or "
               "1 = gpu_query_partial only checks the text and the path)",
               shown(value, q, sizeof q));
      return 1;
    }
    c->partial_check = (int)v;
  } else if (!strcmp(name, "cache_file")) {
    if (value && (!strcmp(value, "on") || !strcmp(value, "1")))
      c->cache_file = 1;
    else if (value && (!strcmp(value, "off") || !strcmp(value, "0")))
      c->cache_file = 0;
    else {
      snprintf(err, nerr,
               "gpuagg_config: bad value for cache_file: %s (valid: 'on' = "
               "gpu_cache writes and maps cache files, 'off')",
               shown(value, q, sizeof q));
      return 1;
    }
  } else if (!strcmp(name, "cache_dir")) {
    /* an absolute directory, or '' (beside the database) */
    if (!value || strlen(value) >= sizeof c->cache_dir ||
        (value[0] && value[0] != '/')) {
      snprintf(err, nerr,
               "gpuagg_config: bad value for cache_dir: %s (valid: '' = "
               "beside the database, or an absolute directory of fewer "
               "than %d bytes)",
               shown(value, q, sizeof q), (int)sizeof c->cache_dir);
      return 1;
    }
    snprintf(c->cache_dir, sizeof c->cache_dir, "%s", value);
  } else if (!strcmp(name, "cache_keep")) {
    if (value && (!strcmp(value, "on") || !strcmp(value, "1")))
      c->cache_keep = 1;
    else if (value && (!strcmp(value, "off") || !strcmp(value, "0")))
      c->cache_keep = 0;
    else {
      snprintf(err, nerr,
               "gpuagg_config: bad value for cache_keep: %s (valid: 'on' = "
               "the cache outlives the process's last connection, 'off' = "
               "the last connection to close frees it)",
               shown(value, q, sizeof q));
      return 1;
    }
  } else {
    snprintf(err, nerr, "gpuagg_config: unknown name '%s' (valid: %s)", name,
             GA_CONFIG_NAMES);
    return 1;
  }
  return 0;
bad_int:
  snprintf(err, nerr,
           "gpuagg_config: bad value for %s: %s (valid: an integer >= 0)", name,
           shown(value, q, sizeof q));
  return 1;
}

int ga_config_get(const ga_config *c, const char *name, char *buf, size_t nbuf,
                  char *err, size_t nerr) {
  if (!strcmp(name, "cpu_max_rows"))
    snprintf(buf, nbuf, "%lld", (long long)c->cpu_max_rows);
  else if (!strcmp(name, "gpu_start_rows"))
    snprintf(buf, nbuf, "%lld", (long long)c->gpu_start_rows);
  else if (!strcmp(name, "device"))
    snprintf(buf, nbuf, "%s", device_name(c->device));
  else if (!strcmp(name, "streams"))
    snprintf(buf, nbuf, "%d", c->streams);
  else if (!strcmp(name, "chunk_bytes"))
    snprintf(buf, nbuf, "%lld", (long long)c->chunk_bytes);
  else if (!strcmp(name, "devices"))
    snprintf(buf, nbuf, "%d", c->devices);
  else if (!strcmp(name, "threads"))
    snprintf(buf, nbuf, "%d", c->threads);
  else if (!strcmp(name, "scan_min_rows"))
    snprintf(buf, nbuf, "%lld", (long long)c->scan_min_rows);
  else if (!strcmp(name, "cache_bytes"))
    snprintf(buf, nbuf, "%lld", (long long)c->cache_bytes);
  else if (!strcmp(name, "group_bytes"))
    snprintf(buf, nbuf, "%lld", (long long)c->group_bytes);
  else if (!strcmp(name, "partial_now"))
    snprintf(buf, nbuf, "%lld", (long long)c->partial_now);
  else if (!strcmp(name, "partial_check"))
    snprintf(buf, nbuf, "%d", c->partial_check);
  else if (!strcmp(name, "cache_file"))
    snprintf(buf, nbuf, "%s", c->cache_file ? "on" : "off");
  else if (!strcmp(name, "cache_dir"))
    snprintf(buf, nbuf, "%s", c->cache_dir);
  else if (!strcmp(name, "cache_keep"))
    snprintf(buf, nbuf, "%s", c->cache_keep ? "on" : "off");
  else {
    snprintf(err, nerr, "gpuagg_config: unknown name '%s' (valid: %s)", name,
             GA_CONFIG_NAMES);
    return 1;
  }
  return 0;
}

void ga_config_json(const ga_config *c, char *buf, size_t nbuf) {
  snprintf(buf, nbuf,
           "{\"cpu_max_rows\":%lld,\"gpu_start_rows\":%lld,\"device\":\"%s\","
           "\"streams\":%d,\"chunk_bytes\":%lld,\"devices\":%d,"
           "\"threads\":%d,\"scan_min_rows\":%lld,\"cache_bytes\":%lld,"
           "\"group_bytes\":%lld,\"partial_now\":%lld,\"partial_check\":%d,"
           "\"cache_file\":\"%s\",\"cache_dir_set\":%s,\"cache_keep\":\"%s\"}",
           (long long)c->cpu_max_rows, (long long)c->gpu_start_rows,
           device_name(c->device), c->streams, (long long)c->chunk_bytes,
           c->devices, c->threads, (long long)c->scan_min_rows,
           (long long)c->cache_bytes, (long long)c->group_bytes,
           (long long)c->partial_now, c->partial_check,
           c->cache_file ? "on" : "off", c->cache_dir[0] ? "true" : "false",
           c->cache_keep ? "on" : "off");
}

int ga_config_threads(const ga_config *c) {
  if (c->threads)
    return c->threads;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > GA_CONFIG_MAX_THREADS ? GA_CONFIG_MAX_THREADS : (int)n;
}
