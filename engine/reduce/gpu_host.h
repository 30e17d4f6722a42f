/*
** gpu_host.h — the engine's own GPU pipeline calls (engine/gpu.c), used by
** the pool and the aggregate engine.  Callers need no CUDA headers.
*/
#ifndef GA_GPU_HOST_H
#define GA_GPU_HOST_H

#include <stddef.h>

#include "chunk.h"
#include "config.h"
#include "gpu.h"

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
