/*
** gak.h — the C API of gpuagg's device side (the "gak_" prefix).
**
** The engine (engine/gpu.c, engine/matadd.c: plain C11, no CUDA headers)
** calls only these functions.  Three backends implement them:
**
**   kernels/ (.cu)     CUDA: the kernels and their launch wrappers, and
**                      kernels/runtime.cu, a thin layer over the CUDA runtime
**                      (the build with CUDA=1);
**   kernels/none.c     no CUDA at all: gak_device_count() says "built
**                      without CUDA" and the engine never takes a GPU path;
**   tests/fakegpu/     a test-only backend that runs the same API on the CPU,
**                      with one thread per stream and fault injection, so
**                      that CI (no GPU) runs the engine's GPU-path logic.
**
** Rules every backend keeps:
**   1. Functions return 0 on success, else a backend error code; the engine
**      interprets codes only through gak_error_class() and prints them with
**      gak_error_string().
**   2. Work on a stream (copies, kernels, event records) is enqueued and the
**      call returns at once; it runs in order per stream.  Errors that happen
**      while it runs surface later, at gak_event_query/sync or
**      gak_stream_sync, classed GAK_EKERNEL when a kernel faulted.
**   3. Output partials are written completely by the call (no pre-zeroing is
**      needed by the caller), in the formats of engine/ga_partial.h, so the
**      engine merges device and CPU partials alike.
**   4. Device calls act on the calling thread's current device
**      (gak_set_device); the engine restores the caller's device after use.
*/
#ifndef GAK_H
#define GAK_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/ga_partial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *gak_stream; /* same type as cudaStream_t */
typedef struct CUevent_st *gak_event;   /* same type as cudaEvent_t */

/* ---- the runtime ---- */

/* Error classes (gak_error_class). */
#define GAK_OK 0
#define GAK_ENOTREADY 1  /* an event or stream has not finished yet */
#define GAK_ENODRIVER 2  /* no driver installed */
#define GAK_EOLDDRIVER 3 /* the driver is older than the runtime */
#define GAK_ENODEVICE 4  /* a driver but no device */
#define GAK_ENOMEM 5     /* device or pinned memory exhausted */
#define GAK_EKERNEL 6    /* a kernel faulted while it ran */
#define GAK_ENOTBUILT 7  /* built without CUDA (kernels/none.c) */
#define GAK_EOTHER 8
int gak_error_class(int err);
const char *gak_error_string(int err);
/* The backend's sticky-free "last error" (cudaGetLastError): returns it and
** clears it. */
int gak_take_error(void);

/* "cuda", "none" or "fake". */
const char *gak_backend(void);
/* Runtime and driver versions as 1000*major + 10*minor (0 when absent). */
int gak_runtime_version(int *v);
int gak_driver_version(int *v);

typedef struct gak_props {
  char name[256];
  int major, minor; /* compute capability */
  size_t mem;       /* bytes */
  int sms;          /* multiprocessors */
} gak_props;
int gak_device_count(int *n);
int gak_device_props(int dev, gak_props *p);
int gak_get_device(int *dev);
int gak_set_device(int dev);

int gak_malloc(void **p, size_t bytes);
int gak_free(void *p);
/* Pinned (page-locked, portable across devices) host memory. */
int gak_host_alloc(void **p, size_t bytes);
int gak_host_free(void *p);

/* Non-blocking streams (they never synchronise with the legacy stream). */
int gak_stream_create(gak_stream *s);
int gak_stream_destroy(gak_stream s);
int gak_stream_sync(gak_stream s);
/* timing = 0: a synchronisation-only event. */
int gak_event_create(gak_event *e, int timing);
int gak_event_destroy(gak_event e);
int gak_event_record(gak_event e, gak_stream s);
/* 0 when done, an error of class GAK_ENOTREADY while pending, or the error
** of the work before it. */
int gak_event_query(gak_event e);
int gak_event_sync(gak_event e);
/* Milliseconds between two timing events, both done. */
int gak_event_elapsed(float *ms, gak_event from, gak_event to);

int gak_memcpy_h2d(void *d_dst, const void *h_src, size_t bytes, gak_stream s);
int gak_memcpy_d2h(void *h_dst, const void *d_src, size_t bytes, gak_stream s);

/* ---- the kernels ---- */

/* Bytes of device scratch that the reductions below need for n values;
** the engine allocates it once per stream slot for its largest chunk. */
size_t gak_scratch_bytes(int64_t n);

/* Exact sum of n values (layout GA_LAYOUT_*; d_isint is read only for
** GA_LAYOUT_MIXED) into *d_out.  0 <= n <= GA_XACC_SAFE_ADDS (2^29): the
** partial's digits are sums of per-value pieces below 2^33, and the engine
** merges partials that respect that bound (engine/xacc.h).  Values that an
** in-register expansion cannot hold (wide exponent ranges, Inf, NaN) are
** deferred through d_scratch (gak_scratch_bytes(n) bytes) to a second
** kernel when n is large (4M values and more), so d_scratch must be given. */
int gak_sum(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
            int layout, ga_sum_partial *d_out, void *d_scratch,
            gak_stream stream);

/* Max (want_min = 0) or min (want_min = 1) of n numeric values, with the
** index of its first occurrence, into *d_out. */
int gak_best(const uint64_t *d_vals, const uint64_t *d_isint, int64_t n,
             int layout, int want_min, ga_best_partial *d_out, void *d_scratch,
             gak_stream stream);

/* c = a + b for n doubles (the gpu_matadd kernel, 1D grid-stride). */
int gak_matadd(const double *d_a, const double *d_b, double *d_c, int64_t n,
               gak_stream stream);

/* c = a + b over a rows x cols row-major band (2D grid, the seeds' kernel;
** kept for the benchmark). */
int gak_matadd_2d(const double *d_a, const double *d_b, double *d_c,
                  int64_t rows, int64_t cols, gak_stream stream);

#ifdef __cplusplus
}
#endif

#endif
