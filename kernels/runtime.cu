/*
** runtime.cu — the runtime half of gak.h over the CUDA runtime API.
**
** Each function is one CUDA call: the engine checks and counts every result
** (engine/reduce/gpu.c, ga_cuda_ok), so nothing here retries or hides an error.
** Error codes are cudaError_t values; gak_error_class() maps the ones the
** engine must tell apart.
*/
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gak.h"

extern "C" {

int gak_error_class(int err) {
  switch ((cudaError_t)err) {
  case cudaSuccess:
    return GAK_OK;
  case cudaErrorNotReady:
    return GAK_ENOTREADY;
  case cudaErrorNoDevice:
    return GAK_ENODEVICE;
  case cudaErrorInsufficientDriver:
    return GAK_EOLDDRIVER;
  case cudaErrorStubLibrary: /* libcuda.so is the toolkit's stub */
    return GAK_ENODRIVER;
  case cudaErrorMemoryAllocation:
    return GAK_ENOMEM;
  /* faults of a running kernel (sticky: the context is lost) */
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchTimeout:
  case cudaErrorLaunchOutOfResources:
    return GAK_EKERNEL;
  default:
    return GAK_EOTHER;
  }
}

const char *gak_error_string(int err) {
  return cudaGetErrorString((cudaError_t)err);
}

int gak_take_error(void) { return (int)cudaGetLastError(); }

const char *gak_backend(void) { return "cuda"; }

int gak_runtime_version(int *v) {
  *v = 0;
  return (int)cudaRuntimeGetVersion(v);
}

int gak_driver_version(int *v) {
  *v = 0;
  return (int)cudaDriverGetVersion(v);
}

/* With no driver at all, CUDA answers cudaErrorInsufficientDriver like an
** old driver; the engine tells them apart by gak_driver_version() == 0. */
int gak_device_count(int *n) {
  *n = 0;
  return (int)cudaGetDeviceCount(n);
}

int gak_device_props(int dev, gak_props *p) {
  struct cudaDeviceProp q;
  cudaError_t err = cudaGetDeviceProperties(&q, dev);
  if (err != cudaSuccess)
    return (int)err;
  snprintf(p->name, sizeof p->name, "%s", q.name);
  p->major = q.major;
  p->minor = q.minor;
  p->mem = q.totalGlobalMem;
  p->sms = q.multiProcessorCount;
  return 0;
}

int gak_get_device(int *dev) { return (int)cudaGetDevice(dev); }
int gak_set_device(int dev) { return (int)cudaSetDevice(dev); }

int gak_malloc(void **p, size_t bytes) { return (int)cudaMalloc(p, bytes); }
int gak_free(void *p) { return (int)cudaFree(p); }
int gak_host_alloc(void **p, size_t bytes) {
  return (int)cudaHostAlloc(p, bytes, cudaHostAllocPortable);
}
int gak_host_free(void *p) { return (int)cudaFreeHost(p); }

int gak_stream_create(gak_stream *s) {
  cudaStream_t t = NULL;
  cudaError_t err = cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);
  *s = (gak_stream)t;
  return (int)err;
}
int gak_stream_destroy(gak_stream s) {
  return (int)cudaStreamDestroy((cudaStream_t)s);
}
int gak_stream_sync(gak_stream s) {
  return (int)cudaStreamSynchronize((cudaStream_t)s);
}

int gak_event_create(gak_event *e, int timing) {
  cudaEvent_t t = NULL;
  cudaError_t err = cudaEventCreateWithFlags(
      &t, timing ? cudaEventDefault : cudaEventDisableTiming);
  *e = (gak_event)t;
  return (int)err;
}
int gak_event_destroy(gak_event e) {
  return (int)cudaEventDestroy((cudaEvent_t)e);
}
int gak_event_record(gak_event e, gak_stream s) {
  return (int)cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s);
}
int gak_event_query(gak_event e) { return (int)cudaEventQuery((cudaEvent_t)e); }
int gak_event_sync(gak_event e) {
  return (int)cudaEventSynchronize((cudaEvent_t)e);
}
int gak_event_elapsed(float *ms, gak_event from, gak_event to) {
  return (int)cudaEventElapsedTime(ms, (cudaEvent_t)from, (cudaEvent_t)to);
}

int gak_memcpy_h2d(void *d_dst, const void *h_src, size_t bytes, gak_stream s) {
  return (int)cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice,
                              (cudaStream_t)s);
}
int gak_memcpy_d2h(void *h_dst, const void *d_src, size_t bytes, gak_stream s) {
  return (int)cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost,
                              (cudaStream_t)s);
}
int gak_memcpy_d2d(void *d_dst, const void *d_src, size_t bytes, gak_stream s) {
  return (int)cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice,
                              (cudaStream_t)s);
}

} /* extern "C" */
