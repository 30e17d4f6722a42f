/*
** none.c — the gak.h backend of a build without CUDA (CUDA=0, or no nvcc).
**
** Every call fails with GAK_ENOTBUILT, so engine/gpu.c reports "built
** without CUDA", never takes a GPU path and counts no error: the extension
** answers everything on the CPU.  Error codes are the classes themselves.
*/
#include <stddef.h>
#include <stdint.h>

#include "gak.h"

#define NB GAK_ENOTBUILT

int gak_error_class(int err) { return err; }
const char *gak_error_string(int err) {
  return err == 0 ? "no error" : "built without CUDA";
}
int gak_take_error(void) { return 0; }
const char *gak_backend(void) { return "none"; }

int gak_runtime_version(int *v) {
  *v = 0;
  return NB;
}
int gak_driver_version(int *v) {
  *v = 0;
  return NB;
}
int gak_device_count(int *n) {
  *n = 0;
  return NB;
}
int gak_device_props(int dev, gak_props *p) {
  (void)dev, (void)p;
  return NB;
}
int gak_get_device(int *dev) {
  *dev = 0;
  return NB;
}
int gak_set_device(int dev) {
  (void)dev;
  return NB;
}
int gak_malloc(void **p, size_t bytes) {
  (void)bytes;
  *p = NULL;
  return NB;
}
int gak_free(void *p) { return p ? NB : 0; }
int gak_host_alloc(void **p, size_t bytes) {
  (void)bytes;
  *p = NULL;
  return NB;
}
int gak_host_free(void *p) { return p ? NB : 0; }
int gak_stream_create(gak_stream *s) {
  *s = NULL;
  return NB;
}
int gak_stream_destroy(gak_stream s) { return s ? NB : 0; }
int gak_stream_sync(gak_stream s) {
  (void)s;
  return NB;
}
int gak_event_create(gak_event *e, int timing) {
  (void)timing;
  *e = NULL;
  return NB;
}
int gak_event_destroy(gak_event e) { return e ? NB : 0; }
int gak_event_record(gak_event e, gak_stream s) {
  (void)e, (void)s;
  return NB;
}
int gak_event_query(gak_event e) {
  (void)e;
  return NB;
}
int gak_event_sync(gak_event e) {
  (void)e;
  return NB;
}
int gak_event_elapsed(float *ms, gak_event from, gak_event to) {
  (void)from, (void)to;
  *ms = 0;
  return NB;
}
int gak_memcpy_h2d(void *d, const void *h, size_t bytes, gak_stream s) {
  (void)d, (void)h, (void)bytes, (void)s;
  return NB;
}
int gak_memcpy_d2h(void *h, const void *d, size_t bytes, gak_stream s) {
  (void)d, (void)h, (void)bytes, (void)s;
  return NB;
}

size_t gak_scratch_bytes(int64_t n) {
  (void)n;
  return 0;
}
int gak_sum(const uint64_t *v, const uint64_t *b, int64_t n, int layout,
            ga_sum_partial *out, void *scratch, gak_stream s) {
  (void)v, (void)b, (void)n, (void)layout, (void)out, (void)scratch, (void)s;
  return NB;
}
int gak_best(const uint64_t *v, const uint64_t *b, int64_t n, int layout,
             int want_min, ga_best_partial *out, void *scratch, gak_stream s) {
  (void)v, (void)b, (void)n, (void)layout, (void)want_min, (void)out;
  (void)scratch, (void)s;
  return NB;
}
int gak_matadd(const double *a, const double *b, double *c, int64_t n,
               gak_stream s) {
  (void)a, (void)b, (void)c, (void)n, (void)s;
  return NB;
}
int gak_matadd_2d(const double *a, const double *b, double *c, int64_t rows,
                  int64_t cols, gak_stream s) {
  (void)a, (void)b, (void)c, (void)rows, (void)cols, (void)s;
  return NB;
}
