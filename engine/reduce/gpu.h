/*
** gpu.h — process-wide GPU state: lazy CUDA start, devices, checked calls
** with fault injection, counters.  Every CUDA call in the engine goes through
** ga_cuda_ok(), so a failure anywhere is seen, counted, and answered by the
** CPU path (README rule 3).
**
** Built without CUDA (no nvcc, CUDA=0: kernels/none.c), ga_gpu_init()
** reports 0 devices and the engine never takes a GPU path.
*/
#ifndef GA_GPU_H
#define GA_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "chunk.h"
#include "config.h"

/* Pipeline stages, for fault injection (env GPUAGG_FAULT=stage:n, e.g.
** "h2d:3" fails the 3rd host-to-device copy of the process; several
** comma-separated specs are allowed) and for the error counters. */
enum ga_stage {
  GA_STAGE_INIT,
  GA_STAGE_PINNED, /* cudaHostAlloc */
  GA_STAGE_DALLOC, /* cudaMalloc */
  GA_STAGE_H2D,    /* cudaMemcpyAsync host to device */
  GA_STAGE_LAUNCH, /* kernel enqueue */
  GA_STAGE_KERNEL, /* kernel execution (seen at sync) */
  GA_STAGE_D2H,    /* cudaMemcpyAsync device to host */
  GA_STAGE_SYNC,   /* cudaEventSynchronize / cudaStreamSynchronize */
  GA_NSTAGES
};

/* "init", "pinned", ... (the names GPUAGG_FAULT takes). */
const char *ga_stage_name(int stage);

/* 1 when the extension was built with CUDA. */
int ga_gpu_compiled(void);

/* Start CUDA once per process (thread-safe, lazy: never at .load).  Returns
** the number of usable devices, 0 when none; *why (static text) says why. */
int ga_gpu_init(const char **why);

/* 1 once this process has run GPU work (CUDA's start is paid). */
int ga_gpu_warm(void);

/* Devices and stream slots per device that the engine can drive:
** GA_MAX_DEV, GA_MAX_SLOTS (config.h, the knobs' bounds). */

/* Memory of usable device i in bytes (0 when there is no such device). */
size_t ga_gpu_dev_mem(int i);

/* Make usable device i (0 .. ga_gpu_init()-1) current on this thread; 1 on
** success.  *prev receives what ga_dev_leave needs to give the calling
** thread its own current device back (README: a query never changes the
** application's CUDA device). */
int ga_dev_enter(int i, int *prev);
void ga_dev_leave(int prev);

/* Record the result of a CUDA call made at `stage`: returns 1 when it
** succeeded, 0 when it failed or GPUAGG_FAULT injects a failure here. */
int ga_cuda_ok(int stage, int cuda_err);

/* Counters shown by gpuagg_info(). */
typedef struct ga_counters {
  int64_t agg_cpu, agg_gpu;       /* aggregates finished per path */
  int64_t chunks_cpu, chunks_gpu; /* chunks reduced per path */
  int64_t fallbacks;              /* GPU steps that failed and went to CPU */
  int64_t stage_errors[GA_NSTAGES];
  int64_t matadd_cpu, matadd_gpu; /* gpu_matadd scans per path */
} ga_counters;
void ga_counters_get(ga_counters *out);
void ga_counter_add(int64_t *field_in_global, int64_t n); /* atomic */
ga_counters *ga_counters_global(void);

/* The GPU part of gpuagg_info() as JSON text: runtime and driver versions,
** devices (name, compute capability, memory), usable and why.  With
** start = 0 it does not start CUDA: before the first GPU use it says so. */
void ga_gpu_json(char *buf, size_t n, int start);

/* ---- the pipeline: the engine's own GPU calls, used by the pool and the
** aggregate engine (callers need no CUDA headers) ---- */

#define GA_OP_SUM 0
#define GA_OP_MAX 1
#define GA_OP_MIN 2

/* Pinned host memory and events (NULL on failure, counted). */
void *ga_gpu_host_alloc(size_t bytes);
void ga_gpu_host_free(void *p);
void *ga_gpu_event_create(int timing);
void ga_gpu_event_destroy(void *ev);

/* Device memory and a stream of the current device, checked and counted
** (stages dalloc, init); 0 on failure with nothing left allocated. */
int ga_dev_alloc(void **p, size_t bytes);
int ga_stream_new(void **stream);

/* Devices this config may use: 0 when the GPU path is off or unusable. */
int ga_gpu_ndev(const ga_config *cfg);

/* Queue the reduction of a pinned chunk on device dev, stream slot `slot`:
** copy in, kernel, partial back into c->h_out, event.  Returns 1 when
** queued, 0 when a step failed (nothing of it is left in flight: the caller
** reduces the chunk on the CPU). */
int ga_gpu_submit(ga_chunk *c, int op, int dev, int slot);
/* 1: the partial is in c->h_out; 0: not yet; -1: failed (nothing left in
** flight; reduce on the CPU). */
int ga_gpu_poll(ga_chunk *c);
/* Block until done: 1 ok, 0 failed as above. */
int ga_gpu_wait(ga_chunk *c);
/* Device time of a finished chunk's copy-in and kernel, in ms. */
void ga_gpu_chunk_times(ga_chunk *c, double *h2d_ms, double *kernel_ms);

#endif
