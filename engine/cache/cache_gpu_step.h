/*
** cache_gpu_step.h — the steps every GPU-side file of the cache takes the
** same way (cache_gpu.c, cache_gpu_query.c, cache_gpu_distinct.c), so that
** a device call's failure is counted and reported once, alike.
**
** Rules:
**   1. Every device call goes through ga_cuda_ok (gpu.h: GPUAGG_FAULT can
**      fail it, and it is counted); GA_CG_STEP reports the failed stage in
**      `why` and jumps to the caller's `fail` label.
**   2. ga_cg_sync drains the stream: a kernel's own error and a failed
**      sync are counted apart (GA_STAGE_KERNEL, GA_STAGE_SYNC).
**   3. ga_cg_free frees device memory; a failure is taken and dropped (the
**      memory is gone either way; nothing can be done with the error).
*/
#ifndef GA_CACHE_GPU_STEP_H
#define GA_CACHE_GPU_STEP_H

#include <stdio.h>

#include "cache.h"
#include "gak.h"
#include "gpu.h"

/* Rule 1: needs `why`, `nwhy` and a `fail:` label in the caller. */
#define GA_CG_STEP(stage, call)                                                \
  do {                                                                         \
    if (!ga_cuda_ok(stage, call)) {                                            \
      snprintf(why, nwhy, "a GPU step failed (%s)", ga_stage_name(stage));     \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* Rule 2: 1, or 0 with why. */
static inline int ga_cg_sync(ga_cache *c, char *why, size_t nwhy) {
  int err = gak_stream_sync(c->stream);
  int kernel = err && gak_error_class(err) == GAK_EKERNEL;
  if (ga_cuda_ok(GA_STAGE_KERNEL, kernel ? err : 0) &&
      ga_cuda_ok(GA_STAGE_SYNC, kernel ? 0 : err))
    return 1;
  snprintf(why, nwhy, "a GPU step failed (%s)", kernel ? "kernel" : "sync");
  return 0;
}

/* Rule 3. */
static inline void ga_cg_free(void *p) {
  if (p && gak_free(p))
    gak_take_error();
}

#endif
