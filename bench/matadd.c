/*
** bench/matadd.c — the seeds' 10800 x 19200 matrix addition (doubles), timed
** as the tutorial does it and as gpu_matadd does it:
**
**   default   whole matrices: H2D a, H2D b, kernel, D2H c on one stream
**   queue     row bands one after another on one stream
**   stream-N  row bands spread over N streams (N = 2, 4, 8), so that one
**             band's copy back overlaps the next bands' copies in
**
** each from pinned host memory (cudaHostAlloc) and from pageable memory
** (malloc), with CUDA events, one warm-up run and the median of --reps runs
** (>= 5) on random non-zero data; every result is checked against a + b.
**
** The copy-engine limit is measured in the same run by plain cudaMemcpy of a
** whole matrix each way (pinned): a pipeline cannot beat
**   limit = max(2 * bytes / H2D bandwidth, bytes / D2H bandwidth)
** (the two directions use separate copy engines and may overlap).  The serial
** sum of the three copies (what "default" can reach at best) is printed too.
** Goals: the best stream-N >= 1.5x default and >= 90% of the limit.
**
** usage: matadd [--rows R] [--cols C] [--reps N] [--csv PATH]
** Without a usable GPU (or built without CUDA) it prints "SKIP: no GPU" and
** exits 0.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUAGG_CUDA
int main(void) {
  puts("SKIP: no GPU (built without CUDA)");
  return 0;
}
#else
#include <cuda_runtime_api.h>

#include "gak.h"

#define MAXS 8
#define MAXRUNS 64

typedef struct mode {
  const char *name;
  int pinned;  /* host memory kind */
  int streams; /* 1 = default/queue */
  int bands;   /* row bands */
  int kernel2d;
  double med, min; /* ms */
} mode;

static int check(const char *what, int err) {
  if (err != cudaSuccess) {
    fprintf(stderr, "matadd bench: %s: %s\n", what,
            cudaGetErrorString((cudaError_t)err));
    exit(1);
  }
  return 1;
}
#define CK(x) check(#x, (int)(x))

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double rnd_nonzero(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  double x = (double)(rng >> 11) * 0x1p-53 + 0.5; /* [0.5, 1.5) */
  return (rng & 1) ? -x : x;
}

/* Device buffers hold whole matrices, as in the seeds, so that every mode
** differs only in how the work is cut and queued. */
static double *da, *db, *dc;
static cudaStream_t st[MAXS];
static cudaEvent_t ev_start, ev_stop, ev_done[MAXS];

/* One timed run of mode m on host arrays a, b -> c: milliseconds. */
static float run(const mode *m, const double *a, const double *b, double *c,
                 int64_t rows, int64_t cols) {
  int ns = m->streams, k;
  int64_t band_rows = (rows + m->bands - 1) / m->bands;
  float ms = 0;
  CK(cudaEventRecord(ev_start, st[0]));
  for (k = 1; k < ns; k++)
    CK(cudaStreamWaitEvent(st[k], ev_start, 0));
  for (int q = 0; q < m->bands; q++) {
    int64_t r0 = q * band_rows,
            nr = rows - r0 < band_rows ? rows - r0 : band_rows;
    if (nr <= 0)
      break;
    int64_t off = r0 * cols, n = nr * cols;
    size_t bytes = (size_t)n * sizeof(double);
    cudaStream_t s = st[q % ns];
    CK(cudaMemcpyAsync(da + off, a + off, bytes, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(db + off, b + off, bytes, cudaMemcpyHostToDevice, s));
    if (m->kernel2d)
      CK(gak_matadd_2d(da + off, db + off, dc + off, nr, cols, (gak_stream)s));
    else
      CK(gak_matadd(da + off, db + off, dc + off, n, (gak_stream)s));
    CK(cudaMemcpyAsync(c + off, dc + off, bytes, cudaMemcpyDeviceToHost, s));
  }
  for (k = 1; k < ns; k++) {
    CK(cudaEventRecord(ev_done[k], st[k]));
    CK(cudaStreamWaitEvent(st[0], ev_done[k], 0));
  }
  CK(cudaEventRecord(ev_stop, st[0]));
  CK(cudaEventSynchronize(ev_stop));
  CK(cudaGetLastError());
  CK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
  return ms;
}

/* Plain cudaMemcpy of one matrix: milliseconds (median). */
static double copy_ms(void *dst, const void *src, size_t bytes, int kind,
                      int reps) {
  double t[MAXRUNS];
  float ms;
  CK(cudaMemcpy(dst, src, bytes, (enum cudaMemcpyKind)kind)); /* warm-up */
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(ev_start, 0));
    CK(cudaMemcpy(dst, src, bytes, (enum cudaMemcpyKind)kind));
    CK(cudaEventRecord(ev_stop, 0));
    CK(cudaEventSynchronize(ev_stop));
    CK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    t[r] = ms;
  }
  return median(t, reps);
}

int main(int argc, char **argv) {
  int64_t rows = 10800, cols = 19200;
  int reps = 5, ndev = 0, k;
  const char *csv = NULL;
  for (k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--rows") && k + 1 < argc)
      rows = atoll(argv[++k]);
    else if (!strcmp(argv[k], "--cols") && k + 1 < argc)
      cols = atoll(argv[++k]);
    else if (!strcmp(argv[k], "--reps") && k + 1 < argc)
      reps = atoi(argv[++k]);
    else if (!strcmp(argv[k], "--csv") && k + 1 < argc)
      csv = argv[++k];
    else {
      fprintf(stderr,
              "usage: %s [--rows R] [--cols C] [--reps N>=5] [--csv PATH]\n",
              argv[0]);
      return 2;
    }
  }
  if (reps < 5)
    reps = 5;
  if (reps > MAXRUNS)
    reps = MAXRUNS;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    puts("SKIP: no GPU");
    return 0;
  }
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));

  int64_t n = rows * cols;
  size_t bytes = (size_t)n * sizeof(double);
  double *pa, *pb, *pc, *ha, *hb, *hc;
  CK(cudaHostAlloc((void **)&pa, bytes, cudaHostAllocDefault));
  CK(cudaHostAlloc((void **)&pb, bytes, cudaHostAllocDefault));
  CK(cudaHostAlloc((void **)&pc, bytes, cudaHostAllocDefault));
  ha = malloc(bytes), hb = malloc(bytes), hc = malloc(bytes);
  if (!ha || !hb || !hc) {
    fprintf(stderr, "matadd bench: out of host memory\n");
    return 1;
  }
  for (int64_t q = 0; q < n; q++) {
    pa[q] = ha[q] = rnd_nonzero();
    pb[q] = hb[q] = rnd_nonzero();
  }
  memset(hc, 0, bytes); /* first touch outside the timings */
  CK(cudaMalloc((void **)&da, bytes));
  CK(cudaMalloc((void **)&db, bytes));
  CK(cudaMalloc((void **)&dc, bytes));
  for (k = 0; k < MAXS; k++) {
    CK(cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking));
    CK(cudaEventCreate(&ev_done[k]));
  }
  CK(cudaEventCreate(&ev_start));
  CK(cudaEventCreate(&ev_stop));

  /* The copy-engine limit, measured now, on this machine. */
  double h2d_ms = copy_ms(da, pa, bytes, cudaMemcpyHostToDevice, reps);
  double d2h_ms = copy_ms(pc, dc, bytes, cudaMemcpyDeviceToHost, reps);
  double h2d_gbs = bytes / h2d_ms / 1e6, d2h_gbs = bytes / d2h_ms / 1e6;
  double limit_ms = 2 * h2d_ms > d2h_ms ? 2 * h2d_ms : d2h_ms;
  double serial_ms = 2 * h2d_ms + d2h_ms;

  mode modes[] = {
      {"default", 1, 1, 1, 0, 0, 0},   {"default-2d", 1, 1, 1, 1, 0, 0},
      {"queue", 1, 1, 4, 0, 0, 0},     {"stream-4-seeds", 1, 4, 4, 0, 0, 0},
      {"stream-2", 1, 2, 16, 0, 0, 0}, {"stream-4", 1, 4, 32, 0, 0, 0},
      {"stream-8", 1, 8, 64, 0, 0, 0}, {"default", 0, 1, 1, 0, 0, 0},
      {"queue", 0, 1, 4, 0, 0, 0},     {"stream-2", 0, 2, 16, 0, 0, 0},
      {"stream-4", 0, 4, 32, 0, 0, 0}, {"stream-8", 0, 8, 64, 0, 0, 0},
  };
  int nmodes = (int)(sizeof(modes) / sizeof(modes[0]));
  int bad = 0;
  for (int mi = 0; mi < nmodes; mi++) {
    mode *m = &modes[mi];
    const double *a = m->pinned ? pa : ha, *b = m->pinned ? pb : hb;
    double *c = m->pinned ? pc : hc, t[MAXRUNS];
    memset(c, 0, bytes);
    run(m, a, b, c, rows, cols); /* warm-up */
    for (int r = 0; r < reps; r++)
      t[r] = run(m, a, b, c, rows, cols);
    m->med = median(t, reps);
    m->min = t[0];
    for (int64_t q = 0; q < n; q++) {
      if (c[q] != a[q] + b[q]) {
        fprintf(stderr, "matadd bench: %s (%s): wrong result at %lld\n",
                m->name, m->pinned ? "pinned" : "pageable", (long long)q);
        bad = 1;
        break;
      }
    }
    fprintf(stderr, "  %-15s %-8s %8.2f ms\n", m->name,
            m->pinned ? "pinned" : "pageable", m->med);
  }

  double def_ms = modes[0].med, best_ms = 1e300;
  for (int mi = 0; mi < nmodes; mi++)
    if (modes[mi].pinned && modes[mi].streams > 1 && modes[mi].med < best_ms)
      best_ms = modes[mi].med;

  FILE *f = csv ? fopen(csv, "w") : NULL;
  if (csv && !f)
    fprintf(stderr, "matadd bench: cannot write %s\n", csv);
  if (f)
    fprintf(f, "mode,memory,streams,bands,kernel,median_ms,min_ms,gb_per_s,"
               "pct_of_limit,speedup_vs_default\n");
  printf("\ngpu_matadd bench: %lld x %lld doubles (%.2f GB per matrix), %s, "
         "median of %d\n",
         (long long)rows, (long long)cols, bytes / 1e9, prop.name, reps);
  printf("copy engines (pinned cudaMemcpy): H2D %.1f GB/s, D2H %.1f GB/s; "
         "limit %.2f ms (overlapped), %.2f ms (serial)\n\n",
         h2d_gbs, d2h_gbs, limit_ms, serial_ms);
  printf("%-15s %-8s %7s %5s %6s %10s %10s %8s %8s %8s\n", "mode", "memory",
         "streams", "bands", "kernel", "median_ms", "min_ms", "GB/s", "%limit",
         "vs_def");
  for (int mi = 0; mi < nmodes; mi++) {
    mode *m = &modes[mi];
    double gbs = 3.0 * bytes / m->med / 1e6;
    double pct = 100.0 * limit_ms / m->med, sp = def_ms / m->med;
    const char *mem = m->pinned ? "pinned" : "pageable";
    const char *kern = m->kernel2d ? "2d" : "1d";
    printf("%-15s %-8s %7d %5d %6s %10.2f %10.2f %8.1f %7.1f%% %7.2fx\n",
           m->name, mem, m->streams, m->bands, kern, m->med, m->min, gbs, pct,
           sp);
    if (f)
      fprintf(f, "%s,%s,%d,%d,%s,%.3f,%.3f,%.2f,%.1f,%.3f\n", m->name, mem,
              m->streams, m->bands, kern, m->med, m->min, gbs, pct, sp);
  }
  if (f)
    fclose(f);
  printf("\ngoal best stream-N >= 1.5x default: %.2fx  %s\n", def_ms / best_ms,
         def_ms / best_ms >= 1.5 ? "MET" : "NOT MET");
  printf("goal best stream-N >= 90%% of copy-engine limit: %.1f%%  %s\n",
         100.0 * limit_ms / best_ms,
         limit_ms / best_ms >= 0.9 ? "MET" : "NOT MET");
  printf("(the serial copy sum bounds default: 1.5x is the ideal when H2D and "
         "D2H run at the same speed)\n");

  for (k = 0; k < MAXS; k++) {
    cudaStreamDestroy(st[k]);
    cudaEventDestroy(ev_done[k]);
  }
  cudaEventDestroy(ev_start);
  cudaEventDestroy(ev_stop);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  cudaFreeHost(pa), cudaFreeHost(pb), cudaFreeHost(pc);
  free(ha), free(hb), free(hc);
  return bad;
}
#endif
