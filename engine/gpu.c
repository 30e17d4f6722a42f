/*
** gpu.c — CUDA start-up, checked calls, fault injection, and the per-stream
** slots that carry chunks through copy-in, kernel and copy-out.
**
** Every CUDA call goes through ga_cuda_ok().  Any failure leaves the chunk's
** host copy untouched, so the caller reduces it on the CPU and gets the same
** answer (README rule 3).  CUDA starts lazily, at the first GPU use, never at
** .load: a machine without a driver never pays for it and never sees it.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_host.h"

static ga_counters counters;

static const char *stage_names[GA_NSTAGES] = {
    "init", "pinned", "dalloc", "h2d", "launch", "kernel", "d2h", "sync"};
const char *ga_stage_name(int stage) {
  return stage >= 0 && stage < GA_NSTAGES ? stage_names[stage] : "?";
}

ga_counters *ga_counters_global(void) { return &counters; }
void ga_counter_add(int64_t *field, int64_t n) {
  __atomic_fetch_add(field, n, __ATOMIC_RELAXED);
}
void ga_counters_get(ga_counters *out) {
  int64_t *src = (int64_t *)&counters, *dst = (int64_t *)out;
  for (size_t i = 0; i < sizeof(counters) / sizeof(int64_t); i++)
    dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

#ifndef GPUAGG_CUDA

int ga_gpu_compiled(void) { return 0; }
int ga_gpu_init(const char **why) {
  if (why)
    *why = "built without CUDA";
  return 0;
}
int ga_cuda_ok(int stage, int err) {
  (void)stage;
  return err == 0;
}
int ga_gpu_select(int i) {
  (void)i;
  return 0;
}
int ga_gpu_warm(void) { return 0; }
void ga_gpu_json(char *buf, size_t n, int start) {
  (void)start;
  snprintf(buf, n,
           "{\"cuda_compiled\":false,\"gpu_usable\":false,"
           "\"why\":\"built without CUDA\",\"devices\":[]}");
}
void *ga_gpu_host_alloc(size_t bytes) {
  (void)bytes;
  return NULL;
}
void ga_gpu_host_free(void *p) { (void)p; }
void *ga_gpu_event_create(int timing) {
  (void)timing;
  return NULL;
}
void ga_gpu_chunk_times(ga_chunk *c, double *h2d_ms, double *kernel_ms) {
  (void)c;
  *h2d_ms = *kernel_ms = 0;
}
void ga_gpu_event_destroy(void *ev) { (void)ev; }
int ga_gpu_ndev(const ga_config *cfg) {
  (void)cfg;
  return 0;
}
int ga_gpu_submit(ga_chunk *c, int op, int dev, int slot) {
  (void)c, (void)op, (void)dev, (void)slot;
  return 0;
}
int ga_gpu_poll(ga_chunk *c) {
  (void)c;
  return -1;
}
int ga_gpu_wait(ga_chunk *c) {
  (void)c;
  return 0;
}

#else /* GPUAGG_CUDA */

#include <cuda_runtime_api.h>

#include "gak.h"

#define GA_MAX_DEV 16
#define GA_MAX_SLOTS 16

/* ---- fault injection: GPUAGG_FAULT=stage:n[,stage:n...] ---- */
#define GA_MAX_FAULTS 16
static struct {
  int stage;
  int64_t n;
} faults[GA_MAX_FAULTS];
static int nfaults;
static int64_t stage_calls[GA_NSTAGES];

static void faults_parse(void) {
  const char *s = getenv("GPUAGG_FAULT");
  while (s && *s && nfaults < GA_MAX_FAULTS) {
    int k;
    for (k = 0; k < GA_NSTAGES; k++) {
      size_t l = strlen(stage_names[k]);
      if (!strncmp(s, stage_names[k], l) && s[l] == ':')
        break;
    }
    const char *colon = strchr(s, ':');
    if (k < GA_NSTAGES && colon) {
      faults[nfaults].stage = k;
      faults[nfaults].n = strtoll(colon + 1, NULL, 10);
      nfaults++;
    }
    s = strchr(s, ',');
    if (s)
      s++;
  }
}

int ga_cuda_ok(int stage, int err) {
  int64_t k = __atomic_add_fetch(&stage_calls[stage], 1, __ATOMIC_RELAXED);
  for (int i = 0; i < nfaults; i++)
    if (faults[i].stage == stage && faults[i].n == k)
      err = cudaErrorUnknown;
  if (err == cudaSuccess)
    return 1;
  ga_counter_add(&counters.stage_errors[stage], 1);
  return 0;
}

/* ---- start-up ---- */
typedef struct ga_slot {
  pthread_mutex_t mu;
  int ready;
  cudaStream_t stream;
  void *d_in; /* values, then the bitmap, mirroring the pinned chunk */
  size_t d_in_bytes;
  void *d_scratch;
  size_t d_scratch_bytes;
  void *d_out;
} ga_slot;

typedef struct ga_dev {
  int ordinal;
  char name[256];
  int major, minor;
  size_t mem;
  int sms;
  ga_slot slot[GA_MAX_SLOTS];
} ga_dev;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ga_dev devs[GA_MAX_DEV];
static int ndevs;
static int runtime_version, driver_version;
static char why_buf[256] = "not started";

static int started;

static void gpu_start(void) {
  __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
  faults_parse();
  cudaRuntimeGetVersion(&runtime_version);
  cudaDriverGetVersion(&driver_version);
  int n = 0;
  int err = cudaGetDeviceCount(&n);
  if (!ga_cuda_ok(GA_STAGE_INIT, err)) {
    if (err == cudaErrorInsufficientDriver && driver_version == 0)
      snprintf(why_buf, sizeof why_buf, "no CUDA driver");
    else if (err == cudaErrorInsufficientDriver)
      snprintf(why_buf, sizeof why_buf,
               "CUDA driver %d.%d older than runtime %d.%d",
               driver_version / 1000, driver_version % 1000 / 10,
               runtime_version / 1000, runtime_version % 1000 / 10);
    else if (err == cudaErrorNoDevice)
      snprintf(why_buf, sizeof why_buf, "no CUDA device");
    else
      snprintf(why_buf, sizeof why_buf, "CUDA start failed: %s",
               err ? cudaGetErrorString(err) : "injected fault");
    return;
  }
  for (int d = 0; d < n && ndevs < GA_MAX_DEV; d++) {
    struct cudaDeviceProp p;
    if (!ga_cuda_ok(GA_STAGE_INIT, cudaGetDeviceProperties(&p, d)))
      continue;
    if (p.major < 8)
      continue; /* we ship sm_80+ code only */
    ga_dev *g = &devs[ndevs++];
    g->ordinal = d;
    snprintf(g->name, sizeof g->name, "%s", p.name);
    g->major = p.major;
    g->minor = p.minor;
    g->mem = p.totalGlobalMem;
    g->sms = p.multiProcessorCount;
    for (int s = 0; s < GA_MAX_SLOTS; s++)
      pthread_mutex_init(&g->slot[s].mu, NULL);
  }
  snprintf(why_buf, sizeof why_buf, "%s",
           ndevs ? "" : "no device of compute capability 8.0 or newer");
}

int ga_gpu_compiled(void) { return 1; }

int ga_gpu_init(const char **why) {
  pthread_once(&init_once, gpu_start);
  if (why)
    *why = why_buf;
  return ndevs;
}

static int gpu_warm;
int ga_gpu_warm(void) { return __atomic_load_n(&gpu_warm, __ATOMIC_RELAXED); }

int ga_gpu_select(int i) {
  if (i < 0 || i >= ga_gpu_init(NULL))
    return 0;
  if (!ga_cuda_ok(GA_STAGE_INIT, cudaSetDevice(devs[i].ordinal)))
    return 0;
  __atomic_store_n(&gpu_warm, 1, __ATOMIC_RELAXED); /* its caller starts work */
  return 1;
}

int ga_gpu_ndev(const ga_config *cfg) {
  if (cfg->device == GA_DEVICE_CPU)
    return 0;
  int n = ga_gpu_init(NULL);
  if (cfg->devices > 0 && cfg->devices < n)
    n = cfg->devices;
  return n;
}

static void json_escape(char *dst, size_t n, const char *s) {
  size_t j = 0;
  for (; *s && j + 7 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      dst[j++] = '\\';
      dst[j++] = (char)ch;
    } else if (ch < 0x20) {
      j += (size_t)snprintf(dst + j, n - j, "\\u%04x", ch);
    } else {
      dst[j++] = (char)ch;
    }
  }
  dst[j] = 0;
}

void ga_gpu_json(char *buf, size_t n, int start) {
  if (!start && !__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {
    snprintf(buf, n,
             "{\"cuda_compiled\":true,\"gpu_usable\":false,"
             "\"why\":\"CUDA not started (device is 'cpu')\",\"devices\":[]}");
    return;
  }
  const char *why;
  int nd = ga_gpu_init(&why);
  char esc[512];
  json_escape(esc, sizeof esc, why);
  size_t j = (size_t)snprintf(
      buf, n,
      "{\"cuda_compiled\":true,\"cuda_runtime\":\"%d.%d\","
      "\"cuda_driver\":\"%d.%d\",\"gpu_usable\":%s,\"why\":\"%s\","
      "\"devices\":[",
      runtime_version / 1000, runtime_version % 1000 / 10,
      driver_version / 1000, driver_version % 1000 / 10, nd ? "true" : "false",
      esc);
  for (int d = 0; d < nd && j < n; d++) {
    json_escape(esc, sizeof esc, devs[d].name);
    j += (size_t)snprintf(buf + j, n - j,
                          "%s{\"ordinal\":%d,\"name\":\"%s\",\"cc\":\"%d.%d\","
                          "\"memory_bytes\":%zu,\"sms\":%d}",
                          d ? "," : "", devs[d].ordinal, esc, devs[d].major,
                          devs[d].minor, devs[d].mem, devs[d].sms);
  }
  if (j < n)
    snprintf(buf + j, n - j, "]}");
}

/* ---- pinned memory and events ---- */
void *ga_gpu_host_alloc(size_t bytes) {
  void *p = NULL;
  if (!ga_gpu_init(NULL))
    return NULL;
  if (!ga_cuda_ok(GA_STAGE_PINNED,
                  cudaHostAlloc(&p, bytes, cudaHostAllocPortable)))
    return NULL;
  return p;
}
void ga_gpu_host_free(void *p) {
  if (p)
    cudaFreeHost(p);
}
void *ga_gpu_event_create(int timing) {
  cudaEvent_t ev = NULL;
  if (!ga_cuda_ok(GA_STAGE_INIT,
                  cudaEventCreateWithFlags(
                      &ev, timing ? cudaEventDefault : cudaEventDisableTiming)))
    return NULL;
  return ev;
}
void ga_gpu_event_destroy(void *ev) {
  if (ev)
    cudaEventDestroy((cudaEvent_t)ev);
}

/* ---- the pipeline ---- */

/* Make slot s ready for a chunk of `bytes`: its stream and
** device buffers, grown (never shrunk) as chunk_bytes grows. */
static int slot_prepare(ga_slot *s, size_t bytes, int64_t cap) {
  if (!s->ready) {
    if (!ga_cuda_ok(GA_STAGE_INIT, cudaStreamCreateWithFlags(
                                       &s->stream, cudaStreamNonBlocking)))
      return 0;
    if (!ga_cuda_ok(GA_STAGE_DALLOC, cudaMalloc(&s->d_out, GA_OUT_BYTES))) {
      cudaStreamDestroy(s->stream);
      return 0;
    }
    s->ready = 1;
  }
  size_t scratch = gak_scratch_bytes(cap);
  if (s->d_in_bytes < bytes || s->d_scratch_bytes < scratch) {
    /* the stream may still be reading the old buffers */
    if (!ga_cuda_ok(GA_STAGE_SYNC, cudaStreamSynchronize(s->stream)))
      return 0;
    if (s->d_in_bytes < bytes) {
      cudaFree(s->d_in);
      s->d_in = NULL;
      s->d_in_bytes = 0;
      if (!ga_cuda_ok(GA_STAGE_DALLOC, cudaMalloc(&s->d_in, bytes)))
        return 0;
      s->d_in_bytes = bytes;
    }
    if (s->d_scratch_bytes < scratch) {
      cudaFree(s->d_scratch);
      s->d_scratch = NULL;
      s->d_scratch_bytes = 0;
      if (!ga_cuda_ok(GA_STAGE_DALLOC, cudaMalloc(&s->d_scratch, scratch)))
        return 0;
      s->d_scratch_bytes = scratch;
    }
  }
  return 1;
}

/* A chunk's events must belong to the device whose stream records them:
** (re)make them when the chunk moves to another device. */
static int chunk_events(ga_chunk *c, int dev) {
  if (c->ev_dev == dev)
    return 1;
  ga_gpu_event_destroy(c->event);
  for (int k = 0; k < 3; k++)
    ga_gpu_event_destroy(c->tev[k]);
  c->event = ga_gpu_event_create(0);
  for (int k = 0; k < 3; k++)
    c->tev[k] = ga_gpu_event_create(1);
  c->ev_dev = (c->event && c->tev[0] && c->tev[1] && c->tev[2]) ? dev : -1;
  return c->ev_dev == dev;
}

int ga_gpu_submit(ga_chunk *c, int op, int dev, int slot) {
  if (dev < 0 || dev >= ndevs || slot < 0 || slot >= GA_MAX_SLOTS || !c->pinned)
    return 0;
  ga_dev *g = &devs[dev];
  ga_slot *s = &g->slot[slot];
  int ok = 0, layout = ga_chunk_layout(c);
  pthread_mutex_lock(&s->mu); /* one chunk's steps stay together in order */
  if (!ga_cuda_ok(GA_STAGE_INIT, cudaSetDevice(g->ordinal)))
    goto out;
  if (!slot_prepare(s, c->bytes, c->cap))
    goto out;
  if (!chunk_events(c, dev))
    goto out;
  uint64_t *d_vals = s->d_in;
  uint64_t *d_bits = d_vals + c->cap;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  cudaEventRecord((cudaEvent_t)c->tev[0], s->stream)))
    goto fail;
  if (!ga_cuda_ok(GA_STAGE_H2D,
                  cudaMemcpyAsync(d_vals, c->vals, (size_t)c->n * 8,
                                  cudaMemcpyHostToDevice, s->stream)))
    goto fail;
  if (layout == GA_LAYOUT_MIXED &&
      !ga_cuda_ok(GA_STAGE_H2D,
                  cudaMemcpyAsync(d_bits, c->isint,
                                  (size_t)(c->n + 63) / 64 * 8,
                                  cudaMemcpyHostToDevice, s->stream)))
    goto fail;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  cudaEventRecord((cudaEvent_t)c->tev[1], s->stream)))
    goto fail;
  int err;
  size_t out_bytes;
  if (op == GA_OP_SUM) {
    err = gak_sum(d_vals, d_bits, c->n, layout, s->d_out, s->d_scratch,
                  s->stream);
    out_bytes = sizeof(ga_sum_partial);
  } else {
    err = gak_best(d_vals, d_bits, c->n, layout, op == GA_OP_MIN, s->d_out,
                   s->d_scratch, s->stream);
    out_bytes = sizeof(ga_best_partial);
  }
  if (!ga_cuda_ok(GA_STAGE_LAUNCH, err))
    goto fail;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  cudaEventRecord((cudaEvent_t)c->tev[2], s->stream)))
    goto fail;
  if (!ga_cuda_ok(GA_STAGE_D2H,
                  cudaMemcpyAsync(c->h_out, s->d_out, out_bytes,
                                  cudaMemcpyDeviceToHost, s->stream)))
    goto fail;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  cudaEventRecord((cudaEvent_t)c->event, s->stream)))
    goto fail;
  c->dev = dev;
  c->slot = slot;
  __atomic_store_n(&gpu_warm, 1, __ATOMIC_RELAXED);
  ok = 1;
  goto out;
fail:
  /* drain what was queued so nothing still reads the host chunk */
  cudaStreamSynchronize(s->stream);
  cudaGetLastError();
out:
  pthread_mutex_unlock(&s->mu);
  return ok;
}

static int finish(ga_chunk *c, int err) {
  if (ga_cuda_ok(GA_STAGE_SYNC, err) && ga_cuda_ok(GA_STAGE_KERNEL, 0))
    return 1;
  ga_slot *s = &devs[c->dev].slot[c->slot];
  cudaSetDevice(devs[c->dev].ordinal);
  cudaStreamSynchronize(s->stream);
  cudaGetLastError();
  return -1;
}

int ga_gpu_poll(ga_chunk *c) {
  int err = cudaEventQuery((cudaEvent_t)c->event);
  if (err == cudaErrorNotReady)
    return 0;
  return finish(c, err);
}

int ga_gpu_wait(ga_chunk *c) {
  return finish(c, cudaEventSynchronize((cudaEvent_t)c->event)) == 1;
}

void ga_gpu_chunk_times(ga_chunk *c, double *h2d_ms, double *kernel_ms) {
  float a = 0, b = 0;
  /* informational only: a failure here leaves the times at 0 */
  if (cudaEventElapsedTime(&a, (cudaEvent_t)c->tev[0],
                           (cudaEvent_t)c->tev[1]) != cudaSuccess ||
      cudaEventElapsedTime(&b, (cudaEvent_t)c->tev[1],
                           (cudaEvent_t)c->tev[2]) != cudaSuccess) {
    cudaGetLastError();
    a = b = 0;
  }
  *h2d_ms = a;
  *kernel_ms = b;
}

#endif /* GPUAGG_CUDA */
