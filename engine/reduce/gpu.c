/*
** gpu.c — GPU start-up, checked calls, fault injection, and the per-stream
** slots that carry chunks through copy-in, kernel and copy-out.
**
** Rules this file keeps:
**   1. Every device call goes through kernels/gak.h and its result through
**      ga_cuda_ok().  A failure leaves the chunk's host copy untouched, so
**      the caller reduces it on the CPU and gets the same answer.
**   2. The GPU starts lazily, at the first GPU use, never at .load: a
**      machine without a driver never pays for it.
**   3. No driver, no device, a device older than compute capability 8.0, or
**      a build without CUDA is a state, not an error: gpu_usable is false,
**      `why` says which, and no error counter moves.  The counters count
**      failures of a usable GPU (an injected fault stands for one).
**   4. The calling thread's current device is the application's: every
**      entry point that switches device switches back before it returns
**      (ga_dev_enter / ga_dev_leave).
**   5. A kernel that faults while it runs is counted under "kernel", an
**      error of the synchronisation itself under "sync".
** There is no #ifdef CUDA here: the backend behind gak.h decides (CUDA,
** none, or the test fake).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gak.h"
#include "gpu.h"

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

int ga_gpu_compiled(void) { return strcmp(gak_backend(), "none") != 0; }

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

/* Counts the call; 1 when GPUAGG_FAULT asks this call to fail. */
static int fault_here(int stage) {
  int64_t k = __atomic_add_fetch(&stage_calls[stage], 1, __ATOMIC_RELAXED);
  for (int i = 0; i < nfaults; i++)
    if (faults[i].stage == stage && faults[i].n == k)
      return 1;
  return 0;
}

int ga_cuda_ok(int stage, int err) {
  if (fault_here(stage))
    err = -1;
  if (err == 0)
    return 1;
  ga_counter_add(&counters.stage_errors[stage], 1);
  return 0;
}

/* ---- start-up ---- */
typedef struct ga_slot {
  pthread_mutex_t mu;
  int ready;
  gak_stream stream;
  void *d_in; /* values, then the bitmap, mirroring the pinned chunk */
  size_t d_in_bytes;
  void *d_scratch;
  size_t d_scratch_bytes;
  void *d_out;
} ga_slot;

typedef struct ga_dev {
  int ordinal;
  gak_props props;
  ga_slot slot[GA_MAX_SLOTS];
} ga_dev;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ga_dev devs[GA_MAX_DEV];
static int ndevs;
static int runtime_version, driver_version;
static char why_buf[256] = "not started";
static int started;

/* Why no device is usable, when device_count failed: a state (rule 3). */
static void why_start_failed(int err) {
  int cls = gak_error_class(err);
  if (cls == GAK_ENOTBUILT)
    snprintf(why_buf, sizeof why_buf, "built without CUDA");
  else if (cls == GAK_ENODRIVER ||
           (cls == GAK_EOLDDRIVER && driver_version == 0))
    snprintf(why_buf, sizeof why_buf, "no CUDA driver");
  else if (cls == GAK_EOLDDRIVER)
    snprintf(why_buf, sizeof why_buf,
             "CUDA driver %d.%d older than runtime %d.%d",
             driver_version / 1000, driver_version % 1000 / 10,
             runtime_version / 1000, runtime_version % 1000 / 10);
  else if (cls == GAK_ENODEVICE)
    snprintf(why_buf, sizeof why_buf, "no CUDA device");
  else
    snprintf(why_buf, sizeof why_buf, "CUDA start failed: %s",
             gak_error_string(err));
}

static void gpu_start(void) {
  __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
  faults_parse();
  /* a failed version query reads as "absent" (0), which the messages use */
  if (gak_runtime_version(&runtime_version))
    runtime_version = 0;
  if (gak_driver_version(&driver_version))
    driver_version = 0;
  int n = 0;
  int err = gak_device_count(&n);
  if (gak_error_class(err) == GAK_ENOTBUILT) {
    why_start_failed(err);
    return; /* nothing to inject into: there is no GPU path at all */
  }
  if (fault_here(GA_STAGE_INIT)) { /* stands for a usable GPU failing */
    ga_counter_add(&counters.stage_errors[GA_STAGE_INIT], 1);
    snprintf(why_buf, sizeof why_buf, "CUDA start failed: injected fault");
    return;
  }
  if (err) {
    why_start_failed(err);
    return;
  }
  int old = 0, broken = 0;
  for (int d = 0; d < n && ndevs < GA_MAX_DEV; d++) {
    gak_props p;
    if (gak_device_props(d, &p)) {
      gak_take_error();
      broken++;
      continue;
    }
    if (p.major < 8) {
      old++;
      continue; /* we ship sm_80+ code only */
    }
    ga_dev *g = &devs[ndevs++];
    g->ordinal = d;
    g->props = p;
    for (int s = 0; s < GA_MAX_SLOTS; s++)
      pthread_mutex_init(&g->slot[s].mu, NULL);
  }
  if (ndevs)
    why_buf[0] = 0;
  else if (old)
    snprintf(why_buf, sizeof why_buf,
             "no device of compute capability 8.0 or newer (%d older)", old);
  else
    snprintf(why_buf, sizeof why_buf, "no usable CUDA device (%d of %d %s)",
             broken, n, "could not be queried");
}

int ga_gpu_init(const char **why) {
  pthread_once(&init_once, gpu_start);
  if (why)
    *why = why_buf;
  return ndevs;
}

static int gpu_warm;
int ga_gpu_warm(void) { return __atomic_load_n(&gpu_warm, __ATOMIC_RELAXED); }

size_t ga_gpu_dev_mem(int i) {
  return i >= 0 && i < ga_gpu_init(NULL) ? devs[i].props.mem : 0;
}

int ga_dev_enter(int i, int *prev) {
  *prev = -1;
  if (i < 0 || i >= ga_gpu_init(NULL))
    return 0;
  int cur = -1;
  if (gak_get_device(&cur) != 0) {
    gak_take_error();
    cur = -1;
  }
  if (cur != devs[i].ordinal) {
    if (!ga_cuda_ok(GA_STAGE_INIT, gak_set_device(devs[i].ordinal)))
      return 0;
    *prev = cur;
  }
  __atomic_store_n(&gpu_warm, 1, __ATOMIC_RELAXED); /* its caller starts work */
  return 1;
}

void ga_dev_leave(int prev) {
  /* a failure to switch back is not ours to fix: the device we leave is
  ** usable; the application sees its own state on its next call */
  if (prev >= 0 && gak_set_device(prev) != 0)
    gak_take_error();
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
  if (!ga_gpu_compiled()) {
    snprintf(buf, n,
             "{\"cuda_compiled\":false,\"gpu_usable\":false,"
             "\"why\":\"built without CUDA\",\"devices\":[]}");
    return;
  }
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
      "{\"cuda_compiled\":true,\"backend\":\"%s\",\"cuda_runtime\":\"%d.%d\","
      "\"cuda_driver\":\"%d.%d\",\"gpu_usable\":%s,\"why\":\"%s\","
      "\"devices\":[",
      gak_backend(), runtime_version / 1000, runtime_version % 1000 / 10,
      driver_version / 1000, driver_version % 1000 / 10, nd ? "true" : "false",
      esc);
  for (int d = 0; d < nd && j < n; d++) {
    json_escape(esc, sizeof esc, devs[d].props.name);
    j += (size_t)snprintf(buf + j, n - j,
                          "%s{\"ordinal\":%d,\"name\":\"%s\",\"cc\":\"%d.%d\","
                          "\"memory_bytes\":%zu,\"sms\":%d}",
                          d ? "," : "", devs[d].ordinal, esc,
                          devs[d].props.major, devs[d].props.minor,
                          devs[d].props.mem, devs[d].props.sms);
  }
  if (j < n)
    snprintf(buf + j, n - j, "]}");
}

/* ---- allocations: an injected failure must not leak what was made ---- */

int ga_dev_alloc(void **p, size_t bytes) {
  int err = gak_malloc(p, bytes);
  if (ga_cuda_ok(GA_STAGE_DALLOC, err))
    return 1;
  if (!err)
    gak_free(*p);
  *p = NULL;
  gak_take_error();
  return 0;
}

int ga_stream_new(void **sp) {
  gak_stream *s = (gak_stream *)sp;
  int err = gak_stream_create(s);
  if (ga_cuda_ok(GA_STAGE_INIT, err))
    return 1;
  if (!err)
    gak_stream_destroy(*s);
  *s = NULL;
  gak_take_error();
  return 0;
}

/* ---- pinned memory and events ---- */
void *ga_gpu_host_alloc(size_t bytes) {
  void *p = NULL;
  if (!ga_gpu_init(NULL))
    return NULL;
  int err = gak_host_alloc(&p, bytes);
  if (!ga_cuda_ok(GA_STAGE_PINNED, err)) {
    if (!err)
      gak_host_free(p);
    gak_take_error();
    return NULL;
  }
  return p;
}
void ga_gpu_host_free(void *p) {
  if (p && gak_host_free(p))
    gak_take_error(); /* nothing to do about it; the pointer is gone */
}
void *ga_gpu_event_create(int timing) {
  gak_event ev = NULL;
  int err = gak_event_create(&ev, timing);
  if (!ga_cuda_ok(GA_STAGE_INIT, err)) {
    if (!err)
      gak_event_destroy(ev);
    gak_take_error();
    return NULL;
  }
  return ev;
}
void ga_gpu_event_destroy(void *ev) {
  if (ev && gak_event_destroy((gak_event)ev))
    gak_take_error();
}

/* ---- the pipeline ---- */

/* Make slot s ready for a chunk of `bytes`: its stream and device buffers,
** grown (never shrunk) as chunk_bytes grows.  The slot's device is current. */
static int slot_prepare(ga_slot *s, size_t bytes, int64_t cap) {
  if (!s->ready) {
    if (!ga_stream_new((void **)&s->stream))
      return 0;
    if (!ga_dev_alloc(&s->d_out, GA_OUT_BYTES)) {
      gak_stream_destroy(s->stream);
      s->stream = NULL;
      return 0;
    }
    s->ready = 1;
  }
  size_t scratch = gak_scratch_bytes(cap);
  if (s->d_in_bytes < bytes || s->d_scratch_bytes < scratch) {
    /* the stream may still be reading the old buffers */
    if (!ga_cuda_ok(GA_STAGE_SYNC, gak_stream_sync(s->stream)))
      return 0;
    if (s->d_in_bytes < bytes) {
      gak_free(s->d_in);
      s->d_in = NULL;
      s->d_in_bytes = 0;
      if (!ga_dev_alloc(&s->d_in, bytes))
        return 0;
      s->d_in_bytes = bytes;
    }
    if (s->d_scratch_bytes < scratch) {
      gak_free(s->d_scratch);
      s->d_scratch = NULL;
      s->d_scratch_bytes = 0;
      if (!ga_dev_alloc(&s->d_scratch, scratch))
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

/* Enqueue copy-in, kernel, copy-out and events for c on slot s. */
static int submit_steps(ga_chunk *c, int op, ga_slot *s) {
  int layout = ga_chunk_layout(c);
  uint64_t *d_vals = s->d_in;
  uint64_t *d_bits = d_vals + c->cap;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  gak_event_record((gak_event)c->tev[0], s->stream)))
    return 0;
  if (!ga_cuda_ok(GA_STAGE_H2D,
                  gak_memcpy_h2d(d_vals, c->vals, (size_t)c->n * 8, s->stream)))
    return 0;
  if (layout == GA_LAYOUT_MIXED &&
      !ga_cuda_ok(GA_STAGE_H2D,
                  gak_memcpy_h2d(d_bits, c->isint, (size_t)(c->n + 63) / 64 * 8,
                                 s->stream)))
    return 0;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  gak_event_record((gak_event)c->tev[1], s->stream)))
    return 0;
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
    return 0;
  if (!ga_cuda_ok(GA_STAGE_LAUNCH,
                  gak_event_record((gak_event)c->tev[2], s->stream)))
    return 0;
  if (!ga_cuda_ok(GA_STAGE_D2H,
                  gak_memcpy_d2h(c->h_out, s->d_out, out_bytes, s->stream)))
    return 0;
  return ga_cuda_ok(GA_STAGE_LAUNCH,
                    gak_event_record((gak_event)c->event, s->stream));
}

int ga_gpu_submit(ga_chunk *c, int op, int dev, int slot) {
  if (dev < 0 || dev >= ndevs || slot < 0 || slot >= GA_MAX_SLOTS || !c->pinned)
    return 0;
  ga_slot *s = &devs[dev].slot[slot];
  int ok = 0, prev;
  pthread_mutex_lock(&s->mu); /* one chunk's steps stay together in order */
  if (ga_dev_enter(dev, &prev)) {
    if (slot_prepare(s, c->bytes, c->cap) && chunk_events(c, dev)) {
      ok = submit_steps(c, op, s);
      if (!ok) {
        /* drain what was queued so nothing still reads the host chunk */
        gak_stream_sync(s->stream);
        gak_take_error();
      }
    }
    ga_dev_leave(prev);
  }
  if (ok) {
    c->dev = dev;
    c->slot = slot;
  }
  pthread_mutex_unlock(&s->mu);
  return ok;
}

/* The result of a chunk's completion event: 1 done, -1 failed (its stream is
** drained, so nothing of it is left in flight). */
static int finish(ga_chunk *c, int err) {
  int kernel = err && gak_error_class(err) == GAK_EKERNEL;
  if (ga_cuda_ok(GA_STAGE_KERNEL, kernel ? err : 0) &&
      ga_cuda_ok(GA_STAGE_SYNC, kernel ? 0 : err))
    return 1;
  ga_slot *s = &devs[c->dev].slot[c->slot];
  int prev;
  pthread_mutex_lock(&s->mu);
  if (ga_dev_enter(c->dev, &prev)) {
    gak_stream_sync(s->stream);
    ga_dev_leave(prev);
  }
  gak_take_error();
  pthread_mutex_unlock(&s->mu);
  return -1;
}

int ga_gpu_poll(ga_chunk *c) {
  int err = gak_event_query((gak_event)c->event);
  if (err && gak_error_class(err) == GAK_ENOTREADY)
    return 0;
  return finish(c, err);
}

int ga_gpu_wait(ga_chunk *c) {
  return finish(c, gak_event_sync((gak_event)c->event)) == 1;
}

void ga_gpu_chunk_times(ga_chunk *c, double *h2d_ms, double *kernel_ms) {
  float a = 0, b = 0;
  /* informational only: a failure here leaves the times at 0 */
  if (gak_event_elapsed(&a, (gak_event)c->tev[0], (gak_event)c->tev[1]) ||
      gak_event_elapsed(&b, (gak_event)c->tev[1], (gak_event)c->tev[2])) {
    gak_take_error();
    a = b = 0;
  }
  *h2d_ms = a;
  *kernel_ms = b;
}
