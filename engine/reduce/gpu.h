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

/* Devices and stream slots per device that the engine can drive. */
#define GA_MAX_DEV 16
#define GA_MAX_SLOTS 16

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

#endif
